// SPDX-License-Identifier: GPL-2.0

//! create_qp's QP context and, for kernel QPs, the work queue sizes, as upstream
//! `create_kernel_qp` / `create_user_qp`, `set_rq_size`, `calc_sq_size`,
//! `sq_overhead`, `calc_send_wqe` and `get_send_sge` (`qp.c`) compute them.
//!
//! User QPs take their sizes from the request ([`super::abi::qp::parse_create_qp`]);
//! both kinds get their context from [`create_qpc`]: service type, PM state migrated,
//! PD, RQ stride and size (RQ first in the buffer), SQ size or `no_sq`, the receive
//! queue type (SRQ, zero-length or regular), CQs, SRQ, doorbell record, user index
//! (CQE version 1), UAR page, buffer page size and offset. XRC domains and the
//! default SRQ upstream names for QPs without one (`devr->xrcdn1`, `devr->s1`) are
//! not used: a QP without an SRQ names none (`xrcd` 0, `srqn` 0). The timestamp
//! format is 0 (free running), what upstream picks when the RoCE caps' `qp_ts_format`
//! is 0, as on an InfiniBand function.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use super::qp_modify::{errno, QpType, QPC_BYTES};
use crate::ifc::{field::Field, qp::qpc};

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

/// `qpc.rq_type` (`MLX5_NON_ZERO_RQ`, `MLX5_SRQ_RQ`, `MLX5_ZERO_LEN_RQ`).
pub mod rq_type {
    /// The QP's own RQ.
    pub const REGULAR: u8 = 0;
    /// Receives from an SRQ.
    pub const SRQ: u8 = 1;
    /// No receive queue.
    pub const ZERO_LEN: u8 = 3;
}

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

/// Work queue geometry of a QP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WqSizes {
    /// RQ WQEs (0: no RQ).
    pub rq_wqe_cnt: u32,
    /// log2 RQ WQE size.
    pub rq_wqe_shift: u32,
    /// Scatter entries per receive.
    pub rq_max_gs: u32,
    /// SQ basic blocks (0: no SQ).
    pub sq_wqe_cnt: u32,
    /// Send WRs that fit (`sq.max_post`).
    pub sq_max_post: u32,
    /// Gather entries per send.
    pub sq_max_gs: u32,
    /// Inline bytes per send.
    pub max_inline: u32,
}

impl WqSizes {
    /// Bytes of the RQ (the SQ follows at this offset).
    pub fn rq_bytes(&self) -> u32 {
        self.rq_wqe_cnt << self.rq_wqe_shift
    }

    /// Bytes of the SQ.
    pub fn sq_bytes(&self) -> u32 {
        self.sq_wqe_cnt * SEND_WQE_BB
    }
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
) -> Result<(u32, u32, u32), i32> {
    if u64::from(cap.max_recv_wr) > 1u64 << caps.log_max_qp_sz.min(63) {
        return Err(errno::EINVAL);
    }
    if !has_rq {
        return Ok((0, 0, 0));
    }
    let sig = if signature { SIG_SEG } else { 0 };
    let wqe = u64::from(sig) + u64::from(cap.max_recv_sge) * u64::from(DATA_SEG);
    let wqe = pow2_ceil(wqe.max(1)).ok_or(errno::EINVAL)?;
    let wq = pow2_ceil(u64::from(cap.max_recv_wr))
        .and_then(|n| n.checked_mul(wqe))
        .ok_or(errno::EINVAL)?
        .max(u64::from(SEND_WQE_BB));
    let cnt = u32::try_from(wq / wqe).map_err(|_| errno::EINVAL)?;
    if wqe > u64::from(caps.max_wqe_sz_rq) {
        return Err(errno::EINVAL);
    }
    let shift = wqe.trailing_zeros();
    let gs = (1u32 << shift) / DATA_SEG - u32::from(signature);
    Ok((cnt, shift, gs))
}

/// `calc_sq_size` of a kernel QP: (basic blocks, send WRs, gather entries, inline
/// bytes); all 0 without send WRs. `EINVAL` for a WQE above `max_wqe_sz_sq`,
/// `ENOMEM` for a queue above `log_max_qp_sz` or fewer gather entries than asked.
pub fn kernel_sq_size(ty: QpType, cap: &QpCap, caps: &SizeCaps) -> Result<WqSizes, i32> {
    const ENOMEM: i32 = 12;
    let mut s = WqSizes::default();
    if cap.max_send_wr == 0 {
        return Ok(s);
    }
    let wqe = send_wqe(ty, cap);
    if wqe > u64::from(caps.max_wqe_sz_sq) {
        return Err(errno::EINVAL);
    }
    let wqe32 = u32::try_from(wqe).map_err(|_| errno::EINVAL)?;
    s.max_inline = wqe32 - sq_overhead(ty) - INLINE_SEG;
    let wq = pow2_ceil(u64::from(cap.max_send_wr) * wqe).ok_or(ENOMEM)?;
    let cnt = wq / u64::from(SEND_WQE_BB);
    if cnt > 1u64 << caps.log_max_qp_sz.min(63) {
        return Err(ENOMEM);
    }
    s.sq_wqe_cnt = u32::try_from(cnt).map_err(|_| ENOMEM)?;
    s.sq_max_gs = send_sge(ty, wqe32);
    if s.sq_max_gs < cap.max_send_sge {
        return Err(ENOMEM);
    }
    s.sq_max_post = u32::try_from(wq / wqe).map_err(|_| ENOMEM)?;
    Ok(s)
}

/// Everything the QP context of CREATE_QP names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CreateQpc {
    /// Service type (`QpType::st`).
    pub st: u8,
    /// PD number (0 for none: UMR).
    pub pdn: u32,
    /// Queue sizes.
    pub wq: WqSizes,
    /// `qpc.rq_type`.
    pub rq_type: u8,
    /// Send CQ.
    pub cqn_snd: Option<u32>,
    /// Receive CQ.
    pub cqn_rcv: Option<u32>,
    /// SRQ.
    pub srqn: Option<u32>,
    /// Doorbell record.
    pub dbr_addr: u64,
    /// User index (CQE version 1 only).
    pub user_index: Option<u32>,
    /// UAR page of the doorbells.
    pub uar_page: u32,
    /// log2 buffer page size minus 12.
    pub log_page_size: u8,
    /// Buffer start within its first page, in 64-byte units.
    pub page_offset: u8,
    /// `MLX5_QP_FLAG_SIGNATURE`.
    pub wq_signature: bool,
    /// Block multicast loopback.
    pub block_lb_mc: bool,
}

/// `qpc.rq_type` of a QP (`get_rx_type`).
pub fn rx_type(ty: QpType, srq: bool, has_rq: bool) -> u8 {
    if srq || matches!(ty, QpType::XrcIni | QpType::XrcTgt) {
        rq_type::SRQ
    } else if !has_rq {
        rq_type::ZERO_LEN
    } else {
        rq_type::REGULAR
    }
}

fn set(ctx: &mut [u8], f: impl Into<Field>, v: u64) {
    let f = f.into();
    let v = if f.bits >= 64 {
        v
    } else {
        v & ((1u64 << f.bits) - 1)
    };
    let _ = f.set(ctx, v);
}

/// The QP context of CREATE_QP.
pub fn create_qpc(p: &CreateQpc) -> [u8; QPC_BYTES] {
    let mut ctx = [0u8; QPC_BYTES];
    let c = &mut ctx[..];
    set(c, qpc::ST, p.st.into());
    set(c, qpc::PM_STATE, 3);
    set(c, qpc::PD, p.pdn.into());
    set(c, qpc::WQ_SIGNATURE, p.wq_signature.into());
    set(c, qpc::BLOCK_LB_MC, p.block_lb_mc.into());
    if p.wq.rq_wqe_cnt != 0 {
        set(
            c,
            qpc::LOG_RQ_STRIDE,
            u64::from(p.wq.rq_wqe_shift.saturating_sub(4)),
        );
        set(c, qpc::LOG_RQ_SIZE, p.wq.rq_wqe_cnt.ilog2().into());
    }
    set(c, qpc::TS_FORMAT, 0);
    set(c, qpc::RQ_TYPE, p.rq_type.into());
    if p.wq.sq_wqe_cnt != 0 {
        set(c, qpc::LOG_SQ_SIZE, p.wq.sq_wqe_cnt.ilog2().into());
    } else {
        set(c, qpc::NO_SQ, 1);
    }
    if let Some(n) = p.srqn {
        set(c, qpc::SRQN_RMPN_XRQN, n.into());
    }
    if let Some(n) = p.cqn_snd {
        set(c, qpc::CQN_SND, n.into());
    }
    if let Some(n) = p.cqn_rcv {
        set(c, qpc::CQN_RCV, n.into());
    }
    set(c, qpc::DBR_ADDR, p.dbr_addr);
    if let Some(u) = p.user_index {
        set(c, qpc::USER_INDEX, u.into());
    }
    set(c, qpc::UAR_PAGE, p.uar_page.into());
    set(c, qpc::LOG_PAGE_SIZE, p.log_page_size.into());
    set(c, qpc::PAGE_OFFSET, p.page_offset.into());
    ctx
}
