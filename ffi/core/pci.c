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

/**
 * mlx5rs_device_trylock() - try to take a device's lock (device_trylock())
 * @dev: a device the caller holds a reference on
 *
 * Return: 1 when taken (release with mlx5rs_device_unlock()), 0 when held elsewhere.
 */
int mlx5rs_device_trylock(struct device *dev)
{
	return device_trylock(dev);
}

/**
 * mlx5rs_device_unlock() - release a lock mlx5rs_device_trylock() took
 * @dev: that device
 */
void mlx5rs_device_unlock(struct device *dev)
{
	device_unlock(dev);
}

/**
 * mlx5rs_pci_vsc_cap() - offset of the function's vendor-specific capability
 * @pdev: a PCI function
 *
 * Return: its configuration-space offset, 0 when it has none.
 */
int mlx5rs_pci_vsc_cap(struct pci_dev *pdev)
{
	return pci_find_capability(pdev, PCI_CAP_ID_VNDR);
}

/**
 * mlx5rs_pci_cfg_read() - read a configuration-space dword
 * @pdev: a PCI function
 * @off: byte offset
 * @val: the value read
 *
 * Return: 0 or a negative errno.
 */
int mlx5rs_pci_cfg_read(struct pci_dev *pdev, int off, u32 *val)
{
	return pcibios_err_to_errno(pci_read_config_dword(pdev, off, val));
}

/**
 * mlx5rs_pci_cfg_write() - write a configuration-space dword
 * @pdev: a PCI function
 * @off: byte offset
 * @val: the value
 *
 * Return: 0 or a negative errno.
 */
int mlx5rs_pci_cfg_write(struct pci_dev *pdev, int off, u32 val)
{
	return pcibios_err_to_errno(pci_write_config_dword(pdev, off, val));
}

/**
 * mlx5rs_pci_has_bridge() - whether a bridge sits above the function
 * @pdev: a PCI function
 *
 * A sync reset's hot reset resets the bus below that bridge (upstream
 * mlx5_is_reset_now_capable(): "PCI bus bridge is not accessible" without one).
 *
 * Return: 1 or 0.
 */
int mlx5rs_pci_has_bridge(struct pci_dev *pdev)
{
	return pdev->bus->self != NULL;
}

/**
 * mlx5rs_pci_reset_bus() - hot reset of the bus below the function's bridge
 * @pdev: a PCI function whose driver is bound, with its device lock NOT held by the
 *        caller
 *
 * A sync reset's PCI reset by the hot-reset method, as upstream mlx5_pci_reset_bus()
 * (fw_reset.c) does it: pci_reset_bus() tries the device locks of the bridge and of
 * every function below it, saves and disables each function, resets the secondary bus
 * and restores the saved configuration. It only tries the locks: a caller holding the
 * function's device lock would get -EAGAIN, and so does a caller racing another
 * holder (unbind, a devlink reload); the caller then decides whether to try again.
 * Sleeps.
 *
 * Return: 0, -EAGAIN (a device lock was held elsewhere), -ENOTTY (the bus cannot be
 * reset), or another negative errno.
 */
int mlx5rs_pci_reset_bus(struct pci_dev *pdev)
{
	return pci_reset_bus(pdev);
}
