// SPDX-License-Identifier: GPL-2.0

//! create_qp of a kernel consumer's QP ([`create_kernel_qp`], upstream
//! `create_kernel_qp`) and what it posts with ([`KernelDp`]).
//!
//! Kernel QPs: RC, UC, UD, XRC initiator, and QP0 / QP1 as upstream creates them for
//! the MAD layer (a hardware QP0 of service type QP0, a hardware QP1 of type QP1, no
//! GSI send QPs since cap `set_deth_sqpn` is not used). Queue sizes as upstream
//! ([`crate::ib::qp::size`]); the work queues are one coherent allocation of 4 KiB
//! pages (RQ then SQ, `log_page_size` 0), so each queue is one slice for the WQE
//! builders; a coherent doorbell record; the core's UAR page (as upstream rings
//! kernel QPs on the core's bfreg). Each kernel QP is in the device's
//! [`KqpTable`] from CREATE_QP to before DESTROY_QP, where its CQs' pollers find it,
//! and on its CQs' lists of QPs for the software flush after a fatal error.

use kernel::{device, dma::Coherent, prelude::*, sync::Arc};

use super::object::{Live, Qp, QpMem};
use super::xrc::xrc_devres;
use super::{KernelObjs, QpEnv};
use crate::cmd::status::create_outcome_unknown;
use crate::ffi::rdma::ib_qp::QpInit;
use crate::hw::Hw;
use crate::ib::abi::consts::IB_DEFAULT_UIDX;
use crate::ib::cq::kclean::{CqCleaner, KcqTable};
use crate::ib::qp::commands::CreateQp;
use crate::ib::qp::create::{
    create_flags, create_qpc_into, kernel_xrc_ini_srq, rx_type, CreateQpc, WqSizes,
};
use crate::ib::qp::kdp::{KernelWq, KqpTable};
use crate::ib::qp::modify::{ib_state, QpShadow, QpType, QPC_BYTES};
use crate::ib::qp::recv_wqe::{RqGeometry, RqShape};
use crate::ib::qp::send_wqe::SqGeometry;
use crate::ib::qp::size::{kernel_rq_size, kernel_sq_size, QpCap};

/// Pages of a kernel QP's work queues.
pub(super) const WQ_PAGE: usize = 4096;
/// A doorbell record (receive and send counters, 4 bytes each; one cache line).
const DBR_BYTES: usize = 64;

/// What a kernel QP posts with.
pub(super) struct KernelDp {
    /// The table the QP is in (left on drop).
    pub(super) table: Arc<KqpTable>,
    /// Its bookkeeping, shared with its CQs' pollers.
    pub(super) wq: Arc<KernelWq>,
    /// The send queue as created.
    pub(super) sq: SqGeometry,
    /// The receive queue as created, checked (`None`: the QP has none, or receives
    /// on an SRQ).
    pub(super) rq: Option<RqShape>,
    /// Bytes of the receive queue (the send queue starts there).
    pub(super) rq_bytes: usize,
    /// Offset in BAR 0 of the UAR the QP rings.
    pub(super) uar_bar_off: usize,
    /// Bytes of one BlueFlame register half.
    pub(super) bf_half: usize,
    /// Its send and receive CQs, whose CQEs of the QP are removed when it moves to
    /// RESET or is destroyed; the QP is on their lists of QPs until its drop.
    pub(super) cqs: [Option<CqCleaner>; 2],
    /// The device's kernel CQs, and whether it met a fatal error.
    pub(super) kcqs: Arc<KcqTable>,
}

impl KernelDp {
    /// Removes the QP's CQEs from its CQs, the receive CQ's first (freeing the SRQ
    /// WQEs of removed receives), as upstream `destroy_qp_common` and
    /// `__mlx5_ib_modify_qp` to RESET call `__mlx5_ib_cq_clean`.
    pub(super) fn clean_cqs(&self, qpn: u32) {
        let [snd, rcv] = &self.cqs;
        if let Some(c) = rcv {
            c.clean(qpn, self.wq.srq.as_deref());
        }
        if let Some(c) = snd {
            if !rcv.as_ref().is_some_and(|r| r.same(c)) {
                c.clean(qpn, None);
            }
        }
    }

    /// Takes the QP off its CQs' lists of QPs.
    pub(super) fn detach(&self) {
        for c in self.cqs.iter().flatten() {
            c.detach(&self.wq);
        }
    }
}

/// create_qp of a kernel consumer's QP.
#[inline(never)]
pub(super) fn create_kernel_qp(
    dev: &device::Device,
    hw: &Arc<Hw>,
    env: &QpEnv,
    init: &mut QpInit,
    kqps: &Arc<KqpTable>,
    kobjs: &KernelObjs,
    ibqp: u64,
) -> Result<(KBox<Qp>, u32, usize)> {
    let ty = QpType::from_ib(init.qp_type).ok_or(EOPNOTSUPP)?;
    let (uar, uar_bar_off) = env.kernel_uar.ok_or(EOPNOTSUPP)?;
    // A target is create_xrc_tgt_qp's; an initiator needs cap `xrc` (upstream
    // `check_qp_type`).
    let xrc_ini = ty == QpType::XrcIni;
    if ty == QpType::XrcTgt || (xrc_ini && !env.xrc) {
        return Err(EOPNOTSUPP);
    }
    // Multicast loopback blocking only (IPoIB LSO, integrity, ...: EOPNOTSUPP).
    let block_lb_mc = create_flags(init.create_flags, env.block_lb_mc)?;
    // An XRC initiator needs no receive CQ (upstream `get_cqs` names none for it).
    if init.has_send_cq == 0 || (init.has_recv_cq == 0 && !xrc_ini) {
        return Err(EINVAL);
    }
    let devr = xrc_ini.then(|| xrc_devres(init)).transpose()?;
    let port = if ty.is_sqp() {
        match u8::try_from(init.port_num) {
            Ok(p) if p != 0 && p <= env.modify.num_ports => p,
            _ => return Err(EINVAL),
        }
    } else {
        0
    };
    let cap = QpCap {
        max_send_wr: init.max_send_wr,
        max_recv_wr: init.max_recv_wr,
        max_send_sge: init.max_send_sge,
        max_recv_sge: init.max_recv_sge,
        max_inline_data: init.max_inline_data,
    };
    let srq = init.has_srq != 0;
    // The kernel SRQ the QP receives on (its receive completions name its WQEs).
    let ksrq = if srq {
        Some(kobjs.srqs.get(init.srqn).ok_or(EINVAL)?)
    } else {
        None
    };
    // Upstream `qp_has_rq`: never for an XRC initiator.
    let has_rq = !srq && !xrc_ini && init.max_recv_wr != 0;
    let (rq_cnt, rq_shift, rq_gs) = kernel_rq_size(&cap, has_rq, false, &env.size)?;
    let sq = kernel_sq_size(ty, &cap, &env.size)?;
    let rq_bytes = usize::try_from(u64::from(rq_cnt) << rq_shift).map_err(|_| EINVAL)?;
    // Checked before CREATE_QP: sized by this provider's own rules, a shape they never
    // give is refused, not posted to.
    let rq = match rq_cnt {
        0 => None,
        _ => Some(
            RqShape::new(&RqGeometry {
                wqe_cnt: rq_cnt,
                wqe_shift: rq_shift,
                max_gs: rq_gs,
                max_post: rq_cnt,
                // QUERY_SPECIAL_CONTEXTS is not read: the default key (upstream uses the
                // device's `terminate_scatter_list_mkey` when cap
                // `terminate_scatter_list_mkey` says it has one).
                terminate_lkey: crate::ifc::umr::vals::TERMINATE_SCATTER_LIST_LKEY,
            })
            .map_err(|_| EINVAL)?,
        ),
    };
    let bytes = rq_bytes
        .checked_add(usize::try_from(sq.sq_wqe_cnt).map_err(|_| EINVAL)? * 64)
        .ok_or(EINVAL)?;
    if bytes == 0 {
        return Err(EINVAL);
    }
    // SAFETY: the core calls the verbs only while the IB device is registered, a
    // stage of the PCI function's binding: the function is bound for this call, and
    // the memory is freed before the stage ends (the core destroys every QP before
    // unregistration returns) or buried in `Hw` until bus mastering is off.
    let bound = unsafe { dev.as_bound() };
    // One allocation, so that each queue is one slice the WQE builders write into
    // (upstream uses a fragmented buffer and writes across fragment edges instead).
    let npages = bytes.div_ceil(WQ_PAGE);
    let buf = Coherent::<u8>::zeroed_slice(bound, npages * WQ_PAGE, GFP_KERNEL)?;
    let mut pas = KVec::with_capacity(npages, GFP_KERNEL)?;
    for i in 0..npages {
        pas.push(buf.dma_address() + (i * WQ_PAGE) as u64, GFP_KERNEL)?;
    }
    let dbr = Coherent::<u8>::zeroed_slice(bound, DBR_BYTES, GFP_KERNEL)?;
    let db_dma = dbr.dma_address();
    let wq = WqSizes {
        rq_wqe_cnt: rq_cnt,
        rq_wqe_shift: rq_shift,
        rq_max_gs: rq_gs,
        ..sq
    };
    let (snd, rcv) = ty.has_cqs();
    // Upstream `create_kernel_qp` names an initiator's receive CQ when the consumer
    // gave one, and its SRQ and domain by [`kernel_xrc_ini_srq`].
    let (srqn, xrcd) = match devr {
        Some(d) => {
            let (n, x) = kernel_xrc_ini_srq(&d, srq.then_some(init.srqn));
            (Some(n), Some(x))
        }
        None => (srq.then_some(init.srqn), None),
    };
    let p = CreateQpc {
        st: ty.st(),
        pdn: init.pdn,
        wq,
        rq_type: rx_type(ty, srq, has_rq),
        cqn_snd: snd.then_some(init.send_cqn),
        cqn_rcv: (rcv || (xrc_ini && init.has_recv_cq != 0)).then_some(init.recv_cqn),
        srqn,
        xrcd,
        dbr_addr: db_dma,
        user_index: env.cqe_v1.then_some(IB_DEFAULT_UIDX),
        uar_page: uar,
        log_page_size: 0,
        page_offset: 0,
        wq_signature: false,
        block_lb_mc,
        packet_based_credit: false,
        cs_req: 0,
        cs_res: 0,
    };
    let mut ctx = [0u8; QPC_BYTES];
    create_qpc_into(&p, &mut ctx)?;
    let qpn = match hw.exec_cmd(CreateQp {
        qpc: &ctx,
        pas: &pas,
    }) {
        Ok(n) => n,
        Err(e) => {
            // A CREATE_QP of unknown outcome may have made the QP: the device may
            // own the pages.
            if create_outcome_unknown(e.kind) {
                hw.keep(dev, &e, npages + 1, (buf, dbr));
            }
            return Err(e.errno().into());
        }
    };
    let shadow = QpShadow {
        ty,
        user: false,
        port,
        atomic_rd_en: 0,
        resp_depth: 0,
        alt_port: 0,
        pdn: init.pdn,
        cqn_snd: p.cqn_snd,
        // The CQs upstream's `get_cqs` gives (none to receive for an initiator).
        cqn_rcv: rcv.then_some(init.recv_cqn),
        rq_wqe_cnt: rq_cnt,
        db_dma,
    };
    let live = Live {
        shadow,
        state: ib_state::RESET,
    };
    init.max_send_wr = sq.sq_max_post;
    init.max_send_sge = sq.sq_max_gs;
    init.max_inline_data = sq.max_inline;
    if !has_rq {
        init.max_recv_wr = 0;
        init.max_recv_sge = 0;
    }
    let sq_cap = (sq.sq_max_post, sq.sq_max_gs, sq.max_inline);
    let mem = QpMem::Kernel { buf, dbr };
    let mut qp = Qp::new(dev, hw, qpn, init, env, rq_gs, sq_cap, live, mem)?;
    // From here on a failure drops `qp`, which destroys the QP.
    let wq = KernelWq::new(qpn, ibqp, ty == QpType::Gsi, sq.sq_wqe_cnt, rq_cnt, ksrq)?;
    let cqs = [
        p.cqn_snd.and_then(|n| kobjs.cqs.get(n)),
        rcv.then(|| kobjs.cqs.get(init.recv_cqn)).flatten(),
    ];
    kqps.insert(wq.clone())?;
    // On its CQs' lists (upstream `list_send_qp` / `list_recv_qp`) for the software
    // flush after a fatal error; off them at the drop.
    for (i, c) in cqs.iter().enumerate() {
        if let Some(c) = c {
            if let Err(e) = c.attach(&wq, i == 0) {
                for d in cqs.iter().flatten() {
                    d.detach(&wq);
                }
                kqps.remove(qpn);
                return Err(e);
            }
        }
    }
    qp.kdp = Some(KernelDp {
        table: kqps.clone(),
        wq,
        sq: SqGeometry {
            qp_type: ty,
            qpn,
            wqe_cnt: sq.sq_wqe_cnt,
            max_post: sq.sq_max_post,
            max_gs: sq.sq_max_gs,
            max_inline: sq.max_inline,
            sig_all: init.sq_sig_all != 0,
            umr_fence: env.umr_fence,
        },
        rq,
        rq_bytes,
        uar_bar_off,
        bf_half: env.bf_half,
        cqs,
        kcqs: kobjs.cqs.clone(),
    });
    Ok((qp, qpn, 0))
}
