// SPDX-License-Identifier: GPL-2.0

//! The Rust side of the SRQ and XRC domain trampolines of `ffi/rdma/ib_srq.c`: each
//! `extern "C"` function finds the provider behind the device's `rust` pointer, asks
//! its [`IbSrqOps`] (through [`IbOps::srq_ops`]) with the plain structures of
//! [`super::ib_srq_abi`], and writes the answer back. An SRQ is a boxed
//! [`IbSrq`] whose thin pointer the shim keeps in `struct mlx5rs_ib_srq`; it is
//! dropped once its destroy command succeeded. An SRQ's async events go back to the
//! core's handler through [`SrqShim`].

use core::ptr::NonNull;

use kernel::{
    ffi::{c_int, c_void},
    prelude::*,
};

use super::ib::{errno, ops, post_outcome, IbOps};
use super::ib_abi::{IbEvent, Udata};
use super::ib_qp::RecvChain;
pub(crate) use super::ib_srq_abi::{SrqAttr, SrqInit};
use super::ib_uctx::{ucontext_ref, uctx_of_udata, IbUcontext};
use super::udata::{set_resp_len, user_data, UserData};
use super::umem::IbDev;

extern "C" {
    fn mlx5rs_ib_srq_event(ibsrq: *mut c_void, event: u32);
}

/// The core's `struct ib_srq` of one SRQ, for raising its async events.
///
/// INVARIANT: `0` is the pointer the shim passed to create_srq.
pub(crate) struct SrqShim(NonNull<c_void>);

// SAFETY: the C object is not tied to a thread; its handler runs in any process
// context.
unsafe impl Send for SrqShim {}
// SAFETY: see `Send`; `&self` methods only call the handler.
unsafe impl Sync for SrqShim {}

impl SrqShim {
    /// Raises `event` (an SRQ event) to the SRQ's event handler, if it has one.
    ///
    /// # Safety
    ///
    /// The SRQ's destroy_srq must not have succeeded yet (the core frees the object
    /// after it).
    pub(crate) unsafe fn raise(&self, event: IbEvent) {
        // SAFETY: `self.0` is the shim's `struct mlx5rs_ib_srq` passed to create_srq
        // (type invariant); the core frees it only after a destroy_srq that succeeded,
        // which by the function's contract has not happened: a live object.
        unsafe { mlx5rs_ib_srq_event(self.0.as_ptr(), event as u32) }
    }
}

/// A shared receive queue of the provider, created by [`IbSrqOps::create_srq`].
pub(crate) trait IbSrq: Send + Sync {
    /// `modify_srq` with `ib_srq_attr_mask` `mask` and the new limit.
    fn modify(&self, mask: u32, limit: u32) -> Result;
    /// `query_srq`.
    fn query(&self) -> Result<SrqAttr>;
    /// `destroy_srq`'s command; the queue's memory goes when the box is dropped, which
    /// the trampoline does only after this succeeded.
    fn destroy(&self) -> Result;
    /// `post_srq_recv`: the requests posted, and the error of the first one not
    /// posted.
    fn post_recv(&self, _wrs: &mut RecvChain<'_>) -> (usize, Result) {
        (0, Err(EOPNOTSUPP))
    }
}

/// An SRQ as the shim holds it: a thin pointer to this box.
type SrqBox = KBox<KBox<dyn IbSrq>>;

/// A created SRQ: the object, what the core is told, the user response's length.
pub(crate) struct NewSrq {
    /// The queue.
    pub(crate) srq: KBox<dyn IbSrq>,
    /// Its number (`srqn`, the core's `ext.xrc.srq_num`).
    pub(crate) srqn: u32,
    /// WQEs it holds (the core's `max_wr`).
    pub(crate) max_wr: u32,
    /// Bytes of the user response written (0 for a kernel SRQ).
    pub(crate) resp_len: usize,
}

/// The SRQ and XRC domain verbs. Called in process context, concurrently, while the
/// device is registered.
pub(crate) trait IbSrqOps: Send + Sync {
    /// `alloc_xrcd`: the new domain's number.
    fn alloc_xrcd(&self) -> Result<u32>;
    /// `dealloc_xrcd` of domain `xrcdn`.
    fn dealloc_xrcd(&self, xrcdn: u32) -> Result;
    /// `create_srq` on `dev`; `user` (the context and the driver data) for a user
    /// SRQ; `shim` the core's SRQ, whose handler the SRQ's async events go to.
    fn create_srq(
        &self,
        init: &SrqInit,
        dev: IbDev<'_>,
        user: Option<(&dyn IbUcontext, UserData<'_>)>,
        shim: SrqShim,
    ) -> Result<NewSrq>;
}

/// The SRQ behind the shim's pointer.
///
/// # Safety
///
/// `srq` must be null or a pointer [`mlx5rs_ib_rs_create_srq`] returned that has not
/// been destroyed yet.
unsafe fn srq_of<'a>(srq: *const c_void) -> Option<&'a dyn IbSrq> {
    if srq.is_null() {
        return None;
    }
    // SAFETY: not NULL (checked above), so by the function's contract the
    // `KBox::into_raw` of an SrqBox (an aligned, initialised `KBox<dyn IbSrq>`) that
    // create_srq wrote and no destroy has freed; only shared references are made.
    Some(unsafe { &**srq.cast::<KBox<dyn IbSrq>>() })
}

/// The SRQ verbs of the provider behind the shim's `rust` pointer.
///
/// # Safety
///
/// As [`ops`]: `rust` is the pointer of a registered device, and the provider
/// outlives the lifetime chosen.
unsafe fn srq_ops<'a>(rust: *const c_void) -> &'a dyn IbSrqOps {
    // SAFETY: our contract is `ops`' own (a registered device's `rust` pointer, the
    // provider alive for `'a`).
    let o: &'a dyn IbOps = unsafe { ops(rust) };
    o.srq_ops()
}

/// `alloc_xrcd` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_alloc_xrcd(rust: *const c_void, xrcdn: *mut u32) -> c_int {
    // SAFETY: the trampoline contract: `rust` is a registered device's.
    match unsafe { srq_ops(rust) }.alloc_xrcd() {
        Ok(n) => {
            // SAFETY: the shim passes the address of its XRCD's `xrcdn` field.
            unsafe { xrcdn.write(n) };
            0
        }
        Err(e) => errno(e),
    }
}

/// `dealloc_xrcd` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_dealloc_xrcd(rust: *const c_void, xrcdn: u32) -> c_int {
    // SAFETY: the trampoline contract: `rust` is a registered device's.
    match unsafe { srq_ops(rust) }.dealloc_xrcd(xrcdn) {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}

/// `create_srq` trampoline target; `staged` and `udata` (the staged driver data and
/// the core's `struct ib_udata`) are NULL for a kernel SRQ, `ibdev` the SRQ's device.
/// On success `init.max_wr` / `init.srqn` are set and `*srq` is the queue's pointer.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_create_srq(
    rust: *const c_void,
    init: *mut SrqInit,
    staged_u: *mut Udata,
    ibdev: *mut c_void,
    udata: *mut c_void,
    ibsrq: *mut c_void,
    srq: *mut *mut c_void,
) -> c_int {
    let Some(ibsrq) = NonNull::new(ibsrq) else {
        return errno(EINVAL);
    };
    // INVARIANT: the core's SRQ of this create_srq.
    let shim = SrqShim(ibsrq);
    // SAFETY: the shim passes a valid, exclusive `struct mlx5rs_ib_srq_init` of its
    // stack frame.
    let init = unsafe { &mut *init };
    // SAFETY: `ibdev` is the device of the SRQ the core passed to this verb.
    let Some(dev) = (unsafe { IbDev::from_raw(ibdev) }) else {
        return errno(EINVAL);
    };
    let staged_u = if udata.is_null() {
        core::ptr::null_mut()
    } else {
        staged_u
    };
    // SAFETY: the shim passes NULL or its staging area (valid, exclusive for the call).
    let user = match unsafe { user_data(staged_u) } {
        None => None,
        Some(u) => {
            // SAFETY: `udata` is the `struct ib_udata *` the core passed to this verb;
            // its context outlives the verb (the core deallocates a context only after
            // its objects).
            let Some(uctx) = (unsafe { ucontext_ref(uctx_of_udata(udata)) }) else {
                return errno(EINVAL);
            };
            Some((uctx, u))
        }
    };
    // SAFETY: the trampoline contract: `rust` is a registered device's.
    let n = match unsafe { srq_ops(rust) }.create_srq(init, dev, user, shim) {
        Ok(n) => n,
        Err(e) => return errno(e),
    };
    let boxed: SrqBox = match KBox::new(n.srq, GFP_KERNEL) {
        Ok(b) => b,
        Err(_) => return errno(ENOMEM),
    };
    init.srqn = n.srqn;
    init.max_wr = n.max_wr;
    // SAFETY: `staged_u` is NULL or the shim's staging area (trampoline contract).
    unsafe { set_resp_len(staged_u, n.resp_len) };
    // SAFETY: the shim passes the address of its SRQ's `rust` field.
    unsafe { srq.write(KBox::into_raw(boxed).cast::<c_void>()) };
    0
}

/// `modify_srq` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_modify_srq(
    _rust: *const c_void,
    srq: *const c_void,
    mask: u32,
    limit: u32,
) -> c_int {
    // SAFETY: the core calls modify_srq only between create and destroy.
    let Some(q) = (unsafe { srq_of(srq) }) else {
        return errno(EINVAL);
    };
    match q.modify(mask, limit) {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}

/// `query_srq` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_query_srq(
    _rust: *const c_void,
    srq: *const c_void,
    out: *mut SrqAttr,
) -> c_int {
    // SAFETY: the core calls query_srq only between create and destroy.
    let Some(q) = (unsafe { srq_of(srq) }) else {
        return errno(EINVAL);
    };
    match q.query() {
        Ok(a) => {
            // SAFETY: the shim passes a valid, writable answer of its stack frame.
            unsafe { out.write(a) };
            0
        }
        Err(e) => errno(e),
    }
}

/// `destroy_srq` trampoline target: the destroy command, then (on success only) the
/// queue's memory.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_destroy_srq(_rust: *const c_void, srq: *mut c_void) -> c_int {
    // SAFETY: the shim passes its SRQ's pointer, live until this returns 0.
    let Some(q) = (unsafe { srq_of(srq) }) else {
        return 0;
    };
    if let Err(e) = q.destroy() {
        return errno(e);
    }
    // SAFETY: `srq` came from `KBox::into_raw` in `mlx5rs_ib_rs_create_srq`; after a 0
    // return the shim forgets it.
    drop(unsafe { SrqBox::from_raw(srq.cast::<KBox<dyn IbSrq>>()) });
    0
}

/// `post_srq_recv` trampoline target: posts the chain from `wr`; returns
/// [`post_outcome`]'s value (0, or the errno with the number posted before it).
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]); `wr` is null or the
/// first request of the chain the core passed to post_srq_recv, readable with its
/// scatter lists for the call.
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_post_srq_recv(srq: *const c_void, wr: *const c_void) -> u64 {
    // SAFETY: the core posts only between create and destroy.
    let outcome = match unsafe { srq_of(srq) } {
        Some(q) => {
            // SAFETY: by the function's contract.
            let mut chain = unsafe { RecvChain::from_core(wr) };
            q.post_recv(&mut chain)
        }
        None => (0, Err(EINVAL)),
    };
    post_outcome(outcome)
}
