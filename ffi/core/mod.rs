// SPDX-License-Identifier: GPL-2.0

//! The core driver's shims: devlink, PCI disable, the PCI driver's shutdown, error
//! handlers, suspend and resume, IRQ affinity hints, online CPUs, workqueue calls,
//! memory and random bytes, and the DMA read barrier inline.

pub(crate) mod adapter;
pub(crate) mod bar;
pub(crate) mod barrier;
pub(crate) mod bound;
pub(crate) mod clock;
pub(crate) mod devlink;
pub(crate) mod irq;
pub(crate) mod mm;
pub(crate) mod pci;
pub(crate) mod pci_err;
pub(crate) mod pm;
pub(crate) mod recover;
pub(crate) mod sched;
pub(crate) mod shutdown;
pub(crate) mod work;
