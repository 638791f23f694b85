//! Verbs objects: numbering, limits, unknown numbers, references, stats counts.

mod common;
#[path = "common/verbs.rs"]
mod verbs;

use common::input;
use mlx5_emu::fw::qp_state::st;
use mlx5_emu::ifc::cq::{cqc, destroy_cq_in, query_cq_in, query_cq_out};
use mlx5_emu::ifc::ib_res::{
    alloc_q_counter_out, alloc_transport_domain_out, dealloc_pd_in, dealloc_q_counter_in,
    dealloc_transport_domain_in, dealloc_xrcd_in, query_q_counter_in, query_special_contexts_out,
};
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::qp::{create_qp_in, destroy_qp_in, qpc};
use mlx5_emu::ifc::status::CmdStatus;
use verbs::{set_at, Dev};

const OK: u8 = CmdStatus::OK as u8;
const BAD_RES: u8 = CmdStatus::BAD_RES_ERR as u8;
const BAD_PARAM: u8 = CmdStatus::BAD_PARAM_ERR as u8;
const BAD_RES_STATE: u8 = CmdStatus::BAD_RES_STATE_ERR as u8;
const LIM: u8 = CmdStatus::LIM_ERR as u8;

#[test]
fn pd_xrcd_td_numbering_and_unknown_numbers() {
    let mut d = Dev::new();
    let a = d.pd();
    let b = d.pd();
    assert_ne!(a, b);
    assert_eq!(d.live("pd"), 2);
    assert_eq!(d.on(Opcode::DEALLOC_PD, dealloc_pd_in::PD, a), OK);
    assert_eq!(d.on(Opcode::DEALLOC_PD, dealloc_pd_in::PD, a), BAD_RES);
    assert_eq!(d.on(Opcode::DEALLOC_PD, dealloc_pd_in::PD, 0xabcd), BAD_RES);
    // The freed number is handed out again (lowest free first).
    assert_eq!(d.pd(), a);
    let x = d.xrcd();
    assert_eq!(d.live("xrcd"), 1);
    assert_eq!(
        d.on(Opcode::DEALLOC_XRCD, dealloc_xrcd_in::XRCD, x + 1),
        BAD_RES
    );
    assert_eq!(d.on(Opcode::DEALLOC_XRCD, dealloc_xrcd_in::XRCD, x), OK);
    let out = d.h.ok(
        &input(16, Opcode::ALLOC_TRANSPORT_DOMAIN as u16, 0, &[]),
        16,
    );
    let td = alloc_transport_domain_out::TRANSPORT_DOMAIN
        .raw()
        .get(&out)
        .unwrap() as u32;
    let f = dealloc_transport_domain_in::TRANSPORT_DOMAIN;
    assert_eq!(d.on(Opcode::DEALLOC_TRANSPORT_DOMAIN, f, td), OK);
    assert_eq!(d.on(Opcode::DEALLOC_TRANSPORT_DOMAIN, f, td), BAD_RES);
    // A uid names a user context; none can exist (log_max_uctx 0).
    let mut inp = input(16, Opcode::ALLOC_PD as u16, 0, &[]);
    inp[2..4].copy_from_slice(&5u16.to_be_bytes());
    assert_eq!(d.h.run(&inp, 16).0, BAD_PARAM);
    assert_eq!(d.live("pd"), 2);
}

#[test]
fn pd_limit_follows_log_max_pd() {
    let mut d = Dev::new();
    {
        let mut fw = d.h.dev.fw();
        let f = mlx5_emu::ifc::caps::cmd_hca_cap::LOG_MAX_PD.raw();
        f.set(&mut fw.caps.gen_cur, 2).unwrap();
    }
    for _ in 0..4 {
        d.pd();
    }
    let (st, _, _) = d.h.run(&input(16, Opcode::ALLOC_PD as u16, 0, &[]), 16);
    assert_eq!(st, LIM);
    assert_eq!(d.live("pd"), 4);
}

#[test]
fn q_counters_follow_max_qp_cnt() {
    let mut d = Dev::new();
    let alloc = input(16, Opcode::ALLOC_Q_COUNTER as u16, 0, &[]);
    // The caps advertise no queue counters.
    assert_eq!(d.h.run(&alloc, 16).0, LIM);
    {
        let mut fw = d.h.dev.fw();
        let f = mlx5_emu::ifc::caps::cmd_hca_cap::MAX_QP_CNT.raw();
        f.set(&mut fw.caps.gen_cur, 2).unwrap();
    }
    let out = d.h.ok(&alloc, 16);
    let id = alloc_q_counter_out::COUNTER_SET_ID.raw().get(&out).unwrap() as u32;
    assert_ne!(id, 0, "counter set 0 is the default set");
    d.h.ok(&alloc, 16);
    assert_eq!(d.h.run(&alloc, 16).0, LIM);
    let q = input(
        32,
        Opcode::QUERY_Q_COUNTER as u16,
        0,
        &[(query_q_counter_in::COUNTER_SET_ID.raw(), u64::from(id))],
    );
    d.h.ok(&q, 256);
    let q = input(
        32,
        Opcode::QUERY_Q_COUNTER as u16,
        0,
        &[(query_q_counter_in::COUNTER_SET_ID.raw(), 77)],
    );
    assert_eq!(d.h.run(&q, 256).0, BAD_RES);
    let f = dealloc_q_counter_in::COUNTER_SET_ID;
    assert_eq!(d.on(Opcode::DEALLOC_Q_COUNTER, f, id), OK);
    assert_eq!(d.on(Opcode::DEALLOC_Q_COUNTER, f, id), BAD_RES);
    assert_eq!(d.live("q_counter"), 1);
}

#[test]
fn special_contexts() {
    let mut d = Dev::new();
    let out = d.h.ok(
        &input(16, Opcode::QUERY_SPECIAL_CONTEXTS as u16, 0, &[]),
        32,
    );
    let get = |f: mlx5_emu::ifc::field::Field| f.get(&out).unwrap();
    assert_eq!(get(query_special_contexts_out::RESD_LKEY.raw()), 0x100);
    assert_ne!(get(query_special_contexts_out::NULL_MKEY.raw()), 0);
}

#[test]
fn cq_create_query_destroy() {
    let mut d = Dev::new();
    let cqn = d.cq();
    assert_eq!(d.live("cq"), 1);
    let q = input(
        16,
        Opcode::QUERY_CQ as u16,
        0,
        &[(query_cq_in::CQN.raw(), u64::from(cqn))],
    );
    let out = d.h.ok(&q, 0x110 + 8);
    let c = query_cq_out::CQ_CONTEXT.raw().byte_off();
    assert_eq!(cqc::LOG_CQ_SIZE.raw().get(&out[c..]).unwrap(), 4);
    assert_eq!(
        cqc::C_EQN_OR_APU_ELEMENT.raw().get(&out[c..]).unwrap(),
        u64::from(d.eqn)
    );
    assert_eq!(d.on(Opcode::DESTROY_CQ, destroy_cq_in::CQN, cqn), OK);
    assert_eq!(d.on(Opcode::DESTROY_CQ, destroy_cq_in::CQN, cqn), BAD_RES);
    assert_eq!(d.h.run(&q, 0x118).0, BAD_RES);
    assert_eq!(d.live("cq"), 0);
}

#[test]
fn cq_needs_an_existing_eq_uar_and_pages() {
    let mut d = Dev::new();
    let eqn = d.eqn;
    let inp = d.cq_input(4, eqn + 1);
    assert_eq!(d.h.run(&inp, 16).0, BAD_RES, "unknown EQ");
    let mut inp = d.cq_input(4, eqn);
    set_at(&mut inp, 0x10, cqc::UAR_PAGE, 3);
    assert_eq!(d.h.run(&inp, 16).0, BAD_PARAM, "unallocated UAR");
    let mut inp = d.cq_input(4, eqn);
    set_at(&mut inp, 0x10, cqc::LOG_CQ_SIZE, 23);
    assert_eq!(d.h.run(&inp, 16).0, BAD_PARAM, "above log_max_cq_sz");
    let mut inp = d.cq_input(4, eqn);
    set_at(&mut inp, 0x10, cqc::DBR_ADDR, 4);
    assert_eq!(
        d.h.run(&inp, 16).0,
        BAD_PARAM,
        "doorbell record outside memory"
    );
    let mut inp = d.cq_input(6, eqn);
    inp.truncate(inp.len() - 8);
    let st = d.h.run(&inp, 16).0;
    assert_eq!(st, CmdStatus::BAD_INP_LEN_ERR as u8, "page list short");
    assert_eq!(d.live("cq"), 0);
}

#[test]
fn qp_create_destroy_and_references() {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    let qpn = d.qp(st::RC, pd, cq);
    assert!(qpn >= 8);
    assert_eq!(d.live("qp"), 1);
    // Unknown PD, unknown CQ.
    let inp = d.qp_input(st::RC, pd + 10, cq);
    assert_eq!(d.h.run(&inp, 16).0, BAD_RES);
    let inp = d.qp_input(st::UD, pd, cq + 10);
    assert_eq!(d.h.run(&inp, 16).0, BAD_RES);
    // An SRQ receive queue names an SRQ that must exist.
    let mut inp = d.qp_input(st::RC, pd, cq);
    let c = create_qp_in::QPC.raw().byte_off();
    set_at(&mut inp, c, qpc::RQ_TYPE, 1);
    set_at(&mut inp, c, qpc::SRQN_RMPN_XRQN, 99);
    assert_eq!(d.h.run(&inp, 16).0, BAD_RES);
    // XRC needs an XRC domain.
    let inp = d.qp_input(st::XRC, pd, cq);
    assert_eq!(d.h.run(&inp, 16).0, BAD_RES);
    // Unknown service type.
    let inp = d.qp_input(0x6, pd, cq);
    assert_eq!(d.h.run(&inp, 16).0, BAD_PARAM);
    // Destroying what a QP uses: permissive by default (violation), refused strict.
    let v0 = d.h.dev.fw().stats.violations;
    {
        d.h.dev.fw().strict.destroy_in_use = true;
    }
    assert_eq!(
        d.on(Opcode::DEALLOC_PD, dealloc_pd_in::PD, pd),
        BAD_RES_STATE
    );
    assert_eq!(
        d.on(Opcode::DESTROY_CQ, destroy_cq_in::CQN, cq),
        BAD_RES_STATE
    );
    assert!(d.h.dev.fw().stats.violations > v0);
    assert_eq!(d.on(Opcode::DESTROY_QP, destroy_qp_in::QPN, qpn), OK);
    assert_eq!(d.on(Opcode::DESTROY_QP, destroy_qp_in::QPN, qpn), BAD_RES);
    assert_eq!(d.on(Opcode::DESTROY_CQ, destroy_cq_in::CQN, cq), OK);
    assert_eq!(d.on(Opcode::DEALLOC_PD, dealloc_pd_in::PD, pd), OK);
    let fw = d.h.dev.fw();
    assert_eq!(fw.objs.total(), 0);
}

#[test]
fn destroy_in_use_is_permissive_by_default() {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    let qpn = d.qp(st::UD, pd, cq);
    let v0 = d.h.dev.fw().stats.violations;
    assert_eq!(d.on(Opcode::DESTROY_CQ, destroy_cq_in::CQN, cq), OK);
    assert_eq!(d.h.dev.fw().stats.violations, v0 + 1);
    assert_eq!(d.on(Opcode::DESTROY_QP, destroy_qp_in::QPN, qpn), OK);
    assert_eq!(d.on(Opcode::DEALLOC_PD, dealloc_pd_in::PD, pd), OK);
    assert_eq!(d.h.dev.fw().stats.violations, v0 + 1);
}

#[test]
fn teardown_drops_objects_and_counts_them() {
    let mut d = Dev::new();
    d.pd();
    d.cq();
    let fw_created = d.h.dev.fw().objs.created.get("pd").copied();
    assert_eq!(fw_created, Some(1));
    d.h.dev.reset();
    let fw = d.h.dev.fw();
    assert_eq!(fw.objs.total(), 0);
    assert_eq!(fw.objs.dropped, 2);
}

#[test]
fn srq_xrc_srq_rmp_and_their_references() {
    use mlx5_emu::ifc::srq::{
        arm_rq_in, destroy_rmp_in, destroy_srq_in, destroy_xrc_srq_in, query_rmp_in, query_srq_in,
        query_srq_out, srqc,
    };
    use verbs::SrqCmd;
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    let x = d.xrcd();
    let s = d.srq(SrqCmd::Basic, pd, 0, 0);
    let xs = d.srq(SrqCmd::Xrc, pd, cq, x);
    let r = d.srq(SrqCmd::Rmp, pd, 0, 0);
    // One number space.
    assert!(s != xs && xs != r && s != r);
    assert_eq!((d.live("srq"), d.live("xrc_srq"), d.live("rmp")), (1, 1, 1));
    // References: unknown PD, XRC SRQ without XRCD or CQ.
    let inp = d.srq_input(SrqCmd::Basic, pd + 9, 0, 0);
    assert_eq!(d.h.run(&inp, 16).0, BAD_RES);
    let inp = d.srq_input(SrqCmd::Xrc, pd, cq, x + 9);
    assert_eq!(d.h.run(&inp, 16).0, BAD_RES);
    let inp = d.srq_input(SrqCmd::Xrc, pd, cq + 9, x);
    assert_eq!(d.h.run(&inp, 16).0, BAD_RES);
    let inp = d.srq_input(SrqCmd::Rmp, pd + 9, 0, 0);
    assert_eq!(d.h.run(&inp, 16).0, BAD_RES);
    // Query, arm.
    let q = input(
        16,
        Opcode::QUERY_SRQ as u16,
        0,
        &[(query_srq_in::SRQN.raw(), u64::from(s))],
    );
    let out = d.h.ok(&q, 0x110 + 8);
    let c = query_srq_out::SRQ_CONTEXT_ENTRY.raw().byte_off();
    assert_eq!(srqc::LOG_SRQ_SIZE.raw().get(&out[c..]).unwrap(), 4);
    let arm = input(
        16,
        Opcode::ARM_RQ as u16,
        1,
        &[
            (arm_rq_in::SRQ_NUMBER.raw(), u64::from(s)),
            (arm_rq_in::LWM.raw(), 3),
        ],
    );
    d.h.ok(&arm, 16);
    let out = d.h.ok(&q, 0x118);
    assert_eq!(srqc::LWM.raw().get(&out[c..]).unwrap(), 3);
    let q = input(
        16,
        Opcode::QUERY_RMP as u16,
        0,
        &[(query_rmp_in::RMPN.raw(), u64::from(r))],
    );
    d.h.ok(&q, 0x110);
    // Kinds do not mix: DESTROY_SRQ of an RMP is an unknown SRQ.
    assert_eq!(d.on(Opcode::DESTROY_SRQ, destroy_srq_in::SRQN, r), BAD_RES);
    // A QP on the SRQ keeps it (and the XRCD under the XRC SRQ) referenced.
    let mut qin = d.qp_input(st::RC, pd, cq);
    let qc = create_qp_in::QPC.raw().byte_off();
    set_at(&mut qin, qc, qpc::RQ_TYPE, 1);
    set_at(&mut qin, qc, qpc::SRQN_RMPN_XRQN, u64::from(r));
    let qpn = mlx5_emu::ifc::qp::create_qp_out::QPN
        .raw()
        .get(&d.h.ok(&qin, 16))
        .unwrap() as u32;
    d.h.dev.fw().strict.destroy_in_use = true;
    assert_eq!(
        d.on(Opcode::DESTROY_RMP, destroy_rmp_in::RMPN, r),
        BAD_RES_STATE
    );
    assert_eq!(
        d.on(Opcode::DEALLOC_XRCD, dealloc_xrcd_in::XRCD, x),
        BAD_RES_STATE
    );
    assert_eq!(
        d.on(Opcode::DESTROY_CQ, destroy_cq_in::CQN, cq),
        BAD_RES_STATE
    );
    assert_eq!(d.on(Opcode::DESTROY_QP, destroy_qp_in::QPN, qpn), OK);
    assert_eq!(d.on(Opcode::DESTROY_RMP, destroy_rmp_in::RMPN, r), OK);
    assert_eq!(
        d.on(Opcode::DESTROY_XRC_SRQ, destroy_xrc_srq_in::XRC_SRQN, xs),
        OK
    );
    assert_eq!(d.on(Opcode::DESTROY_SRQ, destroy_srq_in::SRQN, s), OK);
    assert_eq!(d.on(Opcode::DEALLOC_XRCD, dealloc_xrcd_in::XRCD, x), OK);
    assert_eq!(d.on(Opcode::DESTROY_CQ, destroy_cq_in::CQN, cq), OK);
    assert_eq!(d.on(Opcode::DEALLOC_PD, dealloc_pd_in::PD, pd), OK);
    assert_eq!(d.h.dev.fw().objs.total(), 0);
}

#[test]
fn mkey_numbering_context_and_pd() {
    use mlx5_emu::ifc::mkey::{
        create_mkey_in, destroy_mkey_in, mkc, query_mkey_in, query_mkey_out,
    };
    let mut d = Dev::new();
    let pd = d.pd();
    let a = d.mkey(pd, 4);
    let b = d.mkey(pd, 1);
    assert!(a >= mlx5_emu::fw::rsc::FIRST_MKEY_INDEX);
    assert_ne!(a, b);
    let q = input(
        16,
        Opcode::QUERY_MKEY as u16,
        0,
        &[(query_mkey_in::MKEY_INDEX.raw(), u64::from(a))],
    );
    let out = d.h.ok(&q, query_mkey_out::BYTES);
    let m = query_mkey_out::MEMORY_KEY_MKEY_ENTRY.raw().byte_off();
    // The key the driver uses is index << 8 | mkey_7_0.
    let key = (a << 8) | mkc::MKEY_7_0.raw().get(&out[m..]).unwrap() as u32;
    assert_eq!(key & 0xff, 0x42);
    assert_eq!(mkc::PD.raw().get(&out[m..]).unwrap(), u64::from(pd));
    let t = query_mkey_out::BSF0_KLM0_PAS_MTT0_1.raw().byte_off();
    assert_eq!(&out[t..t + 8], &0x2000_0000u64.to_be_bytes());
    // An output with room for the context only is answered, without the list.
    let out = d.h.ok(&q, 0x60);
    assert_eq!(mkc::PD.raw().get(&out[m..]).unwrap(), u64::from(pd));
    // Unknown PD, translation list longer than its table, access mode not modelled.
    let inp = d.mkey_input(pd + 5, 2);
    assert_eq!(d.h.run(&inp, 16).0, BAD_RES);
    let mut inp = d.mkey_input(pd, 2);
    let c = create_mkey_in::MEMORY_KEY_MKEY_ENTRY.raw().byte_off();
    set_at(&mut inp, c, mkc::TRANSLATIONS_OCTWORD_SIZE, 0);
    assert_eq!(d.h.run(&inp, 16).0, BAD_PARAM);
    let mut inp = d.mkey_input(pd, 2);
    set_at(&mut inp, c, mkc::ACCESS_MODE_4_2, 1);
    assert_eq!(d.h.run(&inp, 16).0, BAD_PARAM);
    let mut inp = d.mkey_input(pd, 4);
    inp.truncate(inp.len() - 16);
    assert_eq!(d.h.run(&inp, 16).0, CmdStatus::BAD_INP_LEN_ERR as u8);
    // An mkey keeps its PD referenced.
    d.h.dev.fw().strict.destroy_in_use = true;
    assert_eq!(
        d.on(Opcode::DEALLOC_PD, dealloc_pd_in::PD, pd),
        BAD_RES_STATE
    );
    let f = destroy_mkey_in::MKEY_INDEX;
    assert_eq!(d.on(Opcode::DESTROY_MKEY, f, a), OK);
    assert_eq!(d.on(Opcode::DESTROY_MKEY, f, a), BAD_RES);
    assert_eq!(d.on(Opcode::DESTROY_MKEY, f, b), OK);
    assert_eq!(d.on(Opcode::DEALLOC_PD, dealloc_pd_in::PD, pd), OK);
    assert_eq!(d.live("mkey"), 0);
}

/// Page-request EQEs (type 0x0b) written into the test EQ so far: their num_pages.
fn page_requests(d: &Dev) -> Vec<i32> {
    use mlx5_emu::mem::GuestMemory;
    let mut v = Vec::new();
    for i in 0..64u64 {
        let mut e = [0u8; 64];
        d.h.mem.read(d.eq_buf + 64 * i, &mut e).unwrap();
        // Written EQEs have owner bit 0 in the first pass (the buffer starts zeroed,
        // so look at the type byte instead and skip empty slots).
        if e[1] == 0x0b {
            v.push(i32::from_be_bytes([e[0x24], e[0x25], e[0x26], e[0x27]]));
        }
    }
    v
}

#[test]
fn objects_cost_pages_and_give_them_back() {
    let mut d = Dev::new();
    d.h.dev.fw().objs.cost.objects_per_page = 4;
    let pd = d.pd();
    let mut mk = Vec::new();
    for _ in 0..2 {
        mk.push(d.mkey(pd, 1));
    }
    assert!(page_requests(&d).is_empty(), "3 objects fit the first page");
    mk.push(d.mkey(pd, 1));
    assert_eq!(page_requests(&d), vec![1], "the 4th object asks for a page");
    for _ in 0..4 {
        mk.push(d.mkey(pd, 1));
    }
    assert_eq!(page_requests(&d), vec![1, 1]);
    assert_eq!(d.h.dev.fw().ledger.runtime_demand, 2);
    for m in mk {
        let f = mlx5_emu::ifc::mkey::destroy_mkey_in::MKEY_INDEX;
        assert_eq!(d.on(Opcode::DESTROY_MKEY, f, m), OK);
    }
    assert_eq!(page_requests(&d), vec![1, 1, -1, -1]);
    let fw = d.h.dev.fw();
    assert_eq!(fw.objs.cost.charged, 0);
    assert_eq!(fw.objs.cost.requests, (2, 2));
    assert_eq!(fw.ledger.runtime_demand, 0);
}

#[test]
fn stats_list_objects_and_reset_clears_them() {
    let mut d = Dev::new();
    let pd = d.pd();
    d.cq();
    d.mkey(pd, 1);
    let s = mlx5_emu::report::stats(&d.h.dev);
    assert_eq!(s["objects"]["live"]["pd"], 1);
    assert_eq!(s["objects"]["live"]["cq"], 1);
    assert_eq!(s["objects"]["live"]["mkey"], 1);
    assert_eq!(s["objects"]["total"], 3);
    assert_eq!(s["objects"]["created"]["cq"], 1);
    d.h.dev.reset();
    let s = mlx5_emu::report::stats(&d.h.dev);
    assert_eq!(s["objects"]["total"], 0);
    assert_eq!(s["objects"]["live"]["pd"], 0);
    assert_eq!(s["objects"]["dropped"], 3);
}

#[test]
fn umr_and_ipoib_underlay_qps_need_no_pd() {
    use mlx5_emu::ifc::qp::ads;
    let mut d = Dev::new();
    let cq = d.cq();
    let c = create_qp_in::QPC.raw().byte_off();
    // upstream's UMR QP: REG_UMR, pd 0.
    let mut inp = d.qp_input(st::REG_UMR, 0, cq);
    set_at(&mut inp, c, qpc::RQ_TYPE, 3);
    d.h.ok(&inp, 16);
    // Any other type needs its PD.
    let inp = d.qp_input(st::RC, 0, cq);
    assert_eq!(d.h.run(&inp, 16).0, BAD_RES);
    // upstream mlx5i_create_underlay_qp: UD, enhanced ULP mode, nothing else.
    let mut inp = input(create_qp_in::BYTES, Opcode::CREATE_QP as u16, 0, &[]);
    set_at(&mut inp, c, qpc::ST, u64::from(st::UD));
    set_at(&mut inp, c, qpc::PM_STATE, 3);
    set_at(&mut inp, c, qpc::ULP_STATELESS_OFFLOAD_MODE, 2);
    let p = c + qpc::PRIMARY_ADDRESS_PATH.raw().byte_off();
    set_at(&mut inp, p, ads::VHCA_PORT_NUM, 1);
    d.h.ok(&inp, 16);
    // Without the ULP mode the same context lacks its PD.
    set_at(&mut inp, c, qpc::ULP_STATELESS_OFFLOAD_MODE, 0);
    assert_eq!(d.h.run(&inp, 16).0, BAD_RES);
    assert_eq!(d.live("qp"), 2);
}

#[test]
fn control_socket_objects_knobs() {
    use mlx5_emu::control::handle;
    use serde_json::json;
    let mut d = Dev::new();
    let r = handle(
        &d.h.dev,
        &json!({"cmd": "object_pages", "objects_per_page": 2}),
    );
    assert_eq!(r["ok"], true);
    let pd = d.pd();
    let cq = d.cq();
    let qpn = d.qp(st::UD, pd, cq);
    let s = handle(&d.h.dev, &json!({"cmd": "stats"}));
    assert_eq!(s["objects"]["total"], 3);
    assert_eq!(s["objects"]["pages"]["charged"], 1);
    assert_eq!(s["objects"]["qp_states"][qpn.to_string()], 0);
    // The device moves a QP only out of RTS (or into ERR).
    let r = handle(
        &d.h.dev,
        &json!({"cmd": "qp_state", "qpn": qpn, "state": 4}),
    );
    assert_eq!(r["ok"], false);
    let r = handle(
        &d.h.dev,
        &json!({"cmd": "qp_state", "qpn": qpn, "state": 6}),
    );
    assert_eq!(r["ok"], true);
    let g = handle(
        &d.h.dev,
        &json!({"cmd": "get", "path": ["objects", "qp_states", qpn.to_string()]}),
    );
    assert_eq!(g["value"], 6);
    let r = handle(&d.h.dev, &json!({"cmd": "object_pages"}));
    assert_eq!(r["ok"], false);
    // Strict rules by name.
    let r = handle(
        &d.h.dev,
        &json!({"cmd": "strict", "rule": "destroy_in_use", "on": true}),
    );
    assert_eq!(r["ok"], true);
    assert_eq!(
        d.on(Opcode::DEALLOC_PD, dealloc_pd_in::PD, pd),
        BAD_RES_STATE
    );
    // The control reset restores the default knob and forgets the objects.
    handle(&d.h.dev, &json!({"cmd": "reset"}));
    let s = handle(&d.h.dev, &json!({"cmd": "stats"}));
    assert_eq!(s["objects"]["total"], 0);
    assert_eq!(
        s["objects"]["pages"]["objects_per_page"],
        mlx5_emu::fw::rsc::DEFAULT_OBJECTS_PER_PAGE
    );
    assert_eq!(s["strict"]["destroy_in_use"], false);
}

#[test]
fn cq_qp_srq_mkey_limits_follow_the_caps() {
    use mlx5_emu::ifc::caps::cmd_hca_cap as g;
    use verbs::SrqCmd;
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    {
        let mut fw = d.h.dev.fw();
        for f in [
            g::LOG_MAX_CQ.raw(),
            g::LOG_MAX_QP.raw(),
            g::LOG_MAX_MKEY.raw(),
        ] {
            f.set(&mut fw.caps.gen_cur, 1).unwrap();
        }
        g::LOG_MAX_SRQ.raw().set(&mut fw.caps.gen_cur, 0).unwrap();
        g::LOG_MAX_RMP.raw().set(&mut fw.caps.gen_cur, 0).unwrap();
    }
    d.cq();
    let eqn = d.eqn;
    let inp = d.cq_input(4, eqn);
    assert_eq!(d.h.run(&inp, 16).0, LIM, "third CQ");
    d.qp(st::UD, pd, cq);
    d.qp(st::UD, pd, cq);
    let inp = d.qp_input(st::UD, pd, cq);
    assert_eq!(d.h.run(&inp, 16).0, LIM, "third QP");
    d.mkey(pd, 1);
    d.mkey(pd, 1);
    let inp = d.mkey_input(pd, 1);
    assert_eq!(d.h.run(&inp, 16).0, LIM, "third mkey");
    // One SRQ and one RMP: separate limits in one number space.
    d.srq(SrqCmd::Basic, pd, 0, 0);
    let inp = d.srq_input(SrqCmd::Basic, pd, 0, 0);
    assert_eq!(d.h.run(&inp, 16).0, LIM, "second SRQ");
    d.srq(SrqCmd::Rmp, pd, 0, 0);
    let inp = d.srq_input(SrqCmd::Rmp, pd, 0, 0);
    assert_eq!(d.h.run(&inp, 16).0, LIM, "second RMP");
    assert_eq!(d.h.dev.fw().objs.total(), 1 + 2 + 2 + 2 + 2);
}

#[test]
fn eq_with_cqs_is_in_use() {
    use mlx5_emu::ifc::eq::destroy_eq_in;
    let mut d = Dev::new();
    let cq = d.cq();
    d.h.dev.fw().strict.destroy_in_use = true;
    let eqn = u32::from(d.eqn);
    assert_eq!(
        d.on(Opcode::DESTROY_EQ, destroy_eq_in::EQ_NUMBER, eqn),
        BAD_RES_STATE
    );
    assert_eq!(d.on(Opcode::DESTROY_CQ, destroy_cq_in::CQN, cq), OK);
    assert_eq!(d.on(Opcode::DESTROY_EQ, destroy_eq_in::EQ_NUMBER, eqn), OK);
}

/// Random inputs and output lengths for every verbs command: answered, never a panic.
#[test]
fn random_inputs_never_panic() {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    d.qp(st::RC, pd, cq);
    let ops = [
        Opcode::ALLOC_PD,
        Opcode::DEALLOC_PD,
        Opcode::ALLOC_XRCD,
        Opcode::DEALLOC_XRCD,
        Opcode::ALLOC_TRANSPORT_DOMAIN,
        Opcode::DEALLOC_TRANSPORT_DOMAIN,
        Opcode::ALLOC_Q_COUNTER,
        Opcode::DEALLOC_Q_COUNTER,
        Opcode::QUERY_Q_COUNTER,
        Opcode::QUERY_SPECIAL_CONTEXTS,
        Opcode::CREATE_CQ,
        Opcode::DESTROY_CQ,
        Opcode::QUERY_CQ,
        Opcode::MODIFY_CQ,
        Opcode::CREATE_QP,
        Opcode::DESTROY_QP,
        Opcode::QUERY_QP,
        Opcode::RST2INIT_QP,
        Opcode::INIT2INIT_QP,
        Opcode::INIT2RTR_QP,
        Opcode::RTR2RTS_QP,
        Opcode::RTS2RTS_QP,
        Opcode::SQERR2RTS_QP,
        Opcode::SQD_RTS_QP,
        Opcode::_2ERR_QP,
        Opcode::_2RST_QP,
        Opcode::CREATE_SRQ,
        Opcode::DESTROY_SRQ,
        Opcode::QUERY_SRQ,
        Opcode::ARM_RQ,
        Opcode::CREATE_XRC_SRQ,
        Opcode::DESTROY_XRC_SRQ,
        Opcode::QUERY_XRC_SRQ,
        Opcode::ARM_XRC_SRQ,
        Opcode::CREATE_RMP,
        Opcode::MODIFY_RMP,
        Opcode::DESTROY_RMP,
        Opcode::QUERY_RMP,
        Opcode::CREATE_MKEY,
        Opcode::DESTROY_MKEY,
        Opcode::QUERY_MKEY,
    ];
    let mut x: u64 = 0x1234_5678_9abc_def1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut answered = 0;
    for round in 0..300 {
        for op in ops {
            let len = 16 + (next() % 700) as usize;
            let outlen = 16 + (next() % 700) as usize;
            let mut inp: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            inp[0..2].copy_from_slice(&(op as u16).to_be_bytes());
            if round % 2 == 0 {
                // uid 0 and small object numbers, to get past the first checks.
                inp[2..4].fill(0);
                for b in inp.iter_mut().skip(8).take(8) {
                    *b &= 0x03;
                }
            }
            let (st, _, _) = d.h.run(&inp, outlen);
            assert!(CmdStatus::from_raw(st).is_some(), "{op:?}: status {st:#x}");
            answered += 1;
        }
    }
    assert_eq!(answered, 300 * ops.len());
}
