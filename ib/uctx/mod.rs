// SPDX-License-Identifier: GPL-2.0

//! User contexts (kernel shell): the user-context verbs ([`UctxVerbs`], the
//! provider's [`IbUctxOps`]). alloc_ucontext runs the request through the ABI logic ([`crate::ib::abi::ucontext`]), allocates the context's static UAR pages
//! (one ALLOC_UAR each; none for a library with dynamic UARs) and its transport
//! domain, and builds the response; the context's drop releases them. mmap decodes
//! the offset ([`crate::ib::abi::mmap`]) and names the page of BAR 0 ([`crate::ib::uctx::plan`]).
//! A library with dynamic UARs allocates them as UAR objects (UAR_OBJ_ALLOC,
//! `ffi/rdma/ib_uar.c`): one ALLOC_UAR each, recorded in the context so that a CQ or QP
//! can ring only on the context's own UARs. A CQ or QP that names a UAR object's UAR
//! holds it ([`UarHold`]): the UAR is released (DEALLOC_UAR) when the object's mmap
//! entry is gone and the last CQ or QP naming it is destroyed, whichever comes last
//! ([`plan::UarUse`]). The context's bfregs, which its QPs ring, are [`uar`]'s.
//!
//! A rejected request is logged at debug level only (user space controls it) and
//! fails with the errno upstream returns.

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod plan;
pub(crate) mod uar;

use kernel::{
    device, new_mutex, page,
    prelude::*,
    sync::{aref::ARef, Arc, Mutex},
};

use crate::ib::{
    abi::{
        mmap::decode,
        ucontext::{build_response, is_devx_refusal, parse_request, UctxPlan, UctxRespCaps},
        udata, UabiError,
    },
    pd::commands::{AllocTransportDomain, DeallocTransportDomain},
    uctx::plan::{
        check_uar_alloc_type, map_target, uar_free, uar_hold, uar_obj, uar_release, vma_of,
        wants_transport_domain, UarFreed, UarUse, UctxHost,
    },
    uctx::uar::BfregTable,
    umem::DbPages,
};
use crate::{
    cmd::commands::GeneralCaps,
    eq::{
        commands::{AllocUar, DeallocUar},
        uar::UarGeom,
    },
    ffi::rdma::{
        ib_uctx::{IbUcontext, IbUctxOps, MmapMap, MmapReq, UarObj},
        udata::UserData,
    },
    hw::Hw,
};

/// The kernel error of a rejected request.
pub(crate) fn uabi_err(dev: &device::Device, what: &str, e: UabiError) -> Error {
    if is_devx_refusal(&e) {
        dev_dbg!(dev, "{}: DEVX context refused (not supported)\n", what);
    } else {
        dev_dbg!(dev, "{}: request rejected: {:?}\n", what, e);
    }
    e.errno.into()
}

/// The user-context verbs of one function.
pub(crate) struct UctxVerbs {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    caps: GeneralCaps,
    num_ports: u8,
    /// The core keeps a clock info page.
    clock_info: bool,
}

impl UctxVerbs {
    /// The verbs of `dev` over `hw`, with its general caps, `num_ports` ports and the
    /// core's clock info page if `clock_info`.
    pub(crate) fn new(
        dev: &device::Device,
        hw: Arc<Hw>,
        caps: GeneralCaps,
        num_ports: u8,
        clock_info: bool,
    ) -> Self {
        Self {
            clock_info,
            dev: dev.into(),
            hw,
            caps,
            num_ports,
        }
    }
}

impl IbUctxOps for UctxVerbs {
    /// alloc_ucontext ([`UserContext::alloc`]).
    ///
    /// # Errors
    ///
    /// As [`UserContext::alloc`]; `ENOMEM` when the context's box cannot be allocated.
    fn alloc_ucontext(
        &self,
        u: UserData<'_>,
        cache_line_size: u32,
    ) -> Result<(KBox<dyn IbUcontext>, usize)> {
        let host = UctxHost {
            page_shift: page::PAGE_SHIFT as u32,
            cache_line_size,
            num_ports: u16::from(self.num_ports),
            clock_info: self.clock_info,
        };
        let (ctx, n) = UserContext::alloc(
            &self.dev, &self.hw, &self.caps, host, u.req, u.outlen, u.out,
        )?;
        let ctx: KBox<dyn IbUcontext> = KBox::new(ctx, GFP_KERNEL)?;
        Ok((ctx, n))
    }
}

/// The UARs of a context's UAR objects, shared with the CQs and QPs that name one.
#[pin_data]
pub(crate) struct UarObjs {
    hw: Arc<Hw>,
    /// One entry per UAR allocated for an object and not yet deallocated. A leaf
    /// lock: nothing else is taken under it (DEALLOC_UAR runs after it is dropped).
    #[pin]
    list: Mutex<KVec<UarUse>>,
}

impl UarObjs {
    /// Removes entry `i` (when `Some`) and deallocates its UAR, outside the lock.
    fn dealloc(&self, i: Option<usize>, mut list: kernel::sync::MutexGuard<'_, KVec<UarUse>>) {
        let uar = i.and_then(|i| list.remove(i).ok()).map(|e| e.uar);
        drop(list);
        if let Some(uar) = uar {
            // Failures are logged by the command layer; a dead device reports success.
            let _ = self.hw.exec_cmd(DeallocUar { uar });
        }
    }
}

/// A CQ's or QP's hold on the UAR its `uar_page` names (none for a static page, which
/// the context keeps until after its last queue): dropped after the queue's destroy.
pub(crate) struct UarHold {
    objs: Option<Arc<UarObjs>>,
    uar: u32,
}

impl Drop for UarHold {
    fn drop(&mut self) {
        if let Some(o) = &self.objs {
            let mut list = o.list.lock();
            let i = uar_release(&mut list, self.uar);
            o.dealloc(i, list);
        }
    }
}

/// One user context: its UAR pages and transport domain, released on drop.
pub(crate) struct UserContext {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    plan: UctxPlan,
    host: UctxHost,
    /// What the response reports of the device (alloc_ucontext and query_ucontext).
    resp_caps: UctxRespCaps,
    /// Where the device's UARs are in BAR 0.
    geom: UarGeom,
    /// UAR index of each static system page.
    uars: KVec<u32>,
    tdn: Option<u32>,
    /// Doorbell-record pages of the context's user objects.
    db: Arc<DbPages>,
    /// The bfregs its QPs ring (set once the UAR pages are allocated).
    bfregs: Option<Arc<BfregTable>>,
    /// UARs of the context's UAR objects (UAR_OBJ_ALLOC), each until its mmap entry
    /// is freed and no CQ or QP names it. Lock order: `UarObjs::list` is a leaf,
    /// nothing else is taken under it (ALLOC_UAR and DEALLOC_UAR run outside it).
    uar_objs: Arc<UarObjs>,
}

impl UserContext {
    /// alloc_ucontext: parse `req`, plan, allocate, and write the response for a user
    /// buffer of `outlen` bytes into `out`.
    ///
    /// # Errors
    ///
    /// The request's refusals with upstream's errno (`abi::ucontext::parse_request`
    /// and its plan): `EINVAL` for a length other than 8 or below 16, a low-latency
    /// bfreg count out of range, or DEVX (not offered: libmlx5 retries without);
    /// `EOPNOTSUPP` for unknown flags, `comp_mask` bits or reserved fields; `ENOMEM`
    /// for more bfregs than `MLX5_MAX_BFREGS`. Then ALLOC_UAR's or
    /// ALLOC_TRANSPORT_DOMAIN's errno ([`Hw::exec_cmd`]; what was allocated is
    /// released); `ENOMEM`.
    pub(crate) fn alloc(
        dev: &device::Device,
        hw: &Arc<Hw>,
        caps: &GeneralCaps,
        host: UctxHost,
        req: &[u8],
        outlen: usize,
        out: &mut [u8],
    ) -> Result<(Self, usize)> {
        let what = "alloc_ucontext";
        let r = parse_request(req).map_err(|e| uabi_err(dev, what, e))?;
        let plan = r
            .plan(&host.dev_caps(caps))
            .map_err(|e| uabi_err(dev, what, e))?;
        let pages = plan.bfregs.num_static_sys_pages as usize;
        let mut ctx = Self {
            dev: dev.into(),
            hw: hw.clone(),
            plan,
            host,
            resp_caps: host.resp_caps(caps),
            // Checked at probe already (device.rs): cannot fail here.
            geom: UarGeom::from_caps(caps, host.page_shift).map_err(|_| EINVAL)?,
            uars: KVec::with_capacity(pages, GFP_KERNEL)?,
            tdn: None,
            db: DbPages::new()?,
            bfregs: None,
            uar_objs: Arc::pin_init(
                pin_init!(UarObjs {
                    hw: hw.clone(),
                    list <- new_mutex!(KVec::new()),
                }),
                GFP_KERNEL,
            )?,
        };
        for _ in 0..pages {
            let uar = hw.run(AllocUar)?;
            // Capacity reserved above: the push does not allocate.
            if let Err(e) = ctx.uars.push(uar, GFP_KERNEL) {
                let _ = hw.exec_cmd(DeallocUar { uar });
                return Err(e.into());
            }
        }
        ctx.bfregs = Some(BfregTable::new(ctx.plan.bfregs, &ctx.uars)?);
        if wants_transport_domain(caps) {
            ctx.tdn = Some(hw.run(AllocTransportDomain)?);
        }
        let resp = build_response(&ctx.resp_caps, &ctx.plan, outlen);
        udata::write_response(&resp, out);
        Ok((ctx, udata::response(&resp, out.len()).len()))
    }
}

impl IbUcontext for UserContext {
    /// mmap of the context's file: what the page offset names (`abi::mmap::decode`,
    /// upstream `mlx5_ib_mmap`'s checks in its order).
    ///
    /// # Errors
    ///
    /// As upstream: `EINVAL` for an offset past bit 23, an unknown command, a
    /// length other than one page, a UAR page past the context's or a dynamic-UAR
    /// library's static page; `EPERM` for write-combining pages without write
    /// combining and for writable clock pages; `EOPNOTSUPP` for the clock info page
    /// (none here) and the core clock on pages above 4 KiB; `ENOSYS` for
    /// contiguous pages (`abi::mmap::decode`, `plan::map_target`).
    fn mmap(&self, req: &MmapReq) -> Result<MmapMap> {
        let t = decode(&vma_of(req), &self.host.mmap_caps(), &self.plan.bfregs)
            .map_err(|e| uabi_err(&self.dev, "mmap", e))?;
        map_target(t, &self.uars, &self.geom).map_err(|e| uabi_err(&self.dev, "mmap", e))
    }

    /// query_ucontext: the response alloc_ucontext gave, as upstream
    /// `mlx5_ib_query_ucontext` rebuilds it (`set_ucontext_resp`, `response_length`
    /// the smaller of the user's buffer and the structure).
    fn query(&self, outlen: usize, out: &mut [u8]) {
        udata::write_response(&build_response(&self.resp_caps, &self.plan, outlen), out);
    }

    fn db_pages(&self) -> &Arc<DbPages> {
        &self.db
    }

    fn cqe_version(&self) -> u8 {
        self.plan.cqe_version
    }

    fn qp_bfregs(&self) -> Option<&Arc<BfregTable>> {
        self.bfregs.as_ref()
    }

    fn static_uars(&self) -> &[u32] {
        &self.uars
    }

    fn lib_uar_dyn(&self) -> bool {
        self.plan.bfregs.lib_uar_dyn
    }

    /// UAR_OBJ_ALLOC: a UAR of the context's own, mapped through an mmap entry.
    ///
    /// # Errors
    ///
    /// `EOPNOTSUPP` for blue flame (no write combining here, as upstream without
    /// it) and unknown types (`plan::check_uar_alloc_type`); ALLOC_UAR's errno
    /// ([`Hw::exec_cmd`]); `ENOMEM`.
    fn uar_obj_alloc(&self, alloc_type: u32) -> Result<UarObj> {
        let what = "UAR_OBJ_ALLOC";
        check_uar_alloc_type(alloc_type).map_err(|e| uabi_err(&self.dev, what, e))?;
        // Room first, so that a UAR once allocated is always recorded.
        self.uar_objs.list.lock().reserve(1, GFP_KERNEL)?;
        let uar = self.hw.run(AllocUar)?;
        let obj = match uar_obj(alloc_type, uar, &self.geom) {
            Ok(o) => o,
            Err(e) => {
                let _ = self.hw.exec_cmd(DeallocUar { uar });
                return Err(uabi_err(&self.dev, what, e));
            }
        };
        // Reserved above: the push does not allocate.
        if let Err(e) = self.uar_objs.list.lock().push(UarUse::new(uar), GFP_KERNEL) {
            let _ = self.hw.exec_cmd(DeallocUar { uar });
            return Err(e.into());
        }
        Ok(obj)
    }

    fn uar_obj_free(&self, uar: u32) {
        let mut list = self.uar_objs.list.lock();
        match uar_free(&mut list, uar) {
            UarFreed::Dealloc(i) => self.uar_objs.dealloc(Some(i), list),
            // Deallocated by the last CQ or QP naming it.
            UarFreed::Kept => (),
            UarFreed::Unknown => {
                drop(list);
                dev_warn!(self.dev, "UAR object over UAR {} freed twice\n", uar);
            }
        }
    }

    fn owns_uar(&self, uar: u32) -> bool {
        // An ALLOC_UAR owns its whole system page (with uar_4k, several UARs).
        self.uars.iter().any(|base| self.geom.in_alloc(*base, uar))
            || self
                .uar_objs
                .list
                .lock()
                .iter()
                .any(|e| !e.freed && self.geom.in_alloc(e.uar, uar))
    }

    fn hold_uar(&self, uar: u32) -> Option<UarHold> {
        if self.uars.iter().any(|base| self.geom.in_alloc(*base, uar)) {
            return Some(UarHold { objs: None, uar });
        }
        // The hold is on the object whose allocation holds `uar` (its base index).
        let mut list = self.uar_objs.list.lock();
        let base = list
            .iter()
            .find(|e| !e.freed && self.geom.in_alloc(e.uar, uar))?
            .uar;
        uar_hold(&mut list, base).then(|| UarHold {
            objs: Some(self.uar_objs.clone()),
            uar: base,
        })
    }
}

impl Drop for UserContext {
    fn drop(&mut self) {
        // Failures are logged by the command layer; a dead device reports success.
        if let Some(tdn) = self.tdn.take() {
            let _ = self.hw.exec_cmd(DeallocTransportDomain { tdn });
        }
        for &uar in self.uars.iter() {
            let _ = self.hw.exec_cmd(DeallocUar { uar });
        }
        // The core frees every mmap entry and destroys every queue before the
        // context; none may be left, but for a queue kept after a failed destroy
        // (its hold keeps the UAR, which the device may still use).
        loop {
            let left = {
                let mut list = self.uar_objs.list.lock();
                match list.iter().position(|e| e.users == 0) {
                    Some(i) => list.remove(i).ok(),
                    None => None,
                }
            };
            let Some(e) = left else { break };
            dev_warn!(
                self.dev,
                "UAR object over UAR {} outlived its context\n",
                e.uar
            );
            let _ = self.hw.exec_cmd(DeallocUar { uar: e.uar });
        }
    }
}
