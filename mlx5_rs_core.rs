// SPDX-License-Identifier: GPL-2.0

//! mlx5-rs: a Rust driver for NVIDIA ConnectX (mlx5) InfiniBand/RoCE adapters.
//!
//! This is the crate root of the `mlx5_rs.ko` module. The module is one crate whose
//! folders are its modules:
//!
//! - [`ifc`]: PRM layouts (pure `core` code, shared with the emulator and host tests);
//! - [`pci_ids`]: the ConnectX functions this driver binds;
//! - [`init_seg_io`]: access to the initialization segment in BAR0;
//! - [`device`]: the PCI driver and the per-function device object whose fields are
//!   the bring-up stages, acquired in order and released in reverse;
//! - [`cmd`], [`pagealloc`], [`eq`]: command interface, firmware pages, event queues;
//! - [`lifecycle`]: where a function stands (running, dead, torn down), shared by
//!   [`health`] (the health poll, fatal handling) and [`teardown`] (fast teardown, page
//!   parking);
//! - `ib`: the InfiniBand provider (Kconfig `MLX5_RS_INFINIBAND`);
//! - [`errno`]: the driver's errno type and its one conversion to the kernel's error;
//! - [`ffi`]: small documented wrappers over C the kernel crate does not offer;
//! - [`coherent_io`]: bounds-checked access to the coherent buffers shared with the device.

mod clock;
mod cmd;
mod coherent_io;
mod debugfs;
mod device;
mod devlink;
mod eq;
mod errno;
mod ffi;
mod hca;
mod health;
mod hw;
#[cfg(CONFIG_MLX5_RS_INFINIBAND)]
mod ib;
#[expect(
    unreachable_pub,
    reason = "shared with the emulator and host crates, whose public API these items are"
)]
mod ifc;
mod init_seg_io;
mod kfmt;
mod lifecycle;
mod pagealloc;
mod pci_ids;
mod teardown;
#[cfg(CONFIG_MLX5_RS_KUNIT_TEST)]
mod testing;

use kernel::{driver::Registration, prelude::*, InPlaceModule};

/// The module name, as the PCI driver registers.
const MODULE_NAME: &CStr = <LocalModule as kernel::ModuleMetadata>::NAME;

/// Health poll period in milliseconds (`health_poll_ms`).
pub(crate) fn health_poll_ms() -> u32 {
    module_parameters::health_poll_ms.value()
}

/// Whether unload uses fast teardown (`fast_unload`).
pub(crate) fn fast_unload() -> bool {
    module_parameters::fast_unload.value()
}

/// Set once the module starts to exit: a recovery waiting for the firmware gives up
/// (upstream's `MLX5_BREAK_FW_WAIT`), so that the driver's unregistration, which takes
/// the device lock that recovery holds, does not wait for the firmware's budget.
static EXITING: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Whether the module is exiting (see [`EXITING`]).
pub(crate) fn exiting() -> bool {
    EXITING.load(core::sync::atomic::Ordering::Acquire)
}

/// Sets [`EXITING`] when dropped: the module's first field, so dropped before the
/// driver is unregistered.
struct ExitFlag;

impl Drop for ExitFlag {
    fn drop(&mut self) {
        EXITING.store(true, core::sync::atomic::Ordering::Release);
    }
}

/// The module: the PCI driver, with the `shutdown` callback (see [`ffi::PciDriverAdapter`]).
#[pin_data]
struct Mlx5Module {
    // Dropped first (fields drop in declaration order): see [`EXITING`].
    _exiting: ExitFlag,
    #[pin]
    _driver: Registration<ffi::PciDriverAdapter<device::Mlx5Driver>>,
    // Module-wide debugfs root `mlx5_rs/`: created before the driver registration (so
    // a failed registration removes it again), dropped after it.
    _debugfs_root: debugfs::RootStorage,
}

impl InPlaceModule for Mlx5Module {
    fn init(module: &'static kernel::ThisModule) -> impl PinInit<Self, Error> {
        // Once per load, before any probe: every function's INIT_HCA uses it.
        device::draw_sw_owner_id();
        // SAFETY: module init runs once, before the driver is registered below.
        unsafe { debugfs::root_init() };
        // Fields are initialized in the order written here (and the initialized ones
        // dropped if a later one fails); they are dropped in declaration order.
        try_pin_init!(Self {
            _exiting: ExitFlag,
            _debugfs_root: debugfs::RootStorage::create(),
            _driver <- Registration::new(MODULE_NAME, module),
        })
    }
}

module! {
    type: Mlx5Module,
    name: "mlx5_rs",
    authors: ["mlx5-rs developers"],
    description: "Rust driver for NVIDIA ConnectX (mlx5) adapters",
    license: "GPL",
    params: {
        health_poll_ms: u32 {
            default: 2000,
            description: "Health poll period in milliseconds (minimum 10); the fatal sensors are checked every 250 ms in between",
        },
        fast_unload: bool {
            default: false,
            description: "Use fast teardown (prepare, nic_interface disabled, no page reclaim) on unload",
        },
    },
}
