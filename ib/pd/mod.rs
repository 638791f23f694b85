// SPDX-License-Identifier: GPL-2.0

//! Protection domains and transport domains (kernel shell): the PD verbs
//! ([`PdVerbs`], the provider's [`IbPdOps`]: alloc_pd, dealloc_pd) and, for the user
//! context ([`crate::ib::uctx`]), the transport domain; their commands are the pure
//! [`commands`].

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod commands;

use kernel::{prelude::*, sync::Arc};

use crate::ib::{
    abi::{ah::alloc_pd_response, udata},
    pd::commands::{AllocPd, DeallocPd},
};
use crate::{
    ffi::rdma::{ib_pd::IbPdOps, udata::UserData},
    hw::Hw,
};

/// The PD verbs of one function.
pub(crate) struct PdVerbs {
    hw: Arc<Hw>,
}

impl PdVerbs {
    /// The verbs over the command path `hw`.
    pub(crate) fn new(hw: Arc<Hw>) -> Self {
        Self { hw }
    }
}

impl IbPdOps for PdVerbs {
    /// ALLOC_PD.
    ///
    /// # Errors
    ///
    /// The command's errno ([`Hw::exec_cmd`]).
    fn alloc_pd(&self) -> Result<u32> {
        self.hw.run(AllocPd)
    }

    fn alloc_pd_response(&self, pdn: u32, u: UserData<'_>) -> usize {
        udata::put(u.out, udata::response(&alloc_pd_response(pdn), u.outlen))
    }

    /// DEALLOC_PD.
    ///
    /// # Errors
    ///
    /// The command's errno ([`Hw::exec_cmd`]; 0 when the device is dead, as upstream).
    fn dealloc_pd(&self, pdn: u32) -> Result {
        match self.hw.exec_cmd(DeallocPd { pdn }) {
            Err(e) if !e.gone_with_dead_device() => Err(e.errno().into()),
            _ => Ok(()),
        }
    }
}
