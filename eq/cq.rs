// SPDX-License-Identifier: GPL-2.0

//! The table of CQ completion handlers the completion EQs dispatch to.
//!
//! A CQ owner (the IB provider) registers a [`CqHandler`] for its CQN after CREATE_CQ
//! and unregisters it before DESTROY_CQ. The completion EQ's interrupt thread looks
//! the CQN of each completion EQE up here; an unknown CQN is counted and dropped.

use core::sync::atomic::{AtomicU64, Ordering};

use kernel::{
    prelude::*,
    rbtree::RBTree,
    sync::{new_mutex, Arc, Mutex},
};

/// Receives the completion events of one CQ (process context: the IRQ thread).
pub(crate) trait CqHandler: Send + Sync {
    /// A completion EQE named this CQ.
    fn completion(&self, cqn: u32);
}

/// CQN → handler.
#[pin_data]
pub(crate) struct CqTable {
    #[pin]
    map: Mutex<RBTree<u32, Arc<dyn CqHandler>>>,
    dispatched: AtomicU64,
    unknown: AtomicU64,
}

impl CqTable {
    /// An empty table.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self { map <- new_mutex!(RBTree::new()), dispatched: AtomicU64::new(0), unknown: AtomicU64::new(0) }),
            GFP_KERNEL,
        )
    }

    /// Registers `h` for `cqn`; `EEXIST` if one is registered.
    pub(crate) fn register(&self, cqn: u32, h: Arc<dyn CqHandler>) -> Result {
        let mut m = self.map.lock();
        if m.get(&cqn).is_some() {
            return Err(EEXIST);
        }
        m.try_create_and_insert(cqn, h, GFP_KERNEL)?;
        Ok(())
    }

    /// Unregisters the handler of `cqn`, returning it.
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

    /// (dispatched, unknown CQN) counts.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (self.dispatched.load(Ordering::Relaxed), self.unknown.load(Ordering::Relaxed))
    }
}
