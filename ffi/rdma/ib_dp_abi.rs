// SPDX-License-Identifier: GPL-2.0

//! The kernel verbs data path's structures shared with the shim (`ffi/rdma/ib_qp.c`,
//! `ffi/rdma/ib_cq.c`): `#[repr(C)]` mirrors of `struct mlx5rs_ib_send_wr` and the
//! core's `struct ib_sge`, `struct ib_send_wr` (with `ib_rdma_wr` and `ib_atomic_wr`),
//! `struct ib_recv_wr` and `struct ib_wc` (the shim checks the same sizes and offsets
//! at its build), the shim's request opcode and flag numbers (`MLX5RS_WR_*`,
//! `MLX5RS_SEND_*` in `mlx5rs_ffi.h`, the core's own for the opcodes read in place) and
//! the core's completion opcode and flag numbers.

/// The core's `struct ib_sge`, read in place from a work request's `sg_list`: the
/// WQE builders' own gather entry, whose `#[repr(C)]` layout is `struct ib_sge`'s
/// (the shim checks the size and offsets with `BUILD_BUG_ON`, this file below), so a
/// request's list reaches them without a copy.
pub(crate) use crate::ib::qp::send_wqe::Sge as IbSge;
const _: () = assert!(
    size_of::<IbSge>() == 16
        && core::mem::offset_of!(IbSge, addr) == 0
        && core::mem::offset_of!(IbSge, length) == 8
        && core::mem::offset_of!(IbSge, lkey) == 12
);

/// `struct mlx5rs_ib_send_wr`: one send work request as the shim copied it.
#[repr(C)]
#[derive(Clone, Copy, Debug, zerocopy_derive::FromZeros)]
pub(crate) struct SendWrC {
    /// `wr_id`.
    pub(crate) wr_id: u64,
    /// The `struct ib_sge` array (`num_sge` entries).
    pub(crate) sg: u64,
    /// RDMA and atomic remote address.
    pub(crate) remote_addr: u64,
    /// Atomic compare or add operand.
    pub(crate) compare_add: u64,
    /// Atomic swap operand.
    pub(crate) swap: u64,
    /// [`wr_op`].
    pub(crate) opcode: u32,
    /// [`send_flag`] bits.
    pub(crate) send_flags: u32,
    /// Entries of `sg`.
    pub(crate) num_sge: u32,
    /// `be32_to_cpu` of the immediate, or the key to invalidate.
    pub(crate) imm: u32,
    /// RDMA and atomic remote key.
    pub(crate) rkey: u32,
    /// UD: remote QPN.
    pub(crate) remote_qpn: u32,
    /// UD: remote Q_Key.
    pub(crate) remote_qkey: u32,
    /// UD: `av` holds the address handle's address vector.
    pub(crate) has_ah: u8,
    pub(crate) rsvd: [u8; 3],
    /// UD: the address vector (`struct mlx5_av`).
    pub(crate) av: [u8; 48],
    /// REG_MR: the MR's IOVA.
    pub(crate) reg_iova: u64,
    /// REG_MR: its length.
    pub(crate) reg_len: u64,
    /// REG_MR: DMA address of its translation list.
    pub(crate) reg_desc_map: u64,
    /// REG_MR: kernel address of the list (0: not an MR of alloc_mr).
    pub(crate) reg_descs: u64,
    /// REG_MR: the new key.
    pub(crate) reg_key: u32,
    /// REG_MR: `IB_ACCESS_*`.
    pub(crate) reg_access: u32,
    /// REG_MR: entries in the list.
    pub(crate) reg_ndescs: u32,
    /// REG_MR: the key the device reads the list with.
    pub(crate) reg_desc_lkey: u32,
    /// REG_MR: log2 of the MR's page size.
    pub(crate) reg_page_shift: u8,
    pub(crate) reg_rsvd: [u8; 7],
}
const _: () = assert!(size_of::<SendWrC>() == 176);

/// The core's `struct ib_recv_wr`, read in place while a receive chain is walked
/// (`RecvChain`): a `#[repr(C)]` mirror whose size and offsets the shim checks against
/// the kernel's header (`ffi/rdma/ib_qp.c`), as below.
#[repr(C)]
pub(crate) struct IbRecvWr {
    /// The next request of the chain, null after the last.
    pub(crate) next: *const IbRecvWr,
    /// `wr_id` (or `wr_cqe`, the same 8 bytes).
    pub(crate) wr_id: u64,
    /// The `struct ib_sge` array (`num_sge` entries).
    pub(crate) sg_list: *const IbSge,
    /// Entries of `sg_list` (`int`).
    pub(crate) num_sge: i32,
}
const _: () = assert!(
    size_of::<IbRecvWr>() == 32
        && core::mem::offset_of!(IbRecvWr, wr_id) == 8
        && core::mem::offset_of!(IbRecvWr, sg_list) == 16
        && core::mem::offset_of!(IbRecvWr, num_sge) == 24
);

/// The core's `struct ib_send_wr`, read in place for a connected QP's requests of the
/// opcodes `wr_op::RDMA_WRITE` to `wr_op::ATOMIC_FETCH_AND_ADD` (`SendChain::next`):
/// a `#[repr(C)]` mirror whose size and offsets the shim checks against the kernel's
/// header (`ffi/rdma/ib_qp.c`), as below; the opcode and flag numbers are the shim's
/// `MLX5RS_WR_*` and `MLX5RS_SEND_*` there (checked the same way).
#[repr(C)]
pub(crate) struct IbSendWr {
    /// The next request of the chain, null after the last.
    pub(crate) next: *const IbSendWr,
    /// `wr_id` (or `wr_cqe`, the same 8 bytes).
    pub(crate) wr_id: u64,
    /// The `struct ib_sge` array (`num_sge` entries).
    pub(crate) sg_list: *const IbSge,
    /// Entries of `sg_list` (`int`).
    pub(crate) num_sge: i32,
    /// `enum ib_wr_opcode`.
    pub(crate) opcode: u32,
    /// `enum ib_send_flags` bits (`int`).
    pub(crate) send_flags: u32,
    /// `ex`: the immediate as the consumer's big-endian bytes (`imm_data`), or the key
    /// to invalidate.
    pub(crate) ex: u32,
}
const _: () = assert!(
    size_of::<IbSendWr>() == 40
        && core::mem::offset_of!(IbSendWr, wr_id) == 8
        && core::mem::offset_of!(IbSendWr, sg_list) == 16
        && core::mem::offset_of!(IbSendWr, num_sge) == 24
        && core::mem::offset_of!(IbSendWr, opcode) == 28
        && core::mem::offset_of!(IbSendWr, send_flags) == 32
        && core::mem::offset_of!(IbSendWr, ex) == 36
);

/// The core's `struct ib_rdma_wr` (RDMA WRITE, WRITE with immediate, READ), as
/// [`IbSendWr`].
#[repr(C)]
pub(crate) struct IbRdmaWr {
    /// The request's head.
    pub(crate) wr: IbSendWr,
    /// Remote address.
    pub(crate) remote_addr: u64,
    /// Remote key.
    pub(crate) rkey: u32,
}
const _: () = assert!(
    size_of::<IbRdmaWr>() == 56
        && core::mem::offset_of!(IbRdmaWr, remote_addr) == 40
        && core::mem::offset_of!(IbRdmaWr, rkey) == 48
);

/// The core's `struct ib_atomic_wr` (compare-and-swap, fetch-and-add), as
/// [`IbSendWr`].
#[repr(C)]
pub(crate) struct IbAtomicWr {
    /// The request's head.
    pub(crate) wr: IbSendWr,
    /// Remote address.
    pub(crate) remote_addr: u64,
    /// Compare (compare-and-swap) or add (fetch-and-add) operand.
    pub(crate) compare_add: u64,
    /// Swap operand.
    pub(crate) swap: u64,
    /// Masked atomics only (not read).
    pub(crate) compare_add_mask: u64,
    /// Masked atomics only (not read).
    pub(crate) swap_mask: u64,
    /// Remote key.
    pub(crate) rkey: u32,
}
const _: () = assert!(
    size_of::<IbAtomicWr>() == 88
        && core::mem::offset_of!(IbAtomicWr, remote_addr) == 40
        && core::mem::offset_of!(IbAtomicWr, compare_add) == 48
        && core::mem::offset_of!(IbAtomicWr, swap) == 56
        && core::mem::offset_of!(IbAtomicWr, rkey) == 80
);

/// One receive work request as the receive posts use it, read from the core's
/// [`IbRecvWr`] (`RecvChain::next_into`).
#[derive(Clone, Copy, Debug, zerocopy_derive::FromZeros)]
pub(crate) struct RecvWrC {
    /// `wr_id`.
    pub(crate) wr_id: u64,
    /// The `struct ib_sge` array (`num_sge` entries).
    pub(crate) sg: u64,
    /// Entries of `sg` (a negative count of the core's read as 0).
    pub(crate) num_sge: u32,
}

/// The core's `struct ib_wc`, written in place by poll_cq into the caller's array:
/// a `#[repr(C)]` mirror whose size and every field's offset the shim checks against
/// the kernel's header (`ffi/rdma/ib_cq.c`), as the offsets below.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IbWc {
    /// `wr_id`.
    pub(crate) wr_id: u64,
    /// `enum ib_wc_status`.
    pub(crate) status: u32,
    /// `enum ib_wc_opcode` ([`wc_op`]).
    pub(crate) opcode: u32,
    /// Vendor syndrome.
    pub(crate) vendor_err: u32,
    /// Bytes.
    pub(crate) byte_len: u32,
    /// The `struct ib_qp *` of the QP.
    pub(crate) qp: u64,
    /// `ex`: the immediate as the wire's big-endian bytes (`imm_data`), or the
    /// invalidated key (`invalidate_rkey`).
    pub(crate) ex: u32,
    /// Source QPN.
    pub(crate) src_qp: u32,
    /// Source LID.
    pub(crate) slid: u32,
    /// [`wc_flag`] bits (`int wc_flags`).
    pub(crate) wc_flags: u32,
    /// The P_Key's index (QP1 receives; see `mlx5rs_ib_rs_poll_cq`).
    pub(crate) pkey_index: u16,
    /// Service level.
    pub(crate) sl: u8,
    /// DLID path bits.
    pub(crate) dlid_path_bits: u8,
    /// `port_num`: switches only, 0.
    pub(crate) port_num: u32,
    /// `smac`: Ethernet only, 0.
    pub(crate) smac: [u8; 6],
    /// `vlan_id`: Ethernet only, 0.
    pub(crate) vlan_id: u16,
    /// `network_hdr_type`: RoCE only, 0.
    pub(crate) network_hdr_type: u8,
    /// The structure's tail padding, made explicit.
    pub(crate) pad: [u8; 7],
}
const _: () = {
    use core::mem::offset_of;
    assert!(size_of::<IbWc>() == 72 && align_of::<IbWc>() == 8);
    assert!(offset_of!(IbWc, status) == 8 && offset_of!(IbWc, opcode) == 12);
    assert!(offset_of!(IbWc, vendor_err) == 16 && offset_of!(IbWc, byte_len) == 20);
    assert!(offset_of!(IbWc, qp) == 24 && offset_of!(IbWc, ex) == 32);
    assert!(offset_of!(IbWc, src_qp) == 36 && offset_of!(IbWc, slid) == 40);
    assert!(offset_of!(IbWc, wc_flags) == 44 && offset_of!(IbWc, pkey_index) == 48);
    assert!(offset_of!(IbWc, sl) == 50 && offset_of!(IbWc, dlid_path_bits) == 51);
    assert!(offset_of!(IbWc, port_num) == 52 && offset_of!(IbWc, smac) == 56);
    assert!(offset_of!(IbWc, vlan_id) == 62 && offset_of!(IbWc, network_hdr_type) == 64);
};

/// `MLX5RS_WR_*`: send opcodes.
pub(crate) mod wr_op {
    pub(crate) const RDMA_WRITE: u32 = 0;
    pub(crate) const RDMA_WRITE_IMM: u32 = 1;
    pub(crate) const SEND: u32 = 2;
    pub(crate) const SEND_IMM: u32 = 3;
    pub(crate) const RDMA_READ: u32 = 4;
    pub(crate) const ATOMIC_CMP_AND_SWP: u32 = 5;
    pub(crate) const ATOMIC_FETCH_AND_ADD: u32 = 6;
    pub(crate) const LOCAL_INV: u32 = 7;
    pub(crate) const REG_MR: u32 = 8;
    /// The provider's own UMR WQE on its UMR QP (`ffi/rdma/ib_umr.c`).
    pub(crate) const UMR: u32 = 10;
}

/// `MLX5RS_SEND_*`: send flags.
pub(crate) mod send_flag {
    pub(crate) const FENCE: u32 = 1 << 0;
    pub(crate) const SIGNALED: u32 = 1 << 1;
    pub(crate) const SOLICITED: u32 = 1 << 2;
    pub(crate) const INLINE: u32 = 1 << 3;
}

/// `enum ib_wc_opcode`: completion opcodes (the shim checks each against the
/// kernel's header).
pub(crate) mod wc_op {
    pub(crate) const SEND: u32 = 0;
    pub(crate) const RDMA_WRITE: u32 = 1;
    pub(crate) const RDMA_READ: u32 = 2;
    pub(crate) const COMP_SWAP: u32 = 3;
    pub(crate) const FETCH_ADD: u32 = 4;
    pub(crate) const LOCAL_INV: u32 = 6;
    pub(crate) const REG_MR: u32 = 10;
    pub(crate) const MASKED_COMP_SWAP: u32 = 11;
    pub(crate) const MASKED_FETCH_ADD: u32 = 12;
    pub(crate) const RECV: u32 = 1 << 7;
    pub(crate) const RECV_RDMA_WITH_IMM: u32 = (1 << 7) + 1;
}

/// `enum ib_wc_flags`: completion flags (checked by the shim as [`wc_op`]).
pub(crate) mod wc_flag {
    pub(crate) const GRH: u32 = 1 << 0;
    pub(crate) const WITH_IMM: u32 = 1 << 1;
    pub(crate) const WITH_INVALIDATE: u32 = 1 << 2;
}
