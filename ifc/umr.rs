//! The UMR (user-mode memory registration) work request's segments and the
//! translation entries an mkey points through: plain C structures of
//! `include/linux/mlx5/qp.h` (`struct mlx5_wqe_umr_ctrl_seg`, `struct mlx5_mtt`,
//! `struct mlx5_klm`, `struct mlx5_ksm`) and `device.h` (`struct mlx5_mkey_seg`), here
//! `zerocopy` structs with big-endian fields, and the flag and mask values upstream
//! builds UMR WQEs with.
//!
//! A UMR WQE (opcode `MLX5_OPCODE_UMR`) is: the generic control segment (its `imm`
//! names the mkey), [`UmrCtrlSeg`], [`MkeySeg`], then either a data segment
//! (`ifc::wqe::WqeDataSeg`) pointing to the translation entries in host memory, or the
//! entries inline (upstream `mlx5r_umr_wqe`, `wr.c` `set_reg_wr`, rdma-core
//! `set_bind_wr`). The mkey segment has the bit layout of the `mkc` bit-array
//! (`ifc::mkey::mkc`; upstream writes it with `MLX5_SET(mkc, ...)`), so its bit fields
//! are read through those field definitions and this struct only places it.

use zerocopy::byteorder::big_endian::{U16, U32, U64};
use zerocopy_derive::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// The UMR control segment (`struct mlx5_wqe_umr_ctrl_seg`, 48 bytes).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct UmrCtrlSeg {
    /// `vals::UMR_*` flags.
    pub flags: u8,
    /// Reserved.
    pub rsvd0: [u8; 3],
    /// Size of the translation entries this WQE carries or points to, in 16-byte
    /// octowords (`klm_octowords` in rdma-core).
    pub xlt_octowords: U16,
    /// Offset (octowords, bits 15:0) in the mkey's translation table where the
    /// entries go (with `UMR_TRANSLATION_OFFSET_EN`); union with `bsf_octowords`.
    pub xlt_offset: U16,
    /// `vals::MKEY_MASK_*`: which fields of the mkey segment are applied.
    pub mkey_mask: U64,
    /// Offset bits 47:16.
    pub xlt_offset_47_16: U32,
    /// Reserved.
    pub rsvd1: [u8; 28],
}

/// The mkey segment of a UMR WQE (`struct mlx5_mkey_seg`, 64 bytes; the `mkc` bits).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct MkeySeg {
    /// `free` (bit 6, `vals::MKEY_STATUS_FREE`).
    pub status: u8,
    /// PCIe TPH control.
    pub pcie_control: u8,
    /// `umr_en`, `a`, `rw`, `rr`, `lw`, `lr` (`vals::PERM_*`) and `access_mode_1_0`.
    pub flags: u8,
    /// `ma_translation_mode` and version bits.
    pub version: u8,
    /// QPN (31:8) and `mkey_7_0` (7:0).
    pub qpn_mkey7_0: U32,
    /// Reserved.
    pub rsvd1: [u8; 4],
    /// `length64` (31), `en_rinval` (24, `vals::MKEY_REMOTE_INVAL`) and PD (23:0).
    pub flags_pd: U32,
    /// Start virtual address.
    pub start_addr: U64,
    /// Length in bytes.
    pub len: U64,
    /// BSF size.
    pub bsfs_octo_size: U32,
    /// Reserved.
    pub rsvd2: [u8; 16],
    /// Translation table size, octowords.
    pub xlt_oct_size: U32,
    /// Reserved.
    pub rsvd3: [u8; 3],
    /// `log_page_size` (entity size of MTT / KSM entries).
    pub log2_page_size: u8,
    /// Reserved.
    pub rsvd4: [u8; 4],
}

/// A memory translation table entry (`struct mlx5_mtt`, 8 bytes): the page's address,
/// the low bits `vals::MTT_READ` / `vals::MTT_WRITE` with `pg_access`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct Mtt {
    /// Page address and permission bits.
    pub ptag: U64,
}

/// A key-length-memory entry of an indirect mkey (`struct mlx5_klm`, 16 bytes):
/// `bcount` bytes at `va` of mkey `key`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct Klm {
    /// Bytes this entry covers.
    pub bcount: U32,
    /// Mkey the bytes are translated through.
    pub key: U32,
    /// Address in that mkey's space.
    pub va: U64,
}

/// A fixed-size KLM entry (`struct mlx5_ksm`, 16 bytes): `1 << log_page_size` bytes at
/// `va` of mkey `key`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct Ksm {
    /// Reserved.
    pub reserved: U32,
    /// Mkey the entity is translated through.
    pub key: U32,
    /// Address in that mkey's space.
    pub va: U64,
}

/// Values of these structures (upstream `device.h`, `qp.h`, `mlx5_ib.h`; rdma-core
/// `mlx5dv.h` for the one flag upstream's kernel does not name).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator and the host tests")
)]
pub mod vals {
    /// Send opcode of a UMR WQE (`MLX5_OPCODE_UMR`).
    pub const OPCODE_UMR: u8 = 0x25;
    /// UMR flag: the WQE checks the mkey's QPN against the posting QP
    /// (`MLX5_WQE_UMR_CTRL_FLAG_CHECK_QPN`, rdma-core `mlx5dv.h`).
    pub const UMR_CHECK_QPN: u8 = 1 << 3;
    /// UMR flag: `xlt_offset` is valid (`MLX5_UMR_TRANSLATION_OFFSET_EN`).
    pub const UMR_TRANSLATION_OFFSET_EN: u8 = 1 << 4;
    /// UMR flag field (bits 6:5) mask.
    pub const UMR_CHECK_MASK: u8 = 3 << 5;
    /// UMR flag: fail unless the mkey is free (`MLX5_UMR_CHECK_NOT_FREE`, "fail if not
    /// free" in `umr.c`; rdma-core calls it `MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE`).
    pub const UMR_CHECK_NOT_FREE: u8 = 1 << 5;
    /// UMR flag: fail if the mkey is free (`MLX5_UMR_CHECK_FREE`, "fail if free").
    pub const UMR_CHECK_FREE: u8 = 2 << 5;
    /// UMR flag: the translation entries follow inline (`MLX5_UMR_INLINE`).
    pub const UMR_INLINE: u8 = 1 << 7;
    /// Translation entries are written in units of this many bytes
    /// (`MLX5_UMR_FLEX_ALIGNMENT`).
    pub const UMR_FLEX_ALIGNMENT: usize = 0x40;
    /// An octoword (`MLX5_IB_UMR_OCTOWORD`).
    pub const UMR_OCTOWORD: usize = 16;

    /// mkey mask: `len` (`MLX5_MKEY_MASK_LEN`).
    pub const MKEY_MASK_LEN: u64 = 1 << 0;
    /// mkey mask: `log_page_size` bits 4:0 (`MLX5_MKEY_MASK_PAGE_SIZE`).
    pub const MKEY_MASK_PAGE_SIZE: u64 = 1 << 1;
    /// mkey mask: `start_addr` (`MLX5_MKEY_MASK_START_ADDR`).
    pub const MKEY_MASK_START_ADDR: u64 = 1 << 6;
    /// mkey mask: `pd` (`MLX5_MKEY_MASK_PD`).
    pub const MKEY_MASK_PD: u64 = 1 << 7;
    /// mkey mask: `en_rinval` (`MLX5_MKEY_MASK_EN_RINVAL`).
    pub const MKEY_MASK_EN_RINVAL: u64 = 1 << 8;
    /// mkey mask: signature error enable (`MLX5_MKEY_MASK_EN_SIGERR`).
    pub const MKEY_MASK_EN_SIGERR: u64 = 1 << 9;
    /// mkey mask: `bsf_en` (`MLX5_MKEY_MASK_BSF_EN`).
    pub const MKEY_MASK_BSF_EN: u64 = 1 << 12;
    /// mkey mask: `mkey_7_0` (`MLX5_MKEY_MASK_KEY`).
    pub const MKEY_MASK_KEY: u64 = 1 << 13;
    /// mkey mask: `qpn` (`MLX5_MKEY_MASK_QPN`).
    pub const MKEY_MASK_QPN: u64 = 1 << 14;
    /// mkey mask: `lr` (`MLX5_MKEY_MASK_LR`).
    pub const MKEY_MASK_LR: u64 = 1 << 17;
    /// mkey mask: `lw` (`MLX5_MKEY_MASK_LW`).
    pub const MKEY_MASK_LW: u64 = 1 << 18;
    /// mkey mask: `rr` (`MLX5_MKEY_MASK_RR`).
    pub const MKEY_MASK_RR: u64 = 1 << 19;
    /// mkey mask: `rw` (`MLX5_MKEY_MASK_RW`).
    pub const MKEY_MASK_RW: u64 = 1 << 20;
    /// mkey mask: `a` (`MLX5_MKEY_MASK_A`).
    pub const MKEY_MASK_A: u64 = 1 << 21;
    /// mkey mask: small fence (`MLX5_MKEY_MASK_SMALL_FENCE`).
    pub const MKEY_MASK_SMALL_FENCE: u64 = 1 << 23;
    /// mkey mask: `relaxed_ordering_write` (`MLX5_MKEY_MASK_RELAXED_ORDERING_WRITE`).
    pub const MKEY_MASK_RELAXED_ORDERING_WRITE: u64 = 1 << 25;
    /// mkey mask: `free` (`MLX5_MKEY_MASK_FREE`).
    pub const MKEY_MASK_FREE: u64 = 1 << 29;
    /// mkey mask: `log_page_size` bit 5 (`MLX5_MKEY_MASK_PAGE_SIZE_5`).
    pub const MKEY_MASK_PAGE_SIZE_5: u64 = 1 << 42;
    /// mkey mask: `relaxed_ordering_read` (`MLX5_MKEY_MASK_RELAXED_ORDERING_READ`).
    pub const MKEY_MASK_RELAXED_ORDERING_READ: u64 = 1 << 47;

    /// `MkeySeg::status`: the mkey is free (`MLX5_MKEY_STATUS_FREE`).
    pub const MKEY_STATUS_FREE: u8 = 1 << 6;
    /// `MkeySeg::flags`: local read (`MLX5_PERM_LOCAL_READ`).
    pub const PERM_LOCAL_READ: u8 = 1 << 2;
    /// `MkeySeg::flags`: local write (`MLX5_PERM_LOCAL_WRITE`).
    pub const PERM_LOCAL_WRITE: u8 = 1 << 3;
    /// `MkeySeg::flags`: remote read (`MLX5_PERM_REMOTE_READ`).
    pub const PERM_REMOTE_READ: u8 = 1 << 4;
    /// `MkeySeg::flags`: remote write (`MLX5_PERM_REMOTE_WRITE`).
    pub const PERM_REMOTE_WRITE: u8 = 1 << 5;
    /// `MkeySeg::flags`: remote atomic (`MLX5_PERM_ATOMIC`).
    pub const PERM_ATOMIC: u8 = 1 << 6;
    /// `MkeySeg::flags`: UMR may change the mkey (`MLX5_PERM_UMR_EN`).
    pub const PERM_UMR_EN: u8 = 1 << 7;
    /// `MkeySeg::flags_pd`: remote invalidation enabled (`MLX5_MKEY_REMOTE_INVAL`).
    pub const MKEY_REMOTE_INVAL: u32 = 1 << 24;

    /// MTT entry: the device may read the page (`MLX5_IB_MTT_READ`, `mlx5_ib.h`).
    pub const MTT_READ: u64 = 1 << 0;
    /// MTT entry: the device may write the page (`MLX5_IB_MTT_WRITE`).
    pub const MTT_WRITE: u64 = 1 << 1;

    /// The terminating lkey of a receive scatter list when the device names none
    /// (`MLX5_TERMINATE_SCATTER_LIST_LKEY`, `qp.h`).
    pub const TERMINATE_SCATTER_LIST_LKEY: u32 = 0x100;
}

const _: () = assert!(core::mem::size_of::<UmrCtrlSeg>() == 48);
const _: () = assert!(core::mem::size_of::<MkeySeg>() == 64);
const _: () = assert!(core::mem::size_of::<Mtt>() == 8);
const _: () = assert!(core::mem::size_of::<Klm>() == 16);
const _: () = assert!(core::mem::size_of::<Ksm>() == 16);
