// SPDX-License-Identifier: GPL-2.0

//! User contexts and PDs (kernel shell): alloc_ucontext runs the request through the
//! ABI logic ([`crate::ib::abi::ucontext`]), allocates the context's static UAR pages
//! (one ALLOC_UAR each; none for a library with dynamic UARs) and its transport
//! domain, and builds the response; the context's drop releases them. mmap decodes
//! the offset ([`crate::ib::abi::mmap`]) and names the page of BAR 0 ([`crate::ib::uctx::plan`]).
//! A library with dynamic UARs allocates them as UAR objects (UAR_OBJ_ALLOC,
//! `ffi/rdma/ib_uar.c`): one ALLOC_UAR each, recorded in the context so that a CQ or QP
//! can ring only on the context's own UARs, released when the object's mmap entry
//! goes.
//!
//! A rejected request is logged at debug level only (user space controls it) and
//! fails with the errno upstream returns.

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod plan;

use kernel::{
    device, new_mutex,
    prelude::*,
    sync::{aref::ARef, Arc, Mutex},
};

use crate::ib::{
    abi::{
        mmap::decode,
        ucontext::{build_response, is_devx_refusal, parse_request, UctxPlan},
        udata, UabiError,
    },
    pd::commands::{AllocTransportDomain, DeallocTransportDomain},
    qp::uar::BfregTable,
    uctx::plan::{
        check_uar_alloc_type, map_target, uar_obj, vma_of, wants_transport_domain, UctxHost,
    },
    umem::DbPages,
};
use crate::{
    cmd::commands::{gen_cap, GeneralCaps},
    eq::commands::{AllocUar, DeallocUar},
    ffi::rdma::ib::{IbUcontext, MmapMap, MmapReq, UarObj},
    hw::Hw,
};

/// The kernel error of a rejected request.
pub(crate) fn uabi_err(dev: &device::Device, what: &str, e: UabiError) -> Error {
    if is_devx_refusal(&e) {
        dev_dbg!(dev, "{}: DEVX context refused (not supported)\n", what);
    } else {
        dev_dbg!(dev, "{}: request rejected: {:?}\n", what, e);
    }
    Error::from_errno(-e.errno)
}

/// Copies `bytes` to the start of `out`; their length (0 if `out` is too short,
/// which the shim's buffer never is).
pub(crate) fn put(out: &mut [u8], bytes: &[u8]) -> usize {
    match out.get_mut(..bytes.len()) {
        Some(d) => {
            d.copy_from_slice(bytes);
            bytes.len()
        }
        None => 0,
    }
}

/// One user context: its UAR pages and transport domain, released on drop.
pub(crate) struct UserContext {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    plan: UctxPlan,
    host: UctxHost,
    dev_uar_4k: bool,
    /// UAR index of each static system page.
    uars: KVec<u32>,
    tdn: Option<u32>,
    /// Doorbell-record pages of the context's user objects.
    db: Arc<DbPages>,
    /// The bfregs its QPs ring (set once the UAR pages are allocated).
    bfregs: Option<Arc<BfregTable>>,
    /// UAR indices of the context's UAR objects (UAR_OBJ_ALLOC), each until its
    /// mmap entry is freed. Lock order: a leaf, nothing else is taken under it
    /// (ALLOC_UAR and DEALLOC_UAR run outside it).
    uar_objs: Pin<KBox<Mutex<KVec<u32>>>>,
}

impl UserContext {
    /// alloc_ucontext: parse `req`, plan, allocate, and write the response for a user
    /// buffer of `outlen` bytes into `out`.
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
            dev_uar_4k: caps.get(gen_cap::UAR_4K),
            uars: KVec::with_capacity(pages, GFP_KERNEL)?,
            tdn: None,
            db: DbPages::new()?,
            bfregs: None,
            uar_objs: KBox::pin_init(new_mutex!(KVec::new()), GFP_KERNEL)?,
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
        let resp = build_response(&host.resp_caps(caps), &ctx.plan, outlen);
        udata::write_response(&resp, out);
        Ok((ctx, udata::response(&resp, out.len()).len()))
    }
}

impl IbUcontext for UserContext {
    fn mmap(&self, req: &MmapReq) -> Result<MmapMap> {
        let t = decode(&vma_of(req), &self.host.mmap_caps(), &self.plan.bfregs)
            .map_err(|e| uabi_err(&self.dev, "mmap", e))?;
        map_target(t, &self.uars, self.dev_uar_4k, self.host.page_shift)
            .map_err(|e| uabi_err(&self.dev, "mmap", e))
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

    fn uar_obj_alloc(&self, alloc_type: u32) -> Result<UarObj> {
        let what = "UAR_OBJ_ALLOC";
        check_uar_alloc_type(alloc_type).map_err(|e| uabi_err(&self.dev, what, e))?;
        // Room first, so that a UAR once allocated is always recorded.
        self.uar_objs.lock().reserve(1, GFP_KERNEL)?;
        let uar = self.hw.run(AllocUar)?;
        let obj = match uar_obj(alloc_type, uar, self.dev_uar_4k, self.host.page_shift) {
            Ok(o) => o,
            Err(e) => {
                let _ = self.hw.exec_cmd(DeallocUar { uar });
                return Err(uabi_err(&self.dev, what, e));
            }
        };
        // Reserved above: the push does not allocate.
        if let Err(e) = self.uar_objs.lock().push(uar, GFP_KERNEL) {
            let _ = self.hw.exec_cmd(DeallocUar { uar });
            return Err(e.into());
        }
        Ok(obj)
    }

    fn uar_obj_free(&self, uar: u32) {
        {
            let mut objs = self.uar_objs.lock();
            match objs.iter().position(|&u| u == uar) {
                Some(i) => {
                    let _ = objs.remove(i);
                }
                None => {
                    dev_warn!(self.dev, "UAR object over UAR {} freed twice\n", uar);
                    return;
                }
            }
        }
        // Failures are logged by the command layer; a dead device reports success.
        let _ = self.hw.exec_cmd(DeallocUar { uar });
    }

    fn owns_uar(&self, uar: u32) -> bool {
        self.uars.contains(&uar) || self.uar_objs.lock().contains(&uar)
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
        // The core frees every mmap entry before the context; none may be left.
        for &uar in self.uar_objs.lock().iter() {
            dev_warn!(
                self.dev,
                "UAR object over UAR {} outlived its context\n",
                uar
            );
            let _ = self.hw.exec_cmd(DeallocUar { uar });
        }
    }
}
