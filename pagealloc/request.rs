// SPDX-License-Identifier: GPL-2.0

//! What the runtime page-request worker of one function does next: the order of
//! give/take requests and release-all events, and which requests break the device's
//! one-outstanding rule.
//!
//! The EQ handler admits events ([`RequestQueue::on_request`],
//! [`RequestQueue::on_release_all`]) and queues the worker; the worker takes jobs
//! ([`RequestQueue::next_job`]) until there is none, calling [`RequestQueue::done`]
//! after answering each give/take. All calls happen under the caller's lock.
//!
//! Rules:
//!
//! * The device keeps at most one give/take request outstanding per function until
//!   the driver answers it. A request is *queued* until the worker starts it, then
//!   *serving* until the answer (MANAGE_PAGES) completed. A second request while one
//!   is queued is provably early (the device cannot have seen an answer): it is
//!   reported and ignored. A request while one is serving is queued: the device may
//!   send it as soon as the answer completed, before the worker noticed.
//! * A release-all (the device already dropped every page of the function) needs no
//!   answer and is not a request in that sense: it never makes a later request early.
//!   Several before the worker runs are one.
//! * A pending release-all runs before a queued give/take: the pages a queued give
//!   supplies afterwards are then held by the device, which dropped its pages before
//!   it received them; a queued take after it finds nothing to return. A release-all
//!   that arrives while a give/take is serving runs after that answer, so it drops the
//!   pages that answer gave too: per the rule above the device sends it only after it
//!   saw the answer (upstream's ordered page workqueue does the same).
//! * After [`RequestQueue::stop`] (teardown, the pages EQ is gone) no event is
//!   admitted and queued give/take requests are dropped, but a release-all admitted
//!   before still runs: it needs no command, and without it teardown would ask the
//!   device for pages it no longer has.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

/// Why an event was not queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The worker is stopped (teardown).
    Stopped,
    /// A give/take request for this many pages (signed) is queued and not answered:
    /// the device broke the one-outstanding rule.
    Outstanding(i32),
}

/// The worker's next job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Job {
    /// Forget and free every page of the function, without a command.
    ReleaseAll {
        /// Release-all events merged into this job.
        events: u32,
    },
    /// Answer a request: positive gives, negative takes.
    Serve(i32),
}

/// The page-request state of one function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RequestQueue {
    queued: Option<i32>,
    serving: Option<i32>,
    release_all: u32,
    stopped: bool,
}

impl RequestQueue {
    /// Idle, running.
    pub const fn new() -> Self {
        Self { queued: None, serving: None, release_all: 0, stopped: false }
    }

    /// A give (`n > 0`) or take (`n < 0`) request arrived. `Ok`: queue the worker.
    pub fn on_request(&mut self, n: i32) -> Result<(), Refused> {
        if self.stopped {
            return Err(Refused::Stopped);
        }
        if let Some(q) = self.queued {
            return Err(Refused::Outstanding(q));
        }
        self.queued = Some(n);
        Ok(())
    }

    /// A release-all arrived. `Ok`: queue the worker (harmless if it already is).
    pub fn on_release_all(&mut self) -> Result<(), Refused> {
        if self.stopped {
            return Err(Refused::Stopped);
        }
        self.release_all = self.release_all.saturating_add(1);
        Ok(())
    }

    /// The worker's next job, if any; a [`Job::Serve`] is *serving* until
    /// [`RequestQueue::done`].
    pub fn next_job(&mut self) -> Option<Job> {
        if self.release_all > 0 {
            let events = core::mem::take(&mut self.release_all);
            return Some(Job::ReleaseAll { events });
        }
        if self.stopped {
            self.queued = None;
            return None;
        }
        let n = self.queued.take()?;
        self.serving = Some(n);
        Some(Job::Serve(n))
    }

    /// The answer of the serving request completed.
    pub fn done(&mut self) {
        self.serving = None;
    }

    /// The give/take being answered, if any.
    pub fn serving(&self) -> Option<i32> {
        self.serving
    }

    /// Stops admitting events (teardown).
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Whether the worker has nothing left to do.
    pub fn idle(&self) -> bool {
        self.queued.is_none() && self.serving.is_none() && self.release_all == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the worker to completion (answers succeed at once).
    fn drain(q: &mut RequestQueue) -> std::vec::Vec<Job> {
        let mut jobs = std::vec::Vec::new();
        while let Some(j) = q.next_job() {
            if let Job::Serve(_) = j {
                q.done();
            }
            jobs.push(j);
        }
        jobs
    }

    #[test]
    fn one_request_at_a_time() {
        let mut q = RequestQueue::new();
        assert_eq!(q.on_request(7), Ok(()));
        // Queued, not started: the device cannot have seen an answer.
        assert_eq!(q.on_request(-3), Err(Refused::Outstanding(7)));
        assert_eq!(drain(&mut q), [Job::Serve(7)]);
        assert!(q.idle());
        assert_eq!(q.on_request(-3), Ok(()));
        assert_eq!(drain(&mut q), [Job::Serve(-3)]);
    }

    #[test]
    fn request_while_serving_is_kept() {
        let mut q = RequestQueue::new();
        q.on_request(64).unwrap();
        assert_eq!(q.next_job(), Some(Job::Serve(64)));
        assert_eq!(q.serving(), Some(64));
        // The answer completed at the device; the worker has not noticed yet.
        assert_eq!(q.on_request(-32), Ok(()));
        assert_eq!(q.on_request(1), Err(Refused::Outstanding(-32)));
        q.done();
        assert_eq!(drain(&mut q), [Job::Serve(-32)]);
        assert!(q.idle());
    }

    #[test]
    fn release_all_needs_no_answer_and_merges() {
        let mut q = RequestQueue::new();
        assert_eq!(q.on_release_all(), Ok(()));
        assert_eq!(q.on_release_all(), Ok(()));
        // Not an outstanding request: a give right after it is legitimate.
        assert_eq!(q.on_request(5), Ok(()));
        assert_eq!(drain(&mut q), [Job::ReleaseAll { events: 2 }, Job::Serve(5)]);
        assert!(q.idle());
    }

    #[test]
    fn release_all_runs_before_a_queued_request() {
        let mut q = RequestQueue::new();
        q.on_request(300).unwrap();
        q.on_release_all().unwrap();
        assert_eq!(drain(&mut q), [Job::ReleaseAll { events: 1 }, Job::Serve(300)]);
    }

    #[test]
    fn release_all_while_serving_runs_after_the_answer() {
        let mut q = RequestQueue::new();
        q.on_request(10).unwrap();
        assert_eq!(q.next_job(), Some(Job::Serve(10)));
        q.on_release_all().unwrap();
        q.on_request(4).unwrap();
        q.done();
        assert_eq!(drain(&mut q), [Job::ReleaseAll { events: 1 }, Job::Serve(4)]);
    }

    #[test]
    fn stop_drops_requests_but_keeps_release_all() {
        let mut q = RequestQueue::new();
        q.on_request(9).unwrap();
        q.on_release_all().unwrap();
        q.stop();
        assert_eq!(q.on_request(1), Err(Refused::Stopped));
        assert_eq!(q.on_release_all(), Err(Refused::Stopped));
        assert_eq!(drain(&mut q), [Job::ReleaseAll { events: 1 }]);
        assert!(q.idle());
        assert_eq!(q.next_job(), None);
    }

    #[test]
    fn stop_while_serving() {
        let mut q = RequestQueue::new();
        q.on_request(-8).unwrap();
        assert_eq!(q.next_job(), Some(Job::Serve(-8)));
        q.stop();
        q.done();
        assert!(q.idle());
        assert_eq!(q.next_job(), None);
    }

    #[test]
    fn release_all_count_saturates() {
        let mut q = RequestQueue { release_all: u32::MAX, ..RequestQueue::new() };
        q.on_release_all().unwrap();
        assert_eq!(q.next_job(), Some(Job::ReleaseAll { events: u32::MAX }));
    }
}
