// SPDX-License-Identifier: GPL-2.0

//! The periodic health poll (kernel shell around [`monitor::HealthMonitor`]).
//!
//! Every `health_poll_ms` (module parameter, 2000 by default) a delayed work item on
//! the power-efficient system workqueue (`system_wq` is deprecated in 7.3) reads the
//! health counter, the health buffer and `nic_interface`, and lets the pure monitor
//! decide. Between two polls the same work checks the fatal sensors alone every
//! [`monitor::FATAL_CHECK_MS`] (four reads: `nic_interface`, the buffer's `rfr` and
//! `synd`, `fw_ver`), and polls at once when one fires, so that a fatal error is found
//! within 250 ms instead of within the period (upstream polls every 2 s); the health
//! counter keeps the period's cadence. The poll decides:
//!
//! - a fatal sensor (PCI reads all ones, nic_interface DISABLED or SW_RESET, a firmware
//!   syndrome with reset-required): the health buffer is logged field by field and the
//!   device declared dead ([`Lifecycle::poll_while_running`], `lifecycle.rs`): the
//!   command queue fails every waiter and every new command at once, consumers are
//!   notified, the poll stops re-arming;
//! - the counter unchanged for [`monitor::MAX_MISSES`] polls: "health compromised",
//!   logged once per stall with the buffer;
//! - a new non-fatal syndrome: logged with the buffer.
//!
//! The last two are reported to devlink's `fw` reporter, a fatal sensor to `fw_fatal`
//! (through a [`HealthReporter`], after the checks, with no lock of the poll held), as
//! upstream's `poll_health` queues its report works; the `fw_fatal` report starts the
//! function's recovery (`devlink.rs`).
//!
//! [`HealthStage`] stops the poll (cancel and wait) when dropped; the device object
//! drops it first.

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod buffer;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod monitor;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod recover;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod report;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod sync_reset;

use kernel::{
    prelude::*,
    sync::{new_mutex, Arc, Mutex},
    time::msecs_to_jiffies,
    workqueue::{self, impl_has_delayed_work, new_delayed_work, DelayedWork, WorkItem},
};

use crate::{
    ffi,
    init_seg_io::Regs,
    lifecycle::{FatalCause, FatalConsumer, FatalHandler, Lifecycle, PollOutcome},
};
use buffer::{synd_name, HealthBuffer};
use monitor::{HealthEvent, HealthMonitor, HealthSample};
use report::FwReport;

/// Told by the health poll what upstream tells its devlink reporters: `fw` (`fatal`
/// false) on a new non-fatal syndrome or a stalled health counter, with the syndrome
/// and the counter's misses at the report; `fw_fatal` once the function is declared
/// dead (which starts its recovery: `devlink.rs`). Called from the health work with
/// no lock of the poll held; must not wait for devlink (a recovery or a reload under
/// devlink's instance lock stops the poll and waits for it).
pub(crate) trait HealthReporter: Send + Sync {
    /// One report.
    fn report(self: Arc<Self>, fatal: bool, r: FwReport);
}

/// A report one poll leaves for after its checks.
type Pending = Option<(bool, FwReport)>;

/// Shortest accepted poll period.
const MIN_PERIOD_MS: u32 = 10;

struct PollState {
    monitor: HealthMonitor,
    stopped: bool,
    /// Fatal-sensor checks since the last poll.
    checks: u32,
}

/// The poll of one function.
#[pin_data]
pub(crate) struct HealthPoller {
    life: Arc<Lifecycle>,
    /// How often the work runs: the fatal-sensor check's period.
    check_ms: u32,
    /// Runs per poll period: every this many runs is a full poll.
    checks_per_poll: u32,
    reporter: Option<Arc<dyn HealthReporter>>,
    /// Lock order: held across one check, so it is taken before `Lifecycle::state`
    /// (and, through it, the command queue's lock).
    #[pin]
    state: Mutex<PollState>,
    #[pin]
    work: DelayedWork<HealthPoller>,
}

impl_has_delayed_work! {
    impl HasDelayedWork<Self> for HealthPoller { self.work }
}

impl WorkItem for HealthPoller {
    type Pointer = Arc<HealthPoller>;

    fn run(this: Arc<HealthPoller>) {
        let (outcome, pending) = this.tick();
        if let (Some(rep), Some((fatal, r))) = (&this.reporter, pending) {
            rep.clone().report(fatal, r);
        }
        if outcome == PollOutcome::Continue {
            let delay = msecs_to_jiffies(this.check_ms);
            // Fails only while being cancelled: then it must not run again anyway.
            let _ = workqueue::system_power_efficient().enqueue_delayed(this, delay);
        }
    }
}

impl HealthPoller {
    /// One poll, and what it leaves to report. Serialized with [`HealthStage`]'s stop
    /// by the poll state lock.
    fn tick(&self) -> (PollOutcome, Pending) {
        let mut st = self.state.lock();
        if st.stopped {
            return (PollOutcome::Stop, None);
        }
        let life = &self.life;
        let mut pending = None;
        st.checks += 1;
        let full = st.checks >= self.checks_per_poll;
        let outcome = life.poll_while_running(|| {
            // Between polls: the fatal sensors alone; a hit polls now.
            if !full {
                match read_fatal(life.hw().as_ref()) {
                    Ok(Some(_)) => {}
                    // Healthy, or the BAR revoked (the device is being unbound).
                    Ok(None) | Err(_) => return None,
                }
            }
            st.checks = 0;
            let hw = life.hw();
            let sample = match read_sample(hw.as_ref()) {
                Ok(s) => s,
                // BAR revoked: the device is being unbound; nothing to decide.
                Err(_) => return None,
            };
            let event = st.monitor.poll(&sample);
            let r = FwReport {
                synd: u32::from(sample.synd),
                miss_counter: st.monitor.misses(),
            };
            // The whole buffer for the log, read only when there is something to log
            // (upstream's `print_health_info`); unreadable, the sample's fields alone.
            let buf = || {
                read_buffer(hw.as_ref()).unwrap_or_else(|_| HealthBuffer {
                    fw_ver: sample.fw_ver,
                    rfr: sample.rfr,
                    synd: sample.synd,
                    ..HealthBuffer::default()
                })
            };
            match event {
                HealthEvent::Healthy => None,
                HealthEvent::Fatal(sensor) => {
                    dev_err!(
                        life.dev(),
                        "Fatal error {} detected: {}\n",
                        sensor as u8,
                        buffer::sensor_name(sensor)
                    );
                    log_buffer(life, &buf(), sample.nic_interface);
                    pending = Some((true, r));
                    Some(FatalCause {
                        code: sensor as u8,
                        name: buffer::sensor_name(sensor),
                    })
                }
                HealthEvent::Compromised => {
                    dev_err!(
                        life.dev(),
                        "device's health compromised - reached miss count ({} polls, health counter 0x{:08x})\n",
                        monitor::MAX_MISSES,
                        sample.counter
                    );
                    log_buffer(life, &buf(), sample.nic_interface);
                    pending = Some((false, r));
                    None
                }
                HealthEvent::SyndromeChanged(s) => {
                    dev_warn!(life.dev(), "health syndrome 0x{:x} ({}) reported\n", s, synd_name(s));
                    log_buffer(life, &buf(), sample.nic_interface);
                    pending = Some((false, r));
                    None
                }
            }
        });
        (outcome, pending)
    }
}

/// Reads what one poll needs ([`monitor::read_sample`]: the order of the reads
/// matters), the registers held once for the lot ([`Regs::batch`]).
fn read_sample(hw: &dyn Regs) -> Result<HealthSample> {
    batch_read(hw, |r| monitor::read_sample(|off| r.read(off)))
}

/// Reads what a fatal-sensor check needs ([`monitor::read_fatal`]).
fn read_fatal(hw: &dyn Regs) -> Result<Option<monitor::FatalSensor>> {
    batch_read(hw, |r| monitor::read_fatal(|off| r.read(off)))
}

/// The health buffer as it reads now (a report's log, devlink's diagnose and dump).
pub(crate) fn read_buffer(hw: &dyn Regs) -> Result<HealthBuffer> {
    batch_read(hw, |r| monitor::read_buffer(|off| r.read(off)))
}

/// `f`'s reads in one [`Regs::batch`], and what it returns.
fn batch_read<T>(hw: &dyn Regs, f: impl FnOnce(&dyn Regs) -> Result<T>) -> Result<T> {
    let mut f = Some(f);
    let mut out = None;
    hw.batch(&mut |r| {
        let f = f.take().ok_or(EINVAL)?;
        out = Some(f(r)?);
        Ok(())
    })?;
    out.ok_or(EINVAL)
}

/// Logs every health-buffer field by name.
fn log_buffer(life: &Lifecycle, b: &HealthBuffer, nic: u32) {
    let dev = life.dev();
    for (i, v) in b.assert_var.iter().enumerate() {
        dev_err!(dev, "assert_var[{}] 0x{:08x}\n", i, v);
    }
    dev_err!(dev, "assert_exit_ptr 0x{:08x}\n", b.assert_exit_ptr);
    dev_err!(dev, "assert_callra 0x{:08x}\n", b.assert_callra);
    dev_err!(dev, "time {}\n", b.time);
    dev_err!(dev, "fw_ver 0x{:08x}\n", b.fw_ver);
    dev_err!(dev, "hw_id 0x{:08x}\n", b.hw_id);
    dev_err!(dev, "rfr {}\n", u8::from(b.rfr()));
    dev_err!(dev, "crr {}\n", u8::from(b.crr()));
    match b.severity() {
        Some(s) => dev_err!(dev, "severity {}\n", s),
        None => dev_err!(dev, "severity not valid\n"),
    }
    dev_err!(dev, "irisc_index {}\n", b.irisc_index);
    dev_err!(dev, "synd 0x{:x}: {}\n", b.synd, synd_name(b.synd));
    dev_err!(dev, "ext_synd 0x{:04x}\n", b.ext_synd);
    dev_err!(dev, "nic_interface {}\n", nic);
}

/// The running poll; stopped (cancelled, waited for) on drop.
pub(crate) struct HealthStage {
    poller: Arc<HealthPoller>,
}

impl HealthStage {
    /// Starts polling every `period_ms` (at least [`MIN_PERIOD_MS`]), the fatal sensors
    /// checked in between ([`monitor::fatal_check_ms`]), reporting to `reporter`; the
    /// first check runs one check period from now, the first poll one poll period.
    pub(crate) fn start(
        life: Arc<Lifecycle>,
        period_ms: u32,
        reporter: Option<Arc<dyn HealthReporter>>,
    ) -> Result<Self> {
        let period_ms = period_ms.max(MIN_PERIOD_MS);
        let check_ms = monitor::fatal_check_ms(period_ms);
        let poller = Arc::pin_init(
            pin_init!(HealthPoller {
                life,
                check_ms,
                checks_per_poll: monitor::checks_per_poll(period_ms),
                reporter,
                state <- new_mutex!(PollState {
                    monitor: HealthMonitor::new(),
                    stopped: false,
                    checks: 0,
                }),
                work <- new_delayed_work!("mlx5_rs::health"),
            }),
            GFP_KERNEL,
        )?;
        // Fails only if already queued, which a new item is not.
        let _ = workqueue::system_power_efficient()
            .enqueue_delayed(poller.clone(), msecs_to_jiffies(check_ms));
        Ok(Self { poller })
    }
}

impl HealthStage {
    /// Stops the poll and waits for a running check to finish; idempotent.
    pub(crate) fn stop(&self) {
        // After this no tick starts its checks; one running now finishes first.
        self.poller.state.lock().stopped = true;
        ffi::cancel_delayed_work_sync(&self.poller);
    }
}

impl HealthStage {
    /// Starts a stopped poll again (a sync reset's abort, as upstream's
    /// `mlx5_sync_reset_clear_reset_requested(dev, true)` starts the health poll again);
    /// the next check runs one check period from now, the next poll one poll period.
    /// Nothing when it runs.
    pub(crate) fn resume(&self) {
        let mut st = self.poller.state.lock();
        if !st.stopped {
            return;
        }
        st.stopped = false;
        // A new watch: the counter did not move while nobody looked.
        st.monitor = HealthMonitor::new();
        st.checks = 0;
        drop(st);
        // Fails only if already queued (a tick that had not started when stopped and
        // was not cancelled): that tick runs.
        let _ = workqueue::system_power_efficient()
            .enqueue_delayed(self.poller.clone(), msecs_to_jiffies(self.poller.check_ms));
    }
}

impl Drop for HealthStage {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The fatal-error consumer of a function without an IB device (a build without the
/// InfiniBand provider, or a provider that did not register): it only says that nobody
/// above the core is told. A registered provider adds its own, which raises
/// IB_EVENT_DEVICE_FATAL.
pub(crate) fn ib_placeholder_consumer() -> Result<FatalConsumer> {
    struct Placeholder;
    impl FatalHandler for Placeholder {
        fn fatal(&self, dev: &kernel::device::Device, cause: FatalCause) {
            dev_err!(
                dev,
                "IB_EVENT_DEVICE_FATAL (sensor {}) not raised: no IB device registered\n",
                cause.code
            );
        }
    }
    Ok(FatalConsumer {
        name: "ib (IB_EVENT_DEVICE_FATAL)",
        handler: kernel::sync::Arc::new(Placeholder, GFP_KERNEL)?,
    })
}

/// The VSC gateway in `pdev`'s configuration space ([`recover::VscIo`]).
struct CfgVsc<'a> {
    pdev: &'a kernel::pci::Device,
    cap: u8,
}

impl recover::VscIo for CfgVsc<'_> {
    fn read(&mut self, off: u8) -> Result<u32, recover::VscError> {
        ffi::pci_cfg_read(self.pdev, u16::from(self.cap) + u16::from(off))
            .map_err(|_| recover::VscError::Io)
    }
    fn write(&mut self, off: u8, v: u32) -> Result<(), recover::VscError> {
        ffi::pci_cfg_write(self.pdev, u16::from(self.cap) + u16::from(off), v)
            .map_err(|_| recover::VscError::Io)
    }
    fn pause(&mut self) {
        kernel::time::delay::fsleep(kernel::time::Delta::from_micros(1000));
    }
}

/// Why the firmware was, or was not, asked for a software reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SwReset {
    /// The fatal state does not ask for one (or the device is not in error).
    NotNeeded,
    /// Another function holds the software-reset semaphore: it resets the firmware.
    OtherFunction,
    /// Asked for (nic_interface SW_RESET written).
    Issued,
    /// The firmware does not support it (`initializing` bit 30 clear).
    Unsupported,
}

/// After a fatal error, before the function is unloaded: the firmware reset as
/// upstream's `mlx5_error_sw_reset` performs it (see [`recover`] for the sources): for
/// a firmware syndrome with reset-required, the software-reset semaphore is taken
/// through the VSC gateway and nic_interface SW_RESET is written (when the firmware
/// supports it); then, for every fatal state, nic_interface DISABLED is waited for (the
/// firmware stopped the function), and the semaphore freed. `stop` ends the wait early
/// (the function is being unbound).
pub(crate) fn error_sw_reset(pdev: &kernel::pci::Device, hw: &dyn Regs, stop: &dyn Fn() -> bool) {
    use crate::ifc::init_seg as seg;
    use crate::teardown::plan;
    use kernel::time::{delay::fsleep, Delta, Instant, Monotonic};

    dev_err!(pdev, "recovery: software reset: start\n");
    let sensor = read_sample(hw).ok().and_then(|s| monitor::fatal_sensor(&s));
    let vsc = ffi::pci_vsc_cap(pdev);
    let mut locked = false;
    let mut what = SwReset::NotNeeded;
    if recover::wants_fw_reset(sensor) {
        let lock = match vsc {
            Some(cap) => recover::Vsc(&mut CfgVsc { pdev, cap }).sw_reset_sem(true),
            None => Err(recover::VscError::Invalid),
        };
        match lock {
            Ok(()) => locked = true,
            Err(recover::VscError::Busy) => what = SwReset::OtherFunction,
            Err(e) => dev_warn!(
                pdev,
                "recovery: software-reset semaphore not taken ({:?}, VSC capability {:?}); resetting without it\n",
                e,
                vsc
            ),
        }
        if what != SwReset::OtherFunction {
            let supported = hw
                .read(seg::INITIALIZING)
                .is_ok_and(|v| v & seg::FW_RESET_SUPPORTED_BIT != 0);
            what = if supported {
                let r = hw.read(seg::CMDQ_ADDR_L_SZ).and_then(|v| {
                    hw.write(
                        seg::CMDQ_ADDR_L_SZ,
                        plan::with_nic_interface(v, seg::NicInterface::SwReset as u32),
                    )
                });
                if let Err(e) = r {
                    dev_err!(
                        pdev,
                        "recovery: writing nic_interface SW_RESET failed ({:?})\n",
                        e
                    );
                }
                dev_warn!(
                    pdev,
                    "recovery: issuing firmware reset (nic_interface SW_RESET)\n"
                );
                SwReset::Issued
            } else {
                dev_warn!(
                    pdev,
                    "recovery: the firmware does not support a software reset (initializing bit 30 clear)\n"
                );
                SwReset::Unsupported
            };
        }
    }
    // Another function's reset may take a full crash dump first (upstream FULL_CRDUMP).
    let budget_ms = if what == SwReset::OtherFunction {
        60_000
    } else {
        recover::NIC_DISABLED_BUDGET_MS
    };
    let start = Instant::<Monotonic>::now();
    let disabled = seg::NicInterface::Disabled as u32;
    let mut nic = u32::MAX;
    loop {
        if let Ok(v) = hw.read(seg::CMDQ_ADDR_L_SZ) {
            nic = plan::nic_interface(v);
            if nic == disabled {
                break;
            }
        }
        if stop() || start.elapsed().as_millis() > budget_ms as i64 {
            dev_err!(
                pdev,
                "recovery: NIC IFC still {} after {} ms\n",
                nic,
                start.elapsed().as_millis()
            );
            break;
        }
        fsleep(Delta::from_millis(20));
    }
    if locked {
        if let Some(cap) = vsc {
            if let Err(e) = recover::Vsc(&mut CfgVsc { pdev, cap }).sw_reset_sem(false) {
                dev_warn!(
                    pdev,
                    "recovery: freeing the software-reset semaphore failed ({:?})\n",
                    e
                );
            }
        }
    }
    dev_err!(
        pdev,
        "recovery: software reset: end ({:?}, sensor {:?}, nic_interface {})\n",
        what,
        sensor,
        nic
    );
}
