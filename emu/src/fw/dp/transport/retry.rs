//! RC timers: the local ACK timer, RNR waits, retransmission and its limits, run by
//! [`Firmware::dp_tick`] from the firmware loop. See [`super`].

use crate::fw::dp::packet::Packet;
use crate::fw::dp::send::state::Status;
use crate::fw::dp::transport::ibta::{ack_timeout, primary_path};
use crate::fw::qp_state::state;
use crate::fw::{Env, Firmware};
use crate::ifc::qp::ads;
use crate::ifc::wqe::vals;
use std::time::Instant;

impl Firmware {
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
