// SPDX-License-Identifier: GPL-2.0

//! The software flush of a kernel QP's outstanding work requests after a fatal error
//! (kernel shell), as upstream's `sw_comp` (`cq.c`): each request from `tail` to
//! `head` gets a work completion with `IB_WC_WR_FLUSH_ERR` and the vendor syndrome
//! `MLX5_CQE_SYNDROME_WR_FLUSH_ERR`, and `tail` moves past it; the send queue's in
//! order ([`super::flush::send_slot`]), the receive queue's by its ring. A QP on an
//! SRQ flushes no receive (upstream neither).

use core::sync::atomic::Ordering;

use super::flush::send_slot;
use super::kdp::{ib_status, KernelWq};
use crate::ffi::rdma::ib_dp_abi::IbWc;
use crate::ib::cq::wc_status::WcStatus;
use crate::ifc::wqe::vals::SYNDROME_WR_FLUSH_ERR;

impl KernelWq {
    /// A flush completion of this QP for `wr_id`.
    fn flushed(&self, wr_id: u64) -> IbWc {
        IbWc {
            wr_id,
            qp: self.ibqp,
            status: ib_status(WcStatus::WrFlushErr),
            vendor_err: u32::from(SYNDROME_WR_FLUSH_ERR),
            ..IbWc::default()
        }
    }

    /// Flush completions of the outstanding requests of the send queue (`send`) or
    /// the receive queue into `out`; how many were written. The caller holds the poll
    /// lock of the queue's CQ (the queue's one poller).
    pub(crate) fn flush(&self, send: bool, out: &mut [IbWc]) -> usize {
        let mut n = 0;
        if send {
            let s = &self.sq_slots;
            let head = s.head.load(Ordering::Acquire);
            let mut tail = s.tail.load(Ordering::Relaxed);
            while n < out.len() && tail != head {
                // A request no slot records (it cannot be: each post records its
                // start) ends the walk rather than completing with a wrong id.
                let heads = s.slots.iter().map(|w| w.wqe_head.load(Ordering::Relaxed));
                let Some(slot) = send_slot(heads, tail) else {
                    break;
                };
                let id = s
                    .slots
                    .get(slot)
                    .map_or(0, |w| w.wrid.load(Ordering::Relaxed));
                out[n] = self.flushed(id);
                n += 1;
                tail = tail.wrapping_add(1);
                s.tail.store(tail, Ordering::Release);
            }
        } else if self.srq.is_none() {
            let s = &self.rq_slots;
            let head = s.head.load(Ordering::Acquire);
            let mut tail = s.tail.load(Ordering::Relaxed);
            while n < out.len() && tail != head {
                out[n] = self.flushed(s.wr_id(tail));
                n += 1;
                tail = tail.wrapping_add(1);
                s.tail.store(tail, Ordering::Release);
            }
        }
        n
    }
}
