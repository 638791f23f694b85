// SPDX-License-Identifier: GPL-2.0

//! The structures the SRQ / XRC shim (`ffi/rdma/ib_srq.c`) and the provider
//! exchange: `#[repr(C)]` mirrors of `struct mlx5rs_ib_srq_init` and
//! `mlx5rs_ib_srq_attr` in `mlx5rs_ffi.h` (the shim checks the same sizes with
//! `BUILD_BUG_ON`).
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
