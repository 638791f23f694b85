// SPDX-License-Identifier: GPL-2.0

//! Which size of host memory block to allocate next for firmware pages.
//!
//! Firmware pages are carved from blocks of 2 MiB (one high-order allocation) when
//! the page allocator has them, so that a supply of 1 GiB costs 512 allocations and
//! DMA mappings instead of 262,144, and a teardown 512 frees. A block is never larger
//! than what is still to be given (rounded up to a host page), so a small request
//! does not hold memory the device did not ask for. When a size cannot be allocated
//! (fragmented memory), the next smaller one is tried, down to a single host page;
//! a size that failed is not tried again for the rest of that supply.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use super::ledger::{FW_PAGE_SIZE, MAX_BLOCK_SIZE};

/// Block sizes tried, largest first (orders 9, 6 and 3 of 4 KiB pages); a single host
/// page comes after them.
const LADDER: [u64; 3] = [MAX_BLOCK_SIZE, 256 << 10, 32 << 10];

/// The block sizes still allowed during one supply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSizes {
    host_page: u64,
    /// Largest size allowed: a power of two, `host_page ..= MAX_BLOCK_SIZE`.
    cap: u64,
}

impl BlockSizes {
    /// Every size allowed, for host pages of `host_page` bytes (a power of two from
    /// 4 KiB up to [`MAX_BLOCK_SIZE`], as the ledger checks).
    pub fn new(host_page: u64) -> Self {
        Self {
            host_page,
            cap: MAX_BLOCK_SIZE.max(host_page),
        }
    }

    /// The size of the next block when `need` firmware pages are still to be given:
    /// the largest allowed size on the ladder not above `need` pages, at least one
    /// host page.
    pub fn next(&self, need: u64) -> u64 {
        let want = need.saturating_mul(FW_PAGE_SIZE);
        LADDER
            .iter()
            .copied()
            .find(|&s| s <= self.cap && s <= want && s > self.host_page)
            .unwrap_or(self.host_page)
    }

    /// A block of `size` bytes could not be allocated: the sizes from `size` up are
    /// not tried again. Returns false when `size` was a single host page (nothing
    /// smaller to fall back to).
    pub fn failed(&mut self, size: u64) -> bool {
        if size <= self.host_page {
            return false;
        }
        self.cap = self.cap.min(size / 2).max(self.host_page);
        true
    }

    /// Whether every size above a host page has failed.
    pub fn host_pages_only(&self) -> bool {
        self.next(u64::MAX) == self.host_page
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_pagealloc_block_size))]
mod tests {
    use super::*;

    const K: u64 = 1024;

    #[test]
    fn largest_block_that_the_need_fills() {
        let b = BlockSizes::new(4 * K);
        assert_eq!(b.next(262_144), 2048 * K);
        assert_eq!(b.next(512), 2048 * K);
        assert_eq!(b.next(511), 256 * K);
        assert_eq!(b.next(64), 256 * K);
        assert_eq!(b.next(63), 32 * K);
        assert_eq!(b.next(8), 32 * K);
        assert_eq!(b.next(7), 4 * K);
        assert_eq!(b.next(1), 4 * K);
        assert_eq!(b.next(0), 4 * K);
        assert_eq!(b.next(u64::MAX), 2048 * K);
    }

    #[test]
    fn a_supply_of_600_pages_is_carved_without_waste() {
        let b = BlockSizes::new(4 * K);
        let mut need = 600u64;
        let mut sizes = [0u64; 8];
        let mut n = 0;
        while need > 0 {
            let s = b.next(need);
            need -= (s / FW_PAGE_SIZE).min(need);
            sizes[n] = s;
            n += 1;
        }
        assert_eq!(&sizes[..n], &[2048 * K, 256 * K, 32 * K, 32 * K, 32 * K]);
    }

    #[test]
    fn failures_step_down_to_a_host_page() {
        let mut b = BlockSizes::new(4 * K);
        assert!(b.failed(2048 * K));
        assert_eq!(b.next(10_000), 256 * K);
        assert!(b.failed(256 * K));
        assert_eq!(b.next(10_000), 32 * K);
        assert!(!b.host_pages_only());
        assert!(b.failed(32 * K));
        assert!(b.host_pages_only());
        assert_eq!(b.next(10_000), 4 * K);
        assert!(!b.failed(4 * K));
        assert_eq!(b.next(10_000), 4 * K);
    }

    #[test]
    fn a_failed_small_size_also_rules_out_larger_ones() {
        let mut b = BlockSizes::new(4 * K);
        // A 32 KiB block for a short need failed: later, longer needs do not try
        // 2 MiB or 256 KiB in the same supply.
        assert!(b.failed(32 * K));
        assert_eq!(b.next(10_000), 4 * K);
    }

    #[test]
    fn large_host_pages() {
        // 64 KiB host pages: 256 KiB and 2 MiB blocks, else one host page.
        let mut b = BlockSizes::new(64 * K);
        assert_eq!(b.next(10_000), 2048 * K);
        assert_eq!(b.next(100), 256 * K);
        assert_eq!(b.next(63), 64 * K);
        assert_eq!(b.next(1), 64 * K);
        assert!(b.failed(2048 * K));
        assert!(b.failed(256 * K));
        assert!(b.host_pages_only());
        assert!(!b.failed(64 * K));
        // 2 MiB host pages: one size only.
        let mut b = BlockSizes::new(2048 * K);
        assert!(b.host_pages_only());
        assert_eq!(b.next(1), 2048 * K);
        assert!(!b.failed(2048 * K));
    }
}
