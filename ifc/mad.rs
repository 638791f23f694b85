//! MAD_IFC (the firmware's subnet management agent) and the IBTA management datagram
//! it carries: the SMP header, method, status and attribute ids.
//!
//! `mad_ifc_in` / `mad_ifc_out` are PRM structures (mlx5_ifc.h, in [`crate::ifc`]'s
//! `ALL_STRUCTS`). The MAD itself is IBTA (Vol. 1, ch. 13.4 MAD format, 14.2.1 SMP
//! format); its tables are listed in [`IBTA_STRUCTS`] and checked against
//! `include/rdma/ib_mad.h` / `ib_smi.h` by `emu/tests/ibta_vs_header.rs`. A field name
//! `member:part` names a sub-byte IBTA field packed inside the header's C member
//! `member` (the header declares such bytes whole, e.g. `linkspeed_portstate`).

prm_struct! {
    /// MAD_IFC input: the 256-byte MAD for the port's SMA/PMA.
    pub mod mad_ifc_in / MAD_IFC_IN = "mad_ifc_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        REMOTE_LID: "remote_lid" @ 0x40, 0x10 => u16;
        PLANE_INDEX: "plane_index" @ 0x50, 0x8 => u8;
        PORT: "port" @ 0x58, 0x8 => u8;
        MAD: "mad" @ 0x80, 0x800 => Bytes;
    }
}

prm_struct! {
    /// MAD_IFC output: the response MAD.
    pub mod mad_ifc_out / MAD_IFC_OUT = "mad_ifc_out", 0x880 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        RESPONSE_MAD_PACKET: "response_mad_packet" @ 0x80, 0x800 => Bytes;
    }
}

/// MAD_IFC `op_mod` bits (mlx5_ib mad.c `mlx5_MAD_IFC`).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_INFINIBAND)),
    expect(dead_code, reason = "used by the emulator and the IB provider")
)]
pub mod mad_ifc_op_mod {
    /// Do not check the M_Key.
    pub const IGNORE_MKEY: u16 = 0x1;
    /// Do not check the B_Key.
    pub const IGNORE_BKEY: u16 = 0x2;
}

/// Size of a MAD in bytes (IBTA 13.4.1).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub const MAD_BYTES: usize = 256;

prm_struct! {
    /// The common MAD header (IBTA 13.4.3, `struct ib_mad_hdr`).
    pub mod mad_hdr / MAD_HDR = "ib_mad_hdr", 0xc0 {
        BASE_VERSION: "base_version" @ 0x0, 0x8 => u8;
        MGMT_CLASS: "mgmt_class" @ 0x8, 0x8 => u8;
        CLASS_VERSION: "class_version" @ 0x10, 0x8 => u8;
        METHOD: "method" @ 0x18, 0x8 => u8;
        STATUS: "status" @ 0x20, 0x10 => u16;
        CLASS_SPECIFIC: "class_specific" @ 0x30, 0x10 => u16;
        TID: "tid" @ 0x40, 0x40 => u64;
        ATTR_ID: "attr_id" @ 0x80, 0x10 => u16;
        ATTR_MOD: "attr_mod" @ 0xa0, 0x20 => u32;
    }
}

prm_struct! {
    /// A LID-routed or directed-route SMP (IBTA 14.2.1, `struct ib_smp`).
    pub mod smp / SMP = "ib_smp", 0x800 {
        BASE_VERSION: "base_version" @ 0x0, 0x8 => u8;
        MGMT_CLASS: "mgmt_class" @ 0x8, 0x8 => u8;
        CLASS_VERSION: "class_version" @ 0x10, 0x8 => u8;
        METHOD: "method" @ 0x18, 0x8 => u8;
        STATUS: "status" @ 0x20, 0x10 => u16;
        HOP_PTR: "hop_ptr" @ 0x30, 0x8 => u8;
        HOP_CNT: "hop_cnt" @ 0x38, 0x8 => u8;
        TID: "tid" @ 0x40, 0x40 => u64;
        ATTR_ID: "attr_id" @ 0x80, 0x10 => u16;
        ATTR_MOD: "attr_mod" @ 0xa0, 0x20 => u32;
        MKEY: "mkey" @ 0xc0, 0x40 => u64;
        DR_SLID: "dr_slid" @ 0x100, 0x10 => u16;
        DR_DLID: "dr_dlid" @ 0x110, 0x10 => u16;
        DATA: "data" @ 0x200, 0x200 => Bytes;
        INITIAL_PATH: "initial_path" @ 0x400, 0x200 => Bytes;
        RETURN_PATH: "return_path" @ 0x600, 0x200 => Bytes;
    }
}

/// Base version of every IBTA MAD (`IB_MGMT_BASE_VERSION`).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_INFINIBAND)),
    expect(dead_code, reason = "used by the emulator and the IB provider")
)]
pub const BASE_VERSION: u8 = 1;
/// Class version of the subnet management classes (IBTA 14.2.1).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_INFINIBAND)),
    expect(dead_code, reason = "used by the emulator and the IB provider")
)]
pub const SM_CLASS_VERSION: u8 = 1;

/// Management classes (`IB_MGMT_CLASS_*`).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_INFINIBAND)),
    expect(dead_code, reason = "used by the emulator and the IB provider")
)]
pub mod mgmt_class {
    /// Subnet management, LID routed.
    pub const SUBN_LID_ROUTED: u8 = 0x01;
    /// Subnet management, directed route.
    pub const SUBN_DIRECTED_ROUTE: u8 = 0x81;
    /// Performance management.
    pub const PERF_MGMT: u8 = 0x04;
    /// Congestion management.
    pub const CONG_MGMT: u8 = 0x21;
}

/// Methods (`IB_MGMT_METHOD_*`).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod method {
    /// Get.
    pub const GET: u8 = 0x01;
    /// Set.
    pub const SET: u8 = 0x02;
    /// Trap.
    pub const TRAP: u8 = 0x05;
    /// Trap repress.
    pub const TRAP_REPRESS: u8 = 0x07;
    /// Response bit (or'ed into the request's method).
    pub const RESP: u8 = 0x80;
    /// GetResp.
    pub const GET_RESP: u8 = 0x81;
}

/// MAD status values (`IB_MGMT_MAD_STATUS_*`, IBTA 13.4.7 table 110).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod mad_status {
    /// Success.
    pub const SUCCESS: u16 = 0x0000;
    /// Bad base or class version.
    pub const BAD_VERSION: u16 = 0x0004;
    /// Method not supported.
    pub const UNSUPPORTED_METHOD: u16 = 0x0008;
    /// Method/attribute combination not supported.
    pub const UNSUPPORTED_METHOD_ATTRIB: u16 = 0x000c;
    /// An attribute field (or the attribute modifier) holds an invalid value.
    pub const INVALID_ATTRIB_VALUE: u16 = 0x001c;
    /// Direction bit of a directed-route SMP response (`IB_SMP_DIRECTION`).
    pub const SMP_DIRECTION: u16 = 0x8000;
}

/// Subnet management attribute ids (`IB_SMP_ATTR_*`).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod smp_attr {
    /// NodeDescription.
    pub const NODE_DESC: u16 = 0x0010;
    /// NodeInfo.
    pub const NODE_INFO: u16 = 0x0011;
    /// GUIDInfo.
    pub const GUID_INFO: u16 = 0x0014;
    /// PortInfo.
    pub const PORT_INFO: u16 = 0x0015;
    /// P_KeyTable.
    pub const PKEY_TABLE: u16 = 0x0016;
    /// SLtoVLMappingTable.
    pub const SL_TO_VL_TABLE: u16 = 0x0017;
    /// VLArbitrationTable.
    pub const VL_ARB_TABLE: u16 = 0x0018;
    /// SMInfo.
    pub const SM_INFO: u16 = 0x0020;
    /// Mellanox ExtendedPortInfo (`MLX5_ATTR_EXTENDED_PORT_INFO`, device.h).
    pub const EXTENDED_PORT_INFO: u16 = 0xff90;
}

/// Every IBTA table here, in [`super::smp_attrs`] and in [`super::pma`], for `emu/tests/ibta_vs_header.rs`
/// (host crates only).
#[cfg(not(CONFIG_RUST))]
pub const IBTA_STRUCTS: &[&super::field::PrmStruct] = &[
    &MAD_HDR,
    &SMP,
    &super::smp_attrs::NODE_INFO,
    &super::smp_attrs::PORT_INFO,
    &super::smp_attrs::NODE_DESC,
    &super::smp_attrs::GUID_INFO,
    &super::smp_attrs::PKEY_TABLE,
    &super::pma::PMA_MAD,
    &super::pma::CLASS_PORT_INFO,
    &super::pma::PORT_COUNTERS,
    &super::pma::PORT_COUNTERS_EXT,
];
