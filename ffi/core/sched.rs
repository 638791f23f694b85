// SPDX-License-Identifier: GPL-2.0

//! Online CPU count and flushing of a work item: both missing from the kernel crate.

use kernel::{
    bindings,
    workqueue::{Work, WorkItem},
};

extern "C" {
    fn mlx5rs_num_online_cpus() -> u32;
}

/// Number of online CPUs (at least 1).
pub(crate) fn num_online_cpus() -> u32 {
    // SAFETY: reads a global counter; no preconditions.
    unsafe { mlx5rs_num_online_cpus() }.max(1)
}

/// Waits until the last queued instance of `work` has finished running
/// (`flush_work`). Does not cancel: a queued item still runs (and so consumes the
/// reference `enqueue` took), which keeps the `Arc` accounting of the kernel crate
/// exact. The caller must make sure nothing re-queues it afterwards if it wants it
/// idle.
pub(crate) fn flush_work<T: ?Sized + WorkItem<ID>, const ID: u64>(work: &Work<T, ID>) {
    // SAFETY: `work` is a valid, initialised work item (it is borrowed);
    // `flush_work` only waits on it.
    unsafe { bindings::flush_work(Work::raw_get(work)) };
}
