// SPDX-License-Identifier: GPL-2.0

//! What the kernel crate of 7.3 lacks for work items: cancelling a delayed work item,
//! and the default unbound system workqueue.
//!
//! [`workqueue::Queue::enqueue_delayed`] hands the queue an `Arc` turned into a raw
//! pointer (`Arc::into_raw`); the work function turns it back. A successful
//! `cancel_delayed_work_sync` means that function will never run for this queuing,
//! so the queue's reference would leak: [`cancel_delayed_work_sync`] takes it back.

use kernel::{
    bindings, container_of,
    sync::Arc,
    workqueue::{HasDelayedWork, Queue, Work, WorkItem},
};

/// The default unbound system workqueue (`system_dfl_wq`). 7.3 deprecates
/// `system_unbound_wq` (the kernel crate's `system_unbound()`) in its favour and warns
/// when work is queued there; the kernel crate has no accessor for it yet.
pub(crate) fn system_dfl() -> &'static Queue {
    // SAFETY: `system_dfl_wq` is a C global created during early boot, before any
    // module can load, and never destroyed, so it points at a valid workqueue for as
    // long as this module exists.
    unsafe { Queue::from_raw(bindings::system_dfl_wq) }
}

/// Cancels the pending delayed work of `this` and waits for a running instance of it
/// to finish. Returns whether it was pending (its reference is then dropped here).
///
/// A work function that re-queues itself cannot do so while this runs (the kernel
/// keeps the item marked as being cancelled), so on return the item is idle; it may
/// be queued again afterwards.
pub(crate) fn cancel_delayed_work_sync<T>(this: &Arc<T>) -> bool
where
    T: WorkItem<Pointer = Arc<T>> + HasDelayedWork<T> + Send + Sync,
{
    let ptr = Arc::as_ptr(this).cast_mut();
    // SAFETY: `ptr` points into a live `Arc<T>`; `raw_get_work` only computes the
    // address of its `Work` field.
    let work: *mut Work<T> = unsafe { <T as kernel::workqueue::HasWork<T>>::raw_get_work(ptr) };
    // SAFETY: `work` points to a valid `Work<T>` (just above).
    let ws: *mut bindings::work_struct = unsafe { Work::raw_get(work) };
    // SAFETY: by `HasDelayedWork`, that `work_struct` is the `work` field of a
    // `delayed_work`, so stepping back to its container stays inside that object.
    let dw: *mut bindings::delayed_work =
        unsafe { container_of!(ws, bindings::delayed_work, work) };
    // SAFETY: `dw` is an initialized `delayed_work` that lives as long as `this`, which
    // the caller holds for the whole call.
    let was_pending = unsafe { bindings::cancel_delayed_work_sync(dw) };
    if was_pending {
        // SAFETY: the item was queued with `Arc::into_raw` of a clone of `this` (the
        // only way `enqueue_delayed` queues an `Arc<T>`), and the cancel guarantees its
        // work function, which would have taken that reference back, will not run.
        drop(unsafe { Arc::from_raw(ptr.cast_const()) });
    }
    was_pending
}

/// Cancels the pending (not delayed) work of `this` and waits for a running instance
/// of it to finish. Returns whether it was pending (its reference is then dropped
/// here, as [`cancel_delayed_work_sync`] does).
pub(crate) fn cancel_work_sync<T>(this: &Arc<T>) -> bool
where
    T: WorkItem<Pointer = Arc<T>> + kernel::workqueue::HasWork<T> + Send + Sync,
{
    let ptr = Arc::as_ptr(this).cast_mut();
    // SAFETY: `ptr` points into a live `Arc<T>`; `raw_get_work` only computes the
    // address of its `Work` field.
    let work: *mut Work<T> = unsafe { <T as kernel::workqueue::HasWork<T>>::raw_get_work(ptr) };
    // SAFETY: `work` points to a valid `Work<T>` (just above).
    let ws: *mut bindings::work_struct = unsafe { Work::raw_get(work) };
    // SAFETY: `ws` is an initialized `work_struct` that lives as long as `this`, which
    // the caller holds for the whole call.
    let was_pending = unsafe { bindings::cancel_work_sync(ws) };
    if was_pending {
        // SAFETY: the item was queued with `Arc::into_raw` of a clone of `this` (the
        // only way `enqueue` queues an `Arc<T>`), and the cancel guarantees its work
        // function, which would have taken that reference back, will not run.
        drop(unsafe { Arc::from_raw(ptr.cast_const()) });
    }
    was_pending
}
