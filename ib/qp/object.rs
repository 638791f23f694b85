// SPDX-License-Identifier: GPL-2.0

//! The QP object ([`Qp`]): what a QP keeps (its state and shadow attributes, its
//! memory, a kernel QP's data path), modify_qp, query_qp and its destruction.
//!
//! modify_qp resolves the current and next state, applies the core's rules
//! (`ib_modify_qp_is_ok()`) and the driver's ([`crate::ib::qp::modify::plan_modify`])
//! and runs the transition command; query_qp runs QUERY_QP and decodes the context. A
//! QP is moved to RESET (if it is not) and destroyed when dropped, then its memory is
//! released; if DESTROY_QP fails the memory goes to the function's graveyard
//! ([`Hw::keep`]) rather than back to the system under a device that may still use
//! it. post_send and post_recv are [`super::post`]'s.

use kernel::{
    device,
    dma::Coherent,
    new_mutex,
    prelude::*,
    sync::{aref::ARef, Arc, Mutex},
};
use zerocopy::IntoBytes;

use super::kernel_qp::{KernelDp, WQ_PAGE};
use super::QpEnv;
use crate::coherent_io;
use crate::ffi::rdma::{
    ib_qp::{modify_qp_is_ok, IbQp, QpAttr, QpInit, RecvChain, SendChain},
    udata::UserData,
    umem::Umem,
};
use crate::hw::Hw;
use crate::ib::abi::{
    qp::{modify_qp_response, parse_modify_qp},
    udata::put,
};
use crate::ib::qp::commands::{
    DestroyQp, Init2InitQp, Init2RtrQp, QpToErr, QpToRst, QueryQp, Rst2InitQp, Rtr2RtsQp,
    Rts2RtsQp, SqErr2RtsQp, Sqd2RtsQp,
};
use crate::ib::qp::modify::{
    after_modify, ib_state, mask, plan_modify, query_attr, ModifyPlan, QpShadow,
};
use crate::ib::uctx::{uabi_err, uar::BfregRef, UarHold};
use crate::ib::umem::UserDb;
use crate::ifc::opcodes::Opcode;

/// What changes under modify_qp.
pub(super) struct Live {
    pub(super) shadow: QpShadow,
    /// `enum ib_qp_state`.
    pub(super) state: u32,
}

/// The memory of a QP's work queues and doorbell record.
pub(super) enum QpMem {
    /// A user QP's pinned buffer (none without queues), its doorbell record and
    /// the bfreg it took.
    User {
        umem: Option<Umem>,
        db: UserDb,
        _bfreg: Option<BfregRef>,
        /// The UAR object's UAR the QP names (UAR_PAGE_INDEX), kept until it goes.
        _uar: Option<UarHold>,
    },
    /// A kernel QP's work queues (RQ then SQ, one allocation of whole 4 KiB pages)
    /// and doorbell record.
    Kernel {
        buf: Coherent<[u8]>,
        dbr: Coherent<[u8]>,
    },
    /// No work queue and no doorbell record (an XRC target).
    NoQueues,
}

/// A QP of the provider.
pub(super) struct Qp {
    pub(super) dev: ARef<device::Device>,
    pub(super) hw: Arc<Hw>,
    pub(super) qpn: u32,
    pub(super) ib_type: u32,
    pub(super) env: QpEnv,
    pub(super) rq_max_gs: u32,
    /// Send queue as the core sees it (`max_send_wr`, `max_send_sge`,
    /// `max_inline_data`): zero for a user QP (the library's business).
    pub(super) sq_cap: (u32, u32, u32),
    pub(super) sq_sig_all: bool,
    /// Lock order: held across a transition command and QUERY_QP (so
    /// `CmdQueue::state` is taken under it), so that the state the core sees is the
    /// device's. Never taken under an EQ's `Eq::state`: an event handler must not
    /// take it.
    pub(super) live: Arc<Mutex<Live>>,
    /// `None` once handed away (a failed destroy).
    pub(super) mem: Option<QpMem>,
    /// Kernel QPs: the data path.
    pub(super) kdp: Option<KernelDp>,
}

impl Qp {
    /// The QP object of QP `qpn`, just created, on the heap (written in place: the
    /// verb's caller may be deep in the core's stack, as the MAD layer's create at
    /// registration is); on failure the QP is destroyed and `mem` released.
    #[expect(clippy::too_many_arguments, reason = "what a QP keeps")]
    pub(super) fn new(
        dev: &device::Device,
        hw: &Arc<Hw>,
        qpn: u32,
        init: &QpInit,
        env: &QpEnv,
        rq_max_gs: u32,
        sq_cap: (u32, u32, u32),
        live: Live,
        mem: QpMem,
    ) -> Result<KBox<Self>> {
        let made = KBox::<Self>::new_uninit(GFP_KERNEL)
            .map_err(Error::from)
            .and_then(|b| Ok((b, Arc::pin_init(new_mutex!(live), GFP_KERNEL)?)));
        let (b, live) = match made {
            Ok(m) => m,
            Err(e) => {
                Self::teardown(hw, dev, qpn, mem, false);
                return Err(e);
            }
        };
        Ok(KBox::write(
            b,
            Self {
                dev: dev.into(),
                hw: hw.clone(),
                qpn,
                ib_type: init.qp_type,
                env: *env,
                rq_max_gs,
                sq_cap,
                sq_sig_all: init.sq_sig_all != 0,
                live,
                mem: Some(mem),
                kdp: None,
            },
        ))
    }

    /// Destroys QP `qpn` (moving it to RESET first when `to_reset`), then releases
    /// `mem`; if DESTROY_QP fails the device may still use the memory, so it goes to
    /// the function's graveyard ([`Hw::keep`]: unpinned and unmapped, or freed, once
    /// the function stopped DMA). The QP is gone for the core either way (upstream
    /// `destroy_qp_common` warns and goes on).
    fn teardown(hw: &Hw, dev: &device::Device, qpn: u32, mem: QpMem, to_reset: bool) {
        if to_reset {
            let _ = hw.exec_cmd(QpToRst { qpn });
        }
        let Err(e) = hw.exec_cmd(DestroyQp { qpn }) else {
            drop(mem);
            return;
        };
        dev_warn!(dev, "DESTROY_QP {:#x} failed\n", qpn);
        match mem {
            QpMem::User {
                umem,
                db,
                _bfreg,
                _uar,
            } => {
                let n = umem.as_ref().map_or(0, Umem::pages);
                hw.keep(dev, &e, n, (umem, db));
                // The UAR page is device memory: its doorbell register may be shared.
                drop(_bfreg);
                // The UAR hold goes: kept, it would keep the context and through it
                // this function's `Hw` (whose graveyard holds the memory above) alive
                // for good. A device object cannot ring a doorbell by itself.
                drop(_uar);
            }
            QpMem::Kernel { buf, dbr } => {
                let n = buf.size().div_ceil(WQ_PAGE) + 1;
                hw.keep(dev, &e, n, (buf, dbr));
            }
            QpMem::NoQueues => {}
        }
    }

    fn run_plan(&self, p: &ModifyPlan) -> Result {
        let (qpn, opt_mask, qpc) = (self.qpn, p.opt_mask, &p.qpc);
        match p.op {
            Opcode::RST2INIT_QP => self.hw.run(Rst2InitQp { qpn, opt_mask, qpc }),
            Opcode::INIT2INIT_QP => self.hw.run(Init2InitQp { qpn, opt_mask, qpc }),
            Opcode::INIT2RTR_QP => self.hw.run(Init2RtrQp { qpn, opt_mask, qpc }),
            Opcode::RTR2RTS_QP => self.hw.run(Rtr2RtsQp { qpn, opt_mask, qpc }),
            Opcode::RTS2RTS_QP => self.hw.run(Rts2RtsQp { qpn, opt_mask, qpc }),
            Opcode::SQERR2RTS_QP => self.hw.run(SqErr2RtsQp { qpn, opt_mask, qpc }),
            Opcode::SQD_RTS_QP => self.hw.run(Sqd2RtsQp { qpn, opt_mask, qpc }),
            Opcode::_2ERR_QP => self.hw.run(QpToErr { qpn }),
            Opcode::_2RST_QP => self.hw.run(QpToRst { qpn }),
            _ => Err(EINVAL),
        }
    }
}

impl IbQp for Qp {
    /// modify_qp: the transition the core checked, its command and QP context
    /// ([`plan_modify`]), then the response for a user QP.
    ///
    /// # Errors
    ///
    /// `EOPNOTSUPP` for attribute bits beyond the standard ones and RATE_LIMIT, and
    /// for a user request upstream refuses so (`abi::qp::parse_modify_qp`, which
    /// also gives `EINVAL` for a short one); `EINVAL` for a transition
    /// `ib_modify_qp_is_ok` refuses from the QP's own state; [`plan_modify`]'s
    /// refusals (`EOPNOTSUPP` for RATE_LIMIT or atomics the device lacks, `EINVAL`
    /// for a port, P_Key index, RDMA-read depth, rate or path out of range or a
    /// value wider than its context field); the transition command's errno
    /// ([`Hw::exec_cmd`]).
    fn modify(&self, attr: &QpAttr, ud: Option<UserData<'_>>) -> Result<usize> {
        let m = attr.attr_mask;
        if m & !(mask::STANDARD | mask::RATE_LIMIT) != 0 {
            return Err(EOPNOTSUPP);
        }
        if let Some(u) = &ud {
            parse_modify_qp(u.req, false).map_err(|e| uabi_err(&self.dev, "modify_qp", e))?;
        }
        let mut live = self.live.lock();
        let cur = if m & mask::CUR_STATE != 0 {
            attr.cur_qp_state
        } else {
            live.state
        };
        let new = if m & mask::STATE != 0 {
            attr.qp_state
        } else {
            cur
        };
        if m & mask::RATE_LIMIT == 0 && !modify_qp_is_ok(cur, new, self.ib_type, m) {
            dev_dbg!(
                self.dev,
                "QP {:#x}: no transition {} -> {} with mask {:#x}\n",
                self.qpn,
                cur,
                new,
                m
            );
            return Err(EINVAL);
        }
        let a = QpAttr {
            cur_qp_state: cur,
            qp_state: new,
            ..*attr
        };
        if let Some(p) = plan_modify(&live.shadow, &a, &self.env.modify)? {
            self.run_plan(&p)?;
        }
        // A kernel QP back in RESET starts its queues over (upstream clears the
        // doorbell records and the queues' counters).
        if new == ib_state::RESET {
            if let Some(k) = &self.kdp {
                k.clean_cqs(self.qpn);
                k.wq.reset();
            }
            if let Some(QpMem::Kernel { dbr, .. }) = &self.mem {
                coherent_io::write_bytes(dbr, 0, &[0u8; 8])?;
            }
        }
        live.state = new;
        after_modify(&mut live.shadow, &a);
        drop(live);
        Ok(match ud {
            Some(u) => match modify_qp_response(0, u.outlen) {
                Some(r) => put(u.out, r.as_bytes()),
                None => 0,
            },
            None => 0,
        })
    }

    /// query_qp: QUERY_QP's context as the core's attributes, with the capacities
    /// the QP was created with.
    ///
    /// # Errors
    ///
    /// QUERY_QP's errno ([`Hw::exec_cmd`]); `EPROTO` for a state the device reports
    /// outside the PRM's ([`query_attr`]).
    fn query(&self) -> Result<QpAttr> {
        let mut live = self.live.lock();
        let ctx = self.hw.run(QueryQp { qpn: self.qpn })?;
        let mut a =
            query_attr(live.shadow.ty, &ctx, self.env.modify.num_ports).inspect_err(|_| {
                dev_warn!(self.dev, "QUERY_QP {:#x}: state out of range\n", self.qpn);
            })?;
        live.state = a.qp_state;
        a.max_recv_wr = live.shadow.rq_wqe_cnt;
        a.max_recv_sge = self.rq_max_gs;
        (a.max_send_wr, a.max_send_sge, a.max_inline_data) = self.sq_cap;
        a.sq_sig_all = u8::from(self.sq_sig_all);
        Ok(a)
    }

    /// post_send of a kernel QP ([`Qp::kernel_post_send`]).
    fn post_send(&self, chain: &mut SendChain<'_>) -> (usize, Result) {
        self.kernel_post_send(chain)
    }

    /// post_recv of a kernel QP ([`Qp::kernel_post_recv`]).
    fn post_recv(&self, chain: &mut RecvChain<'_>) -> (usize, Result) {
        self.kernel_post_recv(chain)
    }

    fn internal_error(&self) -> bool {
        self.kdp.as_ref().is_some_and(|k| k.kcqs.dead())
    }
}

impl Drop for Qp {
    fn drop(&mut self) {
        let mut to_reset = self.live.lock().state != ib_state::RESET;
        // A kernel QP, as upstream `destroy_qp_common`: to RESET, its CQEs out of its
        // CQs, then out of the pollers' table (a CQE of the QP the device still
        // writes is counted as one of an unknown QP), then destroyed.
        if let Some(k) = self.kdp.take() {
            if to_reset {
                let _ = self.hw.exec_cmd(QpToRst { qpn: self.qpn });
                to_reset = false;
            }
            k.clean_cqs(self.qpn);
            k.detach();
            k.table.remove(self.qpn);
        }
        if let Some(m) = self.mem.take() {
            Self::teardown(&self.hw, &self.dev, self.qpn, m, to_reset);
        }
    }
}
