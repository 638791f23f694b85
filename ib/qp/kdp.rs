// SPDX-License-Identifier: GPL-2.0

//! The kernel QPs' data path bookkeeping (kernel shell): what a poller needs of a
//! kernel QP to turn its CQEs into work completions, as upstream's `mlx5_ib_wq`
//! (`wrid`, `wqe_head`, `w_list`, `head`, `tail`): [`KernelWq`], one per kernel QP,
//! found by QP number in the device's [`KqpTable`].
//!
//! A kernel QP enters the table after CREATE_QP and leaves it before DESTROY_QP. A CQE
//! naming a QP number that is not in the table (a QP already destroyed, or a number
//! the device made up) is counted by its CQ and skipped: the table is the provider's
//! own, a CQE is never trusted to name a live QP. The WQE rings themselves are the
//! QP's (`ib/qp/kernel_qp.rs`); the table holds no DMA memory.

use kernel::{
    prelude::*,
    rbtree::{RBTree, RBTreeNode},
    sync::{lock::spinlock::SpinLockIrqGuard, new_spinlock_irq, Arc, SpinLockIrq},
};

use crate::ffi::rdma::ib_dp_abi::{wc_flag, wc_op, Wc};
use crate::ib::cq::cqe::{Completion, RecvOp, ReqOp};
use crate::ib::cq::wc_status::WcStatus;
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

/// The send queue's side: counters and what each posted WQE was, by the slot of its
/// first basic block.
pub(crate) struct SqSide {
    /// Producer counter, work requests posted and completed, fence.
    pub(crate) st: SqState,
    /// `wr_id` of the WQE at each slot (upstream `sq.wrid`).
    pub(crate) wrid: KVec<u64>,
    /// The `head` count of the WQE at each slot (upstream `sq.wqe_head`): its
    /// completion moves `tail` past it and every unsignalled one before.
    pub(crate) wqe_head: KVec<u32>,
    /// The completion opcode of a UMR WQE at each slot (upstream `sq.wr_data`).
    pub(crate) umr_op: KVec<u8>,
    /// Which half of the BlueFlame register the next doorbell writes (upstream
    /// `bf->offset`, flipped after each doorbell).
    pub(crate) bf_half: usize,
}

/// The receive queue's side (upstream `rq`).
pub(crate) struct RqSide {
    /// Work requests posted.
    pub(crate) head: u32,
    /// Work requests completed.
    pub(crate) tail: u32,
    /// `wr_id` of each slot.
    pub(crate) wrid: KVec<u64>,
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
    /// The QP's port (QP1 receives: the P_Key table searched), 0 if none.
    pub(crate) port: u8,
    /// A QP1: receives report their P_Key index.
    pub(crate) qp1: bool,
    /// Basic blocks of the send queue (a power of two; 0: none).
    pub(crate) sq_cnt: u32,
    /// WQEs of the receive queue (a power of two; 0: none).
    pub(crate) rq_cnt: u32,
    /// The kernel SRQ the QP receives on (its receive completions name its WQEs).
    pub(crate) srq: Option<Arc<KSrq>>,
    /// Lock order: taken by post_send with no other lock of the QP held, and by
    /// poll_cq under the CQ's poll lock; held across the doorbell write (upstream
    /// `sq.lock`, so doorbells reach the device in order). A leaf otherwise.
    #[pin]
    pub(crate) sq: SpinLockIrq<SqSide>,
    /// Lock order: as `sq`, for post_recv (upstream `rq.lock`). Never taken with `sq`.
    #[pin]
    pub(crate) rq: SpinLockIrq<RqSide>,
}

impl KernelWq {
    /// The bookkeeping of QP `qpn` (`ibqp` the core's QP) with `sq_cnt` basic blocks
    /// and `rq_cnt` receive WQEs, or receiving on `srq`.
    pub(crate) fn new(
        qpn: u32,
        ibqp: u64,
        port: u8,
        qp1: bool,
        sq_cnt: u32,
        rq_cnt: u32,
        srq: Option<Arc<KSrq>>,
    ) -> Result<Arc<Self>> {
        let sq = sq_cnt as usize;
        let sq_side = SqSide {
            st: SqState::default(),
            wrid: KVec::from_elem(0u64, sq, GFP_KERNEL)?,
            wqe_head: KVec::from_elem(0u32, sq, GFP_KERNEL)?,
            umr_op: KVec::from_elem(0u8, sq, GFP_KERNEL)?,
            bf_half: 0,
        };
        let rq_side = RqSide {
            head: 0,
            tail: 0,
            wrid: KVec::from_elem(0u64, rq_cnt as usize, GFP_KERNEL)?,
        };
        Arc::pin_init(
            pin_init!(Self {
                qpn,
                ibqp,
                port,
                qp1,
                sq_cnt,
                rq_cnt,
                srq,
                sq <- new_spinlock_irq!(sq_side),
                rq <- new_spinlock_irq!(rq_side),
            }),
            GFP_KERNEL,
        )
    }

    /// Both queues back to empty (a QP moved to RESET: upstream clears `head`,
    /// `tail` and `cur_post` of a kernel QP there).
    pub(crate) fn reset(&self) {
        {
            let mut sq = self.sq.lock();
            sq.st = SqState::default();
            // No slot starts a request of the new count (the software flush's walk).
            sq.wqe_head.fill(crate::ib::qp::flush::NO_WQE);
        }
        let mut rq = self.rq.lock();
        rq.head = 0;
        rq.tail = 0;
    }

    /// The work completion of `c`, a parsed CQE naming this QP (upstream
    /// `mlx5_poll_one`: the send queue's slot from the CQE's WQE counter masked to the
    /// queue, the receive queue's from its `tail`). `None` for a resize CQE.
    ///
    /// The queue lock the CQE needs is taken into `held` (the other one released
    /// first: the two are never held together) and kept there for the next CQE of a
    /// run of this QP's polled in a row, so that a run of one queue's completions
    /// takes its lock once (upstream's poll takes no queue lock: its `tail` is the CQ
    /// lock's).
    pub(crate) fn complete<'a>(
        &'a self,
        c: &Completion,
        held: &mut Held<'a>,
    ) -> Result<Option<Wc>, Stray> {
        let mut wc = Wc {
            qp: self.ibqp,
            ..Wc::default()
        };
        match *c {
            Completion::Req {
                wqe_counter,
                op,
                with_imm,
                byte_len,
                ..
            } => {
                let umr = self.take_send(held, wqe_counter, &mut wc)?;
                wc.status = ib_status(WcStatus::Success);
                wc.opcode = match op {
                    ReqOp::Send => wc_op::SEND,
                    ReqOp::RdmaWrite => wc_op::RDMA_WRITE,
                    ReqOp::RdmaRead => wc_op::RDMA_READ,
                    ReqOp::CmpSwap => wc_op::COMP_SWAP,
                    ReqOp::FetchAdd => wc_op::FETCH_ADD,
                    ReqOp::MaskedCmpSwap => wc_op::MASKED_COMP_SWAP,
                    ReqOp::MaskedFetchAdd => wc_op::MASKED_FETCH_ADD,
                    ReqOp::Umr => u32::from(umr),
                };
                if with_imm {
                    wc.flags |= wc_flag::WITH_IMM;
                }
                wc.byte_len = byte_len.unwrap_or(0);
            }
            Completion::Resp {
                wqe_counter,
                op,
                byte_len,
                src_qp,
                slid,
                sl,
                grh,
                dlid_path_bits,
                pkey,
                ..
            } => {
                self.take_recv(held, wqe_counter, &mut wc)?;
                wc.status = ib_status(WcStatus::Success);
                wc.byte_len = byte_len;
                (wc.opcode, wc.flags, wc.ex) = match op {
                    RecvOp::Recv => (wc_op::RECV, 0, 0),
                    RecvOp::RecvImm(i) => (wc_op::RECV, wc_flag::WITH_IMM, i),
                    RecvOp::RdmaWithImm(i) => (wc_op::RECV_RDMA_WITH_IMM, wc_flag::WITH_IMM, i),
                    RecvOp::RecvInv(k) => (wc_op::RECV, wc_flag::WITH_INVALIDATE, k),
                };
                wc.src_qp = src_qp;
                wc.dlid_path_bits = dlid_path_bits;
                if grh {
                    wc.flags |= wc_flag::GRH;
                }
                if self.qp1 {
                    wc.flags |= wc_flag::QP1;
                    wc.pkey = pkey;
                    wc.port = self.port;
                }
                wc.slid = slid;
                wc.sl = sl;
            }
            Completion::Error {
                requester,
                wqe_counter,
                status,
                vendor_err,
                ..
            } => {
                if requester {
                    self.take_send(held, wqe_counter, &mut wc)?;
                } else {
                    self.take_recv(held, wqe_counter, &mut wc)?;
                }
                wc.status = ib_status(status);
                wc.vendor_err = u32::from(vendor_err);
            }
            Completion::Resize => return Ok(None),
        }
        Ok(Some(wc))
    }

    /// The send WQE of `wqe_counter` completed: its `wr_id` into `wc`, `tail` past
    /// it; returns its UMR completion opcode. `SendSlot` unless the slot holds a WQE
    /// in flight.
    fn take_send<'a>(
        &'a self,
        held: &mut Held<'a>,
        wqe_counter: u16,
        wc: &mut Wc,
    ) -> Result<u8, Stray> {
        if self.sq_cnt == 0 {
            return Err(Stray::SendSlot);
        }
        let idx = (u32::from(wqe_counter) & (self.sq_cnt - 1)) as usize;
        if !matches!(held, Held::Sq(_)) {
            // The receive queue's lock (if held) released before the send queue's.
            *held = Held::None;
            *held = Held::Sq(self.sq.lock());
        }
        let Held::Sq(sq) = held else {
            return Err(Stray::SendSlot);
        };
        let head = sq.wqe_head.get(idx).copied().ok_or(Stray::SendSlot)?;
        // In flight: tail <= head of the slot < head.
        let in_flight = sq.st.head.wrapping_sub(sq.st.tail);
        if head.wrapping_sub(sq.st.tail) >= in_flight {
            return Err(Stray::SendSlot);
        }
        wc.wr_id = sq.wrid.get(idx).copied().unwrap_or(0);
        sq.st.tail = head.wrapping_add(1);
        Ok(sq.umr_op.get(idx).copied().unwrap_or(0))
    }

    /// The oldest receive in flight completed (on an SRQ: the SRQ's WQE
    /// `wqe_counter`, upstream `handle_responder`): its `wr_id` into `wc`.
    fn take_recv<'a>(
        &'a self,
        held: &mut Held<'a>,
        wqe_counter: u16,
        wc: &mut Wc,
    ) -> Result<(), Stray> {
        if let Some(s) = &self.srq {
            // No queue lock of the QP is held while the SRQ's is taken.
            *held = Held::None;
            wc.wr_id = s.complete(wqe_counter).ok_or(Stray::NoReceive)?;
            return Ok(());
        }
        if self.rq_cnt == 0 {
            return Err(Stray::NoReceive);
        }
        if !matches!(held, Held::Rq(_)) {
            // The send queue's lock (if held) released before the receive queue's.
            *held = Held::None;
            *held = Held::Rq(self.rq.lock());
        }
        let Held::Rq(rq) = held else {
            return Err(Stray::NoReceive);
        };
        if rq.tail == rq.head {
            return Err(Stray::NoReceive);
        }
        let idx = (rq.tail & (self.rq_cnt - 1)) as usize;
        wc.wr_id = rq.wrid.get(idx).copied().unwrap_or(0);
        rq.tail = rq.tail.wrapping_add(1);
        Ok(())
    }
}

/// The queue lock a poller holds across a run of CQEs of one QP
/// ([`KernelWq::complete`]): at most one of the two at a time.
pub(crate) enum Held<'a> {
    /// None.
    None,
    /// The send queue's.
    Sq(SpinLockIrqGuard<'a, SqSide>),
    /// The receive queue's.
    Rq(SpinLockIrqGuard<'a, RqSide>),
}

/// QP number → the bookkeeping of each kernel QP of one device.
#[pin_data]
pub(crate) struct KqpTable {
    /// Lock order: a leaf, taken by create and destroy of kernel QPs and by poll_cq
    /// under a CQ's poll lock (released before the QP's own locks are taken).
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
