// SPDX-License-Identifier: GPL-2.0

//! mlx5-rs: a Rust driver for NVIDIA ConnectX (mlx5) InfiniBand/RoCE adapters.
//!
//! This is the crate root of the `mlx5_rs.ko` module. The module is one crate whose
//! folders are its modules:
//!
//! - [`ifc`]: PRM layouts (pure `core` code, shared with the emulator and host tests);
//! - [`pci_ids`]: the ConnectX functions this driver binds;
//! - [`init_seg`]: access to the initialization segment in BAR0;
//! - [`device`]: the PCI driver and the per-function device object whose fields are
//!   the bring-up stages, acquired in order and released in reverse;
//! - [`cmd`], [`pagealloc`], [`eq`]: command interface, firmware pages, event queues;
//! - [`ib`]: the InfiniBand provider;
//! - [`ffi`]: small documented wrappers over C the kernel crate does not offer.

mod cmd;
mod debugfs;
mod device;
mod eq;
mod ffi;
mod hca;
mod hw;
mod ib;
// The PRM tables describe whole structures, shared with the emulator; the driver
// uses only the fields it needs.
#[allow(dead_code, unreachable_pub, missing_docs)]
mod ifc;
mod init_seg;
mod kfmt;
mod pagealloc;
mod pci_ids;

kernel::module_pci_driver! {
    type: device::Mlx5Driver,
    name: "mlx5_rs",
    authors: ["mlx5-rs developers"],
    description: "Rust driver for NVIDIA ConnectX (mlx5) adapters",
    license: "GPL",
}
