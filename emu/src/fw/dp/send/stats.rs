//! Function-wide send statistics and the emulator's own cost per WQE and per
//! doorbell (`stats` → `dp` → `send`). See [`super`].

use crate::fw::dp::packet::Packet;
use crate::fw::dp::transport::state::TransportStats;
use crate::fw::latency::LatencyHist;
use std::collections::{BTreeMap, VecDeque};

/// Function-wide send statistics and the emulator's own cost (`stats` → `dp` →
/// `send`).
#[derive(Clone, Debug, Default)]
pub struct SendPath {
    /// Send doorbells handled.
    pub doorbells: u64,
    /// WQEs executed.
    pub wqes: u64,
    /// Payload bytes sent (SEND, WRITE) or requested (READ, atomics).
    pub bytes: u64,
    /// WQEs per opcode.
    pub per_opcode: BTreeMap<u8, u64>,
    /// Requester CQEs written.
    pub cqes: u64,
    /// Error completions (flushes not included).
    pub errors: u64,
    /// Flush completions.
    pub flushed: u64,
    /// Malformed WQEs.
    pub malformed: u64,
    /// WQE fetches that could not read the WQE (DMA errors, fault `wqe_dma`).
    pub fetch_errors: u64,
    /// Emulator time per WQE (decode + execute + deliver).
    pub wqe_time: LatencyHist,
    /// Emulator time per doorbell (everything it caused, responses included).
    pub doorbell_time: LatencyHist,
    /// Transport counters (`transport/state.rs`).
    pub transport: TransportStats,
    /// Packets to this port's own LID, not yet handled.
    pub loopback: VecDeque<Packet>,
}

impl SendPath {
    /// The `stats` → `dp` → `send` report.
    pub fn report(&self) -> serde_json::Value {
        let h = |l: &LatencyHist| {
            serde_json::json!({
                "count": l.count, "mean_ns": l.mean_ns(), "p50_ns": l.percentile_ns(50.0),
                "p99_ns": l.percentile_ns(99.0), "min_ns": l.min_ns, "max_ns": l.max_ns,
            })
        };
        let per: serde_json::Map<String, serde_json::Value> = self
            .per_opcode
            .iter()
            .map(|(k, v)| (format!("{k:#04x}"), serde_json::json!(v)))
            .collect();
        let t = &self.transport;
        serde_json::json!({
            "doorbells": self.doorbells,
            "wqes": self.wqes,
            "bytes": self.bytes,
            "per_opcode": per,
            "cqes": self.cqes,
            "errors": self.errors,
            "flushed": self.flushed,
            "malformed": self.malformed,
            "fetch_errors": self.fetch_errors,
            "wqe_time": h(&self.wqe_time),
            "doorbell_time": h(&self.doorbell_time),
            "transport": {
                "loopback": t.loopback, "to_wire": t.to_wire, "no_route": t.no_route,
                "bad_frames": t.bad_frames, "drop_dlid": t.drop_dlid,
                "drop_no_qp": t.drop_no_qp,
                "drop_state": t.drop_state, "drop_conn": t.drop_conn,
                "drop_pkey": t.drop_pkey, "drop_qkey": t.drop_qkey,
                "drop_unreliable": t.drop_unreliable, "drop_response": t.drop_response,
                "acks": t.acks, "rnr_naks": t.rnr_naks, "seq_naks": t.seq_naks,
                "error_naks": t.error_naks, "duplicates": t.duplicates,
                "retransmits": t.retransmits, "timeouts": t.timeouts,
                "fence_waits": t.fence_waits, "local_key_errors": t.local_key_errors,
                "comm_est": t.comm_est,
            },
        })
    }
}
