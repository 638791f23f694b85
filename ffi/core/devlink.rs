// SPDX-License-Identifier: GPL-2.0

//! A devlink instance with the health reporters `fw` and `fw_fatal` and the reload
//! action driver_reinit (ffi/core/devlink.c): the kernel crate has no devlink bindings.
//!
//! [`Devlink::new`] allocates it for a PCI function at probe; [`Devlink::register`]
//! makes it visible (`devlink dev`) with its reporters; dropping it unregisters it
//! (waiting for the requests under way) and frees it. What the instance shows and does
//! comes from a [`DevlinkOps`], called back through the shim's trampolines
//! (`mlx5rs_devlink_rs_*` below) with the pointer given at allocation, except for a
//! recover devlink decides on within a `fw_fatal` report: that one runs what the
//! report passed ([`Devlink::report`]).

use core::ffi::{c_int, c_void};
use core::ptr::NonNull;

use kernel::{error::to_result, ffi::c_char, pci, prelude::*, sync::Arc};

use crate::health::report::{DevlinkInfo, DriverInit, FwReport, HealthOut};

/// What a devlink instance shows and does. Called from user requests (`devlink dev
/// info`, `devlink health diagnose|dump|recover`, `devlink dev reload`) under the
/// instance lock, and from [`Devlink::report`] (the dump stored with a report): must
/// not take a lock held across a report or a registration.
pub(crate) trait DevlinkOps: Send + Sync {
    /// `devlink dev info`.
    fn info(&self) -> Result<DevlinkInfo>;
    /// The health buffer, as the reporters print it.
    fn health(&self) -> Result<HealthOut>;
    /// A user's `devlink health recover` of `fw_fatal` (the reporter is in error
    /// state): recover the function. The device lock is *not* held and must not be
    /// waited for (devlink's order is the device lock before the instance lock).
    fn recover(&self) -> Result;
    /// `devlink dev reload` (driver_reinit): unload the function's software state
    /// (`init` `None`), then load it again with the driverinit parameters' values
    /// `init` (devlink applied those set since the last reload). devlink holds the
    /// device lock.
    fn reload(&self, init: Option<DriverInit>) -> Result;
}

/// What a recover decided on within a `fw_fatal` report runs ([`Devlink::report`]).
pub(crate) type RecoverHere<'a> = &'a dyn Fn() -> Result;

extern "C" {
    // `struct pci_dev *` and `struct devlink *` on the C side; opaque here (the shim
    // only needs the pointers; see ffi/core/pci.rs for `struct pci_dev`).
    fn mlx5rs_devlink_alloc(pdev: *mut c_void, rust: *const c_void) -> *mut c_void;
    fn mlx5rs_devlink_register(
        devlink: *mut c_void,
        is_vf: c_int,
        remote_reset: c_int,
        rdma: c_int,
        defaults: *const DriverInit,
    ) -> c_int;
    fn mlx5rs_devlink_remote_reset_allowed(devlink: *mut c_void) -> c_int;
    fn mlx5rs_devlink_remote_reload_done(devlink: *mut c_void);
    fn mlx5rs_devlink_report(
        devlink: *mut c_void,
        fatal: c_int,
        msg: *const c_char,
        r: *const FwReport,
        here: *const c_void,
    ) -> c_int;
    fn mlx5rs_devlink_fatal_healthy(devlink: *mut c_void);
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

    /// Registers the instance with its health reporters (`fw_fatal`'s grace period is
    /// upstream's for a VF when `is_vf`, else for a PF), the driverinit parameters
    /// `io_eq_size` and `event_eq_size` and, with `rdma`, `enable_rdma` (their
    /// defaults `defaults`), and, with `remote_reset` (the firmware offers MFRL), the
    /// parameter `enable_remote_dev_reset`.
    ///
    /// # Errors
    ///
    /// `EINVAL` an EQ depth of `defaults` out of bounds, or devlink's error.
    pub(crate) fn register(
        &mut self,
        is_vf: bool,
        remote_reset: bool,
        rdma: bool,
        defaults: &DriverInit,
    ) -> Result {
        if self.registered {
            return Ok(());
        }
        // SAFETY: by the type invariant `raw` is a live, unregistered instance.
        to_result(unsafe {
            mlx5rs_devlink_register(
                self.raw.as_ptr(),
                c_int::from(is_vf),
                c_int::from(remote_reset),
                c_int::from(rdma),
                defaults,
            )
        })?;
        self.registered = true;
        Ok(())
    }

    /// The value of `enable_remote_dev_reset` (true by default, and when it is not
    /// registered).
    pub(crate) fn remote_reset_allowed(&self) -> bool {
        // SAFETY: `raw` is a live instance (type invariant); the shim reads one bool.
        unsafe { mlx5rs_devlink_remote_reset_allowed(self.raw.as_ptr()) != 0 }
    }

    /// Counts a reload a sync reset did (driver_reinit and fw_activate, as remote
    /// reload actions) and notifies devlink's listeners. Sleeps (the instance lock).
    /// Nothing when not registered.
    pub(crate) fn remote_reload_done(&self) {
        if !self.registered {
            return;
        }
        // SAFETY: `raw` is registered (type invariant) and `&self` keeps the
        // unregistration (`&mut self` or the drop) from running meanwhile.
        unsafe { mlx5rs_devlink_remote_reload_done(self.raw.as_ptr()) };
    }

    /// Whether the instance is registered.
    pub(crate) fn is_registered(&self) -> bool {
        self.registered
    }

    /// Reports an error to `fw` (`here` `None`) or `fw_fatal`; the reporter stores a
    /// dump (its context `r`, then the health buffer read through the ops). For
    /// `fw_fatal`, devlink then decides on a recovery (auto-recover on, outside the
    /// grace period, the previous error recovered) and runs `here` for it, in this
    /// thread, under the instance lock. Sleeps. Nothing when not registered.
    ///
    /// # Errors
    ///
    /// `ECANCELED` devlink refused to recover, `ENOENT` no such reporter, or `here`'s
    /// error.
    pub(crate) fn report(
        &self,
        msg: &core::ffi::CStr,
        r: &FwReport,
        here: Option<RecoverHere<'_>>,
    ) -> Result {
        if !self.registered {
            return Ok(());
        }
        let fatal = here.is_some();
        let here_ptr = here.as_ref().map_or(core::ptr::null(), |h| {
            core::ptr::from_ref(h).cast::<c_void>()
        });
        // SAFETY: `raw` is registered (type invariant) and `&self` keeps the
        // unregistration (`&mut self` or the drop) from running meanwhile; `msg` is
        // NUL-terminated and `r` valid for the call (the shim copies it); `here_ptr` is
        // null or points to a `RecoverHere` on this stack frame, which the shim only
        // passes to `mlx5rs_devlink_rs_recover_here` during this call.
        to_result(unsafe {
            mlx5rs_devlink_report(
                self.raw.as_ptr(),
                c_int::from(fatal),
                msg.as_char_ptr(),
                r,
                here_ptr,
            )
        })
    }

    /// Marks the `fw_fatal` reporter healthy (a recovery that did not go through it);
    /// nothing when not registered or without the reporter.
    pub(crate) fn fatal_healthy(&self) {
        if self.registered {
            // SAFETY: `raw` is registered (type invariant, checked above) and `&self`
            // keeps the unregistration from running meanwhile.
            unsafe { mlx5rs_devlink_fatal_healthy(self.raw.as_ptr()) };
        }
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

/// `fw_fatal` recover trampoline target for a user's `devlink health recover`.
///
/// # Safety
///
/// `rust` as [`ops`] requires.
#[no_mangle]
unsafe extern "C" fn mlx5rs_devlink_rs_recover(rust: *const c_void) -> c_int {
    // SAFETY: the shim's contract (above).
    match unsafe { ops(rust) }.recover() {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `fw_fatal` recover trampoline target within a report made by [`Devlink::report`]:
/// runs what the report passed.
///
/// # Safety
///
/// `here` is the pointer [`Devlink::report`] gave the shim, during that call.
#[no_mangle]
unsafe extern "C" fn mlx5rs_devlink_rs_recover_here(here: *const c_void) -> c_int {
    // SAFETY: by the contract `here` points to a live `RecoverHere` on the stack of the
    // `Devlink::report` call under way.
    let f = unsafe { *here.cast::<RecoverHere<'_>>() };
    match f() {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// `reload_down` (`up` 0, `init` null) and `reload_up` (`init`: the driverinit
/// parameters' values) trampoline target.
///
/// # Safety
///
/// `rust` as [`ops`] requires; `init` null or valid for the call; devlink holds the
/// device lock.
#[no_mangle]
unsafe extern "C" fn mlx5rs_devlink_rs_reload(
    rust: *const c_void,
    up: c_int,
    init: *const DriverInit,
) -> c_int {
    let init = if up == 0 {
        None
    } else if init.is_null() {
        // The shim always passes the values; the defaults rather than nothing.
        Some(DriverInit::DEFAULT)
    } else {
        // SAFETY: by the contract `init` is valid for the call; copied out here.
        Some(unsafe { *init })
    };
    // SAFETY: the shim's contract (above).
    match unsafe { ops(rust) }.reload(init) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}
