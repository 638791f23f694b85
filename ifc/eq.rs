//! Event queue commands: CREATE_EQ, DESTROY_EQ, QUERY_EQ, GEN_EQE and the EQ context.

/// Byte offset of the EQ context in CREATE_EQ input / QUERY_EQ output.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator and the host tests")
)]
pub const EQC_OFFSET: usize = create_eq_in::EQ_CONTEXT_ENTRY.raw().byte_off();
/// Byte offset of `event_bitmask[4]` (four be64 words) in CREATE_EQ input.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator and the host tests")
)]
pub const EVENT_BITMASK_OFFSET: usize = create_eq_in::EVENT_BITMASK.raw().byte_off();
/// Byte offset of `pas[]` in CREATE_EQ input.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator and the host tests")
)]
pub const PAS_OFFSET: usize = create_eq_in::PAS.raw().byte_off();
/// EQ doorbell in a UAR page: arm and set consumer index.
pub const UAR_EQ_DB_ARM: usize = 0x40;
/// EQ doorbell in a UAR page: set consumer index without arming.
pub const UAR_EQ_DB_UPDATE: usize = 0x48;
/// The EQ doorbell dword written big-endian at [`UAR_EQ_DB_ARM`] or
/// [`UAR_EQ_DB_UPDATE`]: the EQ number in bits 31:24 and the low 24 bits of the
/// consumer counter below it (the PRM's EQ doorbell; upstream's `eq_update_ci`). No
/// `mlx5_ifc.h` structure declares it.
pub mod eq_doorbell {
    use crate::ifc::field::RegField;

    /// The EQ number.
    pub const EQN: RegField<u8> = RegField::at(0, 24, 8);
    /// The consumer counter, modulo 2^24.
    pub const CONSUMER_COUNTER: RegField<u32> = RegField::at(0, 0, 24);

    /// The doorbell value for EQ `eqn` at consumer counter `cc` (cut to 24 bits).
    pub fn value(eqn: u8, cc: u32) -> u32 {
        (u32::from(eqn) << EQN.shift()) | (cc & CONSUMER_COUNTER.bits_mask())
    }
}

/// Size of one EQE.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub const EQE_SIZE: usize = 64;

prm_struct! {
    /// CREATE_EQ input.
    pub mod create_eq_in / CREATE_EQ_IN = "create_eq_in", 0x880 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        UID: "uid" @ 0x10, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        EQ_CONTEXT_ENTRY: "eq_context_entry" @ 0x80, 0x200 => Bytes;
        EVENT_BITMASK: "event_bitmask" @ 0x2c0, 0x100 => Bytes;
        PAS: "pas" @ 0x880, 0x0 => Bytes;
    }
}

prm_struct! {
    /// CREATE_EQ output.
    pub mod create_eq_out / CREATE_EQ_OUT = "create_eq_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        EQ_NUMBER: "eq_number" @ 0x58, 0x8 => u8;
    }
}

prm_struct! {
    /// EQ context.
    pub mod eqc / EQC = "eqc", 0x200 {
        STATUS: "status" @ 0x0, 0x4 => u8;
        EC: "ec" @ 0xd, 0x1 => bool;
        OI: "oi" @ 0xe, 0x1 => bool;
        ST: "st" @ 0x14, 0x4 => u8;
        PAGE_OFFSET: "page_offset" @ 0x54, 0x6 => u8;
        LOG_EQ_SIZE: "log_eq_size" @ 0x63, 0x5 => u8;
        UAR_PAGE: "uar_page" @ 0x68, 0x18 => u32;
        INTR: "intr" @ 0xb4, 0xc => u16;
        LOG_PAGE_SIZE: "log_page_size" @ 0xc3, 0x5 => u8;
        CONSUMER_COUNTER: "consumer_counter" @ 0x148, 0x18 => u32;
        PRODUCER_COUNTER: "producer_counter" @ 0x168, 0x18 => u32;
    }
}

/// EQC `st` (state) values.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod eq_state {
    /// Armed: the next EQE raises an interrupt.
    pub const ARMED: u8 = 0x9;
    /// Fired: interrupt raised, waiting for re-arm.
    pub const FIRED: u8 = 0xa;
}

prm_struct! {
    /// DESTROY_EQ input.
    pub mod destroy_eq_in / DESTROY_EQ_IN = "destroy_eq_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        EQ_NUMBER: "eq_number" @ 0x58, 0x8 => u8;
    }
}

prm_struct! {
    /// QUERY_EQ input.
    pub mod query_eq_in / QUERY_EQ_IN = "query_eq_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        EQ_NUMBER: "eq_number" @ 0x58, 0x8 => u8;
    }
}

prm_struct! {
    /// QUERY_EQ output.
    pub mod query_eq_out / QUERY_EQ_OUT = "query_eq_out", 0x880 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        EQ_CONTEXT_ENTRY: "eq_context_entry" @ 0x80, 0x200 => Bytes;
        EVENT_BITMASK: "event_bitmask" @ 0x2c0, 0x40 => u64;
        PAS: "pas" @ 0x880, 0x0 => Bytes;
    }
}

prm_struct! {
    /// GEN_EQE input.
    pub mod gen_eqe_in / GEN_EQE_IN = "gen_eqe_in", 0x280 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        EQ_NUMBER: "eq_number" @ 0x58, 0x8 => u8;
        EQE: "eqe" @ 0x80, 0x200 => Bytes;
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ifc_eq))]
mod tests {
    use super::eq_doorbell;

    #[test]
    fn eq_doorbell_word() {
        // upstream eq_update_ci: (cons_index & 0xffffff) | (eqn << 24)
        assert_eq!(eq_doorbell::value(5, 0x0123_4567), 0x0523_4567);
        assert_eq!(eq_doorbell::value(0xff, 0xffff_ffff), u32::MAX);
        assert_eq!(eq_doorbell::EQN.get(0x0523_4567), 5);
        assert_eq!(eq_doorbell::CONSUMER_COUNTER.get(0x0523_4567), 0x23_4567);
    }
}
