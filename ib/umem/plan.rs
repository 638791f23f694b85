// SPDX-License-Identifier: GPL-2.0

//! Arithmetic of pinned user memory, pure `core` code shared with the host tests:
//! the IB access bits, which page sizes a mkey or a queue may use (upstream
//! `mlx5_umem_mkc_find_best_pgsz`'s bitmap and `__mlx5_log_page_size_to_bitmap`), the
//! checks of a user range before it is pinned (`__ib_umem_get_va`'s), the number of
//! DMA blocks a range spans (`ib_umem_num_dma_blocks`), where a doorbell record sits
//! in its user page (upstream `mlx5_ib_db_map_user`) and how a long block list is
//! cut into chunks.
//!
//! The kernel shell is `crate::ffi::rdma::umem` (pinning, block iteration) and
//! [`crate::ib::umem`] (doorbell records shared per page).

use crate::errno::Errno;

/// IB access flags (`enum ib_access_flags`, `include/rdma/ib_verbs.h`; checked in
/// `ffi/rdma/ib_umem.c`).
pub mod access {
    /// IB_ACCESS_LOCAL_WRITE (the pages are pinned writable).
    pub const LOCAL_WRITE: u32 = 1 << 0;
    /// IB_ACCESS_REMOTE_WRITE.
    pub const REMOTE_WRITE: u32 = 1 << 1;
    /// IB_ACCESS_REMOTE_READ.
    pub const REMOTE_READ: u32 = 1 << 2;
    /// IB_ACCESS_REMOTE_ATOMIC.
    pub const REMOTE_ATOMIC: u32 = 1 << 3;
    /// IB_ACCESS_MW_BIND.
    pub const MW_BIND: u32 = 1 << 4;
    /// IB_ZERO_BASED.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "i11-umem, for the user verbs")
    )]
    pub const ZERO_BASED: u32 = 1 << 5;
    /// IB_ACCESS_ON_DEMAND.
    pub const ON_DEMAND: u32 = 1 << 6;
    /// IB_ACCESS_HUGETLB.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "i11-umem, for the user verbs")
    )]
    pub const HUGETLB: u32 = 1 << 7;
    /// IB_ACCESS_FLUSH_GLOBAL.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "i11-umem, for the user verbs")
    )]
    pub const FLUSH_GLOBAL: u32 = 1 << 8;
    /// IB_ACCESS_FLUSH_PERSISTENT.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "i11-umem, for the user verbs")
    )]
    pub const FLUSH_PERSISTENT: u32 = 1 << 9;
    /// IB_ACCESS_RELAXED_ORDERING (the first optional bit).
    pub const RELAXED_ORDERING: u32 = 1 << 20;
    /// IB_ACCESS_OPTIONAL: bits 20..=29, which a device may ignore.
    pub const OPTIONAL: u32 = 0x3ff0_0000;
    /// IB_ACCESS_SUPPORTED.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "i11-umem, for the user verbs")
    )]
    pub const SUPPORTED: u32 = 0x3ff | OPTIONAL;
}

/// The device's page (`MLX5_ADAPTER_PAGE_SHIFT`): no mkey or queue page below 4 KiB.
pub const ADAPTER_PAGE_SHIFT: u32 = 12;

/// Size of a doorbell record (two big-endian 32-bit words, `MLX5_IB_DBR_SIZE`).
pub const DBR_SIZE: u64 = 8;

/// `GENMASK_ULL(hi, lo)` (`lo <= hi < 64`).
const fn genmask(hi: u32, lo: u32) -> u64 {
    (u64::MAX >> (63 - hi)) & (u64::MAX << lo)
}

/// Page sizes (a bitmap of powers of two) of an MTT mkey (upstream
/// `mlx5_umem_mkc_find_best_pgsz` for MTT): from `max(log_min_mkey_entity_size, 12)`
/// to `max_mkey_log_entity_size_mtt`, which counts as 31 when 0 or when above 31
/// without cap `umr_log_entity_size_5` (both caps of `cmd_hca_cap_2`; a device that
/// does not report them gets 4 KiB … 2 GiB).
pub fn mkey_page_sizes(log_min_entity: u8, log_max_entity_mtt: u8, log_entity_size_5: bool) -> u64 {
    let mut max = u32::from(log_max_entity_mtt);
    if max == 0 || (max > 31 && !log_entity_size_5) {
        max = 31;
    }
    let max = max.min(63);
    let min = u32::from(log_min_entity).max(ADAPTER_PAGE_SHIFT);
    if min > max {
        return 0;
    }
    genmask(max, min)
}

/// Page sizes of a queue whose context has a `log_page_size` field of `field_bits`
/// bits counted from `2^pgsz_shift` (upstream `__mlx5_log_page_size_to_bitmap`:
/// never below 4 KiB, never above 2^63).
pub fn queue_page_sizes(field_bits: u32, pgsz_shift: u32) -> u64 {
    let top = if field_bits >= 7 {
        63
    } else {
        ((1u32 << field_bits) - 1 + pgsz_shift).min(63)
    };
    let low = pgsz_shift.max(ADAPTER_PAGE_SHIFT);
    if low > top {
        return 0;
    }
    genmask(top, low)
}

/// Why a user range cannot be pinned (all `EINVAL` upstream).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeError {
    /// Length 0 (no page to pin).
    Empty,
    /// `addr + len` wraps, or rounding it up to a page wraps.
    Overflow,
    /// More than 2^32 − 1 pages.
    TooManyPages,
}

impl RangeError {
    /// The errno upstream returns: `EINVAL`.
    pub const fn errno(self) -> Errno {
        Errno::EINVAL
    }
}

/// Pages of `page_size` (a power of two) that `[addr, addr + len)` touches, after
/// `__ib_umem_get_va`'s checks.
pub fn user_range_pages(addr: u64, len: u64, page_size: u64) -> Result<u64, RangeError> {
    let end = addr.checked_add(len).ok_or(RangeError::Overflow)?;
    let mask = page_size - 1;
    let end_up = end.checked_add(mask).ok_or(RangeError::Overflow)? & !mask;
    if len == 0 {
        return Err(RangeError::Empty);
    }
    let pages = (end_up - (addr & !mask)) / page_size;
    if pages > u64::from(u32::MAX) {
        return Err(RangeError::TooManyPages);
    }
    Ok(pages)
}

/// Blocks of `pgsz` (a power of two) that `[iova, iova + len)` spans
/// (`ib_umem_num_dma_blocks`); `None` when the end wraps.
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(dead_code, reason = "i11-umem, for the user verbs")
)]
pub fn num_dma_blocks(iova: u64, len: u64, pgsz: u64) -> Option<u64> {
    let mask = pgsz.checked_sub(1)?;
    let end = iova.checked_add(len)?.checked_add(mask)? & !mask;
    Some((end - (iova & !mask)) / pgsz)
}

/// Where a doorbell record of user address `virt` lies: the page to pin and the
/// offset in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DbSlot {
    /// Page-aligned user address of the page holding the record.
    pub page: u64,
    /// Offset of the record in that page.
    pub offset: u64,
}

/// The page and offset of a doorbell record at `virt`, for `page_size` (a power of
/// two): a record straddling the page end is `EINVAL` (upstream
/// `mlx5_ib_db_map_user_desc`).
pub fn db_slot(virt: u64, page_size: u64) -> Result<DbSlot, Errno> {
    let offset = virt & (page_size - 1);
    if offset > page_size - DBR_SIZE {
        return Err(Errno::EINVAL);
    }
    Ok(DbSlot {
        page: virt - offset,
        offset,
    })
}

/// Chunks of at most `chunk` entries (≥ 1) that `total` entries make.
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(dead_code, reason = "i11-umem, for the user verbs")
)]
pub fn chunks(total: u64, chunk: u64) -> u64 {
    total.div_ceil(chunk.max(1))
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_umem_calc))]
mod tests {
    use super::*;

    #[test]
    fn mkey_bitmap_follows_caps() {
        // No cap_2 values: 4 KiB … 2 GiB.
        assert_eq!(mkey_page_sizes(0, 0, false), 0xffff_f000);
        // Above 31 needs umr_log_entity_size_5.
        assert_eq!(mkey_page_sizes(0, 40, false), 0xffff_f000);
        assert_eq!(mkey_page_sizes(0, 40, true), genmask(40, 12));
        // A minimum above 4 KiB.
        assert_eq!(mkey_page_sizes(21, 30, false), genmask(30, 21));
        assert_eq!(mkey_page_sizes(31, 20, false), 0);
    }

    #[test]
    fn queue_bitmap_as_upstream() {
        // 5-bit log_page_size counted from 4 KiB: 4 KiB … 2^43.
        assert_eq!(queue_page_sizes(5, 12), genmask(43, 12));
        // 6 bits from 2^0: never below 4 KiB, top 63.
        assert_eq!(queue_page_sizes(6, 0), genmask(63, 12));
        assert_eq!(queue_page_sizes(8, 12), genmask(63, 12));
        assert_eq!(queue_page_sizes(1, 0), 0);
    }

    #[test]
    fn ranges_checked_like_umem_get() {
        assert_eq!(user_range_pages(0x1000, 0x1000, 4096), Ok(1));
        assert_eq!(user_range_pages(0x1fff, 2, 4096), Ok(2));
        assert_eq!(user_range_pages(0x1000, 0, 4096), Err(RangeError::Empty));
        assert_eq!(
            user_range_pages(u64::MAX - 10, 11, 4096),
            Err(RangeError::Overflow)
        );
        assert_eq!(
            user_range_pages(u64::MAX - 4095, 4096, 4096),
            Err(RangeError::Overflow)
        );
        assert_eq!(
            user_range_pages(u64::MAX - 100, 200, 4096),
            Err(RangeError::Overflow)
        );
        assert_eq!(
            user_range_pages(0, 1 << 44, 4096),
            Err(RangeError::TooManyPages)
        );
        assert_eq!(
            user_range_pages(0, (1 << 44) - 4096, 4096),
            Ok(u64::from(u32::MAX))
        );
        assert_eq!(RangeError::Empty.errno(), Errno::EINVAL);
    }

    #[test]
    fn blocks_from_iova() {
        assert_eq!(num_dma_blocks(0, 4096, 4096), Some(1));
        assert_eq!(num_dma_blocks(0x800, 4096, 4096), Some(2));
        assert_eq!(num_dma_blocks(0x20_0000, 1 << 30, 1 << 21), Some(512));
        assert_eq!(num_dma_blocks(0x20_1000, 1 << 30, 1 << 21), Some(513));
        assert_eq!(num_dma_blocks(u64::MAX - 10, 100, 4096), None);
        assert_eq!(num_dma_blocks(0, 1, 0), None);
    }

    #[test]
    fn doorbell_slot() {
        assert_eq!(
            db_slot(0x7f00_1238, 4096),
            Ok(DbSlot {
                page: 0x7f00_1000,
                offset: 0x238
            })
        );
        assert_eq!(db_slot(0x1ff8, 4096).map(|s| s.offset), Ok(0xff8));
        // Straddles the page end.
        assert_eq!(db_slot(0x1ffc, 4096), Err(Errno::EINVAL));
        assert_eq!(db_slot(0x1fff, 4096), Err(Errno::EINVAL));
    }

    #[test]
    fn chunking() {
        assert_eq!(chunks(0, 64), 0);
        assert_eq!(chunks(1, 64), 1);
        assert_eq!(chunks(64, 64), 1);
        assert_eq!(chunks(65, 64), 2);
        assert_eq!(chunks(5, 0), 5);
    }
}
