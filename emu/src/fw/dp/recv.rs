//! Receive WQEs (receive queues, SRQs, XRC SRQs) and the responder side. See
//! [`super`].
//!
//! [`Firmware::recv_take`] consumes the next posted receive WQE of a QP: from its own
//! receive queue, from the SRQ / RMP it is attached to, or (XRC) from the XRC SRQ the
//! packet names; posted WQEs are counted by the 16-bit counter in doorbell record
//! DW0, as the driver publishes it (there is no receive doorbell). SRQs are linked
//! lists: every WQE starts with `mlx5_wqe_srq_next_seg`, whose `next_wqe_index` names
//! the WQE the device takes after it. A take that leaves fewer WQEs than an armed
//! limit (`lwm`) raises the SRQ limit event and disarms it.
//! [`Firmware::recv_scatter`] writes received bytes through the WQE's data segments.
//! [`Firmware::recv_flush`] completes every posted receive of a QP in ERR with a flush
//! error; [`Firmware::recv_poll_errored`] (the firmware tick, [`Firmware::recv_tick`])
//! does so for every QP in ERR, so receives posted after the QP entered ERR are flushed
//! too, and raises LAST_WQE_REACHED for a QP on an SRQ that entered ERR.
//!
//! Rules and sources: emu/README.md, "Data path" → "Receive queues".

use super::super::qp_state::state;
use super::super::rsc::{special_mkeys, Srq, SrqKind};
use super::super::{Env, Firmware};
use super::cqe::{buf_addr, CqPost, CqeDesc, CqeOp};
use super::xlate::Access;
/// The translation error a [`ScatterError::Xlate`] carries (`dp/xlate.rs`).
pub use super::xlate::XlateError;
use crate::ifc::av::WqeSrqNextSeg;
use crate::ifc::eqe::event_type;
use crate::ifc::field::Field;
use crate::ifc::qp::qpc;
use crate::ifc::srq::{rmpc, srqc, wq, xrc_srqc, RMPC_STATE_RDY};
use crate::ifc::wqe::{vals, WqeDataSeg};
use std::time::{Duration, Instant};
use zerocopy::FromBytes;

/// Most data segments one receive WQE holds (the largest stride, 2 KiB for a QP's
/// receive queue or SRQ (16 << 7), 32 KiB for an RMP (1 << 15), in 16-byte segments):
/// a bound on what one guest value makes the device read.
const MAX_RECV_SEGS: u64 = 2048;

/// How often the firmware tick flushes the receive queues of QPs in ERR (see
/// [`Firmware::recv_tick`]).
pub const RECV_POLL_PERIOD: Duration = Duration::from_millis(2);

/// `qpc.rq_type` (upstream `MLX5_NON_ZERO_RQ`, `MLX5_SRQ_RQ`, `MLX5_ZERO_LEN_RQ`).
mod rq_type {
    pub const REGULAR: u64 = 0;
    pub const SRQ: u64 = 1;
}

/// A receive WQE taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecvWqe {
    /// The CQE's `wqe_counter`: the QP's receive WQE counter, or the SRQ WQE index.
    pub wqe_counter: u16,
    /// The scatter list (terminator and signature segment removed).
    pub sges: Vec<WqeDataSeg>,
    /// The SRQ / RMP / XRC SRQ it came from.
    pub srqn: Option<u32>,
    /// The PD its keys are checked against: the QP's, or the SRQ's.
    pub pd: u32,
    /// The CQ its completion goes to: the QP's receive CQ, or (XRC) the XRC SRQ's.
    pub cqn: Option<u32>,
}

/// What [`Firmware::recv_take`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecvTake {
    /// The next posted WQE, consumed.
    Wqe(RecvWqe),
    /// Nothing posted (RNR for RC / UC, a drop for UD).
    Empty,
    /// The QP / SRQ cannot receive, or its WQE is malformed (message says why).
    Error(String),
}

/// Why a scatter failed (the responder's error CQE syndrome: [`ScatterError::syndrome`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScatterError {
    /// The scatter list holds fewer bytes than the message.
    Length,
    /// A data segment's key does not translate.
    Xlate(XlateError),
}

impl From<XlateError> for ScatterError {
    fn from(e: XlateError) -> Self {
        ScatterError::Xlate(e)
    }
}

impl ScatterError {
    /// The CQE syndrome: local length for too little room, local protection for a key
    /// that does not translate (IBTA local length / protection errors; `cq.h`).
    pub fn syndrome(&self) -> u8 {
        match self {
            ScatterError::Length => vals::SYNDROME_LOCAL_LENGTH_ERR,
            ScatterError::Xlate(XlateError::Dma) => vals::SYNDROME_LOCAL_QP_OP_ERR,
            ScatterError::Xlate(_) => vals::SYNDROME_LOCAL_PROT_ERR,
        }
    }
}

/// Per-QP receive queue state.
#[derive(Clone, Debug, Default)]
pub struct RqState {
    /// Receive WQEs consumed (taken or flushed), the device's side of doorbell record
    /// DW0 (16 bits, as the driver's counter).
    pub consumed: u16,
    /// The QP entered ERR and its LAST_WQE_REACHED event (QP on an SRQ) is due.
    pub last_wqe_due: bool,
}

impl RqState {
    /// The QP moved to `to`: RST empties the receive queue (upstream resets its
    /// counters and the doorbell record there); entering ERR makes LAST_WQE_REACHED
    /// due for a QP on an SRQ.
    pub fn on_state(&mut self, from: u8, to: u8) {
        if to == state::RST {
            *self = RqState::default();
        } else if to == state::ERR && from != state::ERR {
            self.last_wqe_due = true;
        }
    }
}

/// Per-SRQ receive state.
#[derive(Clone, Debug, Default)]
pub struct SrqState {
    /// WQEs consumed (compared with the 16-bit counter in doorbell record DW0).
    pub consumed: u16,
    /// Index of the WQE taken next (the list starts at WQE 0, as upstream links it).
    pub next: u16,
}

/// Function-wide receive statistics (`stats` → `dp` → `recv`).
#[derive(Clone, Debug, Default)]
pub struct RecvPath {
    /// WQEs taken from QPs' receive queues.
    pub taken_rq: u64,
    /// WQEs taken from SRQs / RMPs / XRC SRQs.
    pub taken_srq: u64,
    /// Takes that found nothing posted.
    pub empty: u64,
    /// Takes refused (QP / SRQ state, malformed WQE, counter beyond the queue).
    pub errors: u64,
    /// Bytes scattered.
    pub scattered: u64,
    /// Scatters that failed (length or key).
    pub scatter_errors: u64,
    /// Receive WQEs completed with a flush error.
    pub flushed: u64,
    /// SRQ limit events raised.
    pub limit_events: u64,
    /// LAST_WQE_REACHED events raised.
    pub last_wqe_events: u64,
    /// Firmware ticks that looked for QPs in ERR.
    pub polls: u64,
    /// When the next tick is due.
    pub next_poll: Option<Instant>,
    /// The last tick saw a QP in ERR (the tick keeps running while one is).
    pub errored_seen: bool,
}

impl RecvPath {
    /// The `stats` → `dp` → `recv` object.
    pub fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "taken_rq": self.taken_rq,
            "taken_srq": self.taken_srq,
            "empty": self.empty,
            "errors": self.errors,
            "scattered": self.scattered,
            "scatter_errors": self.scatter_errors,
            "flushed": self.flushed,
            "limit_events": self.limit_events,
            "last_wqe_events": self.last_wqe_events,
            "polls": self.polls,
        })
    }
}

/// Where a queue is and how it is counted.
struct Geometry {
    nent: u64,
    stride: u64,
    page: u64,
    base: u64,
    dbr: u64,
    pas: Vec<u64>,
}

fn get(ctx: &[u8], f: impl Into<Field>) -> u64 {
    f.into().get(ctx).unwrap_or(0)
}

/// Byte offset of the work queue in the RMP context.
const RMP_WQ: usize = rmpc::WQ.raw().byte_off();

/// The limit watermark of an SRQ (ARM_RQ / ARM_XRC_SRQ / MODIFY_RMP store it; `fw/srq.rs`).
fn lwm(q: &Srq) -> u64 {
    match q.kind {
        SrqKind::Basic => get(&q.ctx, srqc::LWM),
        SrqKind::Xrc => get(&q.ctx, xrc_srqc::LWM),
        SrqKind::Rmp => q.ctx.get(RMP_WQ..).map_or(0, |w| get(w, wq::LWM)),
    }
}

fn clear_lwm(q: &mut Srq) {
    let _ = match q.kind {
        SrqKind::Basic => srqc::LWM.raw().set(&mut q.ctx, 0),
        SrqKind::Xrc => xrc_srqc::LWM.raw().set(&mut q.ctx, 0),
        SrqKind::Rmp => match q.ctx.get_mut(RMP_WQ..) {
            Some(w) => wq::LWM.raw().set(w, 0),
            None => None,
        },
    };
}

/// An SRQ's queue: the same rules `fw/srq.rs` validated at creation.
fn srq_geometry(q: &Srq) -> Geometry {
    let c = &q.ctx;
    let (log, stride, lps, off, dbr) = match q.kind {
        SrqKind::Basic => (
            get(c, srqc::LOG_SRQ_SIZE),
            16u64 << get(c, srqc::LOG_RQ_STRIDE),
            get(c, srqc::LOG_PAGE_SIZE),
            get(c, srqc::PAGE_OFFSET),
            get(c, srqc::DBR_ADDR),
        ),
        SrqKind::Xrc => (
            get(c, xrc_srqc::LOG_XRC_SRQ_SIZE),
            16u64 << get(c, xrc_srqc::LOG_RQ_STRIDE),
            get(c, xrc_srqc::LOG_PAGE_SIZE),
            get(c, xrc_srqc::PAGE_OFFSET),
            (get(c, xrc_srqc::DB_RECORD_ADDR_H) << 32) | (get(c, xrc_srqc::DB_RECORD_ADDR_L) << 2),
        ),
        SrqKind::Rmp => {
            let w = c.get(RMP_WQ..).unwrap_or(&[]);
            (
                get(w, wq::LOG_WQ_SZ),
                1u64 << get(w, wq::LOG_WQ_STRIDE).min(15),
                get(w, wq::LOG_WQ_PG_SZ),
                get(w, wq::PAGE_OFFSET),
                get(w, wq::DBR_ADDR),
            )
        }
    };
    let page = 4096u64 << lps.min(30);
    Geometry {
        nent: 1u64 << log.min(24),
        stride,
        page,
        base: off * (page / 64),
        dbr,
        pas: q.pas.clone(),
    }
}

impl Firmware {
    /// Reads doorbell record DW0's 16-bit counter.
    fn recv_counter(&mut self, env: &Env<'_>, what: &str, dbr: u64) -> Option<u16> {
        let mut db = [0u8; 4];
        match env.mem.read(dbr, &mut db) {
            Ok(()) => Some(u32::from_be_bytes(db) as u16),
            Err(e) => {
                self.stats.dma_error(format!("{what} doorbell record: {e}"));
                None
            }
        }
    }

    /// Reads the data segments of the WQE at byte `off` of `g`'s buffer, `skip` bytes
    /// (next / signature segment) in, until the stride ends or the terminator.
    fn recv_segments(
        &mut self,
        env: &Env<'_>,
        what: &str,
        g: &Geometry,
        off: u64,
        skip: u64,
    ) -> Result<Vec<WqeDataSeg>, String> {
        let mut sges = Vec::new();
        let mut at = skip;
        while at + 16 <= g.stride && at / 16 < MAX_RECV_SEGS {
            let Some(addr) = buf_addr(&g.pas, g.page, off + at) else {
                return Err(format!("{what}: WQE outside its buffer"));
            };
            let mut raw = [0u8; 16];
            if let Err(e) = env.mem.read(addr, &mut raw) {
                self.stats.dma_error(format!("{what}: {e}"));
                return Err(format!("{what}: {e}"));
            }
            let Ok(seg) = WqeDataSeg::read_from_bytes(&raw) else {
                break;
            };
            // A list shorter than the stride ends with a segment of 0 bytes and the
            // terminate-scatter-list mkey (QUERY_SPECIAL_CONTEXTS; upstream
            // `MLX5_TERMINATE_SCATTER_LIST_LKEY` / `MLX5_INVALID_LKEY`).
            if seg.byte_count.get() == 0 && seg.lkey.get() == special_mkeys::RESD_LKEY {
                break;
            }
            sges.push(seg);
            at += 16;
        }
        Ok(sges)
    }

    /// Takes the next posted receive WQE for QP `qpn`; `srqn`: the XRC SRQ an XRC
    /// packet names (None otherwise). See the module doc.
    pub fn recv_take(&mut self, env: &Env<'_>, qpn: u32, srqn: Option<u32>) -> RecvTake {
        let r = self.recv_take_inner(env, qpn, srqn);
        match &r {
            RecvTake::Wqe(w) if w.srqn.is_some() => self.dp.recv.taken_srq += 1,
            RecvTake::Wqe(_) => self.dp.recv.taken_rq += 1,
            RecvTake::Empty => self.dp.recv.empty += 1,
            RecvTake::Error(m) => {
                self.dp.recv.errors += 1;
                log::debug!("recv_take: {m}");
            }
        }
        r
    }

    fn recv_take_inner(&mut self, env: &Env<'_>, qpn: u32, srqn: Option<u32>) -> RecvTake {
        let Some(qp) = self.objs.qps.get(&qpn) else {
            return RecvTake::Error(format!("no QP {qpn:#x}"));
        };
        // The responder works in RTR, RTS, SQD and SQER (PRM QP states: the receive
        // side is up from RTR until ERR / RST).
        if !matches!(qp.state, state::RTR | state::RTS | state::SQD | state::SQER) {
            return RecvTake::Error(format!(
                "QP {qpn:#x} in {} does not receive",
                state::name(qp.state)
            ));
        }
        if let Some(x) = srqn {
            // XRC: the packet's XRC SRQ must be one of the QP's XRC domain (PRM XRC
            // SRQ; IBTA XRC: the target QP and the SRQ share the domain).
            let Some(q) = self.objs.srqs.get(&x).filter(|q| q.kind == SrqKind::Xrc) else {
                return RecvTake::Error(format!("QP {qpn:#x}: no XRC SRQ {x:#x}"));
            };
            if q.xrcd != qp.xrcd {
                return RecvTake::Error(format!(
                    "QP {qpn:#x}: XRC SRQ {x:#x} is of XRC domain {:?}, the QP of {:?}",
                    q.xrcd, qp.xrcd
                ));
            }
            return self.srq_take(env, x, None);
        }
        if get(&qp.ctx, qpc::RQ_TYPE) == rq_type::SRQ {
            let Some(s) = qp.srqn else {
                return RecvTake::Error(format!("QP {qpn:#x} on an SRQ without one"));
            };
            return self.srq_take(env, s, qp.cqn_rcv);
        }
        if get(&qp.ctx, qpc::RQ_TYPE) != rq_type::REGULAR {
            return RecvTake::Error(format!("QP {qpn:#x} has no receive queue"));
        }
        self.rq_take(env, qpn)
    }

    /// The geometry of QP `qpn`'s own receive queue (first in its buffer, stride
    /// 16 << log_rq_stride, page_offset in page_size / 64 units as `create_qp`).
    fn rq_geometry(&self, qpn: u32) -> Option<Geometry> {
        let qp = self.objs.qps.get(&qpn)?;
        let c = &qp.ctx;
        let page = 4096u64 << get(c, qpc::LOG_PAGE_SIZE).min(30);
        Some(Geometry {
            nent: 1u64 << get(c, qpc::LOG_RQ_SIZE),
            stride: 16u64 << get(c, qpc::LOG_RQ_STRIDE),
            page,
            base: get(c, qpc::PAGE_OFFSET) * (page / 64),
            dbr: get(c, qpc::DBR_ADDR),
            pas: qp.pas.clone(),
        })
    }

    /// Posted receive WQEs of QP `qpn`'s own receive queue: (counter, posted), or an
    /// error when the counter is more than a queue ahead.
    fn rq_posted(&mut self, env: &Env<'_>, qpn: u32, g: &Geometry) -> Result<(u16, u16), String> {
        let what = format!("QP {qpn:#x} receive queue");
        let head = self
            .recv_counter(env, &what, g.dbr)
            .ok_or_else(|| format!("{what}: doorbell record unreadable"))?;
        let consumed = self.objs.qps.get(&qpn).map_or(0, |q| q.dp_recv.consumed);
        let posted = head.wrapping_sub(consumed);
        if u64::from(posted) > g.nent {
            self.stats.violation(format!(
                "{what}: counter {head} is {posted} WQEs ahead of the device, the queue holds {}",
                g.nent
            ));
            return Err(format!("{what}: counter beyond the queue"));
        }
        Ok((consumed, posted))
    }

    fn rq_take(&mut self, env: &Env<'_>, qpn: u32) -> RecvTake {
        let Some(g) = self.rq_geometry(qpn) else {
            return RecvTake::Error(format!("no QP {qpn:#x}"));
        };
        let (ctr, posted) = match self.rq_posted(env, qpn, &g) {
            Ok(p) => p,
            Err(m) => return RecvTake::Error(m),
        };
        if posted == 0 {
            return RecvTake::Empty;
        }
        let qp = &self.objs.qps[&qpn];
        let (pd, cqn) = (qp.pd, qp.cqn_rcv);
        // With WQE signatures the first segment is the signature (`mlx5_rwqe_sig`,
        // upstream mlx5_ib / libmlx5 post_recv).
        let skip = if get(&qp.ctx, qpc::WQ_SIGNATURE) != 0 {
            16
        } else {
            0
        };
        let off = g.base + (u64::from(ctr) % g.nent) * g.stride;
        let what = format!("QP {qpn:#x} receive WQE {ctr}");
        let sges = match self.recv_segments(env, &what, &g, off, skip) {
            Ok(s) => s,
            Err(m) => return RecvTake::Error(m),
        };
        if let Some(q) = self.objs.qps.get_mut(&qpn) {
            q.dp_recv.consumed = ctr.wrapping_add(1);
        }
        RecvTake::Wqe(RecvWqe {
            wqe_counter: ctr,
            sges,
            srqn: None,
            pd,
            cqn,
        })
    }

    /// Takes the next WQE of SRQ / RMP / XRC SRQ `srqn`; `cqn`: the QP's receive CQ
    /// (an XRC SRQ completes into its own).
    fn srq_take(&mut self, env: &Env<'_>, srqn: u32, cqn: Option<u32>) -> RecvTake {
        let Some(q) = self.objs.srqs.get(&srqn) else {
            return RecvTake::Error(format!("no SRQ {srqn:#x}"));
        };
        if q.kind == SrqKind::Rmp && get(&q.ctx, rmpc::STATE) != u64::from(RMPC_STATE_RDY) {
            return RecvTake::Error(format!("RMP {srqn:#x} is not ready"));
        }
        let g = srq_geometry(q);
        let (pd, kind) = (q.pd, q.kind);
        let cqn = if kind == SrqKind::Xrc { q.cqn } else { cqn };
        let (consumed, next) = (q.dp.consumed, q.dp.next);
        let what = format!("{} {srqn:#x}", kind.name());
        let Some(ctr) = self.recv_counter(env, &what, g.dbr) else {
            return RecvTake::Error(format!("{what}: doorbell record unreadable"));
        };
        let posted = ctr.wrapping_sub(consumed);
        if u64::from(posted) > g.nent {
            self.stats.violation(format!(
                "{what}: counter {ctr} is {posted} WQEs ahead of the device, the queue holds {}",
                g.nent
            ));
            return RecvTake::Error(format!("{what}: counter beyond the queue"));
        }
        if posted == 0 {
            return RecvTake::Empty;
        }
        if u64::from(next) >= g.nent {
            self.stats.violation(format!(
                "{what}: next WQE index {next} beyond its {} WQEs",
                g.nent
            ));
            return RecvTake::Error(format!("{what}: next WQE index out of range"));
        }
        let off = g.base + u64::from(next) * g.stride;
        let what_wqe = format!("{what} WQE {next}");
        // The next segment links the list (`mlx5_wqe_srq_next_seg`); the device follows
        // it to the WQE it takes after this one.
        let Some(addr) = buf_addr(&g.pas, g.page, off) else {
            return RecvTake::Error(format!("{what_wqe}: outside its buffer"));
        };
        let mut raw = [0u8; 16];
        if let Err(e) = env.mem.read(addr, &mut raw) {
            self.stats.dma_error(format!("{what_wqe}: {e}"));
            return RecvTake::Error(format!("{what_wqe}: {e}"));
        }
        let link = WqeSrqNextSeg::read_from_bytes(&raw).map_or(0, |s| s.next_wqe_index.get());
        let sges = match self.recv_segments(env, &what_wqe, &g, off, 16) {
            Ok(s) => s,
            Err(m) => return RecvTake::Error(m),
        };
        let left = u64::from(posted - 1);
        let mut limit = false;
        if let Some(q) = self.objs.srqs.get_mut(&srqn) {
            q.dp.consumed = consumed.wrapping_add(1);
            q.dp.next = link;
            // SRQ limit (IBTA SRQ limit; PRM ARM_RQ / MODIFY_RMP lwm): fewer WQEs
            // than an armed limit raise the event once and disarm the limit.
            let l = lwm(q);
            if l != 0 && left < l {
                clear_lwm(q);
                limit = true;
            }
        }
        if limit {
            self.dp.recv.limit_events += 1;
            let _ = self.raise_srq_event(env, srqn, event_type::SRQ_RQ_LIMIT, 1);
        }
        RecvTake::Wqe(RecvWqe {
            wqe_counter: next,
            sges,
            srqn: Some(srqn),
            pd,
            cqn,
        })
    }

    /// Writes `data` through the scatter list `sges` (keys of PD `pd`, LOCAL_WRITE);
    /// returns the bytes written. Too little room: [`ScatterError::Length`] (nothing
    /// beyond the list is written).
    pub fn recv_scatter(
        &mut self,
        env: &Env<'_>,
        pd: u32,
        sges: &[WqeDataSeg],
        data: &[u8],
    ) -> Result<u32, ScatterError> {
        let r = self.recv_scatter_inner(env, pd, sges, data);
        match &r {
            Ok(n) => self.dp.recv.scattered += u64::from(*n),
            Err(_) => self.dp.recv.scatter_errors += 1,
        }
        r
    }

    fn recv_scatter_inner(
        &mut self,
        env: &Env<'_>,
        pd: u32,
        sges: &[WqeDataSeg],
        data: &[u8],
    ) -> Result<u32, ScatterError> {
        let room: u64 = sges.iter().map(|s| u64::from(s.byte_count.get())).sum();
        if (data.len() as u64) > room {
            return Err(ScatterError::Length);
        }
        let mut rest = data;
        for s in sges {
            if rest.is_empty() {
                break;
            }
            let n = rest.len().min(s.byte_count.get() as usize);
            let (chunk, tail) = rest.split_at(n);
            self.write_virt(
                env,
                s.lkey.get(),
                s.addr.get(),
                chunk,
                Access::LOCAL_WRITE,
                pd,
            )?;
            rest = tail;
        }
        Ok(data.len() as u32)
    }

    /// Completes every posted receive of QP `qpn` (in ERR, own receive queue) with a
    /// flush error CQE (syndrome WR_FLUSH_ERR, PRM / IBTA: a QP in Error completes its
    /// outstanding WQEs in error). Returns how many it flushed.
    pub fn recv_flush(&mut self, env: &Env<'_>, qpn: u32) -> u32 {
        let Some(qp) = self.objs.qps.get(&qpn) else {
            return 0;
        };
        if qp.state != state::ERR || get(&qp.ctx, qpc::RQ_TYPE) != rq_type::REGULAR {
            return 0;
        }
        let Some(cqn) = qp.cqn_rcv else {
            return 0;
        };
        let Some(g) = self.rq_geometry(qpn) else {
            return 0;
        };
        let Ok((mut ctr, posted)) = self.rq_posted(env, qpn, &g) else {
            return 0;
        };
        let mut n = 0;
        for _ in 0..posted {
            let d = CqeDesc::new(
                CqeOp::RespErr {
                    syndrome: vals::SYNDROME_WR_FLUSH_ERR,
                    vendor: 0,
                },
                qpn,
                ctr,
            );
            // A CQ in error (overrun) takes no CQE; the WQE is flushed all the same.
            if self.cqe_post(env, cqn, &d) == CqPost::Dma {
                break;
            }
            ctr = ctr.wrapping_add(1);
            n += 1;
            if let Some(q) = self.objs.qps.get_mut(&qpn) {
                q.dp_recv.consumed = ctr;
            }
        }
        self.dp.recv.flushed += u64::from(n);
        n
    }

    /// For every QP in ERR: flushes its posted receives (those posted after it entered
    /// ERR too: the driver only writes the doorbell record, so the device looks) and,
    /// for a QP on an SRQ, raises LAST_WQE_REACHED once per entry into ERR (IBTA
    /// "Last WQE Reached" affiliated asynchronous event; the model has no WQE in
    /// progress, so the last one is reached when the QP enters ERR).
    pub fn recv_poll_errored(&mut self, env: &Env<'_>) {
        self.dp.recv.polls += 1;
        let errored: Vec<(u32, bool)> = self
            .objs
            .qps
            .iter()
            .filter(|(_, q)| q.state == state::ERR)
            .map(|(n, q)| (*n, q.srqn.is_some() && q.dp_recv.last_wqe_due))
            .collect();
        self.dp.recv.errored_seen = !errored.is_empty();
        for (qpn, last_wqe) in errored {
            self.recv_flush(env, qpn);
            if last_wqe {
                if let Some(q) = self.objs.qps.get_mut(&qpn) {
                    q.dp_recv.last_wqe_due = false;
                }
                self.dp.recv.last_wqe_events += 1;
                let _ = self.raise_qp_event(env, qpn, event_type::SRQ_LAST_WQE, 1);
            }
        }
    }

    /// The firmware tick (`Device::step`): [`Firmware::recv_poll_errored`] at most
    /// every [`RECV_POLL_PERIOD`] (a bound on the work a doorbell-heavy guest causes:
    /// the tick looks at every QP). Returns when it wants to run again: while the last
    /// tick saw a QP in ERR (a receive may still be posted to it), else None (the
    /// firmware loop wakes every 50 ms anyway).
    pub fn recv_tick(&mut self, env: &Env<'_>, now: Instant) -> Option<Instant> {
        if self.dp.recv.next_poll.is_none_or(|t| t <= now) {
            self.recv_poll_errored(env);
            self.dp.recv.next_poll = Some(now + RECV_POLL_PERIOD);
        }
        self.dp
            .recv
            .errored_seen
            .then_some(self.dp.recv.next_poll)
            .flatten()
    }
}
