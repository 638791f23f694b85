// SPDX-License-Identifier: GPL-2.0

//! The ConnectX PCI functions this driver binds, with their names.
//!
//! ConnectX-4 through ConnectX-8, physical and virtual functions. Since
//! ConnectX-6 Dx, every generation's VF uses the common 0x101e ID.

use kernel::pci;

/// What the ID table tells the driver about a function.
#[derive(Debug)]
pub(crate) struct FunctionInfo {
    /// Marketing name of the adapter family.
    pub(crate) name: &'static str,
    /// Whether this is an SR-IOV virtual function.
    pub(crate) is_vf: bool,
}

const fn pf(name: &'static str) -> FunctionInfo {
    FunctionInfo { name, is_vf: false }
}

const fn vf(name: &'static str) -> FunctionInfo {
    FunctionInfo { name, is_vf: true }
}

const fn mlx(device: u16) -> pci::DeviceId {
    pci::DeviceId::from_id(pci::Vendor::MELLANOX, device as u32)
}

kernel::pci_device_table!(
    PCI_TABLE,
    <crate::device::Mlx5Driver as pci::Driver>::IdInfo,
    [
        (mlx(0x1013), pf("ConnectX-4")),
        (mlx(0x1014), vf("ConnectX-4 VF")),
        (mlx(0x1015), pf("ConnectX-4 Lx")),
        (mlx(0x1016), vf("ConnectX-4 Lx VF")),
        (mlx(0x1017), pf("ConnectX-5")),
        (mlx(0x1018), vf("ConnectX-5 VF")),
        (mlx(0x1019), pf("ConnectX-5 Ex")),
        (mlx(0x101a), vf("ConnectX-5 Ex VF")),
        (mlx(0x101b), pf("ConnectX-6")),
        (mlx(0x101c), vf("ConnectX-6 VF")),
        (mlx(0x101d), pf("ConnectX-6 Dx")),
        (mlx(0x101e), vf("ConnectX family mlx5Gen VF")),
        (mlx(0x101f), pf("ConnectX-6 Lx")),
        (mlx(0x1021), pf("ConnectX-7")),
        (mlx(0x1023), pf("ConnectX-8")),
    ]
);

/// The ID table the driver registers.
pub(crate) const ID_TABLE: pci::IdTable<FunctionInfo> = &PCI_TABLE;
