//! Send doorbells and the requester side. See [`super`].
//!
//! A send doorbell (the first 8 bytes of the control segment written to a BlueFlame
//! register half of the QP's UAR page) makes the device read the QP's send WQEs from
//! host memory, from its consumer counter up to the producer counter in the doorbell
//! record (DW1), and execute them in order. The WQEs are always read from memory: a
//! BlueFlame copy of a whole WQE (libmlx5 56.1 `post_send_db` → `mlx5_bf_copy` for one
//! inline or `prefer_bf` WQE of up to 256 bytes) is a copy of the bytes it wrote to the
//! send queue first, after the doorbell record update, so memory holds the same WQE
//! (upstream mlx5_ib `mlx5r_ring_db` writes only the first 8 bytes).
//!
//! Every WQE becomes a [`Pending`] entry of its QP; entries complete in order (a CQE
//! for signalled ones and every error), as the PRM's completion ordering demands.
//! Local operations (NOP, UMR) and unacknowledged transports (UC, UD) are done when
//! executed; RC requests when the response arrives (`transport.rs`).
//!
//! Rules and sources: emu/README.md, "Data path" → "Send queues".

use super::super::qp_state::state;
use super::super::{Env, Firmware};
use super::cqe::{buf_addr, CqeDesc, CqeOp};
use super::packet::{AtomicOp, Body, Grh, Header, Packet, SendKind};
use super::transport::{npkts, RespState};
use super::wqe::{self, AtomicArgs, Data, Op, QpKind, SendWqe};
use super::xlate::Access;
use crate::fw::latency::LatencyHist;
use crate::ifc::qp::{ads, qpc};
use crate::ifc::wqe::{opcode, vals, WqeDataSeg};
use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

/// Most WQEs executed per doorbell (a bound on the work one guest write causes; the
/// rest waits for the next doorbell).
const MAX_WQES_PER_DOORBELL: u32 = 1 << 16;

/// Size of one BlueFlame register half (cap `log_bf_reg_size` 9: 512-byte registers
/// used in two 256-byte halves, upstream `bf_reg_size / 2`).
const BF_HALF: usize = 256;

/// Where a WQE stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Sent, waiting for its response.
    Waiting,
    /// Done: completes when it reaches the head.
    Done,
    /// Failed with this CQE syndrome: the QP goes to error when it reaches the head.
    Failed(u8),
}

/// One executed WQE of a QP, until it completes.
#[derive(Clone, Debug)]
pub struct Pending {
    /// WQE index (the CQE's `wqe_counter`).
    pub wqe_counter: u16,
    /// Opcode (the CQE's `sop_drop_qpn` 31:24).
    pub opcode: u8,
    /// A CQE is requested.
    pub signalled: bool,
    /// First PSN (RC).
    pub psn: u32,
    /// PSNs the request takes.
    pub npsn: u32,
    /// The request, for retransmission (RC).
    pub pkt: Option<Packet>,
    /// READ / atomic: where the response lands.
    pub local: Vec<WqeDataSeg>,
    /// CQE byte count (READ length, 8 for atomics).
    pub byte_cnt: u32,
    /// READ / atomic (a fenced WQE waits for these).
    pub needs_response: bool,
    /// Where it stands.
    pub status: Status,
}

/// Per-QP requester and transport state.
#[derive(Clone, Debug, Default)]
pub struct SqState {
    /// PSN state loaded from the context (`next_send_psn`) at the first send.
    pub started: bool,
    /// Next PSN to send.
    pub next_psn: u32,
    /// Executed WQEs not yet completed, in order.
    pub pending: VecDeque<Pending>,
    /// Transport retries left (`retry_count`), reset by progress.
    pub retry_left: u8,
    /// RNR retries left (`rnr_retry`, 7 = infinite), reset by progress.
    pub rnr_left: u8,
    /// Retransmission deadline (no response within the local ACK timeout).
    pub timer: Option<Instant>,
    /// RNR wait: nothing is sent before this time.
    pub rnr_until: Option<Instant>,
    /// Responder state (`transport.rs`).
    pub resp: RespState,
    /// Strict `wqe_fetch_catastrophic`: the WQE whose fetch failed; the send queue
    /// completes nothing from it on (flushes stop there) until the QP is reset.
    pub fetch_failed: Option<u16>,
}

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
    /// Transport counters (`transport.rs`).
    pub transport: super::transport::TransportStats,
    /// Packets to this port's own LID, not yet handled.
    pub loopback: VecDeque<Packet>,
}

/// Where a QP's send queue lies.
struct SqLayout {
    pas: Vec<u64>,
    page: u64,
    base: u64,
    bbs: u64,
}

/// Why the executor stops.
enum Flow {
    Next,
    Stop,
}

/// Why a send WQE could not be fetched.
enum FetchError {
    /// Its bytes could not be read: a WQEBB outside the QP's buffer, a DMA read the
    /// host's memory refuses (`Some`: what failed), or fault `wqe_dma` (`None`).
    Dma(Option<String>),
    /// Read, but not a WQE the device can execute.
    Malformed(String),
}

impl Firmware {
    /// A UAR write the EQ doorbells did not take: a CQ arm (+0x20 / +0x24) or a send
    /// doorbell (first 8 bytes of a BlueFlame half, +0x800 …). Other offsets (the
    /// rest of a BlueFlame copy) are ignored.
    pub fn uar_write(&mut self, env: &Env<'_>, page: u32, off: usize, val: u32) {
        if off == vals::UAR_CQ_DOORBELL {
            self.objs.cq_arm_words.insert(page, val);
        } else if off == vals::UAR_CQ_DOORBELL + 4 {
            match self.objs.cq_arm_words.remove(&page) {
                Some(word) => self.cq_arm_doorbell(env, page, val & 0xff_ffff, word),
                None => self
                    .stats
                    .violation(format!("CQ doorbell on UAR {page} without its arm word")),
            }
        } else if (vals::UAR_BF_OFFSET..vals::UAR_BF_OFFSET + vals::BFREGS_PER_UAR * 2 * BF_HALF)
            .contains(&off)
            && (off - vals::UAR_BF_OFFSET) % BF_HALF == 4
        {
            // The second dword of the control segment's first 8 bytes: QPN in 31:8.
            self.send_doorbell(env, page, val >> 8);
        }
    }

    fn send_doorbell(&mut self, env: &Env<'_>, page: u32, qpn: u32) {
        let t0 = Instant::now();
        let Some(qp) = self.objs.qps.get(&qpn) else {
            self.stats
                .violation(format!("send doorbell for unknown QP {qpn}"));
            return;
        };
        let f = |fl: crate::ifc::field::Field| fl.get(&qp.ctx).unwrap_or(0);
        if f(qpc::NO_SQ.raw()) != 0 {
            self.stats
                .violation(format!("send doorbell for QP {qpn} without a send queue"));
            return;
        }
        let uar = f(qpc::UAR_PAGE.raw()) as u32;
        if uar != page {
            self.stats.violation(format!(
                "send doorbell for QP {qpn} on UAR {page}, not its UAR {uar}"
            ));
            return;
        }
        self.dp.send.doorbells += 1;
        self.sq_execute(env, qpn);
        self.dp_pump(env);
        let ns = t0.elapsed().as_nanos() as u64;
        self.dp.send.doorbell_time.record(ns);
    }

    fn sq_layout(&self, qpn: u32) -> Option<SqLayout> {
        let qp = self.objs.qps.get(&qpn)?;
        let f = |fl: crate::ifc::field::Field| fl.get(&qp.ctx).unwrap_or(0);
        let rq_bytes = if f(qpc::RQ_TYPE.raw()) == 0 {
            (1u64 << f(qpc::LOG_RQ_SIZE.raw())) << (f(qpc::LOG_RQ_STRIDE.raw()) + 4)
        } else {
            0
        };
        let page = 4096u64 << f(qpc::LOG_PAGE_SIZE.raw());
        // page_offset in page_size / 64 units (see `create_qp`); the SQ follows the RQ.
        Some(SqLayout {
            pas: qp.pas.clone(),
            page,
            base: f(qpc::PAGE_OFFSET.raw()) * (page / 64) + rq_bytes,
            bbs: 1u64 << f(qpc::LOG_SQ_SIZE.raw()),
        })
    }

    /// `len` bytes of the send queue from WQEBB `ctr` on, wrapping at its end.
    fn sq_read(
        &mut self,
        env: &Env<'_>,
        l: &SqLayout,
        ctr: u16,
        len: usize,
    ) -> Result<Vec<u8>, String> {
        let mut out = vec![0u8; len];
        for (i, chunk) in out.chunks_mut(vals::SEND_WQE_BB).enumerate() {
            let bb = (u64::from(ctr) + i as u64) % l.bbs;
            let off = l.base + bb * vals::SEND_WQE_BB as u64;
            let addr = buf_addr(&l.pas, l.page, off)
                .ok_or_else(|| format!("WQEBB {bb} outside the QP's buffer"))?;
            env.mem
                .read(addr, chunk)
                .map_err(|e| format!("DMA read of WQEBB {bb}: {e}"))?;
        }
        Ok(out)
    }

    /// The producer counter of QP `qpn`'s doorbell record (DW1, 16 bits).
    fn sq_head(&mut self, env: &Env<'_>, qpn: u32) -> Option<u16> {
        let qp = self.objs.qps.get(&qpn)?;
        let dbr = qpc::DBR_ADDR.raw().get(&qp.ctx).unwrap_or(0);
        let mut db = [0u8; 4];
        if let Err(e) = env.mem.read(dbr.wrapping_add(4), &mut db) {
            self.stats
                .dma_error(format!("QP {qpn} doorbell record: {e}"));
            return None;
        }
        Some(u32::from_be_bytes(db) as u16)
    }

    /// Executes QP `qpn`'s posted WQEs in order as its state allows: RTS (and SQD's
    /// drain) executes; ERR and SQER flush them with error CQEs; RST, INIT, RTR keep
    /// them (PRM QP states). Stops at a fence, an RNR wait or an error.
    pub(crate) fn sq_execute(&mut self, env: &Env<'_>, qpn: u32) {
        let Some(qp) = self.objs.qps.get(&qpn) else {
            return;
        };
        match qp.state {
            state::RTS | state::SQD => {}
            state::ERR | state::SQER => {
                self.sq_flush(env, qpn);
                return;
            }
            _ => return,
        }
        if qp.dp_send.rnr_until.is_some() {
            return;
        }
        let Some(kind) = QpKind::from_st(qp.st) else {
            self.stats
                .violation(format!("send doorbell for QP {qpn} of type {:#x}", qp.st));
            return;
        };
        let Some(head) = self.sq_head(env, qpn) else {
            return;
        };
        let Some(l) = self.sq_layout(qpn) else {
            return;
        };
        let mut n = 0;
        loop {
            let Some(qp) = self.objs.qps.get(&qpn) else {
                return;
            };
            let ctr = qp.sq_consumed;
            if ctr == head || n >= MAX_WQES_PER_DOORBELL || qp.state != state::RTS {
                break;
            }
            n += 1;
            let t0 = Instant::now();
            // Fault on demand `wqe_dma` (dp/fault.rs): this WQE's fetch fails as an
            // IOMMU / PCIe error would.
            let fetched = if self.fault_wqe_dma(qpn, ctr) {
                Err(FetchError::Dma(None))
            } else {
                self.sq_fetch(env, &l, qpn, ctr, kind)
            };
            let w = match fetched {
                Ok(w) => w,
                Err(e) => {
                    self.sq_fetch_failed(env, qpn, ctr, e);
                    break;
                }
            };
            // Fence (PRM fence modes; upstream sets FENCE for IB_SEND_FENCE and
            // SMALL_AND_FENCE / INITIATOR_SMALL around UMR): a fenced WQE waits until
            // every earlier READ and atomic has its response.
            let fenced = matches!(
                w.fence,
                vals::FENCE_MODE_FENCE | vals::FENCE_MODE_SMALL_AND_FENCE
            );
            if fenced
                && self.objs.qps[&qpn]
                    .dp_send
                    .pending
                    .iter()
                    .any(|p| p.needs_response && p.status == Status::Waiting)
            {
                self.dp.send.transport.fence_waits += 1;
                break;
            }
            let flow = self.exec_wqe(env, qpn, kind, w);
            self.dp.send.wqes += 1;
            self.dp.send.wqe_time.record(t0.elapsed().as_nanos() as u64);
            self.sq_complete(env, qpn);
            if let Flow::Stop = flow {
                break;
            }
        }
    }

    /// Reads and decodes WQE `ctr`.
    fn sq_fetch(
        &mut self,
        env: &Env<'_>,
        l: &SqLayout,
        qpn: u32,
        ctr: u16,
        kind: QpKind,
    ) -> Result<SendWqe, FetchError> {
        let dma = |e| FetchError::Dma(Some(e));
        let first = self.sq_read(env, l, ctr, vals::SEND_WQE_DS).map_err(dma)?;
        let (ctrl, ds) = wqe::ctrl_of(&first).map_err(FetchError::Malformed)?;
        let ooi = ctrl.opmod_idx_opcode.get();
        // The control segment names its own index and QP (upstream
        // `mlx5r_finish_wqe`, libmlx5 `_mlx5_post_send`: `cur_post & 0xffff`).
        if (ooi >> 8) as u16 != ctr || ctrl.qpn_ds.get() >> 8 != qpn {
            return Err(FetchError::Malformed(format!(
                "control segment names index {:#x}, QP {:#x}",
                (ooi >> 8) & 0xffff,
                ctrl.qpn_ds.get() >> 8
            )));
        }
        let len = ds * vals::SEND_WQE_DS;
        if len as u64 > l.bbs * vals::SEND_WQE_BB as u64 {
            return Err(FetchError::Malformed(format!(
                "ds {ds} larger than the send queue"
            )));
        }
        let bytes = self.sq_read(env, l, ctr, len).map_err(dma)?;
        wqe::decode(&bytes, kind).map_err(FetchError::Malformed)
    }

    /// WQE `ctr` of QP `qpn` could not be fetched (emu/README.md, "Send queues").
    ///
    /// Malformed: the WQE completes with a local QP operation error (PRM completion
    /// syndromes), the QP to ERR, a violation. Not readable (a real DMA error or fault
    /// `wqe_dma`): the same error completion, then `WQ_CATAS_ERROR` (IBTA 11.6.3.1
    /// "Local Work Queue Catastrophic Error"; upstream mlx5_ib `IB_EVENT_QP_FATAL`);
    /// a real one is counted as a DMA error. Strict `wqe_fetch_catastrophic`: no
    /// completion for it (the catastrophic error "prevents the reporting of
    /// completions"), the QP to ERR with the send queue stopped at that WQE.
    fn sq_fetch_failed(&mut self, env: &Env<'_>, qpn: u32, ctr: u16, e: FetchError) {
        let unreadable = matches!(e, FetchError::Dma(_));
        match e {
            FetchError::Malformed(msg) => {
                self.dp.send.malformed += 1;
                self.stats
                    .violation(format!("QP {qpn} send WQE {ctr}: {msg}"));
            }
            FetchError::Dma(real) => {
                self.dp.send.fetch_errors += 1;
                if let Some(msg) = real {
                    self.stats
                        .dma_error(format!("QP {qpn} send WQE {ctr}: {msg}"));
                }
                if self.strict.wqe_fetch_catastrophic {
                    if let Some(qp) = self.objs.qps.get_mut(&qpn) {
                        qp.dp_send.fetch_failed = Some(ctr);
                    }
                    self.qp_to_error(env, qpn);
                    self.wq_catas_event(env, qpn);
                    return;
                }
            }
        }
        self.sq_push(
            qpn,
            Pending {
                wqe_counter: ctr,
                opcode: 0,
                signalled: true,
                psn: 0,
                npsn: 0,
                pkt: None,
                local: Vec::new(),
                byte_cnt: 0,
                needs_response: false,
                status: Status::Failed(vals::SYNDROME_LOCAL_QP_OP_ERR),
            },
            1,
        );
        self.sq_complete(env, qpn);
        if unreadable {
            self.wq_catas_event(env, qpn);
        }
    }

    /// Queues an executed WQE and moves the consumer counter past it.
    fn sq_push(&mut self, qpn: u32, p: Pending, bbs: u16) {
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

    /// The header of a packet QP `qpn` sends: connected QPs to their remote QP and
    /// path (`qpc.remote_qpn`, `primary_address_path`), datagrams to `av`.
    fn tx_header(
        &self,
        qpn: u32,
        psn: u32,
        solicited: bool,
        av: Option<&crate::ifc::av::Av>,
    ) -> Header {
        let qp = &self.objs.qps[&qpn];
        let f = |fl: crate::ifc::field::Field| fl.get(&qp.ctx).unwrap_or(0);
        let p = qpc::PRIMARY_ADDRESS_PATH.raw().byte_off();
        let path = qp.ctx.get(p..).unwrap_or(&[]);
        let pf = |fl: crate::ifc::field::Field| fl.get(path).unwrap_or(0);
        let pkey_index = pf(ads::PKEY_INDEX.raw()) as usize;
        let pkey = self
            .ib_port
            .pkeys
            .get(pkey_index)
            .copied()
            .unwrap_or(0xffff);
        let sgid_of = |idx: usize| -> [u8; 16] {
            let mut g = [0u8; 16];
            g[..8].copy_from_slice(&self.ib_port.subnet_prefix.to_be_bytes());
            g[8..].copy_from_slice(
                &self
                    .ib_port
                    .guids
                    .get(idx)
                    .copied()
                    .unwrap_or(0)
                    .to_be_bytes(),
            );
            g
        };
        let (dlid, dqpn, sl, grh) = match av {
            Some(av) => {
                let g = av.grh_gid_fl.get();
                let grh = (g & crate::ifc::av::AV_GRH != 0).then(|| Grh {
                    sgid: sgid_of(((g >> 20) & 0xff) as usize),
                    dgid: av.rgid,
                    tclass: av.tclass,
                    flow_label: g & 0xf_ffff,
                    hop_limit: av.hop_limit,
                });
                (
                    av.rlid.get(),
                    av.dqp_dct.get() & 0xff_ffff,
                    av.stat_rate_sl & 0xf,
                    grh,
                )
            }
            None => {
                let grh = (pf(ads::GRH.raw()) != 0).then(|| {
                    let mut dgid = [0u8; 16];
                    if let Some(b) = ads::RGID_RIP.raw().bytes(path) {
                        dgid.copy_from_slice(&b[..16]);
                    }
                    Grh {
                        sgid: sgid_of(pf(ads::SRC_ADDR_INDEX.raw()) as usize),
                        dgid,
                        tclass: pf(ads::TCLASS.raw()) as u8,
                        flow_label: pf(ads::FLOW_LABEL.raw()) as u32,
                        hop_limit: pf(ads::HOP_LIMIT.raw()) as u8,
                    }
                });
                (
                    pf(ads::RLID.raw()) as u16,
                    f(qpc::REMOTE_QPN.raw()) as u32,
                    pf(ads::SL.raw()) as u8,
                    grh,
                )
            }
        };
        // The source QPN a datagram carries (DETH): 0 / 1 for the MAD QPs, the
        // context's `deth_sqpn` when set (upstream's GSI send QPs, `set_deth_sqpn`),
        // else the QP's number (IBTA 9.6.1.4 / 13.5).
        let sqpn = match qp.st {
            super::super::qp_state::st::QP0 => 0,
            super::super::qp_state::st::QP1 => 1,
            _ => match f(qpc::DETH_SQPN.raw()) as u32 {
                0 => qpn,
                n => n,
            },
        };
        let mlid = pf(ads::MLID.raw()) as u16;
        Header {
            slid: self.ib_port.lid | (mlid & ((1u16 << self.ib_port.lmc) - 1)),
            dlid,
            sl,
            grh,
            pkey,
            dqpn,
            sqpn,
            psn,
            solicited,
        }
    }

    /// Executes one decoded WQE: a [`Pending`] entry, a packet to the port.
    fn exec_wqe(&mut self, env: &Env<'_>, qpn: u32, kind: QpKind, w: SendWqe) -> Flow {
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
                if data.len() > max_msg {
                    p.status = Status::Failed(vals::SYNDROME_LOCAL_LENGTH_ERR);
                    None
                } else {
                    match self.gather(env, pd, data) {
                        Err(syn) => {
                            p.status = Status::Failed(syn);
                            None
                        }
                        Ok(payload) => {
                            self.dp.send.bytes += payload.len() as u64;
                            let kind_ = match w.opcode {
                                opcode::SEND_IMM => SendKind::Imm(w.imm),
                                opcode::SEND_INVAL => SendKind::Inv(w.imm),
                                _ => SendKind::Plain,
                            };
                            // A Q_Key with its top bit set means "the QP's own" (IBTA
                            // 10.2.5 controlled Q_Keys).
                            let qk = av.as_ref().map(|a| {
                                let k =
                                    u32::from_be_bytes([a.key[0], a.key[1], a.key[2], a.key[3]]);
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
            }
            Op::Write { raddr, data } => {
                if data.len() > max_msg {
                    p.status = Status::Failed(vals::SYNDROME_LOCAL_LENGTH_ERR);
                    None
                } else {
                    match self.gather(env, pd, data) {
                        Err(syn) => {
                            p.status = Status::Failed(syn);
                            None
                        }
                        Ok(payload) => {
                            self.dp.send.bytes += payload.len() as u64;
                            Some((
                                None,
                                Body::Write {
                                    va: raddr.raddr.get(),
                                    rkey: raddr.rkey.get(),
                                    imm: (w.opcode == opcode::RDMA_WRITE_IMM).then_some(w.imm),
                                    xrc_srqn: w.xrc_srqn,
                                    payload,
                                },
                            ))
                        }
                    }
                }
            }
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
    fn sq_flush(&mut self, env: &Env<'_>, qpn: u32) {
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
