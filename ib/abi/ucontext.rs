// SPDX-License-Identifier: GPL-2.0

//! alloc_ucontext (GET_CONTEXT): the request of libmlx5, the bfreg plan, the
//! response, as upstream `mlx5_ib_alloc_ucontext` / `set_ucontext_resp` (`main.c`).
//!
//! libmlx5 56.1 sends the 32-byte v2 request with `lib_caps` = 4K_UAR | DYN_UAR and
//! `flags` = DEVX; when that fails it retries with 24 and then 16 bytes, and without
//! DEVX. The checks run in upstream's order so each failure has upstream's errno:
//! 1. length: exactly 8 (v0) or at least 16 (v2), else `EINVAL`; bytes past the
//!    32 we know are ignored, zero or not, as upstream 7.3 (no
//!    `ib_is_udata_cleared`);
//! 2. `flags` other than DEVX → `EOPNOTSUPP`; `comp_mask` (no bit defined) or a
//!    reserved field not zero → `EOPNOTSUPP`;
//! 3. `total_num_bfregs` rounded up to 2; `num_low_latency_bfregs` ≥ that → `EINVAL`;
//! 4. DEVX asked for and not offered → [`Reason::Devx`], `EINVAL` (upstream
//!    `mlx5_ib_devx_create` with `log_max_uctx` 0), so the library retries without;
//! 5. without DYN_UAR: `calc_total_bfregs` ([`BfregInfo::plan_static`]).

use super::bfreg::{align_u32, BfregInfo};
use super::consts::{
    ADAPTER_PAGE_SHIFT, ALLOC_UCTX_DEVX, LIB_CAP_4K_UAR, LIB_CAP_DYN_UAR, NON_FP_BFREGS_PER_UAR,
    UCTX_RESP_MASK_CORE_CLOCK_OFFSET, UCTX_RESP_MASK_DUMP_FILL_MKEY, UCTX_RESP_MASK_ECE,
    UCTX_RESP_MASK_MKEY_UPDATE_TAG, UCTX_RESP_MASK_REAL_TIME_TS, UCTX_RESP_MASK_SQD2RTS,
    USER_CMDS_SUPP_UHW_CREATE_AH, USER_CMDS_SUPP_UHW_QUERY_DEVICE,
};
use super::error::{Reason, UabiError};
use super::layout::{AllocUcontextReq, AllocUcontextReqV2, AllocUcontextResp};
use super::udata;
use crate::errno::Errno;

/// Offset of `internal_timer_h` in the initialization segment (`struct mlx5_init_seg`).
const INTERNAL_TIMER_H: u64 = 0x1000;

/// A well-formed alloc_ucontext request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UctxRequest {
    /// 0 (8-byte request) or 2.
    pub ver: u8,
    /// Static bfregs asked for, rounded up to 2 (wrapping in 32 bits as upstream).
    pub total_num_bfregs: u32,
    /// Low-latency bfregs asked for.
    pub num_low_latency_bfregs: u32,
    /// `MLX5_IB_ALLOC_UCTX_DEVX` set.
    pub devx: bool,
    /// Highest CQE version the library handles.
    pub max_cqe_version: u8,
    /// `MLX5_LIB_CAP_*` (unknown bits ignored, as upstream).
    pub lib_caps: u64,
}

/// Parses the driver part of GET_CONTEXT, `inbuf` being exactly what user space gave.
pub fn parse_request(inbuf: &[u8]) -> Result<UctxRequest, UabiError> {
    let v0 = core::mem::size_of::<AllocUcontextReq>();
    let min_v2 = core::mem::offset_of!(AllocUcontextReqV2, max_cqe_version);
    let ver = if inbuf.len() == v0 {
        0
    } else if inbuf.len() >= min_v2 {
        2
    } else {
        return Err(UabiError::inval(Reason::BadLength {
            len: inbuf.len(),
            min: min_v2,
        }));
    };
    // Upstream copies `min(inlen, sizeof(req))` and ignores any bytes after the
    // request (no ib_is_udata_cleared): so does the provider.
    let head = inbuf
        .get(..core::mem::size_of::<AllocUcontextReqV2>())
        .unwrap_or(inbuf);
    let req: AllocUcontextReqV2 = udata::copy_validate_in(head, v0)?;
    if req.flags & !ALLOC_UCTX_DEVX != 0 {
        return Err(UabiError::notsupp(Reason::UnknownFlags {
            bits: u64::from(req.flags & !ALLOC_UCTX_DEVX),
        }));
    }
    if req.comp_mask != 0 {
        return Err(UabiError::notsupp(Reason::UnknownCompMask {
            bits: u64::from(req.comp_mask),
        }));
    }
    if req.reserved0 != 0 || req.reserved1 != 0 || req.reserved2 != 0 {
        return Err(UabiError::notsupp(Reason::ReservedNotZero));
    }
    let total = align_u32(req.total_num_bfregs, NON_FP_BFREGS_PER_UAR);
    if req.num_low_latency_bfregs > total.wrapping_sub(1) {
        return Err(UabiError::inval(Reason::BfregCount));
    }
    Ok(UctxRequest {
        ver,
        total_num_bfregs: total,
        num_low_latency_bfregs: req.num_low_latency_bfregs,
        devx: req.flags & ALLOC_UCTX_DEVX != 0,
        max_cqe_version: req.max_cqe_version,
        lib_caps: req.lib_caps,
    })
}

/// What the device and the host offer a context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UctxDevCaps {
    /// DEVX contexts can be created (cap `log_max_uctx` ≠ 0 and the driver serves
    /// DEVX).
    pub devx: bool,
    /// Cap `uar_4k`.
    pub uar_4k: bool,
    /// log2 of the host page size.
    pub page_shift: u32,
    /// Cap `cqe_version`.
    pub cqe_version: u8,
}

/// What alloc_ucontext sets up for a context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UctxPlan {
    /// bfregs and UAR pages.
    pub bfregs: BfregInfo,
    /// CQE version of the context: min(cap, the library's).
    pub cqe_version: u8,
    /// DEVX context.
    pub devx: bool,
    /// The library's capabilities.
    pub lib_caps: u64,
}

impl UctxRequest {
    /// Steps 4 and 5 of the module doc: DEVX, then the bfreg plan.
    pub fn plan(&self, caps: &UctxDevCaps) -> Result<UctxPlan, UabiError> {
        if self.devx && !caps.devx {
            return Err(UabiError::inval(Reason::Devx));
        }
        let bfregs = if self.lib_caps & LIB_CAP_DYN_UAR != 0 {
            BfregInfo::dynamic(self.ver, self.num_low_latency_bfregs)
        } else {
            BfregInfo::plan_static(
                self.ver,
                self.lib_caps & LIB_CAP_4K_UAR != 0,
                caps.uar_4k,
                caps.page_shift,
                self.total_num_bfregs,
                self.num_low_latency_bfregs,
            )?
        };
        Ok(UctxPlan {
            bfregs,
            cqe_version: caps.cqe_version.min(self.max_cqe_version),
            devx: self.devx,
            lib_caps: self.lib_caps,
        })
    }
}

/// Device values the response reports (from the HCA caps and the host).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UctxRespCaps {
    /// Cap `log_max_qp`.
    pub log_max_qp: u8,
    /// Write combining works (upstream `mlx5_wc_support_get`).
    pub wc: bool,
    /// Cap `log_bf_reg_size`.
    pub log_bf_reg_size: u8,
    /// Host cache line size.
    pub cache_line_size: u32,
    /// Cap `max_wqe_sz_sq`.
    pub max_wqe_sz_sq: u16,
    /// Cap `max_wqe_sz_rq`.
    pub max_wqe_sz_rq: u16,
    /// Cap `log_max_qp_sz`.
    pub log_max_qp_sz: u8,
    /// Cap `log_max_srq_sz`.
    pub log_max_srq_sz: u8,
    /// Cap `uar_4k`.
    pub uar_4k: bool,
    /// Cap `num_of_uars_per_page`.
    pub num_of_uars_per_page: u32,
    /// Ports.
    pub num_ports: u16,
    /// The dump-fill mkey, with cap `dump_fill_mkey`.
    pub dump_fill_mkey: Option<u32>,
    /// Ethernet only: the firmware's minimum inline mode.
    pub eth_min_inline: Option<u8>,
    /// A clock info page exists.
    pub clock_info: bool,
    /// log2 of the host page size.
    pub page_shift: u32,
    /// Cap `ece_support`.
    pub ece: bool,
    /// Real-time timestamps on SQ, RQ and RoCE QPs.
    pub real_time_ts: bool,
    /// Cap `drain_sigerr`.
    pub drain_sigerr: bool,
}

/// `1 << log` as the response's 32-bit counts (0 for a shift beyond 31, which no
/// device reports).
fn pow2(log: u8) -> u32 {
    1u32.checked_shl(u32::from(log)).unwrap_or(0)
}

/// `set_ucontext_resp` plus `response_length` = min(`outlen`, 72).
pub fn build_response(caps: &UctxRespCaps, plan: &UctxPlan, outlen: usize) -> AllocUcontextResp {
    let mut r = AllocUcontextResp::default();
    if let Some(mkey) = caps.dump_fill_mkey {
        r.dump_fill_mkey = mkey;
        r.comp_mask |= UCTX_RESP_MASK_DUMP_FILL_MKEY;
    }
    r.qp_tab_size = pow2(caps.log_max_qp);
    if caps.wc {
        r.bf_reg_size = pow2(caps.log_bf_reg_size);
    }
    r.cache_line_size = caps.cache_line_size;
    r.max_sq_desc_sz = caps.max_wqe_sz_sq;
    r.max_rq_desc_sz = caps.max_wqe_sz_rq;
    r.max_send_wqebb = pow2(caps.log_max_qp_sz);
    r.max_recv_wr = pow2(caps.log_max_qp_sz);
    r.max_srq_recv_wr = pow2(caps.log_max_srq_sz);
    r.cqe_version = plan.cqe_version;
    r.log_uar_size = if caps.uar_4k {
        ADAPTER_PAGE_SHIFT
    } else {
        caps.page_shift
    };
    r.num_uars_per_page = if caps.uar_4k {
        caps.num_of_uars_per_page
    } else {
        1
    };
    r.tot_bfregs = plan.bfregs.tot_bfregs_resp();
    r.num_ports = caps.num_ports;
    r.cmds_supp_uhw = USER_CMDS_SUPP_UHW_QUERY_DEVICE | USER_CMDS_SUPP_UHW_CREATE_AH;
    if let Some(m) = caps.eth_min_inline {
        r.eth_min_inline = m.wrapping_add(1);
    }
    if caps.clock_info {
        r.clock_info_versions = 1 << super::consts::CLOCK_INFO_V1;
    }
    // The core clock page is offered only when a page holds nothing past the 4 KiB
    // the device exposes there.
    if caps.page_shift <= ADAPTER_PAGE_SHIFT {
        r.comp_mask |= UCTX_RESP_MASK_CORE_CLOCK_OFFSET;
        let page = 1u64 << caps.page_shift;
        r.hca_core_clock_offset = INTERNAL_TIMER_H % page;
    }
    if caps.ece {
        r.comp_mask |= UCTX_RESP_MASK_ECE;
    }
    if caps.real_time_ts {
        r.comp_mask |= UCTX_RESP_MASK_REAL_TIME_TS;
    }
    r.num_dyn_bfregs = plan.bfregs.num_dyn_bfregs;
    if caps.drain_sigerr {
        r.comp_mask |= UCTX_RESP_MASK_SQD2RTS;
    }
    r.comp_mask |= UCTX_RESP_MASK_MKEY_UPDATE_TAG;
    r.response_length = udata::response_length::<AllocUcontextResp>(outlen);
    r
}

/// Whether `e` is the DEVX refusal (the caller may log it differently: libmlx5
/// retries without DEVX).
pub fn is_devx_refusal(e: &UabiError) -> bool {
    e.reason == Reason::Devx && e.errno == Errno::EINVAL
}
