// SPDX-License-Identifier: GPL-2.0

//! The RDMA core through the C shim `ffi/rdma/ib.c` (the kernel crate has no RDMA
//! bindings): an [`IbRegistration`] allocates the function's IB device, registers it
//! as `mlx5_%d` and unregisters and frees it on drop; its ops call the provider's
//! [`IbOps`] with typed requests, and the typed answers ([`DeviceAttr`], plain
//! values) are copied into the core's structures by the C side.
//!
//! The `#[repr(C)]` structures ([`super::ib_abi`], pure so the host tests see them)
//! mirror the shim's own structures in `mlx5rs_ffi.h` (both sides check the same
//! sizes); Rust never sees a core structure.
//!
//! # Verbs families
//!
//! Every family registers its verbs the same way. Its C file `ib_<family>.c` owns
//! the family's `struct ib_device_ops mlx5rs_ib_<family>_ops` (its ops and the
//! `INIT_RDMA_OBJ_SIZE` of its objects), which `mlx5rs_ib_alloc()` applies; its Rust
//! file `ib_<family>.rs` holds the family's ops trait (`Ib<Family>Ops`) and the
//! trampolines, which reach the provider's implementation through the accessor of
//! [`IbOps`] named after the family. A verb's driver data is a
//! [`super::udata::UserData`] in every family. The device family itself (this file
//! and `ib.c`) is `query_device`, on [`IbOps`].
//!
//! # Trampolines
//!
//! The Rust functions the shim calls (`mlx5rs_ib_rs_*`, here and in the family
//! files) are `unsafe extern "C"`: only the shim calls them, and it upholds one
//! contract for all of them, which their `# Safety` sections name:
//! - `rust` is the pointer [`IbRegistration::register`] gave `mlx5rs_ib_alloc`, of a
//!   device not unregistered yet (the core calls ops only in between);
//! - an object pointer (`uctx`, `cq_rust`, `qp`, `srq`, `mr`, `old`) is NULL or the
//!   `rust` field of a live object of this provider (set by its create trampoline,
//!   not yet freed), and no destroy of that object runs concurrently; a destroy or
//!   dealloc trampoline is passed it once, after which the shim forgets it;
//! - every other pointer is NULL only where its function says so, else valid for
//!   reading (inputs) or writing (outputs, the shim's stack frame or the field of its
//!   object that is to be set) for the call, and not aliased by another argument;
//! - a staged `struct mlx5rs_ib_udata` satisfies [`super::udata::user_data`]'s
//!   contract, and `ibdev` and `udata` are the core's `struct ib_device` and
//!   `struct ib_udata` of the current verb.

use core::ptr::NonNull;

use kernel::{
    bindings, device,
    error::to_result,
    ffi::{c_char, c_int, c_void},
    prelude::*,
    sync::Arc,
};

use super::ib_abi::Udata;
pub(crate) use super::ib_abi::{DeviceAttr, IbEvent, IbInit};
use super::udata::{set_resp_len, user_data, UserData};
use super::{
    ib_ah::IbAhOps, ib_cq::IbCqOps, ib_mr::IbMrOps, ib_mw::IbMwOps, ib_pd::IbPdOps,
    ib_port::IbPortOps, ib_qp::IbQpOps, ib_srq::IbSrqOps, ib_uctx::IbUctxOps,
};

/// What the core asks of the provider: the device family's verbs, and the ops of
/// every other verbs family (one accessor a family). Called in process context,
/// concurrently, from registration until [`IbRegistration`]'s drop has unregistered
/// the device.
pub(crate) trait IbOps: Send + Sync {
    /// `query_device`.
    fn query_device(&self) -> Result<DeviceAttr>;
    /// The driver part of `query_device`: writes the response into `u.out` and
    /// returns its length (0: none).
    fn query_device_uhw(&self, u: UserData<'_>) -> Result<usize>;
    /// The port verbs ([`super::ib_port`]).
    fn port_ops(&self) -> &dyn IbPortOps;
    /// The user-context verbs ([`super::ib_uctx`]).
    fn uctx_ops(&self) -> &dyn IbUctxOps;
    /// The PD verbs ([`super::ib_pd`]).
    fn pd_ops(&self) -> &dyn IbPdOps;
    /// The address-handle verbs ([`super::ib_ah`]).
    fn ah_ops(&self) -> &dyn IbAhOps;
    /// The CQ verbs ([`super::ib_cq`]).
    fn cq_ops(&self) -> &dyn IbCqOps;
    /// The QP verbs ([`super::ib_qp`]).
    fn qp_ops(&self) -> &dyn IbQpOps;
    /// The SRQ and XRC domain verbs ([`super::ib_srq`]).
    fn srq_ops(&self) -> &dyn IbSrqOps;
    /// The memory-region verbs ([`super::ib_mr`]).
    fn mr_ops(&self) -> &dyn IbMrOps;
    /// The memory-window verbs ([`super::ib_mw`]).
    fn mw_ops(&self) -> &dyn IbMwOps;
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

/// A post trampoline's outcome as the shim unpacks it (`mlx5rs_post_err()` and
/// `mlx5rs_post_done()`, mlx5rs_ffi.h): the errno (0 on success) in the low 32 bits,
/// the number of requests posted before the failing one in the high 32. One value in
/// a register rather than a count written through a pointer, so that the shim's verb
/// entries take no local's address (no stack-protector frame a call).
pub(super) fn post_outcome((posted, r): (usize, Result)) -> u64 {
    let done = u64::from(u32::try_from(posted).unwrap_or(u32::MAX));
    let err = match r {
        Ok(()) => 0,
        Err(e) => errno(e),
    };
    (done << 32) | u64::from(err as u32)
}

/// poll_cq's outcome as the shim unpacks it (`mlx5rs_poll_n()` and
/// `mlx5rs_poll_qp1_recv()`, mlx5rs_ffi.h): the number of completions or a negative
/// errno in the low 32 bits (an `int`), bit 32 set when one of them is a successful
/// QP1 receive. One value in a register, as [`post_outcome`].
pub(super) fn poll_outcome(r: Result<(c_int, bool)>) -> u64 {
    match r {
        Ok((n, qp1_recv)) => (u64::from(qp1_recv) << 32) | u64::from(n as u32),
        Err(e) => u64::from(errno(e) as u32),
    }
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

/// `query_device` trampoline target for the driver part (`uhw`).
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in this module).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_query_device_uhw(rust: *const c_void, uhw: *mut Udata) -> c_int {
    // SAFETY: the shim passes its staging area (valid, exclusive for the call).
    let Some(u) = (unsafe { user_data(uhw) }) else {
        return errno(EINVAL);
    };
    // SAFETY: as in `mlx5rs_ib_rs_query_device`.
    match unsafe { ops(rust) }.query_device_uhw(u) {
        Ok(n) => {
            // SAFETY: `uhw` is NULL or the shim's staging area (trampoline contract).
            unsafe { set_resp_len(uhw, n) };
            0
        }
        Err(e) => errno(e),
    }
}
