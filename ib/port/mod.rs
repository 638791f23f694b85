// SPDX-License-Identifier: GPL-2.0

//! Ports. The verbs (query_port, query_pkey, query_gid) are served by the device's ops
//! ([`crate::ib::device`]) over the pure parts here: [`attr`] (port attributes both ways,
//! MAD PortInfo or the HCA vport context with PTYS, PMTU and PVLC), [`commands`]
//! (MAD_IFC, HCA vport queries, port registers, node description, vendor id) and
//! [`events`] (port-change sub-type to IB events).

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod attr;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod commands;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod events;
