// SPDX-License-Identifier: GPL-2.0

//! A devlink instance with the health reporters `fw` and `fw_fatal`
//! (ffi/core/devlink.c): the kernel crate has no devlink bindings.
//!
//! [`Devlink::new`] allocates it for a PCI function at probe; [`Devlink::register`]
//! makes it visible (`devlink dev`) with its reporters; dropping it unregisters it
//! (waiting for the requests under way) and frees it. What the instance shows comes
//! from a [`DevlinkOps`], called back through the shim's trampolines
//! (`mlx5rs_devlink_rs_*` below) with the pointer given at allocation.

use core::ffi::{c_int, c_void};
use core::ptr::NonNull;

use kernel::{error::to_result, ffi::c_char, pci, prelude::*, sync::Arc};

use crate::health::report::{DevlinkInfo, FwReport, HealthOut};

/// What a devlink instance shows. Called from user requests (`devlink dev info`,
/// `devlink health diagnose|dump`) under the instance lock, and from
/// [`Devlink::report`] (the dump stored with a report): must not take a lock held
/// across a report or a registration.
pub(crate) trait DevlinkOps: Send + Sync {
    /// `devlink dev info`.
    fn info(&self) -> Result<DevlinkInfo>;
    /// The health buffer, as the reporters print it.
    fn health(&self) -> Result<HealthOut>;
}

extern "C" {
    // `struct pci_dev *` and `struct devlink *` on the C side; opaque here (the shim
    // only needs the pointers; see ffi/core/pci.rs for `struct pci_dev`).
    fn mlx5rs_devlink_alloc(pdev: *mut c_void, rust: *const c_void) -> *mut c_void;
    fn mlx5rs_devlink_register(devlink: *mut c_void) -> c_int;
    fn mlx5rs_devlink_report(
        devlink: *mut c_void,
        fatal: c_int,
        msg: *const c_char,
        r: *const FwReport,
    ) -> c_int;
    fn mlx5rs_devlink_unregister(devlink: *mut c_void);
    fn mlx5rs_devlink_free(devlink: *mut c_void);
}

/// A devlink instance of a PCI function.
///
/// INVARIANT: `raw` came from `mlx5rs_devlink_alloc` with `&*_ops` as its `rust`
/// pointer and is freed only by the drop; `registered` says whether
/// `mlx5rs_devlink_register` succeeded and no unregistration followed.
pub(crate) struct Devlink {
    raw: NonNull<c_void>,
    registered: bool,
    // Boxed so that its address, the trampolines' `rust` pointer, stays put; dropped
    // after the instance is freed (the drop frees it first).
    _ops: KBox<Arc<dyn DevlinkOps>>,
}

// SAFETY: the devlink calls the shim makes may run on any thread (they take the
// instance lock themselves); `_ops` is `Send + Sync`.
unsafe impl Send for Devlink {}
// SAFETY: `&Devlink` only offers `report`, which devlink serializes itself (the
// reporter's own locks) and which the caller keeps apart from the unregistration
// (`&mut self`).
unsafe impl Sync for Devlink {}

impl Devlink {
    /// An instance for `pdev` (a PCI function whose probe is running), not registered.
    /// The instance must be dropped before the function is unbound (the device object
    /// holds it).
    pub(crate) fn new(pdev: &pci::Device, ops: Arc<dyn DevlinkOps>) -> Result<Self> {
        let ops = KBox::new(ops, GFP_KERNEL)?;
        let rust: *const Arc<dyn DevlinkOps> = &*ops;
        // `pci::Device` is `#[repr(transparent)]` over `Opaque<bindings::pci_dev>`.
        let raw_pdev = core::ptr::from_ref(pdev).cast_mut().cast::<c_void>();
        // SAFETY: `raw_pdev` is a valid `struct pci_dev` with its driver set (probe is
        // running) that stays bound while the instance exists (the caller drops it at
        // unbind at the latest); `rust` stays valid until the instance is freed (the
        // box is dropped after, see the drop).
        let raw = unsafe { mlx5rs_devlink_alloc(raw_pdev, rust.cast()) };
        let raw = NonNull::new(raw).ok_or(ENOMEM)?;
        // INVARIANT: allocated just above with `&*ops`; not registered.
        Ok(Self {
            raw,
            registered: false,
            _ops: ops,
        })
    }

    /// Registers the instance with its health reporters.
    pub(crate) fn register(&mut self) -> Result {
        if self.registered {
            return Ok(());
        }
        // SAFETY: by the type invariant `raw` is a live, unregistered instance.
        to_result(unsafe { mlx5rs_devlink_register(self.raw.as_ptr()) })?;
        self.registered = true;
        Ok(())
    }

    /// Reports an error to `fw` (`fatal` false) or `fw_fatal`; the reporter stores a
    /// dump (its context `r`, then the health buffer read through the ops). Sleeps.
    /// Nothing when not registered.
    pub(crate) fn report(&self, fatal: bool, msg: &core::ffi::CStr, r: &FwReport) -> Result {
        if !self.registered {
            return Ok(());
        }
        // SAFETY: `raw` is registered (type invariant) and `&self` keeps the
        // unregistration (`&mut self` or the drop) from running meanwhile; `msg` is
        // NUL-terminated and `r` valid for the call (the shim copies it).
        to_result(unsafe {
            mlx5rs_devlink_report(self.raw.as_ptr(), c_int::from(fatal), msg.as_char_ptr(), r)
        })
    }

    /// Unregisters the instance and destroys its reporters (waits for the user
    /// requests under way); it can register again.
    pub(crate) fn unregister(&mut self) {
        if self.registered {
            self.registered = false;
            // SAFETY: `raw` is live and registered (type invariant, checked above).
            unsafe { mlx5rs_devlink_unregister(self.raw.as_ptr()) };
        }
    }
}

impl Drop for Devlink {
    fn drop(&mut self) {
        self.unregister();
        // SAFETY: `raw` is live and no longer registered; nothing uses it after.
        unsafe { mlx5rs_devlink_free(self.raw.as_ptr()) };
        // `_ops` drops after this body: no trampoline runs for a freed instance.
    }
}

/// The ops behind a trampoline's `rust` pointer.
///
/// # Safety
///
/// `rust` is the pointer a live [`Devlink`] gave `mlx5rs_devlink_alloc` (the shim
/// passes it back only while the instance exists).
unsafe fn ops<'a>(rust: *const c_void) -> &'a dyn DevlinkOps {
    // SAFETY: by the contract `rust` points to the `Arc` boxed in a live `Devlink`.
    unsafe { &**rust.cast::<Arc<dyn DevlinkOps>>() }
}

/// `info_get` trampoline target: fills `out`, or returns a negative errno.
///
/// # Safety
///
/// `rust` as [`ops`] requires; `out` valid and writable for the call.
#[no_mangle]
unsafe extern "C" fn mlx5rs_devlink_rs_info(rust: *const c_void, out: *mut DevlinkInfo) -> c_int {
    // SAFETY: the shim's contract (above).
    match unsafe { ops(rust) }.info() {
        Ok(i) => {
            // SAFETY: `out` is the shim's `struct mlx5rs_devlink_info` (same layout).
            unsafe { out.write(i) };
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// Health-buffer trampoline target (the reporters' diagnose and dump).
///
/// # Safety
///
/// `rust` as [`ops`] requires; `out` valid and writable for the call.
#[no_mangle]
unsafe extern "C" fn mlx5rs_devlink_rs_health(rust: *const c_void, out: *mut HealthOut) -> c_int {
    // SAFETY: the shim's contract (above).
    match unsafe { ops(rust) }.health() {
        Ok(h) => {
            // SAFETY: `out` is the shim's `struct mlx5rs_health_buf` (same layout).
            unsafe { out.write(h) };
            0
        }
        Err(e) => e.to_errno(),
    }
}
