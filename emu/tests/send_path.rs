//! The send doorbell on a UD QP: a send WQE rung through the UAR is consumed and,
//! signalled, completes with a requester CQE (owner bit, wqe_counter, qpn) once sent (UD
//! has no acknowledgement); an armed CQ raises a completion EQE; a QP in ERR flushes
//! with error CQEs. (Data movement: emu/tests/dp_send.rs.)

mod common;
#[path = "common/verbs.rs"]
mod verbs;

use mlx5_emu::fw::qp_state::{st, state};
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::qp::qpc;
use mlx5_emu::mem::GuestMemory;
use verbs::Dev;

struct Sq {
    qpn: u32,
    cqn: u32,
    sq: u64,
    dbr: u64,
    cq_buf: u64,
    posted: u16,
}

fn setup(d: &mut Dev) -> Sq {
    let pd = d.pd();
    let cqn = d.cq();
    let qpn = d.qp(st::UD, pd, cqn);
    for op in [Opcode::RST2INIT_QP, Opcode::INIT2RTR_QP, Opcode::RTR2RTS_QP] {
        assert_eq!(d.transition(op, qpn, 0), 0);
    }
    let fw = d.h.dev.fw();
    let qp = &fw.objs.qps[&qpn];
    let dbr = qpc::DBR_ADDR.raw().get(&qp.ctx).unwrap();
    // RQ: 16 WQEs of 64 bytes (Dev::qp_input) = 1 KiB, then the SQ, in one 4 KiB page.
    let sq = qp.pas[0] + 1024;
    let cq_buf = fw.objs.cqs[&cqn].pas[0];
    Sq {
        qpn,
        cqn,
        sq,
        dbr,
        cq_buf,
        posted: 0,
    }
}

/// Posts one single-WQEBB UD send WQE (ctrl + datagram segment, no data: upstream
/// `handle_qpt_ud`; the zero address vector's DLID 0 has no route, the message is
/// lost as UD allows) and rings the doorbell.
fn post(d: &Dev, s: &mut Sq, signalled: bool) {
    let idx = s.posted;
    let mut ctrl = [0u8; 64];
    ctrl[0..4].copy_from_slice(&((u32::from(idx) << 8) | 0x0a).to_be_bytes());
    ctrl[4..8].copy_from_slice(&((s.qpn << 8) | 4).to_be_bytes());
    ctrl[11] = if signalled { 0x08 } else { 0 };
    let addr = s.sq + 64 * u64::from(idx % 16);
    d.h.mem.write(addr, &ctrl).unwrap();
    s.posted = s.posted.wrapping_add(1);
    d.h.mem
        .write(s.dbr + 4, &u32::from(s.posted).to_be_bytes())
        .unwrap();
    let off = u64::from(d.uar) * 4096 + 0x800;
    d.h.dev.bar0_write(off, &ctrl[0..8]);
    d.h.dev.step();
}

fn cqe(d: &Dev, s: &Sq, i: u64) -> [u8; 64] {
    let mut c = [0u8; 64];
    d.h.mem.read(s.cq_buf + 64 * (i % 16), &mut c).unwrap();
    c
}

/// The consumer index in the CQ's doorbell record (a CQ whose consumer never moves
/// overruns, dp/cqe.rs).
fn consumed(d: &Dev, s: &Sq, ci: u32) {
    let dbr = d.h.dev.fw().objs.cqs[&s.cqn].dbr;
    d.h.mem.write(dbr, &ci.to_be_bytes()).unwrap();
}

/// Completion EQEs (type 0) in the test EQ, by CQ number.
fn comp_eqes(d: &Dev) -> Vec<u32> {
    let mut v = Vec::new();
    for i in 0..64u64 {
        let mut e = [0u8; 64];
        d.h.mem.read(d.eq_buf + 64 * i, &mut e).unwrap();
        let cqn = u32::from_be_bytes([e[0x38], e[0x39], e[0x3a], e[0x3b]]);
        if e[1] == 0 && cqn != 0 {
            v.push(cqn & 0xff_ffff);
        }
    }
    v
}

fn arm(d: &Dev, s: &Sq, ci: u32) {
    let mut w = [0u8; 8];
    w[0..4].copy_from_slice(&(ci & 0xff_ffff).to_be_bytes());
    w[4..8].copy_from_slice(&s.cqn.to_be_bytes());
    d.h.dev.bar0_write(u64::from(d.uar) * 4096 + 0x20, &w);
    d.h.dev.step();
}

#[test]
fn signalled_send_completes_with_a_requester_cqe() {
    let mut d = Dev::new();
    let mut s = setup(&mut d);
    post(&d, &mut s, true);
    let c = cqe(&d, &s, 0);
    assert_eq!(c[0x3f] >> 4, 0, "REQ opcode");
    assert_eq!(c[0x3f] & 1, 0, "owner bit of the first pass");
    assert_eq!(u16::from_be_bytes([c[0x3c], c[0x3d]]), 0, "wqe_counter");
    let sop = u32::from_be_bytes([c[0x38], c[0x39], c[0x3a], c[0x3b]]);
    assert_eq!(sop & 0xff_ffff, s.qpn);
    assert_eq!(sop >> 24, 0x0a, "send opcode");
    // An unsignalled WQE is consumed without a CQE; the next signalled one reports
    // its own index.
    post(&d, &mut s, false);
    post(&d, &mut s, true);
    let c = cqe(&d, &s, 1);
    assert_eq!(u16::from_be_bytes([c[0x3c], c[0x3d]]), 2);
    assert_eq!(cqe(&d, &s, 2), [0u8; 64], "no third CQE");
    let stats = mlx5_emu::report::stats(&d.h.dev);
    assert_eq!(stats["dp"]["send"]["cqes"], 2);
    assert_eq!(stats["dp"]["send"]["wqes"], 3);
    assert_eq!(stats["dp"]["send"]["doorbells"], 3);
    let fw = d.h.dev.fw();
    assert_eq!(fw.objs.qps[&s.qpn].sq_consumed, 3);
    assert_eq!(fw.stats.violations, 0);
}

#[test]
fn owner_bit_flips_on_wrap() {
    let mut d = Dev::new();
    let mut s = setup(&mut d);
    for i in 0..17 {
        post(&d, &mut s, true);
        consumed(&d, &s, i + 1);
    }
    // Entry 0 was written twice: the second pass has owner 1 and counter 16.
    let c = cqe(&d, &s, 0);
    assert_eq!(c[0x3f] & 1, 1);
    assert_eq!(u16::from_be_bytes([c[0x3c], c[0x3d]]), 16);
    assert_eq!(cqe(&d, &s, 1)[0x3f] & 1, 0);
}

#[test]
fn armed_cq_raises_one_completion_eqe() {
    let mut d = Dev::new();
    let mut s = setup(&mut d);
    post(&d, &mut s, true);
    assert!(comp_eqes(&d).is_empty(), "not armed: no event");
    // Arming with the consumer index past the CQE written: nothing due yet.
    arm(&d, &s, 1);
    assert!(comp_eqes(&d).is_empty());
    post(&d, &mut s, true);
    assert_eq!(comp_eqes(&d), vec![s.cqn]);
    // Fired: the next CQE raises nothing until re-armed.
    post(&d, &mut s, true);
    assert_eq!(comp_eqes(&d).len(), 1);
    // Arming behind the producer: the event is due at once.
    arm(&d, &s, 2);
    assert_eq!(comp_eqes(&d).len(), 2);
    assert_eq!(d.h.dev.fw().stats.violations, 0);
}

#[test]
fn err_flushes_and_rst_holds() {
    let mut d = Dev::new();
    let mut s = setup(&mut d);
    assert_eq!(d.transition(Opcode::_2ERR_QP, s.qpn, 0), 0);
    post(&d, &mut s, false);
    let c = cqe(&d, &s, 0);
    assert_eq!(c[0x3f] >> 4, 0xd, "REQ_ERR");
    assert_eq!(c[0x37], 0x05, "flush syndrome");
    // In RST a doorbell leaves the WQE in place.
    assert_eq!(d.transition(Opcode::_2RST_QP, s.qpn, 0), 0);
    s.posted = 0;
    post(&d, &mut s, true);
    assert_eq!(cqe(&d, &s, 1), [0u8; 64]);
    assert_eq!(d.query_qp(s.qpn).0, state::RST);
    // A doorbell on another UAR page is not the QP's: ignored, a violation.
    let v0 = d.h.dev.fw().stats.violations;
    let mut ctrl = [0u8; 8];
    ctrl[4..8].copy_from_slice(&(s.qpn << 8).to_be_bytes());
    d.h.dev
        .bar0_write(u64::from(d.uar + 1) * 4096 + 0x900, &ctrl);
    d.h.dev.step();
    assert_eq!(d.h.dev.fw().stats.violations, v0 + 1);
}
