//! Syndromes the emulated firmware reports with a failing command status.
//!
//! Real firmware syndromes are opaque 32-bit values; ours are stable and named so
//! tests and logs can tell the reasons apart.

/// Unknown or unmodelled opcode.
pub const BAD_OPCODE: u32 = 0x4f0d_0001;
/// Command not allowed in the function's current state.
pub const BAD_STATE: u32 = 0x5a7e_0002;
/// A parameter is out of range or inconsistent.
pub const BAD_PARAM: u32 = 0x9a7a_0003;
/// Input too short for the command.
pub const BAD_INPUT_LEN: u32 = 0x1e40_0004;
/// Output too short for the command.
pub const BAD_OUTPUT_LEN: u32 = 0x0e40_0005;
/// Page address null, unaligned, unmapped or already given.
pub const BAD_PAGE: u32 = 0x9a6e_0006;
/// DISABLE_HCA while firmware still holds pages.
pub const PAGES_HELD: u32 = 0x9a6e_0007;
/// Not enough pages given before INIT_HCA.
pub const PAGES_MISSING: u32 = 0x9a6e_0008;
/// Unknown resource (EQ, UAR).
pub const BAD_RESOURCE: u32 = 0x7e50_0009;
/// Resource still in use.
pub const RESOURCE_BUSY: u32 = 0x7e50_000a;
/// Resource limit reached.
pub const LIMIT: u32 = 0x7e50_000b;
/// Unknown register id.
pub const BAD_REGISTER: u32 = 0x7e60_000c;
/// Unsupported capability type.
pub const BAD_CAP_TYPE: u32 = 0xca90_000d;
/// Injected by the control socket.
pub const INJECTED: u32 = 0x1e1e_000e;
/// A port number the device does not have (MAD_IFC, vport commands, port registers).
pub const BAD_PORT: u32 = 0x9a70_000f;
/// MFRL: a sync-reset start or answer the handshake's state does not allow.
pub const SYNC_RESET_STATE: u32 = 0x5a7e_0010;
