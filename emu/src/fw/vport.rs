//! HCA and NIC vport commands, served from the port model ([`super::port`]):
//! QUERY_HCA_VPORT_CONTEXT / _GID / _PKEY, MODIFY_HCA_VPORT_CONTEXT,
//! QUERY_VPORT_STATE and QUERY_NIC_VPORT_CONTEXT.
//!
//! The function is not a vport group manager (cap `vport_group_manager` 0), so
//! `other_vport` is refused (upstream's vport.c refuses it itself without the cap).
//! `port_num` 0 means the function's port (upstream sets it only when `num_ports` is
//! 2), 1 is the port itself, anything else is BAD_PARAM. Sources: emu/README.md.

use super::port::{cap, PORT_NUM};
use super::sma::bad_port;
use super::util::{bad_param, need_in, need_out, CmdResult};
use super::Firmware;
use crate::ifc::field::{Msg, MsgMut};
use crate::ifc::smp_attrs::port_state;
use crate::ifc::vport::{
    hca_vport_context as hvc, modify_hca_vport_context_in as mod_in, nic_vport_context as nvc,
    pkey_entry, query_hca_vport_context_in as qc_in, query_hca_vport_context_out as qc_out,
    query_hca_vport_gid_in as gid_in, query_hca_vport_gid_out as gid_out,
    query_hca_vport_pkey_in as pkey_in, query_hca_vport_pkey_out as pkey_out,
    query_nic_vport_context_in as nic_in, query_nic_vport_context_out as nic_out,
    query_vport_state_in as vs_in, query_vport_state_out as vs_out, vport_sel, vport_state,
    ALL_ENTRIES, GID_BYTES,
};

fn port_ok(port_num: u8) -> CmdResult {
    if port_num == 0 || port_num == PORT_NUM {
        Ok(())
    } else {
        Err(bad_port())
    }
}

/// A table range: every entry for [`ALL_ENTRIES`], else the one asked for.
fn entries(index: u16, len: usize) -> Result<std::ops::Range<usize>, super::util::CmdErr> {
    if index == ALL_ENTRIES {
        Ok(0..len)
    } else if usize::from(index) < len {
        Ok(usize::from(index)..usize::from(index) + 1)
    } else {
        Err(bad_param())
    }
}

impl Firmware {
    pub(super) fn query_hca_vport_context(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        need_in(input, qc_in::BYTES)?;
        need_out(out, qc_out::BYTES)?;
        let q = Msg::<qc_in::Layout>::new(input).ok_or_else(bad_param)?;
        if q.get(qc_in::OTHER_VPORT) {
            return Err(bad_param());
        }
        port_ok(q.get(qc_in::PORT_NUM))?;
        let p = &self.ib_port;
        let (state, phys) = self.ib_port_state();
        let mut o = MsgMut::<qc_out::Layout>::new(out).ok_or_else(bad_param)?;
        let mut c = o
            .nested::<hvc::Layout>(qc_out::HCA_VPORT_CONTEXT)
            .ok_or_else(bad_param)?;
        let r = (|| {
            // The function's own vport on a PF owns the port's SMI (upstream's
            // `set_has_smi_cap` then lets MAD_IFC carry SMPs).
            c.set(hvc::HAS_SMI, true)?;
            c.set(hvc::PORT_PHYSICAL_STATE, phys)?;
            c.set(hvc::VPORT_STATE_POLICY, p.vport_state_policy)?;
            c.set(hvc::PORT_STATE, state)?;
            c.set(hvc::VPORT_STATE, state)?;
            c.set(hvc::SYSTEM_IMAGE_GUID, p.sys_guid)?;
            c.set(hvc::PORT_GUID, p.port_guid())?;
            c.set(hvc::NODE_GUID, p.node_guid)?;
            c.set(hvc::CAP_MASK1, p.cap_mask)?;
            c.set(hvc::CAP_MASK1_FIELD_SELECT, cap::HOST_SETTABLE)?;
            c.set(hvc::CAP_MASK2, u32::from(p.cap_mask2))?;
            c.set(hvc::CAP_MASK2_FIELD_SELECT, 0)?;
            c.set(hvc::LID, p.lid)?;
            c.set(hvc::LMC, p.lmc)?;
            c.set(hvc::SUBNET_TIMEOUT, p.subnet_timeout)?;
            c.set(hvc::SM_LID, p.sm_lid)?;
            c.set(hvc::SM_SL, p.sm_sl)?;
            c.set(hvc::QKEY_VIOLATION_COUNTER, p.qkey_violations)?;
            c.set(hvc::PKEY_VIOLATION_COUNTER, p.pkey_violations)
        })();
        r.map_err(|_| bad_param())
    }

    pub(super) fn modify_hca_vport_context(&mut self, input: &[u8]) -> CmdResult {
        need_in(input, mod_in::BYTES)?;
        let q = Msg::<mod_in::Layout>::new(input).ok_or_else(bad_param)?;
        if q.get(mod_in::OTHER_VPORT) {
            return Err(bad_param());
        }
        port_ok(q.get(mod_in::PORT_NUM))?;
        let c = q
            .nested::<hvc::Layout>(mod_in::HCA_VPORT_CONTEXT)
            .ok_or_else(bad_param)?;
        let sel = c.get(hvc::FIELD_SELECT);
        let known = vport_sel::PORT_GUID | vport_sel::NODE_GUID | vport_sel::STATE_POLICY;
        let cap_sel = c.get(hvc::CAP_MASK1_FIELD_SELECT);
        if sel & !known != 0 || cap_sel & !cap::HOST_SETTABLE != 0 {
            return Err(bad_param());
        }
        let p = &mut self.ib_port;
        if sel & vport_sel::PORT_GUID != 0 {
            if let Some(g) = p.guids.first_mut() {
                *g = c.get(hvc::PORT_GUID);
            }
        }
        if sel & vport_sel::NODE_GUID != 0 {
            p.node_guid = c.get(hvc::NODE_GUID);
        }
        if sel & vport_sel::STATE_POLICY != 0 {
            p.vport_state_policy = c.get(hvc::VPORT_STATE_POLICY);
        }
        p.cap_mask = (p.cap_mask & !cap_sel) | (c.get(hvc::CAP_MASK1) & cap_sel);
        Ok(())
    }

    pub(super) fn query_hca_vport_gid(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        need_in(input, gid_in::BYTES)?;
        let q = Msg::<gid_in::Layout>::new(input).ok_or_else(bad_param)?;
        if q.get(gid_in::OTHER_VPORT) {
            return Err(bad_param());
        }
        port_ok(q.get(gid_in::PORT_NUM))?;
        let p = &self.ib_port;
        let range = entries(q.get(gid_in::GID_INDEX), p.guids.len())?;
        need_out(out, gid_out::BYTES + range.len() * GID_BYTES)?;
        let mut o = MsgMut::<gid_out::Layout>::new(out).ok_or_else(bad_param)?;
        let n = u16::try_from(range.len()).map_err(|_| bad_param())?;
        o.set(gid_out::GIDS_NUM, n).map_err(|_| bad_param())?;
        let dst = o.bytes_mut(gid_out::GID);
        for (chunk, g) in dst.chunks_exact_mut(GID_BYTES).zip(&p.guids[range]) {
            chunk[..8].copy_from_slice(&p.subnet_prefix.to_be_bytes());
            chunk[8..].copy_from_slice(&g.to_be_bytes());
        }
        Ok(())
    }

    pub(super) fn query_hca_vport_pkey(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        need_in(input, pkey_in::BYTES)?;
        let q = Msg::<pkey_in::Layout>::new(input).ok_or_else(bad_param)?;
        if q.get(pkey_in::OTHER_VPORT) {
            return Err(bad_param());
        }
        port_ok(q.get(pkey_in::PORT_NUM))?;
        let p = &self.ib_port;
        let range = entries(q.get(pkey_in::PKEY_INDEX), p.pkeys.len())?;
        need_out(out, pkey_out::BYTES + range.len() * pkey_entry::BYTES)?;
        let mut o = MsgMut::<pkey_out::Layout>::new(out).ok_or_else(bad_param)?;
        let dst = o.bytes_mut(pkey_out::PKEY);
        for (chunk, k) in dst.chunks_exact_mut(pkey_entry::BYTES).zip(&p.pkeys[range]) {
            let mut e = MsgMut::<pkey_entry::Layout>::new(chunk).ok_or_else(bad_param)?;
            e.set(pkey_entry::PKEY, *k).map_err(|_| bad_param())?;
        }
        Ok(())
    }

    pub(super) fn query_vport_state(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        need_in(input, vs_in::BYTES)?;
        need_out(out, vs_out::BYTES)?;
        let q = Msg::<vs_in::Layout>::new(input).ok_or_else(bad_param)?;
        if q.get(vs_in::OTHER_VPORT) {
            return Err(bad_param());
        }
        let (state, _) = self.ib_port_state();
        let up = |b: bool| {
            if b {
                vport_state::UP
            } else {
                vport_state::DOWN
            }
        };
        let mut o = MsgMut::<vs_out::Layout>::new(out).ok_or_else(bad_param)?;
        o.set(vs_out::ADMIN_STATE, up(self.port_admin_up))
            .map_err(|_| bad_param())?;
        o.set(vs_out::STATE, up(state == port_state::ACTIVE))
            .map_err(|_| bad_param())
    }

    pub(super) fn query_nic_vport_context(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        need_in(input, nic_in::BYTES)?;
        need_out(out, nic_out::BYTES)?;
        let q = Msg::<nic_in::Layout>::new(input).ok_or_else(bad_param)?;
        if q.get(nic_in::OTHER_VPORT) {
            return Err(bad_param());
        }
        let p = &self.ib_port;
        let mut o = MsgMut::<nic_out::Layout>::new(out).ok_or_else(bad_param)?;
        let mut c = o
            .nested::<nvc::Layout>(nic_out::NIC_VPORT_CONTEXT)
            .ok_or_else(bad_param)?;
        let r = (|| {
            c.set(nvc::SYSTEM_IMAGE_GUID, p.sys_guid)?;
            c.set(nvc::PORT_GUID, p.port_guid())?;
            c.set(nvc::NODE_GUID, p.node_guid)?;
            c.set(nvc::QKEY_VIOLATION_COUNTER, p.qkey_violations)
        })();
        r.map_err(|_| bad_param())
    }
}
