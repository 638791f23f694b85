// SPDX-License-Identifier: GPL-2.0

//! Where one function stands after bring-up: running, dead, quiesced by fast
//! teardown, or with its HCA closed by force teardown.
//!
//! [`Lifecycle`] is the state the health poll, the teardown stages, the HCA stages and
//! the PCI shutdown callback share. It knows neither health checks nor teardown
//! procedures: the health poll (`health/`) reports a fatal cause through
//! [`Lifecycle::poll_while_running`], teardown (`teardown/`) claims the function with
//! [`Lifecycle::begin_teardown`] and records the outcome with
//! [`Lifecycle::end_teardown`]; stages ask [`Lifecycle::silent`] and
//! [`Lifecycle::hca_gone`] before sending a command. Both `health/` and `teardown/`
//! depend on this module; neither depends on the other.
//!
//! A dead or quiesced function gets no command: the command queue is marked dead
//! first ([`CmdQueue::mark_dead`](crate::cmd::queue::CmdQueue::mark_dead)), so every
//! waiter and every later command fails at once.

use kernel::{
    device,
    prelude::*,
    sync::{aref::ARef, new_mutex, Arc, Mutex},
};

use crate::hw::Hw;

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

/// Why the function was declared dead (the health poll's fatal sensor).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FatalCause {
    /// Sensor number (upstream numbering).
    pub(crate) code: u8,
    /// Sensor name, as the log prints it.
    pub(crate) name: &'static str,
}

/// Somebody told when the device dies (the IB provider raises IB_EVENT_DEVICE_FATAL).
pub(crate) trait FatalHandler: Send + Sync {
    /// Called once, from the health work, after commands were failed. Must not wait
    /// for a command (every command fails at once by then anyway).
    fn fatal(&self, dev: &device::Device, cause: FatalCause);
}

/// A registered [`FatalHandler`] with its name for the log.
#[derive(Clone)]
pub(crate) struct FatalConsumer {
    /// Name for the log (also the key [`Lifecycle::remove_consumer`] takes).
    pub(crate) name: &'static str,
    /// The handler.
    pub(crate) handler: Arc<dyn FatalHandler>,
}

struct LifeState {
    mode: Mode,
    consumers: KVec<FatalConsumer>,
}

/// State shared by the health poll, the teardown stages and the shutdown callback.
#[pin_data]
pub(crate) struct Lifecycle {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    /// Lock order: taken before the command queue's lock (`CmdQueue::state`, through
    /// `mark_dead`), never while holding it. Held while one health check reads the
    /// init segment, never across a command (teardown marks the function
    /// [`Mode::Busy`] and drops it before sending any).
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
    /// A running function.
    pub(crate) fn new(dev: &device::Device, hw: Arc<Hw>) -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(Self {
                dev: dev.into(),
                hw,
                state <- new_mutex!(LifeState {
                    mode: Mode::Running,
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

    /// Adds a consumer of the fatal notification.
    pub(crate) fn add_consumer(&self, c: FatalConsumer) -> Result {
        self.state.lock().consumers.push(c, GFP_KERNEL)?;
        Ok(())
    }

    /// Removes the consumers named `name`. A notification already under way (the
    /// list is copied before the handlers run) may still reach them: a handler must
    /// tolerate a call after its removal.
    #[cfg_attr(
        not(CONFIG_MLX5_RS_INFINIBAND),
        expect(dead_code, reason = "the IB provider removes its consumer")
    )]
    pub(crate) fn remove_consumer(&self, name: &str) {
        // The handler of a removed consumer is dropped here, under the lock: a
        // handler's drop must not take this lock (none does: it is a leaf for them).
        self.state.lock().consumers.retain(|c| c.name != name);
    }

    /// The current mode.
    pub(crate) fn mode(&self) -> Mode {
        self.state.lock().mode
    }

    /// Declares a running function dead from outside the health poll (a PCI error, as
    /// upstream's `mlx5_pci_err_detected` enters the error state): as the poll's fatal
    /// path, commands fail at once, then the consumers are told. False when it was not
    /// running (already dead or torn down): nothing is done.
    pub(crate) fn declare_dead(&self, cause: FatalCause) -> bool {
        let mut declared = false;
        self.poll_while_running(|| {
            declared = true;
            Some(cause)
        });
        declared
    }

    /// Runs `f` (one health check) only while the function is running, serialized with
    /// teardown decisions. When `f` reports a fatal cause the device is declared dead:
    /// the command queue fails every waiter and every new command, then the consumers
    /// are notified.
    pub(crate) fn poll_while_running(&self, f: impl FnOnce() -> Option<FatalCause>) -> PollOutcome {
        let mut st = self.state.lock();
        if st.mode != Mode::Running {
            return PollOutcome::Stop;
        }
        let Some(cause) = f() else {
            return PollOutcome::Continue;
        };
        st.mode = Mode::Dead;
        // Fail every waiter before telling anybody: nobody may wait on the device.
        self.hw.cmd().mark_dead();
        let consumers = self.copy_consumers(&st);
        drop(st);
        dev_err!(
            self.dev,
            "device is dead ({}): every pending and new command fails at once; page supply stopped\n",
            cause.name
        );
        self.tell(&consumers, cause);
        PollOutcome::Stop
    }

    /// Tells the consumers of a fatal error without declaring the function dead:
    /// commands keep running (a non-fatal PCI error: upstream's
    /// `mlx5_enter_error_state(dev, false)` with no fatal sensor still raises
    /// MLX5_DEV_EVENT_SYS_ERROR, IB_EVENT_DEVICE_FATAL in mlx5_ib, and then unloads the
    /// function with its commands).
    pub(crate) fn notify_fatal(&self, cause: FatalCause) {
        let consumers = self.copy_consumers(&self.state.lock());
        dev_err!(
            self.dev,
            "{}: telling the consumers (commands still run)\n",
            cause.name
        );
        self.tell(&consumers, cause);
    }

    /// Tells the consumers that the function is being reset under them (a sync reset,
    /// after its fast teardown: upstream's `mlx5_enter_error_state(dev, true)` raises
    /// MLX5_DEV_EVENT_SYS_ERROR, IB_EVENT_DEVICE_FATAL in mlx5_ib); the mode stays.
    pub(crate) fn notify_reset(&self, cause: FatalCause) {
        let consumers = self.copy_consumers(&self.state.lock());
        self.tell(&consumers, cause);
    }

    fn copy_consumers(&self, st: &LifeState) -> KVec<FatalConsumer> {
        let mut consumers = KVec::new();
        for c in st.consumers.iter() {
            if consumers.push(c.clone(), GFP_KERNEL).is_err() {
                dev_err!(
                    self.dev,
                    "out of memory notifying consumer {} of the fatal error\n",
                    c.name
                );
            }
        }
        consumers
    }

    fn tell(&self, consumers: &[FatalConsumer], cause: FatalCause) {
        for c in consumers.iter() {
            dev_err!(self.dev, "notifying {} of the fatal error\n", c.name);
            c.handler.fatal(&self.dev, cause);
        }
    }

    /// Claims the function for a teardown decision: a running function becomes
    /// [`Mode::Busy`] (the health poll stops re-arming) and `Ok` is returned; otherwise
    /// the mode it is in, unchanged.
    pub(crate) fn begin_teardown(&self) -> core::result::Result<(), Mode> {
        let mut st = self.state.lock();
        match st.mode {
            Mode::Running => {
                st.mode = Mode::Busy;
                Ok(())
            }
            m => Err(m),
        }
    }

    /// Records the outcome of the decision [`Lifecycle::begin_teardown`] claimed. For
    /// [`Mode::Quiesced`] (the device stopped) the command queue is marked dead first:
    /// nothing may ring its doorbell any more.
    pub(crate) fn end_teardown(&self, mode: Mode) {
        if mode == Mode::Quiesced {
            self.hw.cmd().mark_dead();
        }
        self.state.lock().mode = mode;
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
