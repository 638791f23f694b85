// SPDX-License-Identifier: GPL-2.0

//! The PCI driver and the per-function device object.
//!
//! Bring-up is a sequence of stages. Each stage is a field of [`Mlx5Device`]; fields are
//! initialized in declaration order and dropped in declaration order, so the fields are
//! listed from the *last* acquired to the *first* acquired: a failure at any stage (or
//! unbind) undoes exactly the stages that succeeded, in reverse order.
//!
//! Stages so far: PCI function enabled with bus mastering ([`ffi::PciEnabled`]) → BAR0
//! mapped → firmware ready (`initializing` clear) → command-interface revision checked.

use kernel::{device::Core, pci, prelude::*, time::Delta};

use crate::{
    ffi,
    ifc::init_seg as seg,
    init_seg::{Bar0, InitSeg},
    pci_ids::FunctionInfo,
};

/// How long to wait for the firmware to clear `initializing` before the first
/// command (upstream's FW pre-init budget is 120 s; the device's own FW_INIT
/// timeout only applies once the command interface is up).
const FW_PRE_INIT_TIMEOUT: Delta = Delta::from_secs(120);

/// The driver type registered with the PCI core.
pub(crate) struct Mlx5Driver;

/// One bound ConnectX function.
///
/// INVARIANT: field order is teardown order (see module doc).
pub(crate) struct Mlx5Device<'bound> {
    pdev: &'bound pci::Device,
    info: &'bound FunctionInfo,
    bar: Bar0<'bound>,
    _enabled: ffi::PciEnabled<'bound>,
}

impl pci::Driver for Mlx5Driver {
    type IdInfo = FunctionInfo;
    type Data<'bound> = Mlx5Device<'bound>;

    const ID_TABLE: pci::IdTable<Self::IdInfo> = &crate::pci_ids::PCI_TABLE;

    fn probe<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        info: Option<&'bound Self::IdInfo>,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        Mlx5Device::bring_up(pdev, info)
    }

    fn unbind<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&Self::Data<'bound>>) {
        dev_info!(pdev, "{}: unbinding\n", this.info.name);
    }
}

impl<'bound> Mlx5Device<'bound> {
    fn bring_up(
        pdev: &'bound pci::Device<Core<'_>>,
        info: Option<&'bound FunctionInfo>,
    ) -> Result<Self> {
        // Every entry of the ID table carries info; a missing one is reported, not unwrapped.
        let info = info.ok_or(ENODEV)?;
        let enabled = ffi::PciEnabled::new(pdev)?;
        let bar = pdev.iomap_region_sized::<{ seg::MAPPED_SIZE }>(0, c"mlx5_rs/bar0")?;
        let is = InitSeg::new(&bar);

        is.wait_fw_ready(pdev, FW_PRE_INIT_TIMEOUT)?;
        let fw = is.fw_version()?;
        let cmdif = is.cmdif_revision()?;
        dev_info!(
            pdev,
            "{}{}: firmware {}, command interface revision {}\n",
            info.name,
            if info.is_vf { " (VF)" } else { "" },
            fw,
            cmdif
        );
        if cmdif != seg::CMD_IF_REV {
            dev_err!(
                pdev,
                "unsupported command interface revision {} (driver supports {}); not binding\n",
                cmdif,
                seg::CMD_IF_REV
            );
            return Err(EOPNOTSUPP);
        }
        if is.initializing()? {
            dev_err!(pdev, "firmware re-entered initializing state\n");
            return Err(EIO);
        }

        Ok(Self {
            pdev,
            info,
            bar,
            _enabled: enabled,
        })
    }
}

impl Drop for Mlx5Device<'_> {
    fn drop(&mut self) {
        // Touch the BAR one last time so a log names the firmware we leave behind.
        let fw = InitSeg::new(&self.bar).fw_version();
        match fw {
            Ok(fw) => dev_info!(self.pdev, "{}: released (firmware {})\n", self.info.name, fw),
            Err(e) => dev_info!(self.pdev, "{}: released ({:?})\n", self.info.name, e),
        }
    }
}
