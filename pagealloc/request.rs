// SPDX-License-Identifier: GPL-2.0

//! What the runtime page-request worker of one function does next: every give/take
//! request in arrival order, and release-all events.
//!
//! The EQ handler admits events ([`RequestQueue::on_request`],
//! [`RequestQueue::on_release_all`]) and queues the worker; the worker takes jobs
//! ([`RequestQueue::next_job`]) until there is none, calling [`RequestQueue::done`]
//! after answering each give/take. All calls happen under the caller's lock.
//!
//! Rules:
//!
//! * Every well-formed give/take request is its own job, answered in the order it
//!   arrived, however many are outstanding (upstream `req_pages_handler` queues one
//!   work item per event on an ordered workqueue; the PRM sets no limit on outstanding
//!   requests). The queue is a ring of fixed capacity ([`QUEUE_CAPACITY`] in the
//!   driver); a request beyond it is refused ([`Refused::Full`]) and reported, never
//!   silently dropped (upstream drops a request whose work item it cannot allocate).
//! * A release-all (the device already dropped every page of the function) needs no
//!   answer; several before the worker runs are one.
//! * A pending release-all runs before queued give/take requests: pages a queued give
//!   supplies afterwards are then held by the device, which dropped its pages before it
//!   received them; a queued take after it finds nothing to return. A release-all that
//!   arrives while a give/take is serving runs after that answer, so it drops the pages
//!   that answer gave too. Answers keep their order either way.
//! * After [`RequestQueue::stop`] (teardown: the pages EQ is gone) no event is
//!   admitted, but what was admitted still runs: queued requests are answered as
//!   upstream's `mlx5_pagealloc_stop` flushes its workqueue (the device waits for
//!   them, and the command interface still works), and a release-all needs no
//!   command and keeps reclaim from asking for pages the device no longer has.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use core::ops::DerefMut;

/// Requests the driver's queue holds (32 KiB of `i32`): far more than a device has
/// reason to send before the worker runs.
pub const QUEUE_CAPACITY: usize = 8192;

/// Why an event was not queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The worker is stopped (teardown).
    Stopped,
    /// The queue holds its capacity of unanswered requests.
    Full {
        /// Requests queued.
        queued: usize,
    },
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

/// The page-request state of one function over ring storage `S` (a slice of
/// `i32`: a `KVVec` in the kernel, a `Vec` or array in tests).
#[derive(Debug)]
pub struct RequestQueue<S> {
    ring: S,
    head: usize,
    len: usize,
    serving: Option<i32>,
    release_all: u32,
    stopped: bool,
}

impl<S: DerefMut<Target = [i32]>> RequestQueue<S> {
    /// Idle, running, holding up to `ring.len()` requests.
    pub fn new(ring: S) -> Self {
        Self {
            ring,
            head: 0,
            len: 0,
            serving: None,
            release_all: 0,
            stopped: false,
        }
    }

    /// Requests queued and not started.
    pub fn queued(&self) -> usize {
        self.len
    }

    /// A give (`n > 0`) or take (`n < 0`) request arrived. `Ok`: queue the worker.
    pub fn on_request(&mut self, n: i32) -> Result<(), Refused> {
        if self.stopped {
            return Err(Refused::Stopped);
        }
        let cap = self.ring.len();
        if self.len >= cap {
            return Err(Refused::Full { queued: self.len });
        }
        let at = (self.head + self.len) % cap;
        self.ring[at] = n;
        self.len += 1;
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
        if self.len == 0 {
            return None;
        }
        let n = self.ring[self.head];
        self.head = (self.head + 1) % self.ring.len();
        self.len -= 1;
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

    /// Stops admitting events (teardown); what was admitted still runs.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Whether the worker has nothing left to do.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn idle(&self) -> bool {
        self.len == 0 && self.serving.is_none() && self.release_all == 0
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_pagealloc_request))]
mod tests {
    use super::*;
    use crate::testing::ArrayVec;

    fn queue(cap: usize) -> RequestQueue<ArrayVec<i32, 16>> {
        RequestQueue::new((0..cap).map(|_| 0).collect())
    }

    /// Runs the worker to completion (answers succeed at once); whether its jobs
    /// were `want`, in order.
    fn drains_to<S: DerefMut<Target = [i32]>>(q: &mut RequestQueue<S>, want: &[Job]) -> bool {
        let mut same = true;
        let mut i = 0;
        while let Some(j) = q.next_job() {
            if let Job::Serve(_) = j {
                q.done();
            }
            same &= want.get(i) == Some(&j);
            i += 1;
        }
        same && i == want.len()
    }

    #[test]
    fn every_request_answered_in_order() {
        let mut q = queue(16);
        // Back to back, none answered yet: all kept (the old one-outstanding rule
        // dropped the second).
        for n in [7, -3, 5, -5, 50_001, i32::MIN] {
            assert_eq!(q.on_request(n), Ok(()));
        }
        assert_eq!(q.queued(), 6);
        assert!(drains_to(
            &mut q,
            &[
                Job::Serve(7),
                Job::Serve(-3),
                Job::Serve(5),
                Job::Serve(-5),
                Job::Serve(50_001),
                Job::Serve(i32::MIN)
            ]
        ));
        assert!(q.idle());
    }

    #[test]
    fn ring_wraps_and_refuses_beyond_capacity() {
        let mut q = queue(4);
        // Answers in order: the n-th is n, negated when even.
        let mut answered = 0;
        let mut answer = |n: i32| {
            answered += 1;
            assert_eq!(
                n,
                if answered % 2 == 0 {
                    -answered
                } else {
                    answered
                }
            );
        };
        let mut next = 1;
        // 1,000 requests of mixed sign through a 4-entry ring, worker interleaved.
        let mut round = 0;
        while next <= 1000 {
            while next <= 1000 {
                let n = if next % 2 == 0 { -next } else { next };
                match q.on_request(n) {
                    Ok(()) => next += 1,
                    Err(e) => {
                        assert_eq!(e, Refused::Full { queued: 4 });
                        break;
                    }
                }
            }
            // Serve some now, the rest later.
            let k = if round % 2 == 0 { 3 } else { 1 };
            round += 1;
            for _ in 0..k {
                let Some(j) = q.next_job() else { break };
                assert!(matches!(j, Job::Serve(_)));
                if let Job::Serve(n) = j {
                    q.done();
                    answer(n);
                }
            }
        }
        while let Some(j) = q.next_job() {
            assert!(matches!(j, Job::Serve(_)));
            if let Job::Serve(n) = j {
                q.done();
                answer(n);
            }
        }
        assert_eq!(answered, 1000);
    }

    #[test]
    fn request_while_serving_is_kept() {
        let mut q = queue(8);
        q.on_request(64).unwrap();
        assert_eq!(q.next_job(), Some(Job::Serve(64)));
        assert_eq!(q.serving(), Some(64));
        assert_eq!(q.on_request(-32), Ok(()));
        assert_eq!(q.on_request(1), Ok(()));
        q.done();
        assert!(drains_to(&mut q, &[Job::Serve(-32), Job::Serve(1)]));
        assert!(q.idle());
    }

    #[test]
    fn release_all_needs_no_answer_and_merges() {
        let mut q = queue(8);
        assert_eq!(q.on_release_all(), Ok(()));
        assert_eq!(q.on_release_all(), Ok(()));
        assert_eq!(q.on_request(5), Ok(()));
        assert!(drains_to(
            &mut q,
            &[Job::ReleaseAll { events: 2 }, Job::Serve(5)]
        ));
        assert!(q.idle());
    }

    #[test]
    fn release_all_runs_before_queued_requests_in_their_order() {
        let mut q = queue(8);
        q.on_request(300).unwrap();
        q.on_request(-20).unwrap();
        q.on_release_all().unwrap();
        assert!(drains_to(
            &mut q,
            &[
                Job::ReleaseAll { events: 1 },
                Job::Serve(300),
                Job::Serve(-20)
            ]
        ));
    }

    #[test]
    fn release_all_while_serving_runs_after_the_answer() {
        let mut q = queue(8);
        q.on_request(10).unwrap();
        assert_eq!(q.next_job(), Some(Job::Serve(10)));
        q.on_release_all().unwrap();
        q.on_request(4).unwrap();
        q.done();
        assert!(drains_to(
            &mut q,
            &[Job::ReleaseAll { events: 1 }, Job::Serve(4)]
        ));
    }

    #[test]
    fn stop_refuses_new_events_but_answers_queued_ones() {
        let mut q = queue(8);
        q.on_request(9).unwrap();
        q.on_request(-2).unwrap();
        q.on_release_all().unwrap();
        q.stop();
        assert_eq!(q.on_request(1), Err(Refused::Stopped));
        assert_eq!(q.on_release_all(), Err(Refused::Stopped));
        assert!(drains_to(
            &mut q,
            &[Job::ReleaseAll { events: 1 }, Job::Serve(9), Job::Serve(-2)]
        ));
        assert!(q.idle());
        assert_eq!(q.next_job(), None);
    }

    #[test]
    fn stop_while_serving() {
        let mut q = queue(8);
        q.on_request(-8).unwrap();
        assert_eq!(q.next_job(), Some(Job::Serve(-8)));
        q.stop();
        q.done();
        assert!(q.idle());
        assert_eq!(q.next_job(), None);
    }

    #[test]
    fn release_all_count_saturates() {
        let mut q = queue(1);
        q.release_all = u32::MAX;
        q.on_release_all().unwrap();
        assert_eq!(q.next_job(), Some(Job::ReleaseAll { events: u32::MAX }));
    }

    #[test]
    fn zero_capacity_refuses() {
        let mut q = queue(0);
        assert_eq!(q.on_request(1), Err(Refused::Full { queued: 0 }));
        assert_eq!(q.next_job(), None);
    }
}
