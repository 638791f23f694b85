//! QUERY_PAGES and MANAGE_PAGES layouts.
//!
//! `pas[]` entries are big-endian 64-bit addresses of 4 KiB pages starting at byte
//! [`PAS_OFFSET`] of the MANAGE_PAGES input (give) or output (take).

/// FW page size.
pub const FW_PAGE_SIZE: u64 = 4096;
/// Byte offset of `pas[]` in MANAGE_PAGES input and output.
pub const PAS_OFFSET: usize = manage_pages_in::PAS.raw().byte_off();
/// Most pages firmware returns per take command.
pub const MAX_RECLAIM_NPAGES: u32 = 50_000;

prm_struct! {
    /// QUERY_PAGES input.
    pub mod query_pages_in / QUERY_PAGES_IN = "query_pages_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        EMBEDDED_CPU_FUNCTION: "embedded_cpu_function" @ 0x40, 0x1 => bool;
        FUNCTION_ID: "function_id" @ 0x50, 0x10 => u16;
    }
}

prm_struct! {
    /// QUERY_PAGES output (`num_pages` is signed).
    pub mod query_pages_out / QUERY_PAGES_OUT = "query_pages_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        EMBEDDED_CPU_FUNCTION: "embedded_cpu_function" @ 0x40, 0x1 => bool;
        FUNCTION_ID: "function_id" @ 0x50, 0x10 => u16;
        NUM_PAGES: "num_pages" @ 0x60, 0x20 => i32;
    }
}

prm_struct! {
    /// MANAGE_PAGES input.
    pub mod manage_pages_in / MANAGE_PAGES_IN = "manage_pages_in", 0x80 {
        OPCODE: "opcode" @ 0x0, 0x10 => u16;
        OP_MOD: "op_mod" @ 0x30, 0x10 => u16;
        EMBEDDED_CPU_FUNCTION: "embedded_cpu_function" @ 0x40, 0x1 => bool;
        FUNCTION_ID: "function_id" @ 0x50, 0x10 => u16;
        INPUT_NUM_ENTRIES: "input_num_entries" @ 0x60, 0x20 => u32;
        PAS: "pas" @ 0x80, 0x0 => Bytes;
    }
}

prm_struct! {
    /// MANAGE_PAGES output.
    pub mod manage_pages_out / MANAGE_PAGES_OUT = "manage_pages_out", 0x80 {
        STATUS: "status" @ 0x0, 0x8 => u8;
        SYNDROME: "syndrome" @ 0x20, 0x20 => u32;
        OUTPUT_NUM_ENTRIES: "output_num_entries" @ 0x40, 0x20 => u32;
        PAS: "pas" @ 0x80, 0x0 => Bytes;
    }
}

/// Reads entry `i` of a `pas[]` array that starts at byte `base` of `buf`.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub fn pas_get(buf: &[u8], base: usize, i: usize) -> Option<u64> {
    let off = base.checked_add(i.checked_mul(8)?)?;
    let b = buf.get(off..off.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Some(u64::from_be_bytes(a))
}

/// Writes entry `i` of a `pas[]` array that starts at byte `base` of `buf`.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub fn pas_set(buf: &mut [u8], base: usize, i: usize, addr: u64) -> Option<()> {
    let off = base.checked_add(i.checked_mul(8)?)?;
    buf.get_mut(off..off.checked_add(8)?)?
        .copy_from_slice(&addr.to_be_bytes());
    Some(())
}
