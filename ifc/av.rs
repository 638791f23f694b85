//! The software address vector of an address handle and the SRQ WQE's first segment:
//! plain C structures of `include/linux/mlx5/qp.h` (`struct mlx5_av`) and `device.h`
//! (`struct mlx5_wqe_srq_next_seg`), here `zerocopy` structs with big-endian fields
//! (`mlx5_ifc.h` declares neither). Checked against the headers by
//! `emu/tests/srq_ah_layouts.rs`.

use zerocopy::byteorder::big_endian::{U16, U32};
use zerocopy_derive::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `struct mlx5_av` (48 bytes): what a UD send's datagram segment carries, built by
/// create_ah without any command.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct Av {
    /// Q_Key / DC key (written by the send path, not by create_ah).
    pub key: [u8; 8],
    /// Destination QP / DCT number (send path).
    pub dqp_dct: U32,
    /// Static rate (7:4, the device's rate code), SL (3:0) on InfiniBand.
    pub stat_rate_sl: u8,
    /// Source path bits (6:0).
    pub fl_mlid: u8,
    /// Destination LID (InfiniBand) / UDP source port (RoCE).
    pub rlid: U16,
    /// Reserved.
    pub reserved0: [u8; 4],
    /// Destination MAC (RoCE).
    pub rmac: [u8; 6],
    /// Traffic class (GRH).
    pub tclass: u8,
    /// Hop limit (GRH).
    pub hop_limit: u8,
    /// GRH present (bit 30), source GID index (27:20), flow label (19:0).
    pub grh_gid_fl: U32,
    /// Destination GID (GRH).
    pub rgid: [u8; 16],
}

/// Bytes of [`Av`].
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_INFINIBAND)),
    expect(dead_code, reason = "used by the InfiniBand provider only")
)]
pub const AV_BYTES: usize = core::mem::size_of::<Av>();

/// `grh_gid_fl`: a GRH is present.
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_INFINIBAND)),
    expect(dead_code, reason = "used by the InfiniBand provider only")
)]
pub const AV_GRH: u32 = 1 << 30;

/// `struct mlx5_wqe_srq_next_seg` (16 bytes): the start of every SRQ WQE, linking the
/// free WQEs.
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct WqeSrqNextSeg {
    /// Reserved.
    pub rsvd0: [u8; 2],
    /// Index of the next free WQE.
    pub next_wqe_index: U16,
    /// WQE signature.
    pub signature: u8,
    /// Reserved.
    pub rsvd1: [u8; 11],
}
