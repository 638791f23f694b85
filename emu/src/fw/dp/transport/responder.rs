//! The responder's checks and answers: the destination QP, its state, service type
//! and connection, P_Key, Q_Key and PSN (what fails is dropped silently, as a channel
//! adapter does), duplicates, and the answer an RC request gets. See [`super`].

use crate::fw::dp::packet::{Body, Grh, Header, Nak, Packet};
use crate::fw::dp::transport::execute::Answer;
use crate::fw::dp::transport::ibta::{npkts, pkey_match, primary_path, psn_diff};
use crate::fw::dp::wqe::QpKind;
use crate::fw::qp_state::{st, state};
use crate::fw::{Env, Firmware};
use crate::ifc::eqe::event_type;
use crate::ifc::qp::{ads, qpc};

/// Atomic results a responder keeps for duplicate atomic requests (IBTA 9.7.5.1.4:
/// a duplicate atomic is answered from the saved result, not re-executed).
const ATOMIC_REPLAY: usize = 16;

impl Firmware {
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
    pub(super) fn responder(&mut self, env: &Env<'_>, p: Packet) {
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
    pub(super) fn responder_error(&mut self, env: &Env<'_>, qpn: u32, access: bool) {
        if access {
            let _ = self.raise_qp_event(env, qpn, event_type::WQ_ACCESS_ERROR, 1);
        }
        self.qp_to_error(env, qpn);
    }
}
