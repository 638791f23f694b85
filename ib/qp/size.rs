// SPDX-License-Identifier: GPL-2.0

//! Work queue sizes of kernel QPs, as upstream `set_rq_size` (without a request),
//! `calc_sq_size`, `sq_overhead`, `calc_send_wqe` and `get_send_sge` (`qp.c`)
//! compute them from a consumer's `ib_qp_init_attr.cap`.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::errno::Errno;
use crate::ib::qp::create::WqSizes;
use crate::ib::qp::modify::QpType;

/// `MLX5_SEND_WQE_BB`.
pub const SEND_WQE_BB: u32 = 64;
/// `struct mlx5_wqe_data_seg`.
const DATA_SEG: u32 = 16;
/// `struct mlx5_wqe_ctrl_seg`.
const CTRL_SEG: u32 = 16;
/// `struct mlx5_wqe_raddr_seg`.
const RADDR_SEG: u32 = 16;
/// `struct mlx5_wqe_atomic_seg`.
const ATOMIC_SEG: u32 = 16;
/// `struct mlx5_wqe_umr_ctrl_seg`.
const UMR_CTRL_SEG: u32 = 48;
/// `struct mlx5_mkey_seg`.
const MKEY_SEG: u32 = 64;
/// `struct mlx5_wqe_datagram_seg` (an `mlx5_av`).
const DATAGRAM_SEG: u32 = 48;
/// `struct mlx5_wqe_inline_seg`.
const INLINE_SEG: u32 = 4;
/// `struct mlx5_wqe_xrc_seg`.
const XRC_SEG: u32 = 16;
/// `struct mlx5_wqe_signature_seg`.
const SIG_SEG: u32 = 16;
/// `MLX5_IB_SQ_UMR_INLINE_THRESHOLD / MLX5_IB_UMR_OCTOWORD`.
const UMR_INLINE_OCTOWORDS: u32 = 64 / 16;

/// Device caps the sizes are checked against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SizeCaps {
    /// Cap `log_max_qp_sz`.
    pub log_max_qp_sz: u8,
    /// Cap `max_wqe_sz_sq`.
    pub max_wqe_sz_sq: u32,
    /// Cap `max_wqe_sz_rq`.
    pub max_wqe_sz_rq: u32,
}

/// The `cap` of `ib_qp_init_attr` a kernel consumer asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QpCap {
    /// `max_send_wr`.
    pub max_send_wr: u32,
    /// `max_recv_wr`.
    pub max_recv_wr: u32,
    /// `max_send_sge`.
    pub max_send_sge: u32,
    /// `max_recv_sge`.
    pub max_recv_sge: u32,
    /// `max_inline_data`.
    pub max_inline_data: u32,
}

/// `sq_overhead`: the segments every send WQE of `ty` carries besides its data.
fn sq_overhead(ty: QpType) -> u32 {
    let rc =
        CTRL_SEG + (ATOMIC_SEG + RADDR_SEG).max(UMR_CTRL_SEG + MKEY_SEG + UMR_INLINE_OCTOWORDS);
    match ty {
        QpType::XrcIni => XRC_SEG + rc,
        QpType::Rc => rc,
        QpType::XrcTgt => 0,
        QpType::Uc => CTRL_SEG + RADDR_SEG.max(UMR_CTRL_SEG + MKEY_SEG),
        QpType::Ud | QpType::Smi | QpType::Gsi => CTRL_SEG + DATAGRAM_SEG,
    }
}

fn align_bb(v: u64) -> u64 {
    v.div_ceil(u64::from(SEND_WQE_BB)) * u64::from(SEND_WQE_BB)
}

/// `calc_send_wqe`.
fn send_wqe(ty: QpType, cap: &QpCap) -> u64 {
    let size = u64::from(sq_overhead(ty));
    let inl = if cap.max_inline_data != 0 {
        size + u64::from(INLINE_SEG) + u64::from(cap.max_inline_data)
    } else {
        0
    };
    let size = size + u64::from(cap.max_send_sge) * u64::from(DATA_SEG);
    align_bb(inl.max(size))
}

/// `get_send_sge` (upstream's last `min_t` divides only the overhead; kept).
fn send_sge(ty: QpType, wqe: u32) -> u32 {
    let ovh = sq_overhead(ty);
    let max = match ty {
        QpType::Rc => (wqe.min(512) - CTRL_SEG - RADDR_SEG) / DATA_SEG,
        QpType::XrcIni => (wqe.min(512) - CTRL_SEG - XRC_SEG - RADDR_SEG) / DATA_SEG,
        _ => (wqe - ovh) / DATA_SEG,
    };
    max.min(wqe - ovh / DATA_SEG)
}

fn pow2_ceil(v: u64) -> Option<u64> {
    v.checked_next_power_of_two()
}

/// `set_rq_size` of a kernel QP (no request): `has_rq` as `qp_has_rq`.
pub fn kernel_rq_size(
    cap: &QpCap,
    has_rq: bool,
    signature: bool,
    caps: &SizeCaps,
) -> Result<(u32, u32, u32), Errno> {
    if u64::from(cap.max_recv_wr) > 1u64 << caps.log_max_qp_sz.min(63) {
        return Err(Errno::EINVAL);
    }
    if !has_rq {
        return Ok((0, 0, 0));
    }
    let sig = if signature { SIG_SEG } else { 0 };
    let wqe = u64::from(sig) + u64::from(cap.max_recv_sge) * u64::from(DATA_SEG);
    let wqe = pow2_ceil(wqe.max(1)).ok_or(Errno::EINVAL)?;
    let wq = pow2_ceil(u64::from(cap.max_recv_wr))
        .and_then(|n| n.checked_mul(wqe))
        .ok_or(Errno::EINVAL)?
        .max(u64::from(SEND_WQE_BB));
    let cnt = u32::try_from(wq / wqe).map_err(|_| Errno::EINVAL)?;
    if wqe > u64::from(caps.max_wqe_sz_rq) {
        return Err(Errno::EINVAL);
    }
    let shift = wqe.trailing_zeros();
    let gs = (1u32 << shift) / DATA_SEG - u32::from(signature);
    Ok((cnt, shift, gs))
}

/// `calc_sq_size` of a kernel QP: (basic blocks, send WRs, gather entries, inline
/// bytes); all 0 without send WRs. `EINVAL` for a WQE above `max_wqe_sz_sq`,
/// `ENOMEM` for a queue above `log_max_qp_sz` or fewer gather entries than asked.
pub fn kernel_sq_size(ty: QpType, cap: &QpCap, caps: &SizeCaps) -> Result<WqSizes, Errno> {
    let mut s = WqSizes::default();
    if cap.max_send_wr == 0 {
        return Ok(s);
    }
    let wqe = send_wqe(ty, cap);
    if wqe > u64::from(caps.max_wqe_sz_sq) {
        return Err(Errno::EINVAL);
    }
    let wqe32 = u32::try_from(wqe).map_err(|_| Errno::EINVAL)?;
    s.max_inline = wqe32 - sq_overhead(ty) - INLINE_SEG;
    let wq = pow2_ceil(u64::from(cap.max_send_wr) * wqe).ok_or(Errno::ENOMEM)?;
    let cnt = wq / u64::from(SEND_WQE_BB);
    if cnt > 1u64 << caps.log_max_qp_sz.min(63) {
        return Err(Errno::ENOMEM);
    }
    s.sq_wqe_cnt = u32::try_from(cnt).map_err(|_| Errno::ENOMEM)?;
    s.sq_max_gs = send_sge(ty, wqe32);
    if s.sq_max_gs < cap.max_send_sge {
        return Err(Errno::ENOMEM);
    }
    s.sq_max_post = u32::try_from(wq / wqe).map_err(|_| Errno::ENOMEM)?;
    Ok(s)
}
