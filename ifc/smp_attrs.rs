//! The subnet management attributes the firmware's SMA answers (IBTA Vol. 1, 14.2.5):
//! NodeInfo, NodeDescription, PortInfo, GUIDInfo and P_KeyTable, each laid out in the
//! 64-byte data of an SMP ([`super::mad::smp::DATA`]).
//!
//! These are IBTA structures, not PRM ones: they are listed in
//! [`super::mad::IBTA_STRUCTS`], not in `ALL_STRUCTS`. A field named `member:part` is a
//! sub-byte field inside the C member `member` of the kernel's struct; a table or field
//! named `ibta:...` has no counterpart in the kernel headers (the test checks what the
//! headers do name: the attribute id and the SMP data size) and cites IBTA instead.

prm_struct! {
    /// NodeInfo (IBTA 14.2.5.3, table 144; `struct ib_node_info`).
    pub mod node_info / NODE_INFO = "ib_node_info", 0x140 {
        BASE_VERSION: "base_version" @ 0x0, 0x8 => u8;
        CLASS_VERSION: "class_version" @ 0x8, 0x8 => u8;
        NODE_TYPE: "node_type" @ 0x10, 0x8 => u8;
        NUM_PORTS: "num_ports" @ 0x18, 0x8 => u8;
        SYSTEM_IMAGE_GUID: "sys_guid" @ 0x20, 0x40 => u64;
        NODE_GUID: "node_guid" @ 0x60, 0x40 => u64;
        PORT_GUID: "port_guid" @ 0xa0, 0x40 => u64;
        PARTITION_CAP: "partition_cap" @ 0xe0, 0x10 => u16;
        DEVICE_ID: "device_id" @ 0xf0, 0x10 => u16;
        REVISION: "revision" @ 0x100, 0x20 => u32;
        LOCAL_PORT_NUM: "local_port_num" @ 0x120, 0x8 => u8;
        VENDOR_ID: "vendor_id" @ 0x128, 0x18 => u32;
    }
}

/// NodeInfo `node_type` (IBTA 14.2.5.3).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod node_type {
    /// Channel adapter.
    pub const CA: u8 = 1;
    /// Switch.
    pub const SWITCH: u8 = 2;
}

prm_struct! {
    /// PortInfo (IBTA 14.2.5.6, table 148; `struct ib_port_info`). The kernel's struct
    /// stops after LinkRoundTripLatency (byte 60); IBTA 1.2.1+ defines bytes 60..64
    /// (CapabilityMask2, the extended link speeds), which mlx5_ib mad.c reads at
    /// `data + 60` and `data[62]`.
    pub mod port_info / PORT_INFO = "ib_port_info", 0x200 {
        MKEY: "mkey" @ 0x0, 0x40 => u64;
        GID_PREFIX: "gid_prefix" @ 0x40, 0x40 => u64;
        LID: "lid" @ 0x80, 0x10 => u16;
        MASTER_SM_LID: "sm_lid" @ 0x90, 0x10 => u16;
        CAPABILITY_MASK: "cap_mask" @ 0xa0, 0x20 => u32;
        DIAG_CODE: "diag_code" @ 0xc0, 0x10 => u16;
        MKEY_LEASE_PERIOD: "mkey_lease_period" @ 0xd0, 0x10 => u16;
        LOCAL_PORT_NUM: "local_port_num" @ 0xe0, 0x8 => u8;
        LINK_WIDTH_ENABLED: "link_width_enabled" @ 0xe8, 0x8 => u8;
        LINK_WIDTH_SUPPORTED: "link_width_supported" @ 0xf0, 0x8 => u8;
        LINK_WIDTH_ACTIVE: "link_width_active" @ 0xf8, 0x8 => u8;
        LINK_SPEED_SUPPORTED: "linkspeed_portstate:link_speed_supported" @ 0x100, 0x4 => u8;
        PORT_STATE: "linkspeed_portstate:port_state" @ 0x104, 0x4 => u8;
        PORT_PHYS_STATE: "portphysstate_linkdown:port_phys_state" @ 0x108, 0x4 => u8;
        LINK_DOWN_DEFAULT_STATE: "portphysstate_linkdown:link_down_default_state" @ 0x10c, 0x4 => u8;
        MKEY_PROTECT_BITS: "mkeyprot_resv_lmc:mkey_protect_bits" @ 0x110, 0x2 => u8;
        LMC: "mkeyprot_resv_lmc:lmc" @ 0x115, 0x3 => u8;
        LINK_SPEED_ACTIVE: "linkspeedactive_enabled:link_speed_active" @ 0x118, 0x4 => u8;
        LINK_SPEED_ENABLED: "linkspeedactive_enabled:link_speed_enabled" @ 0x11c, 0x4 => u8;
        NEIGHBOR_MTU: "neighbormtu_mastersmsl:neighbor_mtu" @ 0x120, 0x4 => u8;
        MASTER_SM_SL: "neighbormtu_mastersmsl:master_sm_sl" @ 0x124, 0x4 => u8;
        VL_CAP: "vlcap_inittype:vl_cap" @ 0x128, 0x4 => u8;
        INIT_TYPE: "vlcap_inittype:init_type" @ 0x12c, 0x4 => u8;
        VL_HIGH_LIMIT: "vl_high_limit" @ 0x130, 0x8 => u8;
        VL_ARB_HIGH_CAP: "vl_arb_high_cap" @ 0x138, 0x8 => u8;
        VL_ARB_LOW_CAP: "vl_arb_low_cap" @ 0x140, 0x8 => u8;
        INIT_TYPE_REPLY: "inittypereply_mtucap:init_type_reply" @ 0x148, 0x4 => u8;
        MTU_CAP: "inittypereply_mtucap:mtu_cap" @ 0x14c, 0x4 => u8;
        VL_STALL_COUNT: "vlstallcnt_hoqlife:vl_stall_count" @ 0x150, 0x3 => u8;
        HOQ_LIFE: "vlstallcnt_hoqlife:hoq_life" @ 0x153, 0x5 => u8;
        OPERATIONAL_VLS: "operationalvl_pei_peo_fpi_fpo:operational_vls" @ 0x158, 0x4 => u8;
        PARTITION_ENFORCEMENT_INBOUND: "operationalvl_pei_peo_fpi_fpo:pei" @ 0x15c, 0x1 => bool;
        PARTITION_ENFORCEMENT_OUTBOUND: "operationalvl_pei_peo_fpi_fpo:peo" @ 0x15d, 0x1 => bool;
        MKEY_VIOLATIONS: "mkey_violations" @ 0x160, 0x10 => u16;
        PKEY_VIOLATIONS: "pkey_violations" @ 0x170, 0x10 => u16;
        QKEY_VIOLATIONS: "qkey_violations" @ 0x180, 0x10 => u16;
        GUID_CAP: "guid_cap" @ 0x190, 0x8 => u8;
        CLIENT_REREGISTER: "clientrereg_resv_subnetto:client_reregister" @ 0x198, 0x1 => bool;
        SUBNET_TIMEOUT: "clientrereg_resv_subnetto:subnet_timeout" @ 0x19b, 0x5 => u8;
        RESP_TIME_VALUE: "resv_resptimevalue:resp_time_value" @ 0x1a3, 0x5 => u8;
        LOCAL_PHY_ERRORS: "localphyerrors_overrunerrors:local_phy_errors" @ 0x1a8, 0x4 => u8;
        OVERRUN_ERRORS: "localphyerrors_overrunerrors:overrun_errors" @ 0x1ac, 0x4 => u8;
        MAX_CREDIT_HINT: "max_credit_hint" @ 0x1b0, 0x10 => u16;
        LINK_ROUND_TRIP_LATENCY: "link_roundtrip_latency" @ 0x1c8, 0x18 => u32;
        CAPABILITY_MASK2: "ibta:capability_mask2" @ 0x1e0, 0x10 => u16;
        LINK_SPEED_EXT_ACTIVE: "ibta:link_speed_ext_active" @ 0x1f0, 0x4 => u8;
        LINK_SPEED_EXT_SUPPORTED: "ibta:link_speed_ext_supported" @ 0x1f4, 0x4 => u8;
        LINK_SPEED_EXT_ENABLED: "ibta:link_speed_ext_enabled" @ 0x1fb, 0x5 => u8;
    }
}

/// PortInfo PortState (IBTA 14.2.5.6; `enum ib_port_state`).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod port_state {
    /// Down.
    pub const DOWN: u8 = 1;
    /// Initialize (link up, not yet configured by the SM).
    pub const INIT: u8 = 2;
    /// Armed.
    pub const ARMED: u8 = 3;
    /// Active.
    pub const ACTIVE: u8 = 4;
}

/// PortInfo PortPhysicalState (IBTA 14.2.5.6; `enum ib_port_phys_state`).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod phys_state {
    /// Polling.
    pub const POLLING: u8 = 2;
    /// Disabled.
    pub const DISABLED: u8 = 3;
    /// LinkUp.
    pub const LINK_UP: u8 = 5;
}

prm_struct! {
    /// NodeDescription (IBTA 14.2.5.2): 64 bytes of UTF-8, NUL padded.
    pub mod node_desc / NODE_DESC = "ibta:NodeDescription", 0x200 {
        NODE_STRING: "ibta:node_string" @ 0x0, 0x200 => Bytes;
    }
}

prm_struct! {
    /// GUIDInfo (IBTA 14.2.5.5): a block of 8 port GUIDs; attribute modifier = block.
    pub mod guid_info / GUID_INFO = "ibta:GUIDInfo", 0x200 {
        GUID_BLOCK: "ibta:guid_block" @ 0x0, 0x200 => Bytes;
    }
}

/// GUIDs per GUIDInfo block.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub const GUIDS_PER_BLOCK: usize = 8;

prm_struct! {
    /// P_KeyTable (IBTA 14.2.5.7): a block of 32 P_Keys; attribute modifier bits 15:0
    /// = block (bits 31:16 are a switch's port number, 0 on a CA).
    pub mod pkey_table / PKEY_TABLE = "ibta:P_KeyTable", 0x200 {
        PKEY_BLOCK: "ibta:pkey_block" @ 0x0, 0x200 => Bytes;
    }
}

/// P_Keys per P_KeyTable block.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub const PKEYS_PER_BLOCK: usize = 32;
