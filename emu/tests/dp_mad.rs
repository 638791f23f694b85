//! The MAD QPs carry real MADs: QP0 / QP1 created and moved to RTS through the real
//! commands (st QP0 / QP1, as upstream mlx5_ib's qp.c creates its SMI and hardware GSI
//! QPs), MADs posted as upstream's wr.c builds them (`handle_qpt_hw_gsi`: control
//! segment, datagram segment `set_datagram_seg`, data segment). Every MAD that passes
//! the checks completes on the destination host's QP0 / QP1 receive queue, as on a
//! ConnectX; where a test wants an answer it plays the host's MAD layer as upstream
//! does (core mad.c `ib_mad_recv_done` → mlx5 mad.c `mlx5_ib_process_mad` → MAD_IFC,
//! then core agent.c `agent_send_response` from the same QP). Expectations from the
//! IBTA (SMA / PMA answers, Q_Key rules, PortCounters in 4-byte words) and from what
//! upstream's cq.c reads from a receive CQE (source QPN, SLID, P_Key, GRH flag, byte
//! count with the 40-byte GRH area).

mod common;
#[path = "common/dp.rs"]
mod dp;
#[path = "common/verbs.rs"]
mod verbs;

use common::input;
use dp::{
    be32, cqe64, dgram_qp, dseg, mr, no_violations, post_send_ud, read, step_until, wired, Qp,
};
use mlx5_emu::fw::qp_state::st;
use mlx5_emu::ifc::mad::{mad_ifc_in, mad_ifc_out, mad_status, method, mgmt_class, smp_attr};
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::pma::pma_attr;
use mlx5_emu::ifc::wqe::{vals, Cqe64};
use mlx5_emu::mem::GuestMemory;
use verbs::Dev;

/// QP1's well-known Q_Key (`IB_QP1_QKEY`, ib_mad.h).
const QP1_QKEY: u32 = 0x8001_0000;
/// `IB_QP_SET_QKEY`: ib_mad's `remote_qkey` for its sends (the QP's own key is used).
const IB_QP_SET_QKEY: u32 = 0x8000_0000;
/// The permissive LID (`IB_LID_PERMISSIVE`).
const PERMISSIVE: u16 = 0xffff;
/// A UD receive: 40 bytes of GRH area and the 256-byte MAD.
const RECV_BYTES: u32 = 40 + 256;

/// Posts one MAD send as upstream's wr.c does for QP0 / the hardware GSI QP: control
/// segment, datagram segment (the AH's av, `remote_qpn | MLX5_EXTENDED_UD_AV`,
/// `remote_qkey`), one data segment; signalled; one doorbell.
fn post_mad(d: &Dev, q: &mut Qp, dlid: u16, dqpn: u32, qkey: u32, lkey: u32, addr: u64) {
    post_len(d, q, (dlid, dqpn, qkey), lkey, addr, 256);
}

/// [`post_mad`] with a message of `len` bytes; `to` = (DLID, QPN, Q_Key).
fn post_len(d: &Dev, q: &mut Qp, to: (u16, u32, u32), lkey: u32, addr: u64, len: u32) {
    post_send_ud(d, q, to, dseg(len, lkey, addr));
}

/// Posts a receive WQE of one buffer (terminated by the invalid lkey, upstream
/// `mlx5_ib_post_recv`).
fn post_recv(d: &Dev, q: &mut Qp, lkey: u32, addr: u64) {
    dp::post_recv(d, q, &[dseg(RECV_BYTES, lkey, addr)]);
}

/// The next CQE of the QP's send CQ, as `struct mlx5_cqe64`.
fn scqe(d: &Dev, q: &mut Qp) -> Option<Cqe64> {
    dp::scqe(d, q).map(cqe64)
}

/// The next CQE of the QP's receive CQ, as `struct mlx5_cqe64`.
fn rcqe(d: &Dev, q: &mut Qp) -> Option<Cqe64> {
    dp::rcqe(d, q).map(cqe64)
}

/// A MAD header (IBTA 13.4.3, `struct ib_mad_hdr`) in a 256-byte MAD.
fn mad(class: u8, class_version: u8, meth: u8, attr: u16, attr_mod: u32, tid: u64) -> Vec<u8> {
    let mut v = vec![0u8; 256];
    v[0] = 1;
    v[1] = class;
    v[2] = class_version;
    v[3] = meth;
    v[8..16].copy_from_slice(&tid.to_be_bytes());
    v[16..18].copy_from_slice(&attr.to_be_bytes());
    v[20..24].copy_from_slice(&attr_mod.to_be_bytes());
    v
}

fn be16(b: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([b[off], b[off + 1]])
}
fn be64(b: &[u8], off: usize) -> u64 {
    u64::from_be_bytes(b[off..off + 8].try_into().unwrap())
}

/// What upstream's cq.c `handle_responder` reads for a MAD receive: a SEND received,
/// the byte count (GRH area + MAD), source QPN, no GRH, the source LID and the P_Key
/// (`is_qp1`: looked up to its index with `ib_find_cached_pkey`).
fn assert_mad_cqe(c: &Cqe64, src_qpn: u32, slid: u16) {
    assert_eq!(c.op_own >> 4, vals::CQE_RESP_SEND, "a receive completion");
    assert_eq!(
        c.byte_cnt.get(),
        RECV_BYTES,
        "40 bytes of GRH area and the MAD"
    );
    assert_eq!(c.flags_rqpn.get() & 0xff_ffff, src_qpn, "source QP");
    assert_eq!(c.flags_rqpn.get() & vals::CQE_FLAGS_GRH, 0, "no GRH");
    assert_eq!(c.slid.get(), slid, "source LID");
    assert_eq!(c.imm_inval_pkey.get() & 0xffff, 0xffff, "the default P_Key");
}

/// The source QPN of a receive CQE.
fn src_qpn(c: &Cqe64) -> u32 {
    c.flags_rqpn.get() & 0xff_ffff
}

/// Plays the host's MAD layer for an SMA / PMA request received at `at` (the CQE
/// `c`), as upstream does: core mad.c `ib_mad_recv_done` gives the MAD to mlx5_ib's
/// `mlx5_ib_process_mad`, which asks the firmware with MAD_IFC (port 1, `op_mod` 0: a
/// receive completion is there, `mlx5_MAD_IFC`) and sets the direction bit of a
/// directed-route answer; core agent.c `agent_send_response` then sends the answer
/// from the same QP to the completion's source LID and QP (`ib_create_ah_from_wc`),
/// remote Q_Key `IB_QP_SET_QKEY` (`ib_create_send_mad`). The answer is written at
/// `out`; returns it.
fn host_answers(d: &mut Dev, q: &mut Qp, c: &Cqe64, at: u64, lkey: u32, out: u64) -> Vec<u8> {
    let req = read(d, at + 40, 256);
    let mut inp = input(
        mad_ifc_in::BYTES,
        Opcode::MAD_IFC as u16,
        0,
        &[(mad_ifc_in::PORT.raw(), 1)],
    );
    mad_ifc_in::MAD
        .raw()
        .bytes_mut(&mut inp)
        .unwrap()
        .copy_from_slice(&req);
    let o = d.h.ok(&inp, mad_ifc_out::BYTES);
    let mut resp = mad_ifc_out::RESPONSE_MAD_PACKET
        .raw()
        .bytes(&o)
        .unwrap()
        .to_vec();
    if req[1] == mgmt_class::SUBN_DIRECTED_ROUTE {
        resp[4] |= 0x80; // status bit 15, mlx5 mad.c "set return bit"
    }
    d.h.mem.write(out, &resp).unwrap();
    post_mad(d, q, c.slid.get(), src_qpn(c), IB_QP_SET_QKEY, lkey, out);
    scqe(d, q).expect("the answer's send completion");
    resp
}

#[test]
fn subn_get_node_info_reaches_the_host_qp0_and_mad_ifc_answers_it() {
    let mut d = Dev::new();
    let pd = d.pd();
    let mut q0 = dgram_qp(&mut d, st::QP0, pd, 0);
    let lid = d.h.dev.fw().ib_port.lid;
    let (lk, buf) = mr(&mut d, pd, 4096, false);
    let req = mad(
        mgmt_class::SUBN_LID_ROUTED,
        1,
        method::GET,
        smp_attr::NODE_INFO,
        0,
        0x1234_5678_9abc,
    );
    d.h.mem.write(buf, &req).unwrap();
    post_recv(&d, &mut q0, lk, buf + 1024);
    post_recv(&d, &mut q0, lk, buf + 2048);
    post_mad(&d, &mut q0, lid, 0, IB_QP_SET_QKEY, lk, buf);
    let s = scqe(&d, &mut q0).expect("send completion");
    assert_eq!(s.op_own >> 4, vals::CQE_REQ);
    // The device does not answer: the request completes on the host's QP0.
    let r = rcqe(&d, &mut q0).expect("the SubnGet on QP0's receive queue");
    assert_mad_cqe(&r, 0, lid);
    assert_eq!(read(&d, buf + 1024 + 40, 256), req, "delivered unchanged");
    assert!(rcqe(&d, &mut q0).is_none(), "no answer from the device");
    // The host answers through MAD_IFC; the requester receives the GetResp.
    host_answers(&mut d, &mut q0, &r, buf + 1024, lk, buf + 3072);
    let a = rcqe(&d, &mut q0).expect("the answer on QP0's receive queue");
    assert_mad_cqe(&a, 0, lid);
    let resp = read(&d, buf + 2048 + 40, 256);
    assert_eq!(resp[3], method::GET_RESP);
    assert_eq!(be16(&resp, 4), mad_status::SUCCESS);
    assert_eq!(be64(&resp, 8), 0x1234_5678_9abc, "transaction ID kept");
    assert_eq!(be16(&resp, 16), smp_attr::NODE_INFO);
    // NodeInfo (IBTA 14.2.5.3) at the SMP data (byte 64): a CA of one port with the
    // port's node GUID.
    let ni = &resp[64..];
    assert_eq!(ni[2], 1, "NodeType CA");
    assert_eq!(ni[3], 1, "NumPorts");
    assert_eq!(be64(ni, 12), d.h.dev.fw().ib_port.node_guid);
    assert_eq!(ni[36], 1, "LocalPortNum");
    let fw = d.h.dev.fw();
    assert_eq!((fw.dp.mad.to_qp0, fw.dp.mad.sma), (2, 0));
    drop(fw);
    no_violations(&d);
}

#[test]
fn with_the_opt_in_knob_the_device_sma_answers_on_qp0() {
    let mut d = Dev::new();
    let pd = d.pd();
    let mut q0 = dgram_qp(&mut d, st::QP0, pd, 0);
    let lid = d.h.dev.fw().ib_port.lid;
    let (lk, buf) = mr(&mut d, pd, 4096, false);
    d.h.dev.fw().ib_port.mad_agents_in_device = true;
    let req = mad(
        mgmt_class::SUBN_LID_ROUTED,
        1,
        method::GET,
        smp_attr::NODE_INFO,
        0,
        0x77,
    );
    d.h.mem.write(buf, &req).unwrap();
    post_recv(&d, &mut q0, lk, buf + 1024);
    post_mad(&d, &mut q0, lid, 0, IB_QP_SET_QKEY, lk, buf);
    scqe(&d, &mut q0).expect("send completion");
    let r = rcqe(&d, &mut q0).expect("the device SMA's answer");
    assert_mad_cqe(&r, 0, lid);
    let resp = read(&d, buf + 1024 + 40, 256);
    assert_eq!(resp[3], method::GET_RESP);
    assert_eq!(be64(&resp[64..], 12), d.h.dev.fw().ib_port.node_guid);
    assert!(rcqe(&d, &mut q0).is_none(), "the request is not delivered");
    let fw = d.h.dev.fw();
    assert_eq!(
        (fw.dp.mad.sma, fw.dp.mad.to_qp0),
        (1, 1),
        "the answer went to QP0"
    );
    drop(fw);
    no_violations(&d);
}

/// PortCounters data (IBTA 16.1.3.5) at the PMA data (byte 64): PortXmitData,
/// PortRcvData, PortXmitPkts, PortRcvPkts.
fn port_counters(resp: &[u8]) -> [u32; 4] {
    let c = &resp[64..];
    [be32(c, 24), be32(c, 28), be32(c, 32), be32(c, 36)]
}

#[test]
fn pma_port_counters_through_mad_ifc_count_the_qp1_traffic() {
    let mut d = Dev::new();
    let pd = d.pd();
    let mut q1 = dgram_qp(&mut d, st::QP1, pd, QP1_QKEY);
    let lid = d.h.dev.fw().ib_port.lid;
    let (lk, buf) = mr(&mut d, pd, 4096, false);
    let get = |d: &mut Dev, q1: &mut Qp, meth: u8, attr: u16, select: u16| {
        let mut req = mad(mgmt_class::PERF_MGMT, 1, meth, attr, 0, 7);
        req[64 + 1] = 1; // PortSelect
        req[64 + 2..64 + 4].copy_from_slice(&select.to_be_bytes());
        d.h.mem.write(buf, &req).unwrap();
        post_recv(d, q1, lk, buf + 1024);
        post_recv(d, q1, lk, buf + 2048);
        post_mad(d, q1, lid, 1, IB_QP_SET_QKEY, lk, buf);
        scqe(d, q1).expect("send completion");
        let r = rcqe(d, q1).expect("the PerfMgmt request on QP1's receive queue");
        assert_mad_cqe(&r, 1, lid);
        assert_eq!(read(d, buf + 1024 + 40, 256), req, "delivered unchanged");
        let sent = host_answers(d, q1, &r, buf + 1024, lk, buf + 3072);
        let a = rcqe(d, q1).expect("the PMA's answer on QP1's receive queue");
        assert_mad_cqe(&a, 1, lid);
        let resp = read(d, buf + 2048 + 40, 256);
        assert_eq!(resp, sent, "the host's answer arrives unchanged");
        assert_eq!(resp[3], method::GET_RESP);
        assert_eq!(be16(&resp, 4), mad_status::SUCCESS);
        resp
    };
    // One MAD packet on the link: LRH 8 + BTH 12 + DETH 8 + MAD 256 + ICRC 4 = 288
    // octets = 72 words. The port loops its own traffic back: each packet is sent
    // and received. When MAD_IFC answers the first Get, the request has crossed.
    let r = get(&mut d, &mut q1, method::GET, pma_attr::PORT_COUNTERS, 0);
    assert_eq!(port_counters(&r), [72, 72, 1, 1]);
    // Then the answer and a second request.
    let r = get(&mut d, &mut q1, method::GET, pma_attr::PORT_COUNTERS, 0);
    assert_eq!(port_counters(&r), [216, 216, 3, 3]);
    // Set clears the counters CounterSelect names (all four here).
    let r = get(
        &mut d,
        &mut q1,
        method::SET,
        pma_attr::PORT_COUNTERS,
        0xf000,
    );
    assert_eq!(port_counters(&r), [0, 0, 0, 0]);
    // PortCountersExtended (IBTA 16.1.4.11): 64-bit counters at data bytes 8..40.
    let r = get(&mut d, &mut q1, method::GET, pma_attr::PORT_COUNTERS_EXT, 0);
    let c = &r[64..];
    assert_eq!(
        [be64(c, 8), be64(c, 16), be64(c, 24), be64(c, 32)],
        [144, 144, 2, 2]
    );
    let fw = d.h.dev.fw();
    assert_eq!((fw.dp.mad.to_qp1, fw.dp.mad.pma), (8, 0));
    drop(fw);
    no_violations(&d);
}

#[test]
fn directed_route_hop_zero_loops_back_to_the_own_qp0() {
    let mut d = Dev::new();
    let pd = d.pd();
    let mut q0 = dgram_qp(&mut d, st::QP0, pd, 0);
    let lid = d.h.dev.fw().ib_port.lid;
    let (lk, buf) = mr(&mut d, pd, 4096, false);
    // SubnGet(PortInfo) directed route, hop count 0, DrSLID / DrDLID permissive, sent
    // to the permissive LID (IBTA 14.2.2): for this port, never on the link.
    let mut req = mad(
        mgmt_class::SUBN_DIRECTED_ROUTE,
        1,
        method::GET,
        smp_attr::PORT_INFO,
        1,
        9,
    );
    req[32..34].copy_from_slice(&PERMISSIVE.to_be_bytes());
    req[34..36].copy_from_slice(&PERMISSIVE.to_be_bytes());
    d.h.mem.write(buf, &req).unwrap();
    post_recv(&d, &mut q0, lk, buf + 1024);
    post_recv(&d, &mut q0, lk, buf + 2048);
    post_mad(&d, &mut q0, PERMISSIVE, 0, IB_QP_SET_QKEY, lk, buf);
    scqe(&d, &mut q0).expect("send completion");
    let r = rcqe(&d, &mut q0).expect("the SMP on this port's own QP0");
    assert_mad_cqe(&r, 0, lid);
    assert_eq!(
        read(&d, buf + 1024 + 40, 256),
        req,
        "delivered unchanged: no direction bit from the device"
    );
    // The host answers (MAD_IFC, direction bit set by the host); hop count 0 again:
    // back to this port.
    host_answers(&mut d, &mut q0, &r, buf + 1024, lk, buf + 3072);
    let a = rcqe(&d, &mut q0).expect("the answer on QP0");
    assert_eq!(src_qpn(&a), 0);
    let resp = read(&d, buf + 2048 + 40, 256);
    assert_eq!(resp[1], mgmt_class::SUBN_DIRECTED_ROUTE);
    assert_eq!(resp[3], method::GET_RESP);
    assert_eq!(
        be16(&resp, 4),
        mad_status::SMP_DIRECTION,
        "direction bit set, status success (IBTA 14.2.1.2)"
    );
    // PortInfo LID (IBTA 14.2.5.6, data bytes 16..18).
    assert_eq!(be16(&resp[64..], 16), lid);
    let st = mlx5_emu::report::stats(&d.h.dev);
    let t = &st["dp"]["send"]["transport"];
    assert_eq!(
        (&t["no_route"], &t["to_wire"]),
        (&0.into(), &0.into()),
        "not on the link"
    );
    no_violations(&d);
}

#[test]
fn a_gsi_mad_of_another_class_reaches_the_qp1_receive_queue() {
    let mut d = Dev::new();
    let pd = d.pd();
    let mut q1 = dgram_qp(&mut d, st::QP1, pd, QP1_QKEY);
    let lid = d.h.dev.fw().ib_port.lid;
    let (lk, buf) = mr(&mut d, pd, 4096, false);
    // SubnAdm (SA, class 0x03) Get: for the host's MAD agents.
    let req = mad(0x03, 2, method::GET, 0x0035, 0, 11);
    d.h.mem.write(buf, &req).unwrap();
    post_recv(&d, &mut q1, lk, buf + 1024);
    post_mad(&d, &mut q1, lid, 1, IB_QP_SET_QKEY, lk, buf);
    scqe(&d, &mut q1).expect("send completion");
    let r = rcqe(&d, &mut q1).expect("the SA MAD on QP1's receive queue");
    assert_mad_cqe(&r, 1, lid);
    assert_eq!(read(&d, buf + 1024 + 40, 256), req, "delivered unchanged");
    assert_eq!(d.h.dev.fw().dp.mad.to_qp1, 1);
    no_violations(&d);
}

#[test]
fn smp_responses_reach_the_host_qp0_and_short_mads_are_dropped() {
    let mut d = Dev::new();
    let pd = d.pd();
    let mut q0 = dgram_qp(&mut d, st::QP0, pd, 0);
    let lid = d.h.dev.fw().ib_port.lid;
    let (lk, buf) = mr(&mut d, pd, 4096, false);
    // A SubnGetResp (what a subnet manager on this host waits for) completes on the
    // host's QP0 receive queue.
    let resp = mad(
        mgmt_class::SUBN_LID_ROUTED,
        1,
        method::GET_RESP,
        smp_attr::NODE_INFO,
        0,
        3,
    );
    d.h.mem.write(buf, &resp).unwrap();
    post_recv(&d, &mut q0, lk, buf + 1024);
    post_mad(&d, &mut q0, lid, 0, IB_QP_SET_QKEY, lk, buf);
    scqe(&d, &mut q0).expect("send completion");
    let r = rcqe(&d, &mut q0).expect("the response on QP0's receive queue");
    assert_mad_cqe(&r, 0, lid);
    assert_eq!(read(&d, buf + 1024 + 40, 256), resp);
    // A SubnGet of 128 bytes is no MAD (IBTA 13.4.2): dropped, nothing delivered.
    let req = mad(
        mgmt_class::SUBN_LID_ROUTED,
        1,
        method::GET,
        smp_attr::NODE_INFO,
        0,
        4,
    );
    d.h.mem.write(buf, &req).unwrap();
    post_recv(&d, &mut q0, lk, buf + 1024);
    post_len(&d, &mut q0, (lid, 0, IB_QP_SET_QKEY), lk, buf, 128);
    scqe(&d, &mut q0).expect("send completion");
    assert!(rcqe(&d, &mut q0).is_none(), "not delivered");
    let fw = d.h.dev.fw();
    assert_eq!((fw.dp.mad.to_qp0, fw.dp.mad.bad_size), (1, 1));
}

#[test]
fn an_smp_crosses_the_wire_to_the_peer_host_and_its_answer_comes_back() {
    let (mut da, mut db) = wired();
    let pa = da.pd();
    let pb = db.pd();
    let mut a0 = dgram_qp(&mut da, st::QP0, pa, 0);
    let mut b0 = dgram_qp(&mut db, st::QP0, pb, 0);
    let la = da.h.dev.fw().ib_port.lid;
    let lb = db.h.dev.fw().ib_port.lid;
    let (lka, abuf) = mr(&mut da, pa, 4096, false);
    let (lkb, bbuf) = mr(&mut db, pb, 4096, false);
    post_recv(&db, &mut b0, lkb, bbuf);
    let req = mad(
        mgmt_class::SUBN_LID_ROUTED,
        1,
        method::GET,
        smp_attr::PORT_INFO,
        0,
        21,
    );
    da.h.mem.write(abuf, &req).unwrap();
    post_recv(&da, &mut a0, lka, abuf + 1024);
    post_mad(&da, &mut a0, lb, 0, IB_QP_SET_QKEY, lka, abuf);
    scqe(&da, &mut a0).expect("send completion");
    // The request completes on the peer host's QP0, from LID 2, QP 0.
    let mut got = None;
    step_until(&da, &db, "the SubnGet at the peer's QP0", &mut || {
        got = rcqe(&db, &mut b0);
        got.is_some()
    });
    let r = got.unwrap();
    assert_mad_cqe(&r, 0, la);
    assert_eq!(read(&db, bbuf + 40, 256), req, "delivered unchanged");
    assert!(
        rcqe(&da, &mut a0).is_none(),
        "no answer from the peer device"
    );
    // The peer's host answers through its MAD_IFC.
    host_answers(&mut db, &mut b0, &r, bbuf, lkb, bbuf + 3072);
    let mut got = None;
    step_until(&da, &db, "the peer host's answer", &mut || {
        got = rcqe(&da, &mut a0);
        got.is_some()
    });
    let a = got.unwrap();
    assert_mad_cqe(&a, 0, lb);
    let resp = read(&da, abuf + 1024 + 40, 256);
    assert_eq!(resp[3], method::GET_RESP);
    assert_eq!(be16(&resp[64..], 16), lb, "the peer port's PortInfo LID");
    assert_eq!(db.h.dev.fw().dp.mad.to_qp0, 1);
    assert_eq!(da.h.dev.fw().dp.mad.to_qp0, 1);
    // Each port counted the request and the answer once each way.
    let ca = da.h.dev.fw().dp.mad.counters.clone();
    let cb = db.h.dev.fw().dp.mad.counters.clone();
    assert_eq!((ca.xmit_pkts, ca.rcv_pkts, ca.xmit_words), (1, 1, 72));
    assert_eq!((cb.xmit_pkts, cb.rcv_pkts, cb.rcv_words), (1, 1, 72));
    no_violations(&da);
    no_violations(&db);
}

#[test]
fn a_pkey_of_another_partition_is_dropped_at_the_peer_qp0() {
    let (mut da, mut db) = wired();
    let pa = da.pd();
    let pb = db.pd();
    let mut a0 = dgram_qp(&mut da, st::QP0, pa, 0);
    let mut b0 = dgram_qp(&mut db, st::QP0, pb, 0);
    let lb = db.h.dev.fw().ib_port.lid;
    let (lka, abuf) = mr(&mut da, pa, 4096, false);
    let (lkb, bbuf) = mr(&mut db, pb, 4096, false);
    // The peer's table holds only partition 0x0001 (full member): A's default P_Key
    // 0xffff (partition 0x7fff) is no key of it (IBTA 10.9.3).
    db.h.dev.fw().ib_port.pkeys[0] = 0x8001;
    post_recv(&db, &mut b0, lkb, bbuf);
    let req = mad(
        mgmt_class::SUBN_LID_ROUTED,
        1,
        method::GET,
        smp_attr::NODE_INFO,
        0,
        1,
    );
    da.h.mem.write(abuf, &req).unwrap();
    post_mad(&da, &mut a0, lb, 0, IB_QP_SET_QKEY, lka, abuf);
    scqe(&da, &mut a0).expect("send completion");
    step_until(&da, &db, "the peer received the packet", &mut || {
        db.h.dev.fw().dp.mad.counters.rcv_pkts == 1
    });
    assert!(rcqe(&db, &mut b0).is_none(), "dropped");
    let fw = db.h.dev.fw();
    assert_eq!(fw.ib_port.pkey_violations, 1, "PortInfo P_KeyViolations");
    assert_eq!(fw.dp.mad.to_qp0, 0);
    drop(fw);
    let st = mlx5_emu::report::stats(&db.h.dev);
    assert_eq!(st["dp"]["send"]["transport"]["drop_pkey"], 1);
}

#[test]
fn a_bad_qkey_on_qp1_is_dropped_and_counted() {
    let mut d = Dev::new();
    let pd = d.pd();
    let mut q1 = dgram_qp(&mut d, st::QP1, pd, QP1_QKEY);
    let lid = d.h.dev.fw().ib_port.lid;
    let (lk, buf) = mr(&mut d, pd, 4096, false);
    let mut req = mad(
        mgmt_class::PERF_MGMT,
        1,
        method::GET,
        pma_attr::PORT_COUNTERS,
        0,
        5,
    );
    req[65] = 1;
    d.h.mem.write(buf, &req).unwrap();
    post_recv(&d, &mut q1, lk, buf + 1024);
    // A Q_Key without the controlled bit is sent as is (IBTA 10.2.5): not QP1's.
    post_mad(&d, &mut q1, lid, 1, 0x1234, lk, buf);
    scqe(&d, &mut q1).expect("send completion");
    assert!(rcqe(&d, &mut q1).is_none(), "dropped");
    {
        let fw = d.h.dev.fw();
        assert_eq!(fw.ib_port.qkey_violations, 1, "PortInfo Q_KeyViolations");
        assert_eq!(fw.dp.mad.to_qp1, 0, "the host never saw it");
    }
    let st = mlx5_emu::report::stats(&d.h.dev);
    assert_eq!(st["dp"]["send"]["transport"]["drop_qkey"], 1);
    // The well-known key passes: the request reaches the host's QP1.
    post_mad(&d, &mut q1, lid, 1, QP1_QKEY, lk, buf);
    scqe(&d, &mut q1).expect("send completion");
    assert_mad_cqe(&rcqe(&d, &mut q1).expect("delivered"), 1, lid);
    assert_eq!(read(&d, buf + 1024 + 40, 256), req);
    no_violations(&d);
}
