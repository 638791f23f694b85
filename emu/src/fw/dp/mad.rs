//! The MAD QPs (QP0 / QP1) at the port: what a management datagram meets, and the
//! port's traffic counters.
//!
//! A datagram for QPN 0 / 1 is checked as the IBTA checks MADs (P_Key: any key of the
//! port's table; Q_Key: QP1's well-known key, none for QP0; one 256-byte MAD) and
//! then completes on the host's QP0 / QP1 receive queue, requests for the port's SMA
//! and PMA included. That is what a ConnectX does: the host's MAD layer (core mad.c
//! `ib_mad_recv_done`, with `handle_smi` for directed route) gives every received MAD
//! to the driver's `process_mad` first; upstream mlx5_ib's `mlx5_ib_process_mad`
//! (hw/mlx5/mad.c) forwards SubnGet / SubnSet / TrapRepress (not SMInfo) and PerfMgmt
//! Get / Set to the firmware's agents with the MAD_IFC command, sets the direction bit
//! of a directed-route answer itself, and the MAD layer sends the answer from the
//! host's QP0 / QP1 (core agent.c `agent_send_response`). The firmware's agents answer
//! only MAD_IFC ([`Firmware::agent_answer`], `sma.rs` / `pma.rs`).
//!
//! Opt-in, off by default and NOT what a ConnectX does: with the port knob
//! `mad_agents_in_device` (control `ib_port`) the device's agents answer SMA / PMA
//! requests on QP0 / QP1 themselves, as a host running `mlx5_ib_process_mad` would,
//! one round trip sooner and without the host.
//!
//! A directed-route SMP with hop count 0 sent from QP0 to QP0 addresses this port and
//! never leaves it ([`stays_local`]): it loops back to this port's own QP0. Upstream's
//! MAD layer never posts one (core mad.c `handle_outgoing_dr_smp`: with
//! `smi_check_local_smp` it calls `process_mad` in the host and completes locally);
//! a driver that posts one anyway gets it on its own QP0 receive queue.
//! [`PortCounters`] counts what the port sends and receives, for the PMA's
//! PortCounters.
//!
//! Rules and sources: emu/README.md, "Data path" → "MAD QPs".

use super::super::{Env, Firmware};
use super::packet::{Body, Grh, Header, Packet, SendKind};
use super::transport::ibta::{npkts, pkey_match};
use crate::ifc::mad::{mad_status, method, mgmt_class, smp, smp_attr, MAD_BYTES};

/// QP1's well-known Q_Key (IBTA 10.2.4 / 13.5.3.2; `IB_QP1_QKEY`, ib_mad.h).
pub const QP1_QKEY: u32 = 0x8001_0000;
/// The permissive LID (IBTA 7.11.1; `IB_LID_PERMISSIVE`): directed-route SMPs.
pub const PERMISSIVE_LID: u16 = 0xffff;
/// The path MTU the port counts packets with (4096, the port's NeighborMTU).
const COUNT_MTU: u8 = 5;

/// The port's data and packet counters (PMA PortCounters / PortCountersExtended,
/// IBTA 16.1.3.5 / 16.1.4.11): data in 4-byte words from the first byte of the LRH
/// through the ICRC, one packet per path-MTU packet of a message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// PortXmitData (words).
    pub xmit_words: u64,
    /// PortRcvData (words).
    pub rcv_words: u64,
    /// PortXmitPkts.
    pub xmit_pkts: u64,
    /// PortRcvPkts.
    pub rcv_pkts: u64,
}

impl PortCounters {
    /// A packet the port sends (to the wire or looped back to itself).
    pub(crate) fn count_tx(&mut self, p: &Packet) {
        let (octets, pkts) = link_octets(p);
        self.xmit_words = self.xmit_words.saturating_add(octets / 4);
        self.xmit_pkts = self.xmit_pkts.saturating_add(pkts);
    }

    /// A packet the port receives.
    pub(crate) fn count_rx(&mut self, p: &Packet) {
        let (octets, pkts) = link_octets(p);
        self.rcv_words = self.rcv_words.saturating_add(octets / 4);
        self.rcv_pkts = self.rcv_pkts.saturating_add(pkts);
    }

    /// Clears the selected counters (a PMA Set, IBTA 16.1.3.5 CounterSelect).
    pub(crate) fn clear(&mut self, xmit_data: bool, rcv_data: bool, xmit: bool, rcv: bool) {
        for (on, c) in [
            (xmit_data, &mut self.xmit_words),
            (rcv_data, &mut self.rcv_words),
            (xmit, &mut self.xmit_pkts),
            (rcv, &mut self.rcv_pkts),
        ] {
            if on {
                *c = 0;
            }
        }
    }
}

/// The MAD QPs' state and counters (`stats` → `dp` → `mad`).
#[derive(Clone, Debug, Default)]
pub struct MadPath {
    /// The port's traffic counters.
    pub counters: PortCounters,
    /// MADs that passed the checks and went on to the host's QP0 (the receive itself
    /// is the responder's: no receive WQE, dropped there).
    pub to_qp0: u64,
    /// The same for the host's QP1.
    pub to_qp1: u64,
    /// SMPs the device's SMA answered on QP0 (knob `mad_agents_in_device` only).
    pub sma: u64,
    /// PerfMgmt MADs the device's PMA answered on QP1 (knob only).
    pub pma: u64,
    /// MADs dropped: not one plain 256-byte SEND.
    pub bad_size: u64,
}

impl MadPath {
    /// The `stats` → `dp` → `mad` report.
    pub fn report(&self) -> serde_json::Value {
        let c = &self.counters;
        serde_json::json!({
            "to_qp0": self.to_qp0, "to_qp1": self.to_qp1,
            "sma": self.sma, "pma": self.pma, "bad_size": self.bad_size,
            "port_xmit_data": c.xmit_words, "port_rcv_data": c.rcv_words,
            "port_xmit_pkts": c.xmit_pkts, "port_rcv_pkts": c.rcv_pkts,
        })
    }
}

/// Octets from LRH through ICRC (VCRC and delimiters excluded, IBTA 16.1.3.5) and
/// packets of a message: per packet LRH 8 + BTH 12 + ICRC 4 (+ GRH 40), the
/// extension headers of IBTA 9.2-9.4 where the opcode carries them, the payload
/// padded to 4 bytes.
fn link_octets(p: &Packet) -> (u64, u64) {
    let len = |v: &Vec<u8>| v.len() as u64;
    let (payload, pkts, once, per_pkt) = match &p.body {
        Body::Send {
            kind,
            qkey,
            xrc_srqn,
            payload,
        } => {
            let imm = if matches!(kind, SendKind::Plain) {
                0
            } else {
                4
            };
            let deth = if qkey.is_some() { 8 } else { 0 };
            let xrc = if xrc_srqn.is_some() { 4 } else { 0 };
            (
                len(payload),
                npkts(len(payload), COUNT_MTU),
                imm,
                deth + xrc,
            )
        }
        Body::Write {
            imm,
            xrc_srqn,
            payload,
            ..
        } => {
            let imm = if imm.is_some() { 4 } else { 0 };
            let xrc = if xrc_srqn.is_some() { 4 } else { 0 };
            (len(payload), npkts(len(payload), COUNT_MTU), 16 + imm, xrc)
        }
        Body::ReadReq { xrc_srqn, .. } => (0, 1, 16 + 4 * u64::from(xrc_srqn.is_some()), 0),
        Body::Atomic { xrc_srqn, .. } => (0, 1, 28 + 4 * u64::from(xrc_srqn.is_some()), 0),
        Body::ReadResp { payload } => {
            let n = npkts(len(payload), COUNT_MTU);
            // AETH on the first and the last packet (one when they are the same).
            (len(payload), n, if n == 1 { 4 } else { 8 }, 0)
        }
        Body::AtomicAck { .. } => (0, 1, 4 + 8, 0),
        Body::Ack | Body::Nak(_) => (0, 1, 4, 0),
    };
    let pkts = u64::from(pkts);
    let grh = if p.hdr.grh.is_some() { 40 } else { 0 };
    let octets = pkts * (8 + 12 + 4 + grh + per_pkt) + once + payload.div_ceil(4) * 4;
    (octets, pkts)
}

/// A directed-route SMP with hop count 0 from QP0 to QP0 addresses this port itself
/// (IBTA 14.2.2: the hop count is the number of links the SMP crosses): it loops back
/// to this port's own QP0 whatever its DLID (the permissive LID, usually). Upstream's
/// MAD layer handles such an SMP in the host and never posts it (core mad.c
/// `handle_outgoing_dr_smp`, smi.h `smi_check_local_smp`).
pub(crate) fn stays_local(p: &Packet) -> bool {
    let Body::Send { payload, .. } = &p.body else {
        return false;
    };
    p.hdr.sqpn == 0
        && p.hdr.dqpn == 0
        && smp::MGMT_CLASS.raw().get(payload) == Some(u64::from(mgmt_class::SUBN_DIRECTED_ROUTE))
        && smp::HOP_CNT.raw().get(payload) == Some(0)
}

/// Whether `p` is a directed-route SMP (management class SUBN_DIRECTED_ROUTE, IBTA
/// 14.2.1.2) from QP0 to QP0; the permissive DLID is for these (dp/transport/port.rs
/// `dlid_accepted`).
pub(crate) fn is_directed_route_smp(p: &Packet) -> bool {
    let Body::Send { payload, .. } = &p.body else {
        return false;
    };
    p.hdr.sqpn == 0
        && p.hdr.dqpn == 0
        && smp::MGMT_CLASS.raw().get(payload) == Some(u64::from(mgmt_class::SUBN_DIRECTED_ROUTE))
}

/// Whether a MAD for QP `dqpn` (0 / 1) is a request the port's agents answer when
/// the knob `mad_agents_in_device` lets them: at QP0 SubnGet / SubnSet of either SMP
/// class except SMInfo (an SM's attribute), at QP1 PerfMgmt Get / Set (IBTA 13.4.5,
/// 16.1.1) — the set upstream's `mlx5_ib_process_mad` (hw/mlx5/mad.c) passes to
/// MAD_IFC and answers (it passes TrapRepress too and sends nothing back; the knob
/// leaves TrapRepress to the host).
fn for_agent(dqpn: u32, mad: &[u8]) -> bool {
    let get = |f: crate::ifc::field::Field| f.get(mad);
    let (Some(class), Some(m), Some(attr)) = (
        get(smp::MGMT_CLASS.raw()),
        get(smp::METHOD.raw()),
        get(smp::ATTR_ID.raw()),
    ) else {
        return false;
    };
    let (class, m) = (class as u8, m as u8);
    let get_set = m == method::GET || m == method::SET;
    match dqpn {
        0 => {
            (class == mgmt_class::SUBN_LID_ROUTED || class == mgmt_class::SUBN_DIRECTED_ROUTE)
                && get_set
                && attr as u16 != smp_attr::SM_INFO
        }
        1 => class == mgmt_class::PERF_MGMT && get_set,
        _ => false,
    }
}

impl Firmware {
    /// The MAD rules for a packet to QPN 0 / 1; `true` when it ends here (dropped, or
    /// answered by the device's agents with the opt-in knob), `false` when it goes on
    /// to the host's QP0 / QP1 receive queue (the default for every MAD that passes).
    pub(crate) fn mad_receive(&mut self, env: &Env<'_>, p: &Packet) -> bool {
        let Body::Send {
            kind,
            qkey: Some(qkey),
            payload,
            ..
        } = &p.body
        else {
            // Not a datagram: the responder drops it (service type).
            return false;
        };
        let dqpn = p.hdr.dqpn;
        // P_Key (IBTA 10.9.3): the MAD QPs accept any key of the port's table (their
        // own `pkey_index` selects only what they send); a mismatch is a P_Key
        // violation (PortInfo P_KeyViolations).
        if !self
            .ib_port
            .pkeys
            .iter()
            .any(|k| pkey_match(*k, p.hdr.pkey))
        {
            self.dp.send.transport.drop_pkey += 1;
            self.ib_port.pkey_violations = self.ib_port.pkey_violations.saturating_add(1);
            return true;
        }
        // Q_Key: QP1 takes only its well-known key (IBTA 10.2.4, 13.5.3.2); QP0 checks
        // none (IBTA 13.5.3.1). A mismatch is dropped and counted (PortInfo
        // Q_KeyViolations, IBTA 14.2.5.6).
        if dqpn == 1 && *qkey != QP1_QKEY {
            self.dp.send.transport.drop_qkey += 1;
            self.ib_port.qkey_violations = self.ib_port.qkey_violations.saturating_add(1);
            return true;
        }
        // A MAD is 256 bytes (IBTA 13.4.2), sent as a plain SEND.
        if payload.len() != MAD_BYTES || *kind != SendKind::Plain {
            self.dp.mad.bad_size += 1;
            return true;
        }
        if !(self.ib_port.mad_agents_in_device && for_agent(dqpn, payload)) {
            // The default, as a ConnectX: the host's QP0 / QP1 receive queue; its
            // MAD layer asks the firmware's agents through MAD_IFC (core mad.c
            // `ib_mad_recv_done` → mlx5 mad.c `mlx5_ib_process_mad`).
            if dqpn == 0 {
                self.dp.mad.to_qp0 += 1;
            } else {
                self.dp.mad.to_qp1 += 1;
            }
            return false;
        }
        // The opt-in knob: the device answers as the host would through MAD_IFC.
        let mut resp = [0u8; MAD_BYTES];
        if self.agent_answer(payload, &mut resp).is_err() {
            return true;
        }
        // A directed-route answer has the direction bit set (IBTA 14.2.2); MAD_IFC
        // leaves it to the host (mlx5 mad.c `mlx5_ib_process_mad` sets it), so the
        // knob's stand-in for the host sets it here.
        if smp::MGMT_CLASS.raw().get(&resp) == Some(u64::from(mgmt_class::SUBN_DIRECTED_ROUTE)) {
            let st = smp::STATUS.raw();
            let v = st.get(&resp).unwrap_or(0) | u64::from(mad_status::SMP_DIRECTION);
            let _ = st.set(&mut resp, v);
        }
        if dqpn == 0 {
            self.dp.mad.sma += 1;
        } else {
            self.dp.mad.pma += 1;
        }
        self.mad_reply(env, &p.hdr, resp.to_vec());
        true
    }

    /// (Knob `mad_agents_in_device` only.) Sends an agent's response to the
    /// requester: from this port's QP0 / QP1 to the request's source LID and QP, with its P_Key and SL, the GRH reversed when the
    /// request had one, Q_Key 0 / QP1's (as upstream's agents answer: core agent.c
    /// `agent_send_response`, an AH from the receive completion).
    fn mad_reply(&mut self, env: &Env<'_>, req: &Header, payload: Vec<u8>) {
        let slid = if req.dlid == PERMISSIVE_LID {
            self.ib_port.lid
        } else {
            req.dlid
        };
        let hdr = Header {
            slid,
            dlid: req.slid,
            sl: req.sl,
            grh: req.grh.map(|g| Grh {
                sgid: g.dgid,
                dgid: g.sgid,
                ..g
            }),
            pkey: req.pkey,
            dqpn: req.sqpn,
            sqpn: req.dqpn,
            psn: 0,
            solicited: false,
        };
        let qkey = if req.dqpn == 1 { QP1_QKEY } else { 0 };
        let body = Body::Send {
            kind: SendKind::Plain,
            qkey: Some(qkey),
            xrc_srqn: None,
            payload,
        };
        let dlid = hdr.dlid;
        self.port_deliver(env, dlid, Packet { hdr, body });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send(payload: Vec<u8>, grh: bool) -> Packet {
        Packet {
            hdr: Header {
                grh: grh.then(Grh::default),
                ..Header::default()
            },
            body: Body::Send {
                kind: SendKind::Plain,
                qkey: Some(QP1_QKEY),
                xrc_srqn: None,
                payload,
            },
        }
    }

    #[test]
    fn link_octets_count_headers_and_padding() {
        // LRH 8 + BTH 12 + DETH 8 + 256 + ICRC 4 = 288 octets = 72 words.
        assert_eq!(link_octets(&send(vec![0; 256], false)), (288, 1));
        assert_eq!(link_octets(&send(vec![0; 256], true)), (328, 1));
        // Padding to 4; two packets beyond 4096 bytes.
        assert_eq!(link_octets(&send(vec![0; 1], false)).0, 32 + 4);
        assert_eq!(link_octets(&send(vec![0; 4097], false)), (2 * 32 + 4100, 2));
    }

    #[test]
    fn only_hop_zero_directed_route_smps_stay_local() {
        let mut mad = vec![0u8; 256];
        mad[1] = mgmt_class::SUBN_DIRECTED_ROUTE;
        let mut p = send(mad.clone(), false);
        assert!(stays_local(&p));
        p.hdr.dqpn = 1;
        assert!(!stays_local(&p), "not to QP0");
        mad[7] = 1;
        assert!(!stays_local(&send(mad, false)), "hop count 1");
    }

    #[test]
    fn agents_take_requests_only() {
        let mad = |class: u8, m: u8, attr: u16| {
            let mut v = vec![0u8; 256];
            v[1] = class;
            v[3] = m;
            v[16..18].copy_from_slice(&attr.to_be_bytes());
            v
        };
        assert!(for_agent(0, &mad(1, method::GET, smp_attr::NODE_INFO)));
        assert!(for_agent(0, &mad(0x81, method::SET, smp_attr::PORT_INFO)));
        assert!(!for_agent(
            0,
            &mad(1, method::GET_RESP, smp_attr::NODE_INFO)
        ));
        assert!(!for_agent(0, &mad(1, method::GET, smp_attr::SM_INFO)));
        assert!(!for_agent(0, &mad(1, method::TRAP, 2)));
        assert!(for_agent(1, &mad(4, method::GET, 0x12)));
        assert!(!for_agent(1, &mad(3, method::GET, 0x12)), "SA: the host's");
        assert!(!for_agent(1, &mad(1, method::GET, 0x11)), "SMP at QP1");
        assert!(!for_agent(0, &[1, 1]), "too short to classify");
    }
}
