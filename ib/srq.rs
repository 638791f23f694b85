// SPDX-License-Identifier: GPL-2.0

//! Shared receive queues, XRC domains and address handles (kernel shell), the
//! provider's [`IbSrqOps`]: ALLOC_XRCD / DEALLOC_XRCD when the device has cap `xrc`
//! (`EOPNOTSUPP` otherwise, as upstream `mlx5_ib_alloc_xrcd`); kernel SRQs, their
//! WQE buffer and doorbell record in coherent DMA memory, made as upstream
//! `srq_cmd.c` makes them at ISSI 1 (basic: an RMP; XRC: an XRC SRQ), with limit
//! arming, query and destroy; address handles as software address vectors
//! ([`super::ah_av`]), no command.
//!
//! User SRQs (libmlx5's request, [`super::abi::srq`]) pin their buffer
//! ([`crate::ffi::umem::Umem`], in CPU pages) and map their doorbell record through the
//! context's doorbell pages ([`super::db_user`]); the response is the SRQ number.
//!
//! Not here yet: `post_srq_recv` and the SRQ events (limit reached, catastrophic
//! error: the device raises them only once receives are consumed, the data path).

use kernel::{
    device::{self, Bound},
    dma::Coherent,
    page,
    prelude::*,
    sync::{aref::ARef, Arc},
};
use zerocopy::{FromZeros, IntoBytes};

use super::{
    abi::{
        ah::create_ah_response,
        srq::{parse_create_srq, SrqCaps, SrqKind},
        udata, UabiError,
    },
    ah_av,
    context::uabi_err,
    db_user::UserDb,
    obj_events::SrqWithEvents,
    provider::Provider,
    srq_commands::{
        AllocXrcd, ArmXrcSrq, CreateRmp, CreateXrcSrq, DeallocXrcd, DestroyRmp, DestroyXrcSrq,
        ModifyRmpLwm, QueryRmp, QueryXrcSrq,
    },
    srq_plan::{
        create_srq_response, modify_limit, srq_shape, SrqCtx, SrqLimits, SrqShape, SrqType,
        DEFAULT_UIDX, KERNEL_PAGE,
    },
};
use crate::{
    cmd::commands::gen_cap,
    dma_buf,
    ffi::ib_srq::{AhAttr, IbSrq, IbSrqOps, NewSrq, SrqAttr, SrqInit, SrqShim, UserData},
    ffi::umem::{BlockSize, Umem},
    hw::Hw,
    ifc::av::{Av, WqeSrqNextSeg},
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
            dma_buf::write_bytes(page, off, seg.as_bytes())?;
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
    /// Coherent DMA memory of ours.
    Kernel { _mem: KernelMem },
    /// Pinned user memory.
    User { _mem: UserMem },
}

/// An SRQ: its number, shape and memory.
struct KernelSrq {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    kind: SrqType,
    srqn: u32,
    shape: SrqShape,
    /// Freed (unpinned) when the SRQ is dropped, after its destroy command succeeded.
    _mem: SrqMem,
}

impl IbSrq for KernelSrq {
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

    fn destroy(&self) -> Result {
        match self.kind {
            SrqType::Basic => self.hw.run(DestroyRmp { rmpn: self.srqn }),
            SrqType::Xrc => self.hw.run(DestroyXrcSrq { srqn: self.srqn }),
        }
    }
}

impl Provider {
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
        let srqn = self.create_cmd(t, ctx, &pas)?;
        let q = self.srq_object(t, srqn, s, SrqMem::Kernel { _mem: mem })?;
        Ok(NewSrq {
            srq: q,
            srqn,
            max_wr: s.max_wr(),
            resp_len: 0,
        })
    }

    /// The create command of type `t`: the SRQ's number.
    fn create_cmd(&self, t: SrqType, ctx: SrqCtx, pas: &[u64]) -> Result<u32> {
        match t {
            SrqType::Basic => self.hw().run(CreateRmp { ctx, pas }),
            SrqType::Xrc => self.hw().run(CreateXrcSrq { ctx, pas }),
        }
    }

    /// The SRQ object of a created queue; destroys the queue again when that fails.
    fn srq_object(
        &self,
        t: SrqType,
        srqn: u32,
        s: SrqShape,
        mem: SrqMem,
    ) -> Result<KBox<dyn IbSrq>> {
        let q = KernelSrq {
            dev: self.dev().into(),
            hw: self.hw().clone(),
            kind: t,
            srqn,
            shape: s,
            _mem: mem,
        };
        match KBox::new(q, GFP_KERNEL) {
            Ok(b) => Ok(b),
            Err(e) => {
                // The queue's memory is freed with the failed box: destroy it on the
                // device first (failures are logged by the command layer).
                let _ = match t {
                    SrqType::Basic => self.hw().exec_cmd(DestroyRmp { rmpn: srqn }),
                    SrqType::Xrc => self.hw().exec_cmd(DestroyXrcSrq { srqn }),
                };
                Err(e.into())
            }
        }
    }

    /// A user SRQ: the request, the pinned buffer (CPU pages), the doorbell record,
    /// the create command, the response.
    fn create_user_srq(&self, t: SrqType, init: &SrqInit, u: UserData<'_>) -> Result<NewSrq> {
        let lim = self.srq_limits();
        let kind = match t {
            SrqType::Basic => SrqKind::Basic,
            SrqType::Xrc => SrqKind::Xrc,
        };
        // The context's CQE version is the cap's: libmlx5 asks for version 1, and a
        // context never gets more than the cap (`ib/abi/ucontext.rs`).
        let caps = SrqCaps::from_caps(self.caps(), page::PAGE_SHIFT as u32);
        let plan = parse_create_srq(
            kind,
            init.max_wr,
            init.max_sge,
            u.req,
            &caps,
            lim.cqe_version,
        )
        .map_err(|e| self.srq_refused(e))?;
        // Upstream pins the buffer with access 0 (the device writes receive WQEs'
        // data, not the ring).
        let umem = Umem::get(u.dev, plan.buf_addr, plan.buf_size, 0)?;
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
        let db = u.uctx.db_pages().map(u.dev, plan.db_addr)?;
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
        let srqn = self.create_cmd(t, ctx, &pas)?;
        let mem = SrqMem::User {
            _mem: UserMem {
                _umem: umem,
                _db: db,
            },
        };
        let q = self.srq_object(t, srqn, plan.shape, mem)?;
        let resp = create_srq_response(srqn);
        let resp_len = super::context::put(u.out, udata::response(&resp, u.outlen));
        Ok(NewSrq {
            srq: q,
            srqn,
            max_wr: plan.shape.max_wr(),
            resp_len,
        })
    }
}

impl IbSrqOps for Provider {
    fn alloc_xrcd(&self) -> Result<u32> {
        if !self.caps().get(gen_cap::XRC) {
            return Err(EOPNOTSUPP);
        }
        self.hw().run(AllocXrcd)
    }

    fn dealloc_xrcd(&self, xrcdn: u32) -> Result {
        self.hw().run(DeallocXrcd { xrcdn })
    }

    fn create_srq(
        &self,
        init: &SrqInit,
        user: Option<UserData<'_>>,
        shim: SrqShim,
    ) -> Result<NewSrq> {
        let t = SrqType::from_ib(init.srq_type).map_err(|e| self.srq_refused(e))?;
        let s = srq_shape(init.max_wr, init.max_sge, &self.srq_limits())
            .map_err(|e| self.srq_refused(e))?;
        let n = match user {
            Some(u) => self.create_user_srq(t, init, u),
            None => self.create_kernel_srq(t, s, init),
        }?;
        // As upstream's `mlx5_cmd_create_srq`: in the event table after the command.
        let srq = SrqWithEvents::wrap(self.dev(), self.rscs(), n.srqn, n.srq, shim)?;
        Ok(NewSrq { srq, ..n })
    }

    fn create_ah(&self, attr: &AhAttr, user: Option<(usize, &mut [u8])>) -> Result<(Av, usize)> {
        // No allocation, no sleep, no log above debug: may run in atomic context.
        let rates = self.caps().get(gen_cap::STAT_RATE_SUPPORT);
        let av = ah_av::encode(attr, rates).map_err(|e| Error::from_errno(-e.errno))?;
        let mut n = 0;
        if let Some((outlen, out)) = user {
            // InfiniBand: no RoCE destination MAC, so no response (upstream).
            if let Some(r) =
                create_ah_response(None, outlen).map_err(|e| Error::from_errno(-e.errno))?
            {
                n = super::context::put(out, r.as_bytes());
            }
        }
        Ok((av, n))
    }

    fn query_ah(&self, av: &Av, ah_type: u32) -> AhAttr {
        ah_av::decode(av, ah_type)
    }
}
