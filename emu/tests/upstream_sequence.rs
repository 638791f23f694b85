//! The object sequence upstream `mlx5_ib` runs at probe and unload, as a whole:
//! device resources (two XRCDs, PD p0, CQ c0, XRC SRQ s0, RMP s1), the UMR PD, CQ and
//! REG_UMR QP (RST→INIT→RTR→RTS), the MAD layer's QP0/QP1 with a signalled send and
//! its completion, then everything destroyed in reverse: counts back to zero, no
//! violation.

mod common;
#[path = "common/verbs.rs"]
mod verbs;

use mlx5_emu::fw::qp_state::{st, state};
use mlx5_emu::ifc::cq::destroy_cq_in;
use mlx5_emu::ifc::ib_res::{dealloc_pd_in, dealloc_xrcd_in};
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::qp::{create_qp_in, destroy_qp_in, qpc};
use mlx5_emu::ifc::srq::{destroy_rmp_in, destroy_xrc_srq_in};
use mlx5_emu::mem::GuestMemory;
use verbs::{set_at, Dev, SrqCmd};

#[test]
fn probe_mad_send_and_unload() {
    let mut d = Dev::new();
    // DEVICE_RESOURCES: xrcdn0, xrcdn1, p0, c0, s0 (XRC SRQ), s1 (RMP).
    let x0 = d.xrcd();
    let x1 = d.xrcd();
    let p0 = d.pd();
    let c0 = d.cq();
    let s0 = d.srq(SrqCmd::Xrc, p0, c0, x0);
    let s1 = d.srq(SrqCmd::Rmp, p0, 0, 0);
    // POST_IB_REG_UMR: the UMR PD; the UMR CQ and QP (REG_UMR, pd 0, no RQ).
    let umr_pd = d.pd();
    let umr_cq = d.cq();
    let c = create_qp_in::QPC.raw().byte_off();
    let mut inp = d.qp_input(st::REG_UMR, 0, umr_cq);
    set_at(&mut inp, c, qpc::RQ_TYPE, 3);
    set_at(&mut inp, c, qpc::XRCD, u64::from(x1));
    set_at(&mut inp, c, qpc::SRQN_RMPN_XRQN, u64::from(s1));
    let umr_qp = mlx5_emu::ifc::qp::create_qp_out::QPN
        .raw()
        .get(&d.h.ok(&inp, 16))
        .unwrap() as u32;
    // The MAD layer: a PD, a CQ, QP0 and QP1 (each naming xrcdn1 and s1, a regular RQ).
    let mad_pd = d.pd();
    let mad_cq = d.cq();
    let mut qps = Vec::new();
    for s in [st::QP0, st::QP1] {
        let mut inp = d.qp_input(s, mad_pd, mad_cq);
        set_at(&mut inp, c, qpc::XRCD, u64::from(x1));
        set_at(&mut inp, c, qpc::SRQN_RMPN_XRQN, u64::from(s1));
        let qpn = mlx5_emu::ifc::qp::create_qp_out::QPN
            .raw()
            .get(&d.h.ok(&inp, 16))
            .unwrap() as u32;
        qps.push(qpn);
    }
    for &qpn in qps.iter().chain([umr_qp].iter()) {
        for op in [Opcode::RST2INIT_QP, Opcode::INIT2RTR_QP, Opcode::RTR2RTS_QP] {
            assert_eq!(d.transition(op, qpn, 0), 0);
        }
        assert_eq!(d.query_qp(qpn).0, state::RTS);
    }
    // A signalled MAD send on QP1, the CQ armed first: one CQE, one completion EQE.
    let qp1 = qps[1];
    let (sq, dbr, cq_buf) = {
        let fw = d.h.dev.fw();
        let q = &fw.objs.qps[&qp1];
        (
            q.pas[0] + 1024,
            qpc::DBR_ADDR.raw().get(&q.ctx).unwrap(),
            fw.objs.cqs[&mad_cq].pas[0],
        )
    };
    let mut arm = [0u8; 8];
    arm[4..8].copy_from_slice(&mad_cq.to_be_bytes());
    d.h.dev.bar0_write(u64::from(d.uar) * 4096 + 0x20, &arm);
    let mut ctrl = [0u8; 16];
    ctrl[0..4].copy_from_slice(&0x0bu32.to_be_bytes());
    ctrl[4..8].copy_from_slice(&((qp1 << 8) | 5).to_be_bytes());
    ctrl[11] = 0x08;
    d.h.mem.write(sq, &ctrl).unwrap();
    d.h.mem.write(dbr + 4, &2u32.to_be_bytes()).unwrap();
    d.h.dev
        .bar0_write(u64::from(d.uar) * 4096 + 0x900, &ctrl[0..8]);
    d.h.dev.step();
    let mut cqe = [0u8; 64];
    d.h.mem.read(cq_buf, &mut cqe).unwrap();
    assert_eq!(cqe[0x3f], 0, "REQ, owner 0");
    assert_eq!(
        u32::from_be_bytes([cqe[0x38], cqe[0x39], cqe[0x3a], cqe[0x3b]]) & 0xff_ffff,
        qp1
    );
    {
        let fw = d.h.dev.fw();
        assert_eq!(
            (
                fw.dp.cqe.requester,
                fw.dp.cqe.completion_events,
                fw.dp.send.wqes
            ),
            (1, 1, 1)
        );
        assert_eq!(
            fw.objs.qps[&qp1].sq_consumed, 2,
            "a 5-DS WQE takes 2 WQEBBs"
        );
    }
    // Unload, in upstream's order: QPs (to RST first), CQs, PDs, device resources.
    for &qpn in qps.iter().chain([umr_qp].iter()) {
        assert_eq!(d.transition(Opcode::_2RST_QP, qpn, 0), 0);
        assert_eq!(d.on(Opcode::DESTROY_QP, destroy_qp_in::QPN, qpn), 0);
    }
    for cq in [mad_cq, umr_cq] {
        assert_eq!(d.on(Opcode::DESTROY_CQ, destroy_cq_in::CQN, cq), 0);
    }
    for pd in [mad_pd, umr_pd] {
        assert_eq!(d.on(Opcode::DEALLOC_PD, dealloc_pd_in::PD, pd), 0);
    }
    assert_eq!(d.on(Opcode::DESTROY_RMP, destroy_rmp_in::RMPN, s1), 0);
    assert_eq!(
        d.on(Opcode::DESTROY_XRC_SRQ, destroy_xrc_srq_in::XRC_SRQN, s0),
        0
    );
    // mlx5_ib_dev_res_cleanup: s1, s0, xrcdn1, xrcdn0, c0, p0.
    for x in [x1, x0] {
        assert_eq!(d.on(Opcode::DEALLOC_XRCD, dealloc_xrcd_in::XRCD, x), 0);
    }
    assert_eq!(d.on(Opcode::DESTROY_CQ, destroy_cq_in::CQN, c0), 0);
    assert_eq!(d.on(Opcode::DEALLOC_PD, dealloc_pd_in::PD, p0), 0);
    let s = mlx5_emu::report::stats(&d.h.dev);
    assert_eq!(s["objects"]["total"], 0);
    assert_eq!(s["violations"], 0, "{}", s["recent_violations"]);
    assert_eq!(s["objects"]["created"]["qp"], 3);
    assert_eq!(s["objects"]["destroyed"]["qp"], 3);
}
