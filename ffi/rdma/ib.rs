// SPDX-License-Identifier: GPL-2.0

//! The RDMA core through the C shim `ffi/rdma/ib.c` (the kernel crate has no RDMA
//! bindings): an [`IbRegistration`] allocates the function's IB device, registers it
//! as `mlx5_%d` and unregisters and frees it on drop; its ops call the provider's
//! [`IbOps`] with typed requests, and the typed answers ([`DeviceAttr`],
//! [`PortAttr`], plain values) are copied into the core's structures by the C side.
//!
//! The `#[repr(C)]` structures ([`super::ib_abi`], pure so the host tests see them)
//! mirror the shim's own structures in `mlx5rs_ffi.h` (both sides check the same
//! sizes); Rust never sees a core structure.
//!
//! # Trampolines
//!
//! The Rust functions the shim calls (`mlx5rs_ib_rs_*`, here and in the family files
//! `ib_cq.rs`, `ib_mr.rs`, `ib_qp.rs`, `ib_srq.rs`) are `unsafe extern "C"`: only the
//! shim calls them, and it upholds one contract for all of them, which their
//! `# Safety` sections name:
//! - `rust` is the pointer [`IbRegistration::register`] gave `mlx5rs_ib_alloc`, of a
//!   device not unregistered yet (the core calls ops only in between);
//! - an object pointer (`uctx`, `cq_rust`, `qp`, `srq`, `mr`, `old`) is NULL or the
//!   `rust` field of a live object of this provider (set by its create trampoline,
//!   not yet freed), and no destroy of that object runs concurrently; a destroy or
//!   dealloc trampoline is passed it once, after which the shim forgets it;
//! - every other pointer is NULL only where its function says so, else valid for
//!   reading (inputs) or writing (outputs, the shim's stack frame or the field of its
//!   object that is to be set) for the call, and not aliased by another argument;
//! - a staged `struct mlx5rs_ib_udata` satisfies [`staged`]'s contract, and `ibdev`
//!   and `udata` are the core's `struct ib_device` and `struct ib_udata` of the
//!   current verb.

use core::ptr::NonNull;

use kernel::{
    bindings, device,
    error::to_result,
    ffi::{c_char, c_int, c_void},
    prelude::*,
    sync::Arc,
};

use super::ib_abi::Udata;
pub(crate) use super::ib_abi::{DeviceAttr, IbEvent, IbInit, MmapMap, MmapReq, PortAttr, UarObj};
use super::ib_mr::IbMrOps;
use crate::ib::umem::DbPages;

/// A user context of the provider, created by [`IbOps::alloc_ucontext`]; dropped at
/// `dealloc_ucontext` (after the core destroyed the context's objects and zapped its
/// mappings).
pub(crate) trait IbUcontext: Send + Sync {
    /// `mmap` of the context: the page of BAR 0 `req` maps.
    fn mmap(&self, req: &MmapReq) -> Result<MmapMap>;
    /// The context's doorbell-record pages (user CQs, QPs, SRQs map their records
    /// through it, [`crate::ib::umem`]).
    fn db_pages(&self) -> &Arc<DbPages>;
    /// The context's CQE version (0 or 1).
    fn cqe_version(&self) -> u8;
    /// The context's bfregs, which its QPs ring ([`crate::ib::qp::uar`]); set from
    /// allocation on (`None` only for a context still being built).
    fn qp_bfregs(&self) -> Option<&Arc<crate::ib::qp::uar::BfregTable>>;
    /// The UAR index of each static system page (CQs of the context ring on them).
    fn static_uars(&self) -> &[u32];
    /// The library allocates its UARs dynamically (no static pages).
    fn lib_uar_dyn(&self) -> bool;
    /// UAR_OBJ_ALLOC: a new UAR of `alloc_type` for the context (its index, page and
    /// caching), owned by the context until [`IbUcontext::uar_obj_free`].
    fn uar_obj_alloc(&self, alloc_type: u32) -> Result<UarObj>;
    /// The UAR object over `uar` is gone (and so is its last mapping).
    fn uar_obj_free(&self, uar: u32);
    /// `uar` is one of the context's UARs (a static page or a live UAR object).
    fn owns_uar(&self, uar: u32) -> bool;
    /// A hold on `uar` for a CQ or QP whose context names it (`None`: not one of the
    /// context's UARs): a UAR object's UAR is deallocated only after the object is
    /// gone and the last hold is dropped.
    fn hold_uar(&self, uar: u32) -> Option<crate::ib::uctx::UarHold>;
}

/// The Rust user context behind a `rust` pointer of `struct mlx5rs_ib_ucontext` (as
/// `mlx5rs_ib_udata_uctx` or a trampoline passes it); `None` for NULL.
///
/// # Safety
///
/// `uctx` must be NULL or the `rust` pointer of a context the core has not
/// deallocated yet (it does so only after destroying the context's objects), valid
/// for the lifetime chosen.
pub(crate) unsafe fn ucontext_ref<'a>(uctx: *const c_void) -> Option<&'a dyn IbUcontext> {
    if uctx.is_null() {
        return None;
    }
    // SAFETY: by the function's contract `uctx` came from `KBox::into_raw` of a
    // `UcontextBox` in `mlx5rs_ib_rs_alloc_ucontext` and is not freed yet.
    Some(unsafe { &**uctx.cast::<KBox<dyn IbUcontext>>() })
}

/// A context as the shim holds it: a thin pointer to this box is the `rust` pointer
/// of `struct mlx5rs_ib_ucontext`.
pub(crate) type UcontextBox = KBox<KBox<dyn IbUcontext>>;

/// What the core asks of the provider. Called in process context, concurrently, from
/// registration until [`IbRegistration`]'s drop has unregistered the device.
pub(crate) trait IbOps: Send + Sync {
    /// `query_device`.
    fn query_device(&self) -> Result<DeviceAttr>;
    /// `query_port` of port `port` (as the core passes it: not checked yet).
    fn query_port(&self, port: u32) -> Result<PortAttr>;
    /// `query_pkey`: entry `index` of the P_Key table of `port`.
    fn query_pkey(&self, port: u32, index: u16) -> Result<u16>;
    /// `query_gid`: entry `index` of the GID table of `port`.
    fn query_gid(&self, port: u32, index: u32) -> Result<[u8; 16]>;
    /// The driver part of `query_device`: `req` the request user space gave, `outlen`
    /// the response length it asked for; writes the response into `out` and returns
    /// its length (0: none).
    fn query_device_uhw(&self, req: &[u8], outlen: usize, out: &mut [u8]) -> Result<usize>;
    /// `alloc_ucontext` with the driver request `req` and a response buffer of
    /// `outlen` bytes; writes the response into `out` and returns the context and the
    /// response length.
    fn alloc_ucontext(
        &self,
        req: &[u8],
        outlen: usize,
        out: &mut [u8],
        cache_line_size: u32,
    ) -> Result<(KBox<dyn IbUcontext>, usize)>;
    /// `alloc_pd`: the new PD's number.
    fn alloc_pd(&self) -> Result<u32>;
    /// The response of a user `alloc_pd` of PD `pdn` into `out`; its length.
    fn alloc_pd_response(&self, pdn: u32, outlen: usize, out: &mut [u8]) -> usize;
    /// `dealloc_pd` of PD `pdn`.
    fn dealloc_pd(&self, pdn: u32) -> Result;
    /// The memory-region verbs (`ffi/rdma/ib_mr.c`).
    fn mr(&self) -> &dyn IbMrOps;
    /// The QP verbs ([`super::ib_qp`]).
    fn qp_ops(&self) -> &dyn super::ib_qp::IbQpOps;
    /// The SRQ, XRC domain and AH verbs (`ffi/rdma/ib_srq.rs`).
    fn srq_ops(&self) -> &dyn super::ib_srq::IbSrqOps;
    /// The CQ verbs ([`super::ib_cq`]).
    fn cq_ops(&self) -> &dyn super::ib_cq::IbCqOps;
}

/// The provider as the shim holds it: a thin pointer to this box is the `rust`
/// pointer of `struct mlx5rs_ib_dev`.
type OpsBox = KBox<Arc<dyn IbOps>>;

extern "C" {
    fn mlx5rs_ib_alloc(rust: *const c_void, init: *const IbInit) -> *mut c_void;
    fn mlx5rs_ib_register(dev: *mut c_void, dma_device: *mut c_void) -> c_int;
    fn mlx5rs_ib_unregister(dev: *mut c_void);
    fn mlx5rs_ib_dealloc(dev: *mut c_void);
    fn mlx5rs_ib_name(dev: *mut c_void) -> *const c_char;
    fn mlx5rs_ib_dispatch_event(dev: *mut c_void, event: u32, port: u32);
}

/// The IB device of one function, registered with the RDMA core; unregistered
/// (every client removed, no op called any more) and freed on drop.
///
/// INVARIANT: `dev` came from `mlx5rs_ib_alloc` with `rust` = the address of `*ops`,
/// and is registered.
pub(crate) struct IbRegistration {
    dev: NonNull<c_void>,
    /// Read by the C side only (through the `rust` pointer).
    _ops: OpsBox,
}

// SAFETY: the shim's device is used only through functions the RDMA core allows from
// any thread (event dispatch queues work; unregister is called once, from drop), and
// `ops` is `Send + Sync`.
unsafe impl Send for IbRegistration {}
// SAFETY: see `Send`; `&self` methods only dispatch events.
unsafe impl Sync for IbRegistration {}

impl IbRegistration {
    /// Allocates the device with `init`, then registers it with the RDMA core as
    /// `mlx5_%d` under `parent` (the PCI function: sysfs parent and DMA device). The
    /// core calls `ops` before this returns (`query_device`, every port).
    pub(crate) fn register(
        parent: &device::Device<device::Bound>,
        init: &IbInit,
        ops: Arc<dyn IbOps>,
    ) -> Result<Self> {
        let ops: OpsBox = KBox::new(ops, GFP_KERNEL)?;
        let rust = core::ptr::from_ref::<Arc<dyn IbOps>>(&ops).cast::<c_void>();
        // SAFETY: `init` is a valid `struct mlx5rs_ib_init` (same layout, size checked
        // on both sides); `rust` points into a box that `Self` keeps until after the
        // device is unregistered, and the trampolines only read through it.
        let dev = unsafe { mlx5rs_ib_alloc(rust, init) };
        let dev = NonNull::new(dev).ok_or(ENOMEM)?;
        // `device::Device` is `#[repr(transparent)]` over `Opaque<bindings::device>`.
        let dma = core::ptr::from_ref(parent)
            .cast_mut()
            .cast::<bindings::device>()
            .cast::<c_void>();
        // SAFETY: `dev` was allocated just above and is not registered; `dma` is the
        // bound PCI function's `struct device`, which outlives the registration (the
        // registration is a stage of that function's binding).
        if let Err(e) = to_result(unsafe { mlx5rs_ib_register(dev.as_ptr(), dma) }) {
            // SAFETY: allocated above, registration failed: nothing else refers to it.
            unsafe { mlx5rs_ib_dealloc(dev.as_ptr()) };
            return Err(e);
        }
        // INVARIANT: allocated with `rust` = `&*ops`, registered.
        Ok(Self { dev, _ops: ops })
    }

    /// The name the core gave the device (`mlx5_0`, ...).
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: the device is registered (type invariant), so its name is set and
        // lives as long as the device, which outlives `&self`.
        unsafe { CStr::from_char_ptr(mlx5rs_ib_name(self.dev.as_ptr())) }
    }

    /// Raises `event` on `port` (1-based; 1 for device events) to the core's clients.
    /// Does not sleep.
    pub(crate) fn dispatch(&self, event: IbEvent, port: u32) {
        // SAFETY: the device is registered (type invariant); the shim passes a valid
        // `enum ib_event_type` value (checked there against the core's enum).
        unsafe { mlx5rs_ib_dispatch_event(self.dev.as_ptr(), event as u32, port) };
    }
}

impl Drop for IbRegistration {
    fn drop(&mut self) {
        // SAFETY: registered (type invariant), unregistered once, here; afterwards no op
        // is called, so `self._ops` may go after the device is freed.
        unsafe { mlx5rs_ib_unregister(self.dev.as_ptr()) };
        // SAFETY: unregistered just above; nothing of ours uses it any more.
        unsafe { mlx5rs_ib_dealloc(self.dev.as_ptr()) };
    }
}

/// The provider behind the shim's `rust` pointer.
///
/// # Safety
///
/// `rust` must be the pointer [`IbRegistration::register`] gave `mlx5rs_ib_alloc`, and
/// the device must not be unregistered yet (the core calls ops only in between).
pub(super) unsafe fn ops<'a>(rust: *const c_void) -> &'a dyn IbOps {
    // SAFETY: by the function's contract `rust` points to the `Arc<dyn IbOps>` in the
    // box an `IbRegistration` holds until after unregistration.
    unsafe { &**rust.cast::<Arc<dyn IbOps>>() }
}

/// The shim's one conversion of a verb's error into what the RDMA core expects back:
/// the kernel error's negative number (`-EINVAL`). The provider's errors come from
/// `crate::errno::Errno` through its one `From` into [`Error`].
pub(super) fn errno(e: Error) -> c_int {
    e.to_errno()
}

/// `query_device` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_query_device(rust: *const c_void, out: *mut DeviceAttr) -> c_int {
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    match unsafe { ops(rust) }.query_device() {
        Ok(a) => {
            // SAFETY: the shim passes a valid, writable `struct mlx5rs_ib_device_attr`
            // of its stack frame (same layout as `DeviceAttr`).
            unsafe { out.write(a) };
            0
        }
        Err(e) => errno(e),
    }
}

/// `query_port` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_query_port(
    rust: *const c_void,
    port: u32,
    out: *mut PortAttr,
) -> c_int {
    // SAFETY: as in `mlx5rs_ib_rs_query_device`.
    match unsafe { ops(rust) }.query_port(port) {
        Ok(a) => {
            // SAFETY: the shim passes a valid, writable `struct mlx5rs_ib_port_attr`.
            unsafe { out.write(a) };
            0
        }
        Err(e) => errno(e),
    }
}

/// `query_pkey` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_query_pkey(
    rust: *const c_void,
    port: u32,
    index: u16,
    out: *mut u16,
) -> c_int {
    // SAFETY: as in `mlx5rs_ib_rs_query_device`.
    match unsafe { ops(rust) }.query_pkey(port, index) {
        Ok(p) => {
            // SAFETY: the shim passes the core's valid, writable `u16 *pkey`.
            unsafe { out.write(p) };
            0
        }
        Err(e) => errno(e),
    }
}

/// `query_gid` trampoline target (`index` checked non-negative by the shim).
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_query_gid(
    rust: *const c_void,
    port: u32,
    index: c_int,
    out: *mut [u8; 16],
) -> c_int {
    let Ok(index) = u32::try_from(index) else {
        return errno(EINVAL);
    };
    // SAFETY: as in `mlx5rs_ib_rs_query_device`.
    match unsafe { ops(rust) }.query_gid(port, index) {
        Ok(g) => {
            // SAFETY: the shim passes a valid, writable 16-byte buffer of its stack.
            unsafe { out.write(g) };
            0
        }
        Err(e) => errno(e),
    }
}

/// The staged request and response buffer of `u`.
///
/// # Safety
///
/// `u` must be a `struct mlx5rs_ib_udata` of the shim: `inp` valid for `inlen` bytes
/// of reading, `out` for `outcap` bytes of writing, both for the call, not aliased.
pub(super) unsafe fn staged<'a>(u: &Udata) -> (&'a [u8], &'a mut [u8], usize) {
    let inlen = usize::try_from(u.inlen).unwrap_or(0);
    let outcap = usize::try_from(u.outcap).unwrap_or(0);
    let inp = if u.inp.is_null() || inlen == 0 {
        &[][..]
    } else {
        // SAFETY: `inp` is not NULL (checked above) and, by the function's contract,
        // valid for reading `inlen` bytes for the call and not written through `out`
        // (not aliased); a `u8` slice needs no alignment.
        unsafe { core::slice::from_raw_parts(u.inp, inlen) }
    };
    let out = if u.out.is_null() || outcap == 0 {
        &mut [][..]
    } else {
        // SAFETY: `out` is not NULL (checked above) and, by the function's contract,
        // valid for writing `outcap` bytes for the call and aliased by nothing else
        // (not by `inp`), so this exclusive slice is its only access.
        unsafe { core::slice::from_raw_parts_mut(u.out, outcap) }
    };
    (inp, out, usize::try_from(u.outlen).unwrap_or(usize::MAX))
}

/// `query_device` trampoline target for the driver part (`uhw`).
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_query_device_uhw(rust: *const c_void, uhw: *mut Udata) -> c_int {
    // SAFETY: the shim passes its staging area (valid, exclusive for the call).
    let u = unsafe { &mut *uhw };
    // SAFETY: the shim's staging area satisfies `staged`'s contract.
    let (inp, out, outlen) = unsafe { staged(u) };
    // SAFETY: as in `mlx5rs_ib_rs_query_device`.
    match unsafe { ops(rust) }.query_device_uhw(inp, outlen, out) {
        Ok(n) => {
            u.resp_len = n as u64;
            0
        }
        Err(e) => errno(e),
    }
}

/// `alloc_ucontext` trampoline target; on success `*uctx` is the context's pointer
/// for `mmap` and `dealloc_ucontext`.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_alloc_ucontext(
    rust: *const c_void,
    udata: *mut Udata,
    cache_line_size: u32,
    uctx: *mut *mut c_void,
) -> c_int {
    // SAFETY: the shim passes its staging area (valid, exclusive for the call).
    let u = unsafe { &mut *udata };
    // SAFETY: the shim's staging area satisfies `staged`'s contract.
    let (inp, out, outlen) = unsafe { staged(u) };
    // SAFETY: as in `mlx5rs_ib_rs_query_device`.
    let r = unsafe { ops(rust) }.alloc_ucontext(inp, outlen, out, cache_line_size);
    let (ctx, n) = match r {
        Ok(v) => v,
        Err(e) => return errno(e),
    };
    let boxed: UcontextBox = match KBox::new(ctx, GFP_KERNEL) {
        Ok(b) => b,
        Err(_) => return errno(ENOMEM),
    };
    u.resp_len = n as u64;
    // SAFETY: the shim passes the address of its context's `rust` field.
    unsafe { uctx.write(KBox::into_raw(boxed).cast::<c_void>()) };
    0
}

/// `dealloc_ucontext` trampoline target: drops the context.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_dealloc_ucontext(_rust: *const c_void, uctx: *mut c_void) {
    if uctx.is_null() {
        return;
    }
    // SAFETY: `uctx` came from `KBox::into_raw` in `mlx5rs_ib_rs_alloc_ucontext` and the
    // shim passes it here once, after which it forgets it.
    drop(unsafe { UcontextBox::from_raw(uctx.cast::<KBox<dyn IbUcontext>>()) });
}

/// `mmap` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_mmap(
    _rust: *const c_void,
    uctx: *const c_void,
    req: *const MmapReq,
    map: *mut MmapMap,
) -> c_int {
    if uctx.is_null() {
        return errno(EINVAL);
    }
    // SAFETY: `uctx` is a live context of `mlx5rs_ib_rs_alloc_ucontext` (the core calls
    // mmap only between alloc and dealloc of the context).
    let ctx = unsafe { &*uctx.cast::<KBox<dyn IbUcontext>>() };
    // SAFETY: the shim passes a valid request of its stack frame.
    let req = unsafe { &*req };
    match ctx.mmap(req) {
        Ok(m) => {
            // SAFETY: the shim passes a valid, writable answer of its stack frame.
            unsafe { map.write(m) };
            0
        }
        Err(e) => errno(e),
    }
}

/// The Rust context behind a shim's `rust` pointer.
///
/// # Safety
///
/// `uctx` must be non-NULL and a live context of `mlx5rs_ib_rs_alloc_ucontext` (not
/// deallocated yet), valid for the lifetime chosen.
unsafe fn live_ucontext<'a>(uctx: *const c_void) -> &'a dyn IbUcontext {
    // SAFETY: by the function's contract `uctx` is the pointer
    // `mlx5rs_ib_rs_alloc_ucontext` wrote, `KBox::into_raw` of a `UcontextBox` (an
    // aligned, initialised `KBox<dyn IbUcontext>`), freed only at dealloc_ucontext,
    // after `'a`; only shared references are made to it.
    unsafe { &**uctx.cast::<KBox<dyn IbUcontext>>() }
}

/// UAR_OBJ_ALLOC's Rust part (ffi/rdma/ib_uar.c): a UAR of `alloc_type` for the context.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_uar_obj_alloc(
    _rust: *const c_void,
    uctx: *const c_void,
    alloc_type: u32,
    out: *mut UarObj,
) -> c_int {
    if uctx.is_null() {
        return errno(EINVAL);
    }
    // SAFETY: the shim passes the context of the ioctl's file, which the core keeps
    // alive for the call (ib_uverbs_get_ucontext).
    match unsafe { live_ucontext(uctx) }.uar_obj_alloc(alloc_type) {
        Ok(o) => {
            // SAFETY: the shim passes a valid, writable answer of its entry.
            unsafe { out.write(o) };
            0
        }
        Err(e) => errno(e),
    }
}

/// A UAR object's entry is freed (mmap_free, ffi/rdma/ib_uar.c): deallocate its UAR.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_uar_obj_free(
    _rust: *const c_void,
    uctx: *const c_void,
    uar: u32,
) {
    if uctx.is_null() {
        return;
    }
    // SAFETY: the core frees a context's entries before dealloc_ucontext (objects are
    // destroyed and mappings zapped first), so the context is alive.
    unsafe { live_ucontext(uctx) }.uar_obj_free(uar);
}

/// The mmap offset of the entry of key `key` (MMAP_OFFSET of UAR_OBJ_ALLOC).
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_entry_mmap_offset(key: u64) -> u64 {
    crate::ib::abi::mmap::entry_offset(key, kernel::page::PAGE_SHIFT as u32)
}

/// The range of keys a UAR object's entry is inserted in.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_uar_obj_keys(first: *mut u64, last: *mut u64) {
    let (f, l) = crate::ib::abi::mmap::UAR_OBJ_KEYS;
    // SAFETY: the shim passes two valid, writable locals.
    unsafe {
        first.write(f);
        last.write(l);
    }
}

/// `alloc_pd` trampoline target; `resp` is NULL for a kernel PD.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_alloc_pd(
    rust: *const c_void,
    pdn: *mut u32,
    resp: *mut Udata,
) -> c_int {
    // SAFETY: as in `mlx5rs_ib_rs_query_device`.
    let o = unsafe { ops(rust) };
    let n = match o.alloc_pd() {
        Ok(n) => n,
        Err(e) => return errno(e),
    };
    // SAFETY: the shim passes the address of its PD's `pdn` field.
    unsafe { pdn.write(n) };
    if !resp.is_null() {
        // SAFETY: the shim passes its response buffer (valid, exclusive for the call).
        let u = unsafe { &mut *resp };
        // SAFETY: the shim's buffer satisfies `staged`'s contract (no request bytes).
        let (_, out, outlen) = unsafe { staged(u) };
        u.resp_len = o.alloc_pd_response(n, outlen, out) as u64;
    }
    0
}

/// `dealloc_pd` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_dealloc_pd(rust: *const c_void, pdn: u32) -> c_int {
    // SAFETY: as in `mlx5rs_ib_rs_query_device`.
    match unsafe { ops(rust) }.dealloc_pd(pdn) {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}
