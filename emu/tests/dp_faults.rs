//! Data-path faults on demand (control `dp_fault`, emu/src/fw/dp/fault.rs) on a
//! loopback RC pair in process, set up as emu/tests/dp_send.rs does (real commands,
//! WQEs written as upstream writes them). Expectations from the PRM / IBTA behaviour
//! of the real fault: an error CQE moves its QP to ERR and what follows flushes; a lost
//! CQE leaves a gap in the WQE counters; an overrun CQ takes no more CQEs and raises
//! the CQ error event (syndrome 1); a WQE fetch error completes that WQE with a local
//! QP operation error and raises WQ_CATAS_ERROR; an rkey violation NAKs the requester
//! with a remote access error and raises WQ_ACCESS_ERROR at the responder. Each fault
//! expires after its count; `clear_injections` and `reset` drop the rules.

mod common;
#[path = "common/dp.rs"]
mod dp;
#[path = "common/verbs.rs"]
mod verbs;

use dp::{connect, create_qp, dseg, mr, raddr, rcqe, scqe, state_of, Conn, Qp};
use mlx5_emu::fw::qp_state::{st, state};
use mlx5_emu::ifc::eqe::event_type::{CQ_ERROR, WQ_ACCESS_ERROR, WQ_CATAS_ERROR};
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::wqe::{opcode, vals, WqeDataSeg};
use mlx5_emu::mem::GuestMemory;
use serde_json::{json, Value};
use verbs::{eqes, Dev};
use zerocopy::IntoBytes;

/// [`dp::post`] without an immediate.
fn post(d: &Dev, q: &mut Qp, opc: u8, signalled: bool, segs: &[u8]) {
    dp::post(d, q, opc, signalled, 0, segs);
}

/// [`dp::post_recv`] of one buffer.
fn post_recv(d: &Dev, q: &mut Qp, sge: WqeDataSeg) {
    dp::post_recv(d, q, &[sge]);
}

/// (CQE opcode, syndrome, vendor syndrome, WQE counter) as `mlx5_err_cqe` lays them
/// out (cq.h / mlx5_ib `mlx5_handle_error_cqe`).
fn fields(c: &[u8; 64]) -> (u8, u8, u8, u16) {
    (c[63] >> 4, c[55], c[54], u16::from_be_bytes([c[60], c[61]]))
}

fn qpn_of(c: &[u8; 64]) -> u32 {
    u32::from_be_bytes([c[56], c[57], c[58], c[59]]) & 0xff_ffff
}

/// The QPN of a QP event (`mlx5_eqe_qp_srq`: number in the last 4 bytes, 24 bits).
fn event_qpn(e: &[u8; 28]) -> u32 {
    u32::from_be_bytes([e[24], e[25], e[26], e[27]]) & 0xff_ffff
}

fn ctl(d: &Dev, v: Value) -> Value {
    mlx5_emu::control::handle(&d.h.dev, &v)
}

fn faults(d: &Dev) -> Value {
    ctl(d, json!({"cmd": "stats"}))["dp"]["faults"].clone()
}

/// Two RC QPs connected in loopback, an async EQ, a source and a destination MR.
struct Pair {
    d: Dev,
    a: Qp,
    b: Qp,
    aeq: u64,
    lk: u32,
    src: u64,
    rk: u32,
    dst: u64,
}

fn pair() -> Pair {
    let mut d = Dev::new();
    let aeq = verbs::async_eq(
        &mut d,
        (1 << CQ_ERROR) | (1 << WQ_CATAS_ERROR) | (1 << WQ_ACCESS_ERROR),
    );
    let pd = d.pd();
    let a = create_qp(&mut d, st::RC, pd);
    let b = create_qp(&mut d, st::RC, pd);
    let lid = d.h.dev.fw().ib_port.lid;
    connect(&mut d, a.qpn, Conn::to(b.qpn, lid));
    connect(&mut d, b.qpn, Conn::to(a.qpn, lid));
    let (lk, src) = mr(&mut d, pd, 4096, false);
    let (rk, dst) = mr(&mut d, pd, 4096, true);
    d.h.mem.write(src, &[0x5a; 64]).unwrap();
    Pair {
        d,
        a,
        b,
        aeq,
        lk,
        src,
        rk,
        dst,
    }
}

impl Pair {
    /// A posts a signalled 64-byte SEND (B has a receive posted first).
    fn send(&mut self) {
        post_recv(&self.d, &mut self.b, dseg(64, self.rk, self.dst));
        let seg = dseg(64, self.lk, self.src);
        post(&self.d, &mut self.a, opcode::SEND, true, seg.as_bytes());
    }

    fn nop(&mut self) {
        post(&self.d, &mut self.a, opcode::NOP, true, &[]);
    }

    fn no_violations(&self) {
        dp::no_violations(&self.d);
    }
}

fn ok(v: Value) {
    assert_eq!(v["ok"], true, "{v}");
}

#[test]
fn cqe_error_on_a_qp_moves_it_to_err_and_flushes_the_rest() {
    let mut p = pair();
    ok(ctl(
        &p.d,
        json!({"cmd": "dp_fault", "fault": "cqe_error", "qpn": p.a.qpn,
               "syndrome": vals::SYNDROME_LOCAL_PROT_ERR, "vendor": 0x42}),
    ));
    p.send();
    // The WQE executed (B received the data), its completion came out as an error.
    let r = rcqe(&p.d, &mut p.b).expect("B's receive CQE");
    assert_eq!(r[63] >> 4, vals::CQE_RESP_SEND);
    let s = scqe(&p.d, &mut p.a).expect("A's CQE");
    assert_eq!(
        fields(&s),
        (vals::CQE_REQ_ERR, vals::SYNDROME_LOCAL_PROT_ERR, 0x42, 0)
    );
    assert_eq!(qpn_of(&s), p.a.qpn);
    assert_eq!(state_of(&p.d, p.a.qpn), state::ERR);
    assert_eq!(state_of(&p.d, p.b.qpn), state::RTS);
    // Later WQEs flush (syndrome 0x05), not the injected syndrome again.
    p.nop();
    let f = scqe(&p.d, &mut p.a).expect("flush CQE");
    assert_eq!(
        fields(&f),
        (vals::CQE_REQ_ERR, vals::SYNDROME_WR_FLUSH_ERR, 0, 1)
    );
    let st = faults(&p.d);
    assert_eq!(st["cqe_error"], 1);
    assert_eq!(st["rules"][0]["remaining"], 0);
    assert_eq!(st["rules"][0]["hits"], 1);
    p.no_violations();
}

#[test]
fn cqe_error_on_a_receive_cq_naks_the_requester() {
    let mut p = pair();
    ok(ctl(
        &p.d,
        json!({"cmd": "dp_fault", "fault": "cqe_error", "cqn": p.b.rcq}),
    ));
    p.send();
    // B's receive completes in error (default syndrome: local QP operation), B in ERR.
    let r = rcqe(&p.d, &mut p.b).expect("B's CQE");
    assert_eq!(
        fields(&r),
        (vals::CQE_RESP_ERR, vals::SYNDROME_LOCAL_QP_OP_ERR, 0, 0)
    );
    assert_eq!(state_of(&p.d, p.b.qpn), state::ERR);
    // A is answered NAK remote operational error instead of the ACK.
    let s = scqe(&p.d, &mut p.a).expect("A's CQE");
    assert_eq!(
        fields(&s),
        (vals::CQE_REQ_ERR, vals::SYNDROME_REMOTE_OP_ERR, 0, 0)
    );
    assert_eq!(state_of(&p.d, p.a.qpn), state::ERR);
    p.no_violations();
}

#[test]
fn lost_cqes_leave_a_gap_and_expire_after_their_count() {
    let mut p = pair();
    ok(ctl(
        &p.d,
        json!({"cmd": "dp_fault", "fault": "lost_cqe", "cqn": p.a.scq, "count": 2}),
    ));
    p.send();
    // The SEND executed: the data and B's CQE are there, A's CQE never appears.
    let mut got = [0u8; 64];
    p.d.h.mem.read(p.dst, &mut got).unwrap();
    assert_eq!(got, [0x5a; 64]);
    assert!(rcqe(&p.d, &mut p.b).is_some());
    assert!(scqe(&p.d, &mut p.a).is_none());
    p.nop();
    assert!(scqe(&p.d, &mut p.a).is_none(), "second CQE lost too");
    // Expired: the third completes, its counter after the gap; the QP still works.
    p.nop();
    let s = scqe(&p.d, &mut p.a).expect("third CQE");
    assert_eq!(fields(&s).0, vals::CQE_REQ);
    assert_eq!(fields(&s).3, 2);
    assert_eq!(state_of(&p.d, p.a.qpn), state::RTS);
    let st = faults(&p.d);
    assert_eq!(st["lost_cqe"], 2);
    assert_eq!(st["total"], 2);
    p.no_violations();
}

#[test]
fn bad_cqe_test_faults_write_one_field_malformed_and_change_nothing_else() {
    let mut p = pair();
    // Opcode on A's send CQ: the requester CQE with opcode 0x9, QPN and counter kept.
    ok(ctl(
        &p.d,
        json!({"cmd": "dp_fault", "fault": "bad_cqe_opcode", "cqn": p.a.scq}),
    ));
    p.send();
    let s = scqe(&p.d, &mut p.a).expect("A's CQE");
    assert_eq!(fields(&s).0, 0x9);
    assert_eq!((qpn_of(&s), fields(&s).3), (p.a.qpn, 0));
    assert_eq!(s[56], opcode::SEND, "the send opcode kept");
    // The SEND executed and B's CQE is untouched; both QPs still in RTS.
    let r = rcqe(&p.d, &mut p.b).expect("B's CQE");
    assert_eq!(r[63] >> 4, vals::CQE_RESP_SEND);
    assert_eq!(state_of(&p.d, p.a.qpn), state::RTS);
    // The WQE counter, on A's QP: its own counter + 0x8000.
    ok(ctl(
        &p.d,
        json!({"cmd": "dp_fault", "fault": "bad_cqe_wqe_counter", "qpn": p.a.qpn}),
    ));
    p.nop();
    let s = scqe(&p.d, &mut p.a).expect("A's CQE");
    assert_eq!(fields(&s).0, vals::CQE_REQ);
    assert_eq!((qpn_of(&s), fields(&s).3), (p.a.qpn, 0x8001));
    // The QPN, on a flush CQE: an error CQE first (A to ERR), then the flush of the
    // next WQE with an unknown QPN, its syndrome and counter kept.
    ok(ctl(
        &p.d,
        json!({"cmd": "dp_fault", "fault": "cqe_error", "qpn": p.a.qpn}),
    ));
    p.nop();
    let s = scqe(&p.d, &mut p.a).expect("A's error CQE");
    assert_eq!((qpn_of(&s), fields(&s).3), (p.a.qpn, 2));
    assert_eq!(state_of(&p.d, p.a.qpn), state::ERR);
    ok(ctl(
        &p.d,
        json!({"cmd": "dp_fault", "fault": "bad_cqe_qpn", "cqn": p.a.scq}),
    ));
    p.nop();
    let f = scqe(&p.d, &mut p.a).expect("A's flush CQE");
    assert_eq!(qpn_of(&f), 0xff_fffe);
    assert_eq!(
        fields(&f),
        (vals::CQE_REQ_ERR, vals::SYNDROME_WR_FLUSH_ERR, 0, 3)
    );
    // Expired: the next CQE is whole.
    p.nop();
    let f = scqe(&p.d, &mut p.a).expect("flush CQE");
    assert_eq!(qpn_of(&f), p.a.qpn);
    assert_eq!(
        fields(&f),
        (vals::CQE_REQ_ERR, vals::SYNDROME_WR_FLUSH_ERR, 0, 4)
    );
    let st = faults(&p.d);
    assert_eq!(
        (
            st["bad_cqe_opcode"].clone(),
            st["bad_cqe_wqe_counter"].clone(),
            st["bad_cqe_qpn"].clone(),
            st["total"].clone()
        ),
        (json!(1), json!(1), json!(1), json!(4))
    );
    p.no_violations();
}

#[test]
fn cq_overrun_on_demand_raises_the_cq_error_event() {
    let mut p = pair();
    ok(ctl(
        &p.d,
        json!({"cmd": "dp_fault", "fault": "cq_overrun", "cqn": p.a.scq}),
    ));
    p.nop();
    assert!(scqe(&p.d, &mut p.a).is_none());
    // mlx5_eqe_cq_err: CQN (24 bits), syndrome at byte 11 (1: overrun).
    let ev = eqes(&p.d, p.aeq, CQ_ERROR);
    assert_eq!(ev.len(), 1);
    assert_eq!(
        u32::from_be_bytes([ev[0][0], ev[0][1], ev[0][2], ev[0][3]]) & 0xff_ffff,
        p.a.scq
    );
    assert_eq!(ev[0][11], vals::CQ_ERROR_SYNDROME_CQ_OVERRUN);
    assert!(p.d.h.dev.fw().objs.cqs[&p.a.scq].dp.overrun);
    // The CQ in error takes no more CQEs (PRM CQ error state); the rule is spent.
    p.nop();
    assert!(scqe(&p.d, &mut p.a).is_none());
    let st = ctl(&p.d, json!({"cmd": "stats"}));
    assert_eq!(st["dp"]["faults"]["cq_overrun"], 1);
    assert_eq!(st["dp"]["cqes"]["cq_error_events"], 1);
    assert_eq!(st["dp"]["cqes"]["overruns"], 2);
    assert_eq!(eqes(&p.d, p.aeq, CQ_ERROR).len(), 1, "one event");
    p.no_violations();
}

#[test]
fn wqe_fetch_dma_error_is_a_local_qp_operation_error_and_wq_catastrophic() {
    let mut p = pair();
    ok(ctl(
        &p.d,
        json!({"cmd": "dp_fault", "fault": "wqe_dma", "qpn": p.a.qpn}),
    ));
    // Unsignalled: an error completes anyway.
    post_recv(&p.d, &mut p.b, dseg(64, p.rk, p.dst));
    let seg = dseg(64, p.lk, p.src);
    post(&p.d, &mut p.a, opcode::SEND, false, seg.as_bytes());
    let s = scqe(&p.d, &mut p.a).expect("A's error CQE");
    assert_eq!(
        fields(&s),
        (vals::CQE_REQ_ERR, vals::SYNDROME_LOCAL_QP_OP_ERR, 0, 0)
    );
    assert_eq!(state_of(&p.d, p.a.qpn), state::ERR);
    // Nothing was sent.
    assert!(rcqe(&p.d, &mut p.b).is_none());
    assert_eq!(state_of(&p.d, p.b.qpn), state::RTS);
    let ev = eqes(&p.d, p.aeq, WQ_CATAS_ERROR);
    assert_eq!(ev.len(), 1);
    assert_eq!(event_qpn(&ev[0]), p.a.qpn);
    // Later WQEs flush.
    p.nop();
    assert_eq!(
        fields(&scqe(&p.d, &mut p.a).expect("flush")).1,
        vals::SYNDROME_WR_FLUSH_ERR
    );
    let st = ctl(&p.d, json!({"cmd": "stats"}));
    assert_eq!(st["dp"]["faults"]["wqe_dma"], 1);
    // An injected fault is not the guest's malformed WQE.
    assert_eq!(st["dp"]["send"]["malformed"], 0);
    p.no_violations();
}

#[test]
fn a_wqe_in_memory_the_host_unmapped_fails_as_the_injected_fetch_error() {
    // A real DMA error on the WQE fetch (the host took the QP's buffer page out of its
    // DMA regions while the QP lives) is what fault `wqe_dma` models: a local QP
    // operation error on that WQE, signalled or not, the QP to ERR, WQ_CATAS_ERROR,
    // nothing sent (IBTA 11.6.3.1 Local Work Queue Catastrophic Error; PRM syndrome
    // 0x02). Unlike the injected fault it is counted as a DMA error (a host posting to
    // memory it no longer maps for the device), never as a malformed WQE.
    let mut p = pair();
    let pd = p.d.pd();
    let mut c = create_qp(&mut p.d, st::RC, pd);
    let lid = p.d.h.dev.fw().ib_port.lid;
    connect(&mut p.d, c.qpn, Conn::to(p.b.qpn, lid));
    // C's first WQEBB leaves the device's reach; the test, which shares no memory
    // rule with the device, writes the WQE to a scratch copy of the queue instead.
    p.d.h.mem.unmap(c.sq, 64);
    let mut view = c;
    view.sq = p.d.h.alloc(64 * u64::from(dp::SQ_BBS), 64);
    post_recv(&p.d, &mut p.b, dseg(64, p.rk, p.dst));
    let seg = dseg(64, p.lk, p.src);
    post(&p.d, &mut view, opcode::SEND, false, seg.as_bytes());
    let s = scqe(&p.d, &mut c).expect("C's error CQE");
    assert_eq!(
        fields(&s),
        (vals::CQE_REQ_ERR, vals::SYNDROME_LOCAL_QP_OP_ERR, 0, 0)
    );
    assert_eq!(qpn_of(&s), c.qpn);
    assert_eq!(state_of(&p.d, c.qpn), state::ERR);
    let ev = eqes(&p.d, p.aeq, WQ_CATAS_ERROR);
    assert_eq!(ev.len(), 1);
    assert_eq!(event_qpn(&ev[0]), c.qpn);
    assert!(rcqe(&p.d, &mut p.b).is_none(), "nothing sent");
    assert_eq!(state_of(&p.d, p.b.qpn), state::RTS);
    let st = ctl(&p.d, json!({"cmd": "stats"}));
    assert_eq!(st["dp"]["send"]["fetch_errors"], 1);
    assert_eq!(st["dp"]["send"]["malformed"], 0);
    assert_eq!(st["dp"]["faults"]["total"], 0, "no rule was involved");
    assert_eq!(st["dma_errors"], 1);
    // The QPs that do have their memory mapped carry on.
    p.send();
    assert_eq!(
        fields(&scqe(&p.d, &mut p.a).expect("A's CQE")).0,
        vals::CQE_REQ
    );
    assert_eq!(
        fields(&rcqe(&p.d, &mut p.b).expect("B's CQE")).0,
        vals::CQE_RESP_SEND
    );
}

#[test]
fn strict_wqe_fetch_catastrophic_reports_no_completion() {
    // The strict reading of IBTA 11.6.3.1 (a catastrophic work queue error "prevents
    // the reporting of completions"): the event and ERR only; the send queue completes
    // nothing from the unreadable WQE on, not even flushes.
    let mut p = pair();
    ok(ctl(
        &p.d,
        json!({"cmd": "strict", "rule": "wqe_fetch_catastrophic", "on": true}),
    ));
    p.nop();
    assert_eq!(
        fields(&scqe(&p.d, &mut p.a).expect("first NOP")).0,
        vals::CQE_REQ
    );
    ok(ctl(
        &p.d,
        json!({"cmd": "dp_fault", "fault": "wqe_dma", "qpn": p.a.qpn}),
    ));
    p.nop();
    assert!(scqe(&p.d, &mut p.a).is_none(), "no completion");
    assert_eq!(state_of(&p.d, p.a.qpn), state::ERR);
    let ev = eqes(&p.d, p.aeq, WQ_CATAS_ERROR);
    assert_eq!(ev.len(), 1);
    assert_eq!(event_qpn(&ev[0]), p.a.qpn);
    p.nop();
    p.d.h.dev.step();
    assert!(scqe(&p.d, &mut p.a).is_none(), "no flush past it");
    let st = ctl(&p.d, json!({"cmd": "stats"}));
    assert_eq!(st["dp"]["send"]["fetch_errors"], 1);
    assert_eq!(st["dp"]["send"]["flushed"], 0);
    assert_eq!(st["strict"]["wqe_fetch_catastrophic"], true);
    // A reset QP starts over (its send queue empty again, as upstream's 2RST leaves
    // it) and executes again.
    assert_eq!(p.d.transition(Opcode::_2RST_QP, p.a.qpn, 0), 0);
    p.a.sq_pi = 0;
    p.d.h.mem.write(p.a.dbr + 4, &0u32.to_be_bytes()).unwrap();
    let lid = p.d.h.dev.fw().ib_port.lid;
    connect(&mut p.d, p.a.qpn, Conn::to(p.b.qpn, lid));
    p.nop();
    // A successful CQE: opcode and WQE counter (its bytes 0x30..0x38 are the
    // timestamp, not a syndrome).
    let (opc, _, _, ctr) = fields(&scqe(&p.d, &mut p.a).expect("NOP after the reset"));
    assert_eq!((opc, ctr), (vals::CQE_REQ, 0));
    p.no_violations();
}

#[test]
fn rkey_violation_on_demand_fails_both_sides() {
    let mut p = pair();
    ok(ctl(
        &p.d,
        json!({"cmd": "dp_fault", "fault": "rkey", "qpn": p.b.qpn}),
    ));
    post_recv(&p.d, &mut p.b, dseg(64, p.rk, p.dst));
    // A valid WRITE (B grants remote write, the key allows it) refused on demand.
    let mut segs = raddr(p.dst, p.rk).as_bytes().to_vec();
    segs.extend_from_slice(dseg(16, p.lk, p.src).as_bytes());
    post(&p.d, &mut p.a, opcode::RDMA_WRITE, true, &segs);
    let s = scqe(&p.d, &mut p.a).expect("A's CQE");
    assert_eq!(
        fields(&s),
        (vals::CQE_REQ_ERR, vals::SYNDROME_REMOTE_ACCESS_ERR, 0, 0)
    );
    assert_eq!(state_of(&p.d, p.a.qpn), state::ERR);
    assert_eq!(state_of(&p.d, p.b.qpn), state::ERR);
    let r = rcqe(&p.d, &mut p.b).expect("B's receive flushed");
    assert_eq!(
        fields(&r),
        (vals::CQE_RESP_ERR, vals::SYNDROME_WR_FLUSH_ERR, 0, 0)
    );
    let mut got = [0u8; 16];
    p.d.h.mem.read(p.dst, &mut got).unwrap();
    assert_eq!(got, [0; 16], "nothing written");
    let ev = eqes(&p.d, p.aeq, WQ_ACCESS_ERROR);
    assert_eq!(ev.len(), 1);
    assert_eq!(event_qpn(&ev[0]), p.b.qpn);
    assert_eq!(faults(&p.d)["rkey"], 1);
    p.no_violations();
}

#[test]
fn rkey_violation_refuses_a_read_once_then_expires() {
    // A zero-length WRITE checks no key (IBTA) and leaves the rule alone; the READ
    // after it is refused, and the rule is spent.
    let mut p = pair();
    ok(ctl(
        &p.d,
        json!({"cmd": "dp_fault", "fault": "rkey", "qpn": p.b.qpn, "count": 1}),
    ));
    let mut segs = raddr(p.dst, p.rk).as_bytes().to_vec();
    segs.extend_from_slice(dseg(0, p.lk, p.src).as_bytes());
    post(&p.d, &mut p.a, opcode::RDMA_WRITE, true, &segs);
    assert_eq!(fields(&scqe(&p.d, &mut p.a).expect("CQE")).0, vals::CQE_REQ);
    assert_eq!(faults(&p.d)["rules"][0]["remaining"], 1, "not consumed");
    let mut segs = raddr(p.dst, p.rk).as_bytes().to_vec();
    segs.extend_from_slice(dseg(8, p.lk, p.src).as_bytes());
    post(&p.d, &mut p.a, opcode::RDMA_READ, true, &segs);
    assert_eq!(
        fields(&scqe(&p.d, &mut p.a).expect("CQE")),
        (vals::CQE_REQ_ERR, vals::SYNDROME_REMOTE_ACCESS_ERR, 0, 1)
    );
    assert_eq!(faults(&p.d)["rules"][0]["remaining"], 0);
}

#[test]
fn clear_injections_and_reset_drop_the_rules() {
    let mut p = pair();
    for f in ["cqe_error", "lost_cqe", "cq_overrun", "wqe_dma", "rkey"] {
        ok(ctl(&p.d, json!({"cmd": "dp_fault", "fault": f})));
    }
    assert_eq!(faults(&p.d)["rules"].as_array().unwrap().len(), 5);
    ok(ctl(&p.d, json!({"cmd": "clear_injections"})));
    assert_eq!(faults(&p.d)["rules"].as_array().unwrap().len(), 0);
    // Nothing fires any more.
    p.send();
    assert_eq!(fields(&scqe(&p.d, &mut p.a).expect("CQE")).0, vals::CQE_REQ);
    assert_eq!(
        fields(&rcqe(&p.d, &mut p.b).expect("CQE")).0,
        vals::CQE_RESP_SEND
    );
    assert_eq!(faults(&p.d)["total"], 0);
    ok(ctl(
        &p.d,
        json!({"cmd": "dp_fault", "fault": "lost_cqe", "count": 9}),
    ));
    ok(ctl(&p.d, json!({"cmd": "reset"})));
    assert_eq!(faults(&p.d)["rules"].as_array().unwrap().len(), 0);
    // Bad requests are refused.
    for bad in [
        json!({"cmd": "dp_fault", "fault": "melt"}),
        json!({"cmd": "dp_fault", "fault": "wqe_dma", "cqn": 1}),
        json!({"cmd": "dp_fault", "fault": "rkey", "qpn": 1, "cqn": 1}),
        json!({"cmd": "dp_fault", "fault": "cqe_error", "syndrome": 256}),
    ] {
        assert_eq!(ctl(&p.d, bad.clone())["ok"], false, "{bad}");
    }
}

#[test]
fn a_rule_without_a_target_hits_the_first_occasion_anywhere() {
    let mut p = pair();
    ok(ctl(&p.d, json!({"cmd": "dp_fault", "fault": "wqe_dma"})));
    // B's fetch comes first: the rule is spent there, A is untouched.
    post(&p.d, &mut p.b, opcode::NOP, true, &[]);
    let s = scqe(&p.d, &mut p.b).expect("B's error CQE");
    assert_eq!(fields(&s).1, vals::SYNDROME_LOCAL_QP_OP_ERR);
    assert_eq!(state_of(&p.d, p.b.qpn), state::ERR);
    p.nop();
    assert_eq!(
        fields(&scqe(&p.d, &mut p.a).expect("A's CQE")).0,
        vals::CQE_REQ
    );
    assert_eq!(state_of(&p.d, p.a.qpn), state::RTS);
    assert_eq!(faults(&p.d)["rules"][0]["target"], "any");
}
