// SPDX-License-Identifier: GPL-2.0

//! Protection domains and transport domains. The verbs (alloc_pd, dealloc_pd) are
//! served by the device's ops ([`crate::ib::device`]), the transport domain by the user
//! context ([`crate::ib::uctx`]); their commands are the pure [`commands`].

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod commands;
