//! UAR pages in BAR0 as the current caps `uar_4k` and `log_uar_page_sz` lay them out.
//!
//! Rules and sources: emu/README.md, "UARs". Without `uar_4k` a UAR is a page of
//! `4 KiB << log_uar_page_sz` and its index counts such pages from the start of BAR0;
//! with `uar_4k` a UAR is 4 KiB, its index counts 4 KiB pages, and one ALLOC_UAR grants
//! a whole system page (`4 KiB << log_uar_page_sz`, `num_of_uars_per_page` UARs,
//! aligned), returning the index of its first UAR. Doorbell and BlueFlame registers
//! are at the same offsets inside a UAR either way.

use crate::pci_config::BAR0_SIZE;

/// Bytes at the start of BAR0 that hold no UAR: the initialization segment and the
/// MSI-X table and PBA (first 8 × 4 KiB).
pub const RESERVED_BYTES: u64 = 8 << 12;

/// Largest `log_uar_page_sz` SET_HCA_CAP accepts (1 MiB pages: still 31 UAR pages in
/// the 32 MiB BAR). Our limit; the PRM sets none.
pub const MAX_LOG_UAR_PAGE_SZ: u32 = 8;

/// The UAR layout of the current caps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UarLayout {
    /// Cap `uar_4k`.
    pub uar_4k: bool,
    /// Cap `log_uar_page_sz` (≤ [`MAX_LOG_UAR_PAGE_SZ`]).
    pub log_uar_page_sz: u32,
}

impl UarLayout {
    /// log2 of the bytes one UAR index spans.
    pub fn uar_shift(&self) -> u32 {
        12 + if self.uar_4k { 0 } else { self.log_uar_page_sz }
    }

    /// UARs in one system page: cap `num_of_uars_per_page` with `uar_4k`, else 1.
    pub fn per_alloc(&self) -> u32 {
        if self.uar_4k {
            1 << self.log_uar_page_sz
        } else {
            1
        }
    }

    /// The UAR index and the offset inside it of BAR0 byte `off`; `None` below the
    /// first UAR (initialization segment, MSI-X) or past the BAR.
    pub fn decode(&self, off: u64) -> Option<(u32, usize)> {
        if !(RESERVED_BYTES..BAR0_SIZE).contains(&off) {
            return None;
        }
        let s = self.uar_shift();
        Some(((off >> s) as u32, (off & ((1 << s) - 1)) as usize))
    }

    /// Byte offset of UAR `idx` in BAR0.
    pub fn offset(&self, idx: u32) -> u64 {
        u64::from(idx) << self.uar_shift()
    }

    /// The indices ALLOC_UAR may return, in order: aligned to a system page, the whole
    /// page past the reserved bytes and inside the BAR.
    pub fn alloc_bases(&self) -> impl Iterator<Item = u32> {
        let per = self.per_alloc();
        let unit = 1u64 << self.uar_shift();
        let first = RESERVED_BYTES.div_ceil(unit * u64::from(per)) as u32 * per;
        let end = (BAR0_SIZE / unit) as u32;
        (first..end)
            .step_by(per as usize)
            .filter(move |b| b + per <= end)
    }

    /// Whether UAR `idx` belongs to the allocation that returned `base`.
    pub fn in_alloc(&self, base: u32, idx: u32) -> bool {
        idx >= base && idx - base < self.per_alloc()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts() {
        let l = UarLayout {
            uar_4k: false,
            log_uar_page_sz: 0,
        };
        assert_eq!(l.decode(8 * 4096 + 0x40), Some((8, 0x40)));
        assert_eq!(l.decode(0x1000), None);
        assert_eq!(l.alloc_bases().next(), Some(8));
        let l = UarLayout {
            uar_4k: true,
            log_uar_page_sz: 4,
        };
        assert_eq!(l.decode(17 * 4096 + 0x800), Some((17, 0x800)));
        // The page of UARs 0…15 holds the init segment: the first page is 16…31.
        assert_eq!(l.alloc_bases().take(2).collect::<Vec<_>>(), vec![16, 32]);
        let l = UarLayout {
            uar_4k: false,
            log_uar_page_sz: 4,
        };
        assert_eq!(l.decode((3 << 16) + 0x40), Some((3, 0x40)));
        assert_eq!(l.alloc_bases().next(), Some(1));
        assert_eq!(l.alloc_bases().last(), Some(511));
    }
}
