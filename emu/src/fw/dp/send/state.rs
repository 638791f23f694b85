//! Per-QP requester state: the executed WQEs of a QP until they complete, its PSNs
//! and retry counters. See [`super`].

use crate::fw::dp::packet::Packet;
use crate::fw::dp::transport::state::RespState;
use crate::ifc::wqe::WqeDataSeg;
use std::collections::VecDeque;
use std::time::Instant;

/// Where a WQE stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Sent, waiting for its response.
    Waiting,
    /// Done: completes when it reaches the head.
    Done,
    /// Failed with this CQE syndrome: the QP goes to error when it reaches the head.
    Failed(u8),
}

/// One executed WQE of a QP, until it completes.
#[derive(Clone, Debug)]
pub struct Pending {
    /// WQE index (the CQE's `wqe_counter`).
    pub wqe_counter: u16,
    /// Opcode (the CQE's `sop_drop_qpn` 31:24).
    pub opcode: u8,
    /// A CQE is requested.
    pub signalled: bool,
    /// First PSN (RC).
    pub psn: u32,
    /// PSNs the request takes.
    pub npsn: u32,
    /// The request, for retransmission (RC).
    pub pkt: Option<Packet>,
    /// READ / atomic: where the response lands.
    pub local: Vec<WqeDataSeg>,
    /// CQE byte count (READ length, 8 for atomics).
    pub byte_cnt: u32,
    /// READ / atomic (a fenced WQE waits for these).
    pub needs_response: bool,
    /// Where it stands.
    pub status: Status,
}

/// Per-QP requester and transport state.
#[derive(Clone, Debug, Default)]
pub struct SqState {
    /// PSN state loaded from the context (`next_send_psn`) at the first send.
    pub started: bool,
    /// Next PSN to send.
    pub next_psn: u32,
    /// Executed WQEs not yet completed, in order.
    pub pending: VecDeque<Pending>,
    /// Transport retries left (`retry_count`), reset by progress.
    pub retry_left: u8,
    /// RNR retries left (`rnr_retry`, 7 = infinite), reset by progress.
    pub rnr_left: u8,
    /// Retransmission deadline (no response within the local ACK timeout).
    pub timer: Option<Instant>,
    /// RNR wait: nothing is sent before this time.
    pub rnr_until: Option<Instant>,
    /// Responder state (`transport/state.rs`).
    pub resp: RespState,
    /// Strict `wqe_fetch_catastrophic`: the WQE whose fetch failed; the send queue
    /// completes nothing from it on (flushes stop there) until the QP is reset.
    pub fetch_failed: Option<u16>,
}
