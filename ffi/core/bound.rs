// SPDX-License-Identifier: GPL-2.0

//! The driver data of a bound PCI function, for the callbacks that the kernel crate's
//! `pci::Adapter` of 7.3 does not wire (shutdown, the PCI error handlers, suspend and
//! resume) and for the recovery work once it holds the device lock.
//!
//! Each of those runs with the function's device lock held: the PCI core's bus
//! callbacks by the core's guarantee, the recovery work because it took the lock.
//! Probe and remove run under the same lock, so the driver data the PCI abstraction's
//! probe stored is either unset (not bound, or the probe has not finished) or valid for
//! as long as the lock is held, and the device may be seen in the core context of a bus
//! callback. [`with_bound`] is the one place that turns that into references.

use kernel::{bindings, device::Core, pci, prelude::*};

/// Runs `f` with the device and driver data of `raw`; `None` when no driver data is set
/// (not bound, or the probe has not finished).
///
/// # Safety
///
/// `raw` must be a valid `struct pci_dev` whose device lock the caller holds for the
/// call, and `T` the driver it is bound to whenever its driver data is set.
pub(crate) unsafe fn with_bound<T: pci::Driver, R>(
    raw: *mut bindings::pci_dev,
    f: impl for<'b> FnOnce(&'b pci::Device<Core<'b>>, Pin<&'b T::Data<'b>>) -> R,
) -> Option<R> {
    // SAFETY: by the function's contract `raw` is a valid `struct pci_dev`, so its
    // embedded `dev` is a valid `struct device` to read the driver data of.
    let data = unsafe { bindings::dev_get_drvdata(core::ptr::addr_of_mut!((*raw).dev)) };
    if data.is_null() {
        return None;
    }
    // SAFETY: `raw` is valid for the call and its device lock held with the driver
    // data set (the function's contract), which is the core context of a bus callback
    // (module doc); `pci::Device<Ctx>` is a transparent wrapper of `struct pci_dev` for
    // every context.
    let pdev = unsafe { &*raw.cast::<pci::Device<Core<'_>>>() };
    // SAFETY: the device is bound to `T` (contract), so `pci::Adapter::probe_callback`
    // (whose probe `T` registers) stored the `into_foreign()` pointer of a
    // `Pin<KBox<T::Data>>`, the address of the pinned data. Only `remove`'s
    // `post_unbind` takes it back, which the device lock held for this call excludes,
    // so the shared, pinned borrow is valid for the call.
    let this = unsafe { Pin::new_unchecked(&*data.cast::<T::Data<'_>>()) };
    Some(f(pdev, this))
}
