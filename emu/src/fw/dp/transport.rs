//! RC / UC / UD semantics: the port, the responder, acknowledgements, RNR and
//! transport retries. See [`super`].
//!
//! [`Firmware::port_deliver`] sends a packet: to this port's own LID (within its LMC
//! range) it is queued for this device (loopback, handled by [`Firmware::dp_pump`] in
//! the same firmware step), otherwise it goes to the wire as a frame. The responder
//! checks what the IBTA's receive rules check (QP, state, connection, P_Key, Q_Key,
//! PSN) and silently drops what fails them, as a channel adapter does, so the
//! requester's local ACK timer runs out; it executes requests through the memory keys
//! and answers RC requests (ACK, READ response, atomic acknowledge, NAK). The
//! requester completes RC WQEs on their responses, waits `min_rnr_timer` after an
//! RNR NAK (up to `rnr_retry` times, 7 = infinitely), retransmits after
//! 4.096 µs × 2^`ack_timeout` without a response (up to `retry_count` times), and
//! fails a WQE a NAK refuses. [`Firmware::dp_tick`] runs the timers from the firmware
//! loop.
//!
//! Rules and sources: emu/README.md, "Data path" → "Transport".

use super::super::qp_state::{st, state};
use super::super::{Env, Firmware};
use super::cqe::{CqeDesc, CqeOp};
use super::packet::{Body, Grh, Header, Nak, Packet, SendKind};
use super::recv::RecvTake;
use super::send::Status;
use super::wqe::{atomic_apply, AtomicArgs, QpKind};
use super::xlate::{Access, XlateError};
use crate::ifc::caps::atomic_caps as at;
use crate::ifc::eqe::event_type;
use crate::ifc::qp::{ads, qpc};
use crate::ifc::wqe::{opcode, vals, WqeDataSeg};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Most packets handled in one pump (a bound on the work one doorbell causes; the
/// rest stays queued for the next step).
const MAX_PUMP: usize = 1 << 16;

/// Atomic results a responder keeps for duplicate atomic requests (IBTA 9.7.5.1.4:
/// a duplicate atomic is answered from the saved result, not re-executed).
const ATOMIC_REPLAY: usize = 16;

/// Per-QP responder state.
#[derive(Clone, Debug, Default)]
pub struct RespState {
    /// `next_rcv_psn` loaded from the context.
    pub started: bool,
    /// Expected PSN.
    pub epsn: u32,
    /// A NAK (sequence error or RNR) was sent: later out-of-sequence requests are
    /// dropped until the expected one arrives (IBTA 9.7.5.2.2).
    pub nak_outstanding: bool,
    /// COMM_EST was raised for this stay in RTR.
    pub comm_est: bool,
    /// (PSN, original value) of the last atomics.
    pub atomics: VecDeque<(u32, u64)>,
}

/// Transport counters (`stats` → `dp` → `send` → `transport`).
#[derive(Clone, Debug, Default)]
pub struct TransportStats {
    /// Packets to this port's own LID.
    pub loopback: u64,
    /// Packets handed to the wire.
    pub to_wire: u64,
    /// Packets with no route (the wire refused them).
    pub no_route: u64,
    /// Frames from the wire that did not decode.
    pub bad_frames: u64,
    /// Frames from the wire dropped: DLID not one of this port's (`dlid_accepted`).
    pub drop_dlid: u64,
    /// Requests dropped: no such QP.
    pub drop_no_qp: u64,
    /// Requests dropped: QP state does not receive (RST, INIT, ERR).
    pub drop_state: u64,
    /// Requests dropped: wrong service type or not from the connected peer.
    pub drop_conn: u64,
    /// Requests dropped: P_Key mismatch.
    pub drop_pkey: u64,
    /// Requests dropped: Q_Key mismatch.
    pub drop_qkey: u64,
    /// UC / UD messages dropped: no receive WQE, or a PSN gap (UC).
    pub drop_unreliable: u64,
    /// Responses dropped (no such QP / WQE, stale PSN).
    pub drop_response: u64,
    /// ACKs sent.
    pub acks: u64,
    /// RNR NAKs sent.
    pub rnr_naks: u64,
    /// PSN sequence error NAKs sent.
    pub seq_naks: u64,
    /// Other NAKs sent (access, operation, invalid request).
    pub error_naks: u64,
    /// Duplicate requests answered.
    pub duplicates: u64,
    /// Retransmissions (timeouts, RNR waits, sequence NAKs).
    pub retransmits: u64,
    /// Local ACK timeouts.
    pub timeouts: u64,
    /// Fenced WQEs that waited.
    pub fence_waits: u64,
    /// Gather keys that failed.
    pub local_key_errors: u64,
    /// COMM_EST events raised.
    pub comm_est: u64,
}

/// Packets of a `len`-byte message at path MTU code `mtu` (`qpc.mtu`: 1..5 = 256 ..
/// 4096 bytes; others as 4096); at least one (IBTA 9.7.1: a zero-length message is one
/// packet).
pub fn npkts(len: u64, mtu: u8) -> u32 {
    let m = if (1..=5).contains(&mtu) {
        128u64 << mtu
    } else {
        4096
    };
    len.div_ceil(m).clamp(1, 1 << 23) as u32
}

/// `a - b` in 24-bit PSN space, as a signed distance.
fn psn_diff(a: u32, b: u32) -> i32 {
    ((a.wrapping_sub(b)) << 8) as i32 >> 8
}

/// The RNR NAK timer of code `c` (IBTA table 45, µs: 0 = 655.36 ms).
pub fn rnr_timer(c: u8) -> Duration {
    const US: [u32; 32] = [
        655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
        5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122_880, 163_840, 245_760,
        327_680, 491_520,
    ];
    Duration::from_micros(u64::from(US[usize::from(c & 31)]))
}

/// The local ACK timeout of code `c`: 4.096 µs × 2^c; 0 = infinite (IBTA 9.7.6.1.3,
/// `qpc.primary_address_path.ack_timeout`).
pub fn ack_timeout(c: u8) -> Option<Duration> {
    (c != 0).then(|| Duration::from_nanos(4096u64 << c.min(31)))
}

/// The primary address path (`ads`) inside a QP context (empty if the context is
/// short).
fn primary_path(ctx: &[u8]) -> &[u8] {
    ctx.get(qpc::PRIMARY_ADDRESS_PATH.raw().byte_off()..)
        .unwrap_or(&[])
}

/// P_Key match (IBTA 10.9.3): equal base keys and at least one full member.
pub(super) fn pkey_match(a: u16, b: u16) -> bool {
    (a & 0x7fff) == (b & 0x7fff) && (a | b) & 0x8000 != 0
}

/// What the responder answers.
enum Answer {
    None,
    Ack(u32),
    Nak(u32, Nak),
    ReadResp(u32, Vec<u8>),
    AtomicAck(u32, u64),
}

impl Firmware {
    /// Sends `pkt` toward `dlid`: this port's own LID (within its LMC range) is
    /// loopback, anything else goes to the wire.
    pub(crate) fn port_deliver(&mut self, _env: &Env<'_>, dlid: u16, pkt: Packet) {
        let lid = self.ib_port.lid;
        let lmc = self.ib_port.lmc.min(7);
        // dpmad: a directed-route SMP with hop count 0 is for this port whatever its
        // DLID (dp/mad.rs `stays_local`, IBTA 14.2.2).
        if (lid != 0 && dlid >> lmc == lid >> lmc) || super::mad::stays_local(&pkt) {
            self.dp.send.transport.loopback += 1;
            // dpmad: the port counts what it sends, looped back or not (PMA
            // PortCounters, dp/mad.rs).
            self.dp.mad.counters.count_tx(&pkt);
            self.dp.send.loopback.push_back(pkt);
            return;
        }
        let frame = pkt.encode();
        match self.wire_send(frame) {
            Ok(()) => {
                self.dp.send.transport.to_wire += 1;
                self.dp.mad.counters.count_tx(&pkt);
            }
            // No route: the packet is lost; an RC requester times out.
            Err(_) => self.dp.send.transport.no_route += 1,
        }
    }

    /// A frame from the peer device (the wire's delivery).
    pub(crate) fn receive_frame(&mut self, env: &Env<'_>, frame: &[u8]) {
        match Packet::decode(frame) {
            Ok(p) if !self.dlid_accepted(&p) => {
                self.dp.send.transport.drop_dlid += 1;
                log::debug!(
                    "wire frame for DLID {:#x} dropped (port LID {:#x}, LMC {})",
                    p.hdr.dlid,
                    self.ib_port.lid,
                    self.ib_port.lmc
                );
            }
            Ok(p) => {
                self.dp_receive(env, p);
                self.dp_pump(env);
            }
            Err(e) => {
                self.dp.send.transport.bad_frames += 1;
                log::debug!("wire frame: {}", e.0);
            }
        }
    }

    /// Whether this port takes a packet from the wire by its DLID: a unicast DLID
    /// must be one of the port's LIDs, base LID to base LID + 2^LMC − 1 (IBTA vol. 1
    /// ch. 7: the link layer's data packet check discards a packet whose DLID is not
    /// the port's, LIDs and LMC in 7.11; C7-66 as the IBTA compliance test
    /// TD_10.10.1.1.1 asserts it: every DLID the LMC covers, none outside); the
    /// permissive LID 0xffff
    /// only for a directed-route SMP to QP0 (IBTA 4.1.3 / 14.2.2: the permissive DLID
    /// serves directed-route SMPs); the reserved LID 0 never. Multicast DLIDs
    /// (0xc000…0xfffe) pass: no multicast groups are modelled, the QP lookup decides.
    fn dlid_accepted(&self, p: &Packet) -> bool {
        const PERMISSIVE: u16 = 0xffff;
        const MULTICAST: u16 = 0xc000;
        let dlid = p.hdr.dlid;
        let (lid, lmc) = (self.ib_port.lid, self.ib_port.lmc.min(7));
        match dlid {
            0 => false,
            PERMISSIVE => p.hdr.dqpn == 0 && super::mad::is_directed_route_smp(p),
            d if d >= MULTICAST => true,
            d => lid != 0 && d >> lmc == lid >> lmc,
        }
    }

    /// Handles the packets queued for this port (loopback), answers included.
    pub(crate) fn dp_pump(&mut self, env: &Env<'_>) {
        for _ in 0..MAX_PUMP {
            let Some(p) = self.dp.send.loopback.pop_front() else {
                return;
            };
            self.dp_receive(env, p);
        }
    }

    fn dp_receive(&mut self, env: &Env<'_>, p: Packet) {
        // dpmad: the port counts what it receives (PMA PortCounters, dp/mad.rs).
        self.dp.mad.counters.count_rx(&p);
        if p.is_request() {
            self.responder(env, p);
        } else {
            self.on_response(env, p);
        }
    }

    /// The QP a packet's destination QPN names: 0 and 1 are the port's QP0 / QP1.
    fn dest_qp(&self, dqpn: u32) -> Option<u32> {
        match dqpn {
            0 | 1 => {
                let want = if dqpn == 0 { st::QP0 } else { st::QP1 };
                self.objs
                    .qps
                    .iter()
                    .find(|(_, q)| q.st == want)
                    .map(|(n, _)| *n)
            }
            n => self.objs.qps.contains_key(&n).then_some(n),
        }
    }

    /// Sends a response to the requester of `req` from QP `qpn`.
    fn respond(&mut self, env: &Env<'_>, qpn: u32, req: &Header, body: Body, psn: u32) {
        let hdr = Header {
            slid: req.dlid,
            dlid: req.slid,
            sl: req.sl,
            grh: req.grh.map(|g| Grh {
                sgid: g.dgid,
                dgid: g.sgid,
                ..g
            }),
            pkey: req.pkey,
            dqpn: req.sqpn,
            sqpn: qpn,
            psn,
            solicited: false,
        };
        match &body {
            Body::Ack => self.dp.send.transport.acks += 1,
            Body::Nak(Nak::Rnr { .. }) => self.dp.send.transport.rnr_naks += 1,
            Body::Nak(Nak::PsnSeq) => self.dp.send.transport.seq_naks += 1,
            Body::Nak(_) => self.dp.send.transport.error_naks += 1,
            _ => {}
        }
        let dlid = hdr.dlid;
        self.port_deliver(env, dlid, Packet { hdr, body });
    }

    /// The responder: checks, executes and answers one request.
    fn responder(&mut self, env: &Env<'_>, p: Packet) {
        // dpmad: MADs for QPN 0 / 1 meet the MAD rules first (dp/mad.rs), then go on
        // to the host's QP0 / QP1 like any datagram.
        if p.hdr.dqpn <= 1 && self.mad_receive(env, &p) {
            return;
        }
        let Some(qpn) = self.dest_qp(p.hdr.dqpn) else {
            self.dp.send.transport.drop_no_qp += 1;
            return;
        };
        let qp = &self.objs.qps[&qpn];
        // A QP receives in RTR, RTS, SQD and SQER (PRM / IBTA QP states); RST, INIT
        // and ERR drop.
        if !matches!(qp.state, state::RTR | state::RTS | state::SQD | state::SQER) {
            self.dp.send.transport.drop_state += 1;
            return;
        }
        let Some(kind) = QpKind::from_st(qp.st) else {
            self.dp.send.transport.drop_conn += 1;
            return;
        };
        let f = |fl: crate::ifc::field::Field| fl.get(&qp.ctx).unwrap_or(0);
        let dgram = matches!(kind, QpKind::Ud | QpKind::Mad);
        let is_dgram_pkt = matches!(p.body, Body::Send { qkey: Some(_), .. });
        // Service type and connection: a datagram QP takes datagrams; a connected QP
        // takes requests from its remote QP only (IBTA 9.6.1.5 / 9.6.2).
        if dgram != is_dgram_pkt
            || (!dgram && p.hdr.sqpn != f(qpc::REMOTE_QPN.raw()) as u32)
            || (kind == QpKind::Uc && matches!(p.body, Body::ReadReq { .. } | Body::Atomic { .. }))
        {
            self.dp.send.transport.drop_conn += 1;
            return;
        }
        // P_Key (IBTA 10.9.3): the QP's P_Key index names its key; the MAD QPs
        // take any key of the table.
        let path = primary_path(&qp.ctx);
        let idx = ads::PKEY_INDEX.raw().get(path).unwrap_or(0) as usize;
        let ok = if kind == QpKind::Mad {
            self.ib_port
                .pkeys
                .iter()
                .any(|k| pkey_match(*k, p.hdr.pkey))
        } else {
            let own = self.ib_port.pkeys.get(idx).copied().unwrap_or(0xffff);
            pkey_match(own, p.hdr.pkey)
        };
        if !ok {
            self.dp.send.transport.drop_pkey += 1;
            self.ib_port.pkey_violations = self.ib_port.pkey_violations.saturating_add(1);
            return;
        }
        // Q_Key (IBTA 10.2.5): a datagram's key must be the QP's; QP0 checks none
        // (IBTA 13.5.3.1: SMPs carry no meaningful Q_Key); QP1's is the well-known
        // key, checked in dp/mad.rs (dpmad). A mismatch counts in PortInfo
        // Q_KeyViolations (IBTA 14.2.5.6).
        if let Body::Send { qkey: Some(k), .. } = p.body {
            if kind != QpKind::Mad && k != f(qpc::Q_KEY.raw()) as u32 {
                self.dp.send.transport.drop_qkey += 1;
                self.ib_port.qkey_violations = self.ib_port.qkey_violations.saturating_add(1);
                return;
            }
        }
        let in_rtr = qp.state == state::RTR;
        let mtu = f(qpc::MTU.raw()) as u8;
        let next_rcv = f(qpc::NEXT_RCV_PSN.raw()) as u32;
        // Communication established: the first packet a connected QP receives in RTR
        // (IBTA 11.6.3.1, affiliated asynchronous event).
        if in_rtr && !dgram {
            let raise = {
                let r = &mut self.objs.qps.get_mut(&qpn).expect("QP").dp_send.resp;
                !std::mem::replace(&mut r.comm_est, true)
            };
            if raise {
                self.dp.send.transport.comm_est += 1;
                let _ = self.raise_qp_event(env, qpn, event_type::COMM_EST, 1);
            }
        }
        let n = match &p.body {
            Body::Send { payload, .. } | Body::Write { payload, .. } => {
                npkts(payload.len() as u64, mtu)
            }
            Body::ReadReq { len, .. } => npkts(u64::from(*len), mtu),
            _ => 1,
        };
        let psn = p.hdr.psn;
        if kind == QpKind::Rc || kind == QpKind::XrcIni {
            let r = &mut self.objs.qps.get_mut(&qpn).expect("QP").dp_send.resp;
            if !r.started {
                r.started = true;
                r.epsn = next_rcv & 0xff_ffff;
            }
            let d = psn_diff(psn, r.epsn);
            if d > 0 {
                // Out of sequence: one NAK, then silence until the expected PSN
                // (IBTA 9.7.5.2.2).
                if !std::mem::replace(&mut r.nak_outstanding, true) {
                    let e = r.epsn;
                    self.respond(env, qpn, &p.hdr, Body::Nak(Nak::PsnSeq), e);
                }
                return;
            }
            if d < 0 {
                self.dp.send.transport.duplicates += 1;
                self.duplicate(env, qpn, p);
                return;
            }
        } else if kind == QpKind::Uc {
            let r = &mut self.objs.qps.get_mut(&qpn).expect("QP").dp_send.resp;
            if !r.started {
                r.started = true;
                r.epsn = next_rcv & 0xff_ffff;
            }
            // UC: a message out of sequence is dropped and the receiver resynchronises
            // (IBTA 9.7.5.1.5 / 9.8.3).
            let d = psn_diff(psn, r.epsn);
            r.epsn = (psn + n) & 0xff_ffff;
            if d != 0 {
                self.dp.send.transport.drop_unreliable += 1;
                return;
            }
        }
        let reliable = kind == QpKind::Rc || kind == QpKind::XrcIni;
        let answer = self.execute_request(env, qpn, &p, dgram);
        // A receive completion that failed (fault `cqe_error`, dp/fault.rs) left the QP
        // in ERR: instead of the ACK it answers NAK remote operational error (the IBTA
        // NAK code for an error local to the responder that kept it from completing
        // the request).
        let answer = match answer {
            Answer::Ack(_) if self.objs.qps.get(&qpn).map(|q| q.state) == Some(state::ERR) => {
                Answer::Nak(psn, Nak::RemoteOp)
            }
            a => a,
        };
        let r = &mut self.objs.qps.get_mut(&qpn).expect("QP").dp_send.resp;
        match &answer {
            Answer::Nak(_, Nak::Rnr { .. }) | Answer::Nak(_, Nak::PsnSeq) | Answer::None => {
                if matches!(answer, Answer::Nak(..)) {
                    r.nak_outstanding = true;
                }
            }
            _ => {
                r.nak_outstanding = false;
                r.epsn = (psn + n) & 0xff_ffff;
                if let Answer::AtomicAck(ps, v) = answer {
                    if r.atomics.len() == ATOMIC_REPLAY {
                        r.atomics.pop_front();
                    }
                    r.atomics.push_back((ps, v));
                }
            }
        }
        if !reliable {
            return;
        }
        match answer {
            Answer::None => {}
            Answer::Ack(ps) => self.respond(env, qpn, &p.hdr, Body::Ack, ps),
            Answer::Nak(ps, k) => self.respond(env, qpn, &p.hdr, Body::Nak(k), ps),
            Answer::ReadResp(ps, payload) => {
                self.respond(env, qpn, &p.hdr, Body::ReadResp { payload }, ps)
            }
            Answer::AtomicAck(ps, orig) => {
                self.respond(env, qpn, &p.hdr, Body::AtomicAck { orig }, ps)
            }
        }
    }

    /// A duplicate RC request (PSN behind the expected one): SEND / WRITE are
    /// acknowledged again, a READ is executed again, an atomic answered from its saved
    /// result (IBTA 9.7.5.1.4).
    fn duplicate(&mut self, env: &Env<'_>, qpn: u32, p: Packet) {
        let epsn = self.objs.qps[&qpn].dp_send.resp.epsn;
        match &p.body {
            Body::ReadReq { .. } => {
                if let Answer::ReadResp(ps, payload) = self.execute_request(env, qpn, &p, false) {
                    self.respond(env, qpn, &p.hdr, Body::ReadResp { payload }, ps);
                }
            }
            Body::Atomic { .. } => {
                let saved = self.objs.qps[&qpn]
                    .dp_send
                    .resp
                    .atomics
                    .iter()
                    .find(|(ps, _)| *ps == p.hdr.psn)
                    .map(|(_, v)| *v);
                if let Some(orig) = saved {
                    self.respond(env, qpn, &p.hdr, Body::AtomicAck { orig }, p.hdr.psn);
                }
            }
            _ => {
                let ps = epsn.wrapping_sub(1) & 0xff_ffff;
                self.respond(env, qpn, &p.hdr, Body::Ack, ps);
            }
        }
    }

    /// The responder QP fails (IBTA responder errors): to ERR, its receives flush,
    /// and for an access violation the WQ access error event.
    fn responder_error(&mut self, env: &Env<'_>, qpn: u32, access: bool) {
        if access {
            let _ = self.raise_qp_event(env, qpn, event_type::WQ_ACCESS_ERROR, 1);
        }
        self.qp_to_error(env, qpn);
    }

    /// Reads (`write` None) or writes `len` bytes at `va` through remote key `rkey`
    /// of PD `pd`.
    fn remote_io(
        &mut self,
        env: &Env<'_>,
        (qpn, pd): (u32, u32),
        (rkey, va, len): (u32, u64, u64),
        need: Access,
        write: Option<&[u8]>,
    ) -> Result<Vec<u8>, Nak> {
        if len == 0 {
            // A zero-length RDMA access checks no key (IBTA 9.7.4.1.3 / 9.4.5).
            return Ok(Vec::new());
        }
        // Fault on demand `rkey` (dp/fault.rs): refused as a key violation.
        if self.fault_rkey(qpn, rkey) {
            return Err(Nak::RemoteAccess);
        }
        // A key bound to one QP (a type 2 memory window) serves that QP only (dpmem
        // `translate_for`).
        let pieces = self
            .translate_for(env, rkey, va, len, need, pd, Some(qpn))
            .map_err(|e| {
                log::debug!("QP {qpn} rkey {rkey:#x}: {e:?}");
                Nak::RemoteAccess
            })?;
        let mut out = Vec::new();
        let mut at = 0usize;
        for (pa, n) in pieces {
            let n = n as usize;
            // The pieces cover exactly `len` bytes; anything else is a remote
            // operational error, not a panic.
            if at + n > len as usize {
                return Err(Nak::RemoteOp);
            }
            let res = match write {
                Some(d) => match d.get(at..at + n) {
                    Some(b) => env.mem.write(pa, b),
                    None => return Err(Nak::RemoteOp),
                },
                None => {
                    out.resize(at + n, 0);
                    env.mem.read(pa, &mut out[at..at + n])
                }
            };
            if let Err(e) = res {
                self.stats
                    .dma_error(format!("rkey {rkey:#x} at {pa:#x}: {e}"));
                return Err(Nak::RemoteOp);
            }
            at += n;
        }
        Ok(out)
    }

    /// Executes a request in sequence; the answer (RC) or None.
    fn execute_request(&mut self, env: &Env<'_>, qpn: u32, p: &Packet, dgram: bool) -> Answer {
        let (pd, rre, rwe, rae, min_rnr) = {
            let qp = &self.objs.qps[&qpn];
            let f = |fl: crate::ifc::field::Field| fl.get(&qp.ctx).unwrap_or(0);
            (
                qp.pd,
                f(qpc::RRE.raw()) != 0,
                f(qpc::RWE.raw()) != 0,
                f(qpc::RAE.raw()) != 0,
                f(qpc::MIN_RNR_NAK.raw()) as u8,
            )
        };
        let pd = self.xrc_srq_pd(qpn, &p.body).unwrap_or(pd);
        let psn = p.hdr.psn;
        let mtu = qpc::MTU.raw().get(&self.objs.qps[&qpn].ctx).unwrap_or(0) as u8;
        let last = |len: u64| (psn + npkts(len, mtu) - 1) & 0xff_ffff;
        match &p.body {
            Body::Send {
                kind,
                xrc_srqn,
                payload,
                ..
            } => {
                let mut data = Vec::new();
                if dgram {
                    // UD: the first 40 bytes of the receive buffer hold the GRH
                    // (IBTA 11.4.1.1), written when the packet has one; the byte count
                    // includes them.
                    data.extend_from_slice(&grh_bytes(p.hdr.grh.as_ref(), payload.len()));
                }
                data.extend_from_slice(payload);
                let op = match kind {
                    SendKind::Plain => CqeOp::RespSend,
                    SendKind::Imm(_) => CqeOp::RespSendImm,
                    SendKind::Inv(_) => CqeOp::RespSendInv,
                };
                let imm = match kind {
                    SendKind::Plain => 0,
                    SendKind::Imm(v) | SendKind::Inv(v) => *v,
                };
                self.deliver_recv(env, qpn, p, *xrc_srqn, op, imm, Some(&data), min_rnr, dgram)
                    .unwrap_or(Answer::Ack(last(payload.len() as u64)))
            }
            Body::Write {
                va,
                rkey,
                imm,
                xrc_srqn,
                payload,
            } => {
                if !rwe && !payload.is_empty() {
                    self.responder_error(env, qpn, true);
                    return Answer::Nak(psn, Nak::RemoteAccess);
                }
                // The key first: a violation writes nothing and consumes no receive.
                if !payload.is_empty() {
                    // Fault on demand `rkey` (dp/fault.rs): refused as a key violation.
                    let checked = if self.fault_rkey(qpn, *rkey) {
                        Err(XlateError::Access)
                    } else {
                        self.translate_for(
                            env,
                            *rkey,
                            *va,
                            payload.len() as u64,
                            Access::REMOTE_WRITE,
                            pd,
                            Some(qpn),
                        )
                        .map(|_| ())
                    };
                    if let Err(e) = checked {
                        log::debug!("QP {qpn} WRITE rkey {rkey:#x}: {e:?}");
                        self.responder_error(env, qpn, true);
                        return Answer::Nak(psn, Nak::RemoteAccess);
                    }
                }
                if let Some(imm) = imm {
                    // WRITE with immediate consumes a receive WQE (no data scattered).
                    if let Some(a) = self.deliver_recv(
                        env,
                        qpn,
                        p,
                        *xrc_srqn,
                        CqeOp::RespWriteImm,
                        *imm,
                        None,
                        min_rnr,
                        false,
                    ) {
                        return a;
                    }
                }
                match self.remote_io(
                    env,
                    (qpn, pd),
                    (*rkey, *va, payload.len() as u64),
                    Access::REMOTE_WRITE,
                    Some(payload),
                ) {
                    Ok(_) => Answer::Ack(last(payload.len() as u64)),
                    Err(k) => {
                        self.responder_error(env, qpn, k == Nak::RemoteAccess);
                        Answer::Nak(psn, k)
                    }
                }
            }
            Body::ReadReq { va, rkey, len, .. } => {
                if !rre && *len > 0 {
                    self.responder_error(env, qpn, true);
                    return Answer::Nak(psn, Nak::RemoteAccess);
                }
                match self.remote_io(
                    env,
                    (qpn, pd),
                    (*rkey, *va, u64::from(*len)),
                    Access::REMOTE_READ,
                    None,
                ) {
                    Ok(d) => Answer::ReadResp(psn, d),
                    Err(k) => {
                        self.responder_error(env, qpn, k == Nak::RemoteAccess);
                        Answer::Nak(psn, k)
                    }
                }
            }
            Body::Atomic { va, rkey, op, .. } => {
                if !rae {
                    self.responder_error(env, qpn, true);
                    return Answer::Nak(psn, Nak::RemoteAccess);
                }
                // Atomics are 8-byte aligned (IBTA 9.4.5: misaligned is an invalid
                // request).
                if va % 8 != 0 {
                    self.responder_error(env, qpn, false);
                    return Answer::Nak(psn, Nak::InvalidRequest);
                }
                let old = match self.remote_io(
                    env,
                    (qpn, pd),
                    (*rkey, *va, 8),
                    Access::REMOTE_ATOMIC,
                    None,
                ) {
                    Ok(d) => d,
                    Err(k) => {
                        self.responder_error(env, qpn, k == Nak::RemoteAccess);
                        return Answer::Nak(psn, k);
                    }
                };
                let host = self.atomic_host_endian();
                let mut b = [0u8; 8];
                b.copy_from_slice(&old);
                let oldv = if host {
                    u64::from_le_bytes(b)
                } else {
                    u64::from_be_bytes(b)
                };
                let args = match op.opcode {
                    opcode::ATOMIC_CS => AtomicArgs::CmpSwap {
                        swap: op.swap_add,
                        compare: op.compare,
                    },
                    opcode::ATOMIC_FA => AtomicArgs::FetchAdd { add: op.swap_add },
                    opcode::ATOMIC_MASKED_CS => AtomicArgs::MaskedCmpSwap {
                        swap: op.swap_add,
                        compare: op.compare,
                        swap_mask: op.swap_mask,
                        compare_mask: op.compare_mask,
                    },
                    opcode::ATOMIC_MASKED_FA => AtomicArgs::MaskedFetchAdd {
                        add: op.swap_add,
                        boundary: op.compare,
                    },
                    _ => {
                        self.responder_error(env, qpn, false);
                        return Answer::Nak(psn, Nak::InvalidRequest);
                    }
                };
                let newv = atomic_apply(oldv, &args);
                let nb = if host {
                    newv.to_le_bytes()
                } else {
                    newv.to_be_bytes()
                };
                if let Err(k) = self.remote_io(
                    env,
                    (qpn, pd),
                    (*rkey, *va, 8),
                    Access::REMOTE_ATOMIC,
                    Some(&nb),
                ) {
                    self.responder_error(env, qpn, k == Nak::RemoteAccess);
                    return Answer::Nak(psn, k);
                }
                Answer::AtomicAck(psn, oldv)
            }
            _ => Answer::None,
        }
    }

    /// The PD that protects an XRC request's remote access: an XRC target QP has no
    /// PD of its own (IBTA Annex A14, XRC: memory protection of RDMA and atomic
    /// requests goes by the PD of the XRC SRQ the XRCETH names; upstream
    /// `create_xrc_tgt_qp` accordingly gives the QP the driver's internal PD
    /// `devr->p0`, never the user's). `None` (the QP's own PD applies) for a non-XRC
    /// QP, a request without XRCETH, or an SRQ that is no XRC SRQ of the QP's XRC
    /// domain (the key check then fails against the QP's PD).
    fn xrc_srq_pd(&self, qpn: u32, body: &Body) -> Option<u32> {
        let x = match body {
            Body::Send { xrc_srqn, .. }
            | Body::Write { xrc_srqn, .. }
            | Body::ReadReq { xrc_srqn, .. }
            | Body::Atomic { xrc_srqn, .. } => (*xrc_srqn)?,
            _ => return None,
        };
        let qp = self.objs.qps.get(&qpn)?;
        if qp.st != st::XRC {
            return None;
        }
        let srq = self.objs.srqs.get(&x)?;
        (srq.kind == crate::fw::rsc::SrqKind::Xrc && srq.xrcd == qp.xrcd).then_some(srq.pd)
    }

    /// `atomic_req_8B_endianness_mode` as the driver set it (SET_HCA_CAP ATOMIC,
    /// fw/caps.rs): host endianness (the guest's, little endian here) or big endian.
    fn atomic_host_endian(&self) -> bool {
        at::ATOMIC_REQ_8B_ENDIANNESS_MODE
            .raw()
            .get(&self.caps.atomic_cur)
            .unwrap_or(0)
            == super::super::caps::ATOMIC_REQ_MODE_HOST
    }

    /// Consumes a receive WQE for a SEND / WRITE with immediate and writes its CQE.
    /// `Some(answer)` when the request ends here (RNR, error), `None` on success.
    #[allow(clippy::too_many_arguments)]
    fn deliver_recv(
        &mut self,
        env: &Env<'_>,
        qpn: u32,
        p: &Packet,
        xrc_srqn: Option<u32>,
        op: CqeOp,
        imm: u32,
        data: Option<&[u8]>,
        min_rnr: u8,
        dgram: bool,
    ) -> Option<Answer> {
        let psn = p.hdr.psn;
        let reliable = !dgram
            && self
                .objs
                .qps
                .get(&qpn)
                .is_some_and(|q| matches!(q.st, st::RC | st::XRC));
        let w = match self.recv_take(env, qpn, xrc_srqn) {
            RecvTake::Wqe(w) => w,
            RecvTake::Empty => {
                // No receive WQE: RC answers RNR with the responder's min_rnr_timer
                // (IBTA 9.7.5.2.8); UC / UD drop the message.
                if reliable {
                    return Some(Answer::Nak(psn, Nak::Rnr { timer: min_rnr }));
                }
                self.dp.send.transport.drop_unreliable += 1;
                return Some(Answer::None);
            }
            RecvTake::Error(msg) => {
                self.stats.violation(format!("QP {qpn} receive: {msg}"));
                if reliable {
                    self.responder_error(env, qpn, false);
                    return Some(Answer::Nak(psn, Nak::RemoteOp));
                }
                return Some(Answer::None);
            }
        };
        let byte_cnt = match data {
            Some(d) => match self.recv_scatter(env, w.pd, &w.sges, d) {
                Ok(n) => n,
                Err(e) => {
                    // Responder local error: the receive completes in error, the QP
                    // fails, the requester is told (too little room: invalid request;
                    // a key: remote operational error; IBTA 9.9.3.1.2 / o9-xx).
                    let syn = e.syndrome();
                    let mut d = CqeDesc::new(
                        CqeOp::RespErr {
                            syndrome: syn,
                            vendor: 0,
                        },
                        qpn,
                        w.wqe_counter,
                    );
                    d.srqn = w.srqn.unwrap_or(0);
                    if let Some(cqn) = w.cqn {
                        self.cqe_post(env, cqn, &d);
                    }
                    if !reliable {
                        return Some(Answer::None);
                    }
                    self.responder_error(env, qpn, false);
                    let k = if syn == vals::SYNDROME_LOCAL_LENGTH_ERR {
                        Nak::InvalidRequest
                    } else {
                        Nak::RemoteOp
                    };
                    return Some(Answer::Nak(psn, k));
                }
            },
            None => 0,
        };
        // SEND with invalidate: the responder invalidates the rkey it carries (dpmem
        // `remote_invalidate`: a valid key of the QP's PD with remote invalidation
        // enabled); a refusal is an invalid request (IBTA 9.4.1.2 / 10.6.7.2.x).
        if op == CqeOp::RespSendInv {
            // XRC: the XRC SRQ's PD, as for every remote access (`xrc_srq_pd`).
            let own = self.objs.qps.get(&qpn).map_or(0, |q| q.pd);
            let pd = self.xrc_srq_pd(qpn, &p.body).unwrap_or(own);
            if let Err(e) = self.remote_invalidate(imm, pd) {
                log::debug!("QP {qpn} send with invalidate {imm:#x}: {e:?}");
                let mut d = CqeDesc::new(
                    CqeOp::RespErr {
                        syndrome: vals::SYNDROME_LOCAL_PROT_ERR,
                        vendor: 0,
                    },
                    qpn,
                    w.wqe_counter,
                );
                d.srqn = w.srqn.unwrap_or(0);
                if let Some(cqn) = w.cqn {
                    self.cqe_post(env, cqn, &d);
                }
                if reliable {
                    self.responder_error(env, qpn, false);
                    return Some(Answer::Nak(psn, Nak::InvalidRequest));
                }
                return Some(Answer::None);
            }
        }
        let mut d = CqeDesc::new(op, qpn, w.wqe_counter);
        d.byte_cnt = match data {
            Some(_) => byte_cnt,
            None => match &p.body {
                Body::Write { payload, .. } => payload.len() as u32,
                _ => 0,
            },
        };
        d.imm_inval = imm;
        d.src_qpn = p.hdr.sqpn;
        d.pkey = p.hdr.pkey;
        d.slid = p.hdr.slid;
        d.sl = p.hdr.sl;
        d.path_bits = (p.hdr.dlid & ((1u16 << self.ib_port.lmc.min(7)) - 1)) as u8;
        d.grh = p.hdr.grh.is_some();
        d.srqn = w.srqn.unwrap_or(0);
        d.solicited = p.hdr.solicited;
        if let Some(cqn) = w.cqn {
            self.cqe_post(env, cqn, &d);
        }
        None
    }

    /// A response for requester QP `dqpn`.
    fn on_response(&mut self, env: &Env<'_>, p: Packet) {
        let qpn = p.hdr.dqpn;
        let now = Instant::now();
        let host = self.atomic_host_endian();
        let Some(qp) = self.objs.qps.get_mut(&qpn) else {
            self.dp.send.transport.drop_response += 1;
            return;
        };
        if !matches!(qp.state, state::RTS | state::SQD | state::SQER)
            || p.hdr.sqpn != qpc::REMOTE_QPN.raw().get(&qp.ctx).unwrap_or(0) as u32
        {
            self.dp.send.transport.drop_response += 1;
            return;
        }
        let timeout = {
            let path = primary_path(&qp.ctx);
            ack_timeout(ads::ACK_TIMEOUT.raw().get(path).unwrap_or(0) as u8)
        };
        let rnr_retry = qpc::RNR_RETRY.raw().get(&qp.ctx).unwrap_or(0) as u8;
        let retry_count = qpc::RETRY_COUNT.raw().get(&qp.ctx).unwrap_or(0) as u8;
        let s = &mut qp.dp_send;
        let psn = p.hdr.psn;
        // The entry the response is for: the first waiting one whose PSNs cover it.
        let idx = s.pending.iter().position(|e| {
            e.status == Status::Waiting && {
                let d = psn_diff(psn, e.psn);
                d >= 0 && d < e.npsn.max(1) as i32
            }
        });
        let mut progress = false;
        // Everything before the entry a response names is acknowledged implicitly
        // (IBTA 9.7.5.1.4: responses arrive in order); an ACK acknowledges every
        // SEND / WRITE up to its PSN.
        let ack_upto = |s: &mut super::send::SqState, upto_excl: usize| -> bool {
            let mut any = false;
            for e in s.pending.iter_mut().take(upto_excl) {
                if e.status == Status::Waiting && !e.needs_response {
                    e.status = Status::Done;
                    any = true;
                }
            }
            any
        };
        let mut scatter: Option<(usize, Vec<WqeDataSeg>, Vec<u8>)> = None;
        match &p.body {
            Body::Ack => {
                let upto = s
                    .pending
                    .iter()
                    .position(|e| {
                        e.status == Status::Waiting
                            && psn_diff(psn, (e.psn + e.npsn.max(1) - 1) & 0xff_ffff) < 0
                    })
                    .unwrap_or(s.pending.len());
                progress = ack_upto(s, upto);
            }
            Body::ReadResp { payload } => match idx {
                Some(i) if s.pending[i].opcode == opcode::RDMA_READ => {
                    ack_upto(s, i);
                    scatter = Some((i, s.pending[i].local.clone(), payload.clone()));
                    progress = true;
                }
                _ => self.dp.send.transport.drop_response += 1,
            },
            Body::AtomicAck { orig } => match idx {
                Some(i) if s.pending[i].needs_response => {
                    ack_upto(s, i);
                    let b = if host {
                        orig.to_le_bytes()
                    } else {
                        orig.to_be_bytes()
                    };
                    scatter = Some((i, s.pending[i].local.clone(), b.to_vec()));
                    progress = true;
                }
                _ => self.dp.send.transport.drop_response += 1,
            },
            Body::Nak(k) => {
                let Some(i) = idx else {
                    self.dp.send.transport.drop_response += 1;
                    return;
                };
                progress = ack_upto(s, i);
                match k {
                    Nak::Rnr { timer } => {
                        // RNR: wait the responder's timer, then resend from this WQE;
                        // rnr_retry 7 retries forever (IBTA 9.7.5.2.8, C9-145).
                        if rnr_retry != 7 && s.rnr_left == 0 {
                            s.pending[i].status = Status::Failed(vals::SYNDROME_RNR_RETRY_EXC_ERR);
                        } else {
                            if rnr_retry != 7 {
                                s.rnr_left -= 1;
                            }
                            s.rnr_until = Some(now + rnr_timer(*timer));
                            s.timer = None;
                        }
                    }
                    Nak::PsnSeq => {
                        if s.rnr_until.is_none() {
                            if s.retry_left == 0 {
                                s.pending[i].status =
                                    Status::Failed(vals::SYNDROME_TRANSPORT_RETRY_EXC_ERR);
                            } else {
                                s.retry_left -= 1;
                                let resend: Vec<Packet> = s
                                    .pending
                                    .iter()
                                    .skip(i)
                                    .filter(|e| e.status == Status::Waiting)
                                    .filter_map(|e| e.pkt.clone())
                                    .collect();
                                self.dp.send.transport.retransmits += resend.len() as u64;
                                for r in resend {
                                    let dlid = r.hdr.dlid;
                                    self.port_deliver(env, dlid, r);
                                }
                            }
                        }
                    }
                    Nak::InvalidRequest => {
                        s.pending[i].status = Status::Failed(vals::SYNDROME_REMOTE_INVAL_REQ_ERR)
                    }
                    Nak::RemoteAccess => {
                        s.pending[i].status = Status::Failed(vals::SYNDROME_REMOTE_ACCESS_ERR)
                    }
                    Nak::RemoteOp => {
                        s.pending[i].status = Status::Failed(vals::SYNDROME_REMOTE_OP_ERR)
                    }
                }
            }
            _ => {}
        }
        if let Some((i, sges, data)) = scatter {
            let pd = self.objs.qps[&qpn].pd;
            let st = match self.recv_scatter(env, pd, &sges, &data) {
                Ok(_) => Status::Done,
                Err(e) => Status::Failed(e.syndrome()),
            };
            if let Some(e) = self
                .objs
                .qps
                .get_mut(&qpn)
                .and_then(|q| q.dp_send.pending.get_mut(i))
            {
                e.status = st;
            }
        }
        if progress {
            if let Some(q) = self.objs.qps.get_mut(&qpn) {
                // Progress resets the retry counters and restarts the timer (IBTA
                // 9.7.6.1.3).
                q.dp_send.retry_left = retry_count;
                q.dp_send.rnr_left = rnr_retry;
                q.dp_send.timer = timeout.map(|t| now + t);
            }
        }
        self.sq_complete(env, qpn);
        // A fence or an RNR wait may have held later WQEs.
        if self
            .objs
            .qps
            .get(&qpn)
            .is_some_and(|q| q.state == state::RTS && q.dp_send.rnr_until.is_none())
        {
            self.sq_execute(env, qpn);
        }
    }

    /// Starts QP `qpn`'s local ACK timer if it is not running.
    pub(crate) fn arm_retry_timer(&mut self, qpn: u32) {
        let Some(qp) = self.objs.qps.get_mut(&qpn) else {
            return;
        };
        if qp.dp_send.timer.is_some() {
            return;
        }
        let path = primary_path(&qp.ctx);
        if let Some(t) = ack_timeout(ads::ACK_TIMEOUT.raw().get(path).unwrap_or(0) as u8) {
            qp.dp_send.timer = Some(Instant::now() + t);
        }
    }

    /// The transport timers at time `now` (the firmware loop, `Device::step`): RNR
    /// waits that ended resend; local ACK timeouts resend or, with no retries left,
    /// fail the WQE with TRANSPORT_RETRY_EXC (0x15). Returns the next deadline.
    pub fn dp_tick(&mut self, env: &Env<'_>, now: Instant) -> Option<Instant> {
        // A QP a command moved to ERR flushes what it had in flight (PRM: in ERR every
        // outstanding WQE completes with a flush error).
        let errored: Vec<u32> = self
            .objs
            .qps
            .iter()
            .filter(|(_, q)| q.state == state::ERR && !q.dp_send.pending.is_empty())
            .map(|(n, _)| *n)
            .collect();
        for qpn in errored {
            self.sq_execute(env, qpn);
        }
        let due: Vec<u32> = self
            .objs
            .qps
            .iter()
            .filter(|(_, q)| {
                q.dp_send.timer.is_some_and(|t| t <= now)
                    || q.dp_send.rnr_until.is_some_and(|t| t <= now)
            })
            .map(|(n, _)| *n)
            .collect();
        for qpn in due {
            let Some(qp) = self.objs.qps.get_mut(&qpn) else {
                continue;
            };
            let path = primary_path(&qp.ctx);
            let timeout = ack_timeout(ads::ACK_TIMEOUT.raw().get(path).unwrap_or(0) as u8);
            let s = &mut qp.dp_send;
            let rnr_done = s.rnr_until.is_some_and(|t| t <= now);
            let mut resend = false;
            if rnr_done {
                s.rnr_until = None;
                resend = true;
            } else if s.timer.is_some_and(|t| t <= now) {
                self.dp.send.transport.timeouts += 1;
                if s.retry_left == 0 {
                    if let Some(e) = s.pending.iter_mut().find(|e| e.status == Status::Waiting) {
                        e.status = Status::Failed(vals::SYNDROME_TRANSPORT_RETRY_EXC_ERR);
                    }
                    s.timer = None;
                } else {
                    s.retry_left -= 1;
                    resend = true;
                }
            }
            if resend {
                s.timer = timeout.map(|t| now + t);
                let pkts: Vec<Packet> = s
                    .pending
                    .iter()
                    .filter(|e| e.status == Status::Waiting)
                    .filter_map(|e| e.pkt.clone())
                    .collect();
                self.dp.send.transport.retransmits += pkts.len() as u64;
                for r in pkts {
                    let dlid = r.hdr.dlid;
                    self.port_deliver(env, dlid, r);
                }
            }
            self.sq_complete(env, qpn);
            if rnr_done {
                self.sq_execute(env, qpn);
            }
        }
        self.dp_pump(env);
        self.dp_next_deadline()
    }

    /// The earliest transport timer (timers of QPs no longer sending do not count).
    pub fn dp_next_deadline(&self) -> Option<Instant> {
        self.objs
            .qps
            .values()
            .filter(|q| q.state != state::ERR)
            .flat_map(|q| [q.dp_send.timer, q.dp_send.rnr_until])
            .flatten()
            .min()
    }
}

/// The 40-byte GRH area of a UD receive buffer (IBTA 8.3): the packet's GRH, or zeros
/// without one (the CQE then says no GRH).
fn grh_bytes(g: Option<&Grh>, payload: usize) -> [u8; 40] {
    let mut b = [0u8; 40];
    let Some(g) = g else {
        return b;
    };
    let vtf: u32 = (6 << 28) | (u32::from(g.tclass) << 20) | (g.flow_label & 0xf_ffff);
    b[0..4].copy_from_slice(&vtf.to_be_bytes());
    // PayLen: BTH + DETH + payload + ICRC (IBTA 8.3.1).
    let paylen = (12 + 8 + payload + 4).min(0xffff) as u16;
    b[4..6].copy_from_slice(&paylen.to_be_bytes());
    b[6] = 0x1b;
    b[7] = g.hop_limit;
    b[8..24].copy_from_slice(&g.sgid);
    b[24..40].copy_from_slice(&g.dgid);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psn_and_timers() {
        assert_eq!(psn_diff(0, 0xff_ffff), 1);
        assert_eq!(psn_diff(0xff_ffff, 0), -1);
        assert_eq!(npkts(0, 3), 1);
        assert_eq!(npkts(1024, 3), 1);
        assert_eq!(npkts(1025, 3), 2);
        assert_eq!(npkts(8192, 5), 2);
        assert_eq!(rnr_timer(0), Duration::from_micros(655_360));
        assert_eq!(rnr_timer(1), Duration::from_micros(10));
        assert_eq!(rnr_timer(31), Duration::from_micros(491_520));
        assert_eq!(ack_timeout(0), None);
        assert_eq!(ack_timeout(1), Some(Duration::from_nanos(8192)));
        assert!(pkey_match(0xffff, 0x7fff));
        assert!(!pkey_match(0x7fff, 0x7fff));
        assert!(!pkey_match(0xffff, 0x8001));
    }
}
