// SPDX-License-Identifier: GPL-2.0

//! The PCI driver and the per-function device object.
//!
//! Bring-up is a sequence of stages, each an object that undoes itself on drop:
//!
//! | stage | acquired by | undone by |
//! |---|---|---|
//! | [`ffi::PciEnabled`] | enable memory + bus mastering | clear master, disable |
//! | [`Hw`] | map BAR0, wait for firmware, command queue | unmap, free the queue |
//! | [`EnabledHca`] | ENABLE_HCA | DISABLE_HCA |
//! | [`FwPages`] | boot and init pages (QUERY/MANAGE_PAGES) | reclaim, free what came back |
//! | [`InitializedHca`] | caps, INIT_HCA | TEARDOWN_HCA graceful → force |
//! | `Events`, `DebugFs` | EQs on MSI-X, debugfs | destroyed, removed |
//! | [`ClockStage`] | the clock info page, its overflow work | work stopped, page freed |
//! | `ib::IbStage` | `mlx5_N` registered with the RDMA core | unregistered (first) |
//! | [`Attachment`] | the function attached to its devlink instance | detached |
//!
//! The devlink instance ([`DevlinkStage`]) is the PCI function's, not a stage: allocated
//! before the bring-up, registered after it, unregistered first at unbind and freed
//! after the teardown, so that it outlives a recovery of the function (whose bring-up
//! attaches again).
//!
//! [`Mlx5Device::bring_up`] creates them as locals in that order: if a step fails, the
//! locals created so far are dropped in reverse order, which unwinds exactly what
//! succeeded (a recovery, [`Mlx5Device::recover`], drops every stage and runs the same
//! `bring_up` again: "Recovery" below). The device object declares them as fields from
//! the *last* acquired to the *first*, so unbind (field drop order) tears down in the same reverse order:
//! TEARDOWN_HCA → reclaim pages → DISABLE_HCA → bus mastering off, PCI disabled →
//! command queue and parked mailboxes freed, BAR unmapped.
//!
//! # Recovery
//!
//! What lives for the PCI binding is [`Mlx5Device`] itself: the function's identity, its
//! recovery work ([`ffi::RecoveryHandle`]) and its devlink instance; every bring-up
//! stage, PCI enable included, belongs to one *incarnation* of the function
//! ([`Stages`]), and a recovery rebuilds them all, as upstream's `mlx5_health_try_recover`
//! does (`mlx5_error_sw_reset`, `mlx5_unload_one`, then `mlx5_recover_device`:
//! `mlx5_pci_disable_device`, `mlx5_pci_slot_reset` (enable, bus mastering, `wait_vital`),
//! `mlx5_load_one`):
//!
//! 1. the health poll declares the function dead; its consumers are told (the IB device
//!    raises IB_EVENT_DEVICE_FATAL), then the poll reports to devlink's `fw_fatal`,
//!    which queues the recovery work (`devlink.rs`);
//! 2. the work takes the device lock ([`ffi::PciRecover`]) and reports the error to
//!    `fw_fatal` ([`Mlx5Device::on_fatal`], upstream's `mlx5_fw_fatal_reporter_err_work`):
//!    devlink stores the dump and decides (auto-recover, grace period, the previous
//!    error recovered); when it recovers, it calls back into [`Mlx5Device::recover`]
//!    within that report; when it refuses, the function is unloaded, as upstream's
//!    "Driver is in error state. Unloading"; with auto-recover off the function stays
//!    in error until `devlink health recover` or a reload;
//! 3. [`Mlx5Device::recover`]: the firmware reset where the sensor asks for one
//!    ([`health::error_sw_reset`]: VSC software-reset semaphore, nic_interface SW_RESET,
//!    DISABLED waited for), then [`Stages::unload`] (the IB device unregistered, its user
//!    contexts disassociated; a dead function's pages parked and freed once bus
//!    mastering is off, PCI disabled, command queue freed, BAR released);
//! 4. [`Stages::bring_up`] in recovery mode: BAR mapped again, the health counter waited
//!    for (`wait_vital`: the PCI reads are back and the firmware runs), then the same
//!    stages as at probe, ending with a new `mlx5_N`.
//!
//! A user's `devlink health recover` runs step 3 and 4 ([`RecoverWhy::Request`]), and
//! `devlink dev reload` (driver_reinit) [`Mlx5Device::unload`] then
//! [`Mlx5Device::load`], each through the recovery work's callback with the device
//! lock held.
//!
//! A PCI error (AER, [`ffi::PciErrors`]) runs the same two halves from the PCI core's
//! error handlers, as upstream's `mlx5_err_handler`: `error_detected` tells the
//! consumers (DEVICE_FATAL) and unloads the stages (declared dead first when the
//! channel is offline; the recovery work and devlink keep off until `resume`), the AER
//! service resets the bus below the root port, `slot_reset` enables the function,
//! restores the configuration its probe saved and waits for the firmware
//! (`wait_vital`), `resume` runs step 4's bring-up.
//!
//! A sync reset (firmware-initiated reset, upstream's `fw_reset.c`) runs the same two
//! halves from the recovery work ([`ffi::RecoveryWork::queue_sync`], queued by the
//! async EQ's GENERAL_EVENT): on RESET_REQUEST the function acks through MFRL (health
//! poll stopped) or nacks (devlink's `enable_remote_dev_reset` false, or the reset
//! cannot be done: [`health::sync_reset::answer`]); on RESET_NOW it is torn down fast,
//! the consumers told (DEVICE_FATAL) and the stages unloaded, the work resets the bus
//! below the bridge without the device lock, then step 4's bring-up loads the function
//! again and devlink counts the remote reload; on RESET_ABORT the health poll resumes.
//!
//! A recovery that fails leaves no stage (the function is failed; unbind or rmmod has
//! nothing to undo, `devlink health recover` or a reload tries again) and says why.
//! Unbind, rmmod and shutdown stop the recovery work before anything else
//! ([`ffi::RecoveryHandle::stop`]): a recovery waiting for the device lock gives up,
//! and one running gives up at its next firmware wait (rmmod sets [`crate::exiting`]
//! before unregistering the driver, whose unbind needs the device lock the recovery
//! holds).

use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use kernel::{
    device::{self, Core},
    dma::{self, Device as _},
    pci,
    prelude::*,
    sync::{new_mutex, Arc, Mutex},
    time::{Delta, Instant, Monotonic},
};

use crate::eq::{
    event::SyncRst,
    uar::{self, UarGeom},
    EqCaps, Events, SyncResetHandler,
};
use crate::{
    clock::ClockStage,
    cmd::{
        commands::{
            gen_cap, AnswerMfrl, AtomicCaps, GeneralCaps, QueryAtomicCaps, QueryBoardId,
            QueryGeneralCaps, QueryIssi, QueryMcamMfrl, QueryMfrl, QueryPages, SetAtomicCaps,
            SetDriverVersion, SetGeneralCaps, SetIssi, ATOMIC_REQ_MODE_HOST_ENDIANNESS,
        },
        timeout::Timeouts,
    },
    debugfs::DebugFs,
    devlink::{Attachment, DevlinkStage},
    ffi,
    hca::{EnabledHca, InitializedHca},
    health::{
        self,
        recover::{self, Vital, VitalStep},
        report::DevlinkInfo,
        sync_reset::{self, Answer, RequestContext},
        HealthStage,
    },
    hw::Hw,
    ifc::{field::Overflow, init_seg as seg, opcodes::query_pages_op_mod},
    init_seg_io::{InitSeg, Regs},
    lifecycle::{Lifecycle, Mode},
    pagealloc::{
        fw_pages::{FwPages, Supply},
        page_work::PageWork,
    },
    pci_ids::FunctionInfo,
    teardown::{self, plan::TeardownCaps, FastTeardown, FreeAfterStop, ParkedPages, ReclaimStage},
};

/// How long to wait for the firmware to clear `initializing` before the command
/// interface is up (upstream's FW pre-init budget).
const FW_PRE_INIT_TIMEOUT: Delta = Delta::from_secs(120);
/// The same wait in a recovery. Upstream allows FW_PRE_INIT_ON_RECOVERY_TIMEOUT (2 h);
/// ours keeps the probe's budget: the wait holds the device lock (which unbind and
/// shutdown need), and a firmware that does not come back within 2 minutes is reported
/// as a failed recovery; a reload tries again.
const FW_PRE_INIT_ON_RECOVERY_TIMEOUT: Delta = FW_PRE_INIT_TIMEOUT;
/// Default FW_INIT budget once the command queue is set (the device may override).
const FW_INIT_TIMEOUT_DEFAULT_MS: u64 = 2000;
/// log_max_qp we request (upstream profile 2), clamped to the device maximum.
const LOG_MAX_QP: u8 = 18;
/// Software owner id given to INIT_HCA: 128 random bits drawn once per module load
/// ([`draw_sw_owner_id`], from module init), as upstream's `mlx5_init` fills its
/// `sw_owner_id[4]` with `get_random_bytes` and hands the same value to every
/// function's INIT_HCA (main.c `mlx5_function_open`). The firmware uses it to tell
/// driver instances apart, so it must differ between loads and stay the same across
/// probes of one load.
static SW_OWNER_ID: [AtomicU32; 4] = [const { AtomicU32::new(0) }; 4];

/// Draws the software owner id. Called once from module init, before the PCI driver
/// is registered (so before any probe reads it).
pub(crate) fn draw_sw_owner_id() {
    let mut b = [0u8; 16];
    ffi::random_bytes(&mut b);
    for (w, c) in SW_OWNER_ID.iter().zip(b.chunks_exact(4)) {
        w.store(
            u32::from_ne_bytes([c[0], c[1], c[2], c[3]]),
            Ordering::Relaxed,
        );
    }
}

/// The software owner id of this module load.
fn sw_owner_id() -> [u8; 16] {
    let mut b = [0u8; 16];
    for (w, c) in SW_OWNER_ID.iter().zip(b.chunks_exact_mut(4)) {
        c.copy_from_slice(&w.load(Ordering::Relaxed).to_ne_bytes());
    }
    b
}

/// The driver type registered with the PCI core.
pub(crate) struct Mlx5Driver;

/// One bound ConnectX function: its bring-up stages, behind a lock so that the PCI
/// `shutdown` callback can run the normal unload itself when fast teardown is not
/// possible (the stages are then gone, and the later removal, if any, has nothing left
/// to undo).
#[pin_data(PinnedDrop)]
pub(crate) struct Mlx5Device<'bound> {
    info: &'bound FunctionInfo,
    /// The function's devlink instance: unregistered first at unbind, freed after the
    /// stages (it outlives their recovery).
    devlink: Arc<DevlinkStage>,
    /// The recovery work; stopped first when the device object is dropped and at
    /// shutdown.
    recovery: ffi::RecoveryHandle,
    /// Recoveries of this binding that succeeded (for the log).
    recoveries: AtomicU32,
    /// A PCI error's recovery is under way (from `error_detected` to `resume`): the
    /// recovery work and devlink's recover and reload keep off the function, which the
    /// PCI core unloads, resets and loads again.
    pci_error: AtomicBool,
    /// A sync reset's request was acked (the health poll stopped): RESET_NOW or
    /// RESET_ABORT is expected (upstream's `MLX5_FW_RESET_FLAGS_RESET_REQUESTED`).
    sync_requested: AtomicBool,
    /// A sync reset's RESET_NOW tore the function down and its reload has not run yet
    /// (the PCI reset runs without the device lock): the recovery work's other runs and
    /// devlink's recover and reload keep off.
    sync_busy: AtomicBool,
    /// `None` once a PCI shutdown unloaded the function, after a recovery failed or was
    /// refused, and between the two halves of a reload.
    ///
    /// Lock order: inside the device lock, which every holder has (bus callbacks, the
    /// recovery work, devlink's reload), and inside devlink's instance lock (a recovery
    /// decided on by devlink, a reload); before every other lock of the function. The
    /// shutdown callback holds it across fast teardown and stopping the health poll, a
    /// recovery or a reload across the whole unload and bring-up
    /// (Documentation/architecture.md, "Lock order").
    #[pin]
    stages: Mutex<Option<KBox<Stages<'bound>>>>,
}

/// The bring-up stages of one function.
///
/// INVARIANT: field order is teardown order (see module doc).
struct Stages<'bound> {
    pdev: &'bound pci::Device,
    info: &'bound FunctionInfo,
    // What the function offers for sync resets (plain data).
    sync: SyncCaps,
    // Detached first: the devlink instance never reads a torn-down function.
    _devlink: Attachment,
    // The last stage: unregistered first (in `unload`, before the health poll stops),
    // while every command still works. `None` when the provider did not register.
    #[cfg(CONFIG_MLX5_RS_INFINIBAND)]
    ib: Option<crate::ib::IbStage>,
    // The clock and its info page (after the IB device, which maps the page, is gone).
    _clock: Option<ClockStage>,
    // Stopped first: no health check runs while the function is torn down.
    _health: HealthStage,
    // Shared with the health poll, the stages and the shutdown callback; the IB
    // provider adds its fatal-error consumer here.
    _life: Arc<Lifecycle>,
    _debugfs: DebugFs,
    // EQs destroyed and IRQs freed before TEARDOWN_HCA.
    _events: Events<'bound>,
    _hca: InitializedHca,
    // Parks the pages of a dead or fast-torn-down device until `_free_after_stop`.
    _reclaim: ReclaimStage,
    pages: Arc<FwPages>,
    _enabled_hca: EnabledHca,
    // Bus mastering goes off before the command queue and any parked mailboxes are
    // freed: after this point the device cannot DMA into them, even if a command
    // never completed.
    _pci: ffi::PciEnabled<'bound>,
    // Frees parked pages: bus mastering is off by now.
    _free_after_stop: FreeAfterStop,
    // Dropped last: the command queue (in `Hw`) outlives bus mastering.
    _hw: Arc<Hw>,
}

/// What bring-up read that the IB stage is given ([`Stages::add_ib`]).
#[cfg(CONFIG_MLX5_RS_INFINIBAND)]
struct IbInputs {
    /// The current general caps.
    caps: KBox<GeneralCaps>,
    /// The atomic caps, `None` without atomics.
    atomic: Option<AtomicCaps>,
    /// The firmware version.
    fw: crate::init_seg_io::FwVersion,
    /// QUERY_ADAPTER's board id.
    board_id: [u8; 16],
    /// devlink's `enable_rdma` driverinit parameter.
    enable_rdma: bool,
}
/// Without the provider, nothing.
#[cfg(not(CONFIG_MLX5_RS_INFINIBAND))]
type IbInputs = ();

impl pci::Driver for Mlx5Driver {
    type IdInfo = FunctionInfo;
    type Data<'bound> = Mlx5Device<'bound>;

    const ID_TABLE: pci::IdTable<Self::IdInfo> = crate::pci_ids::ID_TABLE;

    fn probe<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        info: Option<&'bound Self::IdInfo>,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        // The recovery work first: the devlink instance queues it (`fw_fatal`) and runs
        // it (`health recover`, `dev reload`).
        let armed = ffi::RecoveryHandle::new::<Mlx5Driver>(pdev);
        // As upstream's `devlink_alloc` before the bring-up and `devl_register` after
        // it; a failed probe frees the instance, never registered.
        let devlink = armed
            .as_ref()
            .map_err(|e| *e)
            .and_then(|r| DevlinkStage::new(pdev, r.work().clone()));
        let stages = devlink
            .as_ref()
            .map_err(|e| *e)
            .and_then(|dl| Stages::bring_up(pdev, info, dl, BringUp::Probe));
        pin_init::pin_init_scope(move || {
            let recovery = armed?;
            let devlink = devlink?;
            let stages = stages?;
            let info = stages.info;
            devlink.register(info.is_vf, stages.sync.mfrl)?;
            // For a PCI error's slot reset (upstream's probe ends with it too).
            ffi::pci_save_state(pdev);
            Ok(try_pin_init!(Mlx5Device {
                info,
                devlink,
                recovery,
                recoveries: AtomicU32::new(0),
                pci_error: AtomicBool::new(false),
                sync_requested: AtomicBool::new(false),
                sync_busy: AtomicBool::new(false),
                stages <- new_mutex!(Some(stages)),
            }? Error))
        })
    }

    fn unbind<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&Self::Data<'bound>>) {
        match this.stages.lock().as_ref() {
            Some(s) => dev_info!(
                pdev,
                "{}: unbinding; {} firmware pages held\n",
                this.info.name,
                s.pages.counts().held
            ),
            None => dev_info!(
                pdev,
                "{}: unbinding; already unloaded at shutdown\n",
                this.info.name
            ),
        }
    }
}

#[pinned_drop]
impl PinnedDrop for Mlx5Device<'_> {
    fn drop(self: Pin<&mut Self>) {
        // Before the stages: no recovery runs or starts while they are undone (the
        // device lock is held here, so a recovery is at most waiting for it, and gives
        // up, as does a user's `devlink health recover` trying it under devlink's
        // instance lock, which the unregistration below waits for).
        self.recovery.stop();
        // As upstream's remove: no devlink request or report runs during the teardown.
        self.devlink.unregister();
        let stages = self.stages.lock().take();
        if let Some(s) = stages {
            Stages::unload(s);
        }
    }
}

/// Why [`Stages::bring_up`] runs.
#[derive(Clone, Copy)]
enum BringUp<'a> {
    /// At probe.
    Probe,
    /// In a recovery: the firmware is waited for first, and `stop` ends every wait (the
    /// function is being removed). With `sw_reset`, the firmware reset its fatal state
    /// asks for comes first ([`health::error_sw_reset`]: the function was unloaded
    /// without it, after a recovery devlink refused or one that failed).
    Recovery {
        stop: &'a dyn Fn() -> bool,
        sw_reset: bool,
    },
    /// The up half of devlink's reload: as at probe, `stop` ends every wait.
    Reload { stop: &'a dyn Fn() -> bool },
}

/// What a function offers for sync resets, read at bring-up.
#[derive(Clone, Copy, Debug, Default)]
struct SyncCaps {
    /// MCAM offers MFRL (upstream's `mlx5_fw_reset_init`: the devlink parameter, the
    /// sync-reset events).
    mfrl: bool,
    /// The function takes part: MFRL, cap `general_notification_event` (GENERAL_EVENT
    /// subscribed) and `pci_sync_for_fw_update_event` set by SET_HCA_CAP.
    on: bool,
    /// Cap `fast_teardown`.
    fast_teardown: bool,
    /// Cap `pcie_reset_using_hotreset_method` set by SET_HCA_CAP.
    hotreset: bool,
}

/// The async EQ's sync-reset events, queued on the function's recovery work (upstream's
/// `fw_reset_event_notifier` queues its work items the same way).
struct SyncEvents(Arc<ffi::RecoveryWork>);

impl SyncResetHandler for SyncEvents {
    fn sync_reset(&self, state: SyncRst) {
        let ev = match state {
            SyncRst::Request => ffi::SyncEvent::Request,
            SyncRst::Now => ffi::SyncEvent::Now,
            SyncRst::Abort => ffi::SyncEvent::Abort,
            // The flow with driver unload is only raised with cap
            // `pci_sync_for_fw_update_with_driver_unload`, which the driver leaves 0
            // (the EQ logged the event).
            SyncRst::Unload => return,
        };
        // Already queued: that run takes it.
        let _ = self.0.queue_sync(ev);
    }
}

/// Why a recovery runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecoverWhy {
    /// A fatal error: devlink's `fw_fatal` reporter decided on it within the report
    /// ([`Mlx5Device::on_fatal`]).
    Fatal,
    /// A user's `devlink health recover`.
    Request,
}

impl<'bound> Stages<'bound> {
    /// The normal unload: every stage undone in field order (see the module doc).
    fn unload(
        #[cfg_attr(
            not(CONFIG_MLX5_RS_INFINIBAND),
            expect(unused_mut, reason = "only the IB stage is taken out first")
        )]
        mut this: KBox<Self>,
    ) {
        dev_info!(this.pdev, "{}: tearing down\n", this.info.name);
        // The IB device goes first: its clients may still send commands.
        #[cfg(CONFIG_MLX5_RS_INFINIBAND)]
        drop(this.ib.take());
        // The fields drop after this. The health poll stops before anything is torn
        // down (dropping the stage again later is a no-op). With `fast_unload`,
        // `InitializedHca` tries fast teardown where TEARDOWN_HCA would go (after the
        // EQs are destroyed).
        this._health.stop();
    }

    /// Brings the function up: the core's stages, then the IB provider
    /// ([`Self::add_ib`]). The provider's registration runs the RDMA core's clients on
    /// this stack (the MAD layer creates its QPs through the provider, down to a
    /// command and its DMA allocations), so it starts from this small frame, not from
    /// the one that held every stage's bring-up values. A failure drops the stages
    /// (boxed) in field order, the teardown order.
    fn bring_up(
        pdev: &'bound pci::Device<Core<'_>>,
        info: Option<&'bound FunctionInfo>,
        devlink: &Arc<DevlinkStage>,
        mode: BringUp<'_>,
    ) -> Result<KBox<Self>> {
        #[cfg_attr(
            not(CONFIG_MLX5_RS_INFINIBAND),
            expect(unused_mut, reason = "only the IB stage is added afterwards")
        )]
        let (mut stages, ib_in) = Self::bring_up_core(pdev, info, devlink, mode)?;
        #[cfg(CONFIG_MLX5_RS_INFINIBAND)]
        stages.add_ib(pdev, &ib_in)?;
        #[cfg(not(CONFIG_MLX5_RS_INFINIBAND))]
        let () = ib_in;
        Ok(stages)
    }

    /// Every stage but the IB provider's (`ib` is `None`), and what that one is given.
    #[inline(never)]
    fn bring_up_core(
        pdev: &'bound pci::Device<Core<'_>>,
        info: Option<&'bound FunctionInfo>,
        devlink: &Arc<DevlinkStage>,
        mode: BringUp<'_>,
    ) -> Result<(KBox<Self>, IbInputs)> {
        // Every entry of the ID table carries info; a missing one is reported, not unwrapped.
        let info = info.ok_or(ENODEV)?;
        // Boxed, written in place at the end: the stages are moved as a pointer through
        // the probe (whose initializer the PCI core's probe callback holds on its
        // stack, under which the IB provider registers) and the recovery paths.
        let room = KBox::<Self>::new_uninit(GFP_KERNEL)?;
        let dev: &device::Device<device::Bound> = pdev.as_ref();
        // Dropped after `pci_on` on every path: parked pages are freed only once bus
        // mastering is off.
        let parked = ParkedPages::new()?;
        let free_after_stop = FreeAfterStop::new(dev, parked.clone());
        let pci_on = ffi::PciEnabled::new(pdev)?;
        // SAFETY: no DMA mapping exists yet for this device, so changing the mask is sound.
        unsafe { pdev.dma_set_mask_and_coherent(dma::DmaMask::new::<64>())? };
        // DMA segments up to 2 GiB, as upstream `set_dma_caps`: pinned user memory is
        // then mapped in few scatterlist entries (the PCI default is 64 KiB).
        // SAFETY: no DMA mapping or allocation exists yet for this device.
        unsafe { pdev.dma_set_max_seg_size(2 << 30) };

        let bar = crate::init_seg_io::Bar0::new(pdev, 0, c"mlx5_rs/bar0")?;
        let is = InitSeg::new(&bar);
        let (pre_init, brk) = match mode {
            BringUp::Probe => (FW_PRE_INIT_TIMEOUT, &(|| false) as &dyn Fn() -> bool),
            BringUp::Recovery { stop, sw_reset } => {
                if sw_reset {
                    health::error_sw_reset(pdev, &is, stop);
                }
                Self::wait_vital(pdev, &is, stop)?;
                (FW_PRE_INIT_ON_RECOVERY_TIMEOUT, stop)
            }
            BringUp::Reload { stop } => (FW_PRE_INIT_TIMEOUT, stop),
        };
        // Nothing but `initializing` is read before the firmware cleared it: upstream's
        // `mlx5_function_enable` (main.c) waits ("pre-initializing", FW_PRE_INIT_TIMEOUT
        // 120 s) before `mlx5_cmd_enable` reads the command-interface revision and the
        // queue geometry, then reads the init-segment timeouts
        // (`mlx5_tout_query_iseg`) and waits again with the FW_INIT budget.
        crate::init_seg_io::wait_fw_ready(&is, pdev, pre_init, "pre-initializing", brk)?;
        let fw = is.fw_version()?;
        let cmdif = is.cmdif_revision()?;
        dev_info!(
            pdev,
            "{}{}: firmware {}, command interface revision {}\n",
            info.name,
            if info.is_vf { " (VF)" } else { "" },
            fw,
            cmdif
        );
        if cmdif != seg::CMD_IF_REV {
            dev_err!(
                pdev,
                "unsupported command interface revision {} (driver supports {}); not binding\n",
                cmdif,
                seg::CMD_IF_REV
            );
            return Err(EOPNOTSUPP);
        }
        let mut timeouts = Timeouts::new();
        timeouts.apply_init_seg(is.read(seg::CMD_Q_INIT_TO)?, is.read(seg::CMD_EXEC_TO)?);
        let fw_init_ms = if timeouts.device_supported() {
            timeouts.get(crate::cmd::timeout::Tout::FwInit)
        } else {
            FW_INIT_TIMEOUT_DEFAULT_MS
        };

        let hw = Hw::new(pdev, bar, timeouts)?;
        let is = hw.as_ref();
        let fw_init = Delta::from_millis(i64::try_from(fw_init_ms).unwrap_or(i64::MAX));
        crate::init_seg_io::wait_fw_ready(is, pdev, fw_init, "initializing", brk)?;
        let embedded_cpu = seg::reg::EMBEDDED_CPU.get(is.read(seg::reg::EMBEDDED_CPU.off)?);

        let life = Lifecycle::new(dev, hw.clone())?;
        let enabled_hca = EnabledHca::new(&life, embedded_cpu)?;
        // The health poll runs from right after ENABLE_HCA, as upstream's
        // `mlx5_function_enable` starts it (main.c): a fatal error during the rest of
        // bring-up marks the device dead, so every later command fails at once instead
        // of each costing a command timeout. Dropped (stopped) when the probe unwinds,
        // after the pages and before DISABLE_HCA, as `mlx5_function_disable` orders it.
        let health =
            HealthStage::start(life.clone(), crate::health_poll_ms(), Some(devlink.clone()))?;
        Self::set_issi(pdev, &hw)?;

        let pages = FwPages::new(dev, hw.clone(), embedded_cpu)?;
        let reclaim = ReclaimStage::new(life.clone(), parked, pages.clone());
        Self::supply(pdev, &hw, &pages, query_pages_op_mod::BOOT, "boot")?;

        let caps = Self::negotiate_caps(&hw)?;
        let atomic = Self::atomic_caps(&hw, &caps)?;
        let uar_geom = UarGeom::from_caps(&caps, kernel::page::PAGE_SHIFT as u32).map_err(|e| {
            dev_err!(
                pdev,
                "UAR geometry unusable with {} KiB pages ({:?}); not binding\n",
                kernel::page::PAGE_SIZE / 1024,
                e
            );
            EOPNOTSUPP
        })?;

        Self::supply(pdev, &hw, &pages, query_pages_op_mod::INIT, "init")?;
        let owner_id = sw_owner_id();
        let owner = if caps.get(gen_cap::SW_OWNER_ID) {
            Some(&owner_id)
        } else {
            None
        };
        let teardown = FastTeardown::new(
            life.clone(),
            TeardownCaps {
                fast: caps.get(gen_cap::FAST_TEARDOWN),
                force: caps.get(gen_cap::FORCE_TEARDOWN),
            },
        );
        let hca = InitializedHca::new(teardown, owner, crate::fast_unload())?;

        if caps.get(gen_cap::DRIVER_VERSION) {
            // Informational only: a failure is logged by the command layer and ignored.
            let _ = hw.exec_cmd(SetDriverVersion { version: "0.1.0" });
        }
        let board_raw = hw.run(QueryBoardId)?;
        let board_len = board_raw
            .iter()
            .position(|b| *b == 0)
            .unwrap_or(board_raw.len());
        let board = core::str::from_utf8(&board_raw[..board_len]).unwrap_or("?");
        dev_info!(
            pdev,
            "{} ready: firmware {}, board {}, {} port(s), port type {}, log_max_qp {}, log_max_cq {}, {} firmware pages\n",
            info.name,
            fw,
            board,
            caps.get(gen_cap::NUM_PORTS),
            match caps.get(gen_cap::PORT_TYPE) { 0 => "IB", 1 => "Ethernet", _ => "?" },
            caps.get(gen_cap::LOG_MAX_QP),
            caps.get(gen_cap::LOG_MAX_CQ),
            pages.counts().held
        );

        let max_eqs = match caps.get(gen_cap::MAX_NUM_EQS) {
            // log_max_eq is 4 bits wide: at most 1 << 15.
            0 => 1u32 << caps.get(gen_cap::LOG_MAX_EQ),
            n => u32::from(n),
        };
        // The driverinit parameters (defaults until a devlink reload applies others).
        let init = devlink.driverinit();
        let eq_caps = EqCaps {
            async_nent: init.event_eq_size,
            comp_nent: init.io_eq_size,
            num_ports: caps.get(gen_cap::NUM_PORTS),
            log_max_cq: caps.get(gen_cap::LOG_MAX_CQ),
            max_eqs,
            uar_geom,
        };
        // MCAM's MFRL, as upstream's `mlx5_fw_reset_init` checks it (read with cap
        // `mcam_reg`; a failed read, logged by the command layer, means none).
        let mfrl = caps.get(gen_cap::MCAM_REG) && hw.run(QueryMcamMfrl).unwrap_or(false);
        let sync = SyncCaps {
            mfrl,
            on: mfrl
                && caps.get(gen_cap::GENERAL_NOTIFICATION_EVENT)
                && caps.get(gen_cap::PCI_SYNC_FOR_FW_UPDATE_EVENT),
            fast_teardown: caps.get(gen_cap::FAST_TEARDOWN),
            hotreset: caps.get(gen_cap::PCIE_RESET_USING_HOTRESET_METHOD),
        };
        let sync_events: Option<Arc<dyn SyncResetHandler>> = if sync.on {
            Some(Arc::new(
                SyncEvents(devlink.recovery().clone()),
                GFP_KERNEL,
            )?)
        } else {
            None
        };
        let page_work = PageWork::new(pdev.as_ref(), pages.clone())?;
        let events = Events::new(pdev, hw.clone(), page_work, &eq_caps, sync_events)?;
        let debugfs = DebugFs::new(dev.name(), hw.clone(), pages.clone(), events.info())?;
        // The clock, as upstream's `mlx5_init_clock` in `mlx5_load`: a device that cannot
        // keep one loses only the clock info page (warned), as upstream.
        let clock = match ClockStage::start(life.clone(), caps.get(gen_cap::DEVICE_FREQUENCY_KHZ)) {
            Ok(c) => c,
            Err(e) => {
                dev_warn!(pdev, "no device clock ({:?}): no clock info page\n", e);
                None
            }
        };
        #[cfg(not(CONFIG_MLX5_RS_INFINIBAND))]
        let _ = atomic;
        #[cfg(not(CONFIG_MLX5_RS_INFINIBAND))]
        life.add_consumer(crate::health::ib_placeholder_consumer()?)?;
        #[cfg(CONFIG_MLX5_RS_INFINIBAND)]
        let ib_in = IbInputs {
            caps,
            atomic,
            fw,
            board_id: board_raw,
            enable_rdma: init.enable_rdma != 0,
        };
        #[cfg(not(CONFIG_MLX5_RS_INFINIBAND))]
        let ib_in = ();
        // Attached before the IB provider registers (the function's core is up; the
        // instance's reads are the health buffer and QUERY_ADAPTER's answers); detached
        // first at teardown (field order).
        let devlink = devlink.attach(
            hw.clone(),
            DevlinkInfo::new(&board_raw, (fw.major, fw.minor, fw.subminor), !info.is_vf),
        );
        let stages = KBox::write(
            room,
            Self {
                #[cfg(CONFIG_MLX5_RS_INFINIBAND)]
                ib: None,
                pdev,
                info,
                sync,
                _devlink: devlink,
                _clock: clock,
                _health: health,
                _life: life,
                _debugfs: debugfs,
                _events: events,
                _hca: hca,
                _reclaim: reclaim,
                pages,
                _enabled_hca: enabled_hca,
                _pci: pci_on,
                _free_after_stop: free_after_stop,
                _hw: hw,
            },
        );
        Ok((stages, ib_in))
    }

    /// The last stage, the IB provider. One that cannot register leaves the core bound
    /// (as upstream mlx5_core stays bound when mlx5_ib fails to probe). devlink's
    /// `enable_rdma` false leaves it out, as upstream's `is_ib_enabled` does.
    ///
    /// # Errors
    ///
    /// Only the core's: the EQ stage's CQ access, or adding the placeholder fatal-error
    /// consumer that stands for a provider not registered.
    #[cfg(CONFIG_MLX5_RS_INFINIBAND)]
    fn add_ib(&mut self, pdev: &pci::Device<Core<'_>>, ib_in: &IbInputs) -> Result {
        let info = self.info;
        let life = &self._life;
        if !ib_in.enable_rdma {
            dev_info!(
                pdev,
                "{}: devlink enable_rdma is false: no IB device\n",
                info.name
            );
            return life.add_consumer(crate::health::ib_placeholder_consumer()?);
        }
        let events = &self._events;
        let core = crate::ib::IbCore {
            hw: &self._hw,
            caps: &ib_in.caps,
            atomic: ib_in.atomic,
            fw: ib_in.fw,
            board_id: &ib_in.board_id,
            comp_vectors: events.comp_eqs(),
            is_vf: info.is_vf,
            port_events: events.port_events(),
            life,
            cq: events.cq_access()?,
            rscs: events.rsc_table(),
            clock: self._clock.as_ref().map(ClockStage::page),
        };
        match crate::ib::IbStage::new(pdev, core) {
            Ok(s) => {
                self.ib = Some(s);
                Ok(())
            }
            Err(e) => {
                dev_err!(
                    pdev,
                    "InfiniBand provider not registered ({:?}); the core stays bound without an IB device\n",
                    e
                );
                life.add_consumer(crate::health::ib_placeholder_consumer()?)
            }
        }
    }

    /// The first half of a recovery: the firmware reset a dead function's fatal state
    /// asks for ([`health::error_sw_reset`], while the BAR is still mapped), then the
    /// normal unload (which, for a dead function, sends no command and frees its pages
    /// once bus mastering is off). A function that is not dead (a requested recovery)
    /// is unloaded normally, without a reset, as upstream's `mlx5_error_sw_reset` does
    /// nothing outside the error state.
    fn recover_down(this: KBox<Self>, stop: &dyn Fn() -> bool) {
        if this._life.mode() == Mode::Dead {
            health::error_sw_reset(this.pdev, this._hw.as_ref(), stop);
        }
        Self::unload(this);
    }

    /// After the function was unloaded in a recovery, on the BAR mapped again: waits
    /// while the PCI reads are all ones (upstream `mlx5_health_wait_pci_up`, up to
    /// FW_RESET), then for the health counter to move (upstream `wait_vital`, 100 reads
    /// 50 ms apart): the firmware runs again. `stop` gives up (the function is being
    /// removed).
    fn wait_vital(pdev: &pci::Device, is: &InitSeg<'_, '_>, stop: &dyn Fn() -> bool) -> Result {
        let start = Instant::<Monotonic>::now();
        let pause = Delta::from_millis(recover::VITAL_PERIOD_MS as i64);
        loop {
            let v = is.read(seg::HEALTH_COUNTER)?;
            if v != u32::MAX {
                break;
            }
            if stop() {
                return Err(ECANCELED);
            }
            if start.elapsed().as_millis() > recover::PCI_UP_BUDGET_MS as i64 {
                dev_err!(
                    pdev,
                    "recovery: PCI reads still all ones after {} ms\n",
                    recover::PCI_UP_BUDGET_MS
                );
                return Err(EIO);
            }
            kernel::time::delay::fsleep(Delta::from_millis(100));
        }
        let mut vital = Vital::new();
        loop {
            let count = is.read(seg::HEALTH_COUNTER)?;
            match vital.step(count) {
                VitalStep::Alive => {
                    dev_info!(
                        pdev,
                        "wait vital counter value 0x{:x} after {} iterations\n",
                        count,
                        vital.reads()
                    );
                    return Ok(());
                }
                VitalStep::TimedOut => {
                    dev_err!(
                        pdev,
                        "recovery: wait vital failed: the health counter did not move in {} reads {} ms apart (firmware not running)\n",
                        vital.reads(),
                        recover::VITAL_PERIOD_MS
                    );
                    return Err(ETIMEDOUT);
                }
                VitalStep::Wait if stop() => return Err(ECANCELED),
                VitalStep::Wait => kernel::time::delay::fsleep(pause),
            }
        }
    }

    /// The general caps this driver runs with: the device's maximum and current
    /// ones read, our choices set (SET_HCA_CAP), the current ones read back. Out of
    /// line and boxed: the 256-byte copies stay off the probe's frame, below which the
    /// IB provider registers.
    #[inline(never)]
    fn negotiate_caps(hw: &Hw) -> Result<KBox<GeneralCaps>> {
        let max = hw.run(QueryGeneralCaps { current: false })?;
        let mut cur = hw.run(QueryGeneralCaps { current: true })?;
        // Our choices (see Documentation/architecture.md): 128-entry pkey table,
        // log_max_qp 18 capped by the device, no command checksums, UARs as upstream's
        // `handle_hca_cap` sets them (4 KiB UARs when pages are larger and the device
        // can, UAR pages of the system page size: eq/uar.rs), release-all-pages when
        // the device offers it.
        // Every value fits its field (the typed setters only fail for a wider value).
        let uar =
            uar::choose(kernel::page::PAGE_SHIFT as u32, max.get(gen_cap::UAR_4K)).ok_or(EINVAL)?;
        let choose = |cur: &mut GeneralCaps| -> Result<(), Overflow> {
            cur.set(gen_cap::PKEY_TABLE_SIZE, 0)?;
            cur.set(
                gen_cap::LOG_MAX_QP,
                LOG_MAX_QP.min(max.get(gen_cap::LOG_MAX_QP)),
            )?;
            cur.set(gen_cap::CMDIF_CHECKSUM, 0)?;
            if uar.uar_4k {
                cur.set(gen_cap::UAR_4K, true)?;
            }
            cur.set(gen_cap::LOG_UAR_PAGE_SZ, uar.log_uar_page_sz)?;
            if max.get(gen_cap::RELEASE_ALL_PAGES) {
                cur.set(gen_cap::RELEASE_ALL_PAGES, true)?;
            }
            // Sync reset, as upstream's `handle_hca_cap`: the function takes part in the
            // negotiation, and the PCI reset may be the hot reset. Not the flow with
            // driver unload (this driver does not do it).
            if max.get(gen_cap::PCI_SYNC_FOR_FW_UPDATE_EVENT) {
                cur.set(gen_cap::PCI_SYNC_FOR_FW_UPDATE_EVENT, true)?;
            }
            if max.get(gen_cap::PCIE_RESET_USING_HOTRESET_METHOD) {
                cur.set(gen_cap::PCIE_RESET_USING_HOTRESET_METHOD, true)?;
            }
            Ok(())
        };
        choose(&mut cur).map_err(|_| EINVAL)?;
        hw.run(SetGeneralCaps(&cur))?;
        Ok(KBox::new(
            hw.run(QueryGeneralCaps { current: true })?,
            GFP_KERNEL,
        )?)
    }

    /// The atomic caps, as upstream `handle_hca_cap_atomic` (mlx5_core main.c) reads
    /// and sets them: with general cap `atomic`, QUERY_HCA_CAP of the ATOMIC page;
    /// when the requester can work in host endianness, SET_HCA_CAP asking for it and
    /// the page read again (upstream re-reads it with `mlx5_query_hca_caps`). `None`
    /// without cap `atomic` (no atomics).
    fn atomic_caps(hw: &Hw, caps: &GeneralCaps) -> Result<Option<AtomicCaps>> {
        if !caps.get(gen_cap::ATOMIC) {
            return Ok(None);
        }
        let a = hw.run(QueryAtomicCaps { current: true })?;
        if !a.host_endianness_supported {
            return Ok(Some(a));
        }
        hw.run(SetAtomicCaps {
            req_8b_endianness_mode: ATOMIC_REQ_MODE_HOST_ENDIANNESS,
        })?;
        Ok(Some(hw.run(QueryAtomicCaps { current: true })?))
    }

    /// QUERY_ISSI / SET_ISSI: ISSI 1 when offered, else stay at 0; anything else is
    /// a device this driver cannot talk to.
    fn set_issi(pdev: &pci::Device, hw: &Hw) -> Result {
        // A status from the firmware (not a transport failure) means "ISSI 0".
        let supported = match hw.exec_cmd(QueryIssi) {
            Ok(bits) => Some(bits),
            Err(e) if e.status_raw().is_some() => None,
            Err(e) => return Err(e.errno().into()),
        };
        match supported {
            Some(bits) if bits & 0b10 != 0 => hw.run(SetIssi { issi: 1 }),
            None => Ok(()),
            Some(bits) if bits & 0b01 != 0 => Ok(()),
            Some(bits) => {
                dev_err!(
                    pdev,
                    "device supports none of ISSI 0 and 1 (supported_issi 0x{:08x}); not binding\n",
                    bits
                );
                Err(EOPNOTSUPP)
            }
        }
    }

    /// QUERY_PAGES(`op_mod`) then MANAGE_PAGES give of what the device asks for.
    fn supply(pdev: &pci::Device, hw: &Hw, pages: &FwPages, op_mod: u16, what: &str) -> Result {
        let n = hw.run(QueryPages {
            op_mod,
            embedded_cpu: pages.function().1,
        })?;
        if n < 0 {
            dev_err!(
                pdev,
                "device asks to return {} {} pages at bring-up; not supported\n",
                -i64::from(n),
                what
            );
            return Err(EPROTO);
        }
        if n > 0 {
            pages.give(u64::try_from(n).map_err(|_| EINVAL)?, Supply::Startup)?;
        }
        Ok(())
    }
}

impl<'bound> Mlx5Device<'bound> {
    /// The recovery work after a fatal error, with the device lock held (upstream's
    /// `mlx5_fw_fatal_reporter_err_work`): reports it to devlink's `fw_fatal`, which
    /// stores the dump and decides on the recovery ([`Mlx5Device::recover`], run within
    /// the report). Refused (grace period, previous recovery failed): the function is
    /// unloaded. Without a `fw_fatal` reporter: recovered anyway, as upstream does.
    ///
    /// # Errors
    ///
    /// `ECANCELED` refused, else the recovery's error.
    fn on_fatal(&self, pdev: &'bound pci::Device<Core<'_>>) -> Result {
        let name = self.info.name;
        // Queued before a PCI error's recovery loaded the function again: that
        // function is not the one that died.
        if matches!(self.stages.lock().as_ref(), Some(s) if s._life.mode() == Mode::Running) {
            dev_info!(
                pdev,
                "{}: recovery: the function runs (reloaded since the fatal error): nothing to recover\n",
                name
            );
            return Ok(());
        }
        let decided = core::cell::Cell::new(false);
        let r = self.devlink.report_fatal(&|| {
            decided.set(true);
            self.recover(pdev, RecoverWhy::Fatal)
        });
        match r {
            Err(e) if e == ENOENT => {
                dev_err!(
                    pdev,
                    "{}: no devlink fw_fatal reporter: recovering without it\n",
                    name
                );
                self.recover(pdev, RecoverWhy::Fatal)
            }
            Err(e) if e == ECANCELED => {
                dev_err!(
                    pdev,
                    "{}: recovery refused by devlink's fw_fatal reporter (within its grace period, or its last recovery failed). Driver is in error state. Unloading\n",
                    name
                );
                self.unload(pdev);
                Err(e)
            }
            Ok(()) if !decided.get() => {
                dev_err!(
                    pdev,
                    "{}: automatic recovery off (devlink fw_fatal auto_recover false): the function stays in error state until devlink health recover or dev reload\n",
                    name
                );
                Ok(())
            }
            // Recovered, or failed (logged by `recover`).
            r => r,
        }
    }

    /// Recovers the function now: unload every stage left, reset the firmware where
    /// the fatal state asks for it, wait for the firmware, bring the function up again
    /// (module doc, "Recovery"). `pdev` in the core context: the caller holds the
    /// device lock. A requested recovery of a function left unloaded (a recovery that
    /// failed or was refused) brings it up again.
    ///
    /// # Errors
    ///
    /// `ENODEV` after a fatal error with no function loaded, else the error of the
    /// stage or wait that failed (the function is then left without any stage).
    pub(crate) fn recover(&self, pdev: &'bound pci::Device<Core<'_>>, why: RecoverWhy) -> Result {
        let name = self.info.name;
        let mut g = self.stages.lock();
        let old = g.take();
        if old.is_none() && why == RecoverWhy::Fatal {
            dev_err!(
                pdev,
                "{}: recovery: no function loaded (a previous recovery failed, or shut down)\n",
                name
            );
            return Err(ENODEV);
        }
        let start = Instant::<Monotonic>::now();
        let work = self.recovery.work();
        let stop = || work.stopping() || crate::exiting();
        dev_err!(
            pdev,
            "{}: starting health recovery flow ({:?})\n",
            name,
            why
        );
        let sw_reset = old.is_none();
        if let Some(s) = old {
            Stages::recover_down(s, &stop);
        }
        let r = Stages::bring_up(
            pdev,
            Some(self.info),
            &self.devlink,
            BringUp::Recovery {
                stop: &stop,
                sw_reset,
            },
        );
        let ms = start.elapsed().as_millis();
        match r {
            Ok(s) => {
                *g = Some(s);
                let count = self.recoveries.fetch_add(1, Ordering::Relaxed) + 1;
                dev_info!(
                    pdev,
                    "{}: health recovery succeeded in {} ms ({} recoveries of this binding)\n",
                    name,
                    ms,
                    count
                );
                Ok(())
            }
            Err(e) => {
                dev_err!(
                    pdev,
                    "{}: health recovery failed after {} ms ({:?}): the function stays unloaded; devlink health recover, dev reload, or unbind and bind again\n",
                    name,
                    ms,
                    e
                );
                Err(e)
            }
        }
    }

    /// Unloads the function's software state and keeps the binding (the down half of
    /// devlink's reload; a recovery devlink refused). The caller holds the device lock.
    fn unload(&self, pdev: &'bound pci::Device<Core<'_>>) {
        let s = self.stages.lock().take();
        match s {
            Some(s) => Stages::unload(s),
            None => dev_info!(pdev, "{}: unload: nothing loaded\n", self.info.name),
        }
    }

    /// Loads the function again after [`Mlx5Device::unload`] (the up half of devlink's
    /// reload), through the probe's bring-up; nothing when it is loaded. The caller
    /// holds the device lock.
    ///
    /// # Errors
    ///
    /// The error of the stage that failed (the function then stays unloaded).
    fn load(&self, pdev: &'bound pci::Device<Core<'_>>) -> Result {
        let mut g = self.stages.lock();
        if g.is_some() {
            return Ok(());
        }
        let work = self.recovery.work();
        let stop = || work.stopping() || crate::exiting();
        let s = Stages::bring_up(
            pdev,
            Some(self.info),
            &self.devlink,
            BringUp::Reload { stop: &stop },
        )
        .inspect_err(|e| {
            dev_err!(
                pdev,
                "{}: load failed ({:?}): the function stays unloaded\n",
                self.info.name,
                e
            )
        })?;
        *g = Some(s);
        Ok(())
    }

    /// A PCI error (AER) was detected, as upstream's `mlx5_pci_err_detected`: the
    /// consumers are told (the IB device raises IB_EVENT_DEVICE_FATAL) and the stages
    /// unloaded; with the channel offline (frozen, permanent failure) the function is
    /// declared dead first (every command fails at once, no command at unload, pages
    /// freed once bus mastering is off), with I/O working (non-fatal) it unloads with
    /// its commands, as upstream does when its fatal sensors read nothing. Asks for a
    /// reset, or gives up on a permanent failure. The caller holds the device lock.
    fn pci_error_detected(
        &self,
        pdev: &'bound pci::Device<Core<'_>>,
        state: ffi::ChannelState,
    ) -> ffi::ErsResult {
        let name = self.info.name;
        self.pci_error.store(true, Ordering::Release);
        dev_err!(
            pdev,
            "{}: PCI error detected (channel {:?}): unloading the function\n",
            name,
            state
        );
        let s = self.stages.lock().take();
        let sensor = health::monitor::FatalSensor::PciErr;
        let cause = crate::lifecycle::FatalCause {
            code: sensor as u8,
            name: health::buffer::sensor_name(sensor),
        };
        match s {
            // I/O still works: upstream's fatal sensors read nothing, so it does not
            // enter the error state but still raises the system error (the IB device's
            // DEVICE_FATAL), skips the firmware reset and unloads with commands.
            Some(s) if state == ffi::ChannelState::Normal => {
                s._life.notify_fatal(cause);
                Stages::unload(s);
            }
            // The channel is offline: upstream's sensor PCI_ERR puts the function in
            // the error state (commands fail at once); its firmware reset stops waiting
            // at once ("PCI channel offline"); the unload sends no command.
            Some(s) => {
                s._life.declare_dead(cause);
                Stages::unload(s);
            }
            None => dev_info!(pdev, "{}: PCI error: nothing loaded\n", name),
        }
        let r = match state {
            ffi::ChannelState::PermFailure => ffi::ErsResult::Disconnect,
            ffi::ChannelState::Normal | ffi::ChannelState::Frozen => ffi::ErsResult::NeedReset,
        };
        dev_info!(
            pdev,
            "{}: PCI error detected: function unloaded, result {:?}\n",
            name,
            r
        );
        // A permanent failure ends the PCI core's error handling of this function (no
        // slot reset or resume follows: drivers/pci/pcie/err.c also reports it so when
        // a recovery failed): recovery requests are answered again, and refused while
        // the channel stays offline (`PciRecover::recover`).
        if r == ffi::ErsResult::Disconnect {
            self.pci_error.store(false, Ordering::Release);
        }
        r
    }

    /// The slot was reset, as upstream's `mlx5_pci_slot_reset`: the function enabled
    /// (memory, bus mastering) and the firmware waited for (`wait_vital`: the PCI reads
    /// back, the health counter moving). Recovered, or Disconnect when either fails
    /// (logged with the step and the error). The caller holds the device lock.
    fn pci_slot_reset(&self, pdev: &'bound pci::Device<Core<'_>>) -> ffi::ErsResult {
        let name = self.info.name;
        let work = self.recovery.work();
        let stop = || work.stopping() || crate::exiting();
        // The secondary bus reset cleared the function's BARs and command register:
        // upstream's `mlx5_pci_slot_reset` enables, sets bus mastering and restores the
        // state its probe saved.
        let r = ffi::PciEnabled::new(pdev)
            .inspect(|_| ffi::pci_restore_state(pdev))
            .inspect_err(|e| {
                dev_err!(
                    pdev,
                    "{}: PCI slot reset: enabling the function failed ({:?})\n",
                    name,
                    e
                )
            })
            .and_then(|_on| {
                let bar =
                    crate::init_seg_io::Bar0::new(pdev, 0, c"mlx5_rs/bar0").inspect_err(|e| {
                        dev_err!(
                            pdev,
                            "{}: PCI slot reset: mapping BAR0 failed ({:?})\n",
                            name,
                            e
                        )
                    })?;
                Stages::wait_vital(pdev, &InitSeg::new(&bar), &stop).inspect_err(|e| {
                    dev_err!(
                        pdev,
                        "{}: PCI slot reset: wait vital failed ({:?})\n",
                        name,
                        e
                    )
                })
            });
        let res = if r.is_ok() {
            ffi::ErsResult::Recovered
        } else {
            ffi::ErsResult::Disconnect
        };
        dev_info!(pdev, "{}: PCI slot reset: result {:?}\n", name, res);
        res
    }

    /// Loads the function again after a reset (a PCI error's, a sync reset's) into `g`
    /// when nothing is loaded there, through the recovery's bring-up: the firmware
    /// waited for (given up when the function is being removed), then every stage as at
    /// probe, ending with a new `mlx5_N`. `what` names the reset in the log. A failure
    /// is logged and leaves the function unloaded (devlink health recover, dev reload,
    /// or unbind and bind again). Returns whether it loaded.
    fn load_after_reset(
        &self,
        pdev: &'bound pci::Device<Core<'_>>,
        g: &mut Option<KBox<Stages<'bound>>>,
        what: &str,
    ) -> bool {
        if g.is_some() {
            return false;
        }
        let name = self.info.name;
        let start = Instant::<Monotonic>::now();
        let work = self.recovery.work();
        let stop = || work.stopping() || crate::exiting();
        match Stages::bring_up(
            pdev,
            Some(self.info),
            &self.devlink,
            BringUp::Recovery {
                stop: &stop,
                sw_reset: false,
            },
        ) {
            Ok(s) => {
                *g = Some(s);
                dev_info!(
                    pdev,
                    "{}: {}: function loaded again in {} ms\n",
                    name,
                    what,
                    start.elapsed().as_millis()
                );
                true
            }
            Err(e) => {
                dev_err!(
                    pdev,
                    "{}: {}: loading the function failed ({:?}): it stays unloaded; devlink health recover, dev reload, or unbind and bind again\n",
                    name,
                    what,
                    e
                );
                false
            }
        }
    }

    /// Recovery is over, as upstream's `mlx5_pci_resume`: the function is loaded again
    /// through the recovery's bring-up (the firmware waited for, then every stage as at
    /// probe, ending with a new `mlx5_N`). A failure is logged and leaves the function
    /// unloaded (devlink health recover, dev reload, or unbind and bind again). The
    /// caller holds the device lock.
    fn pci_resume(&self, pdev: &'bound pci::Device<Core<'_>>) {
        let loaded = self.load_after_reset(pdev, &mut self.stages.lock(), "PCI error recovery");
        // As upstream's `mlx5_pci_resume`: the fatal error this PCI error may have
        // reported is over (not under `stages`: devlink's locks come before it).
        if loaded {
            self.devlink.fatal_healthy();
        }
        self.pci_error.store(false, Ordering::Release);
    }

    /// System suspend, as upstream's `mlx5_suspend`: the function's software state is
    /// unloaded as devlink's reload unloads it (the IB device unregistered, the
    /// firmware's pages reclaimed, the HCA disabled, the PCI function disabled), so
    /// the firmware may lose power; the binding stays. The caller holds the device lock.
    fn pm_suspend(&self, pdev: &'bound pci::Device<Core<'_>>) {
        let start = Instant::<Monotonic>::now();
        dev_info!(
            pdev,
            "{}: suspend: unloading the function\n",
            self.info.name
        );
        self.unload(pdev);
        dev_info!(
            pdev,
            "{}: suspend: unloaded in {} ms\n",
            self.info.name,
            start.elapsed().as_millis()
        );
    }

    /// System resume, as upstream's `mlx5_resume`: the function is loaded again through
    /// the probe's bring-up (the firmware waited for, every stage, a new `mlx5_N`). The
    /// caller holds the device lock.
    ///
    /// # Errors
    ///
    /// The error of the stage that failed (logged; the function then stays unloaded:
    /// devlink health recover, dev reload, or unbind and bind again).
    fn pm_resume(&self, pdev: &'bound pci::Device<Core<'_>>) -> Result {
        let start = Instant::<Monotonic>::now();
        self.load(pdev)?;
        dev_info!(
            pdev,
            "{}: resume: function loaded again in {} ms\n",
            self.info.name,
            start.elapsed().as_millis()
        );
        Ok(())
    }

    /// A sync reset's RESET_REQUEST, as upstream's `mlx5_sync_reset_request_event`: the
    /// PCI reset method read from MFRL (with cap `pcie_reset_using_hotreset_method`),
    /// then ack (the health poll stopped first: the firmware will stop answering) or
    /// nack ([`sync_reset::answer`]) through an MFRL write. The caller holds the
    /// device lock.
    fn sync_request(&self, pdev: &'bound pci::Device<Core<'_>>) {
        let name = self.info.name;
        // Before the stages' lock: `DevlinkStage::dl` is ordered before it.
        let remote_reset_allowed = self.devlink.remote_reset_allowed();
        let g = self.stages.lock();
        let Some(s) = g.as_ref() else {
            // Nothing to answer with; the firmware's negotiation times out.
            dev_warn!(
                pdev,
                "{}: sync reset request: no function loaded, no answer\n",
                name
            );
            return;
        };
        let mfrl = if s.sync.hotreset {
            s._hw
                .run(QueryMfrl)
                .inspect_err(|e| dev_warn!(pdev, "Failed reading MFRL, err {:?}\n", e))
                .ok()
        } else {
            None
        };
        let ctx = RequestContext {
            remote_reset_allowed,
            running: s._life.mode() == Mode::Running,
            fast_teardown: s.sync.fast_teardown,
            hotreset_cap: s.sync.hotreset,
            has_bridge: ffi::pci_has_bridge(pdev),
            mfrl,
        };
        match sync_reset::answer(&ctx) {
            Answer::Ack { method } => {
                // As upstream's `mlx5_sync_reset_set_reset_requested`: no health poll
                // while the firmware resets (its nic_interface reads DISABLED).
                s._health.stop();
                self.sync_requested.store(true, Ordering::Release);
                match s._hw.run(AnswerMfrl { ack: true }) {
                    Ok(()) => dev_warn!(
                        pdev,
                        "PCI Sync FW Update Reset Ack. Device reset is expected. (method {})\n",
                        method
                    ),
                    Err(e) => {
                        dev_warn!(
                            pdev,
                            "PCI Sync FW Update Reset Ack Failed. Error code: {:?}\n",
                            e
                        );
                        // No RESET_NOW follows an answer the firmware did not take.
                        self.sync_requested.store(false, Ordering::Release);
                        s._health.resume();
                    }
                }
            }
            Answer::Nack(why) => {
                dev_info!(pdev, "{}: sync reset request refused: {:?}\n", name, why);
                let r = s._hw.run(AnswerMfrl { ack: false });
                dev_warn!(
                    pdev,
                    "PCI Sync FW Update Reset Nack {}\n",
                    if r.is_ok() { "Sent" } else { "Failed" }
                );
            }
        }
    }

    /// A sync reset's RESET_NOW, as upstream's `mlx5_sync_reset_now_event` up to its
    /// PCI reset: fast teardown (TEARDOWN_HCA prepare-fast, nic_interface DISABLED),
    /// the consumers told (IB_EVENT_DEVICE_FATAL), the stages unloaded (no command: the
    /// function is quiesced). `Ok`: the work resets the bus now, then runs
    /// [`Mlx5Device::sync_reload`]. The caller holds the device lock.
    ///
    /// # Errors
    ///
    /// `EALREADY` no request was acked; `ENODEV` nothing loaded; `EIO` the fast
    /// teardown failed (the function was then reloaded without a PCI reset, as
    /// upstream's reset work does).
    fn sync_now(&self, pdev: &'bound pci::Device<Core<'_>>) -> Result {
        let name = self.info.name;
        if !self.sync_requested.swap(false, Ordering::AcqRel) {
            dev_warn!(pdev, "Reset request was already cleared\n");
            return Err(EALREADY);
        }
        dev_warn!(pdev, "Sync Reset now. Device is going to reset.\n");
        let mut g = self.stages.lock();
        let Some(s) = g.take() else {
            dev_err!(pdev, "{}: sync reset now: no function loaded\n", name);
            return Err(ENODEV);
        };
        self.sync_busy.store(true, Ordering::Release);
        let path = s._hca.fast_teardown("sync reset");
        let cause = crate::lifecycle::FatalCause {
            code: 0,
            name: "sync reset",
        };
        s._life.notify_reset(cause);
        Stages::unload(s);
        if path != teardown::plan::Path::Fast {
            dev_warn!(
                pdev,
                "Fast teardown failed, no reset done, err {:?}\n",
                path
            );
            drop(g);
            self.sync_reload(pdev, EIO.to_errno());
            return Err(EIO);
        }
        Ok(())
    }

    /// After RESET_NOW's PCI reset (`reset`: 0 or the negative errno it failed with),
    /// as upstream's `mlx5_fw_reset_complete_reload` for a reset another host started:
    /// the function loaded again through the recovery's bring-up (PCI reads and the
    /// health counter waited for, every stage as at probe, a new `mlx5_N`), then devlink
    /// told of the remote reload (driver_reinit, fw_activate). The caller holds the
    /// device lock.
    fn sync_reload(&self, pdev: &'bound pci::Device<Core<'_>>, reset: i32) {
        let name = self.info.name;
        if reset != 0 {
            dev_warn!(
                pdev,
                "mlx5_sync_pci_reset failed, no reset done, err {}\n",
                reset
            );
        } else {
            dev_info!(
                pdev,
                "{}: sync reset: the bus below the bridge was reset\n",
                name
            );
        }
        let mut g = self.stages.lock();
        if self.pci_error.load(Ordering::Acquire) || ffi::pci_channel_offline(pdev) {
            // The PCI error's handling loads the function again, or leaves it unloaded.
            dev_warn!(
                pdev,
                "{}: sync reset: a PCI error is being handled or left the channel offline; the function is not loaded here\n",
                name
            );
        } else {
            self.load_after_reset(pdev, &mut g, "sync reset");
        }
        drop(g);
        self.sync_busy.store(false, Ordering::Release);
        self.devlink.remote_reload_done();
    }

    /// A sync reset's RESET_ABORT, as upstream's `mlx5_sync_reset_abort_event`: the
    /// health poll runs again. The caller holds the device lock.
    fn sync_abort(&self, pdev: &'bound pci::Device<Core<'_>>) {
        if !self.sync_requested.swap(false, Ordering::AcqRel) {
            dev_warn!(pdev, "Reset request was already cleared\n");
            return;
        }
        if let Some(s) = self.stages.lock().as_ref() {
            s._health.resume();
        }
        dev_warn!(pdev, "PCI Sync FW Update Reset Aborted.\n");
    }

    /// PCI shutdown (reboot, kexec, poweroff), as upstream's `shutdown` (main.c): fast
    /// teardown, else force close (`mlx5_try_fast_unload`); after either, the device
    /// is left in error state and its IRQs are freed with MSI-X disabled
    /// (`mlx5_core_eq_free_irqs`: platforms need that to allocate them again after
    /// kexec), without the software cleanup; when neither is possible (or the device
    /// is dead), the normal unload runs instead (`mlx5_unload_one`). Either way the
    /// PCI device is disabled at the end (`mlx5_pci_disable_device`).
    fn shutdown(&self) {
        // No recovery starts or goes on while the device goes down (the device lock is
        // held: one waiting for it gives up).
        self.recovery.stop();
        let mut g = self.stages.lock();
        let Some(s) = Option::as_mut(&mut *g) else {
            return;
        };
        dev_info!(s.pdev, "shutdown: quiescing the device\n");
        // Fast teardown moves the function out of `Running`: the health poll, which
        // checks that under the same lock, stops re-arming.
        let path = s._hca.fast_teardown("shutdown");
        match teardown::plan::after_shutdown_teardown(path) {
            teardown::plan::ShutdownNext::FreeIrqs => {
                s._life.enter_error_state();
                s._health.stop();
                let vectors = s._events.free_irqs();
                s._pci.disable_now();
                dev_info!(
                    s.pdev,
                    "shutdown: {:?} teardown done; {} IRQ vector(s) freed, MSI-X disabled, device disabled\n",
                    path,
                    vectors
                );
            }
            teardown::plan::ShutdownNext::NormalUnload => {
                let s = g.take();
                drop(g);
                if let Some(s) = s {
                    dev_info!(
                        s.pdev,
                        "shutdown: fast teardown not possible ({:?}); normal unload\n",
                        path
                    );
                    // Ends with `PciEnabled`'s drop: bus mastering off, device disabled.
                    Stages::unload(s);
                }
            }
        }
    }
}

impl ffi::PciRecover for Mlx5Driver {
    fn recover<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&'bound Mlx5Device<'bound>>,
        kind: ffi::RecoverKind,
    ) -> Result {
        // A sync reset's reload goes on: it ends the reset whatever happens (it leaves
        // the function to the PCI error's handling).
        if this.pci_error.load(Ordering::Acquire)
            && !matches!(kind, ffi::RecoverKind::SyncReload { .. })
        {
            dev_info!(
                pdev,
                "{}: {:?}: a PCI error recovery is under way; not now\n",
                this.info.name,
                kind
            );
            return Err(EBUSY);
        }
        // As upstream's `mlx5_health_wait_pci_up`: nothing comes back through a channel
        // a PCI error left offline (a failed PCI error recovery).
        if !matches!(
            kind,
            ffi::RecoverKind::Unload | ffi::RecoverKind::SyncReload { .. }
        ) && ffi::pci_channel_offline(pdev)
        {
            dev_err!(
                pdev,
                "{}: {:?}: the PCI channel is offline (a PCI error recovery failed): health recovery flow aborted\n",
                this.info.name,
                kind
            );
            return Err(EIO);
        }
        if this.sync_busy.load(Ordering::Acquire)
            && !matches!(kind, ffi::RecoverKind::SyncReload { .. })
        {
            dev_info!(
                pdev,
                "{}: {:?}: a sync reset's reload is under way; not now\n",
                this.info.name,
                kind
            );
            return Err(EBUSY);
        }
        // Refusals and failures are logged where they happen.
        match kind {
            ffi::RecoverKind::Fatal => this.on_fatal(pdev),
            ffi::RecoverKind::Request => this.recover(pdev, RecoverWhy::Request),
            ffi::RecoverKind::Unload => {
                this.unload(pdev);
                Ok(())
            }
            ffi::RecoverKind::Load => this.load(pdev),
            ffi::RecoverKind::SyncRequest => {
                this.sync_request(pdev);
                Ok(())
            }
            ffi::RecoverKind::SyncNow => this.sync_now(pdev),
            ffi::RecoverKind::SyncReload { reset } => {
                this.sync_reload(pdev, reset);
                Ok(())
            }
            ffi::RecoverKind::SyncAbort => {
                this.sync_abort(pdev);
                Ok(())
            }
        }
    }
}

impl ffi::PciErrors for Mlx5Driver {
    fn error_detected<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&'bound Mlx5Device<'bound>>,
        state: ffi::ChannelState,
    ) -> ffi::ErsResult {
        this.pci_error_detected(pdev, state)
    }

    fn slot_reset<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&'bound Mlx5Device<'bound>>,
    ) -> ffi::ErsResult {
        this.pci_slot_reset(pdev)
    }

    fn resume<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&'bound Mlx5Device<'bound>>) {
        this.pci_resume(pdev);
    }
}

impl ffi::PciPower for Mlx5Driver {
    fn suspend<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&'bound Mlx5Device<'bound>>,
    ) -> Result {
        this.pm_suspend(pdev);
        Ok(())
    }

    fn resume<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&'bound Mlx5Device<'bound>>,
    ) -> Result {
        this.pm_resume(pdev)
    }
}

impl ffi::PciShutdown for Mlx5Driver {
    fn shutdown(_pdev: &pci::Device, this: Pin<&Mlx5Device<'_>>) {
        this.shutdown();
    }
}
