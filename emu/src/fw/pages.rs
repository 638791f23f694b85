//! The firmware page ledger: pages the driver gave, by DMA address.
//!
//! Gives are validated (non-null, 4 KiB aligned, mapped, not already held) as a
//! whole: one bad address rejects the command and is counted. Takes return at most
//! [`MAX_RECLAIM_NPAGES`] pages and never the pages firmware still needs.

use crate::ifc::pages::{FW_PAGE_SIZE, MAX_RECLAIM_NPAGES};
use crate::mem::GuestMemory;
use std::collections::{HashMap, HashSet};

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
    /// Outstanding page request (signed page count) per function.
    pub outstanding: HashMap<u16, i32>,
    /// Page requests refused because one was outstanding.
    pub requests_refused: u64,
    /// Pages dropped by a release-all request.
    pub released_all: u64,
    /// Pages firmware released by negative requests beyond the runtime demand.
    pub released_credit: u32,
}

impl Ledger {
    /// A ledger with the given demands.
    pub fn new(boot: u32, init: u32, regular: u32) -> Self {
        Ledger { boot_demand: boot, init_demand: init, regular_demand: regular, ..Default::default() }
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
    pub fn give(&mut self, func: u16, addrs: &[u64], mem: &dyn GuestMemory) -> Result<(), GiveError> {
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

    /// Clears every holding (device reset).
    pub fn clear(&mut self) {
        self.held.clear();
        self.outstanding.clear();
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
        assert_eq!(l.give(0, &[0x10_0800], &mem), Err(GiveError::Unaligned(0x10_0800)));
        assert_eq!(l.give(0, &[0x9000_0000], &mem), Err(GiveError::Unmapped(0x9000_0000)));
        assert_eq!(l.give(0, &[0x10_1000, 0x10_1000], &mem), Err(GiveError::Double(0x10_1000)));
        assert_eq!(l.held(0), 0);
        assert_eq!(l.rejected_gives, 4);
        let pages: Vec<u64> = (0..60_000u64).map(|i| 0x10_0000 + i * 4096).collect();
        l.give(0, &pages, &mem).unwrap();
        assert_eq!(l.give(0, &[0x10_0000], &mem), Err(GiveError::Double(0x10_0000)));
        assert_eq!(l.take(0, 100_000, 0).len(), 50_000);
        assert_eq!(l.take(0, 100_000, 9_000).len(), 1_000);
        assert_eq!(l.held(0), 9_000);
        assert_eq!(l.taken_total, 51_000);
    }
}
