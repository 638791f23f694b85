//! Send doorbells and the executor that walks a send queue. See [`super`].
//!
//! A UAR write the EQ doorbells did not take is a CQ arm or a send doorbell (the first
//! 8 bytes of the control segment in a BlueFlame half); the doorbell makes the device
//! execute the QP's WQEs from its consumer counter to the doorbell record's producer
//! counter, in order, as the QP's state allows, stopping at a fence, an RNR wait or an
//! error.

use crate::fw::dp::send::execute::Flow;
use crate::fw::dp::send::fetch::{FetchError, MAX_WQES_PER_DOORBELL};
use crate::fw::dp::send::state::Status;
use crate::fw::dp::wqe::QpKind;
use crate::fw::qp_state::state;
use crate::fw::{Env, Firmware};
use crate::ifc::qp::qpc;
use crate::ifc::wqe::vals;
use std::time::Instant;

/// Size of one BlueFlame register half (cap `log_bf_reg_size` 9: 512-byte registers
/// used in two 256-byte halves, upstream `bf_reg_size / 2`).
const BF_HALF: usize = 256;

impl Firmware {
    /// A UAR write the EQ doorbells did not take: a CQ arm (+0x20 / +0x24) or a send
    /// doorbell (first 8 bytes of a BlueFlame half, +0x800 …). Other offsets (the
    /// rest of a BlueFlame copy) are ignored.
    pub fn uar_write(&mut self, env: &Env<'_>, page: u32, off: usize, val: u32) {
        // A CQ arm or send doorbell on a UAR page of the function a teardown or a
        // firmware restart stopped reaches nothing: counted, ignored (as the EQ
        // doorbells after a stop; upstream mlx5_ib's `mlx5_ib_handle_internal_error`
        // calls its kernel CQs' completion handlers, whose consumers poll and re-arm
        // after the firmware went away).
        let send = (vals::UAR_BF_OFFSET..vals::UAR_BF_OFFSET + vals::BFREGS_PER_UAR * 2 * BF_HALF)
            .contains(&off)
            && (off - vals::UAR_BF_OFFSET) % BF_HALF == 4;
        if !self.uar_owned(page) && self.uar_stopped(page) {
            // One count per doorbell: the CQN dword of a CQ arm, the QPN dword of a send.
            if send || off == vals::UAR_CQ_DOORBELL + 4 {
                self.stats.uar_doorbells_after_stop += 1;
            }
            return;
        }
        if off == vals::UAR_CQ_DOORBELL {
            self.objs.cq_arm_words.insert(page, val);
        } else if off == vals::UAR_CQ_DOORBELL + 4 {
            match self.objs.cq_arm_words.remove(&page) {
                Some(word) => self.cq_arm_doorbell(env, page, val & 0xff_ffff, word),
                None => self
                    .stats
                    .violation(format!("CQ doorbell on UAR {page} without its arm word")),
            }
        } else if send {
            // The second dword of the control segment's first 8 bytes: QPN in 31:8.
            self.send_doorbell(env, page, val >> 8);
        }
    }

    fn send_doorbell(&mut self, env: &Env<'_>, page: u32, qpn: u32) {
        let t0 = Instant::now();
        let Some(qp) = self.objs.qps.get(&qpn) else {
            if self.objs.destroyed_qp_uar.get(&qpn) == Some(&page) {
                self.stats.doorbells_after_destroy += 1;
            } else {
                self.stats
                    .violation(format!("send doorbell for unknown QP {qpn}"));
            }
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
}
