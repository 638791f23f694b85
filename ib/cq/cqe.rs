// SPDX-License-Identifier: GPL-2.0

//! CQE reading for kernel `poll_cq`, as upstream `mlx5_poll_one` (`cq.c`) reads one:
//! the ownership test of `get_sw_cqe`, then the entry parsed into a completion
//! (`handle_good_req`, `handle_responder`, `mlx5_handle_error_cqe`).
//!
//! A CQE is untrusted device input: every value is read from the `ifc::wqe::Cqe64`
//! layout through its typed fields, and an entry upstream would not expect (an
//! unknown CQE or send opcode, a compressed-CQE format this provider never enables,
//! a signature error with no signature MR) is [`Malformed`], which the caller counts
//! and skips, never follows. What the CQE names (QPN, WQE counter) the caller still
//! bounds against its own tables.
//!
//! Pure `core` code, host-tested; not yet part of the kernel module's tree.

use crate::ib::cq::wc_status::{status_of_syndrome, WcStatus};
use crate::ifc::wqe::{opcode, vals, Cqe64, ErrCqe};
use zerocopy::FromBytes;

/// The CQ buffer as created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CqGeometry {
    /// Entries (`ibcq.cqe + 1`, a power of two).
    nent: u32,
    /// Bytes per entry (64 or 128).
    cqe_sz: u32,
}

impl CqGeometry {
    /// A geometry of `nent` entries of `cqe_sz` bytes; `None` unless `nent` is a power
    /// of two and `cqe_sz` 64 or 128.
    pub fn new(nent: u32, cqe_sz: u32) -> Option<Self> {
        (nent.is_power_of_two() && (cqe_sz == 64 || cqe_sz == 128)).then_some(Self { nent, cqe_sz })
    }

    /// Bytes of the buffer.
    pub fn bytes(&self) -> usize {
        self.nent as usize * self.cqe_sz as usize
    }
}

/// The 64 bytes of entry `n` (consumer counter) that carry the CQE, if software owns
/// it (upstream `get_sw_cqe`: opcode not `MLX5_CQE_INVALID` and the owner bit equal
/// to the counter's wrap bit `n & nent`); for 128-byte entries, the second half.
/// `None` too when `buf` is not the geometry's size.
pub fn sw_cqe(geo: &CqGeometry, buf: &[u8], n: u32) -> Option<Cqe64> {
    if buf.len() != geo.bytes() {
        return None;
    }
    let slot = (n & (geo.nent - 1)) as usize * geo.cqe_sz as usize;
    let off = slot + geo.cqe_sz as usize - 64;
    let cqe = Cqe64::read_from_bytes(buf.get(off..off + 64)?).ok()?;
    let owner = cqe.op_own & vals::CQE_OWNER_MASK != 0;
    let wrap = n & geo.nent != 0;
    (cqe.op_own >> 4 != vals::CQE_INVALID && owner == wrap).then_some(cqe)
}

/// What a requester completion completed (`handle_good_req`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReqOp {
    /// `IB_WC_SEND` (send, send with immediate or with invalidate).
    Send,
    /// `IB_WC_RDMA_WRITE`.
    RdmaWrite,
    /// `IB_WC_RDMA_READ`.
    RdmaRead,
    /// `IB_WC_COMP_SWAP`.
    CmpSwap,
    /// `IB_WC_FETCH_ADD`.
    FetchAdd,
    /// `IB_WC_MASKED_COMP_SWAP`.
    MaskedCmpSwap,
    /// `IB_WC_MASKED_FETCH_ADD`.
    MaskedFetchAdd,
    /// A UMR WQE: `IB_WC_LOCAL_INV` or `IB_WC_REG_MR` after what the caller posted at
    /// that index (upstream `get_umr_comp`).
    Umr,
}

/// What a responder completion received (`handle_responder`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecvOp {
    /// `IB_WC_RECV`.
    Recv,
    /// `IB_WC_RECV` with `IB_WC_WITH_IMM`.
    RecvImm(u32),
    /// `IB_WC_RECV_RDMA_WITH_IMM`.
    RdmaWithImm(u32),
    /// `IB_WC_RECV` with `IB_WC_WITH_INVALIDATE` of this rkey.
    RecvInv(u32),
}

/// A parsed CQE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    /// A successful send-queue completion.
    Req {
        /// QPN (`sop_drop_qpn` 23:0).
        qpn: u32,
        /// WQE counter (the caller masks it with its `wqe_cnt - 1`).
        wqe_counter: u16,
        /// What completed.
        op: ReqOp,
        /// With immediate (`IB_WC_WITH_IMM`).
        with_imm: bool,
        /// `byte_len` where upstream sets one (RDMA read: the CQE's byte count;
        /// atomics: 8).
        byte_len: Option<u32>,
    },
    /// A successful receive completion.
    Resp {
        /// QPN.
        qpn: u32,
        /// WQE counter (SRQ: the WQE index).
        wqe_counter: u16,
        /// What was received.
        op: RecvOp,
        /// Bytes received.
        byte_len: u32,
        /// Source QPN (`flags_rqpn` 23:0).
        src_qp: u32,
        /// Source LID.
        slid: u16,
        /// Service level (`flags_rqpn` 27:24).
        sl: u8,
        /// A GRH is present (`flags_rqpn` 29:28 nonzero: `IB_WC_GRH`).
        grh: bool,
        /// `dlid_path_bits` (`ml_path`).
        dlid_path_bits: u8,
        /// The P_Key the packet carried (`imm_inval_pkey` 15:0); upstream looks its
        /// index up for QP1 only.
        pkey: u16,
        /// SRQ number / user index (`srqn` 23:0).
        srqn_uidx: u32,
    },
    /// An error completion (`MLX5_CQE_REQ_ERR` / `MLX5_CQE_RESP_ERR`).
    Error {
        /// QPN (`s_wqe_opcode_qpn` 23:0).
        qpn: u32,
        /// The send queue's (requester) or the receive queue's.
        requester: bool,
        /// WQE counter.
        wqe_counter: u16,
        /// `ib_wc_status` of the syndrome.
        status: WcStatus,
        /// The syndrome as the device wrote it.
        syndrome: u8,
        /// The vendor syndrome (`wc->vendor_err`).
        vendor_err: u8,
    },
    /// `MLX5_CQE_RESIZE_CQ`: the resize completed (no work completion).
    Resize,
}

/// Why a software-owned CQE is not followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// A CQE opcode upstream has no case for (or `MLX5_CQE_INVALID`).
    Opcode(u8),
    /// A requester CQE whose send opcode is none upstream's `handle_good_req` knows.
    SendOpcode(u8),
    /// A compressed-CQE format (`op_own` 3:2); this provider never enables
    /// compression.
    Format(u8),
    /// `MLX5_CQE_SIG_ERR`: no signature MR exists on this provider.
    SigErr,
}

/// Parses a software-owned CQE (from [`sw_cqe`]).
pub fn parse_cqe(cqe: &Cqe64) -> Result<Completion, Malformed> {
    let op = cqe.op_own >> 4;
    let format = (cqe.op_own >> 2) & 3;
    if format != 0 {
        return Err(Malformed::Format(format));
    }
    let sop_qpn = cqe.sop_drop_qpn.get();
    let qpn = sop_qpn & 0x00ff_ffff;
    let wqe_counter = cqe.wqe_counter.get();
    match op {
        vals::CQE_REQ => {
            let send_op = (sop_qpn >> 24) as u8;
            let (op, with_imm, byte_len) = match send_op {
                opcode::RDMA_WRITE_IMM => (ReqOp::RdmaWrite, true, None),
                opcode::RDMA_WRITE => (ReqOp::RdmaWrite, false, None),
                opcode::SEND_IMM => (ReqOp::Send, true, None),
                opcode::SEND | opcode::SEND_INVAL => (ReqOp::Send, false, None),
                opcode::RDMA_READ => (ReqOp::RdmaRead, false, Some(cqe.byte_cnt.get())),
                opcode::ATOMIC_CS => (ReqOp::CmpSwap, false, Some(8)),
                opcode::ATOMIC_FA => (ReqOp::FetchAdd, false, Some(8)),
                opcode::ATOMIC_MASKED_CS => (ReqOp::MaskedCmpSwap, false, Some(8)),
                opcode::ATOMIC_MASKED_FA => (ReqOp::MaskedFetchAdd, false, Some(8)),
                opcode::UMR => (ReqOp::Umr, false, None),
                other => return Err(Malformed::SendOpcode(other)),
            };
            Ok(Completion::Req {
                qpn,
                wqe_counter,
                op,
                with_imm,
                byte_len,
            })
        }
        vals::CQE_RESP_WR_IMM
        | vals::CQE_RESP_SEND
        | vals::CQE_RESP_SEND_IMM
        | vals::CQE_RESP_SEND_INV => {
            let word = cqe.imm_inval_pkey.get();
            let rop = match op {
                vals::CQE_RESP_WR_IMM => RecvOp::RdmaWithImm(word),
                vals::CQE_RESP_SEND_IMM => RecvOp::RecvImm(word),
                vals::CQE_RESP_SEND_INV => RecvOp::RecvInv(word),
                _ => RecvOp::Recv,
            };
            let flags_rqpn = cqe.flags_rqpn.get();
            Ok(Completion::Resp {
                qpn,
                wqe_counter,
                op: rop,
                byte_len: cqe.byte_cnt.get(),
                src_qp: flags_rqpn & 0x00ff_ffff,
                slid: cqe.slid.get(),
                sl: ((flags_rqpn >> vals::CQE_FLAGS_SL_SHIFT) & 0xf) as u8,
                grh: (flags_rqpn >> 28) & 3 != 0,
                dlid_path_bits: cqe.ml_path,
                pkey: (word & 0xffff) as u16,
                srqn_uidx: cqe.srqn.get() & 0x00ff_ffff,
            })
        }
        vals::CQE_REQ_ERR | vals::CQE_RESP_ERR => {
            // Same 64 bytes in the error layout (`struct mlx5_err_cqe`).
            let e = ErrCqe::read_from_bytes(zerocopy::IntoBytes::as_bytes(cqe))
                .map_err(|_| Malformed::Opcode(op))?;
            Ok(Completion::Error {
                qpn: e.s_wqe_opcode_qpn.get() & 0x00ff_ffff,
                requester: op == vals::CQE_REQ_ERR,
                wqe_counter: e.wqe_counter.get(),
                status: status_of_syndrome(e.syndrome),
                syndrome: e.syndrome,
                vendor_err: e.vendor_err_synd,
            })
        }
        vals::CQE_RESIZE_CQ => Ok(Completion::Resize),
        vals::CQE_SIG_ERR => Err(Malformed::SigErr),
        other => Err(Malformed::Opcode(other)),
    }
}
