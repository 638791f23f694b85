// SPDX-License-Identifier: GPL-2.0

//! What the device offers QPs ([`QpEnv`]), read once from its capabilities at
//! registration: the limits create_qp and modify_qp check against, kernel QPs' queue
//! sizes, their UAR and BlueFlame register, the REG_MR fence.

use crate::cmd::commands::{gen_cap, AtomicCaps, GeneralCaps};
use crate::ib::abi::qp::QpCaps;
use crate::ib::qp::modify::{atomic_mode, ModifyCaps};
use crate::ib::qp::size::SizeCaps;
use crate::ifc::wqe::vals::{
    FENCE_MODE_INITIATOR_SMALL, FENCE_MODE_NONE, FENCE_MODE_STRONG_ORDERING,
};

/// What the device offers QPs, read once.
#[derive(Clone, Copy)]
pub(crate) struct QpEnv {
    /// For create_qp's checks.
    pub(crate) create: QpCaps,
    /// For modify_qp's checks.
    pub(crate) modify: ModifyCaps,
    /// Cap `cqe_version` is 1: contexts carry the user index.
    pub(crate) cqe_v1: bool,
    /// For kernel QPs' queue sizes.
    pub(crate) size: SizeCaps,
    /// The core's UAR page, which kernel QPs ring, and its offset in BAR 0 (`None`: no
    /// kernel QPs).
    pub(crate) kernel_uar: Option<(u32, usize)>,
    /// Bytes of one half of a BlueFlame register (upstream `bf->buf_size`: half of
    /// `1 << log_bf_reg_size`); kernel QPs' doorbells alternate between the halves.
    pub(crate) bf_half: usize,
    /// Fence mode of REG_MR WQEs (upstream `mlx5_get_umr_fence` of cap `umr_fence`).
    pub(crate) umr_fence: u8,
    /// Cap `xrc`: XRC QPs are created (upstream `check_qp_type`).
    pub(crate) xrc: bool,
    /// Cap `block_lb_mc`: the create flag that blocks multicast loopback is taken.
    pub(crate) block_lb_mc: bool,
}

impl QpEnv {
    /// From the current general caps, the atomic caps (`None` without cap `atomic`)
    /// and the port's table lengths. Atomic mode: upstream `get_atomic_mode` of
    /// `atomic_operations` and `atomic_size_qp`; without one, remote atomics are
    /// refused (`EOPNOTSUPP`, as upstream).
    pub(crate) fn new(
        caps: &GeneralCaps,
        atomic: Option<&AtomicCaps>,
        page_shift: u32,
        num_ports: u8,
        pkey_tbl_len: u16,
        gid_tbl_len: u32,
        kernel_uar: Option<(u32, usize)>,
    ) -> Self {
        Self {
            create: QpCaps::from_caps(caps, page_shift),
            modify: ModifyCaps {
                num_ports,
                pkey_tbl_len,
                gid_tbl_len,
                log_max_ra_res_qp: caps.get(gen_cap::LOG_MAX_RA_RES_QP),
                log_max_ra_req_qp: caps.get(gen_cap::LOG_MAX_RA_REQ_QP),
                log_max_msg: caps.get(gen_cap::LOG_MAX_MSG),
                stat_rate_support: caps.get(gen_cap::STAT_RATE_SUPPORT),
                atomic_mode: atomic
                    .and_then(|a| atomic_mode(caps.get(gen_cap::ATOMIC), a.operations, a.size_qp)),
            },
            cqe_v1: caps.get(gen_cap::CQE_VERSION) == 1,
            size: SizeCaps {
                log_max_qp_sz: caps.get(gen_cap::LOG_MAX_QP_SZ),
                max_wqe_sz_sq: u32::from(caps.get(gen_cap::MAX_WQE_SZ_SQ)),
                max_wqe_sz_rq: u32::from(caps.get(gen_cap::MAX_WQE_SZ_RQ)),
            },
            kernel_uar,
            xrc: caps.get(gen_cap::XRC),
            block_lb_mc: caps.get(gen_cap::BLOCK_LB_MC),
            bf_half: (1usize << caps.get(gen_cap::LOG_BF_REG_SIZE).min(16)) / 2,
            // `MLX5_CAP_UMR_FENCE_NONE` 0, `_SMALL` 1, else strong ordering.
            umr_fence: match caps.get(gen_cap::UMR_FENCE) {
                0 => FENCE_MODE_NONE,
                1 => FENCE_MODE_INITIATOR_SMALL,
                _ => FENCE_MODE_STRONG_ORDERING,
            },
        }
    }
}
