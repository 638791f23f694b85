// SPDX-License-Identifier: GPL-2.0

//! The structures the SRQ / XRC / AH shim (`ffi/rdma/ib_srq.c`) and the provider
//! exchange: `#[repr(C)]` mirrors of `struct mlx5rs_ib_srq_init`,
//! `mlx5rs_ib_srq_attr` and `mlx5rs_ib_ah_attr` in `mlx5rs_ffi.h` (the shim checks the
//! same sizes with `BUILD_BUG_ON`).
//!
//! Pure `core` code: the provider fills these and the host tests check them.

/// `struct mlx5rs_ib_srq_init`: a create_srq as the core asks it (`struct
/// ib_srq_init_attr` and the numbers of the objects it names); Rust writes back
/// `max_wr` (what the queue holds) and `srqn`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrqInit {
    /// `enum ib_srq_type`.
    pub srq_type: u32,
    /// In: WQEs asked for; out: what the queue holds.
    pub max_wr: u32,
    /// Scatter entries per WQE.
    pub max_sge: u32,
    /// Limit (ignored at creation, as upstream).
    pub srq_limit: u32,
    /// The PD's number.
    pub pdn: u32,
    /// The XRC domain's number (XRC SRQ).
    pub xrcdn: u32,
    /// The CQ's number (XRC SRQ).
    pub cqn: u32,
    /// Out: the SRQ's number.
    pub srqn: u32,
}
const _: () = assert!(size_of::<SrqInit>() == 32);

/// `struct mlx5rs_ib_srq_attr`: `struct ib_srq_attr` (query_srq's answer).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrqAttr {
    /// WQEs the queue holds.
    pub max_wr: u32,
    /// Scatter entries per WQE.
    pub max_sge: u32,
    /// Limit watermark.
    pub srq_limit: u32,
    /// Reserved.
    pub rsvd: u32,
}
const _: () = assert!(size_of::<SrqAttr>() == 16);

/// `struct mlx5rs_ib_ah_attr`: an InfiniBand `struct rdma_ah_attr` (create_ah's
/// input, query_ah's answer).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AhAttr {
    /// GRH destination GID.
    pub dgid: [u8; 16],
    /// GRH flow label (20 bits).
    pub flow_label: u32,
    /// `enum rdma_ah_attr_type`.
    pub ah_type: u32,
    /// Destination LID.
    pub dlid: u16,
    /// Service level.
    pub sl: u8,
    /// Source path bits.
    pub src_path_bits: u8,
    /// `enum ib_rate`.
    pub static_rate: u8,
    /// `IB_AH_GRH` set (0 or 1).
    pub is_global: u8,
    /// GRH source GID index.
    pub sgid_index: u8,
    /// GRH hop limit.
    pub hop_limit: u8,
    /// GRH traffic class.
    pub traffic_class: u8,
    /// Port number.
    pub port_num: u8,
    /// Reserved.
    pub rsvd: [u8; 6],
}
const _: () = assert!(size_of::<AhAttr>() == 40);
