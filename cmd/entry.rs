// SPDX-License-Identifier: GPL-2.0

//! Building a command queue entry and reading its completion.
//!
//! The 64-byte entry ([`crate::ifc::cmd_layout::CmdLayout`]) tells the
//! device the total input and output lengths, where the input and output
//! mailbox chains start, the first 16 input bytes inline, and the token.
//! Software hands it over with `status_own` = 1 (hardware owns) and the
//! entry signature computed last, over every other byte — always, whether
//! or not mailbox checksums are on. The device answers in place: the first
//! 16 output bytes in `out[]`, the delivery status in `status_own` bits
//! 7:1, ownership bit cleared.
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use zerocopy::byteorder::big_endian::{U32, U64};
use zerocopy::{FromBytes, IntoBytes};

use super::mailbox::{ChainHead, INLINE_LEN};
use super::signature;
use super::token::Token;
use crate::ifc::cmd_layout::{CmdLayout, CMD_TYPE_PCI, ENTRY_SIZE, MAX_SLOTS, OWN_HW};

/// The entry for a command with `token`, first input bytes `inline_in`
/// and the chains described by `input` and `output` (from
/// [`super::mailbox::write_input`] and [`super::mailbox::link_chain`]),
/// owned by hardware and signed.
pub fn build(
    token: Token,
    inline_in: &[u8; INLINE_LEN],
    input: &ChainHead,
    output: &ChainHead,
) -> [u8; ENTRY_SIZE] {
    let lay = CmdLayout {
        type_: CMD_TYPE_PCI,
        rsvd0: [0; 3],
        inlen: U32::new(input.len),
        in_ptr: U64::new(input.ptr),
        in_: *inline_in,
        out: [0; INLINE_LEN],
        out_ptr: U64::new(output.ptr),
        outlen: U32::new(output.len),
        token: token.get(),
        sig: 0,
        rsvd1: 0,
        status_own: OWN_HW,
    };
    let mut e = [0u8; ENTRY_SIZE];
    e.copy_from_slice(lay.as_bytes());
    signature::seal_entry(&mut e);
    e
}

/// What the device left in an entry.
///
/// The device writes `ownership` (cleared on completion), the delivery `status` and
/// `command_output_inline_data` (`mlx5_ifc_cmd_queue_entry_bits`); those are what the
/// command path reads. `token` is software's own (upstream never reads it back): it is
/// kept for debugging only and never checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// Whether the device still owns the entry (not completed).
    pub hw_owned: bool,
    /// The whole `status_own` byte (for [`super::status::decode`]).
    pub status_own: u8,
    /// First 16 output bytes.
    pub out: [u8; INLINE_LEN],
    /// Token in the entry (not checked, see above).
    pub token: u8,
}

/// Reads the completion fields of an entry copied out of the queue.
pub fn completion(entry: &[u8; ENTRY_SIZE]) -> Completion {
    match CmdLayout::read_from_bytes(&entry[..]) {
        Ok(l) => Completion {
            hw_owned: l.status_own & OWN_HW != 0,
            status_own: l.status_own,
            out: l.out,
            token: l.token,
        },
        // Cannot happen: the sizes are equal (checked in ifc).
        Err(_) => Completion {
            hw_owned: true,
            status_own: OWN_HW,
            out: [0; INLINE_LEN],
            token: 0,
        },
    }
}

/// Doorbell value for `slot` (`1 << slot`); `None` beyond 32 slots.
pub fn doorbell(slot: u8) -> Option<u32> {
    if usize::from(slot) < MAX_SLOTS {
        1u32.checked_shl(u32::from(slot))
    } else {
        None
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_cmd_entry))]
mod tests {
    use super::*;
    use crate::ifc::cmd_layout::entry_off;

    #[test]
    fn build_fills_every_field_and_signs() {
        let mut inl = [0u8; 16];
        inl[..2].copy_from_slice(&0x0108u16.to_be_bytes());
        let i = ChainHead {
            ptr: 0x1234_5678_9abc_d400,
            nblocks: 2,
            len: 16 + 800,
        };
        let o = ChainHead {
            ptr: 0x0000_0001_0000_0800,
            nblocks: 1,
            len: 24,
        };
        let e = build(Token::new(0x3c).unwrap(), &inl, &i, &o);
        assert_eq!(e[entry_off::TYPE], 7);
        assert_eq!(&e[1..4], &[0, 0, 0]);
        assert_eq!(
            &e[entry_off::INLEN..entry_off::INLEN + 4],
            &816u32.to_be_bytes()
        );
        assert_eq!(
            &e[entry_off::IN_PTR..entry_off::IN_PTR + 8],
            &i.ptr.to_be_bytes()
        );
        assert_eq!(&e[entry_off::IN..entry_off::IN + 16], &inl);
        assert_eq!(&e[entry_off::OUT..entry_off::OUT + 16], &[0u8; 16]);
        assert_eq!(
            &e[entry_off::OUT_PTR..entry_off::OUT_PTR + 8],
            &o.ptr.to_be_bytes()
        );
        assert_eq!(
            &e[entry_off::OUTLEN..entry_off::OUTLEN + 4],
            &24u32.to_be_bytes()
        );
        assert_eq!(e[entry_off::TOKEN], 0x3c);
        assert_eq!(e[0x3e], 0);
        assert_eq!(e[entry_off::STATUS_OWN], 1);
        assert!(signature::entry_signature_ok(&e));
    }

    #[test]
    fn completion_fields() {
        let h = ChainHead {
            ptr: 0,
            nblocks: 0,
            len: 16,
        };
        let mut e = build(Token::new(9).unwrap(), &[0; 16], &h, &h);
        let c = completion(&e);
        assert!(c.hw_owned);
        assert_eq!(c.token, 9);
        // device completes with delivery status 0x2 and status byte 0x3
        e[entry_off::OUT] = 3;
        e[entry_off::STATUS_OWN] = 0x2 << 1;
        let c = completion(&e);
        assert!(!c.hw_owned);
        assert_eq!(c.status_own, 4);
        assert_eq!(c.out[0], 3);
    }

    #[test]
    fn doorbells() {
        assert_eq!(doorbell(0), Some(1));
        assert_eq!(doorbell(31), Some(0x8000_0000));
        assert_eq!(doorbell(32), None);
        assert_eq!(doorbell(255), None);
    }
}
