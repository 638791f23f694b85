// SPDX-License-Identifier: GPL-2.0

//! QPs (kernel shell): the verbs object ([`QpVerbs`], create_qp) and the family's
//! files, as upstream `mlx5_ib` (`qp.c`, `wr.c`):
//!
//! - [`env`]: what the device offers QPs, read once;
//! - [`user_qp`]: create_qp of a user RC, UC, UD or XRC initiator QP (libmlx5's ABI);
//! - [`kernel_qp`]: create_qp of a kernel consumer's QP (RC, UC, UD, XRC initiator,
//!   QP0 / QP1 for the MAD layer), queues in coherent memory;
//! - [`xrc`]: XRC targets, and the device resources XRC QPs name;
//! - [`object`]: the QP object: modify_qp, query_qp, destroy_qp;
//! - [`post`]: post_send and post_recv of a kernel QP;
//! - [`kdp`]: the kernel QP table and each queue's bookkeeping, shared with the CQs'
//!   pollers; [`kflush`]: the software flush of a kernel QP after a fatal error;
//! - the pure parts, host-tested: [`commands`] (one type per command), [`create`]
//!   (QP contexts), [`modify`] (transitions), [`size`] (kernel queue sizes),
//!   [`send_wqe`] and [`recv_wqe`] (WQE builders), [`flush`].
//!
//! Every QP enters the device's event table after CREATE_QP ([`QpWithEvents`], as
//! upstream's `create_resource_common`).

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod commands;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod create;
mod env;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod flush;
pub(crate) mod kdp;
mod kernel_qp;
mod kflush;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod modify;
mod object;
mod post;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod recv_wqe;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod send_wqe;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod size;
mod user_qp;
mod xrc;

use kernel::{
    device,
    prelude::*,
    sync::{aref::ARef, Arc},
};

pub(crate) use env::QpEnv;
use kernel_qp::create_kernel_qp;
use user_qp::create_user_qp;
use xrc::create_xrc_tgt_qp;

use crate::eq::rsc::RscTable;
use crate::ffi::rdma::{
    ib_qp::{IbQp, IbQpOps, QpInit, QpShim},
    ib_uctx::IbUcontext,
    udata::UserData,
    umem::IbDev,
};
use crate::hw::Hw;
use crate::ib::cq::kclean::KcqTable;
use crate::ib::obj_events::QpWithEvents;
use crate::ib::qp::kdp::KqpTable;
use crate::ib::qp::modify::ib_qpt;
use crate::ib::srq::kdp::KsrqTable;

/// The QP verbs of one function ([`IbQpOps`]).
pub(crate) struct QpVerbs {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    /// What QPs are offered.
    qp_env: QpEnv,
    /// Where QPs register for their async events.
    rscs: Arc<RscTable>,
    /// Where kernel QPs register for their CQs' pollers.
    kqps: Arc<KqpTable>,
    /// Kernel SRQs and CQs, which kernel QPs name.
    kobjs: KernelObjs,
}

/// The kernel SRQs and CQs of a device, by number.
#[derive(Clone)]
pub(crate) struct KernelObjs {
    /// Kernel SRQs.
    pub(crate) srqs: Arc<KsrqTable>,
    /// Kernel CQs.
    pub(crate) cqs: Arc<KcqTable>,
}

impl QpVerbs {
    /// The verbs of `dev` over `hw`, offering `qp_env`; QPs register in `rscs`,
    /// kernel QPs in `kqps` too, and find their SRQ and CQs in `kobjs`.
    pub(crate) fn new(
        dev: &device::Device,
        hw: Arc<Hw>,
        qp_env: QpEnv,
        rscs: Arc<RscTable>,
        kqps: Arc<KqpTable>,
        kobjs: KernelObjs,
    ) -> Self {
        Self {
            dev: dev.into(),
            hw,
            qp_env,
            rscs,
            kqps,
            kobjs,
        }
    }
}

impl IbQpOps for QpVerbs {
    /// create_qp: a kernel consumer's QP (RC, UC, UD, XRC initiator, GSI/SMI; queues in coherent
    /// memory), a user QP (RC, UC, UD, XRC initiator) over the request's pinned
    /// buffer, or an XRC target (no queues).
    ///
    /// # Errors
    ///
    /// - `EOPNOTSUPP` for a QP type this provider does not create (raw packet, driver
    ///   QPs; special QPs from user space, XRC without cap `xrc`) and for a create
    ///   flag other than multicast loopback blocking (that one too without cap
    ///   `block_lb_mc`: [`create::create_flags`]);
    /// - `EINVAL` for an XRC target with user data (the core passes none), without a
    ///   domain or the device resources; without a send and a receive CQ (an XRC
    ///   initiator: a send CQ), a user context without user data
    ///   or the reverse, a special QP on a port the device lacks, queue sizes beyond
    ///   the device's (`qp::size`), a UAR page the context does not own, a buffer no
    ///   page size fits, a value wider than its QP context field;
    ///   `ENOMEM` for a send queue beyond `log_max_qp_sz` (as upstream);
    /// - for a user QP, the request's refusals by `abi::qp::parse_create_qp`
    ///   (`EINVAL`, `EOPNOTSUPP`, upstream's order) and pinning's errors
    ///   (`Umem::get`);
    /// - `ENOMEM` when memory cannot be allocated;
    /// - CREATE_QP's errno ([`Hw::exec_cmd`]), memory the device may still reach
    ///   kept in the graveyard;
    /// - `EEXIST` if the QPN is already in the event table (the QP is destroyed).
    fn create_qp(
        &self,
        init: &mut QpInit,
        dev: IbDev<'_>,
        user: Option<(&dyn IbUcontext, UserData<'_>)>,
        shim: QpShim,
    ) -> Result<(KBox<dyn IbQp>, u32, usize)> {
        let (qp, qpn, n) = match user {
            // The core creates every target without user data (ib_create_qp_user).
            _ if init.qp_type == ib_qpt::XRC_TGT => {
                if user.is_some() {
                    return Err(EINVAL);
                }
                create_xrc_tgt_qp(&self.dev, &self.hw, &self.qp_env, init)
            }
            Some((c, u)) => create_user_qp(&self.dev, &self.hw, &self.qp_env, dev, c, init, u),
            None => create_kernel_qp(
                &self.dev,
                &self.hw,
                &self.qp_env,
                init,
                &self.kqps,
                &self.kobjs,
                shim.handle(),
            ),
        }?;
        // As upstream's `create_resource_common`: in the event table after CREATE_QP.
        let qp = QpWithEvents::wrap(&self.dev, &self.rscs, qpn, qp, shim)?;
        Ok((qp, qpn, n))
    }
}
