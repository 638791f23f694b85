// SPDX-License-Identifier: GPL-2.0

//! HCA lifecycle stages: ENABLE_HCA and INIT_HCA, each undone on drop.
//!
//! [`EnabledHca`] issues DISABLE_HCA when dropped; [`InitializedHca`] issues
//! TEARDOWN_HCA (graceful, then force as the fallback). The device object declares
//! them so that the HCA is torn down, then its pages reclaimed, then disabled.
//!
//! With `fast_unload` (the module parameter of that name, read once by the caller when
//! the HCA is initialized and stored here, so that a drop reads no global state),
//! [`InitializedHca`] first tries fast teardown ([`FastTeardown::run`]). Both
//! ask the function's [`Lifecycle`]: a dead device or one that confirmed fast teardown
//! gets no command at all (it would fail at once anyway, or ring the
//! doorbell of a device that stopped), and an HCA already closed by force teardown
//! gets no second TEARDOWN_HCA.

use kernel::{prelude::*, sync::Arc};

use crate::{
    cmd::commands::{DisableHca, EnableHca, InitHca, TeardownHca},
    hw::Hw,
    ifc::opcodes::teardown_profile,
    lifecycle::Lifecycle,
    teardown::{plan::Path, FastTeardown},
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
    teardown: FastTeardown,
    /// Try fast teardown first when dropped (decided at creation).
    fast_unload: bool,
}

impl InitializedHca {
    /// INIT_HCA, with `sw_owner_id` when the device supports it. Torn down with
    /// `teardown`; with `fast_unload`, the drop tries fast teardown before
    /// TEARDOWN_HCA.
    pub(crate) fn new(
        teardown: FastTeardown,
        sw_owner_id: Option<&[u8; 16]>,
        fast_unload: bool,
    ) -> Result<Self> {
        teardown.life().hw().run(InitHca { sw_owner_id })?;
        Ok(Self {
            teardown,
            fast_unload,
        })
    }

    /// Fast teardown now (PCI shutdown), see [`FastTeardown::run`].
    pub(crate) fn fast_teardown(&self, why: &str) -> Path {
        self.teardown.run(why)
    }
}

impl Drop for InitializedHca {
    fn drop(&mut self) {
        let life = self.teardown.life();
        if self.fast_unload {
            // Fast teardown where TEARDOWN_HCA goes: after the EQs are destroyed,
            // before the pages. Fast: nothing more; force: the HCA is closed and the
            // pages are reclaimed next; neither: the graceful path below.
            self.teardown.run("unload");
        }
        if life.hca_gone() {
            return;
        }
        let hw = life.hw();
        if hw
            .exec_cmd(TeardownHca {
                profile: teardown_profile::GRACEFUL_CLOSE,
            })
            .is_ok()
        {
            return;
        }
        dev_warn!(
            life.dev(),
            "graceful TEARDOWN_HCA failed; trying force teardown\n"
        );
        // A force close that answers FORCE_STATE_FAIL did not close the HCA either
        // (upstream `mlx5_cmd_force_teardown_hca`).
        let r = self.teardown.force();
        if r != crate::teardown::plan::Force::Ok {
            dev_err!(
                life.dev(),
                "force TEARDOWN_HCA failed too ({:?}); pages the device keeps will be leaked, not freed\n",
                r
            );
        }
    }
}
