// SPDX-License-Identifier: GPL-2.0

//! Port attributes from what the device reports, both ways upstream `mlx5_ib` reads
//! them: the IBTA PortInfo attribute the firmware's SMA answers through MAD_IFC (cap
//! `ib_virt` 0, `mlx5_query_mad_ifc_port` in mad.c), or the HCA vport context plus the
//! PTYS, PMTU and PVLC registers (cap `ib_virt` 1, `mlx5_query_hca_port` in main.c).
//!
//! Every value comes from the device and is checked before it reaches the RDMA core:
//! port state and physical state must be IBTA values, MTUs one of the five IB MTUs,
//! the width one PTYS/IBTA width and the speed one IB speed; anything else is
//! [`BadPort`], which the provider reports as a failed query (`EPROTO`).
//!
//! Pure `core` code, compiled into the module and into the host test crate.

use crate::errno::Errno;
use crate::ffi::rdma::ib_abi::PortAttr;

/// IBTA PortInfo CapabilityMask bits the decoder looks at (`IB_PORT_*`, ib_verbs.h).
pub mod cap {
    /// CapabilityMask2 is valid.
    pub const CAP_MASK2_SUP: u32 = 1 << 15;
    /// LinkSpeedExtended fields are valid.
    pub const EXTENDED_SPEEDS_SUP: u32 = 1 << 14;
}

/// IBTA PortInfo CapabilityMask2 bits (`IB_PORT_*`, ib_verbs.h).
pub mod cap2 {
    /// LinkWidth 2x is supported (LinkWidthActive is 5 bits wide).
    pub const LINK_WIDTH_2X_SUP: u16 = 1 << 4;
    /// HDR is supported.
    pub const LINK_SPEED_HDR_SUP: u16 = 1 << 5;
    /// NDR is supported.
    pub const LINK_SPEED_NDR_SUP: u16 = 1 << 10;
}

/// `enum ib_port_state` values (IBTA PortState).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "the host tests use every value")
)]
pub mod state {
    /// Down.
    pub const DOWN: u8 = 1;
    /// Initialize.
    pub const INIT: u8 = 2;
    /// Armed.
    pub const ARMED: u8 = 3;
    /// Active.
    pub const ACTIVE: u8 = 4;
    /// Active, deferred.
    pub const ACTIVE_DEFER: u8 = 5;
}

/// IB link widths (`enum ib_port_width`; also IBTA LinkWidthActive encoding).
pub mod width {
    /// 1x.
    pub const W1X: u8 = 1;
    /// 4x.
    pub const W4X: u8 = 2;
    /// 8x.
    pub const W8X: u8 = 4;
    /// 12x.
    pub const W12X: u8 = 8;
    /// 2x.
    pub const W2X: u8 = 16;
}

/// IB link speeds (`enum ib_port_speed`; PTYS `ib_proto_oper` uses the same bits).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "the host tests use every value")
)]
pub mod speed {
    /// SDR (2.5 Gb/s per lane).
    pub const SDR: u16 = 1;
    /// DDR.
    pub const DDR: u16 = 2;
    /// QDR.
    pub const QDR: u16 = 4;
    /// FDR10.
    pub const FDR10: u16 = 8;
    /// FDR.
    pub const FDR: u16 = 16;
    /// EDR.
    pub const EDR: u16 = 32;
    /// HDR.
    pub const HDR: u16 = 64;
    /// NDR.
    pub const NDR: u16 = 128;
    /// XDR.
    pub const XDR: u16 = 256;
}

/// A device value the decoder does not accept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadPort {
    /// Port state outside 1..=5.
    State(u8),
    /// Physical state outside 1..=7.
    PhysState(u8),
    /// MTU code or size that is not an IB MTU.
    Mtu(u16),
    /// Link width that is none of the IB widths.
    Width(u16),
    /// Link speed that is none of the IB speeds.
    Speed(u16),
    /// VL capability outside 1..=5 (IBTA VLCap) or the PVLC encoding.
    VlCap(u8),
}

impl BadPort {
    /// The errno of a query the device answered out of range: `EPROTO`.
    pub const fn errno(self) -> Errno {
        Errno::EPROTO
    }
}

/// The PortInfo fields the provider uses (IBTA 14.2.5.6), as read from the SMP data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortInfo {
    /// LID.
    pub lid: u16,
    /// MasterSMLID.
    pub sm_lid: u16,
    /// CapabilityMask.
    pub cap_mask: u32,
    /// LinkWidthActive.
    pub link_width_active: u8,
    /// PortState.
    pub port_state: u8,
    /// PortPhysicalState.
    pub phys_state: u8,
    /// LMC.
    pub lmc: u8,
    /// LinkSpeedActive.
    pub link_speed_active: u8,
    /// NeighborMTU (the active MTU).
    pub neighbor_mtu: u8,
    /// MasterSMSL.
    pub sm_sl: u8,
    /// VLCap.
    pub vl_cap: u8,
    /// InitTypeReply.
    pub init_type_reply: u8,
    /// MTUCap.
    pub mtu_cap: u8,
    /// P_KeyViolations.
    pub pkey_violations: u16,
    /// Q_KeyViolations.
    pub qkey_violations: u16,
    /// GUIDCap.
    pub guid_cap: u8,
    /// SubnetTimeOut.
    pub subnet_timeout: u8,
    /// CapabilityMask2.
    pub cap_mask2: u16,
    /// LinkSpeedExtActive.
    pub link_speed_ext_active: u8,
}

/// What the port decoders need from the general caps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortCaps {
    /// `1 << log_max_msg`.
    pub max_msg_sz: u32,
    /// P_Key table entries (128 << `pkey_table_size`).
    pub pkey_tbl_len: u16,
    /// GID table entries for the HCA path (from `gid_table_size`).
    pub gid_tbl_len: u32,
}

/// P_Key table entries of the cap `pkey_table_size` (upstream `mlx5_to_sw_pkey_sz`):
/// 128 << code; codes above 5 (4096 entries, the PRM's largest) are rejected.
pub fn pkey_table_len(code: u16) -> Option<u16> {
    (code <= 5).then(|| 128u16 << code)
}

/// GID table entries of the cap `gid_table_size` (upstream `mlx5_get_gid_table_len`):
/// 8 << code; codes above 4 (128 entries) are rejected.
pub fn gid_table_len(code: u16) -> Option<u32> {
    (code <= 4).then(|| 8u32 << code)
}

fn check_state(s: u8) -> Result<u8, BadPort> {
    if (state::DOWN..=state::ACTIVE_DEFER).contains(&s) {
        Ok(s)
    } else {
        Err(BadPort::State(s))
    }
}

fn check_phys_state(s: u8) -> Result<u8, BadPort> {
    // IBTA PortPhysicalState: 1 Sleep .. 7 PhyTest (`enum ib_port_phys_state`).
    if (1..=7).contains(&s) {
        Ok(s)
    } else {
        Err(BadPort::PhysState(s))
    }
}

/// An IBTA MTU code (1 = 256 ... 5 = 4096), checked.
pub fn check_mtu_code(code: u8) -> Result<u8, BadPort> {
    if (1..=5).contains(&code) {
        Ok(code)
    } else {
        Err(BadPort::Mtu(u16::from(code)))
    }
}

/// The IB MTU code of an MTU in bytes from the PMTU register (upstream
/// `mlx5_mtu_to_ib_mtu`).
pub fn mtu_code(bytes: u16) -> Result<u8, BadPort> {
    match bytes {
        256 => Ok(1),
        512 => Ok(2),
        1024 => Ok(3),
        2048 => Ok(4),
        4096 => Ok(5),
        _ => Err(BadPort::Mtu(bytes)),
    }
}

/// The IB width of PTYS `ib_link_width_oper` (bit 0 1x, 1 2x, 2 4x, 3 8x, 4 12x;
/// `enum mlx5_ptys_width`), the lowest set bit as upstream's
/// `translate_active_width`. Upstream substitutes 4x for any other value; we do so
/// only for 0 (no operational width: the link is down) and reject the rest.
pub fn width_from_ptys(w: u16) -> Result<u8, BadPort> {
    const MAP: [u8; 5] = [width::W1X, width::W2X, width::W4X, width::W8X, width::W12X];
    if w == 0 {
        return Ok(width::W4X);
    }
    let low = w.trailing_zeros() as usize;
    MAP.get(low).copied().ok_or(BadPort::Width(w))
}

/// The IB speed of PTYS `ib_proto_oper`, which uses the `enum ib_port_speed` bits
/// (upstream hands it through as `active_speed`): exactly one known bit, or 0 (no
/// operational protocol: the link is down), which stays 0 as upstream reports it.
pub fn speed_from_ptys(p: u16) -> Result<u16, BadPort> {
    if p == 0 || (p.count_ones() == 1 && p <= speed::XDR) {
        Ok(p)
    } else {
        Err(BadPort::Speed(p))
    }
}

/// The IB width of PortInfo LinkWidthActive (4 bits, 5 with CapabilityMask2 2x); 0
/// (no active width: the link is down) stays 0, as upstream passes it.
fn width_from_port_info(w: u8) -> Result<u8, BadPort> {
    match w {
        0 | width::W1X | width::W4X | width::W8X | width::W12X | width::W2X => Ok(w),
        _ => Err(BadPort::Width(u16::from(w))),
    }
}

/// The IB speed of PortInfo LinkSpeedActive and the extended speeds, as upstream
/// `mlx5_query_mad_ifc_port` combines them (FDR10 needs the vendor ExtendedPortInfo,
/// which we do not query: QDR stays QDR).
fn speed_from_port_info(pi: &PortInfo) -> Result<u16, BadPort> {
    let mut s = match pi.link_speed_active {
        // No active speed (the link is down): reported as 0, as upstream passes it.
        0 => 0,
        1 => speed::SDR,
        2 => speed::DDR,
        4 => speed::QDR,
        v => return Err(BadPort::Speed(u16::from(v))),
    };
    if pi.cap_mask & cap::EXTENDED_SPEEDS_SUP != 0 {
        let mask2 = if pi.cap_mask & cap::CAP_MASK2_SUP != 0 {
            pi.cap_mask2
        } else {
            0
        };
        match pi.link_speed_ext_active {
            1 => s = speed::FDR,
            2 => s = speed::EDR,
            4 if mask2 & cap2::LINK_SPEED_HDR_SUP != 0 => s = speed::HDR,
            8 if mask2 & cap2::LINK_SPEED_NDR_SUP != 0 => s = speed::NDR,
            _ => {}
        }
    }
    Ok(s)
}

fn vl_cap(v: u8) -> Result<u8, BadPort> {
    // IBTA VLCap: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7, 5 VL0-14.
    if (1..=5).contains(&v) {
        Ok(v)
    } else {
        Err(BadPort::VlCap(v))
    }
}

/// The IBTA VLCap of the PVLC register's `vl_hw_cap` (upstream `translate_max_vl_num`:
/// 1 VL0, 2 VL0-1, 4 VL0-3, 8 VL0-7, 15 VL0-14).
pub fn vl_cap_from_pvlc(v: u8) -> Result<u8, BadPort> {
    match v {
        1 => Ok(1),
        2 => Ok(2),
        4 => Ok(3),
        8 => Ok(4),
        15 => Ok(5),
        _ => Err(BadPort::VlCap(v)),
    }
}

/// Port attributes from PortInfo (the MAD path). `gid_tbl_len` is the PortInfo
/// GUIDCap, as upstream reads it; the P_Key table length comes from the caps.
pub fn from_port_info(pi: &PortInfo, caps: &PortCaps) -> Result<PortAttr, BadPort> {
    let mut w = pi.link_width_active & 0xf;
    let mut flags2 = 0;
    if pi.cap_mask & cap::CAP_MASK2_SUP != 0 {
        flags2 = pi.cap_mask2;
        if flags2 & cap2::LINK_WIDTH_2X_SUP != 0 {
            w = pi.link_width_active & 0x1f;
        }
    }
    Ok(PortAttr {
        state: u32::from(check_state(pi.port_state)?),
        max_mtu: u32::from(check_mtu_code(pi.mtu_cap)?),
        active_mtu: u32::from(check_mtu_code(pi.neighbor_mtu)?),
        gid_tbl_len: u32::from(pi.guid_cap),
        port_cap_flags: pi.cap_mask,
        max_msg_sz: caps.max_msg_sz,
        bad_pkey_cntr: u32::from(pi.pkey_violations),
        qkey_viol_cntr: u32::from(pi.qkey_violations),
        sm_lid: u32::from(pi.sm_lid),
        lid: u32::from(pi.lid),
        pkey_tbl_len: caps.pkey_tbl_len,
        active_speed: speed_from_port_info(pi)?,
        port_cap_flags2: flags2,
        lmc: pi.lmc & 0x7,
        max_vl_num: vl_cap(pi.vl_cap)?,
        sm_sl: pi.sm_sl & 0xf,
        subnet_timeout: pi.subnet_timeout & 0x1f,
        init_type_reply: pi.init_type_reply & 0xf,
        active_width: width_from_port_info(w)?,
        phys_state: check_phys_state(pi.phys_state)?,
        rsvd: [0; 3],
    })
}

/// The HCA vport context fields the provider uses (`hca_vport_context`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HcaVport {
    /// `port_physical_state`.
    pub phys_state: u8,
    /// `vport_state` (what upstream reports as the port state).
    pub vport_state: u8,
    /// `system_image_guid`.
    pub sys_image_guid: u64,
    /// `node_guid`.
    pub node_guid: u64,
    /// `cap_mask1` (PortInfo CapabilityMask).
    pub cap_mask1: u32,
    /// `cap_mask2`.
    pub cap_mask2: u32,
    /// `lid`.
    pub lid: u16,
    /// `init_type_reply`.
    pub init_type_reply: u8,
    /// `lmc`.
    pub lmc: u8,
    /// `subnet_timeout`.
    pub subnet_timeout: u8,
    /// `sm_lid`.
    pub sm_lid: u16,
    /// `sm_sl`.
    pub sm_sl: u8,
    /// `qkey_violation_counter`.
    pub qkey_violations: u16,
    /// `pkey_violation_counter`.
    pub pkey_violations: u16,
}

/// The port registers of the HCA path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortRegs {
    /// PTYS `ib_link_width_oper`.
    pub width_oper: u16,
    /// PTYS `ib_proto_oper`.
    pub proto_oper: u16,
    /// PMTU `max_mtu` (bytes).
    pub max_mtu: u16,
    /// PMTU `oper_mtu` (bytes).
    pub oper_mtu: u16,
    /// PVLC `vl_hw_cap`.
    pub vl_hw_cap: u8,
}

/// Port attributes from the HCA vport context and the port registers (the HCA path,
/// upstream `mlx5_query_hca_port`).
pub fn from_hca_vport(v: &HcaVport, r: &PortRegs, caps: &PortCaps) -> Result<PortAttr, BadPort> {
    let flags2 = if v.cap_mask1 & cap::CAP_MASK2_SUP != 0 {
        // cap_mask2 is 32 bits in the vport context; the core's field is 16.
        v.cap_mask2 as u16
    } else {
        0
    };
    Ok(PortAttr {
        state: u32::from(check_state(v.vport_state)?),
        max_mtu: u32::from(mtu_code(r.max_mtu)?),
        active_mtu: u32::from(mtu_code(r.oper_mtu)?),
        gid_tbl_len: caps.gid_tbl_len,
        port_cap_flags: v.cap_mask1,
        max_msg_sz: caps.max_msg_sz,
        bad_pkey_cntr: u32::from(v.pkey_violations),
        qkey_viol_cntr: u32::from(v.qkey_violations),
        sm_lid: u32::from(v.sm_lid),
        lid: u32::from(v.lid),
        pkey_tbl_len: caps.pkey_tbl_len,
        active_speed: speed_from_ptys(r.proto_oper)?,
        port_cap_flags2: flags2,
        lmc: v.lmc & 0x7,
        max_vl_num: vl_cap_from_pvlc(r.vl_hw_cap)?,
        sm_sl: v.sm_sl & 0xf,
        subnet_timeout: v.subnet_timeout & 0x1f,
        init_type_reply: v.init_type_reply & 0xf,
        active_width: width_from_ptys(r.width_oper)?,
        phys_state: check_phys_state(v.phys_state)?,
        rsvd: [0; 3],
    })
}

/// A 1-based port number from the core, checked against the device's ports.
pub fn check_port(port: u32, num_ports: u8) -> Option<u8> {
    u8::try_from(port)
        .ok()
        .filter(|p| *p >= 1 && *p <= num_ports)
}
