// SPDX-License-Identifier: GPL-2.0

//! HCA lifecycle stages: ENABLE_HCA and INIT_HCA, each undone on drop.
//!
//! [`EnabledHca`] issues DISABLE_HCA when dropped; [`InitializedHca`] issues
//! TEARDOWN_HCA (graceful, then force as the fallback). The device object declares
//! them so that the HCA is torn down, then its pages reclaimed, then disabled.

use kernel::{prelude::*, sync::Arc};

use crate::{cmd::commands, hw::Hw};

/// The function is enabled (ENABLE_HCA succeeded).
pub(crate) struct EnabledHca {
    hw: Arc<Hw>,
    dev: kernel::sync::aref::ARef<kernel::device::Device>,
    embedded_cpu: bool,
}

impl EnabledHca {
    /// ENABLE_HCA.
    pub(crate) fn new(dev: &kernel::device::Device, hw: &Arc<Hw>, embedded_cpu: bool) -> Result<Self> {
        commands::enable_hca(hw, embedded_cpu)?;
        Ok(Self { hw: hw.clone(), dev: dev.into(), embedded_cpu })
    }
}

impl Drop for EnabledHca {
    fn drop(&mut self) {
        if let Err(e) = commands::disable_hca(&self.hw, self.embedded_cpu) {
            dev_err!(self.dev, "DISABLE_HCA failed ({:?}); continuing teardown\n", e);
        }
    }
}

/// The HCA is initialized (INIT_HCA succeeded).
pub(crate) struct InitializedHca {
    hw: Arc<Hw>,
    dev: kernel::sync::aref::ARef<kernel::device::Device>,
}

impl InitializedHca {
    /// INIT_HCA, with `sw_owner_id` when the device supports it.
    pub(crate) fn new(dev: &kernel::device::Device, hw: &Arc<Hw>, sw_owner_id: Option<&[u8; 16]>) -> Result<Self> {
        commands::init_hca(hw, sw_owner_id)?;
        Ok(Self { hw: hw.clone(), dev: dev.into() })
    }
}

impl Drop for InitializedHca {
    fn drop(&mut self) {
        if commands::teardown_graceful(&self.hw).is_ok() {
            return;
        }
        dev_warn!(self.dev, "graceful TEARDOWN_HCA failed; trying force teardown\n");
        if let Err(e) = commands::teardown_force(&self.hw) {
            dev_err!(self.dev, "force TEARDOWN_HCA failed too ({:?}); pages the device keeps will be leaked, not freed\n", e);
        }
    }
}
