// SPDX-License-Identifier: GPL-2.0

//! The barriers of the data path, inline where the architecture's are one instruction
//! or none: the read barrier for coherent DMA memory (`dma_rmb()`) and the write
//! barrier before a doorbell (`wmb()`).
//!
//! The kernel crate's `dma_mb(Read)` and `mb(Write)` call the C helpers
//! `rust_helper_dma_rmb` and `rust_helper_wmb` out of line (without
//! `CONFIG_RUST_INLINE_HELPERS`, which needs a Clang-built kernel): a call, and the
//! caller's registers saved around it, once per CQE and per EQE for the first, once per
//! post call and per CQ arm for the second. On x86-64 (`arch/x86/include/asm/barrier.h`)
//! `dma_rmb()` is `barrier()` (loads are not reordered with older loads, and coherent
//! DMA memory is write-back cacheable) and `wmb()` is `sfence` with a memory clobber;
//! there these are the same, inline. Elsewhere they are the kernel crate's.

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

/// `wmb()`: stores before it, to memory or to MMIO, are seen by the device before the
/// stores after it (the WQEs before the doorbell record, the record before the
/// doorbell).
#[inline(always)]
pub(crate) fn wmb() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` only orders stores (x86-64's `wmb()`); without `nomem` Rust
    // treats the block as reading and writing any memory, so the compiler keeps memory
    // accesses on their side of it, as the C macro's "memory" clobber does.
    unsafe {
        core::arch::asm!("sfence", options(nostack, preserves_flags))
    };
    #[cfg(not(target_arch = "x86_64"))]
    kernel::sync::barrier::mb(kernel::sync::barrier::Write);
}
