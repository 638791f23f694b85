// SPDX-License-Identifier: GPL-2.0

//! HCA lifecycle stages: ENABLE_HCA and INIT_HCA, each undone on drop.
//!
//! [`EnabledHca`] issues DISABLE_HCA when dropped; [`InitializedHca`] issues
//! TEARDOWN_HCA (graceful, then force as the fallback). The device object declares
//! them so that the HCA is torn down, then its pages reclaimed, then disabled.
//!
//! With the `fast_unload` module parameter, [`InitializedHca`] first tries fast
//! teardown ([`Lifecycle::fast_teardown`]). Both ask the function's [`Lifecycle`]: a dead device or one that confirmed
//! fast teardown gets no command at all (it would fail at once anyway, or ring the
//! doorbell of a device that stopped), and an HCA already closed by force teardown
//! gets no second TEARDOWN_HCA.

use kernel::{prelude::*, sync::Arc};

use crate::{
    cmd::commands::{DisableHca, EnableHca, InitHca, TeardownHca},
    hw::Hw,
    ifc::opcodes::teardown_profile,
    teardown::Lifecycle,
};

/// The function is enabled (ENABLE_HCA succeeded).
pub(crate) struct EnabledHca {
    life: Arc<Lifecycle>,
    embedded_cpu: bool,
}

impl EnabledHca {
    /// ENABLE_HCA.
    pub(crate) fn new(life: &Arc<Lifecycle>, embedded_cpu: bool) -> Result<Self> {
        life.hw().run(EnableHca { embedded_cpu })?;
        Ok(Self {
            life: life.clone(),
            embedded_cpu,
        })
    }

    fn hw(&self) -> &Hw {
        self.life.hw()
    }
}

impl Drop for EnabledHca {
    fn drop(&mut self) {
        if self.life.silent() {
            return;
        }
        if let Err(e) = self.hw().exec_cmd(DisableHca {
            embedded_cpu: self.embedded_cpu,
        }) {
            dev_err!(
                self.life.dev(),
                "DISABLE_HCA failed ({:?}); continuing teardown\n",
                e
            );
        }
    }
}

/// The HCA is initialized (INIT_HCA succeeded).
pub(crate) struct InitializedHca {
    life: Arc<Lifecycle>,
}

impl InitializedHca {
    /// INIT_HCA, with `sw_owner_id` when the device supports it.
    pub(crate) fn new(life: &Arc<Lifecycle>, sw_owner_id: Option<&[u8; 16]>) -> Result<Self> {
        life.hw().run(InitHca { sw_owner_id })?;
        Ok(Self { life: life.clone() })
    }
}

impl Drop for InitializedHca {
    fn drop(&mut self) {
        if crate::fast_unload() {
            // Fast teardown where TEARDOWN_HCA goes: after the EQs are destroyed,
            // before the pages. Fast: nothing more; force: the HCA is closed and the
            // pages are reclaimed next; neither: the graceful path below.
            self.life.fast_teardown("unload");
        }
        if self.life.hca_gone() {
            return;
        }
        let hw = self.life.hw();
        if hw
            .exec_cmd(TeardownHca {
                profile: teardown_profile::GRACEFUL_CLOSE,
            })
            .is_ok()
        {
            return;
        }
        dev_warn!(
            self.life.dev(),
            "graceful TEARDOWN_HCA failed; trying force teardown\n"
        );
        // A force close that answers FORCE_STATE_FAIL did not close the HCA either
        // (upstream `mlx5_cmd_force_teardown_hca`).
        let r = self.life.force();
        if r != crate::teardown::plan::Force::Ok {
            dev_err!(
                self.life.dev(),
                "force TEARDOWN_HCA failed too ({:?}); pages the device keeps will be leaked, not freed\n",
                r
            );
        }
    }
}
