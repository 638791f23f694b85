//! Requester completions: finished WQEs complete in order (a CQE for signalled ones
//! and every error), an error moves the QP to ERR, and a QP in ERR flushes what it
//! had in flight and what is posted. See [`super`].

use crate::fw::dp::cqe::{CqeDesc, CqeOp};
use crate::fw::dp::send::fetch::MAX_WQES_PER_DOORBELL;
use crate::fw::dp::send::state::{Pending, Status};
use crate::fw::dp::wqe;
use crate::fw::qp_state::state;
use crate::fw::{Env, Firmware};
use crate::ifc::qp::qpc;
use crate::ifc::wqe::{opcode, vals};

impl Firmware {
    /// Completes QP `qpn`'s finished WQEs at the head of its queue, in order: a CQE
    /// for signalled ones; a failed one completes with its syndrome and moves the QP
    /// to error (PRM: a requester error is reported on its WQE, later WQEs flush).
    pub(crate) fn sq_complete(&mut self, env: &Env<'_>, qpn: u32) {
        loop {
            let Some(qp) = self.objs.qps.get_mut(&qpn) else {
                return;
            };
            let cqn = qp.cqn_snd;
            let Some(front) = qp.dp_send.pending.front() else {
                qp.dp_send.timer = None;
                return;
            };
            match front.status {
                Status::Waiting => return,
                Status::Done => {
                    let p = qp.dp_send.pending.pop_front().expect("front");
                    if p.signalled {
                        let mut d = CqeDesc::new(
                            CqeOp::Req {
                                send_opcode: p.opcode,
                            },
                            qpn,
                            p.wqe_counter,
                        );
                        if matches!(
                            p.opcode,
                            opcode::RDMA_READ
                                | opcode::ATOMIC_CS
                                | opcode::ATOMIC_FA
                                | opcode::ATOMIC_MASKED_CS
                                | opcode::ATOMIC_MASKED_FA
                        ) {
                            d.byte_cnt = p.byte_cnt;
                        }
                        self.req_cqe(env, cqn, &d);
                    }
                }
                Status::Failed(syn) => {
                    let p = qp.dp_send.pending.pop_front().expect("front");
                    self.dp.send.errors += 1;
                    let d = CqeDesc::new(
                        CqeOp::ReqErr {
                            syndrome: syn,
                            vendor: 0,
                        },
                        qpn,
                        p.wqe_counter,
                    );
                    self.req_cqe(env, cqn, &d);
                    self.qp_to_error(env, qpn);
                    return;
                }
            }
        }
    }

    fn req_cqe(&mut self, env: &Env<'_>, cqn: Option<u32>, d: &CqeDesc) {
        let Some(cqn) = cqn else {
            return;
        };
        self.dp.send.cqes += 1;
        self.cqe_post(env, cqn, d);
    }

    /// The device moves QP `qpn` to error: every WQE not completed and every WQE
    /// posted flushes (syndrome 0x05), its receives flush (dprecv's `recv_flush`).
    pub(crate) fn qp_to_error(&mut self, env: &Env<'_>, qpn: u32) {
        if let Some(qp) = self.objs.qps.get_mut(&qpn) {
            qp.dp_recv.on_state(qp.state, state::ERR);
            qp.state = state::ERR;
            qp.dp_send.timer = None;
            qp.dp_send.rnr_until = None;
        } else {
            return;
        }
        self.sq_flush(env, qpn);
        self.recv_flush(env, qpn);
    }

    /// Flushes QP `qpn`'s pending and posted WQEs with error CQEs (PRM: in ERR every
    /// outstanding WQE completes with a flush error, signalled or not).
    pub(super) fn sq_flush(&mut self, env: &Env<'_>, qpn: u32) {
        let Some(qp) = self.objs.qps.get_mut(&qpn) else {
            return;
        };
        let cqn = qp.cqn_snd;
        let pending: Vec<Pending> = qp.dp_send.pending.drain(..).collect();
        for p in pending {
            self.flush_one(env, qpn, cqn, p.wqe_counter);
        }
        let no_sq = self
            .objs
            .qps
            .get(&qpn)
            .is_some_and(|qp| qpc::NO_SQ.raw().get(&qp.ctx).unwrap_or(0) != 0);
        if no_sq {
            return;
        }
        let (Some(head), Some(l)) = (self.sq_head(env, qpn), self.sq_layout(qpn)) else {
            return;
        };
        let mut n = 0;
        while let Some(qp) = self.objs.qps.get(&qpn) {
            let ctr = qp.sq_consumed;
            // Strict `wqe_fetch_catastrophic`: nothing at or past an unreadable WQE
            // completes.
            if ctr == head || n >= MAX_WQES_PER_DOORBELL || qp.dp_send.fetch_failed.is_some() {
                break;
            }
            n += 1;
            let first = match self.sq_read(env, &l, ctr, vals::SEND_WQE_DS) {
                Ok(b) => b,
                Err(e) => {
                    self.stats
                        .dma_error(format!("QP {qpn} send WQE {ctr}: {e}"));
                    break;
                }
            };
            let Ok((_, ds)) = wqe::ctrl_of(&first) else {
                self.stats
                    .violation(format!("QP {qpn}: flushed send WQE {ctr} has ds 0"));
                break;
            };
            let bbs = (ds * vals::SEND_WQE_DS).div_ceil(vals::SEND_WQE_BB) as u16;
            self.flush_one(env, qpn, cqn, ctr);
            if let Some(qp) = self.objs.qps.get_mut(&qpn) {
                qp.sq_consumed = ctr.wrapping_add(bbs);
            }
        }
    }

    fn flush_one(&mut self, env: &Env<'_>, qpn: u32, cqn: Option<u32>, ctr: u16) {
        self.dp.send.flushed += 1;
        let d = CqeDesc::new(
            CqeOp::ReqErr {
                syndrome: vals::SYNDROME_WR_FLUSH_ERR,
                vendor: 0,
            },
            qpn,
            ctr,
        );
        self.req_cqe(env, cqn, &d);
    }
}
