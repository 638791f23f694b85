// SPDX-License-Identifier: GPL-2.0

//! The PCI `shutdown` callback (reboot, kexec, poweroff), which `pci::Adapter` of 7.3
//! does not wire; [`super::adapter::PciDriverAdapter`] points `.shutdown` at it.
//!
//! Lifetime argument: the PCI core calls `.shutdown` (`device_shutdown()` →
//! `pci_device_shutdown()`) with the device lock held, and only for a device bound to
//! this driver (`pci_dev->driver` is set after a successful probe), so
//! [`with_bound`]'s contract holds for the call.

use super::bound::with_bound;
use kernel::{bindings, pci, prelude::*};

/// A PCI driver that also wants the `shutdown` callback (reboot, kexec, poweroff).
pub(crate) trait PciShutdown: pci::Driver {
    /// Quiesces `pdev`, which is bound to this driver with driver data `this`. Must
    /// not sleep for long: the system is going down.
    fn shutdown(pdev: &pci::Device, this: Pin<&Self::Data<'_>>);
}

/// The `.shutdown` of the registered `struct pci_driver`.
///
/// # Safety
///
/// As [`with_bound`]'s (the PCI core's guarantees for `.shutdown`, module doc).
pub(super) unsafe extern "C" fn shutdown_callback<T: PciShutdown>(raw: *mut bindings::pci_dev) {
    // SAFETY: forwarded from this function's contract.
    unsafe { with_bound::<T, _>(raw, |pdev, this| T::shutdown(pdev, this)) };
}
