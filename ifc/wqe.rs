//! Completion queue entries, the send WQE segments and the CQ doorbell: plain C
//! structures of `include/linux/mlx5/device.h` (`struct mlx5_cqe64`,
//! `struct mlx5_err_cqe`) and `qp.h` (`struct mlx5_wqe_ctrl_seg`,
//! `struct mlx5_wqe_data_seg`, `mlx5_wqe_raddr_seg`, `mlx5_wqe_atomic_seg`,
//! `mlx5_wqe_masked_atomic_seg`, `mlx5_wqe_inline_seg`, `mlx5_wqe_datagram_seg`,
//! `mlx5_wqe_xrc_seg`), here `zerocopy` structs with big-endian fields (`mlx5_ifc.h`
//! declares none of them). Checked member by member against the headers by
//! `emu/tests/send_wqe_layouts.rs` and `emu/tests/srq_ah_layouts.rs`.

use zerocopy::byteorder::big_endian::{U16, U32, U64};
use zerocopy_derive::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// A 64-byte CQE (`struct mlx5_cqe64`; for 128-byte CQEs, the second half of the
/// entry). Members in the header's order; the header's anonymous unions are named
/// after what they hold. The InfiniBand data path writes `ml_path`, `slid`,
/// `flags_rqpn`, `srqn`, `imm_inval_pkey`, `byte_cnt`, `sop_drop_qpn`, `wqe_counter`
/// and `op_own`; the rest are Ethernet offloads.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct Cqe64 {
    /// Ethernet: outer L3 of a tunnelled packet.
    pub tls_outer_l3_tunneled: u8,
    /// Reserved.
    pub rsvd0: u8,
    /// Ethernet: WQE id (striding RQ).
    pub wqe_id: U16,
    /// Ethernet: the LRO / SHAMPO union (8 bytes).
    pub lro_shampo: [u8; 8],
    /// Ethernet: RSS hash.
    pub rss_hash_result: U32,
    /// Ethernet: RSS hash type.
    pub rss_hash_type: u8,
    /// Responder (InfiniBand): the destination LID path bits of the packet.
    pub ml_path: u8,
    /// Reserved.
    pub rsvd20: [u8; 2],
    /// Ethernet: checksum.
    pub check_sum: U16,
    /// Responder (InfiniBand): source LID.
    pub slid: U16,
    /// Responder: source QPN (23:0); InfiniBand: SL (27:24) and GRH present (29:28,
    /// [`vals::CQE_FLAGS_GRH`]); RoCE: L3 header type (25:24).
    pub flags_rqpn: U32,
    /// Ethernet: L3 / L4 checksum OK bits.
    pub hds_ip_ext: u8,
    /// Ethernet: L4 / L3 header types, VLAN present (bit 0).
    pub l4_l3_hdr_type: u8,
    /// Ethernet: VLAN tag.
    pub vlan_info: U16,
    /// SRQ number (CQE version 0) or the user index of the QP / XRC SRQ (CQE version
    /// 1, libmlx5's `srqn_uidx`), 23:0.
    pub srqn: U32,
    /// Immediate data / invalidated rkey / P_Key (the header's anonymous union).
    pub imm_inval_pkey: U32,
    /// Reserved.
    pub rsvd40: [u8; 4],
    /// Bytes transferred (responder: received; requester: RDMA read / atomic length).
    pub byte_cnt: U32,
    /// Timestamp, high word.
    pub timestamp_h: U32,
    /// Timestamp, low word.
    pub timestamp_l: U32,
    /// Send WQE opcode (31:24, requester) and QPN (23:0).
    pub sop_drop_qpn: U32,
    /// WQE counter of the completed WQE (send: index in WQEBBs; SRQ: WQE index).
    pub wqe_counter: U16,
    /// Signature / validity iteration count (the header's anonymous union).
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
    /// SRQ number / user index (as [`Cqe64::srqn`]).
    pub srqn: U32,
    /// Reserved.
    pub rsvd1: [u8; 18],
    /// Vendor syndrome.
    pub vendor_err_synd: u8,
    /// Syndrome ([`vals`] `SYNDROME_*`).
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
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
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

/// The remote address segment of RDMA and atomic WQEs (`qp.h`
/// `struct mlx5_wqe_raddr_seg`, 16 bytes).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct WqeRaddrSeg {
    /// Remote virtual address.
    pub raddr: U64,
    /// Remote key.
    pub rkey: U32,
    /// Reserved.
    pub reserved: [u8; 4],
}

/// The atomic segment after the remote address of a compare-and-swap or fetch-and-add
/// (`qp.h` `struct mlx5_wqe_atomic_seg`, 16 bytes).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct WqeAtomicSeg {
    /// Swap value (compare-and-swap) or the addend (fetch-and-add).
    pub swap_add: U64,
    /// Compare value (compare-and-swap).
    pub compare: U64,
}

/// The masked atomic segment of 8-byte masked compare-and-swap / fetch-and-add
/// (`qp.h` `struct mlx5_wqe_masked_atomic_seg`, 32 bytes).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct WqeMaskedAtomicSeg {
    /// Swap value / addend.
    pub swap_add: U64,
    /// Compare value.
    pub compare: U64,
    /// Swap mask / field boundaries of the masked add.
    pub swap_add_mask: U64,
    /// Compare mask.
    pub compare_mask: U64,
}

/// The header of inline data (`qp.h` `struct mlx5_wqe_inline_seg`): the byte count
/// with [`vals::INLINE_SEG`] set, the bytes follow (padded to 16).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct WqeInlineSeg {
    /// `MLX5_INLINE_SEG` | byte count.
    pub byte_count: U32,
}

/// The datagram segment of UD and MAD QP sends (`qp.h` `struct mlx5_wqe_datagram_seg`):
/// the address handle's [`Av`](crate::ifc::av::Av) with the remote QPN and Q_Key.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct WqeDatagramSeg {
    /// The address vector.
    pub av: crate::ifc::av::Av,
}

/// The XRC segment of an XRC initiator's send WQE (`qp.h` `struct mlx5_wqe_xrc_seg`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct WqeXrcSeg {
    /// The remote XRC SRQ number.
    pub xrc_srqn: U32,
    /// Reserved.
    pub rsvd: [u8; 12],
}

/// Send WQE opcodes (`device.h` `MLX5_OPCODE_*`).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator and the host tests")
)]
pub mod opcode {
    /// No operation.
    pub const NOP: u8 = 0x00;
    /// Send with invalidate (`MLX5_OPCODE_SEND_INVAL`).
    pub const SEND_INVAL: u8 = 0x01;
    /// RDMA write.
    pub const RDMA_WRITE: u8 = 0x08;
    /// RDMA write with immediate.
    pub const RDMA_WRITE_IMM: u8 = 0x09;
    /// Send.
    pub const SEND: u8 = 0x0a;
    /// Send with immediate.
    pub const SEND_IMM: u8 = 0x0b;
    /// Large send offload (Ethernet / IPoIB).
    pub const LSO: u8 = 0x0e;
    /// RDMA read.
    pub const RDMA_READ: u8 = 0x10;
    /// Atomic compare-and-swap.
    pub const ATOMIC_CS: u8 = 0x11;
    /// Atomic fetch-and-add.
    pub const ATOMIC_FA: u8 = 0x12;
    /// Masked atomic compare-and-swap.
    pub const ATOMIC_MASKED_CS: u8 = 0x14;
    /// Masked atomic fetch-and-add.
    pub const ATOMIC_MASKED_FA: u8 = 0x15;
    /// Memory-window bind (the UMR format).
    pub const BIND_MW: u8 = 0x18;
    /// User-mode memory registration.
    pub const UMR: u8 = 0x25;
}

/// Values of these structures (upstream `cq.h`, `qp.h`, `device.h`).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator and the host tests")
)]
pub mod vals {
    /// CQE opcode: requester completion (`MLX5_CQE_REQ`).
    pub const CQE_REQ: u8 = 0x0;
    /// CQE opcode: RDMA write with immediate received (`MLX5_CQE_RESP_WR_IMM`).
    pub const CQE_RESP_WR_IMM: u8 = 0x1;
    /// CQE opcode: send received (`MLX5_CQE_RESP_SEND`).
    pub const CQE_RESP_SEND: u8 = 0x2;
    /// CQE opcode: send with immediate received (`MLX5_CQE_RESP_SEND_IMM`).
    pub const CQE_RESP_SEND_IMM: u8 = 0x3;
    /// CQE opcode: send with invalidate received (`MLX5_CQE_RESP_SEND_INV`).
    pub const CQE_RESP_SEND_INV: u8 = 0x4;
    /// CQE opcode: CQ resized (`MLX5_CQE_RESIZE_CQ`).
    pub const CQE_RESIZE_CQ: u8 = 0x5;
    /// CQE opcode: signature error (`MLX5_CQE_SIG_ERR`).
    pub const CQE_SIG_ERR: u8 = 0xc;
    /// CQE opcode: requester error (`MLX5_CQE_REQ_ERR`).
    pub const CQE_REQ_ERR: u8 = 0xd;
    /// CQE opcode: responder error (`MLX5_CQE_RESP_ERR`).
    pub const CQE_RESP_ERR: u8 = 0xe;
    /// CQE opcode: invalid (`MLX5_CQE_INVALID`).
    pub const CQE_INVALID: u8 = 0xf;
    /// `op_own`: the owner bit (`MLX5_CQE_OWNER_MASK`).
    pub const CQE_OWNER_MASK: u8 = 1;
    /// `flags_rqpn` (InfiniBand): GRH present, bits 29:28 (upstream `handle_responder`
    /// tests them for nonzero; the model writes 1).
    pub const CQE_FLAGS_GRH: u32 = 1 << 28;
    /// `flags_rqpn` (InfiniBand): shift of the SL (27:24).
    pub const CQE_FLAGS_SL_SHIFT: u32 = 24;
    /// CQE version 1: the CQE carries the user index (cap `cqe_version`,
    /// `MLX5_CQE_VERSION_V1`).
    pub const CQE_VERSION_V1: u8 = 1;
    /// Error syndrome: local length (`MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR`).
    pub const SYNDROME_LOCAL_LENGTH_ERR: u8 = 0x01;
    /// Error syndrome: local QP operation (`MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR`).
    pub const SYNDROME_LOCAL_QP_OP_ERR: u8 = 0x02;
    /// Error syndrome: local protection (`MLX5_CQE_SYNDROME_LOCAL_PROT_ERR`).
    pub const SYNDROME_LOCAL_PROT_ERR: u8 = 0x04;
    /// Error syndrome: work request flushed (`MLX5_CQE_SYNDROME_WR_FLUSH_ERR`).
    pub const SYNDROME_WR_FLUSH_ERR: u8 = 0x05;
    /// Error syndrome: memory window bind (`MLX5_CQE_SYNDROME_MW_BIND_ERR`).
    pub const SYNDROME_MW_BIND_ERR: u8 = 0x06;
    /// Error syndrome: bad response (`MLX5_CQE_SYNDROME_BAD_RESP_ERR`).
    pub const SYNDROME_BAD_RESP_ERR: u8 = 0x10;
    /// Error syndrome: local access (`MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR`).
    pub const SYNDROME_LOCAL_ACCESS_ERR: u8 = 0x11;
    /// Error syndrome: remote invalid request (`MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR`).
    pub const SYNDROME_REMOTE_INVAL_REQ_ERR: u8 = 0x12;
    /// Error syndrome: remote access (`MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR`).
    pub const SYNDROME_REMOTE_ACCESS_ERR: u8 = 0x13;
    /// Error syndrome: remote operation (`MLX5_CQE_SYNDROME_REMOTE_OP_ERR`).
    pub const SYNDROME_REMOTE_OP_ERR: u8 = 0x14;
    /// Error syndrome: transport retries exceeded
    /// (`MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR`).
    pub const SYNDROME_TRANSPORT_RETRY_EXC_ERR: u8 = 0x15;
    /// Error syndrome: RNR retries exceeded (`MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR`).
    pub const SYNDROME_RNR_RETRY_EXC_ERR: u8 = 0x16;
    /// Error syndrome: remote aborted (`MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR`).
    pub const SYNDROME_REMOTE_ABORTED_ERR: u8 = 0x22;
    /// CQ error event syndrome: CQ overrun (`mlx5_ifc.h`
    /// `MLX5_CQ_ERROR_SYNDROME_CQ_OVERRUN`).
    pub const CQ_ERROR_SYNDROME_CQ_OVERRUN: u8 = 0x1;
    /// CQ error event syndrome: access violation (`mlx5_ifc.h`
    /// `MLX5_CQ_ERROR_SYNDROME_CQ_ACCESS_VIOLATION_ERROR`).
    pub const CQ_ERROR_SYNDROME_CQ_ACCESS_VIOLATION: u8 = 0x2;
    /// `cqc.status` of a CQ that overran (`mlx5_ifc.h` `MLX5_CQC_STATUS_CQ_OVERFLOW`).
    pub const CQC_STATUS_CQ_OVERFLOW: u8 = 0x9;
    /// `cqc.status` of a CQ whose CQE write failed (`MLX5_CQC_STATUS_CQ_WRITE_FAIL`).
    pub const CQC_STATUS_CQ_WRITE_FAIL: u8 = 0xa;
    /// `fm_ce_se`: a CQE is requested (`MLX5_WQE_CTRL_CQ_UPDATE`, either CE value).
    pub const CTRL_CQ_UPDATE: u8 = 2 << 2;
    /// `fm_ce_se`: a CQE and an EQE are requested (`MLX5_WQE_CTRL_CQ_UPDATE_AND_EQE`).
    pub const CTRL_CQ_UPDATE_AND_EQE: u8 = 3 << 2;
    /// `fm_ce_se`: the completion-request field (CE, bits 3:2).
    pub const CTRL_CE_MASK: u8 = 3 << 2;
    /// `fm_ce_se`: the fence-mode field (bits 7:5).
    pub const CTRL_FENCE_MASK: u8 = 7 << 5;
    /// Fence mode: none (`MLX5_FENCE_MODE_NONE`).
    pub const FENCE_MODE_NONE: u8 = 0;
    /// Fence mode: initiator small fence (`MLX5_FENCE_MODE_INITIATOR_SMALL`).
    pub const FENCE_MODE_INITIATOR_SMALL: u8 = 1 << 5;
    /// Fence mode: fence (`MLX5_FENCE_MODE_FENCE`).
    pub const FENCE_MODE_FENCE: u8 = 2 << 5;
    /// Fence mode: strong ordering (`MLX5_FENCE_MODE_STRONG_ORDERING`).
    pub const FENCE_MODE_STRONG_ORDERING: u8 = 3 << 5;
    /// Fence mode: small and fence (`MLX5_FENCE_MODE_SMALL_AND_FENCE`).
    pub const FENCE_MODE_SMALL_AND_FENCE: u8 = 4 << 5;
    /// `qpn_ds`: the size field (`MLX5_WQE_CTRL_DS_MASK`).
    pub const CTRL_DS_MASK: u32 = 0x3f;
    /// Most basic blocks of one send WQE (`MLX5_SEND_WQE_MAX_WQEBBS`).
    pub const SEND_WQE_MAX_WQEBBS: usize = 16;
    /// An inline segment's byte count flag (`device.h` `MLX5_INLINE_SEG`).
    pub const INLINE_SEG: u32 = 0x8000_0000;
    /// An inline segment's byte-count bits (`MLX5_WQE_INLINE_SEG_BYTE_COUNT_MASK`).
    pub const INLINE_SEG_BYTE_COUNT_MASK: u32 = 0x3ff;
    /// `dqp_dct` flag of a datagram segment: extended UD address vector
    /// (`MLX5_EXTENDED_UD_AV`).
    pub const EXTENDED_UD_AV: u32 = 0x8000_0000;
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
const _: () = assert!(core::mem::size_of::<WqeRaddrSeg>() == 16);
const _: () = assert!(core::mem::size_of::<WqeAtomicSeg>() == 16);
const _: () = assert!(core::mem::size_of::<WqeMaskedAtomicSeg>() == 32);
const _: () = assert!(core::mem::size_of::<WqeInlineSeg>() == 4);
const _: () = assert!(core::mem::size_of::<WqeDatagramSeg>() == 48);
const _: () = assert!(core::mem::size_of::<WqeXrcSeg>() == 16);
