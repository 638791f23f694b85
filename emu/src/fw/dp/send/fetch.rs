//! Reading send WQEs from host memory: where the send queue lies, the doorbell
//! record's producer counter, one WQE read and decoded, and what a WQE that cannot be
//! fetched does (malformed, or not readable: a DMA error or fault `wqe_dma`). See
//! [`super`].

use crate::fw::dp::cqe::buf_addr;
use crate::fw::dp::send::state::{Pending, Status};
use crate::fw::dp::wqe::{self, QpKind, SendWqe};
use crate::fw::{Env, Firmware};
use crate::ifc::qp::qpc;
use crate::ifc::wqe::vals;

/// Most WQEs executed per doorbell (a bound on the work one guest write causes; the
/// rest waits for the next doorbell).
pub(super) const MAX_WQES_PER_DOORBELL: u32 = 1 << 16;

/// Where a QP's send queue lies.
pub(super) struct SqLayout {
    pas: Vec<u64>,
    page: u64,
    base: u64,
    bbs: u64,
}

/// Why a send WQE could not be fetched.
pub(super) enum FetchError {
    /// Its bytes could not be read: a WQEBB outside the QP's buffer, a DMA read the
    /// host's memory refuses (`Some`: what failed), or fault `wqe_dma` (`None`).
    Dma(Option<String>),
    /// Read, but not a WQE the device can execute.
    Malformed(String),
}

impl Firmware {
    pub(super) fn sq_layout(&self, qpn: u32) -> Option<SqLayout> {
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
    pub(super) fn sq_read(
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
    pub(super) fn sq_head(&mut self, env: &Env<'_>, qpn: u32) -> Option<u16> {
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

    /// Reads and decodes WQE `ctr`.
    pub(super) fn sq_fetch(
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
    pub(super) fn sq_fetch_failed(&mut self, env: &Env<'_>, qpn: u32, ctr: u16, e: FetchError) {
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
}
