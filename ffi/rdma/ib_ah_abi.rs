// SPDX-License-Identifier: GPL-2.0

//! The structure the address-handle shim (`ffi/rdma/ib_ah.c`) and the provider
//! exchange: the `#[repr(C)]` mirror of `struct mlx5rs_ib_ah_attr` in `mlx5rs_ffi.h`
//! (the shim checks the same size with `BUILD_BUG_ON`).
//!
//! Pure `core` code: the provider fills it and the host tests check it.

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
