//! The responder's receive queues and the CQEs (`fw/dp/recv.rs`, `fw/dp/cqe.rs`):
//! objects made through the real commands, receive WQEs written into guest memory as
//! mlx5_ib / libmlx5 post them (data segments, the terminator of 0 bytes with the
//! terminate-scatter mkey 0x100, doorbell record DW0 = the 16-bit counter; SRQ WQEs
//! behind `mlx5_wqe_srq_next_seg`, linked as upstream links them), CQEs read back with
//! the consumer's owner-bit rule (`(op_own & 1) == !!(ci & nent)`, opcode ≠ 15).
//! Expectations: cq.c / libmlx5 cq.c readers, device.h / cq.h values, IBTA.

mod common;
#[path = "common/verbs.rs"]
mod verbs;

use common::input;
use mlx5_emu::fw::dp::cqe::{CqPost, CqeDesc, CqeOp};
use mlx5_emu::fw::dp::recv::{RecvTake, ScatterError};
use mlx5_emu::fw::dp::xlate::XlateError;
use mlx5_emu::fw::qp_state::{st, state};
use mlx5_emu::fw::Env;
use mlx5_emu::ifc::cq::{cqc, create_cq_out, query_cq_in, query_cq_out};
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::qp::{create_qp_in, create_qp_out, qpc};
use mlx5_emu::ifc::srq::{arm_xrc_srq_in, rmpc, wq, xrc_srqc};
use mlx5_emu::ifc::wqe::{vals, Cqe64, ErrCqe, WqeDataSeg};
use mlx5_emu::mem::GuestMemory;
use verbs::{eqes, set_at, Dev, SrqCmd};
use zerocopy::FromBytes;

/// Async event types (device.h `MLX5_EVENT_TYPE_*`).
const CQ_ERROR: u8 = 0x04;
const SRQ_LAST_WQE: u8 = 0x13;
const SRQ_RQ_LIMIT: u8 = 0x14;
/// The terminate-scatter-list mkey (QUERY_SPECIAL_CONTEXTS, upstream 0x100).
const TERMINATE: u32 = 0x100;

fn env(d: &Dev) -> Env<'_> {
    Env {
        mem: &*d.h.mem,
        irq: &*d.h.irq,
        msix_ok: true,
    }
}

/// A second EQ taking the async events this file raises; returns its buffer.
fn async_eq(d: &mut Dev) -> u64 {
    verbs::async_eq(
        d,
        (1 << CQ_ERROR) | (1 << SRQ_LAST_WQE) | (1 << SRQ_RQ_LIMIT),
    )
}

/// Completion EQEs (type 0) in the function's first EQ: their CQNs.
fn comp_eqes(d: &Dev) -> Vec<u32> {
    eqes(d, d.eq_buf, 0)
        .iter()
        .map(|e| u32::from_be_bytes([e[24], e[25], e[26], e[27]]) & 0xff_ffff)
        .collect()
}

/// A CQ of 2^4 entries of `cqe_bytes`: (cqn, buffer, doorbell record).
fn cq(d: &mut Dev, cqe_bytes: u32) -> (u32, u64, u64) {
    let eqn = d.eqn;
    let mut inp = d.cq_input(4, eqn);
    let c = mlx5_emu::ifc::cq::create_cq_in::CQ_CONTEXT.raw().byte_off();
    set_at(&mut inp, c, cqc::CQE_SZ, u64::from(cqe_bytes == 128));
    let out = d.h.ok(&inp, 16);
    let cqn = create_cq_out::CQN.raw().get(&out).unwrap() as u32;
    let fw = d.h.dev.fw();
    let q = &fw.objs.cqs[&cqn];
    (cqn, q.pas[0], q.dbr)
}

/// The 64-byte CQE of entry `i` (its second half for 128-byte CQEs), if the owner bit
/// says software owns it at consumer index `i` (libmlx5 / mlx5_ib `next_cqe_sw`).
fn poll(d: &Dev, buf: u64, cqe_bytes: u32, i: u32) -> Option<[u8; 64]> {
    let mut c = [0u8; 64];
    let at = buf + u64::from(cqe_bytes) * u64::from(i % 16) + u64::from(cqe_bytes - 64);
    d.h.mem.read(at, &mut c).unwrap();
    let sw_owner = u8::from(i & 16 != 0);
    (c[63] >> 4 != vals::CQE_INVALID && c[63] & 1 == sw_owner).then_some(c)
}

/// Marks every CQE invalid (op_own 0xf0, as upstream initialises a CQ buffer).
fn init_cq(d: &Dev, buf: u64, cqe_bytes: u32) {
    for i in 0..16u64 {
        let at = buf + u64::from(cqe_bytes) * i + u64::from(cqe_bytes) - 1;
        d.h.mem.write(at, &[0xf0]).unwrap();
    }
}

/// Publishes the consumer index (CQ doorbell record DW0, upstream `mlx5_cq_set_ci`).
fn set_ci(d: &Dev, dbr: u64, ci: u32) {
    d.h.mem.write(dbr, &(ci & 0xff_ffff).to_be_bytes()).unwrap();
}

/// QP of type `st` with a 16-entry receive queue (stride 64) on `cqn`, moved to RTR;
/// `tweak` edits the create input's QP context first. Returns (qpn, rq buffer, dbr).
fn qp_rtr(d: &mut Dev, st: u8, cqn: u32, tweak: impl FnOnce(&mut [u8], usize)) -> (u32, u64, u64) {
    let pd = d.pd();
    let mut inp = d.qp_input(st, pd, cqn);
    let c = create_qp_in::QPC.raw().byte_off();
    tweak(&mut inp, c);
    let out = d.h.ok(&inp, 16);
    let qpn = create_qp_out::QPN.raw().get(&out).unwrap() as u32;
    for op in [Opcode::RST2INIT_QP, Opcode::INIT2RTR_QP] {
        assert_eq!(d.transition(op, qpn, 0), 0, "{op:?}");
    }
    let fw = d.h.dev.fw();
    let q = &fw.objs.qps[&qpn];
    (qpn, q.pas[0], qpc::DBR_ADDR.raw().get(&q.ctx).unwrap())
}

fn seg(len: u32, lkey: u32, addr: u64) -> [u8; 16] {
    let mut s = [0u8; 16];
    s[0..4].copy_from_slice(&len.to_be_bytes());
    s[4..8].copy_from_slice(&lkey.to_be_bytes());
    s[8..16].copy_from_slice(&addr.to_be_bytes());
    s
}

/// Writes a receive WQE of `sges` (then the terminator when room is left) at `at`,
/// a WQE of `stride` bytes.
fn write_rwqe(d: &Dev, at: u64, stride: u64, sges: &[(u32, u32, u64)]) {
    let mut off = 0;
    for (len, key, addr) in sges {
        d.h.mem.write(at + off, &seg(*len, *key, *addr)).unwrap();
        off += 16;
    }
    if off < stride {
        d.h.mem.write(at + off, &seg(0, TERMINATE, 0)).unwrap();
    }
}

/// Posts receive WQE number `n` of a QP (stride 64, 16 entries) and publishes the
/// counter n + 1 in doorbell record DW0 (mlx5_ib / libmlx5 post_recv).
fn post_recv(d: &Dev, rq: u64, dbr: u64, n: u16, sges: &[(u32, u32, u64)]) {
    write_rwqe(d, rq + 64 * u64::from(n % 16), 64, sges);
    d.h.mem
        .write(dbr, &u32::from(n.wrapping_add(1)).to_be_bytes())
        .unwrap();
}

fn take(d: &Dev, qpn: u32, srqn: Option<u32>) -> RecvTake {
    let e = env(d);
    d.h.dev.fw().recv_take(&e, qpn, srqn)
}

fn post_cqe(d: &Dev, cqn: u32, desc: &CqeDesc) -> CqPost {
    let e = env(d);
    d.h.dev.fw().cqe_post(&e, cqn, desc)
}

#[test]
fn rq_wqes_are_taken_in_order_up_to_the_doorbell_record() {
    let mut d = Dev::new();
    let (cqn, _, _) = cq(&mut d, 64);
    let (qpn, rq, dbr) = qp_rtr(&mut d, st::RC, cqn, |_, _| {});
    assert_eq!(take(&d, qpn, None), RecvTake::Empty, "nothing posted");
    post_recv(
        &d,
        rq,
        dbr,
        0,
        &[(100, 0x4242, 0x1000_0000), (28, 0x4343, 0x2000)],
    );
    // Four segments fill the 64-byte stride: no terminator.
    post_recv(
        &d,
        rq,
        dbr,
        1,
        &[(1, 1, 1), (2, 2, 2), (3, 3, 3), (4, 4, 4)],
    );
    let RecvTake::Wqe(w) = take(&d, qpn, None) else {
        panic!("first WQE")
    };
    assert_eq!(w.wqe_counter, 0);
    assert_eq!(w.srqn, None);
    assert_eq!(w.cqn, Some(cqn));
    let got: Vec<(u32, u32, u64)> = w
        .sges
        .iter()
        .map(|s| (s.byte_count.get(), s.lkey.get(), s.addr.get()))
        .collect();
    assert_eq!(got, [(100, 0x4242, 0x1000_0000), (28, 0x4343, 0x2000)]);
    let RecvTake::Wqe(w) = take(&d, qpn, None) else {
        panic!("second WQE")
    };
    assert_eq!((w.wqe_counter, w.sges.len()), (1, 4));
    assert_eq!(take(&d, qpn, None), RecvTake::Empty, "counter reached");
    // A counter more than a queue ahead is refused (and counted as a violation).
    d.h.mem.write(dbr, &40u32.to_be_bytes()).unwrap();
    assert!(matches!(take(&d, qpn, None), RecvTake::Error(_)));
    let fw = d.h.dev.fw();
    assert_eq!((fw.dp.recv.taken_rq, fw.dp.recv.empty), (2, 2));
}

#[test]
fn rq_take_refused_before_rtr_and_signature_segment_skipped() {
    let mut d = Dev::new();
    let (cqn, _, _) = cq(&mut d, 64);
    let pd = d.pd();
    let inp = d.qp_input(st::UD, pd, cqn);
    let out = d.h.ok(&inp, 16);
    let qpn = create_qp_out::QPN.raw().get(&out).unwrap() as u32;
    assert!(matches!(take(&d, qpn, None), RecvTake::Error(_)), "RST");
    // With wq_signature the first 16 bytes are the signature segment.
    let (qpn, rq, dbr) = qp_rtr(&mut d, st::UD, cqn, |b, c| {
        set_at(b, c, qpc::WQ_SIGNATURE, 1)
    });
    d.h.mem.write(rq, &[0xee; 16]).unwrap();
    write_rwqe(&d, rq + 16, 48, &[(64, 7, 0x9000)]);
    d.h.mem.write(dbr, &1u32.to_be_bytes()).unwrap();
    let RecvTake::Wqe(w) = take(&d, qpn, None) else {
        panic!()
    };
    assert_eq!(w.sges.len(), 1);
    assert_eq!(w.sges[0].addr.get(), 0x9000);
}

#[test]
fn scatter_writes_across_segments_and_reports_length_errors() {
    let mut d = Dev::new();
    let a = d.h.alloc(4096, 4096);
    let b = d.h.alloc(4096, 4096);
    let sges = [
        WqeDataSeg::read_from_bytes(&seg(5, TERMINATE, a)).unwrap(),
        WqeDataSeg::read_from_bytes(&seg(100, TERMINATE, b)).unwrap(),
    ];
    let data: Vec<u8> = (0..20u8).collect();
    let e = env(&d);
    let n = d.h.dev.fw().recv_scatter(&e, 0, &sges, &data);
    assert_eq!(n, Ok(20));
    let mut got = [0u8; 5];
    d.h.mem.read(a, &mut got).unwrap();
    assert_eq!(got, [0, 1, 2, 3, 4]);
    let mut got = [0u8; 16];
    d.h.mem.read(b, &mut got).unwrap();
    assert_eq!(&got[..15], &data[5..]);
    assert_eq!(got[15], 0, "nothing past the message");
    let big = vec![1u8; 106];
    let r = d.h.dev.fw().recv_scatter(&e, 0, &sges, &big);
    assert_eq!(r, Err(ScatterError::Length));
    assert_eq!(
        ScatterError::Length.syndrome(),
        vals::SYNDROME_LOCAL_LENGTH_ERR
    );
    // A key that is no mkey: local protection error.
    let bad = [WqeDataSeg::read_from_bytes(&seg(64, 0x0012_3442, a)).unwrap()];
    let r = d.h.dev.fw().recv_scatter(&e, 0, &bad, &data);
    assert_eq!(r, Err(ScatterError::Xlate(XlateError::Key)));
    assert_eq!(
        ScatterError::Xlate(XlateError::Key).syndrome(),
        vals::SYNDROME_LOCAL_PROT_ERR
    );
    assert_eq!(d.h.dev.fw().dp.recv.scatter_errors, 2);
}

fn be32(c: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(c[at..at + 4].try_into().unwrap())
}

#[test]
fn responder_cqe_fields_as_upstream_reads_them_in_both_sizes() {
    for bytes in [64u32, 128] {
        let mut d = Dev::new();
        let (cqn, buf, _) = cq(&mut d, bytes);
        init_cq(&d, buf, bytes);
        let (qpn, _, _) = qp_rtr(&mut d, st::UD, cqn, |b, c| {
            set_at(b, c, qpc::USER_INDEX, 0x1234)
        });
        let mut desc = CqeDesc::new(CqeOp::RespSendImm, qpn, 7);
        desc.byte_cnt = 1500;
        desc.imm_inval = 0xdead_beef;
        desc.src_qpn = 0xabcdef;
        desc.slid = 0x17;
        desc.sl = 5;
        desc.path_bits = 3;
        desc.grh = true;
        assert_eq!(post_cqe(&d, cqn, &desc), CqPost::Written);
        let c = poll(&d, buf, bytes, 0).expect("valid CQE at 0");
        let q = Cqe64::read_from_bytes(&c).unwrap();
        assert_eq!(q.op_own >> 4, vals::CQE_RESP_SEND_IMM);
        assert_eq!(q.byte_cnt.get(), 1500);
        assert_eq!(q.imm_inval_pkey.get(), 0xdead_beef);
        // handle_responder: src_qp = flags_rqpn & 0xffffff, sl = 27:24, GRH = 29:28.
        let f = q.flags_rqpn.get();
        assert_eq!(f & 0xff_ffff, 0xabcdef);
        assert_eq!((f >> 24) & 0xf, 5);
        assert_ne!((f >> 28) & 3, 0);
        assert_eq!(q.slid.get(), 0x17);
        assert_eq!(q.ml_path, 3);
        assert_eq!(q.sop_drop_qpn.get() & 0xff_ffff, qpn);
        assert_eq!(q.wqe_counter.get(), 7);
        // CQE version 1 (cap cqe_version 1): the QP's user index.
        assert_eq!(q.srqn.get() & 0xff_ffff, 0x1234);
        if bytes == 128 {
            let mut first = [0u8; 64];
            d.h.mem.read(buf, &mut first).unwrap();
            assert_eq!(first, [0u8; 64], "first half of a 128-byte CQE");
        }
        // Send with invalidate: the rkey; a requester CQE: opcode and QPN.
        let mut inv = CqeDesc::new(CqeOp::RespSendInv, qpn, 8);
        inv.imm_inval = 0x5566;
        post_cqe(&d, cqn, &inv);
        let c = poll(&d, buf, bytes, 1).unwrap();
        assert_eq!(c[63] >> 4, vals::CQE_RESP_SEND_INV);
        assert_eq!(be32(&c, 0x24), 0x5566);
        let mut rd = CqeDesc::new(CqeOp::Req { send_opcode: 0x10 }, qpn, 0x40);
        rd.byte_cnt = 4096;
        post_cqe(&d, cqn, &rd);
        let c = poll(&d, buf, bytes, 2).unwrap();
        assert_eq!(c[63] >> 4, vals::CQE_REQ);
        assert_eq!(be32(&c, 0x38), (0x10 << 24) | qpn);
        assert_eq!(be32(&c, 0x2c), 4096);
        // A SEND without immediate carries the P_Key there (handle_responder, QP1).
        let mut plain = CqeDesc::new(CqeOp::RespSend, qpn, 9);
        plain.pkey = 0x8001;
        post_cqe(&d, cqn, &plain);
        let c = poll(&d, buf, bytes, 3).unwrap();
        assert_eq!(be32(&c, 0x24) & 0xffff, 0x8001);
        assert!(poll(&d, buf, bytes, 4).is_none(), "nothing more");
        let fw = d.h.dev.fw();
        assert_eq!(fw.dp.cqe.written, 4);
        assert_eq!(fw.dp.cqe.wide, if bytes == 128 { 4 } else { 0 });
    }
}

#[test]
fn error_cqe_and_owner_bit_over_the_wrap() {
    let mut d = Dev::new();
    let (cqn, buf, dbr) = cq(&mut d, 64);
    init_cq(&d, buf, 64);
    let (qpn, _, _) = qp_rtr(&mut d, st::RC, cqn, |_, _| {});
    for i in 0..20u32 {
        let op = if i == 17 {
            CqeOp::ReqErr {
                syndrome: vals::SYNDROME_REMOTE_ACCESS_ERR,
                vendor: 0x88,
            }
        } else {
            CqeOp::Req { send_opcode: 0x0a }
        };
        assert_eq!(
            post_cqe(&d, cqn, &CqeDesc::new(op, qpn, i as u16)),
            CqPost::Written
        );
        let c = poll(&d, buf, 64, i).unwrap_or_else(|| panic!("CQE {i} owned by software"));
        assert_eq!(c[63] & 1, u8::from(i >= 16), "owner bit of pass {}", i / 16);
        assert_eq!(u16::from_be_bytes([c[0x3c], c[0x3d]]), i as u16);
        // Consumed at once.
        set_ci(&d, dbr, i + 1);
    }
    let mut c = [0u8; 64];
    d.h.mem.read(buf + 64, &mut c).unwrap();
    let e = ErrCqe::read_from_bytes(&c).unwrap();
    assert_eq!(e.op_own >> 4, vals::CQE_REQ_ERR);
    assert_eq!((e.syndrome, e.vendor_err_synd), (0x13, 0x88));
    assert_eq!(e.s_wqe_opcode_qpn.get() & 0xff_ffff, qpn);
    assert_eq!(e.wqe_counter.get(), 17);
}

#[test]
fn overrun_writes_nothing_and_raises_the_cq_error_event() {
    let mut d = Dev::new();
    let ebuf = async_eq(&mut d);
    let (cqn, buf, dbr) = cq(&mut d, 64);
    init_cq(&d, buf, 64);
    let (qpn, _, _) = qp_rtr(&mut d, st::RC, cqn, |_, _| {});
    let desc = |i: u16| CqeDesc::new(CqeOp::RespSend, qpn, i);
    for i in 0..16u16 {
        assert_eq!(post_cqe(&d, cqn, &desc(i)), CqPost::Written);
    }
    // Consumer index 0: the 17th CQE would overwrite CQE 0.
    assert_eq!(post_cqe(&d, cqn, &desc(16)), CqPost::Overrun);
    let c = poll(&d, buf, 64, 0).unwrap();
    assert_eq!(u16::from_be_bytes([c[0x3c], c[0x3d]]), 0, "CQE 0 intact");
    let ev = eqes(&d, ebuf, CQ_ERROR);
    assert_eq!(ev.len(), 1);
    // mlx5_eqe_cq_err: cqn (24 bits), syndrome at byte 11 (1: overrun).
    assert_eq!(be32(&ev[0], 0) & 0xff_ffff, cqn);
    assert_eq!(ev[0][11], vals::CQ_ERROR_SYNDROME_CQ_OVERRUN);
    // QUERY_CQ: status CQ_OVERFLOW.
    let q = input(
        16,
        Opcode::QUERY_CQ as u16,
        0,
        &[(query_cq_in::CQN.raw(), u64::from(cqn))],
    );
    let out = d.h.ok(&q, query_cq_out::PAS.raw().byte_off());
    let ctx = &out[query_cq_out::CQ_CONTEXT.raw().byte_off()..];
    assert_eq!(
        cqc::STATUS.raw().get(ctx),
        Some(u64::from(vals::CQC_STATUS_CQ_OVERFLOW))
    );
    // In error: nothing more is written even after the consumer caught up.
    set_ci(&d, dbr, 16);
    assert_eq!(post_cqe(&d, cqn, &desc(17)), CqPost::Overrun);
    assert_eq!(eqes(&d, ebuf, CQ_ERROR).len(), 1, "one event");
    let fw = d.h.dev.fw();
    assert_eq!((fw.dp.cqe.overruns, fw.dp.cqe.cq_error_events), (2, 1));
}

#[test]
fn overrun_ignore_cq_keeps_writing() {
    let mut d = Dev::new();
    let eqn = d.eqn;
    let mut inp = d.cq_input(4, eqn);
    let c = mlx5_emu::ifc::cq::create_cq_in::CQ_CONTEXT.raw().byte_off();
    set_at(&mut inp, c, cqc::OI, 1);
    let out = d.h.ok(&inp, 16);
    let cqn = create_cq_out::CQN.raw().get(&out).unwrap() as u32;
    for i in 0..20u16 {
        let r = post_cqe(&d, cqn, &CqeDesc::new(CqeOp::RespSend, 1, i));
        assert_eq!(r, CqPost::Written, "oi: {i}");
    }
}

#[test]
fn arming_raises_one_completion_eqe_and_solicited_only_waits_for_solicited_or_error() {
    let mut d = Dev::new();
    let (cqn, _, _) = cq(&mut d, 64);
    let (qpn, _, _) = qp_rtr(&mut d, st::RC, cqn, |_, _| {});
    let uar = d.uar;
    let e = env(&d);
    let send = CqeDesc::new(CqeOp::RespSend, qpn, 0);
    post_cqe(&d, cqn, &send);
    assert!(comp_eqes(&d).is_empty(), "not armed");
    // Arm at consumer index 0 with one CQE waiting: the event is due at once.
    d.h.dev.fw().cq_arm_doorbell(&e, uar, cqn, 0);
    assert_eq!(comp_eqes(&d), [cqn]);
    // Fired: the next CQE raises nothing until re-armed.
    post_cqe(&d, cqn, &send);
    assert_eq!(comp_eqes(&d).len(), 1);
    // Armed at the producer index: the next CQE raises one event.
    d.h.dev.fw().cq_arm_doorbell(&e, uar, cqn, 2);
    assert_eq!(comp_eqes(&d).len(), 1);
    post_cqe(&d, cqn, &send);
    assert_eq!(comp_eqes(&d).len(), 2);
    // Solicited only: an unsolicited receive and a send completion (even with SE) do
    // not fire; a solicited receive does; so does an error.
    d.h.dev
        .fw()
        .cq_arm_doorbell(&e, uar, cqn, 3 | vals::CQ_DB_REQ_NOT_SOL);
    post_cqe(&d, cqn, &send);
    let mut req = CqeDesc::new(CqeOp::Req { send_opcode: 0x0a }, qpn, 0);
    req.solicited = true;
    post_cqe(&d, cqn, &req);
    assert_eq!(comp_eqes(&d).len(), 2);
    let mut sol = send;
    sol.solicited = true;
    post_cqe(&d, cqn, &sol);
    assert_eq!(comp_eqes(&d).len(), 3);
    d.h.dev
        .fw()
        .cq_arm_doorbell(&e, uar, cqn, 6 | vals::CQ_DB_REQ_NOT_SOL);
    let err = CqeDesc::new(
        CqeOp::RespErr {
            syndrome: vals::SYNDROME_LOCAL_LENGTH_ERR,
            vendor: 0,
        },
        qpn,
        1,
    );
    post_cqe(&d, cqn, &err);
    assert_eq!(comp_eqes(&d).len(), 4);
    // Arming solicited-only behind an unconsumed solicited CQE fires at once.
    d.h.dev
        .fw()
        .cq_arm_doorbell(&e, uar, cqn, 5 | vals::CQ_DB_REQ_NOT_SOL);
    assert_eq!(comp_eqes(&d).len(), 5);
    // On another UAR: a violation, not armed.
    let v = d.h.dev.fw().stats.violations;
    d.h.dev.fw().cq_arm_doorbell(&e, uar + 1, cqn, 7);
    assert_eq!(d.h.dev.fw().stats.violations, v + 1);
    assert!(!d.h.dev.fw().objs.cqs[&cqn].armed);
}

/// An SRQ's buffer and doorbell record, its WQEs linked i → i + 1 (mod 16) as
/// upstream's create_srq links them.
fn srq_bufs(d: &Dev, srqn: u32, stride: u64) -> (u64, u64) {
    let fw = d.h.dev.fw();
    let q = &fw.objs.srqs[&srqn];
    let buf = q.pas[0];
    drop(fw);
    let dbr = {
        let fw = d.h.dev.fw();
        let q = &fw.objs.srqs[&srqn];
        match q.kind {
            mlx5_emu::fw::rsc::SrqKind::Rmp => {
                let w = rmpc::WQ.raw().byte_off();
                wq::DBR_ADDR.raw().get(&q.ctx[w..]).unwrap()
            }
            mlx5_emu::fw::rsc::SrqKind::Xrc => {
                (xrc_srqc::DB_RECORD_ADDR_H.raw().get(&q.ctx).unwrap() << 32)
                    | (xrc_srqc::DB_RECORD_ADDR_L.raw().get(&q.ctx).unwrap() << 2)
            }
            mlx5_emu::fw::rsc::SrqKind::Basic => mlx5_emu::ifc::srq::srqc::DBR_ADDR
                .raw()
                .get(&q.ctx)
                .unwrap(),
        }
    };
    for i in 0..16u64 {
        let next = ((i + 1) % 16) as u16;
        d.h.mem
            .write(buf + stride * i + 2, &next.to_be_bytes())
            .unwrap();
    }
    (buf, dbr)
}

fn srq_post(d: &Dev, buf: u64, stride: u64, idx: u16, addr: u64) {
    write_rwqe(
        d,
        buf + stride * u64::from(idx) + 16,
        stride - 16,
        &[(256, 9, addr)],
    );
}

#[test]
fn rmp_follows_the_next_wqe_index_and_raises_the_limit_event_once() {
    let mut d = Dev::new();
    let ebuf = async_eq(&mut d);
    let (cqn, _, _) = cq(&mut d, 64);
    let pd = d.pd();
    // Basic SRQs as upstream makes them: RMPs, lwm given at creation (set_wq).
    let mut inp = d.srq_input(SrqCmd::Rmp, pd, 0, 0);
    let c = mlx5_emu::ifc::srq::create_rmp_in::CTX.raw().byte_off() + rmpc::WQ.raw().byte_off();
    set_at(&mut inp, c, wq::LWM, 2);
    let out = d.h.ok(&inp, 16);
    let srqn = mlx5_emu::ifc::srq::create_srq_out::SRQN
        .raw()
        .get(&out)
        .unwrap() as u32;
    let (buf, dbr) = srq_bufs(&d, srqn, 64);
    let (qpn, _, _) = qp_rtr(&mut d, st::RC, cqn, |b, c| {
        set_at(b, c, qpc::RQ_TYPE, 1);
        set_at(b, c, qpc::SRQN_RMPN_XRQN, u64::from(srqn));
    });
    // The driver posts into WQEs 0, 1, 2, 3 but relinks 1 → 3 → 2 (a freed WQE put
    // at the tail): the device follows the links.
    d.h.mem.write(buf + 64 + 2, &3u16.to_be_bytes()).unwrap();
    d.h.mem
        .write(buf + 3 * 64 + 2, &2u16.to_be_bytes())
        .unwrap();
    for i in 0..4u16 {
        srq_post(&d, buf, 64, i, 0x1000 * u64::from(i + 1));
    }
    d.h.mem.write(dbr, &4u32.to_be_bytes()).unwrap();
    let mut order = Vec::new();
    for _ in 0..4 {
        let RecvTake::Wqe(w) = take(&d, qpn, None) else {
            panic!("SRQ WQE")
        };
        assert_eq!(w.srqn, Some(srqn));
        assert_eq!(w.cqn, Some(cqn), "the QP's receive CQ");
        assert_eq!(w.sges[0].addr.get(), 0x1000 * u64::from(w.wqe_counter + 1));
        order.push(w.wqe_counter);
        let limits = eqes(&d, ebuf, SRQ_RQ_LIMIT).len();
        // 4 posted, lwm 2: the event when fewer than 2 are left (after the 3rd take).
        assert_eq!(limits, usize::from(order.len() >= 3), "after {order:?}");
    }
    assert_eq!(order, [0, 1, 3, 2]);
    assert_eq!(take(&d, qpn, None), RecvTake::Empty);
    let ev = eqes(&d, ebuf, SRQ_RQ_LIMIT);
    assert_eq!(be32(&ev[0], 24) & 0xff_ffff, srqn);
    // Disarmed: QUERY_RMP reads lwm 0.
    let fw = d.h.dev.fw();
    let w = rmpc::WQ.raw().byte_off();
    assert_eq!(wq::LWM.raw().get(&fw.objs.srqs[&srqn].ctx[w..]), Some(0));
    assert_eq!(fw.dp.recv.limit_events, 1);
}

#[test]
fn xrc_srq_named_by_the_packet_with_its_cq_user_index_and_limit() {
    let mut d = Dev::new();
    let ebuf = async_eq(&mut d);
    let (cqn, buf_cq, _) = cq(&mut d, 64);
    init_cq(&d, buf_cq, 64);
    let (other_cq, _, _) = cq(&mut d, 64);
    let pd = d.pd();
    let xrcd = d.xrcd();
    let mut inp = d.srq_input(SrqCmd::Xrc, pd, cqn, xrcd);
    let xc = mlx5_emu::ifc::srq::create_xrc_srq_in::XRC_SRQ_CONTEXT_ENTRY
        .raw()
        .byte_off();
    set_at(&mut inp, xc, xrc_srqc::USER_INDEX, 0x777);
    let out = d.h.ok(&inp, 16);
    let srqn = mlx5_emu::ifc::srq::create_srq_out::SRQN
        .raw()
        .get(&out)
        .unwrap() as u32;
    let (buf, dbr) = srq_bufs(&d, srqn, 64);
    // ARM_XRC_SRQ sets the limit.
    let arm = input(
        16,
        Opcode::ARM_XRC_SRQ as u16,
        1,
        &[
            (arm_xrc_srq_in::XRC_SRQN.raw(), u64::from(srqn)),
            (arm_xrc_srq_in::LWM.raw(), 1),
        ],
    );
    d.h.ok(&arm, 16);
    // An XRC target QP of the same domain, no receive queue of its own.
    let (qpn, _, _) = qp_rtr(&mut d, st::XRC, other_cq, |b, c| {
        set_at(b, c, qpc::XRCD, u64::from(xrcd));
        set_at(b, c, qpc::RQ_TYPE, 3);
        set_at(b, c, qpc::LOG_RQ_SIZE, 0);
        set_at(b, c, qpc::USER_INDEX, 0x555);
    });
    assert!(matches!(take(&d, qpn, None), RecvTake::Error(_)), "no RQ");
    srq_post(&d, buf, 64, 0, 0x5000);
    d.h.mem.write(dbr, &1u32.to_be_bytes()).unwrap();
    let RecvTake::Wqe(w) = take(&d, qpn, Some(srqn)) else {
        panic!("XRC SRQ WQE")
    };
    assert_eq!((w.wqe_counter, w.srqn, w.cqn), (0, Some(srqn), Some(cqn)));
    assert_eq!(eqes(&d, ebuf, SRQ_RQ_LIMIT).len(), 1, "0 left < lwm 1");
    // Its CQE carries the XRC SRQ's user index (libmlx5 get_resp_ctx_v1 → XSRQ).
    let mut desc = CqeDesc::new(CqeOp::RespSend, qpn, w.wqe_counter);
    desc.srqn = srqn;
    post_cqe(&d, cqn, &desc);
    let c = poll(&d, buf_cq, 64, 0).unwrap();
    assert_eq!(be32(&c, 0x20) & 0xff_ffff, 0x777);
    // `user_index_equal_xrc_srqn`: the XRC SRQ's number is its user index.
    let mut inp = d.srq_input(SrqCmd::Xrc, pd, cqn, xrcd);
    set_at(&mut inp, xc, xrc_srqc::USER_INDEX_EQUAL_XRC_SRQN, 1);
    set_at(&mut inp, xc, xrc_srqc::USER_INDEX, 0x999);
    let out = d.h.ok(&inp, 16);
    let srq3 = mlx5_emu::ifc::srq::create_srq_out::SRQN
        .raw()
        .get(&out)
        .unwrap() as u32;
    desc.srqn = srq3;
    post_cqe(&d, cqn, &desc);
    let c = poll(&d, buf_cq, 64, 1).unwrap();
    assert_eq!(be32(&c, 0x20) & 0xff_ffff, srq3);
    // Another XRC domain's SRQ is refused; so is a number that is no XRC SRQ.
    let xrcd2 = d.xrcd();
    let srq2 = d.srq(SrqCmd::Xrc, pd, cqn, xrcd2);
    assert!(matches!(take(&d, qpn, Some(srq2)), RecvTake::Error(_)));
    assert!(matches!(take(&d, qpn, Some(0xabc)), RecvTake::Error(_)));
}

#[test]
fn cqe_version_0_writes_the_srq_number() {
    let mut d = Dev::new();
    mlx5_emu::ifc::caps::cmd_hca_cap::CQE_VERSION
        .raw()
        .set(&mut d.h.dev.fw().caps.gen_cur, 0)
        .unwrap();
    let (cqn, buf, _) = cq(&mut d, 64);
    init_cq(&d, buf, 64);
    let (qpn, _, _) = qp_rtr(&mut d, st::RC, cqn, |b, c| {
        set_at(b, c, qpc::USER_INDEX, 0x1234)
    });
    let mut desc = CqeDesc::new(CqeOp::RespSend, qpn, 3);
    desc.srqn = 0x42;
    post_cqe(&d, cqn, &desc);
    post_cqe(&d, cqn, &CqeDesc::new(CqeOp::RespSend, qpn, 4));
    assert_eq!(be32(&poll(&d, buf, 64, 0).unwrap(), 0x20), 0x42);
    assert_eq!(be32(&poll(&d, buf, 64, 1).unwrap(), 0x20), 0, "no SRQ");
}

#[test]
fn err_flushes_posted_receives_and_receives_posted_later_through_the_tick() {
    let mut d = Dev::new();
    let (cqn, buf, _) = cq(&mut d, 64);
    init_cq(&d, buf, 64);
    let (qpn, rq, dbr) = qp_rtr(&mut d, st::RC, cqn, |_, _| {});
    for n in 0..3u16 {
        post_recv(&d, rq, dbr, n, &[(64, 1, 0x1000)]);
    }
    let RecvTake::Wqe(_) = take(&d, qpn, None) else {
        panic!()
    };
    assert_eq!(d.transition(Opcode::_2ERR_QP, qpn, 0), 0);
    {
        let e = env(&d);
        d.h.dev.fw().recv_poll_errored(&e);
    }
    for (i, ctr) in [(0u32, 1u16), (1, 2)] {
        let c = poll(&d, buf, 64, i).expect("flush CQE");
        let e = ErrCqe::read_from_bytes(&c).unwrap();
        assert_eq!(e.op_own >> 4, vals::CQE_RESP_ERR);
        assert_eq!(e.syndrome, vals::SYNDROME_WR_FLUSH_ERR);
        assert_eq!(e.s_wqe_opcode_qpn.get() & 0xff_ffff, qpn);
        assert_eq!(e.wqe_counter.get(), ctr);
    }
    assert!(poll(&d, buf, 64, 2).is_none());
    // ib_drain_rq: a receive posted to the QP in ERR completes with a flush error,
    // found by the firmware tick of Device::step (no receive doorbell exists).
    post_recv(&d, rq, dbr, 3, &[(64, 1, 0x1000)]);
    std::thread::sleep(mlx5_emu::fw::dp::recv::RECV_POLL_PERIOD * 2);
    d.h.dev.step();
    let c = poll(&d, buf, 64, 2).expect("drain CQE");
    assert_eq!(u16::from_be_bytes([c[0x3c], c[0x3d]]), 3);
    assert_eq!(c[0x37], vals::SYNDROME_WR_FLUSH_ERR);
    let fw = d.h.dev.fw();
    assert_eq!(fw.dp.recv.flushed, 3);
    drop(fw);
    // RST empties the queue: counting starts at 0 again (upstream zeroes the record).
    assert_eq!(d.transition(Opcode::_2RST_QP, qpn, 0), 0);
    assert_eq!(d.h.dev.fw().objs.qps[&qpn].dp_recv.consumed, 0);
}

#[test]
fn qp_on_an_srq_entering_err_raises_last_wqe_reached_once() {
    let mut d = Dev::new();
    let ebuf = async_eq(&mut d);
    let (cqn, buf, _) = cq(&mut d, 64);
    init_cq(&d, buf, 64);
    let pd = d.pd();
    let srqn = d.srq(SrqCmd::Rmp, pd, 0, 0);
    let (qpn, _, _) = qp_rtr(&mut d, st::RC, cqn, |b, c| {
        set_at(b, c, qpc::RQ_TYPE, 1);
        set_at(b, c, qpc::SRQN_RMPN_XRQN, u64::from(srqn));
    });
    d.h.dev.fw().recv_poll_errored(&env(&d));
    assert!(eqes(&d, ebuf, SRQ_LAST_WQE).is_empty(), "not in ERR");
    assert_eq!(d.transition(Opcode::_2ERR_QP, qpn, 0), 0);
    let e = env(&d);
    d.h.dev.fw().recv_poll_errored(&e);
    d.h.dev.fw().recv_poll_errored(&e);
    let ev = eqes(&d, ebuf, SRQ_LAST_WQE);
    assert_eq!(ev.len(), 1);
    // mlx5_eqe_qp_srq: type QP (0) at byte 20, the QPN at 24.
    assert_eq!(ev[0][20], 0);
    assert_eq!(be32(&ev[0], 24) & 0xff_ffff, qpn);
    // SRQ WQEs are not the QP's: no flush CQEs.
    assert!(poll(&d, buf, 64, 0).is_none());
    assert_eq!(d.h.dev.fw().objs.qps[&qpn].state, state::ERR);
}

#[test]
fn resize_ends_the_old_ring_with_a_resize_cqe_and_keeps_counting() {
    use mlx5_emu::ifc::cq::modify_cq_in as m;
    let mut d = Dev::new();
    let (cqn, old, dbr) = cq(&mut d, 64);
    init_cq(&d, old, 64);
    let (qpn, _, _) = qp_rtr(&mut d, st::RC, cqn, |_, _| {});
    for i in 0..3u16 {
        post_cqe(&d, cqn, &CqeDesc::new(CqeOp::RespSend, qpn, i));
    }
    set_ci(&d, dbr, 1);
    // MODIFY_CQ op_mod 1 (resize) to 2^5 entries in a new page.
    let new = d.h.alloc(4096, 4096);
    let pas = m::PAS.raw().byte_off();
    let mut inp = input(
        pas + 8,
        Opcode::MODIFY_CQ as u16,
        1,
        &[(m::CQN.raw(), u64::from(cqn))],
    );
    let sel = m::MODIFY_FIELD_SELECT_RESIZE_FIELD_SELECT.raw().byte_off();
    inp[sel..sel + 4].copy_from_slice(&7u32.to_be_bytes());
    set_at(
        &mut inp,
        m::CQ_CONTEXT.raw().byte_off(),
        cqc::LOG_CQ_SIZE,
        5,
    );
    inp[pas..pas + 8].copy_from_slice(&new.to_be_bytes());
    d.h.ok(&inp, 16);
    // copy_resize_cqes: from the consumer index, software-owned CQEs up to the one
    // with opcode RESIZE_CQ (entry 3 of the old ring, first pass).
    let c = poll(&d, old, 64, 3).expect("resize CQE owned by software");
    assert_eq!(c[63] >> 4, vals::CQE_RESIZE_CQ);
    // The next CQE goes to entry 4 of the new 32-entry ring, owner bit of pass 0.
    post_cqe(&d, cqn, &CqeDesc::new(CqeOp::RespSend, qpn, 9));
    let mut c = [0u8; 64];
    d.h.mem.read(new + 64 * 4, &mut c).unwrap();
    assert_eq!((c[63] >> 4, c[63] & 1), (vals::CQE_RESP_SEND, 0));
    assert_eq!(u16::from_be_bytes([c[0x3c], c[0x3d]]), 9);
    assert_eq!(d.h.dev.fw().dp.cqe.resizes, 1);
}

#[test]
fn basic_srq_of_create_srq_is_taken_like_an_rmp() {
    let mut d = Dev::new();
    let (cqn, _, _) = cq(&mut d, 64);
    let pd = d.pd();
    // CREATE_SRQ (ISSI 0 shape): 16 WQEs of 16 << 2 = 64 bytes.
    let srqn = d.srq(SrqCmd::Basic, pd, 0, 0);
    let (buf, dbr) = srq_bufs(&d, srqn, 64);
    let (qpn, _, _) = qp_rtr(&mut d, st::UD, cqn, |b, c| {
        set_at(b, c, qpc::RQ_TYPE, 1);
        set_at(b, c, qpc::SRQN_RMPN_XRQN, u64::from(srqn));
    });
    for i in 0..2u16 {
        srq_post(&d, buf, 64, i, 0x7000 + u64::from(i));
    }
    d.h.mem.write(dbr, &2u32.to_be_bytes()).unwrap();
    for i in 0..2u16 {
        let RecvTake::Wqe(w) = take(&d, qpn, None) else {
            panic!("WQE {i}")
        };
        assert_eq!((w.wqe_counter, w.srqn), (i, Some(srqn)));
        assert_eq!(w.sges[0].addr.get(), 0x7000 + u64::from(i));
    }
    assert_eq!(take(&d, qpn, None), RecvTake::Empty);
    assert_eq!(d.h.dev.fw().dp.recv.taken_srq, 2);
}

/// Figures (ignored): CQEs written and receive WQEs taken per second, in process.
/// `cargo test -p mlx5-emu --release --test dp_recv -- --ignored --nocapture`
#[test]
#[ignore]
fn measure_cqe_and_take_rates() {
    let mut d = Dev::new();
    let (cqn, _, dbr_cq) = cq(&mut d, 64);
    let (qpn, rq, dbr) = qp_rtr(&mut d, st::RC, cqn, |_, _| {});
    let n = 200_000u32;
    let e = env(&d);
    let t = std::time::Instant::now();
    {
        let mut fw = d.h.dev.fw();
        for i in 0..n {
            d.h.mem.write(dbr_cq, &i.to_be_bytes()).unwrap();
            let r = fw.cqe_post(&e, cqn, &CqeDesc::new(CqeOp::RespSend, qpn, i as u16));
            assert_eq!(r, CqPost::Written);
        }
    }
    let cqe_rate = f64::from(n) / t.elapsed().as_secs_f64();
    for i in 0..16u16 {
        write_rwqe(&d, rq + 64 * u64::from(i), 64, &[(64, 1, 0x1000)]);
    }
    let t = std::time::Instant::now();
    {
        let mut fw = d.h.dev.fw();
        for i in 0..n {
            d.h.mem
                .write(dbr, &((i + 1) & 0xffff).to_be_bytes())
                .unwrap();
            assert!(matches!(fw.recv_take(&e, qpn, None), RecvTake::Wqe(_)));
        }
    }
    let take_rate = f64::from(n) / t.elapsed().as_secs_f64();
    println!("cqe_post: {cqe_rate:.0}/s, recv_take: {take_rate:.0}/s");
}
