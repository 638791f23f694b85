// SPDX-License-Identifier: GPL-2.0

//! The kernel QPs' data path bookkeeping (kernel shell): what a poller needs of a
//! kernel QP to turn its CQEs into work completions, as upstream's `mlx5_ib_wq`
//! (`wrid`, `wqe_head`, `w_list`, `head`, `tail`): [`KernelWq`], one per kernel QP,
//! found by QP number in the device's [`KqpTable`].
//!
//! What the poller reads and moves ([`SqSlots`], [`RqSlots`]) is atomic and taken
//! without the queue's lock, as upstream's poll_cq reads its plain `wrid`, `head` and
//! `tail` under the CQ's lock only: the queue's lock serializes posters, the CQ's poll
//! lock the poller of each queue (a queue completes on one CQ).
//!
//! A kernel QP enters the table after CREATE_QP and leaves it before DESTROY_QP. A CQE
//! naming a QP number that is not in the table (a QP already destroyed, or a number
//! the device made up) is counted by its CQ and skipped: the table is the provider's
//! own, a CQE is never trusted to name a live QP. The WQE rings themselves are the
//! QP's (`ib/qp/kernel_qp.rs`); the table holds no DMA memory.

use core::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

use kernel::{
    prelude::*,
    rbtree::{RBTree, RBTreeNode},
    sync::{new_spinlock_irq, Arc, SpinLockIrq},
};

use crate::ffi::rdma::ib_dp_abi::{wc_flag, wc_op, IbWc};
use crate::ib::cq::cqe::{CqeKind, CqeSink, RecvOp, ReqOp, RespValues};
use crate::ib::cq::wc_status::WcStatus;
use crate::ib::qp::flush::NO_WQE;
use crate::ib::qp::send_wqe::SqState;
use crate::ib::srq::kdp::KSrq;

/// `enum ib_wc_status` of a status (the shim checks the numbers).
pub(super) fn ib_status(s: WcStatus) -> u32 {
    match s {
        WcStatus::Success => 0,
        WcStatus::LocLenErr => 1,
        WcStatus::LocQpOpErr => 2,
        WcStatus::LocProtErr => 4,
        WcStatus::WrFlushErr => 5,
        WcStatus::MwBindErr => 6,
        WcStatus::BadRespErr => 7,
        WcStatus::LocAccessErr => 8,
        WcStatus::RemInvReqErr => 9,
        WcStatus::RemAccessErr => 10,
        WcStatus::RemOpErr => 11,
        WcStatus::RetryExcErr => 12,
        WcStatus::RnrRetryExcErr => 13,
        WcStatus::RemAbortErr => 16,
        WcStatus::GeneralErr => 21,
    }
}

/// The send queue's posting state, under its lock.
pub(crate) struct SqSide {
    /// Producer counter, work requests posted, fence. Its `tail` is the poller's
    /// ([`SqSlots::tail`]), read into it at each post for the overflow check.
    pub(crate) st: SqState,
    /// Which half of the BlueFlame register the next doorbell writes (upstream
    /// `bf->offset`, flipped after each doorbell).
    pub(crate) bf_half: usize,
}

/// What each posted send WQE was, by the slot of its first basic block, and the
/// counters the poller compares it with (upstream `sq.wrid`, `sq.wqe_head`,
/// `sq.wr_data`, `sq.head`, `sq.tail`).
///
/// Ordering: post_send stores a request's slots, then `head` (release), before the
/// write barrier and the doorbell; the device writes a CQE only for a WQE it was rung
/// for, and the poller reads the slots after the CQE's ownership and the read barrier
/// after it, so it sees the slots of every request a CQE can name (upstream's
/// argument for its plain fields). `tail` is stored by the queue's poller (one at a
/// time, under its CQ's poll lock) and by a reset (after the CQs were cleaned of the
/// QP), and loaded by post_send: a value a concurrent poll has just passed only makes
/// the queue look fuller, as upstream's first overflow check.
pub(crate) struct SqSlots {
    /// One per basic block of the queue (a power of two; none without a send
    /// queue), by the slot of a WQE's first (one record: post and poll index it once).
    pub(crate) slots: KVec<SqSlot>,
    /// Work requests posted and rung for.
    pub(crate) head: AtomicU32,
    /// Work requests completed.
    pub(crate) tail: AtomicU32,
}

/// What the send WQE starting at one slot was.
pub(crate) struct SqSlot {
    /// Its `wr_id`.
    pub(crate) wrid: AtomicU64,
    /// Its `head` count: its completion moves `tail` past it and every unsignalled one
    /// before; [`NO_WQE`] after a reset.
    pub(crate) wqe_head: AtomicU32,
    /// Its completion opcode, for a UMR WQE.
    pub(crate) umr_op: AtomicU8,
}

/// What each posted receive was and the counters the poller moves (upstream `rq.wrid`,
/// `rq.head`, `rq.tail`); ordered as [`SqSlots`].
pub(crate) struct RqSlots {
    /// `wr_id` of each slot (a power of two of them; none without a receive queue).
    pub(crate) wrid: KVec<AtomicU64>,
    /// Work requests posted and handed to the device; stored by posters under the
    /// queue's lock only.
    pub(crate) head: AtomicU32,
    /// Work requests completed.
    pub(crate) tail: AtomicU32,
}

impl RqSlots {
    /// The `wr_id` of the receive at counter `n`: its slot is the counter masked by
    /// the slots' count (a power of two); 0 without a receive queue (no slot).
    pub(crate) fn wr_id(&self, n: u32) -> u64 {
        let idx = n as usize & self.wrid.len().wrapping_sub(1);
        self.wrid.get(idx).map_or(0, |w| w.load(Ordering::Relaxed))
    }
}

/// `n` values of `f()`.
fn vec_of<T>(n: usize, f: impl Fn() -> T) -> Result<KVec<T>> {
    let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
    for _ in 0..n {
        v.push(f(), GFP_KERNEL)?;
    }
    Ok(v)
}

/// Why a CQE of a known QP is not followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stray {
    /// A send completion whose WQE counter names no WQE in flight.
    SendSlot,
    /// A receive completion with no receive in flight, on a QP without a receive
    /// queue, or (a QP on an SRQ) whose WQE counter names no SRQ WQE posted.
    NoReceive,
}

/// The data path bookkeeping of one kernel QP.
#[pin_data]
pub(crate) struct KernelWq {
    /// QP number.
    pub(crate) qpn: u32,
    /// The core's `struct ib_qp *` (what a work completion names).
    pub(crate) ibqp: u64,
    /// A QP1: receives report their P_Key index.
    pub(crate) qp1: bool,
    /// The kernel SRQ the QP receives on (its receive completions name its WQEs).
    pub(crate) srq: Option<Arc<KSrq>>,
    /// Lock order: a leaf, taken by post_send and a reset; held across the doorbell
    /// write (upstream `sq.lock`, so doorbells reach the device in order). Never
    /// taken by poll_cq.
    #[pin]
    pub(crate) sq: SpinLockIrq<SqSide>,
    /// Lock order: as `sq`, for post_recv (upstream `rq.lock`). Never taken with `sq`.
    /// Serializes the posters, whose state is [`RqSlots::head`].
    #[pin]
    pub(crate) rq: SpinLockIrq<()>,
    /// The send queue's slots and counters (no lock: [`SqSlots`]).
    pub(crate) sq_slots: SqSlots,
    /// The receive queue's (no lock: [`RqSlots`]).
    pub(crate) rq_slots: RqSlots,
}

impl KernelWq {
    /// The bookkeeping of QP `qpn` (`ibqp` the core's QP) with `sq_cnt` basic blocks
    /// and `rq_cnt` receive WQEs, or receiving on `srq`.
    pub(crate) fn new(
        qpn: u32,
        ibqp: u64,
        qp1: bool,
        sq_cnt: u32,
        rq_cnt: u32,
        srq: Option<Arc<KSrq>>,
    ) -> Result<Arc<Self>> {
        let sq = sq_cnt as usize;
        let sq_side = SqSide {
            st: SqState::default(),
            bf_half: 0,
        };
        let sq_slots = SqSlots {
            slots: vec_of(sq, || SqSlot {
                wrid: AtomicU64::new(0),
                wqe_head: AtomicU32::new(0),
                umr_op: AtomicU8::new(0),
            })?,
            head: AtomicU32::new(0),
            tail: AtomicU32::new(0),
        };
        let rq_slots = RqSlots {
            wrid: vec_of(rq_cnt as usize, || AtomicU64::new(0))?,
            head: AtomicU32::new(0),
            tail: AtomicU32::new(0),
        };
        Arc::pin_init(
            pin_init!(Self {
                qpn,
                ibqp,
                qp1,
                srq,
                sq <- new_spinlock_irq!(sq_side),
                rq <- new_spinlock_irq!(()),
                sq_slots,
                rq_slots,
            }),
            GFP_KERNEL,
        )
    }

    /// Both queues back to empty (a QP moved to RESET: upstream clears `head`,
    /// `tail` and `cur_post` of a kernel QP there, after its CQs were cleaned of the
    /// QP's CQEs, so no poller reads the slots meanwhile).
    pub(crate) fn reset(&self) {
        {
            let mut sq = self.sq.lock();
            sq.st = SqState::default();
            // No slot starts a request of the new count (the software flush's walk).
            for slot in self.sq_slots.slots.iter() {
                slot.wqe_head.store(NO_WQE, Ordering::Relaxed);
            }
            self.sq_slots.tail.store(0, Ordering::Relaxed);
            self.sq_slots.head.store(0, Ordering::Release);
        }
        let _rq = self.rq.lock();
        self.rq_slots.tail.store(0, Ordering::Relaxed);
        self.rq_slots.head.store(0, Ordering::Release);
    }

    /// Whether the send queue (`send`) or the receive queue has work requests in
    /// flight (a QP on an SRQ: never its receive queue).
    pub(crate) fn busy(&self, send: bool) -> bool {
        if send {
            let s = &self.sq_slots;
            s.tail.load(Ordering::Relaxed) != s.head.load(Ordering::Acquire)
        } else {
            let s = &self.rq_slots;
            self.srq.is_none() && s.tail.load(Ordering::Relaxed) != s.head.load(Ordering::Acquire)
        }
    }

    /// The rest of the work completion [`WcSink`] began in `wc`, for a CQE of `kind`
    /// naming this QP with WQE counter `wqe_counter` (upstream `mlx5_poll_one`: the
    /// send queue's slot from the counter masked to the queue, the receive queue's from
    /// its `tail`): `wr_id`, the QP, a UMR's opcode, and a receive's `pkey_index`, kept
    /// only on QP1 (the packet's P_Key, which the shim looks up, `mlx5rs_ib_rs_poll_cq`).
    /// `false` for a resize CQE (no work completion).
    ///
    /// The caller holds the poll lock of the CQ the CQE is on (one poller per queue):
    /// no queue lock is taken.
    pub(crate) fn complete(
        &self,
        kind: CqeKind,
        wqe_counter: u16,
        wc: &mut IbWc,
    ) -> Result<bool, Stray> {
        wc.wr_id = match kind {
            CqeKind::Req(op) => {
                let (wr_id, umr) = self.take_send(wqe_counter)?;
                if op == ReqOp::Umr {
                    wc.opcode = u32::from(umr);
                }
                wr_id
            }
            CqeKind::Resp(_) => {
                // A receive's P_Key index: the packet's P_Key kept on QP1 only.
                if !self.qp1 {
                    wc.pkey_index = 0;
                }
                self.take_recv(wqe_counter)?
            }
            CqeKind::Error { requester: true } => self.take_send(wqe_counter)?.0,
            CqeKind::Error { requester: false } => self.take_recv(wqe_counter)?,
            CqeKind::Resize => return Ok(false),
        };
        wc.qp = self.ibqp;
        Ok(true)
    }

    /// The send WQE of `wqe_counter` completed: `tail` past it; returns its `wr_id`
    /// and its UMR completion opcode. `SendSlot` unless the slot holds a WQE in
    /// flight.
    fn take_send(&self, wqe_counter: u16) -> Result<(u64, u8), Stray> {
        let s = &self.sq_slots;
        // The counter masked to the slots, a power of two: with none the mask keeps
        // every bit and no counter names a slot.
        let idx = usize::from(wqe_counter) & s.slots.len().wrapping_sub(1);
        let slot = s.slots.get(idx).ok_or(Stray::SendSlot)?;
        let head = slot.wqe_head.load(Ordering::Relaxed);
        let tail = s.tail.load(Ordering::Relaxed);
        // In flight: tail <= head of the slot < posted.
        let in_flight = s.head.load(Ordering::Acquire).wrapping_sub(tail);
        if head.wrapping_sub(tail) >= in_flight {
            return Err(Stray::SendSlot);
        }
        s.tail.store(head.wrapping_add(1), Ordering::Release);
        Ok((
            slot.wrid.load(Ordering::Relaxed),
            slot.umr_op.load(Ordering::Relaxed),
        ))
    }

    /// The oldest receive in flight completed (on an SRQ: the SRQ's WQE
    /// `wqe_counter`, upstream `handle_responder`): its `wr_id`.
    fn take_recv(&self, wqe_counter: u16) -> Result<u64, Stray> {
        if let Some(s) = &self.srq {
            return s.complete(wqe_counter).ok_or(Stray::NoReceive);
        }
        // Without a receive queue nothing is ever posted (post_recv refuses), so
        // `head` stays at `tail`.
        let s = &self.rq_slots;
        let tail = s.tail.load(Ordering::Relaxed);
        if tail == s.head.load(Ordering::Acquire) {
            return Err(Stray::NoReceive);
        }
        let wr_id = s.wr_id(tail);
        s.tail.store(tail.wrapping_add(1), Ordering::Release);
        Ok(wr_id)
    }
}

/// The work completion of a CQE as [`parse_into`] parses it: the values the CQE alone
/// gives, each kind's written at once into the caller's `struct ib_wc`; `wr_id`, the QP
/// and a UMR's opcode are [`KernelWq::complete`]'s (`pkey_index` is the packet's P_Key
/// until then). A successful completion writes the fields the verbs define for its
/// kind and leaves the others as the caller's array held them, as upstream's
/// `mlx5_poll_one` does (a send's `src_qp`, a receive's `vendor_err`: the consumer
/// reads neither); an error completion, rare, is written whole (its opcode, which the
/// verbs leave undefined, zero).
///
/// [`parse_into`]: crate::ib::cq::cqe::parse_into
pub(crate) struct WcSink<'a>(pub(crate) &'a mut IbWc);

impl CqeSink for WcSink<'_> {
    #[inline(always)]
    fn req(&mut self, op: ReqOp, with_imm: bool, byte_len: u32) {
        let opcode = match op {
            ReqOp::Send => wc_op::SEND,
            ReqOp::RdmaWrite => wc_op::RDMA_WRITE,
            ReqOp::RdmaRead => wc_op::RDMA_READ,
            ReqOp::CmpSwap => wc_op::COMP_SWAP,
            ReqOp::FetchAdd => wc_op::FETCH_ADD,
            ReqOp::MaskedCmpSwap => wc_op::MASKED_COMP_SWAP,
            ReqOp::MaskedFetchAdd => wc_op::MASKED_FETCH_ADD,
            // The WQE's own: `KernelWq::complete`.
            ReqOp::Umr => 0,
        };
        let wc = &mut *self.0;
        wc.status = ib_status(WcStatus::Success);
        wc.opcode = opcode;
        wc.byte_len = byte_len;
        wc.wc_flags = if with_imm { wc_flag::WITH_IMM } else { 0 };
    }

    #[inline(always)]
    fn resp(&mut self, op: RecvOp, v: &RespValues) {
        let (opcode, flags, ex) = match op {
            RecvOp::Recv => (wc_op::RECV, 0, 0),
            // `imm_data` is `__be32`: the wire's bytes in memory.
            RecvOp::RecvImm => (wc_op::RECV, wc_flag::WITH_IMM, v.imm.to_be()),
            RecvOp::RdmaWithImm => (wc_op::RECV_RDMA_WITH_IMM, wc_flag::WITH_IMM, v.imm.to_be()),
            RecvOp::RecvInv => (wc_op::RECV, wc_flag::WITH_INVALIDATE, v.imm),
        };
        let wc = &mut *self.0;
        wc.status = ib_status(WcStatus::Success);
        wc.opcode = opcode;
        wc.byte_len = v.byte_len;
        wc.ex = ex;
        wc.src_qp = v.src_qp;
        wc.slid = u32::from(v.slid);
        wc.wc_flags = if v.grh { flags | wc_flag::GRH } else { flags };
        wc.pkey_index = v.pkey;
        wc.sl = v.sl;
        wc.dlid_path_bits = v.dlid_path_bits;
    }

    #[inline(always)]
    fn error(&mut self, _requester: bool, status: WcStatus, _syndrome: u8, vendor_err: u8) {
        // The opcode of an error completion is not defined (zero, as the fields the
        // error CQE does not carry).
        *self.0 = IbWc {
            status: ib_status(status),
            vendor_err: u32::from(vendor_err),
            ..IbWc::default()
        };
    }
}

/// QP number → the bookkeeping of each kernel QP of one device.
#[pin_data]
pub(crate) struct KqpTable {
    /// Lock order: a leaf, taken by create and destroy of kernel QPs and by poll_cq
    /// under a CQ's poll lock.
    #[pin]
    map: SpinLockIrq<RBTree<u32, Arc<KernelWq>>>,
}

impl KqpTable {
    /// An empty table.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self { map <- new_spinlock_irq!(RBTree::new()) }),
            GFP_KERNEL,
        )
    }

    /// Adds `wq` under its QP number; `EEXIST` if the number is taken.
    pub(crate) fn insert(&self, wq: Arc<KernelWq>) -> Result {
        let qpn = wq.qpn;
        let node = RBTreeNode::new(qpn, wq, GFP_KERNEL)?;
        let mut m = self.map.lock();
        if m.get(&qpn).is_some() {
            return Err(EEXIST);
        }
        // Checked absent above: nothing is replaced.
        let _ = m.insert(node);
        Ok(())
    }

    /// Removes QP `qpn`.
    pub(crate) fn remove(&self, qpn: u32) {
        let old = self.map.lock().remove(&qpn);
        drop(old);
    }

    /// The bookkeeping of QP `qpn`, if it is a live kernel QP of the device.
    pub(crate) fn get(&self, qpn: u32) -> Option<Arc<KernelWq>> {
        self.map.lock().get(&qpn).cloned()
    }
}
