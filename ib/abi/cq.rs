// SPDX-License-Identifier: GPL-2.0

//! create_cq and resize_cq requests of user space, checked as upstream
//! `mlx5_ib_create_user_cq` / `create_cq_user` / `mlx5_ib_resize_cq` (`cq.c`) check
//! them, in their order and with their errnos:
//! 1. `cqe` above `1 << log_max_cq_sz`, or its ring (`cqe + 1` rounded up to a power of
//!    two) above it → `EINVAL`; core create flags other than TIMESTAMP_COMPLETION and
//!    IGNORE_OVERRUN → `EOPNOTSUPP`;
//! 2. request shorter than `cqe_comp_res_format`'s end (22 bytes) → `EINVAL`, non-zero
//!    bytes past its 32 → `EOPNOTSUPP`; unknown `flags` → `EINVAL`; `cqe_size` not
//!    64/128 or a reserved field set → `EINVAL`;
//! 3. buffer start not 64-byte aligned (no page offset the CQ context can express:
//!    `mlx5_umem_find_best_cq_quantized_pgoff` → `EINVAL`); doorbell record (8 bytes)
//!    straddling a page → `EINVAL` (`mlx5_ib_db_map_user`);
//! 4. UAR page: the ioctl's UAR_INDEX attribute, else `uar_page_index` with its flag,
//!    else the context's first static page; none (dynamic-UAR library) → `EINVAL`;
//! 5. CQE compression for a size the caps do not compress → `EOPNOTSUPP`; unknown
//!    mini-CQE format → `EINVAL`, stride index without its cap → `EOPNOTSUPP`;
//!    128-byte padding without 128-byte CQEs and cap `cqe_128_always` → `EOPNOTSUPP`.
//!
//! The user buffer's pinning (EFAULT and friends) is the shell's, between 2 and 3 as
//! upstream; the address checks here depend only on the numbers.

use super::consts::{
    CQE_RES_FORMAT_CSUM, CQE_RES_FORMAT_CSUM_STRIDX, CQE_RES_FORMAT_HASH,
    CREATE_CQ_FLAGS_CQE_128B_PAD, CREATE_CQ_FLAGS_REAL_TIME_TS, CREATE_CQ_FLAGS_UAR_PAGE_INDEX,
    IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN, IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION,
};
use super::error::{Reason, UabiError};
use super::layout::{CreateCq, ResizeCq};
use super::udata;
use crate::errno::Errno;
// Shared with the QP and SRQ requests (and compiled into the module for the SRQ verbs).
pub use super::queue_checks::check_addrs;

/// Device capabilities create_cq looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CqCaps {
    /// Cap `log_max_cq_sz`.
    pub log_max_cq_sz: u8,
    /// Cap `cqe_compression` (64-byte CQEs).
    pub cqe_compression: bool,
    /// Cap `cqe_compression_128`.
    pub cqe_compression_128: bool,
    /// Cap `mini_cqe_resp_stride_index`.
    pub mini_cqe_resp_stride_index: bool,
    /// Cap `cqe_128_always` (128-byte padding).
    pub cqe_128_always: bool,
    /// Cap `cq_resize`.
    pub cq_resize: bool,
    /// log2 of the host page size.
    pub page_shift: u32,
}

/// Where the CQ's doorbells go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CqUar {
    /// This UAR index (from the ioctl attribute or `uar_page_index`).
    Index(u32),
    /// The context's first static UAR page (`sys_pages[0]`).
    FirstStaticPage,
}

/// A create_cq request that passed every check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CqPlan {
    /// Ring entries (a power of two).
    pub entries: u32,
    /// log2 of `entries` (`log_cq_size`).
    pub log_size: u8,
    /// CQE size, 64 or 128.
    pub cqe_size: u32,
    /// `cqe_sz` of the CQ context: 0 (64), 1 (128), 2 (128 padded).
    pub cqe_sz: u8,
    /// Buffer start (user virtual address).
    pub buf_addr: u64,
    /// Buffer length in bytes: `entries × cqe_size`.
    pub buf_len: u64,
    /// Doorbell record (user virtual address).
    pub db_addr: u64,
    /// UAR.
    pub uar: CqUar,
    /// `mini_cqe_res_format` of the CQ context when compression is on.
    pub mini_cqe_format: Option<u8>,
    /// Real-time timestamps.
    pub real_time_ts: bool,
    /// `oi` (ignore overrun).
    pub ignore_overrun: bool,
    /// Completion timestamps.
    pub timestamp_completion: bool,
}

/// `1 << log` in 64 bits (no device reports a shift beyond 63).
fn pow2(log: u8) -> u64 {
    1u64.checked_shl(u32::from(log)).unwrap_or(u64::MAX)
}

/// Ring entries for `cqe` requested entries: `roundup_pow_of_two(cqe + 1)`, checked
/// against `1 << log_max` (`slack` more allowed, resize_cq allows 1).
fn ring_entries(cqe: u32, log_max: u8, slack: u64) -> Result<u32, UabiError> {
    let max = pow2(log_max);
    let bad = UabiError::inval(Reason::OutOfRange("cqe"));
    if u64::from(cqe) > max {
        return Err(bad);
    }
    let n = (u64::from(cqe) + 1).next_power_of_two();
    if n > max.saturating_add(slack) {
        return Err(bad);
    }
    u32::try_from(n).map_err(|_| bad)
}

/// Checks a create_cq: `cqe` and `ib_flags` from the core's `ib_cq_init_attr`,
/// `inbuf` the driver request as user space gave it, `ioctl_uar` the UAR_INDEX
/// attribute when present, `lib_uar_dyn` from the context.
pub fn parse_create_cq(
    cqe: u32,
    ib_flags: u32,
    inbuf: &[u8],
    caps: &CqCaps,
    ioctl_uar: Option<u32>,
    lib_uar_dyn: bool,
) -> Result<CqPlan, UabiError> {
    let max = pow2(caps.log_max_cq_sz);
    if u64::from(cqe) > max {
        return Err(UabiError::inval(Reason::OutOfRange("cqe")));
    }
    let known = IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN | IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
    if ib_flags & !known != 0 {
        return Err(UabiError::notsupp(Reason::UnknownFlags {
            bits: u64::from(ib_flags & !known),
        }));
    }
    let entries = ring_entries(cqe, caps.log_max_cq_sz, 0)?;

    let min = core::mem::offset_of!(CreateCq, cqe_comp_res_format) + 1;
    let req: CreateCq = udata::copy_validate_in(inbuf, min)?;
    let known = CREATE_CQ_FLAGS_CQE_128B_PAD
        | CREATE_CQ_FLAGS_UAR_PAGE_INDEX
        | CREATE_CQ_FLAGS_REAL_TIME_TS;
    if req.flags & !known != 0 {
        return Err(UabiError::inval(Reason::UnknownFlags {
            bits: u64::from(req.flags & !known),
        }));
    }
    if req.cqe_size != 64 && req.cqe_size != 128 {
        return Err(UabiError::inval(Reason::OutOfRange("cqe_size")));
    }
    if req.reserved0 != 0 || req.reserved1 != 0 {
        return Err(UabiError::inval(Reason::ReservedNotZero));
    }
    check_addrs(req.buf_addr, Some(req.db_addr), caps.page_shift)?;

    let uar = if let Some(i) = ioctl_uar {
        CqUar::Index(i)
    } else if req.flags & CREATE_CQ_FLAGS_UAR_PAGE_INDEX != 0 {
        CqUar::Index(u32::from(req.uar_page_index))
    } else if lib_uar_dyn {
        return Err(UabiError::inval(Reason::OutOfRange("UAR page")));
    } else {
        CqUar::FirstStaticPage
    };

    let mut mini_cqe_format = None;
    if req.cqe_comp_en == 1 {
        let ok = (req.cqe_size == 128 && caps.cqe_compression_128)
            || (req.cqe_size == 64 && caps.cqe_compression);
        if !ok {
            return Err(UabiError::notsupp(Reason::Unsupported("CQE compression")));
        }
        mini_cqe_format = Some(match req.cqe_comp_res_format {
            CQE_RES_FORMAT_HASH => 0,
            CQE_RES_FORMAT_CSUM => 1,
            CQE_RES_FORMAT_CSUM_STRIDX if caps.mini_cqe_resp_stride_index => 3,
            CQE_RES_FORMAT_CSUM_STRIDX => {
                return Err(UabiError::notsupp(Reason::Unsupported("stride index")))
            }
            _ => return Err(UabiError::inval(Reason::OutOfRange("cqe_comp_res_format"))),
        });
    }
    let pad = req.flags & CREATE_CQ_FLAGS_CQE_128B_PAD != 0;
    if pad && (req.cqe_size != 128 || !caps.cqe_128_always) {
        return Err(UabiError::notsupp(Reason::Unsupported(
            "128-byte CQE padding",
        )));
    }
    let cqe_sz = match (pad, req.cqe_size) {
        (true, _) => 2,
        (false, 64) => 0,
        _ => 1,
    };
    Ok(CqPlan {
        entries,
        log_size: u8::try_from(entries.trailing_zeros()).unwrap_or(0),
        cqe_size: req.cqe_size,
        cqe_sz,
        buf_addr: req.buf_addr,
        buf_len: u64::from(entries) * u64::from(req.cqe_size),
        db_addr: req.db_addr,
        uar,
        mini_cqe_format,
        real_time_ts: req.flags & CREATE_CQ_FLAGS_REAL_TIME_TS != 0,
        ignore_overrun: ib_flags & IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN != 0,
        timestamp_completion: ib_flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION != 0,
    })
}

/// A resize_cq request that passed every check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResizePlan {
    /// The ring already has that size: nothing to do (upstream returns 0).
    Unchanged,
    /// New ring.
    Resize {
        /// Ring entries (a power of two).
        entries: u32,
        /// New buffer.
        buf_addr: u64,
        /// Its length in bytes.
        buf_len: u64,
        /// CQE size, 64 or 128.
        cqe_size: u32,
    },
}

/// Checks a resize_cq: `cqe` the entries asked for, `current_cqe` the CQ's
/// `ibcq.cqe` (ring entries − 1). No `cq_resize` cap → `ENOSYS`; the sizes as
/// create; a request shorter than 16 bytes → `EINVAL`, reserved fields → `EINVAL`.
/// Upstream does not check `cqe_size` here (a bad one fails later, or maps the ring
/// with the wrong stride); we refuse anything but 64 and 128 with `EINVAL`.
pub fn parse_resize_cq(
    cqe: u32,
    current_cqe: u32,
    inbuf: &[u8],
    caps: &CqCaps,
) -> Result<ResizePlan, UabiError> {
    if !caps.cq_resize {
        return Err(UabiError::new(
            Reason::Unsupported("cq_resize"),
            Errno::ENOSYS,
        ));
    }
    let entries = ring_entries(cqe, caps.log_max_cq_sz, 1)?;
    if u64::from(entries) == u64::from(current_cqe) + 1 {
        return Ok(ResizePlan::Unchanged);
    }
    let req: ResizeCq = udata::copy_validate_in(inbuf, core::mem::size_of::<ResizeCq>())?;
    if req.reserved0 != 0 || req.reserved1 != 0 {
        return Err(UabiError::inval(Reason::ReservedNotZero));
    }
    if req.cqe_size != 64 && req.cqe_size != 128 {
        return Err(UabiError::inval(Reason::OutOfRange("cqe_size")));
    }
    check_addrs(req.buf_addr, None, caps.page_shift)?;
    Ok(ResizePlan::Resize {
        entries,
        buf_addr: req.buf_addr,
        buf_len: u64::from(entries) * u64::from(req.cqe_size),
        cqe_size: u32::from(req.cqe_size),
    })
}
