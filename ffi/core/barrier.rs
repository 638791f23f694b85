// SPDX-License-Identifier: GPL-2.0

//! The read barrier for coherent DMA memory (`dma_rmb()`), inline where the
//! architecture defines it as a compiler barrier.
//!
//! The kernel crate's `dma_mb(Read)` calls the C helper `rust_helper_dma_rmb` out of
//! line (without `CONFIG_RUST_INLINE_HELPERS`, which needs a Clang-built kernel). On
//! x86-64 `dma_rmb()` is `barrier()` (`arch/x86/include/asm/barrier.h`: loads are not
//! reordered with older loads, and coherent DMA memory is write-back cacheable), so the
//! call only costs: the caller's registers saved around it, once per CQE and per EQE.
//! There this is the same compiler barrier, inline; elsewhere it is the kernel crate's.

/// `dma_rmb()`: loads from coherent DMA memory after it are ordered after the loads
/// before it (the owner byte of a ring entry before the entry's contents).
#[inline(always)]
pub(crate) fn dma_rmb() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: an empty asm block; Rust treats it as reading and writing any memory, so
    // the compiler keeps memory accesses on their side of it (the kernel crate's
    // `barrier()`, and x86-64's `dma_rmb()`).
    unsafe {
        core::arch::asm!("", options(nostack, preserves_flags))
    };
    #[cfg(not(target_arch = "x86_64"))]
    kernel::sync::barrier::dma_mb(kernel::sync::barrier::Read);
}
