//! The requester's side of RC: responses (ACK, READ response, atomic acknowledge,
//! NAK) complete, retry or fail the WQEs they name. See [`super`].

use crate::fw::dp::packet::{Body, Nak, Packet};
use crate::fw::dp::send::state::{SqState, Status};
use crate::fw::dp::transport::ibta::{ack_timeout, primary_path, psn_diff, rnr_timer};
use crate::fw::qp_state::state;
use crate::fw::{Env, Firmware};
use crate::ifc::qp::{ads, qpc};
use crate::ifc::wqe::{opcode, vals, WqeDataSeg};
use std::time::Instant;

impl Firmware {
    /// A response for requester QP `dqpn`.
    pub(super) fn on_response(&mut self, env: &Env<'_>, p: Packet) {
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
        let ack_upto = |s: &mut SqState, upto_excl: usize| -> bool {
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
}
