//! Input/output layouts of the HCA-level commands (bring-up, teardown, UAR, NOP).
//!
//! Every input starts with opcode/op_mod ([`mbox_in`]) and every output with
//! status/syndrome ([`mbox_out`]).

prm_struct! {
    /// Generic command input header (`cmd_in`; `command[]` follows).
    pub mod mbox_in / CMD_IN_HDR = "cmd_in", 0x40 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
    }
}

prm_struct! {
    /// Generic command output header (`cmd_out`).
    pub mod mbox_out / CMD_OUT_HDR = "cmd_out", 0x60 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
    }
}

prm_struct! {
    /// ENABLE_HCA input.
    pub mod enable_hca_in / ENABLE_HCA_IN = "enable_hca_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        EMBEDDED_CPU_FUNCTION: "embedded_cpu_function" @ 0x40, 0x1 => bool;
        FUNCTION_ID_TYPE: "function_id_type" @ 0x43, 0x1 => bool;
        FUNCTION_ID: "function_id" @ 0x50, 0x10 => u16;
    }
}

prm_struct! {
    /// DISABLE_HCA input.
    pub mod disable_hca_in / DISABLE_HCA_IN = "disable_hca_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        EMBEDDED_CPU_FUNCTION: "embedded_cpu_function" @ 0x40, 0x1 => bool;
        FUNCTION_ID: "function_id" @ 0x50, 0x10 => u16;
    }
}

prm_struct! {
    /// QUERY_ISSI output.
    pub mod query_issi_out / QUERY_ISSI_OUT = "query_issi_out", 0x380 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        CURRENT_ISSI: "current_issi" @ 0x50, 0x10 => u16;
        SUPPORTED_ISSI_DW0: "supported_issi_dw0" @ 0x360, 0x20 => u32;
    }
}

prm_struct! {
    /// QUERY_ISSI input.
    pub mod query_issi_in / QUERY_ISSI_IN = "query_issi_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
    }
}

prm_struct! {
    /// SET_ISSI input.
    pub mod set_issi_in / SET_ISSI_IN = "set_issi_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        CURRENT_ISSI: "current_issi" @ 0x50, 0x10 => u16;
    }
}

prm_struct! {
    /// INIT_HCA input.
    pub mod init_hca_in / INIT_HCA_IN = "init_hca_in", 0x100 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        SW_VHCA_ID: "sw_vhca_id" @ 0x62, 0xe => u16;
        SW_OWNER_ID: "sw_owner_id" @ 0x80, 0x80 => Bytes;
    }
}

prm_struct! {
    /// TEARDOWN_HCA input.
    pub mod teardown_hca_in / TEARDOWN_HCA_IN = "teardown_hca_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        PROFILE: "profile" @ 0x50, 0x10 => u16;
    }
}

prm_struct! {
    /// TEARDOWN_HCA output.
    pub mod teardown_hca_out / TEARDOWN_HCA_OUT = "teardown_hca_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        STATE: "state" @ 0x7f, 0x1 => u8;
    }
}

/// TEARDOWN_HCA output `state` values (force / prepare-fast).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod teardown_state {
    /// Succeeded.
    pub const SUCCESS: u8 = 0;
    /// Failed.
    pub const FAIL: u8 = 1;
}

prm_struct! {
    /// SET_DRIVER_VERSION input.
    pub mod set_driver_version_in / SET_DRIVER_VERSION_IN = "set_driver_version_in", 0x280 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        DRIVER_VERSION: "driver_version" @ 0x80, 0x200 => Bytes;
    }
}

prm_struct! {
    /// QUERY_ADAPTER input.
    pub mod query_adapter_in / QUERY_ADAPTER_IN = "query_adapter_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
    }
}

prm_struct! {
    /// QUERY_ADAPTER output.
    pub mod query_adapter_out / QUERY_ADAPTER_OUT = "query_adapter_out", 0x880 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        QUERY_ADAPTER_STRUCT: "query_adapter_struct" @ 0x80, 0x800 => Bytes;
    }
}

prm_struct! {
    /// QUERY_ADAPTER parameter block (at output byte 0x10).
    pub mod query_adapter_param_block / QUERY_ADAPTER_STRUCT = "query_adapter_param_block", 0x800 {
        IEEE_VENDOR_ID: "ieee_vendor_id" @ 0xc8, 0x18 => u32;
        VSD_VENDOR_ID: "vsd_vendor_id" @ 0xf0, 0x10 => u16;
        VSD: "vsd" @ 0x100, 0x680 => Bytes;
        VSD_CONTD_PSID: "vsd_contd_psid" @ 0x780, 0x80 => Bytes;
    }
}

prm_struct! {
    /// ALLOC_UAR input.
    pub mod alloc_uar_in / ALLOC_UAR_IN = "alloc_uar_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
    }
}

prm_struct! {
    /// ALLOC_UAR output.
    pub mod alloc_uar_out / ALLOC_UAR_OUT = "alloc_uar_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        UAR: "uar" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// DEALLOC_UAR input.
    pub mod dealloc_uar_in / DEALLOC_UAR_IN = "dealloc_uar_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        UAR: "uar" @ 0x48, 0x18 => u32;
    }
}

prm_struct! {
    /// NOP input.
    pub mod nop_in / NOP_IN = "nop_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
    }
}
