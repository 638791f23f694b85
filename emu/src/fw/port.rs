//! The InfiniBand port as a subnet manager configured it: state, LIDs, GUIDs, P_Keys,
//! node description, link parameters; and the port-change events a change raises.
//!
//! One model serves every way upstream reads the port: MAD_IFC (the SMA, `sma.rs`),
//! the HCA/NIC vport commands (`vport.rs`) and the port registers (`port_regs.rs`).
//! Every default and its source is listed in emu/README.md ("InfiniBand port").

use super::{eq, Env, Firmware};
use crate::ifc::eqe::{event_type, port_change_sub};
use crate::ifc::smp_attrs::{phys_state, port_state};

/// IBTA PortInfo CapabilityMask bits (`enum ib_port_capability_mask_bits`, ib_mad.h).
pub mod cap {
    /// The port runs a subnet manager.
    pub const SM: u32 = 1 << 1;
    /// Traps supported.
    pub const TRAP_SUP: u32 = 1 << 3;
    /// SL to VL mapping supported.
    pub const SL_MAP_SUP: u32 = 1 << 6;
    /// SystemImageGUID supported.
    pub const SYS_IMAGE_GUID_SUP: u32 = 1 << 11;
    /// LinkSpeedExtended fields valid.
    pub const EXTENDED_SPEEDS_SUP: u32 = 1 << 14;
    /// CapabilityMask2 valid.
    pub const CAP_MASK2_SUP: u32 = 1 << 15;
    /// Connection manager present (set by the host's ib_cm).
    pub const CM_SUP: u32 = 1 << 16;
    /// SNMP tunnelling agent present.
    pub const SNMP_TUNNEL_SUP: u32 = 1 << 17;
    /// Device management agent present.
    pub const DEVICE_MGMT_SUP: u32 = 1 << 19;
    /// Vendor class agent present.
    pub const VENDOR_CLASS_SUP: u32 = 1 << 20;
    /// Capability-mask-change notices.
    pub const CAP_MASK_NOTICE_SUP: u32 = 1 << 22;
    /// Boot management agent present.
    pub const BOOT_MGMT_SUP: u32 = 1 << 23;
    /// Client reregistration supported.
    pub const CLIENT_REG_SUP: u32 = 1 << 25;
    /// Other-local-changes notices.
    pub const OTHER_LOCAL_CHANGES_SUP: u32 = 1 << 26;
    /// Multicast P_Key trap suppression.
    pub const MCAST_PKEY_TRAP_SUPPRESSION_SUP: u32 = 1 << 29;

    /// What the firmware itself advertises (see emu/README.md).
    pub const FIRMWARE: u32 = TRAP_SUP
        | SL_MAP_SUP
        | SYS_IMAGE_GUID_SUP
        | EXTENDED_SPEEDS_SUP
        | CAP_MASK2_SUP
        | VENDOR_CLASS_SUP
        | CAP_MASK_NOTICE_SUP
        | CLIENT_REG_SUP
        | OTHER_LOCAL_CHANGES_SUP
        | MCAST_PKEY_TRAP_SUPPRESSION_SUP;

    /// Bits a host agent may set or clear (`cap_mask1_field_select` of
    /// QUERY_HCA_VPORT_CONTEXT; upstream's `set_port_caps_atomic` refuses others).
    pub const HOST_SETTABLE: u32 =
        SM | CM_SUP | SNMP_TUNNEL_SUP | DEVICE_MGMT_SUP | VENDOR_CLASS_SUP | BOOT_MGMT_SUP;

    /// CapabilityMask2: SetNodeDescription supported (`IB_PORT_SET_NODE_DESC_SUP`).
    pub const MASK2_SET_NODE_DESC_SUP: u16 = 1 << 0;
}

/// The port's number (the emulated device has one port, cap `num_ports` = 1).
pub const PORT_NUM: u8 = 1;
/// IBTA MTU code of 4096 bytes.
pub const MTU_4096: u8 = 5;
/// IBTA VLCap code of VL0-7.
pub const VL_CAP_0_7: u8 = 4;
/// IBTA LinkWidth 4x (PortInfo encoding).
pub const WIDTH_4X: u8 = 2;
/// IBTA LinkWidth 1x|4x (PortInfo supported/enabled).
pub const WIDTH_1X_4X: u8 = 3;
/// PTYS `ib_link_width_*` 4x (`MLX5_PTYS_WIDTH_4X`, port.h).
pub const PTYS_WIDTH_4X: u16 = 1 << 2;
/// PTYS `ib_link_width_*` 1x (`MLX5_PTYS_WIDTH_1X`).
pub const PTYS_WIDTH_1X: u16 = 1 << 0;
/// Mellanox IEEE OUI (NodeInfo VendorID).
pub const VENDOR_OUI: u32 = 0x0002c9;
/// Node description a ConnectX-5 reports before the host sets one.
pub const DEFAULT_NODE_DESC: &str = "MT4119 ConnectX5   Mellanox Technologies";

/// The link speed the port runs at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Speed {
    /// 2.5 Gb/s per lane.
    Sdr,
    /// 5 Gb/s.
    Ddr,
    /// 10 Gb/s.
    Qdr,
    /// 14 Gb/s.
    Fdr,
    /// 25 Gb/s.
    Edr,
}

impl Speed {
    /// Every speed, for the control request.
    pub const ALL: &'static [(&'static str, Speed)] = &[
        ("sdr", Speed::Sdr),
        ("ddr", Speed::Ddr),
        ("qdr", Speed::Qdr),
        ("fdr", Speed::Fdr),
        ("edr", Speed::Edr),
    ];

    /// PortInfo LinkSpeedActive (SDR 1, DDR 2, QDR 4; QDR for the extended speeds,
    /// whose code is in LinkSpeedExtActive).
    pub fn link_speed_active(self) -> u8 {
        match self {
            Speed::Sdr => 1,
            Speed::Ddr => 2,
            _ => 4,
        }
    }

    /// PortInfo LinkSpeedExtActive (FDR 1, EDR 2, 0 for the base speeds).
    pub fn link_speed_ext_active(self) -> u8 {
        match self {
            Speed::Fdr => 1,
            Speed::Edr => 2,
            _ => 0,
        }
    }

    /// PTYS `ib_proto_*` bit (`enum ib_port_speed` of ib_verbs.h: SDR 1, DDR 2, QDR 4,
    /// FDR 16, EDR 32; upstream passes `ib_proto_oper` through as the active speed).
    pub fn ptys_proto(self) -> u16 {
        match self {
            Speed::Sdr => 1,
            Speed::Ddr => 2,
            Speed::Qdr => 4,
            Speed::Fdr => 16,
            Speed::Edr => 32,
        }
    }
}

/// What the subnet manager (and the host, through PCAP / NODE_DESC) configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IbPort {
    /// PortState the SM set (effective only while the link is up, see
    /// [`Firmware::ib_port_state`]).
    pub sm_state: u8,
    /// LID.
    pub lid: u16,
    /// Master SM LID.
    pub sm_lid: u16,
    /// Master SM SL.
    pub sm_sl: u8,
    /// LID mask count.
    pub lmc: u8,
    /// SubnetTimeOut.
    pub subnet_timeout: u8,
    /// Subnet prefix (GID table upper 64 bits).
    pub subnet_prefix: u64,
    /// Node GUID.
    pub node_guid: u64,
    /// System image GUID.
    pub sys_guid: u64,
    /// GUID table: entry 0 is the port GUID; unset entries are 0.
    pub guids: Vec<u64>,
    /// P_Key table: entry 0 the default full-membership P_Key.
    pub pkeys: Vec<u16>,
    /// NodeDescription, NUL padded.
    pub node_desc: [u8; 64],
    /// PortInfo CapabilityMask.
    pub cap_mask: u32,
    /// PortInfo CapabilityMask2.
    pub cap_mask2: u16,
    /// Link speed.
    pub speed: Speed,
    /// P_Key violations counter.
    pub pkey_violations: u16,
    /// Q_Key violations counter.
    pub qkey_violations: u16,
    /// `hca_vport_context.vport_state_policy` (MODIFY_HCA_VPORT_CONTEXT).
    pub vport_state_policy: u8,
    /// Cap `ib_virt`: the function reads the port through the HCA vport commands.
    pub ib_virt: bool,
    /// Opt-in, off by default, NOT what a ConnectX does: the device's SMA / PMA
    /// answer SMPs on QP0 and PerfMgmt MADs on QP1 themselves instead of delivering
    /// them to the host's QP0 / QP1 (dp/mad.rs; control `ib_port`
    /// `"mad_agents_in_device"`).
    pub mad_agents_in_device: bool,
}

/// How far apart the GUIDs of consecutive device indices are (`--device-index`):
/// 0x100, so a device's port GUID (node + 1) never meets another's node GUID.
pub const GUID_STEP_PER_DEVICE: u64 = 0x100;

/// GUID table length for cap `gid_table_size` (`mlx5_get_gid_table_len`).
pub fn gid_table_len(gid_table_size: u64) -> usize {
    if gid_table_size > 4 {
        0
    } else {
        8 << gid_table_size
    }
}

/// P_Key table length for cap `pkey_table_size` (`mlx5_to_sw_pkey_sz`).
pub fn pkey_table_len(pkey_table_size: u64) -> usize {
    if pkey_table_size > 7 {
        0
    } else {
        128 << pkey_table_size
    }
}

impl IbPort {
    /// The port after the SM's sweep, with tables of the given lengths.
    pub fn new(gids: usize, pkeys: usize, ib_virt: bool) -> Self {
        let node_guid = 0x0002_c903_00a5_0000;
        let mut guids = vec![0u64; gids];
        if let Some(g) = guids.first_mut() {
            *g = node_guid + 1;
        }
        let mut pk = vec![0u16; pkeys];
        if let Some(p) = pk.first_mut() {
            *p = 0xffff;
        }
        let mut node_desc = [0u8; 64];
        node_desc[..DEFAULT_NODE_DESC.len()].copy_from_slice(DEFAULT_NODE_DESC.as_bytes());
        IbPort {
            sm_state: port_state::ACTIVE,
            lid: 2,
            sm_lid: 1,
            sm_sl: 0,
            lmc: 0,
            subnet_timeout: 18,
            subnet_prefix: 0xfe80_0000_0000_0000,
            node_guid,
            sys_guid: node_guid,
            guids,
            pkeys: pk,
            node_desc,
            cap_mask: cap::FIRMWARE,
            cap_mask2: cap::MASK2_SET_NODE_DESC_SUP,
            speed: Speed::Edr,
            pkey_violations: 0,
            qkey_violations: 0,
            vport_state_policy: 0,
            ib_virt,
            mad_agents_in_device: false,
        }
    }

    /// The port GUID (GUID table entry 0).
    pub fn port_guid(&self) -> u64 {
        self.guids.first().copied().unwrap_or(0)
    }
}

impl Firmware {
    /// The power-on port for the current caps.
    pub fn default_ib_port(&self) -> IbPort {
        use crate::ifc::caps::cmd_hca_cap as g;
        let mut p = IbPort::new(
            gid_table_len(self.caps.cur(g::GID_TABLE_SIZE.raw())),
            pkey_table_len(self.caps.cur(g::PKEY_TABLE_SIZE.raw())),
            self.cfg.ib_virt,
        );
        // Start-up options `--lid`, `--sm-lid`, `--device-index` (two devices in one
        // subnet: each its own LID and GUIDs, README "Two devices").
        p.lid = self.cfg.lid;
        p.sm_lid = self.cfg.sm_lid;
        let step = GUID_STEP_PER_DEVICE * u64::from(self.cfg.device_index);
        p.node_guid += step;
        p.sys_guid += step;
        if let Some(g) = p.guids.first_mut() {
            *g += step;
        }
        p
    }

    /// Effective (PortState, PortPhysicalState): the SM's state while the link is up
    /// and the port administratively up (PAOS), Down/Polling with the link down,
    /// Down/Disabled when PAOS took the port down.
    pub fn ib_port_state(&self) -> (u8, u8) {
        if !self.port_admin_up {
            (port_state::DOWN, phys_state::DISABLED)
        } else if !self.port_link_up {
            (port_state::DOWN, phys_state::POLLING)
        } else {
            (self.ib_port.sm_state, phys_state::LINK_UP)
        }
    }

    /// Writes a port-change EQE of `sub` (`port_change_sub`) for port 1 to the EQ that
    /// subscribes to PORT_CHANGE (data: port number in bits 7:4 of byte 8,
    /// `struct mlx5_eqe_port_state`).
    pub fn post_port_change(&mut self, env: &Env<'_>, sub: u8) -> eq::Posted {
        let mut data = [0u8; 28];
        data[8] = PORT_NUM << 4;
        let p = self.eqs.post(
            event_type::PORT_CHANGE,
            sub,
            &data,
            env.mem,
            env.irq,
            env.msix_ok,
        );
        if let eq::Posted::Dma(e) = &p {
            self.stats.dma_error(format!("port change EQE: {e}"));
        }
        p
    }

    /// The sub-type a change of effective PortState from `old` to `new` raises, if
    /// any: ACTIVE on becoming active, DOWN on going down or leaving Active,
    /// INITIALIZED on Down → Init.
    pub fn state_change_sub(old: u8, new: u8) -> Option<u8> {
        if old == new {
            return None;
        }
        match new {
            port_state::ACTIVE => Some(port_change_sub::ACTIVE),
            port_state::DOWN => Some(port_change_sub::DOWN),
            _ if old == port_state::ACTIVE => Some(port_change_sub::DOWN),
            port_state::INIT if old == port_state::DOWN => Some(port_change_sub::INITIALIZED),
            _ => None,
        }
    }

    /// Replaces the port configuration with `new` (and the link with `link_up`,
    /// when given) and raises the port-change events the differences call for, in
    /// the order state, LID, P_Key, GUID, client reregistration. Returns the
    /// sub-types raised.
    pub fn set_ib_port(
        &mut self,
        env: &Env<'_>,
        new: IbPort,
        link_up: Option<bool>,
        client_rereg: bool,
    ) -> Vec<(u8, eq::Posted)> {
        let (old_state, _) = self.ib_port_state();
        let old = std::mem::replace(&mut self.ib_port, new);
        if let Some(up) = link_up {
            self.port_link_up = up;
        }
        if old.ib_virt != self.ib_port.ib_virt {
            self.caps.set_ib_virt(self.ib_port.ib_virt);
        }
        let (new_state, _) = self.ib_port_state();
        let p = &self.ib_port;
        let mut subs = vec![];
        if let Some(s) = Self::state_change_sub(old_state, new_state) {
            subs.push(s);
        }
        if (old.lid, old.lmc, old.sm_lid, old.sm_sl) != (p.lid, p.lmc, p.sm_lid, p.sm_sl) {
            subs.push(port_change_sub::LID);
        }
        if old.pkeys != p.pkeys {
            subs.push(port_change_sub::PKEY);
        }
        if old.guids != p.guids || old.subnet_prefix != p.subnet_prefix {
            subs.push(port_change_sub::GUID);
        }
        if client_rereg {
            subs.push(port_change_sub::CLIENT_REREG);
        }
        subs.into_iter()
            .map(|s| (s, self.post_port_change(env, s)))
            .collect()
    }
}
