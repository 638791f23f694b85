// SPDX-License-Identifier: GPL-2.0

//! Blue-flame registers (bfregs) and UAR pages of a user context, numbered as upstream
//! `mlx5_ib` numbers them (`calc_total_bfregs` in `main.c`, `alloc_bfreg` and
//! `bfregn_to_uar_index` in `qp.c`).
//!
//! A UAR is 4 KiB of BAR0 with four bfregs at +0x800: two regular (non fast-path),
//! two fast-path. The context's bfreg numbers count only the regular ones, two per
//! UAR, `bfregs_per_sys_page` = 2 × UARs per system page. A context asks for
//! `total_num_bfregs` static bfregs (rounded up to whole system pages, each backed by
//! one ALLOC_UAR), `num_low_latency_bfregs` of them low-latency; upstream adds
//! `num_dyn_bfregs` (1024, or 512 with large pages and no 4 KiB UARs) numbers for
//! UAR pages mapped later (mmap command ALLOC_WC). Static bfreg classes:
//! - bfreg 0: regular doorbells, shared by any number of QPs (no blue flame);
//! - bfregs `1 .. first_hi`: medium, shared, the least used one is picked;
//! - bfregs `first_hi .. max_bfregs`: low-latency (high class), one QP each.
//!
//! A library with dynamic UARs (`MLX5_LIB_CAP_DYN_UAR`, libmlx5 does) gets no static
//! bfreg at all: every QP/CQ names its UAR (object UAR_OBJ_ALLOC) in its request.

use super::consts::{
    ADAPTER_PAGE_SHIFT, BFREGS_PER_UAR, MAX_BFREGS, MAX_DYN_BFREGS, MIN_DYN_BFREGS,
    NON_FP_BFREGS_PER_UAR,
};
use super::error::{Reason, UabiError};
use crate::errno::Errno;

/// `NUM_NON_BLUE_FLAME_BFREGS`: bfreg 0 is used for plain doorbells.
const NUM_NON_BLUE_FLAME_BFREGS: u32 = 1;

/// UARs in one system page: `PAGE_SIZE / 4096` when both the library and the device
/// (cap `uar_4k`) handle 4 KiB UARs, else 1 (`get_uars_per_sys_page`).
pub fn uars_per_sys_page(lib_uar_4k: bool, dev_uar_4k: bool, page_shift: u32) -> u32 {
    if lib_uar_4k && dev_uar_4k {
        1u32.checked_shl(page_shift.saturating_sub(ADAPTER_PAGE_SHIFT))
            .unwrap_or(1)
    } else {
        1
    }
}

/// Rounds `v` up to a multiple of the power of two `a`, wrapping in 32 bits as the
/// kernel's `ALIGN` on a `__u32` does.
pub fn align_u32(v: u32, a: u32) -> u32 {
    let m = a.wrapping_sub(1);
    v.wrapping_add(m) & !m
}

/// Class of a static bfreg number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BfregClass {
    /// bfreg 0: plain doorbells, shared.
    Regular,
    /// Shared blue-flame bfreg.
    Medium,
    /// Low-latency bfreg, one QP each.
    LowLatency,
    /// Not a static bfreg of the context.
    OutOfRange,
}

/// The bfreg plan of one context (upstream `struct mlx5_bfreg_info` without its
/// counters and page table, which the shell keeps).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BfregInfo {
    /// Request version (0 or 2); v0 contexts get only bfreg 0.
    pub ver: u8,
    /// The library maps 4 KiB UARs.
    pub lib_uar_4k: bool,
    /// The library allocates UARs dynamically: no static bfregs.
    pub lib_uar_dyn: bool,
    /// UARs per system page ([`uars_per_sys_page`]).
    pub uars_per_sys_page: u32,
    /// System pages of static UARs (each one ALLOC_UAR at alloc_ucontext).
    pub num_static_sys_pages: u32,
    /// bfreg numbers reserved for dynamic UAR pages.
    pub num_dyn_bfregs: u32,
    /// Static + dynamic bfreg numbers (length of the shell's counter array).
    pub total_num_bfregs: u32,
    /// Static + dynamic system pages (length of the shell's UAR index table).
    pub num_sys_pages: u32,
    /// Low-latency bfregs asked for.
    pub num_low_latency_bfregs: u32,
}

impl BfregInfo {
    /// The plan of a library with dynamic UARs.
    pub fn dynamic(ver: u8, num_low_latency_bfregs: u32) -> Self {
        Self {
            ver,
            lib_uar_dyn: true,
            num_low_latency_bfregs,
            ..Self::default()
        }
    }

    /// `calc_total_bfregs`: the plan for `total_num_bfregs` static bfregs (already
    /// rounded up to 2), `num_low_latency_bfregs` of them low-latency.
    ///
    /// Errors as upstream: 0 bfregs → `EINVAL`, more than `MLX5_MAX_BFREGS` (512) →
    /// `ENOMEM`, every bfreg low-latency (none left for bfreg 0) → `EINVAL`.
    pub fn plan_static(
        ver: u8,
        lib_uar_4k: bool,
        dev_uar_4k: bool,
        page_shift: u32,
        total_num_bfregs: u32,
        num_low_latency_bfregs: u32,
    ) -> Result<Self, UabiError> {
        if total_num_bfregs == 0 {
            return Err(UabiError::inval(Reason::BfregCount));
        }
        if total_num_bfregs > MAX_BFREGS {
            return Err(UabiError::new(Reason::BfregCount, Errno::ENOMEM));
        }
        let uars = uars_per_sys_page(lib_uar_4k, dev_uar_4k, page_shift);
        let per_page = uars.saturating_mul(NON_FP_BFREGS_PER_UAR);
        let total = align_u32(total_num_bfregs, per_page);
        if num_low_latency_bfregs > total.wrapping_sub(1) {
            return Err(UabiError::inval(Reason::BfregCount));
        }
        // Large pages without 4 KiB UARs limit the dynamic range (`calc_dynamic_bfregs`).
        let dyn_raw = if uars == 1 && page_shift > ADAPTER_PAGE_SHIFT {
            MIN_DYN_BFREGS
        } else {
            MAX_DYN_BFREGS
        };
        let num_dyn_bfregs = align_u32(dyn_raw, per_page);
        let all = total.saturating_add(num_dyn_bfregs);
        Ok(Self {
            ver,
            lib_uar_4k,
            lib_uar_dyn: false,
            uars_per_sys_page: uars,
            num_static_sys_pages: total / per_page,
            num_dyn_bfregs,
            total_num_bfregs: all,
            num_sys_pages: all / per_page,
            num_low_latency_bfregs,
        })
    }

    /// bfreg numbers per system page.
    pub fn bfregs_per_sys_page(&self) -> u32 {
        self.uars_per_sys_page.saturating_mul(NON_FP_BFREGS_PER_UAR)
    }

    /// Static bfregs (`max_bfregs`).
    pub fn max_bfregs(&self) -> u32 {
        self.bfregs_per_sys_page()
            .saturating_mul(self.num_static_sys_pages)
    }

    /// Static bfregs reported in `tot_bfregs` of the alloc_ucontext response.
    pub fn tot_bfregs_resp(&self) -> u32 {
        if self.lib_uar_dyn {
            0
        } else {
            self.total_num_bfregs.saturating_sub(self.num_dyn_bfregs)
        }
    }

    /// Medium-class bfregs (`num_med_bfreg`).
    pub fn num_med(&self) -> u32 {
        self.max_bfregs()
            .saturating_sub(self.num_low_latency_bfregs)
            .saturating_sub(NUM_NON_BLUE_FLAME_BFREGS)
    }

    /// First low-latency bfreg (`first_hi_bfreg`).
    pub fn first_hi(&self) -> u32 {
        self.num_med().saturating_add(1)
    }

    /// Class of static bfreg `n`.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "for create_qp, not implemented yet (host-tested)")
    )]
    pub fn class(&self, n: u32) -> BfregClass {
        if self.lib_uar_dyn || n >= self.max_bfregs() {
            BfregClass::OutOfRange
        } else if n == 0 {
            BfregClass::Regular
        } else if n < self.first_hi() {
            BfregClass::Medium
        } else {
            BfregClass::LowLatency
        }
    }

    /// `alloc_bfreg`: picks the bfreg of a new QP and counts it in `counts` (one
    /// counter per bfreg number, [`Self::total_num_bfregs`] long). v2 contexts get a
    /// free low-latency bfreg, else the least used medium one; v0 contexts, or when
    /// neither exists, bfreg 0. `EINVAL` for a dynamic-UAR library (its QPs must name
    /// a UAR) or a counter array too short for the plan.
    pub fn alloc(&self, counts: &mut [u32]) -> Result<u32, UabiError> {
        let short = UabiError::inval(Reason::OutOfRange("bfreg"));
        if self.lib_uar_dyn || counts.len() < self.max_bfregs() as usize {
            return Err(short);
        }
        // Every index below is < max_bfregs <= counts.len(), or 0 with counts
        // non-empty; `get` keeps that a checked fact rather than a panic.
        let count = |counts: &[u32], i: u32| counts.get(i as usize).copied().unwrap_or(u32::MAX);
        let mut pick = None;
        if self.ver >= 2 {
            pick = (self.first_hi()..self.max_bfregs()).find(|&i| count(counts, i) == 0);
            if pick.is_none() && self.num_med() != 0 {
                let mut min = 1u32;
                for i in 1..self.first_hi() {
                    if count(counts, i) < count(counts, min) {
                        min = i;
                    }
                    if count(counts, min) == 0 {
                        break;
                    }
                }
                pick = Some(min);
            }
        }
        let n = pick.unwrap_or(0);
        let c = counts.get_mut(n as usize).ok_or(short)?;
        *c = c.saturating_add(1);
        Ok(n)
    }

    /// Releases bfreg `n` taken with [`Self::alloc`].
    pub fn free(&self, counts: &mut [u32], n: u32) {
        if let Some(c) = counts.get_mut(n as usize) {
            *c = c.saturating_sub(1);
        }
    }

    /// `bfregn_to_uar_index`: the UAR index of bfreg `n` given the context's UAR
    /// index per system page (`sys_pages`, [`Self::num_sys_pages`] long). A dynamic
    /// bfreg (`MLX5_QP_FLAG_BFREG_INDEX`) counts from the first dynamic page and must
    /// be mapped already. `EINVAL` otherwise, as upstream.
    pub fn uar_index(&self, n: u32, sys_pages: &[u32], dynamic: bool) -> Result<u32, UabiError> {
        let bad = UabiError::inval(Reason::OutOfRange("bfreg index"));
        if self.lib_uar_dyn {
            return Err(bad);
        }
        let per_page = self.bfregs_per_sys_page();
        if per_page == 0 {
            return Err(bad);
        }
        let mut page = n / per_page;
        if dynamic {
            page = page.saturating_add(self.num_static_sys_pages);
            if page >= self.num_sys_pages {
                return Err(bad);
            }
            let idx = sys_pages.get(page as usize).copied().ok_or(bad)?;
            // Upstream compares with `>`, not `>=`; kept.
            if n > self.num_dyn_bfregs || idx == super::consts::IB_INVALID_UAR_INDEX {
                return Err(bad);
            }
        }
        let base = sys_pages.get(page as usize).copied().ok_or(bad)?;
        Ok(base.wrapping_add(n % per_page / NON_FP_BFREGS_PER_UAR))
    }
}

/// `adjust_bfregn`: the index of bfreg `n` as user space counts them (all four
/// bfregs of every UAR), reported in create_qp's `bfreg_index`.
pub fn user_bfreg_index(n: u32) -> u32 {
    (n / NON_FP_BFREGS_PER_UAR)
        .wrapping_mul(BFREGS_PER_UAR)
        .wrapping_add(n % NON_FP_BFREGS_PER_UAR)
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_abi_bfreg))]
mod tests {
    use super::*;
    use crate::testing::ArrayVec;

    fn libmlx5_v2_static() -> BfregInfo {
        // libmlx5 without DYN_UAR on 4 KiB pages: 16 bfregs, 4 low-latency.
        BfregInfo::plan_static(2, true, true, 12, 16, 4).unwrap()
    }

    #[test]
    fn plan_matches_upstream_arithmetic() {
        let b = libmlx5_v2_static();
        assert_eq!(b.uars_per_sys_page, 1);
        assert_eq!(b.num_static_sys_pages, 8);
        assert_eq!(b.num_dyn_bfregs, 1024);
        assert_eq!(b.total_num_bfregs, 1040);
        assert_eq!(b.num_sys_pages, 520);
        assert_eq!(b.tot_bfregs_resp(), 16);
        assert_eq!((b.num_med(), b.first_hi()), (11, 12));
        // 64 KiB pages with 4 KiB UARs: 16 UARs per page, 32 bfregs per page.
        let b = BfregInfo::plan_static(2, true, true, 16, 17, 4).unwrap();
        assert_eq!((b.uars_per_sys_page, b.num_static_sys_pages), (16, 1));
        assert_eq!(b.total_num_bfregs, 32 + 1024);
        // 64 KiB pages without: 512 dynamic.
        let b = BfregInfo::plan_static(2, false, true, 16, 2, 0).unwrap();
        assert_eq!((b.uars_per_sys_page, b.num_dyn_bfregs), (1, 512));
    }

    #[test]
    fn plan_rejects_as_upstream() {
        let e = BfregInfo::plan_static(2, true, true, 12, 0, 0).unwrap_err();
        assert_eq!(e.errno, Errno::EINVAL);
        let e = BfregInfo::plan_static(2, true, true, 12, 514, 0).unwrap_err();
        assert_eq!(e.errno, Errno::ENOMEM);
        assert!(BfregInfo::plan_static(2, true, true, 12, 512, 511).is_ok());
        let e = BfregInfo::plan_static(2, true, true, 12, 512, 512).unwrap_err();
        assert_eq!(e.errno, Errno::EINVAL);
    }

    #[test]
    fn classes_and_alloc_order() {
        let b = libmlx5_v2_static();
        assert_eq!(b.class(0), BfregClass::Regular);
        assert_eq!(b.class(11), BfregClass::Medium);
        assert_eq!(b.class(12), BfregClass::LowLatency);
        assert_eq!(b.class(15), BfregClass::LowLatency);
        assert_eq!(b.class(16), BfregClass::OutOfRange);
        // 16 static and 1024 dynamic bfregs: 4 KiB on the stack of a KUnit case.
        let mut counts = (0..b.total_num_bfregs)
            .map(|_| 0)
            .collect::<ArrayVec<u32, 1040>>();
        // Four low-latency, then medium ones least-used first, never bfreg 0.
        let got: ArrayVec<u32, 32> = (0..4 + 11 + 2)
            .map(|_| b.alloc(&mut counts).unwrap())
            .collect();
        assert_eq!(&got[..4], &[12, 13, 14, 15]);
        assert_eq!(&got[4..15], &(1..12).collect::<ArrayVec<_, 16>>()[..]);
        assert_eq!(&got[15..], &[1, 2]);
        b.free(&mut counts, 13);
        assert_eq!(b.alloc(&mut counts).unwrap(), 13);
        // v0 contexts always ring bfreg 0.
        let v0 = BfregInfo { ver: 0, ..b };
        counts.fill(0);
        assert_eq!(v0.alloc(&mut counts).unwrap(), 0);
        assert_eq!(v0.alloc(&mut counts).unwrap(), 0);
        assert_eq!(counts[0], 2);
        // Dynamic libraries have none; a short table is refused, not indexed.
        assert!(BfregInfo::dynamic(2, 0).alloc(&mut counts).is_err());
        assert!(b.alloc(&mut [0u32; 3]).is_err());
    }

    #[test]
    fn uar_index_and_user_index() {
        let b = libmlx5_v2_static();
        let mut pages: ArrayVec<u32, 520> = (100..100 + b.num_sys_pages).collect();
        assert_eq!(b.uar_index(0, &pages, false).unwrap(), 100);
        assert_eq!(b.uar_index(1, &pages, false).unwrap(), 100);
        assert_eq!(b.uar_index(2, &pages, false).unwrap(), 101);
        assert_eq!(b.uar_index(15, &pages, false).unwrap(), 107);
        // Dynamic bfreg 0 lives on the first page after the static ones.
        assert_eq!(b.uar_index(0, &pages, true).unwrap(), 108);
        pages[8] = crate::ib::abi::consts::IB_INVALID_UAR_INDEX;
        assert!(b.uar_index(0, &pages, true).is_err());
        assert!(b.uar_index(2 * 512, &pages, true).is_err());
        assert!(b.uar_index(0, &pages[..2], false).is_ok());
        assert!(b.uar_index(4, &pages[..2], false).is_err());
        assert_eq!(user_bfreg_index(0), 0);
        assert_eq!(user_bfreg_index(1), 1);
        assert_eq!(user_bfreg_index(2), 4);
        assert_eq!(user_bfreg_index(13), 25);
    }

    #[test]
    fn align_wraps_like_the_kernel() {
        assert_eq!(align_u32(3, 2), 4);
        assert_eq!(align_u32(4, 2), 4);
        assert_eq!(align_u32(u32::MAX, 2), 0);
    }
}
