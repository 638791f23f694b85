// SPDX-License-Identifier: GPL-2.0

//! The ledger of pages given to the firmware, and their supply and reclaim.
//!
//! Every page handed to the device with MANAGE_PAGES is recorded by DMA address. A page
//! is freed only when the device gave it back (MANAGE_PAGES take) or confirmed that it
//! stopped DMA; everything else is deliberately leaked: [`FwPage`] does not free on drop.
//! Firmware pages are 4 KiB; on x86_64 that is the kernel page size, so each firmware
//! page is one coherent allocation without a kernel mapping (the CPU never touches it).

use core::mem::ManuallyDrop;

use kernel::{
    device::{self, Bound},
    dma::CoherentHandle,
    prelude::*,
    rbtree::{RBTree, RBTreeNodeReservation},
    sync::{new_mutex, Arc, Mutex},
    time::{Delta, Instant, Monotonic},
    sync::aref::ARef,
};

use crate::{cmd::commands, hw::Hw};

/// Firmware page size.
pub(crate) const FW_PAGE: usize = 4096;
/// Addresses per MANAGE_PAGES give: 64 mailbox blocks of 512 bytes, full.
const GIVE_BATCH: usize = 64 * 512 / 8;
/// Addresses asked for per MANAGE_PAGES take; real firmware returns at most 50,000.
const TAKE_BATCH: u32 = 65_536;
/// Reclaim gives up when no page came back for this long.
const RECLAIM_IDLE: Delta = Delta::from_secs(5);

/// One page owned by the device. Dropping it leaks the memory on purpose: only
/// [`FwPage::release`], called once the device returned the page, frees it.
struct FwPage(ManuallyDrop<CoherentHandle>);

impl FwPage {
    fn release(self) {
        drop(ManuallyDrop::into_inner(self.0));
    }
}

/// Counters of the ledger.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PageCounts {
    /// Pages the device holds now.
    pub(crate) held: u64,
    /// Pages given since bring-up.
    pub(crate) given: u64,
    /// Pages returned by the device and freed.
    pub(crate) reclaimed: u64,
    /// Addresses the device returned that we never gave (ignored).
    pub(crate) unknown_returns: u64,
}

struct Ledger {
    pages: RBTree<u64, FwPage>,
    counts: PageCounts,
}

/// Pages given to function 0 of one device. Dropping it reclaims every page (the
/// owner must have torn the HCA down first) and leaks what the device kept.
#[pin_data(PinnedDrop)]
pub(crate) struct FwPages {
    hw: Arc<Hw>,
    dev: ARef<device::Device>,
    #[pin]
    ledger: Mutex<Ledger>,
}

impl FwPages {
    /// An empty ledger.
    pub(crate) fn new(dev: &device::Device<Bound>, hw: Arc<Hw>) -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(Self {
                hw,
                dev: dev.into(),
                ledger <- new_mutex!(Ledger { pages: RBTree::new(), counts: PageCounts::default() }),
            }),
            GFP_KERNEL,
        )
    }

    /// Current counters.
    pub(crate) fn counts(&self) -> PageCounts {
        self.ledger.lock().counts
    }

    fn dev_bound(&self) -> &device::Device<Bound> {
        // SAFETY: `FwPages` lives in the driver data of a bound device and is dropped
        // before unbind completes.
        unsafe { self.dev.as_bound() }
    }

    /// Gives `n` pages to the device, in batches that fill whole mailbox chains. On an
    /// allocation failure the device is told (allocation-failure mode) and `ENOMEM`
    /// returned; pages of a batch the device refused are freed, pages of a batch whose
    /// command timed out are leaked (the device may own them).
    pub(crate) fn give(&self, n: u64) -> Result {
        let mut left = n;
        while left > 0 {
            let batch = left.min(GIVE_BATCH as u64) as usize;
            let mut handles = KVec::with_capacity(batch, GFP_KERNEL)?;
            let mut addrs = KVec::with_capacity(batch, GFP_KERNEL)?;
            for _ in 0..batch {
                match CoherentHandle::alloc(self.dev_bound(), FW_PAGE, GFP_KERNEL) {
                    Ok(h) => {
                        addrs.push(h.dma_address(), GFP_KERNEL)?;
                        handles.push(h, GFP_KERNEL)?;
                    }
                    Err(_) => {
                        dev_err!(self.dev, "out of memory supplying {} firmware pages\n", n);
                        let _ = commands::pages_alloc_failed(&self.hw);
                        return Err(ENOMEM);
                    }
                }
            }
            // Reserve ledger nodes before the device owns the pages, so recording them
            // cannot fail afterwards.
            let mut nodes = KVec::with_capacity(batch, GFP_KERNEL)?;
            for _ in 0..batch {
                nodes.push(RBTreeNodeReservation::<u64, FwPage>::new(GFP_KERNEL)?, GFP_KERNEL)?;
            }
            if let Err(e) = commands::give_pages(&self.hw, &addrs) {
                if e == ETIMEDOUT || e == ENXIO {
                    // The device may hold them: never free.
                    for h in handles.drain_all() {
                        core::mem::forget(h);
                    }
                }
                return Err(e);
            }
            let mut l = self.ledger.lock();
            for (h, node) in handles.drain_all().zip(nodes.drain_all()) {
                let addr = h.dma_address();
                let old = l.pages.insert(node.into_node(addr, FwPage(ManuallyDrop::new(h))));
                // A coherent allocation cannot alias a live one; keep the old one if so.
                if let Some(old) = old {
                    core::mem::forget(old);
                }
            }
            l.counts.held += batch as u64;
            l.counts.given += batch as u64;
            left -= batch as u64;
        }
        Ok(())
    }

    /// Asks the device for every page it holds, as many per command as it returns,
    /// freeing exactly the pages it returned. Stops when the ledger is empty or no page
    /// came back for [`RECLAIM_IDLE`]. Returns how many pages the device still holds.
    pub(crate) fn reclaim_all(&self) -> u64 {
        let start = Instant::<Monotonic>::now();
        let mut last_progress = Instant::<Monotonic>::now();
        let total = self.counts().held;
        let mut next_report = Delta::from_secs(2);
        loop {
            let held = self.counts().held;
            if held == 0 {
                break;
            }
            let ask = held.min(u64::from(TAKE_BATCH)) as u32;
            let mut got = KVec::new();
            match commands::take_pages(&self.hw, ask, &mut got) {
                Ok(_) => {}
                Err(e) => {
                    dev_err!(self.dev, "reclaiming firmware pages failed ({:?}); {} pages stay with the device\n", e, held);
                    return held;
                }
            }
            if !got.is_empty() {
                last_progress = Instant::<Monotonic>::now();
            } else if last_progress.elapsed() > RECLAIM_IDLE {
                dev_err!(self.dev, "device returned no page for {} ms; {} pages stay with it (leaked)\n",
                    RECLAIM_IDLE.as_millis(), held);
                return held;
            }
            let mut l = self.ledger.lock();
            for a in got.iter() {
                match l.pages.remove(a) {
                    Some(p) => {
                        p.release();
                        l.counts.held -= 1;
                        l.counts.reclaimed += 1;
                    }
                    None => l.counts.unknown_returns += 1,
                }
            }
            drop(l);
            if start.elapsed() > next_report {
                dev_info!(self.dev, "reclaiming firmware pages: {} of {} returned\n", total - self.counts().held, total);
                next_report = next_report + Delta::from_secs(2);
            }
        }
        let c = self.counts();
        if c.unknown_returns > 0 {
            dev_warn!(self.dev, "device returned {} addresses it was never given\n", c.unknown_returns);
        }
        if total > 0 {
            dev_info!(self.dev, "reclaimed {} firmware pages in {} ms\n", total, start.elapsed().as_millis());
        }
        0
    }
}

#[pinned_drop]
impl PinnedDrop for FwPages {
    fn drop(self: Pin<&mut Self>) {
        let left = self.reclaim_all();
        if left > 0 {
            dev_err!(self.dev, "{} firmware pages not returned by the device are leaked, not freed\n", left);
        }
    }
}
