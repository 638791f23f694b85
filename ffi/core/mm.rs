// SPDX-License-Identifier: GPL-2.0

//! Memory and randomness helpers the kernel crate of 7.3 lacks: the amount of memory
//! available, GFP flags with `__GFP_NORETRY`, and `get_random_bytes`.

use kernel::{alloc::Flags, bindings};

/// Pages of memory available for new allocations without swapping
/// (`si_mem_available`, the `MemAvailable` of /proc/meminfo); 0 if the kernel reports
/// a negative value.
pub(crate) fn mem_available_pages() -> u64 {
    // SAFETY: `si_mem_available` has no preconditions; it only reads global memory
    // counters.
    u64::try_from(unsafe { bindings::si_mem_available() }).unwrap_or(0)
}

/// `GFP_KERNEL | __GFP_NORETRY | __GFP_NOWARN`: a sleeping allocation that tries
/// direct reclaim once, then fails quietly without invoking the OOM killer.
pub(crate) fn gfp_kernel_noretry_nowarn() -> Flags {
    // The kernel crate exports no `__GFP_NORETRY` constant and no way to build a `Flags`
    // from raw bits, and bindgen emits only the bit number for it.
    const RAW: u32 =
        bindings::GFP_KERNEL | (1 << bindings::___GFP_NORETRY_BIT) | bindings::__GFP_NOWARN;
    const _: () = assert!(core::mem::size_of::<Flags>() == core::mem::size_of::<u32>());
    // SAFETY: `Flags` is a struct whose only field is a `u32` (rust/kernel/alloc.rs); its
    // size is that of a `u32` (asserted above), so the field fills it at offset 0 and every
    // bit pattern is a valid value. `RAW` is a combination of GFP bits the page allocator
    // accepts for a sleeping allocation.
    unsafe { core::mem::transmute::<u32, Flags>(RAW) }
}

/// Fills `buf` with random bytes (`get_random_bytes`).
pub(crate) fn random_bytes(buf: &mut [u8]) {
    // SAFETY: `buf` is valid and writable for `buf.len()` bytes for the duration of the
    // call; `get_random_bytes` writes exactly that many.
    unsafe { bindings::get_random_bytes(buf.as_mut_ptr().cast(), buf.len()) };
}
