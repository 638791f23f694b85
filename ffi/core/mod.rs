// SPDX-License-Identifier: GPL-2.0

//! The core driver's shims: devlink, PCI disable, shutdown and error handlers, IRQ affinity hints, online
//! CPUs, workqueue calls, memory and random bytes.

pub(crate) mod bar;
pub(crate) mod clock;
pub(crate) mod devlink;
pub(crate) mod irq;
pub(crate) mod mm;
pub(crate) mod pci;
pub(crate) mod pci_err;
pub(crate) mod recover;
pub(crate) mod sched;
pub(crate) mod shutdown;
pub(crate) mod work;
