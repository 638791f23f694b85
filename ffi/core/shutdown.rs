// SPDX-License-Identifier: GPL-2.0

//! The PCI `shutdown` callback and the error handlers, which `pci::Adapter` of 7.3
//! does not wire.
//!
//! [`ShutdownAdapter`] registers the same `struct pci_driver` as `pci::Adapter<T>`
//! (same probe, remove, ID table and driver data) and additionally sets its
//! `.shutdown` before the driver is registered, pointing at a callback that hands the
//! device and its driver data to [`PciShutdown::shutdown`], and its `.err_handler`
//! ([`super::pci_err`]: AER's error_detected / slot_reset / resume).
//!
//! Lifetime argument: the PCI core calls `.shutdown` (`device_shutdown()` →
//! `pci_device_shutdown()`) with the device lock held, and only for a device bound to
//! this driver (`pci_dev->driver` is set after a successful probe). Probe and remove run
//! with that same lock held, so a shutdown never overlaps the probe or the removal of
//! the same device: the driver data `pci::Adapter`'s probe stored stays valid for the
//! call.

use core::marker::PhantomData;

use super::pci_err::{ErrHandlers, PciErrors};
use kernel::{
    bindings,
    driver::{DriverLayout, RegistrationOps},
    pci,
    prelude::*,
    types::Opaque,
    ThisModule,
};

/// A PCI driver that also wants the `shutdown` callback (reboot, kexec, poweroff).
pub(crate) trait PciShutdown: pci::Driver {
    /// Quiesces `pdev`, which is bound to this driver with driver data `this`. Must
    /// not sleep for long: the system is going down.
    fn shutdown(pdev: &pci::Device, this: Pin<&Self::Data<'_>>);
}

/// `pci::Adapter<T>` plus `.shutdown`; use as `driver::Registration<ShutdownAdapter<T>>`.
pub(crate) struct ShutdownAdapter<T>(PhantomData<T>);

// SAFETY: same layout as `pci::Adapter<T>`: a `struct pci_driver` (repr(C)) whose
// embedded `struct device_driver` is at the offset `pci::Adapter` reports, and `T`'s
// driver data type.
unsafe impl<T: pci::Driver + 'static> DriverLayout for ShutdownAdapter<T> {
    type DriverType = bindings::pci_driver;
    type DriverData<'bound> = T::Data<'bound>;
    const DEVICE_DRIVER_OFFSET: usize = <pci::Adapter<T> as DriverLayout>::DEVICE_DRIVER_OFFSET;
}

// SAFETY: `register` and `unregister` are `pci::Adapter<T>`'s, so a call to
// `unregister` is valid after a successful `register` as for that type.
unsafe impl<T: pci::Driver + PciShutdown + PciErrors + 'static> RegistrationOps
    for ShutdownAdapter<T>
{
    // SAFETY: (contract) callers uphold `RegistrationOps::register`'s requirements: `pdrv`
    // is pinned, valid and not registered.
    unsafe fn register(
        pdrv: &Opaque<Self::DriverType>,
        name: &'static CStr,
        module: &'static ThisModule,
    ) -> Result {
        // SAFETY: the driver is not registered yet, so nobody reads its fields; setting
        // one before registration is what `pci::Adapter::register` does for the others
        // (it leaves `.shutdown` as we set it).
        unsafe { (*pdrv.get()).shutdown = Some(shutdown_callback::<T>) };
        // SAFETY: as above (`.err_handler` is left alone by `pci::Adapter::register`);
        // the table is a promoted constant, valid for `'static`.
        unsafe { (*pdrv.get()).err_handler = &ErrHandlers::<T>::VTABLE };
        // SAFETY: forwarded from our caller (`pdrv` stays pinned and valid until
        // `unregister`).
        unsafe { <pci::Adapter<T> as RegistrationOps>::register(pdrv, name, module) }
    }

    // SAFETY: (contract) callers uphold `RegistrationOps::unregister`'s requirements:
    // `pdrv` was registered by a successful `register`.
    unsafe fn unregister(pdrv: &Opaque<Self::DriverType>) {
        // SAFETY: forwarded from our caller (a successful `register` preceded).
        unsafe { <pci::Adapter<T> as RegistrationOps>::unregister(pdrv) }
    }
}

/// The `.shutdown` of the registered `struct pci_driver`.
///
/// # Safety
///
/// `raw` must be a valid `struct pci_dev` bound to this driver, its device lock held
/// for the call (what the PCI core guarantees when it calls `.shutdown`).
unsafe extern "C" fn shutdown_callback<T: PciShutdown>(raw: *mut bindings::pci_dev) {
    // SAFETY: by the function's contract `raw` is a valid `struct pci_dev`, so its
    // embedded `dev` is a valid `struct device` to read the driver data of.
    let data = unsafe { bindings::dev_get_drvdata(core::ptr::addr_of_mut!((*raw).dev)) };
    if data.is_null() {
        return;
    }
    // SAFETY: `raw` is valid and stays so for the call (function's contract), and
    // `pci::Device` is a transparent wrapper of `struct pci_dev`.
    let pdev = unsafe { &*raw.cast::<pci::Device>() };
    // SAFETY: the device is bound, so `pci::Adapter::probe_callback` (whose probe this
    // driver registers) stored its data with `Device::set_drvdata`, i.e. the
    // `into_foreign()` pointer of a `Pin<KBox<T::Data>>`, which is the address of the
    // pinned `T::Data`. It is taken back only by `remove`, which the device lock held
    // for this call excludes, so the shared, pinned borrow is valid for the call.
    let this = unsafe { Pin::new_unchecked(&*data.cast::<T::Data<'_>>()) };
    T::shutdown(pdev, this);
}
