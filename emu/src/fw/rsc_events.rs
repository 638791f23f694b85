//! Async events of QPs and SRQs: the EQE the device writes when a QP or an SRQ has
//! something to report (communication established, send queue drained, last WQE
//! reached, path migrated or failed to, work-queue catastrophic / invalid-request /
//! access errors; SRQ limit reached, SRQ catastrophic error).
//!
//! The data is `struct mlx5_eqe_qp_srq` (device.h; `qp_events` of mlx5_ifc.h): the
//! resource type at byte 20 (`MLX5_EVENT_QUEUE_TYPE_QP` for a QP) and the number in
//! the low 24 bits of bytes 24..28. For SRQ events the number is the SRQ's and the
//! type byte is left reserved (0): upstream's SRQ table (mlx5_ib srq_cmd.c
//! `srq_event_notifier`) reads the number only. The event goes to the EQ whose
//! `event_bitmask` subscribes to its type (CREATE_EQ); with none it is not reported.
//!
//! The data path raises some on its own (COMM_EST and the WQ access error in
//! `dp/transport/`, the WQ catastrophic error in `dp/send/fetch.rs`, SRQ limit and last WQE reached in `dp/recv.rs`); the control
//! socket's `qp_event` / `srq_event` requests make the device raise any of them for an
//! existing object, as the hardware would.

use super::{eq, Env, Firmware};
use crate::ifc::eqe::{event_type as et, rsc_type, Eqe, EqeQpSrq};
use zerocopy::byteorder::big_endian::U32;

/// The QP event types (`enum mlx5_event`), by the names the control socket takes.
pub const QP_EVENTS: [(&str, u8); 8] = [
    ("PATH_MIG", et::PATH_MIG),
    ("COMM_EST", et::COMM_EST),
    ("SQ_DRAINED", et::SQ_DRAINED),
    ("SRQ_LAST_WQE", et::SRQ_LAST_WQE),
    ("WQ_CATAS_ERROR", et::WQ_CATAS_ERROR),
    ("PATH_MIG_FAILED", et::PATH_MIG_FAILED),
    ("WQ_INVAL_REQ_ERROR", et::WQ_INVAL_REQ_ERROR),
    ("WQ_ACCESS_ERROR", et::WQ_ACCESS_ERROR),
];

/// The SRQ event types.
pub const SRQ_EVENTS: [(&str, u8); 2] = [
    ("SRQ_RQ_LIMIT", et::SRQ_RQ_LIMIT),
    ("SRQ_CATAS_ERROR", et::SRQ_CATAS_ERROR),
];

/// The event type named `name` (or given as a number) in `table`.
pub fn event_of(table: &[(&str, u8)], name: &str) -> Option<u8> {
    table
        .iter()
        .find(|(n, t)| *n == name || name.parse::<u8>().ok() == Some(*t))
        .map(|(_, t)| *t)
}

/// The event data of a QP / SRQ event.
pub fn qp_srq_data(rsc: u8, n: u32) -> [u8; 28] {
    let mut e = Eqe::zeroed();
    e.set_qp_srq(EqeQpSrq {
        rsvd0: [0; 20],
        type_: rsc,
        rsvd1: [0; 3],
        qp_srq_n: U32::new(n & 0x00ff_ffff),
    });
    e.data
}

impl Firmware {
    /// Raises QP event `t` on QP `qpn`; `count` times. Error: no such QP, not a QP
    /// event type.
    pub fn raise_qp_event(
        &mut self,
        env: &Env<'_>,
        qpn: u32,
        t: u8,
        count: u32,
    ) -> Result<Vec<eq::Posted>, String> {
        if !QP_EVENTS.iter().any(|(_, x)| *x == t) {
            return Err(format!("event type {t:#x} is not a QP event"));
        }
        if !self.objs.qps.contains_key(&qpn) {
            return Err(format!("no QP {qpn:#x}"));
        }
        Ok(self.post_rsc(env, t, qp_srq_data(rsc_type::QP, qpn), count))
    }

    /// Raises SRQ event `t` on SRQ (or XRC SRQ, RMP) `srqn`; `count` times.
    pub fn raise_srq_event(
        &mut self,
        env: &Env<'_>,
        srqn: u32,
        t: u8,
        count: u32,
    ) -> Result<Vec<eq::Posted>, String> {
        if !SRQ_EVENTS.iter().any(|(_, x)| *x == t) {
            return Err(format!("event type {t:#x} is not an SRQ event"));
        }
        if !self.objs.srqs.contains_key(&srqn) {
            return Err(format!("no SRQ {srqn:#x}"));
        }
        Ok(self.post_rsc(env, t, qp_srq_data(0, srqn), count))
    }

    fn post_rsc(&mut self, env: &Env<'_>, t: u8, data: [u8; 28], count: u32) -> Vec<eq::Posted> {
        let mut out = Vec::new();
        for _ in 0..count {
            let p = self.eqs.post(t, 0, &data, env.mem, env.irq, env.msix_ok);
            if let eq::Posted::Dma(e) = &p {
                self.stats.dma_error(format!("QP/SRQ event EQE: {e}"));
            }
            out.push(p);
        }
        out
    }
}
