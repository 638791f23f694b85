//! Executing a request at the responder: SEND into a receive WQE, WRITE, READ and
//! atomics through the remote keys (in the XRC SRQ's PD for an XRC target), with the
//! answer each gets. See [`super`].

use crate::fw::dp::cqe::CqeOp;
use crate::fw::dp::packet::{Body, Grh, Nak, Packet, SendKind};
use crate::fw::dp::transport::ibta::npkts;
use crate::fw::dp::wqe::{atomic_apply, AtomicArgs};
use crate::fw::dp::xlate::{Access, XlateError};
use crate::fw::qp_state::st;
use crate::fw::{Env, Firmware};
use crate::ifc::caps::atomic_caps as at;
use crate::ifc::qp::qpc;
use crate::ifc::wqe::opcode;

/// What the responder answers.
pub(super) enum Answer {
    None,
    Ack(u32),
    Nak(u32, Nak),
    ReadResp(u32, Vec<u8>),
    AtomicAck(u32, u64),
}

impl Firmware {
    /// Reads (`write` None) or writes `len` bytes at `va` through remote key `rkey`
    /// of PD `pd`.
    fn remote_io(
        &mut self,
        env: &Env<'_>,
        (qpn, pd): (u32, u32),
        (rkey, va, len): (u32, u64, u64),
        need: Access,
        write: Option<&[u8]>,
    ) -> Result<Vec<u8>, Nak> {
        if len == 0 {
            // A zero-length RDMA access checks no key (IBTA 9.7.4.1.3 / 9.4.5).
            return Ok(Vec::new());
        }
        // Fault on demand `rkey` (dp/fault.rs): refused as a key violation.
        if self.fault_rkey(qpn, rkey) {
            return Err(Nak::RemoteAccess);
        }
        // A key bound to one QP (a type 2 memory window) serves that QP only (dpmem
        // `translate_for`).
        let pieces = self
            .translate_for(env, rkey, va, len, need, pd, Some(qpn))
            .map_err(|e| {
                log::debug!("QP {qpn} rkey {rkey:#x}: {e:?}");
                Nak::RemoteAccess
            })?;
        let mut out = Vec::new();
        let mut at = 0usize;
        for (pa, n) in pieces {
            let n = n as usize;
            // The pieces cover exactly `len` bytes; anything else is a remote
            // operational error, not a panic.
            if at + n > len as usize {
                return Err(Nak::RemoteOp);
            }
            let res = match write {
                Some(d) => match d.get(at..at + n) {
                    Some(b) => env.mem.write(pa, b),
                    None => return Err(Nak::RemoteOp),
                },
                None => {
                    out.resize(at + n, 0);
                    env.mem.read(pa, &mut out[at..at + n])
                }
            };
            if let Err(e) = res {
                self.stats
                    .dma_error(format!("rkey {rkey:#x} at {pa:#x}: {e}"));
                return Err(Nak::RemoteOp);
            }
            at += n;
        }
        Ok(out)
    }

    /// Executes a request in sequence; the answer (RC) or None.
    pub(super) fn execute_request(
        &mut self,
        env: &Env<'_>,
        qpn: u32,
        p: &Packet,
        dgram: bool,
    ) -> Answer {
        let (pd, rre, rwe, rae, min_rnr) = {
            let qp = &self.objs.qps[&qpn];
            let f = |fl: crate::ifc::field::Field| fl.get(&qp.ctx).unwrap_or(0);
            (
                qp.pd,
                f(qpc::RRE.raw()) != 0,
                f(qpc::RWE.raw()) != 0,
                f(qpc::RAE.raw()) != 0,
                f(qpc::MIN_RNR_NAK.raw()) as u8,
            )
        };
        let pd = self.xrc_srq_pd(qpn, &p.body).unwrap_or(pd);
        let psn = p.hdr.psn;
        let mtu = qpc::MTU.raw().get(&self.objs.qps[&qpn].ctx).unwrap_or(0) as u8;
        let last = |len: u64| (psn + npkts(len, mtu) - 1) & 0xff_ffff;
        match &p.body {
            Body::Send {
                kind,
                xrc_srqn,
                payload,
                ..
            } => {
                let mut data = Vec::new();
                if dgram {
                    // UD: the first 40 bytes of the receive buffer hold the GRH
                    // (IBTA 11.4.1.1), written when the packet has one; the byte count
                    // includes them.
                    data.extend_from_slice(&grh_bytes(p.hdr.grh.as_ref(), payload.len()));
                }
                data.extend_from_slice(payload);
                let op = match kind {
                    SendKind::Plain => CqeOp::RespSend,
                    SendKind::Imm(_) => CqeOp::RespSendImm,
                    SendKind::Inv(_) => CqeOp::RespSendInv,
                };
                let imm = match kind {
                    SendKind::Plain => 0,
                    SendKind::Imm(v) | SendKind::Inv(v) => *v,
                };
                self.deliver_recv(env, qpn, p, *xrc_srqn, op, imm, Some(&data), min_rnr, dgram)
                    .unwrap_or(Answer::Ack(last(payload.len() as u64)))
            }
            Body::Write {
                va,
                rkey,
                imm,
                xrc_srqn,
                payload,
            } => {
                if !rwe && !payload.is_empty() {
                    self.responder_error(env, qpn, true);
                    return Answer::Nak(psn, Nak::RemoteAccess);
                }
                // The key first: a violation writes nothing and consumes no receive.
                if !payload.is_empty() {
                    // Fault on demand `rkey` (dp/fault.rs): refused as a key violation.
                    let checked = if self.fault_rkey(qpn, *rkey) {
                        Err(XlateError::Access)
                    } else {
                        self.translate_for(
                            env,
                            *rkey,
                            *va,
                            payload.len() as u64,
                            Access::REMOTE_WRITE,
                            pd,
                            Some(qpn),
                        )
                        .map(|_| ())
                    };
                    if let Err(e) = checked {
                        log::debug!("QP {qpn} WRITE rkey {rkey:#x}: {e:?}");
                        self.responder_error(env, qpn, true);
                        return Answer::Nak(psn, Nak::RemoteAccess);
                    }
                }
                if let Some(imm) = imm {
                    // WRITE with immediate consumes a receive WQE (no data scattered).
                    if let Some(a) = self.deliver_recv(
                        env,
                        qpn,
                        p,
                        *xrc_srqn,
                        CqeOp::RespWriteImm,
                        *imm,
                        None,
                        min_rnr,
                        false,
                    ) {
                        return a;
                    }
                }
                match self.remote_io(
                    env,
                    (qpn, pd),
                    (*rkey, *va, payload.len() as u64),
                    Access::REMOTE_WRITE,
                    Some(payload),
                ) {
                    Ok(_) => Answer::Ack(last(payload.len() as u64)),
                    Err(k) => {
                        self.responder_error(env, qpn, k == Nak::RemoteAccess);
                        Answer::Nak(psn, k)
                    }
                }
            }
            Body::ReadReq { va, rkey, len, .. } => {
                if !rre && *len > 0 {
                    self.responder_error(env, qpn, true);
                    return Answer::Nak(psn, Nak::RemoteAccess);
                }
                match self.remote_io(
                    env,
                    (qpn, pd),
                    (*rkey, *va, u64::from(*len)),
                    Access::REMOTE_READ,
                    None,
                ) {
                    Ok(d) => Answer::ReadResp(psn, d),
                    Err(k) => {
                        self.responder_error(env, qpn, k == Nak::RemoteAccess);
                        Answer::Nak(psn, k)
                    }
                }
            }
            Body::Atomic { va, rkey, op, .. } => {
                if !rae {
                    self.responder_error(env, qpn, true);
                    return Answer::Nak(psn, Nak::RemoteAccess);
                }
                // Atomics are 8-byte aligned (IBTA 9.4.5: misaligned is an invalid
                // request).
                if va % 8 != 0 {
                    self.responder_error(env, qpn, false);
                    return Answer::Nak(psn, Nak::InvalidRequest);
                }
                let old = match self.remote_io(
                    env,
                    (qpn, pd),
                    (*rkey, *va, 8),
                    Access::REMOTE_ATOMIC,
                    None,
                ) {
                    Ok(d) => d,
                    Err(k) => {
                        self.responder_error(env, qpn, k == Nak::RemoteAccess);
                        return Answer::Nak(psn, k);
                    }
                };
                let host = self.atomic_host_endian();
                let mut b = [0u8; 8];
                b.copy_from_slice(&old);
                let oldv = if host {
                    u64::from_le_bytes(b)
                } else {
                    u64::from_be_bytes(b)
                };
                let args = match op.opcode {
                    opcode::ATOMIC_CS => AtomicArgs::CmpSwap {
                        swap: op.swap_add,
                        compare: op.compare,
                    },
                    opcode::ATOMIC_FA => AtomicArgs::FetchAdd { add: op.swap_add },
                    opcode::ATOMIC_MASKED_CS => AtomicArgs::MaskedCmpSwap {
                        swap: op.swap_add,
                        compare: op.compare,
                        swap_mask: op.swap_mask,
                        compare_mask: op.compare_mask,
                    },
                    opcode::ATOMIC_MASKED_FA => AtomicArgs::MaskedFetchAdd {
                        add: op.swap_add,
                        boundary: op.compare,
                    },
                    _ => {
                        self.responder_error(env, qpn, false);
                        return Answer::Nak(psn, Nak::InvalidRequest);
                    }
                };
                let newv = atomic_apply(oldv, &args);
                let nb = if host {
                    newv.to_le_bytes()
                } else {
                    newv.to_be_bytes()
                };
                if let Err(k) = self.remote_io(
                    env,
                    (qpn, pd),
                    (*rkey, *va, 8),
                    Access::REMOTE_ATOMIC,
                    Some(&nb),
                ) {
                    self.responder_error(env, qpn, k == Nak::RemoteAccess);
                    return Answer::Nak(psn, k);
                }
                Answer::AtomicAck(psn, oldv)
            }
            _ => Answer::None,
        }
    }

    /// The PD that protects an XRC request's remote access: an XRC target QP has no
    /// PD of its own (IBTA Annex A14, XRC: memory protection of RDMA and atomic
    /// requests goes by the PD of the XRC SRQ the XRCETH names; upstream
    /// `create_xrc_tgt_qp` accordingly gives the QP the driver's internal PD
    /// `devr->p0`, never the user's). `None` (the QP's own PD applies) for a non-XRC
    /// QP, a request without XRCETH, or an SRQ that is no XRC SRQ of the QP's XRC
    /// domain (the key check then fails against the QP's PD).
    pub(super) fn xrc_srq_pd(&self, qpn: u32, body: &Body) -> Option<u32> {
        let x = match body {
            Body::Send { xrc_srqn, .. }
            | Body::Write { xrc_srqn, .. }
            | Body::ReadReq { xrc_srqn, .. }
            | Body::Atomic { xrc_srqn, .. } => (*xrc_srqn)?,
            _ => return None,
        };
        let qp = self.objs.qps.get(&qpn)?;
        if qp.st != st::XRC {
            return None;
        }
        let srq = self.objs.srqs.get(&x)?;
        (srq.kind == crate::fw::rsc::SrqKind::Xrc && srq.xrcd == qp.xrcd).then_some(srq.pd)
    }

    /// `atomic_req_8B_endianness_mode` as the driver set it (SET_HCA_CAP ATOMIC,
    /// fw/caps.rs): host endianness (the guest's, little endian here) or big endian.
    pub(super) fn atomic_host_endian(&self) -> bool {
        at::ATOMIC_REQ_8B_ENDIANNESS_MODE
            .raw()
            .get(&self.caps.atomic_cur)
            .unwrap_or(0)
            == crate::fw::caps::ATOMIC_REQ_MODE_HOST
    }
}

/// The 40-byte GRH area of a UD receive buffer (IBTA 8.3): the packet's GRH, or zeros
/// without one (the CQE then says no GRH).
fn grh_bytes(g: Option<&Grh>, payload: usize) -> [u8; 40] {
    let mut b = [0u8; 40];
    let Some(g) = g else {
        return b;
    };
    let vtf: u32 = (6 << 28) | (u32::from(g.tclass) << 20) | (g.flow_label & 0xf_ffff);
    b[0..4].copy_from_slice(&vtf.to_be_bytes());
    // PayLen: BTH + DETH + payload + ICRC (IBTA 8.3.1).
    let paylen = (12 + 8 + payload + 4).min(0xffff) as u16;
    b[4..6].copy_from_slice(&paylen.to_be_bytes());
    b[6] = 0x1b;
    b[7] = g.hop_limit;
    b[8..24].copy_from_slice(&g.sgid);
    b[24..40].copy_from_slice(&g.dgid);
    b
}
