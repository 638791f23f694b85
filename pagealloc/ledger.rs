// SPDX-License-Identifier: GPL-2.0

//! The firmware page ledger: which 4 KiB pages each function's firmware
//! holds, keyed by DMA address.
//!
//! Firmware pages are 4 KiB whatever the host `PAGE_SIZE`. The driver maps
//! host memory in blocks of one or more host pages — up to [`MAX_BLOCK_SIZE`]
//! (2 MiB, one high-order allocation), down to a single host page when memory
//! is fragmented — and carves each block into 4 KiB firmware pages
//! ("chunks"). A block is unmapped and freed only when none of its chunks is
//! held by the device any more. The ledger enforces that:
//!
//! * giving a chunk the device already holds is rejected ([`LedgerError::DoubleGive`]);
//! * taking back an address that is not a chunk given to that function is
//!   rejected ([`LedgerError::UnknownPage`], [`LedgerError::NotGiven`]),
//!   so a corrupt MANAGE_PAGES output can never make the driver free memory
//!   the device still uses;
//! * blocks never overlap ([`LedgerError::Overlap`]);
//! * DMA address 0 is never handed to the device.
//!
//! Storage is abstract ([`PageStore`]): the kernel backs it with an
//! `RBTree` keyed by the block's DMA address, the host tests with a
//! `BTreeMap`. A firmware page is found through its block, the block with
//! the highest start address not above it ([`PageStore::floor`]). The ledger
//! itself keeps counters, a small per-function table and a cache of blocks
//! that have free chunks, so that every operation is one store lookup.
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use core::fmt;

/// Size of a firmware page.
pub const FW_PAGE_SIZE: u64 = crate::ifc::pages::FW_PAGE_SIZE;
/// Largest block of host memory the ledger tracks as one unit: 2 MiB (an
/// order-9 allocation with 4 KiB host pages), 512 firmware pages.
pub const MAX_BLOCK_SIZE: u64 = 2 << 20;
/// Most firmware pages in one block.
pub const MAX_CHUNKS: u64 = MAX_BLOCK_SIZE / FW_PAGE_SIZE;
const WORDS: usize = (MAX_CHUNKS / 64) as usize;
/// Most distinct functions the ledger tracks.
pub const MAX_FUNCS: usize = 8;
/// Size of the cache of blocks with free chunks.
pub const PARTIAL_CACHE: usize = 16;

/// Function key: `func_id | ec_function << 16` (FUNC_ID mode) or the
/// vhca_id (VHCA_ID mode).
pub type FuncKey = u32;

/// What the ledger stores per block of host memory: its size and which of its
/// firmware pages the device holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostBlock {
    /// Firmware pages in the block (a power of two, 1 ..= [`MAX_CHUNKS`]).
    chunks: u16,
    /// Firmware pages of the block the device holds.
    held: u16,
    /// Bit i set: firmware page i of this block is held by the device.
    given: [u64; WORDS],
}

impl HostBlock {
    /// A block of `chunks` firmware pages whose first one is given.
    fn first_given(chunks: u16) -> Self {
        let mut given = [0; WORDS];
        given[0] = 1;
        Self {
            chunks,
            held: 1,
            given,
        }
    }

    /// Firmware pages in the block.
    pub fn chunks(&self) -> u64 {
        u64::from(self.chunks)
    }

    /// Firmware pages of the block the device holds.
    pub fn held(&self) -> u64 {
        u64::from(self.held)
    }

    /// Size of the block in bytes.
    pub fn size(&self) -> u64 {
        self.chunks() * FW_PAGE_SIZE
    }

    /// Whether every firmware page of the block is held.
    pub fn is_full(&self) -> bool {
        self.held == self.chunks
    }

    fn is_given(&self, chunk: u64) -> bool {
        // chunk < chunks <= MAX_CHUNKS: in range.
        self.given[(chunk / 64) as usize] & (1 << (chunk % 64)) != 0
    }

    fn flip(&mut self, chunk: u64) {
        self.given[(chunk / 64) as usize] ^= 1 << (chunk % 64);
    }

    /// The lowest firmware page of the block not held.
    fn first_free(&self) -> Option<u64> {
        let words = self.chunks().div_ceil(64) as usize;
        let last_bits = self.chunks() - (words as u64 - 1) * 64;
        self.given[..words].iter().enumerate().find_map(|(i, w)| {
            let mask = if i + 1 == words && last_bits < 64 {
                (1u64 << last_bits) - 1
            } else {
                u64::MAX
            };
            let free = !w & mask;
            (free != 0).then(|| i as u64 * 64 + u64::from(free.trailing_zeros()))
        })
    }

    /// The firmware pages held, lowest first, as indices in the block.
    fn held_chunks(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.chunks()).filter(|c| self.is_given(*c))
    }
}

/// The storage behind a [`Ledger`]: block records keyed by the block's DMA
/// address, each tagged with its function. DMA addresses of distinct blocks
/// never collide, whatever the function.
///
/// Implemented by the kernel shell (an `RBTree`) and by tests over a `BTreeMap`.
pub trait PageStore {
    /// The block with the highest start address `<= addr`, of any function:
    /// `(function, start, record)`.
    fn floor(&self, addr: u64) -> Option<(FuncKey, u64, HostBlock)>;
    /// Replaces the record of the block at `host`; returns false if there is none.
    fn update(&mut self, host: u64, block: HostBlock) -> bool;
    /// Inserts a new record; `Err(())` when storage cannot be allocated.
    // Clippy checks only exported items: the host crate's trait, not the module's.
    #[cfg_attr(
        not(CONFIG_RUST),
        expect(clippy::result_unit_err, reason = "no error detail to give")
    )]
    fn insert(&mut self, func: FuncKey, host: u64, block: HostBlock) -> Result<(), ()>;
    /// Removes the record of the block at `host`.
    fn remove(&mut self, host: u64) -> Option<HostBlock>;
    /// Any block of `func` (for releasing everything).
    fn first(&self, func: FuncKey) -> Option<(u64, HostBlock)>;
    /// Some block of `func` with a free chunk. Only called after the ledger's own
    /// cache overflowed, so a linear scan is acceptable.
    fn find_partial(&self, func: FuncKey) -> Option<u64>;
}

/// Ledger errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LedgerError {
    /// Host page size not a power of two multiple of 4 KiB up to [`MAX_BLOCK_SIZE`].
    BadHostPageSize(u64),
    /// Block size not a power of two multiple of the host page size up to
    /// [`MAX_BLOCK_SIZE`].
    BadBlockSize(u64),
    /// DMA address 0 cannot be given to the device.
    ZeroAddress,
    /// Address not aligned (host page or 4 KiB firmware page).
    Misaligned(u64),
    /// The block overlaps one already tracked.
    Overlap(u64),
    /// The firmware page is already held by the device.
    DoubleGive(u64),
    /// The address is not in any block of the function.
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
            Self::BadBlockSize(s) => write!(f, "unsupported block size {s}"),
            Self::ZeroAddress => f.write_str("page at DMA address 0"),
            Self::Misaligned(a) => write!(f, "misaligned page address {a:#x}"),
            Self::Overlap(a) => write!(f, "block {a:#x} overlaps a tracked block"),
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
    /// Other chunks of its block are still held by the device.
    Kept,
    /// The whole block at this DMA address is free: unmap and free it.
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
    fw_pages: u64,
    blocks: u64,
    funcs: [FuncCount; MAX_FUNCS],
    /// Blocks with free chunks: (func, block address).
    cache: [Option<(FuncKey, u64)>; PARTIAL_CACHE],
    /// Blocks with free chunks not in `cache`.
    overflow: u64,
}

impl Ledger {
    /// A ledger for blocks made of host pages of `host_page_size` bytes (`PAGE_SIZE`).
    pub fn new(host_page_size: u64) -> Result<Self, LedgerError> {
        if !host_page_size.is_power_of_two()
            || !(FW_PAGE_SIZE..=MAX_BLOCK_SIZE).contains(&host_page_size)
        {
            return Err(LedgerError::BadHostPageSize(host_page_size));
        }
        Ok(Self {
            host_page_size,
            fw_pages: 0,
            blocks: 0,
            funcs: [FuncCount::default(); MAX_FUNCS],
            cache: [None; PARTIAL_CACHE],
            overflow: 0,
        })
    }

    /// Firmware pages per host page.
    pub fn chunks_per_host_page(&self) -> u32 {
        // <= MAX_CHUNKS, lossless.
        (self.host_page_size / FW_PAGE_SIZE) as u32
    }

    /// Firmware pages held by the device, all functions.
    pub fn fw_pages(&self) -> u64 {
        self.fw_pages
    }

    /// Blocks tracked (mapped and partly or fully given).
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Firmware pages held by the device for `func`.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
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
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
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

    /// The block of `func` holding the firmware page at `addr`: its start, its record
    /// and the page's index in it.
    fn locate<S: PageStore + ?Sized>(
        store: &S,
        func: FuncKey,
        addr: u64,
    ) -> Result<(u64, HostBlock, u64), LedgerError> {
        match store.floor(addr) {
            Some((f, host, block)) if f == func && addr - host < block.size() => {
                Ok((host, block, (addr - host) / FW_PAGE_SIZE))
            }
            _ => Err(LedgerError::UnknownPage(addr)),
        }
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

    /// Registers a newly mapped block of `size` bytes of `func` at DMA address `host`
    /// and gives its first firmware page; returns that page's address. The block's
    /// other firmware pages become available to [`Ledger::give_free_chunk`]. `size` is
    /// a power of two multiple of the host page size up to [`MAX_BLOCK_SIZE`]; `host`
    /// is aligned to the host page size (not necessarily to `size`), is not 0, and the
    /// block overlaps no tracked block.
    pub fn add_block<S: PageStore + ?Sized>(
        &mut self,
        store: &mut S,
        func: FuncKey,
        host: u64,
        size: u64,
    ) -> Result<u64, LedgerError> {
        if !size.is_power_of_two() || !(self.host_page_size..=MAX_BLOCK_SIZE).contains(&size) {
            return Err(LedgerError::BadBlockSize(size));
        }
        if host == 0 {
            return Err(LedgerError::ZeroAddress);
        }
        if host & (self.host_page_size - 1) != 0 {
            return Err(LedgerError::Misaligned(host));
        }
        let last = host
            .checked_add(size - 1)
            .ok_or(LedgerError::Overlap(host))?;
        // The nearest block starting at or below the new block's last byte overlaps it
        // if it starts inside it or ends past its start.
        if let Some((_, h, b)) = store.floor(last) {
            if h >= host || h + b.size() > host {
                return Err(LedgerError::Overlap(host));
            }
        }
        // Reserve the function slot before touching the store.
        self.func_slot(func)?;
        // size <= MAX_BLOCK_SIZE: at most MAX_CHUNKS, lossless.
        let block = HostBlock::first_given((size / FW_PAGE_SIZE) as u16);
        store
            .insert(func, host, block)
            .map_err(|()| LedgerError::NoMemory)?;
        self.blocks = self.blocks.saturating_add(1);
        if !block.is_full() {
            self.mark_partial(func, host);
        }
        self.count_given(func, 1);
        Ok(host)
    }

    /// Registers a newly mapped host page: [`Ledger::add_block`] of one host page.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn add_host_page<S: PageStore + ?Sized>(
        &mut self,
        store: &mut S,
        func: FuncKey,
        host: u64,
    ) -> Result<u64, LedgerError> {
        self.add_block(store, func, host, self.host_page_size)
    }

    /// Gives a free chunk of an already mapped block of `func`, if any; returns its
    /// address. `None`: map a new block and call [`Ledger::add_block`].
    pub fn give_free_chunk<S: PageStore + ?Sized>(
        &mut self,
        store: &mut S,
        func: FuncKey,
    ) -> Option<u64> {
        let host = match self.cache.iter().flatten().find(|(f, _)| *f == func) {
            Some(&(_, h)) => h,
            None if self.overflow > 0 => store.find_partial(func)?,
            None => return None,
        };
        let Ok((_, block, _)) = Self::locate(store, func, host) else {
            // Stale cache entry: repair and give up on this one.
            self.cache_remove(func, host);
            return None;
        };
        let Some(chunk) = block.first_free() else {
            self.cache_remove(func, host);
            return None;
        };
        let addr = host + chunk * FW_PAGE_SIZE;
        self.give(store, func, addr).ok()?;
        Some(addr)
    }

    /// Marks the firmware page at `addr` (inside a tracked block of `func`) as held
    /// by the device. Giving a held page is an error.
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
        let (host, mut block, chunk) = Self::locate(store, func, addr)?;
        if block.is_given(chunk) {
            return Err(LedgerError::DoubleGive(addr));
        }
        block.flip(chunk);
        block.held += 1;
        if !store.update(host, block) {
            return Err(LedgerError::UnknownPage(addr));
        }
        if block.is_full() {
            self.unmark_partial(func, host);
        }
        self.count_given(func, 1);
        Ok(())
    }

    /// The device returned the firmware page at `addr` of `func` (a take, or a give
    /// that failed). Unknown or not-held addresses are errors and change nothing.
    pub fn take<S: PageStore + ?Sized>(
        &mut self,
        store: &mut S,
        func: FuncKey,
        addr: u64,
    ) -> Result<Released, LedgerError> {
        if addr % FW_PAGE_SIZE != 0 {
            return Err(LedgerError::Misaligned(addr));
        }
        let (host, mut block, chunk) = Self::locate(store, func, addr)?;
        if !block.is_given(chunk) {
            return Err(LedgerError::NotGiven(addr));
        }
        let was_full = block.is_full();
        block.flip(chunk);
        block.held -= 1;
        if block.held == 0 {
            store.remove(host);
            self.count_taken(func, 1);
            self.blocks = self.blocks.saturating_sub(1);
            if !was_full {
                self.unmark_partial(func, host);
            }
            Ok(Released::HostPageFree(host))
        } else {
            if !store.update(host, block) {
                return Err(LedgerError::UnknownPage(addr));
            }
            self.count_taken(func, 1);
            if was_full {
                self.mark_partial(func, host);
            }
            Ok(Released::Kept)
        }
    }

    /// Forgets one block of `func` and every firmware page of it the device holds,
    /// without the device's help; returns the block's DMA address (to unmap and free)
    /// and how many firmware pages were dropped, or `None` when `func` holds nothing.
    /// Calling it until `None` is [`Ledger::release_all`] for a caller that must reach
    /// its store between blocks (to free the memory of each), without collecting the
    /// addresses first.
    pub fn release_host_page<S: PageStore + ?Sized>(
        &mut self,
        store: &mut S,
        func: FuncKey,
    ) -> Option<(u64, u64)> {
        let (host, block) = store.first(func)?;
        store.remove(host)?;
        let n = block.held();
        self.count_taken(func, n);
        self.blocks = self.blocks.saturating_sub(1);
        if !block.is_full() {
            self.unmark_partial(func, host);
        }
        Some((host, n))
    }

    /// Forgets every page of `func` without the device's help — for a "release all
    /// pages" event (firmware already dropped them) or a device confirmed to have
    /// stopped DMA. Calls `free_host` with each block to unmap and free; returns the
    /// number of firmware pages dropped.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
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
    /// `out.len()`), as a forceful local reclaim would when the device can no longer
    /// answer; the caller then [`Ledger::take`]s each. Returns how many were written.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn collect_given<S: PageStore + ?Sized>(
        &self,
        store: &S,
        func: FuncKey,
        out: &mut [u64],
    ) -> usize {
        // Only the first block is visible through `first`; walk its chunks. Callers
        // loop (take, collect again) until nothing is left.
        let mut n = 0;
        if let Some((host, block)) = store.first(func) {
            for (slot, c) in out.iter_mut().zip(block.held_chunks()) {
                *slot = host + c * FW_PAGE_SIZE;
                n += 1;
            }
        }
        n
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_pagealloc_ledger))]
pub(crate) mod tests {
    use super::*;
    use crate::testing::ArrayVec;

    /// A store of at most `N` blocks in an array, as a test double for the kernel
    /// container: core only, so that it runs in KUnit too (about 100 bytes a block,
    /// on the stack of the test). Lookups scan, and return the lowest address as an
    /// ordered map would.
    pub(crate) struct ArrayStore<const N: usize> {
        blocks: [Option<(u64, FuncKey, HostBlock)>; N],
        pub(crate) fail_insert: bool,
    }

    /// The store of these tests (the most blocks one of them adds is 21).
    pub(crate) type Store = ArrayStore<24>;

    impl<const N: usize> Default for ArrayStore<N> {
        fn default() -> Self {
            Self {
                blocks: [None; N],
                fail_insert: false,
            }
        }
    }

    impl<const N: usize> ArrayStore<N> {
        fn entries(&self) -> impl Iterator<Item = &(u64, FuncKey, HostBlock)> {
            self.blocks.iter().flatten()
        }

        fn slot(&mut self, host: u64) -> Option<&mut Option<(u64, FuncKey, HostBlock)>> {
            self.blocks
                .iter_mut()
                .find(|e| matches!(e, Some((h, ..)) if *h == host))
        }

        pub(crate) fn get(&self, host: u64) -> Option<HostBlock> {
            self.entries().find(|e| e.0 == host).map(|e| e.2)
        }

        pub(crate) fn is_empty(&self) -> bool {
            self.entries().next().is_none()
        }

        pub(crate) fn blocks(&self) -> impl Iterator<Item = HostBlock> + '_ {
            self.entries().map(|e| e.2)
        }
    }

    impl<const N: usize> PageStore for ArrayStore<N> {
        fn floor(&self, addr: u64) -> Option<(FuncKey, u64, HostBlock)> {
            self.entries()
                .filter(|e| e.0 <= addr)
                .max_by_key(|e| e.0)
                .map(|&(h, f, b)| (f, h, b))
        }
        fn update(&mut self, host: u64, block: HostBlock) -> bool {
            match self.slot(host) {
                Some(Some(e)) => {
                    e.2 = block;
                    true
                }
                _ => false,
            }
        }
        fn insert(&mut self, func: FuncKey, host: u64, block: HostBlock) -> Result<(), ()> {
            if self.fail_insert {
                return Err(());
            }
            // An existing record at `host` is replaced, as an ordered map does.
            let slot = match self.slot(host) {
                Some(slot) => slot,
                None => self.blocks.iter_mut().find(|e| e.is_none()).ok_or(())?,
            };
            *slot = Some((host, func, block));
            Ok(())
        }
        fn remove(&mut self, host: u64) -> Option<HostBlock> {
            self.slot(host).and_then(Option::take).map(|e| e.2)
        }
        fn first(&self, func: FuncKey) -> Option<(u64, HostBlock)> {
            self.entries()
                .filter(|e| e.1 == func)
                .min_by_key(|e| e.0)
                .map(|e| (e.0, e.2))
        }
        fn find_partial(&self, func: FuncKey) -> Option<u64> {
            self.entries()
                .filter(|e| e.1 == func && !e.2.is_full())
                .min_by_key(|e| e.0)
                .map(|e| e.0)
        }
    }

    #[test]
    fn page_sizes() {
        assert!(Ledger::new(4096).is_ok());
        assert_eq!(Ledger::new(65536).unwrap().chunks_per_host_page(), 16);
        assert_eq!(Ledger::new(256 * 1024).unwrap().chunks_per_host_page(), 64);
        assert_eq!(Ledger::new(2 << 20).unwrap().chunks_per_host_page(), 512);
        assert_eq!(
            Ledger::new(2048).unwrap_err(),
            LedgerError::BadHostPageSize(2048)
        );
        assert!(Ledger::new(12288).is_err());
        assert!(Ledger::new(4 << 20).is_err());
        assert!(Ledger::new(0).is_err());
    }

    #[test]
    fn block_sizes() {
        let mut l = Ledger::new(16384).unwrap();
        let mut s = Store::default();
        for bad in [0u64, 4096, 8192, 48 * 1024, 4 << 20] {
            assert_eq!(
                l.add_block(&mut s, 0, 0x100_0000, bad),
                Err(LedgerError::BadBlockSize(bad))
            );
        }
        assert_eq!(l.add_block(&mut s, 0, 0x100_0000, 16384), Ok(0x100_0000));
        assert_eq!(l.add_block(&mut s, 0, 0x200_0000, 2 << 20), Ok(0x200_0000));
        assert_eq!(s.get(0x200_0000).unwrap().chunks(), 512);
        assert_eq!((l.fw_pages(), l.blocks()), (2, 2));
    }

    #[test]
    fn give_and_take_4k() {
        let mut l = Ledger::new(4096).unwrap();
        let mut s = Store::default();
        // no partial pages with 4 KiB host pages
        assert_eq!(l.give_free_chunk(&mut s, 0), None);
        assert_eq!(l.add_host_page(&mut s, 0, 0x1000), Ok(0x1000));
        assert_eq!(l.add_host_page(&mut s, 0, 0x5000), Ok(0x5000));
        assert_eq!(l.give_free_chunk(&mut s, 0), None);
        assert_eq!((l.fw_pages(), l.blocks(), l.func_pages(0)), (2, 2, 2));
        assert_eq!(
            l.give(&mut s, 0, 0x1000),
            Err(LedgerError::DoubleGive(0x1000))
        );
        assert_eq!(
            l.add_host_page(&mut s, 0, 0x1000),
            Err(LedgerError::Overlap(0x1000))
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
        assert_eq!((l.fw_pages(), l.blocks(), l.func_pages(0)), (1, 1, 1));
        assert_eq!(
            l.take(&mut s, 0, 0x5000),
            Ok(Released::HostPageFree(0x5000))
        );
        assert_eq!((l.fw_pages(), l.blocks()), (0, 0));
        assert!(s.is_empty());
    }

    #[test]
    fn bad_addresses() {
        let mut l = Ledger::new(4096).unwrap();
        let mut s = Store::default();
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
        assert_eq!(
            l.add_block(&mut s, 0, u64::MAX - 0xfff, 8192),
            Err(LedgerError::Overlap(u64::MAX - 0xfff))
        );
        s.fail_insert = true;
        assert_eq!(
            l.add_host_page(&mut s, 0, 0x2000),
            Err(LedgerError::NoMemory)
        );
        assert_eq!((l.fw_pages(), l.blocks()), (0, 0));
        let mut l = Ledger::new(65536).unwrap();
        let mut s = Store::default();
        assert_eq!(
            l.add_host_page(&mut s, 0, 0x1000),
            Err(LedgerError::Misaligned(0x1000))
        );
    }

    #[test]
    fn overlapping_blocks_are_refused() {
        let mut l = Ledger::new(4096).unwrap();
        let mut s = Store::default();
        // A 64 KiB block at an address aligned to 4 KiB only (an IOVA need not be
        // aligned to the allocation's size).
        assert_eq!(l.add_block(&mut s, 0, 0x10_3000, 0x1_0000), Ok(0x10_3000));
        for (h, size) in [
            (0x10_3000u64, 0x1000u64), // same start
            (0x10_0000, 0x4000),       // ends inside it
            (0x10_8000, 0x1000),       // inside it
            (0x10_0000, 0x20_0000),    // contains it
            (0x11_2000, 0x2000),       // starts on its last page
        ] {
            assert_eq!(
                l.add_block(&mut s, 1, h, size),
                Err(LedgerError::Overlap(h))
            );
        }
        // Adjacent on both sides is fine.
        assert_eq!(l.add_block(&mut s, 1, 0x10_1000, 0x2000), Ok(0x10_1000));
        assert_eq!(l.add_block(&mut s, 1, 0x11_3000, 0x1000), Ok(0x11_3000));
        assert_eq!(l.blocks(), 3);
        // Pages are found in the right block and the right function.
        assert_eq!(
            l.take(&mut s, 0, 0x10_2000),
            Err(LedgerError::UnknownPage(0x10_2000))
        );
        assert_eq!(
            l.take(&mut s, 1, 0x10_2000),
            Err(LedgerError::NotGiven(0x10_2000))
        );
        assert_eq!(
            l.take(&mut s, 1, 0x10_4000),
            Err(LedgerError::UnknownPage(0x10_4000))
        );
        assert_eq!(
            l.take(&mut s, 0, 0x11_3000),
            Err(LedgerError::UnknownPage(0x11_3000))
        );
        assert_eq!(l.give(&mut s, 0, 0x11_2000), Ok(()));
        assert_eq!(l.take(&mut s, 0, 0x11_2000), Ok(Released::Kept));
    }

    #[test]
    fn carving_64k_pages() {
        let mut l = Ledger::new(65536).unwrap();
        let mut s = Store::default();
        let h = 0x10_0000u64;
        assert_eq!(l.add_host_page(&mut s, 3, h), Ok(h));
        let mut got: ArrayVec<u64, 16> = ArrayVec::new();
        while let Some(a) = l.give_free_chunk(&mut s, 3) {
            got.push(a);
        }
        assert_eq!(got.len(), 15);
        assert_eq!(got[0], h + 0x1000);
        assert_eq!(got[14], h + 0xf000);
        assert_eq!(l.func_pages(3), 16);
        assert_eq!(l.blocks(), 1);
        assert!(s.get(h).unwrap().is_full());
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
        assert_eq!((l.fw_pages(), l.blocks()), (0, 0));
    }

    #[test]
    fn two_mib_block() {
        let mut l = Ledger::new(4096).unwrap();
        let mut s = Store::default();
        let h = 0x4000_0000u64;
        assert_eq!(l.add_block(&mut s, 0, h, 2 << 20), Ok(h));
        let mut next = h + 0x1000;
        while let Some(a) = l.give_free_chunk(&mut s, 0) {
            assert_eq!(a, next);
            next += 0x1000;
        }
        assert_eq!(next, h + (2 << 20));
        assert_eq!((l.fw_pages(), l.blocks()), (512, 1));
        // Pages past the first word of the bitmap and the block's last page.
        for a in [h + 64 * 0x1000, h + 0x1f_f000, h + 0x10_0000] {
            assert_eq!(l.take(&mut s, 0, a), Ok(Released::Kept));
        }
        assert_eq!(
            l.take(&mut s, 0, h + (2 << 20)),
            Err(LedgerError::UnknownPage(h + (2 << 20)))
        );
        assert_eq!(l.give_free_chunk(&mut s, 0), Some(h + 64 * 0x1000));
        assert_eq!(l.give_free_chunk(&mut s, 0), Some(h + 0x10_0000));
        assert_eq!(l.give_free_chunk(&mut s, 0), Some(h + 0x1f_f000));
        assert_eq!(l.give_free_chunk(&mut s, 0), None);
        let mut buf = [0u64; 600];
        assert_eq!(l.collect_given(&s, 0, &mut buf), 512);
        assert_eq!((buf[0], buf[511]), (h, h + 0x1f_f000));
        // Freed only with the last of its 512 pages, in any order.
        for i in (0..512u64).rev() {
            let r = l.take(&mut s, 0, h + ((i * 37) % 512) * 0x1000);
            assert_eq!(
                r,
                if i == 0 {
                    Ok(Released::HostPageFree(h))
                } else {
                    Ok(Released::Kept)
                }
            );
        }
        assert_eq!((l.fw_pages(), l.blocks()), (0, 0));
    }

    #[test]
    fn cache_overflow_falls_back_to_store() {
        let mut l = Ledger::new(4096).unwrap();
        let mut s = Store::default();
        let n = PARTIAL_CACHE as u64 + 5;
        for i in 0..n {
            // 2 chunks per block
            l.add_block(&mut s, 0, 0x10_0000 + i * 0x2000, 0x2000)
                .unwrap();
        }
        assert_eq!(l.fw_pages(), n);
        let mut extra = 0;
        while l.give_free_chunk(&mut s, 0).is_some() {
            extra += 1;
        }
        assert_eq!(extra, n);
        assert_eq!(l.fw_pages(), 2 * n);
        assert!(s.blocks().all(|b| b.is_full()));
    }

    #[test]
    fn release_all_and_collect() {
        let mut l = Ledger::new(16384).unwrap();
        let mut s = Store::default();
        for i in 0..3u64 {
            l.add_host_page(&mut s, 1, 0x40_0000 + i * 0x4000).unwrap();
        }
        l.add_host_page(&mut s, 2, 0x80_0000).unwrap();
        l.give_free_chunk(&mut s, 1).unwrap();
        assert_eq!(l.func_pages(1), 4);
        let mut buf = [0u64; 8];
        let n = l.collect_given(&s, 1, &mut buf);
        assert_eq!(&buf[..n], &[0x40_0000, 0x40_1000]);
        let mut freed: ArrayVec<u64, 4> = ArrayVec::new();
        assert_eq!(l.release_all(&mut s, 1, |h| freed.push(h)), 4);
        assert_eq!(freed, [0x40_0000, 0x40_4000, 0x40_8000]);
        assert_eq!(l.func_pages(1), 0);
        assert_eq!(l.func_pages(2), 1);
        assert_eq!((l.fw_pages(), l.blocks()), (1, 1));
        let funcs: ArrayVec<FuncKey, 8> = l.funcs_with_pages().collect();
        assert_eq!(funcs, [2]);
        // partial pages of func 1 are gone from the cache
        assert_eq!(l.give_free_chunk(&mut s, 1), None);
    }

    #[test]
    fn release_host_page_one_at_a_time() {
        // 16 KiB host pages, two functions, partial and full blocks.
        let mut l = Ledger::new(16384).unwrap();
        let mut s = Store::default();
        l.add_host_page(&mut s, 0, 0x10_0000).unwrap();
        for _ in 0..3 {
            l.give_free_chunk(&mut s, 0).unwrap();
        }
        l.add_host_page(&mut s, 0, 0x20_0000).unwrap();
        l.add_host_page(&mut s, 5, 0x30_0000).unwrap();
        assert_eq!((l.fw_pages(), l.blocks(), l.func_pages(0)), (6, 3, 5));
        assert_eq!(l.release_host_page(&mut s, 0), Some((0x10_0000, 4)));
        assert_eq!(l.release_host_page(&mut s, 0), Some((0x20_0000, 1)));
        assert_eq!(l.release_host_page(&mut s, 0), None);
        assert_eq!(
            (l.fw_pages(), l.blocks(), l.func_pages(0), l.func_pages(5)),
            (1, 1, 0, 1)
        );
        // The partial page left the cache: function 0 gets a fresh block next.
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
        let mut s = Store::default();
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
        let mut s = Store::default();
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
