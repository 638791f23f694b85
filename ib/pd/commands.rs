// SPDX-License-Identifier: GPL-2.0

//! The verbs-resource commands of user contexts and PDs, one type each (see
//! [`crate::cmd::command::Command`]): ALLOC_PD / DEALLOC_PD and
//! ALLOC_TRANSPORT_DOMAIN / DEALLOC_TRANSPORT_DOMAIN, with `uid` 0 (no DEVX context,
//! as upstream without DEVX). The UAR pages of a context use the core's
//! [`crate::eq::commands::AllocUar`] / `DeallocUar`.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::{
    cmd::command::{CodecError, Command},
    ifc::{
        cmds::mbox_out,
        field::{Msg, MsgMut},
        ib_res::{
            alloc_pd_in, alloc_pd_out, alloc_transport_domain_in, alloc_transport_domain_out,
            dealloc_pd_in, dealloc_transport_domain_in,
        },
        opcodes::Opcode,
    },
};

/// ALLOC_PD: replies the PD number (24 bits by the field's width).
#[derive(Clone, Copy, Debug)]
pub struct AllocPd;

impl Command for AllocPd {
    const OPCODE: Opcode = Opcode::ALLOC_PD;
    type In = alloc_pd_in::Layout;
    type Out = alloc_pd_out::Layout;
    type Reply = u32;

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u32, CodecError> {
        Ok(o.get(alloc_pd_out::PD))
    }
}

/// DEALLOC_PD of PD `pdn`.
#[derive(Clone, Copy, Debug)]
pub struct DeallocPd {
    /// The PD number.
    pub pdn: u32,
}

impl Command for DeallocPd {
    const OPCODE: Opcode = Opcode::DEALLOC_PD;
    type In = dealloc_pd_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(dealloc_pd_in::PD, self.pdn)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// ALLOC_TRANSPORT_DOMAIN: replies the transport domain number.
#[derive(Clone, Copy, Debug)]
pub struct AllocTransportDomain;

impl Command for AllocTransportDomain {
    const OPCODE: Opcode = Opcode::ALLOC_TRANSPORT_DOMAIN;
    type In = alloc_transport_domain_in::Layout;
    type Out = alloc_transport_domain_out::Layout;
    type Reply = u32;

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u32, CodecError> {
        Ok(o.get(alloc_transport_domain_out::TRANSPORT_DOMAIN))
    }
}

/// DEALLOC_TRANSPORT_DOMAIN of domain `tdn`.
#[derive(Clone, Copy, Debug)]
pub struct DeallocTransportDomain {
    /// The transport domain number.
    pub tdn: u32,
}

impl Command for DeallocTransportDomain {
    const OPCODE: Opcode = Opcode::DEALLOC_TRANSPORT_DOMAIN;
    type In = dealloc_transport_domain_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(dealloc_transport_domain_in::TRANSPORT_DOMAIN, self.tdn)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}
