// SPDX-License-Identifier: GPL-2.0

//! The user-context verbs through the C shim `ffi/rdma/ib_uctx.c` (and the UAR
//! objects of `ffi/rdma/ib_uar.c`): `alloc_ucontext` asks the provider's
//! [`IbUctxOps`] (through [`IbOps::uctx_ops`]) for an [`IbUcontext`], whose thin
//! pointer ([`UcontextBox`]) the shim keeps in `struct mlx5rs_ib_ucontext` until
//! `dealloc_ucontext`; `mmap` and the UAR objects' allocation and release are asked
//! of that context. The other families find the context of a user verb with
//! [`ucontext_ref`].

use kernel::{
    ffi::{c_int, c_void},
    prelude::*,
    sync::Arc,
};

use super::ib::{errno, IbOps};
use super::ib_abi::Udata;
pub(crate) use super::ib_abi::{MmapMap, MmapReq, UarObj};
use super::udata::{set_resp_len, user_data, UserData};
use crate::ib::umem::DbPages;

/// A user context of the provider, created by [`IbOps::alloc_ucontext`]; dropped at
/// `dealloc_ucontext` (after the core destroyed the context's objects and zapped its
/// mappings).
pub(crate) trait IbUcontext: Send + Sync {
    /// `mmap` of the context: the page of BAR 0 `req` maps.
    fn mmap(&self, req: &MmapReq) -> Result<MmapMap>;
    /// `query_ucontext` (UVERBS_METHOD_QUERY_CONTEXT, libmlx5's `ibv_import_device`):
    /// the alloc_ucontext response again, for a user buffer of `outlen` bytes, written
    /// into `out` as `ib_respond_udata` would (zeros after it).
    fn query(&self, outlen: usize, out: &mut [u8]);
    /// The context's doorbell-record pages (user CQs, QPs, SRQs map their records
    /// through it, [`crate::ib::umem`]).
    fn db_pages(&self) -> &Arc<DbPages>;
    /// The context's CQE version (0 or 1).
    fn cqe_version(&self) -> u8;
    /// The context's bfregs, which its QPs ring ([`crate::ib::uctx::uar`]); set from
    /// allocation on (`None` only for a context still being built).
    fn qp_bfregs(&self) -> Option<&Arc<crate::ib::uctx::uar::BfregTable>>;
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

extern "C" {
    fn mlx5rs_ib_udata_uctx(udata: *mut c_void) -> *mut c_void;
}

/// The Rust user context (`rust` of `struct mlx5rs_ib_ucontext`, a
/// [`UcontextBox`]'s thin pointer) of the context a verb's `udata`
/// belongs to; NULL for a kernel verb.
///
/// # Safety
///
/// `udata` must be NULL or the `struct ib_udata *` the core passed to the current
/// verb.
pub(crate) unsafe fn uctx_of_udata(udata: *mut c_void) -> *mut c_void {
    // SAFETY: the C side takes NULL (a kernel verb) or reads the `struct ib_udata` the
    // core passed to the current verb, which by the function's contract `udata` is
    // and which lives for the verb.
    unsafe { mlx5rs_ib_udata_uctx(udata) }
}

/// The user-context verbs of the provider.
pub(crate) trait IbUctxOps: Send + Sync {
    /// `alloc_ucontext` with the driver data `u` and the host's cache line size:
    /// writes the response into `u.out` and returns the context and the response
    /// length.
    fn alloc_ucontext(
        &self,
        u: UserData<'_>,
        cache_line_size: u32,
    ) -> Result<(KBox<dyn IbUcontext>, usize)>;
}

/// The user-context verbs behind the shim's `rust` pointer.
///
/// # Safety
///
/// As [`super::ib::ops`].
unsafe fn uctx_ops<'a>(rust: *const c_void) -> &'a dyn IbUctxOps {
    // SAFETY: our contract is `ops`' own (a registered device's `rust` pointer, the
    // device registered for `'a`).
    let o: &'a dyn IbOps = unsafe { super::ib::ops(rust) };
    o.uctx_ops()
}

/// `alloc_ucontext` trampoline target; on success `*uctx` is the context's pointer
/// for `mmap` and `dealloc_ucontext`.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_alloc_ucontext(
    rust: *const c_void,
    udata: *mut Udata,
    cache_line_size: u32,
    uctx: *mut *mut c_void,
) -> c_int {
    // SAFETY: the shim passes its staging area (valid, exclusive for the call).
    let Some(u) = (unsafe { user_data(udata) }) else {
        return errno(EINVAL);
    };
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    let r = unsafe { uctx_ops(rust) }.alloc_ucontext(u, cache_line_size);
    let (ctx, n) = match r {
        Ok(v) => v,
        Err(e) => return errno(e),
    };
    let boxed: UcontextBox = match KBox::new(ctx, GFP_KERNEL) {
        Ok(b) => b,
        Err(_) => return errno(ENOMEM),
    };
    // SAFETY: `udata` is NULL or the shim's staging area (trampoline contract).
    unsafe { set_resp_len(udata, n) };
    // SAFETY: the shim passes the address of its context's `rust` field.
    unsafe { uctx.write(KBox::into_raw(boxed).cast::<c_void>()) };
    0
}

/// `dealloc_ucontext` trampoline target: drops the context.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
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
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
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

/// `query_ucontext` trampoline target: the context's alloc_ucontext response for a
/// user buffer of `outlen` bytes, into the shim's `size` bytes at `out`.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]); `out` is valid
/// for writes of `size` bytes.
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_query_ucontext(
    _rust: *const c_void,
    uctx: *const c_void,
    outlen: c_int,
    out: *mut u8,
    size: usize,
) -> c_int {
    let Ok(outlen) = usize::try_from(outlen) else {
        return errno(EINVAL);
    };
    if uctx.is_null() || out.is_null() {
        return errno(EINVAL);
    }
    // SAFETY: the shim passes its buffer of `size` bytes, exclusive for the call.
    let out = unsafe { core::slice::from_raw_parts_mut(out, size) };
    // SAFETY: the core calls query_ucontext on the context of the ioctl's file, which
    // it keeps alive for the call (ib_uverbs_get_ucontext).
    unsafe { live_ucontext(uctx) }.query(outlen, out);
    0
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
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
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
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
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
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_entry_mmap_offset(key: u64) -> u64 {
    crate::ib::abi::mmap::entry_offset(key, kernel::page::PAGE_SHIFT as u32)
}

/// The range of keys a UAR object's entry is inserted in.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_uar_obj_keys(first: *mut u64, last: *mut u64) {
    let (f, l) = crate::ib::abi::mmap::UAR_OBJ_KEYS;
    // SAFETY: the shim passes two valid, writable locals.
    unsafe {
        first.write(f);
        last.write(l);
    }
}
