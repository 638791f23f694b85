// SPDX-License-Identifier: GPL-2.0

//! The CQ verbs through the C shim `ffi/rdma/ib_cq.c`: the provider's [`IbCqOps`] creates
//! CQs ([`IbCq`]), the shim keeps a thin pointer to each ([`CqBox`]) in its
//! `struct mlx5rs_ib_cq` until destroy_cq; [`CqShim`] is that C object as the CQ's
//! event subscription sees it (completion and CQ error events go back through it).

use core::ptr::NonNull;

use kernel::{
    ffi::{c_int, c_void},
    prelude::*,
    sync::Arc,
};

use super::ib::{errno, poll_outcome, IbOps};
pub(crate) use super::ib_abi::CqInit;
use super::ib_abi::Udata;
pub(crate) use super::ib_dp_abi::IbWc;
use super::ib_uctx::{ucontext_ref, IbUcontext};
use super::udata::{set_resp_len, user_data, UserData};
use super::umem::IbDev;

extern "C" {
    fn mlx5rs_ib_cq_comp(cq: *mut c_void);
    fn mlx5rs_ib_cq_err(cq: *mut c_void);
}

/// The shim's `struct mlx5rs_ib_cq` of one CQ, for raising its events.
///
/// INVARIANT: `0` is the pointer the shim passed to create_cq.
pub(crate) struct CqShim(NonNull<c_void>);

// SAFETY: the C object is not tied to a thread; the handlers it calls run in any
// context, the hard IRQ included, as upstream calls them there (ib_uverbs_comp_handler,
// the core's CQ pollers).
unsafe impl Send for CqShim {}
// SAFETY: see `Send`; `&self` methods only call the handlers.
unsafe impl Sync for CqShim {}

impl CqShim {
    /// Calls the CQ's completion handler (`ibcq->comp_handler`) if it has one.
    ///
    /// # Safety
    ///
    /// The CQ's destroy_cq must not have returned yet (the core frees the object
    /// after it).
    pub(crate) unsafe fn completion(&self) {
        // SAFETY: `self.0` is the shim's `struct mlx5rs_ib_cq` passed to create_cq (type
        // invariant); the core frees it only after destroy_cq returns, which by the
        // function's contract it has not, so the C side reads a live object.
        unsafe { mlx5rs_ib_cq_comp(self.0.as_ptr()) }
    }

    /// Raises `IB_EVENT_CQ_ERR` to the CQ's event handler if it has one.
    ///
    /// # Safety
    ///
    /// As [`Self::completion`].
    pub(crate) unsafe fn error(&self) {
        // SAFETY: as in `completion`.
        unsafe { mlx5rs_ib_cq_err(self.0.as_ptr()) }
    }
}

/// What one poll_cq wrote.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Polled {
    /// Completions written.
    pub(crate) n: usize,
    /// One of them at least is a successful QP1 receive, whose `pkey_index` holds the
    /// packet's P_Key for the shim to turn into the index in its port's table.
    pub(crate) qp1_recv: bool,
}

/// One CQ of the provider.
pub(crate) trait IbCq: Send + Sync {
    /// Bytes of one of its CQEs (64 or 128), as the ring has them now.
    fn cqe_bytes(&self) -> u32;
    /// Ends the CQ's events, then DESTROY_CQ; on success the shim drops the CQ (its
    /// memory goes), on failure it keeps it.
    fn destroy(&self) -> Result;
    /// resize_cq of a user CQ of `dev` to `cqe` entries; the new `ibcq->cqe`.
    fn resize(&self, cqe: u32, dev: IbDev<'_>, u: UserData<'_>) -> Result<u32>;
    /// modify_cq: moderation of `count` CQEs or `period` µs.
    fn modify(&self, count: u16, period: u16) -> Result;
    /// poll_cq of a kernel CQ: up to `out.len()` completions written from the start
    /// of `out`.
    fn poll(&self, out: &mut [IbWc]) -> Result<Polled>;
    /// req_notify_cq of a kernel CQ: arms it (`solicited`: for solicited completions
    /// only); with `report_missed`, whether completions may already be waiting.
    fn arm(&self, solicited: bool, report_missed: bool) -> Result<bool>;
    /// A drain after the device's fatal error: marks the CQ notified; whether it was
    /// already (its completion handler may be running).
    fn reset_notify(&self) -> bool {
        false
    }
}

/// A CQ as the shim holds it: a thin pointer to this box is the `rust` pointer of
/// `struct mlx5rs_ib_cq`.
pub(crate) type CqBox = KBox<Arc<dyn IbCq>>;

/// A created CQ.
pub(crate) struct CqCreated {
    /// The CQ.
    pub(crate) cq: Arc<dyn IbCq>,
    /// Its number.
    pub(crate) cqn: u32,
    /// Ring entries − 1 (`ibcq->cqe`).
    pub(crate) ncqe: u32,
    /// Response bytes written (user CQs).
    pub(crate) resp_len: usize,
}

/// The CQ verbs of the provider.
pub(crate) trait IbCqOps: Send + Sync {
    /// create_cq on `dev`: a kernel CQ when `user` is `None`, else a user CQ of the
    /// context with its driver data.
    fn create_cq(
        &self,
        init: &CqInit,
        dev: IbDev<'_>,
        user: Option<(&dyn IbUcontext, UserData<'_>)>,
        shim: CqShim,
    ) -> Result<CqCreated>;
}

/// The CQ verbs behind the shim's `rust` pointer.
///
/// # Safety
///
/// As [`super::ib::ops`].
unsafe fn cq_ops<'a>(rust: *const c_void) -> &'a dyn IbCqOps {
    // SAFETY: our contract is `ops`' own (a registered device's `rust` pointer, the
    // device registered for `'a`).
    let o: &'a dyn IbOps = unsafe { super::ib::ops(rust) };
    o.cq_ops()
}

/// `create_cq` trampoline target (kernel and user).
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_create_cq(
    rust: *const c_void,
    uctx: *const c_void,
    init: *const CqInit,
    udata: *mut Udata,
    cq: *mut c_void,
    cq_rust: *mut *mut c_void,
    cqn: *mut u32,
    ncqe: *mut c_int,
    ibdev: *mut c_void,
) -> c_int {
    let Some(shim) = NonNull::new(cq) else {
        return errno(EINVAL);
    };
    // INVARIANT: the pointer the shim passed to create_cq.
    let shim = CqShim(shim);
    // SAFETY: the shim passes a valid `struct mlx5rs_ib_cq_init` of its stack frame.
    let init = unsafe { &*init };
    // SAFETY: the shim passes `ibcq->device` of this create_cq, valid for the call.
    let Some(dev) = (unsafe { IbDev::from_raw(ibdev) }) else {
        return errno(EINVAL);
    };
    // SAFETY: `uctx` is NULL or a live context of `mlx5rs_ib_rs_alloc_ucontext` (the
    // core creates objects only between alloc and dealloc of their context).
    let ctx = unsafe { ucontext_ref(uctx) };
    let resp = if ctx.is_some() {
        udata
    } else {
        core::ptr::null_mut()
    };
    // SAFETY: NULL or the shim's staging area (valid, exclusive for the call).
    let user = ctx.zip(unsafe { user_data(resp) });
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    let c = match unsafe { cq_ops(rust) }.create_cq(init, dev, user, shim) {
        Ok(c) => c,
        Err(e) => return errno(e),
    };
    let (Ok(n), Ok(boxed)) = (c_int::try_from(c.ncqe), KBox::new(c.cq.clone(), GFP_KERNEL)) else {
        // Undo: the CQ was created; a failing destroy hands the memory the device may
        // still write to `Hw::keep`, and the rest goes (never leaked: it holds the `Hw`).
        let _ = c.cq.destroy();
        drop(c.cq);
        return errno(ENOMEM);
    };
    // SAFETY: `resp` is NULL or the shim's staging area (trampoline contract).
    unsafe { set_resp_len(resp, c.resp_len) };
    let boxed: CqBox = boxed;
    // SAFETY: the shim passes the addresses of its CQ's `rust` and `cqn` fields and of
    // a local `int`.
    unsafe {
        cqn.write(c.cqn);
        ncqe.write(n);
        cq_rust.write(KBox::into_raw(boxed).cast::<c_void>());
    }
    0
}

/// The CQ behind a shim's `rust` pointer.
///
/// # Safety
///
/// `cq_rust` must be a pointer `mlx5rs_ib_rs_create_cq` wrote and
/// `mlx5rs_ib_rs_destroy_cq` did not free.
unsafe fn cq_of<'a>(cq_rust: *mut c_void) -> &'a Arc<dyn IbCq> {
    // SAFETY: by the function's contract `cq_rust` is the `KBox::into_raw` of a CqBox
    // (an aligned, initialised `Arc<dyn IbCq>`) that create_cq wrote and destroy_cq
    // has not freed; only shared references are made to it.
    unsafe { &*cq_rust.cast::<Arc<dyn IbCq>>() }
}

/// The CQE size (bytes) of a live CQ: what create_qp needs for scatter-to-CQE.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]): `cq_rust` is NULL
/// or a live CQ's `rust` pointer.
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_cq_cqe_size(cq_rust: *mut c_void) -> u32 {
    if cq_rust.is_null() {
        return 0;
    }
    // SAFETY: the shim passes the live `rust` pointer of a CQ the core holds for the
    // call (a QP being created holds its CQs).
    unsafe { cq_of(cq_rust) }.cqe_bytes()
}

/// `destroy_cq` trampoline target: frees the CQ on success only.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_destroy_cq(_rust: *const c_void, cq_rust: *mut c_void) -> c_int {
    if cq_rust.is_null() {
        return 0;
    }
    // SAFETY: the shim passes its CQ's live `rust` pointer.
    if let Err(e) = unsafe { cq_of(cq_rust) }.destroy() {
        return errno(e);
    }
    // SAFETY: from `KBox::into_raw` in `mlx5rs_ib_rs_create_cq`; the shim forgets it
    // after a successful destroy.
    drop(unsafe { CqBox::from_raw(cq_rust.cast::<Arc<dyn IbCq>>()) });
    0
}

/// `resize_user_cq` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_resize_cq(
    _rust: *const c_void,
    cq_rust: *mut c_void,
    cqe: u32,
    udata: *mut Udata,
    ncqe: *mut c_int,
    ibdev: *mut c_void,
) -> c_int {
    if cq_rust.is_null() {
        return errno(EINVAL);
    }
    // SAFETY: the shim passes its staging area (valid, exclusive for the call).
    let Some(ud) = (unsafe { user_data(udata) }) else {
        return errno(EINVAL);
    };
    // SAFETY: the shim passes `ibcq->device` of this resize_cq, valid for the call.
    let Some(dev) = (unsafe { IbDev::from_raw(ibdev) }) else {
        return errno(EINVAL);
    };
    // SAFETY: the shim passes its CQ's live `rust` pointer.
    match unsafe { cq_of(cq_rust) }.resize(cqe, dev, ud) {
        Ok(n) => match c_int::try_from(n) {
            Ok(n) => {
                // SAFETY: the shim passes the address of a local `int`.
                unsafe { ncqe.write(n) };
                0
            }
            Err(_) => errno(EINVAL),
        },
        Err(e) => errno(e),
    }
}

/// `modify_cq` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_modify_cq(
    _rust: *const c_void,
    cq_rust: *mut c_void,
    count: u16,
    period: u16,
) -> c_int {
    if cq_rust.is_null() {
        return errno(EINVAL);
    }
    // SAFETY: the shim passes its CQ's live `rust` pointer.
    match unsafe { cq_of(cq_rust) }.modify(count, period) {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}

/// `poll_cq` trampoline target: up to `n` completions into the core's `wc` array;
/// returns [`poll_outcome`]'s value: their number (or a negative errno), and whether
/// one of them is a successful QP1 receive (see [`Polled::qp1_recv`]).
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]); `wc` points to
/// `n` writable `struct ib_wc`.
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_poll_cq(cq_rust: *mut c_void, wc: *mut IbWc, n: u32) -> u64 {
    if cq_rust.is_null() || wc.is_null() {
        return poll_outcome(Err(EINVAL));
    }
    let Ok(n) = usize::try_from(n) else {
        return poll_outcome(Err(EINVAL));
    };
    // SAFETY: the shim passes the core's array of `n` `struct ib_wc`, exclusive for
    // the call, whose layout `IbWc` mirrors (size, alignment and offsets checked on
    // both sides at build time); `IbWc` is plain integers.
    let out = unsafe { core::slice::from_raw_parts_mut(wc, n) };
    // SAFETY: the shim passes its CQ's live `rust` pointer (the core polls a CQ only
    // between create and destroy).
    let polled = unsafe { cq_of(cq_rust) }.poll(out);
    // At most `n`, a `u32` the shim passed as an `int` count.
    poll_outcome(polled.map(|p| (c_int::try_from(p.n).unwrap_or(0), p.qp1_recv)))
}

/// `req_notify_cq` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_req_notify_cq(
    cq_rust: *mut c_void,
    solicited: u8,
    report_missed: u8,
) -> c_int {
    if cq_rust.is_null() {
        return errno(EINVAL);
    }
    // SAFETY: the shim passes its CQ's live `rust` pointer.
    match unsafe { cq_of(cq_rust) }.arm(solicited != 0, report_missed != 0) {
        Ok(missed) => c_int::from(missed),
        Err(e) => errno(e),
    }
}

/// The drain's CQ notification after the device's fatal error (`ffi/rdma/ib_qp.c`):
/// 1 if the CQ was already notified.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_cq_reset_notify(cq_rust: *mut c_void) -> c_int {
    if cq_rust.is_null() {
        return 0;
    }
    // SAFETY: the shim passes its CQ's live `rust` pointer (a drain runs between the
    // QP's create and destroy, and the QP holds its CQs).
    c_int::from(unsafe { cq_of(cq_rust) }.reset_notify())
}
