// SPDX-License-Identifier: GPL-2.0

//! Teardown of one function: fast teardown ([`FastTeardown`], which moves the shared
//! [`Lifecycle`] to quiesced or HCA-closed), and the stages that hand the firmware
//! pages of a stopped or dead device over to be freed only once bus mastering is off.
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

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod plan;

use kernel::{
    device,
    prelude::*,
    sync::{aref::ARef, new_mutex, Arc, Mutex},
    time::{delay::fsleep, Delta, Instant, Monotonic},
};

use crate::{
    cmd::commands::TeardownHca,
    ifc::{init_seg as seg, init_seg::NicInterface, opcodes::teardown_profile},
    init_seg_io::Regs,
    lifecycle::{Lifecycle, Mode},
    pagealloc::fw_pages::FwPages,
};
use plan::{Force, Path, Prepare, Readback, Step, TeardownCaps};

/// Fast teardown of one function with the teardown caps its device offers.
pub(crate) struct FastTeardown {
    life: Arc<Lifecycle>,
    caps: TeardownCaps,
}

impl FastTeardown {
    /// Fast teardown of the function `life` describes, within `caps` (current general
    /// caps).
    pub(crate) fn new(life: Arc<Lifecycle>, caps: TeardownCaps) -> Self {
        Self { life, caps }
    }

    /// The function's lifecycle.
    pub(crate) fn life(&self) -> &Arc<Lifecycle> {
        &self.life
    }

    /// Fast teardown (upstream `mlx5_try_fast_unload`): prepare-fast-teardown,
    /// nic_interface DISABLED, readback within 3 s; else force close; else nothing
    /// (the caller's normal unload runs). `why` names the caller for the log.
    pub(crate) fn run(&self, why: &str) -> Path {
        if let Err(mode) = self.life.begin_teardown() {
            return match mode {
                Mode::Dead => Path::Dead,
                Mode::Quiesced => Path::Fast,
                Mode::HcaClosed => Path::Force,
                Mode::Busy | Mode::Running => Path::Graceful,
            };
        }
        let caps = self.caps;
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
        self.life.end_teardown(match path {
            Path::Fast => Mode::Quiesced,
            Path::Force => Mode::HcaClosed,
            Path::Graceful | Path::Dead => Mode::Running,
        });
        let dev = self.life.dev();
        let ms = start.elapsed().as_millis();
        match path {
            Path::Fast => dev_info!(
                dev,
                "fast teardown ({}): prepared, nic_interface DISABLED confirmed in {} ms; no page reclaim needed\n",
                why,
                ms
            ),
            Path::Force => {
                dev_info!(dev, "fast teardown ({}) not possible; force TEARDOWN_HCA done in {} ms\n", why, ms)
            }
            _ => dev_info!(
                dev,
                "fast teardown ({}) not possible (fast_teardown cap {}, force_teardown cap {}); normal unload\n",
                why,
                u8::from(caps.fast),
                u8::from(caps.force)
            ),
        }
        path
    }

    fn prepare(&self) -> Prepare {
        match self.life.hw().exec_cmd(TeardownHca {
            profile: teardown_profile::PREPARE_FAST_TEARDOWN,
        }) {
            Ok(0) => Prepare::Ok,
            Ok(state) => {
                dev_warn!(
                    self.life.dev(),
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
            .life
            .hw()
            .exec_cmd(TeardownHca {
                profile: teardown_profile::FORCE_CLOSE,
            })
            .ok();
        let r = Force::from_answer(answer);
        if r == Force::StateFail {
            dev_warn!(
                self.life.dev(),
                "TEARDOWN_HCA force close: output state FORCE_STATE_FAIL; the HCA is not closed\n"
            );
        }
        r
    }

    /// Writes nic_interface = DISABLED (read-modify-write of `cmdq_addr_l_sz`) and polls
    /// until the device reads it back, within [`plan::NIC_DISABLE_BUDGET_MS`].
    fn disable_nic(&self) -> Readback {
        let disabled = NicInterface::Disabled as u32;
        let written = self.life.hw().read(seg::CMDQ_ADDR_L_SZ).and_then(|v| {
            self.life
                .hw()
                .write(seg::CMDQ_ADDR_L_SZ, plan::with_nic_interface(v, disabled))
        });
        if let Err(e) = written {
            dev_err!(
                self.life.dev(),
                "writing nic_interface DISABLED failed ({:?})\n",
                e
            );
            return Readback::Timeout;
        }
        let start = Instant::<Monotonic>::now();
        let budget = Delta::from_millis(plan::NIC_DISABLE_BUDGET_MS as i64);
        let mut last = 0;
        loop {
            if let Ok(v) = self.life.hw().read(seg::CMDQ_ADDR_L_SZ) {
                last = plan::nic_interface(v);
                if last == disabled {
                    return Readback::Disabled;
                }
            }
            if start.elapsed() > budget {
                dev_err!(
                    self.life.dev(),
                    "nic_interface still {} after {} ms; fast teardown failed\n",
                    last,
                    plan::NIC_DISABLE_BUDGET_MS
                );
                return Readback::Timeout;
            }
            fsleep(Delta::from_micros(100));
        }
    }
}

/// Firmware pages kept alive past their field until bus mastering is off.
#[pin_data]
pub(crate) struct ParkedPages {
    /// Lock order: a leaf (the pages are only stored and taken under it).
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
    parked: Arc<ParkedPages>,
    pages: Arc<FwPages>,
}

impl ReclaimStage {
    /// Guards `pages` of the function `life` describes, parking them in `parked`.
    pub(crate) fn new(life: Arc<Lifecycle>, parked: Arc<ParkedPages>, pages: Arc<FwPages>) -> Self {
        Self {
            life,
            parked,
            pages,
        }
    }
}

impl Drop for ReclaimStage {
    fn drop(&mut self) {
        if self.life.silent() {
            // No MANAGE_PAGES reclaim: the device answers nothing. The pages outlive
            // the pages field (this reference) until `FreeAfterStop`.
            *self.parked.pages.lock() = Some(self.pages.clone());
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
