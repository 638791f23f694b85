// SPDX-License-Identifier: GPL-2.0

//! An enabled, bus-mastering PCI function, disabled again on drop.

use kernel::{bindings, device::Core, ffi::c_void, pci, prelude::*, sync::aref::ARef};

extern "C" {
    // `struct pci_dev *` on the C side; declared opaque here because the generated
    // binding of `struct pci_dev` is not FFI-safe by rustc's lint (it embeds types
    // without a stable layout), and the shim only needs the pointer.
    fn mlx5rs_pci_disable(pdev: *mut c_void);
    fn mlx5rs_pci_clear_master(pdev: *mut c_void);
}

fn raw(pdev: &pci::Device) -> *mut c_void {
    // `pci::Device` is `#[repr(transparent)]` over `Opaque<bindings::pci_dev>`.
    core::ptr::from_ref(pdev)
        .cast_mut()
        .cast::<bindings::pci_dev>()
        .cast::<c_void>()
}

/// Clears bus mastering when dropped, so memory the device might still write (the
/// command queue, mailboxes of a command that never completed) can be freed after it.
/// Holds a reference on the device, so it may outlive the probe borrow.
pub(crate) struct StopDmaOnDrop(ARef<pci::Device>);

impl StopDmaOnDrop {
    /// Arms the guard for `pdev`.
    pub(crate) fn new(pdev: &pci::Device) -> Self {
        Self(pdev.into())
    }
}

impl Drop for StopDmaOnDrop {
    fn drop(&mut self) {
        // SAFETY: `raw` gives the `struct pci_dev` of a device we hold a reference on;
        // `pci_clear_master` only writes its command register and is idempotent.
        unsafe { mlx5rs_pci_clear_master(raw(&self.0)) };
    }
}

/// Proof that this driver enabled the function's memory space and bus mastering.
///
/// Dropping it clears bus mastering and disables the function. It must therefore be
/// dropped after every user of DMA or of the BARs (the device object declares it as
/// its last field).
///
/// INVARIANT: `pdev` was enabled by [`PciEnabled::new`] and not disabled since.
pub(crate) struct PciEnabled<'bound> {
    pdev: &'bound pci::Device,
    /// Already disabled by [`PciEnabled::disable_now`] (PCI shutdown).
    disabled: bool,
}

impl<'bound> PciEnabled<'bound> {
    /// Enables memory space and bus mastering of `pdev`.
    pub(crate) fn new(pdev: &'bound pci::Device<Core<'_>>) -> Result<Self> {
        pdev.enable_device_mem()?;
        pdev.set_master();
        // INVARIANT: enabled just above.
        Ok(Self {
            pdev,
            disabled: false,
        })
    }

    /// Clears bus mastering and disables the function now (PCI shutdown, upstream's
    /// `mlx5_pci_disable_device`), once: the drop then does nothing, so the enable
    /// count stays exact if a removal follows.
    pub(crate) fn disable_now(&mut self) {
        if !self.disabled {
            self.disabled = true;
            // SAFETY: `raw` gives the `struct pci_dev` of a device bound for `'bound`;
            // by the type invariant it was enabled by us exactly once, and `disabled`,
            // false until just now, says not disabled since: this disable balances it.
            unsafe { mlx5rs_pci_disable(raw(self.pdev)) };
        }
    }
}

impl Drop for PciEnabled<'_> {
    fn drop(&mut self) {
        if self.disabled {
            return;
        }
        // SAFETY: `raw` gives the `struct pci_dev` of a device that stays bound for
        // `'bound`; by the type invariant it was enabled by us exactly once, and
        // `disabled` says it was not disabled since.
        unsafe { mlx5rs_pci_disable(raw(self.pdev)) };
    }
}
