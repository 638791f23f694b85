// SPDX-License-Identifier: GPL-2.0

//! XOR signatures of the command entry and of mailbox blocks.
//!
//! The device protects the 64-byte command entry and, optionally, each
//! 576-byte mailbox block with 8-bit XOR signatures:
//!
//! * entry: `sig` (byte 0x3d) is chosen so that the XOR of all 64 bytes,
//!   `sig` included, is `0xff`. It is computed after every other byte of the
//!   entry is final, `status_own` (ownership = 1) included. Always used.
//! * block: `ctrl_sig` (byte 0x23e) makes the XOR of bytes 0x200..=0x23e
//!   equal `0xff`; `sig` (byte 0x23f) makes the XOR of the whole block equal
//!   `0xff`. Only used when checksums are enabled (upstream keeps them off).
//!
//! The signatures are computed by [`crate::ifc::cmd_layout`], with the layouts;
//! this module adds sealing (writing the signature bytes) as the command path
//! uses it, and re-exports the checks.
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use crate::ifc::cmd_layout::{block_off, entry_off};

pub use crate::ifc::cmd_layout::{
    block_ctrl_signature, block_signature, block_signatures_ok as block_signature_ok,
    entry_signature, entry_signature_ok, BLOCK_SIZE, ENTRY_SIZE,
};

/// Writes the entry signature. Call after every other byte is final.
pub fn seal_entry(entry: &mut [u8; ENTRY_SIZE]) {
    entry[entry_off::SIG] = entry_signature(entry);
}

/// Writes `ctrl_sig` and then `sig` of a block (in that order: `sig` covers
/// `ctrl_sig`). Call after data, next pointer, block number and token are
/// final.
pub fn seal_block(block: &mut [u8; BLOCK_SIZE]) {
    block[block_off::CTRL_SIG] = block_ctrl_signature(block);
    block[block_off::SIG] = block_signature(block);
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_cmd_signature))]
mod tests {
    use super::*;
    use crate::ifc::cmd_layout::xor8;

    #[test]
    fn xor8_basics() {
        assert_eq!(xor8(&[]), 0);
        assert_eq!(xor8(&[0x0f, 0xf0]), 0xff);
        assert_eq!(xor8(&[0xaa, 0xaa]), 0);
    }

    #[test]
    fn entry_seal_and_verify() {
        let mut e = [0u8; ENTRY_SIZE];
        e[0] = 7; // type
        e[4..8].copy_from_slice(&0x20u32.to_be_bytes());
        e[0x3c] = 0x5a; // token
        e[0x3f] = 1; // owned by HW
        assert!(!entry_signature_ok(&e));
        seal_entry(&mut e);
        assert!(entry_signature_ok(&e));
        // 7 ^ 0x20 ^ 0x5a ^ 1 = 0x7c, sig = !0x7c = 0x83
        assert_eq!(e[entry_off::SIG], 0x83);
        // resealing is idempotent (old sig ignored)
        seal_entry(&mut e);
        assert_eq!(e[entry_off::SIG], 0x83);
        // any single bit flip is detected
        for i in 0..ENTRY_SIZE {
            let mut c = e;
            c[i] ^= 0x10;
            assert!(!entry_signature_ok(&c));
        }
    }

    #[test]
    fn all_zero_entry_signature_is_ff() {
        let e = [0u8; ENTRY_SIZE];
        assert_eq!(entry_signature(&e), 0xff);
    }

    #[test]
    fn block_seal_and_verify() {
        let mut b = [0u8; BLOCK_SIZE];
        for (i, x) in b[..512].iter_mut().enumerate() {
            *x = (i * 7) as u8;
        }
        b[0x230..0x238].copy_from_slice(&0x1234_5000u64.to_be_bytes());
        b[0x238..0x23c].copy_from_slice(&3u32.to_be_bytes());
        b[0x23d] = 9;
        assert!(!block_signature_ok(&b));
        seal_block(&mut b);
        assert!(block_signature_ok(&b));
        assert_eq!(xor8(&b[0x200..=0x23e]), 0xff);
        assert_eq!(xor8(&b), 0xff);
        // corrupting data breaks only sig; corrupting ctrl breaks both
        let mut d = b;
        d[10] ^= 1;
        assert!(!block_signature_ok(&d));
        assert_eq!(xor8(&d[0x200..=0x23e]), 0xff);
        let mut c = b;
        c[0x238] ^= 1;
        assert!(!block_signature_ok(&c));
    }
}
