// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues and XRC domains (kernel shell), the SRQ verbs
//! ([`SrqVerbs`], the provider's [`IbSrqOps`]): ALLOC_XRCD / DEALLOC_XRCD when the
//! device has cap `xrc` (`EOPNOTSUPP` otherwise, as upstream `mlx5_ib_alloc_xrcd`);
//! kernel SRQs, their WQE buffer and doorbell record in coherent DMA memory, made as
//! upstream `srq_cmd.c` makes them at ISSI 1 (basic: an RMP; XRC: an XRC SRQ), with
//! limit arming, query and destroy.
//!
//! User SRQs (libmlx5's request, [`crate::ib::abi::srq`]) pin their buffer
//! ([`crate::ffi::rdma::umem::Umem`], in CPU pages) and map their doorbell record through the
//! context's doorbell pages ([`crate::ib::umem`]); the response is the SRQ number.
//!
//! An SRQ's memory, kernel or user, is never returned while the device may reach it:
//! after a create command of unknown outcome (a timeout) or a failed destroy it goes
//! to the function's graveyard ([`Hw::keep`]). The SRQ object destroys its queue
//! when dropped unless destroy_srq did, so a failure after the create command (the
//! object's box) leaves no queue in the device.
//!
//! The SRQ's async events (limit reached, catastrophic error) reach its handler
//! through the QP/SRQ event table (`crate::eq::rsc`, `crate::ib::obj_events`).
//!
//! A kernel SRQ's data path is [`kdp::KSrq`] (post_srq_recv, and the receive
//! completions of its QPs, which find it in the device's [`kdp::KsrqTable`]); its
//! list of free WQEs is [`kwqe`]'s. post_srq_recv of a user SRQ answers `EINVAL`
//! (libmlx5 posts to its own ring).

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod commands;
pub(crate) mod kdp;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod kwqe;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod plan;

use core::sync::atomic::{AtomicBool, Ordering};

use kernel::{
    device::{self, Bound},
    dma::Coherent,
    new_mutex, page,
    prelude::*,
    sync::{aref::ARef, Arc, Mutex},
};
use zerocopy::FromZeros;

use self::kdp::{KSrq, KsrqTable};
use crate::ib::{
    abi::{
        srq::{parse_create_srq, SrqCaps, SrqKind},
        udata, UabiError,
    },
    obj_events::SrqWithEvents,
    srq::commands::{
        AllocXrcd, ArmXrcSrq, CreateRmp, CreateXrcSrq, DeallocXrcd, DestroyRmp, DestroyXrcSrq,
        ModifyRmpLwm, QueryRmp, QueryXrcSrq,
    },
    srq::plan::{
        create_srq_response, modify_limit, srq_shape, SrqCtx, SrqLimits, SrqShape, SrqType,
        DEFAULT_UIDX, KERNEL_PAGE,
    },
    uctx::uabi_err,
    umem::UserDb,
};
use crate::ib::{cq::kclean::KcqTable, qp::KernelObjs};
use crate::{
    cmd::{
        commands::{gen_cap, GeneralCaps},
        status::{create_outcome_unknown, CmdError},
    },
    coherent_io,
    eq::rsc::RscTable,
    ffi::rdma::ib_qp::RecvChain,
    ffi::rdma::ib_srq::{IbSrq, IbSrqOps, NewSrq, SrqAttr, SrqInit, SrqShim},
    ffi::rdma::ib_uctx::IbUcontext,
    ffi::rdma::udata::UserData,
    ffi::rdma::umem::{BlockSize, IbDev, Umem},
    hw::Hw,
    ifc::av::WqeSrqNextSeg,
};

/// Bytes of a kernel SRQ's doorbell record allocation (the record is its first 4).
const DBR_BYTES: usize = 64;

/// The memory of a kernel SRQ: WQE pages and the doorbell record.
struct KernelMem {
    pages: KVec<Coherent<[u8]>>,
    db: Coherent<[u8]>,
}

impl KernelMem {
    /// Zeroed pages for `s` and a doorbell record, the free list linked (every WQE's
    /// next segment names the next WQE, as upstream `create_srq_kernel`).
    fn new(dev: &device::Device<Bound>, s: &SrqShape) -> Result<Self> {
        let n = s.kernel_pages();
        let mut pages = KVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            pages.push(
                Coherent::<u8>::zeroed_slice(dev, KERNEL_PAGE, GFP_KERNEL)?,
                GFP_KERNEL,
            )?;
        }
        let db = Coherent::<u8>::zeroed_slice(dev, DBR_BYTES, GFP_KERNEL)?;
        // The device does not know the queue yet: nothing accesses it concurrently.
        let mut seg = WqeSrqNextSeg::new_zeroed();
        for i in 0..s.max {
            seg.next_wqe_index.set(s.next_wqe_index(i));
            let (p, off) = s.kernel_wqe_at(i);
            let page = pages.get(p).ok_or(EINVAL)?;
            coherent_io::write_bytes(page, off, seg.as_bytes())?;
        }
        Ok(Self { pages, db })
    }

    fn pas(&self) -> Result<KVec<u64>> {
        let mut v = KVec::with_capacity(self.pages.len(), GFP_KERNEL)?;
        for p in self.pages.iter() {
            v.push(p.dma_address(), GFP_KERNEL)?;
        }
        Ok(v)
    }
}

/// The memory of a user SRQ: the pinned buffer and the mapped doorbell record.
struct UserMem {
    _umem: Umem,
    _db: UserDb,
}

/// Where an SRQ's WQEs and doorbell record live.
enum SrqMem {
    /// Coherent DMA memory of ours, with the data path over it.
    Kernel { _mem: Arc<KSrq> },
    /// Pinned user memory.
    User { _mem: UserMem },
}

impl SrqMem {
    /// Pages it holds (for logs).
    fn pages(&self) -> usize {
        match self {
            Self::Kernel { _mem } => _mem.pages(),
            Self::User { _mem } => _mem._umem.pages(),
        }
    }
}

/// The memory of an SRQ: freed (unpinned) with the SRQ after its destroy command
/// succeeded; `None` once handed to the graveyard.
type MemCell = Arc<Mutex<Option<SrqMem>>>;

/// Hands what `mem` holds to the graveyard after `err` (a create command of unknown
/// outcome, a failed destroy).
fn keep(hw: &Hw, dev: &device::Device, err: &CmdError, mem: &MemCell) {
    let taken = mem.lock().take();
    if let Some(m) = taken {
        hw.keep(dev, err, m.pages(), m);
    }
}

/// An SRQ: its number, shape and memory. Destroyed on the device when dropped unless
/// destroy_srq did it (so that a failure after the create command, a box that
/// cannot be allocated, leaves no SRQ behind).
struct KernelSrq {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    kind: SrqType,
    srqn: u32,
    shape: SrqShape,
    /// Whether the destroy command succeeded.
    gone: AtomicBool,
    mem: MemCell,
    /// A kernel SRQ's data path, in `ksrqs` under `srqn` until the drop.
    kdp: Option<(Arc<KSrq>, Arc<KsrqTable>)>,
}

impl KernelSrq {
    /// The destroy command of its type; on failure the memory goes to the graveyard.
    fn destroy_cmd(&self) -> Result<(), CmdError> {
        let r = match self.kind {
            SrqType::Basic => self.hw.exec_cmd(DestroyRmp { rmpn: self.srqn }),
            SrqType::Xrc => self.hw.exec_cmd(DestroyXrcSrq { srqn: self.srqn }),
        };
        match r {
            Ok(()) => {
                self.gone.store(true, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                keep(&self.hw, &self.dev, &e, &self.mem);
                Err(e)
            }
        }
    }
}

impl Drop for KernelSrq {
    fn drop(&mut self) {
        if let Some((q, t)) = &self.kdp {
            t.remove(self.srqn, q);
        }
        if !self.gone.load(Ordering::Relaxed) {
            // Failures are logged by the command layer and `Hw::keep`.
            let _ = self.destroy_cmd();
        }
    }
}

impl IbSrq for KernelSrq {
    /// modify_srq: arms the SRQ limit.
    ///
    /// # Errors
    ///
    /// `EINVAL` for a resize (`IB_SRQ_MAX_WR`) or a limit at or above the ring size
    /// (`plan::modify_limit`); the arming command's errno ([`Hw::exec_cmd`]).
    fn modify(&self, mask: u32, limit: u32) -> Result {
        let lwm = modify_limit(mask, limit, self.shape.max)
            .map_err(|e| uabi_err(&self.dev, "modify_srq", e))?;
        let Some(lwm) = lwm else {
            return Ok(());
        };
        match self.kind {
            SrqType::Basic => self.hw.run(ModifyRmpLwm {
                rmpn: self.srqn,
                lwm,
            }),
            SrqType::Xrc => self.hw.run(ArmXrcSrq {
                srqn: self.srqn,
                lwm,
            }),
        }
    }

    /// query_srq: the limit the device reports and the SRQ's capacities.
    ///
    /// # Errors
    ///
    /// QUERY_RMP's or QUERY_XRC_SRQ's errno ([`Hw::exec_cmd`]).
    fn query(&self) -> Result<SrqAttr> {
        let st = match self.kind {
            SrqType::Basic => self.hw.run(QueryRmp { rmpn: self.srqn })?,
            SrqType::Xrc => self.hw.run(QueryXrcSrq { srqn: self.srqn })?,
        };
        Ok(SrqAttr {
            max_wr: self.shape.max_wr(),
            max_sge: self.shape.max_gs,
            srq_limit: u32::from(st.lwm),
            rsvd: 0,
        })
    }

    /// destroy_srq: DESTROY_RMP or DESTROY_XRC_SRQ.
    ///
    /// # Errors
    ///
    /// The command's errno ([`Hw::exec_cmd`]; 0 when the device is dead, as upstream); the
    /// memory then goes to the graveyard.
    fn destroy(&self) -> Result {
        // On failure the memory goes to the graveyard and the SRQ stays with the core
        // (upstream returns the error too), unless the device is dead, where
        // upstream's destroy succeeds.
        match self.destroy_cmd() {
            Err(e) if !e.gone_with_dead_device() => Err(e.errno().into()),
            _ => Ok(()),
        }
    }

    /// post_srq_recv of a kernel SRQ ([`KSrq::post`]).
    ///
    /// # Errors
    ///
    /// For the first request not posted: `EINVAL` for more scatter entries than the
    /// SRQ's, `ENOMEM` for a full queue (upstream's order), `EIO` for a list the WQE
    /// memory no longer holds; `EINVAL` for a user SRQ.
    fn post_recv(&self, batch: &mut RecvChain<'_>) -> (usize, Result) {
        match &self.kdp {
            Some((q, _)) => q.post(batch),
            None => (0, Err(EINVAL)),
        }
    }
}

/// The SRQ and XRC domain verbs of one function.
pub(crate) struct SrqVerbs {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    caps: GeneralCaps,
    /// Where SRQs register for their async events.
    rscs: Arc<RscTable>,
    /// Kernel SRQs by number, for create_qp of kernel QPs on them.
    ksrqs: Arc<KsrqTable>,
    /// The device's kernel CQs, and whether it met a fatal error.
    kcqs: Arc<KcqTable>,
}

impl SrqVerbs {
    /// The verbs of `dev` over `hw`, with its general caps; SRQs register in `rscs`,
    /// kernel SRQs in `kobjs` too.
    pub(crate) fn new(
        dev: &device::Device,
        hw: Arc<Hw>,
        caps: GeneralCaps,
        rscs: Arc<RscTable>,
        kobjs: KernelObjs,
    ) -> Self {
        Self {
            dev: dev.into(),
            hw,
            caps,
            rscs,
            ksrqs: kobjs.srqs,
            kcqs: kobjs.cqs,
        }
    }

    fn dev(&self) -> &device::Device {
        &self.dev
    }

    fn hw(&self) -> &Arc<Hw> {
        &self.hw
    }

    fn caps(&self) -> &GeneralCaps {
        &self.caps
    }

    fn rscs(&self) -> &Arc<RscTable> {
        &self.rscs
    }

    fn srq_limits(&self) -> SrqLimits {
        let c = self.caps();
        SrqLimits {
            log_max_srq_sz: c.get(gen_cap::LOG_MAX_SRQ_SZ),
            max_wqe_sz_rq: u32::from(c.get(gen_cap::MAX_WQE_SZ_RQ)),
            cqe_version: c.get(gen_cap::CQE_VERSION),
        }
    }

    fn srq_refused(&self, e: UabiError) -> Error {
        uabi_err(self.dev(), "create_srq", e)
    }

    /// A kernel SRQ: memory, then the create command of its type.
    fn create_kernel_srq(&self, t: SrqType, s: SrqShape, init: &SrqInit) -> Result<NewSrq> {
        // SAFETY: the core calls the provider's ops only while the IB device is
        // registered, and the registration is a stage of the bound PCI function,
        // dropped before the function is unbound.
        let bound = unsafe { self.dev().as_bound() };
        let mem = KernelMem::new(bound, &s)?;
        let pas = mem.pas()?;
        let xrc = (t == SrqType::Xrc).then_some((init.xrcdn, init.cqn, DEFAULT_UIDX));
        let lim = self.srq_limits();
        let ctx = SrqCtx::new(
            t,
            &s,
            init.pdn,
            mem.db.dma_address(),
            0,
            0,
            false,
            xrc,
            lim.cqe_version,
        );
        let ksrq = KSrq::new(s, mem, self.kcqs.clone())?;
        let mem = Arc::pin_init(
            new_mutex!(Some(SrqMem::Kernel { _mem: ksrq.clone() })),
            GFP_KERNEL,
        )?;
        let srqn = self.create_cmd(t, ctx, &pas, &mem)?;
        let q = self.srq_object(t, srqn, s, mem, Some(ksrq.clone()))?;
        // In the table once the object exists (its drop takes it out again).
        self.ksrqs.insert(srqn, ksrq)?;
        Ok(NewSrq {
            srq: q,
            srqn,
            max_wr: s.max_wr(),
            resp_len: 0,
        })
    }

    /// The create command of type `t` over `mem`: the SRQ's number. When its outcome
    /// is unknown (a timeout) the memory goes to the graveyard.
    fn create_cmd(&self, t: SrqType, ctx: SrqCtx, pas: &[u64], mem: &MemCell) -> Result<u32> {
        let r = match t {
            SrqType::Basic => self.hw().exec_cmd(CreateRmp { ctx, pas }),
            SrqType::Xrc => self.hw().exec_cmd(CreateXrcSrq { ctx, pas }),
        };
        r.map_err(|e| {
            if create_outcome_unknown(e.kind) {
                keep(self.hw(), self.dev(), &e, mem);
            }
            e.errno().into()
        })
    }

    /// The SRQ object of a created queue; when that fails the object's drop
    /// destroys the queue again.
    fn srq_object(
        &self,
        t: SrqType,
        srqn: u32,
        s: SrqShape,
        mem: MemCell,
        kdp: Option<Arc<KSrq>>,
    ) -> Result<KBox<dyn IbSrq>> {
        let q = KernelSrq {
            dev: self.dev().into(),
            hw: self.hw().clone(),
            kind: t,
            srqn,
            shape: s,
            gone: AtomicBool::new(false),
            mem,
            kdp: kdp.map(|k| (k, self.ksrqs.clone())),
        };
        Ok(KBox::new(q, GFP_KERNEL)?)
    }

    /// A user SRQ: the request, the pinned buffer (CPU pages), the doorbell record,
    /// the create command, the response.
    fn create_user_srq(
        &self,
        t: SrqType,
        init: &SrqInit,
        dev: IbDev<'_>,
        uctx: &dyn IbUcontext,
        u: UserData<'_>,
    ) -> Result<NewSrq> {
        let lim = self.srq_limits();
        let kind = match t {
            SrqType::Basic => SrqKind::Basic,
            SrqType::Xrc => SrqKind::Xrc,
        };
        // An XRC SRQ's user index is checked against the context's CQE version (what
        // its library negotiated, 0 for a v0 request), as upstream's
        // `get_srq_user_index`; the device's decides only whether the context field
        // is written.
        let caps = SrqCaps::from_caps(self.caps(), page::PAGE_SHIFT as u32);
        let plan = parse_create_srq(
            kind,
            init.max_wr,
            init.max_sge,
            u.req,
            &caps,
            uctx.cqe_version(),
        )
        .map_err(|e| self.srq_refused(e))?;
        // Upstream pins the buffer with access 0 (the device writes receive WQEs'
        // data, not the ring).
        let umem = Umem::get(dev, plan.buf_addr, plan.buf_size, 0)?;
        let pg = BlockSize::PAGE;
        // `page_offset` counts 1/64 of a page (upstream `get_pas_size`); an RMP's
        // field has 5 bits, an XRC SRQ's 6.
        let quanta = pg.bytes() / 64;
        let off = umem.dma_offset(pg);
        let max_po = if t == SrqType::Basic { 31 } else { 63 };
        if off % quanta != 0 || off / quanta > max_po {
            dev_dbg!(
                self.dev(),
                "create_srq: buffer offset {:#x} in its page not usable\n",
                off
            );
            return Err(EINVAL);
        }
        let n = usize::try_from(umem.num_blocks(pg)).map_err(|_| EINVAL)?;
        let mut pas = KVec::from_elem(0u64, n, GFP_KERNEL)?;
        let got = umem.blocks(pg).fill(&mut pas);
        if got != n {
            return Err(EINVAL);
        }
        let db = uctx.db_pages().map(dev, plan.db_addr)?;
        let xrc = (t == SrqType::Xrc).then_some((init.xrcdn, init.cqn, plan.uidx));
        let ctx = SrqCtx::new(
            t,
            &plan.shape,
            init.pdn,
            db.dma(),
            // At least 4 KiB (`BlockSize::PAGE`, the CPU page).
            (pg.shift().saturating_sub(12)) as u8,
            (off / quanta) as u8,
            plan.wq_sig,
            xrc,
            lim.cqe_version,
        );
        let mem = SrqMem::User {
            _mem: UserMem {
                _umem: umem,
                _db: db,
            },
        };
        let mem = Arc::pin_init(new_mutex!(Some(mem)), GFP_KERNEL)?;
        let srqn = self.create_cmd(t, ctx, &pas, &mem)?;
        let q = self.srq_object(t, srqn, plan.shape, mem, None)?;
        let resp = create_srq_response(srqn);
        let resp_len = udata::put(u.out, udata::response(&resp, u.outlen));
        Ok(NewSrq {
            srq: q,
            srqn,
            max_wr: plan.shape.max_wr(),
            resp_len,
        })
    }
}

impl IbSrqOps for SrqVerbs {
    /// alloc_xrcd: ALLOC_XRCD.
    ///
    /// # Errors
    ///
    /// `EOPNOTSUPP` without cap `xrc`; the command's errno ([`Hw::exec_cmd`]).
    fn alloc_xrcd(&self) -> Result<u32> {
        if !self.caps().get(gen_cap::XRC) {
            return Err(EOPNOTSUPP);
        }
        self.hw().run(AllocXrcd)
    }

    /// dealloc_xrcd: DEALLOC_XRCD.
    ///
    /// # Errors
    ///
    /// The command's errno ([`Hw::exec_cmd`]; 0 when the device is dead, as upstream).
    fn dealloc_xrcd(&self, xrcdn: u32) -> Result {
        match self.hw().exec_cmd(DeallocXrcd { xrcdn }) {
            Err(e) if !e.gone_with_dead_device() => Err(e.errno().into()),
            _ => Ok(()),
        }
    }

    /// create_srq: a basic SRQ (an RMP) or an XRC SRQ, in kernel memory or over the
    /// user request's pinned buffer.
    ///
    /// # Errors
    ///
    /// - `EOPNOTSUPP` for an SRQ type other than basic and XRC;
    /// - `EINVAL` for `max_wr` or `max_sge` beyond the device's (`plan::srq_shape`);
    /// - for a user SRQ, the request's refusals by `abi::srq::parse_create_srq`
    ///   (`EINVAL`, `EOPNOTSUPP`, upstream's order, the XRC user index against the
    ///   context's CQE version), pinning's errors (`Umem::get`), `EINVAL` for a
    ///   buffer offset the context's `page_offset` cannot say and a doorbell record
    ///   straddling a page;
    /// - `ENOMEM` when memory cannot be allocated;
    /// - the create command's errno ([`Hw::exec_cmd`]), memory the device may
    ///   still reach kept in the graveyard;
    /// - `EEXIST` if the SRQ number is already in the event table (the SRQ is
    ///   destroyed).
    fn create_srq(
        &self,
        init: &SrqInit,
        dev: IbDev<'_>,
        user: Option<(&dyn IbUcontext, UserData<'_>)>,
        shim: SrqShim,
    ) -> Result<NewSrq> {
        let t = SrqType::from_ib(init.srq_type).map_err(|e| self.srq_refused(e))?;
        let s = srq_shape(init.max_wr, init.max_sge, &self.srq_limits())
            .map_err(|e| self.srq_refused(e))?;
        let n = match user {
            Some((uctx, u)) => self.create_user_srq(t, init, dev, uctx, u),
            None => self.create_kernel_srq(t, s, init),
        }?;
        // As upstream's `mlx5_cmd_create_srq`: in the event table after the command.
        let srq = SrqWithEvents::wrap(self.dev(), self.rscs(), n.srqn, n.srq, shim)?;
        Ok(NewSrq { srq, ..n })
    }
}
