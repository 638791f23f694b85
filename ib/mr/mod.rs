// SPDX-License-Identifier: GPL-2.0

//! Memory regions (kernel shell) over the pure [`crate::ib::mr::commands`] and
//! [`crate::ib::mr::umr`]: get_dma_mr (a PA mkey of unbounded length), reg_user_mr
//! (pinned pages, the best block size for an MTT mkey), rereg_user_mr, dereg_mr.
//!
//! **MR cache.** As upstream's (`mr.c` with the core's FRMR pools, `umr.c`), a user MR
//! of at most [`CACHE_MAX_ENTRIES`] translation entries is served from a cache of free
//! MTT mkeys with `umr_en`, made in the UMR QP's PD (`ffi/rdma/ib_umr.c`) in power-of-
//! two sizes ([`umr::bucket`]): one UMR WQE gives such an mkey its translation (the
//! table in a DMA buffer the WQE points to), PD, rights and `free` = 0; dereg_mr
//! revokes it by UMR (free, back in the UMR PD) and keeps it for the next MR of its
//! size (up to [`CACHE_KEEP`] per size). The first MR of a size also pays the
//! CREATE_MKEY of its mkey, as upstream's pool does on a miss. Larger MRs, rights
//! the device's UMR cannot set, and every MR once UMR is broken take the command path
//! (upstream `reg_create`): CREATE_MKEY with the translation table inline, filled
//! from the umem's DMA blocks in chunks; DESTROY_MKEY at dereg.
//!
//! **rereg.** A cached MR changes PD and rights in place by UMR (upstream
//! `mlx5r_umr_rereg_pd_access`): its key stays. Otherwise rereg_user_mr does what
//! upstream `mlx5_ib_rereg_user_mr` does when UMR cannot be used: without a new
//! translation it revokes the old mkey (DESTROY_MKEY) and creates a new MR over the
//! same pinned pages (`create_real_mr`); with one it registers the new range as a
//! new MR. The core then puts the new MR in the old one's place and deregisters the
//! old one, whose mkey is already gone.
//!
//! **Errors.** A UMR completed in error leaves the mkey as it was (logged by the shim
//! with the syndrome): registration falls back to CREATE_MKEY, dereg to DESTROY_MKEY
//! (upstream `mlx5_revoke_mr`). A UMR that never completes (a dead device) breaks UMR
//! after a bound (`ffi/rdma/ib_umr.c`); a dead device is not asked at all. The cache's
//! mkeys are destroyed once the device is unregistered ([`IbMrOps::flush_cache`]).
//!
//! Pinned pages a key may still reach are never unpinned: after a CREATE_MKEY whose
//! outcome is unknown ([`create_outcome_unknown`]), a failed DESTROY_MKEY or a UMR
//! that did not complete they go to the function's graveyard ([`Hw::keep`],
//! [`Hw::bury`]), unpinned once the function stopped DMA.

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod commands;
pub(crate) mod mw;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod umr;

use core::{
    cell::RefCell,
    sync::atomic::{AtomicU8, Ordering},
};

use kernel::{
    device,
    dma::Coherent,
    prelude::*,
    sync::{aref::ARef, new_mutex, Arc, Mutex},
};

use crate::ib::{
    mr::commands::{
        access_writable, check_reg, check_rereg, mkey_access, mkey_of, octo_len, BlockSource,
        CreateDmaMkey, CreateFreeMkey, CreateMttMkey, DestroyMkey, FreeXlt, MkeyAccess, MrCaps,
        MrError, MTT_PRESENT,
    },
    mr::umr::{UmrCaps, Xlt},
    umem::plan::{access, mkey_page_sizes},
};
use crate::{
    cmd::{
        commands::{gen_cap, GeneralCaps},
        status::{create_outcome_unknown, CmdError},
    },
    coherent_io,
    ffi::rdma::{
        ib_mr::{IbMrOps, ReregReq, UmrQp},
        umem::{BlockSize, DmaBlocks, IbDev, Umem},
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
    /// For an MR served from the cache: the entries of its mkey's bucket.
    cached: Option<u32>,
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

/// log2 of the largest cached MR's translation entries: 512 (2 MiB in 4 KiB pages; one
/// page of translation table). Upstream caches up to `mkey_max_umr_order`; larger MRs
/// here take the command path, which loads any size in one command.
const CACHE_MAX_ORDER: u32 = 9;
/// The largest cached MR's translation entries.
pub(crate) const CACHE_MAX_ENTRIES: u32 = 1 << CACHE_MAX_ORDER;
/// Buckets: 8, 16, …, [`CACHE_MAX_ENTRIES`] entries.
const CACHE_BUCKETS: usize = (CACHE_MAX_ORDER - 2) as usize;
/// Free mkeys kept per bucket; more are destroyed at dereg (upstream's pools age them
/// out instead).
pub(crate) const CACHE_KEEP: usize = 16;
/// Bytes of the translation buffer a UMR reads: the largest bucket's entries.
const XLT_BYTES: usize = (CACHE_MAX_ENTRIES as usize) * 8;

/// The MR cache of one function (behind its mutex, which also serializes the use of
/// the translation buffer).
pub(crate) struct MrCache {
    /// Free mkeys (whole keys) of each bucket, smallest first.
    free: [KVec<u32>; CACHE_BUCKETS],
    /// The UMR QP's PD number and local DMA lkey, once the QP exists.
    umr: Option<(u32, u32)>,
    /// The translation buffer UMR WQEs point to (made on first use).
    xlt: Option<Coherent<[u8]>>,
    /// Set by [`IbMrOps::flush_cache`]: no more caching.
    closed: bool,
}

impl MrCache {
    /// An empty cache.
    pub(crate) fn new() -> Result<Arc<Mutex<Self>>> {
        Arc::pin_init(
            new_mutex!(MrCache {
                free: [const { KVec::new() }; CACHE_BUCKETS],
                umr: None,
                xlt: None,
                closed: false,
            }),
            GFP_KERNEL,
        )
    }
}

/// The bucket index of `entries` (a power of two from 8).
fn bucket_index(entries: u32) -> usize {
    (entries.trailing_zeros() as usize).saturating_sub(3)
}

/// Writes the `nblocks` DMA blocks of `blocks` into `buf` as MTT entries
/// (`MLX5_IB_MTT_PRESENT`, big-endian; upstream `_mlx5r_umr_update_mr_pas`), then
/// zeros up to the next 64 bytes.
///
/// # Errors
///
/// `EINVAL` when the blocks are more or fewer than `nblocks` or do not fit `buf`.
fn fill_mtts(buf: &Coherent<[u8]>, blocks: &mut DmaBlocks<'_>, nblocks: u64) -> Result {
    let mut filled = 0usize;
    let mut chunk = [0u64; 32];
    let mut bytes = [0u8; 32 * 8];
    loop {
        let n = blocks.fill(&mut chunk);
        if n == 0 {
            break;
        }
        if (filled + n) as u64 > nblocks {
            return Err(EINVAL);
        }
        for (i, b) in chunk[..n].iter().enumerate() {
            bytes[i * 8..i * 8 + 8].copy_from_slice(&(b | MTT_PRESENT).to_be_bytes());
        }
        coherent_io::write_bytes(buf, filled * 8, &bytes[..n * 8])?;
        filled += n;
    }
    if filled as u64 != nblocks {
        return Err(EINVAL);
    }
    let tail = (filled * 8).next_multiple_of(64) - filled * 8;
    coherent_io::write_bytes(buf, filled * 8, &[0u8; 64][..tail])
}

/// What a registration through the cache came to.
enum Cached {
    /// The MR.
    Done(KBox<Mr>),
    /// Not through the cache (too large, rights UMR cannot set, UMR broken, or the
    /// UMR completed in error and the mkey is unchanged): the command path.
    Fallback(Umem),
    /// The UMR did not complete: the pages are kept, the registration failed.
    Failed(Error),
}

/// The MR verbs of one function.
pub(crate) struct MrVerbs {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    caps: MrCaps,
    /// What the device's UMR may change.
    umr_caps: UmrCaps,
    /// Page sizes an MTT mkey may use.
    page_sizes: u64,
    /// The next `mkey_7_0` variant (upstream `dev->mkey_var`).
    variant: AtomicU8,
    /// Cap `imaicl`: memory windows (upstream serves `alloc_mw` only with it).
    mw: bool,
    /// Free `umr_en` mkeys for user MRs.
    cache: Arc<Mutex<MrCache>>,
}

impl MrVerbs {
    /// The verbs over `hw` with the device's current caps and `cache`.
    pub(crate) fn new(
        dev: &device::Device,
        hw: Arc<Hw>,
        caps: &GeneralCaps,
        cache: Arc<Mutex<MrCache>>,
    ) -> Self {
        Self {
            dev: dev.into(),
            hw,
            caps: MrCaps {
                relaxed_write: caps.get(gen_cap::RELAXED_ORDERING_WRITE),
                relaxed_read: caps.get(gen_cap::RELAXED_ORDERING_READ),
                ats: caps.get(gen_cap::ATS),
                pg: caps.get(gen_cap::PG),
            },
            // Upstream `get_umr_update_access_mask` / `umr_check_mkey_mask`.
            umr_caps: UmrCaps {
                atomic: caps.get(gen_cap::ATOMIC) && !caps.get(gen_cap::UMR_MODIFY_ATOMIC_DISABLED),
                ro_write_umr: caps.get(gen_cap::RELAXED_ORDERING_WRITE_UMR),
                ro_read_umr: caps.get(gen_cap::RELAXED_ORDERING_READ_UMR),
                // cmd_hca_cap_2 is not queried (below).
                log_entity_size_5: false,
            },
            // cmd_hca_cap_2 is not queried: its entity-size caps read as 0, which
            // upstream takes as 4 KiB … 2 GiB.
            page_sizes: mkey_page_sizes(0, 0, false),
            variant: AtomicU8::new(0),
            mw: caps.get(gen_cap::IMAICL),
            cache,
        }
    }

    fn next_variant(&self) -> u8 {
        // Upstream `atomic_inc_return`: the first key byte is 1.
        self.variant.fetch_add(1, Ordering::Relaxed).wrapping_add(1)
    }

    /// A user MR over `umem`: from the cache when it qualifies, else by CREATE_MKEY.
    fn create_user(
        &self,
        dev: IbDev<'_>,
        mut umem: Umem,
        pdn: u32,
        iova: u64,
        acc: u32,
    ) -> Result<KBox<Mr>> {
        let size = umem.best_page_size(self.page_sizes, iova).ok_or(EINVAL)?;
        match self.create_cached(dev, umem, size, pdn, iova, acc) {
            Cached::Done(mr) => Ok(mr),
            Cached::Failed(e) => Err(e),
            Cached::Fallback(umem) => self.create_real(umem, size, pdn, iova, acc),
        }
    }

    /// Upstream `alloc_cacheable_mr`: a free mkey of the MR's bucket, enabled by UMR.
    fn create_cached(
        &self,
        dev: IbDev<'_>,
        umem: Umem,
        size: BlockSize,
        pdn: u32,
        iova: u64,
        acc: u32,
    ) -> Cached {
        let a = mkey_access(acc, &self.caps);
        let nblocks = umem.num_blocks(size);
        let entries = match umr::bucket(nblocks, CACHE_MAX_ORDER) {
            Some(e) if umr::rights_fit(&a, &self.umr_caps) && size.shift() < 32 => e,
            _ => return Cached::Fallback(umem),
        };
        if self.hw.is_dead() {
            return Cached::Fallback(umem);
        }
        // The MR's memory before a free mkey is taken, as upstream's
        // `alloc_cacheable_mr` allocates before it takes from the cache: a failure here
        // leaves the cache as it was.
        let slot = match KBox::<Mr>::new_uninit(GFP_KERNEL) {
            Ok(slot) => slot,
            Err(e) => return Cached::Failed(e.into()),
        };
        let qp = UmrQp::of(dev);
        let mut c = self.cache.lock();
        if c.closed {
            return Cached::Fallback(umem);
        }
        let (umr_pdn, lkey) = match c.umr {
            Some(u) => u,
            None => match qp.res() {
                Ok(u) => {
                    c.umr = Some(u);
                    u
                }
                Err(_) => return Cached::Fallback(umem),
            },
        };
        if c.xlt.is_none() {
            // SAFETY: the core calls the verbs only while the IB device is registered,
            // a stage of the PCI function's binding: the function is bound for this
            // call, and the buffer is freed before the stage ends (flush_cache, called
            // when the device is unregistered, or the cache's drop with the provider).
            let bound = unsafe { self.dev.as_bound() };
            match Coherent::<u8>::zeroed_slice(bound, XLT_BYTES, GFP_KERNEL) {
                Ok(b) => c.xlt = Some(b),
                Err(_) => return Cached::Fallback(umem),
            }
        }
        let bi = bucket_index(entries);
        let key = match c.free.get_mut(bi).and_then(|v| v.pop()) {
            Some(k) => k,
            None => {
                let variant = self.next_variant();
                // Upstream `mlx5r_create_mkeys`: free, `umr_en`, MTT, in the UMR PD,
                // room for the bucket's entries.
                match self.hw.exec_cmd(CreateFreeMkey {
                    pdn: umr_pdn,
                    access: MkeyAccess::default(),
                    key: variant,
                    ndescs: umr::mkc_octo_size(entries),
                    xlt: FreeXlt::Mtt {
                        page_shift: BlockSize::PAGE.shift() as u8,
                        ats: false,
                    },
                }) {
                    Ok(index) => mkey_of(index, variant),
                    Err(_) => return Cached::Fallback(umem),
                }
            }
        };
        let Some(buf) = c.xlt.as_ref() else {
            Self::keep_free(&mut c, bi, key, &self.hw);
            return Cached::Fallback(umem);
        };
        let xlt = Xlt {
            addr: buf.dma_address(),
            lkey,
            // At most CACHE_MAX_ENTRIES (the bucket): fits.
            entries: nblocks as u32,
            page_shift: size.shift() as u8,
        };
        // The table: the DMA blocks with MLX5_IB_MTT_PRESENT, zeros to the 64-byte unit.
        let filled = fill_mtts(buf, &mut umem.blocks(size), nblocks);
        let wqe = umr::enable(key, pdn, &a, iova, umem.len(), &xlt, &self.umr_caps);
        let mut segs = [0u8; 128];
        let n = match (filled, wqe) {
            (Ok(()), Ok(w)) => w.write(&mut segs),
            _ => None,
        };
        let Some(n) = n else {
            Self::keep_free(&mut c, bi, key, &self.hw);
            return Cached::Fallback(umem);
        };
        match qp.run(key, &segs[..n]) {
            Ok(()) => {}
            Err(e) if e == ETIMEDOUT => {
                // The mkey's state is unknown: it may reach the pages.
                dev_warn!(
                    self.dev,
                    "reg_user_mr: the UMR enabling mkey {:#x} did not complete: its {} pages are kept until the function stops DMA\n",
                    key,
                    umem.pages()
                );
                self.hw.bury(umem);
                return Cached::Failed(EIO);
            }
            Err(_) => {
                // Completed in error or not posted: the mkey is still free.
                Self::keep_free(&mut c, bi, key, &self.hw);
                return Cached::Fallback(umem);
            }
        }
        drop(c);
        dev_dbg!(
            self.dev,
            "reg_user_mr: cached mkey {:#x} ({} entries), {} blocks of {} KiB\n",
            key,
            entries,
            nblocks,
            size.bytes() >> 10
        );
        let mr = Mr {
            dev: self.dev.clone(),
            mkey: Mkey {
                hw: self.hw.clone(),
                index: Some(key >> 8),
            },
            key,
            access: acc,
            iova,
            writable: access_writable(acc),
            umem: Some(umem),
            cached: Some(entries),
        };
        Cached::Done(slot.write(mr))
    }

    /// Puts free mkey `key` back in bucket `bi`, or destroys it when the cache is
    /// closed or the bucket full (a failed DESTROY_MKEY is logged by the command
    /// layer; the mkey is free and reaches nothing).
    fn keep_free(c: &mut MrCache, bi: usize, key: u32, hw: &Hw) {
        if !c.closed {
            if let Some(v) = c.free.get_mut(bi) {
                if v.len() < CACHE_KEEP && v.push(key, GFP_KERNEL).is_ok() {
                    return;
                }
            }
        }
        let _ = hw.exec_cmd(DestroyMkey { index: key >> 8 });
    }

    /// Revokes cached MR `mr` by UMR (upstream `mlx5r_umr_revoke_mr`) and keeps its
    /// mkey; `false` when UMR could not do it (the caller destroys the mkey).
    fn revoke_cached(&self, dev: IbDev<'_>, mr: &mut Mr) -> bool {
        let (Some(entries), Some(_)) = (mr.cached, mr.mkey.index) else {
            return false;
        };
        if self.hw.is_dead() {
            return false;
        }
        let mut c = self.cache.lock();
        let Some((umr_pdn, _)) = c.umr else {
            return false;
        };
        let mut segs = [0u8; 128];
        let Some(n) = umr::revoke(mr.key, umr_pdn)
            .ok()
            .and_then(|w| w.write(&mut segs))
        else {
            return false;
        };
        if UmrQp::of(dev).run(mr.key, &segs[..n]).is_err() {
            return false;
        }
        // Free: no access through the key reaches the pages any more.
        mr.mkey.index = None;
        Self::keep_free(&mut c, bucket_index(entries), mr.key, &self.hw);
        true
    }

    /// New PD `pdn` and rights `acc` for cached MR `mr` by UMR, its key kept; `false`
    /// when UMR could not (the rights need a mask bit the device's UMR refuses, UMR is
    /// broken, or the WQE failed: the mkey as it was).
    fn rereg_in_place(&self, dev: IbDev<'_>, mr: &mut Mr, pdn: u32, acc: u32) -> bool {
        if self.hw.is_dead() || mr.mkey.index.is_none() {
            return false;
        }
        let a = mkey_access(acc, &self.caps);
        let mut segs = [0u8; 128];
        let Some(n) = umr::rereg_pd_access(mr.key, pdn, &a, &self.umr_caps)
            .ok()
            .and_then(|w| w.write(&mut segs))
        else {
            return false;
        };
        let c = self.cache.lock();
        if c.umr.is_none() || UmrQp::of(dev).run(mr.key, &segs[..n]).is_err() {
            return false;
        }
        drop(c);
        mr.access = acc;
        true
    }

    /// An MTT mkey over `umem` at `iova` (upstream `reg_create` with `populate`).
    fn create_real(
        &self,
        umem: Umem,
        size: BlockSize,
        pdn: u32,
        iova: u64,
        acc: u32,
    ) -> Result<KBox<Mr>> {
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
            cached: None,
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
            cached: None,
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
        self.create_user(dev, umem, pdn, iova, acc)
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
                .create_user(dev, umem, req.pdn, req.iova, r.access)
                .map(Some);
        }
        if old.umem.is_none() {
            return Err(EOPNOTSUPP);
        }
        // A cached MR: new PD and rights in place by UMR, the key kept (upstream
        // `umr_rereg_pd_access`).
        if old.cached.is_some() && self.rereg_in_place(dev, old, req.pdn, r.access) {
            return Ok(None);
        }
        // Same pages, new PD or access: revoke the old mkey, move its pages to a new
        // one (only one mkey may refer to a umem).
        // On failure the MR stays as it was, pages and key (rereg fails).
        old.mkey.destroy().map_err(|e| e.errno())?;
        let umem = old.umem.take().ok_or(EOPNOTSUPP)?;
        self.create_user(dev, umem, req.pdn, old.iova, r.access)
            .map(Some)
    }

    /// dereg_mr: DESTROY_MKEY, then the pages go.
    ///
    /// # Errors
    ///
    /// DESTROY_MKEY's errno ([`Hw::exec_cmd`]; 0 when the device is dead, as upstream); the
    /// MR stays with the core and its pages in the graveyard.
    fn dereg_mr(&self, dev: IbDev<'_>, mr: &mut Mr) -> Result {
        // A cached MR goes back to the cache (upstream `mlx5_revoke_mr`), else its mkey
        // is destroyed.
        if self.revoke_cached(dev, mr) {
            return Ok(());
        }
        // On failure the pages go to the graveyard and the MR stays with the core
        // (upstream returns the error too; a later dereg retries DESTROY_MKEY), unless
        // the device is dead, where upstream's dereg succeeds.
        match mr.destroy() {
            Err(e) if !e.gone_with_dead_device() => Err(e.errno().into()),
            _ => Ok(()),
        }
    }

    /// Destroys every free mkey of the cache and its translation buffer; nothing is
    /// cached from now on.
    fn flush_cache(&self) {
        let mut c = self.cache.lock();
        c.closed = true;
        // A dead device's mkeys went with it (nothing is sent then).
        let dead = self.hw.is_dead();
        for v in c.free.iter_mut() {
            while let Some(key) = v.pop() {
                if !dead {
                    // Failures are logged by the command layer; a free mkey reaches
                    // nothing.
                    let _ = self.hw.exec_cmd(DestroyMkey { index: key >> 8 });
                }
            }
        }
        c.xlt = None;
        c.umr = None;
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
        let index = self.hw.run(CreateFreeMkey {
            pdn,
            access: mkey_access(access::RELAXED_ORDERING, &self.caps),
            key,
            ndescs,
            xlt: FreeXlt::Mtt {
                page_shift,
                ats: self.caps.ats,
            },
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
            cached: None,
        };
        Ok(KBox::new(mr, GFP_KERNEL)?)
    }
}
