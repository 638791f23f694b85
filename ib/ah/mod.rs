// SPDX-License-Identifier: GPL-2.0

//! Address handles (kernel shell): the AH verbs ([`AhVerbs`], the provider's
//! [`IbAhOps`]: create_ah, create_user_ah, query_ah; destroy_ah needs no Rust) as
//! software address vectors, no command; the address vector they build is the pure
//! [`av`].

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod av;

use kernel::prelude::*;
use zerocopy::IntoBytes;

use crate::ib::abi::{ah::create_ah_response, udata};
use crate::{
    cmd::commands::{gen_cap, GeneralCaps},
    ffi::rdma::{
        ib_ah::{AhAttr, IbAhOps},
        udata::UserData,
    },
    ifc::av::Av,
};

/// The AH verbs of one function.
pub(crate) struct AhVerbs {
    /// Cap `stat_rate_support`: the static rates an address vector may name.
    rates: u16,
}

impl AhVerbs {
    /// The verbs of a device with general caps `caps`.
    pub(crate) fn new(caps: &GeneralCaps) -> Self {
        Self {
            rates: caps.get(gen_cap::STAT_RATE_SUPPORT),
        }
    }
}

impl IbAhOps for AhVerbs {
    /// create_ah: the address vector of `attr`, and for a user AH the (empty on
    /// InfiniBand) response.
    ///
    /// # Errors
    ///
    /// `EINVAL` for a RoCE address (no GRH and MAC here) or a static rate outside the
    /// IB rates (`ah::av::encode`).
    fn create_ah(&self, attr: &AhAttr, user: Option<UserData<'_>>) -> Result<(Av, usize)> {
        // No allocation, no sleep, no log above debug: may run in atomic context.
        let rates = self.rates;
        let av = av::encode(attr, rates).map_err(|e| e.errno)?;
        let mut n = 0;
        if let Some(u) = user {
            // InfiniBand: no RoCE destination MAC, so no response (upstream).
            if let Some(r) = create_ah_response(None, u.outlen).map_err(|e| e.errno)? {
                n = udata::put(u.out, r.as_bytes());
            }
        }
        Ok((av, n))
    }

    fn query_ah(&self, av: &Av, ah_type: u32) -> AhAttr {
        av::decode(av, ah_type)
    }
}
