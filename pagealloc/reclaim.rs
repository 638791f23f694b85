// SPDX-License-Identifier: GPL-2.0

//! Reclaim decisions at teardown: how many pages to ask back per
//! MANAGE_PAGES (take) command, when to give up, and what to make of the
//! device's answer.
//!
//! * Each command asks for every page still outstanding, up to what one
//!   output chain of the configured size can carry — not a fixed 768 — and
//!   the device may return fewer (`output_num_entries`).
//! * A device that returns more than asked is corrupt: stop.
//! * The timeout is progress-based: the deadline restarts whenever the
//!   ledger's count of pages the device holds dropped ([`Reclaim::on_ledger`]),
//!   not merely when a command returned entries: a device returning only
//!   addresses the ledger rejects (never given, or already returned) makes no
//!   progress and cannot keep teardown waiting beyond one timeout. Giving up
//!   happens only after a whole timeout without progress (upstream restarts
//!   its deadline on any returned entry; ours is stricter on purpose).
//! * Only the addresses the device actually returned (the first
//!   `output_num_entries` of `pas[]`) are released, each through
//!   [`super::ledger::Ledger::take`], which rejects unknown ones.
//!
//! Time is plain milliseconds from any monotonic clock the shell uses.
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use super::batch::pas_capacity;

/// Next step of a reclaim loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send another take command for [`Reclaim::next_request`] pages.
    Continue,
    /// Everything is back.
    Done,
    /// No progress for a whole timeout: stop and leave `remaining` pages
    /// with the device (never free them).
    GiveUp {
        /// Pages still held by the device.
        remaining: u64,
    },
}

/// The device's answer cannot be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReclaimError {
    /// `output_num_entries` exceeds the number requested.
    TooMany {
        /// Pages requested.
        requested: u32,
        /// Pages the device claims to return.
        returned: u32,
    },
}

/// State of one function's reclaim loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reclaim {
    outstanding: u64,
    max_per_cmd: u32,
    timeout_ms: u64,
    deadline_ms: u64,
    commands: u64,
}

impl Reclaim {
    /// Starts reclaiming `outstanding` pages at time `now_ms`, with
    /// output chains of at most `max_blocks` blocks per command and the
    /// RECLAIM_PAGES timeout `timeout_ms`.
    pub fn new(now_ms: u64, timeout_ms: u64, outstanding: u64, max_blocks: usize) -> Self {
        let cap = pas_capacity(max_blocks.max(1));
        Self {
            outstanding,
            max_per_cmd: u32::try_from(cap).unwrap_or(u32::MAX),
            timeout_ms,
            deadline_ms: now_ms.saturating_add(timeout_ms),
            commands: 0,
        }
    }

    /// Pages still held by the device.
    pub fn outstanding(&self) -> u64 {
        self.outstanding
    }

    /// Take commands answered so far.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn commands(&self) -> u64 {
        self.commands
    }

    /// Current deadline.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn deadline_ms(&self) -> u64 {
        self.deadline_ms
    }

    /// Pages to request in the next take command: all outstanding, capped
    /// by one output chain.
    pub fn next_request(&self) -> u32 {
        let cap = u64::from(self.max_per_cmd);
        // min() <= u32::MAX, lossless.
        u32::try_from(self.outstanding.min(cap)).unwrap_or(self.max_per_cmd)
    }

    /// First step, before any command (nothing to do when no page is out).
    pub fn start(&self) -> Step {
        if self.outstanding == 0 {
            Step::Done
        } else {
            Step::Continue
        }
    }

    /// Accounts a successful take that asked for `requested` pages and got
    /// `returned` (`output_num_entries`), at time `now_ms`. The caller
    /// releases exactly `returned` addresses from the output; passing the
    /// time after it did so keeps its own work out of the no-progress
    /// timeout.
    pub fn on_response(
        &mut self,
        now_ms: u64,
        requested: u32,
        returned: u32,
    ) -> Result<Step, ReclaimError> {
        if returned > requested {
            return Err(ReclaimError::TooMany {
                requested,
                returned,
            });
        }
        self.commands = self.commands.saturating_add(1);
        Ok(self.decide(now_ms))
    }

    /// The ledger, after releasing what the device returned, says the device
    /// still holds `held` pages (at `now_ms`). Progress (and a new deadline)
    /// only when that count dropped; returns the next step.
    pub fn on_ledger(&mut self, now_ms: u64, held: u64) -> Step {
        if held < self.outstanding {
            self.deadline_ms = now_ms.saturating_add(self.timeout_ms);
        }
        self.outstanding = held;
        self.decide(now_ms)
    }

    /// Accounts a take that failed (command error) at `now_ms`: no
    /// progress; retry until the deadline.
    pub fn on_failure(&mut self, now_ms: u64) -> Step {
        self.commands = self.commands.saturating_add(1);
        self.decide(now_ms)
    }

    /// The step at `now_ms` given what is outstanding (use after
    /// [`Reclaim::on_ledger`]).
    pub fn decide(&self, now_ms: u64) -> Step {
        if self.outstanding == 0 {
            Step::Done
        } else if now_ms >= self.deadline_ms {
            Step::GiveUp {
                remaining: self.outstanding,
            }
        } else {
            Step::Continue
        }
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_pagealloc_reclaim))]
mod tests {
    use super::*;
    use crate::pagealloc::ledger::tests::Store;
    use crate::pagealloc::ledger::Ledger;

    #[test]
    fn requests_all_outstanding_up_to_chain() {
        let r = Reclaim::new(0, 5000, 100, 12);
        assert_eq!(r.next_request(), 100);
        let r = Reclaim::new(0, 5000, 262_144, 782);
        assert_eq!(r.next_request(), 782 * 64);
        let r = Reclaim::new(0, 5000, 0, 12);
        assert_eq!(r.start(), Step::Done);
        assert_eq!(r.next_request(), 0);
    }

    #[test]
    fn device_returning_fewer_pages() {
        let mut r = Reclaim::new(0, 5000, 1000, 16);
        assert_eq!(r.start(), Step::Continue);
        let mut now = 0;
        let mut rounds = 0;
        while r.outstanding() > 0 {
            let req = r.next_request();
            let ret = req.min(300);
            now += 10;
            r.on_response(now, req, ret).unwrap();
            let s = r.on_ledger(now, r.outstanding() - u64::from(ret));
            rounds += 1;
            if r.outstanding() == 0 {
                assert_eq!(s, Step::Done);
            } else {
                assert_eq!(s, Step::Continue);
            }
        }
        assert_eq!(rounds, 4);
        assert_eq!(r.commands(), 4);
    }

    #[test]
    fn progress_resets_deadline() {
        let mut r = Reclaim::new(0, 5000, 10, 1);
        // no progress for 4.9 s
        assert_eq!(r.on_response(4900, 10, 0), Ok(Step::Continue));
        // progress at 4.95 s restarts the clock
        assert_eq!(r.on_response(4950, 10, 1), Ok(Step::Continue));
        assert_eq!(r.on_ledger(4950, 9), Step::Continue);
        assert_eq!(r.deadline_ms(), 9950);
        assert_eq!(r.on_response(9000, 9, 0), Ok(Step::Continue));
        assert_eq!(r.on_failure(9949), Step::Continue);
        assert_eq!(r.on_response(9950, 9, 0), Ok(Step::GiveUp { remaining: 9 }));
    }

    #[test]
    fn too_many_returned_is_corruption() {
        let mut r = Reclaim::new(0, 5000, 10, 1);
        assert_eq!(
            r.on_response(1, 10, 11),
            Err(ReclaimError::TooMany {
                requested: 10,
                returned: 11
            })
        );
        // nothing accounted
        assert_eq!(r.outstanding(), 10);
        assert_eq!(r.commands(), 0);
    }

    #[test]
    fn entries_the_ledger_rejects_are_no_progress() {
        // A device that answers every take with addresses it was never given (or
        // already returned): entries come back, the ledger count never drops.
        // Before the fix the deadline restarted on every such answer and teardown
        // waited forever.
        let mut l = Ledger::new(4096).unwrap();
        let mut s = Store::default();
        for i in 1..=10u64 {
            l.add_host_page(&mut s, 0, i * 0x1000).unwrap();
        }
        let mut r = Reclaim::new(0, 5000, l.func_pages(0), 1);
        let mut now = 0;
        let mut step = r.start();
        while step == Step::Continue {
            // the no-progress deadline is hit
            assert!(now <= 5000);
            let req = r.next_request();
            r.on_response(now, req, req).unwrap();
            for k in 0..u64::from(req) {
                // never given
                assert!(l.take(&mut s, 0, 0xdead_0000_0000 + k * 0x1000).is_err());
            }
            step = r.on_ledger(now, l.func_pages(0));
            now += 100;
        }
        assert_eq!(step, Step::GiveUp { remaining: 10 });
        // One returned page among duplicates is progress.
        let mut r = Reclaim::new(0, 5000, l.func_pages(0), 1);
        assert_eq!(r.on_response(4000, 10, 10), Ok(Step::Continue));
        assert!(l.take(&mut s, 0, 0x1000).is_ok());
        assert!(l.take(&mut s, 0, 0x1000).is_err());
        assert_eq!(r.on_ledger(4000, l.func_pages(0)), Step::Continue);
        assert_eq!(r.deadline_ms(), 9000);
        assert_eq!(r.outstanding(), 9);
    }
}

/// The reclaim loop over 200 pages: a store of 256 blocks (25 KB) is too large for
/// the stack of a KUnit case, so this one runs on the host only.
#[cfg(test)]
mod host_tests {
    use super::*;
    use crate::pagealloc::ledger::tests::ArrayStore;
    use crate::pagealloc::ledger::{Ledger, Released};
    use std::vec::Vec;

    type Store = ArrayStore<256>;

    #[test]
    fn reclaim_loop_against_ledger_releases_only_returned_pages() {
        let mut l = Ledger::new(4096).unwrap();
        let mut s = Store::default();
        for i in 1..=200u64 {
            l.add_host_page(&mut s, 0, i * 0x1000).unwrap();
        }
        // a fake device that returns at most 70 pages per command, one of
        // them an address it never got
        let mut device: Vec<u64> = (1..=200u64).map(|i| i * 0x1000).collect();
        let mut r = Reclaim::new(0, 5000, l.func_pages(0), 2);
        let mut freed = 0u64;
        let mut rejected = 0u64;
        let mut now = 0;
        let mut step = r.start();
        while step == Step::Continue {
            let req = r.next_request();
            assert!(req <= 128);
            let n = device.len().min(70).min(req as usize);
            let mut out: Vec<u64> = device.drain(..n).collect();
            if now == 0 {
                out[0] = 0xdead_0000; // corrupt entry
                device.push(0x1000); // device keeps the real one
            }
            now += 1;
            r.on_response(now, req, n as u32).unwrap();
            for a in out {
                match l.take(&mut s, 0, a) {
                    Ok(Released::HostPageFree(_)) => freed += 1,
                    Ok(Released::Kept) => {}
                    Err(_) => rejected += 1,
                }
            }
            // the ledger is the truth about what is still out
            step = r.on_ledger(now, l.func_pages(0));
        }
        assert_eq!(step, Step::Done);
        assert_eq!(freed, 200);
        assert_eq!(rejected, 1);
        assert_eq!(l.fw_pages(), 0);
    }
}
