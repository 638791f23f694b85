// SPDX-License-Identifier: GPL-2.0

//! Life and death of one function after bring-up: the shared [`Lifecycle`] (running,
//! dead, quiesced by fast teardown, HCA closed by force teardown), fast teardown, the
//! stages that hand the firmware pages of a stopped or dead device over to be freed
//! only once bus mastering is off.
//!
//! Drop order of the device object (see `device.rs`) with these stages:
//!
//! | field | running | dead / fast-torn-down |
//! |---|---|---|
//! | health poll | cancelled first | cancelled first |
//! | `InitializedHca` | TEARDOWN_HCA graceful → force | nothing (after force: nothing) |
//! | [`ReclaimStage`] | nothing: the pages' drop reclaims | parks the pages in [`ParkedPages`] |
//! | `EnabledHca` | DISABLE_HCA | nothing |
//! | `PciEnabled` | bus mastering off | bus mastering off |
//! | [`FreeAfterStop`] | nothing parked | frees every parked page without reclaim |
//!
//! A dead device answers nothing, so its pages are freed only after bus mastering is
//! off; a device that confirmed fast teardown (nic_interface reads DISABLED) has
//! stopped, and the same stage frees them without a MANAGE_PAGES per page.

#[allow(dead_code, unreachable_pub)]
pub(crate) mod plan;

use kernel::{
    device,
    prelude::*,
    sync::{aref::ARef, new_mutex, Arc, Mutex},
    time::{delay::fsleep, Delta, Instant, Monotonic},
};

use crate::{
    cmd::commands::TeardownHca,
    health::monitor::FatalSensor,
    hw::Hw,
    ifc::{init_seg as seg, init_seg::NicInterface, opcodes::teardown_profile},
    init_seg::Regs,
    pagealloc::fw_pages::FwPages,
};
use plan::{Force, Path, Prepare, Readback, Step, TeardownCaps};

/// Where the function stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Normal operation.
    Running,
    /// A teardown decision is being carried out.
    Busy,
    /// A fatal sensor fired: no command reaches the device any more.
    Dead,
    /// Fast teardown confirmed: the device stopped; no command, no reclaim.
    Quiesced,
    /// Force teardown closed the HCA: reclaim and DISABLE_HCA still follow.
    HcaClosed,
}

/// Somebody told when the device dies (the IB provider will raise
/// IB_EVENT_DEVICE_FATAL from here).
#[derive(Clone, Copy)]
pub(crate) struct FatalConsumer {
    /// Name for the log.
    pub(crate) name: &'static str,
    /// Called once, from the health work, after commands were failed.
    pub(crate) notify: fn(&device::Device, FatalSensor),
}

struct LifeState {
    mode: Mode,
    caps: TeardownCaps,
    consumers: KVec<FatalConsumer>,
}

/// State shared by the health poll, the teardown stages and the shutdown callback.
#[pin_data]
pub(crate) struct Lifecycle {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    parked: Arc<ParkedPages>,
    #[pin]
    state: Mutex<LifeState>,
}

/// What [`Lifecycle::poll_while_running`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PollOutcome {
    /// Still running: poll again.
    Continue,
    /// Not running (dead, torn down, tearing down): stop polling.
    Stop,
}

impl Lifecycle {
    /// A running function; caps are set once known ([`Lifecycle::set_caps`]).
    pub(crate) fn new(
        dev: &device::Device,
        hw: Arc<Hw>,
        parked: Arc<ParkedPages>,
    ) -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(Self {
                dev: dev.into(),
                hw,
                parked,
                state <- new_mutex!(LifeState {
                    mode: Mode::Running,
                    caps: TeardownCaps { fast: false, force: false },
                    consumers: KVec::new(),
                }),
            }),
            GFP_KERNEL,
        )
    }

    /// The device.
    pub(crate) fn dev(&self) -> &device::Device {
        &self.dev
    }

    /// The function's hardware access.
    pub(crate) fn hw(&self) -> &Arc<Hw> {
        &self.hw
    }

    /// Records the teardown caps (current general caps).
    pub(crate) fn set_caps(&self, caps: TeardownCaps) {
        self.state.lock().caps = caps;
    }

    /// Adds a consumer of the fatal notification.
    pub(crate) fn add_consumer(&self, c: FatalConsumer) -> Result {
        self.state.lock().consumers.push(c, GFP_KERNEL)?;
        Ok(())
    }

    /// The current mode.
    pub(crate) fn mode(&self) -> Mode {
        self.state.lock().mode
    }

    /// Runs `f` (one health check) only while the function is running, serialized with
    /// teardown decisions. When `f` reports a fatal sensor the device is declared dead
    /// ([`Lifecycle::declare_dead`]).
    pub(crate) fn poll_while_running(
        &self,
        f: impl FnOnce() -> Option<FatalSensor>,
    ) -> PollOutcome {
        let mut st = self.state.lock();
        if st.mode != Mode::Running {
            return PollOutcome::Stop;
        }
        let Some(sensor) = f() else {
            return PollOutcome::Continue;
        };
        st.mode = Mode::Dead;
        // Fail every waiter before telling anybody: nobody may wait on the device.
        self.hw.cmd().mark_dead();
        let mut consumers = KVec::new();
        for c in st.consumers.iter() {
            if consumers.push(*c, GFP_KERNEL).is_err() {
                dev_err!(
                    self.dev,
                    "out of memory notifying consumer {} of the fatal error\n",
                    c.name
                );
            }
        }
        drop(st);
        dev_err!(
            self.dev,
            "device is dead ({}): every pending and new command fails at once; page supply stopped\n",
            crate::health::buffer::sensor_name(sensor)
        );
        for c in consumers.iter() {
            dev_err!(self.dev, "notifying {} of the fatal error\n", c.name);
            (c.notify)(&self.dev, sensor);
        }
        PollOutcome::Stop
    }

    /// Fast teardown (upstream `mlx5_try_fast_unload`): prepare-fast-teardown,
    /// nic_interface DISABLED, readback within 3 s; else force close; else nothing
    /// (the caller's normal unload runs). `why` names the caller for the log.
    pub(crate) fn fast_teardown(&self, why: &str) -> Path {
        let caps = {
            let mut st = self.state.lock();
            match st.mode {
                Mode::Running => {
                    st.mode = Mode::Busy;
                    st.caps
                }
                Mode::Dead => return Path::Dead,
                Mode::Quiesced => return Path::Fast,
                Mode::HcaClosed => return Path::Force,
                Mode::Busy => return Path::Graceful,
            }
        };
        let start = Instant::<Monotonic>::now();
        let mut step = plan::first(caps, false);
        let path = loop {
            step = match step {
                Step::Prepare => plan::after_prepare(caps, self.prepare()),
                Step::DisableNic => plan::after_readback(caps, self.disable_nic()),
                Step::Force => plan::after_force(self.force()),
                Step::Done(p) => break p,
            };
        };
        let mode = match path {
            Path::Fast => {
                // The device stopped: nothing may ring its doorbell any more.
                self.hw.cmd().mark_dead();
                Mode::Quiesced
            }
            Path::Force => Mode::HcaClosed,
            Path::Graceful | Path::Dead => Mode::Running,
        };
        self.state.lock().mode = mode;
        let ms = start.elapsed().as_millis();
        match path {
            Path::Fast => dev_info!(
                self.dev,
                "fast teardown ({}): prepared, nic_interface DISABLED confirmed in {} ms; no page reclaim needed\n",
                why,
                ms
            ),
            Path::Force => {
                dev_info!(self.dev, "fast teardown ({}) not possible; force TEARDOWN_HCA done in {} ms\n", why, ms)
            }
            _ => dev_info!(
                self.dev,
                "fast teardown ({}) not possible (fast_teardown cap {}, force_teardown cap {}); normal unload\n",
                why,
                u8::from(caps.fast),
                u8::from(caps.force)
            ),
        }
        path
    }

    fn prepare(&self) -> Prepare {
        match self.hw.exec_cmd(TeardownHca {
            profile: teardown_profile::PREPARE_FAST_TEARDOWN,
        }) {
            Ok(0) => Prepare::Ok,
            Ok(state) => {
                dev_warn!(
                    self.dev,
                    "TEARDOWN_HCA prepare-fast-teardown: output state FAIL ({})\n",
                    state
                );
                Prepare::StateFail
            }
            // The command layer logged opcode, status and syndrome.
            Err(_) => Prepare::CmdFailed,
        }
    }

    /// TEARDOWN_HCA force close, classified (upstream `mlx5_cmd_force_teardown_hca`).
    pub(crate) fn force(&self) -> Force {
        // A failed command is logged by the command layer.
        let answer = self
            .hw
            .exec_cmd(TeardownHca {
                profile: teardown_profile::FORCE_CLOSE,
            })
            .ok();
        let r = Force::from_answer(answer);
        if r == Force::StateFail {
            dev_warn!(
                self.dev,
                "TEARDOWN_HCA force close: output state FORCE_STATE_FAIL; the HCA is not closed\n"
            );
        }
        r
    }

    /// Writes nic_interface = DISABLED (read-modify-write of `cmdq_addr_l_sz`) and polls
    /// until the device reads it back, within [`plan::NIC_DISABLE_BUDGET_MS`].
    fn disable_nic(&self) -> Readback {
        let disabled = NicInterface::Disabled as u32;
        let written = self.hw.read(seg::CMDQ_ADDR_L_SZ).and_then(|v| {
            self.hw
                .write(seg::CMDQ_ADDR_L_SZ, plan::with_nic_interface(v, disabled))
        });
        if let Err(e) = written {
            dev_err!(
                self.dev,
                "writing nic_interface DISABLED failed ({:?})\n",
                e
            );
            return Readback::Timeout;
        }
        let start = Instant::<Monotonic>::now();
        let budget = Delta::from_millis(plan::NIC_DISABLE_BUDGET_MS as i64);
        let mut last = 0;
        loop {
            if let Ok(v) = self.hw.read(seg::CMDQ_ADDR_L_SZ) {
                last = plan::nic_interface(v);
                if last == disabled {
                    return Readback::Disabled;
                }
            }
            if start.elapsed() > budget {
                dev_err!(
                    self.dev,
                    "nic_interface still {} after {} ms; fast teardown failed\n",
                    last,
                    plan::NIC_DISABLE_BUDGET_MS
                );
                return Readback::Timeout;
            }
            fsleep(Delta::from_micros(100));
        }
    }

    /// After fast or force teardown at PCI shutdown: like upstream's
    /// `mlx5_enter_error_state(dev, true)`, nothing reaches the device any more (every
    /// command fails at once) and a later removal, if any, sends none and frees the
    /// pages only after bus mastering is off.
    pub(crate) fn enter_error_state(&self) {
        self.hw.cmd().mark_dead();
        self.state.lock().mode = Mode::Quiesced;
    }

    /// Whether stages must skip commands that tear the HCA down (TEARDOWN_HCA).
    pub(crate) fn hca_gone(&self) -> bool {
        matches!(self.mode(), Mode::Dead | Mode::Quiesced | Mode::HcaClosed)
    }

    /// Whether the device answers no command at all any more (dead or quiesced).
    pub(crate) fn silent(&self) -> bool {
        matches!(self.mode(), Mode::Dead | Mode::Quiesced)
    }
}

/// Firmware pages kept alive past their field until bus mastering is off.
#[pin_data]
pub(crate) struct ParkedPages {
    #[pin]
    pages: Mutex<Option<Arc<FwPages>>>,
}

impl ParkedPages {
    /// Nothing parked.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(pin_init!(Self { pages <- new_mutex!(None) }), GFP_KERNEL)
    }
}

/// Dropped just before the pages field: parks the pages of a silent device.
pub(crate) struct ReclaimStage {
    life: Arc<Lifecycle>,
    pages: Arc<FwPages>,
}

impl ReclaimStage {
    /// Guards `pages` of the function `life` describes.
    pub(crate) fn new(life: Arc<Lifecycle>, pages: Arc<FwPages>) -> Self {
        Self { life, pages }
    }
}

impl Drop for ReclaimStage {
    fn drop(&mut self) {
        if self.life.silent() {
            // No MANAGE_PAGES reclaim: the device answers nothing. The pages outlive
            // the pages field (this reference) until `FreeAfterStop`.
            *self.life.parked.pages.lock() = Some(self.pages.clone());
        }
        // Running or HCA closed: the pages' own drop reclaims them one command at a
        // time before DISABLE_HCA.
    }
}

/// Dropped after bus mastering went off: frees the parked pages.
pub(crate) struct FreeAfterStop {
    dev: ARef<device::Device>,
    parked: Arc<ParkedPages>,
}

impl FreeAfterStop {
    /// Frees what is parked in `parked` on drop.
    pub(crate) fn new(dev: &device::Device, parked: Arc<ParkedPages>) -> Self {
        Self {
            dev: dev.into(),
            parked,
        }
    }
}

impl Drop for FreeAfterStop {
    fn drop(&mut self) {
        let Some(pages) = self.parked.pages.lock().take() else {
            return;
        };
        let start = Instant::<Monotonic>::now();
        // Bus mastering is off (this stage drops after `PciEnabled`): the device can no
        // longer write any of these pages.
        let n = pages.release_stopped();
        dev_info!(
            self.dev,
            "{} firmware pages freed without reclaim in {} us (device stopped, bus mastering off)\n",
            n,
            start.elapsed().as_micros_ceil()
        );
    }
}
