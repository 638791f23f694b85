// SPDX-License-Identifier: GPL-2.0

//! A kernel SRQ's data path (kernel shell): [`KSrq`] holds the SRQ's WQE pages and
//! doorbell record with the list and bookkeeping of [`crate::ib::srq::kwqe`]; it
//! serves post_srq_recv (upstream `mlx5_ib_post_srq_recv`) and gives a receive
//! completion its `wr_id`, putting the WQE back on the list (upstream
//! `mlx5_ib_free_srq_wqe`, called from the poller and from the CQ cleaning at QP
//! destroy).
//!
//! Kernel SRQs are found by number in the device's [`KsrqTable`] (from after their
//! create command to their drop), where create_qp of a kernel QP on an SRQ finds
//! the one it names; the QP then holds it.

use kernel::{
    dma::Coherent,
    new_mutex,
    prelude::*,
    rbtree::{RBTree, RBTreeNode},
    sync::{new_spinlock_irq, Arc, Mutex, SpinLockIrq},
};

use super::kwqe::{SrqQueue, SrqSlot, SrqWqes};
use super::plan::SrqShape;
use super::KernelMem;
use crate::coherent_io;
use crate::ffi::rdma::ib_qp::{RecvChain, RecvWrC};
use crate::ffi::wmb;
use crate::ib::cq::kclean::KcqTable;
use crate::ib::qp::send_wqe::Sge;
use zerocopy::FromZeros;

/// Scatter entries a kernel receive may name (the QP side's bound too).
const MAX_SGE: usize = 32;

/// The WQE pages of a kernel SRQ as [`SrqWqes`].
struct Wqes<'a> {
    pages: &'a [Coherent<[u8]>],
    shape: &'a SrqShape,
}

impl Wqes<'_> {
    /// The page and offset of `len` bytes at `off` of WQE `i`, if inside the WQE.
    fn at(&self, i: u32, off: usize, len: usize) -> Option<(&Coherent<[u8]>, usize)> {
        let stride = 1usize.checked_shl(self.shape.wqe_shift)?;
        if i >= self.shape.max || off.checked_add(len)? > stride {
            return None;
        }
        let (p, o) = self.shape.kernel_wqe_at(i);
        Some((self.pages.get(p)?, o + off))
    }
}

impl SrqWqes for Wqes<'_> {
    fn read(&self, i: u32, off: usize, out: &mut [u8]) -> bool {
        match self.at(i, off, out.len()) {
            Some((p, o)) => coherent_io::read_bytes(p, o, out).is_ok(),
            None => false,
        }
    }

    fn write(&mut self, i: u32, off: usize, bytes: &[u8]) -> bool {
        match self.at(i, off, bytes.len()) {
            Some((p, o)) => coherent_io::write_bytes(p, o, bytes).is_ok(),
            None => false,
        }
    }
}

/// The list and bookkeeping (upstream `srq->lock` guards the same).
struct KSrqState {
    q: SrqQueue,
    slots: KVec<SrqSlot>,
}

/// A kernel SRQ's memory and data path.
#[pin_data]
pub(crate) struct KSrq {
    shape: SrqShape,
    mem: KernelMem,
    /// The device's kernel CQs, and whether it met a fatal error.
    kcqs: Arc<KcqTable>,
    /// Lock order: taken by post_srq_recv with no other lock held, and by poll_cq and
    /// the CQ cleaning under a CQ's poll lock (after the kernel QP table's lock was
    /// released). A leaf.
    #[pin]
    st: SpinLockIrq<KSrqState>,
}

impl KSrq {
    /// The data path of an SRQ of `shape` over `mem` (its list linked).
    pub(super) fn new(shape: SrqShape, mem: KernelMem, kcqs: Arc<KcqTable>) -> Result<Arc<Self>> {
        let slots = KVec::from_elem(SrqSlot::default(), shape.max as usize, GFP_KERNEL)?;
        let q = SrqQueue::new(
            shape.max,
            shape.max_gs,
            shape.max_avail_gather,
            // As the QPs' receive WQEs: the default key (QUERY_SPECIAL_CONTEXTS is
            // not read).
            crate::ifc::umr::vals::TERMINATE_SCATTER_LIST_LKEY,
        );
        Arc::pin_init(
            pin_init!(Self {
                shape,
                mem,
                kcqs,
                st <- new_spinlock_irq!(KSrqState { q, slots }),
            }),
            GFP_KERNEL,
        )
    }

    /// Pages held (WQE pages and the doorbell record), for the graveyard's count.
    pub(super) fn pages(&self) -> usize {
        self.mem.pages.len() + 1
    }

    /// post_srq_recv of `chain`: each request at the list's head, then the WQE
    /// counter to the doorbell record after a write barrier; the number posted and
    /// the first request's error ([`SrqQueue::post`]: `EINVAL`, `ENOMEM`; `EIO` when
    /// the list in the WQE memory is broken, and after the device's fatal error, as
    /// upstream).
    pub(crate) fn post(&self, chain: &mut RecvChain<'_>) -> (usize, Result) {
        let mut g = self.st.lock();
        if self.kcqs.dead() {
            return (0, Err(EIO));
        }
        let st = &mut *g;
        let mut w = Wqes {
            pages: &self.mem.pages,
            shape: &self.shape,
        };
        let mut posted = 0u32;
        let mut res = Ok(());
        let mut wr = RecvWrC::new_zeroed();
        while chain.next_into(&mut wr) {
            let list = chain.sg(&wr);
            if list.len() > MAX_SGE {
                res = Err(EINVAL);
                break;
            }
            let mut sges = [Sge::default(); MAX_SGE];
            for (i, e) in list.iter().enumerate() {
                sges[i] = Sge {
                    addr: e.addr,
                    length: e.length,
                    lkey: e.lkey,
                };
            }
            if let Err(e) =
                st.q.post(&mut w, &mut st.slots, wr.wr_id, &sges[..list.len()])
            {
                res = Err(Error::from(e));
                break;
            }
            posted += 1;
        }
        if posted != 0 {
            let rec = st.q.ring(posted);
            // The WQEs before the doorbell record.
            wmb();
            let _ = coherent_io::write_bytes(&self.mem.db, 0, &rec);
        }
        (posted as usize, res)
    }

    /// The receive of WQE `idx` (a CQE's WQE counter) completed: its `wr_id`, the WQE
    /// freed; `None` for an index that names no WQE posted.
    pub(crate) fn complete(&self, idx: u16) -> Option<u64> {
        let mut g = self.st.lock();
        let st = &mut *g;
        let mut w = Wqes {
            pages: &self.mem.pages,
            shape: &self.shape,
        };
        st.q.complete(&mut w, &mut st.slots, idx)
    }
}

/// SRQ number → the data path of each kernel SRQ of one device.
#[pin_data]
pub(crate) struct KsrqTable {
    /// Lock order: a leaf, taken by create and drop of kernel SRQs and create_qp.
    #[pin]
    map: Mutex<RBTree<u32, Arc<KSrq>>>,
}

impl KsrqTable {
    /// An empty table.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self { map <- new_mutex!(RBTree::new()) }),
            GFP_KERNEL,
        )
    }

    /// Adds `q` as SRQ `n`; `EEXIST` if the number is taken.
    pub(super) fn insert(&self, n: u32, q: Arc<KSrq>) -> Result {
        let node = RBTreeNode::new(n, q, GFP_KERNEL)?;
        let mut m = self.map.lock();
        if m.get(&n).is_some() {
            return Err(EEXIST);
        }
        // Checked absent above: nothing is replaced.
        let _ = m.insert(node);
        Ok(())
    }

    /// Removes SRQ `srqn` if it is `q`.
    pub(super) fn remove(&self, srqn: u32, q: &Arc<KSrq>) {
        let mut m = self.map.lock();
        if m.get(&srqn).is_some_and(|x| Arc::ptr_eq(x, q)) {
            let old = m.remove(&srqn);
            drop(m);
            drop(old);
        }
    }

    /// The data path of kernel SRQ `srqn`, if the device has one.
    pub(crate) fn get(&self, srqn: u32) -> Option<Arc<KSrq>> {
        self.map.lock().get(&srqn).cloned()
    }
}
