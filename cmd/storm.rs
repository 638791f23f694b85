// SPDX-License-Identifier: GPL-2.0

//! Command storms: N NOPs spread over C concurrent callers, with latency figures.
//!
//! Used by the debugfs `nop_storm` file, which the VM scenarios (32 concurrent callers,
//! slot exhaustion, commands after a timeout) and the benchmark drive. Each caller is a
//! work item on the default unbound system workqueue, so callers really run
//! concurrently and block in [`super::queue::CmdQueue::exec`] like any other command
//! issuer.

use kernel::{
    prelude::*,
    sync::{new_condvar, new_mutex, Arc, CondVar, Mutex},
    time::{Instant, Monotonic},
    workqueue::{impl_has_work, new_work, Work, WorkItem},
};

use super::{
    commands::Nop,
    latency::{ops_per_sec, summarize, LatencySummary},
};
use crate::hw::Hw;

/// Most callers one storm may use.
pub(crate) const MAX_CALLERS: u32 = 256;
/// Most NOPs one storm may send.
pub(crate) const MAX_NOPS: u32 = 10_000_000;

/// Result of one storm.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StormResult {
    pub(crate) callers: u32,
    pub(crate) errors: u64,
    pub(crate) elapsed_ns: u64,
    pub(crate) latency: LatencySummary,
}

impl StormResult {
    /// Completed NOPs per second.
    pub(crate) fn ops_per_sec(&self) -> u64 {
        ops_per_sec(self.latency.count, self.elapsed_ns)
    }
}

struct Progress {
    running: u32,
    errors: u64,
    latencies: KVec<u64>,
}

#[pin_data]
struct Shared {
    /// Lock order: a leaf, never held across a command (a worker records its result
    /// after the command completed).
    #[pin]
    progress: Mutex<Progress>,
    #[pin]
    finished: CondVar,
}

#[pin_data]
struct Caller {
    hw: Arc<Hw>,
    count: u32,
    shared: Arc<Shared>,
    #[pin]
    work: Work<Caller>,
}

impl_has_work! {
    impl HasWork<Self> for Caller { self.work }
}

impl WorkItem for Caller {
    type Pointer = Arc<Caller>;

    fn run(this: Arc<Caller>) {
        let mut lat = KVec::with_capacity(this.count as usize, GFP_KERNEL).unwrap_or_default();
        let mut errors = 0u64;
        for done in 0..this.count {
            let t0 = Instant::<Monotonic>::now();
            let r = this.hw.run(Nop);
            let ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(0);
            if r == Err(ENXIO) {
                // The device is dead: the rest would fail the same way at once.
                errors += u64::from(this.count - done);
                break;
            }
            if r.is_ok() {
                // Capacity reserved above; a failed push only loses a sample.
                let _ = lat.push(ns, GFP_KERNEL);
            } else {
                errors += 1;
            }
        }
        let mut p = this.shared.progress.lock();
        p.errors += errors;
        if p.latencies.extend_from_slice(&lat, GFP_KERNEL).is_err() {
            p.errors += lat.len() as u64;
        }
        p.running -= 1;
        drop(p);
        this.shared.finished.notify_all();
    }
}

/// Sends `nops` NOPs from the calling process itself, one at a time, stopping with
/// `EINTR` before the next NOP once a signal is pending (a killed writer of the debugfs
/// file). A NOP already sent is waited for: commands are not interruptible, so the
/// caller leaves after at most one command and leaves no slot behind (test hook for a
/// killed command issuer).
///
/// # Errors
///
/// `EINVAL` for 0 or more than `MAX_NOPS` NOPs; `EINTR` once a signal is pending;
/// `ENOMEM`. A failed NOP is counted in the result, not returned.
pub(crate) fn run_inline(hw: &Arc<Hw>, nops: u32) -> Result<StormResult> {
    if nops == 0 || nops > MAX_NOPS {
        return Err(EINVAL);
    }
    let mut lat = KVec::with_capacity(nops as usize, GFP_KERNEL)?;
    let mut errors = 0u64;
    let start = Instant::<Monotonic>::now();
    for _ in 0..nops {
        if kernel::current!().signal_pending() {
            return Err(EINTR);
        }
        let t0 = Instant::<Monotonic>::now();
        let r = hw.run(Nop);
        let ns = u64::try_from(t0.elapsed().as_nanos()).unwrap_or(0);
        if r.is_ok() {
            // Capacity reserved above; a failed push only loses a sample.
            let _ = lat.push(ns, GFP_KERNEL);
        } else {
            errors += 1;
        }
    }
    let elapsed_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(0);
    Ok(StormResult {
        callers: 1,
        errors,
        elapsed_ns,
        latency: summarize(&mut lat),
    })
}

/// Sends `nops` NOPs over `callers` concurrent callers and waits for all of them.
///
/// # Errors
///
/// `EINVAL` for 0 or more than `MAX_CALLERS` callers or `MAX_NOPS` NOPs; `ENOMEM`
/// when the callers' state or work items cannot be allocated. A failed NOP is
/// counted in the result, not returned.
pub(crate) fn run(hw: &Arc<Hw>, nops: u32, callers: u32) -> Result<StormResult> {
    if callers == 0 || callers > MAX_CALLERS || nops == 0 || nops > MAX_NOPS {
        return Err(EINVAL);
    }
    let latencies = KVec::with_capacity(nops as usize, GFP_KERNEL)?;
    let shared = Arc::pin_init(
        pin_init!(Shared {
            progress <- new_mutex!(Progress { running: callers, errors: 0, latencies }),
            finished <- new_condvar!(),
        }),
        GFP_KERNEL,
    )?;
    let mut workers = KVec::with_capacity(callers as usize, GFP_KERNEL)?;
    for i in 0..callers {
        let count = nops / callers + u32::from(i < nops % callers);
        let (hw, shared) = (hw.clone(), shared.clone());
        workers.push(
            Arc::pin_init(
                pin_init!(Caller { hw, count, shared, work <- new_work!("mlx5_rs::storm") }),
                GFP_KERNEL,
            )?,
            GFP_KERNEL,
        )?;
    }
    let start = Instant::<Monotonic>::now();
    for w in workers.drain_all() {
        // A freshly created work item is never already queued.
        let _ = crate::ffi::system_dfl().enqueue(w);
    }
    let mut p = shared.progress.lock();
    while p.running > 0 {
        shared.finished.wait(&mut p);
    }
    let elapsed_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(0);
    let errors = p.errors;
    let latency = summarize(&mut p.latencies);
    Ok(StormResult {
        callers,
        errors,
        elapsed_ns,
        latency,
    })
}
