// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers over the C shim in this folder (and over raw bindings).
//!
//! The kernel crate of Linux 7.3 lacks a few things this driver needs (PCI disable,
//! PCI shutdown, affinity hints, ib_core (`rdma/ib.c`, `rdma/ib.rs`), devlink,
//! ...). Each one is a small C function, the core's in `ffi/core/*.c` and the RDMA
//! core's in `ffi/rdma/*.c`, with its prototype in `mlx5rs_ffi.h`,
//! declared here once and
//! wrapped in a type or function whose contract is documented; logic files never call
//! `extern "C"` functions directly.

mod core;
#[cfg(CONFIG_MLX5_RS_INFINIBAND)]
pub(crate) mod rdma;

pub(crate) use self::core::adapter::PciDriverAdapter;
pub(crate) use self::core::bar::{BarRange, DevresBarRange, DevresRequestedBar, RequestedBar};
pub(crate) use self::core::barrier::{dma_rmb, wmb};
pub(crate) use self::core::clock::{hz, real_ns, ClockPage, ClockVals};
pub(crate) use self::core::devlink::{Devlink, DevlinkOps};
pub(crate) use self::core::irq::{nth_online_cpu, AffinityHint};
pub(crate) use self::core::mm::{gfp_kernel_noretry_nowarn, mem_available_pages, random_bytes};
pub(crate) use self::core::pci::{PciEnabled, StopDmaOnDrop};
pub(crate) use self::core::pci_err::{
    channel_offline as pci_channel_offline, restore_state as pci_restore_state,
    save_state as pci_save_state, ChannelState, ErsResult, PciErrors,
};
pub(crate) use self::core::pm::PciPower;
pub(crate) use self::core::recover::{
    pci_cfg_read, pci_cfg_write, pci_has_bridge, pci_vsc_cap, PciRecover, RecoverKind,
    RecoveryHandle, RecoveryWork, SyncEvent,
};
pub(crate) use self::core::sched::{flush_work, num_online_cpus};
pub(crate) use self::core::shutdown::PciShutdown;
pub(crate) use self::core::work::{cancel_delayed_work_sync, cancel_work_sync, system_dfl};
