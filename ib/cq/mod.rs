// SPDX-License-Identifier: GPL-2.0

//! The CQ verbs (kernel shell): create_cq for kernel consumers and for user space,
//! destroy_cq, resize_cq (user CQs; the core has no kernel resize) and modify_cq.
//!
//! A kernel CQ's ring is `entries × cqe_size` bytes of coherent DMA memory in 4 KiB
//! pages (each its own allocation, `log_page_size` 0, as upstream's fragmented CQ
//! buffer), every CQE's `op_own` set to "invalid opcode, owner 0" before CREATE_CQ
//! ([`crate::ib::cq::plan::INVALID_OP_OWN`]); its doorbell record is a coherent block of its
//! own; it rings on the core's UAR (upstream uses the core's UAR for kernel CQs); its
//! CQE size is 128 bytes on a host with 128-byte cache lines, else 64.
//!
//! A user CQ's request is checked by [`crate::ib::abi::cq`], its UAR page chosen by
//! [`crate::ib::cq::plan::resolve_uar`].
//!
//! A kernel CQ is in the device's [`kclean::KcqTable`] while it exists, where its
//! kernel QPs find it to remove their CQEs when they move to RESET or are destroyed
//! (upstream `__mlx5_ib_cq_clean`, [`clean`]); a CQE that still names a destroyed QP
//! (one the device wrote after the cleaning) is counted and skipped by the poller.
//!
//! A kernel CQ is polled here (poll_cq: upstream `mlx5_poll_one`, the CQE parsed by
//! [`crate::ib::cq::cqe`] as untrusted input and its work request found through the
//! device's kernel QP table, [`crate::ib::qp::kdp`]) and armed here (req_notify_cq:
//! the arm word to the doorbell record, then with the CQN to the UAR's CQ doorbell).
//!
//! Events: after CREATE_CQ the CQ subscribes its [`CqEvents`] to the completion
//! EQs' handler table ([`CqTable`]); destroy_cq unsubscribes it and then clears it
//! (waiting for a handler call in flight) before DESTROY_CQ, so the core never sees
//! an event of a CQ whose destroy_cq returned.
//!
//! Errors of CREATE_CQ: after one whose outcome is unknown (a timeout:
//! [`create_outcome_unknown`]) the pages may already be the device's, so the CQ's
//! memory, kernel or user, is handed to [`Hw::keep`]; after a "no" from the device it
//! is freed. A failed DESTROY_CQ leaves the CQ with the shim (upstream returns the
//! error too) and its memory in the graveyard.

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod clean;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod commands;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod cqe;
pub(crate) mod kclean;
mod kflush;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod plan;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod wc_status;

use core::sync::atomic::{AtomicU32, Ordering};

use kernel::{
    device,
    dma::Coherent,
    io::SysMem,
    prelude::*,
    sync::{aref::ARef, new_mutex, new_spinlock_irq, Arc, Mutex, SpinLockIrq},
};

use zerocopy::{FromZeros, IntoBytes};

use crate::ib::{
    abi::{
        cq::{parse_create_cq, parse_resize_cq, CqCaps, ResizePlan},
        layout::CreateCqResp,
        udata::put,
    },
    cq::commands::{
        check_moderation, CqBuf, CreateCq, DestroyCq, ModerationError, ModifyCqModeration, ResizeCq,
    },
    cq::cqe::{parse_into, CqGeometry, CqeHead, CqeKind, Malformed},
    cq::kclean::KcqTable,
    cq::plan::{
        eqn_of, kernel_cq_plan, op_own_offset, quantized_pgoff, resolve_uar, INVALID_OP_OWN,
    },
    cq::wc_status::syndrome_is_dumped,
    qp::kdp::{KernelWq, KqpTable, Stray, WcSink},
    uctx::{uabi_err, UarHold},
    umem::plan::{access, queue_page_sizes},
    umem::UserDb,
};
use crate::{
    cmd::status::{create_outcome_unknown, CmdError},
    coherent_io,
    eq::{
        cq::{CqHandler, CqTable},
        CqAccess,
    },
    ffi::{
        dma_rmb,
        rdma::{
            ib_cq::{CqCreated, CqInit, CqShim, IbCq, IbCqOps, IbWc, Polled},
            ib_uctx::IbUcontext,
            udata::UserData,
            umem::{BlockSize, IbDev, Umem},
        },
        wmb,
    },
    hw::Hw,
    ifc::wqe::{
        vals::{CQ_DB_REQ_NOT_SOL, UAR_CQ_DOORBELL},
        Cqe64,
    },
};

/// Bytes of one page of a kernel CQ's ring.
const RING_PAGE: usize = 4096;
/// Bytes of the CQE in a ring entry (the whole of a 64-byte entry, the second half of
/// a 128-byte one); its last byte is `op_own`.
const CQE_BYTES: usize = core::mem::size_of::<Cqe64>();
/// Bytes of a kernel CQ's doorbell record block (two big-endian dwords used).
const DBR_BYTES: usize = 64;
/// Bits of `cqc.log_page_size` (counted from 4 KiB).
const LOG_PAGE_SIZE_BITS: u32 = 5;
/// The adapter page shift (`MLX5_ADAPTER_PAGE_SHIFT`).
const ADAPTER_PAGE_SHIFT: u32 = 12;
/// Bits of the DMA address that place a buffer for the page-size search
/// (upstream's `GENMASK(31, order_base_2(64))` of the CQ's page offset).
const PGOFF_BITMASK: u64 = 0xffff_ffc0;

/// The page size and `page_offset` a user CQ buffer is described with (upstream
/// `mlx5_umem_find_best_cq_quantized_pgoff`): the largest size of the context's
/// `log_page_size` range the pinned pages allow, halved until the first byte's offset
/// in its block is a whole number of 1/64 blocks; `EINVAL` when none fits.
fn cq_pages(umem: &mut Umem) -> Result<(BlockSize, u8)> {
    let mut bitmap = queue_page_sizes(LOG_PAGE_SIZE_BITS, ADAPTER_PAGE_SHIFT);
    let iova = umem.start_dma() & PGOFF_BITMASK;
    loop {
        let bs = umem.best_page_size(bitmap, iova).ok_or(EINVAL)?;
        if let Some(q) = quantized_pgoff(umem.dma_offset(bs), bs.bytes()) {
            return Ok((bs, q));
        }
        // Only sizes below this one.
        bitmap &= bs.bytes() - 1;
    }
}

/// The DMA address of every block of `bs` of `umem`, for `pas[]`.
fn umem_pas(umem: &Umem, bs: BlockSize) -> Result<KVec<u64>> {
    let n = usize::try_from(umem.num_blocks(bs)).map_err(|_| EINVAL)?;
    let mut pas = KVec::from_elem(0u64, n, GFP_KERNEL)?;
    if umem.blocks(bs).fill(&mut pas) != n {
        return Err(EINVAL);
    }
    Ok(pas)
}

/// `log_page_size` of a block size (at least 4 KiB: the bitmap starts there).
fn log_page_size(bs: BlockSize) -> Result<u8> {
    u8::try_from(bs.shift().checked_sub(ADAPTER_PAGE_SHIFT).ok_or(EINVAL)?).map_err(|_| EINVAL)
}

/// The CQ verbs of one device: what every CQ needs.
pub(crate) struct CqVerbs {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    caps: CqCaps,
    /// Cap `cq_moderation`.
    moderation: bool,
    access: CqAccess,
    /// The device's kernel QPs, whose CQEs kernel CQs turn into work completions.
    kqps: Arc<KqpTable>,
    /// The device's kernel CQs, for their QPs' cleaning.
    kcqs: Arc<KcqTable>,
}

impl CqVerbs {
    /// The verbs over `hw` with the CQ caps and the EQ stage's [`CqAccess`]; kernel
    /// CQs find their QPs in `kqps` and are in `kcqs`.
    pub(crate) fn new(
        dev: &device::Device,
        hw: Arc<Hw>,
        caps: CqCaps,
        moderation: bool,
        access: CqAccess,
        kqps: Arc<KqpTable>,
        kcqs: Arc<KcqTable>,
    ) -> Self {
        Self {
            dev: dev.into(),
            hw,
            caps,
            moderation,
            access,
            kqps,
            kcqs,
        }
    }

    fn eqn(&self, vector: u32) -> Result<u32> {
        eqn_of(vector, &self.access.comp_eqns).ok_or(EINVAL)
    }

    /// A kernel consumer's CQ.
    fn create_kernel(&self, init: &CqInit, shim: CqShim) -> Result<CqCreated> {
        let plan = kernel_cq_plan(init.cqe, self.caps.log_max_cq_sz, init.cache_line_size)?;
        // Like upstream's kernel create_cq, `init.flags` is not looked at.
        let eqn = self.eqn(init.comp_vector)?;
        // SAFETY: the core calls the verbs only while the IB device is registered,
        // which is a stage of the PCI function's binding: the function is bound for
        // this call, and the allocation is freed before the stage ends (the core
        // destroys every CQ before unregistration returns).
        let bound = unsafe { self.dev.as_bound() };
        let bytes = usize::try_from(plan.bytes()).map_err(|_| EINVAL)?;
        let npages = bytes.div_ceil(RING_PAGE);
        let mut pages = KVec::with_capacity(npages, GFP_KERNEL)?;
        for _ in 0..npages {
            pages.push(
                Coherent::<u8>::zeroed_slice(bound, RING_PAGE, GFP_KERNEL)?,
                GFP_KERNEL,
            )?;
        }
        // The device does not know the ring yet: nothing accesses it concurrently.
        for i in 0..plan.entries {
            let at = op_own_offset(i, plan.cqe_size).ok_or(EINVAL)?;
            let page = pages.get(at / RING_PAGE).ok_or(EINVAL)?;
            coherent_io::write_u8(page, at % RING_PAGE, INVALID_OP_OWN)?;
        }
        let dbr = Coherent::<u8>::zeroed_slice(bound, DBR_BYTES, GFP_KERNEL)?;
        let dbr_dma = dbr.dma_address();
        let mut pas = KVec::with_capacity(npages, GFP_KERNEL)?;
        for p in pages.iter() {
            pas.push(p.dma_address(), GFP_KERNEL)?;
        }
        let geo = CqGeometry::new(plan.entries, cqe_bytes(plan.cqe_sz)).ok_or(EINVAL)?;
        let ring = Arc::pin_init(
            pin_init!(KernelRing {
                pages,
                dbr,
                geo,
                poll <- new_spinlock_irq!(PollState::default()),
            }),
            GFP_KERNEL,
        )?;
        let mem = CqMem::Kernel(KernelMem { ring: ring.clone() });
        let cq = self.new_cq(
            mem,
            plan.entries - 1,
            shim,
            false,
            cqe_bytes(plan.cqe_sz),
            Some(ring),
        )?;
        let cmd = CreateCq {
            buf: CqBuf {
                log_size: plan.log_size,
                log_page_size: 0,
                page_offset: 0,
            },
            cqe_sz: plan.cqe_sz,
            uar: self.access.uar,
            eqn,
            dbr: dbr_dma,
            ignore_overrun: false,
            cqe_comp: None,
            pas: &pas,
        };
        self.create(cq, cmd)
    }

    /// A user CQ of context `ctx`, as libmlx5 asks for it.
    fn create_user(
        &self,
        init: &CqInit,
        ibdev: IbDev<'_>,
        ctx: &dyn IbUcontext,
        u: UserData<'_>,
        shim: CqShim,
    ) -> Result<CqCreated> {
        let what = "create_cq";
        let plan = parse_create_cq(
            init.cqe,
            init.flags,
            u.req,
            &self.caps,
            None,
            ctx.lib_uar_dyn(),
        )
        .map_err(|e| uabi_err(&self.dev, what, e))?;
        let mut umem = Umem::get(ibdev, plan.buf_addr, plan.buf_len, access::LOCAL_WRITE)?;
        let (bs, page_offset) = cq_pages(&mut umem)?;
        let db = ctx.db_pages().map(ibdev, plan.db_addr)?;
        let uar = resolve_uar(plan.uar, ctx.static_uars(), |i| ctx.owns_uar(i))?;
        // The UAR stays allocated while the CQ names it (dropped with the memory).
        let uar_hold = ctx.hold_uar(uar).ok_or(EINVAL)?;
        let eqn = self.eqn(init.comp_vector)?;
        let pas = umem_pas(&umem, bs)?;
        let dbr = db.dma();
        let buf = CqBuf {
            log_size: plan.log_size,
            log_page_size: log_page_size(bs)?,
            page_offset,
        };
        let mem = CqMem::User(UserMem {
            umem,
            _db: db,
            _uar: uar_hold,
        });
        let cq = self.new_cq(
            mem,
            plan.entries - 1,
            shim,
            plan.cqe_sz == 2,
            cqe_bytes(plan.cqe_sz),
            None,
        )?;
        let cmd = CreateCq {
            buf,
            cqe_sz: plan.cqe_sz,
            uar,
            eqn,
            dbr,
            ignore_overrun: plan.ignore_overrun,
            cqe_comp: plan.mini_cqe_format,
            pas: &pas,
        };
        let mut c = self.create(cq, cmd)?;
        let resp = CreateCqResp {
            cqn: c.cqn,
            reserved: 0,
        };
        c.resp_len = put(u.out, resp.as_bytes());
        Ok(c)
    }

    /// The CQ object over `mem`, before the device knows it.
    fn new_cq(
        &self,
        mem: CqMem,
        ncqe: u32,
        shim: CqShim,
        pad: bool,
        cqe_bytes: u32,
        kring: Option<Arc<KernelRing>>,
    ) -> Result<Arc<Cq>> {
        let events = Arc::pin_init(
            pin_init!(CqEvents { shim <- new_spinlock_irq!(Some(shim)), arm_sn: AtomicU32::new(0) }),
            GFP_KERNEL,
        )?;
        Arc::pin_init(
            try_pin_init!(Cq {
                dev: self.dev.clone(),
                hw: self.hw.clone(),
                table: self.access.table.clone(),
                events,
                cqn: AtomicU32::new(0),
                caps: self.caps,
                moderation: self.moderation,
                pad,
                kring,
                kqps: self.kqps.clone(),
                kcqs: self.kcqs.clone(),
                uar_bar_off: self.access.uar_bar_off,
                state <- new_mutex!(CqState {
                    mem: Some(mem),
                    ncqe,
                    cqe_bytes
                }),
            }),
            GFP_KERNEL,
        )
    }

    /// CREATE_CQ of `cq` with `cmd`, then the subscription to its events. On failure
    /// the device has no CQ on the memory, or the memory is buried.
    fn create(&self, cq: Arc<Cq>, cmd: CreateCq<'_>) -> Result<CqCreated> {
        let entries = 1u32 << cmd.buf.log_size;
        let cqn = match self.hw.exec_cmd(cmd) {
            Ok(n) => n,
            Err(e) => {
                dev_warn!(self.dev, "CREATE_CQ ({} entries) failed\n", entries);
                // Nothing was created when the device said no: the memory goes with
                // `cq`; else the device may own it.
                if create_outcome_unknown(e.kind) {
                    cq.bury(&e);
                }
                return Err(e.errno().into());
            }
        };
        cq.cqn.store(cqn, Ordering::Relaxed);
        let h: Arc<dyn CqHandler> = cq.events.clone();
        let kcq = match &cq.kring {
            Some(r) => self
                .kcqs
                .insert(cqn, r.clone(), cq.events.clone())
                .map(|_| ()),
            None => Ok(()),
        };
        if let Err(e) = kcq.and_then(|()| {
            self.access.table.register(cqn, h).inspect_err(|_| {
                if let Some(r) = &cq.kring {
                    self.kcqs.remove(cqn, r);
                }
            })
        }) {
            if let Err(d) = self.hw.exec_cmd(DestroyCq { cqn }) {
                cq.bury(&d);
            }
            return Err(e);
        }
        let ncqe = cq.state.lock().ncqe;
        Ok(CqCreated {
            cq,
            cqn,
            ncqe,
            resp_len: 0,
        })
    }
}

impl IbCqOps for CqVerbs {
    /// create_cq: a kernel consumer's CQ (`user` `None`: ring and doorbell record in
    /// coherent memory) or a user CQ over the request's pinned buffer.
    ///
    /// # Errors
    ///
    /// - `EINVAL`: more entries than `log_max_cq_sz` allows, a completion vector past
    ///   the last, a UAR index the context does not own, a user buffer no page size
    ///   fits; for a user CQ also the request's refusals by `abi::cq::parse_create_cq`
    ///   (`EINVAL`, `EOPNOTSUPP`, with upstream's order) and a doorbell record
    ///   straddling a page;
    /// - pinning's errors (`Umem::get`: `EINVAL`, `ENOMEM`, `EFAULT`, `EPERM`);
    /// - `ENOMEM` when memory cannot be allocated;
    /// - CREATE_CQ's errno ([`Hw::exec_cmd`]); memory the device may still reach
    ///   (a CREATE of unknown outcome) goes to the graveyard;
    /// - `EEXIST` if the CQN is already in the EQs' table (the CQ is destroyed).
    fn create_cq(
        &self,
        init: &CqInit,
        dev: IbDev<'_>,
        user: Option<(&dyn IbUcontext, UserData<'_>)>,
        shim: CqShim,
    ) -> Result<CqCreated> {
        match user {
            None => self.create_kernel(init, shim),
            Some((ctx, u)) => self.create_user(init, dev, ctx, u, shim),
        }
    }
}

/// The memory of a kernel CQ: its ring, shared with the CQ's poller.
struct KernelMem {
    ring: Arc<KernelRing>,
}

/// Where a kernel CQ's poller is (upstream `mcq.cons_index`).
#[derive(Default)]
struct PollState {
    /// Consumer counter.
    ci: u32,
    /// A malformed CQE was logged (once per CQ).
    logged: bool,
    /// The kernel QP the last CQE polled named (upstream's `cur_qp`, kept across calls):
    /// found again without the kernel QP table's lock. Forgotten when the QP's CQEs are
    /// cleaned out of the CQ (its move to RESET, its destroy) and when it leaves the
    /// CQ's list of QPs, both under this lock and before DESTROY_QP can free its
    /// number for another QP.
    last: Option<Arc<KernelWq>>,
}

impl PollState {
    /// Makes the kernel QP `qpn` the last one polled (`last`): kept when it is, else
    /// the one in `table`; false for a number not in the table (`last` unchanged).
    #[inline(always)]
    fn select(&mut self, table: &KqpTable, qpn: u32) -> bool {
        if self.last.as_ref().is_some_and(|w| w.qpn == qpn) {
            return true;
        }
        self.select_other(table, qpn)
    }

    /// [`Self::select`] of a QP other than the last one: out of line, so that the
    /// poll loop keeps the parsed CQE in registers across the common case (the
    /// table's lock calls would otherwise spill it on every CQE).
    #[cold]
    #[inline(never)]
    fn select_other(&mut self, table: &KqpTable, qpn: u32) -> bool {
        match table.get(qpn) {
            Some(w) => {
                self.last = Some(w);
                true
            }
            None => false,
        }
    }

    /// Forgets the last QP polled if it is QP `qpn`.
    fn forget(&mut self, qpn: u32) {
        if self.last.as_ref().is_some_and(|w| w.qpn == qpn) {
            self.last = None;
        }
    }
}

/// A kernel CQ's ring as one poll_cq call reads it (under the poll lock).
struct Cursor<'a> {
    /// [`KernelRing::pages`].
    pages: &'a [Coherent<[u8]>],
    /// [`KernelRing::geo`].
    geo: CqGeometry,
    /// The consumer counter: [`PollState::ci`] at the call's start, stored back at
    /// its end.
    ci: u32,
    /// The page of the ring the last entry was read from, by its index in `pages`,
    /// and its CPU side ([`coherent_io::cpu_view`]): the next entries of the same
    /// page (64 of 64 bytes in a 4 KiB page) are projected from it.
    page: Option<(usize, SysMem<'a, [u8]>)>,
}

/// A kernel CQ's ring, doorbell record and poller.
#[pin_data]
struct KernelRing {
    /// The ring's 4 KiB pages, in order.
    pages: KVec<Coherent<[u8]>>,
    /// The doorbell record: consumer counter (bytes 0..4), arm word (4..8).
    dbr: Coherent<[u8]>,
    geo: CqGeometry,
    /// Lock order: taken by poll_cq and req_notify_cq (upstream `cq->lock`), and by
    /// a kernel QP's clean and detach ([`kclean`]); the kernel QP table's lock and an
    /// SRQ's are taken under it (a kernel QP's queue locks never: its queues' slots
    /// are the poller's without them, `kdp`).
    #[pin]
    poll: SpinLockIrq<PollState>,
}

/// The memory of a user CQ: its pinned ring and its doorbell record's mapping.
struct UserMem {
    umem: Umem,
    _db: UserDb,
    /// The UAR the CQ's context names, kept allocated until the CQ is gone.
    _uar: UarHold,
}

/// Where a CQ's ring and doorbell record live.
enum CqMem {
    /// Coherent DMA memory of the driver.
    Kernel(KernelMem),
    /// Pinned user memory.
    User(UserMem),
}

/// What resize changes.
struct CqState {
    /// Dropped with the CQ (after DESTROY_CQ succeeded); `None` once buried.
    mem: Option<CqMem>,
    /// Ring entries − 1.
    ncqe: u32,
    /// Bytes of one CQE (64 or 128; upstream `cq->cqe_size`).
    cqe_bytes: u32,
}

/// The 64-byte CQE at byte `at` of a kernel ring's `page`, copied out as it is (the
/// caller orders the read after the entry's owner check); `None` out of the page.
#[inline(always)]
fn read_cqe(page: &Coherent<[u8]>, at: usize) -> Option<Cqe64> {
    let mut cqe = Cqe64::new_zeroed();
    coherent_io::read_bytes(page, at, cqe.as_mut_bytes()).ok()?;
    Some(cqe)
}

/// Bytes of one CQE of context `cqe_sz` (0: 64, else 128).
fn cqe_bytes(cqe_sz: u8) -> u32 {
    if cqe_sz == 0 {
        64
    } else {
        128
    }
}

/// The subscription of one CQ to the completion EQs: raises its events through the
/// shim while `shim` is set.
#[pin_data]
struct CqEvents {
    /// Lock order: taken in the completion EQ's drain (the hard IRQ) under the EQ's
    /// `Eq::state` (after the [`CqTable`] lock was released), in the async EQ's
    /// interrupt thread for a CQ error, and by destroy_cq with no other lock held.
    /// Held across the call into the core's handler, so clearing it waits for a call
    /// in flight; that handler may take this CQ's `poll` (a consumer polling from its
    /// completion handler), which is therefore taken after this one.
    #[pin]
    shim: SpinLockIrq<Option<CqShim>>,
    /// Completion events seen (upstream `arm_sn`, incremented before the handler
    /// runs); the arm doorbell carries its low two bits.
    arm_sn: AtomicU32,
}

impl CqHandler for CqEvents {
    fn completion(&self, _cqn: u32) {
        self.arm_sn.fetch_add(1, Ordering::Relaxed);
        let g = self.shim.lock();
        if let Some(s) = g.as_ref() {
            // SAFETY: `shim` is set only between create_cq and the start of
            // destroy_cq (which clears it under this lock before DESTROY_CQ).
            unsafe { s.completion() };
        }
    }

    fn error(&self, _cqn: u32, _syndrome: u8) {
        let g = self.shim.lock();
        if let Some(s) = g.as_ref() {
            // SAFETY: as in `completion`.
            unsafe { s.error() };
        }
    }
}

/// One CQ.
#[pin_data]
struct Cq {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    table: Arc<CqTable>,
    events: Arc<CqEvents>,
    /// Set once after CREATE_CQ, before the CQ is handed to the shim.
    cqn: AtomicU32,
    caps: CqCaps,
    moderation: bool,
    /// 128-byte CQEs padded (`cqe_sz` 2), kept on resize.
    pad: bool,
    /// A kernel CQ's ring and poller (`None` for a user CQ).
    kring: Option<Arc<KernelRing>>,
    /// The device's kernel QPs.
    kqps: Arc<KqpTable>,
    /// The device's kernel CQs (a kernel CQ leaves at destroy).
    kcqs: Arc<KcqTable>,
    /// Offset in BAR 0 of the UAR a kernel CQ is armed on.
    uar_bar_off: usize,
    /// Lock order: taken by resize_cq (held across pinning the new buffer and the
    /// resize MODIFY_CQ, as upstream's `resize_mutex`), when a failed create buries (then
    /// `Hw::graveyard` under it) and to read the size; so `CmdQueue::state` is taken
    /// under it. Never taken under an EQ's `Eq::state`.
    #[pin]
    state: Mutex<CqState>,
}

impl Cq {
    fn cqn(&self) -> u32 {
        self.cqn.load(Ordering::Relaxed)
    }

    /// Hands the memory of a CQ the device may still use (after `err`, a CREATE_CQ
    /// of unknown outcome or a failed DESTROY_CQ) to [`Hw::keep`]: kernel pages and
    /// doorbell record, or pinned user pages and the doorbell record's page reference.
    fn bury(&self, err: &CmdError) {
        let mem = self.state.lock().mem.take();
        match mem {
            Some(CqMem::Kernel(k)) => {
                let n = k.ring.pages.len() + 1;
                self.hw.keep(&self.dev, err, n, k);
            }
            Some(CqMem::User(UserMem {
                umem,
                _db: db,
                _uar: uar,
            })) => {
                let n = umem.pages();
                self.hw.keep(&self.dev, err, n, (umem, db));
                // The UAR hold goes: kept, it would keep the context and through it
                // this function's `Hw` (whose graveyard holds the memory above) alive
                // for good. A device object cannot ring a doorbell by itself.
                drop(uar);
            }
            None => {}
        }
    }
}

impl IbCq for Cq {
    fn cqe_bytes(&self) -> u32 {
        self.state.lock().cqe_bytes
    }

    /// destroy_cq: out of the EQ tables, then DESTROY_CQ.
    ///
    /// # Errors
    ///
    /// DESTROY_CQ's errno ([`Hw::exec_cmd`]; 0 when the device is dead, as upstream); the
    /// CQ's memory then goes to the graveyard, as the CQ may still exist.
    fn destroy(&self) -> Result {
        let cqn = self.cqn();
        // As upstream `mlx5_core_destroy_cq`: out of the EQ tables first, then the
        // command; a later event for the CQN is counted as unknown.
        drop(self.table.unregister(cqn));
        if let Some(r) = &self.kring {
            self.kcqs.remove(cqn, r);
        }
        *self.events.shim.lock() = None;
        // On failure the CQ's memory goes to the graveyard: the CQ may still exist. It
        // stays with the core (upstream returns the error too) unless the device is
        // dead, where upstream's destroy succeeds.
        match self.hw.exec_cmd(DestroyCq { cqn }) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.bury(&e);
                if e.gone_with_dead_device() {
                    Ok(())
                } else {
                    Err(e.errno().into())
                }
            }
        }
    }

    /// resize_cq of a user CQ to at least `cqe` entries over the request's new buffer;
    /// the same size is a no-op.
    ///
    /// # Errors
    ///
    /// The request's refusals by `abi::cq::parse_resize_cq` (`ENOSYS` without cap
    /// `cq_resize`; `EINVAL` for sizes, lengths, reserved fields and `cqe_size`;
    /// `EOPNOTSUPP` for non-zero bytes past the request); `EINVAL` for a kernel CQ or a
    /// buffer no page size fits; pinning's errors (`Umem::get`); `ENOMEM`; MODIFY_CQ's
    /// errno ([`Hw::exec_cmd`]), the new buffer kept in the graveyard when the outcome
    /// is unknown.
    fn resize(&self, cqe: u32, ibdev: IbDev<'_>, u: UserData<'_>) -> Result<u32> {
        // The lock serialises resizes of the CQ (upstream `resize_mutex`).
        let mut st = self.state.lock();
        let plan = parse_resize_cq(cqe, st.ncqe, u.req, &self.caps)
            .map_err(|e| uabi_err(&self.dev, "resize_cq", e))?;
        let ResizePlan::Resize {
            entries,
            buf_addr,
            buf_len,
            cqe_size,
        } = plan
        else {
            return Ok(st.ncqe);
        };
        if !matches!(st.mem, Some(CqMem::User(_))) {
            return Err(EINVAL);
        }
        let mut umem = Umem::get(ibdev, buf_addr, buf_len, access::LOCAL_WRITE)?;
        let (bs, page_offset) = cq_pages(&mut umem)?;
        let pas = umem_pas(&umem, bs)?;
        let cqn = self.cqn();
        let cqe_sz = match (cqe_size, self.pad) {
            (64, _) => 0,
            (_, true) => 2,
            _ => 1,
        };
        let r = self.hw.exec_cmd(ResizeCq {
            cqn,
            buf: CqBuf {
                log_size: u8::try_from(entries.trailing_zeros()).map_err(|_| EINVAL)?,
                log_page_size: log_page_size(bs)?,
                page_offset,
            },
            cqe_sz,
            pas: &pas,
        });
        if let Err(e) = r {
            // A RESIZE_CQ of unknown outcome may have moved the CQ to the new ring.
            if create_outcome_unknown(e.kind) {
                self.hw.keep(&self.dev, &e, umem.pages(), umem);
            }
            return Err(e.errno().into());
        }
        // The device uses the new ring: the old pages go (upstream releases them).
        if let Some(CqMem::User(m)) = st.mem.as_mut() {
            drop(core::mem::replace(&mut m.umem, umem));
        }
        st.ncqe = entries - 1;
        st.cqe_bytes = cqe_bytes(cqe_sz);
        Ok(st.ncqe)
    }

    /// modify_cq: the moderation `count` and `period`.
    ///
    /// # Errors
    ///
    /// `EOPNOTSUPP` without cap `cq_moderation`, `EINVAL` for a period above
    /// `MAX_CQ_PERIOD` ([`ModerationError::errno`]); MODIFY_CQ's errno
    /// ([`Hw::exec_cmd`]).
    fn modify(&self, count: u16, period: u16) -> Result {
        check_moderation(self.moderation, period).map_err(ModerationError::errno)?;
        let cqn = self.cqn();
        let r = self.hw.run(ModifyCqModeration { cqn, period, count });
        if let Err(e) = r {
            dev_warn!(self.dev, "MODIFY_CQ of CQ {} failed ({:?})\n", cqn, e);
        }
        r
    }

    /// poll_cq of a kernel CQ (upstream `mlx5_ib_poll_cq` / `mlx5_poll_one`): the
    /// software-owned CQEs from the consumer counter on (after the device's fatal
    /// error: flush completions of every outstanding work request of its QPs,
    /// [`kflush`]), each read after the owner
    /// check and a read barrier, parsed as untrusted input ([`parse_into`]), its QP
    /// looked up in the provider's table (only when it is not the QP of the CQE
    /// before, as upstream's `cur_qp`) and its work request in that QP's bookkeeping
    /// (no queue lock: this CQ's poll lock makes the poller the queue's only one),
    /// each CQE parsed and written out in one pass; then the
    /// consumer counter to the doorbell record. A CQE that is
    /// malformed or names no WQE in flight is counted, logged once per CQ with the
    /// reason, and skipped; one of an unknown QP is counted and skipped.
    ///
    /// # Errors
    ///
    /// `EINVAL` for a user CQ (libmlx5 polls its own ring).
    fn poll(&self, out: &mut [IbWc]) -> Result<Polled> {
        let Some(r) = &self.kring else {
            return Err(EINVAL);
        };
        if self.kcqs.dead() {
            return Ok(Polled {
                n: self.sw_flush(out),
                qp1_recv: false,
            });
        }
        let mut ps = r.poll.lock();
        let start = ps.ci;
        // The ring as this call reads it, the consumer counter in a local (stored
        // back once, below): the loop keeps them in registers.
        let mut cur = Cursor {
            pages: &r.pages,
            geo: r.geo,
            ci: start,
            page: None,
        };
        let mut n = 0;
        let mut qp1_recv = false;
        while let Some(slot) = out.get_mut(n) {
            // The CQE's part of the work completion, written into the slot as it is
            // parsed; what the QP's part and the checks below need is returned.
            let Some(h) = self.next_cqe(&mut cur, &mut ps.logged, slot) else {
                break;
            };
            let (qpn, kind, wqe_counter, syndrome) = (h.qpn, h.kind, h.wqe_counter, h.syndrome);
            // As upstream's `cur_qp`: the QP is looked up in the table only when it is
            // not the last one polled; its queues' slots are read without their locks
            // (this lock makes this the queues' one poller, `kdp`).
            if !ps.select(&self.kqps, qpn) {
                // A QP destroyed before its CQEs were polled, or a number the device
                // made up: counted (debugfs `eqs`, `cqe_stale`).
                self.table.note_skipped_cqe(false);
                continue;
            }
            let Some(wq) = ps.last.as_deref() else {
                continue;
            };
            match wq.complete(kind, wqe_counter, slot) {
                Ok(true) => {
                    if matches!(kind, CqeKind::Error { .. }) && syndrome_is_dumped(syndrome) {
                        self.log_wc_error(syndrome, qpn, slot.vendor_err);
                    }
                    qp1_recv |= wq.qp1 && matches!(kind, CqeKind::Resp(_));
                    // Below `out.len()` (its slot was there): no overflow to check.
                    n = n.wrapping_add(1);
                }
                Ok(false) => {}
                Err(s) => self.malformed(&mut ps.logged, cur.ci, Bad::Stray(qpn, s)),
            }
        }
        if cur.ci != start {
            ps.ci = cur.ci;
            // Upstream `mlx5_cq_set_ci`.
            let _ = coherent_io::write_bytes(&r.dbr, 0, &(cur.ci & 0x00ff_ffff).to_be_bytes());
        }
        Ok(Polled { n, qp1_recv })
    }

    fn reset_notify(&self) -> bool {
        self.drain_notify()
    }

    /// req_notify_cq of a kernel CQ (upstream `mlx5_ib_arm_cq` / `mlx5_cq_arm`): the
    /// arm word (sequence, solicited-only, consumer counter) to the doorbell record,
    /// then with the CQN to the UAR's CQ doorbell in one 64-bit write. The device
    /// raises an event at once when CQEs past the counter are already there, so, as
    /// upstream (which answers 1 only for its software flush completions, none here),
    /// `report_missed` never answers `true`.
    ///
    /// # Errors
    ///
    /// `EINVAL` for a user CQ.
    fn arm(&self, solicited: bool, report_missed: bool) -> Result<bool> {
        let Some(r) = &self.kring else {
            return Err(EINVAL);
        };
        let _ = report_missed;
        let ps = r.poll.lock();
        let sn = self.events.arm_sn.load(Ordering::Relaxed) & 3;
        let cmd = if solicited { CQ_DB_REQ_NOT_SOL } else { 0 };
        let word = (sn << 28) | cmd | (ps.ci & 0x00ff_ffff);
        coherent_io::write_bytes(&r.dbr, 4, &word.to_be_bytes())?;
        // The record before the doorbell.
        wmb();
        let mut db = [0u8; 8];
        db[..4].copy_from_slice(&word.to_be_bytes());
        db[4..].copy_from_slice(&self.cqn().to_be_bytes());
        // SAFETY: as in `create_kernel`: the core calls the verbs only while the IB
        // device is registered, a stage of the PCI function's binding.
        let bound = unsafe { self.dev.as_bound() };
        // A failure cannot happen while bound; no event would come, as on a dead device.
        let _ = self
            .hw
            .doorbell64(bound, self.uar_bar_off + UAR_CQ_DOORBELL, db);
        drop(ps);
        Ok(false)
    }
}

/// Why poll_cq skipped a CQE.
#[derive(Clone, Copy)]
enum Bad {
    /// [`parse_into`] refused it.
    Cqe(Malformed),
    /// A CQE of this QP naming no WQE in flight.
    Stray(u32, Stray),
}

impl Bad {
    /// The reason in words, and the value it names.
    fn reason(self) -> (&'static str, u32) {
        match self {
            Bad::Cqe(Malformed::Opcode(o)) => ("CQE opcode", u32::from(o)),
            Bad::Cqe(Malformed::SendOpcode(o)) => ("send opcode", u32::from(o)),
            Bad::Cqe(Malformed::Format(f)) => ("compressed CQE format", u32::from(f)),
            Bad::Cqe(Malformed::SigErr) => ("signature error CQE", 0),
            Bad::Stray(q, Stray::SendSlot) => ("send WQE not in flight on QP", q),
            Bad::Stray(q, Stray::NoReceive) => ("no receive in flight on QP", q),
        }
    }
}

impl Cq {
    /// The next software-owned CQE of the ring from the consumer counter on, read
    /// after the owner check and a read barrier and parsed as untrusted input
    /// ([`parse_into`]), its values written into `wc` ([`WcSink`]): what it names;
    /// the counter advanced past it and past every malformed one before it (each
    /// counted, the first of the CQ logged). `None` when the device owns the next
    /// entry. Inlined into poll_cq's loop, as [`parse_into`].
    #[inline(always)]
    fn next_cqe(&self, cur: &mut Cursor<'_>, logged: &mut bool, wc: &mut IbWc) -> Option<CqeHead> {
        loop {
            let ci = cur.ci;
            let off = cur.geo.cqe_offset(ci);
            let index = off / RING_PAGE;
            let page = match cur.page {
                Some((i, page)) if i == index => page,
                _ => {
                    let page = coherent_io::cpu_view(cur.pages.get(index)?);
                    cur.page = Some((index, page));
                    page
                }
            };
            // The entry's 64 bytes, range-checked once for both reads.
            let entry = coherent_io::view(page, off % RING_PAGE, CQE_BYTES).ok()?;
            let op_own = coherent_io::view_read_u8(entry, CQE_BYTES - 1).ok()?;
            if !cur.geo.sw_owned(op_own, ci) {
                return None;
            }
            // The entry's contents after its ownership: the barrier for coherent DMA
            // memory (`dma_rmb()`, as the EQ ring; upstream's `rmb()` also orders MMIO,
            // which this read is not).
            dma_rmb();
            let mut cqe = Cqe64::new_zeroed();
            coherent_io::view_read_bytes(entry, cqe.as_mut_bytes()).ok()?;
            cur.ci = ci.wrapping_add(1);
            let h = match parse_into(&cqe, &mut WcSink(wc)) {
                Ok(h) => h,
                Err(m) => {
                    self.malformed(logged, cur.ci, Bad::Cqe(m));
                    continue;
                }
            };
            // Kernel CQs are never resized: a resize CQE is the device's invention.
            if h.kind == CqeKind::Resize {
                self.malformed(logged, cur.ci, Bad::Cqe(Malformed::Opcode(op_own >> 4)));
                continue;
            }
            return Some(h);
        }
    }

    /// Logs an error completion whose syndrome upstream dumps (out of line: the
    /// poll loop keeps no formatting state for it).
    #[cold]
    #[inline(never)]
    fn log_wc_error(&self, syndrome: u8, qpn: u32, vendor_err: u32) {
        dev_warn!(
            self.dev,
            "WC error: {}, QP {:#x}, vendor syndrome {:#x}\n",
            syndrome,
            qpn,
            vendor_err
        );
    }

    /// Counts a skipped CQE (debugfs `eqs`, `cqe_malformed`); the first of the CQ is
    /// logged with its reason (`logged`: [`PollState::logged`]) and consumer index
    /// (the counter `ci` is past it).
    #[cold]
    fn malformed(&self, logged: &mut bool, ci: u32, why: Bad) {
        self.table.note_skipped_cqe(true);
        if !*logged {
            *logged = true;
            let (what, v) = why.reason();
            dev_warn!(
                self.dev,
                "CQ {:#x}: malformed CQE at consumer index {} ({} {:#x}), skipped; later ones are counted only\n",
                self.cqn(),
                ci.wrapping_sub(1),
                what,
                v
            );
        }
    }
}
