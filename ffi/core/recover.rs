// SPDX-License-Identifier: GPL-2.0

//! What the recovery of a bound function needs and the kernel crate of 7.3 lacks: a
//! work item that runs a driver callback with the device in the same state as a bus
//! callback (device lock held, device bound), the same callback run on request from
//! contexts that hold the device lock (devlink's reload) or must not wait for it
//! (devlink's `health recover`), and dword access to the function's vendor-specific
//! capability in configuration space (the VSC gateway).
//!
//! # The recovery work
//!
//! [`RecoveryWork`] runs [`PciRecover::recover`] with [`RecoverKind::Fatal`] from the
//! default unbound system workqueue. A bus callback gets `&'bound pci::Device<Core>`
//! and its driver data because the PCI core holds the device lock and the device is
//! bound for the call; a work item has neither, so it takes them:
//!
//! 1. it takes the device lock with `device_trylock`, retrying every 10 ms, and gives up
//!    as soon as [`RecoveryHandle::stop`] was called. It never *blocks* on the lock:
//!    `remove` (unbind, rmmod) and `shutdown` run with the device lock held and call
//!    [`RecoveryHandle::stop`], which cancels the work and waits for it; a blocking
//!    lock would deadlock against that wait;
//! 2. with the lock held, it checks the stop flag again and reads the driver data: the
//!    PCI core sets it after a successful probe and the driver core takes it back in
//!    `post_unbind` (after `remove`), both under the device lock, so a non-null
//!    pointer read under the lock is the pinned driver data of a bound device, and it
//!    stays so until the lock is released (unbinding needs that lock).
//!
//! The callback therefore runs with the guarantees of a bus callback, and gets them as
//! such: `&pci::Device<Core>` and `Pin<&Data>`, the data's `'bound` lifetime being the
//! binding (the driver data may keep references to the device for that long: the
//! device stays bound for as long as the data exists, which is what the PCI
//! abstraction's probe relies on too).
//!
//! [`RecoveryWork::try_run`] runs the callback the same way from the caller's thread
//! (a user's `devlink health recover`, which holds devlink's instance lock: it must
//! not block on the device lock, which devlink orders first), and gives up with
//! `EBUSY` while the work is queued or running; [`RecoveryWork::run_locked`] runs it
//! for a caller that holds the device lock already (devlink's reload).
//!
//! # Sync reset
//!
//! The same work runs a sync reset's steps (upstream `fw_reset.c`'s request, reset-now
//! and abort work items), queued from the async EQ ([`RecoveryWork::queue_sync`]): the
//! event handler only records the event and queues. Each step runs as a
//! [`RecoverKind`] under the device lock, except the PCI reset of RESET_NOW:
//! [`RecoverKind::SyncNow`] tears the function down; then, *without* the device lock,
//! the bus below the function's bridge is reset ([`pci_reset_bus`]: `pci_reset_bus`
//! tries the device lock of every function below the bridge, ours included, as
//! upstream's reset work does it holding no lock); then [`RecoverKind::SyncReload`]
//! loads the function again under the lock. While the lock is released, unbind may
//! run: it stops the work first, the reset gives up at its next try and the reload
//! finds the work stopped.
//!
//! Lock order: the device lock is outside every lock of the driver (as for a bus
//! callback); [`RecoveryHandle::stop`] is called with the device lock held and no
//! driver lock held, and waits for the work, which only *tries* the device lock.

use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use kernel::{
    bindings,
    device::Core,
    ffi::{c_int, c_void},
    pci,
    prelude::*,
    sync::{aref::ARef, Arc},
    time::{delay::fsleep, Delta},
    workqueue::{impl_has_work, new_work, Work, WorkItem},
};

extern "C" {
    // `struct device *` / `struct pci_dev *` on the C side, opaque here (see pci.rs).
    fn mlx5rs_device_trylock(dev: *mut c_void) -> c_int;
    fn mlx5rs_device_unlock(dev: *mut c_void);
    fn mlx5rs_pci_vsc_cap(pdev: *mut c_void) -> c_int;
    fn mlx5rs_pci_cfg_read(pdev: *mut c_void, off: c_int, val: *mut u32) -> c_int;
    fn mlx5rs_pci_cfg_write(pdev: *mut c_void, off: c_int, val: u32) -> c_int;
    fn mlx5rs_pci_has_bridge(pdev: *mut c_void) -> c_int;
    fn mlx5rs_pci_reset_bus(pdev: *mut c_void) -> c_int;
}

fn raw_pci(pdev: &pci::Device) -> *mut c_void {
    // `pci::Device` is `#[repr(transparent)]` over `Opaque<bindings::pci_dev>`.
    core::ptr::from_ref(pdev).cast_mut().cast::<c_void>()
}

fn raw_dev(pdev: &pci::Device) -> *mut bindings::device {
    let p = core::ptr::from_ref(pdev)
        .cast_mut()
        .cast::<bindings::pci_dev>();
    // SAFETY: `p` is a valid `struct pci_dev` (borrowed); only the address of its
    // embedded `dev` is computed.
    unsafe { core::ptr::addr_of_mut!((*p).dev) }
}

/// What a run of [`PciRecover::recover`] is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecoverKind {
    /// The recovery work, queued after a fatal error ([`RecoveryWork::queue`]).
    Fatal,
    /// Recover now, on request (devlink's `health recover`).
    Request,
    /// Unload the function's software state (devlink's reload, its down half).
    Unload,
    /// Load it again (devlink's reload, its up half).
    Load,
    /// A sync reset's RESET_REQUEST: ack or nack through MFRL.
    SyncRequest,
    /// A sync reset's RESET_NOW: tear the function down for the PCI reset (`Ok`: the
    /// work resets the bus, then runs [`RecoverKind::SyncReload`]).
    SyncNow,
    /// After the PCI reset of RESET_NOW (`reset`: its result, 0 or a negative errno):
    /// load the function again.
    SyncReload {
        /// The PCI reset's result.
        reset: i32,
    },
    /// A sync reset's RESET_ABORT: the health poll resumes.
    SyncAbort,
}

/// A sync-reset event the async EQ hands to the work ([`RecoveryWork::queue_sync`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SyncEvent {
    /// RESET_REQUEST.
    Request,
    /// RESET_NOW.
    Now,
    /// RESET_ABORT.
    Abort,
}

/// Bits of [`RecoveryWork::pending`].
const PENDING_FATAL: u32 = 1 << 0;
const PENDING_SYNC_REQUEST: u32 = 1 << 1;
const PENDING_SYNC_NOW: u32 = 1 << 2;
const PENDING_SYNC_ABORT: u32 = 1 << 3;

/// How long the PCI reset of RESET_NOW tries again while a device lock below the
/// bridge is held elsewhere (`pci_reset_bus` only tries them).
const RESET_BUS_TRY_MS: u32 = 5_000;

/// A PCI driver whose bound functions can be recovered from a work item.
pub(crate) trait PciRecover: pci::Driver {
    /// Runs `kind` for `pdev`, bound to this driver with driver data `this`, with the
    /// device lock held (as in a bus callback).
    fn recover<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&'bound Self::Data<'bound>>,
        kind: RecoverKind,
    ) -> Result;
}

/// How long [`RecoveryWork::try_run`] tries the device lock before it gives up.
const TRY_RUN_MS: u32 = 30_000;

/// The work item of one function's recovery (see the module doc).
#[pin_data]
pub(crate) struct RecoveryWork {
    pdev: ARef<pci::Device>,
    stop: AtomicBool,
    /// Runs queued and not finished yet (a run queued while one runs runs again).
    queued: AtomicU32,
    /// What the next run does (`PENDING_*`): a fatal error's recovery, sync-reset steps.
    pending: AtomicU32,
    /// `recover_callback::<T>` of the driver that armed it. Its contract (its
    /// `# Safety`): called only with the device lock held and `T`'s driver bound, as
    /// the work's `run` calls it after taking the lock and checking that.
    callback: unsafe fn(&pci::Device, RecoverKind) -> Result,
    #[pin]
    work: Work<RecoveryWork>,
}

impl_has_work! {
    impl HasWork<Self> for RecoveryWork { self.work }
}

impl WorkItem for RecoveryWork {
    type Pointer = Arc<RecoveryWork>;

    fn run(this: Arc<RecoveryWork>) {
        let bits = this.pending.swap(0, Ordering::AcqRel);
        // Refusals and failures are the driver's to log. The sync-reset steps in the
        // order the firmware raises them (a request and its abort may both be pending).
        if bits & PENDING_SYNC_REQUEST != 0 {
            let _ = this.locked(RecoverKind::SyncRequest, None);
        }
        if bits & PENDING_SYNC_NOW != 0 && this.locked(RecoverKind::SyncNow, None).is_ok() {
            let reset = this.reset_bus();
            let _ = this.locked(RecoverKind::SyncReload { reset }, None);
        }
        if bits & PENDING_SYNC_ABORT != 0 {
            let _ = this.locked(RecoverKind::SyncAbort, None);
        }
        if bits & PENDING_FATAL != 0 {
            let _ = this.locked(RecoverKind::Fatal, None);
        }
        this.queued.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Runs `T::recover` for `pdev` if it is bound.
///
/// # Safety
///
/// The caller holds `pdev`'s device lock, and `T` is the driver `pdev` is bound to
/// whenever its driver data is set.
unsafe fn recover_callback<T: PciRecover>(pdev: &pci::Device, kind: RecoverKind) -> Result {
    let raw = core::ptr::from_ref(pdev)
        .cast_mut()
        .cast::<bindings::pci_dev>();
    // SAFETY: `raw` is a valid `struct pci_dev` (borrowed), its device lock held by the
    // caller and `T` its driver whenever the driver data is set (this function's
    // contract). Not bound (any more), or the probe has not finished: nothing to
    // recover.
    unsafe { super::bound::with_bound::<T, _>(raw, |core, this| T::recover(core, this, kind)) }
        .unwrap_or(Err(ENODEV))
}

impl RecoveryWork {
    /// Whether [`RecoveryHandle::stop`] was called: the function is being unbound or
    /// shut down; a recovery under way gives up at its next wait.
    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Queues the recovery of a fatal error; `false` when stopping or already queued.
    pub(crate) fn queue(self: &Arc<Self>) -> bool {
        self.queue_bits(PENDING_FATAL)
    }

    /// Queues a sync-reset step (from the async EQ's handler: only records and
    /// queues); `false` when stopping or a run is queued already (that run does it).
    pub(crate) fn queue_sync(self: &Arc<Self>, ev: SyncEvent) -> bool {
        self.queue_bits(match ev {
            SyncEvent::Request => PENDING_SYNC_REQUEST,
            SyncEvent::Now => PENDING_SYNC_NOW,
            SyncEvent::Abort => PENDING_SYNC_ABORT,
        })
    }

    fn queue_bits(self: &Arc<Self>, bits: u32) -> bool {
        if self.stopping() {
            return false;
        }
        // Before the enqueue: a run that starts now sees it.
        self.pending.fetch_or(bits, Ordering::AcqRel);
        // Counted before the enqueue: the run may finish before it returns.
        self.queued.fetch_add(1, Ordering::AcqRel);
        if super::work::system_dfl().enqueue(self.clone()).is_ok() {
            true
        } else {
            self.queued.fetch_sub(1, Ordering::AcqRel);
            false
        }
    }

    /// Runs `kind` now in this thread, with the device lock taken as the work takes it
    /// (tried every 10 ms, never waited for: the caller may hold a lock the device
    /// lock is ordered before, as devlink's instance lock is).
    ///
    /// # Errors
    ///
    /// `EBUSY` while the recovery work is queued or running, or when the device lock
    /// stays taken for 30 s; `ENODEV` when stopping or not bound; else the callback's.
    pub(crate) fn try_run(&self, kind: RecoverKind) -> Result {
        self.locked(kind, Some(TRY_RUN_MS))
    }

    /// Runs `kind` now in this thread.
    ///
    /// # Safety
    ///
    /// The caller holds the device lock of the function this work was armed for.
    pub(crate) unsafe fn run_locked(&self, kind: RecoverKind) -> Result {
        if self.stopping() {
            return Err(ENODEV);
        }
        // SAFETY: the caller holds the device lock (contract above) and `callback` is
        // `recover_callback::<T>` of the driver this item was armed for.
        unsafe { (self.callback)(&self.pdev, kind) }
    }

    /// The PCI reset of RESET_NOW, with the device lock not held: the hot reset of the
    /// bus below the function's bridge, tried again every 10 ms for up to 5 s while a
    /// device lock there is held elsewhere (`-EAGAIN`), given up at once when stopping
    /// (unbind holds our device lock and waits for this work). Returns 0 or a
    /// negative errno.
    fn reset_bus(&self) -> i32 {
        let mut waited = 0u32;
        loop {
            if self.stopping() {
                return ENODEV.to_errno();
            }
            // SAFETY: `pdev` is a PCI device we hold a reference on; this thread holds
            // no device lock (the shim's contract: `pci_reset_bus` tries them).
            let r = unsafe { mlx5rs_pci_reset_bus(raw_pci(&self.pdev)) };
            if r != EAGAIN.to_errno() || waited >= RESET_BUS_TRY_MS {
                return r;
            }
            fsleep(Delta::from_millis(10));
            waited = waited.saturating_add(10);
        }
    }

    /// Takes the device lock (tried every 10 ms; for at most `limit_ms` and not while
    /// the work is queued when given: [`RecoveryWork::try_run`]) and runs `kind`.
    fn locked(&self, kind: RecoverKind, limit_ms: Option<u32>) -> Result {
        let dev = raw_dev(&self.pdev).cast::<c_void>();
        let mut waited = 0u32;
        loop {
            if self.stopping() {
                return Err(ENODEV);
            }
            if let Some(limit) = limit_ms {
                if self.queued.load(Ordering::Acquire) != 0 || waited >= limit {
                    return Err(EBUSY);
                }
            }
            // SAFETY: `dev` is the `struct device` of a PCI device we hold a reference
            // on; `device_trylock` does not sleep.
            if unsafe { mlx5rs_device_trylock(dev) } != 0 {
                break;
            }
            fsleep(Delta::from_millis(10));
            waited = waited.saturating_add(10);
        }
        // SAFETY: the device lock is held (just taken).
        let r = unsafe { self.run_locked(kind) };
        // SAFETY: taken above by this thread.
        unsafe { mlx5rs_device_unlock(dev) };
        r
    }
}

/// The recovery work of one bound function, owned by its driver data; stopped (no new
/// run, the running one given up and waited for) on [`RecoveryHandle::stop`] or drop.
pub(crate) struct RecoveryHandle(Arc<RecoveryWork>);

impl RecoveryHandle {
    /// Arms the recovery of `pdev` by driver `T`.
    pub(crate) fn new<T: PciRecover>(pdev: &pci::Device) -> Result<Self> {
        let w = Arc::pin_init(
            pin_init!(RecoveryWork {
                pdev: pdev.into(),
                stop: AtomicBool::new(false),
                queued: AtomicU32::new(0),
                pending: AtomicU32::new(0),
                callback: recover_callback::<T>,
                work <- new_work!("mlx5_rs::recovery"),
            }),
            GFP_KERNEL,
        )?;
        Ok(Self(w))
    }

    /// The work, for whoever queues it (the fatal-error consumer).
    pub(crate) fn work(&self) -> &Arc<RecoveryWork> {
        &self.0
    }

    /// Stops the recovery: none starts any more, one waiting for the device lock gives
    /// up, one running gives up at its next wait; returns once none runs. Idempotent.
    /// Called with the device lock held (remove, shutdown) or not at all held.
    pub(crate) fn stop(&self) {
        self.0.stop.store(true, Ordering::Release);
        super::work::cancel_work_sync(&self.0);
    }
}

impl Drop for RecoveryHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Configuration-space offset of `pdev`'s vendor-specific capability, if it has one.
pub(crate) fn pci_vsc_cap(pdev: &pci::Device) -> Option<u8> {
    // SAFETY: `pdev` is a valid PCI device (borrowed); the lookup only reads its
    // configuration space.
    let off = unsafe { mlx5rs_pci_vsc_cap(raw_pci(pdev)) };
    u8::try_from(off).ok().filter(|o| *o != 0)
}

/// Reads the configuration-space dword at `off`.
pub(crate) fn pci_cfg_read(pdev: &pci::Device, off: u16) -> Result<u32> {
    let mut v = 0u32;
    // SAFETY: `pdev` is a valid PCI device (borrowed) and `v` a valid `u32` to write.
    let r = unsafe { mlx5rs_pci_cfg_read(raw_pci(pdev), c_int::from(off), &mut v) };
    kernel::error::to_result(r).map(|()| v)
}

/// Writes the configuration-space dword at `off`.
pub(crate) fn pci_cfg_write(pdev: &pci::Device, off: u16, v: u32) -> Result {
    // SAFETY: `pdev` is a valid PCI device (borrowed).
    kernel::error::to_result(unsafe { mlx5rs_pci_cfg_write(raw_pci(pdev), c_int::from(off), v) })
}

/// Whether a bridge sits above `pdev` (a sync reset's hot reset resets the bus below
/// it).
pub(crate) fn pci_has_bridge(pdev: &pci::Device) -> bool {
    // SAFETY: `pdev` is a valid PCI device (borrowed); the shim reads `bus->self`.
    unsafe { mlx5rs_pci_has_bridge(raw_pci(pdev)) != 0 }
}
