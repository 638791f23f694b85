// SPDX-License-Identifier: GPL-2.0

//! A kernel CQ after the device's fatal error (kernel shell), as upstream's
//! internal-error state (`cq.c`, `main.c`): poll_cq reads the ring no more but
//! gives flush completions of every outstanding work request of the QPs on the CQ,
//! the send queues' first (upstream `mlx5_ib_poll_sw_comp`, [`KernelWq::flush`]);
//! the fatal error calls the completion handler of each CQ with outstanding work
//! once ([`super::kclean::KcqTable::internal_error`]), and a drain calls it again
//! (upstream `handle_drain_completion`, the shim's `ffi/rdma/ib_qp.c`, after
//! [`Cq::drain_notify`]).

use core::sync::atomic::Ordering;

use super::{Cq, CqEvents};
use crate::ffi::rdma::ib_dp_abi::IbWc;
#[cfg(doc)]
use crate::ib::qp::kdp::KernelWq;

impl CqEvents {
    /// Calls the core's completion handler (upstream `mcq->comp(mcq, NULL)`, which
    /// counts no event).
    pub(super) fn notify(&self) {
        let g = self.shim.lock();
        if let Some(s) = g.as_ref() {
            // SAFETY: `shim` is set only between create_cq and the start of
            // destroy_cq (which clears it under this lock before DESTROY_CQ).
            unsafe { s.completion() };
        }
    }
}

impl Cq {
    /// poll_cq after the fatal error: flush completions into `out`, how many.
    pub(super) fn sw_flush(&self, out: &mut [IbWc]) -> usize {
        let (Some(r), Some(e)) = (&self.kring, self.kcqs.entry(self.cqn())) else {
            return 0;
        };
        // Pollers of the CQ one at a time (upstream holds `cq->lock`).
        let _ps = r.poll.lock();
        let qps = e.qps.lock();
        let mut n = 0;
        for send in [true, false] {
            for (q, s) in qps.iter() {
                if *s == send && n < out.len() {
                    n += q.flush(send, &mut out[n..]);
                }
            }
        }
        n
    }

    /// A drain's call after the fatal error: marks the CQ notified and says whether
    /// it was already (its handler may have been scheduled: upstream
    /// `handle_drain_completion`'s `reset_notify_added`; the shim then waits for the
    /// handler's work and calls it itself).
    pub(super) fn drain_notify(&self) -> bool {
        let Some(e) = self.kcqs.entry(self.cqn()) else {
            return false;
        };
        e.reset_notified.swap(true, Ordering::AcqRel)
    }
}
