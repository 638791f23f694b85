//! HCA and NIC vport commands: the port as the function sees it through the vport
//! interface (QUERY_HCA_VPORT_CONTEXT / _GID / _PKEY, MODIFY_HCA_VPORT_CONTEXT,
//! QUERY_VPORT_STATE, QUERY_NIC_VPORT_CONTEXT).
//!
//! On an InfiniBand port with cap `ib_virt` set, upstream `mlx5_ib` reads the port
//! through these commands instead of MAD_IFC (`mlx5_use_mad_ifc` in mlx5_ib main.c).

prm_struct! {
    /// `hca_vport_context`: the port attributes the subnet manager configured.
    pub mod hca_vport_context / HCA_VPORT_CONTEXT = "hca_vport_context", 0x1000 {
        FIELD_SELECT: "field_select" @ 0x0, 0x20 => u32;
        SM_VIRT_AWARE: "sm_virt_aware" @ 0x100, 0x1 => bool;
        HAS_SMI: "has_smi" @ 0x101, 0x1 => bool;
        HAS_RAW: "has_raw" @ 0x102, 0x1 => bool;
        GRH_REQUIRED: "grh_required" @ 0x103, 0x1 => bool;
        NUM_PORT_PLANE: "num_port_plane" @ 0x108, 0x8 => u8;
        PORT_PHYSICAL_STATE: "port_physical_state" @ 0x110, 0x4 => u8;
        VPORT_STATE_POLICY: "vport_state_policy" @ 0x114, 0x4 => u8;
        PORT_STATE: "port_state" @ 0x118, 0x4 => u8;
        VPORT_STATE: "vport_state" @ 0x11c, 0x4 => u8;
        SYSTEM_IMAGE_GUID: "system_image_guid" @ 0x140, 0x40 => u64;
        PORT_GUID: "port_guid" @ 0x180, 0x40 => u64;
        NODE_GUID: "node_guid" @ 0x1c0, 0x40 => u64;
        CAP_MASK1: "cap_mask1" @ 0x200, 0x20 => u32;
        CAP_MASK1_FIELD_SELECT: "cap_mask1_field_select" @ 0x220, 0x20 => u32;
        CAP_MASK2: "cap_mask2" @ 0x240, 0x20 => u32;
        CAP_MASK2_FIELD_SELECT: "cap_mask2_field_select" @ 0x260, 0x20 => u32;
        LID: "lid" @ 0x300, 0x10 => u16;
        INIT_TYPE_REPLY: "init_type_reply" @ 0x314, 0x4 => u8;
        LMC: "lmc" @ 0x318, 0x3 => u8;
        SUBNET_TIMEOUT: "subnet_timeout" @ 0x31b, 0x5 => u8;
        SM_LID: "sm_lid" @ 0x320, 0x10 => u16;
        SM_SL: "sm_sl" @ 0x330, 0x4 => u8;
        QKEY_VIOLATION_COUNTER: "qkey_violation_counter" @ 0x340, 0x10 => u16;
        PKEY_VIOLATION_COUNTER: "pkey_violation_counter" @ 0x350, 0x10 => u16;
    }
}

/// `hca_vport_context.field_select` bits of MODIFY_HCA_VPORT_CONTEXT
/// (`MLX5_HCA_VPORT_SEL_*`).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod vport_sel {
    /// `port_guid` is valid.
    pub const PORT_GUID: u32 = 1 << 0;
    /// `node_guid` is valid.
    pub const NODE_GUID: u32 = 1 << 1;
    /// `vport_state_policy` is valid.
    pub const STATE_POLICY: u32 = 1 << 2;
}

/// `vport_state` / `state` values (`MLX5_VPORT_STATE_*` in vport.h): the IBTA PortState
/// numbering on IB ports, DOWN/UP on Ethernet vports.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod vport_state {
    /// Down.
    pub const DOWN: u8 = 0;
    /// Up (QUERY_VPORT_STATE).
    pub const UP: u8 = 1;
}

prm_struct! {
    /// QUERY_HCA_VPORT_CONTEXT input.
    pub mod query_hca_vport_context_in / QUERY_HCA_VPORT_CONTEXT_IN = "query_hca_vport_context_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        OTHER_VPORT: "other_vport" @ 0x40, 0x1 => bool;
        PORT_NUM: "port_num" @ 0x4c, 0x4 => u8;
        VPORT_NUMBER: "vport_number" @ 0x50, 0x10 => u16;
    }
}

prm_struct! {
    /// QUERY_HCA_VPORT_CONTEXT output.
    pub mod query_hca_vport_context_out / QUERY_HCA_VPORT_CONTEXT_OUT = "query_hca_vport_context_out", 0x1080 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        HCA_VPORT_CONTEXT: "hca_vport_context" @ 0x80, 0x1000 => Bytes;
    }
}

prm_struct! {
    /// MODIFY_HCA_VPORT_CONTEXT input.
    pub mod modify_hca_vport_context_in / MODIFY_HCA_VPORT_CONTEXT_IN = "modify_hca_vport_context_in", 0x1080 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        OTHER_VPORT: "other_vport" @ 0x40, 0x1 => bool;
        PORT_NUM: "port_num" @ 0x4c, 0x4 => u8;
        VPORT_NUMBER: "vport_number" @ 0x50, 0x10 => u16;
        HCA_VPORT_CONTEXT: "hca_vport_context" @ 0x80, 0x1000 => Bytes;
    }
}

prm_struct! {
    /// MODIFY_HCA_VPORT_CONTEXT output.
    pub mod modify_hca_vport_context_out / MODIFY_HCA_VPORT_CONTEXT_OUT = "modify_hca_vport_context_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
    }
}

prm_struct! {
    /// QUERY_HCA_VPORT_GID input.
    pub mod query_hca_vport_gid_in / QUERY_HCA_VPORT_GID_IN = "query_hca_vport_gid_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        OTHER_VPORT: "other_vport" @ 0x40, 0x1 => bool;
        PORT_NUM: "port_num" @ 0x4c, 0x4 => u8;
        VPORT_NUMBER: "vport_number" @ 0x50, 0x10 => u16;
        GID_INDEX: "gid_index" @ 0x70, 0x10 => u16;
    }
}

prm_struct! {
    /// QUERY_HCA_VPORT_GID output; `gid[]` holds `gids_num` 16-byte GIDs.
    pub mod query_hca_vport_gid_out / QUERY_HCA_VPORT_GID_OUT = "query_hca_vport_gid_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        GIDS_NUM: "gids_num" @ 0x60, 0x10 => u16;
        GID: "gid" @ 0x80, 0x0 => Bytes;
    }
}

/// `gid_index` / `pkey_index` value asking for the whole table
/// (`query_hca_vport_gid`/`_pkey` in mlx5_core vport.c: index 0xffff = all entries).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub const ALL_ENTRIES: u16 = 0xffff;

/// Size of one GID in `query_hca_vport_gid_out.gid[]` (`array128_auto`).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub const GID_BYTES: usize = 16;

prm_struct! {
    /// QUERY_HCA_VPORT_PKEY input.
    pub mod query_hca_vport_pkey_in / QUERY_HCA_VPORT_PKEY_IN = "query_hca_vport_pkey_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        OTHER_VPORT: "other_vport" @ 0x40, 0x1 => bool;
        PORT_NUM: "port_num" @ 0x4c, 0x4 => u8;
        VPORT_NUMBER: "vport_number" @ 0x50, 0x10 => u16;
        PKEY_INDEX: "pkey_index" @ 0x70, 0x10 => u16;
    }
}

prm_struct! {
    /// QUERY_HCA_VPORT_PKEY output; `pkey[]` holds `pkey` entries.
    pub mod query_hca_vport_pkey_out / QUERY_HCA_VPORT_PKEY_OUT = "query_hca_vport_pkey_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        PKEY: "pkey" @ 0x80, 0x0 => Bytes;
    }
}

prm_struct! {
    /// One P_Key table entry of `query_hca_vport_pkey_out.pkey[]`.
    pub mod pkey_entry / PKEY_ENTRY = "pkey", 0x20 {
        PKEY: "pkey" @ 0x10, 0x10 => u16;
    }
}

prm_struct! {
    /// QUERY_VPORT_STATE input.
    pub mod query_vport_state_in / QUERY_VPORT_STATE_IN = "query_vport_state_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        OTHER_VPORT: "other_vport" @ 0x40, 0x1 => bool;
        VPORT_NUMBER: "vport_number" @ 0x50, 0x10 => u16;
    }
}

prm_struct! {
    /// QUERY_VPORT_STATE output.
    pub mod query_vport_state_out / QUERY_VPORT_STATE_OUT = "query_vport_state_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        MAX_TX_SPEED: "max_tx_speed" @ 0x60, 0x10 => u16;
        ADMIN_STATE: "admin_state" @ 0x78, 0x4 => u8;
        STATE: "state" @ 0x7c, 0x4 => u8;
    }
}

/// QUERY_VPORT_STATE op_mods (`MLX5_VPORT_STATE_OP_MOD_*`).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod vport_state_op_mod {
    /// The function's own vNIC vport.
    pub const VNIC_VPORT: u16 = 0;
    /// An e-switch vport.
    pub const ESW_VPORT: u16 = 1;
    /// The uplink.
    pub const UPLINK: u16 = 2;
}

prm_struct! {
    /// `nic_vport_context` (the fields the IB provider reads).
    pub mod nic_vport_context / NIC_VPORT_CONTEXT = "nic_vport_context", 0x800 {
        ROCE_EN: "roce_en" @ 0x1f, 0x1 => bool;
        MTU: "mtu" @ 0x130, 0x10 => u16;
        SYSTEM_IMAGE_GUID: "system_image_guid" @ 0x140, 0x40 => u64;
        PORT_GUID: "port_guid" @ 0x180, 0x40 => u64;
        NODE_GUID: "node_guid" @ 0x1c0, 0x40 => u64;
        QKEY_VIOLATION_COUNTER: "qkey_violation_counter" @ 0x340, 0x10 => u16;
    }
}

prm_struct! {
    /// QUERY_NIC_VPORT_CONTEXT input.
    pub mod query_nic_vport_context_in / QUERY_NIC_VPORT_CONTEXT_IN = "query_nic_vport_context_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        OTHER_VPORT: "other_vport" @ 0x40, 0x1 => bool;
        VPORT_NUMBER: "vport_number" @ 0x50, 0x10 => u16;
        ALLOWED_LIST_TYPE: "allowed_list_type" @ 0x65, 0x3 => u8;
    }
}

prm_struct! {
    /// QUERY_NIC_VPORT_CONTEXT output.
    pub mod query_nic_vport_context_out / QUERY_NIC_VPORT_CONTEXT_OUT = "query_nic_vport_context_out", 0x880 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        NIC_VPORT_CONTEXT: "nic_vport_context" @ 0x80, 0x800 => Bytes;
    }
}
