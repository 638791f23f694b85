//! Command queue entry (64 bytes) and mailbox block (576 bytes), as in `device.h`.
//!
//! Both are plain C structures with big-endian multi-byte fields, so they are
//! `zerocopy` structs; byte offsets are also exported as constants for code that
//! works on raw byte buffers.

use zerocopy::byteorder::big_endian::{U32, U64};
use zerocopy_derive::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Entry type for PCI command transport.
pub const CMD_TYPE_PCI: u8 = 7;
/// Inline input / output bytes in the entry.
pub const INLINE_LEN: usize = 16;
/// Data bytes per mailbox block.
pub const BLOCK_DATA_LEN: usize = 512;
/// Size of a mailbox block.
pub const BLOCK_SIZE: usize = 576;
/// Required alignment of a mailbox block address.
pub const BLOCK_ALIGN: u64 = 1024;
/// Size of a command queue entry.
pub const ENTRY_SIZE: usize = 64;
/// Maximum number of slots (`1 << log_cmdq_size` must not exceed this).
pub const MAX_SLOTS: usize = 32;

/// Ownership bit in `status_own`: 1 = hardware owns the entry.
pub const OWN_HW: u8 = 0x1;

/// One command queue entry (`struct mlx5_cmd_layout`).
#[derive(Clone, Copy, Debug, Default, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct CmdLayout {
    /// Must be [`CMD_TYPE_PCI`].
    pub type_: u8,
    /// Reserved, zero.
    pub rsvd0: [u8; 3],
    /// Total input length including the inline bytes.
    pub inlen: U32,
    /// First input mailbox block, 0 if none.
    pub in_ptr: U64,
    /// First 16 input bytes.
    pub in_: [u8; INLINE_LEN],
    /// First 16 output bytes.
    pub out: [u8; INLINE_LEN],
    /// First output mailbox block, 0 if none.
    pub out_ptr: U64,
    /// Total output length including the inline bytes.
    pub outlen: U32,
    /// Command token.
    pub token: u8,
    /// Entry signature.
    pub sig: u8,
    /// Reserved, zero.
    pub rsvd1: u8,
    /// Bit 0 ownership, bits 7:1 delivery status.
    pub status_own: u8,
}

/// Byte offsets inside [`CmdLayout`].
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod entry_off {
    /// type.
    pub const TYPE: usize = 0x00;
    /// inlen.
    pub const INLEN: usize = 0x04;
    /// in_ptr.
    pub const IN_PTR: usize = 0x08;
    /// in[].
    pub const IN: usize = 0x10;
    /// out[].
    pub const OUT: usize = 0x20;
    /// out_ptr.
    pub const OUT_PTR: usize = 0x30;
    /// outlen.
    pub const OUTLEN: usize = 0x38;
    /// token.
    pub const TOKEN: usize = 0x3c;
    /// sig.
    pub const SIG: usize = 0x3d;
    /// status_own.
    pub const STATUS_OWN: usize = 0x3f;
}

/// One mailbox block (`struct mlx5_cmd_prot_block`).
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct CmdBlock {
    /// Data bytes.
    pub data: [u8; BLOCK_DATA_LEN],
    /// Reserved.
    pub rsvd0: [u8; 48],
    /// Next block address, 0 in the last block.
    pub next: U64,
    /// Position of this block in the chain, from 0.
    pub block_num: U32,
    /// Reserved.
    pub rsvd1: u8,
    /// Token of the command.
    pub token: u8,
    /// Control signature over bytes 0x200..0x23e.
    pub ctrl_sig: u8,
    /// Signature over bytes 0..0x23f.
    pub sig: u8,
}

/// Byte offsets inside [`CmdBlock`].
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod block_off {
    /// data.
    pub const DATA: usize = 0x000;
    /// rsvd0.
    pub const RSVD0: usize = 0x200;
    /// next.
    pub const NEXT: usize = 0x230;
    /// block_num.
    pub const BLOCK_NUM: usize = 0x238;
    /// rsvd1.
    pub const RSVD1: usize = 0x23c;
    /// token.
    pub const TOKEN: usize = 0x23d;
    /// ctrl_sig.
    pub const CTRL_SIG: usize = 0x23e;
    /// sig.
    pub const SIG: usize = 0x23f;
}

/// XOR of all bytes.
pub fn xor8(buf: &[u8]) -> u8 {
    buf.iter().fold(0u8, |a, b| a ^ b)
}

/// Entry signature: the value of `sig` that makes the XOR of the whole entry `0xff`
/// (whatever `sig` holds now is ignored). Computed after every other byte is final,
/// `status_own` included.
pub fn entry_signature(entry: &[u8; ENTRY_SIZE]) -> u8 {
    !(xor8(entry) ^ entry[entry_off::SIG])
}

/// True when the XOR over the whole entry (signature included) is 0xff.
pub fn entry_signature_ok(entry: &[u8; ENTRY_SIZE]) -> bool {
    xor8(entry) == 0xff
}

/// Control signature of a block (over bytes 0x200..0x23e).
pub fn block_ctrl_signature(block: &[u8; BLOCK_SIZE]) -> u8 {
    !xor8(&block[block_off::RSVD0..block_off::CTRL_SIG])
}

/// Full signature of a block (over bytes 0..0x23f).
pub fn block_signature(block: &[u8; BLOCK_SIZE]) -> u8 {
    !xor8(&block[..block_off::SIG])
}

/// True when both block signatures verify.
pub fn block_signatures_ok(block: &[u8; BLOCK_SIZE]) -> bool {
    xor8(&block[block_off::RSVD0..block_off::SIG]) == 0xff && xor8(&block[..]) == 0xff
}

/// Number of mailbox blocks needed for a message of `len` bytes: 0 for `len <= 16`,
/// 1 for `17..=528`, `k` for `16 + 512·(k-1) < len <= 16 + 512·k`.
pub const fn blocks_for(len: usize) -> usize {
    if len <= INLINE_LEN {
        0
    } else {
        (len - INLINE_LEN).div_ceil(BLOCK_DATA_LEN)
    }
}

const _: () = assert!(core::mem::size_of::<CmdLayout>() == ENTRY_SIZE);
const _: () = assert!(core::mem::size_of::<CmdBlock>() == BLOCK_SIZE);
