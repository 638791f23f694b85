// SPDX-License-Identifier: GPL-2.0

//! The table of QP and SRQ event handlers the async EQ dispatches to, as upstream
//! mlx5_core's resource table (qp.c `rsc_event_notifier`, the SRQ table of mlx5_ib
//! srq_cmd.c `srq_event_notifier`).
//!
//! A resource owner (the IB provider) registers an [`RscHandler`] for a QP number or
//! an SRQ number after the CREATE command and drops the [`RscRegistration`] before
//! the DESTROY command. The async EQ's interrupt thread looks each QP event up by the
//! EQE's resource type and number, each SRQ event by the SRQ number alone; an unknown
//! resource is counted and dropped. The handler is called with the table's lock held,
//! so when the registration's drop returns no call is running and none follows
//! (upstream reaches the same with a reference count and a completion).
//! [`RscRegistration::pause`] takes the handler out but keeps its tree node, so that
//! [`RscRegistration::resume`] after a failed DESTROY cannot fail for memory
//! (upstream re-inserts into space it keeps too).

use core::sync::atomic::{AtomicU64, Ordering};

use kernel::{
    prelude::*,
    rbtree::{RBTree, RBTreeNode},
    sync::{new_mutex, Arc, Mutex},
};

use crate::ifc::eqe::rsc_type;

/// Receives the async events of one QP or SRQ (process context: the async EQ's
/// interrupt thread, which also completes commands).
pub(crate) trait RscHandler: Send + Sync {
    /// An EQE of type `type_` (`enum mlx5_event`) named this resource. Called under
    /// the table's lock: must not wait for a command, sleep long, or touch the table.
    fn event(self: Arc<Self>, type_: u8);
}

/// What a handler is registered for.
#[cfg_attr(
    not(any(CONFIG_MLX5_RS_INFINIBAND, CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(dead_code, reason = "the InfiniBand provider's QPs and SRQs register")
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rsc {
    /// A QP (QP events with resource type QP).
    Qp(u32),
    /// An SRQ, XRC SRQ or RMP (SRQ events).
    Srq(u32),
}

impl Rsc {
    /// The table key: resource type above the 24-bit number, as upstream's `rsn`.
    fn key(self) -> u32 {
        match self {
            Rsc::Qp(n) => (u32::from(rsc_type::QP) << 24) | (n & 0x00ff_ffff),
            Rsc::Srq(n) => (u32::from(rsc_type::SRQ) << 24) | (n & 0x00ff_ffff),
        }
    }

    /// The resource a QP event names (its EQE's resource type and number).
    pub(crate) fn of_qp_event(rsc: u8, rsn: u32) -> u32 {
        (u32::from(rsc) << 24) | (rsn & 0x00ff_ffff)
    }
}

/// Resource key → handler.
#[pin_data]
pub(crate) struct RscTable {
    /// Lock order: below the async EQ's `Eq::state` (the drain dispatches under it);
    /// held across the handler call, which takes only leaf locks of its own.
    #[pin]
    map: Mutex<RBTree<u32, Arc<dyn RscHandler>>>,
    dispatched: AtomicU64,
    unknown: AtomicU64,
}

impl RscTable {
    /// An empty table.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                map <- new_mutex!(RBTree::new()),
                dispatched: AtomicU64::new(0),
                unknown: AtomicU64::new(0),
            }),
            GFP_KERNEL,
        )
    }

    /// Registers `h` for `r` until the returned registration is dropped; `EEXIST` if
    /// one is registered.
    #[cfg_attr(
        not(any(CONFIG_MLX5_RS_INFINIBAND, CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "the InfiniBand provider's QPs and SRQs register")
    )]
    pub(crate) fn register(
        self: &Arc<Self>,
        r: Rsc,
        h: Arc<dyn RscHandler>,
    ) -> Result<RscRegistration> {
        let key = r.key();
        let mut m = self.map.lock();
        if m.get(&key).is_some() {
            return Err(EEXIST);
        }
        m.try_create_and_insert(key, h, GFP_KERNEL)?;
        Ok(RscRegistration {
            table: self.clone(),
            key,
            paused: None,
        })
    }

    /// Calls the handler of table key `key` with event `type_`; false if none is
    /// registered.
    pub(crate) fn dispatch(&self, key: u32, type_: u8) -> bool {
        let m = self.map.lock();
        match m.get(&key) {
            Some(h) => {
                h.clone().event(type_);
                self.dispatched.fetch_add(1, Ordering::Relaxed);
                true
            }
            None => {
                self.unknown.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// Calls the handler of SRQ `srqn`; false if none is registered.
    pub(crate) fn dispatch_srq(&self, srqn: u32, type_: u8) -> bool {
        self.dispatch(Rsc::Srq(srqn).key(), type_)
    }

    /// (dispatched, unknown resource) counts.
    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.dispatched.load(Ordering::Relaxed),
            self.unknown.load(Ordering::Relaxed),
        )
    }
}

/// A registration; unregisters on drop, waiting for a handler call in flight.
pub(crate) struct RscRegistration {
    table: Arc<RscTable>,
    key: u32,
    /// The handler's tree node while paused (out of the table); `None` while listed.
    paused: Option<RBTreeNode<u32, Arc<dyn RscHandler>>>,
}

#[cfg_attr(
    not(any(CONFIG_MLX5_RS_INFINIBAND, CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(dead_code, reason = "the InfiniBand provider's SRQs pause and resume")
)]
impl RscRegistration {
    /// Takes the handler out of the table (a dispatch in flight finishes first) and
    /// keeps its node for [`Self::resume`]. Idempotent.
    pub(crate) fn pause(&mut self) {
        if self.paused.is_none() {
            self.paused = self.table.map.lock().remove_node(&self.key);
        }
    }

    /// Puts a paused handler back, allocating nothing. `EEXIST` (it stays paused) if
    /// another handler took the number meanwhile: the old object is gone then.
    pub(crate) fn resume(&mut self) -> Result {
        let Some(node) = self.paused.take() else {
            return Ok(());
        };
        let mut m = self.table.map.lock();
        if m.get(&self.key).is_some() {
            drop(m);
            self.paused = Some(node);
            return Err(EEXIST);
        }
        // Checked absent above: nothing is replaced.
        let _ = m.insert(node);
        Ok(())
    }
}

impl Drop for RscRegistration {
    fn drop(&mut self) {
        if self.paused.is_some() {
            // Out of the table already (and the key may be another's now).
            return;
        }
        // Taking the lock waits for a dispatch in flight; the handler's own drop may
        // sleep, so it runs after the lock is released.
        let h = self.table.map.lock().remove(&self.key);
        drop(h);
    }
}

#[cfg(CONFIG_MLX5_RS_KUNIT_TEST)]
#[kunit_tests(mlx5_rs_eq_rsc)]
mod tests {
    use super::*;

    struct Count(AtomicU64);

    impl RscHandler for Count {
        fn event(self: Arc<Self>, type_: u8) {
            self.0.fetch_add(u64::from(type_), Ordering::Relaxed);
        }
    }

    #[test]
    fn qp_and_srq_numbers_are_told_apart() -> Result {
        let t = RscTable::new()?;
        let a = Arc::new(Count(AtomicU64::new(0)), GFP_KERNEL)?;
        let b = Arc::new(Count(AtomicU64::new(0)), GFP_KERNEL)?;
        let ha: Arc<dyn RscHandler> = a.clone();
        let hb: Arc<dyn RscHandler> = b.clone();
        let ra = t.register(Rsc::Qp(5), ha)?;
        let rb = t.register(Rsc::Srq(5), hb)?;
        assert!(t.dispatch(Rsc::of_qp_event(rsc_type::QP, 5), 2));
        assert!(t.dispatch_srq(5, 0x14));
        // An RQ or SQ object of the same number is another resource.
        assert!(!t.dispatch(Rsc::of_qp_event(rsc_type::RQ, 5), 5));
        assert!(!t.dispatch(Rsc::of_qp_event(rsc_type::QP, 6), 2));
        assert_eq!(a.0.load(Ordering::Relaxed), 2);
        assert_eq!(b.0.load(Ordering::Relaxed), 0x14);
        assert_eq!(t.counts(), (2, 2));
        drop(ra);
        drop(rb);
        Ok(())
    }

    #[test]
    fn register_twice_fails_and_drop_stops_dispatch() -> Result {
        let t = RscTable::new()?;
        let a = Arc::new(Count(AtomicU64::new(0)), GFP_KERNEL)?;
        let h: Arc<dyn RscHandler> = a.clone();
        let r = t.register(Rsc::Qp(9), h.clone())?;
        assert!(matches!(t.register(Rsc::Qp(9), h), Err(e) if e == EEXIST));
        drop(r);
        assert!(!t.dispatch(Rsc::of_qp_event(rsc_type::QP, 9), 2));
        assert_eq!(a.0.load(Ordering::Relaxed), 0);
        Ok(())
    }

    #[test]
    fn paused_registration_resumes_or_leaves_the_number_to_its_new_owner() -> Result {
        let t = RscTable::new()?;
        let a = Arc::new(Count(AtomicU64::new(0)), GFP_KERNEL)?;
        let b = Arc::new(Count(AtomicU64::new(0)), GFP_KERNEL)?;
        let ha: Arc<dyn RscHandler> = a.clone();
        let hb: Arc<dyn RscHandler> = b.clone();
        let mut r = t.register(Rsc::Srq(3), ha)?;
        r.pause();
        r.pause();
        // Paused: not dispatched.
        assert!(!t.dispatch_srq(3, 1));
        r.resume()?;
        r.resume()?;
        assert!(t.dispatch_srq(3, 1));
        assert_eq!(a.0.load(Ordering::Relaxed), 1);
        // The number taken meanwhile: the new owner keeps it, even after our drop.
        r.pause();
        let rb = t.register(Rsc::Srq(3), hb)?;
        assert!(matches!(r.resume(), Err(e) if e == EEXIST));
        drop(r);
        assert!(t.dispatch_srq(3, 2));
        assert_eq!(b.0.load(Ordering::Relaxed), 2);
        assert_eq!(a.0.load(Ordering::Relaxed), 1);
        drop(rb);
        Ok(())
    }
}
