// SPDX-License-Identifier: GPL-2.0

//! Memory regions (kernel shell) over the pure [`crate::ib::mr::commands`]: get_dma_mr (a
//! PA mkey of unbounded length), reg_user_mr (pinned pages, the best block size for
//! an MTT mkey, CREATE_MKEY with the translation table inline, filled from the
//! umem's DMA blocks in chunks), rereg_user_mr, dereg_mr (DESTROY_MKEY, then unpin).
//!
//! Without a UMR QP the mkey cannot be changed in place, so rereg_user_mr does what
//! upstream `mlx5_ib_rereg_user_mr` does when UMR cannot be used: without a new
//! translation it revokes the old mkey (DESTROY_MKEY; upstream a UMR revoke) and
//! creates a new MR over the same pinned pages (`create_real_mr`); with one it
//! registers the new range as a new MR. The core then puts the new MR in the old
//! one's place and deregisters the old one, whose mkey is already gone.
//!
//! Pinned pages a key may still reach are never unpinned: after a CREATE_MKEY whose
//! outcome is unknown ([`create_outcome_unknown`]) or a failed DESTROY_MKEY they go
//! to the function's graveyard ([`Hw::keep`]), unpinned once the function stopped DMA.
//!
//! Upstream registers user MRs below 256 MiB from its mkey cache and loads their
//! translation with UMR WQEs; we always take its other path (`reg_create` with the
//! table in CREATE_MKEY), which it uses for larger MRs or without UMR.

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod commands;
pub(crate) mod mw;

use core::{
    cell::RefCell,
    sync::atomic::{AtomicU8, Ordering},
};

use kernel::{
    device,
    prelude::*,
    sync::{aref::ARef, Arc},
};

use crate::ib::{
    mr::commands::{
        access_writable, check_reg, check_rereg, mkey_access, mkey_of, octo_len, BlockSource,
        CreateDmaMkey, CreateFreeMttMkey, CreateMttMkey, DestroyMkey, MrCaps, MrError,
    },
    umem::plan::{access, mkey_page_sizes},
};
use crate::{
    cmd::{
        commands::{gen_cap, GeneralCaps},
        status::{create_outcome_unknown, CmdError},
    },
    ffi::rdma::{
        ib_mr::{IbMrOps, ReregReq},
        umem::{DmaBlocks, IbDev, Umem},
    },
    hw::Hw,
};

impl BlockSource for DmaBlocks<'_> {
    fn fill(&mut self, out: &mut [u64]) -> usize {
        DmaBlocks::fill(self, out)
    }
}

/// A created mkey (its index until DESTROY_MKEY succeeded); the [`Mr`] holding it
/// destroys it when dropped.
struct Mkey {
    hw: Arc<Hw>,
    /// The mkey index; `None` once destroyed.
    index: Option<u32>,
}

impl Mkey {
    /// DESTROY_MKEY now; the mkey is gone on success (and may remain on failure).
    fn destroy(&mut self) -> Result<(), CmdError> {
        if let Some(index) = self.index {
            self.hw.exec_cmd(DestroyMkey { index })?;
            self.index = None;
        }
        Ok(())
    }
}

/// One memory region: its mkey and, for a user MR, the pinned pages. The mkey is
/// destroyed before the pages are unpinned; if DESTROY_MKEY fails the pages go to the
/// function's graveyard ([`Hw::keep`]), never back to the system under a live key.
pub(crate) struct Mr {
    dev: ARef<device::Device>,
    mkey: Mkey,
    umem: Option<Umem>,
    /// lkey = rkey.
    key: u32,
    /// IB access flags it was created with.
    access: u32,
    /// Its IOVA (user MRs).
    iova: u64,
    /// Whether the pages were pinned writable.
    writable: bool,
}

impl Mr {
    /// Destroys the mkey; on failure the pinned pages are kept (the key may still
    /// reach them) and the error returned.
    fn destroy(&mut self) -> Result<(), CmdError> {
        self.mkey.destroy().inspect_err(|e| {
            if let Some(u) = self.umem.take() {
                self.mkey.hw.keep(&self.dev, e, u.pages(), u);
            }
        })
    }
}

impl Drop for Mr {
    fn drop(&mut self) {
        // Failures are logged by the command layer and by `Hw::keep`.
        let _ = self.destroy();
    }
}

impl Mr {
    /// lkey and rkey (the same key, as upstream).
    pub(crate) fn keys(&self) -> (u32, u32) {
        (self.key, self.key)
    }
}

/// The MR verbs of one function.
pub(crate) struct MrVerbs {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    caps: MrCaps,
    /// Page sizes an MTT mkey may use.
    page_sizes: u64,
    /// The next `mkey_7_0` variant (upstream `dev->mkey_var`).
    variant: AtomicU8,
    /// Cap `imaicl`: memory windows (upstream serves `alloc_mw` only with it).
    mw: bool,
}

impl MrVerbs {
    /// The verbs over `hw` with the device's current caps.
    pub(crate) fn new(dev: &device::Device, hw: Arc<Hw>, caps: &GeneralCaps) -> Self {
        Self {
            dev: dev.into(),
            hw,
            caps: MrCaps {
                relaxed_write: caps.get(gen_cap::RELAXED_ORDERING_WRITE),
                relaxed_read: caps.get(gen_cap::RELAXED_ORDERING_READ),
                ats: caps.get(gen_cap::ATS),
                pg: caps.get(gen_cap::PG),
            },
            // cmd_hca_cap_2 is not queried: its entity-size caps read as 0, which
            // upstream takes as 4 KiB … 2 GiB.
            page_sizes: mkey_page_sizes(0, 0, false),
            variant: AtomicU8::new(0),
            mw: caps.get(gen_cap::IMAICL),
        }
    }

    fn next_variant(&self) -> u8 {
        // Upstream `atomic_inc_return`: the first key byte is 1.
        self.variant.fetch_add(1, Ordering::Relaxed).wrapping_add(1)
    }

    /// An MTT mkey over `umem` at `iova` (upstream `reg_create` with `populate`).
    fn create_user(&self, mut umem: Umem, pdn: u32, iova: u64, acc: u32) -> Result<KBox<Mr>> {
        let size = umem.best_page_size(self.page_sizes, iova).ok_or(EINVAL)?;
        let nblocks = umem.num_blocks(size);
        octo_len(iova, umem.len(), size.shift()).ok_or(EINVAL)?;
        let key = self.next_variant();
        let created = {
            let mut blocks = umem.blocks(size);
            self.hw.exec_cmd(CreateMttMkey {
                pdn,
                access: mkey_access(acc, &self.caps),
                key,
                iova,
                len: umem.len(),
                // At most 63: fits.
                page_shift: size.shift() as u8,
                nblocks,
                pg: self.caps.pg,
                blocks: RefCell::new(&mut blocks),
            })
        };
        let index = match created {
            Ok(i) => i,
            Err(e) => {
                // A timed-out CREATE_MKEY may have made a key over the pages.
                if create_outcome_unknown(e.kind) {
                    self.hw.keep(&self.dev, &e, umem.pages(), umem);
                }
                return Err(e.errno().into());
            }
        };
        dev_dbg!(
            self.dev,
            "reg_user_mr: mkey {:#x}, {} blocks of {} KiB\n",
            mkey_of(index, key),
            nblocks,
            size.bytes() >> 10
        );
        let mr = Mr {
            dev: self.dev.clone(),
            mkey: Mkey {
                hw: self.hw.clone(),
                index: Some(index),
            },
            key: mkey_of(index, key),
            access: acc,
            iova,
            writable: access_writable(acc),
            umem: Some(umem),
        };
        Ok(KBox::new(mr, GFP_KERNEL)?)
    }
}

impl IbMrOps for MrVerbs {
    /// get_dma_mr: a physical-address mkey of PD `pdn`.
    ///
    /// # Errors
    ///
    /// CREATE_MKEY's errno ([`Hw::exec_cmd`]); `ENOMEM` when the MR's box cannot be
    /// allocated.
    fn get_dma_mr(&self, pdn: u32, acc: u32) -> Result<KBox<Mr>> {
        let key = self.next_variant();
        // Upstream asks for relaxed ordering on every DMA MR.
        let index = self.hw.run(CreateDmaMkey {
            pdn,
            access: mkey_access(acc | access::RELAXED_ORDERING, &self.caps),
            key,
            ats: self.caps.ats,
        })?;
        let mr = Mr {
            dev: self.dev.clone(),
            mkey: Mkey {
                hw: self.hw.clone(),
                index: Some(index),
            },
            umem: None,
            key: mkey_of(index, key),
            access: acc,
            iova: 0,
            writable: false,
        };
        Ok(KBox::new(mr, GFP_KERNEL)?)
    }

    /// reg_user_mr: pins `[start, start + len)` and registers it at `iova`.
    ///
    /// # Errors
    ///
    /// `EOPNOTSUPP` for ON_DEMAND, `EINVAL` for a zero length or a range that wraps
    /// ([`MrError::errno`]); pinning's errors (`Umem::get`: `ENOMEM` over
    /// RLIMIT_MEMLOCK, `EFAULT` for an unmapped address, `EPERM`); `EINVAL` when no
    /// page size maps `iova` onto the pages or the translation is too large;
    /// CREATE_MKEY's errno ([`Hw::exec_cmd`]), the pages kept in the graveyard when
    /// its outcome is unknown; `ENOMEM`.
    fn reg_user_mr(
        &self,
        dev: IbDev<'_>,
        pdn: u32,
        start: u64,
        len: u64,
        iova: u64,
        acc: u32,
    ) -> Result<KBox<Mr>> {
        check_reg(start, len, acc).map_err(MrError::errno)?;
        let umem = Umem::get(dev, start, len, acc)?;
        self.create_user(umem, pdn, iova, acc)
    }

    /// rereg_user_mr: a new translation (a new MR, returned) or the same pages under
    /// a new PD or access (the old mkey destroyed and a new one made over them).
    ///
    /// # Errors
    ///
    /// `EOPNOTSUPP` for flags beyond TRANS/PD/ACCESS, ON_DEMAND or an MR without
    /// pages; `EACCES` for writable access over pages pinned read-only; `EINVAL` for
    /// a new range as `reg_user_mr` ([`MrError::errno`]); the errors of
    /// `reg_user_mr` for a new translation; DESTROY_MKEY's errno (the MR unchanged)
    /// or CREATE_MKEY's ([`Hw::exec_cmd`]).
    fn rereg_user_mr(
        &self,
        dev: IbDev<'_>,
        old: &mut Mr,
        req: ReregReq,
    ) -> Result<Option<KBox<Mr>>> {
        let r =
            check_rereg(req.flags, req.access, old.access, old.writable).map_err(MrError::errno)?;
        if r.trans {
            check_reg(req.start, req.len, r.access).map_err(MrError::errno)?;
            let umem = Umem::get(dev, req.start, req.len, r.access)?;
            return self
                .create_user(umem, req.pdn, req.iova, r.access)
                .map(Some);
        }
        // Same pages, new PD or access: revoke the old mkey, move its pages to a new
        // one (only one mkey may refer to a umem).
        if old.umem.is_none() {
            return Err(EOPNOTSUPP);
        }
        // On failure the MR stays as it was, pages and key (rereg fails).
        old.mkey.destroy().map_err(|e| e.errno())?;
        let umem = old.umem.take().ok_or(EOPNOTSUPP)?;
        self.create_user(umem, req.pdn, old.iova, r.access)
            .map(Some)
    }

    /// dereg_mr: DESTROY_MKEY, then the pages go.
    ///
    /// # Errors
    ///
    /// DESTROY_MKEY's errno ([`Hw::exec_cmd`]; 0 when the device is dead, as upstream); the
    /// MR stays with the core and its pages in the graveyard.
    fn dereg_mr(&self, mr: &mut Mr) -> Result {
        // On failure the pages go to the graveyard and the MR stays with the core
        // (upstream returns the error too; a later dereg retries DESTROY_MKEY), unless
        // the device is dead, where upstream's dereg succeeds.
        match mr.destroy() {
            Err(e) if !e.gone_with_dead_device() => Err(e.errno().into()),
            _ => Ok(()),
        }
    }

    /// alloc_mr (`IB_MR_TYPE_MEM_REG`, upstream `mlx5_alloc_mem_reg_descs`): a free
    /// MTT mkey with `umr_en`, for IB_WR_REG_MR to fill; its translation list is the
    /// shim's (`map_mr_sg`).
    ///
    /// # Errors
    ///
    /// CREATE_MKEY's errno ([`Hw::exec_cmd`]); `ENOMEM`.
    fn alloc_mr(&self, pdn: u32, ndescs: u32, page_shift: u8) -> Result<KBox<Mr>> {
        let key = self.next_variant();
        let index = self.hw.run(CreateFreeMttMkey {
            pdn,
            access: mkey_access(access::RELAXED_ORDERING, &self.caps),
            key,
            ndescs,
            page_shift,
            ats: self.caps.ats,
        })?;
        let mr = Mr {
            dev: self.dev.clone(),
            mkey: Mkey {
                hw: self.hw.clone(),
                index: Some(index),
            },
            umem: None,
            key: mkey_of(index, key),
            access: 0,
            iova: 0,
            writable: false,
        };
        Ok(KBox::new(mr, GFP_KERNEL)?)
    }
}
