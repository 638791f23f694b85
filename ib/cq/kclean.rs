// SPDX-License-Identifier: GPL-2.0

//! Kernel CQs by number ([`KcqTable`]), for the kernel QPs on them, and the removal
//! of a QP's CQEs from one ([`CqCleaner::clean`], upstream `__mlx5_ib_cq_clean`,
//! the algorithm in [`super::clean`]) under the CQ's poll lock.
//!
//! A kernel CQ is in the table from after its CREATE_CQ to its destroy_cq; a kernel
//! QP takes the cleaners of its CQs at create_qp and keeps them (the core destroys
//! no CQ a QP still uses), and is on their lists of QPs (upstream `list_send_qp`,
//! `list_recv_qp`) until it is destroyed: after a fatal error the CQ's poller
//! flushes those QPs' outstanding work requests in software ([`super::kflush`]).

use core::sync::atomic::{AtomicBool, Ordering};

use kernel::{
    prelude::*,
    rbtree::{RBTree, RBTreeNode},
    sync::{new_spinlock_irq, Arc, SpinLockIrq},
};

use super::clean::{clean, moved_op_own, CleanRing};
use super::cqe::{parse_cqe, Completion, CqeKind};
use super::{read_cqe, CqEvents, KernelRing, RING_PAGE};
use crate::coherent_io;
use crate::ffi::wmb;
use crate::ib::qp::kdp::KernelWq;
use crate::ib::srq::kdp::KSrq;
use crate::ifc::wqe::Cqe64;

/// A kernel CQ's ring as [`CleanRing`], with the SRQ whose WQEs removed receive
/// CQEs free.
struct Ring<'a> {
    r: &'a KernelRing,
    srq: Option<&'a KSrq>,
}

impl Ring<'_> {
    /// The page and offset of the 64 bytes that carry the CQE at counter `n`.
    fn cqe_at(&self, n: u32) -> Option<(&kernel::dma::Coherent<[u8]>, usize)> {
        let off = self.r.geo.cqe_offset(n);
        Some((self.r.pages.get(off / RING_PAGE)?, off % RING_PAGE))
    }

    /// The page and offset of the whole entry at counter `n` (a 128-byte entry
    /// starts 64 bytes before its CQE).
    fn entry_at(&self, n: u32) -> Option<(&kernel::dma::Coherent<[u8]>, usize)> {
        let off = self.r.geo.cqe_offset(n) + 64 - self.r.geo.entry_bytes() as usize;
        Some((self.r.pages.get(off / RING_PAGE)?, off % RING_PAGE))
    }

    fn cqe(&self, n: u32) -> Option<Cqe64> {
        let (p, at) = self.cqe_at(n)?;
        read_cqe(p, at)
    }
}

impl CleanRing for Ring<'_> {
    fn sw_owned(&self, n: u32) -> bool {
        match self.cqe_at(n) {
            Some((p, at)) => coherent_io::read_u8(p, at + 63)
                .map(|o| self.r.geo.sw_owned(o, n))
                .unwrap_or(false),
            None => false,
        }
    }

    fn qpn(&self, n: u32) -> Option<u32> {
        self.cqe(n).map(|c| c.sop_drop_qpn.get() & 0x00ff_ffff)
    }

    fn removed(&mut self, n: u32) {
        // As upstream: a removed CQE of an SRQ's receive frees its WQE (the CQE is
        // parsed as the poller does; the SRQ refuses a WQE not posted).
        let Some(srq) = self.srq else {
            return;
        };
        let Some(c) = self.cqe(n) else {
            return;
        };
        let idx = match parse_cqe(&c) {
            Ok(Completion {
                kind: CqeKind::Resp(_) | CqeKind::Error { requester: false },
                wqe_counter,
                ..
            }) => wqe_counter,
            _ => return,
        };
        if c.srqn.get() & 0x00ff_ffff != 0 {
            let _ = srq.complete(idx);
        }
    }

    fn copy(&mut self, from: u32, to: u32) {
        let len = self.r.geo.entry_bytes() as usize;
        let (Some((fp, fa)), Some((tp, ta))) = (self.entry_at(from), self.entry_at(to)) else {
            return;
        };
        let mut buf = [0u8; 128];
        let Some(b) = buf.get_mut(..len) else {
            return;
        };
        let Ok(dest) = coherent_io::read_u8(tp, ta + len - 1) else {
            return;
        };
        if coherent_io::read_bytes(fp, fa, b).is_err() {
            return;
        }
        b[len - 1] = moved_op_own(b[len - 1], dest);
        let _ = coherent_io::write_bytes(tp, ta, b);
    }
}

/// The kernel QPs on a CQ, each with whether the CQ is its send CQ.
type QpList = KVec<(Arc<KernelWq>, bool)>;

/// A kernel CQ as its QPs and the device's fatal error path see it.
pub(crate) struct KcqEntry {
    pub(super) ring: Arc<KernelRing>,
    pub(super) events: Arc<CqEvents>,
    /// The kernel QPs on it, each with whether the CQ is its send CQ (a QP whose
    /// send and receive CQ this is is on it twice).
    ///
    /// Lock order: a leaf, taken under the CQ's poll lock by the software flush,
    /// under the table's by the fatal error's walk, alone by create_qp and the QP's
    /// drop.
    pub(super) qps: Pin<KBox<SpinLockIrq<QpList>>>,
    /// Its completion handler was called for the fatal error (upstream
    /// `reset_notify_added`).
    pub(super) reset_notified: AtomicBool,
}

/// What a kernel QP keeps of one of its CQs to clean it.
pub(crate) struct CqCleaner(Arc<KcqEntry>);

impl CqCleaner {
    /// Whether both name the same CQ.
    pub(crate) fn same(&self, other: &CqCleaner) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Puts `wq` on the CQ's list of QPs (`send`: as its send CQ).
    pub(crate) fn attach(&self, wq: &Arc<KernelWq>, send: bool) -> Result {
        let mut l = self.0.qps.lock();
        l.push((wq.clone(), send), GFP_ATOMIC)?;
        Ok(())
    }

    /// Takes `wq` off the CQ's list of QPs, and out of its poller's memory (the last
    /// QP polled).
    pub(crate) fn detach(&self, wq: &Arc<KernelWq>) {
        let mut l = self.0.qps.lock();
        l.retain(|(q, _)| !Arc::ptr_eq(q, wq));
        drop(l);
        // Not the poller's last QP any more (its number may be reused after this).
        self.0.ring.poll.lock().forget(wq.qpn);
    }

    /// Removes QP `qpn`'s CQEs from the CQ (freeing their WQEs of `srq`), under the
    /// CQ's poll lock; the consumer counter to the doorbell record if it moved.
    pub(crate) fn clean(&self, qpn: u32, srq: Option<&KSrq>) {
        let r = &*self.0.ring;
        let mut ps = r.poll.lock();
        ps.forget(qpn);
        let ncqe = r.geo.entries() - 1;
        let mut ring = Ring { r, srq };
        let n = clean(&mut ring, ps.ci, ncqe, qpn);
        if n != 0 {
            ps.ci = ps.ci.wrapping_add(n);
            // The moved entries before the counter (upstream `wmb()`).
            wmb();
            let _ = coherent_io::write_bytes(&r.dbr, 0, &(ps.ci & 0x00ff_ffff).to_be_bytes());
        }
    }
}

/// CQ number → each kernel CQ of one device; and whether the device met a fatal
/// error (upstream `MLX5_DEVICE_STATE_INTERNAL_ERROR`, as the kernel data path sees
/// it).
#[pin_data]
pub(crate) struct KcqTable {
    /// Lock order: a leaf but for the fatal error's walk, which takes each CQ's list
    /// of QPs under it; taken by create_cq, destroy_cq,
    /// create_qp and (after a fatal error) poll_cq under the CQ's poll lock.
    #[pin]
    map: SpinLockIrq<RBTree<u32, Arc<KcqEntry>>>,
    /// The device met a fatal error: kernel posts fail with `EIO`, kernel CQs flush
    /// in software.
    dead: AtomicBool,
}

impl KcqTable {
    /// An empty table.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                map <- new_spinlock_irq!(RBTree::new()),
                dead: AtomicBool::new(false),
            }),
            GFP_KERNEL,
        )
    }

    /// Whether the device met a fatal error ([`Self::internal_error`]).
    pub(crate) fn dead(&self) -> bool {
        self.dead.load(Ordering::Acquire)
    }

    /// The device met a fatal error (upstream `mlx5_ib_handle_internal_error`): from
    /// now on kernel posts fail and kernel CQs flush in software; the completion
    /// handler of each kernel CQ with a QP whose work requests are outstanding (on
    /// a receive CQ, of a QP without an SRQ) is called once, so that its consumer
    /// polls the flush completions.
    pub(crate) fn internal_error(&self) {
        self.dead.store(true, Ordering::Release);
        let mut due = KVec::new();
        {
            let m = self.map.lock();
            for (_, e) in m.iter() {
                let busy = e.qps.lock().iter().any(|(q, send)| q.busy(*send));
                if busy && !e.reset_notified.swap(true, Ordering::AcqRel) {
                    // Best effort: a CQ not notified here is by the drain.
                    let _ = due.push(e.clone(), GFP_ATOMIC);
                }
            }
        }
        for e in due.iter() {
            e.events.notify();
        }
    }

    /// Adds kernel CQ `cqn`; `EEXIST` if the number is taken.
    pub(super) fn insert(
        &self,
        cqn: u32,
        ring: Arc<KernelRing>,
        events: Arc<CqEvents>,
    ) -> Result<Arc<KcqEntry>> {
        let e = Arc::new(
            KcqEntry {
                ring,
                events,
                qps: KBox::pin_init(new_spinlock_irq!(KVec::new()), GFP_KERNEL)?,
                reset_notified: AtomicBool::new(false),
            },
            GFP_KERNEL,
        )?;
        let node = RBTreeNode::new(cqn, e.clone(), GFP_KERNEL)?;
        let mut m = self.map.lock();
        if m.get(&cqn).is_some() {
            return Err(EEXIST);
        }
        // Checked absent above: nothing is replaced.
        let _ = m.insert(node);
        Ok(e)
    }

    /// Removes CQ `cqn` if its ring is `r`.
    pub(super) fn remove(&self, cqn: u32, r: &Arc<KernelRing>) {
        let mut m = self.map.lock();
        if m.get(&cqn).is_some_and(|x| Arc::ptr_eq(&x.ring, r)) {
            let old = m.remove(&cqn);
            drop(m);
            drop(old);
        }
    }

    /// The cleaner of kernel CQ `cqn`, if the device has one.
    pub(crate) fn get(&self, cqn: u32) -> Option<CqCleaner> {
        self.entry(cqn).map(CqCleaner)
    }

    /// Kernel CQ `cqn`, if the device has one.
    pub(super) fn entry(&self, cqn: u32) -> Option<Arc<KcqEntry>> {
        self.map.lock().get(&cqn).cloned()
    }
}
