//! Executing one decoded send WQE: the gather through local keys, the request each
//! opcode makes (SEND, WRITE, READ, atomics; NOP and UMR locally), its PSNs, and the
//! [`Pending`] entry that waits for its completion. See [`super`].

use crate::fw::dp::packet::{AtomicOp, Body, Packet, SendKind};
use crate::fw::dp::send::state::{Pending, Status};
use crate::fw::dp::transport::ibta::npkts;
use crate::fw::dp::wqe::{AtomicArgs, Data, Op, QpKind, SendWqe};
use crate::fw::dp::xlate::Access;
use crate::fw::{Env, Firmware};
use crate::ifc::qp::qpc;
use crate::ifc::wqe::{opcode, vals};

/// Why the executor stops.
pub(super) enum Flow {
    Next,
    Stop,
}

impl Firmware {
    /// Queues an executed WQE and moves the consumer counter past it.
    pub(super) fn sq_push(&mut self, qpn: u32, p: Pending, bbs: u16) {
        if let Some(qp) = self.objs.qps.get_mut(&qpn) {
            qp.dp_send.pending.push_back(p);
            qp.sq_consumed = qp.sq_consumed.wrapping_add(bbs);
        }
    }

    /// Reads `len` bytes through local keys (LOCAL_READ) of the gather list. Error:
    /// the CQE syndrome (local protection for a key, PD, access or bounds violation,
    /// local QP operation for a DMA error).
    fn gather(&mut self, env: &Env<'_>, pd: u32, data: Data) -> Result<Vec<u8>, u8> {
        let sges = match data {
            Data::Inline(b) => return Ok(b),
            Data::Gather(s) => s,
        };
        let mut out = Vec::new();
        for s in sges {
            let len = s.byte_count.get();
            if len == 0 {
                continue;
            }
            let pieces = self
                .translate(
                    env,
                    s.lkey.get(),
                    s.addr.get(),
                    u64::from(len),
                    Access::LOCAL_READ,
                    pd,
                )
                .map_err(|e| {
                    self.dp.send.transport.local_key_errors += 1;
                    log::debug!("gather lkey {:#x}: {e:?}", s.lkey.get());
                    vals::SYNDROME_LOCAL_PROT_ERR
                })?;
            for (pa, n) in pieces {
                let at = out.len();
                out.resize(at + n as usize, 0);
                if let Err(e) = env.mem.read(pa, &mut out[at..]) {
                    self.stats.dma_error(format!("gather at {pa:#x}: {e}"));
                    return Err(vals::SYNDROME_LOCAL_QP_OP_ERR);
                }
            }
        }
        Ok(out)
    }

    /// The payload of a SEND or WRITE: refused with LOCAL_LENGTH_ERR above `max_msg`
    /// bytes, else gathered (`gather`) and counted in `bytes`.
    fn gather_message(
        &mut self,
        env: &Env<'_>,
        pd: u32,
        data: Data,
        max_msg: u64,
    ) -> Result<Vec<u8>, u8> {
        if data.len() > max_msg {
            return Err(vals::SYNDROME_LOCAL_LENGTH_ERR);
        }
        let payload = self.gather(env, pd, data)?;
        self.dp.send.bytes += payload.len() as u64;
        Ok(payload)
    }

    /// Executes one decoded WQE: a [`Pending`] entry, a packet to the port.
    pub(super) fn exec_wqe(&mut self, env: &Env<'_>, qpn: u32, kind: QpKind, w: SendWqe) -> Flow {
        let bbs = w.bbs();
        *self.dp.send.per_opcode.entry(w.opcode).or_default() += 1;
        let (pd, mtu, log_msg_max, qkey) = {
            let qp = &self.objs.qps[&qpn];
            let f = |fl: crate::ifc::field::Field| fl.get(&qp.ctx).unwrap_or(0);
            (
                qp.pd,
                f(qpc::MTU.raw()) as u8,
                f(qpc::LOG_MSG_MAX.raw()) as u32,
                f(qpc::Q_KEY.raw()) as u32,
            )
        };
        let mut p = Pending {
            wqe_counter: w.index,
            opcode: w.opcode,
            signalled: w.signalled,
            psn: 0,
            npsn: 0,
            pkt: None,
            local: Vec::new(),
            byte_cnt: 0,
            needs_response: false,
            status: Status::Done,
        };
        // Largest message: `qpc.log_msg_max` (upstream create_qp sets the cap
        // `log_max_msg`); 0 (unset, e.g. a UD QP a test creates) as the cap, 30.
        let max_msg = 1u64
            << if log_msg_max == 0 {
                30
            } else {
                log_msg_max.min(31)
            };
        let reliable = matches!(kind, QpKind::Rc | QpKind::XrcIni);
        let body = match w.op {
            Op::Nop => None,
            Op::Umr { body } => {
                if let Err(syn) = self.exec_umr(env, qpn, &w.ctrl, &body) {
                    p.status = Status::Failed(syn);
                }
                None
            }
            Op::Send { av, data } => {
                match self.gather_message(env, pd, data, max_msg) {
                    Err(syn) => {
                        p.status = Status::Failed(syn);
                        None
                    }
                    Ok(payload) => {
                        let kind_ = match w.opcode {
                            opcode::SEND_IMM => SendKind::Imm(w.imm),
                            opcode::SEND_INVAL => SendKind::Inv(w.imm),
                            _ => SendKind::Plain,
                        };
                        // A Q_Key with its top bit set means "the QP's own" (IBTA
                        // 10.2.5 controlled Q_Keys).
                        let qk = av.as_ref().map(|a| {
                            let k = u32::from_be_bytes([a.key[0], a.key[1], a.key[2], a.key[3]]);
                            if k & 0x8000_0000 != 0 {
                                qkey
                            } else {
                                k
                            }
                        });
                        p.byte_cnt = payload.len() as u32;
                        Some((
                            av,
                            Body::Send {
                                kind: kind_,
                                qkey: qk,
                                xrc_srqn: w.xrc_srqn,
                                payload,
                            },
                        ))
                    }
                }
            }
            Op::Write { raddr, data } => match self.gather_message(env, pd, data, max_msg) {
                Err(syn) => {
                    p.status = Status::Failed(syn);
                    None
                }
                Ok(payload) => Some((
                    None,
                    Body::Write {
                        va: raddr.raddr.get(),
                        rkey: raddr.rkey.get(),
                        imm: (w.opcode == opcode::RDMA_WRITE_IMM).then_some(w.imm),
                        xrc_srqn: w.xrc_srqn,
                        payload,
                    },
                )),
            },
            Op::Read { raddr, sges } => {
                let len = Data::Gather(sges.clone()).len();
                if len > max_msg {
                    p.status = Status::Failed(vals::SYNDROME_LOCAL_LENGTH_ERR);
                    None
                } else {
                    self.dp.send.bytes += len;
                    p.local = sges;
                    p.byte_cnt = len as u32;
                    p.needs_response = true;
                    Some((
                        None,
                        Body::ReadReq {
                            va: raddr.raddr.get(),
                            rkey: raddr.rkey.get(),
                            len: len as u32,
                            xrc_srqn: w.xrc_srqn,
                        },
                    ))
                }
            }
            Op::Atomic { raddr, args, sges } => {
                self.dp.send.bytes += 8;
                p.local = sges;
                p.byte_cnt = 8;
                p.needs_response = true;
                let op = match args {
                    AtomicArgs::CmpSwap { swap, compare } => AtomicOp {
                        opcode: w.opcode,
                        swap_add: swap,
                        compare,
                        swap_mask: 0,
                        compare_mask: 0,
                    },
                    AtomicArgs::FetchAdd { add } => AtomicOp {
                        opcode: w.opcode,
                        swap_add: add,
                        compare: 0,
                        swap_mask: 0,
                        compare_mask: 0,
                    },
                    AtomicArgs::MaskedCmpSwap {
                        swap,
                        compare,
                        swap_mask,
                        compare_mask,
                    } => AtomicOp {
                        opcode: w.opcode,
                        swap_add: swap,
                        compare,
                        swap_mask,
                        compare_mask,
                    },
                    AtomicArgs::MaskedFetchAdd { add, boundary } => AtomicOp {
                        opcode: w.opcode,
                        swap_add: add,
                        compare: boundary,
                        swap_mask: 0,
                        compare_mask: 0,
                    },
                };
                Some((
                    None,
                    Body::Atomic {
                        va: raddr.raddr.get(),
                        rkey: raddr.rkey.get(),
                        op,
                        xrc_srqn: w.xrc_srqn,
                    },
                ))
            }
        };
        let Some((av, body)) = body else {
            let failed = matches!(p.status, Status::Failed(_));
            self.sq_push(qpn, p, bbs);
            return if failed { Flow::Stop } else { Flow::Next };
        };
        // PSNs: a request takes one per path-MTU packet (IBTA 9.7.1; a READ as many as
        // its response, an atomic one).
        let n = match &body {
            Body::Send { payload, .. } | Body::Write { payload, .. } => {
                npkts(payload.len() as u64, mtu)
            }
            Body::ReadReq { len, .. } => npkts(u64::from(*len), mtu),
            _ => 1,
        };
        let psn = {
            let qp = self.objs.qps.get_mut(&qpn).expect("QP checked");
            if !qp.dp_send.started {
                qp.dp_send.started = true;
                qp.dp_send.next_psn =
                    qpc::NEXT_SEND_PSN.raw().get(&qp.ctx).unwrap_or(0) as u32 & 0xff_ffff;
                let f = |fl: crate::ifc::field::Field| fl.get(&qp.ctx).unwrap_or(0) as u8;
                qp.dp_send.retry_left = f(qpc::RETRY_COUNT.raw());
                qp.dp_send.rnr_left = f(qpc::RNR_RETRY.raw());
            }
            let psn = qp.dp_send.next_psn;
            qp.dp_send.next_psn = (psn + n) & 0xff_ffff;
            psn
        };
        let hdr = self.tx_header(qpn, psn, w.solicited, av.as_ref());
        let pkt = Packet { hdr, body };
        p.psn = psn;
        p.npsn = n;
        if reliable {
            p.status = Status::Waiting;
            p.pkt = Some(pkt.clone());
        }
        let dlid = pkt.hdr.dlid;
        self.sq_push(qpn, p, bbs);
        if reliable {
            self.arm_retry_timer(qpn);
        }
        self.port_deliver(env, dlid, pkt);
        Flow::Next
    }
}
