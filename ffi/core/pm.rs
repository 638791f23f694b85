// SPDX-License-Identifier: GPL-2.0

//! System suspend and resume of a bound PCI function: the `struct pci_driver`'s
//! `.suspend` and `.resume`, which `pci::Adapter` of 7.3 does not wire.
//!
//! Upstream's mlx5_core sets the same two (`mlx5_suspend`, `mlx5_resume` in main.c):
//! the PCI core's legacy power-management path (drivers/pci/pci-driver.c
//! `pci_legacy_suspend` / `pci_legacy_resume`) calls them in the devices' suspend and
//! resume phases, and leaves the function's power state and its enable count to the
//! driver. Without them the PCI core's default suspend disables a function whose
//! driver still runs it (`pci_pm_default_suspend`: bus mastering off under live queues).
//!
//! Lifetime argument: the PM core calls each device's callbacks with its device lock
//! held (drivers/base/power/main.c `device_suspend` / `device_resume`), and the PCI
//! core only for a bound driver (`pci_dev->driver` set), so [`with_bound`]'s contract
//! holds for the call.

use core::marker::PhantomData;

use super::bound::with_bound;
use kernel::{bindings, device::Core, ffi::c_int, pci, prelude::*};

/// A PCI driver whose bound functions take part in system suspend and resume. Each
/// method runs with the device lock held, `pdev` bound with driver data `this`.
pub(crate) trait PciPower: pci::Driver {
    /// The system goes to sleep: quiesce the function (its firmware may lose power).
    fn suspend<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&'bound Self::Data<'bound>>,
    ) -> Result;
    /// The system woke up: bring the function back.
    fn resume<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&'bound Self::Data<'bound>>,
    ) -> Result;
}

/// The `.suspend` and `.resume` of driver `T`.
pub(crate) struct PmCallbacks<T>(PhantomData<T>);

impl<T: PciPower + 'static> PmCallbacks<T> {
    /// `.suspend`.
    pub(crate) const SUSPEND: unsafe extern "C" fn(
        *mut bindings::pci_dev,
        bindings::pm_message_t,
    ) -> c_int = suspend_callback::<T>;
    /// `.resume`.
    pub(crate) const RESUME: unsafe extern "C" fn(*mut bindings::pci_dev) -> c_int =
        resume_callback::<T>;
}

/// `.suspend`; the PM message (suspend, freeze, ...) is not looked at: every one
/// quiesces the function, as upstream's.
///
/// # Safety
///
/// As [`with_bound`]'s (the PM core's guarantees, module doc).
unsafe extern "C" fn suspend_callback<T: PciPower>(
    raw: *mut bindings::pci_dev,
    _msg: bindings::pm_message_t,
) -> c_int {
    // SAFETY: forwarded from this function's contract.
    match unsafe { with_bound::<T, _>(raw, |pdev, this| T::suspend(pdev, this)) } {
        Some(Err(e)) => e.to_errno(),
        Some(Ok(())) | None => 0,
    }
}

/// `.resume`.
///
/// # Safety
///
/// As [`with_bound`]'s (the PM core's guarantees, module doc).
unsafe extern "C" fn resume_callback<T: PciPower>(raw: *mut bindings::pci_dev) -> c_int {
    // SAFETY: forwarded from this function's contract.
    match unsafe { with_bound::<T, _>(raw, |pdev, this| T::resume(pdev, this)) } {
        Some(Err(e)) => e.to_errno(),
        Some(Ok(())) | None => 0,
    }
}
