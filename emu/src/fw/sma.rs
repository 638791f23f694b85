//! MAD_IFC: the firmware's subnet management agent, for the local host: upstream's
//! MAD layer hands SMPs and PerfMgmt MADs that arrive on the host's QP0 / QP1 to
//! mlx5_ib, which asks here (mlx5 mad.c `mlx5_ib_process_mad`; `dp/mad.rs`).
//!
//! Answers SubnGet(NodeInfo, NodeDescription, PortInfo, GUIDInfo, P_KeyTable), LID
//! routed or directed route, from the port model ([`super::port`]); PerfMgmt MADs go
//! to the performance management agent (`pma.rs`). Everything else is refused the way an IBTA agent refuses it: the command succeeds and the response
//! MAD carries the MAD status (IBTA 13.4.7). Only a malformed command (short input or
//! output, a port the device does not have) fails the command itself. Sources and
//! choices: emu/README.md ("InfiniBand port").

use super::port::{self, PORT_NUM};
use super::util::{need_in, need_out, CmdErr, CmdResult};
use super::{syndrome, Firmware};
use crate::ifc::field::{Msg, MsgMut};
use crate::ifc::mad::{mad_ifc_in, mad_ifc_out, mad_status, method, mgmt_class, smp, smp_attr};
use crate::ifc::mad::{BASE_VERSION, MAD_BYTES, SM_CLASS_VERSION};
use crate::ifc::smp_attrs::{
    guid_info, node_desc, node_info, node_type, pkey_table, port_info, GUIDS_PER_BLOCK,
    PKEYS_PER_BLOCK,
};
use crate::ifc::status::CmdStatus;

/// A MAD refused with this IBTA status.
pub(super) type MadResult = Result<(), u16>;

/// A port number the device does not have.
pub fn bad_port() -> CmdErr {
    (CmdStatus::BAD_PARAM_ERR, syndrome::BAD_PORT)
}

impl Firmware {
    pub(super) fn mad_ifc(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        need_in(input, mad_ifc_in::BYTES)?;
        need_out(out, mad_ifc_out::BYTES)?;
        let inp = Msg::<mad_ifc_in::Layout>::new(input).ok_or_else(super::util::bad_param)?;
        if inp.get(mad_ifc_in::PORT) != PORT_NUM {
            return Err(bad_port());
        }
        let req = inp.bytes(mad_ifc_in::MAD);
        let mut o = MsgMut::<mad_ifc_out::Layout>::new(out).ok_or_else(super::util::bad_param)?;
        let resp = o.bytes_mut(mad_ifc_out::RESPONSE_MAD_PACKET);
        self.agent_answer(req, resp)
    }

    /// The port's agents (SMA, PMA) answer the MAD `req` into `resp` (both at least
    /// [`MAD_BYTES`]): MAD_IFC comes here, and the MAD QPs of the data path only
    /// with the opt-in port knob `mad_agents_in_device` (`dp/mad.rs`). A refusal is a MAD status in the response; `Err` only for short
    /// buffers.
    pub(crate) fn agent_answer(&mut self, req: &[u8], resp: &mut [u8]) -> CmdResult {
        if req.len() < MAD_BYTES || resp.len() < MAD_BYTES {
            return Err(super::util::bad_param());
        }
        let resp = &mut resp[..MAD_BYTES];
        resp.copy_from_slice(&req[..MAD_BYTES]);
        let q = Msg::<smp::Layout>::new(req).ok_or_else(super::util::bad_param)?;
        let status = if q.get(smp::MGMT_CLASS) == mgmt_class::PERF_MGMT {
            // The performance management agent (pma.rs).
            self.answer_pma(&q, resp)
        } else {
            let mut r = MsgMut::<smp::Layout>::new(resp).ok_or_else(super::util::bad_param)?;
            match self.answer_mad(&q, &mut r) {
                Ok(()) => mad_status::SUCCESS,
                Err(st) => {
                    r.bytes_mut(smp::DATA).fill(0);
                    st
                }
            }
        };
        let mut r = MsgMut::<smp::Layout>::new(resp).ok_or_else(super::util::bad_param)?;
        let m = q.get(smp::METHOD);
        if m & method::RESP == 0 {
            // Get and Set are answered with GetResp (IBTA 13.4.5); other methods keep
            // theirs with the response bit.
            let resp_method = if m == method::SET {
                method::GET_RESP
            } else {
                m | method::RESP
            };
            r.set(smp::METHOD, resp_method)
                .map_err(|_| super::util::bad_param())?;
        }
        // Keep a directed-route request's direction bit (upstream's process_mad sets it
        // on the way back, mlx5_ib mad.c); the status is ours.
        let dir = q.get(smp::STATUS) & mad_status::SMP_DIRECTION;
        r.set(smp::STATUS, status | dir)
            .map_err(|_| super::util::bad_param())?;
        log::debug!(
            "agent MAD class {:#x} method {m:#x} attr {:#x}: MAD status {status:#x}",
            q.get(smp::MGMT_CLASS),
            q.get(smp::ATTR_ID)
        );
        Ok(())
    }

    /// Fills the response's data; `Err` is the MAD status of a refusal.
    fn answer_mad(&self, q: &Msg<'_, smp::Layout>, r: &mut MsgMut<'_, smp::Layout>) -> MadResult {
        if q.get(smp::BASE_VERSION) != BASE_VERSION {
            return Err(mad_status::BAD_VERSION);
        }
        let class = q.get(smp::MGMT_CLASS);
        if class != mgmt_class::SUBN_LID_ROUTED && class != mgmt_class::SUBN_DIRECTED_ROUTE {
            // Congestion and vendor classes are not modelled (emu/README.md).
            return Err(mad_status::UNSUPPORTED_METHOD_ATTRIB);
        }
        if q.get(smp::CLASS_VERSION) != SM_CLASS_VERSION {
            return Err(mad_status::BAD_VERSION);
        }
        match q.get(smp::METHOD) {
            method::GET => {}
            // SubnSet: the port is configured by the subnet manager outside the host
            // (the control request `ib_port`), not through the local SMA.
            method::SET => return Err(mad_status::UNSUPPORTED_METHOD_ATTRIB),
            _ => return Err(mad_status::UNSUPPORTED_METHOD),
        }
        let attr_mod = q.get(smp::ATTR_MOD);
        let data = r.bytes_mut(smp::DATA);
        data.fill(0);
        match q.get(smp::ATTR_ID) {
            smp_attr::NODE_INFO => self.node_info(data),
            smp_attr::NODE_DESC => {
                let mut d = MsgMut::<node_desc::Layout>::new(data)
                    .ok_or(mad_status::INVALID_ATTRIB_VALUE)?;
                d.bytes_mut(node_desc::NODE_STRING)
                    .copy_from_slice(&self.ib_port.node_desc);
                Ok(())
            }
            smp_attr::PORT_INFO => {
                // A CA's PortInfo modifier is the port number; 0 = the port the MAD
                // arrived on (IBTA 14.2.5.6).
                if attr_mod != 0 && attr_mod != u32::from(PORT_NUM) {
                    return Err(mad_status::INVALID_ATTRIB_VALUE);
                }
                self.port_info(data)
            }
            smp_attr::GUID_INFO => self.guid_info(data, attr_mod),
            smp_attr::PKEY_TABLE => self.pkey_table(data, attr_mod),
            _ => Err(mad_status::UNSUPPORTED_METHOD_ATTRIB),
        }
    }

    fn node_info(&self, data: &mut [u8]) -> MadResult {
        let p = &self.ib_port;
        let mut n =
            MsgMut::<node_info::Layout>::new(data).ok_or(mad_status::INVALID_ATTRIB_VALUE)?;
        let bad = |_| mad_status::INVALID_ATTRIB_VALUE;
        n.set(node_info::BASE_VERSION, BASE_VERSION).map_err(bad)?;
        n.set(node_info::CLASS_VERSION, SM_CLASS_VERSION)
            .map_err(bad)?;
        n.set(node_info::NODE_TYPE, node_type::CA).map_err(bad)?;
        n.set(node_info::NUM_PORTS, PORT_NUM).map_err(bad)?;
        n.set(node_info::SYSTEM_IMAGE_GUID, p.sys_guid)
            .map_err(bad)?;
        n.set(node_info::NODE_GUID, p.node_guid).map_err(bad)?;
        n.set(node_info::PORT_GUID, p.port_guid()).map_err(bad)?;
        let pkeys = u16::try_from(p.pkeys.len()).unwrap_or(u16::MAX);
        n.set(node_info::PARTITION_CAP, pkeys).map_err(bad)?;
        n.set(node_info::DEVICE_ID, crate::pci_config::DEVICE_ID)
            .map_err(bad)?;
        n.set(node_info::REVISION, 0).map_err(bad)?;
        n.set(node_info::LOCAL_PORT_NUM, PORT_NUM).map_err(bad)?;
        n.set(node_info::VENDOR_ID, port::VENDOR_OUI).map_err(bad)?;
        Ok(())
    }

    fn port_info(&self, data: &mut [u8]) -> MadResult {
        use port_info as pi;
        let p = &self.ib_port;
        let (state, phys) = self.ib_port_state();
        let up = state != crate::ifc::smp_attrs::port_state::DOWN;
        let mut m = MsgMut::<pi::Layout>::new(data).ok_or(mad_status::INVALID_ATTRIB_VALUE)?;
        let bad = |_| mad_status::INVALID_ATTRIB_VALUE;
        let guid_cap = u8::try_from(p.guids.len()).unwrap_or(u8::MAX);
        m.set(pi::MKEY, 0).map_err(bad)?;
        m.set(pi::GID_PREFIX, p.subnet_prefix).map_err(bad)?;
        m.set(pi::LID, p.lid).map_err(bad)?;
        m.set(pi::MASTER_SM_LID, p.sm_lid).map_err(bad)?;
        m.set(pi::CAPABILITY_MASK, p.cap_mask).map_err(bad)?;
        m.set(pi::LOCAL_PORT_NUM, PORT_NUM).map_err(bad)?;
        m.set(pi::LINK_WIDTH_ENABLED, port::WIDTH_1X_4X)
            .map_err(bad)?;
        m.set(pi::LINK_WIDTH_SUPPORTED, port::WIDTH_1X_4X)
            .map_err(bad)?;
        m.set(pi::LINK_WIDTH_ACTIVE, if up { port::WIDTH_4X } else { 0 })
            .map_err(bad)?;
        // SDR|DDR|QDR supported and enabled; the extended speeds below.
        m.set(pi::LINK_SPEED_SUPPORTED, 7).map_err(bad)?;
        m.set(pi::LINK_SPEED_ENABLED, 7).map_err(bad)?;
        m.set(pi::PORT_STATE, state).map_err(bad)?;
        m.set(pi::PORT_PHYS_STATE, phys).map_err(bad)?;
        // LinkDownDefaultState 2 = Polling.
        m.set(pi::LINK_DOWN_DEFAULT_STATE, 2).map_err(bad)?;
        m.set(pi::LMC, p.lmc).map_err(bad)?;
        let speed = if up { p.speed.link_speed_active() } else { 0 };
        m.set(pi::LINK_SPEED_ACTIVE, speed).map_err(bad)?;
        m.set(pi::NEIGHBOR_MTU, port::MTU_4096).map_err(bad)?;
        m.set(pi::MASTER_SM_SL, p.sm_sl).map_err(bad)?;
        m.set(pi::VL_CAP, port::VL_CAP_0_7).map_err(bad)?;
        m.set(pi::VL_HIGH_LIMIT, 4).map_err(bad)?;
        m.set(pi::VL_ARB_HIGH_CAP, 8).map_err(bad)?;
        m.set(pi::VL_ARB_LOW_CAP, 8).map_err(bad)?;
        m.set(pi::MTU_CAP, port::MTU_4096).map_err(bad)?;
        m.set(pi::VL_STALL_COUNT, 7).map_err(bad)?;
        m.set(pi::HOQ_LIFE, 31).map_err(bad)?;
        m.set(pi::OPERATIONAL_VLS, port::VL_CAP_0_7).map_err(bad)?;
        m.set(pi::PARTITION_ENFORCEMENT_INBOUND, true)
            .map_err(bad)?;
        m.set(pi::PARTITION_ENFORCEMENT_OUTBOUND, true)
            .map_err(bad)?;
        m.set(pi::PKEY_VIOLATIONS, p.pkey_violations).map_err(bad)?;
        m.set(pi::QKEY_VIOLATIONS, p.qkey_violations).map_err(bad)?;
        m.set(pi::GUID_CAP, guid_cap).map_err(bad)?;
        m.set(pi::SUBNET_TIMEOUT, p.subnet_timeout).map_err(bad)?;
        m.set(pi::RESP_TIME_VALUE, 16).map_err(bad)?;
        m.set(pi::CAPABILITY_MASK2, p.cap_mask2).map_err(bad)?;
        let ext = if up {
            p.speed.link_speed_ext_active()
        } else {
            0
        };
        m.set(pi::LINK_SPEED_EXT_ACTIVE, ext).map_err(bad)?;
        // FDR|EDR supported and enabled.
        m.set(pi::LINK_SPEED_EXT_SUPPORTED, 3).map_err(bad)?;
        m.set(pi::LINK_SPEED_EXT_ENABLED, 3).map_err(bad)?;
        Ok(())
    }

    fn guid_info(&self, data: &mut [u8], attr_mod: u32) -> MadResult {
        let table = &self.ib_port.guids;
        let block = usize::try_from(attr_mod).unwrap_or(usize::MAX);
        let start = block
            .checked_mul(GUIDS_PER_BLOCK)
            .filter(|s| *s < table.len())
            .ok_or(mad_status::INVALID_ATTRIB_VALUE)?;
        let mut m =
            MsgMut::<guid_info::Layout>::new(data).ok_or(mad_status::INVALID_ATTRIB_VALUE)?;
        let dst = m.bytes_mut(guid_info::GUID_BLOCK);
        for (chunk, g) in dst.chunks_exact_mut(8).zip(table[start..].iter()) {
            chunk.copy_from_slice(&g.to_be_bytes());
        }
        Ok(())
    }

    fn pkey_table(&self, data: &mut [u8], attr_mod: u32) -> MadResult {
        let table = &self.ib_port.pkeys;
        // Bits 31:16 select a switch port; a CA ignores them (IBTA 14.2.5.7).
        let block = (attr_mod & 0xffff) as usize;
        let start = block * PKEYS_PER_BLOCK;
        if start >= table.len() {
            return Err(mad_status::INVALID_ATTRIB_VALUE);
        }
        let mut m =
            MsgMut::<pkey_table::Layout>::new(data).ok_or(mad_status::INVALID_ATTRIB_VALUE)?;
        let dst = m.bytes_mut(pkey_table::PKEY_BLOCK);
        for (chunk, k) in dst.chunks_exact_mut(2).zip(table[start..].iter()) {
            chunk.copy_from_slice(&k.to_be_bytes());
        }
        Ok(())
    }
}
