//! A SEND or WRITE with immediate at the responder: it takes a receive WQE (none: RNR
//! for RC), scatters the message, invalidates the key a SEND with invalidate names,
//! and writes the receive CQE; a failure completes the receive in error. See
//! [`super`].

use crate::fw::dp::cqe::{CqeDesc, CqeOp};
use crate::fw::dp::packet::{Body, Nak, Packet};
use crate::fw::dp::recv::RecvTake;
use crate::fw::dp::transport::execute::Answer;
use crate::fw::qp_state::st;
use crate::fw::{Env, Firmware};
use crate::ifc::wqe::vals;

impl Firmware {
    /// Consumes a receive WQE for a SEND / WRITE with immediate and writes its CQE.
    /// `Some(answer)` when the request ends here (RNR, error), `None` on success.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn deliver_recv(
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
}
