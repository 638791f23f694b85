// SPDX-License-Identifier: GPL-2.0

//! The function's devlink instance (`devlink dev info`, health reporters `fw` and
//! `fw_fatal`, `devlink dev reload`), as upstream mlx5_core's devlink.c and health.c
//! (the shim: `ffi/core/devlink.c`).
//!
//! [`DevlinkStage`] belongs to the PCI function, not to its bring-up: allocated at probe
//! before the bring-up, registered once the function is up, unregistered first at
//! unbind, freed after the teardown; a recovery of the function keeps it. The bring-up
//! attaches the running function to it ([`DevlinkStage::attach`], which gives the
//! [`Attachment`] the stages hold and whose drop detaches it again), so that the
//! instance reads the health buffer of the function that exists now and never holds
//! a torn-down one's registers.
//!
//! The health poll reports to it ([`HealthReporter`]), without waiting for devlink:
//! - `fw` (a new non-fatal syndrome, a stalled health counter) from the instance's
//!   report work, as upstream's `mlx5_fw_reporter_err_work`;
//! - `fw_fatal` from the function's recovery work ([`ffi::RecoveryWork`], queued by the
//!   report), as upstream's `mlx5_fw_fatal_reporter_err_work`: the device's
//!   [`crate::device::Mlx5Device`] reports it with the device lock held
//!   ([`DevlinkStage::report_fatal`]) and devlink decides on the recovery, which it runs
//!   in that report: auto-recover (on by default), the grace period (upstream's: 60 s
//!   on a PF, 30 s on a VF), no automatic recovery after one that failed. All three
//!   are set with `devlink health set`.
//!
//! The poll never waits for the instance lock: a recovery or a reload runs under it
//! and stops the poll.
//!
//! A user's `devlink health recover` and `devlink dev reload` (driver_reinit) run the
//! same recovery work's callback ([`ffi::RecoveryWork::try_run`],
//! [`ffi::RecoveryWork::run_locked`]).
//!
//! The driverinit parameters (`io_eq_size`, `event_eq_size`, `enable_rdma`) reach the
//! bring-up through [`DevlinkStage::driverinit`]: the defaults, then the values
//! devlink hands to the up half of each reload.

use core::sync::atomic::{AtomicBool, Ordering};

use kernel::{
    pci,
    prelude::*,
    sync::{new_mutex, Arc, Mutex},
    workqueue::{impl_has_work, new_work, Work, WorkItem},
};

use crate::{
    ffi::{self, DevlinkOps, RecoverKind, RecoveryWork},
    health::{
        self,
        report::{fw_report_msg, DevlinkInfo, DriverInit, FwReport, HealthOut, FW_FATAL_MSG},
        HealthReporter,
    },
    hw::Hw,
};

/// The running function the instance reads.
struct Attached {
    hw: Arc<Hw>,
    info: DevlinkInfo,
}

/// The [`DevlinkOps`] of a function: what is attached now, and its recovery work.
#[pin_data]
struct Source {
    /// `None` while no function is up (before the bring-up, during a recovery, after
    /// the teardown). Lock order: a leaf (taken under the devlink instance lock).
    #[pin]
    cur: Mutex<Option<Attached>>,
    /// The driverinit parameters' values the function's loads use: the defaults, then
    /// those of the last `devlink dev reload`. Lock order: a leaf (taken under the
    /// stages' lock at a bring-up).
    #[pin]
    init: Mutex<DriverInit>,
    recovery: Arc<RecoveryWork>,
}

impl DevlinkOps for Source {
    fn info(&self) -> Result<DevlinkInfo> {
        self.cur.lock().as_ref().map(|a| a.info).ok_or(ENODEV)
    }

    fn health(&self) -> Result<HealthOut> {
        let hw = self
            .cur
            .lock()
            .as_ref()
            .map(|a| a.hw.clone())
            .ok_or(ENODEV)?;
        Ok(HealthOut::new(&health::read_buffer(&*hw)?))
    }

    fn recover(&self) -> Result {
        // devlink's instance lock is held: the device lock is only tried.
        self.recovery.try_run(RecoverKind::Request)
    }

    fn reload(&self, init: Option<DriverInit>) -> Result {
        let kind = match init {
            Some(init) => {
                // Before the load, which reads them.
                *self.init.lock() = init.checked();
                RecoverKind::Load
            }
            None => RecoverKind::Unload,
        };
        // SAFETY: devlink runs `reload_down` and `reload_up` with the device lock held
        // (its netlink layer takes it for DEVLINK_CMD_RELOAD and `devlink_reload`
        // asserts it), and `recovery` was armed for this instance's function.
        unsafe { self.recovery.run_locked(kind) }
    }
}

/// What the health poll left for the report work and the recovery work.
#[derive(Default)]
struct Pending {
    /// The next `fw` report.
    fw: Option<FwReport>,
    /// The context of the next `fw_fatal` report.
    fatal: Option<FwReport>,
}

/// The devlink instance of one PCI function.
#[pin_data]
pub(crate) struct DevlinkStage {
    source: Arc<Source>,
    /// Serializes reports with the unregistration (a report must not reach an
    /// unregistered instance). Lock order: after the device lock (the recovery work
    /// reports with it held), before the devlink instance lock.
    #[pin]
    dl: Mutex<ffi::Devlink>,
    /// Lock order: a leaf.
    #[pin]
    pending: Mutex<Pending>,
    /// Set by [`DevlinkStage::unregister`]: no `fw` report is queued any more.
    closed: AtomicBool,
    /// Makes the `fw` reports ([`Pending::fw`]).
    #[pin]
    fw_work: Work<DevlinkStage>,
}

impl_has_work! {
    impl HasWork<Self> for DevlinkStage { self.fw_work }
}

impl WorkItem for DevlinkStage {
    type Pointer = Arc<DevlinkStage>;

    fn run(this: Arc<DevlinkStage>) {
        let Some(r) = this.pending.lock().fw.take() else {
            return;
        };
        if let Some(msg) = fw_report_msg(&r) {
            // devlink logs nothing itself; a failed report (no reporter) changes
            // nothing for the function.
            let _ = this.dl.lock().report(msg, &r, None);
        }
    }
}

impl DevlinkStage {
    /// Allocates the instance of `pdev` (probe is running), not registered, nothing
    /// attached; `recovery` is the function's recovery work, which a `fw_fatal` report
    /// queues and a user's recover or reload runs.
    pub(crate) fn new(pdev: &pci::Device, recovery: Arc<RecoveryWork>) -> Result<Arc<Self>> {
        let source = Arc::pin_init(
            pin_init!(Source {
                cur <- new_mutex!(None),
                init <- new_mutex!(DriverInit::DEFAULT),
                recovery,
            }),
            GFP_KERNEL,
        )?;
        let dl = ffi::Devlink::new(pdev, source.clone())?;
        Arc::pin_init(
            pin_init!(Self {
                source,
                dl <- new_mutex!(dl),
                pending <- new_mutex!(Pending::default()),
                closed: AtomicBool::new(false),
                fw_work <- new_work!("mlx5_rs::devlink_fw_report"),
            }),
            GFP_KERNEL,
        )
    }

    /// The function's recovery work (the sync-reset events are queued on it).
    pub(crate) fn recovery(&self) -> &Arc<RecoveryWork> {
        &self.source.recovery
    }

    /// Registers the instance (`devlink dev` lists it) with its reporters; `fw_fatal`'s
    /// grace period is upstream's for a VF when `is_vf`, else for a PF. The driverinit
    /// parameters `io_eq_size`, `event_eq_size` and, with the InfiniBand provider
    /// built, `enable_rdma`, at upstream's defaults. With `remote_reset` (MCAM offers
    /// MFRL: the function takes part in sync resets) the parameter
    /// `enable_remote_dev_reset` too, as upstream's `mlx5_fw_reset_init`.
    pub(crate) fn register(&self, is_vf: bool, remote_reset: bool) -> Result {
        let rdma = cfg!(CONFIG_MLX5_RS_INFINIBAND);
        self.dl
            .lock()
            .register(is_vf, remote_reset, rdma, &DriverInit::DEFAULT)
    }

    /// The driverinit parameters' values a load of the function uses now.
    pub(crate) fn driverinit(&self) -> DriverInit {
        *self.source.init.lock()
    }

    /// devlink's `enable_remote_dev_reset`: whether a sync reset's request is acked.
    pub(crate) fn remote_reset_allowed(&self) -> bool {
        self.dl.lock().remote_reset_allowed()
    }

    /// A sync reset reloaded the function: devlink counts the remote reload actions
    /// (upstream's `mlx5_fw_reset_complete_reload`). Called with the device lock held.
    pub(crate) fn remote_reload_done(&self) {
        self.dl.lock().remote_reload_done();
    }

    /// Unregisters the instance (waits for the requests and the report under way);
    /// reports after this are dropped. The unbind calls it once the recovery work is
    /// stopped (a user's recover waiting for the device lock then gives up), before
    /// the teardown, as upstream's remove does.
    pub(crate) fn unregister(self: &Arc<Self>) {
        self.closed.store(true, Ordering::Release);
        // Not under `dl`: the report work takes it.
        ffi::cancel_work_sync(self);
        self.dl.lock().unregister();
    }

    /// Attaches the function that is up: the instance reads `hw`'s health buffer and
    /// answers `devlink dev info` with `info` until the [`Attachment`] drops.
    pub(crate) fn attach(self: &Arc<Self>, hw: Arc<Hw>, info: DevlinkInfo) -> Attachment {
        *self.source.cur.lock() = Some(Attached { hw, info });
        Attachment(self.clone())
    }

    /// Marks `fw_fatal` healthy after a recovery devlink did not run (a PCI error's
    /// resume), as upstream's `mlx5_pci_resume` does; nothing when unregistered or
    /// without the reporter. Not called under `stages` (lock order).
    pub(crate) fn fatal_healthy(&self) {
        self.dl.lock().fatal_healthy();
    }

    /// Reports the fatal error the health poll left to `fw_fatal`; devlink stores the
    /// dump and, when it decides on a recovery, runs `recover` for it in this thread.
    /// Called by the recovery work with the device lock held.
    ///
    /// # Errors
    ///
    /// `ECANCELED` devlink refused to recover (within the grace period, or the
    /// previous recovery failed), `ENOENT` no `fw_fatal` reporter (none could be
    /// created, or the instance is unregistered), or `recover`'s error.
    pub(crate) fn report_fatal(&self, recover: &dyn Fn() -> Result) -> Result {
        let r = self.pending.lock().fatal.take().unwrap_or_default();
        let dl = self.dl.lock();
        if !dl.is_registered() {
            return Err(ENOENT);
        }
        dl.report(FW_FATAL_MSG, &r, Some(recover))
    }
}

impl HealthReporter for DevlinkStage {
    fn report(self: Arc<Self>, fatal: bool, r: FwReport) {
        if fatal {
            self.pending.lock().fatal = Some(r);
            // The recovery work reports it (`report_fatal`); a run already queued
            // takes this context.
            let _ = self.source.recovery.queue();
            return;
        }
        if fw_report_msg(&r).is_none() || self.closed.load(Ordering::Acquire) {
            return;
        }
        self.pending.lock().fw = Some(r);
        // Already queued: that run reports this one.
        let _ = ffi::system_dfl().enqueue(self.clone());
    }
}

/// A function attached to its devlink instance; detaches it when dropped (the bring-up
/// stages hold it, so a torn-down function's registers are never read).
pub(crate) struct Attachment(Arc<DevlinkStage>);

impl Drop for Attachment {
    fn drop(&mut self) {
        // The `Hw` goes with it: its BAR can be requested again by a new bring-up.
        let old = self.0.source.cur.lock().take();
        drop(old);
    }
}
