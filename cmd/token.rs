// SPDX-License-Identifier: GPL-2.0

//! Command tokens.
//!
//! Every command carries an 8-bit token, written into the command entry and
//! into every input and output mailbox block of its chains; the device
//! rejects a mismatch with delivery status "token error". One counter per
//! device, pre-incremented, never 0: the sequence is 1, 2, …, 255, 1, …
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use core::num::NonZeroU8;

/// A command token (never 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token(NonZeroU8);

impl Token {
    /// Token from a raw byte; `None` for 0.
    pub fn new(raw: u8) -> Option<Self> {
        NonZeroU8::new(raw).map(Token)
    }

    /// The raw byte written to the entry and the blocks.
    pub fn get(self) -> u8 {
        self.0.get()
    }
}

/// Per-device token generator. Not synchronised: the kernel shell calls
/// [`TokenGen::next_token`] under the lock that protects slot allocation.
#[derive(Debug, Default)]
pub struct TokenGen {
    last: u8,
}

impl TokenGen {
    /// A generator whose first token is 1.
    pub const fn new() -> Self {
        Self { last: 0 }
    }

    /// The next token: pre-increment with wrap, skipping 0.
    pub fn next_token(&mut self) -> Token {
        let mut v = self.last.wrapping_add(1);
        if v == 0 {
            v = 1;
        }
        self.last = v;
        // `v` is never 0 here; fall back to 1 rather than panicking.
        Token(NonZeroU8::new(v).unwrap_or(NonZeroU8::MIN))
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_cmd_token))]
mod tests {
    use super::*;

    #[test]
    fn starts_at_one_and_increments() {
        let mut g = TokenGen::new();
        assert_eq!(g.next_token().get(), 1);
        assert_eq!(g.next_token().get(), 2);
        assert_eq!(g.next_token().get(), 3);
    }

    #[test]
    fn wraps_skipping_zero() {
        let mut g = TokenGen::new();
        let mut seen = [0u32; 256];
        for _ in 0..255 * 4 {
            seen[g.next_token().get() as usize] += 1;
        }
        assert_eq!(seen[0], 0);
        assert!(seen[1..].iter().all(|&c| c == 4));
        // after 255 tokens the sequence restarts at 1
        let mut g = TokenGen::new();
        for _ in 0..254 {
            g.next_token();
        }
        assert_eq!(g.next_token().get(), 255);
        assert_eq!(g.next_token().get(), 1);
    }

    #[test]
    fn raw_zero_is_not_a_token() {
        assert!(Token::new(0).is_none());
        assert_eq!(Token::new(7).map(Token::get), Some(7));
    }
}
