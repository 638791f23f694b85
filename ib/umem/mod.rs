// SPDX-License-Identifier: GPL-2.0

//! Doorbell records of user objects (kernel shell), as upstream
//! `mlx5_ib_db_map_user`: a user CQ, QP or SRQ names the user address of its 8-byte
//! doorbell record; the user page holding it is pinned once per user context (and
//! process: the mm), shared by every record of that context in the page and
//! refcounted. A record's DMA address is the page's DMA address plus the record's
//! offset in the page ([`crate::ib::umem::plan::db_slot`]: a record straddling the page
//! end is `EINVAL`).
//!
//! Each user context owns one [`DbPages`] table (`UserContext::db_pages`); a
//! [`UserDb`] holds a reference on its table and on its page, and drops the page's
//! count on drop, unpinning the page when the last record of it goes. Objects are
//! destroyed before their context, but the table's `Arc` keeps it alive either way.

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod plan;

use kernel::{
    page::PAGE_SIZE,
    prelude::*,
    sync::{new_mutex, Arc, Mutex},
};

use crate::ffi::rdma::umem::{IbDev, Mm, Umem};
use crate::ib::umem::plan::db_slot;

/// One pinned page of doorbell records.
struct DbPage {
    /// The process the page belongs to (upstream compares `current->mm`).
    mm: Mm,
    /// Page-aligned user address.
    page: u64,
    umem: Umem,
    /// Records mapped in the page (≥ 1 while in the table).
    refs: u32,
}

/// The doorbell pages of one user context.
#[pin_data]
pub(crate) struct DbPages {
    /// Pinned pages; a short list (a few per context), searched linearly as upstream.
    /// Lock order: held while a page is pinned or unpinned (the RDMA core's umem
    /// calls, which take the process's mmap lock); no lock of the driver under it,
    /// never held across a command.
    #[pin]
    pages: Mutex<KVec<DbPage>>,
}

#[expect(dead_code, reason = "i11-umem, for the user verbs")]
impl DbPages {
    /// An empty table.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                pages <- new_mutex!(KVec::new()),
            }),
            GFP_KERNEL,
        )
    }

    /// Maps the doorbell record at user address `virt` of the calling process: pins
    /// its page on `dev` unless this context already holds it.
    ///
    /// # Errors
    ///
    /// `EINVAL` for a record straddling its page (`plan::db_slot`, as upstream), a
    /// caller without an address space, or a page that is not one DMA block;
    /// pinning's errors (`Umem::get`); `ENOMEM`.
    pub(crate) fn map(self: &Arc<Self>, dev: IbDev<'_>, virt: u64) -> Result<UserDb> {
        let slot = db_slot(virt, PAGE_SIZE as u64)?;
        let mut pages = self.pages.lock();
        let found = pages
            .iter_mut()
            .find(|p| p.page == slot.page && p.mm.is_current());
        let (page_dma, mm_key) = match found {
            Some(p) => {
                p.refs = p.refs.checked_add(1).ok_or(ENOMEM)?;
                (p.umem.start_dma(), p.mm.key())
            }
            None => {
                let mm = Mm::current().ok_or(EINVAL)?;
                // Upstream pins doorbell pages with access 0.
                let umem = Umem::get(dev, slot.page, PAGE_SIZE as u64, 0)?;
                // The record is given to the device as one DMA address.
                if !umem.is_contiguous() {
                    return Err(EINVAL);
                }
                let r = (umem.start_dma(), mm.key());
                pages.push(
                    DbPage {
                        mm,
                        page: slot.page,
                        umem,
                        refs: 1,
                    },
                    GFP_KERNEL,
                )?;
                r
            }
        };
        Ok(UserDb {
            table: self.clone(),
            page: slot.page,
            mm_key,
            dma: page_dma + slot.offset,
        })
    }

    /// Pages pinned (for tests and debugging).
    pub(crate) fn pages_pinned(&self) -> usize {
        self.pages.lock().len()
    }
}

/// A mapped doorbell record; its page's count drops on drop.
///
/// INVARIANT: `table` holds a page with `page` and `mm_key` whose `refs` counts this
/// record.
pub(crate) struct UserDb {
    table: Arc<DbPages>,
    page: u64,
    mm_key: usize,
    dma: u64,
}

impl UserDb {
    /// DMA address of the record (what a CQ/QP/SRQ context's `dbr_addr` gets).
    pub(crate) fn dma(&self) -> u64 {
        self.dma
    }
}

impl Drop for UserDb {
    fn drop(&mut self) {
        let mut pages = self.table.pages.lock();
        let Some(i) = pages
            .iter()
            .position(|p| p.page == self.page && p.mm.key() == self.mm_key)
        else {
            // Unreachable by the type invariant.
            return;
        };
        let last = match pages.get_mut(i) {
            Some(p) => {
                p.refs = p.refs.saturating_sub(1);
                p.refs == 0
            }
            None => false,
        };
        if last {
            // Unpins the page and drops the mm reference.
            drop(pages.remove(i));
        }
    }
}
