// SPDX-License-Identifier: GPL-2.0

//! Pinned user memory (`ib_umem`) through the C shim `ffi/rdma/ib_umem.c`.
//!
//! **The device handle.** Pinning DMA-maps the pages for an `ib_device`. The C
//! trampoline of a user verb has the core's object (`ibpd->device`, `ibcq->device`,
//! ...) and passes that `struct ib_device *` to its Rust verb as an opaque pointer;
//! the verb wraps it in an [`IbDev`] for the duration of the call
//! ([`IbDev::from_raw`]). A verb finds its user context's Rust state with
//! [`crate::ffi::rdma::ib_uctx::uctx_of_udata`] or from the pointer its trampoline
//! passes.
//!
//! **Umem.** [`Umem::get`] pins `[addr, addr + len)` of the calling process (it must
//! run in the verb's process context: `current->mm`); [`Umem::best_page_size`] picks
//! the largest page size of a bitmap ([`crate::ib::umem::plan::mkey_page_sizes`],
//! [`crate::ib::umem::plan::queue_page_sizes`]) that maps an IOVA onto the pages and
//! records the IOVA; [`Umem::blocks`] iterates the DMA addresses of the blocks of that
//! size in chunks ([`DmaBlocks::fill`] into a caller's `&mut [u64]`). Dropping the
//! [`Umem`] unmaps and unpins the pages; it holds a reference on the `ib_device`'s
//! memory, so it may be dropped after the device was unregistered and deallocated
//! (from [`crate::hw::Hw::bury`]'s graveyard, once the function stopped DMA).
//!
//! **Mm.** [`Mm`] holds a reference (`mmgrab`) on the calling process's address space,
//! for identity checks ([`Mm::is_current`]) by the doorbell-record table
//! ([`crate::ib::umem`]).

use core::{marker::PhantomData, ptr::NonNull};

use kernel::{
    ffi::{c_int, c_void},
    page::PAGE_SIZE,
    prelude::*,
    types::Opaque,
};

use crate::ib::umem::plan::{user_range_pages, RangeError};

extern "C" {
    fn mlx5rs_umem_get(
        ibdev: *mut c_void,
        addr: u64,
        len: u64,
        access: c_int,
        err: *mut c_int,
    ) -> *mut c_void;
    fn mlx5rs_umem_release(umem: *mut c_void);
    fn mlx5rs_umem_find_best_pgsz(umem: *mut c_void, bitmap: u64, iova: u64) -> u64;
    fn mlx5rs_umem_num_dma_blocks(umem: *mut c_void, pgsz: u64) -> u64;
    fn mlx5rs_umem_dma_offset(umem: *mut c_void, pgsz: u64) -> u64;
    fn mlx5rs_umem_start_dma(umem: *mut c_void) -> u64;
    fn mlx5rs_umem_is_contiguous(umem: *mut c_void) -> bool;
    fn mlx5rs_umem_iter_start(umem: *mut c_void, pgsz: u64, it: *mut c_void);
    fn mlx5rs_umem_iter_fill(it: *mut c_void, out: *mut u64, n: u64) -> u64;
    fn mlx5rs_mm_current() -> *const c_void;
    fn mlx5rs_mm_grab_current() -> *mut c_void;
    fn mlx5rs_mm_drop(mm: *mut c_void);
}

/// `MLX5RS_UMEM_ITER_SIZE` (`mlx5rs_ffi.h`, checked there against the C iterator).
const ITER_WORDS: usize = 64 / 8;

/// The `struct ib_device` a verb runs on, borrowed for the call.
///
/// INVARIANT: `ptr` is a registered `struct ib_device` of this driver, valid for `'a`.
#[derive(Clone, Copy)]
pub(crate) struct IbDev<'a> {
    ptr: NonNull<c_void>,
    _call: PhantomData<&'a ()>,
}

impl IbDev<'_> {
    /// Wraps the device pointer a trampoline passes; `None` for NULL.
    ///
    /// # Safety
    ///
    /// `ptr` must be NULL or the `struct ib_device` of an object the core passed to
    /// the current verb, valid for the lifetime chosen.
    pub(crate) unsafe fn from_raw(ptr: *mut c_void) -> Option<Self> {
        // INVARIANT: by the function's contract.
        NonNull::new(ptr).map(|ptr| Self {
            ptr,
            _call: PhantomData,
        })
    }

    /// The `struct ib_device` pointer, for the shim's functions.
    pub(crate) fn as_raw(&self) -> *mut c_void {
        self.ptr.as_ptr()
    }
}

/// A page size a [`Umem`] may be iterated in: at most the CPU page, or what
/// [`Umem::best_page_size`] chose (`rdma_umem_for_each_dma_block`'s rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BlockSize(u64);

impl BlockSize {
    /// The CPU page.
    pub(crate) const PAGE: Self = Self(PAGE_SIZE as u64);

    /// Bytes.
    pub(crate) fn bytes(self) -> u64 {
        self.0
    }

    /// log2 of the size.
    pub(crate) fn shift(self) -> u32 {
        self.0.trailing_zeros()
    }
}

/// Pinned, DMA-mapped user memory; unpinned on drop.
///
/// INVARIANT: `ptr` came from `mlx5rs_umem_get` and is released only by `drop`.
pub(crate) struct Umem {
    ptr: NonNull<c_void>,
    addr: u64,
    len: u64,
}

// SAFETY: an `ib_umem` is not tied to a thread; it is released from any process
// context (`ib_umem_release` drops the mm reference it holds).
unsafe impl Send for Umem {}
// SAFETY: `&self` methods only read the umem's immutable scatter list and lengths.
unsafe impl Sync for Umem {}

#[expect(dead_code, reason = "i11-umem, for the user verbs")]
impl Umem {
    /// Pins `[addr, addr + len)` of the calling process for `dev` with IB `access`
    /// flags ([`crate::ib::umem::plan::access`]; `LOCAL_WRITE` and the remote write /
    /// atomic bits pin writable). A zero length or a range that wraps is `EINVAL`
    /// before anything is pinned; the core's errors pass through (`ENOMEM` over
    /// RLIMIT_MEMLOCK, `EFAULT` for an unmapped address, `EPERM`, `EOPNOTSUPP` for
    /// ON_DEMAND).
    pub(crate) fn get(dev: IbDev<'_>, addr: u64, len: u64, access: u32) -> Result<Self> {
        user_range_pages(addr, len, PAGE_SIZE as u64).map_err(RangeError::errno)?;
        let access = c_int::try_from(access).map_err(|_| EINVAL)?;
        let mut err: c_int = 0;
        // SAFETY: `dev.ptr` is a registered `struct ib_device` (type invariant of
        // `IbDev`); `err` is a valid `int` of this frame.
        let p = unsafe { mlx5rs_umem_get(dev.ptr.as_ptr(), addr, len, access, &mut err) };
        match NonNull::new(p) {
            // INVARIANT: from `mlx5rs_umem_get`.
            Some(ptr) => Ok(Self { ptr, addr, len }),
            None => Err(if err < 0 {
                Error::from_errno(err)
            } else {
                ENOMEM
            }),
        }
    }

    /// The user address pinned.
    pub(crate) fn addr(&self) -> u64 {
        self.addr
    }

    /// Bytes pinned.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// CPU pages pinned (for logs).
    pub(crate) fn pages(&self) -> usize {
        user_range_pages(self.addr, self.len, PAGE_SIZE as u64)
            .ok()
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0)
    }

    /// The largest page size of `bitmap` with which `iova` maps onto the pinned
    /// pages, and records `iova` as the umem's IOVA (`ib_umem_find_best_pgsz`).
    /// `None` when no size of the bitmap fits.
    pub(crate) fn best_page_size(&mut self, bitmap: u64, iova: u64) -> Option<BlockSize> {
        // SAFETY: `ptr` is a live umem (type invariant); `&mut self` excludes a
        // concurrent iteration while the IOVA changes.
        let s = unsafe { mlx5rs_umem_find_best_pgsz(self.ptr.as_ptr(), bitmap, iova) };
        (s != 0 && s.is_power_of_two()).then_some(BlockSize(s))
    }

    /// Blocks of `size` the umem spans from its IOVA (`ib_umem_num_dma_blocks`).
    pub(crate) fn num_blocks(&self, size: BlockSize) -> u64 {
        // SAFETY: `ptr` is a live umem (type invariant).
        unsafe { mlx5rs_umem_num_dma_blocks(self.ptr.as_ptr(), size.0) }
    }

    /// Offset of the first byte in its first block of `size` (`ib_umem_dma_offset`).
    pub(crate) fn dma_offset(&self, size: BlockSize) -> u64 {
        // SAFETY: `ptr` is a live umem (type invariant).
        unsafe { mlx5rs_umem_dma_offset(self.ptr.as_ptr(), size.0) }
    }

    /// DMA address of the first byte.
    pub(crate) fn start_dma(&self) -> u64 {
        // SAFETY: `ptr` is a live umem (type invariant).
        unsafe { mlx5rs_umem_start_dma(self.ptr.as_ptr()) }
    }

    /// Whether the pages are one DMA-contiguous range (`ib_umem_is_contiguous`).
    pub(crate) fn is_contiguous(&self) -> bool {
        // SAFETY: `ptr` is a live umem (type invariant).
        unsafe { mlx5rs_umem_is_contiguous(self.ptr.as_ptr()) }
    }

    /// The DMA addresses of the umem's blocks of `size`, in order, exactly
    /// [`Self::num_blocks`] of them (each aligned to `size`).
    pub(crate) fn blocks(&self, size: BlockSize) -> DmaBlocks<'_> {
        let it = DmaBlocks {
            state: Opaque::uninit(),
            left: self.num_blocks(size),
            _umem: PhantomData,
        };
        // SAFETY: `ptr` is a live umem (type invariant) that outlives the iterator
        // (`'_`); `state` is `MLX5RS_UMEM_ITER_SIZE` bytes, 8-byte aligned, which
        // the C side checks its iterator fits; `size` is the CPU page or a size
        // `find_best_pgsz` returned (`BlockSize`).
        unsafe { mlx5rs_umem_iter_start(self.ptr.as_ptr(), size.0, it.state.get().cast()) };
        it
    }
}

impl Drop for Umem {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from `mlx5rs_umem_get` (type invariant) and is released
        // once, here.
        unsafe { mlx5rs_umem_release(self.ptr.as_ptr()) };
    }
}

/// Iterator state over a [`Umem`]'s DMA blocks, borrowing it.
///
/// INVARIANT: `state` was started by `mlx5rs_umem_iter_start` on the borrowed umem.
pub(crate) struct DmaBlocks<'a> {
    state: Opaque<[u64; ITER_WORDS]>,
    left: u64,
    _umem: PhantomData<&'a Umem>,
}

#[expect(dead_code, reason = "i11-umem, for the user verbs")]
impl DmaBlocks<'_> {
    /// Blocks not handed out yet.
    pub(crate) fn remaining(&self) -> u64 {
        self.left
    }

    /// Writes the next DMA block addresses into `out`; how many (fewer than
    /// `out.len()` only at the end, 0 when done).
    pub(crate) fn fill(&mut self, out: &mut [u64]) -> usize {
        if out.is_empty() || self.left == 0 {
            return 0;
        }
        // SAFETY: `state` was started on the umem `'_` borrows, still pinned (type
        // invariant); `out` is valid for `out.len()` writes; `&mut self` makes the
        // state exclusive. The state holds no pointer into itself, so it moved
        // with `self` safely.
        let n = unsafe {
            mlx5rs_umem_iter_fill(self.state.get().cast(), out.as_mut_ptr(), out.len() as u64)
        };
        let n = n.min(out.len() as u64);
        self.left = self.left.saturating_sub(n);
        // At most `out.len()`: fits `usize`.
        n as usize
    }
}

/// A reference on the address space of the process that created it (`mmgrab`),
/// dropped with it. Only its identity is used.
///
/// INVARIANT: `ptr` came from `mlx5rs_mm_grab_current` and is dropped once.
pub(crate) struct Mm {
    ptr: NonNull<c_void>,
}

// SAFETY: an mm reference may be dropped from any context that may sleep.
unsafe impl Send for Mm {}
// SAFETY: `&self` only compares the pointer.
unsafe impl Sync for Mm {}

impl Mm {
    /// The calling process's mm; `None` for a kernel thread.
    pub(crate) fn current() -> Option<Self> {
        // SAFETY: no preconditions; takes a reference on `current->mm` when it exists.
        let p = unsafe { mlx5rs_mm_grab_current() };
        // INVARIANT: from `mlx5rs_mm_grab_current`.
        NonNull::new(p).map(|ptr| Self { ptr })
    }

    /// Whether this is the calling process's mm (the reference keeps the address
    /// from being reused by another mm).
    pub(crate) fn is_current(&self) -> bool {
        // SAFETY: no preconditions; reads `current->mm` only.
        core::ptr::eq(unsafe { mlx5rs_mm_current() }, self.ptr.as_ptr())
    }

    /// The mm's identity as a number (stable while this reference lives).
    pub(crate) fn key(&self) -> usize {
        self.ptr.as_ptr() as usize
    }
}

impl Drop for Mm {
    fn drop(&mut self) {
        // SAFETY: from `mlx5rs_mm_grab_current` (type invariant), dropped once, here.
        unsafe { mlx5rs_mm_drop(self.ptr.as_ptr()) };
    }
}
