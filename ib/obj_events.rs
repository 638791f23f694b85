// SPDX-License-Identifier: GPL-2.0

//! Async events of QPs and SRQs (kernel shell): from the core's resource table
//! ([`RscTable`]) to the consumer's `event_handler`, as upstream mlx5_ib delivers them
//! (qp.c `mlx5_ib_qp_event`, srq.c `mlx5_ib_srq_event`).
//!
//! After the create command the object registers an [`ObjEvents`] for its number
//! ([`Subscription::new`]). The async EQ's interrupt thread, which also completes
//! commands, only queues the event type and the object's work item; the work item
//! maps it ([`super::events::qp_event`], [`super::events::srq_event`]) and calls the
//! handler through the shim in process context, where a consumer's handler may sleep
//! or send commands (upstream queues QP events on a workqueue for the same reason).
//!
//! Before the destroy command [`Subscription::stop`] unregisters the object (waiting
//! for a dispatch in flight), waits for its work item, and forgets the shim: no
//! handler runs after destroy started, and nothing of ours is queued once it returned.

use core::sync::atomic::{AtomicU64, Ordering};

use kernel::{
    device,
    prelude::*,
    sync::{aref::ARef, new_mutex, new_spinlock, Arc, Mutex, SpinLock},
    workqueue::{impl_has_work, new_work, Work, WorkItem},
};

use super::port::events::{event_name, qp_event, srq_event};
use crate::{
    eq::rsc::{Rsc, RscHandler, RscRegistration, RscTable},
    ffi::{
        self,
        rdma::ib_abi::IbEvent,
        rdma::ib_qp::{IbQp, QpAttr, QpShim, RecvChain, SendChain},
        rdma::ib_srq::{IbSrq, SrqAttr, SrqShim},
        rdma::udata::UserData,
    },
};

/// Events queued per object before further ones are dropped (counted and logged):
/// the async EQ's size, so a device that floods one object cannot grow memory in the
/// interrupt thread beyond what one EQ holds. Upstream queues one work item per event
/// (GFP_ATOMIC, dropped when that fails) with no bound.
const PENDING: usize = 4096;

/// The core's object the events go to.
pub(crate) enum Shim {
    /// A QP.
    Qp(QpShim),
    /// An SRQ.
    Srq(SrqShim),
}

impl Shim {
    /// The IB event EQE type `t` raises on this kind of object.
    fn map(&self, t: u8) -> Option<IbEvent> {
        match self {
            Shim::Qp(_) => qp_event(t),
            Shim::Srq(_) => srq_event(t),
        }
    }

    /// # Safety
    ///
    /// The object's destroy must not have returned (succeeded, for an SRQ) yet.
    unsafe fn raise(&self, e: IbEvent) {
        match self {
            // SAFETY: `QpShim::raise` needs the QP's destroy not returned yet: this
            // function's own contract.
            Shim::Qp(s) => unsafe { s.raise(e) },
            // SAFETY: `SrqShim::raise` needs no successful destroy of the SRQ yet: this
            // function's own contract.
            Shim::Srq(s) => unsafe { s.raise(e) },
        }
    }
}

/// The event path of one QP or SRQ.
#[pin_data]
pub(crate) struct ObjEvents {
    dev: ARef<device::Device>,
    rsc: Rsc,
    /// Lock order: a leaf, taken under the [`RscTable`] lock (dispatch) and by the
    /// work item; never held across anything but the copy of one byte.
    #[pin]
    pending: SpinLock<KVec<u8>>,
    /// Lock order: a leaf of the work item, held across the call into the consumer's
    /// handler, so clearing it waits for a call in flight. `None` once stopped.
    #[pin]
    shim: Mutex<Option<Shim>>,
    dropped: AtomicU64,
    #[pin]
    work: Work<ObjEvents>,
}

impl_has_work! {
    impl HasWork<Self> for ObjEvents { self.work }
}

impl RscHandler for ObjEvents {
    fn event(self: Arc<Self>, type_: u8) {
        let queued = {
            let mut p = self.pending.lock();
            // Under a spinlock: no sleeping allocation.
            p.len() < PENDING && p.push(type_, GFP_ATOMIC).is_ok()
        };
        if !queued {
            let n = self.dropped.fetch_add(1, Ordering::Relaxed);
            if n < 16 || n % 1000 == 0 {
                dev_warn!(
                    self.dev,
                    "{:?}: event type {:#x} not queued (at most {} wait for delivery, memory permitting); dropped\n",
                    self.rsc,
                    type_,
                    PENDING
                );
            }
            return;
        }
        // Already queued means the queued run will see it.
        let _ = ffi::system_dfl().enqueue(self);
    }
}

impl WorkItem for ObjEvents {
    type Pointer = Arc<ObjEvents>;

    fn run(this: Arc<ObjEvents>) {
        loop {
            // The events queued so far, oldest first; later ones make another batch.
            let batch = core::mem::take(&mut *this.pending.lock());
            if batch.is_empty() {
                return;
            }
            let g = this.shim.lock();
            let Some(s) = g.as_ref() else {
                return;
            };
            for &t in batch.iter() {
                match s.map(t) {
                    Some(e) => {
                        dev_dbg!(this.dev, "{:?}: {}\n", this.rsc, event_name(e));
                        // SAFETY: `shim` is set only between the create command and the
                        // start of the destroy verb, which clears it under this lock.
                        unsafe { s.raise(e) };
                    }
                    // The decoder lets only QP events reach a QP, SRQ events an SRQ.
                    None => dev_warn!(
                        this.dev,
                        "{:?}: unexpected event type {:#x}; not raised\n",
                        this.rsc,
                        t
                    ),
                }
            }
        }
    }
}

/// An object's registration in the resource table; [`Subscription::stop`] (or drop)
/// ends it.
pub(crate) struct Subscription {
    events: Arc<ObjEvents>,
    /// Paused while stopped: its node kept, so [`Subscription::restart`] needs no
    /// allocation.
    reg: RscRegistration,
    /// The shim while stopped (for [`Subscription::restart`]).
    parked: Option<Shim>,
}

impl Subscription {
    /// Registers `shim`'s object as `rsc` in `table`.
    pub(crate) fn new(
        dev: &device::Device,
        table: &Arc<RscTable>,
        rsc: Rsc,
        shim: Shim,
    ) -> Result<Self> {
        let events = Arc::pin_init(
            pin_init!(ObjEvents {
                dev: dev.into(),
                rsc,
                pending <- new_spinlock!(KVec::new()),
                shim <- new_mutex!(Some(shim)),
                dropped: AtomicU64::new(0),
                work <- new_work!("mlx5_rs::obj_events"),
            }),
            GFP_KERNEL,
        )?;
        let h: Arc<dyn RscHandler> = events.clone();
        let reg = table.register(rsc, h)?;
        Ok(Self {
            events,
            reg,
            parked: None,
        })
    }

    /// Ends the events: out of the table (a dispatch in flight finishes first), the
    /// work item waited for, the shim forgotten. Idempotent.
    pub(crate) fn stop(&mut self) {
        self.reg.pause();
        // Nothing queues the item any more: once this returns it is idle for good.
        ffi::flush_work(&self.events.work);
        let s = self.events.shim.lock().take();
        if s.is_some() {
            self.parked = s;
        }
    }

    /// After a failed destroy command: the object lives on, so it is registered
    /// again (into the node kept, as upstream re-inserts it). `EEXIST` if another
    /// object has its number (a DESTROY of unknown outcome did destroy it).
    pub(crate) fn restart(&mut self) -> Result {
        if self.parked.is_some() {
            *self.events.shim.lock() = self.parked.take();
        }
        self.reg.resume()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A QP with its events: the subscription is declared first, so it ends before the
/// QP's drop sends DESTROY_QP. Generic over the QP (the provider's one type), so the
/// verbs reach it with one dynamic call, the shim's, and no second (a post or a poll
/// is a handful of calls, each a measurable share of it under TCG). The QP stays in
/// its own box: moved by value it would sit in each frame of the create path, which
/// the MAD layer runs deep in the core's registration.
pub(crate) struct QpWithEvents<Q> {
    /// Held for its drop.
    _sub: Subscription,
    qp: KBox<Q>,
}

impl<Q: IbQp + 'static> QpWithEvents<Q> {
    /// Registers QP `qpn` (just created as `qp`) for its events; on failure `qp` is
    /// dropped (destroyed).
    pub(crate) fn wrap(
        dev: &device::Device,
        table: &Arc<RscTable>,
        qpn: u32,
        qp: KBox<Q>,
        shim: QpShim,
    ) -> Result<KBox<dyn IbQp>> {
        let sub = Subscription::new(dev, table, Rsc::Qp(qpn), Shim::Qp(shim))?;
        Ok(KBox::new(Self { _sub: sub, qp }, GFP_KERNEL)?)
    }
}

impl<Q: IbQp> IbQp for QpWithEvents<Q> {
    fn modify(&self, attr: &QpAttr, udata: Option<UserData<'_>>) -> Result<usize> {
        self.qp.modify(attr, udata)
    }

    fn query(&self) -> Result<QpAttr> {
        self.qp.query()
    }

    #[inline]
    fn post_send(&self, wrs: &mut SendChain<'_>) -> (usize, Result) {
        self.qp.post_send(wrs)
    }

    fn internal_error(&self) -> bool {
        self.qp.internal_error()
    }

    #[inline]
    fn post_recv(&self, wrs: &mut RecvChain<'_>) -> (usize, Result) {
        self.qp.post_recv(wrs)
    }
}

/// An SRQ with its events.
pub(crate) struct SrqWithEvents {
    /// Lock order: a leaf of destroy_srq, held across the destroy command.
    sub: Pin<KBox<Mutex<Subscription>>>,
    srq: KBox<dyn IbSrq>,
}

impl SrqWithEvents {
    /// Registers SRQ `srqn` (just created as `srq`) for its events; on failure `srq`
    /// is destroyed.
    pub(crate) fn wrap(
        dev: &device::Device,
        table: &Arc<RscTable>,
        srqn: u32,
        srq: KBox<dyn IbSrq>,
        shim: SrqShim,
    ) -> Result<KBox<dyn IbSrq>> {
        let sub = match Subscription::new(dev, table, Rsc::Srq(srqn), Shim::Srq(shim))
            .and_then(|s| KBox::pin_init(new_mutex!(s), GFP_KERNEL))
        {
            Ok(s) => s,
            Err(e) => {
                // A failed destroy hands the queue's memory to `Hw::keep`; the rest goes
                // (its drop sends DESTROY again). Never leaked: it holds the `Hw`.
                let _ = srq.destroy();
                drop(srq);
                return Err(e);
            }
        };
        Ok(KBox::new(Self { sub, srq }, GFP_KERNEL)?)
    }
}

impl IbSrq for SrqWithEvents {
    fn modify(&self, mask: u32, limit: u32) -> Result {
        self.srq.modify(mask, limit)
    }

    fn query(&self) -> Result<SrqAttr> {
        self.srq.query()
    }

    fn post_recv(&self, wrs: &mut RecvChain<'_>) -> (usize, Result) {
        self.srq.post_recv(wrs)
    }

    fn destroy(&self) -> Result {
        let mut sub = self.sub.lock();
        sub.stop();
        let r = self.srq.destroy();
        if r.is_err() {
            // The SRQ lives on (the shim keeps it): its events too.
            if let Err(e) = sub.restart() {
                dev_warn!(
                    sub.events.dev,
                    "{:?}: events not restored after the failed destroy ({:?})\n",
                    sub.events.rsc,
                    e
                );
            }
        }
        r
    }
}
