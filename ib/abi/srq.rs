// SPDX-License-Identifier: GPL-2.0

//! create_srq requests of user space, checked as upstream `mlx5_ib_create_srq` and
//! `create_srq_user` (`srq.c`) check them, in that order:
//! 1. the shape, as a kernel queue's ([`crate::ib::srq::plan::srq_shape`]: `max_wr`
//!    ≥ `1 << log_max_srq_sz` or `max_sge` above `max_wqe_sz_rq / 16` → `EINVAL`);
//! 2. shorter than `flags`'s end (20 bytes) → `EINVAL`, non-zero bytes past its 32 →
//!    `EOPNOTSUPP`; reserved fields → `EINVAL`; flag bits other than SIGNATURE are
//!    ignored, as upstream;
//! 3. XRC SRQs: user index as create_qp, present when the request covers `uidx`;
//!    with CQE version 0 an absent or default one, with 1 a present valid one, else
//!    `EINVAL`;
//! 4. buffer start not 64-byte aligned, doorbell straddling a page → `EINVAL`.

use super::consts::{IB_DEFAULT_UIDX, SRQ_FLAG_SIGNATURE};
use super::error::{Reason, UabiError};
use super::layout::CreateSrq;
use super::queue_checks::{check_addrs, user_index};
use super::udata;
use crate::ib::srq::plan::{srq_shape, SrqLimits, SrqShape};

/// SRQ type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SrqKind {
    /// Basic SRQ.
    Basic,
    /// XRC SRQ.
    Xrc,
}

/// Device capabilities create_srq looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrqCaps {
    /// Cap `log_max_srq_sz`.
    pub log_max_srq_sz: u8,
    /// Cap `max_wqe_sz_rq`.
    pub max_wqe_sz_rq: u32,
    /// log2 of the host page size.
    pub page_shift: u32,
}

/// A create_srq request that passed every check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SrqPlan {
    /// Ring entries (a power of two).
    pub max: u32,
    /// log2 WQE size.
    pub wqe_shift: u32,
    /// Scatter entries a WQE holds.
    pub max_avail_gather: u32,
    /// Buffer length.
    pub buf_size: u64,
    /// Buffer start.
    pub buf_addr: u64,
    /// Doorbell record.
    pub db_addr: u64,
    /// WQE signature.
    pub wq_sig: bool,
    /// User index (`MLX5_IB_DEFAULT_UIDX` when none).
    pub uidx: u32,
    /// The queue's shape (as a kernel queue's).
    pub shape: SrqShape,
}

/// Checks a create_srq: `max_wr` / `max_sge` from the core's attributes, `inbuf` the
/// driver request as user space gave it, `cqe_version` the context's.
pub fn parse_create_srq(
    kind: SrqKind,
    max_wr: u32,
    max_sge: u32,
    inbuf: &[u8],
    caps: &SrqCaps,
    cqe_version: u8,
) -> Result<SrqPlan, UabiError> {
    let lim = SrqLimits {
        log_max_srq_sz: caps.log_max_srq_sz,
        max_wqe_sz_rq: caps.max_wqe_sz_rq,
        cqe_version,
    };
    let shape = srq_shape(max_wr, max_sge, &lim)?;
    let min = core::mem::offset_of!(CreateSrq, flags) + 4;
    let req: CreateSrq = udata::copy_validate_in(inbuf, min)?;
    if req.reserved0 != 0 || req.reserved1 != 0 {
        return Err(UabiError::inval(Reason::ReservedNotZero));
    }
    let uidx = match kind {
        SrqKind::Basic => IB_DEFAULT_UIDX,
        SrqKind::Xrc => {
            let present = inbuf.len() >= core::mem::offset_of!(CreateSrq, uidx) + 4;
            user_index(present, cqe_version, req.uidx)?
        }
    };
    check_addrs(req.buf_addr, Some(req.db_addr), caps.page_shift)?;
    Ok(SrqPlan {
        max: shape.max,
        wqe_shift: shape.wqe_shift,
        max_avail_gather: shape.max_avail_gather,
        buf_size: shape.buf_size,
        buf_addr: req.buf_addr,
        db_addr: req.db_addr,
        wq_sig: req.flags & SRQ_FLAG_SIGNATURE != 0,
        uidx,
        shape,
    })
}
