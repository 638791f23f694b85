//! Emulated ConnectX (mlx5) adapter.
//!
//! A user-space firmware model served to QEMU's `vfio-user-pci` device. The library
//! holds the device model (PCI config space, BAR0, firmware, guest memory access) so
//! host tests can drive it without QEMU; `main.rs` wires it to a vfio-user socket and
//! a control socket.

#[path = "../../ifc/mod.rs"]
pub mod ifc;

pub mod config;
pub mod control;
pub mod control_port;
pub mod device;
pub mod dma_map;
pub mod fw;
pub mod irq;
pub mod mem;
pub mod pci_config;
pub mod regs;
pub mod relay;
pub mod report;
pub mod vfio;
pub mod vsc;
