// SPDX-License-Identifier: GPL-2.0

//! The function's devlink instance (`devlink dev info`, health reporters `fw` and
//! `fw_fatal`), as upstream mlx5_core's devlink.c and health.c (the shim:
//! `ffi/core/devlink.c`).
//!
//! [`DevlinkStage`] belongs to the PCI function, not to its bring-up: allocated at probe
//! before the bring-up, registered once the function is up, unregistered first at
//! unbind, freed after the teardown; a recovery of the function keeps it. The bring-up
//! attaches the running function to it ([`DevlinkStage::attach`], which gives the
//! [`Attachment`] the stages hold and whose drop detaches it again), so that the
//! instance reads the health buffer of the function that exists now and never holds
//! a torn-down one's registers. The health poll reports to it ([`HealthReporter`]):
//! `fw` on a new non-fatal syndrome or a stalled health counter, `fw_fatal` on a fatal
//! error.
//!
//! Not advertised (the driver does not do them yet): `fw_fatal` recover (so no
//! auto-recover, no grace period), `devlink dev reload`, parameters. The hook for the
//! first two is [`DevlinkRecovery`].

use kernel::{
    pci,
    prelude::*,
    sync::{new_mutex, Arc, Mutex},
};

use crate::{
    ffi::{self, DevlinkOps},
    health::{
        self,
        report::{fw_report_msg, DevlinkInfo, FwReport, HealthOut, FW_FATAL_MSG},
        HealthReporter,
    },
    hw::Hw,
};

/// What a registered instance will call once the driver recovers a function by itself
/// (issue 24's recovery): `fw_fatal`'s `recover` (and with it auto-recover and the
/// grace period upstream's PF reporter has, 60 s) and `devlink dev reload` with the
/// `driver_reinit` action. Not wired, so not advertised: the shim's `fw_fatal_ops` has
/// no `.recover` and `mlx5rs_devlink_ops` no `.reload_actions`. Wiring it means: the
/// implementation given to [`DevlinkStage::new`], a `.recover` in `fw_fatal_ops` and
/// `.reload_actions = BIT(DEVLINK_RELOAD_ACTION_DRIVER_REINIT)` with `.reload_down` /
/// `.reload_up` in `mlx5rs_devlink_ops`, each a trampoline to the methods below (as
/// `mlx5rs_devlink_rs_health` is), and `devlink_health_reporter_recovery_done`-style
/// state updates left to devlink (a successful `recover` marks the reporter healthy).
#[expect(dead_code, reason = "the hook the recovery entry point is wired to")]
pub(crate) trait DevlinkRecovery: Send + Sync {
    /// `fw_fatal` recover: bring the failed function up again (upstream's
    /// `mlx5_health_try_recover`); `Ok` once it runs.
    fn recover(&self) -> Result;
    /// `devlink dev reload action driver_reinit`: unload the function's software state
    /// and load it again (upstream's `mlx5_unload_one_devl_locked` then
    /// `mlx5_load_one_devl_locked`).
    fn reload(&self) -> Result;
}

/// The running function the instance reads.
struct Attached {
    hw: Arc<Hw>,
    info: DevlinkInfo,
}

/// The [`DevlinkOps`] of a function: what is attached now.
#[pin_data]
struct Source {
    /// `None` while no function is up (before the bring-up, during a recovery, after
    /// the teardown). Lock order: a leaf (taken under the devlink instance lock).
    #[pin]
    cur: Mutex<Option<Attached>>,
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
}

/// The devlink instance of one PCI function.
#[pin_data]
pub(crate) struct DevlinkStage {
    source: Arc<Source>,
    /// Serializes reports with the unregistration (a report must not reach an
    /// unregistered instance). Lock order: before the devlink instance lock.
    #[pin]
    dl: Mutex<ffi::Devlink>,
}

impl DevlinkStage {
    /// Allocates the instance of `pdev` (probe is running), not registered, nothing
    /// attached.
    pub(crate) fn new(pdev: &pci::Device) -> Result<Arc<Self>> {
        let source = Arc::pin_init(pin_init!(Source { cur <- new_mutex!(None) }), GFP_KERNEL)?;
        let dl = ffi::Devlink::new(pdev, source.clone())?;
        Arc::pin_init(pin_init!(Self { source, dl <- new_mutex!(dl) }), GFP_KERNEL)
    }

    /// Registers the instance (`devlink dev` lists it) with its reporters.
    pub(crate) fn register(&self) -> Result {
        self.dl.lock().register()
    }

    /// Unregisters the instance (waits for the requests under way); reports after this
    /// are dropped. The unbind calls it first, as upstream's remove does.
    pub(crate) fn unregister(&self) {
        self.dl.lock().unregister();
    }

    /// Attaches the function that is up: the instance reads `hw`'s health buffer and
    /// answers `devlink dev info` with `info` until the [`Attachment`] drops.
    pub(crate) fn attach(self: &Arc<Self>, hw: Arc<Hw>, info: DevlinkInfo) -> Attachment {
        *self.source.cur.lock() = Some(Attached { hw, info });
        Attachment(self.clone())
    }
}

impl HealthReporter for DevlinkStage {
    fn report(&self, fatal: bool, r: FwReport) {
        let msg = if fatal {
            FW_FATAL_MSG
        } else {
            match fw_report_msg(&r) {
                Some(m) => m,
                None => return,
            }
        };
        // devlink logs nothing itself; a failed report (no reporter) changes nothing
        // for the function.
        let _ = self.dl.lock().report(fatal, msg, &r);
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
