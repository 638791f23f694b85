// SPDX-License-Identifier: GPL-2.0

//! Supply and reclaim of the pages given to the firmware: the kernel shell around the
//! pure [`Ledger`], [`GiveBatches`] and [`Reclaim`].
//!
//! Every page handed to the device with MANAGE_PAGES is recorded in the ledger (over
//! the [`FwStore`] RBTree) *before* the command is posted. Pages are carved from blocks
//! of coherent DMA memory of 2 MiB where the page allocator has them, falling back to
//! smaller blocks and finally to single host pages ([`BlockSizes`]). A block is freed
//! only when the ledger reports it free after the device gave back (MANAGE_PAGES take)
//! or refused every page of it; everything else is deliberately leaked: [`FwMem`] does
//! not free on drop.
//!
//! Firmware pages are allocated with flags that fail instead of waiting for or invoking
//! the OOM killer, and a supply larger than what the system has available is refused up
//! front ([`supply_fits`]). Either way the device is told (MANAGE_PAGES allocation
//! failure) and the caller gets `ENOMEM`; pages given before stay recorded and are
//! reclaimed when the owner unwinds.

use kernel::{
    alloc::Flags,
    device::{self, Bound},
    dma::{attrs::DMA_ATTR_NO_WARN, CoherentHandle},
    page::PAGE_SIZE,
    prelude::*,
    sync::{aref::ARef, new_mutex, Arc, Mutex},
    time::{delay::fsleep, Delta, Instant, Monotonic},
};

use super::{
    batch::{pas_capacity, supply_fits, GiveBatches, PAS_PER_BLOCK},
    block_size::BlockSizes,
    ledger::{FuncKey, Ledger, LedgerError, Released, FW_PAGE_SIZE},
    reclaim::{Reclaim, Step},
    store::{FwMem, FwStore, HostMem},
};
use crate::{
    cmd::{
        commands::{GivePages, PagesAllocFailed, TakePages},
        status::create_outcome_unknown,
    },
    ffi,
    hw::Hw,
    ifc::pages::MAX_RECLAIM_NPAGES,
};

/// Mailbox blocks per MANAGE_PAGES give: 64 blocks of 64 addresses.
const GIVE_MAX_BLOCKS: usize = 64;
/// Mailbox blocks of a MANAGE_PAGES take output: the longest chain whose addresses stay
/// within what firmware returns per command (781 blocks, 49,984 addresses).
const TAKE_MAX_BLOCKS: usize = MAX_RECLAIM_NPAGES as usize / PAS_PER_BLOCK;
const _: () = assert!(pas_capacity(TAKE_MAX_BLOCKS) <= MAX_RECLAIM_NPAGES as usize);
/// Reclaim gives up after this long without a page coming back.
const RECLAIM_TIMEOUT_MS: u64 = 5000;
/// Pause between take commands that failed or returned nothing.
const RETRY_PAUSE: Delta = Delta::from_millis(20);
/// The only function this driver supplies: function 0 (FUNC_ID mode), its ledger key.
const FUNC: FuncKey = 0;
/// Its `function_id` in QUERY_PAGES / MANAGE_PAGES and page requests.
const FUNC_ID: u16 = 0;

/// Why pages are given: upstream reports an allocation failure to the device
/// (MANAGE_PAGES allocation failure, `page_notify_fail`) only for event-driven
/// requests (`give_pages(..., event = 1, ...)` from `pages_work_handler`), never for
/// the boot/init supply (`mlx5_satisfy_startup_pages`, `event = 0`), whose failure
/// fails the probe instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Supply {
    /// QUERY_PAGES(boot/init) at bring-up.
    Startup,
    /// A page-request event.
    Event,
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
    /// Pages freed because the device released them all (release-all request).
    pub(crate) released_by_device: u64,
    /// Blocks of host memory the pages held are carved from.
    pub(crate) blocks: u64,
    /// Block allocations that failed and were retried with a smaller block.
    pub(crate) block_fallbacks: u64,
}

struct State {
    ledger: Ledger,
    store: FwStore<FwMem>,
    given: u64,
    reclaimed: u64,
    unknown_returns: u64,
    released_by_device: u64,
    block_fallbacks: u64,
}

impl State {
    fn counts(&self) -> PageCounts {
        PageCounts {
            held: self.ledger.fw_pages(),
            given: self.given,
            reclaimed: self.reclaimed,
            unknown_returns: self.unknown_returns,
            released_by_device: self.released_by_device,
            blocks: self.ledger.blocks(),
            block_fallbacks: self.block_fallbacks,
        }
    }

    /// Drops the page at `addr` from the ledger and frees its block when that was the
    /// last of it held. Only for pages the device returned or never got.
    fn unrecord(&mut self, addr: u64) -> Result<(), LedgerError> {
        if let Released::HostPageFree(host) = self.ledger.take(&mut self.store, FUNC, addr)? {
            if let Some(mem) = self.store.take_returned(host) {
                mem.release();
            }
        }
        Ok(())
    }

    /// The device returned the page at `addr`: account it and free it. Unknown
    /// addresses are counted and ignored.
    fn returned(&mut self, addr: u64) {
        match self.unrecord(addr) {
            Ok(()) => self.reclaimed += 1,
            Err(_) => self.unknown_returns += 1,
        }
    }

    /// Forgets every page of our function and frees its memory (DMA free), one block at
    /// a time, without MANAGE_PAGES and without allocating (so it cannot
    /// fail half-way). Returns the firmware pages dropped.
    fn drop_all_unasked(&mut self) -> u64 {
        let mut n = 0u64;
        while let Some((host, k)) = self.ledger.release_host_page(&mut self.store, FUNC) {
            n += k;
            // The record just moved to the returned list, with its memory.
            if let Some(mem) = self.store.take_returned(host) {
                mem.release();
            }
        }
        n
    }

    /// Pages recorded for a give that did not happen (or that the device refused).
    fn not_given(&mut self, addrs: &[u64]) {
        for a in addrs {
            // Recorded by `next_page` just before: cannot be unknown.
            let _ = self.unrecord(*a);
        }
    }

    /// One firmware page for the device: a free chunk of a block already mapped, or the
    /// first page of a new block sized for the `need` pages still to give. A block size
    /// that cannot be allocated is dropped from `sizes` and the next smaller one tried.
    fn next_page(
        &mut self,
        dev: &device::Device<Bound>,
        gfp: Flags,
        need: u64,
        sizes: &mut BlockSizes,
    ) -> Result<u64> {
        if let Some(a) = self.ledger.give_free_chunk(&mut self.store, FUNC) {
            return Ok(a);
        }
        let (h, size) = loop {
            let size = sizes.next(need);
            // At most MAX_BLOCK_SIZE (2 MiB): fits a usize.
            match CoherentHandle::alloc_with_attrs(dev, size as usize, gfp, DMA_ATTR_NO_WARN) {
                Ok(h) => break (h, size),
                Err(e) if !sizes.failed(size) => return Err(e),
                Err(_) => self.block_fallbacks += 1,
            }
        };
        let host = h.dma_address();
        if let Some(old) = self.store.stage(FwMem::new(h)) {
            // Never given to the device.
            old.release();
        }
        match self.ledger.add_block(&mut self.store, FUNC, host, size) {
            Ok(a) => Ok(a),
            Err(e) => {
                // Not recorded, so not given: free it.
                if let Some(mem) = self.store.unstage() {
                    mem.release();
                }
                Err(match e {
                    LedgerError::NoMemory => ENOMEM,
                    _ => EIO,
                })
            }
        }
    }
}

/// Pages given to function 0 of one device. Dropping it reclaims every page (the
/// owner must have torn the HCA down first) and leaks what the device kept.
#[pin_data(PinnedDrop)]
pub(crate) struct FwPages {
    hw: Arc<Hw>,
    dev: ARef<device::Device>,
    /// The embedded-CPU bit of this function (init segment), sent in every
    /// QUERY_PAGES / MANAGE_PAGES as in ENABLE_HCA.
    ec: bool,
    /// Lock order: held across MANAGE_PAGES (a give or take), so it is taken before the
    /// command queue's lock (`CmdQueue::state`); the command's completion arrives
    /// through the command EQ, whose drain never takes this lock (page requests only
    /// queue work there).
    #[pin]
    state: Mutex<State>,
}

fn ms_since(start: &Instant<Monotonic>) -> u64 {
    u64::try_from(start.elapsed().as_millis()).unwrap_or(0)
}

impl FwPages {
    /// An empty ledger for the function with embedded-CPU bit `ec`.
    pub(crate) fn new(dev: &device::Device<Bound>, hw: Arc<Hw>, ec: bool) -> Result<Arc<Self>> {
        // PAGE_SIZE is a power of two of at least 4 KiB on every architecture we build for.
        let ledger = Ledger::new(PAGE_SIZE as u64).map_err(|_| EINVAL)?;
        Arc::pin_init(
            try_pin_init!(Self {
                hw,
                dev: dev.into(),
                ec,
                state <- new_mutex!(State {
                    ledger,
                    store: FwStore::new(ffi::gfp_kernel_noretry_nowarn()),
                    given: 0,
                    reclaimed: 0,
                    unknown_returns: 0,
                    released_by_device: 0,
                    block_fallbacks: 0,
                }),
            }),
            GFP_KERNEL,
        )
    }

    /// `(function_id, embedded_cpu_function)` of the function supplied.
    pub(crate) fn function(&self) -> (u16, bool) {
        (FUNC_ID, self.ec)
    }

    /// Current counters.
    pub(crate) fn counts(&self) -> PageCounts {
        self.state.lock().counts()
    }

    fn dev_bound(&self) -> &device::Device<Bound> {
        // SAFETY: `FwPages` lives in the driver data of a bound device and is dropped
        // before unbind completes.
        unsafe { self.dev.as_bound() }
    }

    /// An allocation failure: tells the device its page request cannot be met
    /// (MANAGE_PAGES allocation failure) when `why` is an event; a startup supply
    /// failure fails the probe without it (see [`Supply`]).
    fn report_alloc_failure(&self, n: u64, held: u64, why: Supply) -> Error {
        if why == Supply::Startup {
            dev_err!(
                self.dev,
                "out of memory supplying {} startup firmware pages ({} held by the device)\n",
                n,
                held
            );
            return ENOMEM;
        }
        dev_err!(
            self.dev,
            "out of memory supplying {} firmware pages ({} held by the device); reporting MANAGE_PAGES allocation failure\n",
            n,
            held
        );
        if let Err(e) = self.hw.exec_cmd(PagesAllocFailed {
            function_id: FUNC_ID,
            embedded_cpu: self.ec,
        }) {
            dev_err!(
                self.dev,
                "MANAGE_PAGES allocation-failure report failed ({:?})\n",
                e
            );
        }
        ENOMEM
    }

    /// Gives `n` pages to the device, in batches that fill whole mailbox chains. On an
    /// allocation failure (or a request larger than the memory available) `ENOMEM` is
    /// returned and, for an event-driven request, the device told; pages of earlier
    /// batches stay given. Pages of a batch the device refused or never received are
    /// freed; those of a batch whose command timed out or whose output is unreadable stay
    /// recorded as held (the device may own them), see [`create_outcome_unknown`].
    pub(crate) fn give(&self, n: u64, why: Supply) -> Result {
        // Try direct reclaim once, then fail quietly; never invoke the OOM killer for
        // memory the device asked for.
        let gfp = ffi::gfp_kernel_noretry_nowarn();
        let dev = self.dev_bound();
        let mut st = self.state.lock();
        let chunks = st.ledger.chunks_per_host_page();
        let avail = ffi::mem_available_pages();
        let Ok(n32) = u32::try_from(n) else {
            drop(st);
            return Err(self.report_alloc_failure(n, 0, why));
        };
        if !supply_fits(n, chunks, avail) {
            let held = st.ledger.fw_pages();
            drop(st);
            dev_err!(
                self.dev,
                "device asks for {} firmware pages ({} MiB), more than the system can spare ({} MiB available)\n",
                n,
                (n * FW_PAGE_SIZE) >> 20,
                (avail * PAGE_SIZE as u64) >> 20
            );
            return Err(self.report_alloc_failure(n, held, why));
        }
        let mut sizes = BlockSizes::new(PAGE_SIZE as u64);
        let fallbacks_before = st.block_fallbacks;
        let mut done = 0u64;
        for count in GiveBatches::new(n32, GIVE_MAX_BLOCKS) {
            let count = count as usize;
            // Up to 4096 addresses (32 KiB): from vmalloc when no order-3 block is free,
            // so that fragmented memory, which the pages themselves survive (single
            // pages), does not fail the supply here.
            let mut addrs = match KVVec::with_capacity(count, gfp) {
                Ok(v) => v,
                Err(_) => {
                    let held = st.ledger.fw_pages();
                    drop(st);
                    return Err(self.report_alloc_failure(n, held, why));
                }
            };
            let mut failed = false;
            while addrs.len() < count {
                let need = n - done - addrs.len() as u64;
                match st.next_page(dev, gfp, need, &mut sizes) {
                    // Within the capacity reserved above.
                    Ok(a) => {
                        if addrs.push_within_capacity(a).is_err() {
                            st.not_given(&[a]);
                            failed = true;
                        }
                    }
                    Err(_) => failed = true,
                }
                if failed {
                    break;
                }
            }
            if failed {
                // Never given: take them back from the ledger and free them.
                st.not_given(&addrs);
                let held = st.ledger.fw_pages();
                drop(st);
                return Err(self.report_alloc_failure(n, held, why));
            }
            if let Err(e) = self.hw.exec_cmd(GivePages {
                function_id: FUNC_ID,
                embedded_cpu: self.ec,
                addrs: &addrs,
            }) {
                if create_outcome_unknown(e.kind) {
                    // They stay recorded as held and are freed only if reclaim gets
                    // them back.
                    st.given += addrs.len() as u64;
                } else {
                    // Refused or never sent: the device does not own them.
                    st.not_given(&addrs);
                }
                return Err(e.errno().into());
            }
            st.given += addrs.len() as u64;
            done += addrs.len() as u64;
        }
        // Said once per device; the `pages` debugfs file counts every fallback.
        if fallbacks_before == 0 && st.block_fallbacks > 0 {
            dev_info!(
                self.dev,
                "{} firmware pages supplied from smaller blocks: {} block allocations of up to 2 MiB failed{}\n",
                n,
                st.block_fallbacks - fallbacks_before,
                if sizes.host_pages_only() {
                    ", down to single pages"
                } else {
                    ""
                }
            );
        }
        Ok(())
    }

    /// One MANAGE_PAGES take of up to `max` pages, the addresses appended to `got`.
    /// A device claiming more than `max` is rejected (EPROTO).
    fn take_into(&self, max: u32, got: &mut KVVec<u64>) -> Result<u32> {
        self.hw.run(TakePages {
            function_id: FUNC_ID,
            embedded_cpu: self.ec,
            max,
            sink: got,
        })
    }

    /// Runtime page request to return pages: one MANAGE_PAGES take of up to `n`
    /// pages, freeing exactly the pages the device returned. Returns how many came
    /// back. Serialised with [`FwPages::give`] by the ledger lock around each update.
    pub(crate) fn take(&self, n: u32) -> Result<u32> {
        let mut got = KVVec::new();
        let k = self.take_into(n, &mut got)?;
        let mut st = self.state.lock();
        for a in got.iter() {
            st.returned(*a);
        }
        Ok(k)
    }

    /// Asks the device for every page it holds, as many per command as one output
    /// chain carries, freeing exactly the pages it returned. Stops when the ledger is
    /// empty, on a dead device, or after [`RECLAIM_TIMEOUT_MS`] without progress.
    /// Returns how many pages the device still holds.
    pub(crate) fn reclaim_all(&self) -> u64 {
        let start = Instant::<Monotonic>::now();
        let total = self.counts().held;
        let mut r = Reclaim::new(0, RECLAIM_TIMEOUT_MS, total, TAKE_MAX_BLOCKS);
        let mut step = r.start();
        let mut next_report = 2000u64;
        let mut failures = 0u64;
        let mut rejected_only = 0u64;
        while step == Step::Continue {
            let req = r.next_request();
            let mut got = KVVec::new();
            match self.take_into(req, &mut got) {
                Ok(n) => {
                    // Free what came back first: the driver's own work (tens of thousands
                    // of pages) must not count as time the device stayed silent.
                    let mut st = self.state.lock();
                    for a in got.iter() {
                        st.returned(*a);
                    }
                    let left = st.ledger.fw_pages();
                    drop(st);
                    if r.on_response(ms_since(&start), req, n).is_err() {
                        // take_pages already rejects more than asked; keep the guard.
                        dev_err!(
                            self.dev,
                            "device returned more pages than asked ({} > {})\n",
                            n,
                            req
                        );
                        break;
                    }
                    // Progress only if the ledger count dropped: entries it rejected
                    // (never given, already returned) are not pages back.
                    let before = r.outstanding();
                    r.on_ledger(ms_since(&start), left);
                    if n > 0 && left >= before {
                        rejected_only += 1;
                    }
                    if n == 0 || left >= before {
                        // Nothing back yet: do not spin on the device.
                        fsleep(RETRY_PAUSE);
                    }
                }
                Err(e) if e == ETIMEDOUT || e == ENXIO || e == ENODEV => {
                    dev_err!(
                        self.dev,
                        "reclaiming firmware pages failed ({:?}); device unreachable\n",
                        e
                    );
                    break;
                }
                Err(e) => {
                    failures += 1;
                    if failures == 1 {
                        dev_err!(self.dev, "MANAGE_PAGES take failed ({:?}); retrying\n", e);
                    }
                    r.on_failure(ms_since(&start));
                    fsleep(RETRY_PAUSE);
                }
            }
            let now = ms_since(&start);
            step = r.decide(now);
            if now > next_report && step == Step::Continue {
                dev_info!(
                    self.dev,
                    "reclaiming firmware pages: {} of {} returned\n",
                    total - r.outstanding().min(total),
                    total
                );
                next_report += 2000;
            }
        }
        let c = self.counts();
        if let Step::GiveUp { remaining } = step {
            dev_err!(
                self.dev,
                "MANAGE_PAGES take: device returned no page we gave for {} ms ({} answers held only addresses the ledger rejected); giving up with {} pages held\n",
                RECLAIM_TIMEOUT_MS,
                rejected_only,
                remaining
            );
        }
        if c.unknown_returns > 0 {
            dev_warn!(
                self.dev,
                "device returned {} addresses it was never given\n",
                c.unknown_returns
            );
        }
        if total > 0 && c.held == 0 {
            dev_info!(
                self.dev,
                "reclaimed {} firmware pages in {} ms\n",
                total,
                ms_since(&start)
            );
        }
        c.held
    }
}

impl FwPages {
    /// Frees every page the device holds without asking for it back (no MANAGE_PAGES),
    /// as for a device that confirmed it stopped (fast teardown) or can no longer
    /// reach memory (bus mastering off). Only for such a device: the caller guarantees
    /// no DMA to these pages can happen any more. Returns the firmware pages dropped.
    pub(crate) fn release_stopped(&self) -> u64 {
        let mut st = self.state.lock();
        let n = st.drop_all_unasked();
        st.reclaimed += n;
        n
    }

    /// Release-all page request: the device says it already dropped every page of our
    /// function, so each is forgotten and freed without MANAGE_PAGES; the device gets
    /// no answer. Later gives start from an empty ledger and teardown reclaims only
    /// what was given after. Returns the firmware pages dropped.
    pub(crate) fn released_by_device(&self) -> u64 {
        let mut st = self.state.lock();
        let n = st.drop_all_unasked();
        st.released_by_device += n;
        n
    }
}

#[pinned_drop]
impl PinnedDrop for FwPages {
    fn drop(self: Pin<&mut Self>) {
        let left = self.reclaim_all();
        if left > 0 {
            dev_err!(
                self.dev,
                "{} firmware pages not returned by the device are leaked, not freed\n",
                left
            );
        }
    }
}
