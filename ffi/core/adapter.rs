// SPDX-License-Identifier: GPL-2.0

//! The PCI driver registration: `pci::Adapter` of 7.3 plus the bus callbacks it does not
//! wire.
//!
//! [`PciDriverAdapter`] registers the same `struct pci_driver` as `pci::Adapter<T>`
//! (same probe, remove, ID table and driver data) and additionally sets, before the
//! driver is registered:
//! - `.shutdown` ([`super::shutdown`]: reboot, kexec, poweroff);
//! - `.err_handler` ([`super::pci_err`]: AER's error_detected / slot_reset / resume);
//! - `.suspend` and `.resume` ([`super::pm`]: system sleep, the PCI core's legacy
//!   power-management path, as upstream's mlx5_core uses).
//!
//! Each callback reaches the driver data through [`super::bound::with_bound`], under the
//! device lock the PCI or PM core holds for it.

use core::marker::PhantomData;

use super::pci_err::{ErrHandlers, PciErrors};
use super::pm::{PciPower, PmCallbacks};
use super::shutdown::{shutdown_callback, PciShutdown};
use kernel::{
    bindings,
    driver::{DriverLayout, RegistrationOps},
    pci,
    prelude::*,
    types::Opaque,
    ThisModule,
};

/// `pci::Adapter<T>` plus `.shutdown`, `.err_handler`, `.suspend` and `.resume`; use as
/// `driver::Registration<PciDriverAdapter<T>>`.
pub(crate) struct PciDriverAdapter<T>(PhantomData<T>);

// SAFETY: same layout as `pci::Adapter<T>`: a `struct pci_driver` (repr(C)) whose
// embedded `struct device_driver` is at the offset `pci::Adapter` reports, and `T`'s
// driver data type.
unsafe impl<T: pci::Driver + 'static> DriverLayout for PciDriverAdapter<T> {
    type DriverType = bindings::pci_driver;
    type DriverData<'bound> = T::Data<'bound>;
    const DEVICE_DRIVER_OFFSET: usize = <pci::Adapter<T> as DriverLayout>::DEVICE_DRIVER_OFFSET;
}

// SAFETY: `register` and `unregister` are `pci::Adapter<T>`'s, so a call to
// `unregister` is valid after a successful `register` as for that type.
unsafe impl<T: pci::Driver + PciShutdown + PciErrors + PciPower + 'static> RegistrationOps
    for PciDriverAdapter<T>
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
        // SAFETY: as above (`.suspend` and `.resume` are left alone by
        // `pci::Adapter::register`, and `.driver.pm` stays unset, as the legacy path
        // requires).
        unsafe {
            (*pdrv.get()).suspend = Some(PmCallbacks::<T>::SUSPEND);
            (*pdrv.get()).resume = Some(PmCallbacks::<T>::RESUME);
        }
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
