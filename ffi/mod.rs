// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers over the C shim in this folder (and over raw bindings).
//!
//! The kernel crate of Linux 7.3 lacks a few things this driver needs (PCI disable,
//! PCI shutdown, affinity hints, ib_core (`ib.c`, `ib.rs`), and later devlink, ...).
//! Each one is a small C function in `ffi/*.c` with its prototype in `mlx5rs_ffi.h`,
//! declared here once and
//! wrapped in a type or function whose contract is documented; logic files never call
//! `extern "C"` functions directly.

#[cfg(CONFIG_MLX5_RS_INFINIBAND)]
pub(crate) mod ib;
#[cfg(CONFIG_MLX5_RS_INFINIBAND)]
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod ib_abi;
#[cfg(CONFIG_MLX5_RS_INFINIBAND)]
pub(crate) mod ib_cq;
#[cfg(CONFIG_MLX5_RS_INFINIBAND)]
pub(crate) mod ib_mr;
#[cfg(CONFIG_MLX5_RS_INFINIBAND)]
pub(crate) mod ib_qp;
#[cfg(CONFIG_MLX5_RS_INFINIBAND)]
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod ib_qp_abi;
#[cfg(CONFIG_MLX5_RS_INFINIBAND)]
pub(crate) mod ib_srq;
#[cfg(CONFIG_MLX5_RS_INFINIBAND)]
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod ib_srq_abi;
mod irq;
mod mm;
mod pci;
mod sched;
mod shutdown;
#[cfg(CONFIG_MLX5_RS_INFINIBAND)]
pub(crate) mod umem;
mod work;

pub(crate) use irq::{nth_online_cpu, AffinityHint};
pub(crate) use mm::{gfp_kernel_noretry_nowarn, mem_available_pages, random_bytes};
pub(crate) use pci::{PciEnabled, StopDmaOnDrop};
pub(crate) use sched::{flush_work, num_online_cpus};
pub(crate) use shutdown::{PciShutdown, ShutdownAdapter};
pub(crate) use work::{cancel_delayed_work_sync, system_dfl};
