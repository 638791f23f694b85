// SPDX-License-Identifier: GPL-2.0

//! The kernel container behind the pure page [`Ledger`](super::ledger::Ledger): an
//! [`RBTree`] of host memory blocks keyed by DMA address, each record owning the memory
//! of its block. A firmware page is found through the block with the highest address
//! not above it ([`PageStore::floor`], a lower-bound cursor and one step back).
//!
//! The memory is owned through [`HostMem`], whose values do not free on drop: only
//! [`HostMem::release`], called by the shell once the ledger reported the whole block
//! free ([`Released::HostPageFree`](super::ledger::Released::HostPageFree)),
//! frees it. A record removed by the ledger is moved (without allocating) to a list of
//! returned blocks, from which the shell takes its memory to release it. Anything
//! dropped otherwise — a store dropped while the device still holds pages, a record
//! lost on a path nobody foresaw — is leaked, never freed: the device may still write
//! to it.
//!
//! New records take their memory from a one-entry staging slot ([`FwStore::stage`])
//! filled by the shell right before it calls
//! [`Ledger::add_block`](super::ledger::Ledger::add_block), so that no record
//! exists without its memory and no memory is given without a record.

use core::mem::ManuallyDrop;

use kernel::{
    alloc::Flags,
    dma::CoherentHandle,
    prelude::*,
    rbtree::{RBTree, RBTreeNodeReservation},
};

use super::ledger::{FuncKey, HostBlock, PageStore};

/// Memory of one block given (in part or whole) to the device.
pub(crate) trait HostMem {
    /// The DMA address of the block.
    fn dma_address(&self) -> u64;
    /// Frees the memory. Only for memory the device returned or provably stopped using.
    fn release(self);
}

/// A block of coherent memory from the DMA API. Dropping it leaks the memory on purpose; only
/// [`HostMem::release`] frees it.
pub(crate) struct FwMem(ManuallyDrop<CoherentHandle>);

impl FwMem {
    /// Wraps a fresh allocation that is about to be handed to the device.
    pub(crate) fn new(h: CoherentHandle) -> Self {
        Self(ManuallyDrop::new(h))
    }
}

impl HostMem for FwMem {
    fn dma_address(&self) -> u64 {
        self.0.dma_address()
    }

    fn release(self) {
        drop(ManuallyDrop::into_inner(self.0));
    }
}

/// One block record.
struct Slot<M> {
    func: FuncKey,
    block: HostBlock,
    mem: M,
}

/// Blocks of every function, keyed by DMA address (distinct blocks never overlap,
/// whatever the function).
pub(crate) struct FwStore<M: HostMem> {
    pages: RBTree<u64, Slot<M>>,
    returned: RBTree<u64, Slot<M>>,
    staged: Option<M>,
    gfp: Flags,
}

impl<M: HostMem> FwStore<M> {
    /// An empty store whose record nodes are allocated with `gfp`.
    pub(crate) fn new(gfp: Flags) -> Self {
        Self {
            pages: RBTree::new(),
            returned: RBTree::new(),
            staged: None,
            gfp,
        }
    }

    /// Hands the memory of the next host page to be recorded to the store; the next
    /// [`PageStore::insert`] at its DMA address takes it. A memory staged before and
    /// never taken is given back.
    pub(crate) fn stage(&mut self, mem: M) -> Option<M> {
        self.staged.replace(mem)
    }

    /// Takes back staged memory that no record took (the ledger refused the page, or
    /// the record could not be allocated): the caller frees it.
    pub(crate) fn unstage(&mut self) -> Option<M> {
        self.staged.take()
    }

    /// Takes the memory of the host page at `host` once the ledger removed its record;
    /// the caller releases it.
    pub(crate) fn take_returned(&mut self, host: u64) -> Option<M> {
        self.returned.remove(&host).map(|s| s.mem)
    }

    /// Host page records (of all functions) the device holds pages of.
    #[cfg(CONFIG_MLX5_RS_KUNIT_TEST)]
    pub(crate) fn len(&self) -> usize {
        self.pages.iter().count()
    }

    /// Removed records whose memory was not taken yet.
    #[cfg(CONFIG_MLX5_RS_KUNIT_TEST)]
    pub(crate) fn returned_len(&self) -> usize {
        self.returned.iter().count()
    }
}

impl<M: HostMem> PageStore for FwStore<M> {
    fn floor(&self, addr: u64) -> Option<(FuncKey, u64, HostBlock)> {
        let found = |(h, s): (&u64, &Slot<M>)| (s.func, *h, s.block);
        match self.pages.cursor_lower_bound(&addr) {
            Some(c) if *c.current().0 == addr => Some(found(c.current())),
            // The first block above `addr`: the one before it is the floor.
            Some(c) => c.peek_prev().map(found),
            // Every block starts below `addr`.
            None => self.pages.cursor_back().map(|c| found(c.current())),
        }
    }

    fn update(&mut self, host: u64, block: HostBlock) -> bool {
        match self.pages.get_mut(&host) {
            Some(s) => {
                s.block = block;
                true
            }
            None => false,
        }
    }

    fn insert(&mut self, func: FuncKey, host: u64, block: HostBlock) -> Result<(), ()> {
        // Only staged memory at this very address may back a record.
        if self.staged.as_ref().map(HostMem::dma_address) != Some(host)
            || self.pages.get(&host).is_some()
        {
            return Err(());
        }
        // Allocate the node before taking the memory, so a failure leaves it staged.
        let node = RBTreeNodeReservation::new(self.gfp).map_err(|_| ())?;
        let mem = self.staged.take().ok_or(())?;
        // No old node: checked above.
        let _ = self
            .pages
            .insert(node.into_node(host, Slot { func, block, mem }));
        Ok(())
    }

    fn remove(&mut self, host: u64) -> Option<HostBlock> {
        let block = self.pages.get(&host)?.block;
        let node = self.pages.remove_node(&host)?;
        // Move the node, memory included, to the returned list: no allocation. A second
        // removal of the same address before its memory was taken cannot happen (the
        // record is gone); if it did, the older memory would be leaked, not freed.
        drop(self.returned.insert(node));
        Some(block)
    }

    fn first(&self, func: FuncKey) -> Option<(u64, HostBlock)> {
        self.pages
            .iter()
            .find(|(_, s)| s.func == func)
            .map(|(h, s)| (*h, s.block))
    }

    fn find_partial(&self, func: FuncKey) -> Option<u64> {
        self.pages
            .iter()
            .find(|(_, s)| s.func == func && !s.block.is_full())
            .map(|(h, _)| *h)
    }
}

#[cfg(CONFIG_MLX5_RS_KUNIT_TEST)]
#[kunit_tests(mlx5_rs_pages)]
mod tests {
    use super::*;
    use crate::pagealloc::ledger::{Ledger, LedgerError, Released};

    /// Memory stand-in: an address; released ones are counted by the test.
    struct TestMem(u64);

    impl HostMem for TestMem {
        fn dma_address(&self) -> u64 {
            self.0
        }
        fn release(self) {}
    }

    fn store() -> FwStore<TestMem> {
        FwStore::new(GFP_KERNEL)
    }

    /// Adds a block of `size` bytes at `host` for `func` through the ledger, its memory
    /// staged first.
    fn add(l: &mut Ledger, s: &mut FwStore<TestMem>, func: u32, host: u64, size: u64) {
        s.stage(TestMem(host));
        assert_eq!(l.add_block(s, func, host, size), Ok(host));
    }

    #[test]
    fn insert_needs_staged_memory_at_that_address() -> Result {
        let mut l = Ledger::new(4096).map_err(|_| EINVAL)?;
        let mut s = store();
        // Nothing staged: no record.
        assert_eq!(
            l.add_host_page(&mut s, 0, 0x1000),
            Err(LedgerError::NoMemory)
        );
        // Staged at another address: no record, the memory stays staged.
        assert!(s.stage(TestMem(0x2000)).is_none());
        assert_eq!(
            l.add_host_page(&mut s, 0, 0x1000),
            Err(LedgerError::NoMemory)
        );
        assert_eq!(l.add_host_page(&mut s, 0, 0x2000), Ok(0x2000));
        assert!(s.unstage().is_none());
        assert_eq!(s.len(), 1);
        assert_eq!(l.fw_pages(), 1);
        Ok(())
    }

    #[test]
    fn floor_finds_the_block_of_a_page() -> Result {
        let mut l = Ledger::new(4096).map_err(|_| EINVAL)?;
        let mut s = store();
        add(&mut l, &mut s, 0, 0x20_0000, 0x20_0000);
        add(&mut l, &mut s, 2, 0x10_0000, 0x1000);
        add(&mut l, &mut s, 0, 0x50_3000, 0x8000);
        assert_eq!(s.len(), 3);
        // Exact start, inside, between blocks, below all, above all.
        assert_eq!(s.floor(0x20_0000).map(|b| (b.0, b.1)), Some((0, 0x20_0000)));
        assert_eq!(s.floor(0x3f_f000).map(|b| (b.0, b.1)), Some((0, 0x20_0000)));
        assert_eq!(s.floor(0x10_5000).map(|b| (b.0, b.1)), Some((2, 0x10_0000)));
        assert!(s.floor(0xf_f000).is_none());
        assert_eq!(s.floor(u64::MAX).map(|b| (b.0, b.1)), Some((0, 0x50_3000)));
        // Through the ledger: the last page of the 2 MiB block, one past it.
        assert_eq!(l.give(&mut s, 0, 0x3f_f000), Ok(()));
        assert_eq!(
            l.give(&mut s, 0, 0x40_0000),
            Err(LedgerError::UnknownPage(0x40_0000))
        );
        assert_eq!(l.take(&mut s, 0, 0x3f_f000), Ok(Released::Kept));
        // `first` is the lowest address of the function; partial blocks are found.
        assert_eq!(s.first(0).map(|b| b.0), Some(0x20_0000));
        assert_eq!(s.first(2).map(|b| b.0), Some(0x10_0000));
        assert!(s.first(7).is_none());
        assert_eq!(s.find_partial(0), Some(0x20_0000));
        assert_eq!(s.find_partial(2), None);
        // An overlapping block is refused before the store is touched.
        s.stage(TestMem(0x3f_0000));
        assert_eq!(
            l.add_block(&mut s, 1, 0x3f_0000, 0x2_0000),
            Err(LedgerError::Overlap(0x3f_0000))
        );
        assert_eq!(s.unstage().map(|m| m.0), Some(0x3f_0000));
        // Removal keeps the memory for an explicit release.
        assert_eq!(
            l.take(&mut s, 2, 0x10_0000),
            Ok(Released::HostPageFree(0x10_0000))
        );
        assert_eq!((s.len(), s.returned_len()), (2, 1));
        assert_eq!(s.take_returned(0x10_0000).map(|m| m.0), Some(0x10_0000));
        assert!(s.take_returned(0x10_0000).is_none());
        assert!(s.floor(0x10_0000).is_none());
        Ok(())
    }

    #[test]
    fn ledger_over_rbtree_store() -> Result {
        let mut l = Ledger::new(4096).map_err(|_| EINVAL)?;
        let mut s = store();
        for i in 1..=5u64 {
            s.stage(TestMem(i * 0x1000));
            assert_eq!(l.add_host_page(&mut s, 0, i * 0x1000), Ok(i * 0x1000));
        }
        assert_eq!((l.fw_pages(), s.len()), (5, 5));
        // Unstaged memory: the record cannot be made, nothing is counted.
        assert_eq!(
            l.add_host_page(&mut s, 0, 0x9000),
            Err(LedgerError::NoMemory)
        );
        assert_eq!(l.fw_pages(), 5);
        // A corrupt return changes nothing; a real one frees the host page.
        assert_eq!(
            l.take(&mut s, 0, 0x7000),
            Err(LedgerError::UnknownPage(0x7000))
        );
        assert_eq!(
            l.take(&mut s, 0, 0x3000),
            Ok(Released::HostPageFree(0x3000))
        );
        assert_eq!(s.take_returned(0x3000).map(|m| m.0), Some(0x3000));
        assert_eq!(
            l.take(&mut s, 0, 0x3000),
            Err(LedgerError::UnknownPage(0x3000))
        );
        let mut freed = 0u64;
        let n = l.release_all(&mut s, 0, |_| freed += 1);
        assert_eq!((n, freed), (4, 4));
        assert_eq!((l.fw_pages(), s.len(), s.returned_len()), (0, 0, 4));
        Ok(())
    }

    #[test]
    fn carved_host_pages() -> Result {
        // 16 KiB host pages: four firmware pages each, freed with the last one.
        let mut l = Ledger::new(16384).map_err(|_| EINVAL)?;
        let mut s = store();
        s.stage(TestMem(0x10_0000));
        assert_eq!(l.add_host_page(&mut s, 0, 0x10_0000), Ok(0x10_0000));
        assert_eq!(l.give_free_chunk(&mut s, 0), Some(0x10_1000));
        assert_eq!(l.give_free_chunk(&mut s, 0), Some(0x10_2000));
        assert_eq!(l.give_free_chunk(&mut s, 0), Some(0x10_3000));
        assert_eq!(l.give_free_chunk(&mut s, 0), None);
        assert_eq!(l.take(&mut s, 0, 0x10_1000), Ok(Released::Kept));
        assert_eq!(s.returned_len(), 0);
        assert_eq!(l.give_free_chunk(&mut s, 0), Some(0x10_1000));
        for a in [0x10_0000u64, 0x10_1000, 0x10_2000] {
            assert_eq!(l.take(&mut s, 0, a), Ok(Released::Kept));
        }
        assert_eq!(
            l.take(&mut s, 0, 0x10_3000),
            Ok(Released::HostPageFree(0x10_0000))
        );
        assert!(s.take_returned(0x10_0000).is_some());
        Ok(())
    }
}
