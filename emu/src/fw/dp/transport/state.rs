//! Per-QP responder state and the transport counters. See [`super`].

use std::collections::VecDeque;

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
