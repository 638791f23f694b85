// SPDX-License-Identifier: GPL-2.0

//! The device clock and its clock info page, as upstream mlx5_core keeps them
//! (`lib/clock.c`): a timecounter over the internal timer of the init segment
//! (`internal_timer_h`/`_l`, counting at cap `device_frequency_khz`), started at the
//! wall clock, read by a delayed work every overflow period, each read published in a
//! page laid out as `struct mlx5_ib_clock_info` (sign, cycles, mask, mult, shift,
//! nsec, frac, overflow_period) that the IB provider maps read-only for libmlx5
//! (MLX5_IB_MMAP_CLOCK_INFO; `mlx5dv_get_clock_info` converts CQE timestamps with
//! it). The arithmetic is [`calc`]'s; the page and its sign protocol are
//! ffi/core/clock.c's.
//!
//! Without `device_frequency_khz` there is no clock (upstream: "invalid
//! device_frequency_khz, aborting HW clock init"), and the provider advertises no page.
//! Upstream does not update the page while the device is in internal error; ours stops
//! re-arming once the function is dead or quiesced.
//!
//! No PTP clock is registered (upstream registers one, `mlx5_ptp_clock_info`): no
//! frequency or time adjustment, so `mult` stays nominal.

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod calc;

use kernel::{
    prelude::*,
    sync::{new_mutex, Arc, Mutex},
    time::Jiffies,
    workqueue::{self, impl_has_delayed_work, new_delayed_work, DelayedWork, WorkItem},
};

use crate::{
    ffi::{self, ClockPage, ClockVals},
    init_seg_io::Regs,
    lifecycle::Lifecycle,
};
use calc::{ClockParams, Timecounter};

struct ClockState {
    tc: Timecounter,
    stopped: bool,
}

/// The clock of one function.
#[pin_data]
pub(crate) struct Clock {
    life: Arc<Lifecycle>,
    params: ClockParams,
    /// Jiffies between two reads.
    period: u64,
    page: ClockPage,
    /// Lock order: a leaf (held across one read of the timer and one publication).
    #[pin]
    state: Mutex<ClockState>,
    #[pin]
    work: DelayedWork<Clock>,
}

impl_has_delayed_work! {
    impl HasDelayedWork<Self> for Clock { self.work }
}

impl WorkItem for Clock {
    type Pointer = Arc<Clock>;

    fn run(this: Arc<Clock>) {
        if this.tick() {
            let delay = Jiffies::try_from(this.period).unwrap_or(Jiffies::MAX);
            // Fails only while being cancelled: then it must not run again anyway.
            let _ = workqueue::system_power_efficient().enqueue_delayed(this, delay);
        }
    }
}

impl Clock {
    /// One overflow-work pass (`mlx5_timestamp_overflow`): reads the timer, advances
    /// the timecounter, publishes it. `false`: stop re-arming.
    fn tick(&self) -> bool {
        let mut st = self.state.lock();
        // Dead or quiesced: nothing answers (upstream skips the read in internal
        // error); the page keeps its last state.
        if st.stopped || self.life.silent() {
            return false;
        }
        let hw = self.life.hw();
        let Ok(cycles) = calc::read_timer(|off| hw.read(off)) else {
            // BAR revoked: the device is being unbound.
            return false;
        };
        st.tc.read(&self.params, cycles & self.params.mask);
        self.publish(&st.tc);
        true
    }

    fn publish(&self, tc: &Timecounter) {
        self.page.publish(&ClockVals {
            cycles: tc.cycle_last,
            nsec: tc.nsec,
            frac: tc.frac,
            mask: self.params.mask,
            overflow_period: self.period,
            mult: self.params.mult,
            shift: self.params.shift,
        });
    }
}

/// The running clock; its work stopped (cancelled, waited for) on drop.
pub(crate) struct ClockStage {
    clock: Arc<Clock>,
}

impl ClockStage {
    /// Starts the clock of a device counting at `khz` (`mlx5_init_clock`): `None`
    /// without a frequency.
    ///
    /// # Errors
    ///
    /// No memory for the page; the timer unreadable.
    pub(crate) fn start(life: Arc<Lifecycle>, khz: u32) -> Result<Option<Self>> {
        let Some(params) = ClockParams::from_khz(khz) else {
            dev_warn!(
                life.dev(),
                "invalid device_frequency_khz, aborting HW clock init\n"
            );
            return Ok(None);
        };
        let period = params.overflow_period(ffi::hz());
        let page = ClockPage::new()?;
        let cycles = calc::read_timer(|off| life.hw().read(off))?;
        let tc = Timecounter::new(cycles & params.mask, ffi::real_ns());
        let clock = Arc::pin_init(
            pin_init!(Clock {
                life,
                params,
                period,
                page,
                state <- new_mutex!(ClockState { tc, stopped: false }),
                work <- new_delayed_work!("mlx5_rs::clock"),
            }),
            GFP_KERNEL,
        )?;
        clock.publish(&tc);
        let delay = Jiffies::try_from(period).unwrap_or(Jiffies::MAX);
        // Fails only if already queued, which a new item is not.
        let _ = workqueue::system_power_efficient().enqueue_delayed(clock.clone(), delay);
        Ok(Some(Self { clock }))
    }

    /// The clock info page, for the IB provider's mmap.
    #[cfg_attr(
        not(CONFIG_MLX5_RS_INFINIBAND),
        expect(dead_code, reason = "the IB provider maps the page")
    )]
    pub(crate) fn page(&self) -> &ClockPage {
        &self.clock.page
    }
}

impl Drop for ClockStage {
    fn drop(&mut self) {
        // After this no tick reads the timer; one running now finishes first.
        self.clock.state.lock().stopped = true;
        ffi::cancel_delayed_work_sync(&self.clock);
    }
}
