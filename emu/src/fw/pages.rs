//! The firmware page ledger: pages the driver gave, by DMA address, and the page
//! requests (EQE 0x0b) the firmware sent.
//!
//! Rules and their sources:
//! - A give is validated as a whole (non-null, 4 KiB aligned, mapped, not already
//!   held): one bad address rejects the command and is counted. Source: PRM
//!   MANAGE_PAGES (pages are 4 KiB, `pas[]` are their addresses); upstream
//!   `alloc_system_page` never gives address 0 ("Firmware doesn't support page with
//!   physical address 0").
//! - A take returns at most [`MAX_RECLAIM_NPAGES`] pages and never the pages firmware
//!   still needs. Source: upstream `pagealloc.c` `MAX_RECLAIM_NPAGES` ("firmware
//!   cannot release more than 50000 back to the host in one go"); PRM
//!   `output_num_entries` may be below `input_num_entries`.
//! - Page requests: any number may be outstanding, sent back to back before earlier
//!   ones are answered (upstream queues each request as its own work item on an
//!   ordered workqueue; nothing in the PRM limits them to one). See [`Requests`] for
//!   what "answered" means.

use crate::ifc::pages::{FW_PAGE_SIZE, MAX_RECLAIM_NPAGES};
use crate::mem::GuestMemory;
use std::collections::{HashMap, HashSet, VecDeque};

/// A page request the firmware sent and the driver has not answered yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageReq {
    /// Function id.
    pub func: u16,
    /// Signed page count as sent (positive: give, negative: take).
    pub num_pages: i32,
    /// Give: pages given so far for it. Take: pages asked for so far
    /// (`input_num_entries` of MANAGE_PAGES take).
    pub done: u32,
}

impl PageReq {
    /// Pages still to give, or to ask for, before the request is answered.
    fn left(&self) -> u32 {
        let want = if self.num_pages > 0 {
            self.num_pages.unsigned_abs()
        } else {
            // The driver caps a take at MAX_RECLAIM_NPAGES per MANAGE_PAGES (upstream
            // `req_pages_handler`); the firmware asks again for the rest.
            self.num_pages.unsigned_abs().min(MAX_RECLAIM_NPAGES)
        };
        want.saturating_sub(self.done)
    }
}

/// A page request waiting for room in the pages EQ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    /// Function id.
    pub func: u16,
    /// Signed page count.
    pub num_pages: i32,
    /// Release-all request (no answer expected).
    pub release_all: bool,
    /// The rest of a take request asked again: its pages were already released
    /// when the first request was sent.
    pub reask: bool,
}

/// Page requests the firmware sent or holds, and how they were answered.
///
/// "Answered" (our definition; the PRM describes the request and MANAGE_PAGES but
/// not how one answers the other, upstream `pagealloc.c` fixes the practice):
/// - A give request for N pages is answered once MANAGE_PAGES(give) commands gave N
///   pages for its function after it was sent (pages are credited to outstanding give
///   requests in the order they were sent, so a driver may split the supply over
///   several commands; upstream sends one give of exactly N), or by one
///   MANAGE_PAGES(allocation failure) (upstream `page_notify_fail`), which drops what
///   was still missing.
/// - A take request for N pages is answered once MANAGE_PAGES(take) commands for its
///   function asked (`input_num_entries`) for min(N, 50,000) pages in total, however
///   many the firmware returned (upstream clamps an event take to
///   `MAX_RECLAIM_NPAGES` and sends one take). If the answer asked for fewer than N,
///   the firmware sends a new request for the rest (counted in `reasked`).
/// - A release-all needs no answer and is not counted here.
///
/// A request still outstanding when the function is disabled (DISABLE_HCA), reset or
/// fast-torn-down is counted as unanswered; one still waiting for room in the EQ as
/// never sent.
#[derive(Debug, Default)]
pub struct Requests {
    /// Requests waiting for room in the pages EQ, in order. The firmware never
    /// overruns an EQ (PRM: an EQ overrun is an error), so requests sent back to back
    /// wait here while the EQ is full.
    pub queued: VecDeque<Queued>,
    /// Sent, not answered yet, in the order sent.
    pub outstanding: VecDeque<PageReq>,
    /// Give/take requests written to the EQ (re-asks included).
    pub sent: u64,
    /// Requests answered.
    pub answered: u64,
    /// Requests answered by MANAGE_PAGES(allocation failure).
    pub cant_give: u64,
    /// Requests outstanding when the function went away.
    pub unanswered: u64,
    /// Requests that were still waiting for EQ room when the function went away.
    pub never_sent: u64,
    /// Answers to a request that was not the oldest outstanding one of its function.
    pub out_of_order: u64,
    /// New requests for the part of a take the answer did not ask for.
    pub reasked: u64,
    /// Release-all requests written to the EQ.
    pub release_all_sent: u64,
}

impl Requests {
    /// Records a give/take request written to the EQ.
    pub fn sent(&mut self, func: u16, num_pages: i32) {
        self.sent += 1;
        self.outstanding.push_back(PageReq {
            func,
            num_pages,
            done: 0,
        });
    }

    /// Pages outstanding give requests of `func` still wait for.
    pub fn pending_give_pages(&self, func: u16) -> u64 {
        self.outstanding
            .iter()
            .filter(|r| r.func == func && r.num_pages > 0)
            .map(|r| u64::from(r.left()))
            .sum()
    }

    /// Outstanding requests of `func`.
    pub fn outstanding_of(&self, func: u16) -> usize {
        self.outstanding.iter().filter(|r| r.func == func).count()
    }

    /// The oldest outstanding request of `func` with the sign of `give`; counts an
    /// answer out of order when an older request of the other sign is waiting.
    fn first(&mut self, func: u16, give: bool) -> Option<usize> {
        let i = self
            .outstanding
            .iter()
            .position(|r| r.func == func && (r.num_pages > 0) == give)?;
        if self.outstanding.iter().take(i).any(|r| r.func == func) {
            self.out_of_order += 1;
        }
        Some(i)
    }

    /// MANAGE_PAGES(give) of `pages` pages for `func` succeeded.
    pub fn on_give(&mut self, func: u16, mut pages: u32) {
        while pages > 0 {
            let Some(i) = self.first(func, true) else {
                return;
            };
            let r = &mut self.outstanding[i];
            let k = pages.min(r.left());
            r.done += k;
            pages -= k;
            if r.left() == 0 {
                self.outstanding.remove(i);
                self.answered += 1;
            }
        }
    }

    /// MANAGE_PAGES(allocation failure) for `func`: answers its oldest give request;
    /// returns the pages that request still wanted.
    pub fn on_alloc_fail(&mut self, func: u16) -> Option<u32> {
        let i = self.first(func, true)?;
        let r = self.outstanding.remove(i)?;
        self.answered += 1;
        self.cant_give += 1;
        Some(r.left())
    }

    /// MANAGE_PAGES(take) asking for `asked` pages of `func` was executed. Returns the
    /// page counts the firmware asks again for (take requests answered by fewer asks
    /// than they requested).
    pub fn on_take(&mut self, func: u16, mut asked: u32) -> Vec<u32> {
        let mut again = Vec::new();
        while asked > 0 {
            let Some(i) = self.first(func, false) else {
                break;
            };
            let r = &mut self.outstanding[i];
            let k = asked.min(r.left());
            r.done += k;
            asked -= k;
            if r.left() == 0 {
                // An ask beyond the 50,000 cap also covers the rest of this request.
                let extra = asked.min(r.num_pages.unsigned_abs().saturating_sub(r.done));
                r.done += extra;
                asked -= extra;
                let r = self.outstanding.remove(i).unwrap_or(PageReq {
                    func,
                    num_pages: 0,
                    done: 0,
                });
                self.answered += 1;
                let rest = r.num_pages.unsigned_abs().saturating_sub(r.done);
                if rest > 0 {
                    again.push(rest);
                }
            }
        }
        again
    }

    /// The function went away: what is outstanding stays unanswered, what waits for
    /// the EQ is never sent.
    pub fn drop_all(&mut self) {
        self.unanswered += self.outstanding.len() as u64;
        self.never_sent += self.queued.len() as u64;
        self.outstanding.clear();
        self.queued.clear();
    }
}

/// A fault injected into MANAGE_PAGES(take) answers (control `take_fault`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TakeFault {
    /// Every entry is an address the driver never gave (no page leaves the ledger).
    NeverGiven,
    /// Every entry repeats one returned page (only that page leaves the ledger).
    Duplicate,
    /// These addresses, verbatim (those held leave the ledger).
    Addrs(Vec<u64>),
}

/// First address [`TakeFault::NeverGiven`] returns: page-aligned, far above any
/// guest memory the harness maps.
pub const NEVER_GIVEN_BASE: u64 = 0xdead_0000_0000;

/// Why a give was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GiveError {
    /// Address 0.
    Null,
    /// Not 4 KiB aligned.
    Unaligned(u64),
    /// Not in mapped guest memory.
    Unmapped(u64),
    /// Already held (or repeated in the same command).
    Double(u64),
}

/// Page demands and holdings.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Pages demanded by QUERY_PAGES(boot).
    pub boot_demand: u32,
    /// Pages demanded by QUERY_PAGES(init).
    pub init_demand: u32,
    /// Pages demanded by QUERY_PAGES(regular).
    pub regular_demand: u32,
    /// Extra pages asked for by page-request events and still wanted.
    pub runtime_demand: u32,
    /// Held pages by function id.
    held: HashMap<u16, HashSet<u64>>,
    /// Pages given in total.
    pub given_total: u64,
    /// Pages returned in total.
    pub taken_total: u64,
    /// Rejected give commands.
    pub rejected_gives: u64,
    /// Rejected take commands.
    pub rejected_takes: u64,
    /// MANAGE_PAGES(allocation fail) reports.
    pub alloc_fail_reports: u64,
    /// Page requests sent and their answers.
    pub requests: Requests,
    /// Fault injected into take answers, and how many more takes it applies to
    /// (`None`: every take).
    pub take_fault: Option<(TakeFault, Option<u32>)>,
    /// Take answers a fault changed.
    pub take_faults: u64,
    /// Pages dropped by a release-all request.
    pub released_all: u64,
    /// Pages firmware released by negative requests beyond the runtime demand.
    pub released_credit: u32,
}

impl Ledger {
    /// A ledger with the given demands.
    pub fn new(boot: u32, init: u32, regular: u32) -> Self {
        Ledger {
            boot_demand: boot,
            init_demand: init,
            regular_demand: regular,
            ..Default::default()
        }
    }

    /// Pages held by `func`.
    pub fn held(&self, func: u16) -> usize {
        self.held.get(&func).map_or(0, |s| s.len())
    }

    /// Pages held by all functions.
    pub fn held_total(&self) -> usize {
        self.held.values().map(|s| s.len()).sum()
    }

    /// True if `addr` is held by `func`.
    pub fn holds(&self, func: u16, addr: u64) -> bool {
        self.held.get(&func).is_some_and(|s| s.contains(&addr))
    }

    /// Validates and records a give.
    pub fn give(
        &mut self,
        func: u16,
        addrs: &[u64],
        mem: &dyn GuestMemory,
    ) -> Result<(), GiveError> {
        let set = self.held.entry(func).or_default();
        let mut seen = HashSet::with_capacity(addrs.len());
        let check = |a: u64, seen: &mut HashSet<u64>| -> Result<(), GiveError> {
            if a == 0 {
                return Err(GiveError::Null);
            }
            if !a.is_multiple_of(FW_PAGE_SIZE) {
                return Err(GiveError::Unaligned(a));
            }
            if set.contains(&a) || !seen.insert(a) {
                return Err(GiveError::Double(a));
            }
            if !mem.is_mapped(a, FW_PAGE_SIZE) {
                return Err(GiveError::Unmapped(a));
            }
            Ok(())
        };
        for &a in addrs {
            if let Err(e) = check(a, &mut seen) {
                self.rejected_gives += 1;
                return Err(e);
            }
        }
        set.extend(addrs.iter().copied());
        self.given_total += addrs.len() as u64;
        Ok(())
    }

    /// Returns up to `n` pages of `func`, keeping `pinned` pages held.
    pub fn take(&mut self, func: u16, n: u32, pinned: usize) -> Vec<u64> {
        let Some(set) = self.held.get_mut(&func) else {
            return Vec::new();
        };
        let avail = set.len().saturating_sub(pinned);
        let want = (n.min(MAX_RECLAIM_NPAGES) as usize).min(avail);
        let out: Vec<u64> = set.iter().take(want).copied().collect();
        for a in &out {
            set.remove(a);
        }
        self.taken_total += out.len() as u64;
        out
    }

    /// Drops every page of `func` (release-all request); returns how many.
    pub fn release_all(&mut self, func: u16) -> usize {
        let n = self.held.remove(&func).map_or(0, |s| s.len());
        self.released_all += n as u64;
        n
    }

    /// Removes `addr` from `func`'s holdings if held; returns whether it was.
    pub fn remove(&mut self, func: u16, addr: u64) -> bool {
        let gone = self.held.get_mut(&func).is_some_and(|s| s.remove(&addr));
        if gone {
            self.taken_total += 1;
        }
        gone
    }

    /// The addresses a take of up to `n` pages returns under `fault`, changing the
    /// holdings as described by [`TakeFault`].
    pub fn take_with_fault(
        &mut self,
        func: u16,
        n: u32,
        pinned: usize,
        fault: &TakeFault,
    ) -> Vec<u64> {
        let n = n.min(MAX_RECLAIM_NPAGES);
        match fault {
            TakeFault::NeverGiven => (0..u64::from(n))
                .map(|i| NEVER_GIVEN_BASE + i * FW_PAGE_SIZE)
                .collect(),
            TakeFault::Duplicate => {
                let avail = self.held(func).saturating_sub(pinned).min(n as usize);
                match self.take(func, 1, pinned).first() {
                    Some(&a) => vec![a; avail.max(1)],
                    None => Vec::new(),
                }
            }
            TakeFault::Addrs(list) => {
                let out: Vec<u64> = list.iter().copied().take(n as usize).collect();
                for &a in &out {
                    self.remove(func, a);
                }
                out
            }
        }
    }

    /// Clears every holding (device reset).
    pub fn clear(&mut self) {
        self.held.clear();
        self.requests.drop_all();
        self.runtime_demand = 0;
        self.released_credit = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::VecMemory;

    #[test]
    fn give_validation_and_take_limit() {
        let mem = VecMemory::new(0x10_0000, 512 << 20);
        let mut l = Ledger::new(1, 1, 0);
        assert_eq!(l.give(0, &[0], &mem), Err(GiveError::Null));
        assert_eq!(
            l.give(0, &[0x10_0800], &mem),
            Err(GiveError::Unaligned(0x10_0800))
        );
        assert_eq!(
            l.give(0, &[0x9000_0000], &mem),
            Err(GiveError::Unmapped(0x9000_0000))
        );
        assert_eq!(
            l.give(0, &[0x10_1000, 0x10_1000], &mem),
            Err(GiveError::Double(0x10_1000))
        );
        assert_eq!(l.held(0), 0);
        assert_eq!(l.rejected_gives, 4);
        let pages: Vec<u64> = (0..60_000u64).map(|i| 0x10_0000 + i * 4096).collect();
        l.give(0, &pages, &mem).unwrap();
        assert_eq!(
            l.give(0, &[0x10_0000], &mem),
            Err(GiveError::Double(0x10_0000))
        );
        assert_eq!(l.take(0, 100_000, 0).len(), 50_000);
        assert_eq!(l.take(0, 100_000, 9_000).len(), 1_000);
        assert_eq!(l.held(0), 9_000);
        assert_eq!(l.taken_total, 51_000);
    }

    #[test]
    fn gives_answer_requests_in_order_split_over_commands() {
        let mut r = Requests::default();
        r.sent(0, 100);
        r.sent(0, 30);
        r.on_give(0, 64);
        assert_eq!((r.answered, r.outstanding.len()), (0, 2));
        r.on_give(0, 64);
        assert_eq!((r.answered, r.outstanding.len()), (1, 1));
        assert_eq!(r.outstanding[0].done, 28);
        r.on_give(0, 2);
        assert_eq!((r.answered, r.outstanding.len(), r.out_of_order), (2, 0, 0));
        // Gives beyond every request (boot/init supply) answer nothing.
        r.on_give(0, 5);
        assert_eq!(r.answered, 2);
    }

    #[test]
    fn take_capped_at_50000_is_reasked() {
        let mut r = Requests::default();
        r.sent(0, -80_000);
        assert_eq!(r.on_take(0, 50_000), vec![30_000]);
        assert_eq!((r.answered, r.outstanding.len()), (1, 0));
        // The re-ask is a request of its own, answered by the next take.
        r.sent(0, -30_000);
        assert!(r.on_take(0, 30_000).is_empty());
        // One take asking for all of a smaller request answers it without re-ask.
        r.sent(0, -20);
        assert!(r.on_take(0, 20).is_empty());
        assert_eq!((r.answered, r.sent), (3, 3));
    }

    #[test]
    fn out_of_order_answers_counted_and_alloc_fail_answers_oldest_give() {
        let mut r = Requests::default();
        r.sent(0, 10);
        r.sent(0, -5);
        r.sent(0, 7);
        assert!(r.on_take(0, 5).is_empty());
        assert_eq!(r.out_of_order, 1);
        assert_eq!(r.on_alloc_fail(0), Some(10));
        r.on_give(0, 7);
        assert_eq!((r.answered, r.cant_give, r.out_of_order), (3, 1, 1));
        r.sent(0, 3);
        r.queued.push_back(Queued {
            func: 0,
            num_pages: 4,
            release_all: false,
            reask: false,
        });
        r.drop_all();
        assert_eq!((r.unanswered, r.never_sent), (1, 1));
    }

    #[test]
    fn take_faults() {
        let mem = VecMemory::new(0x10_0000, 1 << 20);
        let mut l = Ledger::new(0, 0, 0);
        let pages: Vec<u64> = (0..8u64).map(|i| 0x10_0000 + i * 4096).collect();
        l.give(0, &pages, &mem).unwrap();
        let bogus = l.take_with_fault(0, 4, 0, &TakeFault::NeverGiven);
        assert_eq!(bogus.len(), 4);
        assert!(bogus.iter().all(|a| !pages.contains(a)));
        assert_eq!(l.held(0), 8);
        let dup = l.take_with_fault(0, 4, 0, &TakeFault::Duplicate);
        assert_eq!(dup.len(), 4);
        assert!(dup.iter().all(|a| *a == dup[0]));
        assert_eq!(l.held(0), 7);
        let a = pages.iter().copied().find(|a| l.holds(0, *a)).unwrap();
        let out = l.take_with_fault(0, 4, 0, &TakeFault::Addrs(vec![a, 0x42_0000]));
        assert_eq!(out, vec![a, 0x42_0000]);
        assert_eq!(l.held(0), 6);
    }
}
