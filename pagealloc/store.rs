// SPDX-License-Identifier: GPL-2.0

//! The kernel container behind the pure page [`Ledger`](super::ledger::Ledger): an
//! [`RBTree`] of host pages keyed by DMA address, each record owning the memory of its
//! host page.
//!
//! The memory is owned through [`HostMem`], whose values do not free on drop: only
//! [`HostMem::release`], called by the shell once the ledger reported the whole host
//! page free ([`Released::HostPageFree`](super::ledger::Released::HostPageFree)),
//! frees it. A record removed by the ledger is moved (without allocating) to a list of
//! returned pages, from which the shell takes its memory to release it. Anything
//! dropped otherwise — a store dropped while the device still holds pages, a record
//! lost on a path nobody foresaw — is leaked, never freed: the device may still write
//! to it.
//!
//! New records take their memory from a one-entry staging slot ([`FwStore::stage`])
//! filled by the shell right before it calls
//! [`Ledger::add_host_page`](super::ledger::Ledger::add_host_page), so that no record
//! exists without its memory and no memory is given without a record.

use core::mem::ManuallyDrop;

use kernel::{
    alloc::Flags,
    dma::CoherentHandle,
    prelude::*,
    rbtree::{RBTree, RBTreeNodeReservation},
};

use super::ledger::{FuncKey, HostPage, PageStore};

/// Memory of one host page given (in part or whole) to the device.
pub(crate) trait HostMem {
    /// The DMA address of the host page.
    fn dma_address(&self) -> u64;
    /// Frees the memory. Only for memory the device returned or provably stopped using.
    fn release(self);
}

/// A host page from the DMA API. Dropping it leaks the memory on purpose; only
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

/// One host page record.
struct Slot<M> {
    func: FuncKey,
    page: HostPage,
    mem: M,
}

/// Host pages of every function, keyed by DMA address (DMA addresses of distinct host
/// pages never collide, whatever the function).
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
    #[cfg(CONFIG_KUNIT = "y")]
    pub(crate) fn len(&self) -> usize {
        self.pages.iter().count()
    }

    /// Removed records whose memory was not taken yet.
    #[cfg(CONFIG_KUNIT = "y")]
    pub(crate) fn returned_len(&self) -> usize {
        self.returned.iter().count()
    }
}

impl<M: HostMem> PageStore for FwStore<M> {
    fn get(&self, func: FuncKey, host: u64) -> Option<HostPage> {
        self.pages
            .get(&host)
            .filter(|s| s.func == func)
            .map(|s| s.page)
    }

    fn update(&mut self, func: FuncKey, host: u64, page: HostPage) -> bool {
        match self.pages.get_mut(&host) {
            Some(s) if s.func == func => {
                s.page = page;
                true
            }
            _ => false,
        }
    }

    fn insert(&mut self, func: FuncKey, host: u64, page: HostPage) -> Result<(), ()> {
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
            .insert(node.into_node(host, Slot { func, page, mem }));
        Ok(())
    }

    fn remove(&mut self, func: FuncKey, host: u64) -> Option<HostPage> {
        if self.pages.get(&host)?.func != func {
            return None;
        }
        let page = self.pages.get(&host)?.page;
        let node = self.pages.remove_node(&host)?;
        // Move the node, memory included, to the returned list: no allocation. A second
        // removal of the same address before its memory was taken cannot happen (the
        // record is gone); if it did, the older memory would be leaked, not freed.
        drop(self.returned.insert(node));
        Some(page)
    }

    fn first(&self, func: FuncKey) -> Option<(u64, HostPage)> {
        self.pages
            .iter()
            .find(|(_, s)| s.func == func)
            .map(|(h, s)| (*h, s.page))
    }

    fn find_partial(&self, func: FuncKey, full: u64) -> Option<u64> {
        self.pages
            .iter()
            .find(|(_, s)| s.func == func && s.page.given != full)
            .map(|(h, _)| *h)
    }
}

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

    #[test]
    fn insert_needs_staged_memory_at_that_address() -> Result {
        let mut s = store();
        let p = HostPage { given: 1 };
        assert_eq!(s.insert(0, 0x1000, p), Err(()));
        assert!(s.stage(TestMem(0x2000)).is_none());
        assert_eq!(s.insert(0, 0x1000, p), Err(()));
        assert_eq!(s.insert(0, 0x2000, p), Ok(()));
        assert!(s.unstage().is_none());
        assert_eq!(s.get(0, 0x2000), Some(p));
        // Another function does not see it.
        assert_eq!(s.get(1, 0x2000), None);
        // A duplicate address is refused and the memory stays staged.
        s.stage(TestMem(0x2000));
        assert_eq!(s.insert(0, 0x2000, p), Err(()));
        assert_eq!(s.unstage().map(|m| m.0), Some(0x2000));
        assert_eq!(s.len(), 1);
        Ok(())
    }

    #[test]
    fn update_remove_first_partial() -> Result {
        let mut s = store();
        for (f, h) in [(0u32, 0x3000u64), (0, 0x1000), (2, 0x2000)] {
            s.stage(TestMem(h));
            assert_eq!(s.insert(f, h, HostPage { given: 0b01 }), Ok(()));
        }
        assert_eq!(s.len(), 3);
        // `first` is the lowest address of the function.
        assert_eq!(s.first(0), Some((0x1000, HostPage { given: 0b01 })));
        assert_eq!(s.first(2), Some((0x2000, HostPage { given: 0b01 })));
        assert_eq!(s.first(7), None);
        assert!(s.update(0, 0x1000, HostPage { given: 0b11 }));
        assert!(!s.update(2, 0x1000, HostPage { given: 0 }));
        assert!(!s.update(0, 0x9000, HostPage { given: 0 }));
        assert_eq!(s.find_partial(0, 0b11), Some(0x3000));
        assert!(s.update(0, 0x3000, HostPage { given: 0b11 }));
        assert_eq!(s.find_partial(0, 0b11), None);
        // Removal checks the function and keeps the memory for an explicit release.
        assert_eq!(s.remove(2, 0x1000), None);
        assert_eq!(s.remove(0, 0x1000), Some(HostPage { given: 0b11 }));
        assert_eq!(s.remove(0, 0x1000), None);
        assert_eq!((s.len(), s.returned_len()), (2, 1));
        assert_eq!(s.take_returned(0x1000).map(|m| m.0), Some(0x1000));
        assert!(s.take_returned(0x1000).is_none());
        assert_eq!(s.returned_len(), 0);
        assert_eq!(s.first(0), Some((0x3000, HostPage { given: 0b11 })));
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
