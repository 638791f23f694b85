//! CQE writing, completion events and CQ overrun. See [`super`].
//!
//! [`Firmware::cqe_post`] writes one CQE in the format the CQ was created with (64 or
//! 128 bytes; in a 128-byte entry the 64-byte CQE is the second half), with the owner
//! bit of its pass over the ring and the byte holding it written last; checks the
//! consumer index in the CQ doorbell record first (CQ overrun: no CQE, a CQ error
//! event); raises the completion EQE of an armed CQ. [`Firmware::cq_arm_doorbell`] is
//! the UAR arm doorbell (+0x20 / +0x24), [`Firmware::cq_completion_event`] the EQE.
//!
//! Rules and sources: emu/README.md, "Data path" → "Completions".

use super::super::{eq, Env, Firmware};
use super::fault::{mangle_cqe, BadCqeField, CqeFault};
use crate::ifc::caps::cmd_hca_cap as g;
use crate::ifc::cq::cqc;
use crate::ifc::eqe::{event_type, Eqe, EqeComp, EqeCqErr};
use crate::ifc::qp::qpc;
use crate::ifc::srq::xrc_srqc;
use crate::ifc::wqe::{vals, Cqe64, ErrCqe};
use zerocopy::byteorder::big_endian::U32;
use zerocopy::{FromZeros, IntoBytes};

/// What completed (the CQE opcode and its opcode-specific fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CqeOp {
    /// Requester completion; `send_opcode` = the WQE's opcode (`sop_drop_qpn` 31:24).
    Req {
        /// Send WQE opcode.
        send_opcode: u8,
    },
    /// Responder: SEND received.
    RespSend,
    /// Responder: SEND with immediate received.
    RespSendImm,
    /// Responder: SEND with invalidate received.
    RespSendInv,
    /// Responder: RDMA WRITE with immediate received.
    RespWriteImm,
    /// Requester error (syndrome: `vals::SYNDROME_*`).
    ReqErr {
        /// Syndrome.
        syndrome: u8,
        /// Vendor syndrome.
        vendor: u8,
    },
    /// Responder error.
    RespErr {
        /// Syndrome.
        syndrome: u8,
        /// Vendor syndrome.
        vendor: u8,
    },
}

impl CqeOp {
    /// The CQE opcode (`op_own` 7:4).
    pub fn opcode(self) -> u8 {
        match self {
            CqeOp::Req { .. } => vals::CQE_REQ,
            CqeOp::RespSend => vals::CQE_RESP_SEND,
            CqeOp::RespSendImm => vals::CQE_RESP_SEND_IMM,
            CqeOp::RespSendInv => vals::CQE_RESP_SEND_INV,
            CqeOp::RespWriteImm => vals::CQE_RESP_WR_IMM,
            CqeOp::ReqErr { .. } => vals::CQE_REQ_ERR,
            CqeOp::RespErr { .. } => vals::CQE_RESP_ERR,
        }
    }

    /// An error completion.
    pub fn is_error(self) -> bool {
        matches!(self, CqeOp::ReqErr { .. } | CqeOp::RespErr { .. })
    }
}

/// One CQE to write. Fields a kind does not use are ignored.
#[derive(Clone, Copy, Debug)]
pub struct CqeDesc {
    /// Kind.
    pub op: CqeOp,
    /// The QP completing.
    pub qpn: u32,
    /// Send: WQE index in WQEBBs; receive queue: WQE counter; SRQ: WQE index.
    pub wqe_counter: u16,
    /// Bytes (responder: received; requester: RDMA read length / 8 for atomics).
    pub byte_cnt: u32,
    /// Immediate data (big-endian value as sent) or the invalidated rkey.
    pub imm_inval: u32,
    /// Responder: source QPN.
    pub src_qpn: u32,
    /// Responder: source LID.
    pub slid: u16,
    /// Responder: SL.
    pub sl: u8,
    /// Responder: destination LID path bits.
    pub path_bits: u8,
    /// Responder: the packet had a GRH.
    pub grh: bool,
    /// SRQ / RMP / XRC SRQ the receive WQE came from (0: none).
    pub srqn: u32,
    /// Solicited event requested (send WQE `fm_ce_se` SE / the packet's SE bit).
    pub solicited: bool,
    /// User index to write when neither the SRQ nor the QP exists any more (CQE
    /// version 1); otherwise the index comes from their contexts.
    pub user_index: u32,
    /// Responder SEND without immediate: the packet's P_Key (BTH), written where the
    /// immediate would be (upstream `handle_responder` reads it for QP1 and looks its
    /// index up; libmlx5 takes the low 16 bits as `pkey_index`).
    pub pkey: u16,
}

impl CqeDesc {
    /// A descriptor of kind `op` for QP `qpn`, WQE `wqe_counter`, other fields zero.
    pub fn new(op: CqeOp, qpn: u32, wqe_counter: u16) -> Self {
        CqeDesc {
            op,
            qpn,
            wqe_counter,
            byte_cnt: 0,
            imm_inval: 0,
            src_qpn: 0,
            slid: 0,
            sl: 0,
            path_bits: 0,
            grh: false,
            srqn: 0,
            solicited: false,
            user_index: 0,
            // The default P_Key (IBTA: full membership 0xffff at index 0).
            pkey: 0xffff,
        }
    }
}

/// What [`Firmware::cqe_post`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CqPost {
    /// The CQE is in the CQ.
    Written,
    /// The CQ was full (or already in error): no CQE written.
    Overrun,
    /// No such CQ, or its buffer / doorbell record is not mapped.
    Dma,
}

/// Per-CQ data-path state.
#[derive(Clone, Debug, Default)]
pub struct CqState {
    /// The CQ is in error (overrun or a failed CQE write) and takes no more CQEs
    /// (PRM CQ error state).
    pub overrun: bool,
    /// Producer counter after the newest solicited or error CQE (arming with
    /// solicited-only fires at once when it is beyond the consumer index).
    pub last_solicited: Option<u32>,
    /// CQEs written.
    pub cqes: u64,
}

/// Function-wide CQE statistics (`stats` → `dp` → `cqes`).
#[derive(Clone, Debug, Default)]
pub struct CqePath {
    /// CQEs written, all kinds.
    pub written: u64,
    /// Requester CQEs.
    pub requester: u64,
    /// Responder CQEs.
    pub responder: u64,
    /// Error CQEs (requester and responder).
    pub errors: u64,
    /// Flush errors among them.
    pub flushed: u64,
    /// 128-byte CQEs among them.
    pub wide: u64,
    /// CQEs not written because the CQ was full or in error.
    pub overruns: u64,
    /// CQ error events raised (overrun, failed CQE write).
    pub cq_error_events: u64,
    /// Completion EQEs raised.
    pub completion_events: u64,
    /// CQ arm doorbells taken.
    pub arms: u64,
    /// RESIZE_CQ CQEs written (MODIFY_CQ resize).
    pub resizes: u64,
    /// CQEs that could not be written (no CQ, unmapped buffer or doorbell record).
    pub dma_errors: u64,
}

impl CqePath {
    /// The `stats` → `dp` → `cqes` object.
    pub fn report(&self) -> serde_json::Value {
        serde_json::json!({
            "written": self.written,
            "requester": self.requester,
            "responder": self.responder,
            "errors": self.errors,
            "flushed": self.flushed,
            "wide": self.wide,
            "overruns": self.overruns,
            "cq_error_events": self.cq_error_events,
            "completion_events": self.completion_events,
            "arms": self.arms,
            "resizes": self.resizes,
            "dma_errors": self.dma_errors,
        })
    }
}

/// Guest address of byte `off` of a queue buffer made of `pas` pages of `page` bytes.
pub(crate) fn buf_addr(pas: &[u64], page: u64, off: u64) -> Option<u64> {
    let i = usize::try_from(off / page).ok()?;
    pas.get(i)?.checked_add(off % page)
}

/// 24-bit counters.
const CTR_MASK: u32 = 0xff_ffff;

impl Firmware {
    /// The value of the CQE's `srqn` field: CQE version 1 (cap `cqe_version`; upstream
    /// sets the contexts' `user_index` exactly then) carries the user index of the XRC
    /// SRQ a receive came from or else of the QP (libmlx5 `get_resp_ctx_v1` /
    /// `get_req_context` look it up so); version 0 carries the SRQ number of an SRQ
    /// receive, 0 otherwise (libmlx5 `get_cur_rsc`, mlx5_ib `handle_responder`).
    pub fn cqe_srqn_field(&self, d: &CqeDesc) -> u32 {
        if self.caps.cur(g::CQE_VERSION.raw()) != u64::from(vals::CQE_VERSION_V1) {
            return d.srqn & CTR_MASK;
        }
        let xrc_srq = (d.srqn != 0)
            .then(|| self.objs.srqs.get(&d.srqn))
            .flatten()
            .filter(|q| q.kind == crate::fw::rsc::SrqKind::Xrc);
        let uidx = match (xrc_srq, self.objs.qps.get(&d.qpn)) {
            // `user_index_equal_xrc_srqn`: the XRC SRQ's number serves as its index.
            (Some(q), _) if xrc_srqc::USER_INDEX_EQUAL_XRC_SRQN.raw().get(&q.ctx) == Some(1) => {
                Some(u64::from(d.srqn))
            }
            (Some(q), _) => xrc_srqc::USER_INDEX.raw().get(&q.ctx),
            (None, Some(qp)) => qpc::USER_INDEX.raw().get(&qp.ctx),
            (None, None) => None,
        };
        uidx.map_or(d.user_index, |u| u as u32) & CTR_MASK
    }

    /// The 64 bytes of the CQE `d` with owner bit `owner`.
    fn cqe_bytes(&self, d: &CqeDesc, owner: u8) -> [u8; 64] {
        let srqn = self.cqe_srqn_field(d);
        let op_own = (d.op.opcode() << 4) | (owner & vals::CQE_OWNER_MASK);
        let mut out = [0u8; 64];
        match d.op {
            CqeOp::ReqErr { syndrome, vendor } | CqeOp::RespErr { syndrome, vendor } => {
                // mlx5_ib `mlx5_handle_error_cqe` / libmlx5 read syndrome, vendor
                // syndrome, the QPN (and for requester errors the WQE opcode) and the
                // WQE counter.
                let mut e = ErrCqe::new_zeroed();
                e.srqn.set(srqn);
                e.syndrome = syndrome;
                e.vendor_err_synd = vendor;
                e.s_wqe_opcode_qpn.set(d.qpn & CTR_MASK);
                e.wqe_counter.set(d.wqe_counter);
                e.op_own = op_own;
                out.copy_from_slice(e.as_bytes());
            }
            op => {
                let mut e = Cqe64::new_zeroed();
                e.srqn.set(srqn);
                e.wqe_counter.set(d.wqe_counter);
                e.op_own = op_own;
                e.byte_cnt.set(d.byte_cnt);
                // PRM CQE `timestamp` (64 bits at 0x30): the internal timer when the
                // completion was generated, in the free-running format of a CQ created
                // without a real-time `cq_timestamp_format` (upstream converts it with
                // the clock of `device_frequency_khz`; libmlx5 `read_timestamp`).
                let ts = self.timer.now();
                e.timestamp_h.set((ts >> 32) as u32);
                e.timestamp_l.set(ts as u32);
                match op {
                    // Requester: `sop_drop_qpn` = WQE opcode and QPN (mlx5_ib
                    // `handle_good_req`; byte_cnt for RDMA read and atomics).
                    CqeOp::Req { send_opcode } => e
                        .sop_drop_qpn
                        .set((u32::from(send_opcode) << 24) | (d.qpn & CTR_MASK)),
                    // Responder (mlx5_ib `handle_responder`, libmlx5 `handle_responder`):
                    // immediate / invalidated rkey, source QPN with SL and GRH, SLID,
                    // path bits.
                    _ => {
                        e.sop_drop_qpn.set(d.qpn & CTR_MASK);
                        if op == CqeOp::RespSend {
                            e.imm_inval_pkey.set(u32::from(d.pkey));
                        } else {
                            e.imm_inval_pkey.set(d.imm_inval);
                        }
                        let mut flags = (d.src_qpn & CTR_MASK)
                            | (u32::from(d.sl & 0xf) << vals::CQE_FLAGS_SL_SHIFT);
                        if d.grh {
                            flags |= vals::CQE_FLAGS_GRH;
                        }
                        e.flags_rqpn.set(flags);
                        e.slid.set(d.slid);
                        e.ml_path = d.path_bits & 0x7f;
                    }
                }
                out.copy_from_slice(e.as_bytes());
            }
        }
        out
    }

    /// Writes the CQE `d` into CQ `cqn` (see the module doc).
    pub fn cqe_post(&mut self, env: &Env<'_>, cqn: u32, d: &CqeDesc) -> CqPost {
        // Faults on demand `lost_cqe` / `cqe_error` (dp/fault.rs): the CQE is not
        // written (the device reports it written), or an error CQE is written instead
        // and the QP goes to ERR.
        match self.fault_cqe(cqn, d) {
            CqeFault::None => self.cqe_write(env, cqn, d, None),
            CqeFault::Lost => CqPost::Written,
            CqeFault::Malformed(f) => self.cqe_write(env, cqn, d, Some(f)),
            CqeFault::Error(e) => {
                let r = self.cqe_write(env, cqn, &e, None);
                self.fault_cqe_done(env, e.qpn);
                r
            }
        }
    }

    /// [`Self::cqe_post`] without the faults, except `mangle` (fault `bad_cqe_*`: that
    /// field of the CQE written malformed; counted as the CQE it was).
    fn cqe_write(
        &mut self,
        env: &Env<'_>,
        cqn: u32,
        d: &CqeDesc,
        mangle: Option<BadCqeField>,
    ) -> CqPost {
        let Some(cq) = self.objs.cqs.get(&cqn) else {
            self.dp.cqe.dma_errors += 1;
            self.stats.violation(format!(
                "QP {:#x} completes into CQ {cqn:#x}, which does not exist",
                d.qpn
            ));
            return CqPost::Dma;
        };
        if cq.dp.overrun {
            self.dp.cqe.overruns += 1;
            return CqPost::Overrun;
        }
        let nent = 1u32 << cq.log_size;
        // Consumer index: CQ doorbell record DW0, 24 bits (upstream `mlx5_cq_set_ci`).
        let mut db = [0u8; 4];
        if let Err(e) = env.mem.read(cq.dbr, &mut db) {
            self.dp.cqe.dma_errors += 1;
            self.stats
                .dma_error(format!("CQ {cqn:#x} doorbell record: {e}"));
            return CqPost::Dma;
        }
        let ci = u32::from_be_bytes(db) & CTR_MASK;
        let used = cq.pi.wrapping_sub(ci) & CTR_MASK;
        // Overrun (PRM CQ overrun): the entry to write still holds an unconsumed CQE,
        // unless the CQ ignores overrun (`cqc.oi`, upstream IB_CQ_FLAGS_IGNORE_OVERRUN).
        let oi = cqc::OI.raw().get(&cq.ctx).unwrap_or(0) != 0;
        // Fault on demand `cq_overrun` (dp/fault.rs): the consumer index taken as not
        // advanced, the CQ full.
        if !oi && (used >= nent || self.dp.faults.cq_overrun(d.qpn, cqn)) {
            self.dp.cqe.overruns += 1;
            // Not a protocol violation: an application that does not poll its CQ
            // causes it as much as a driver; the event reports it.
            log::warn!("CQ {cqn:#x} overrun: no CQE written, CQ in error");
            self.cq_error(
                env,
                cqn,
                vals::CQ_ERROR_SYNDROME_CQ_OVERRUN,
                vals::CQC_STATUS_CQ_OVERFLOW,
            );
            return CqPost::Overrun;
        }
        let owner = ((cq.pi >> cq.log_size) & 1) as u8;
        let mut cqe = self.cqe_bytes(d, owner);
        if let Some(f) = mangle {
            cqe = mangle_cqe(cqe, f);
        }
        if let Err(p) = self.cq_write_entry(env, cqn, &cqe) {
            // The buffer is not where the CQ says: the CQ fails (PRM CQ error, access
            // violation).
            self.cq_error(
                env,
                cqn,
                vals::CQ_ERROR_SYNDROME_CQ_ACCESS_VIOLATION,
                vals::CQC_STATUS_CQ_WRITE_FAIL,
            );
            return p;
        }
        let s = &mut self.dp.cqe;
        match d.op {
            CqeOp::Req { .. } => s.requester += 1,
            CqeOp::ReqErr { syndrome, .. } | CqeOp::RespErr { syndrome, .. } => {
                s.errors += 1;
                s.flushed += u64::from(syndrome == vals::SYNDROME_WR_FLUSH_ERR);
            }
            _ => s.responder += 1,
        }
        let Some(cq) = self.objs.cqs.get_mut(&cqn) else {
            return CqPost::Written;
        };
        // Solicited-only arming reports solicited receives and unsuccessful
        // completions; a successful send completion is never solicited (IBTA
        // "Request Completion Notification"; ibv_req_notify_cq(3)).
        let solicited = match d.op {
            CqeOp::Req { .. } => false,
            op => op.is_error() || d.solicited,
        };
        if solicited {
            cq.dp.last_solicited = Some(cq.pi);
        }
        if cq.armed && (!cq.solicited_only || solicited) {
            self.cq_completion_event(env, cqn);
        }
        CqPost::Written
    }

    /// Writes the 64-byte CQE `cqe` (owner bit set) at the producer index of CQ `cqn`
    /// (the second half of a 128-byte entry, the first half zero), the byte with the
    /// owner bit last, and advances the producer index.
    fn cq_write_entry(&mut self, env: &Env<'_>, cqn: u32, cqe: &[u8; 64]) -> Result<(), CqPost> {
        let Some(cq) = self.objs.cqs.get(&cqn) else {
            return Err(CqPost::Dma);
        };
        let nent = 1u32 << cq.log_size;
        let page = 4096u64 << cq.log_page_size;
        // page_offset in page_size / 64 units (see `create_cq`).
        let base = cqc::PAGE_OFFSET.raw().get(&cq.ctx).unwrap_or(0) * (page / 64);
        let entry = base + u64::from(cq.pi & (nent - 1)) * u64::from(cq.cqe_bytes);
        let wide = cq.cqe_bytes == 128;
        let (Some(first), Some(last)) = (
            buf_addr(&cq.pas, page, entry),
            buf_addr(&cq.pas, page, entry + u64::from(cq.cqe_bytes) - 1),
        ) else {
            self.dp.cqe.dma_errors += 1;
            self.stats.violation(format!(
                "CQ {cqn:#x}: CQE {} outside its buffer",
                cq.pi & (nent - 1)
            ));
            return Err(CqPost::Dma);
        };
        // An entry never straddles a page (entries are 64 / 128 bytes, pages 4 KiB
        // multiples, page_offset 64-byte aligned), so `last` follows `first`.
        debug_assert_eq!(last - first, u64::from(cq.cqe_bytes) - 1);
        let mut bytes = vec![0u8; cq.cqe_bytes as usize];
        let at = bytes.len() - 64;
        bytes[at..].copy_from_slice(cqe);
        // The body first, the byte with the owner bit last: the CQE becomes valid whole
        // (the consumer checks the owner bit, then reads the body after a barrier).
        let n = bytes.len();
        let res = env
            .mem
            .write(first, &bytes[..n - 1])
            .and_then(|()| env.mem.write(first + n as u64 - 1, &bytes[n - 1..]));
        if let Err(e) = res {
            self.dp.cqe.dma_errors += 1;
            self.stats.dma_error(format!("CQ {cqn:#x} CQE: {e}"));
            return Err(CqPost::Dma);
        }
        self.dp.cqe.written += 1;
        self.dp.cqe.wide += u64::from(wide);
        if let Some(cq) = self.objs.cqs.get_mut(&cqn) {
            cq.pi = cq.pi.wrapping_add(1);
            cq.dp.cqes += 1;
        }
        Ok(())
    }

    /// MODIFY_CQ resize, before the CQ takes its new buffer: a RESIZE_CQ CQE (opcode
    /// 5) at the producer index of the old buffer, which the CQ keeps counting from in
    /// the new one. Upstream's `copy_resize_cqes` (mlx5_ib, and libmlx5's resize) moves
    /// the unpolled CQEs up to that CQE into the new buffer and fails without it. No
    /// overrun check (the driver stopped consuming to resize) and no event.
    pub fn cqe_post_resize(&mut self, env: &Env<'_>, cqn: u32) -> CqPost {
        let Some(cq) = self.objs.cqs.get(&cqn) else {
            return CqPost::Dma;
        };
        let owner = ((cq.pi >> cq.log_size) & 1) as u8;
        let mut e = Cqe64::new_zeroed();
        e.op_own = (vals::CQE_RESIZE_CQ << 4) | owner;
        let mut cqe = [0u8; 64];
        cqe.copy_from_slice(e.as_bytes());
        match self.cq_write_entry(env, cqn, &cqe) {
            Ok(()) => {
                self.dp.cqe.resizes += 1;
                CqPost::Written
            }
            Err(p) => p,
        }
    }

    /// The CQ enters error: it takes no more CQEs, `cqc.status` says why (QUERY_CQ),
    /// and the async EQ that subscribed to CQ errors gets `MLX5_EVENT_TYPE_CQ_ERROR`
    /// with `syndrome` (device.h `mlx5_eqe_cq_err`; upstream `cq_err_event_notifier`
    /// reads cqn and syndrome): overrun (1, status CQ_OVERFLOW) or a CQE the device
    /// could not write (2 access violation, status CQ_WRITE_FAIL).
    fn cq_error(&mut self, env: &Env<'_>, cqn: u32, syndrome: u8, status: u8) {
        let Some(cq) = self.objs.cqs.get_mut(&cqn) else {
            return;
        };
        if cq.dp.overrun {
            return;
        }
        cq.dp.overrun = true;
        let _ = cqc::STATUS.raw().set(&mut cq.ctx, u64::from(status));
        let mut e = Eqe::zeroed();
        e.set_cq_err(EqeCqErr {
            cqn: U32::new(cqn & CTR_MASK),
            rsvd1: [0; 7],
            syndrome,
            rsvd2: [0; 16],
        });
        match self.eqs.post(
            event_type::CQ_ERROR,
            0,
            &e.data,
            env.mem,
            env.irq,
            env.msix_ok,
        ) {
            eq::Posted::Dma(e) => self.stats.dma_error(format!("CQ error EQE: {e}")),
            eq::Posted::Written(_) => self.dp.cqe.cq_error_events += 1,
            _ => {}
        }
    }

    /// The CQ arm doorbell: `word` (UAR + 0x20: arm sequence 29:28, solicited-only
    /// bit 24, consumer index 23:0) and the CQN (UAR + 0x24), rung on the CQ's own UAR
    /// page (`cqc.uar_page`, upstream `mlx5_cq_arm`). Arms the CQ; when CQEs the
    /// consumer has not seen (for solicited-only: a solicited or error one) are already
    /// there, the event is raised at once (PRM CQ arming; upstream's "arm, then poll
    /// again" relies on it).
    pub fn cq_arm_doorbell(&mut self, env: &Env<'_>, page: u32, cqn: u32, word: u32) {
        let Some(cq) = self.objs.cqs.get_mut(&cqn) else {
            if self.objs.destroyed_cq_uar.get(&cqn) == Some(&page) {
                self.stats.doorbells_after_destroy += 1;
            } else {
                self.stats.violation(format!(
                    "CQ arm doorbell for unknown CQ {cqn:#x} on UAR {page}"
                ));
            }
            return;
        };
        if cq.uar != page {
            self.stats.violation(format!(
                "CQ arm doorbell for CQ {cqn:#x} on UAR {page}, not its UAR {}",
                cq.uar
            ));
            return;
        }
        self.dp.cqe.arms += 1;
        cq.armed = true;
        cq.solicited_only = word & vals::CQ_DB_REQ_NOT_SOL != 0;
        let ci = word & CTR_MASK;
        let nent = 1u32 << cq.log_size;
        // Beyond the consumer index: 1..=nent entries ahead of it.
        let beyond = |p: u32| (1..=nent).contains(&(p.wrapping_sub(ci) & CTR_MASK));
        let due = if cq.solicited_only {
            cq.dp.last_solicited.is_some_and(beyond)
        } else {
            beyond(cq.pi)
        };
        if due {
            self.cq_completion_event(env, cqn);
        }
    }

    /// The completion EQE of CQ `cqn` to the CQ's EQ (`cqc.c_eqn`, device.h
    /// `mlx5_eqe_comp`); disarms the CQ (one event per arming).
    pub fn cq_completion_event(&mut self, env: &Env<'_>, cqn: u32) {
        let Some(cq) = self.objs.cqs.get_mut(&cqn) else {
            return;
        };
        cq.armed = false;
        let eqn = cq.eqn;
        let mut e = Eqe::zeroed();
        e.set_comp(EqeComp {
            rsvd: [0; 24],
            cqn: U32::new(cqn & CTR_MASK),
        });
        match self.eqs.post_to(
            eqn,
            event_type::COMP,
            0,
            &e.data,
            env.mem,
            env.irq,
            env.msix_ok,
        ) {
            eq::Posted::Dma(e) => self.stats.dma_error(format!("completion EQE: {e}")),
            eq::Posted::Written(_) => self.dp.cqe.completion_events += 1,
            _ => {}
        }
    }
}
