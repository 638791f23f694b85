//! What crosses the port: message-level InfiniBand transport packets. See [`super`].
//!
//! One [`Packet`] is one message (the IBTA's first/middle/last packets of a long
//! message are not split: the receiver still advances its PSN by the number of packets
//! the path MTU would make, `transport/ibta.rs` `npkts`). The header carries what the IBTA's LRH,
//! GRH, BTH, DETH and XRCETH carry for the responder's checks (LIDs, SL, P_Key,
//! source and destination QPN, PSN, Q_Key, XRC SRQ); the body what RETH, AETH,
//! AtomicETH, AtomicAckETH, ImmDt and IETH carry. [`Packet::encode`] /
//! [`Packet::decode`] give the frame the wire carries between two emulators; decoding
//! is bounded by the frame (no length from the frame allocates beyond it).

/// The GRH fields the responder reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Grh {
    /// Source GID.
    pub sgid: [u8; 16],
    /// Destination GID.
    pub dgid: [u8; 16],
    /// Traffic class.
    pub tclass: u8,
    /// Flow label (20 bits).
    pub flow_label: u32,
    /// Hop limit.
    pub hop_limit: u8,
}

/// Header fields of every packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Header {
    /// Source LID (LRH).
    pub slid: u16,
    /// Destination LID (LRH).
    pub dlid: u16,
    /// Service level (LRH).
    pub sl: u8,
    /// GRH, when present.
    pub grh: Option<Grh>,
    /// P_Key (BTH).
    pub pkey: u16,
    /// Destination QP (BTH).
    pub dqpn: u32,
    /// Source QP (DETH for datagrams; for connected QPs the requester QP, which the
    /// IBTA leaves implied by the connection).
    pub sqpn: u32,
    /// Packet sequence number (BTH, 24 bits).
    pub psn: u32,
    /// Solicited event (BTH SE).
    pub solicited: bool,
}

/// Kinds of SEND.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendKind {
    /// Plain.
    Plain,
    /// With immediate data.
    Imm(u32),
    /// With invalidate (the rkey).
    Inv(u32),
}

/// An atomic operation on the wire (8-byte operands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomicOp {
    /// The WQE opcode (`MLX5_OPCODE_ATOMIC_*`).
    pub opcode: u8,
    /// Swap value / addend.
    pub swap_add: u64,
    /// Compare value / masked fetch-add field boundary.
    pub compare: u64,
    /// Masked compare-and-swap: swap mask.
    pub swap_mask: u64,
    /// Masked compare-and-swap: compare mask.
    pub compare_mask: u64,
}

/// Negative acknowledgements (AETH syndromes, IBTA 9.7.5.2.8 / 9.9.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nak {
    /// Receiver not ready, with the responder's minimum RNR timer code.
    Rnr {
        /// `min_rnr_nak` (IBTA table 45 code).
        timer: u8,
    },
    /// PSN sequence error (the responder expects `expected`).
    PsnSeq,
    /// Invalid request.
    InvalidRequest,
    /// Remote access error.
    RemoteAccess,
    /// Remote operational error.
    RemoteOp,
}

/// What a packet is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// SEND (RC, UC, UD, XRC; UD carries the Q_Key).
    Send {
        /// Plain / immediate / invalidate.
        kind: SendKind,
        /// Datagram: Q_Key (DETH).
        qkey: Option<u32>,
        /// XRC: the target XRC SRQ (XRCETH).
        xrc_srqn: Option<u32>,
        /// The message.
        payload: Vec<u8>,
    },
    /// RDMA WRITE (with immediate).
    Write {
        /// Remote address (RETH).
        va: u64,
        /// Remote key (RETH).
        rkey: u32,
        /// Immediate data.
        imm: Option<u32>,
        /// XRC: the target XRC SRQ.
        xrc_srqn: Option<u32>,
        /// The message.
        payload: Vec<u8>,
    },
    /// RDMA READ request.
    ReadReq {
        /// Remote address.
        va: u64,
        /// Remote key.
        rkey: u32,
        /// Bytes to read (RETH DMA length).
        len: u32,
        /// XRC: the target XRC SRQ.
        xrc_srqn: Option<u32>,
    },
    /// Atomic request.
    Atomic {
        /// Remote address.
        va: u64,
        /// Remote key.
        rkey: u32,
        /// Operation and operands.
        op: AtomicOp,
        /// XRC: the target XRC SRQ.
        xrc_srqn: Option<u32>,
    },
    /// RDMA READ response (the whole message).
    ReadResp {
        /// The bytes read.
        payload: Vec<u8>,
    },
    /// Atomic acknowledge.
    AtomicAck {
        /// The original remote value.
        orig: u64,
    },
    /// Positive acknowledge of every request up to the header's PSN.
    Ack,
    /// Negative acknowledge of the request with the header's PSN.
    Nak(Nak),
}

/// One message-level packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Routing and transport header.
    pub hdr: Header,
    /// What it is.
    pub body: Body,
}

impl Packet {
    /// A request (the responder answers it), as opposed to a response.
    pub fn is_request(&self) -> bool {
        matches!(
            self.body,
            Body::Send { .. } | Body::Write { .. } | Body::ReadReq { .. } | Body::Atomic { .. }
        )
    }
}

/// Frame format version (first byte).
const VERSION: u8 = 1;

/// Why a frame does not decode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError(pub String);

struct W(Vec<u8>);

impl W {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn opt(&mut self, v: Option<u32>) {
        match v {
            Some(x) => {
                self.u8(1);
                self.u32(x);
            }
            None => self.u8(0),
        }
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
    }
}

struct R<'a>(&'a [u8]);

impl<'a> R<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.0.len() < n {
            return Err(DecodeError(format!(
                "frame ends {} bytes early",
                n - self.0.len()
            )));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, DecodeError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok((u64::from(self.u32()?) << 32) | u64::from(self.u32()?))
    }
    fn opt(&mut self) -> Result<Option<u32>, DecodeError> {
        Ok(match self.u8()? {
            0 => None,
            _ => Some(self.u32()?),
        })
    }
    fn bytes(&mut self) -> Result<Vec<u8>, DecodeError> {
        // The length is checked against the frame before anything is allocated.
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    fn gid(&mut self) -> Result<[u8; 16], DecodeError> {
        let mut g = [0u8; 16];
        g.copy_from_slice(self.take(16)?);
        Ok(g)
    }
}

impl Packet {
    /// The frame for the wire.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = W(Vec::with_capacity(64));
        let h = &self.hdr;
        w.u8(VERSION);
        w.u16(h.slid);
        w.u16(h.dlid);
        w.u8(h.sl);
        w.u16(h.pkey);
        w.u32(h.dqpn);
        w.u32(h.sqpn);
        w.u32(h.psn);
        w.u8(u8::from(h.solicited));
        match &h.grh {
            Some(g) => {
                w.u8(1);
                w.0.extend_from_slice(&g.sgid);
                w.0.extend_from_slice(&g.dgid);
                w.u8(g.tclass);
                w.u32(g.flow_label);
                w.u8(g.hop_limit);
            }
            None => w.u8(0),
        }
        match &self.body {
            Body::Send {
                kind,
                qkey,
                xrc_srqn,
                payload,
            } => {
                w.u8(1);
                match kind {
                    SendKind::Plain => w.u8(0),
                    SendKind::Imm(v) => {
                        w.u8(1);
                        w.u32(*v);
                    }
                    SendKind::Inv(v) => {
                        w.u8(2);
                        w.u32(*v);
                    }
                }
                w.opt(*qkey);
                w.opt(*xrc_srqn);
                w.bytes(payload);
            }
            Body::Write {
                va,
                rkey,
                imm,
                xrc_srqn,
                payload,
            } => {
                w.u8(2);
                w.u64(*va);
                w.u32(*rkey);
                w.opt(*imm);
                w.opt(*xrc_srqn);
                w.bytes(payload);
            }
            Body::ReadReq {
                va,
                rkey,
                len,
                xrc_srqn,
            } => {
                w.u8(3);
                w.u64(*va);
                w.u32(*rkey);
                w.u32(*len);
                w.opt(*xrc_srqn);
            }
            Body::Atomic {
                va,
                rkey,
                op,
                xrc_srqn,
            } => {
                w.u8(4);
                w.u64(*va);
                w.u32(*rkey);
                w.u8(op.opcode);
                w.u64(op.swap_add);
                w.u64(op.compare);
                w.u64(op.swap_mask);
                w.u64(op.compare_mask);
                w.opt(*xrc_srqn);
            }
            Body::ReadResp { payload } => {
                w.u8(5);
                w.bytes(payload);
            }
            Body::AtomicAck { orig } => {
                w.u8(6);
                w.u64(*orig);
            }
            Body::Ack => w.u8(7),
            Body::Nak(n) => {
                w.u8(8);
                match n {
                    Nak::Rnr { timer } => {
                        w.u8(0);
                        w.u8(*timer);
                    }
                    Nak::PsnSeq => w.u8(1),
                    Nak::InvalidRequest => w.u8(2),
                    Nak::RemoteAccess => w.u8(3),
                    Nak::RemoteOp => w.u8(4),
                }
            }
        }
        w.0
    }

    /// A frame from the wire. Error: truncated, unknown version or kind, bytes left
    /// over.
    pub fn decode(frame: &[u8]) -> Result<Packet, DecodeError> {
        let mut r = R(frame);
        let v = r.u8()?;
        if v != VERSION {
            return Err(DecodeError(format!("frame version {v}")));
        }
        let mut hdr = Header {
            slid: r.u16()?,
            dlid: r.u16()?,
            sl: r.u8()?,
            pkey: r.u16()?,
            dqpn: r.u32()? & 0xff_ffff,
            sqpn: r.u32()? & 0xff_ffff,
            psn: r.u32()? & 0xff_ffff,
            solicited: r.u8()? != 0,
            grh: None,
        };
        if r.u8()? != 0 {
            hdr.grh = Some(Grh {
                sgid: r.gid()?,
                dgid: r.gid()?,
                tclass: r.u8()?,
                flow_label: r.u32()? & 0xf_ffff,
                hop_limit: r.u8()?,
            });
        }
        let body = match r.u8()? {
            1 => {
                let kind = match r.u8()? {
                    0 => SendKind::Plain,
                    1 => SendKind::Imm(r.u32()?),
                    2 => SendKind::Inv(r.u32()?),
                    k => return Err(DecodeError(format!("send kind {k}"))),
                };
                Body::Send {
                    kind,
                    qkey: r.opt()?,
                    xrc_srqn: r.opt()?,
                    payload: r.bytes()?,
                }
            }
            2 => Body::Write {
                va: r.u64()?,
                rkey: r.u32()?,
                imm: r.opt()?,
                xrc_srqn: r.opt()?,
                payload: r.bytes()?,
            },
            3 => Body::ReadReq {
                va: r.u64()?,
                rkey: r.u32()?,
                len: r.u32()?,
                xrc_srqn: r.opt()?,
            },
            4 => Body::Atomic {
                va: r.u64()?,
                rkey: r.u32()?,
                op: AtomicOp {
                    opcode: r.u8()?,
                    swap_add: r.u64()?,
                    compare: r.u64()?,
                    swap_mask: r.u64()?,
                    compare_mask: r.u64()?,
                },
                xrc_srqn: r.opt()?,
            },
            5 => Body::ReadResp {
                payload: r.bytes()?,
            },
            6 => Body::AtomicAck { orig: r.u64()? },
            7 => Body::Ack,
            8 => Body::Nak(match r.u8()? {
                0 => Nak::Rnr { timer: r.u8()? },
                1 => Nak::PsnSeq,
                2 => Nak::InvalidRequest,
                3 => Nak::RemoteAccess,
                4 => Nak::RemoteOp,
                k => return Err(DecodeError(format!("NAK kind {k}"))),
            }),
            k => return Err(DecodeError(format!("packet kind {k}"))),
        };
        if !r.0.is_empty() {
            return Err(DecodeError(format!("{} bytes after the packet", r.0.len())));
        }
        Ok(Packet { hdr, body })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr() -> Header {
        Header {
            slid: 2,
            dlid: 3,
            sl: 1,
            grh: Some(Grh {
                sgid: [1; 16],
                dgid: [2; 16],
                tclass: 4,
                flow_label: 0x12345,
                hop_limit: 64,
            }),
            pkey: 0xffff,
            dqpn: 0x12,
            sqpn: 0x13,
            psn: 0xff_fffe,
            solicited: true,
        }
    }

    #[test]
    fn every_kind_round_trips() {
        let op = AtomicOp {
            opcode: 0x11,
            swap_add: 1,
            compare: 2,
            swap_mask: 3,
            compare_mask: 4,
        };
        for body in [
            Body::Send {
                kind: SendKind::Imm(7),
                qkey: Some(0x8001_0000),
                xrc_srqn: None,
                payload: vec![1, 2, 3],
            },
            Body::Send {
                kind: SendKind::Inv(9),
                qkey: None,
                xrc_srqn: Some(4),
                payload: vec![],
            },
            Body::Write {
                va: 0x1000,
                rkey: 5,
                imm: None,
                xrc_srqn: None,
                payload: vec![9; 100],
            },
            Body::ReadReq {
                va: 1,
                rkey: 2,
                len: 3,
                xrc_srqn: None,
            },
            Body::Atomic {
                va: 8,
                rkey: 1,
                op,
                xrc_srqn: None,
            },
            Body::ReadResp {
                payload: vec![5; 7],
            },
            Body::AtomicAck { orig: u64::MAX },
            Body::Ack,
            Body::Nak(Nak::Rnr { timer: 12 }),
            Body::Nak(Nak::RemoteAccess),
        ] {
            let p = Packet { hdr: hdr(), body };
            assert_eq!(Packet::decode(&p.encode()).unwrap(), p);
        }
    }

    #[test]
    fn truncated_and_padded_frames_are_errors() {
        let p = Packet {
            hdr: hdr(),
            body: Body::ReadResp {
                payload: vec![1; 32],
            },
        };
        let f = p.encode();
        for n in 0..f.len() {
            assert!(Packet::decode(&f[..n]).is_err(), "{n} bytes");
        }
        let mut g = f.clone();
        g.push(0);
        assert!(Packet::decode(&g).is_err());
        // A payload length far beyond the frame allocates nothing.
        let mut h = f[..f.len() - 36].to_vec();
        h.extend(u32::MAX.to_be_bytes());
        assert!(Packet::decode(&h).unwrap_err().0.contains("early"));
    }
}
