//! The performance management agent's MADs (IBTA Vol. 1, ch. 16.1): the PMA MAD,
//! ClassPortInfo, PortCounters and PortCountersExtended.
//!
//! IBTA structures, listed in [`super::mad::IBTA_STRUCTS`] and checked against
//! `include/rdma/ib_pma.h` / `ib_mad.h` by `emu/tests/ibta_vs_header.rs` (field names
//! as in [`super::mad`]).

prm_struct! {
    /// A PMA MAD (`struct ib_pma_mad`): the common header, 40 reserved bytes, data.
    pub mod pma_mad / PMA_MAD = "ib_pma_mad", 0x800 {
        MAD_HDR: "mad_hdr" @ 0x0, 0xc0 => Bytes;
        DATA: "data" @ 0x200, 0x600 => Bytes;
    }
}

prm_struct! {
    /// ClassPortInfo (IBTA 13.4.8.1, `struct ib_class_port_info`).
    pub mod class_port_info / CLASS_PORT_INFO = "ib_class_port_info", 0x240 {
        BASE_VERSION: "base_version" @ 0x0, 0x8 => u8;
        CLASS_VERSION: "class_version" @ 0x8, 0x8 => u8;
        CAPABILITY_MASK: "capability_mask" @ 0x10, 0x10 => u16;
        RESP_TIME_VALUE: "cap_mask2_resp_time:resp_time_value" @ 0x3b, 0x5 => u8;
    }
}

prm_struct! {
    /// PortCounters (IBTA 16.1.3.5, `struct ib_pma_portcounters`).
    pub mod port_counters / PORT_COUNTERS = "ib_pma_portcounters", 0x160 {
        PORT_SELECT: "port_select" @ 0x8, 0x8 => u8;
        COUNTER_SELECT: "counter_select" @ 0x10, 0x10 => u16;
        PORT_XMIT_DATA: "port_xmit_data" @ 0xc0, 0x20 => u32;
        PORT_RCV_DATA: "port_rcv_data" @ 0xe0, 0x20 => u32;
        PORT_XMIT_PACKETS: "port_xmit_packets" @ 0x100, 0x20 => u32;
        PORT_RCV_PACKETS: "port_rcv_packets" @ 0x120, 0x20 => u32;
    }
}

prm_struct! {
    /// PortCountersExtended (IBTA 16.1.4.11, `struct ib_pma_portcounters_ext`).
    pub mod port_counters_ext / PORT_COUNTERS_EXT = "ib_pma_portcounters_ext", 0x240 {
        PORT_SELECT: "port_select" @ 0x8, 0x8 => u8;
        COUNTER_SELECT: "counter_select" @ 0x10, 0x10 => u16;
        PORT_XMIT_DATA: "port_xmit_data" @ 0x40, 0x40 => u64;
        PORT_RCV_DATA: "port_rcv_data" @ 0x80, 0x40 => u64;
        PORT_XMIT_PACKETS: "port_xmit_packets" @ 0xc0, 0x40 => u64;
        PORT_RCV_PACKETS: "port_rcv_packets" @ 0x100, 0x40 => u64;
    }
}

/// PMA attribute ids (`IB_PMA_*`, ib_pma.h).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod pma_attr {
    /// ClassPortInfo.
    pub const CLASS_PORT_INFO: u16 = 0x0001;
    /// PortCounters.
    pub const PORT_COUNTERS: u16 = 0x0012;
    /// PortCountersExtended.
    pub const PORT_COUNTERS_EXT: u16 = 0x001d;
}

/// PMA ClassPortInfo CapabilityMask bits (`IB_PMA_CLASS_CAP_*`, ib_pma.h).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod pma_cap {
    /// PortCountersExtended with the 64-bit data and packet counters.
    pub const EXT_WIDTH: u16 = 1 << 9;
}

/// CounterSelect bits of PortCounters (`IB_PMA_SEL_*`, ib_pma.h; IBTA 16.1.3.5):
/// the counters a Set clears.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod counter_select {
    /// PortXmitData.
    pub const XMIT_DATA: u16 = 0x1000;
    /// PortRcvData.
    pub const RCV_DATA: u16 = 0x2000;
    /// PortXmitPkts.
    pub const XMIT_PACKETS: u16 = 0x4000;
    /// PortRcvPkts.
    pub const RCV_PACKETS: u16 = 0x8000;
}

/// CounterSelect bits of PortCountersExtended (`IB_PMA_SELX_*`, ib_pma.h; IBTA
/// 16.1.4.11).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod counter_select_ext {
    /// PortXmitData.
    pub const XMIT_DATA: u16 = 0x0001;
    /// PortRcvData.
    pub const RCV_DATA: u16 = 0x0002;
    /// PortXmitPkts.
    pub const XMIT_PACKETS: u16 = 0x0004;
    /// PortRcvPkts.
    pub const RCV_PACKETS: u16 = 0x0008;
}

/// Class version of the performance management class (IBTA 16.1.1).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub const PMA_CLASS_VERSION: u8 = 1;
