// SPDX-License-Identifier: GPL-2.0

//! The table of CQ event handlers the EQs dispatch to.
//!
//! A CQ owner (the IB provider) registers a [`CqHandler`] for its CQN after CREATE_CQ
//! and unregisters it before DESTROY_CQ. A completion EQ's drain (in the hard IRQ, as
//! upstream's `mlx5_eq_comp_int` looks its CQ up under a spinlock) looks the CQN of
//! each completion EQE up here, the async EQ's interrupt thread that of each CQ error
//! EQE; an unknown CQN is counted and dropped. A handler may still be called once
//! after `unregister` returned (the call took its reference before); the owner makes
//! that call a no-op before freeing what it reaches. The last reference may be the
//! drain's: a handler's drop must not sleep (it frees memory only).

use core::sync::atomic::{AtomicU64, Ordering};

use kernel::{
    prelude::*,
    rbtree::{RBTree, RBTreeNode},
    sync::{new_spinlock_irq, Arc, SpinLockIrq},
};

/// Receives the events of one CQ: completions in the hard IRQ of the completion
/// vector (or the control vector's IRQ thread when it is the only vector), errors in
/// the async EQ's IRQ thread. Neither may sleep.
pub(crate) trait CqHandler: Send + Sync {
    /// A completion EQE named this CQ.
    fn completion(&self, cqn: u32);
    /// A CQ error EQE (overrun or access violation, `syndrome`) named this CQ.
    fn error(&self, _cqn: u32, _syndrome: u8) {}
}

/// CQN → handler.
#[pin_data]
pub(crate) struct CqTable {
    /// Lock order: a leaf, taken under an EQ's `Eq::state` (completion EQs, the async
    /// EQ); released before the handler is called. Taken in the hard IRQ: interrupts
    /// off while held.
    #[pin]
    map: SpinLockIrq<RBTree<u32, Arc<dyn CqHandler>>>,
    dispatched: AtomicU64,
    unknown: AtomicU64,
    /// CQEs the IB provider's kernel CQ pollers did not follow: malformed, or naming
    /// no work request in flight (debugfs `eqs`: `cqe_malformed`).
    cqe_malformed: AtomicU64,
    /// CQEs of a QP number no live kernel QP has (`cqe_stale`).
    cqe_stale: AtomicU64,
}

impl CqTable {
    /// An empty table.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                map <- new_spinlock_irq!(RBTree::new()),
                dispatched: AtomicU64::new(0),
                unknown: AtomicU64::new(0),
                cqe_malformed: AtomicU64::new(0),
                cqe_stale: AtomicU64::new(0),
            }),
            GFP_KERNEL,
        )
    }

    /// Registers `h` for `cqn`; `EEXIST` if one is registered.
    #[cfg_attr(
        not(any(CONFIG_MLX5_RS_INFINIBAND, CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "the InfiniBand provider's CQs register")
    )]
    pub(crate) fn register(&self, cqn: u32, h: Arc<dyn CqHandler>) -> Result {
        // Allocated before the lock, which a sleeping allocation may not be under.
        let node = RBTreeNode::new(cqn, h, GFP_KERNEL)?;
        let mut m = self.map.lock();
        if m.get(&cqn).is_some() {
            drop(m);
            // The node (and its reference) goes outside the lock.
            drop(node);
            return Err(EEXIST);
        }
        m.insert(node);
        Ok(())
    }

    /// Unregisters the handler of `cqn`, returning it.
    #[cfg_attr(
        not(any(CONFIG_MLX5_RS_INFINIBAND, CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "the InfiniBand provider's CQs register")
    )]
    pub(crate) fn unregister(&self, cqn: u32) -> Option<Arc<dyn CqHandler>> {
        self.map.lock().remove(&cqn)
    }

    /// Calls the handler of `cqn`; false if none is registered.
    pub(crate) fn dispatch(&self, cqn: u32) -> bool {
        let h = self.map.lock().get(&cqn).cloned();
        match h {
            Some(h) => {
                h.completion(cqn);
                self.dispatched.fetch_add(1, Ordering::Relaxed);
                true
            }
            None => {
                self.unknown.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// Calls the error handler of `cqn`; false if none is registered.
    pub(crate) fn dispatch_error(&self, cqn: u32, syndrome: u8) -> bool {
        let h = self.map.lock().get(&cqn).cloned();
        match h {
            Some(h) => {
                h.error(cqn, syndrome);
                true
            }
            None => {
                self.unknown.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// Counts a CQE a kernel CQ's poller skipped: `malformed` (or naming no work
    /// request in flight), else of an unknown QP.
    #[cfg_attr(
        not(CONFIG_MLX5_RS_INFINIBAND),
        expect(dead_code, reason = "the InfiniBand provider's kernel CQs poll")
    )]
    pub(crate) fn note_skipped_cqe(&self, malformed: bool) {
        let c = if malformed {
            &self.cqe_malformed
        } else {
            &self.cqe_stale
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// (malformed, stale) CQEs the kernel CQ pollers skipped.
    pub(crate) fn skipped_cqes(&self) -> (u64, u64) {
        (
            self.cqe_malformed.load(Ordering::Relaxed),
            self.cqe_stale.load(Ordering::Relaxed),
        )
    }

    /// (dispatched, unknown CQN) counts.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.dispatched.load(Ordering::Relaxed),
            self.unknown.load(Ordering::Relaxed),
        )
    }
}

#[cfg(CONFIG_MLX5_RS_KUNIT_TEST)]
#[kunit_tests(mlx5_rs_eq_cq)]
mod tests {
    use super::*;

    struct Count(AtomicU64);

    impl CqHandler for Count {
        fn completion(&self, _cqn: u32) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }

        fn error(&self, _cqn: u32, syndrome: u8) {
            self.0
                .fetch_add(100 * u64::from(syndrome), Ordering::Relaxed);
        }
    }

    #[test]
    fn dispatch_reaches_only_the_registered_handler() -> Result {
        let t = CqTable::new()?;
        let a = Arc::new(Count(AtomicU64::new(0)), GFP_KERNEL)?;
        let b = Arc::new(Count(AtomicU64::new(0)), GFP_KERNEL)?;
        let ha: Arc<dyn CqHandler> = a.clone();
        let hb: Arc<dyn CqHandler> = b.clone();
        t.register(5, ha)?;
        t.register(6, hb)?;
        assert!(t.dispatch(5));
        assert!(t.dispatch(5));
        assert!(t.dispatch(6));
        assert!(!t.dispatch(7));
        assert_eq!(a.0.load(Ordering::Relaxed), 2);
        assert_eq!(b.0.load(Ordering::Relaxed), 1);
        assert_eq!(t.counts(), (3, 1));
        assert!(t.dispatch_error(6, 2));
        assert!(!t.dispatch_error(8, 2));
        assert_eq!(b.0.load(Ordering::Relaxed), 201);
        assert_eq!(a.0.load(Ordering::Relaxed), 2);
        assert_eq!(t.counts(), (3, 2));
        Ok(())
    }

    #[test]
    fn register_twice_fails_and_unregister_stops_dispatch() -> Result {
        let t = CqTable::new()?;
        let a = Arc::new(Count(AtomicU64::new(0)), GFP_KERNEL)?;
        let h: Arc<dyn CqHandler> = a.clone();
        t.register(9, h.clone())?;
        assert_eq!(t.register(9, h), Err(EEXIST));
        assert!(t.unregister(9).is_some());
        assert!(t.unregister(9).is_none());
        assert!(!t.dispatch(9));
        assert_eq!(a.0.load(Ordering::Relaxed), 0);
        Ok(())
    }
}
