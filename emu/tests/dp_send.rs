//! The data path end to end on one device: QPs created and connected in loopback
//! through the real commands, memory registered with CREATE_MKEY, WQEs written into
//! fake guest memory as upstream mlx5_ib's wr.c and libmlx5 write them (built from the
//! ifc structs), one doorbell each. Expectations from the IBTA / PRM semantics
//! upstream relies on: bytes land where the receive / remote address says, CQEs carry
//! the opcode, counter, byte count and syndrome `cq.h` names, errors move QPs to ERR
//! and flush what follows.

mod common;
#[path = "common/dp.rs"]
mod dp;
#[path = "common/verbs.rs"]
mod verbs;

use common::input;
use dp::{
    be32, byte_cnt, connect, connect_upto, counter, create_qp, ctrl, dgram_qp, dseg, mr,
    no_violations, opcode_of, post, post_flags, post_recv, post_send_ud, raddr, rcqe, read, scqe,
    state_of, step_until, syndrome, tick, wired, Conn, Qp, RQ_STRIDE, RQ_WQES,
};
use mlx5_emu::fw::qp_state::{st, state};
use mlx5_emu::ifc::mkey::{create_mkey_in as cm, create_mkey_out, mkc};
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::qp::{create_qp_in, create_qp_out, qpc};
use mlx5_emu::ifc::wqe::{opcode, vals, WqeAtomicSeg};
use mlx5_emu::mem::GuestMemory;
use std::time::{Duration, Instant};
use verbs::{set_at, Dev};
use zerocopy::IntoBytes;

/// Two RC QPs on one device connected to each other through the port's own LID.
struct Pair {
    d: Dev,
    pd: u32,
    a: Qp,
    b: Qp,
}

fn pair_with(ca: impl Fn(u32, u16) -> Conn, cb: impl Fn(u32, u16) -> Conn) -> Pair {
    let mut d = Dev::new();
    let pd = d.pd();
    let a = create_qp(&mut d, st::RC, pd);
    let b = create_qp(&mut d, st::RC, pd);
    let lid = d.h.dev.fw().ib_port.lid;
    connect(&mut d, a.qpn, ca(b.qpn, lid));
    connect(&mut d, b.qpn, cb(a.qpn, lid));
    Pair { d, pd, a, b }
}

fn pair() -> Pair {
    pair_with(Conn::to, Conn::to)
}

#[test]
fn rc_send_lands_in_the_receive_buffer() {
    let mut p = pair();
    let (lk, src) = mr(&mut p.d, p.pd, 4096, false);
    let (rk, dst) = mr(&mut p.d, p.pd, 4096, false);
    let msg: Vec<u8> = (0..200u32).map(|i| i as u8).collect();
    p.d.h.mem.write(src, &msg).unwrap();
    post_recv(&p.d, &mut p.b, &[dseg(4096, rk, dst)]);
    post(
        &p.d,
        &mut p.a,
        opcode::SEND_IMM,
        true,
        0x1234_5678,
        dseg(200, lk, src).as_bytes(),
    );
    assert_eq!(read(&p.d, dst, 200), msg);
    let r = rcqe(&p.d, &mut p.b).expect("receive CQE");
    assert_eq!(opcode_of(&r), vals::CQE_RESP_SEND_IMM);
    assert_eq!(byte_cnt(&r), 200);
    assert_eq!(be32(&r, 0x24), 0x1234_5678, "immediate");
    assert_eq!(be32(&r, 0x38) & 0xff_ffff, p.b.qpn);
    assert_eq!(be32(&r, 0x18) & 0xff_ffff, p.a.qpn, "source QPN");
    let s = scqe(&p.d, &mut p.a).expect("send CQE");
    assert_eq!(opcode_of(&s), vals::CQE_REQ);
    assert_eq!(s[0x38], opcode::SEND_IMM);
    assert_eq!(counter(&s), 0);
    assert!(scqe(&p.d, &mut p.a).is_none());
    // QUERY_QP reads the PSNs the message advanced (200 bytes: one packet).
    let (_, ctx) = p.d.query_qp(p.a.qpn);
    assert_eq!(qpc::NEXT_SEND_PSN.raw().get(&ctx).unwrap(), 0x101);
    let (_, ctx) = p.d.query_qp(p.b.qpn);
    assert_eq!(qpc::NEXT_RCV_PSN.raw().get(&ctx).unwrap(), 0x101);
    no_violations(&p.d);
}

#[test]
fn gather_list_inline_and_unsignalled() {
    let mut p = pair();
    let (lk, src) = mr(&mut p.d, p.pd, 4096, false);
    let (rk, dst) = mr(&mut p.d, p.pd, 4096, false);
    p.d.h.mem.write(src, b"hello, ").unwrap();
    p.d.h.mem.write(src + 100, b"gathered ").unwrap();
    p.d.h.mem.write(src + 300, b"world").unwrap();
    // Two receives, scattered over two segments each.
    post_recv(
        &p.d,
        &mut p.b,
        &[dseg(10, rk, dst), dseg(100, rk, dst + 1000)],
    );
    post_recv(&p.d, &mut p.b, &[dseg(64, rk, dst + 2048)]);
    let mut g = Vec::new();
    g.extend_from_slice(dseg(7, lk, src).as_bytes());
    g.extend_from_slice(dseg(9, lk, src + 100).as_bytes());
    g.extend_from_slice(dseg(5, lk, src + 300).as_bytes());
    // Unsignalled: no CQE on success.
    post(&p.d, &mut p.a, opcode::SEND, false, 0, &g);
    let mut got = read(&p.d, dst, 10);
    got.extend(read(&p.d, dst + 1000, 11));
    assert_eq!(&got, b"hello, gathered world");
    // Inline (upstream `set_data_inl_seg`): 40 bytes after the byte count, spanning
    // three 16-byte units.
    let text = b"inline bytes of a WQE spanning segments!";
    let mut inl = (vals::INLINE_SEG | text.len() as u32)
        .to_be_bytes()
        .to_vec();
    inl.extend_from_slice(text);
    post(&p.d, &mut p.a, opcode::SEND, true, 0, &inl);
    assert_eq!(read(&p.d, dst + 2048, text.len()), text);
    let s = scqe(&p.d, &mut p.a).expect("the signalled WQE's CQE");
    assert_eq!(counter(&s), 1, "the second WQE (the first took one WQEBB)");
    assert!(scqe(&p.d, &mut p.a).is_none());
    assert_eq!(byte_cnt(&rcqe(&p.d, &mut p.b).unwrap()), 21);
    assert_eq!(byte_cnt(&rcqe(&p.d, &mut p.b).unwrap()), 40);
    no_violations(&p.d);
}

#[test]
fn rdma_write_with_immediate_and_read() {
    let mut p = pair();
    let (lk, src) = mr(&mut p.d, p.pd, 8192, false);
    let (rk, dst) = mr(&mut p.d, p.pd, 8192, true);
    let data: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
    p.d.h.mem.write(src, &data).unwrap();
    let mut segs = raddr(dst + 100, rk).as_bytes().to_vec();
    segs.extend_from_slice(dseg(5000, lk, src).as_bytes());
    post(&p.d, &mut p.a, opcode::RDMA_WRITE, true, 0, &segs);
    assert_eq!(read(&p.d, dst + 100, 5000), data);
    assert!(
        rcqe(&p.d, &mut p.b).is_none(),
        "a WRITE consumes no receive"
    );
    assert_eq!(scqe(&p.d, &mut p.a).unwrap()[0x38], opcode::RDMA_WRITE);
    // WRITE with immediate: the data and a receive CQE with the immediate.
    post_recv(&p.d, &mut p.b, &[]);
    let mut segs = raddr(dst, rk).as_bytes().to_vec();
    segs.extend_from_slice(dseg(16, lk, src + 4000).as_bytes());
    post(&p.d, &mut p.a, opcode::RDMA_WRITE_IMM, true, 0xabcd, &segs);
    let r = rcqe(&p.d, &mut p.b).expect("WRITE_IMM CQE");
    assert_eq!(opcode_of(&r), vals::CQE_RESP_WR_IMM);
    assert_eq!((byte_cnt(&r), be32(&r, 0x24)), (16, 0xabcd));
    assert_eq!(read(&p.d, dst, 16), data[4000..4016]);
    scqe(&p.d, &mut p.a).unwrap();
    // READ back into the local buffer at 6000.
    let mut segs = raddr(dst + 100, rk).as_bytes().to_vec();
    segs.extend_from_slice(dseg(2000, lk, src + 6000).as_bytes());
    post(&p.d, &mut p.a, opcode::RDMA_READ, true, 0, &segs);
    assert_eq!(read(&p.d, src + 6000, 2000), data[..2000]);
    let s = scqe(&p.d, &mut p.a).expect("READ CQE");
    assert_eq!((s[0x38], byte_cnt(&s)), (opcode::RDMA_READ, 2000));
    no_violations(&p.d);
}

#[test]
fn atomics_compare_swap_and_fetch_add() {
    let mut p = pair();
    let (lk, local) = mr(&mut p.d, p.pd, 4096, false);
    let (rk, remote) = mr(&mut p.d, p.pd, 4096, true);
    // The ATOMIC caps' power-up endianness mode is big endian (fw/caps.rs; upstream
    // switches to host endianness through SET_HCA_CAP).
    p.d.h.mem.write(remote, &40u64.to_be_bytes()).unwrap();
    let atomic = |swap_add: u64, compare: u64, at: u64| {
        let mut s = raddr(remote, rk).as_bytes().to_vec();
        let mut a = WqeAtomicSeg::default();
        a.swap_add.set(swap_add);
        a.compare.set(compare);
        s.extend_from_slice(a.as_bytes());
        s.extend_from_slice(dseg(8, lk, local + at).as_bytes());
        s
    };
    post(&p.d, &mut p.a, opcode::ATOMIC_FA, true, 0, &atomic(2, 0, 0));
    assert_eq!(read(&p.d, remote, 8), 42u64.to_be_bytes());
    assert_eq!(read(&p.d, local, 8), 40u64.to_be_bytes(), "original value");
    let s = scqe(&p.d, &mut p.a).unwrap();
    assert_eq!((s[0x38], byte_cnt(&s)), (opcode::ATOMIC_FA, 8));
    // Compare-and-swap: a miss leaves the value, a hit swaps.
    post(
        &p.d,
        &mut p.a,
        opcode::ATOMIC_CS,
        true,
        0,
        &atomic(7, 41, 8),
    );
    assert_eq!(read(&p.d, remote, 8), 42u64.to_be_bytes());
    assert_eq!(read(&p.d, local + 8, 8), 42u64.to_be_bytes());
    post(
        &p.d,
        &mut p.a,
        opcode::ATOMIC_CS,
        true,
        0,
        &atomic(7, 42, 16),
    );
    assert_eq!(read(&p.d, remote, 8), 7u64.to_be_bytes());
    assert_eq!(read(&p.d, local + 16, 8), 42u64.to_be_bytes());
    assert!(scqe(&p.d, &mut p.a).is_some());
    assert!(scqe(&p.d, &mut p.a).is_some());
    no_violations(&p.d);
}

#[test]
fn remote_access_violation_fails_both_sides() {
    // B does not grant remote write (qpc.rwe 0): the WRITE is NAKed with a remote
    // access error, A's WQE completes with syndrome 0x13 and A goes to ERR; B goes to
    // ERR too and its posted receive flushes.
    let mut p = pair_with(Conn::to, |r, l| Conn {
        rwe: false,
        ..Conn::to(r, l)
    });
    let (lk, src) = mr(&mut p.d, p.pd, 4096, false);
    let (rk, dst) = mr(&mut p.d, p.pd, 4096, true);
    post_recv(&p.d, &mut p.b, &[dseg(64, rk, dst)]);
    let mut segs = raddr(dst, rk).as_bytes().to_vec();
    segs.extend_from_slice(dseg(8, lk, src).as_bytes());
    post(&p.d, &mut p.a, opcode::RDMA_WRITE, false, 0, &segs);
    let s = scqe(&p.d, &mut p.a).expect("error CQE even unsignalled");
    assert_eq!(opcode_of(&s), vals::CQE_REQ_ERR);
    assert_eq!(syndrome(&s), vals::SYNDROME_REMOTE_ACCESS_ERR);
    assert_eq!(state_of(&p.d, p.a.qpn), state::ERR);
    assert_eq!(state_of(&p.d, p.b.qpn), state::ERR);
    let r = rcqe(&p.d, &mut p.b).expect("B's receive flushed");
    assert_eq!(
        (opcode_of(&r), syndrome(&r)),
        (vals::CQE_RESP_ERR, vals::SYNDROME_WR_FLUSH_ERR)
    );
    // Every later WQE of A flushes (0x05), signalled or not.
    post(
        &p.d,
        &mut p.a,
        opcode::SEND,
        false,
        0,
        dseg(1, lk, src).as_bytes(),
    );
    post(&p.d, &mut p.a, opcode::NOP, true, 0, &[]);
    for want in [1u16, 2] {
        let f = scqe(&p.d, &mut p.a).expect("flush CQE");
        assert_eq!(
            (opcode_of(&f), syndrome(&f), counter(&f)),
            (vals::CQE_REQ_ERR, vals::SYNDROME_WR_FLUSH_ERR, want)
        );
    }
    assert!(scqe(&p.d, &mut p.a).is_none());
}

#[test]
fn rnr_then_success_after_a_receive_is_posted() {
    // The responder's RNR timer at code 0, 655.36 ms (IBTA table 45): no retry comes
    // due while the SEND's doorbell is processed, however slow the host (code 1,
    // 10 µs, let a loaded host retry within it: two RNR NAKs before the count read).
    let mut p = pair_with(Conn::to, |r, l| Conn {
        min_rnr: 0,
        ..Conn::to(r, l)
    });
    let (lk, src) = mr(&mut p.d, p.pd, 4096, false);
    let (rk, dst) = mr(&mut p.d, p.pd, 4096, false);
    p.d.h.mem.write(src, b"late").unwrap();
    post(
        &p.d,
        &mut p.a,
        opcode::SEND,
        true,
        0,
        dseg(4, lk, src).as_bytes(),
    );
    assert!(scqe(&p.d, &mut p.a).is_none(), "RNR: waiting");
    assert_eq!(
        mlx5_emu::report::stats(&p.d.h.dev)["dp"]["send"]["transport"]["rnr_naks"],
        1
    );
    post_recv(&p.d, &mut p.b, &[dseg(64, rk, dst)]);
    // Past the 655.36 ms timer.
    tick(&p.d, Duration::from_secs(1));
    assert_eq!(read(&p.d, dst, 4), b"late");
    assert_eq!(opcode_of(&scqe(&p.d, &mut p.a).unwrap()), vals::CQE_REQ);
    assert_eq!(
        opcode_of(&rcqe(&p.d, &mut p.b).unwrap()),
        vals::CQE_RESP_SEND
    );
    assert_eq!(state_of(&p.d, p.a.qpn), state::RTS);
    no_violations(&p.d);
}

#[test]
fn rnr_retry_exceeded() {
    let mut p = pair_with(
        |r, l| Conn {
            rnr_retry: 1,
            ..Conn::to(r, l)
        },
        Conn::to,
    );
    let (lk, src) = mr(&mut p.d, p.pd, 4096, false);
    post(
        &p.d,
        &mut p.a,
        opcode::SEND,
        true,
        0,
        dseg(4, lk, src).as_bytes(),
    );
    assert!(scqe(&p.d, &mut p.a).is_none());
    tick(&p.d, Duration::from_millis(1));
    let s = scqe(&p.d, &mut p.a).expect("RNR retry exceeded");
    assert_eq!(
        (opcode_of(&s), syndrome(&s)),
        (vals::CQE_REQ_ERR, vals::SYNDROME_RNR_RETRY_EXC_ERR)
    );
    assert_eq!(state_of(&p.d, p.a.qpn), state::ERR);
}

#[test]
fn transport_retry_exceeded_to_a_missing_qp() {
    let mut d = Dev::new();
    let pd = d.pd();
    let mut a = create_qp(&mut d, st::RC, pd);
    let lid = d.h.dev.fw().ib_port.lid;
    connect(
        &mut d,
        a.qpn,
        Conn {
            retry: 2,
            ack_timeout: 14,
            ..Conn::to(0xabcd, lid)
        },
    );
    let (lk, src) = mr(&mut d, pd, 4096, false);
    post(
        &d,
        &mut a,
        opcode::SEND,
        true,
        0,
        dseg(4, lk, src).as_bytes(),
    );
    post(
        &d,
        &mut a,
        opcode::SEND,
        false,
        0,
        dseg(4, lk, src).as_bytes(),
    );
    // ack_timeout 14: 4.096 µs × 2^14 = 67 ms; each tick is past the last timer.
    for i in 1..3 {
        tick(&d, Duration::from_millis(100 * i));
        let c = scqe(&d, &mut a);
        assert!(
            c.is_none(),
            "retransmitting {i}: {c:?} {:?}",
            d.h.dev.fw().objs.qps[&a.qpn].dp_send
        );
    }
    tick(&d, Duration::from_millis(300));
    let s = scqe(&d, &mut a).expect("retry exceeded");
    assert_eq!(
        (opcode_of(&s), syndrome(&s), counter(&s)),
        (vals::CQE_REQ_ERR, vals::SYNDROME_TRANSPORT_RETRY_EXC_ERR, 0)
    );
    let f = scqe(&d, &mut a).expect("the second WQE flushes");
    assert_eq!(
        (syndrome(&f), counter(&f)),
        (vals::SYNDROME_WR_FLUSH_ERR, 1)
    );
    assert_eq!(state_of(&d, a.qpn), state::ERR);
    let st = mlx5_emu::report::stats(&d.h.dev);
    assert_eq!(st["dp"]["send"]["transport"]["retransmits"], 4);
    assert_eq!(st["dp"]["send"]["transport"]["drop_no_qp"], 6);
}

fn ud_qp(d: &mut Dev, pd: u32, qkey: u32) -> Qp {
    dgram_qp(d, st::UD, pd, qkey)
}

#[test]
fn ud_send_with_qkey_match_and_mismatch() {
    let mut d = Dev::new();
    let pd = d.pd();
    let mut a = ud_qp(&mut d, pd, 0x11);
    let mut b = ud_qp(&mut d, pd, 0x22);
    let lid = d.h.dev.fw().ib_port.lid;
    let (lk, src) = mr(&mut d, pd, 4096, false);
    let (rk, dst) = mr(&mut d, pd, 4096, false);
    d.h.mem.write(src, b"datagram").unwrap();
    post_recv(&d, &mut b, &[dseg(256, rk, dst)]);
    // Upstream `set_datagram_seg`: the AH's av, remote QPN | extended-AV flag, Q_Key.
    let bqpn = b.qpn;
    let send = |d: &Dev, a: &mut Qp, qkey: u32| {
        post_send_ud(d, a, (lid, bqpn, qkey), dseg(8, lk, src));
    };
    send(&d, &mut a, 0x33);
    assert_eq!(
        opcode_of(&scqe(&d, &mut a).unwrap()),
        vals::CQE_REQ,
        "UD completes when sent"
    );
    assert!(rcqe(&d, &mut b).is_none(), "Q_Key mismatch: dropped");
    send(&d, &mut a, 0x22);
    scqe(&d, &mut a).unwrap();
    let r = rcqe(&d, &mut b).expect("Q_Key match");
    // 40 bytes of GRH area, then the message (IBTA UD receive buffers).
    assert_eq!(byte_cnt(&r), 48);
    assert_eq!(read(&d, dst + 40, 8), b"datagram");
    assert_eq!(be32(&r, 0x18) & 0xff_ffff, a.qpn);
    let st = mlx5_emu::report::stats(&d.h.dev);
    assert_eq!(st["dp"]["send"]["transport"]["drop_qkey"], 1);
    no_violations(&d);
}

#[test]
fn wqe_wrapping_past_the_end_of_the_queue() {
    let mut p = pair();
    let (lk, src) = mr(&mut p.d, p.pd, 4096, false);
    let (rk, dst) = mr(&mut p.d, p.pd, 4096, false);
    // 15 one-WQEBB NOPs, then a two-WQEBB send starting at the last WQEBB.
    for _ in 0..15 {
        post(&p.d, &mut p.a, opcode::NOP, false, 0, &[]);
    }
    let mut g = Vec::new();
    for i in 0..5u64 {
        p.d.h.mem.write(src + 64 * i, &[i as u8 + 1; 3]).unwrap();
        g.extend_from_slice(dseg(3, lk, src + 64 * i).as_bytes());
    }
    post_recv(&p.d, &mut p.b, &[dseg(64, rk, dst)]);
    post(&p.d, &mut p.a, opcode::SEND, true, 0, &g);
    assert_eq!(
        read(&p.d, dst, 15),
        [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5]
    );
    assert_eq!(counter(&scqe(&p.d, &mut p.a).unwrap()), 15);
    no_violations(&p.d);
}

#[test]
fn malformed_wqe_is_a_local_qp_operation_error() {
    let mut p = pair();
    // ds 0.
    let c = ctrl(&p.a, opcode::SEND, 0, true, 0);
    let sq = p.a.buf + u64::from(RQ_WQES) * RQ_STRIDE;
    p.d.h.mem.write(sq, c.as_bytes()).unwrap();
    p.a.sq_pi = 1;
    p.d.h.mem.write(p.a.dbr + 4, &1u32.to_be_bytes()).unwrap();
    p.d.h
        .dev
        .bar0_write(u64::from(p.d.uar) * 4096 + 0x800, &c.as_bytes()[0..8]);
    p.d.h.dev.step();
    let s = scqe(&p.d, &mut p.a).expect("error CQE");
    assert_eq!(syndrome(&s), vals::SYNDROME_LOCAL_QP_OP_ERR);
    assert_eq!(state_of(&p.d, p.a.qpn), state::ERR);
    assert_eq!(p.d.h.dev.fw().stats.violations, 1);
}

#[test]
fn rkey_and_lkey_violations() {
    let mut p = pair();
    let (lk, src) = mr(&mut p.d, p.pd, 4096, false);
    let (rk, dst) = mr(&mut p.d, p.pd, 4096, true);
    post_recv(&p.d, &mut p.b, &[dseg(64, rk, dst)]);
    // A READ with an rkey whose key byte is wrong (dpmem `translate`: Key).
    let mut segs = raddr(dst, rk ^ 0x01).as_bytes().to_vec();
    segs.extend_from_slice(dseg(8, lk, src).as_bytes());
    post(&p.d, &mut p.a, opcode::RDMA_READ, true, 0, &segs);
    let s = scqe(&p.d, &mut p.a).expect("error CQE");
    assert_eq!(syndrome(&s), vals::SYNDROME_REMOTE_ACCESS_ERR);
    assert_eq!(state_of(&p.d, p.a.qpn), state::ERR);
    assert_eq!(state_of(&p.d, p.b.qpn), state::ERR);
    let r = rcqe(&p.d, &mut p.b).expect("B's receive flushed");
    assert_eq!(syndrome(&r), vals::SYNDROME_WR_FLUSH_ERR);
    // A gather through a key of another PD: local protection error, nothing sent.
    let mut q = pair();
    let other = q.d.pd();
    let (lk2, src2) = mr(&mut q.d, other, 4096, false);
    post(
        &q.d,
        &mut q.a,
        opcode::SEND,
        true,
        0,
        dseg(8, lk2, src2).as_bytes(),
    );
    let s = scqe(&q.d, &mut q.a).expect("error CQE");
    assert_eq!(syndrome(&s), vals::SYNDROME_LOCAL_PROT_ERR);
    assert_eq!(state_of(&q.d, q.a.qpn), state::ERR);
    assert_eq!(state_of(&q.d, q.b.qpn), state::RTS, "the peer saw nothing");
}

#[test]
fn comm_est_when_a_qp_in_rtr_receives() {
    let mut d = Dev::new();
    let pd = d.pd();
    let mut a = create_qp(&mut d, st::RC, pd);
    let mut b = create_qp(&mut d, st::RC, pd);
    let lid = d.h.dev.fw().ib_port.lid;
    connect(&mut d, a.qpn, Conn::to(b.qpn, lid));
    // B only to RTR.
    let c = Conn::to(a.qpn, lid);
    connect_upto(&mut d, b.qpn, c, Opcode::INIT2RTR_QP);
    assert_eq!(state_of(&d, b.qpn), state::RTR);
    let (lk, src) = mr(&mut d, pd, 4096, false);
    let (rk, dst) = mr(&mut d, pd, 4096, false);
    post_recv(&d, &mut b, &[dseg(64, rk, dst)]);
    post_recv(&d, &mut b, &[dseg(64, rk, dst)]);
    post(
        &d,
        &mut a,
        opcode::SEND,
        true,
        0,
        dseg(8, lk, src).as_bytes(),
    );
    post(
        &d,
        &mut a,
        opcode::SEND,
        true,
        0,
        dseg(8, lk, src).as_bytes(),
    );
    assert!(rcqe(&d, &mut b).is_some() && rcqe(&d, &mut b).is_some());
    let st = mlx5_emu::report::stats(&d.h.dev);
    assert_eq!(st["dp"]["send"]["transport"]["comm_est"], 1, "once");
}

#[test]
fn a_frame_for_another_lid_is_dropped() {
    // IBTA 7.11.1 / C7-66: a CA port takes the DLIDs its LMC covers (LID … LID +
    // 2^LMC − 1) and no other; the permissive LID only for a directed-route SMP.
    let (mut da, mut db) = wired();
    let pa = da.pd();
    let pb = db.pd();
    let mut a = ud_qp(&mut da, pa, 0x11);
    let mut b = ud_qp(&mut db, pb, 0x11);
    let lb = db.h.dev.fw().ib_port.lid;
    let (lk, src) = mr(&mut da, pa, 4096, false);
    let (rk, dst) = mr(&mut db, pb, 4096, false);
    da.h.mem.write(src, b"datagram").unwrap();
    post_recv(&db, &mut b, &[dseg(256, rk, dst)]);
    let bqpn = b.qpn;
    let send = |d: &Dev, a: &mut Qp, dlid: u16| {
        post_send_ud(d, a, (dlid, bqpn, 0x11), dseg(8, lk, src));
    };
    let dropped = |db: &Dev| {
        mlx5_emu::report::stats(&db.h.dev)["dp"]["send"]["transport"]["drop_dlid"]
            .as_u64()
            .unwrap()
    };
    // SM LID 1, B's LID + 1 (LMC 0), the permissive LID for a non-SMP: dropped.
    for (n, dlid) in [1, lb + 1, 0xffff].into_iter().enumerate() {
        send(&da, &mut a, dlid);
        assert!(scqe(&da, &mut a).is_some());
        step_until(&da, &db, "the drop", &mut || dropped(&db) == n as u64 + 1);
        assert!(rcqe(&db, &mut b).is_none(), "DLID {dlid:#x} not received");
    }
    // With base LID 4 and LMC 1 the port is LIDs 4 and 5: DLID 5 is received.
    {
        let mut fw = db.h.dev.fw();
        fw.ib_port.lid = 4;
        fw.ib_port.lmc = 1;
    }
    send(&da, &mut a, 5);
    let mut got = None;
    step_until(&da, &db, "receive at LID + 1", &mut || {
        got = rcqe(&db, &mut b);
        got.is_some()
    });
    assert_eq!(opcode_of(&got.unwrap()), vals::CQE_RESP_SEND);
    assert_eq!(read(&db, dst + 40, 8), b"datagram");
    assert_eq!(dropped(&db), 3);
}

#[test]
fn two_devices_over_the_wire() {
    let (mut da, mut db) = wired();
    let pa = da.pd();
    let pb = db.pd();
    let mut a = create_qp(&mut da, st::RC, pa);
    let mut b = create_qp(&mut db, st::RC, pb);
    let (la, lb) = (da.h.dev.fw().ib_port.lid, db.h.dev.fw().ib_port.lid);
    assert_ne!(la, lb);
    connect(&mut da, a.qpn, Conn::to(b.qpn, lb));
    connect(&mut db, b.qpn, Conn::to(a.qpn, la));
    let (lk, src) = mr(&mut da, pa, 8192, false);
    let (rk, dst) = mr(&mut db, pb, 8192, true);
    let msg: Vec<u8> = (0..6000u32).map(|i| (i % 251) as u8).collect();
    da.h.mem.write(src, &msg).unwrap();
    post_recv(&db, &mut b, &[dseg(8192, rk, dst)]);
    post(
        &da,
        &mut a,
        opcode::SEND,
        true,
        0,
        dseg(6000, lk, src).as_bytes(),
    );
    let mut got = None;
    step_until(&da, &db, "send CQE", &mut || {
        got = scqe(&da, &mut a);
        got.is_some()
    });
    assert_eq!(opcode_of(&got.unwrap()), vals::CQE_REQ);
    assert_eq!(read(&db, dst, 6000), msg);
    let r = rcqe(&db, &mut b).expect("receive CQE");
    assert_eq!(byte_cnt(&r), 6000);
    assert_eq!(u16::from_be_bytes([r[0x16], r[0x17]]), la, "source LID");
    // An RDMA READ back across the wire.
    let mut segs = raddr(dst + 1000, rk).as_bytes().to_vec();
    segs.extend_from_slice(dseg(100, lk, src + 7000).as_bytes());
    post(&da, &mut a, opcode::RDMA_READ, true, 0, &segs);
    let mut got = None;
    step_until(&da, &db, "read CQE", &mut || {
        got = scqe(&da, &mut a);
        got.is_some()
    });
    assert_eq!(read(&da, src + 7000, 100), msg[1000..1100]);
    no_violations(&da);
    no_violations(&db);
}

#[test]
fn a_fenced_wqe_waits_for_the_read_response() {
    let (mut da, mut db) = wired();
    let pa = da.pd();
    let pb = db.pd();
    let mut a = create_qp(&mut da, st::RC, pa);
    let mut b = create_qp(&mut db, st::RC, pb);
    let (la, lb) = (da.h.dev.fw().ib_port.lid, db.h.dev.fw().ib_port.lid);
    connect(&mut da, a.qpn, Conn::to(b.qpn, lb));
    connect(&mut db, b.qpn, Conn::to(a.qpn, la));
    let (lk, src) = mr(&mut da, pa, 4096, false);
    let (rk, dst) = mr(&mut db, pb, 4096, true);
    db.h.mem.write(dst, b"remote").unwrap();
    post_recv(&db, &mut b, &[dseg(64, rk, dst + 1024)]);
    // READ (its response crosses the wire later), then a SEND with the fence flag
    // (upstream IB_SEND_FENCE → MLX5_FENCE_MODE_FENCE): the SEND waits.
    let mut segs = raddr(dst, rk).as_bytes().to_vec();
    segs.extend_from_slice(dseg(6, lk, src).as_bytes());
    post(&da, &mut a, opcode::RDMA_READ, false, 0, &segs);
    post_flags(
        &da,
        &mut a,
        opcode::SEND,
        vals::FENCE_MODE_FENCE | vals::CTRL_CQ_UPDATE,
        0,
        dseg(6, lk, src).as_bytes(),
    );
    assert_eq!(da.h.dev.fw().dp.send.transport.fence_waits, 1);
    assert_eq!(da.h.dev.fw().objs.qps[&a.qpn].sq_consumed, 1, "held");
    let mut got = None;
    step_until(&da, &db, "the fenced SEND's CQE", &mut || {
        got = scqe(&da, &mut a);
        got.is_some()
    });
    assert_eq!(counter(&got.unwrap()), 1);
    // The SEND carried what the READ brought.
    step_until(&da, &db, "receive CQE", &mut || rcqe(&db, &mut b).is_some());
    assert_eq!(read(&db, dst + 1024, 6), b"remote");
}

#[test]
fn umr_entries_fill_the_table_in_64_byte_units() {
    // Upstream's reg-UMR for a one-page user MR (mkey created with a 1-octoword
    // table, umr.c) writes 4 octowords (ALIGN(.., MLX5_UMR_FLEX_ALIGNMENT)); the device
    // accepts it; 8 octowords do not fit.
    use mlx5_emu::ifc::umr::{vals as u, UmrCtrlSeg};
    let mut p = pair();
    let x = cm::KLM_PAS_MTT.raw().byte_off();
    let mut inp = input(x + 16, Opcode::CREATE_MKEY as u16, 0, &[]);
    let k = cm::MEMORY_KEY_MKEY_ENTRY.raw().byte_off();
    set_at(&mut inp, k, mkc::FREE, 1);
    set_at(&mut inp, k, mkc::UMR_EN, 1);
    set_at(&mut inp, k, mkc::ACCESS_MODE_1_0, 1);
    set_at(&mut inp, k, mkc::PD, u64::from(p.pd));
    set_at(&mut inp, k, mkc::QPN, 0xff_ffff);
    set_at(&mut inp, k, mkc::MKEY_7_0, 0x42);
    set_at(&mut inp, k, mkc::TRANSLATIONS_OCTWORD_SIZE, 1);
    let out = p.d.h.ok(&inp, 16);
    let key = ((create_mkey_out::MKEY_INDEX.raw().get(&out).unwrap() as u32) << 8) | 0x42;
    let umr = |octs: u16| {
        let mut c = UmrCtrlSeg {
            flags: u::UMR_INLINE,
            ..Default::default()
        };
        c.xlt_octowords.set(octs);
        let mut b = c.as_bytes().to_vec();
        b.extend_from_slice(&[0u8; 64]); // mkey segment: nothing masked
        b.extend(std::iter::repeat_n(0u8, usize::from(octs) * 16));
        b
    };
    post(&p.d, &mut p.a, opcode::UMR, true, key, &umr(4));
    let s = scqe(&p.d, &mut p.a).expect("UMR CQE");
    assert_eq!(opcode_of(&s), vals::CQE_REQ, "4 octowords fit");
    post(&p.d, &mut p.a, opcode::UMR, true, key, &umr(8));
    let s = scqe(&p.d, &mut p.a).expect("UMR CQE");
    assert_eq!(
        (opcode_of(&s), syndrome(&s)),
        (vals::CQE_REQ_ERR, vals::SYNDROME_LOCAL_QP_OP_ERR)
    );
}

/// The emulator's own cost per WQE and per doorbell (`stats` → `dp` → `send`), for
/// the figures in emu/README.md: `cargo test -p mlx5-emu --release --test dp_send --
/// --ignored --nocapture cost`.
#[test]
#[ignore]
fn cost_of_loopback_sends_and_writes() {
    let mut p = pair();
    let (lk, src) = mr(&mut p.d, p.pd, 65536, false);
    let (rk, dst) = mr(&mut p.d, p.pd, 65536, true);
    for (name, size) in [("64B", 64u32), ("4KiB", 4096), ("64KiB", 65536)] {
        let before = mlx5_emu::report::stats(&p.d.h.dev)["dp"]["send"].clone();
        let n = 2000;
        let t0 = Instant::now();
        for _ in 0..n {
            post_recv(&p.d, &mut p.b, &[dseg(size, rk, dst)]);
            post(
                &p.d,
                &mut p.a,
                opcode::SEND,
                true,
                0,
                dseg(size, lk, src).as_bytes(),
            );
            scqe(&p.d, &mut p.a).expect("send CQE");
            rcqe(&p.d, &mut p.b).expect("receive CQE");
        }
        let send_us = t0.elapsed().as_secs_f64() * 1e6 / f64::from(n);
        let t0 = Instant::now();
        for _ in 0..n {
            let mut segs = raddr(dst, rk).as_bytes().to_vec();
            segs.extend_from_slice(dseg(size, lk, src).as_bytes());
            post(&p.d, &mut p.a, opcode::RDMA_WRITE, true, 0, &segs);
            scqe(&p.d, &mut p.a).expect("write CQE");
        }
        let write_us = t0.elapsed().as_secs_f64() * 1e6 / f64::from(n);
        let after = mlx5_emu::report::stats(&p.d.h.dev)["dp"]["send"].clone();
        // This size's share of the cumulative histograms: (sum after − sum before) /
        // (count after − count before).
        let mean = |k: &str| {
            let c = |v: &serde_json::Value| v[k]["count"].as_f64().unwrap();
            let s = |v: &serde_json::Value| c(v) * v[k]["mean_ns"].as_f64().unwrap();
            (s(&after) - s(&before)) / (c(&after) - c(&before))
        };
        println!(
            "{name}: SEND+recv round {send_us:.2} µs, WRITE round {write_us:.2} µs (test \
             loop); emulator {:.0} ns per WQE, {:.0} ns per doorbell",
            mean("wqe_time"),
            mean("doorbell_time"),
        );
    }
    no_violations(&p.d);
}

#[test]
fn uc_sends_and_writes_without_acks() {
    let mut d = Dev::new();
    let pd = d.pd();
    let mut a = create_qp(&mut d, st::UC, pd);
    let mut b = create_qp(&mut d, st::UC, pd);
    let lid = d.h.dev.fw().ib_port.lid;
    connect(&mut d, a.qpn, Conn::to(b.qpn, lid));
    connect(&mut d, b.qpn, Conn::to(a.qpn, lid));
    let (lk, src) = mr(&mut d, pd, 4096, false);
    let (rk, dst) = mr(&mut d, pd, 4096, true);
    d.h.mem.write(src, b"unreliable").unwrap();
    // No receive posted: the SEND is dropped, yet completes at the requester (UC has
    // no acknowledgement, IBTA 9.8).
    post(
        &d,
        &mut a,
        opcode::SEND,
        true,
        0,
        dseg(10, lk, src).as_bytes(),
    );
    assert_eq!(opcode_of(&scqe(&d, &mut a).unwrap()), vals::CQE_REQ);
    assert!(rcqe(&d, &mut b).is_none());
    post_recv(&d, &mut b, &[dseg(64, rk, dst)]);
    post(
        &d,
        &mut a,
        opcode::SEND,
        true,
        0,
        dseg(10, lk, src).as_bytes(),
    );
    scqe(&d, &mut a).unwrap();
    assert_eq!(byte_cnt(&rcqe(&d, &mut b).unwrap()), 10);
    assert_eq!(read(&d, dst, 10), b"unreliable");
    let mut segs = raddr(dst + 100, rk).as_bytes().to_vec();
    segs.extend_from_slice(dseg(10, lk, src).as_bytes());
    post(&d, &mut a, opcode::RDMA_WRITE, true, 0, &segs);
    scqe(&d, &mut a).unwrap();
    assert_eq!(read(&d, dst + 100, 10), b"unreliable");
    let st = mlx5_emu::report::stats(&d.h.dev);
    assert_eq!(st["dp"]["send"]["transport"]["acks"], 0);
    assert_eq!(st["dp"]["send"]["transport"]["drop_unreliable"], 1);
    no_violations(&d);
}

/// An XRC pair of one XRC domain: XRC SRQ (`srqn`, its buffer and doorbell record),
/// initiator and target QP connected over loopback. The SRQ is of PD `pd`, the
/// initiator of `pd`, the target of `tgt_pd` (upstream `create_xrc_tgt_qp` gives the
/// target the driver's own PD, `devr->p0`, never the user's).
struct XrcPair {
    srqn: u32,
    sbuf: u64,
    sdbr: u64,
    ini: Qp,
    tgt: Qp,
}

fn xrc_pair(d: &mut Dev, pd: u32, tgt_pd: u32) -> XrcPair {
    use mlx5_emu::ifc::srq::xrc_srqc;
    use verbs::SrqCmd;
    let xrcd = d.xrcd();
    let xcq = dp::cq(d);
    let inp = d.srq_input(SrqCmd::Xrc, pd, xcq, xrcd);
    let out = d.h.ok(&inp, 16);
    let srqn = mlx5_emu::ifc::srq::create_srq_out::SRQN
        .raw()
        .get(&out)
        .unwrap() as u32;
    let (sbuf, sdbr) = {
        let fw = d.h.dev.fw();
        let q = &fw.objs.srqs[&srqn];
        (
            q.pas[0],
            (xrc_srqc::DB_RECORD_ADDR_H.raw().get(&q.ctx).unwrap() << 32)
                | (xrc_srqc::DB_RECORD_ADDR_L.raw().get(&q.ctx).unwrap() << 2),
        )
    };
    // Initiator and target: XRC QPs of the domain without a receive queue
    // (upstream `create_xrc_tgt_qp` / libmlx5 XRC_SEND: rq_type zero-length).
    let xrc_qp = |d: &mut Dev, pd: u32| {
        let scq = dp::cq(d);
        let mut inp = d.qp_input(st::XRC, pd, scq);
        let c = create_qp_in::QPC.raw().byte_off();
        set_at(&mut inp, c, qpc::XRCD, u64::from(xrcd));
        set_at(&mut inp, c, qpc::RQ_TYPE, 3);
        set_at(&mut inp, c, qpc::LOG_RQ_SIZE, 0);
        let out = d.h.ok(&inp, 16);
        let qpn = create_qp_out::QPN.raw().get(&out).unwrap() as u32;
        let fw = d.h.dev.fw();
        let q = &fw.objs.qps[&qpn];
        let buf = q.pas[0];
        Qp {
            qpn,
            scq,
            rcq: xcq,
            buf,
            sq: buf,
            dbr: qpc::DBR_ADDR.raw().get(&q.ctx).unwrap(),
            sq_pi: 0,
            rq_pi: 0,
            scq_ci: 0,
            rcq_ci: 0,
        }
    };
    let ini = xrc_qp(d, pd);
    let tgt = xrc_qp(d, tgt_pd);
    let lid = d.h.dev.fw().ib_port.lid;
    connect(d, ini.qpn, Conn::to(tgt.qpn, lid));
    connect(d, tgt.qpn, Conn::to(ini.qpn, lid));
    XrcPair {
        srqn,
        sbuf,
        sdbr,
        ini,
        tgt,
    }
}

#[test]
fn xrc_send_lands_in_the_xrc_srq_the_packet_names() {
    use mlx5_emu::ifc::wqe::WqeXrcSeg;
    let mut d = Dev::new();
    let pd = d.pd();
    let XrcPair {
        srqn,
        sbuf,
        sdbr,
        mut ini,
        mut tgt,
    } = xrc_pair(&mut d, pd, pd);
    let (lk, src) = mr(&mut d, pd, 4096, false);
    let (rk, dst) = mr(&mut d, pd, 4096, false);
    d.h.mem.write(src, b"to the shared queue").unwrap();
    // SRQ WQE 0: next segment, one data segment, the terminator (libmlx5
    // `mlx5_post_srq_recv`); the counter in doorbell record DW0.
    let mut w = vec![0u8; 16];
    w.extend_from_slice(dseg(64, rk, dst).as_bytes());
    w.extend_from_slice(dseg(0, 0x100, 0).as_bytes());
    d.h.mem.write(sbuf, &w).unwrap();
    d.h.mem.write(sdbr, &1u32.to_be_bytes()).unwrap();
    let mut x = WqeXrcSeg::default();
    x.xrc_srqn.set(srqn);
    let mut segs = x.as_bytes().to_vec();
    segs.extend_from_slice(dseg(19, lk, src).as_bytes());
    post(&d, &mut ini, opcode::SEND, true, 0, &segs);
    assert_eq!(opcode_of(&scqe(&d, &mut ini).unwrap()), vals::CQE_REQ);
    let r = rcqe(&d, &mut tgt).expect("CQE on the XRC SRQ's CQ");
    assert_eq!((opcode_of(&r), byte_cnt(&r)), (vals::CQE_RESP_SEND, 19));
    assert_eq!(read(&d, dst, 19), b"to the shared queue");
    no_violations(&d);
}

#[test]
fn xrc_atomics_check_the_rkey_against_the_xrc_srqs_pd() {
    // pyverbs `test_atomic.AtomicTest.test_xrc_atomic_cmp_and_swap` /
    // `_fetch_and_add`: the target QP is of the driver's PD (upstream
    // `create_xrc_tgt_qp`: `devr->p0`), the MR and the XRC SRQ of the user's. The
    // responder checks the R_Key against the PD of the XRC SRQ the XRCETH names
    // (IBTA Annex A14 XRC: an XRC target QP has no PD; its SRQ's PD protects).
    use mlx5_emu::ifc::wqe::WqeXrcSeg;
    let mut d = Dev::new();
    let pd = d.pd();
    let driver_pd = d.pd();
    let XrcPair {
        srqn, mut ini, tgt, ..
    } = xrc_pair(&mut d, pd, driver_pd);
    let (lk, local) = mr(&mut d, pd, 4096, false);
    let (rk, remote) = mr(&mut d, pd, 4096, true);
    d.h.mem.write(remote, &40u64.to_be_bytes()).unwrap();
    let atomic = |swap_add: u64, compare: u64, at: u64, rk: u32| {
        let mut x = WqeXrcSeg::default();
        x.xrc_srqn.set(srqn);
        let mut s = x.as_bytes().to_vec();
        s.extend_from_slice(raddr(remote, rk).as_bytes());
        let mut a = WqeAtomicSeg::default();
        a.swap_add.set(swap_add);
        a.compare.set(compare);
        s.extend_from_slice(a.as_bytes());
        s.extend_from_slice(dseg(8, lk, local + at).as_bytes());
        s
    };
    post(
        &d,
        &mut ini,
        opcode::ATOMIC_FA,
        true,
        0,
        &atomic(2, 0, 0, rk),
    );
    let s = scqe(&d, &mut ini).expect("fetch-and-add CQE");
    assert_eq!(opcode_of(&s), vals::CQE_REQ, "fetch-and-add completes");
    assert_eq!(read(&d, remote, 8), 42u64.to_be_bytes());
    assert_eq!(read(&d, local, 8), 40u64.to_be_bytes(), "original value");
    post(
        &d,
        &mut ini,
        opcode::ATOMIC_CS,
        true,
        0,
        &atomic(7, 42, 8, rk),
    );
    let s = scqe(&d, &mut ini).expect("compare-and-swap CQE");
    assert_eq!(opcode_of(&s), vals::CQE_REQ, "compare-and-swap completes");
    assert_eq!(read(&d, remote, 8), 7u64.to_be_bytes());
    assert_eq!(read(&d, local + 8, 8), 42u64.to_be_bytes());
    let fw = d.h.dev.fw();
    assert_eq!(
        fw.objs.qps[&tgt.qpn].state,
        state::RTS,
        "target still serves"
    );
    drop(fw);
    no_violations(&d);
    // An MR of the target QP's own PD is not the SRQ's: remote access error.
    let (rk2, _) = mr(&mut d, driver_pd, 4096, true);
    post(
        &d,
        &mut ini,
        opcode::ATOMIC_FA,
        true,
        0,
        &atomic(1, 0, 16, rk2),
    );
    let s = scqe(&d, &mut ini).expect("error CQE");
    assert_eq!(opcode_of(&s), vals::CQE_REQ_ERR);
}

#[test]
fn mads_cross_between_two_wired_ports_on_qp1() {
    // QP1 (upstream's hardware GSI QP, st QP1) of device A sends a GMP to QPN 1 at
    // device B's LID with the well-known Q_Key (IBTA 13.5): B's QP1 receives it.
    let (mut da, mut db) = wired();
    let pa = da.pd();
    let pb = db.pd();
    let mut a = dgram_qp(&mut da, st::QP1, pa, 0x8001_0000);
    let mut b = dgram_qp(&mut db, st::QP1, pb, 0x8001_0000);
    let lb = db.h.dev.fw().ib_port.lid;
    let (lk, src) = mr(&mut da, pa, 4096, false);
    let (rk, dst) = mr(&mut db, pb, 4096, false);
    let mad: Vec<u8> = (0..256u32).map(|i| i as u8).collect();
    da.h.mem.write(src, &mad).unwrap();
    post_recv(&db, &mut b, &[dseg(296, rk, dst)]);
    post_send_ud(&da, &mut a, (lb, 1, 0x8001_0000), dseg(256, lk, src));
    assert_eq!(opcode_of(&scqe(&da, &mut a).unwrap()), vals::CQE_REQ);
    let mut got = None;
    step_until(&da, &db, "QP1 receive", &mut || {
        got = rcqe(&db, &mut b);
        got.is_some()
    });
    let r = got.unwrap();
    assert_eq!(byte_cnt(&r), 296, "40 bytes of GRH area and the MAD");
    assert_eq!(be32(&r, 0x18) & 0xff_ffff, 1, "source QPN: QP1");
    assert_eq!(read(&db, dst + 40, 256), mad);
    no_violations(&da);
    no_violations(&db);
}

/// The init segment's internal timer (`internal_timer_h`/`_l`), as a driver reads it.
fn internal_timer(d: &Dev) -> u64 {
    use mlx5_emu::ifc::init_seg as is;
    (u64::from(d.h.read32(is::INTERNAL_TIMER_H)) << 32)
        | u64::from(d.h.read32(is::INTERNAL_TIMER_L))
}

#[test]
fn cqes_carry_the_internal_timer_as_their_timestamp() {
    // PRM CQE `timestamp` (free-running): the internal timer at the completion, the
    // clock upstream's mlx5_timecounter and libmlx5's clock info page convert.
    let mut p = pair();
    let (lk, src) = mr(&mut p.d, p.pd, 4096, false);
    let (rk, dst) = mr(&mut p.d, p.pd, 4096, false);
    post_recv(&p.d, &mut p.b, &[dseg(64, rk, dst)]);
    let before = internal_timer(&p.d);
    std::thread::sleep(Duration::from_millis(2));
    post(
        &p.d,
        &mut p.a,
        opcode::SEND,
        true,
        0,
        dseg(64, lk, src).as_bytes(),
    );
    let r = rcqe(&p.d, &mut p.b).expect("receive CQE");
    let s = scqe(&p.d, &mut p.a).expect("send CQE");
    std::thread::sleep(Duration::from_millis(2));
    let after = internal_timer(&p.d);
    let ts = |c: &[u8; 64]| (u64::from(be32(c, 0x30)) << 32) | u64::from(be32(c, 0x34));
    for (what, t) in [("receive", ts(&r)), ("send", ts(&s))] {
        assert!(
            before < t && t < after,
            "{what} CQE timestamp {t} not in ({before}, {after})"
        );
    }
    no_violations(&p.d);
}

/// A doorbell rung for a QP or CQ after its DESTROY, on the page of its UAR that is
/// still allocated (the RDMA core destroys a user context's objects before it unmaps
/// the context's UAR pages: a live process can ring in between) is counted and
/// dropped; one naming a number never given, or a destroyed object's number on
/// another page, stays a violation.
#[test]
fn doorbells_after_destroy_are_counted_not_violations() {
    use mlx5_emu::ifc::cq::destroy_cq_in;
    use mlx5_emu::ifc::qp::destroy_qp_in;
    let mut p = pair();
    let c = ctrl(&p.a, opcode::SEND, 1, true, 0);
    let (qpn, scq) = (p.a.qpn, p.a.scq);
    let uar_base = u64::from(p.d.uar) * 4096;
    assert_eq!(p.d.on(Opcode::DESTROY_QP, destroy_qp_in::QPN, qpn), 0);
    // The send doorbell's second dword: the QPN in 31:8.
    p.d.h.dev.bar0_write(uar_base + 0x800, &c.as_bytes()[0..8]);
    p.d.h.dev.step();
    let stats = |d: &Dev| {
        let f = d.h.dev.fw();
        (f.stats.doorbells_after_destroy, f.stats.violations)
    };
    assert_eq!(stats(&p.d), (1, 0));
    // The CQ's arm: the arm word, then the CQN.
    assert_eq!(p.d.on(Opcode::DESTROY_CQ, destroy_cq_in::CQN, scq), 0);
    p.d.h.dev.bar0_write(uar_base + 0x20, &0u32.to_be_bytes());
    p.d.h.dev.bar0_write(uar_base + 0x24, &scq.to_be_bytes());
    p.d.h.dev.step();
    assert_eq!(stats(&p.d), (2, 0));
    // A QPN never given.
    let mut bogus = c;
    bogus.qpn_ds.set(0x00ab_cd00 | 1);
    p.d.h
        .dev
        .bar0_write(uar_base + 0x800, &bogus.as_bytes()[0..8]);
    p.d.h.dev.step();
    assert_eq!(stats(&p.d), (2, 1));
}
