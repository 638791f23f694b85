//! Data-path helpers for host tests (dp_send.rs, dp_faults.rs, dp_mad.rs, each
//! including this file with `#[path]` beside `common` and `verbs`): QPs created and
//! connected through the real commands, memory registered with CREATE_MKEY, send and
//! receive WQEs written into fake guest memory as upstream mlx5_ib's wr.c and libmlx5
//! write them (built from the ifc structs, one doorbell each), CQEs read back with the
//! consumer's owner-bit rule, and two devices wired by a socket pair.
#![allow(dead_code)]

use crate::common::{input, Host};
use crate::verbs::{set_at, Dev};
use mlx5_emu::fw::Env;
use mlx5_emu::ifc::mkey::{create_mkey_in as cm, create_mkey_out, mkc};
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::qp::{ads, create_qp_in, create_qp_out, qpc, rst2init_qp_in as m};
use mlx5_emu::ifc::wqe::{
    opcode, vals, Cqe64, WqeCtrlSeg, WqeDataSeg, WqeDatagramSeg, WqeRaddrSeg,
};
use mlx5_emu::mem::GuestMemory;
use std::time::{Duration, Instant};
use zerocopy::{FromBytes, IntoBytes};

/// One QP as the test drives it.
#[derive(Clone, Copy, Debug)]
pub struct Qp {
    pub qpn: u32,
    /// Send CQ / receive CQ.
    pub scq: u32,
    pub rcq: u32,
    pub buf: u64,
    /// The send queue (after the RQ; at the buffer's start without one).
    pub sq: u64,
    pub dbr: u64,
    /// Send WQEBBs posted / receive WQEs posted.
    pub sq_pi: u16,
    pub rq_pi: u16,
    /// CQEs read so far from the send / receive CQ.
    pub scq_ci: u32,
    pub rcq_ci: u32,
}

pub const SQ_BBS: u16 = 16;
pub const RQ_WQES: u16 = 16;
/// RQ stride: 64 bytes (log_rq_stride 2) = 4 data segments.
pub const RQ_STRIDE: u64 = 64;

/// Transport parameters of a connection.
#[derive(Clone, Copy)]
pub struct Conn {
    pub remote: u32,
    pub rlid: u16,
    pub min_rnr: u8,
    pub retry: u8,
    pub rnr_retry: u8,
    pub ack_timeout: u8,
    pub rwe: bool,
}

impl Conn {
    pub fn to(remote: u32, rlid: u16) -> Conn {
        Conn {
            remote,
            rlid,
            min_rnr: 1,
            retry: 7,
            rnr_retry: 7,
            ack_timeout: 14,
            rwe: true,
        }
    }
}

/// A CQ of 64 entries on the function's EQ.
pub fn cq(d: &mut Dev) -> u32 {
    let eqn = d.eqn;
    let inp = d.cq_input(6, eqn);
    let out = d.h.ok(&inp, 16);
    mlx5_emu::ifc::cq::create_cq_out::CQN
        .raw()
        .get(&out)
        .unwrap() as u32
}

/// CREATE_QP of service type `stype` on two fresh CQs: a 16-entry RQ (stride 64) and a
/// 16-WQEBB SQ after it.
pub fn create_qp(d: &mut Dev, stype: u8, pd: u32) -> Qp {
    let scq = cq(d);
    let rcq = cq(d);
    let mut inp = d.qp_input(stype, pd, scq);
    let c = create_qp_in::QPC.raw().byte_off();
    set_at(&mut inp, c, qpc::LOG_MSG_MAX, 30);
    set_at(&mut inp, c, qpc::CQN_RCV, u64::from(rcq));
    let pas = create_qp_in::PAS.raw().byte_off();
    let buf = u64::from_be_bytes(inp[pas..pas + 8].try_into().unwrap());
    let dbr = qpc::DBR_ADDR.raw().get(&inp[c..]).unwrap();
    let out = d.h.ok(&inp, 16);
    Qp {
        qpn: create_qp_out::QPN.raw().get(&out).unwrap() as u32,
        scq,
        rcq,
        buf,
        sq: buf + u64::from(RQ_WQES) * RQ_STRIDE,
        dbr,
        sq_pi: 0,
        rq_pi: 0,
        scq_ci: 0,
        rcq_ci: 0,
    }
}

/// RST → INIT → RTR → RTS with the connection's parameters (upstream qp.c
/// `__mlx5_ib_modify_qp` fills the same qpc fields).
pub fn connect(d: &mut Dev, qpn: u32, c: Conn) {
    connect_upto(d, qpn, c, Opcode::RTR2RTS_QP);
}

/// [`connect`] from RST up to the transition `last` only.
pub fn connect_upto(d: &mut Dev, qpn: u32, c: Conn, last: Opcode) {
    for op in [Opcode::RST2INIT_QP, Opcode::INIT2RTR_QP, Opcode::RTR2RTS_QP] {
        let mut inp = input(m::BYTES, op as u16, 0, &[(m::QPN.raw(), u64::from(qpn))]);
        let q = m::QPC.raw().byte_off();
        let p = q + qpc::PRIMARY_ADDRESS_PATH.raw().byte_off();
        set_at(&mut inp, p, ads::VHCA_PORT_NUM, 1);
        set_at(&mut inp, p, ads::RLID, u64::from(c.rlid));
        set_at(&mut inp, p, ads::ACK_TIMEOUT, u64::from(c.ack_timeout));
        set_at(&mut inp, q, qpc::MTU, 3);
        set_at(&mut inp, q, qpc::LOG_MSG_MAX, 30);
        set_at(&mut inp, q, qpc::REMOTE_QPN, u64::from(c.remote));
        set_at(&mut inp, q, qpc::NEXT_SEND_PSN, 0x100);
        set_at(&mut inp, q, qpc::NEXT_RCV_PSN, 0x100);
        set_at(&mut inp, q, qpc::MIN_RNR_NAK, u64::from(c.min_rnr));
        set_at(&mut inp, q, qpc::RETRY_COUNT, u64::from(c.retry));
        set_at(&mut inp, q, qpc::RNR_RETRY, u64::from(c.rnr_retry));
        set_at(&mut inp, q, qpc::RRE, 1);
        set_at(&mut inp, q, qpc::RWE, u64::from(c.rwe));
        set_at(&mut inp, q, qpc::RAE, 1);
        set_at(&mut inp, q, qpc::Q_KEY, 0x1111_2222);
        assert_eq!(d.h.run(&inp, 16).0, 0, "{} QP {qpn}", op.name());
        if op == last {
            return;
        }
    }
}

/// A datagram QP (UD, QP0, QP1) moved to RTS on port 1 with Q_Key `qkey` (ib_mad's
/// `ib_mad_change_qp_state_to_rts`: 0 for QP0, IB_QP1_QKEY for QP1).
pub fn dgram_qp(d: &mut Dev, stype: u8, pd: u32, qkey: u32) -> Qp {
    let q = create_qp(d, stype, pd);
    for op in [Opcode::RST2INIT_QP, Opcode::INIT2RTR_QP, Opcode::RTR2RTS_QP] {
        let mut inp = input(m::BYTES, op as u16, 0, &[(m::QPN.raw(), u64::from(q.qpn))]);
        let c = m::QPC.raw().byte_off();
        let p = c + qpc::PRIMARY_ADDRESS_PATH.raw().byte_off();
        set_at(&mut inp, p, ads::VHCA_PORT_NUM, 1);
        set_at(&mut inp, c, qpc::Q_KEY, u64::from(qkey));
        assert_eq!(d.h.run(&inp, 16).0, 0, "{} QP {}", op.name(), q.qpn);
    }
    q
}

/// A memory region: `len` bytes of guest memory registered as MTT pages starting at
/// a virtual address equal to their guest physical one, remote read / write / atomic
/// access when `remote`. Returns (key, address).
pub fn mr(d: &mut Dev, pd: u32, len: u64, remote: bool) -> (u32, u64) {
    let pages = len.div_ceil(4096) as usize;
    let base = d.h.alloc(4096 * pages as u64, 4096);
    let mut inp = d.mkey_input(pd, pages);
    let k = cm::MEMORY_KEY_MKEY_ENTRY.raw().byte_off();
    set_at(&mut inp, k, mkc::RR, u64::from(remote));
    set_at(&mut inp, k, mkc::RW, u64::from(remote));
    set_at(&mut inp, k, mkc::A, u64::from(remote));
    set_at(&mut inp, k, mkc::START_ADDR, base);
    set_at(&mut inp, k, mkc::LEN, len);
    let x = cm::KLM_PAS_MTT.raw().byte_off();
    for i in 0..pages {
        let a = base + 4096 * i as u64;
        inp[x + 8 * i..x + 8 * i + 8].copy_from_slice(&a.to_be_bytes());
    }
    let out = d.h.ok(&inp, 16);
    let idx = create_mkey_out::MKEY_INDEX.raw().get(&out).unwrap() as u32;
    ((idx << 8) | 0x42, base)
}

/// A data segment (`struct mlx5_wqe_data_seg`).
pub fn dseg(len: u32, lkey: u32, addr: u64) -> WqeDataSeg {
    let mut s = WqeDataSeg::default();
    s.byte_count.set(len);
    s.lkey.set(lkey);
    s.addr.set(addr);
    s
}

/// A remote address segment (`struct mlx5_wqe_raddr_seg`).
pub fn raddr(va: u64, rkey: u32) -> WqeRaddrSeg {
    let mut r = WqeRaddrSeg::default();
    r.raddr.set(va);
    r.rkey.set(rkey);
    r
}

/// The control segment upstream writes (`mlx5r_begin_wqe` / `mlx5r_finish_wqe`).
pub fn ctrl(q: &Qp, opc: u8, ds: usize, signalled: bool, imm: u32) -> WqeCtrlSeg {
    let mut c = WqeCtrlSeg::default();
    c.opmod_idx_opcode
        .set((u32::from(q.sq_pi) << 8) | u32::from(opc));
    c.qpn_ds.set((q.qpn << 8) | ds as u32);
    c.fm_ce_se = if signalled { vals::CTRL_CQ_UPDATE } else { 0 };
    c.imm.set(imm);
    c
}

/// Writes a WQE (ctrl + `segs`, padded to 16) at the SQ producer, wrapping at the end
/// of the queue as upstream's `handle_post_send_edge` does, and rings the doorbell.
pub fn post(d: &Dev, q: &mut Qp, opc: u8, signalled: bool, imm: u32, segs: &[u8]) {
    post_flags(
        d,
        q,
        opc,
        if signalled { vals::CTRL_CQ_UPDATE } else { 0 },
        imm,
        segs,
    )
}

/// [`post`] with the control segment's `fm_ce_se` byte as given (fence mode,
/// completion and solicited flags).
pub fn post_flags(d: &Dev, q: &mut Qp, opc: u8, fm_ce_se: u8, imm: u32, segs: &[u8]) {
    let ds = (16 + segs.len()).div_ceil(16);
    let mut c = ctrl(q, opc, ds, false, imm);
    c.fm_ce_se = fm_ce_se;
    let mut w = c.as_bytes().to_vec();
    w.extend_from_slice(segs);
    w.resize(ds * 16, 0);
    let sq = q.sq;
    for (i, bb) in w.chunks(64).enumerate() {
        let idx = (q.sq_pi.wrapping_add(i as u16)) % SQ_BBS;
        d.h.mem.write(sq + 64 * u64::from(idx), bb).unwrap();
    }
    q.sq_pi = q.sq_pi.wrapping_add(w.len().div_ceil(64) as u16);
    d.h.mem
        .write(q.dbr + 4, &u32::from(q.sq_pi).to_be_bytes())
        .unwrap();
    d.h.dev
        .bar0_write(u64::from(d.uar) * 4096 + 0x800, &w[0..8]);
    d.h.dev.step();
}

/// Posts a signalled SEND on a datagram QP as upstream's wr.c builds it: control
/// segment, datagram segment (`set_datagram_seg`: the AH's av with DLID, remote QPN |
/// `MLX5_EXTENDED_UD_AV`, Q_Key; `to` = (DLID, QPN, Q_Key)), one data segment.
pub fn post_send_ud(d: &Dev, q: &mut Qp, to: (u16, u32, u32), sge: WqeDataSeg) {
    let (dlid, dqpn, qkey) = to;
    let mut g = WqeDatagramSeg::default();
    g.av.rlid.set(dlid);
    g.av.dqp_dct.set(dqpn | vals::EXTENDED_UD_AV);
    g.av.key[0..4].copy_from_slice(&qkey.to_be_bytes());
    let mut segs = g.as_bytes().to_vec();
    segs.extend_from_slice(sge.as_bytes());
    post(d, q, opcode::SEND, true, 0, &segs);
}

/// Posts a receive WQE with scatter list `sges` (terminated by a zero-length entry
/// with the invalid lkey when it does not fill the stride, upstream `mlx5_ib_post_recv`).
pub fn post_recv(d: &Dev, q: &mut Qp, sges: &[WqeDataSeg]) {
    let mut w = Vec::new();
    for s in sges {
        w.extend_from_slice(s.as_bytes());
    }
    if sges.len() < 4 {
        w.extend_from_slice(dseg(0, 0x100, 0).as_bytes());
    }
    let idx = u64::from(q.rq_pi % RQ_WQES);
    d.h.mem.write(q.buf + idx * RQ_STRIDE, &w).unwrap();
    q.rq_pi = q.rq_pi.wrapping_add(1);
    d.h.mem
        .write(q.dbr, &u32::from(q.rq_pi).to_be_bytes())
        .unwrap();
}

/// The next CQE of CQ `cqn` (None: the entry's owner bit says hardware has not
/// written it), advancing the consumer index in the CQ's doorbell record.
pub fn poll(d: &Dev, cqn: u32, ci: &mut u32) -> Option<[u8; 64]> {
    let (buf, dbr) = {
        let fw = d.h.dev.fw();
        let c = &fw.objs.cqs[&cqn];
        (c.pas[0], c.dbr)
    };
    let mut e = [0u8; 64];
    d.h.mem
        .read(buf + 64 * u64::from(*ci % 64), &mut e)
        .unwrap();
    let owner = e[63] & 1;
    let sw = ((*ci / 64) & 1) as u8;
    if e[63] >> 4 == vals::CQE_INVALID || owner != sw || e == [0u8; 64] {
        return None;
    }
    *ci += 1;
    d.h.mem
        .write(dbr, &(*ci & 0xff_ffff).to_be_bytes())
        .unwrap();
    Some(e)
}

/// The next CQE of the QP's send CQ.
pub fn scqe(d: &Dev, q: &mut Qp) -> Option<[u8; 64]> {
    let mut ci = q.scq_ci;
    let r = poll(d, q.scq, &mut ci);
    q.scq_ci = ci;
    r
}

/// The next CQE of the QP's receive CQ.
pub fn rcqe(d: &Dev, q: &mut Qp) -> Option<[u8; 64]> {
    let mut ci = q.rcq_ci;
    let r = poll(d, q.rcq, &mut ci);
    q.rcq_ci = ci;
    r
}

/// A CQE as `struct mlx5_cqe64`.
pub fn cqe64(e: [u8; 64]) -> Cqe64 {
    Cqe64::read_from_bytes(&e).unwrap()
}

/// The CQE's opcode (`op_own` >> 4).
pub fn opcode_of(c: &[u8; 64]) -> u8 {
    c[63] >> 4
}

/// The CQE's WQE counter.
pub fn counter(c: &[u8; 64]) -> u16 {
    u16::from_be_bytes([c[60], c[61]])
}

/// The CQE's byte count.
pub fn byte_cnt(c: &[u8; 64]) -> u32 {
    u32::from_be_bytes([c[44], c[45], c[46], c[47]])
}

/// The error CQE's syndrome.
pub fn syndrome(c: &[u8; 64]) -> u8 {
    c[55]
}

/// The big-endian 32-bit word at `off`.
pub fn be32(b: &[u8], off: usize) -> u32 {
    u32::from_be_bytes(b[off..off + 4].try_into().unwrap())
}

pub fn state_of(d: &Dev, qpn: u32) -> u8 {
    d.h.dev.fw().objs.qps[&qpn].state
}

/// `n` bytes of guest memory at `addr`.
pub fn read(d: &Dev, addr: u64, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    d.h.mem.read(addr, &mut v).unwrap();
    v
}

/// Runs the transport timers as if `after` had passed.
pub fn tick(d: &Dev, after: Duration) {
    let mut fw = d.h.dev.fw();
    let env = Env {
        mem: &*d.h.mem,
        irq: &*d.h.irq,
        msix_ok: true,
    };
    fw.dp_tick(&env, Instant::now() + after);
}

pub fn no_violations(d: &Dev) {
    assert_eq!(d.h.dev.fw().stats.violations, 0);
}

/// Two devices (LIDs 2 and 3) wired by a socket pair, both links up.
pub fn wired() -> (Dev, Dev) {
    use mlx5_emu::config::EmuConfig;
    use std::os::unix::net::UnixStream;
    let da = Dev::new();
    let db = Dev::on_host(Host::with(EmuConfig {
        boot_pages: 16,
        init_pages: 32,
        lid: 3,
        device_index: 1,
        ..Default::default()
    }));
    let (sa, sb) = UnixStream::pair().unwrap();
    da.h.dev.attach_wire(sa).unwrap();
    db.h.dev.attach_wire(sb).unwrap();
    step_until(&da, &db, "links up", &mut || {
        da.h.dev.fw().dp.wire.link_up && db.h.dev.fw().dp.wire.link_up
    });
    (da, db)
}

/// Steps both devices until `done` holds (10 s at most).
pub fn step_until(da: &Dev, db: &Dev, what: &str, done: &mut dyn FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(10);
    while !done() {
        da.h.dev.step();
        db.h.dev.step();
        assert!(Instant::now() < end, "timed out: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}
