// SPDX-License-Identifier: GPL-2.0

//! XRC target QPs ([`create_xrc_tgt_qp`], upstream `create_xrc_tgt_qp`) and the
//! device resources every XRC QP names ([`xrc_devres`]).
//!
//! XRC (with cap `xrc`, as upstream's `check_qp_type`): the contexts name the device
//! resources the shim makes on the first XRC create_qp (`ffi/rdma/ib_devres.c`, as
//! upstream's `mlx5_ib_dev_res_srq_init`: a PD, a CQ, two XRC domains and an XRC SRQ,
//! destroyed after unregistration). An initiator is a user QP with a send queue only
//! (receive CQ `c0`, domain `xrcdn1`, SRQ `s0` in its context, as upstream
//! `create_user_qp`: [`super::user_qp`]); a target, which the core always creates
//! without user data, has no queue and no doorbell record (its own domain, PD `p0`,
//! `c0`, `s0`). A kernel XRC initiator is a kernel QP with a send queue only, as
//! upstream's `create_kernel_qp` makes it (domain `xrcdn1`, the basic SRQ `s1`:
//! [`super::kernel_qp`]); its send WQEs carry the XRC segment upstream reserves and
//! never fills (a kernel work request cannot name a remote SRQ:
//! [`super::send_wqe`]).

use kernel::{device, prelude::*, sync::Arc};

use super::object::{Live, Qp, QpMem};
use super::QpEnv;
use crate::ffi::rdma::ib_qp::QpInit;
use crate::hw::Hw;
use crate::ib::abi::consts::IB_DEFAULT_UIDX;
use crate::ib::qp::commands::CreateQp;
use crate::ib::qp::create::{create_flags, xrc_tgt_qpc, XrcDevRes};
use crate::ib::qp::modify::{ib_state, QpShadow, QpType};

/// The device resources the shim made for an XRC QP (`ffi/rdma/ib_devres.c`).
///
/// # Errors
///
/// `EINVAL` when the shim named none (a PD, CQ, SRQ or domain number 0).
pub(super) fn xrc_devres(init: &QpInit) -> Result<XrcDevRes> {
    let d = XrcDevRes {
        pdn: init.devr_pdn,
        cqn: init.devr_cqn,
        srqn: init.devr_srqn,
        xrcdn: init.devr_xrcdn,
        srqn1: init.devr_srqn1,
        xrcdn0: init.devr_xrcdn0,
    };
    if d.pdn == 0 || d.cqn == 0 || d.srqn == 0 || d.xrcdn == 0 || d.srqn1 == 0 || d.xrcdn0 == 0 {
        return Err(EINVAL);
    }
    Ok(d)
}

/// create_qp of an XRC target, as upstream `create_xrc_tgt_qp`: no queues, no
/// doorbell record, the context of [`xrc_tgt_qpc`] (the target's domain, the device
/// resources), in RESET.
///
/// # Errors
///
/// `EOPNOTSUPP` without cap `xrc` and for a create flag [`create_flags`] refuses;
/// `EINVAL` without a domain
/// or the device resources; CREATE_QP's errno ([`Hw::exec_cmd`]).
#[inline(never)]
pub(super) fn create_xrc_tgt_qp(
    dev: &device::Device,
    hw: &Arc<Hw>,
    env: &QpEnv,
    init: &mut QpInit,
) -> Result<(KBox<Qp>, u32, usize)> {
    if !env.xrc {
        return Err(EOPNOTSUPP);
    }
    let block_lb_mc = create_flags(init.create_flags, env.block_lb_mc)?;
    let devr = xrc_devres(init)?;
    if init.xrcdn == 0 {
        return Err(EINVAL);
    }
    let ctx = xrc_tgt_qpc(
        &devr,
        init.xrcdn,
        env.cqe_v1.then_some(IB_DEFAULT_UIDX),
        block_lb_mc,
    )?;
    // No memory of the QP's own: nothing to keep whatever CREATE_QP's outcome.
    let qpn = hw
        .exec_cmd(CreateQp {
            qpc: &ctx,
            pas: &[],
        })
        .map_err(|e| Error::from(e.errno()))?;
    let shadow = QpShadow {
        ty: QpType::XrcTgt,
        user: false,
        port: 0,
        atomic_rd_en: 0,
        resp_depth: 0,
        alt_port: 0,
        // Upstream's modify names `p0` for a QP without a PD and no CQ for a target.
        pdn: devr.pdn,
        cqn_snd: None,
        cqn_rcv: None,
        rq_wqe_cnt: 0,
        db_dma: 0,
    };
    let live = Live {
        shadow,
        state: ib_state::RESET,
    };
    init.max_send_wr = 0;
    init.max_send_sge = 0;
    init.max_inline_data = 0;
    init.max_recv_wr = 0;
    init.max_recv_sge = 0;
    let qp = Qp::new(dev, hw, qpn, init, env, 0, (0, 0, 0), live, QpMem::NoQueues)?;
    Ok((qp, qpn, 0))
}
