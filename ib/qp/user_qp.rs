// SPDX-License-Identifier: GPL-2.0

//! create_qp of a user QP ([`create_user_qp`]: RC, UC, UD and XRC initiator with the
//! libmlx5 ABI, as upstream `create_user_qp`).
//!
//! It checks the request ([`crate::ib::abi::qp::parse_create_qp`]: sizes, flags, user
//! index, addresses), picks the doorbell's UAR ([`crate::ib::uctx::uar`]), pins the
//! work queue buffer (RQ then SQ) and maps the doorbell record
//! ([`crate::ffi::rdma::umem`], [`crate::ib::umem`]), builds the context
//! ([`crate::ib::qp::create`]) and the page list, runs CREATE_QP and answers
//! `mlx5_ib_create_qp_resp` (`bfreg_index`). If CREATE_QP's outcome is unknown (a
//! timeout), the memory goes to the function's graveyard ([`Hw::keep`]) rather than
//! back to the system under a device that may still use it.

use kernel::{device, prelude::*, sync::Arc};

use super::object::{Live, Qp, QpMem};
use super::xrc::xrc_devres;
use super::QpEnv;
use crate::cmd::status::create_outcome_unknown;
use crate::ffi::rdma::{
    ib_qp::QpInit,
    ib_uctx::IbUcontext,
    udata::UserData,
    umem::{BlockSize, IbDev, Umem},
};
use crate::hw::Hw;
use crate::ib::abi::{
    consts::{
        QP_FLAG_ALLOW_SCATTER_CQE, QP_FLAG_PACKET_BASED_CREDIT_MODE, QP_FLAG_SCATTER_CQE,
        QP_FLAG_SIGNATURE,
    },
    layout::CreateQpResp,
    qp::{parse_create_qp, QpAttr as UQpAttr, QpKind, QpUar},
    udata::{self, put},
};
use crate::ib::qp::commands::CreateQp;
use crate::ib::qp::create::{
    create_flags, create_qpc_into, rx_type, scatter_to_cqe, CreateQpc, WqSizes,
};
use crate::ib::qp::modify::{ib_state, QpShadow, QpType, QPC_BYTES};
use crate::ib::uctx::uabi_err;
use crate::ib::umem::plan::queue_page_sizes;

/// `qpc.log_page_size` bits, counted from 4 KiB (`mlx5_ifc.h`).
const LOG_PAGE_SIZE_BITS: u32 = 5;
/// `qpc.page_offset` is in 64-byte units, 6 bits.
const PAGE_OFFSET_SCALE: u64 = 64;
const PAGE_OFFSET_MAX: u64 = 63;

/// Picks the buffer's page size and offset as `mlx5_umem_find_best_quantized_pgoff`
/// (`qpc.log_page_size`, 64-byte `page_offset` of 6 bits): (size, quantized offset).
fn buffer_pages(umem: &mut Umem) -> Result<(BlockSize, u8)> {
    let bitmap = queue_page_sizes(LOG_PAGE_SIZE_BITS, 12);
    let iova = umem.start_dma() & 0xffff_ffc0;
    let mut size = umem.best_page_size(bitmap, iova).ok_or(EINVAL)?;
    loop {
        let unit = size.bytes() / PAGE_OFFSET_SCALE;
        let off = umem.dma_offset(size);
        if unit != 0 && off % unit == 0 && off / unit <= PAGE_OFFSET_MAX {
            return Ok((size, u8::try_from(off / unit).map_err(|_| EINVAL)?));
        }
        if size.bytes() <= 4096 {
            return Err(EINVAL);
        }
        size = umem
            .best_page_size(bitmap & (size.bytes() - 1), iova)
            .ok_or(EINVAL)?;
    }
}

/// create_qp of a user QP.
#[inline(never)]
pub(super) fn create_user_qp(
    dev: &device::Device,
    hw: &Arc<Hw>,
    env: &QpEnv,
    ibdev: IbDev<'_>,
    uctx: &dyn IbUcontext,
    init: &mut QpInit,
    ud: UserData<'_>,
) -> Result<(KBox<Qp>, u32, usize)> {
    let what = "create_qp";
    let ty = QpType::from_ib(init.qp_type).ok_or(EOPNOTSUPP)?;
    let kind = match ty {
        QpType::Rc => QpKind::Rc,
        QpType::Uc => QpKind::Uc,
        QpType::Ud => QpKind::Ud,
        QpType::XrcIni if env.xrc => QpKind::XrcIni,
        _ => return Err(EOPNOTSUPP),
    };
    // The create flags upstream's process_create_flags takes (EOPNOTSUPP for the rest).
    let block_lb_mc = create_flags(init.create_flags, env.block_lb_mc)?;
    // An XRC initiator has a send CQ only (the core gives it no receive CQ).
    let xrc_ini = ty == QpType::XrcIni;
    if init.has_send_cq == 0 || (init.has_recv_cq == 0 && !xrc_ini) {
        return Err(EINVAL);
    }
    let devr = xrc_ini.then(|| xrc_devres(init)).transpose()?;
    let attr = UQpAttr {
        kind,
        max_recv_wr: init.max_recv_wr,
        srq: init.has_srq != 0,
    };
    let plan = parse_create_qp(&attr, ud.req, &env.create, uctx.cqe_version())
        .map_err(|e| uabi_err(dev, what, e))?;
    // A UAR page named by user space must be the context's own (upstream leaves that
    // to the device's DEVX uid check, which uid 0 does not make), and stays allocated
    // while the QP names it (the hold drops with the QP's memory).
    let uar_hold = match plan.uar {
        QpUar::UarPage(i) => match uctx.hold_uar(i) {
            Some(h) => Some(h),
            None => {
                dev_dbg!(dev, "{}: UAR page {} is not the context's\n", what, i);
                return Err(EINVAL);
            }
        },
        _ => None,
    };
    let door = uctx.qp_bfregs().ok_or(EINVAL)?.qp_doorbell(plan.uar)?;
    let mut umem = None;
    let mut pas = KVec::new();
    let (mut log_page_size, mut page_offset) = (0u8, 0u8);
    if plan.buf_size != 0 {
        let mut u = Umem::get(ibdev, plan.buf_addr, u64::from(plan.buf_size), 0)?;
        let (size, off) = buffer_pages(&mut u)?;
        log_page_size = u8::try_from(size.shift().saturating_sub(12)).map_err(|_| EINVAL)?;
        page_offset = off;
        let n = usize::try_from(u.num_blocks(size)).map_err(|_| ENOMEM)?;
        pas = KVec::from_elem(0u64, n, GFP_KERNEL)?;
        let got = u.blocks(size).fill(&mut pas);
        if got != n {
            return Err(EINVAL);
        }
        umem = Some(u);
    }
    let db = uctx.db_pages().map(ibdev, plan.db_addr)?;
    let wq = WqSizes {
        rq_wqe_cnt: plan.rq_wqe_cnt,
        rq_wqe_shift: plan.rq_wqe_shift,
        rq_max_gs: plan.rq_max_gs,
        sq_wqe_cnt: plan.sq_wqe_cnt,
        ..WqSizes::default()
    };
    let srq = init.has_srq != 0;
    let (snd, rcv) = ty.has_cqs();
    // SCATTER_CQE is in `plan.flags` only with cap `sctr_data_cqe` (dropped without
    // it, as upstream); accepted, it is written to the context.
    let (cs_req, cs_res) = scatter_to_cqe(
        ty,
        plan.flags & QP_FLAG_SCATTER_CQE != 0,
        plan.flags & QP_FLAG_ALLOW_SCATTER_CQE != 0,
        init.sq_sig_all != 0,
        init.send_cqe_128 != 0,
        init.recv_cqe_128 != 0,
    );
    let p = CreateQpc {
        st: ty.st(),
        pdn: init.pdn,
        wq,
        rq_type: rx_type(ty, srq, plan.has_rq),
        cqn_snd: snd.then_some(init.send_cqn),
        cqn_rcv: rcv.then_some(init.recv_cqn),
        srqn: srq.then_some(init.srqn),
        xrcd: None,
        dbr_addr: db.dma(),
        user_index: env.cqe_v1.then_some(plan.uidx),
        uar_page: door.uar_index,
        log_page_size,
        page_offset,
        wq_signature: plan.flags & QP_FLAG_SIGNATURE != 0,
        block_lb_mc,
        packet_based_credit: plan.flags & QP_FLAG_PACKET_BASED_CREDIT_MODE != 0,
        cs_req,
        cs_res,
    };
    // Upstream `create_user_qp`'s default resources of an initiator: receive CQ
    // `c0`, domain `xrcdn1`, SRQ `s0` (the shadow keeps no receive CQ, as upstream's
    // modify names none for it).
    let mut ctx = [0u8; QPC_BYTES];
    match devr {
        Some(d) => create_qpc_into(
            &CreateQpc {
                cqn_rcv: Some(d.cqn),
                srqn: Some(d.srqn),
                xrcd: Some(d.xrcdn),
                ..p
            },
            &mut ctx,
        )?,
        None => create_qpc_into(&p, &mut ctx)?,
    };
    let qpn = match hw.exec_cmd(CreateQp {
        qpc: &ctx,
        pas: &pas,
    }) {
        Ok(n) => n,
        Err(e) => {
            // A CREATE_QP of unknown outcome may have made a QP on the buffer and the
            // doorbell record.
            if create_outcome_unknown(e.kind) {
                let n = umem.as_ref().map_or(0, Umem::pages);
                hw.keep(dev, &e, n, (umem, db));
            }
            return Err(e.errno().into());
        }
    };
    let shadow = QpShadow {
        ty,
        user: true,
        port: 0,
        atomic_rd_en: 0,
        resp_depth: 0,
        alt_port: 0,
        pdn: init.pdn,
        cqn_snd: p.cqn_snd,
        cqn_rcv: p.cqn_rcv,
        rq_wqe_cnt: plan.rq_wqe_cnt,
        db_dma: db.dma(),
    };
    let live = Live {
        shadow,
        state: ib_state::RESET,
    };
    let mem = QpMem::User {
        umem,
        db,
        _bfreg: door.bfreg,
        _uar: uar_hold,
    };
    let qp = Qp::new(
        dev,
        hw,
        qpn,
        init,
        env,
        plan.rq_max_gs,
        (0, 0, 0),
        live,
        mem,
    )?;
    if !plan.has_rq {
        init.max_recv_wr = 0;
        init.max_recv_sge = 0;
    }
    let resp = CreateQpResp {
        bfreg_index: door.resp_index,
        ..CreateQpResp::default()
    };
    let n = put(ud.out, udata::response(&resp, ud.outlen));
    Ok((qp, qpn, n))
}
