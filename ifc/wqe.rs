//! Completion queue entries, the send WQE control and data segments and the CQ doorbell: plain
//! C structures of `include/linux/mlx5/device.h` (`struct mlx5_cqe64`,
//! `struct mlx5_err_cqe`) and `qp.h` (`struct mlx5_wqe_ctrl_seg`, `struct mlx5_wqe_data_seg`), here `zerocopy`
//! structs with big-endian fields (`mlx5_ifc.h` declares none of them).

use zerocopy::byteorder::big_endian::{U16, U32, U64};
use zerocopy_derive::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// A 64-byte CQE (for 128-byte CQEs, the second half of the entry).
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct Cqe64 {
    /// Offload and receive fields not modelled (`tls_outer_l3_tunneled` …
    /// `slid`).
    pub rsvd00: [u8; 0x18],
    /// Source QPN (23:0) and packet flags (responder).
    pub flags_rqpn: U32,
    /// `hds_ip_ext`, `l4_l3_hdr_type`, `vlan_info`.
    pub rsvd1c: [u8; 4],
    /// SRQ number (23:0).
    pub srqn: U32,
    /// Immediate data / invalidated rkey / P_Key.
    pub imm_inval_pkey: U32,
    /// Reserved.
    pub rsvd28: [u8; 4],
    /// Bytes transferred.
    pub byte_cnt: U32,
    /// Timestamp, high word.
    pub timestamp_h: U32,
    /// Timestamp, low word.
    pub timestamp_l: U32,
    /// Send opcode (31:24, requester) and QPN (23:0).
    pub sop_drop_qpn: U32,
    /// WQE counter of the completed WQE.
    pub wqe_counter: U16,
    /// Signature.
    pub signature: u8,
    /// Opcode (7:4), format (3:2), owner (0).
    pub op_own: u8,
}

/// An error CQE (same 64 bytes, `struct mlx5_err_cqe`).
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct ErrCqe {
    /// Reserved.
    pub rsvd0: [u8; 32],
    /// SRQ number.
    pub srqn: U32,
    /// Reserved.
    pub rsvd1: [u8; 18],
    /// Vendor syndrome.
    pub vendor_err_synd: u8,
    /// Syndrome.
    pub syndrome: u8,
    /// Send opcode (31:24) and QPN (23:0).
    pub s_wqe_opcode_qpn: U32,
    /// WQE counter.
    pub wqe_counter: U16,
    /// Signature.
    pub signature: u8,
    /// Opcode (7:4), owner (0).
    pub op_own: u8,
}

/// The control segment that starts every send WQE.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct WqeCtrlSeg {
    /// opmod (31:24), WQE index (23:8), opcode (7:0).
    pub opmod_idx_opcode: U32,
    /// QPN (31:8), size in 16-byte units (5:0).
    pub qpn_ds: U32,
    /// WQE signature.
    pub signature: u8,
    /// Reserved.
    pub rsvd: [u8; 2],
    /// Fence mode (7:5), completion request (3:2), solicited (1).
    pub fm_ce_se: u8,
    /// Immediate data / general id.
    pub imm: U32,
}

/// A data (scatter/gather) segment (`qp.h` `struct mlx5_wqe_data_seg`, 16 bytes): the
/// gather list of a send WQE, the scatter list of a receive WQE, and the pointer to a
/// translation table in a UMR WQE.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct WqeDataSeg {
    /// Bytes (a receive list ends at a segment of 0 bytes with the terminating mkey).
    pub byte_count: U32,
    /// The local key the address is translated with.
    pub lkey: U32,
    /// Virtual address in the key's space.
    pub addr: U64,
}

/// Values of these structures (upstream `cq.h`, `qp.h`, `device.h`).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator and the host tests")
)]
pub mod vals {
    /// CQE opcode: requester completion (`MLX5_CQE_REQ`).
    pub const CQE_REQ: u8 = 0x0;
    /// CQE opcode: requester error (`MLX5_CQE_REQ_ERR`).
    pub const CQE_REQ_ERR: u8 = 0xd;
    /// CQE opcode: invalid (`MLX5_CQE_INVALID`).
    pub const CQE_INVALID: u8 = 0xf;
    /// Error syndrome: work request flushed (`MLX5_CQE_SYNDROME_WR_FLUSH_ERR`).
    pub const SYNDROME_WR_FLUSH_ERR: u8 = 0x05;
    /// `fm_ce_se`: a CQE is requested (`MLX5_WQE_CTRL_CQ_UPDATE`, either CE value).
    pub const CTRL_CQ_UPDATE: u8 = 2 << 2;
    /// `fm_ce_se`: solicited event (`MLX5_WQE_CTRL_SOLICITED`).
    pub const CTRL_SOLICITED: u8 = 1 << 1;
    /// A send WQE basic block.
    pub const SEND_WQE_BB: usize = 64;
    /// A descriptor (`MLX5_SEND_WQE_DS`).
    pub const SEND_WQE_DS: usize = 16;
    /// CQ arm doorbell offset in a UAR page (upstream `MLX5_CQ_DOORBELL`).
    pub const UAR_CQ_DOORBELL: usize = 0x20;
    /// First BlueFlame register in a UAR page (upstream `MLX5_BF_OFFSET`).
    pub const UAR_BF_OFFSET: usize = 0x800;
    /// BlueFlame registers per UAR page (upstream `MLX5_BFREGS_PER_UAR`).
    pub const BFREGS_PER_UAR: usize = 4;
    /// Arm word: solicited completions only (`MLX5_CQ_DB_REQ_NOT_SOL`).
    pub const CQ_DB_REQ_NOT_SOL: u32 = 1 << 24;
}

const _: () = assert!(core::mem::size_of::<Cqe64>() == 64);
const _: () = assert!(core::mem::size_of::<ErrCqe>() == 64);
const _: () = assert!(core::mem::size_of::<WqeCtrlSeg>() == 16);
const _: () = assert!(core::mem::size_of::<WqeDataSeg>() == 16);
