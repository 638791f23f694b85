// SPDX-License-Identifier: GPL-2.0

//! The memory-region verbs through the C shim `ffi/rdma/ib_mr.c`: the trampoline targets
//! of get_dma_mr, reg_user_mr, rereg_user_mr and dereg_mr, and the [`IbMrOps`] trait
//! the provider implements for them ([`super::ib::IbOps::mr_ops`]).
//!
//! An MR's Rust state is a [`Mr`] in a box whose pointer is the `rust` field of
//! `struct mlx5rs_ib_mr`; its keys go back in `struct mlx5rs_ib_mr_keys`, which the
//! shim copies into `ibmr.lkey` / `ibmr.rkey`. dereg_mr drops the box only when the
//! device destroyed the mkey (upstream keeps the MR when DESTROY_MKEY fails).

use kernel::{
    error::to_result,
    ffi::{c_int, c_void},
    prelude::*,
};

use super::{
    ib::{errno, IbOps},
    umem::IbDev,
};
pub(crate) use crate::ib::mr::Mr;

/// `struct mlx5rs_ib_mr_keys`.
#[repr(C)]
pub(crate) struct MrKeys {
    lkey: u32,
    rkey: u32,
}
const _: () = assert!(core::mem::size_of::<MrKeys>() == 8);

/// A rereg_user_mr request as the core passes it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReregReq {
    /// `IB_MR_REREG_*` flags.
    pub(crate) flags: u32,
    /// New range (with `IB_MR_REREG_TRANS`).
    pub(crate) start: u64,
    /// Its length.
    pub(crate) len: u64,
    /// Its IOVA.
    pub(crate) iova: u64,
    /// New access flags (with `IB_MR_REREG_ACCESS`).
    pub(crate) access: u32,
    /// The PD the MR ends up in (the old one without `IB_MR_REREG_PD`).
    pub(crate) pdn: u32,
}

/// What the core asks of the provider for memory regions (process context).
pub(crate) trait IbMrOps: Send + Sync {
    /// get_dma_mr on PD `pdn` with IB `access` flags.
    fn get_dma_mr(&self, pdn: u32, access: u32) -> Result<KBox<Mr>>;
    /// reg_user_mr of `[start, start + len)` of the calling process at `iova`.
    fn reg_user_mr(
        &self,
        dev: IbDev<'_>,
        pdn: u32,
        start: u64,
        len: u64,
        iova: u64,
        access: u32,
    ) -> Result<KBox<Mr>>;
    /// rereg_user_mr of `old`: `None` when changed in place, else the MR the core puts
    /// in its place (and then deregisters `old`).
    fn rereg_user_mr(
        &self,
        dev: IbDev<'_>,
        old: &mut Mr,
        req: ReregReq,
    ) -> Result<Option<KBox<Mr>>>;
    /// dereg_mr: revokes the mkey back to the MR cache or destroys it; the caller frees
    /// `mr` on success.
    fn dereg_mr(&self, dev: IbDev<'_>, mr: &mut Mr) -> Result;
    /// Destroys the MR cache's free mkeys and stops caching: every MR is gone and the
    /// UMR QP's PD is destroyed next.
    fn flush_cache(&self);
    /// alloc_mr of type `IB_MR_TYPE_MEM_REG` on PD `pdn` with room for `ndescs`
    /// translation entries of pages of `1 << page_shift` bytes.
    fn alloc_mr(&self, pdn: u32, ndescs: u32, page_shift: u8) -> Result<KBox<Mr>>;
}

/// Hands a new MR to the shim: its keys into `*k`, the MR itself into `*out`.
///
/// # Safety
///
/// `k` and `out` are valid for writing (the shim's `struct mlx5rs_ib_mr_keys` of its
/// frame and the address of its MR's `rust` field), and the shim takes ownership of
/// the MR written to `*out` (it passes it back once, to a dereg or rereg trampoline).
unsafe fn give(m: KBox<Mr>, k: *mut MrKeys, out: *mut *mut c_void) {
    let (lkey, rkey) = m.keys();
    // SAFETY: by the function's contract `k` and `out` are valid, aligned for writing
    // their types; the box leaves our ownership here, and the shim is the only
    // holder of the raw pointer from now on.
    unsafe {
        k.write(MrKeys { lkey, rkey });
        out.write(KBox::into_raw(m).cast::<c_void>());
    }
}

/// The MR verbs behind the shim's `rust` pointer.
///
/// # Safety
///
/// As [`super::ib::ops`].
unsafe fn mr_ops<'a>(rust: *const c_void) -> &'a dyn IbMrOps {
    // SAFETY: our contract is `ops`' own (a registered device's `rust` pointer, the
    // device registered for `'a`).
    let o: &'a dyn IbOps = unsafe { super::ib::ops(rust) };
    o.mr_ops()
}

/// `get_dma_mr` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_get_dma_mr(
    rust: *const c_void,
    pdn: u32,
    acc: c_int,
    k: *mut MrKeys,
    mr: *mut *mut c_void,
) -> c_int {
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    let o = unsafe { mr_ops(rust) };
    // The core's `int` flags as the bits they are.
    match o.get_dma_mr(pdn, acc as u32) {
        Ok(m) => {
            // SAFETY: the trampoline contract: `k` and `mr` are the shim's outputs.
            unsafe { give(m, k, mr) };
            0
        }
        Err(e) => errno(e),
    }
}

/// `reg_user_mr` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_reg_user_mr(
    rust: *const c_void,
    ibdev: *mut c_void,
    pdn: u32,
    start: u64,
    len: u64,
    iova: u64,
    acc: c_int,
    k: *mut MrKeys,
    mr: *mut *mut c_void,
) -> c_int {
    // SAFETY: the shim passes the PD's `struct ib_device`, valid for the call.
    let Some(dev) = (unsafe { IbDev::from_raw(ibdev) }) else {
        return errno(EINVAL);
    };
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    let o = unsafe { mr_ops(rust) };
    match o.reg_user_mr(dev, pdn, start, len, iova, acc as u32) {
        Ok(m) => {
            // SAFETY: the trampoline contract: `k` and `mr` are the shim's outputs.
            unsafe { give(m, k, mr) };
            0
        }
        Err(e) => errno(e),
    }
}

/// `rereg_user_mr` trampoline target; `*mr` stays NULL when changed in place.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_rereg_user_mr(
    rust: *const c_void,
    ibdev: *mut c_void,
    old: *mut c_void,
    flags: c_int,
    start: u64,
    len: u64,
    iova: u64,
    acc: c_int,
    pdn: u32,
    k: *mut MrKeys,
    mr: *mut *mut c_void,
) -> c_int {
    // SAFETY: the shim passes the MR's `struct ib_device`, valid for the call.
    let Some(dev) = (unsafe { IbDev::from_raw(ibdev) }) else {
        return errno(EINVAL);
    };
    if old.is_null() {
        return errno(EINVAL);
    }
    // SAFETY: `old` is the `rust` pointer of a live MR (from `give`); the core holds
    // the MR's uobject for writing across rereg, so nothing else uses it.
    let old = unsafe { &mut *old.cast::<Mr>() };
    let req = ReregReq {
        flags: flags as u32,
        start,
        len,
        iova,
        access: acc as u32,
        pdn,
    };
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    let o = unsafe { mr_ops(rust) };
    match o.rereg_user_mr(dev, old, req) {
        Ok(Some(m)) => {
            // SAFETY: the trampoline contract: `k` and `mr` are the shim's outputs.
            unsafe { give(m, k, mr) };
            0
        }
        Ok(None) => {
            let (lkey, rkey) = old.keys();
            // SAFETY: as in `give`.
            unsafe { k.write(MrKeys { lkey, rkey }) };
            0
        }
        Err(e) => errno(e),
    }
}

/// `dereg_mr` trampoline target: on success the MR's state is freed (unpinning its
/// pages) and the shim frees its structure.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_dereg_mr(
    rust: *const c_void,
    ibdev: *mut c_void,
    mr: *mut c_void,
) -> c_int {
    if mr.is_null() {
        return 0;
    }
    // SAFETY: the shim passes the MR's `struct ib_device`, valid for the call.
    let Some(dev) = (unsafe { IbDev::from_raw(ibdev) }) else {
        return errno(EINVAL);
    };
    // SAFETY: `mr` came from `KBox::into_raw` in `give`; the core deregisters an MR
    // once, with no other verb on it running.
    let mut m = unsafe { KBox::from_raw(mr.cast::<Mr>()) };
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    let o = unsafe { mr_ops(rust) };
    match o.dereg_mr(dev, &mut m) {
        Ok(()) => {
            drop(m);
            0
        }
        Err(e) => {
            // The shim keeps its structure and this state: give the box back.
            let _ = KBox::into_raw(m);
            errno(e)
        }
    }
}

/// Called by the shim once the device is unregistered: the MR cache's free mkeys go.
///
/// # Safety
///
/// `rust` is the `rust` pointer of a device being unregistered, whose MRs are all
/// gone; no other verb runs.
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_mr_cache_flush(rust: *const c_void) {
    // SAFETY: by the function's contract, the provider behind `rust` is alive (it is
    // dropped only after unregistration returned).
    let o = unsafe { mr_ops(rust) };
    o.flush_cache();
}

extern "C" {
    fn mlx5rs_ib_umr_res(ibdev: *mut c_void, pdn: *mut u32, lkey: *mut u32) -> c_int;
    fn mlx5rs_ib_umr_run(ibdev: *mut c_void, key: u32, segs: *const c_void, len: u32) -> c_int;
}

/// The device's UMR QP (`ffi/rdma/ib_umr.c`), which the MR cache posts its UMR WQEs on.
#[derive(Clone, Copy)]
pub(crate) struct UmrQp<'a>(IbDev<'a>);

impl<'a> UmrQp<'a> {
    /// The UMR QP of the device a verb was called on.
    pub(crate) fn of(dev: IbDev<'a>) -> Self {
        Self(dev)
    }

    /// Its PD's number and local DMA lkey; the QP is made on first use.
    ///
    /// # Errors
    ///
    /// `EIO` when UMR is broken (logged once by the shim), or the error of the verb
    /// that could not make the QP (UMR broken from then on).
    pub(crate) fn res(&self) -> Result<(u32, u32)> {
        let (mut pdn, mut lkey) = (0u32, 0u32);
        // SAFETY: `IbDev`'s invariant: a registered device of this driver, valid for
        // the call; the outputs are ours.
        to_result(unsafe { mlx5rs_ib_umr_res(self.0.as_raw(), &mut pdn, &mut lkey) })?;
        Ok((pdn, lkey))
    }

    /// Posts one UMR WQE of mkey `key` (`segs`: what follows its control segment,
    /// from `ib/mr/umr.rs`) and waits for its completion.
    ///
    /// # Errors
    ///
    /// `EIO`: UMR broken, or completed in error (the mkey unchanged, logged with the
    /// syndrome); `ETIMEDOUT`: no completion in time (the mkey's state unknown, UMR
    /// broken from then on); `EINVAL` for a length other than 112 or 128; post_send's
    /// errors (nothing posted).
    pub(crate) fn run(&self, key: u32, segs: &[u8]) -> Result {
        let len = u32::try_from(segs.len()).map_err(|_| EINVAL)?;
        // SAFETY: `IbDev`'s invariant; `segs` is readable for the call, which waits for
        // the WQE's completion (or gives up on it: the shim copies the bytes into the
        // send queue before it returns from posting).
        to_result(unsafe { mlx5rs_ib_umr_run(self.0.as_raw(), key, segs.as_ptr().cast(), len) })
    }
}

/// `alloc_mr` trampoline target (the shim owns the translation list).
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_alloc_mr(
    rust: *const c_void,
    pdn: u32,
    ndescs: u32,
    page_shift: u32,
    k: *mut MrKeys,
    mr: *mut *mut c_void,
) -> c_int {
    let Ok(shift) = u8::try_from(page_shift) else {
        return errno(EINVAL);
    };
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    let o = unsafe { mr_ops(rust) };
    match o.alloc_mr(pdn, ndescs, shift) {
        Ok(m) => {
            // SAFETY: the trampoline contract: `k` and `mr` are the shim's outputs.
            unsafe { give(m, k, mr) };
            0
        }
        Err(e) => errno(e),
    }
}
