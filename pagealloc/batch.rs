// SPDX-License-Identifier: GPL-2.0

//! Sizing of MANAGE_PAGES commands and decoding of page requests.
//!
//! A MANAGE_PAGES input (give) or output (take) is a 16-byte header — the
//! whole inline area of the command entry — followed by `pas[]`, one
//! big-endian 64-bit address per 4 KiB page, so every `pas` entry lives in
//! mailbox blocks: 64 entries per 512-byte block. Gives are cut into
//! batches that fill whole chains of `max_blocks` blocks.
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use crate::cmd::mailbox::{blocks_needed, BLOCK_DATA_LEN, INLINE_LEN};
use crate::ifc::pages::{MAX_RECLAIM_NPAGES, PAS_OFFSET};

/// Bytes of one `pas` entry.
pub const PAS_ENTRY_LEN: usize = 8;
/// `pas` entries per mailbox block.
pub const PAS_PER_BLOCK: usize = BLOCK_DATA_LEN / PAS_ENTRY_LEN;

const _: () = assert!(PAS_OFFSET == INLINE_LEN);

/// Most `pas` entries that fit in a chain of `blocks` blocks.
pub const fn pas_capacity(blocks: usize) -> usize {
    blocks.saturating_mul(PAS_PER_BLOCK)
}

/// Message length (input for a give, output for a take) carrying `n`
/// addresses; `None` on overflow or beyond the 32-bit length field.
pub fn msg_len(n: usize) -> Option<usize> {
    let len = n.checked_mul(PAS_ENTRY_LEN)?.checked_add(PAS_OFFSET)?;
    u32::try_from(len).ok().map(|_| len)
}

/// Mailbox blocks a message with `n` addresses needs.
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(dead_code, reason = "host-tested, not used by the driver yet")
)]
pub fn blocks_for_pages(n: usize) -> Option<usize> {
    msg_len(n).map(blocks_needed)
}

/// Message offset of `pas[i]` (for [`crate::cmd::mailbox::write_at`] /
/// [`crate::cmd::mailbox::read_at`]).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(dead_code, reason = "host-tested, not used by the driver yet")
)]
pub fn pas_offset(i: usize) -> Option<usize> {
    i.checked_mul(PAS_ENTRY_LEN)?.checked_add(PAS_OFFSET)
}

/// Batches of a give of `requested` pages, each at most a full chain of
/// `max_blocks` blocks: all batches but the last fill their chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GiveBatches {
    remaining: u32,
    per_cmd: u32,
}

impl GiveBatches {
    /// Batches for `requested` pages, `max_blocks` blocks per command
    /// (at least one block is used).
    pub fn new(requested: u32, max_blocks: usize) -> Self {
        let cap = pas_capacity(max_blocks.max(1));
        Self {
            remaining: requested,
            per_cmd: u32::try_from(cap).unwrap_or(u32::MAX),
        }
    }

    /// Pages per full batch.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn per_cmd(&self) -> u32 {
        self.per_cmd
    }

    /// Pages not yet handed out in a batch.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn remaining(&self) -> u32 {
        self.remaining
    }
}

impl Iterator for GiveBatches {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.remaining == 0 {
            return None;
        }
        let n = self.remaining.min(self.per_cmd);
        self.remaining -= n;
        Some(n)
    }
}

/// Share of the memory available to the system that a single supply may take, as a
/// divisor: a request needing more than `available - available / SUPPLY_RESERVE_DIV`
/// host pages is refused up front instead of driving the host into reclaim.
pub const SUPPLY_RESERVE_DIV: u64 = 8;

/// Whether a supply of `fw_pages` firmware pages, carved `chunks` to a host page
/// (`PAGE_SIZE / 4 KiB`), fits in `available` host pages while leaving the system
/// `available / SUPPLY_RESERVE_DIV` of them. The allocation itself may still fail
/// (the estimate is only an estimate); that is handled as an allocation failure too.
pub fn supply_fits(fw_pages: u64, chunks: u32, available: u64) -> bool {
    let chunks = u64::from(chunks.max(1));
    let host_pages = fw_pages.div_ceil(chunks);
    host_pages <= available - available / SUPPLY_RESERVE_DIV
}

/// What a page-request event (or QUERY_PAGES) asks of the driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageRequest {
    /// Nothing to do.
    None,
    /// Give this many pages.
    Give(u32),
    /// Take back this many pages (clamped to the per-request maximum).
    Take(u32),
    /// Firmware already dropped every page of the function: forget them
    /// without a command.
    ReleaseAll,
}

/// `ec_function` bit: release all pages of the function.
pub const RELEASE_ALL_BIT: u16 = 0x4000;

impl PageRequest {
    /// Decodes the signed `num_pages` of a request: positive gives,
    /// negative takes (clamped to [`MAX_RECLAIM_NPAGES`]).
    pub fn from_num_pages(num_pages: i32) -> Self {
        match num_pages {
            0 => Self::None,
            n if n > 0 => Self::Give(n.unsigned_abs()),
            n => Self::Take(n.unsigned_abs().min(MAX_RECLAIM_NPAGES)),
        }
    }

    /// Decodes a page-request event's `ec_function` and `num_pages` fields.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn from_event(ec_function: u16, num_pages: i32) -> Self {
        if ec_function & RELEASE_ALL_BIT != 0 {
            Self::ReleaseAll
        } else {
            Self::from_num_pages(num_pages)
        }
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_pagealloc_batch))]
mod tests {
    use super::*;
    use crate::testing::ArrayVec;

    #[test]
    fn capacity_and_lengths() {
        assert_eq!(PAS_PER_BLOCK, 64);
        assert_eq!(pas_capacity(1), 64);
        assert_eq!(pas_capacity(12), 768);
        assert_eq!(msg_len(0), Some(16));
        assert_eq!(msg_len(64), Some(16 + 512));
        assert_eq!(blocks_for_pages(0), Some(0));
        assert_eq!(blocks_for_pages(1), Some(1));
        assert_eq!(blocks_for_pages(64), Some(1));
        assert_eq!(blocks_for_pages(65), Some(2));
        assert_eq!(blocks_for_pages(768), Some(12));
        assert_eq!(msg_len(usize::MAX), None);
        assert_eq!(msg_len(1 << 29), None); // 4 GiB + 16 > u32
        assert_eq!(pas_offset(0), Some(16));
        assert_eq!(pas_offset(64), Some(16 + 512));
    }

    #[test]
    fn every_capacity_fills_whole_chains() {
        for k in 1..64 {
            let n = pas_capacity(k);
            assert_eq!(blocks_for_pages(n), Some(k));
            assert_eq!(blocks_for_pages(n + 1), Some(k + 1));
            // exactly full: last pas entry ends at the chain's last byte
            assert_eq!(msg_len(n), Some(crate::cmd::mailbox::chain_capacity(k)));
        }
    }

    #[test]
    fn give_batches() {
        let b: ArrayVec<u32, 8> = GiveBatches::new(1000, 4).collect();
        assert_eq!(b, [256, 256, 256, 232]);
        let b: ArrayVec<u32, 8> = GiveBatches::new(256, 4).collect();
        assert_eq!(b, [256]);
        assert_eq!(GiveBatches::new(0, 4).count(), 0);
        // 0 blocks is treated as 1
        assert_eq!(GiveBatches::new(65, 0).collect::<ArrayVec<_, 8>>(), [64, 1]);
        let total: u32 = GiveBatches::new(262_144, 8).sum();
        assert_eq!(total, 262_144);
    }

    #[test]
    fn supply_fits_leaves_a_reserve() {
        // 2 GiB guest with ~1.8 GiB available: 4 KiB host pages.
        let avail = 460_000u64;
        assert!(supply_fits(1088, 1, avail));
        assert!(supply_fits(avail - avail / 8, 1, avail));
        assert!(!supply_fits(avail - avail / 8 + 1, 1, avail));
        // More than the RAM of the machine.
        assert!(!supply_fits(1_048_576, 1, avail));
        // 64 KiB host pages carry 16 firmware pages each; partial host pages round up.
        assert!(supply_fits(16 * 7, 16, 8));
        assert!(!supply_fits(16 * 7 + 1, 16, 8));
        // chunks 0 is treated as 1; nothing available fits only an empty supply.
        assert!(supply_fits(3, 0, 4));
        assert!(supply_fits(0, 1, 0));
        assert!(!supply_fits(1, 1, 0));
    }

    #[test]
    fn requests() {
        assert_eq!(PageRequest::from_num_pages(0), PageRequest::None);
        assert_eq!(PageRequest::from_num_pages(5), PageRequest::Give(5));
        assert_eq!(PageRequest::from_num_pages(-7), PageRequest::Take(7));
        // A take is capped per MANAGE_PAGES at upstream's MAX_RECLAIM_NPAGES (50,000).
        assert_eq!(
            PageRequest::from_num_pages(-50_000),
            PageRequest::Take(50_000)
        );
        assert_eq!(
            PageRequest::from_num_pages(-50_001),
            PageRequest::Take(50_000)
        );
        assert_eq!(
            PageRequest::from_num_pages(-1_000_000),
            PageRequest::Take(50_000)
        );
        assert_eq!(
            PageRequest::from_num_pages(i32::MIN),
            PageRequest::Take(50_000)
        );
        assert_eq!(
            PageRequest::from_num_pages(i32::MAX),
            PageRequest::Give(i32::MAX as u32)
        );
        assert_eq!(PageRequest::from_event(0x4000, 12), PageRequest::ReleaseAll);
        assert_eq!(PageRequest::from_event(0x8000, 12), PageRequest::Give(12));
    }
}
