// SPDX-License-Identifier: GPL-2.0

//! The decisions of the CQ verbs that depend on numbers only (the user request's own
//! checks are [`crate::ib::abi::cq`]):
//! - a kernel CQ's ring ([`kernel_cq_plan`]: upstream `mlx5_ib_create_cq`);
//! - the completion EQ of a completion vector ([`eqn_of`]);
//! - the UAR page of a user CQ ([`resolve_uar`]);
//! - the quantized page offset of a user buffer ([`quantized_pgoff`]: upstream
//!   `mlx5_umem_find_best_quantized_pgoff` with the CQ's 64 units of a page);
//! - where each CQE's `op_own` byte sits, and its initial value ([`op_own_offset`],
//!   [`INVALID_OP_OWN`]: upstream `init_cq_frag_buf`).
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::errno::Errno;
use crate::ib::abi::cq::CqUar;

/// CQE opcode "invalid" (`MLX5_CQE_INVALID`, as `ifc::wqe::vals::CQE_INVALID`, which
/// is in the host crates only).
const CQE_INVALID: u8 = 0xf;

/// `op_own` of a CQE software owns before the device wrote it: opcode
/// `MLX5_CQE_INVALID`, owner bit 0 (the device's first pass writes owner 0 with a
/// valid opcode).
pub const INVALID_OP_OWN: u8 = CQE_INVALID << 4;

/// The CQ context's page offset counts 1/64 of a page (upstream passes scale 64).
pub const PGOFF_SCALE: u64 = 64;
/// `cqc.page_offset` is 6 bits.
pub const PGOFF_MAX: u64 = 63;

/// A kernel CQ's ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelCqPlan {
    /// Ring entries (a power of two).
    pub entries: u32,
    /// log2 of `entries`.
    pub log_size: u8,
    /// CQE bytes: 128 on a host with 128-byte cache lines, else 64.
    pub cqe_size: u32,
    /// `cqc.cqe_sz` for it (0: 64, 1: 128).
    pub cqe_sz: u8,
}

impl KernelCqPlan {
    /// Bytes of the ring.
    pub fn bytes(&self) -> u64 {
        u64::from(self.entries) * u64::from(self.cqe_size)
    }
}

/// A kernel create_cq of `cqe` entries: as upstream, `cqe` above `1 << log_max_cq_sz`
/// or its ring (`roundup_pow_of_two(cqe + 1)`) above it is `EINVAL`.
pub fn kernel_cq_plan(cqe: u32, log_max_cq_sz: u8, cache_line: u32) -> Result<KernelCqPlan, Errno> {
    let max = 1u64
        .checked_shl(u32::from(log_max_cq_sz))
        .unwrap_or(u64::MAX);
    if u64::from(cqe) > max {
        return Err(Errno::EINVAL);
    }
    let entries = (u64::from(cqe) + 1).next_power_of_two();
    if entries > max {
        return Err(Errno::EINVAL);
    }
    let entries = u32::try_from(entries).map_err(|_| Errno::EINVAL)?;
    let cqe_size = if cache_line == 128 { 128 } else { 64 };
    Ok(KernelCqPlan {
        entries,
        log_size: u8::try_from(entries.trailing_zeros()).map_err(|_| Errno::EINVAL)?,
        cqe_size,
        cqe_sz: u8::from(cqe_size == 128),
    })
}

/// The EQ of completion vector `vector` (`mlx5_comp_eqn_get`); `None` past the last
/// vector (the verb fails with `EINVAL`).
pub fn eqn_of(vector: u32, eqns: &[u8]) -> Option<u32> {
    eqns.get(usize::try_from(vector).ok()?)
        .map(|&e| u32::from(e))
}

/// The UAR page of a user CQ from the request's choice ([`CqUar`]), the context's
/// static UAR pages and `owns`, which says whether a UAR index is one of the
/// context's pages (static, or a UAR object it allocated). Upstream passes an index
/// named by user space to the device unchecked (the device checks it against the
/// DEVX uid); without DEVX every UAR has uid 0, so an index is accepted only when the
/// context owns it, and is `EINVAL` otherwise. A context without static pages has no
/// first page: `EINVAL`.
pub fn resolve_uar(
    sel: CqUar,
    static_uars: &[u32],
    owns: impl Fn(u32) -> bool,
) -> Result<u32, Errno> {
    match sel {
        CqUar::Index(i) if owns(i) => Ok(i),
        CqUar::Index(_) => Err(Errno::EINVAL),
        CqUar::FirstStaticPage => static_uars.first().copied().ok_or(Errno::EINVAL),
    }
}

/// `cqc.page_offset` for a buffer whose first byte is `dma_offset` bytes into its
/// first block of `page_size` bytes: the offset in units of `page_size / 64`, or
/// `None` when it is not a multiple of the unit (the caller tries a smaller page, as
/// upstream halves it).
pub fn quantized_pgoff(dma_offset: u64, page_size: u64) -> Option<u8> {
    let unit = page_size / PGOFF_SCALE;
    if unit == 0 || dma_offset % unit != 0 {
        return None;
    }
    let q = dma_offset / unit;
    if q > PGOFF_MAX {
        return None;
    }
    u8::try_from(q).ok()
}

/// Byte offset of the `op_own` byte of CQE `index` in a ring of `cqe_size`-byte CQEs
/// (the last byte of the entry's 64-byte CQE, which is its second half for 128-byte
/// CQEs).
pub fn op_own_offset(index: u32, cqe_size: u32) -> Option<usize> {
    let at = u64::from(index)
        .checked_mul(u64::from(cqe_size))?
        .checked_add(u64::from(cqe_size).checked_sub(1)?)?;
    usize::try_from(at).ok()
}
