// SPDX-License-Identifier: GPL-2.0

//! The one plain form of the core's `struct rdma_ah_attr` (an InfiniBand address
//! vector) the shim and the provider exchange: the `#[repr(C)]` mirror of `struct
//! mlx5rs_ib_ah_attr` in `mlx5rs_ffi.h` (both sides check the same size). The address
//! handle verbs (`ffi/rdma/ib_ah.c`: create_ah's input, query_ah's answer) and the QP
//! verbs (`ffi/rdma/ib_qp.c`: modify_qp's and query_qp's primary and alternate paths,
//! inside [`super::ib_qp_abi::QpAttr`]) copy it in and out with the same two C helpers,
//! `mlx5rs_ib_ah_attr_to_rs()` and `mlx5rs_ib_ah_attr_from_rs()`.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use zerocopy_derive::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `struct mlx5rs_ib_ah_attr`: an InfiniBand `struct rdma_ah_attr`. The GRH fields
/// hold something only with `is_global`; `dlid` and `src_path_bits` only for an
/// InfiniBand `ah_type`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct AhAttr {
    /// GRH destination GID.
    pub dgid: [u8; 16],
    /// GRH flow label (20 bits).
    pub flow_label: u32,
    /// `enum rdma_ah_attr_type` of the core's structure (copied in; on the way out the
    /// shim takes the type from the handle or the port, as upstream).
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
    /// Port number (0: none).
    pub port_num: u8,
    /// Zero.
    pub rsvd: [u8; 6],
}

// MLX5RS_IB_AH_ATTR_SIZE of `mlx5rs_ffi.h`, which ffi/rdma/ib_ah.c checks on its side.
const _: () = assert!(core::mem::size_of::<AhAttr>() == 40);
