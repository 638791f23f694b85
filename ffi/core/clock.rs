// SPDX-License-Identifier: GPL-2.0

//! The clock info page and the wall clock (ffi/core/clock.c): a zeroed kernel page,
//! written with upstream's sign protocol, and `ktime_get_real()` / `HZ`, which the
//! kernel crate does not expose.

use core::ffi::c_void;
use core::ptr::NonNull;

use kernel::prelude::*;

/// `struct mlx5rs_clock_vals`: what one publication writes into the page.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ClockVals {
    /// `cycles`: the counter at the last read.
    pub(crate) cycles: u64,
    /// `nsec`: nanoseconds then.
    pub(crate) nsec: u64,
    /// `frac`: fractional nanoseconds.
    pub(crate) frac: u64,
    /// `mask`: the counter's width.
    pub(crate) mask: u64,
    /// `overflow_period`: the update period, in jiffies.
    pub(crate) overflow_period: u64,
    /// `mult`.
    pub(crate) mult: u32,
    /// `shift`.
    pub(crate) shift: u32,
}
const _: () = assert!(size_of::<ClockVals>() == 48);

extern "C" {
    fn mlx5rs_clock_page_alloc() -> *mut c_void;
    fn mlx5rs_clock_page_free(page: *mut c_void);
    fn mlx5rs_clock_page_publish(page: *mut c_void, v: *const ClockVals);
    fn mlx5rs_clock_real_ns() -> u64;
    fn mlx5rs_clock_hz() -> u64;
}

/// One zeroed kernel page holding `struct mlx5_ib_clock_info`; freed on drop (a user
/// mapping keeps its own reference to the page).
///
/// INVARIANT: `page` comes from `mlx5rs_clock_page_alloc` and is freed only by drop.
pub(crate) struct ClockPage {
    page: NonNull<c_void>,
}

// SAFETY: the page is plain kernel memory; its writer is serialized by the owner
// (`ClockPage::publish` takes `&self`, and the clock calls it under its lock).
unsafe impl Send for ClockPage {}
// SAFETY: as `Send`; `addr` only reads the pointer.
unsafe impl Sync for ClockPage {}

impl ClockPage {
    /// A zeroed page.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: no preconditions; returns NULL on failure.
        let p = unsafe { mlx5rs_clock_page_alloc() };
        NonNull::new(p).map(|page| Self { page }).ok_or(ENOMEM)
    }

    /// Publishes `v` (upstream's sign protocol). Callers serialize.
    pub(crate) fn publish(&self, v: &ClockVals) {
        // SAFETY: `page` is a live page of ours (invariant), big enough for the
        // structure (checked in C); `v` is a valid reference.
        unsafe { mlx5rs_clock_page_publish(self.page.as_ptr(), v) };
    }

    /// The page's kernel address, for the IB provider's mmap (`vm_insert_page`).
    #[cfg_attr(
        not(CONFIG_MLX5_RS_INFINIBAND),
        expect(dead_code, reason = "the IB provider maps the page")
    )]
    pub(crate) fn addr(&self) -> *mut c_void {
        self.page.as_ptr()
    }
}

impl Drop for ClockPage {
    fn drop(&mut self) {
        // SAFETY: `page` came from `mlx5rs_clock_page_alloc` and is freed once, here.
        unsafe { mlx5rs_clock_page_free(self.page.as_ptr()) };
    }
}

/// `ktime_get_real()` in nanoseconds.
pub(crate) fn real_ns() -> u64 {
    // SAFETY: no preconditions.
    unsafe { mlx5rs_clock_real_ns() }
}

/// `HZ`.
pub(crate) fn hz() -> u64 {
    // SAFETY: no preconditions.
    unsafe { mlx5rs_clock_hz() }
}
