//! ACCESS_REG port registers served from the IB port model: PTYS, PMTU, PVLC, PCAP
//! and NODE_DESC. Sources: emu/README.md ("InfiniBand port").

use super::port::{PORT_NUM, PTYS_WIDTH_1X, PTYS_WIDTH_4X};
use super::sma::bad_port;
use super::util::{bad_param, need_out, CmdResult};
use super::Firmware;
use crate::ifc::field::MsgMut;
use crate::ifc::opcodes::access_reg_op_mod as am;
use crate::ifc::regs::{node_desc_reg, pcap_reg, pmtu_reg, ptys_reg, pvlc_reg, reg_id};
use crate::ifc::smp_attrs::port_state;

/// PVLC's code of VL0-7. PVLC counts VLs, unlike the IBTA VLCap of PortInfo (where 4 is
/// VL0-7): upstream `enum mlx5_vl_hw_cap` (mlx5_ib main.c) has 1 = VL0, 2 = VL0-1,
/// 3 = VL0-2, 4 = VL0-3, ..., 8 = VL0-7, 15 = VL0-14, which `translate_max_vl_num`
/// maps to the IBTA code.
const PVLC_VL_0_7: u8 = 8;

/// Bytes of an IBTA MTU code (1 = 256 ... 5 = 4096).
fn mtu_bytes(code: u8) -> u16 {
    256u16 << code.saturating_sub(1).min(4)
}

impl Firmware {
    /// Whether `id` is one of the port registers here.
    pub(super) fn is_port_reg(id: u16) -> bool {
        matches!(
            id,
            reg_id::PTYS | reg_id::PMTU | reg_id::PVLC | reg_id::PCAP | reg_id::NODE_DESC
        )
    }

    /// One port register access; `data_in` is the request's register data and the
    /// output's register data (`data_out`) already holds a copy of it.
    pub(super) fn port_reg(
        &mut self,
        id: u16,
        op_mod: u16,
        data_in: &[u8],
        data_out: &mut [u8],
    ) -> CmdResult {
        let (state, _) = self.ib_port_state();
        let active = state != port_state::DOWN;
        let set_err = |_| bad_param();
        match (id, op_mod) {
            (reg_id::PTYS, am::READ) => {
                need_out(data_out, ptys_reg::BYTES)?;
                let mut r = MsgMut::<ptys_reg::Layout>::new(data_out).ok_or_else(bad_param)?;
                let proto = self.ib_port.speed.ptys_proto();
                let (w_oper, p_oper) = if active {
                    (PTYS_WIDTH_4X, proto)
                } else {
                    (0, 0)
                };
                r.set(
                    ptys_reg::IB_LINK_WIDTH_CAPABILITY,
                    PTYS_WIDTH_1X | PTYS_WIDTH_4X,
                )
                .map_err(set_err)?;
                r.set(ptys_reg::IB_PROTO_CAPABILITY, proto)
                    .map_err(set_err)?;
                r.set(ptys_reg::IB_LINK_WIDTH_ADMIN, PTYS_WIDTH_1X | PTYS_WIDTH_4X)
                    .map_err(set_err)?;
                r.set(ptys_reg::IB_PROTO_ADMIN, proto).map_err(set_err)?;
                r.set(ptys_reg::IB_LINK_WIDTH_OPER, w_oper)
                    .map_err(set_err)?;
                r.set(ptys_reg::IB_PROTO_OPER, p_oper).map_err(set_err)
            }
            (reg_id::PMTU, am::READ) => {
                need_out(data_out, pmtu_reg::BYTES)?;
                let mut r = MsgMut::<pmtu_reg::Layout>::new(data_out).ok_or_else(bad_param)?;
                let mtu = mtu_bytes(super::port::MTU_4096);
                r.set(pmtu_reg::MAX_MTU, mtu).map_err(set_err)?;
                r.set(pmtu_reg::ADMIN_MTU, mtu).map_err(set_err)?;
                r.set(pmtu_reg::OPER_MTU, mtu).map_err(set_err)
            }
            (reg_id::PVLC, am::READ) => {
                need_out(data_out, pvlc_reg::BYTES)?;
                let mut r = MsgMut::<pvlc_reg::Layout>::new(data_out).ok_or_else(bad_param)?;
                if r.get(pvlc_reg::LOCAL_PORT) != PORT_NUM {
                    return Err(bad_port());
                }
                r.set(pvlc_reg::VL_HW_CAP, PVLC_VL_0_7).map_err(set_err)?;
                r.set(pvlc_reg::VL_ADMIN, PVLC_VL_0_7).map_err(set_err)?;
                r.set(pvlc_reg::VL_OPERATIONAL, PVLC_VL_0_7)
                    .map_err(set_err)
            }
            (reg_id::PCAP, op) => {
                need_out(data_out, pcap_reg::BYTES)?;
                let port = pcap_reg::LOCAL_PORT.raw().get(data_in).unwrap_or(0);
                if port != u64::from(PORT_NUM) {
                    return Err(bad_port());
                }
                if op == am::WRITE {
                    // Dword 0 (bits 127:96) is the PortInfo CapabilityMask.
                    let mask: [u8; 4] = pcap_reg::PORT_CAPABILITY_MASK
                        .raw()
                        .bytes(data_in)
                        .and_then(|m| m.get(..4))
                        .and_then(|m| m.try_into().ok())
                        .ok_or_else(bad_param)?;
                    self.ib_port.cap_mask = u32::from_be_bytes(mask);
                }
                let mut r = MsgMut::<pcap_reg::Layout>::new(data_out).ok_or_else(bad_param)?;
                let dst = r.bytes_mut(pcap_reg::PORT_CAPABILITY_MASK);
                dst.fill(0);
                dst[..4].copy_from_slice(&self.ib_port.cap_mask.to_be_bytes());
                Ok(())
            }
            (reg_id::NODE_DESC, op) => {
                need_out(data_out, node_desc_reg::BYTES)?;
                if op == am::WRITE {
                    let src = data_in.get(..node_desc_reg::BYTES).ok_or_else(bad_param)?;
                    self.ib_port.node_desc.copy_from_slice(src);
                }
                let mut r = MsgMut::<node_desc_reg::Layout>::new(data_out).ok_or_else(bad_param)?;
                r.bytes_mut(node_desc_reg::NODE_DESCRIPTION)
                    .copy_from_slice(&self.ib_port.node_desc);
                Ok(())
            }
            // Writes of PTYS, PMTU and PVLC are accepted and change nothing (the link
            // parameters are the SM's and the cable's; emu/README.md).
            _ => Ok(()),
        }
    }
}
