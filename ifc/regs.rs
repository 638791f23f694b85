//! ACCESS_REG and the registers the core touches at probe.

/// Register ids.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod reg_id {
    /// Port capability mask.
    pub const PCAM: u16 = 0x507f;
    /// Management capability mask.
    pub const MCAM: u16 = 0x907f;
    /// QoS capability mask.
    pub const QCAM: u16 = 0x4019;
    /// Host endianness.
    pub const HOST_ENDIANNESS: u16 = 0x7004;
    /// Default timeouts.
    pub const DTOR: u16 = 0xc00e;
    /// Port administrative and operational status.
    pub const PAOS: u16 = 0x5006;
    /// Port type and speed.
    pub const PTYS: u16 = 0x5004;
    /// Port MTU.
    pub const PMTU: u16 = 0x5003;
    /// Management real-time clock.
    pub const MRTC: u16 = 0x902d;
    /// Port capability (the PortInfo CapabilityMask an IB host sets).
    pub const PCAP: u16 = 0x5001;
    /// Port VL capability.
    pub const PVLC: u16 = 0x500f;
    /// IB NodeDescription (`MLX5_REG_NODE_DESC`, driver.h).
    pub const NODE_DESC: u16 = 0x6001;
    /// Management firmware reset level (`MLX5_REG_MFRL`, driver.h): sync reset.
    pub const MFRL: u16 = 0x9028;
}

/// Byte offset of `register_data` in ACCESS_REG input and output.
pub const REG_DATA_OFFSET: usize = 0x10;

prm_struct! {
    /// ACCESS_REG input.
    pub mod access_register_in / ACCESS_REGISTER_IN = "access_register_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        REGISTER_ID: "register_id" @ 0x50, 0x10 => u16;
        ARGUMENT: "argument" @ 0x60, 0x20 => u32;
        REGISTER_DATA: "register_data" @ 0x80, 0x0 => Bytes;
    }
}

prm_struct! {
    /// ACCESS_REG output.
    pub mod access_register_out / ACCESS_REGISTER_OUT = "access_register_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        REGISTER_DATA: "register_data" @ 0x80, 0x0 => Bytes;
    }
}

prm_struct! {
    /// `default_timeout` dword.
    pub mod default_timeout / DEFAULT_TIMEOUT = "default_timeout", 0x20 {
        TO_MULTIPLIER: "to_multiplier" @ 0x0, 0x3 => u8;
        TO_VALUE: "to_value" @ 0xc, 0x14 => u32;
    }
}

prm_struct! {
    /// DTOR register (default timeouts).
    pub mod dtor_reg / DTOR_REG = "dtor_reg", 0x200 {
        PCIE_TOGGLE_TO: "pcie_toggle_to" @ 0x20, 0x20 => u32;
        HEALTH_POLL_TO: "health_poll_to" @ 0xa0, 0x20 => u32;
        FULL_CRDUMP_TO: "full_crdump_to" @ 0xc0, 0x20 => u32;
        FW_RESET_TO: "fw_reset_to" @ 0xe0, 0x20 => u32;
        FLUSH_ON_ERR_TO: "flush_on_err_to" @ 0x100, 0x20 => u32;
        PCI_SYNC_UPDATE_TO: "pci_sync_update_to" @ 0x120, 0x20 => u32;
        TEAR_DOWN_TO: "tear_down_to" @ 0x140, 0x20 => u32;
        FSM_REACTIVATE_TO: "fsm_reactivate_to" @ 0x160, 0x20 => u32;
        RECLAIM_PAGES_TO: "reclaim_pages_to" @ 0x180, 0x20 => u32;
        RECLAIM_VFS_PAGES_TO: "reclaim_vfs_pages_to" @ 0x1a0, 0x20 => u32;
        RESET_UNLOAD_TO: "reset_unload_to" @ 0x1c0, 0x20 => u32;
    }
}

prm_struct! {
    /// MFRL: management firmware reset level (`mlx5_ifc_mfrl_reg_bits`). Read: the reset
    /// levels and types the firmware supports, the state of the last sync reset and the
    /// PCI reset method it asks for; write: a reset level, with the sync-reset start or a
    /// function's answer (upstream `fw_reset.c`).
    pub mod mfrl_reg / MFRL_REG = "mfrl_reg", 0x40 {
        PCI_SYNC_FOR_FW_UPDATE_START: "pci_sync_for_fw_update_start" @ 0x22, 0x1 => bool;
        PCI_SYNC_FOR_FW_UPDATE_RESP: "pci_sync_for_fw_update_resp" @ 0x23, 0x2 => u8;
        RST_TYPE_SEL: "rst_type_sel" @ 0x25, 0x3 => u8;
        PCI_RESET_REQ_METHOD: "pci_reset_req_method" @ 0x28, 0x3 => u8;
        RESET_STATE: "reset_state" @ 0x2c, 0x4 => u8;
        RESET_TYPE: "reset_type" @ 0x30, 0x8 => u8;
        RESET_LEVEL: "reset_level" @ 0x38, 0x8 => u8;
    }
}

/// MFRL values (`MLX5_MFRL_REG_*`, mlx5_ifc.h; the response values as upstream's
/// `mlx5_fw_reset_set_reset_sync_ack` / `_nack` write them).
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "the driver answers requests; the other levels and states are the emulator's"
    )
)]
pub mod mfrl {
    /// Reset level 0: live patch (no reset).
    pub const LEVEL0: u8 = 1 << 0;
    /// Reset level 3: firmware reset on the next PCI reset (`fw_activate`).
    pub const LEVEL3: u8 = 1 << 3;
    /// Reset level 6: warm reboot.
    pub const LEVEL6: u8 = 1 << 6;
    /// Reset type: full chip.
    pub const TYPE_FULL_CHIP: u8 = 1 << 0;
    /// Reset type: the network port stays alive.
    pub const TYPE_NET_PORT_ALIVE: u8 = 1 << 1;
    /// Reset state: idle.
    pub const STATE_IDLE: u8 = 0;
    /// Reset state: negotiation with the functions in progress.
    pub const STATE_IN_NEGOTIATION: u8 = 1;
    /// Reset state: reset in progress (waiting for the PCI reset).
    pub const STATE_RESET_IN_PROGRESS: u8 = 2;
    /// Reset state: a function did not answer in time.
    pub const STATE_NEG_TIMEOUT: u8 = 3;
    /// Reset state: a function refused.
    pub const STATE_NACK: u8 = 4;
    /// Reset state: a function did not unload in time.
    pub const STATE_UNLOAD_TIMEOUT: u8 = 5;
    /// PCI reset method: link toggle through the upstream bridge.
    pub const METHOD_LINK_TOGGLE: u8 = 0;
    /// PCI reset method: hot reset (secondary bus reset).
    pub const METHOD_HOT_RESET: u8 = 1;
    /// Function response: acknowledge.
    pub const RESP_ACK: u8 = 1;
    /// Function response: refuse.
    pub const RESP_NACK: u8 = 2;
}

prm_struct! {
    /// MCAM: management capability mask (`mlx5_ifc_mcam_reg_bits`): the groups asked.
    /// Its capability unions are checked member by member below (the header's union
    /// of four register groups is not sized by the header check).
    pub mod mcam_reg / MCAM_REG = "mcam_reg", 0x240 {
        FEATURE_GROUP: "feature_group" @ 0x8, 0x8 => u8;
        ACCESS_REG_GROUP: "access_reg_group" @ 0x18, 0x8 => u8;
    }
}

/// Byte offsets in MCAM of `mng_access_reg_cap_mask` and `mng_feature_cap_mask` (bits
/// 0x40 and 0x140 of `mlx5_ifc_mcam_reg_bits`).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod mcam_off {
    /// `mng_access_reg_cap_mask`.
    pub const ACCESS_REG_CAP_MASK: usize = 0x40 / 8;
    /// `mng_feature_cap_mask`.
    pub const FEATURE_CAP_MASK: usize = 0x140 / 8;
}

prm_struct! {
    /// MCAM access-register group 0 (`mlx5_ifc_mcam_access_reg_bits`): `mfrl` is what
    /// upstream's `mlx5_fw_reset_init` checks before offering `fw_activate`.
    pub mod mcam_access_reg / MCAM_ACCESS_REG = "mcam_access_reg", 0x80 {
        MFRL: "mfrl" @ 0x57, 0x1 => bool;
    }
}

prm_struct! {
    /// MCAM enhanced features (`mlx5_ifc_mcam_enhanced_features_bits`): `reset_state`
    /// lets upstream read why a sync reset failed (`mlx5_fw_reset_set_reset_sync`).
    pub mod mcam_features / MCAM_FEATURES = "mcam_enhanced_features", 0x80 {
        RESET_STATE: "reset_state" @ 0x6a, 0x1 => bool;
    }
}

prm_struct! {
    /// PAOS: port administrative and operational status.
    pub mod paos_reg / PAOS_REG = "paos_reg", 0x80 {
        SWID: "swid" @ 0x0, 0x8 => u8;
        LOCAL_PORT: "local_port" @ 0x8, 0x8 => u8;
        ADMIN_STATUS: "admin_status" @ 0x14, 0x4 => u8;
        OPER_STATUS: "oper_status" @ 0x1c, 0x4 => u8;
        ASE: "ase" @ 0x20, 0x1 => bool;
        EE: "ee" @ 0x21, 0x1 => bool;
        E: "e" @ 0x3e, 0x2 => u8;
    }
}

/// PAOS admin/oper status values.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod port_status {
    /// Up.
    pub const UP: u8 = 1;
    /// Down.
    pub const DOWN: u8 = 2;
}

prm_struct! {
    /// PMTU: port MTU (bytes).
    pub mod pmtu_reg / PMTU_REG = "pmtu_reg", 0x80 {
        LOCAL_PORT: "local_port" @ 0x8, 0x8 => u8;
        MAX_MTU: "max_mtu" @ 0x20, 0x10 => u16;
        ADMIN_MTU: "admin_mtu" @ 0x40, 0x10 => u16;
        OPER_MTU: "oper_mtu" @ 0x60, 0x10 => u16;
    }
}

prm_struct! {
    /// PTYS: port type and speed.
    pub mod ptys_reg / PTYS_REG = "ptys_reg", 0x200 {
        LOCAL_PORT: "local_port" @ 0x8, 0x8 => u8;
        PROTO_MASK: "proto_mask" @ 0x1d, 0x3 => u8;
        IB_LINK_WIDTH_CAPABILITY: "ib_link_width_capability" @ 0x80, 0x10 => u16;
        IB_PROTO_CAPABILITY: "ib_proto_capability" @ 0x90, 0x10 => u16;
        IB_LINK_WIDTH_ADMIN: "ib_link_width_admin" @ 0xe0, 0x10 => u16;
        IB_PROTO_ADMIN: "ib_proto_admin" @ 0xf0, 0x10 => u16;
        IB_LINK_WIDTH_OPER: "ib_link_width_oper" @ 0x140, 0x10 => u16;
        IB_PROTO_OPER: "ib_proto_oper" @ 0x150, 0x10 => u16;
    }
}

prm_struct! {
    /// PVLC: port virtual lanes (`vl_hw_cap` counts VLs: 1 = VL0, 2 = VL0-1, ..., 8 = VL0-7,
    /// 15 = VL0-14, upstream `enum mlx5_vl_hw_cap`; not the IBTA VLCap encoding).
    pub mod pvlc_reg / PVLC_REG = "pvlc_reg", 0x80 {
        LOCAL_PORT: "local_port" @ 0x8, 0x8 => u8;
        VL_HW_CAP: "vl_hw_cap" @ 0x3c, 0x4 => u8;
        VL_ADMIN: "vl_admin" @ 0x5c, 0x4 => u8;
        VL_OPERATIONAL: "vl_operational" @ 0x7c, 0x4 => u8;
    }
}

prm_struct! {
    /// PCAP: port capability mask; dword 0 of `port_capability_mask` (bits 127:96) is
    /// the IBTA PortInfo CapabilityMask (`struct mlx5_reg_pcap` in mlx5_core port.c).
    pub mod pcap_reg / PCAP_REG = "pcap_reg", 0xa0 {
        LOCAL_PORT: "local_port" @ 0x8, 0x8 => u8;
        PORT_CAPABILITY_MASK: "port_capability_mask" @ 0x20, 0x80 => Bytes;
    }
}

prm_struct! {
    /// NODE_DESC register data: the 64-byte IB NodeDescription (`set_node_in` in
    /// mlx5_ifc.h; `struct mlx5_reg_node_desc` in mlx5_ib main.c).
    pub mod node_desc_reg / NODE_DESC_REG = "set_node_in", 0x200 {
        NODE_DESCRIPTION: "node_description" @ 0x0, 0x200 => Bytes;
    }
}
