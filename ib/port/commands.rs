// SPDX-License-Identifier: GPL-2.0

//! The commands the InfiniBand provider sends, one type each (see
//! [`crate::cmd::command::Command`]): MAD_IFC to the firmware's SMA (the port as the
//! subnet sees it, cap `ib_virt` 0), QUERY_HCA_VPORT_CONTEXT / _GID / _PKEY (cap
//! `ib_virt` 1), and ACCESS_REG reads of PTYS, PMTU, PVLC and NODE_DESC.
//!
//! Outputs are device data: each `parse` checks what it relies on (MAD method,
//! status and attribute, GID/P_Key counts) and returns [`CodecError::BadOutput`]
//! otherwise; the value checks of the port attributes are `crate::ib::port::attr`'s.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::{
    cmd::command::{CodecError, Command},
    ifc::{
        cmds::{query_adapter_in, query_adapter_out, query_adapter_param_block},
        field::{Msg, MsgMut},
        mad::{
            mad_ifc_in, mad_ifc_op_mod, mad_ifc_out, method, mgmt_class, smp, BASE_VERSION,
            SM_CLASS_VERSION,
        },
        opcodes::{access_reg_op_mod, Opcode},
        regs::{
            access_register_in, access_register_out, node_desc_reg, pmtu_reg, ptys_reg, pvlc_reg,
            reg_id, REG_DATA_OFFSET,
        },
        smp_attrs::{node_info, port_info},
        vport::{
            hca_vport_context, pkey_entry, query_hca_vport_context_in, query_hca_vport_context_out,
            query_hca_vport_gid_in, query_hca_vport_gid_out, query_hca_vport_pkey_in,
            query_hca_vport_pkey_out,
        },
    },
};

use crate::ib::port::attr::{HcaVport, PortInfo};

/// Bytes of an SMP's attribute data.
pub const SMP_DATA_BYTES: usize = 64;
/// The MAD status bit a directed-route SMP response carries (not an error).
const MAD_STATUS_DIRECTION: u16 = 0x8000;

/// MAD_IFC of a SubnGet(`attr_id`, `attr_mod`) on `port`, as upstream's
/// `mlx5_MAD_IFC` sends it (M_Key and B_Key checks off): the reply is the response's
/// attribute data. A response that is no GetResp of that attribute, or carries an
/// error status, is [`CodecError::BadOutput`].
#[derive(Clone, Copy, Debug)]
pub struct MadIfcGet {
    /// 1-based port.
    pub port: u8,
    /// SMP attribute id (`smp_attr`).
    pub attr_id: u16,
    /// Attribute modifier.
    pub attr_mod: u32,
}

impl Command for MadIfcGet {
    const OPCODE: Opcode = Opcode::MAD_IFC;
    type In = mad_ifc_in::Layout;
    type Out = mad_ifc_out::Layout;
    type Reply = [u8; SMP_DATA_BYTES];

    fn op_mod(&self) -> u16 {
        mad_ifc_op_mod::IGNORE_MKEY | mad_ifc_op_mod::IGNORE_BKEY
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.set(mad_ifc_in::PORT, self.port)?;
        let mut m = i
            .nested::<smp::Layout>(mad_ifc_in::MAD)
            .ok_or(CodecError::Short)?;
        m.set(smp::BASE_VERSION, BASE_VERSION)?;
        m.set(smp::MGMT_CLASS, mgmt_class::SUBN_LID_ROUTED)?;
        m.set(smp::CLASS_VERSION, SM_CLASS_VERSION)?;
        m.set(smp::METHOD, method::GET)?;
        m.set(smp::ATTR_ID, self.attr_id)?;
        Ok(m.set(smp::ATTR_MOD, self.attr_mod)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<Self::Reply, CodecError> {
        let m = o
            .nested::<smp::Layout>(mad_ifc_out::RESPONSE_MAD_PACKET)
            .ok_or(CodecError::BadOutput)?;
        if m.get(smp::METHOD) != method::GET_RESP
            || m.get(smp::ATTR_ID) != self.attr_id
            || m.get(smp::STATUS) & !MAD_STATUS_DIRECTION != 0
        {
            return Err(CodecError::BadOutput);
        }
        let mut d = [0u8; SMP_DATA_BYTES];
        d.copy_from_slice(
            m.bytes(smp::DATA)
                .get(..SMP_DATA_BYTES)
                .ok_or(CodecError::BadOutput)?,
        );
        Ok(d)
    }
}

/// The PortInfo fields of SMP attribute data (the reply of a PortInfo [`MadIfcGet`]).
pub fn port_info_of(data: &[u8; SMP_DATA_BYTES]) -> PortInfo {
    let p = Msg::<port_info::Layout>::of_array(data);
    PortInfo {
        lid: p.get(port_info::LID),
        sm_lid: p.get(port_info::MASTER_SM_LID),
        cap_mask: p.get(port_info::CAPABILITY_MASK),
        link_width_active: p.get(port_info::LINK_WIDTH_ACTIVE),
        port_state: p.get(port_info::PORT_STATE),
        phys_state: p.get(port_info::PORT_PHYS_STATE),
        lmc: p.get(port_info::LMC),
        link_speed_active: p.get(port_info::LINK_SPEED_ACTIVE),
        neighbor_mtu: p.get(port_info::NEIGHBOR_MTU),
        sm_sl: p.get(port_info::MASTER_SM_SL),
        vl_cap: p.get(port_info::VL_CAP),
        init_type_reply: p.get(port_info::INIT_TYPE_REPLY),
        mtu_cap: p.get(port_info::MTU_CAP),
        pkey_violations: p.get(port_info::PKEY_VIOLATIONS),
        qkey_violations: p.get(port_info::QKEY_VIOLATIONS),
        guid_cap: p.get(port_info::GUID_CAP),
        subnet_timeout: p.get(port_info::SUBNET_TIMEOUT),
        cap_mask2: p.get(port_info::CAPABILITY_MASK2),
        link_speed_ext_active: p.get(port_info::LINK_SPEED_EXT_ACTIVE),
    }
}

/// The GUID prefix of PortInfo attribute data (the upper half of every port GID).
pub fn gid_prefix_of(data: &[u8; SMP_DATA_BYTES]) -> u64 {
    Msg::<port_info::Layout>::of_array(data).get(port_info::GID_PREFIX)
}

/// What NodeInfo tells the provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    /// SystemImageGUID.
    pub sys_image_guid: u64,
    /// NodeGUID.
    pub node_guid: u64,
    /// VendorID (24 bits).
    pub vendor_id: u32,
}

/// The NodeInfo fields of SMP attribute data.
pub fn node_info_of(data: &[u8; SMP_DATA_BYTES]) -> NodeInfo {
    let n = Msg::<node_info::Layout>::of_array(data);
    NodeInfo {
        sys_image_guid: n.get(node_info::SYSTEM_IMAGE_GUID),
        node_guid: n.get(node_info::NODE_GUID),
        vendor_id: n.get(node_info::VENDOR_ID),
    }
}

/// Entry `index % 8` of a GUIDInfo block (attribute data), big-endian.
pub fn guid_of_block(data: &[u8; SMP_DATA_BYTES], index: u32) -> [u8; 8] {
    let at = (index % 8) as usize * 8;
    let mut g = [0u8; 8];
    g.copy_from_slice(&data[at..at + 8]);
    g
}

/// Entry `index % 32` of a P_KeyTable block (attribute data).
pub fn pkey_of_block(data: &[u8; SMP_DATA_BYTES], index: u16) -> u16 {
    let at = usize::from(index % 32) * 2;
    u16::from_be_bytes([data[at], data[at + 1]])
}

/// QUERY_HCA_VPORT_CONTEXT of our own vport. `port` is set only on a dual-port device
/// (upstream `mlx5_query_hca_vport_context` does so when `num_ports` is 2).
#[derive(Clone, Copy, Debug)]
pub struct QueryHcaVportContext {
    /// Port number for a dual-port device, `None` otherwise.
    pub port: Option<u8>,
}

impl Command for QueryHcaVportContext {
    const OPCODE: Opcode = Opcode::QUERY_HCA_VPORT_CONTEXT;
    type In = query_hca_vport_context_in::Layout;
    type Out = query_hca_vport_context_out::Layout;
    type Reply = HcaVport;

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        if let Some(p) = self.port {
            i.set(query_hca_vport_context_in::PORT_NUM, p)?;
        }
        Ok(())
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<HcaVport, CodecError> {
        let c = o
            .nested::<hca_vport_context::Layout>(query_hca_vport_context_out::HCA_VPORT_CONTEXT)
            .ok_or(CodecError::BadOutput)?;
        Ok(HcaVport {
            phys_state: c.get(hca_vport_context::PORT_PHYSICAL_STATE),
            vport_state: c.get(hca_vport_context::VPORT_STATE),
            sys_image_guid: c.get(hca_vport_context::SYSTEM_IMAGE_GUID),
            node_guid: c.get(hca_vport_context::NODE_GUID),
            cap_mask1: c.get(hca_vport_context::CAP_MASK1),
            cap_mask2: c.get(hca_vport_context::CAP_MASK2),
            lid: c.get(hca_vport_context::LID),
            init_type_reply: c.get(hca_vport_context::INIT_TYPE_REPLY),
            lmc: c.get(hca_vport_context::LMC),
            subnet_timeout: c.get(hca_vport_context::SUBNET_TIMEOUT),
            sm_lid: c.get(hca_vport_context::SM_LID),
            sm_sl: c.get(hca_vport_context::SM_SL),
            qkey_violations: c.get(hca_vport_context::QKEY_VIOLATION_COUNTER),
            pkey_violations: c.get(hca_vport_context::PKEY_VIOLATION_COUNTER),
        })
    }
}

/// Bytes of one GID in QUERY_HCA_VPORT_GID's output.
const GID_BYTES: usize = 16;
/// Bytes of one P_Key entry in QUERY_HCA_VPORT_PKEY's output.
const PKEY_ENTRY_BYTES: usize = pkey_entry::BYTES;

/// QUERY_HCA_VPORT_GID of one entry of our vport's GID table.
#[derive(Clone, Copy, Debug)]
pub struct QueryHcaVportGid {
    /// Port number for a dual-port device, `None` otherwise.
    pub port: Option<u8>,
    /// Table index (below the table length; the caller checks it).
    pub index: u16,
}

impl Command for QueryHcaVportGid {
    const OPCODE: Opcode = Opcode::QUERY_HCA_VPORT_GID;
    type In = query_hca_vport_gid_in::Layout;
    type Out = query_hca_vport_gid_out::Layout;
    type Reply = [u8; 16];

    fn out_len(&self) -> usize {
        query_hca_vport_gid_out::BYTES + GID_BYTES
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        if let Some(p) = self.port {
            i.set(query_hca_vport_gid_in::PORT_NUM, p)?;
        }
        Ok(i.set(query_hca_vport_gid_in::GID_INDEX, self.index)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<[u8; 16], CodecError> {
        if o.get(query_hca_vport_gid_out::GIDS_NUM) == 0 {
            return Err(CodecError::BadOutput);
        }
        let mut g = [0u8; 16];
        g.copy_from_slice(
            o.bytes(query_hca_vport_gid_out::GID)
                .get(..GID_BYTES)
                .ok_or(CodecError::BadOutput)?,
        );
        Ok(g)
    }
}

/// QUERY_HCA_VPORT_PKEY of one entry of our vport's P_Key table.
#[derive(Clone, Copy, Debug)]
pub struct QueryHcaVportPkey {
    /// Port number for a dual-port device, `None` otherwise.
    pub port: Option<u8>,
    /// Table index (below the table length; the caller checks it).
    pub index: u16,
}

impl Command for QueryHcaVportPkey {
    const OPCODE: Opcode = Opcode::QUERY_HCA_VPORT_PKEY;
    type In = query_hca_vport_pkey_in::Layout;
    type Out = query_hca_vport_pkey_out::Layout;
    type Reply = u16;

    fn out_len(&self) -> usize {
        query_hca_vport_pkey_out::BYTES + PKEY_ENTRY_BYTES
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        if let Some(p) = self.port {
            i.set(query_hca_vport_pkey_in::PORT_NUM, p)?;
        }
        Ok(i.set(query_hca_vport_pkey_in::PKEY_INDEX, self.index)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u16, CodecError> {
        let e = o
            .nested::<pkey_entry::Layout>(query_hca_vport_pkey_out::PKEY)
            .ok_or(CodecError::BadOutput)?;
        Ok(e.get(pkey_entry::PKEY))
    }
}

/// PTYS `proto_mask` for InfiniBand (`MLX5_PTYS_IB`).
const PTYS_IB: u8 = 1 << 0;

/// ACCESS_REG read of PTYS (InfiniBand protocols) of `local_port`: the operational
/// (width, protocol) pair.
#[derive(Clone, Copy, Debug)]
pub struct ReadPtys {
    /// 1-based port.
    pub local_port: u8,
}

impl Command for ReadPtys {
    const OPCODE: Opcode = Opcode::ACCESS_REG;
    type In = access_register_in::Layout;
    type Out = access_register_out::Layout;
    type Reply = (u16, u16);

    fn op_mod(&self) -> u16 {
        access_reg_op_mod::READ
    }
    fn in_len(&self) -> usize {
        REG_DATA_OFFSET + ptys_reg::BYTES
    }
    fn out_len(&self) -> usize {
        REG_DATA_OFFSET + ptys_reg::BYTES
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.set(access_register_in::REGISTER_ID, reg_id::PTYS)?;
        let mut r = i
            .nested::<ptys_reg::Layout>(access_register_in::REGISTER_DATA)
            .ok_or(CodecError::Short)?;
        r.set(ptys_reg::LOCAL_PORT, self.local_port)?;
        Ok(r.set(ptys_reg::PROTO_MASK, PTYS_IB)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<(u16, u16), CodecError> {
        let r = o
            .nested::<ptys_reg::Layout>(access_register_out::REGISTER_DATA)
            .ok_or(CodecError::BadOutput)?;
        Ok((
            r.get(ptys_reg::IB_LINK_WIDTH_OPER),
            r.get(ptys_reg::IB_PROTO_OPER),
        ))
    }
}

/// ACCESS_REG read of PMTU of `local_port`: (max, operational) MTU in bytes.
#[derive(Clone, Copy, Debug)]
pub struct ReadPmtu {
    /// 1-based port.
    pub local_port: u8,
}

impl Command for ReadPmtu {
    const OPCODE: Opcode = Opcode::ACCESS_REG;
    type In = access_register_in::Layout;
    type Out = access_register_out::Layout;
    type Reply = (u16, u16);

    fn op_mod(&self) -> u16 {
        access_reg_op_mod::READ
    }
    fn in_len(&self) -> usize {
        REG_DATA_OFFSET + pmtu_reg::BYTES
    }
    fn out_len(&self) -> usize {
        REG_DATA_OFFSET + pmtu_reg::BYTES
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.set(access_register_in::REGISTER_ID, reg_id::PMTU)?;
        let mut r = i
            .nested::<pmtu_reg::Layout>(access_register_in::REGISTER_DATA)
            .ok_or(CodecError::Short)?;
        Ok(r.set(pmtu_reg::LOCAL_PORT, self.local_port)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<(u16, u16), CodecError> {
        let r = o
            .nested::<pmtu_reg::Layout>(access_register_out::REGISTER_DATA)
            .ok_or(CodecError::BadOutput)?;
        Ok((r.get(pmtu_reg::MAX_MTU), r.get(pmtu_reg::OPER_MTU)))
    }
}

/// ACCESS_REG read of PVLC of `local_port`: `vl_hw_cap`.
#[derive(Clone, Copy, Debug)]
pub struct ReadPvlc {
    /// 1-based port.
    pub local_port: u8,
}

impl Command for ReadPvlc {
    const OPCODE: Opcode = Opcode::ACCESS_REG;
    type In = access_register_in::Layout;
    type Out = access_register_out::Layout;
    type Reply = u8;

    fn op_mod(&self) -> u16 {
        access_reg_op_mod::READ
    }
    fn in_len(&self) -> usize {
        REG_DATA_OFFSET + pvlc_reg::BYTES
    }
    fn out_len(&self) -> usize {
        REG_DATA_OFFSET + pvlc_reg::BYTES
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.set(access_register_in::REGISTER_ID, reg_id::PVLC)?;
        let mut r = i
            .nested::<pvlc_reg::Layout>(access_register_in::REGISTER_DATA)
            .ok_or(CodecError::Short)?;
        Ok(r.set(pvlc_reg::LOCAL_PORT, self.local_port)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u8, CodecError> {
        let r = o
            .nested::<pvlc_reg::Layout>(access_register_out::REGISTER_DATA)
            .ok_or(CodecError::BadOutput)?;
        Ok(r.get(pvlc_reg::VL_HW_CAP))
    }
}

/// ACCESS_REG read of NODE_DESC: the 64-byte NodeDescription.
#[derive(Clone, Copy, Debug)]
pub struct ReadNodeDesc;

impl Command for ReadNodeDesc {
    const OPCODE: Opcode = Opcode::ACCESS_REG;
    type In = access_register_in::Layout;
    type Out = access_register_out::Layout;
    type Reply = [u8; 64];

    fn op_mod(&self) -> u16 {
        access_reg_op_mod::READ
    }
    fn in_len(&self) -> usize {
        REG_DATA_OFFSET + node_desc_reg::BYTES
    }
    fn out_len(&self) -> usize {
        REG_DATA_OFFSET + node_desc_reg::BYTES
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(access_register_in::REGISTER_ID, reg_id::NODE_DESC)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<[u8; 64], CodecError> {
        let r = o
            .nested::<node_desc_reg::Layout>(access_register_out::REGISTER_DATA)
            .ok_or(CodecError::BadOutput)?;
        let mut d = [0u8; 64];
        d.copy_from_slice(
            r.bytes(node_desc_reg::NODE_DESCRIPTION)
                .get(..64)
                .ok_or(CodecError::BadOutput)?,
        );
        Ok(d)
    }
}

/// QUERY_ADAPTER for the IEEE vendor id (the HCA path's `vendor_id`, as upstream
/// `mlx5_query_vendor_id` reads it; the board id comes from the core's own query).
#[derive(Clone, Copy, Debug)]
pub struct QueryVendorId;

impl Command for QueryVendorId {
    const OPCODE: Opcode = Opcode::QUERY_ADAPTER;
    type In = query_adapter_in::Layout;
    type Out = query_adapter_out::Layout;
    type Reply = u32;

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u32, CodecError> {
        let blk = o
            .nested::<query_adapter_param_block::Layout>(query_adapter_out::QUERY_ADAPTER_STRUCT)
            .ok_or(CodecError::BadOutput)?;
        Ok(blk.get(query_adapter_param_block::IEEE_VENDOR_ID))
    }
}
/// MAD_IFC of a whole MAD (upstream `mlx5_cmd_mad_ifc`, what `process_mad` hands the
/// firmware's SMA and PMA): the 256-byte request in, the 256-byte response out. The
/// response is the device's and goes to the MAD layer, which parses it.
pub struct MadIfc<'a> {
    /// 1-based port.
    pub port: u8,
    /// `IGNORE_MKEY` / `IGNORE_BKEY` ([`mad_ifc_op_mod`]).
    pub op_mod: u16,
    /// The MAD.
    pub mad: &'a [u8; 256],
}

impl Command for MadIfc<'_> {
    const OPCODE: Opcode = Opcode::MAD_IFC;
    type In = mad_ifc_in::Layout;
    type Out = mad_ifc_out::Layout;
    type Reply = [u8; 256];

    fn op_mod(&self) -> u16 {
        self.op_mod
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.set(mad_ifc_in::PORT, self.port)?;
        let m = i.bytes_mut(mad_ifc_in::MAD);
        if m.len() != self.mad.len() {
            return Err(CodecError::Short);
        }
        m.copy_from_slice(self.mad);
        Ok(())
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<Self::Reply, CodecError> {
        let mut r = [0u8; 256];
        let b = o.bytes(mad_ifc_out::RESPONSE_MAD_PACKET);
        if b.len() != r.len() {
            return Err(CodecError::BadOutput);
        }
        r.copy_from_slice(b);
        Ok(r)
    }
}

/// `MLX5_IB_VENDOR_CLASS1` / `MLX5_IB_VENDOR_CLASS2` (`mlx5_ib.h`).
const VENDOR_CLASS1: u8 = 0x09;
const VENDOR_CLASS2: u8 = 0x0a;

/// What `process_mad` does with one MAD (upstream `mlx5_ib_process_mad`, with cap
/// `vport_counters` 0: PerfMgmt goes to the firmware too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MadPlan {
    /// Not the device's: `IB_MAD_RESULT_SUCCESS`.
    Pass,
    /// A trap from LID 0: `IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED`.
    Consume,
    /// MAD_IFC with this op_mod, then the reply (a directed-route response with the
    /// direction bit; a trap repress consumed, no reply).
    Ifc(u16),
}

/// The plan for a MAD of `class`, `method` and `attr_id` from `slid` (the permissive
/// LID 0xffff without a work completion, `has_wc` false), with the MAD layer's
/// `ignore_mkey` / `ignore_bkey` flags.
pub fn plan_mad(
    class: u8,
    method_: u8,
    attr_id: u16,
    slid: u16,
    has_wc: bool,
    ignore_mkey: bool,
    ignore_bkey: bool,
) -> MadPlan {
    if method_ == method::TRAP && slid == 0 {
        return MadPlan::Consume;
    }
    match class {
        mgmt_class::SUBN_LID_ROUTED | mgmt_class::SUBN_DIRECTED_ROUTE => {
            if !matches!(method_, method::GET | method::SET | method::TRAP_REPRESS) {
                return MadPlan::Pass;
            }
            // "Don't process SMInfo queries -- the SMA can't handle them."
            if attr_id == SM_INFO_ATTR {
                return MadPlan::Pass;
            }
        }
        mgmt_class::PERF_MGMT | VENDOR_CLASS1 | VENDOR_CLASS2 | mgmt_class::CONG_MGMT => {
            if !matches!(method_, method::GET | method::SET) {
                return MadPlan::Pass;
            }
        }
        _ => return MadPlan::Pass,
    }
    // `mlx5_MAD_IFC`: key checks only with a work completion to send a trap to.
    let mut op_mod = 0;
    if ignore_mkey || !has_wc {
        op_mod |= mad_ifc_op_mod::IGNORE_MKEY;
    }
    if ignore_bkey || !has_wc {
        op_mod |= mad_ifc_op_mod::IGNORE_BKEY;
    }
    MadPlan::Ifc(op_mod)
}

/// SMInfo (`IB_SMP_ATTR_SM_INFO`).
const SM_INFO_ATTR: u16 = 0x0020;

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_port_commands))]
mod tests {
    use super::*;

    // Classes, methods and attributes written out from `ib_mad.h` / `ib_smi.h`:
    // SubnLID 0x01, SubnDR 0x81, PerfMgmt 0x04, CongMgmt 0x21, Get 0x01, Set 0x02,
    // Trap 0x05, TrapRepress 0x07, GetResp 0x81, SMInfo 0x0020, NodeInfo 0x0011.

    #[test]
    fn smps_and_pma_go_to_the_firmware() {
        // From a work completion: the MAD layer's flags decide the key checks.
        assert_eq!(
            plan_mad(0x01, 0x01, 0x0011, 5, true, false, false),
            MadPlan::Ifc(0)
        );
        assert_eq!(
            plan_mad(0x81, 0x02, 0x0015, 5, true, true, false),
            MadPlan::Ifc(1)
        );
        // Locally generated (no work completion): both keys ignored.
        assert_eq!(
            plan_mad(0x81, 0x01, 0x0011, 0xffff, false, false, false),
            MadPlan::Ifc(3)
        );
        assert_eq!(
            plan_mad(0x04, 0x01, 0x0012, 7, true, true, true),
            MadPlan::Ifc(3)
        );
        assert_eq!(
            plan_mad(0x01, 0x07, 0x0002, 7, true, false, false),
            MadPlan::Ifc(0)
        );
    }

    #[test]
    fn what_upstream_passes_or_consumes() {
        // A trap from LID 0 is consumed.
        assert_eq!(
            plan_mad(0x01, 0x05, 0x0002, 0, true, false, false),
            MadPlan::Consume
        );
        // SMInfo, a response, an unknown class, PerfMgmt TrapRepress: not the device's.
        assert_eq!(
            plan_mad(0x01, 0x01, 0x0020, 3, true, false, false),
            MadPlan::Pass
        );
        assert_eq!(
            plan_mad(0x81, 0x81, 0x0011, 3, true, false, false),
            MadPlan::Pass
        );
        assert_eq!(
            plan_mad(0x03, 0x01, 0x0011, 3, true, false, false),
            MadPlan::Pass
        );
        assert_eq!(
            plan_mad(0x04, 0x07, 0x0001, 3, true, false, false),
            MadPlan::Pass
        );
        assert_eq!(
            plan_mad(0x21, 0x02, 0x0001, 3, true, false, false),
            MadPlan::Ifc(0)
        );
    }
}
