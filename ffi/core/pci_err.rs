// SPDX-License-Identifier: GPL-2.0

//! The PCI error handlers (`struct pci_error_handlers`: AER's `pcie_do_recovery`),
//! which `pci::Adapter` of 7.3 does not wire.
//!
//! [`super::shutdown::ShutdownAdapter`] points the registered `struct pci_driver`'s
//! `.err_handler` at [`ErrHandlers::<T>::VTABLE`], whose callbacks hand the device and
//! its driver data to [`PciErrors`]. Upstream's mlx5_core sets the same three
//! (`mlx5_err_handler`: `error_detected`, `slot_reset`, `resume`); `mmio_enabled`,
//! `reset_prepare`, `reset_done` and `cor_error_detected` stay unset as there.
//!
//! Lifetime argument: the PCI core calls each handler (drivers/pci/pcie/err.c
//! `report_error_detected`, `report_slot_reset`, `report_resume`) with the device lock
//! held, and only while a driver is bound (`pci_dev->driver` set and its handler
//! non-null, checked under that lock), so [`with_bound`]'s contract holds for the call.

use core::marker::PhantomData;

use super::bound::with_bound;
use kernel::{bindings, device::Core, pci, prelude::*};

/// The PCI channel's state an error left (`pci_channel_state_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChannelState {
    /// I/O still works (a non-fatal error).
    Normal,
    /// I/O to the device is blocked until a reset (a fatal error).
    Frozen,
    /// The device is gone for good.
    PermFailure,
}

impl ChannelState {
    fn from_raw(v: bindings::pci_channel_state_t) -> Self {
        match v {
            bindings::pci_channel_io_normal => Self::Normal,
            bindings::pci_channel_io_frozen => Self::Frozen,
            // perm_failure, and any value the core does not define, gives up.
            _ => Self::PermFailure,
        }
    }
}

/// What a handler asks the PCI core to do next (`pci_ers_result_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErsResult {
    /// Reset the link / slot, then call `slot_reset`.
    NeedReset,
    /// The device cannot be recovered.
    Disconnect,
    /// The device works again: call `resume`.
    Recovered,
}

impl ErsResult {
    fn raw(self) -> bindings::pci_ers_result_t {
        match self {
            Self::NeedReset => bindings::pci_ers_result_PCI_ERS_RESULT_NEED_RESET,
            Self::Disconnect => bindings::pci_ers_result_PCI_ERS_RESULT_DISCONNECT,
            Self::Recovered => bindings::pci_ers_result_PCI_ERS_RESULT_RECOVERED,
        }
    }
}

/// A PCI driver that handles PCI (AER) errors of its bound functions. Each method runs
/// with the device lock held, `pdev` bound to this driver with driver data `this`.
pub(crate) trait PciErrors: pci::Driver {
    /// An error was detected; the channel is in `state`.
    fn error_detected<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&'bound Self::Data<'bound>>,
        state: ChannelState,
    ) -> ErsResult;
    /// The slot was reset.
    fn slot_reset<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        this: Pin<&'bound Self::Data<'bound>>,
    ) -> ErsResult;
    /// Recovery is over: normal operation may resume.
    fn resume<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&'bound Self::Data<'bound>>);
}

/// The `struct pci_error_handlers` of driver `T`.
pub(crate) struct ErrHandlers<T>(PhantomData<T>);

impl<T: PciErrors + 'static> ErrHandlers<T> {
    /// The handlers; `&Self::VTABLE` is a `'static` promoted constant.
    pub(crate) const VTABLE: bindings::pci_error_handlers = bindings::pci_error_handlers {
        error_detected: Some(error_detected_callback::<T>),
        mmio_enabled: None,
        slot_reset: Some(slot_reset_callback::<T>),
        reset_prepare: None,
        reset_done: None,
        resume: Some(resume_callback::<T>),
        cor_error_detected: None,
    };
}

/// `.error_detected`.
///
/// # Safety
///
/// As [`with_bound`]'s (the PCI core's guarantees for an error handler, module doc).
unsafe extern "C" fn error_detected_callback<T: PciErrors>(
    raw: *mut bindings::pci_dev,
    state: bindings::pci_channel_state_t,
) -> bindings::pci_ers_result_t {
    let state = ChannelState::from_raw(state);
    // SAFETY: forwarded from this function's contract.
    unsafe { with_bound::<T, _>(raw, |pdev, this| T::error_detected(pdev, this, state)) }
        .unwrap_or(ErsResult::Disconnect)
        .raw()
}

/// `.slot_reset`.
///
/// # Safety
///
/// As [`with_bound`]'s (the PCI core's guarantees for an error handler, module doc).
unsafe extern "C" fn slot_reset_callback<T: PciErrors>(
    raw: *mut bindings::pci_dev,
) -> bindings::pci_ers_result_t {
    // SAFETY: forwarded from this function's contract.
    unsafe { with_bound::<T, _>(raw, |pdev, this| T::slot_reset(pdev, this)) }
        .unwrap_or(ErsResult::Disconnect)
        .raw()
}

/// `.resume`.
///
/// # Safety
///
/// As [`with_bound`]'s (the PCI core's guarantees for an error handler, module doc).
unsafe extern "C" fn resume_callback<T: PciErrors>(raw: *mut bindings::pci_dev) {
    // SAFETY: forwarded from this function's contract.
    unsafe { with_bound::<T, _>(raw, |pdev, this| T::resume(pdev, this)) };
}

fn raw(pdev: &pci::Device<Core<'_>>) -> *mut bindings::pci_dev {
    // `pci::Device` is `#[repr(transparent)]` over `Opaque<bindings::pci_dev>`.
    core::ptr::from_ref(pdev)
        .cast_mut()
        .cast::<bindings::pci_dev>()
}

/// Whether `pdev`'s PCI channel is offline (`pci_channel_offline`: an error froze it
/// or failed it for good), so that no recovery through it can work.
pub(crate) fn channel_offline(pdev: &pci::Device<Core<'_>>) -> bool {
    // SAFETY: `pdev` is a valid, bound PCI device (borrowed); `error_state` is a plain
    // field the PCI core updates, read here as `pci_channel_offline` reads it.
    let state = unsafe { (*raw(pdev)).error_state };
    state != bindings::pci_channel_io_normal
}

/// Saves `pdev`'s configuration space (`pci_save_state`), for
/// [`restore_state`] after a reset (upstream saves it at the end of its probe).
pub(crate) fn save_state(pdev: &pci::Device<Core<'_>>) {
    // SAFETY: `pdev` is a bound PCI device in the core context (the caller holds the
    // device lock), the context `pci_save_state` is called from by drivers.
    let _ = unsafe { bindings::pci_save_state(raw(pdev)) };
}

/// Restores the configuration space [`save_state`] saved (`pci_restore_state`; a
/// secondary bus reset clears the function's BARs and command register); nothing
/// when none was saved.
pub(crate) fn restore_state(pdev: &pci::Device<Core<'_>>) {
    // SAFETY: as in `save_state`; `pci_restore_state` checks itself that a state was
    // saved.
    unsafe { bindings::pci_restore_state(raw(pdev)) };
}
