// SPDX-License-Identifier: GPL-2.0

//! UAR geometry: which bytes of BAR 0 a UAR index names, and which system page maps
//! it, under the capabilities `uar_4k` and `log_uar_page_sz` (`cmd_hca_cap`).
//!
//! The PRM: without `uar_4k` a UAR page is `4 KiB << log_uar_page_sz` and the UAR
//! index counts such pages from the start of BAR 0; with `uar_4k` a UAR is 4 KiB and
//! the index counts 4 KiB pages, `num_of_uars_per_page` of them to a system page of
//! `4 KiB << log_uar_page_sz`. The doorbell and blue-flame registers sit at the same
//! offsets inside a UAR either way. The driver chooses as upstream's `handle_hca_cap`
//! (`main.c`) does ([`choose`]): `uar_4k` when the device offers it and pages are
//! larger than 4 KiB, `log_uar_page_sz` = `PAGE_SHIFT - 12`; upstream's `uar2pfn`
//! (`uar.c`) and `uar_index2pfn` (`mlx5_ib` `main.c`) then map a UAR by the system page
//! that holds it. [`UarGeom::new`] checks that the device took that choice, so that a
//! system page mapped for one ALLOC_UAR never covers a UAR of anyone else (the core's
//! own, another context's): one ALLOC_UAR owns a whole system page.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::cmd::commands::{gen_cap, GeneralCaps};

/// log2 of the device's 4 KiB page (`MLX5_ADAPTER_PAGE_SHIFT`).
pub const ADAPTER_PAGE_SHIFT: u32 = 12;

/// The UAR capabilities the driver writes with SET_HCA_CAP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UarChoice {
    /// `uar_4k`.
    pub uar_4k: bool,
    /// `log_uar_page_sz`.
    pub log_uar_page_sz: u16,
}

/// Why the device's UAR geometry cannot be used with this kernel's pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeomError {
    /// Host pages below 4 KiB or beyond what a `u64` offset holds.
    PageShift(u32),
    /// The device's system page (`4 KiB << log_uar_page_sz`) is not the host's page:
    /// a mapping of one UAR would cover others, or miss its own.
    PageSize {
        /// `log_uar_page_sz` the device reports.
        log_uar_page_sz: u16,
    },
    /// With `uar_4k`, `num_of_uars_per_page` is not the number of 4 KiB UARs in a
    /// system page.
    UarsPerPage(u32),
}

/// `handle_hca_cap`'s UAR choice for host pages of `1 << page_shift` bytes when the
/// device's maximum `uar_4k` is `max_uar_4k`. `None` for pages below 4 KiB.
pub fn choose(page_shift: u32, max_uar_4k: bool) -> Option<UarChoice> {
    let log = page_shift.checked_sub(ADAPTER_PAGE_SHIFT)?;
    Some(UarChoice {
        uar_4k: max_uar_4k && page_shift > ADAPTER_PAGE_SHIFT,
        log_uar_page_sz: u16::try_from(log).ok()?,
    })
}

/// The UAR geometry of a device whose current caps were checked against the host's
/// page size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UarGeom {
    uar_4k: bool,
    /// log2 of the host page size (= 12 + `log_uar_page_sz`).
    page_shift: u32,
}

impl UarGeom {
    /// The geometry of current caps `uar_4k`, `log_uar_page_sz` and
    /// `num_of_uars_per_page`, on a host with pages of `1 << page_shift` bytes.
    ///
    /// # Errors
    ///
    /// [`GeomError`] when a system page would not hold exactly the UARs of one
    /// ALLOC_UAR (the device ignored the driver's choice, or reports an inconsistent
    /// count).
    pub fn new(
        uar_4k: bool,
        log_uar_page_sz: u16,
        num_of_uars_per_page: u32,
        page_shift: u32,
    ) -> Result<Self, GeomError> {
        if !(ADAPTER_PAGE_SHIFT..=30).contains(&page_shift) {
            return Err(GeomError::PageShift(page_shift));
        }
        if u32::from(log_uar_page_sz) + ADAPTER_PAGE_SHIFT != page_shift {
            return Err(GeomError::PageSize { log_uar_page_sz });
        }
        let per_page = 1u32 << (page_shift - ADAPTER_PAGE_SHIFT);
        if uar_4k && num_of_uars_per_page != per_page {
            return Err(GeomError::UarsPerPage(num_of_uars_per_page));
        }
        Ok(Self { uar_4k, page_shift })
    }

    /// [`Self::new`] of the current general caps `caps`.
    ///
    /// # Errors
    ///
    /// As [`Self::new`].
    pub fn from_caps(caps: &GeneralCaps, page_shift: u32) -> Result<Self, GeomError> {
        Self::new(
            caps.get(gen_cap::UAR_4K),
            caps.get(gen_cap::LOG_UAR_PAGE_SZ),
            caps.get(gen_cap::NUM_OF_UARS_PER_PAGE),
            page_shift,
        )
    }

    /// log2 of the host page size.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_INFINIBAND)),
        expect(dead_code, reason = "used by the InfiniBand provider only")
    )]
    pub fn page_shift(&self) -> u32 {
        self.page_shift
    }

    /// log2 of the bytes one UAR index spans in BAR 0.
    fn uar_shift(&self) -> u32 {
        if self.uar_4k {
            ADAPTER_PAGE_SHIFT
        } else {
            self.page_shift
        }
    }

    /// Byte offset in BAR 0 of UAR `uar` (its doorbells are at fixed offsets from
    /// there).
    pub fn uar_offset(&self, uar: u32) -> u64 {
        // uar < 2^32 and uar_shift <= 30: the product fits in 62 bits.
        u64::from(uar) << self.uar_shift()
    }

    /// Byte offset in BAR 0 of the system page holding UAR `uar` (what an mmap of it
    /// maps: upstream `uar_index2pfn` less the BAR's own page number).
    #[cfg_attr(
        all(
            CONFIG_RUST,
            not(any(CONFIG_MLX5_RS_INFINIBAND, CONFIG_MLX5_RS_KUNIT_TEST))
        ),
        expect(dead_code, reason = "used by the InfiniBand provider only")
    )]
    pub fn sys_page_offset(&self, uar: u32) -> u64 {
        self.uar_offset(uar) & !((1u64 << self.page_shift) - 1)
    }

    /// UARs one ALLOC_UAR grants: a whole system page.
    pub fn uars_per_alloc(&self) -> u32 {
        if self.uar_4k {
            1 << (self.page_shift - ADAPTER_PAGE_SHIFT)
        } else {
            1
        }
    }

    /// Whether UAR `uar` is one of those granted by the ALLOC_UAR that returned
    /// `base` (its system page).
    #[cfg_attr(
        all(
            CONFIG_RUST,
            not(any(CONFIG_MLX5_RS_INFINIBAND, CONFIG_MLX5_RS_KUNIT_TEST))
        ),
        expect(dead_code, reason = "used by the InfiniBand provider only")
    )]
    pub fn in_alloc(&self, base: u32, uar: u32) -> bool {
        uar >= base && uar - base < self.uars_per_alloc()
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_eq_uar))]
mod tests {
    use super::*;

    /// The geometry of a device that took `choose(page_shift, max_uar_4k)`.
    fn geom(page_shift: u32, max_uar_4k: bool) -> UarGeom {
        let c = choose(page_shift, max_uar_4k).unwrap();
        let per = if c.uar_4k { 1 << c.log_uar_page_sz } else { 1 };
        UarGeom::new(c.uar_4k, c.log_uar_page_sz, per, page_shift).unwrap()
    }

    #[test]
    fn choice_follows_handle_hca_cap() {
        assert_eq!(
            choose(12, true),
            Some(UarChoice {
                uar_4k: false,
                log_uar_page_sz: 0
            })
        );
        assert_eq!(
            choose(14, true),
            Some(UarChoice {
                uar_4k: true,
                log_uar_page_sz: 2
            })
        );
        assert_eq!(
            choose(16, true),
            Some(UarChoice {
                uar_4k: true,
                log_uar_page_sz: 4
            })
        );
        assert_eq!(
            choose(16, false),
            Some(UarChoice {
                uar_4k: false,
                log_uar_page_sz: 4
            })
        );
        assert_eq!(choose(11, true), None);
    }

    #[test]
    fn offsets_at_4k_16k_and_64k_pages() {
        // 4 KiB pages: one UAR per page whatever uar_4k says.
        for g in [geom(12, true), geom(12, false)] {
            assert_eq!(g.uar_offset(9), 9 << 12);
            assert_eq!(g.sys_page_offset(9), 9 << 12);
            assert_eq!(g.uars_per_alloc(), 1);
        }
        // 16 KiB pages, 4 KiB UARs: UAR 9 is the second UAR of the third page.
        let g = geom(14, true);
        assert_eq!(g.uar_offset(9), 9 << 12);
        assert_eq!(g.sys_page_offset(9), 2 << 14);
        assert_eq!(g.uars_per_alloc(), 4);
        // 16 KiB pages, UARs of 16 KiB: the index counts pages.
        let g = geom(14, false);
        assert_eq!(g.uar_offset(9), 9 << 14);
        assert_eq!(g.sys_page_offset(9), 9 << 14);
        assert_eq!(g.uars_per_alloc(), 1);
        // 64 KiB pages, 4 KiB UARs: 16 a page; UAR 17 rings in the second page.
        let g = geom(16, true);
        assert_eq!(g.uar_offset(17), 17 << 12);
        assert_eq!(g.sys_page_offset(17), 1 << 16);
        assert_eq!(g.uars_per_alloc(), 16);
        assert!(g.in_alloc(16, 31) && !g.in_alloc(16, 32) && !g.in_alloc(16, 15));
        // 64 KiB pages, UARs of 64 KiB.
        let g = geom(16, false);
        assert_eq!(g.uar_offset(3), 3 << 16);
        assert_eq!(g.sys_page_offset(3), 3 << 16);
        assert!(g.in_alloc(3, 3) && !g.in_alloc(3, 4));
    }

    #[test]
    fn a_device_that_kept_4k_uar_pages_is_refused_on_large_pages() {
        // What the driver left before: log_uar_page_sz 0, uar_4k clear. A 64 KiB
        // mapping of one UAR would cover 15 others.
        assert_eq!(
            UarGeom::new(false, 0, 1, 16),
            Err(GeomError::PageSize { log_uar_page_sz: 0 })
        );
        assert_eq!(
            UarGeom::new(true, 0, 1, 14),
            Err(GeomError::PageSize { log_uar_page_sz: 0 })
        );
        // uar_4k with a count that is not the page's.
        assert_eq!(UarGeom::new(true, 4, 1, 16), Err(GeomError::UarsPerPage(1)));
        assert_eq!(UarGeom::new(false, 0, 1, 11), Err(GeomError::PageShift(11)));
        assert!(UarGeom::new(false, 0, 1, 12).is_ok());
        // Without uar_4k the count is not used.
        assert!(UarGeom::new(false, 4, 7, 16).is_ok());
    }
}
