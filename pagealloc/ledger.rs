// SPDX-License-Identifier: GPL-2.0

//! The firmware page ledger: which 4 KiB pages each function's firmware
//! holds, keyed by DMA address.
//!
//! Firmware pages are 4 KiB whatever the host `PAGE_SIZE`. The driver maps
//! whole host pages and carves each into `PAGE_SIZE / 4096` firmware pages
//! ("chunks"); a host page is unmapped and freed only when none of its
//! chunks is held by the device any more. The ledger enforces that:
//!
//! * giving a chunk the device already holds is rejected ([`LedgerError::DoubleGive`]);
//! * taking back an address that is not a chunk given to that function is
//!   rejected ([`LedgerError::UnknownPage`], [`LedgerError::NotGiven`]),
//!   so a corrupt MANAGE_PAGES output can never make the driver free memory
//!   the device still uses;
//! * DMA address 0 is never handed to the device.
//!
//! Storage is abstract ([`PageStore`]): the kernel backs it with an
//! `RBTree`/`XArray`, the host tests with a `BTreeMap`. The ledger itself
//! keeps counters, a small per-function table and a cache of host pages
//! that have free chunks, so that with 4 KiB host pages every operation is
//! one store lookup.
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use core::fmt;

/// Size of a firmware page.
pub const FW_PAGE_SIZE: u64 = crate::ifc::pages::FW_PAGE_SIZE;
/// Most firmware pages one host page may hold (256 KiB host pages).
pub const MAX_CHUNKS: u64 = 64;
/// Most distinct functions the ledger tracks.
pub const MAX_FUNCS: usize = 8;
/// Size of the cache of host pages with free chunks.
pub const PARTIAL_CACHE: usize = 16;

/// Function key: `func_id | ec_function << 16` (FUNC_ID mode) or the
/// vhca_id (VHCA_ID mode).
pub type FuncKey = u32;

/// What the ledger stores per host page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostPage {
    /// Bit i set: firmware page i of this host page is held by the device.
    pub given: u64,
}

/// The storage behind a [`Ledger`]: host page records keyed by
/// (function, host page DMA address).
///
/// Implemented by the kernel shell (e.g. an `XArray` of functions holding
/// an `RBTree` keyed by DMA address) and by tests over a `BTreeMap`.
pub trait PageStore {
    /// The record of the host page at `host` of `func`.
    fn get(&self, func: FuncKey, host: u64) -> Option<HostPage>;
    /// Replaces an existing record; returns false if there is none.
    fn update(&mut self, func: FuncKey, host: u64, page: HostPage) -> bool;
    /// Inserts a new record; `Err(())` when storage cannot be allocated.
    // Clippy checks only exported items: the host crate's trait, not the module's.
    #[cfg_attr(
        not(CONFIG_RUST),
        expect(clippy::result_unit_err, reason = "no error detail to give")
    )]
    fn insert(&mut self, func: FuncKey, host: u64, page: HostPage) -> Result<(), ()>;
    /// Removes a record.
    fn remove(&mut self, func: FuncKey, host: u64) -> Option<HostPage>;
    /// Any record of `func` (for releasing everything).
    fn first(&self, func: FuncKey) -> Option<(u64, HostPage)>;
    /// Some record of `func` whose `given` is not `full` (a host page with
    /// a free chunk). Only called after the ledger's own cache overflowed,
    /// so a linear scan is acceptable.
    fn find_partial(&self, func: FuncKey, full: u64) -> Option<u64>;
}

/// Ledger errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LedgerError {
    /// Host page size not a power of two multiple of 4 KiB up to 256 KiB.
    BadHostPageSize(u64),
    /// DMA address 0 cannot be given to the device.
    ZeroAddress,
    /// Address not aligned (host page or 4 KiB firmware page).
    Misaligned(u64),
    /// The host page is already tracked.
    DuplicateHostPage(u64),
    /// The firmware page is already held by the device.
    DoubleGive(u64),
    /// The address is not in any host page of the function.
    UnknownPage(u64),
    /// The firmware page is tracked but not held by the device.
    NotGiven(u64),
    /// More functions than [`MAX_FUNCS`].
    TooManyFunctions,
    /// The store could not allocate a record.
    NoMemory,
}

impl fmt::Display for LedgerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::BadHostPageSize(s) => write!(f, "unsupported host page size {s}"),
            Self::ZeroAddress => f.write_str("page at DMA address 0"),
            Self::Misaligned(a) => write!(f, "misaligned page address {a:#x}"),
            Self::DuplicateHostPage(a) => write!(f, "host page {a:#x} already tracked"),
            Self::DoubleGive(a) => write!(f, "page {a:#x} already given to firmware"),
            Self::UnknownPage(a) => write!(f, "page {a:#x} unknown"),
            Self::NotGiven(a) => write!(f, "page {a:#x} not held by firmware"),
            Self::TooManyFunctions => f.write_str("too many functions"),
            Self::NoMemory => f.write_str("out of memory for page tracking"),
        }
    }
}

/// Result of returning a firmware page to the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Released {
    /// Other chunks of its host page are still held by the device.
    Kept,
    /// The whole host page at this DMA address is free: unmap and free it.
    HostPageFree(u64),
}

#[derive(Clone, Copy, Debug, Default)]
struct FuncCount {
    key: FuncKey,
    pages: u64,
    used: bool,
}

/// Page ledger of one device.
#[derive(Clone, Debug)]
pub struct Ledger {
    host_page_size: u64,
    chunks: u32,
    full: u64,
    fw_pages: u64,
    host_pages: u64,
    funcs: [FuncCount; MAX_FUNCS],
    /// Host pages with free chunks: (func, host address).
    cache: [Option<(FuncKey, u64)>; PARTIAL_CACHE],
    /// Host pages with free chunks not in `cache`.
    overflow: u64,
}

impl Ledger {
    /// A ledger for host pages of `host_page_size` bytes (`PAGE_SIZE`).
    pub fn new(host_page_size: u64) -> Result<Self, LedgerError> {
        let bad = LedgerError::BadHostPageSize(host_page_size);
        if !host_page_size.is_power_of_two() || host_page_size < FW_PAGE_SIZE {
            return Err(bad);
        }
        let chunks64 = host_page_size / FW_PAGE_SIZE;
        if chunks64 > MAX_CHUNKS {
            return Err(bad);
        }
        let chunks = u32::try_from(chunks64).map_err(|_| bad)?;
        let full = if chunks64 == 64 {
            u64::MAX
        } else {
            (1u64 << chunks64) - 1
        };
        Ok(Self {
            host_page_size,
            chunks,
            full,
            fw_pages: 0,
            host_pages: 0,
            funcs: [FuncCount::default(); MAX_FUNCS],
            cache: [None; PARTIAL_CACHE],
            overflow: 0,
        })
    }

    /// Firmware pages per host page.
    pub fn chunks_per_host_page(&self) -> u32 {
        self.chunks
    }

    /// Firmware pages held by the device, all functions.
    pub fn fw_pages(&self) -> u64 {
        self.fw_pages
    }

    /// Host pages tracked (mapped and partly or fully given).
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn host_pages(&self) -> u64 {
        self.host_pages
    }

    /// Firmware pages held by the device for `func`.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn func_pages(&self, func: FuncKey) -> u64 {
        self.funcs
            .iter()
            .find(|f| f.used && f.key == func)
            .map_or(0, |f| f.pages)
    }

    /// Functions that hold pages, for reclaim at teardown.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn funcs_with_pages(&self) -> impl Iterator<Item = FuncKey> + '_ {
        self.funcs
            .iter()
            .filter(|f| f.used && f.pages > 0)
            .map(|f| f.key)
    }

    fn func_slot(&mut self, func: FuncKey) -> Result<&mut FuncCount, LedgerError> {
        let idx = match self.funcs.iter().position(|f| f.used && f.key == func) {
            Some(i) => i,
            None => {
                let i = self
                    .funcs
                    .iter()
                    .position(|f| !f.used || f.pages == 0)
                    .ok_or(LedgerError::TooManyFunctions)?;
                self.funcs[i] = FuncCount {
                    key: func,
                    pages: 0,
                    used: true,
                };
                i
            }
        };
        Ok(&mut self.funcs[idx])
    }

    fn count_given(&mut self, func: FuncKey, n: u64) {
        self.fw_pages = self.fw_pages.saturating_add(n);
        if let Ok(f) = self.func_slot(func) {
            f.pages = f.pages.saturating_add(n);
        }
    }

    fn count_taken(&mut self, func: FuncKey, n: u64) {
        self.fw_pages = self.fw_pages.saturating_sub(n);
        if let Some(f) = self.funcs.iter_mut().find(|f| f.used && f.key == func) {
            f.pages = f.pages.saturating_sub(n);
        }
    }

    fn host_of(&self, addr: u64) -> u64 {
        addr & !(self.host_page_size - 1)
    }

    fn chunk_of(&self, addr: u64) -> u32 {
        // < chunks <= 64, lossless.
        ((addr & (self.host_page_size - 1)) / FW_PAGE_SIZE) as u32
    }

    fn cache_remove(&mut self, func: FuncKey, host: u64) -> bool {
        for e in self.cache.iter_mut() {
            if *e == Some((func, host)) {
                *e = None;
                return true;
            }
        }
        false
    }

    fn mark_partial(&mut self, func: FuncKey, host: u64) {
        if let Some(e) = self.cache.iter_mut().find(|e| e.is_none()) {
            *e = Some((func, host));
        } else {
            self.overflow = self.overflow.saturating_add(1);
        }
    }

    fn unmark_partial(&mut self, func: FuncKey, host: u64) {
        if !self.cache_remove(func, host) {
            self.overflow = self.overflow.saturating_sub(1);
        }
    }

    /// Registers a newly mapped host page of `func` at DMA address `host`
    /// and gives its first firmware page; returns that page's address.
    /// The remaining chunks (if `PAGE_SIZE > 4 KiB`) become available to
    /// [`Ledger::give_free_chunk`]. The host page must be aligned to the
    /// host page size and must not be at address 0.
    pub fn add_host_page<S: PageStore + ?Sized>(
        &mut self,
        store: &mut S,
        func: FuncKey,
        host: u64,
    ) -> Result<u64, LedgerError> {
        if host == 0 {
            return Err(LedgerError::ZeroAddress);
        }
        if host & (self.host_page_size - 1) != 0 {
            return Err(LedgerError::Misaligned(host));
        }
        if store.get(func, host).is_some() {
            return Err(LedgerError::DuplicateHostPage(host));
        }
        // Reserve the function slot before touching the store.
        self.func_slot(func)?;
        store
            .insert(func, host, HostPage { given: 1 })
            .map_err(|()| LedgerError::NoMemory)?;
        self.host_pages = self.host_pages.saturating_add(1);
        if self.full != 1 {
            self.mark_partial(func, host);
        }
        self.count_given(func, 1);
        Ok(host)
    }

    /// Gives a free chunk of an already mapped host page of `func`, if any;
    /// returns its address. `None`: map a new host page and call
    /// [`Ledger::add_host_page`].
    pub fn give_free_chunk<S: PageStore + ?Sized>(
        &mut self,
        store: &mut S,
        func: FuncKey,
    ) -> Option<u64> {
        let host = match self.cache.iter().flatten().find(|(f, _)| *f == func) {
            Some(&(_, h)) => h,
            None if self.overflow > 0 => store.find_partial(func, self.full)?,
            None => return None,
        };
        let page = store.get(func, host)?;
        let free = !page.given & self.full;
        if free == 0 {
            // Stale cache entry: repair and give up on this one.
            self.cache_remove(func, host);
            return None;
        }
        let chunk = free.trailing_zeros();
        let addr = host + u64::from(chunk) * FW_PAGE_SIZE;
        self.give(store, func, addr).ok()?;
        Some(addr)
    }

    /// Marks the firmware page at `addr` (inside a tracked host page of
    /// `func`) as held by the device. Giving a held page is an error.
    pub fn give<S: PageStore + ?Sized>(
        &mut self,
        store: &mut S,
        func: FuncKey,
        addr: u64,
    ) -> Result<(), LedgerError> {
        if addr == 0 {
            return Err(LedgerError::ZeroAddress);
        }
        if addr % FW_PAGE_SIZE != 0 {
            return Err(LedgerError::Misaligned(addr));
        }
        let host = self.host_of(addr);
        let mut page = store
            .get(func, host)
            .ok_or(LedgerError::UnknownPage(addr))?;
        let b = 1u64 << self.chunk_of(addr);
        if page.given & b != 0 {
            return Err(LedgerError::DoubleGive(addr));
        }
        page.given |= b;
        if !store.update(func, host, page) {
            return Err(LedgerError::UnknownPage(addr));
        }
        if page.given == self.full {
            self.unmark_partial(func, host);
        }
        self.count_given(func, 1);
        Ok(())
    }

    /// The device returned the firmware page at `addr` of `func` (a take,
    /// or a give that failed). Unknown or not-held addresses are errors and
    /// change nothing.
    pub fn take<S: PageStore + ?Sized>(
        &mut self,
        store: &mut S,
        func: FuncKey,
        addr: u64,
    ) -> Result<Released, LedgerError> {
        if addr % FW_PAGE_SIZE != 0 {
            return Err(LedgerError::Misaligned(addr));
        }
        let host = self.host_of(addr);
        let mut page = store
            .get(func, host)
            .ok_or(LedgerError::UnknownPage(addr))?;
        let b = 1u64 << self.chunk_of(addr);
        if page.given & b == 0 {
            return Err(LedgerError::NotGiven(addr));
        }
        let was_full = page.given == self.full;
        page.given &= !b;
        self.count_taken(func, 1);
        if page.given == 0 {
            store.remove(func, host);
            self.host_pages = self.host_pages.saturating_sub(1);
            if !was_full {
                self.unmark_partial(func, host);
            }
            Ok(Released::HostPageFree(host))
        } else {
            if !store.update(func, host, page) {
                return Err(LedgerError::UnknownPage(addr));
            }
            if was_full {
                self.mark_partial(func, host);
            }
            Ok(Released::Kept)
        }
    }

    /// Forgets one host page of `func` and every firmware page of it the device
    /// holds, without the device's help; returns the host page's DMA address (to
    /// unmap and free) and how many firmware pages were dropped, or `None` when
    /// `func` holds nothing. Calling it until `None` is [`Ledger::release_all`] for a
    /// caller that must reach its store between host pages (to free the memory of
    /// each), without collecting the addresses first.
    pub fn release_host_page<S: PageStore + ?Sized>(
        &mut self,
        store: &mut S,
        func: FuncKey,
    ) -> Option<(u64, u64)> {
        let (host, page) = store.first(func)?;
        store.remove(func, host)?;
        let n = u64::from(page.given.count_ones());
        self.count_taken(func, n);
        self.host_pages = self.host_pages.saturating_sub(1);
        if page.given != self.full {
            self.unmark_partial(func, host);
        }
        Some((host, n))
    }

    /// Forgets every page of `func` without the device's help — for a
    /// "release all pages" event (firmware already dropped them) or a device
    /// confirmed to have stopped DMA. Calls `free_host` with each host page
    /// to unmap and free; returns the number of firmware pages dropped.
    pub fn release_all<S: PageStore + ?Sized>(
        &mut self,
        store: &mut S,
        func: FuncKey,
        mut free_host: impl FnMut(u64),
    ) -> u64 {
        let mut dropped = 0u64;
        while let Some((host, n)) = self.release_host_page(store, func) {
            dropped = dropped.saturating_add(n);
            free_host(host);
        }
        dropped
    }

    /// Fills `out` with addresses of firmware pages `func` holds (at most
    /// `out.len()`), as a forceful local reclaim would when the device can
    /// no longer answer; the caller then [`Ledger::take`]s each. Returns how
    /// many were written.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn collect_given<S: PageStore + ?Sized>(
        &self,
        store: &S,
        func: FuncKey,
        out: &mut [u64],
    ) -> usize {
        // Only the first host page is visible through `first`; walk its
        // chunks. Callers loop (take, collect again) until nothing is left.
        let mut n = 0;
        if let Some((host, page)) = store.first(func) {
            let mut m = page.given;
            while m != 0 && n < out.len() {
                let c = m.trailing_zeros();
                m &= m - 1;
                out[n] = host + u64::from(c) * FW_PAGE_SIZE;
                n += 1;
            }
        }
        n
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::vec::Vec;

    /// A `BTreeMap` store, as a test double for the kernel containers.
    #[derive(Default)]
    pub(crate) struct MapStore {
        pub(crate) map: BTreeMap<(FuncKey, u64), HostPage>,
        pub(crate) fail_insert: bool,
    }

    impl PageStore for MapStore {
        fn get(&self, func: FuncKey, host: u64) -> Option<HostPage> {
            self.map.get(&(func, host)).copied()
        }
        fn update(&mut self, func: FuncKey, host: u64, page: HostPage) -> bool {
            match self.map.get_mut(&(func, host)) {
                Some(p) => {
                    *p = page;
                    true
                }
                None => false,
            }
        }
        fn insert(&mut self, func: FuncKey, host: u64, page: HostPage) -> Result<(), ()> {
            if self.fail_insert {
                return Err(());
            }
            self.map.insert((func, host), page);
            Ok(())
        }
        fn remove(&mut self, func: FuncKey, host: u64) -> Option<HostPage> {
            self.map.remove(&(func, host))
        }
        fn first(&self, func: FuncKey) -> Option<(u64, HostPage)> {
            self.map
                .range((func, 0)..=(func, u64::MAX))
                .next()
                .map(|(&(_, h), &p)| (h, p))
        }
        fn find_partial(&self, func: FuncKey, full: u64) -> Option<u64> {
            self.map
                .range((func, 0)..=(func, u64::MAX))
                .find(|(_, p)| p.given != full)
                .map(|(&(_, h), _)| h)
        }
    }

    #[test]
    fn page_sizes() {
        assert!(Ledger::new(4096).is_ok());
        assert_eq!(Ledger::new(65536).unwrap().chunks_per_host_page(), 16);
        assert_eq!(Ledger::new(256 * 1024).unwrap().chunks_per_host_page(), 64);
        assert_eq!(
            Ledger::new(2048).unwrap_err(),
            LedgerError::BadHostPageSize(2048)
        );
        assert!(Ledger::new(12288).is_err());
        assert!(Ledger::new(512 * 1024).is_err());
        assert!(Ledger::new(0).is_err());
    }

    #[test]
    fn give_and_take_4k() {
        let mut l = Ledger::new(4096).unwrap();
        let mut s = MapStore::default();
        // no partial pages with 4 KiB host pages
        assert_eq!(l.give_free_chunk(&mut s, 0), None);
        assert_eq!(l.add_host_page(&mut s, 0, 0x1000), Ok(0x1000));
        assert_eq!(l.add_host_page(&mut s, 0, 0x5000), Ok(0x5000));
        assert_eq!(l.give_free_chunk(&mut s, 0), None);
        assert_eq!((l.fw_pages(), l.host_pages(), l.func_pages(0)), (2, 2, 2));
        assert_eq!(
            l.give(&mut s, 0, 0x1000),
            Err(LedgerError::DoubleGive(0x1000))
        );
        assert_eq!(
            l.add_host_page(&mut s, 0, 0x1000),
            Err(LedgerError::DuplicateHostPage(0x1000))
        );
        assert_eq!(
            l.take(&mut s, 0, 0x1000),
            Ok(Released::HostPageFree(0x1000))
        );
        assert_eq!(
            l.take(&mut s, 0, 0x1000),
            Err(LedgerError::UnknownPage(0x1000))
        );
        assert_eq!(
            l.take(&mut s, 0, 0x9000),
            Err(LedgerError::UnknownPage(0x9000))
        );
        // wrong function
        assert_eq!(
            l.take(&mut s, 1, 0x5000),
            Err(LedgerError::UnknownPage(0x5000))
        );
        assert_eq!((l.fw_pages(), l.host_pages(), l.func_pages(0)), (1, 1, 1));
        assert_eq!(
            l.take(&mut s, 0, 0x5000),
            Ok(Released::HostPageFree(0x5000))
        );
        assert_eq!((l.fw_pages(), l.host_pages()), (0, 0));
        assert!(s.map.is_empty());
    }

    #[test]
    fn bad_addresses() {
        let mut l = Ledger::new(4096).unwrap();
        let mut s = MapStore::default();
        assert_eq!(l.add_host_page(&mut s, 0, 0), Err(LedgerError::ZeroAddress));
        assert_eq!(
            l.add_host_page(&mut s, 0, 0x1800),
            Err(LedgerError::Misaligned(0x1800))
        );
        assert_eq!(
            l.take(&mut s, 0, 0x1234),
            Err(LedgerError::Misaligned(0x1234))
        );
        assert_eq!(l.give(&mut s, 0, 0), Err(LedgerError::ZeroAddress));
        s.fail_insert = true;
        assert_eq!(
            l.add_host_page(&mut s, 0, 0x2000),
            Err(LedgerError::NoMemory)
        );
        assert_eq!((l.fw_pages(), l.host_pages()), (0, 0));
        let mut l = Ledger::new(65536).unwrap();
        let mut s = MapStore::default();
        assert_eq!(
            l.add_host_page(&mut s, 0, 0x1000),
            Err(LedgerError::Misaligned(0x1000))
        );
    }

    #[test]
    fn carving_64k_pages() {
        let mut l = Ledger::new(65536).unwrap();
        let mut s = MapStore::default();
        let h = 0x10_0000u64;
        assert_eq!(l.add_host_page(&mut s, 3, h), Ok(h));
        let mut got = Vec::new();
        while let Some(a) = l.give_free_chunk(&mut s, 3) {
            got.push(a);
        }
        assert_eq!(got.len(), 15);
        assert_eq!(got[0], h + 0x1000);
        assert_eq!(got[14], h + 0xf000);
        assert_eq!(l.func_pages(3), 16);
        assert_eq!(l.host_pages(), 1);
        assert_eq!(s.get(3, h).unwrap().given, 0xffff);
        // other functions do not get this page's chunks
        assert_eq!(l.give_free_chunk(&mut s, 4), None);
        // return two chunks: host page kept, chunks reusable
        assert_eq!(l.take(&mut s, 3, h + 0x3000), Ok(Released::Kept));
        assert_eq!(
            l.take(&mut s, 3, h + 0x3000),
            Err(LedgerError::NotGiven(h + 0x3000))
        );
        assert_eq!(l.take(&mut s, 3, h + 0x7000), Ok(Released::Kept));
        assert_eq!(l.fw_pages(), 14);
        assert_eq!(l.give_free_chunk(&mut s, 3), Some(h + 0x3000));
        assert_eq!(l.give_free_chunk(&mut s, 3), Some(h + 0x7000));
        assert_eq!(l.give_free_chunk(&mut s, 3), None);
        // return all: freed with the last one
        for c in 0..15u64 {
            assert_eq!(l.take(&mut s, 3, h + c * 0x1000), Ok(Released::Kept));
        }
        assert_eq!(l.take(&mut s, 3, h + 0xf000), Ok(Released::HostPageFree(h)));
        assert_eq!((l.fw_pages(), l.host_pages()), (0, 0));
    }

    #[test]
    fn cache_overflow_falls_back_to_store() {
        let mut l = Ledger::new(8192).unwrap(); // 2 chunks per host page
        let mut s = MapStore::default();
        let n = PARTIAL_CACHE as u64 + 5;
        for i in 0..n {
            l.add_host_page(&mut s, 0, 0x10_0000 + i * 0x2000).unwrap();
        }
        assert_eq!(l.fw_pages(), n);
        let mut extra = 0;
        while l.give_free_chunk(&mut s, 0).is_some() {
            extra += 1;
        }
        assert_eq!(extra, n);
        assert_eq!(l.fw_pages(), 2 * n);
        assert!(s.map.values().all(|p| p.given == 0b11));
    }

    #[test]
    fn release_all_and_collect() {
        let mut l = Ledger::new(16384).unwrap();
        let mut s = MapStore::default();
        for i in 0..3u64 {
            l.add_host_page(&mut s, 1, 0x40_0000 + i * 0x4000).unwrap();
        }
        l.add_host_page(&mut s, 2, 0x80_0000).unwrap();
        l.give_free_chunk(&mut s, 1).unwrap();
        assert_eq!(l.func_pages(1), 4);
        let mut buf = [0u64; 8];
        let n = l.collect_given(&s, 1, &mut buf);
        assert_eq!(&buf[..n], &[0x40_0000, 0x40_1000]);
        let mut freed = Vec::new();
        assert_eq!(l.release_all(&mut s, 1, |h| freed.push(h)), 4);
        assert_eq!(freed, [0x40_0000, 0x40_4000, 0x40_8000]);
        assert_eq!(l.func_pages(1), 0);
        assert_eq!(l.func_pages(2), 1);
        assert_eq!((l.fw_pages(), l.host_pages()), (1, 1));
        let funcs: Vec<FuncKey> = l.funcs_with_pages().collect();
        assert_eq!(funcs, [2]);
        // partial pages of func 1 are gone from the cache
        assert_eq!(l.give_free_chunk(&mut s, 1), None);
    }

    #[test]
    fn release_host_page_one_at_a_time() {
        // 16 KiB host pages, two functions, partial and full host pages.
        let mut l = Ledger::new(16384).unwrap();
        let mut s = MapStore::default();
        l.add_host_page(&mut s, 0, 0x10_0000).unwrap();
        for _ in 0..3 {
            l.give_free_chunk(&mut s, 0).unwrap();
        }
        l.add_host_page(&mut s, 0, 0x20_0000).unwrap();
        l.add_host_page(&mut s, 5, 0x30_0000).unwrap();
        assert_eq!((l.fw_pages(), l.host_pages(), l.func_pages(0)), (6, 3, 5));
        assert_eq!(l.release_host_page(&mut s, 0), Some((0x10_0000, 4)));
        assert_eq!(l.release_host_page(&mut s, 0), Some((0x20_0000, 1)));
        assert_eq!(l.release_host_page(&mut s, 0), None);
        assert_eq!(
            (
                l.fw_pages(),
                l.host_pages(),
                l.func_pages(0),
                l.func_pages(5)
            ),
            (1, 1, 0, 1)
        );
        // The partial page left the cache: function 0 gets a fresh host page next.
        assert_eq!(l.give_free_chunk(&mut s, 0), None);
        assert_eq!(l.add_host_page(&mut s, 0, 0x10_0000), Ok(0x10_0000));
        assert_eq!(l.give_free_chunk(&mut s, 0), Some(0x10_1000));
        assert_eq!(l.func_pages(0), 2);
        // A take of a released address is refused: nothing is freed twice.
        assert_eq!(
            l.take(&mut s, 0, 0x20_0000),
            Err(LedgerError::UnknownPage(0x20_0000))
        );
        assert_eq!(
            l.take(&mut s, 5, 0x30_0000),
            Ok(Released::HostPageFree(0x30_0000))
        );
        assert_eq!(l.release_host_page(&mut s, 5), None);
    }

    #[test]
    fn forced_reclaim_by_collect_and_take() {
        let mut l = Ledger::new(4096).unwrap();
        let mut s = MapStore::default();
        for i in 1..=10u64 {
            l.add_host_page(&mut s, 0, i * 0x1000).unwrap();
        }
        let mut buf = [0u64; 4];
        let mut freed = 0;
        loop {
            let n = l.collect_given(&s, 0, &mut buf);
            if n == 0 {
                break;
            }
            for &a in &buf[..n] {
                if let Ok(Released::HostPageFree(_)) = l.take(&mut s, 0, a) {
                    freed += 1;
                }
            }
        }
        assert_eq!(freed, 10);
        assert_eq!(l.fw_pages(), 0);
    }

    #[test]
    fn function_table_limit() {
        let mut l = Ledger::new(4096).unwrap();
        let mut s = MapStore::default();
        for f in 0..MAX_FUNCS as u32 {
            l.add_host_page(&mut s, f, 0x1000 * (u64::from(f) + 1))
                .unwrap();
        }
        assert_eq!(
            l.add_host_page(&mut s, 99, 0x100_0000),
            Err(LedgerError::TooManyFunctions)
        );
        // a function that gave everything back frees its slot
        l.take(&mut s, 0, 0x1000).unwrap();
        assert_eq!(l.add_host_page(&mut s, 99, 0x100_0000), Ok(0x100_0000));
        assert_eq!(l.func_pages(99), 1);
    }
}
