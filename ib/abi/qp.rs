// SPDX-License-Identifier: GPL-2.0

//! create_qp requests of user space (RC, UC, UD; not RSS, raw packet or DC), checked
//! as upstream `mlx5_ib_create_qp` → `process_udata_size`, `check_ucmd_data`,
//! `process_vendor_flags`, `get_qp_uidx`, `create_user_qp`, `set_rq_size`,
//! `_create_user_qp` and `set_user_buf_size` (`qp.c`) check them, in that order:
//! 1. shorter than `ece_options`'s offset (48 bytes, a library without ECE) →
//!    `EINVAL`; a non-zero byte from `reserved` (offset 54) on → `EINVAL`;
//! 2. flags: SIGNATURE, BFREG_INDEX and UAR_PAGE_INDEX always; SCATTER_CQE and
//!    ALLOW_SCATTER_CQE with cap `sctr_data_cqe` (silently dropped without it, as
//!    upstream: libmlx5 asks for it by default); PACKET_BASED_CREDIT_MODE on RC with
//!    cap `qp_packet_based`. Each accepted flag is written to the QP context
//!    (`wq_signature`, `cs_req`/`cs_res`, `req_e2e_credit_mode`,
//!    [`crate::ib::qp_create`]) or names the UAR; anything else →
//!    `EINVAL`. DCT/DCI flags (which turn the QP into a DC QP upstream) are refused
//!    with `EOPNOTSUPP`: this provider has no DC;
//! 3. user index: with CQE version 0 it must be `MLX5_IB_DEFAULT_UIDX`; with 1 it
//!    must not be, and fit 24 bits; else `EINVAL`;
//! 4. `max_recv_wr` above `1 << log_max_qp_sz` → `EINVAL`; with an RQ, `1 <<
//!    rq_wqe_shift` must fit an `int` and hold the signature segment; without one
//!    `rq_wqe_count` and `rq_wqe_shift` must be 0; `sq_wqe_count` above the maximum
//!    → `EINVAL`. Beyond upstream (which hands them to the device unchecked), the RQ
//!    geometry must be one the QP context can hold: `rq_wqe_shift` from 4 to
//!    log2 `max_wqe_sz_rq`, `rq_wqe_count` a power of two from 1 to `1 <<
//!    log_max_qp_sz` → else `EINVAL`, before anything is pinned;
//! 5. BFREG_INDEX and UAR_PAGE_INDEX together → `EINVAL`;
//! 6. SQ basic block (64 bytes) above `max_wqe_sz_sq`, `sq_wqe_count` not a power of
//!    two, RQ + SQ bytes overflowing an `int` → `EINVAL`;
//! 7. buffer start not 64-byte aligned (when there is a buffer), doorbell record
//!    straddling a page → `EINVAL`.
//!
//! Also the driver part of modify_qp ([`parse_modify_qp`], [`modify_qp_response`]).

use super::consts::{
    IB_MODIFY_QP_OOO_DP, QP_FLAG_ALLOW_SCATTER_CQE, QP_FLAG_BFREG_INDEX,
    QP_FLAG_PACKET_BASED_CREDIT_MODE, QP_FLAG_SCATTER_CQE, QP_FLAG_SIGNATURE, QP_FLAG_TYPE_DCI,
    QP_FLAG_TYPE_DCT, QP_FLAG_UAR_PAGE_INDEX,
};
use super::cq::check_addrs;
use super::error::{Reason, UabiError};
use super::layout::{BurstInfo, CreateQp, ModifyQp, ModifyQpResp};
use super::udata;
use crate::errno::Errno;
// Shared with the SRQ requests (and compiled into the module for the SRQ verbs).
pub use super::queue_checks::user_index;

/// Send WQE basic block (`MLX5_SEND_WQE_BB`).
pub const SEND_WQE_BB: u32 = 64;
/// Smallest receive WQE stride, log2 (`qpc.log_rq_stride` 0: 16 bytes).
pub const RQ_MIN_WQE_SHIFT: u32 = 4;
/// Data segment size (`struct mlx5_wqe_data_seg`).
const DATA_SEG: u64 = 16;

/// Transport of the QP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpKind {
    /// Reliable connected.
    Rc,
    /// Unreliable connected.
    Uc,
    /// Unreliable datagram.
    Ud,
    /// XRC initiator (send only: never a receive queue of its own).
    XrcIni,
}

/// Device capabilities create_qp looks at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QpCaps {
    /// Cap `log_max_qp_sz`.
    pub log_max_qp_sz: u8,
    /// Cap `max_wqe_sz_sq`.
    pub max_wqe_sz_sq: u32,
    /// Cap `max_wqe_sz_rq`.
    pub max_wqe_sz_rq: u32,
    /// Cap `sctr_data_cqe`.
    pub sctr_data_cqe: bool,
    /// Cap `qp_packet_based`.
    pub qp_packet_based: bool,
    /// log2 of the host page size.
    pub page_shift: u32,
}

/// What the core's `ib_qp_init_attr` says that the request depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpAttr {
    /// Transport.
    pub kind: QpKind,
    /// `cap.max_recv_wr`.
    pub max_recv_wr: u32,
    /// The QP receives from an SRQ (no RQ of its own).
    pub srq: bool,
}

/// Where the QP's doorbells go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpUar {
    /// A static bfreg of the context, picked by `BfregInfo::alloc`.
    AllocStatic,
    /// Dynamic bfreg `n` (`MLX5_QP_FLAG_BFREG_INDEX`), mapped by
    /// `BfregInfo::uar_index(n, .., true)`.
    DynamicBfreg(u32),
    /// This UAR index (`MLX5_QP_FLAG_UAR_PAGE_INDEX`).
    UarPage(u32),
}

/// A create_qp request that passed every check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpPlan {
    /// Accepted `MLX5_QP_FLAG_*` (upstream `flags_en`).
    pub flags: u32,
    /// User index (`MLX5_IB_DEFAULT_UIDX` with CQE version 0).
    pub uidx: u32,
    /// The QP has its own RQ.
    pub has_rq: bool,
    /// RQ WQEs.
    pub rq_wqe_cnt: u32,
    /// log2 RQ WQE size.
    pub rq_wqe_shift: u32,
    /// Scatter entries per RQ WQE.
    pub rq_max_gs: u32,
    /// SQ basic blocks.
    pub sq_wqe_cnt: u32,
    /// Byte offset of the SQ in the buffer (the RQ comes first).
    pub sq_offset: u32,
    /// Buffer length (0: no buffer).
    pub buf_size: u32,
    /// Buffer start.
    pub buf_addr: u64,
    /// Doorbell record.
    pub db_addr: u64,
    /// UAR.
    pub uar: QpUar,
    /// ECE options asked for: not written to the device (upstream writes them with
    /// cap `ece_support`); the response's `ece_options` stays 0, which tells the
    /// library no ECE was set.
    pub ece_options: u32,
}

/// `v << shift` into an `int`, as upstream's `check_shl_overflow`: `None` when the
/// shift is 32 or more, `v` is negative as an `int`, or the result is.
fn shl_int(v: u32, shift: u32) -> Option<u32> {
    let max = i32::MAX as u32;
    if shift >= 32 || v > max {
        return None;
    }
    let r = u64::from(v) << shift;
    u32::try_from(r).ok().filter(|&r| r <= max)
}

/// `flags` after `process_vendor_flags`: the accepted ones, or the error.
fn vendor_flags(flags: u32, kind: QpKind, caps: &QpCaps) -> Result<u32, UabiError> {
    if flags & (QP_FLAG_TYPE_DCI | QP_FLAG_TYPE_DCT) != 0 {
        return Err(UabiError::notsupp(Reason::Unsupported("DC QP")));
    }
    let mut rest = flags;
    let mut en = 0;
    let mut take = |flag: u32, cond: bool, rest: &mut u32| {
        if *rest & flag != 0 && cond {
            en |= flag;
            *rest &= !flag;
        }
    };
    take(QP_FLAG_SIGNATURE, true, &mut rest);
    take(QP_FLAG_SCATTER_CQE, caps.sctr_data_cqe, &mut rest);
    take(QP_FLAG_ALLOW_SCATTER_CQE, caps.sctr_data_cqe, &mut rest);
    if !caps.sctr_data_cqe {
        rest &= !(QP_FLAG_SCATTER_CQE | QP_FLAG_ALLOW_SCATTER_CQE);
    }
    if kind == QpKind::Rc {
        take(
            QP_FLAG_PACKET_BASED_CREDIT_MODE,
            caps.qp_packet_based,
            &mut rest,
        );
    }
    take(QP_FLAG_BFREG_INDEX, true, &mut rest);
    take(QP_FLAG_UAR_PAGE_INDEX, true, &mut rest);
    if rest != 0 {
        return Err(UabiError::inval(Reason::UnknownFlags {
            bits: u64::from(rest),
        }));
    }
    Ok(en)
}

/// Checks a create_qp: `inbuf` the driver request as user space gave it,
/// `cqe_version` the context's.
pub fn parse_create_qp(
    attr: &QpAttr,
    inbuf: &[u8],
    caps: &QpCaps,
    cqe_version: u8,
) -> Result<QpPlan, UabiError> {
    let min = core::mem::offset_of!(CreateQp, ece_options);
    let last = core::mem::offset_of!(CreateQp, reserved);
    if inbuf.len() < min {
        return Err(UabiError::inval(Reason::BadLength {
            len: inbuf.len(),
            min,
        }));
    }
    if let Some(offset) = udata::first_nonzero_from(inbuf, last) {
        return Err(UabiError::inval(Reason::TrailingNotZero { offset }));
    }
    let req: CreateQp = udata::copy_in(inbuf, min, Errno::EINVAL)?;
    let flags = vendor_flags(req.flags, attr.kind, caps)?;
    let uidx = user_index(true, cqe_version, req.uidx)?;

    let max_wqes = 1u64
        .checked_shl(u32::from(caps.log_max_qp_sz))
        .unwrap_or(u64::MAX);
    let range = |what| UabiError::inval(Reason::OutOfRange(what));
    if u64::from(attr.max_recv_wr) > max_wqes {
        return Err(range("max_recv_wr"));
    }
    // Upstream `qp_has_rq`: an XRC initiator has none, whatever the request.
    let has_rq = attr.kind != QpKind::XrcIni && !attr.srq && attr.max_recv_wr != 0;
    let (rq_wqe_cnt, rq_wqe_shift, rq_max_gs) = if has_rq {
        let sig = u64::from(flags & QP_FLAG_SIGNATURE != 0);
        // The RQ geometry the QP context takes (PRM `qpc.log_rq_stride` counts from
        // 16-byte strides, `log_rq_size` is a log): a stride of at least 16 bytes and
        // at most `max_wqe_sz_rq`, a power-of-two count of at least one and at most
        // `1 << log_max_qp_sz` (upstream passes these on unchecked, the stride minus
        // 4 wrapping and the count rounded down by `ilog2`).
        if req.rq_wqe_shift < RQ_MIN_WQE_SHIFT
            || u64::from(req.rq_wqe_shift) >= 32
            || (1u64 << req.rq_wqe_shift) > u64::from(caps.max_wqe_sz_rq)
        {
            return Err(range("rq_wqe_shift"));
        }
        if req.rq_wqe_count == 0
            || !req.rq_wqe_count.is_power_of_two()
            || u64::from(req.rq_wqe_count) > max_wqes
        {
            return Err(range("rq_wqe_count"));
        }
        let wqe = shl_int(1, req.rq_wqe_shift).ok_or(range("rq_wqe_shift"))?;
        let segs = u64::from(wqe) / DATA_SEG;
        if segs < sig {
            return Err(range("rq_wqe_shift"));
        }
        let gs = u32::try_from(segs - sig).map_err(|_| range("rq_wqe_shift"))?;
        (req.rq_wqe_count, req.rq_wqe_shift, gs)
    } else {
        if req.rq_wqe_count != 0 || req.rq_wqe_shift != 0 {
            return Err(range("rq_wqe_count"));
        }
        (0, 0, 0)
    };
    if u64::from(req.sq_wqe_count) > max_wqes {
        return Err(range("sq_wqe_count"));
    }
    let uar = match flags & (QP_FLAG_UAR_PAGE_INDEX | QP_FLAG_BFREG_INDEX) {
        0 => QpUar::AllocStatic,
        QP_FLAG_UAR_PAGE_INDEX => QpUar::UarPage(req.bfreg_index),
        QP_FLAG_BFREG_INDEX => QpUar::DynamicBfreg(req.bfreg_index),
        _ => return Err(range("UAR flags")),
    };
    let sq_offset = shl_int(rq_wqe_cnt, rq_wqe_shift).ok_or(range("rq size"))?;
    if SEND_WQE_BB > caps.max_wqe_sz_sq {
        return Err(range("max_wqe_sz_sq"));
    }
    if req.sq_wqe_count != 0 && !req.sq_wqe_count.is_power_of_two() {
        return Err(range("sq_wqe_count"));
    }
    let sq_size = shl_int(req.sq_wqe_count, 6).ok_or(range("sq size"))?;
    let buf_size = sq_offset
        .checked_add(sq_size)
        .filter(|&s| s <= i32::MAX as u32)
        .ok_or(range("buffer size"))?;
    if buf_size != 0 {
        check_addrs(req.buf_addr, None, caps.page_shift)?;
    }
    check_addrs(0, Some(req.db_addr), caps.page_shift)?;
    Ok(QpPlan {
        flags,
        uidx,
        has_rq,
        rq_wqe_cnt,
        rq_wqe_shift,
        rq_max_gs,
        sq_wqe_cnt: req.sq_wqe_count,
        sq_offset,
        buf_size,
        buf_addr: req.buf_addr,
        db_addr: req.db_addr,
        uar,
        ece_options: req.ece_options,
    })
}

/// A modify_qp driver request that passed the checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModifyQpRequest {
    /// Out-of-order data placement asked for (`MLX5_IB_MODIFY_QP_OOO_DP`).
    pub ooo_dp: bool,
    /// Packet pacing burst (raw packet QPs).
    pub burst: BurstInfo,
    /// ECE options.
    pub ece_options: u32,
}

/// Checks the driver part of modify_qp as upstream `mlx5_ib_modify_qp`: none (0
/// bytes, what libmlx5 sends without ECE) → `None`; shorter than `ece_options`'s end
/// (16 bytes) → `EINVAL`; non-zero bytes past it, `comp_mask` bits other than
/// OOO_DP, a non-zero `burst_info.reserved`, or OOO_DP without `ooo_cap` (GENERAL_2
/// `dp_ordering_force` and `dp_ordering_ooo_all_<type>`) → `EOPNOTSUPP`.
pub fn parse_modify_qp(inbuf: &[u8], ooo_cap: bool) -> Result<Option<ModifyQpRequest>, UabiError> {
    if inbuf.is_empty() {
        return Ok(None);
    }
    let req: ModifyQp = udata::copy_validate_in(inbuf, core::mem::size_of::<ModifyQp>())?;
    if req.comp_mask & !IB_MODIFY_QP_OOO_DP != 0 {
        return Err(UabiError::notsupp(Reason::UnknownCompMask {
            bits: u64::from(req.comp_mask & !IB_MODIFY_QP_OOO_DP),
        }));
    }
    if req.burst_info.reserved != 0 {
        return Err(UabiError::notsupp(Reason::ReservedNotZero));
    }
    let ooo_dp = req.comp_mask & IB_MODIFY_QP_OOO_DP != 0;
    if ooo_dp && !ooo_cap {
        return Err(UabiError::notsupp(Reason::Unsupported(
            "out-of-order placement",
        )));
    }
    Ok(Some(ModifyQpRequest {
        ooo_dp,
        burst: req.burst_info,
        ece_options: req.ece_options,
    }))
}

/// modify_qp's response after a successful transition of a user QP: `ece_options`
/// (the device's answer, else the request's with cap `ece_support`, else 0),
/// `response_length` 16; upstream writes it only into a buffer of at least 16 bytes
/// (`None` otherwise, nothing written).
pub fn modify_qp_response(ece_options: u32, outlen: usize) -> Option<ModifyQpResp> {
    let len = core::mem::size_of::<ModifyQpResp>();
    (outlen >= len).then(|| ModifyQpResp {
        response_length: u32::try_from(len).unwrap_or(u32::MAX),
        ece_options,
        ..Default::default()
    })
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_abi_qp))]
mod tests {
    use super::*;
    use crate::ib::abi::consts::IB_DEFAULT_UIDX;

    #[test]
    fn shifts_overflow_like_check_shl_overflow_into_int() {
        assert_eq!(shl_int(1, 30), Some(1 << 30));
        assert_eq!(shl_int(1, 31), None); // negative int
        assert_eq!(shl_int(0, 31), Some(0));
        assert_eq!(shl_int(0, 32), None); // shift as wide as the type
        assert_eq!(shl_int(0x8000_0000, 0), None); // negative operand
        assert_eq!(shl_int(3, 29), Some(3 << 29));
        assert_eq!(shl_int(3, 30), None);
        assert_eq!(shl_int(512, 6), Some(32768));
    }

    #[test]
    fn modify_qp_as_upstream() {
        use zerocopy::IntoBytes;
        assert_eq!(parse_modify_qp(&[], false), Ok(None));
        let mut m = ModifyQp {
            ece_options: 0x1000_0001,
            ..Default::default()
        };
        let r = parse_modify_qp(m.as_bytes(), false).unwrap().unwrap();
        assert_eq!((r.ooo_dp, r.ece_options), (false, 0x1000_0001));
        assert_eq!(
            parse_modify_qp(&m.as_bytes()[..15], false)
                .unwrap_err()
                .errno,
            Errno::EINVAL
        );
        let mut long = [0u8; 20];
        long[..16].copy_from_slice(m.as_bytes());
        assert!(parse_modify_qp(&long, false).is_ok());
        long[19] = 1;
        assert_eq!(
            parse_modify_qp(&long, false).unwrap_err().errno,
            Errno::EOPNOTSUPP
        );
        m.comp_mask = IB_MODIFY_QP_OOO_DP;
        assert_eq!(
            parse_modify_qp(m.as_bytes(), false).unwrap_err().errno,
            Errno::EOPNOTSUPP
        );
        assert!(parse_modify_qp(m.as_bytes(), true).unwrap().unwrap().ooo_dp);
        m.comp_mask = 2;
        assert_eq!(
            parse_modify_qp(m.as_bytes(), true).unwrap_err().errno,
            Errno::EOPNOTSUPP
        );
        m.comp_mask = 0;
        m.burst_info.reserved = 1;
        assert_eq!(
            parse_modify_qp(m.as_bytes(), true).unwrap_err().errno,
            Errno::EOPNOTSUPP
        );
        assert_eq!(modify_qp_response(5, 15), None);
        let r = modify_qp_response(5, 16).unwrap();
        assert_eq!((r.response_length, r.ece_options, r.dctn), (16, 5, 0));
    }

    #[test]
    fn user_index_rules() {
        assert_eq!(user_index(true, 0, IB_DEFAULT_UIDX), Ok(IB_DEFAULT_UIDX));
        assert!(user_index(true, 0, 0).is_err());
        assert_eq!(user_index(false, 0, 7), Ok(IB_DEFAULT_UIDX));
        assert!(user_index(false, 1, 7).is_err());
        assert_eq!(user_index(true, 1, 7), Ok(7));
        assert!(user_index(true, 1, IB_DEFAULT_UIDX).is_err());
        assert!(user_index(true, 1, 1 << 24).is_err());
    }
}
