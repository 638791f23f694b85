// SPDX-License-Identifier: GPL-2.0
/*
 * PCI helpers missing from the Rust pci abstraction.
 *
 * The kernel crate offers pci_enable_device_mem() and pci_set_master() but no way
 * back; a function enabled at probe must be disabled at unbind, or the enable count
 * leaks across rebinds.
 */
#include <linux/pci.h>
#include "mlx5rs_ffi.h"

/**
 * mlx5rs_pci_disable() - undo enable_device_mem() + set_master()
 * @pdev: a PCI function this driver enabled
 *
 * Clears bus mastering first, so the function can no longer start DMA, then drops
 * the enable reference.
 */
void mlx5rs_pci_disable(struct pci_dev *pdev)
{
	pci_clear_master(pdev);
	pci_disable_device(pdev);
}

/**
 * mlx5rs_pci_clear_master() - stop a function from starting DMA
 * @pdev: a PCI function this driver enabled
 *
 * Used before freeing memory the device might still write (mailboxes of a command
 * that never completed); idempotent, safe to call before mlx5rs_pci_disable().
 */
void mlx5rs_pci_clear_master(struct pci_dev *pdev)
{
	pci_clear_master(pdev);
}
