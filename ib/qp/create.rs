// SPDX-License-Identifier: GPL-2.0

//! create_qp's QP context, as upstream `create_kernel_qp` / `create_user_qp`
//! (`qp.c`) build it.
//!
//! User QPs take their sizes from the request ([`crate::ib::abi::qp::parse_create_qp`]),
//! kernel QPs from `qp_size`; both get their context from [`create_qpc`]: service type, PM state migrated,
//! PD, RQ stride and size (RQ first in the buffer), SQ size or `no_sq`, the receive
//! queue type (SRQ, zero-length or regular), CQs, SRQ, doorbell record, user index
//! (CQE version 1), UAR page, buffer page size and offset, and what the accepted
//! vendor flags ask for (signature, scatter-to-CQE sizes, packet-based credits), and
//! for XRC QPs their domain. An XRC QP names the device resources upstream names
//! (`create_user_qp`, `create_xrc_tgt_qp`: the receive CQ `devr->c0`, the XRC SRQ
//! `devr->s0`, for an initiator the domain `devr->xrcdn1`, for a target its own
//! domain, `devr->p0` as its PD and `c0` as its send CQ too; see [`xrc_tgt_qpc`]).
//! A kernel XRC initiator names what upstream's `create_kernel_qp` names for it
//! ([`kernel_xrc_ini_srq`]: the basic SRQ `devr->s1` in domain `xrcdn1`, or the
//! consumer's SRQ in `xrcdn0`). The XRC domains and the default SRQ upstream names
//! for other QPs without an SRQ (`devr->xrcdn0` / `xrcdn1`, `devr->s1`) are not
//! used: such a QP names none (`xrcd` 0, `srqn` 0). The timestamp
//! format is 0 (free running), what upstream picks when the RoCE caps' `qp_ts_format`
//! is 0, as on an InfiniBand function.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::errno::Errno;
use crate::ib::abi::consts::QP_CREATE_BLOCK_MULTICAST_LOOPBACK;
use crate::ib::qp::modify::{QpType, QPC_BYTES};
use crate::ifc::{
    field::{MsgMut, Overflow},
    qp::qpc,
    qp_state::pm_state,
};

/// `qpc.rq_type` (`MLX5_NON_ZERO_RQ`, `MLX5_SRQ_RQ`, `MLX5_ZERO_LEN_RQ`).
pub mod rq_type {
    /// The QP's own RQ.
    pub const REGULAR: u8 = 0;
    /// Receives from an SRQ.
    pub const SRQ: u8 = 1;
    /// No receive queue.
    pub const ZERO_LEN: u8 = 3;
}

/// `qpc.cs_res` and `qpc.cs_req`: scatter-to-CQE sizes (mlx5_ib.h `MLX5_RES_SCAT_*`,
/// `MLX5_REQ_SCAT_*`).
pub mod scat {
    /// Received data of up to 32 bytes into a 64-byte CQE.
    pub const RES_DATA32: u8 = 0x1;
    /// Received data of up to 64 bytes into a 128-byte CQE.
    pub const RES_DATA64: u8 = 0x2;
    /// Requester (RDMA read, atomic) data of up to 32 bytes into a 64-byte CQE.
    pub const REQ_DATA32: u8 = 0x11;
    /// Requester data of up to 64 bytes into a 128-byte CQE.
    pub const REQ_DATA64: u8 = 0x22;
}

/// `(cs_req, cs_res)` of a QP whose request carried an accepted
/// `MLX5_QP_FLAG_SCATTER_CQE` (`scatter`), as upstream `create_user_qp` and
/// `configure_requester_scat_cqe` set them: the responder of an RC or UC QP scatters
/// into CQEs of its receive CQ's size; the requester of an RC QP into its send CQ's,
/// only when every WR is signalled or `MLX5_QP_FLAG_ALLOW_SCATTER_CQE` (`allow`) says
/// so. UD QPs and a request without the flag: none (0).
pub fn scatter_to_cqe(
    ty: QpType,
    scatter: bool,
    allow: bool,
    sq_sig_all: bool,
    send_cqe_128: bool,
    recv_cqe_128: bool,
) -> (u8, u8) {
    if !scatter {
        return (0, 0);
    }
    let res = match ty {
        QpType::Rc | QpType::Uc if recv_cqe_128 => scat::RES_DATA64,
        QpType::Rc | QpType::Uc => scat::RES_DATA32,
        _ => 0,
    };
    let req = match ty {
        QpType::Rc if allow || sq_sig_all => {
            if send_cqe_128 {
                scat::REQ_DATA64
            } else {
                scat::REQ_DATA32
            }
        }
        _ => 0,
    };
    (req, res)
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
    /// XRC domain (XRC QPs).
    pub xrcd: Option<u32>,
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
    /// End-to-end packet-based credits (`MLX5_QP_FLAG_PACKET_BASED_CREDIT_MODE`,
    /// `qpc.req_e2e_credit_mode`).
    pub packet_based_credit: bool,
    /// `qpc.cs_req` ([`scatter_to_cqe`]).
    pub cs_req: u8,
    /// `qpc.cs_res` ([`scatter_to_cqe`]).
    pub cs_res: u8,
}

/// The create flags of a QP, as upstream's `process_create_flags` takes them for the
/// QP types this provider creates: multicast loopback blocking, with cap `block_lb_mc`
/// (then `qpc.block_lb_mc`). Returns whether multicast loopback is blocked.
///
/// # Errors
///
/// `EOPNOTSUPP` for any other flag, or for that one without the cap (upstream's
/// answer to a flag it does not serve).
pub fn create_flags(flags: u32, block_lb_mc_cap: bool) -> Result<bool, Errno> {
    let block = flags & QP_CREATE_BLOCK_MULTICAST_LOOPBACK != 0;
    if flags & !QP_CREATE_BLOCK_MULTICAST_LOOPBACK != 0 || (block && !block_lb_mc_cap) {
        return Err(Errno::EOPNOTSUPP);
    }
    Ok(block)
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

/// The QP context of CREATE_QP, written through the `qpc` layout.
///
/// # Errors
///
/// `EINVAL` when a value does not fit its field (a UAR index, CQ, SRQ or PD number
/// wider than 24 bits, a queue of more than 2^15 entries, …): refused, never masked.
pub fn create_qpc(p: &CreateQpc) -> Result<[u8; QPC_BYTES], Errno> {
    let mut ctx = [0u8; QPC_BYTES];
    create_qpc_into(p, &mut ctx)?;
    Ok(ctx)
}

/// [`create_qpc`] into the caller's zeroed `ctx` (the verbs' create path: the context
/// is not moved through its frames, which run under the RDMA core's).
///
/// # Errors
///
/// As [`create_qpc`]'s; `ctx` is then partly written.
pub fn create_qpc_into(p: &CreateQpc, ctx: &mut [u8; QPC_BYTES]) -> Result<(), Errno> {
    let mut c = MsgMut::<qpc::Layout>::of_array(ctx);
    let wide = |_: Overflow| Errno::EINVAL;
    c.set(qpc::ST, p.st).map_err(wide)?;
    c.set(qpc::PM_STATE, pm_state::MIGRATED).map_err(wide)?;
    c.set(qpc::PD, p.pdn).map_err(wide)?;
    c.set(qpc::WQ_SIGNATURE, p.wq_signature).map_err(wide)?;
    c.set(qpc::BLOCK_LB_MC, p.block_lb_mc).map_err(wide)?;
    c.set(qpc::REQ_E2E_CREDIT_MODE, u8::from(p.packet_based_credit))
        .map_err(wide)?;
    c.set(qpc::CS_REQ, p.cs_req).map_err(wide)?;
    c.set(qpc::CS_RES, p.cs_res).map_err(wide)?;
    if p.wq.rq_wqe_cnt != 0 {
        let stride = p.wq.rq_wqe_shift.checked_sub(4).ok_or(Errno::EINVAL)?;
        c.put(qpc::LOG_RQ_STRIDE, stride).map_err(wide)?;
        c.put(qpc::LOG_RQ_SIZE, p.wq.rq_wqe_cnt.ilog2())
            .map_err(wide)?;
    }
    c.set(qpc::TS_FORMAT, 0).map_err(wide)?;
    c.set(qpc::RQ_TYPE, p.rq_type).map_err(wide)?;
    if p.wq.sq_wqe_cnt != 0 {
        c.put(qpc::LOG_SQ_SIZE, p.wq.sq_wqe_cnt.ilog2())
            .map_err(wide)?;
    } else {
        c.set(qpc::NO_SQ, true).map_err(wide)?;
    }
    if let Some(n) = p.srqn {
        c.set(qpc::SRQN_RMPN_XRQN, n).map_err(wide)?;
    }
    if let Some(n) = p.xrcd {
        c.set(qpc::XRCD, n).map_err(wide)?;
    }
    if let Some(n) = p.cqn_snd {
        c.set(qpc::CQN_SND, n).map_err(wide)?;
    }
    if let Some(n) = p.cqn_rcv {
        c.set(qpc::CQN_RCV, n).map_err(wide)?;
    }
    c.set(qpc::DBR_ADDR, p.dbr_addr).map_err(wide)?;
    if let Some(u) = p.user_index {
        c.set(qpc::USER_INDEX, u).map_err(wide)?;
    }
    c.set(qpc::UAR_PAGE, p.uar_page).map_err(wide)?;
    c.set(qpc::LOG_PAGE_SIZE, p.log_page_size).map_err(wide)?;
    c.set(qpc::PAGE_OFFSET, p.page_offset).map_err(wide)?;
    Ok(())
}

/// The device resources an XRC QP's context names (upstream `struct
/// mlx5_ib_resources`), as the shim made them (`ffi/rdma/ib_devres.c`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XrcDevRes {
    /// PD `p0`.
    pub pdn: u32,
    /// CQ `c0`.
    pub cqn: u32,
    /// XRC SRQ `s0`.
    pub srqn: u32,
    /// XRC domain `xrcdn1` (initiators).
    pub xrcdn: u32,
    /// Basic SRQ `s1` (kernel initiators).
    pub srqn1: u32,
    /// XRC domain `xrcdn0` (kernel initiators with an SRQ).
    pub xrcdn0: u32,
}

/// The SRQ and XRC domain a kernel XRC initiator's context names, as upstream
/// `create_kernel_qp`: with the consumer's SRQ that SRQ and `devr->xrcdn0`, else
/// the basic SRQ `devr->s1` and `devr->xrcdn1` (the initiator never receives: upstream
/// names them as for every kernel QP). Returns `(srqn, xrcd)`.
pub fn kernel_xrc_ini_srq(devr: &XrcDevRes, srq: Option<u32>) -> (u32, u32) {
    match srq {
        Some(n) => (n, devr.xrcdn0),
        None => (devr.srqn1, devr.xrcdn),
    }
}

/// The context of an XRC target as upstream `create_xrc_tgt_qp` builds it: service
/// type XRC, PD `p0`, SRQ receive from `s0` with `c0` as both CQs, no send queue and
/// no buffer, the target's `xrcd`, the default user index with CQE version 1, and
/// multicast loopback blocked if asked ([`create_flags`]).
///
/// # Errors
///
/// `EINVAL` when a number is wider than its field ([`create_qpc`]).
pub fn xrc_tgt_qpc(
    devr: &XrcDevRes,
    xrcd: u32,
    user_index: Option<u32>,
    block_lb_mc: bool,
) -> Result<[u8; QPC_BYTES], Errno> {
    create_qpc(&CreateQpc {
        st: QpType::XrcTgt.st(),
        pdn: devr.pdn,
        rq_type: rq_type::SRQ,
        cqn_snd: Some(devr.cqn),
        cqn_rcv: Some(devr.cqn),
        srqn: Some(devr.srqn),
        xrcd: Some(xrcd),
        user_index,
        block_lb_mc,
        ..CreateQpc::default()
    })
}
