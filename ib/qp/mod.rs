// SPDX-License-Identifier: GPL-2.0

//! QPs (kernel shell): create_qp of user RC, UC, UD and XRC initiator QPs with the
//! libmlx5 ABI and of XRC targets, modify_qp, query_qp and destroy_qp, as upstream
//! `mlx5_ib` (`qp.c`).
//!
//! XRC (with cap `xrc`, as upstream's `check_qp_type`): the contexts name the device
//! resources the shim makes on the first XRC create_qp (`ffi/rdma/ib_devres.c`, as
//! upstream's `mlx5_ib_dev_res_srq_init`: a PD, a CQ, two XRC domains and an XRC SRQ,
//! destroyed after unregistration). An initiator is a user QP with a send queue only
//! (receive CQ `c0`, domain `xrcdn1`, SRQ `s0` in its context, as upstream
//! `create_user_qp`); a target, which the core always creates without user data,
//! has no queue and no doorbell record ([`create_xrc_tgt_qp`], upstream
//! `create_xrc_tgt_qp`: its own domain, PD `p0`, `c0`, `s0`). A kernel XRC initiator
//! is a kernel QP with a send queue only, as upstream's `create_kernel_qp` makes it
//! (domain `xrcdn1`, the basic SRQ `s1`); its send WQEs carry the XRC segment
//! upstream reserves and never fills (a kernel work request cannot name a remote
//! SRQ: [`send_wqe`]).
//!
//! create_qp checks the request ([`crate::ib::abi::qp::parse_create_qp`]: sizes, flags,
//! user index, addresses), picks the doorbell's UAR ([`crate::ib::uctx::uar`]), pins the
//! work queue buffer (RQ then SQ) and maps the doorbell record
//! ([`crate::ffi::rdma::umem`], [`crate::ib::umem`]), builds the context
//! ([`crate::ib::qp::create`]) and the page list, runs CREATE_QP and answers
//! `mlx5_ib_create_qp_resp` (`bfreg_index`). modify_qp resolves the current and
//! next state, applies the core's rules (`ib_modify_qp_is_ok()`) and the driver's
//! ([`crate::ib::qp::modify::plan_modify`]) and runs the transition command; query_qp
//! runs QUERY_QP and decodes the context. A QP is moved to RESET (if it is not) and
//! destroyed when dropped, then its memory is released; if DESTROY_QP fails, or
//! CREATE_QP's outcome is unknown (a timeout), the memory goes to the function's
//! graveyard ([`Hw::keep`]) rather than back to the system under a device that may
//! still use it.
//!
//! Kernel QPs (RC, UC, UD, and QP0 / QP1 as upstream creates them for the MAD
//! layer: a hardware QP0 of service type QP0, a hardware QP1 of type QP1, no GSI
//! send QPs since cap `set_deth_sqpn` is not used): queue sizes as upstream
//! ([`crate::ib::qp::size`]), work queues in 4 KiB pages of coherent DMA memory (RQ then
//! SQ, `log_page_size` 0), a coherent doorbell record, the core's UAR page (as
//! upstream rings kernel QPs on the core's bfreg). Their work queues are one
//! coherent allocation (RQ then SQ), so each queue is one slice for the WQE builders.
//!
//! Kernel data path: post_send builds each request's WQE with
//! [`crate::ib::qp::send_wqe`] at the producer counter under the send queue's lock,
//! records its `wr_id` and position ([`crate::ib::qp::kdp`]), and rings once per batch
//! as upstream's `mlx5r_ring_db` (write barrier, doorbell record, write barrier, the
//! first 8 bytes of the last WQE to the UAR's BlueFlame register, halves alternating);
//! post_recv builds receive WQEs with [`crate::ib::qp::recv_wqe`] and writes the
//! doorbell record after a write barrier. Each kernel QP is in the device's
//! [`kdp::KqpTable`] from CREATE_QP to before DESTROY_QP, where its CQs' pollers find
//! it. A QP moved to ERR gets its flush completions from the device; one moved to
//! RESET starts both queues over. IB_WR_REG_MR registers an MR of alloc_mr with the
//! translation list map_mr_sg wrote (inline up to 64 bytes, as upstream). Not served:
//! atomics (EOPNOTSUPP, as upstream), post_srq_recv (EOPNOTSUPP from the shim,
//! `ffi/rdma/ib_srq.c`).

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod commands;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod create;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod flush;
pub(crate) mod kdp;
mod kflush;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod modify;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod recv_wqe;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod send_wqe;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod size;

use kernel::{
    device,
    dma::Coherent,
    new_mutex,
    prelude::*,
    sync::{
        aref::ARef,
        barrier::{mb, Write},
        Arc, Mutex,
    },
};
use zerocopy::{FromBytes, FromZeros, IntoBytes};

use crate::ib::{
    abi::{
        consts::{
            IB_DEFAULT_UIDX, QP_FLAG_ALLOW_SCATTER_CQE, QP_FLAG_PACKET_BASED_CREDIT_MODE,
            QP_FLAG_SCATTER_CQE, QP_FLAG_SIGNATURE,
        },
        layout::CreateQpResp,
        qp::{
            modify_qp_response, parse_create_qp, parse_modify_qp, QpAttr as UQpAttr, QpCaps,
            QpKind, QpUar,
        },
        udata::{self, put},
    },
    cq::kclean::{CqCleaner, KcqTable},
    obj_events::QpWithEvents,
    qp::commands::{
        CreateQp, DestroyQp, Init2InitQp, Init2RtrQp, QpToErr, QpToRst, QueryQp, Rst2InitQp,
        Rtr2RtsQp, Rts2RtsQp, SqErr2RtsQp, Sqd2RtsQp,
    },
    qp::create::{
        create_flags, create_qpc, kernel_xrc_ini_srq, rx_type, scatter_to_cqe, xrc_tgt_qpc,
        CreateQpc, WqSizes, XrcDevRes,
    },
    qp::kdp::{KernelWq, KqpTable, SqSide},
    qp::modify::{
        after_modify, atomic_mode, ib_qpt, ib_state, mask, plan_modify, query_attr, ModifyCaps,
        ModifyPlan, QpShadow, QpType,
    },
    qp::recv_wqe::{build_recv, rq_doorbell_record, RqGeometry},
    qp::send_wqe::{build_send, sq_doorbell_record, Payload, SendOp, SendWr, SqGeometry, UdDest},
    qp::size::{kernel_rq_size, kernel_sq_size, QpCap, SizeCaps},
    srq::kdp::KsrqTable,
    uctx::uar::BfregRef,
    uctx::{uabi_err, UarHold},
    umem::plan::queue_page_sizes,
    umem::UserDb,
};
use crate::{
    cmd::{
        commands::{gen_cap, AtomicCaps, GeneralCaps},
        status::create_outcome_unknown,
    },
    coherent_io,
    eq::rsc::RscTable,
    ffi::rdma::{
        ib_dp_abi::{send_flag, wc_op, wr_op},
        ib_qp::{
            modify_qp_is_ok, IbQp, IbQpOps, QpAttr, QpInit, QpShim, RecvChain, RecvWrC, SendChain,
            SendWrC,
        },
        ib_uctx::IbUcontext,
        udata::UserData,
        umem::{BlockSize, IbDev, Umem},
    },
    hw::Hw,
    ifc::{
        av::Av,
        opcodes::Opcode,
        wqe::{
            vals::{
                FENCE_MODE_INITIATOR_SMALL, FENCE_MODE_NONE, FENCE_MODE_STRONG_ORDERING,
                SEND_WQE_BB as SEND_WQE_BB_BYTES, UAR_BF_OFFSET,
            },
            WqeCtrlSeg,
        },
    },
};

/// `qpc.log_page_size` bits, counted from 4 KiB (`mlx5_ifc.h`).
const LOG_PAGE_SIZE_BITS: u32 = 5;
/// `qpc.page_offset` is in 64-byte units, 6 bits.
const PAGE_OFFSET_SCALE: u64 = 64;
const PAGE_OFFSET_MAX: u64 = 63;
/// Pages of a kernel QP's work queues.
const WQ_PAGE: usize = 4096;
/// A doorbell record (receive and send counters, 4 bytes each; one cache line).
const DBR_BYTES: usize = 64;
/// The receive counter's offset in the doorbell record (upstream `MLX5_RCV_DBR`).
const RCV_DBR: usize = 0;
/// The send counter's offset in the doorbell record (upstream `MLX5_SND_DBR`).
const SND_DBR: usize = 4;

/// What the device offers QPs, read once.
#[derive(Clone, Copy)]
pub(crate) struct QpEnv {
    /// For create_qp's checks.
    pub(crate) create: QpCaps,
    /// For modify_qp's checks.
    pub(crate) modify: ModifyCaps,
    /// Cap `cqe_version` is 1: contexts carry the user index.
    pub(crate) cqe_v1: bool,
    /// For kernel QPs' queue sizes.
    pub(crate) size: SizeCaps,
    /// The core's UAR page, which kernel QPs ring, and its offset in BAR 0 (`None`: no
    /// kernel QPs).
    pub(crate) kernel_uar: Option<(u32, usize)>,
    /// Bytes of one half of a BlueFlame register (upstream `bf->buf_size`: half of
    /// `1 << log_bf_reg_size`); kernel QPs' doorbells alternate between the halves.
    pub(crate) bf_half: usize,
    /// Fence mode of REG_MR WQEs (upstream `mlx5_get_umr_fence` of cap `umr_fence`).
    pub(crate) umr_fence: u8,
    /// Cap `xrc`: XRC QPs are created (upstream `check_qp_type`).
    pub(crate) xrc: bool,
    /// Cap `block_lb_mc`: the create flag that blocks multicast loopback is taken.
    pub(crate) block_lb_mc: bool,
}

impl QpEnv {
    /// From the current general caps, the atomic caps (`None` without cap `atomic`)
    /// and the port's table lengths. Atomic mode: upstream `get_atomic_mode` of
    /// `atomic_operations` and `atomic_size_qp`; without one, remote atomics are
    /// refused (`EOPNOTSUPP`, as upstream).
    pub(crate) fn new(
        caps: &GeneralCaps,
        atomic: Option<&AtomicCaps>,
        page_shift: u32,
        num_ports: u8,
        pkey_tbl_len: u16,
        gid_tbl_len: u32,
        kernel_uar: Option<(u32, usize)>,
    ) -> Self {
        Self {
            create: QpCaps::from_caps(caps, page_shift),
            modify: ModifyCaps {
                num_ports,
                pkey_tbl_len,
                gid_tbl_len,
                log_max_ra_res_qp: caps.get(gen_cap::LOG_MAX_RA_RES_QP),
                log_max_ra_req_qp: caps.get(gen_cap::LOG_MAX_RA_REQ_QP),
                log_max_msg: caps.get(gen_cap::LOG_MAX_MSG),
                stat_rate_support: caps.get(gen_cap::STAT_RATE_SUPPORT),
                atomic_mode: atomic
                    .and_then(|a| atomic_mode(caps.get(gen_cap::ATOMIC), a.operations, a.size_qp)),
            },
            cqe_v1: caps.get(gen_cap::CQE_VERSION) == 1,
            size: SizeCaps {
                log_max_qp_sz: caps.get(gen_cap::LOG_MAX_QP_SZ),
                max_wqe_sz_sq: u32::from(caps.get(gen_cap::MAX_WQE_SZ_SQ)),
                max_wqe_sz_rq: u32::from(caps.get(gen_cap::MAX_WQE_SZ_RQ)),
            },
            kernel_uar,
            xrc: caps.get(gen_cap::XRC),
            block_lb_mc: caps.get(gen_cap::BLOCK_LB_MC),
            bf_half: (1usize << caps.get(gen_cap::LOG_BF_REG_SIZE).min(16)) / 2,
            // `MLX5_CAP_UMR_FENCE_NONE` 0, `_SMALL` 1, else strong ordering.
            umr_fence: match caps.get(gen_cap::UMR_FENCE) {
                0 => FENCE_MODE_NONE,
                1 => FENCE_MODE_INITIATOR_SMALL,
                _ => FENCE_MODE_STRONG_ORDERING,
            },
        }
    }
}

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
    ///   `block_lb_mc`: [`create_flags`]);
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

/// What changes under modify_qp.
struct Live {
    shadow: QpShadow,
    /// `enum ib_qp_state`.
    state: u32,
}

/// The memory of a QP's work queues and doorbell record.
enum QpMem {
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

/// What a kernel QP posts with.
struct KernelDp {
    /// The table the QP is in (left on drop).
    table: Arc<KqpTable>,
    /// Its bookkeeping, shared with its CQs' pollers.
    wq: Arc<KernelWq>,
    /// The send queue as created.
    sq: SqGeometry,
    /// The receive queue as created.
    rq: RqGeometry,
    /// Bytes of the receive queue (the send queue starts there).
    rq_bytes: usize,
    /// Offset in BAR 0 of the UAR the QP rings.
    uar_bar_off: usize,
    /// Bytes of one BlueFlame register half.
    bf_half: usize,
    /// Its send and receive CQs, whose CQEs of the QP are removed when it moves to
    /// RESET or is destroyed; the QP is on their lists of QPs until its drop.
    cqs: [Option<CqCleaner>; 2],
    /// The device's kernel CQs, and whether it met a fatal error.
    kcqs: Arc<KcqTable>,
}

impl KernelDp {
    /// Removes the QP's CQEs from its CQs, the receive CQ's first (freeing the SRQ
    /// WQEs of removed receives), as upstream `destroy_qp_common` and
    /// `__mlx5_ib_modify_qp` to RESET call `__mlx5_ib_cq_clean`.
    fn clean_cqs(&self, qpn: u32) {
        let [snd, rcv] = &self.cqs;
        if let Some(c) = rcv {
            c.clean(qpn, self.wq.srq.as_deref());
        }
        if let Some(c) = snd {
            if !rcv.as_ref().is_some_and(|r| r.same(c)) {
                c.clean(qpn, None);
            }
        }
    }

    /// Takes the QP off its CQs' lists of QPs.
    fn detach(&self) {
        for c in self.cqs.iter().flatten() {
            c.detach(&self.wq);
        }
    }
}

/// Gather or scatter entries one work request may carry here: a send WQE is at most
/// `MLX5_SEND_WQE_MAX_WQEBBS` × 64 bytes, so at most 63 data segments of 16.
const MAX_SGE: usize = 64;

/// The bytes `off..off + len` of a kernel QP's work queue buffer, for the WQE builders.
///
/// # Safety
///
/// The caller holds the lock of the queue the range is (the QP's `sq` or `rq` lock),
/// and the range is that queue's: no other reference to these bytes exists while the
/// slice lives. The device reads them concurrently (DMA), which the protocol orders
/// (a WQE is handed over by the doorbell record, after the barrier).
unsafe fn wq_slice(buf: &Coherent<[u8]>, off: usize, len: usize) -> Option<&mut [u8]> {
    let end = off.checked_add(len)?;
    if end > buf.size() {
        return None;
    }
    let base = buf.as_mut_ptr().cast::<u8>();
    // SAFETY: `off..end` lies in the allocation (checked above), which lives as long as
    // `buf`; by the function's contract the caller's lock makes this the only
    // reference to the range.
    Some(unsafe { core::slice::from_raw_parts_mut(base.add(off), len) })
}

/// The send WQE a work request asks for; `Err` as upstream refuses it at post.
fn send_op(wr: &SendWrC) -> Result<SendOp> {
    Ok(match wr.opcode {
        wr_op::SEND => SendOp::Send,
        wr_op::SEND_IMM => SendOp::SendImm(wr.imm),
        wr_op::RDMA_WRITE => SendOp::RdmaWrite {
            raddr: wr.remote_addr,
            rkey: wr.rkey,
        },
        wr_op::RDMA_WRITE_IMM => SendOp::RdmaWriteImm {
            raddr: wr.remote_addr,
            rkey: wr.rkey,
            imm: wr.imm,
        },
        wr_op::RDMA_READ => SendOp::RdmaRead {
            raddr: wr.remote_addr,
            rkey: wr.rkey,
        },
        wr_op::ATOMIC_CMP_AND_SWP => SendOp::CmpSwap {
            raddr: wr.remote_addr,
            rkey: wr.rkey,
            compare: wr.compare_add,
            swap: wr.swap,
        },
        wr_op::ATOMIC_FETCH_AND_ADD => SendOp::FetchAdd {
            raddr: wr.remote_addr,
            rkey: wr.rkey,
            add: wr.compare_add,
        },
        wr_op::LOCAL_INV => SendOp::LocalInv { rkey: wr.imm },
        // Only an MR of alloc_mr has a translation list.
        wr_op::REG_MR if wr.reg_descs == 0 => return Err(EINVAL),
        wr_op::REG_MR => SendOp::RegMr {
            key: wr.reg_key,
            access: wr.reg_access,
            iova: wr.reg_iova,
            length: wr.reg_len,
            page_shift: wr.reg_page_shift,
            desc_addr: wr.reg_desc_map,
            desc_lkey: wr.reg_desc_lkey,
        },
        // The shim passes it only on the device's UMR QP, with the segments.
        wr_op::UMR if wr.reg_descs == 0 => return Err(EINVAL),
        wr_op::UMR => SendOp::Umr { key: wr.imm },
        // Upstream: an opcode outside its table is -EINVAL.
        _ => return Err(EINVAL),
    })
}

/// A QP of the provider.
pub(crate) struct Qp {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    qpn: u32,
    ib_type: u32,
    env: QpEnv,
    rq_max_gs: u32,
    /// Send queue as the core sees it (`max_send_wr`, `max_send_sge`,
    /// `max_inline_data`): zero for a user QP (the library's business).
    sq_cap: (u32, u32, u32),
    sq_sig_all: bool,
    /// Lock order: held across a transition command and QUERY_QP (so
    /// `CmdQueue::state` is taken under it), so that the state the core sees is the
    /// device's. Never taken under an EQ's `Eq::state`: an event handler must not
    /// take it.
    live: Arc<Mutex<Live>>,
    /// `None` once handed away (a failed destroy).
    mem: Option<QpMem>,
    /// Kernel QPs: the data path.
    kdp: Option<KernelDp>,
}

/// Picks the buffer's page size and offset as `mlx5_umem_find_best_quantized_pgoff`
/// (`qpc.log_page_size`, 64-byte `page_offset` of 6 bits): (size, quantized offset).
fn buffer_pages(umem: &mut Umem) -> Result<(BlockSize, u8)> {
    let bitmap = queue_page_sizes(LOG_PAGE_SIZE_BITS, 12);
    let iova = umem.start_dma() & 0xffff_ffc0;
    let mut size = umem.best_page_size(bitmap, iova).ok_or(EINVAL)?;
    loop {
        let unit = size.bytes() / PAGE_OFFSET_SCALE;
        let off = umem.dma_offset(size);
        if unit != 0 && off % unit == 0 && off / unit <= PAGE_OFFSET_MAX {
            return Ok((size, u8::try_from(off / unit).map_err(|_| EINVAL)?));
        }
        if size.bytes() <= 4096 {
            return Err(EINVAL);
        }
        size = umem
            .best_page_size(bitmap & (size.bytes() - 1), iova)
            .ok_or(EINVAL)?;
    }
}

/// create_qp of a user QP.
pub(crate) fn create_user_qp(
    dev: &device::Device,
    hw: &Arc<Hw>,
    env: &QpEnv,
    ibdev: IbDev<'_>,
    uctx: &dyn IbUcontext,
    init: &mut QpInit,
    ud: UserData<'_>,
) -> Result<(KBox<dyn IbQp>, u32, usize)> {
    let what = "create_qp";
    let ty = QpType::from_ib(init.qp_type).ok_or(EOPNOTSUPP)?;
    let kind = match ty {
        QpType::Rc => QpKind::Rc,
        QpType::Uc => QpKind::Uc,
        QpType::Ud => QpKind::Ud,
        QpType::XrcIni if env.xrc => QpKind::XrcIni,
        _ => return Err(EOPNOTSUPP),
    };
    // The create flags upstream's process_create_flags takes (EOPNOTSUPP for the rest).
    let block_lb_mc = create_flags(init.create_flags, env.block_lb_mc)?;
    // An XRC initiator has a send CQ only (the core gives it no receive CQ).
    let xrc_ini = ty == QpType::XrcIni;
    if init.has_send_cq == 0 || (init.has_recv_cq == 0 && !xrc_ini) {
        return Err(EINVAL);
    }
    let devr = xrc_ini.then(|| xrc_devres(init)).transpose()?;
    let attr = UQpAttr {
        kind,
        max_recv_wr: init.max_recv_wr,
        srq: init.has_srq != 0,
    };
    let plan = parse_create_qp(&attr, ud.req, &env.create, uctx.cqe_version())
        .map_err(|e| uabi_err(dev, what, e))?;
    // A UAR page named by user space must be the context's own (upstream leaves that
    // to the device's DEVX uid check, which uid 0 does not make), and stays allocated
    // while the QP names it (the hold drops with the QP's memory).
    let uar_hold = match plan.uar {
        QpUar::UarPage(i) => match uctx.hold_uar(i) {
            Some(h) => Some(h),
            None => {
                dev_dbg!(dev, "{}: UAR page {} is not the context's\n", what, i);
                return Err(EINVAL);
            }
        },
        _ => None,
    };
    let door = uctx.qp_bfregs().ok_or(EINVAL)?.qp_doorbell(plan.uar)?;
    let mut umem = None;
    let mut pas = KVec::new();
    let (mut log_page_size, mut page_offset) = (0u8, 0u8);
    if plan.buf_size != 0 {
        let mut u = Umem::get(ibdev, plan.buf_addr, u64::from(plan.buf_size), 0)?;
        let (size, off) = buffer_pages(&mut u)?;
        log_page_size = u8::try_from(size.shift().saturating_sub(12)).map_err(|_| EINVAL)?;
        page_offset = off;
        let n = usize::try_from(u.num_blocks(size)).map_err(|_| ENOMEM)?;
        pas = KVec::from_elem(0u64, n, GFP_KERNEL)?;
        let got = u.blocks(size).fill(&mut pas);
        if got != n {
            return Err(EINVAL);
        }
        umem = Some(u);
    }
    let db = uctx.db_pages().map(ibdev, plan.db_addr)?;
    let wq = WqSizes {
        rq_wqe_cnt: plan.rq_wqe_cnt,
        rq_wqe_shift: plan.rq_wqe_shift,
        rq_max_gs: plan.rq_max_gs,
        sq_wqe_cnt: plan.sq_wqe_cnt,
        ..WqSizes::default()
    };
    let srq = init.has_srq != 0;
    let (snd, rcv) = ty.has_cqs();
    // SCATTER_CQE is in `plan.flags` only with cap `sctr_data_cqe` (dropped without
    // it, as upstream); accepted, it is written to the context.
    let (cs_req, cs_res) = scatter_to_cqe(
        ty,
        plan.flags & QP_FLAG_SCATTER_CQE != 0,
        plan.flags & QP_FLAG_ALLOW_SCATTER_CQE != 0,
        init.sq_sig_all != 0,
        init.send_cqe_128 != 0,
        init.recv_cqe_128 != 0,
    );
    let p = CreateQpc {
        st: ty.st(),
        pdn: init.pdn,
        wq,
        rq_type: rx_type(ty, srq, plan.has_rq),
        cqn_snd: snd.then_some(init.send_cqn),
        cqn_rcv: rcv.then_some(init.recv_cqn),
        srqn: srq.then_some(init.srqn),
        xrcd: None,
        dbr_addr: db.dma(),
        user_index: env.cqe_v1.then_some(plan.uidx),
        uar_page: door.uar_index,
        log_page_size,
        page_offset,
        wq_signature: plan.flags & QP_FLAG_SIGNATURE != 0,
        block_lb_mc,
        packet_based_credit: plan.flags & QP_FLAG_PACKET_BASED_CREDIT_MODE != 0,
        cs_req,
        cs_res,
    };
    // Upstream `create_user_qp`'s default resources of an initiator: receive CQ
    // `c0`, domain `xrcdn1`, SRQ `s0` (the shadow keeps no receive CQ, as upstream's
    // modify names none for it).
    let ctx = match devr {
        Some(d) => create_qpc(&CreateQpc {
            cqn_rcv: Some(d.cqn),
            srqn: Some(d.srqn),
            xrcd: Some(d.xrcdn),
            ..p
        })?,
        None => create_qpc(&p)?,
    };
    let qpn = match hw.exec_cmd(CreateQp {
        qpc: &ctx,
        pas: &pas,
    }) {
        Ok(n) => n,
        Err(e) => {
            // A CREATE_QP of unknown outcome may have made a QP on the buffer and the
            // doorbell record.
            if create_outcome_unknown(e.kind) {
                let n = umem.as_ref().map_or(0, Umem::pages);
                hw.keep(dev, &e, n, (umem, db));
            }
            return Err(e.errno().into());
        }
    };
    let shadow = QpShadow {
        ty,
        user: true,
        port: 0,
        atomic_rd_en: 0,
        resp_depth: 0,
        alt_port: 0,
        pdn: init.pdn,
        cqn_snd: p.cqn_snd,
        cqn_rcv: p.cqn_rcv,
        rq_wqe_cnt: plan.rq_wqe_cnt,
        db_dma: db.dma(),
    };
    let live = Live {
        shadow,
        state: ib_state::RESET,
    };
    let mem = QpMem::User {
        umem,
        db,
        _bfreg: door.bfreg,
        _uar: uar_hold,
    };
    let qp = Qp::new(
        dev,
        hw,
        qpn,
        init,
        env,
        plan.rq_max_gs,
        (0, 0, 0),
        live,
        mem,
    )?;
    if !plan.has_rq {
        init.max_recv_wr = 0;
        init.max_recv_sge = 0;
    }
    let resp = CreateQpResp {
        bfreg_index: door.resp_index,
        ..CreateQpResp::default()
    };
    let n = put(ud.out, udata::response(&resp, ud.outlen));
    let b: KBox<dyn IbQp> = KBox::new(qp, GFP_KERNEL)?;
    Ok((b, qpn, n))
}

/// create_qp of a kernel consumer's QP.
pub(crate) fn create_kernel_qp(
    dev: &device::Device,
    hw: &Arc<Hw>,
    env: &QpEnv,
    init: &mut QpInit,
    kqps: &Arc<KqpTable>,
    kobjs: &KernelObjs,
    ibqp: u64,
) -> Result<(KBox<dyn IbQp>, u32, usize)> {
    let ty = QpType::from_ib(init.qp_type).ok_or(EOPNOTSUPP)?;
    let (uar, uar_bar_off) = env.kernel_uar.ok_or(EOPNOTSUPP)?;
    // A target is create_xrc_tgt_qp's; an initiator needs cap `xrc` (upstream
    // `check_qp_type`).
    let xrc_ini = ty == QpType::XrcIni;
    if ty == QpType::XrcTgt || (xrc_ini && !env.xrc) {
        return Err(EOPNOTSUPP);
    }
    // Multicast loopback blocking only (IPoIB LSO, integrity, ...: EOPNOTSUPP).
    let block_lb_mc = create_flags(init.create_flags, env.block_lb_mc)?;
    // An XRC initiator needs no receive CQ (upstream `get_cqs` names none for it).
    if init.has_send_cq == 0 || (init.has_recv_cq == 0 && !xrc_ini) {
        return Err(EINVAL);
    }
    let devr = xrc_ini.then(|| xrc_devres(init)).transpose()?;
    let port = if ty.is_sqp() {
        match u8::try_from(init.port_num) {
            Ok(p) if p != 0 && p <= env.modify.num_ports => p,
            _ => return Err(EINVAL),
        }
    } else {
        0
    };
    let cap = QpCap {
        max_send_wr: init.max_send_wr,
        max_recv_wr: init.max_recv_wr,
        max_send_sge: init.max_send_sge,
        max_recv_sge: init.max_recv_sge,
        max_inline_data: init.max_inline_data,
    };
    let srq = init.has_srq != 0;
    // The kernel SRQ the QP receives on (its receive completions name its WQEs).
    let ksrq = if srq {
        Some(kobjs.srqs.get(init.srqn).ok_or(EINVAL)?)
    } else {
        None
    };
    // Upstream `qp_has_rq`: never for an XRC initiator.
    let has_rq = !srq && !xrc_ini && init.max_recv_wr != 0;
    let (rq_cnt, rq_shift, rq_gs) = kernel_rq_size(&cap, has_rq, false, &env.size)?;
    let sq = kernel_sq_size(ty, &cap, &env.size)?;
    let rq_bytes = usize::try_from(u64::from(rq_cnt) << rq_shift).map_err(|_| EINVAL)?;
    let bytes = rq_bytes
        .checked_add(usize::try_from(sq.sq_wqe_cnt).map_err(|_| EINVAL)? * 64)
        .ok_or(EINVAL)?;
    if bytes == 0 {
        return Err(EINVAL);
    }
    // SAFETY: the core calls the verbs only while the IB device is registered, a
    // stage of the PCI function's binding: the function is bound for this call, and
    // the memory is freed before the stage ends (the core destroys every QP before
    // unregistration returns) or buried in `Hw` until bus mastering is off.
    let bound = unsafe { dev.as_bound() };
    // One allocation, so that each queue is one slice the WQE builders write into
    // (upstream uses a fragmented buffer and writes across fragment edges instead).
    let npages = bytes.div_ceil(WQ_PAGE);
    let buf = Coherent::<u8>::zeroed_slice(bound, npages * WQ_PAGE, GFP_KERNEL)?;
    let mut pas = KVec::with_capacity(npages, GFP_KERNEL)?;
    for i in 0..npages {
        pas.push(buf.dma_address() + (i * WQ_PAGE) as u64, GFP_KERNEL)?;
    }
    let dbr = Coherent::<u8>::zeroed_slice(bound, DBR_BYTES, GFP_KERNEL)?;
    let db_dma = dbr.dma_address();
    let wq = WqSizes {
        rq_wqe_cnt: rq_cnt,
        rq_wqe_shift: rq_shift,
        rq_max_gs: rq_gs,
        ..sq
    };
    let (snd, rcv) = ty.has_cqs();
    // Upstream `create_kernel_qp` names an initiator's receive CQ when the consumer
    // gave one, and its SRQ and domain by [`kernel_xrc_ini_srq`].
    let (srqn, xrcd) = match devr {
        Some(d) => {
            let (n, x) = kernel_xrc_ini_srq(&d, srq.then_some(init.srqn));
            (Some(n), Some(x))
        }
        None => (srq.then_some(init.srqn), None),
    };
    let p = CreateQpc {
        st: ty.st(),
        pdn: init.pdn,
        wq,
        rq_type: rx_type(ty, srq, has_rq),
        cqn_snd: snd.then_some(init.send_cqn),
        cqn_rcv: (rcv || (xrc_ini && init.has_recv_cq != 0)).then_some(init.recv_cqn),
        srqn,
        xrcd,
        dbr_addr: db_dma,
        user_index: env.cqe_v1.then_some(IB_DEFAULT_UIDX),
        uar_page: uar,
        log_page_size: 0,
        page_offset: 0,
        wq_signature: false,
        block_lb_mc,
        packet_based_credit: false,
        cs_req: 0,
        cs_res: 0,
    };
    let ctx = create_qpc(&p)?;
    let qpn = match hw.exec_cmd(CreateQp {
        qpc: &ctx,
        pas: &pas,
    }) {
        Ok(n) => n,
        Err(e) => {
            // A CREATE_QP of unknown outcome may have made the QP: the device may
            // own the pages.
            if create_outcome_unknown(e.kind) {
                hw.keep(dev, &e, npages + 1, (buf, dbr));
            }
            return Err(e.errno().into());
        }
    };
    let shadow = QpShadow {
        ty,
        user: false,
        port,
        atomic_rd_en: 0,
        resp_depth: 0,
        alt_port: 0,
        pdn: init.pdn,
        cqn_snd: p.cqn_snd,
        // The CQs upstream's `get_cqs` gives (none to receive for an initiator).
        cqn_rcv: rcv.then_some(init.recv_cqn),
        rq_wqe_cnt: rq_cnt,
        db_dma,
    };
    let live = Live {
        shadow,
        state: ib_state::RESET,
    };
    init.max_send_wr = sq.sq_max_post;
    init.max_send_sge = sq.sq_max_gs;
    init.max_inline_data = sq.max_inline;
    if !has_rq {
        init.max_recv_wr = 0;
        init.max_recv_sge = 0;
    }
    let sq_cap = (sq.sq_max_post, sq.sq_max_gs, sq.max_inline);
    let mem = QpMem::Kernel { buf, dbr };
    let mut qp = Qp::new(dev, hw, qpn, init, env, rq_gs, sq_cap, live, mem)?;
    // From here on a failure drops `qp`, which destroys the QP.
    let wq = KernelWq::new(
        qpn,
        ibqp,
        port,
        ty == QpType::Gsi,
        sq.sq_wqe_cnt,
        rq_cnt,
        ksrq,
    )?;
    let cqs = [
        p.cqn_snd.and_then(|n| kobjs.cqs.get(n)),
        rcv.then(|| kobjs.cqs.get(init.recv_cqn)).flatten(),
    ];
    kqps.insert(wq.clone())?;
    // On its CQs' lists (upstream `list_send_qp` / `list_recv_qp`) for the software
    // flush after a fatal error; off them at the drop.
    for (i, c) in cqs.iter().enumerate() {
        if let Some(c) = c {
            if let Err(e) = c.attach(&wq, i == 0) {
                for d in cqs.iter().flatten() {
                    d.detach(&wq);
                }
                kqps.remove(qpn);
                return Err(e);
            }
        }
    }
    qp.kdp = Some(KernelDp {
        table: kqps.clone(),
        wq,
        sq: SqGeometry {
            qp_type: ty,
            qpn,
            wqe_cnt: sq.sq_wqe_cnt,
            max_post: sq.sq_max_post,
            max_gs: sq.sq_max_gs,
            max_inline: sq.max_inline,
            sig_all: init.sq_sig_all != 0,
            umr_fence: env.umr_fence,
        },
        rq: RqGeometry {
            wqe_cnt: rq_cnt,
            wqe_shift: rq_shift,
            max_gs: rq_gs,
            max_post: rq_cnt,
            // QUERY_SPECIAL_CONTEXTS is not read: the default key (upstream uses the
            // device's `terminate_scatter_list_mkey` when cap
            // `terminate_scatter_list_mkey` says it has one).
            terminate_lkey: crate::ifc::umr::vals::TERMINATE_SCATTER_LIST_LKEY,
        },
        rq_bytes,
        uar_bar_off,
        bf_half: env.bf_half,
        cqs,
        kcqs: kobjs.cqs.clone(),
    });
    let b: KBox<dyn IbQp> = KBox::new(qp, GFP_KERNEL)?;
    Ok((b, qpn, 0))
}

/// The device resources the shim made for an XRC QP (`ffi/rdma/ib_devres.c`).
///
/// # Errors
///
/// `EINVAL` when the shim named none (a PD, CQ, SRQ or domain number 0).
fn xrc_devres(init: &QpInit) -> Result<XrcDevRes> {
    let d = XrcDevRes {
        pdn: init.devr_pdn,
        cqn: init.devr_cqn,
        srqn: init.devr_srqn,
        xrcdn: init.devr_xrcdn,
        srqn1: init.devr_srqn1,
        xrcdn0: init.devr_xrcdn0,
    };
    if d.pdn == 0 || d.cqn == 0 || d.srqn == 0 || d.xrcdn == 0 || d.srqn1 == 0 || d.xrcdn0 == 0 {
        return Err(EINVAL);
    }
    Ok(d)
}

/// create_qp of an XRC target, as upstream `create_xrc_tgt_qp`: no queues, no
/// doorbell record, the context of [`xrc_tgt_qpc`] (the target's domain, the device
/// resources), in RESET.
///
/// # Errors
///
/// `EOPNOTSUPP` without cap `xrc` and for a create flag [`create_flags`] refuses;
/// `EINVAL` without a domain
/// or the device resources; CREATE_QP's errno ([`Hw::exec_cmd`]).
pub(crate) fn create_xrc_tgt_qp(
    dev: &device::Device,
    hw: &Arc<Hw>,
    env: &QpEnv,
    init: &mut QpInit,
) -> Result<(KBox<dyn IbQp>, u32, usize)> {
    if !env.xrc {
        return Err(EOPNOTSUPP);
    }
    let block_lb_mc = create_flags(init.create_flags, env.block_lb_mc)?;
    let devr = xrc_devres(init)?;
    if init.xrcdn == 0 {
        return Err(EINVAL);
    }
    let ctx = xrc_tgt_qpc(
        &devr,
        init.xrcdn,
        env.cqe_v1.then_some(IB_DEFAULT_UIDX),
        block_lb_mc,
    )?;
    // No memory of the QP's own: nothing to keep whatever CREATE_QP's outcome.
    let qpn = hw
        .exec_cmd(CreateQp {
            qpc: &ctx,
            pas: &[],
        })
        .map_err(|e| Error::from(e.errno()))?;
    let shadow = QpShadow {
        ty: QpType::XrcTgt,
        user: false,
        port: 0,
        atomic_rd_en: 0,
        resp_depth: 0,
        alt_port: 0,
        // Upstream's modify names `p0` for a QP without a PD and no CQ for a target.
        pdn: devr.pdn,
        cqn_snd: None,
        cqn_rcv: None,
        rq_wqe_cnt: 0,
        db_dma: 0,
    };
    let live = Live {
        shadow,
        state: ib_state::RESET,
    };
    init.max_send_wr = 0;
    init.max_send_sge = 0;
    init.max_inline_data = 0;
    init.max_recv_wr = 0;
    init.max_recv_sge = 0;
    let qp = Qp::new(dev, hw, qpn, init, env, 0, (0, 0, 0), live, QpMem::NoQueues)?;
    let b: KBox<dyn IbQp> = KBox::new(qp, GFP_KERNEL)?;
    Ok((b, qpn, 0))
}

impl Qp {
    /// The QP object of QP `qpn`, just created; on failure the QP is destroyed and
    /// `mem` released.
    #[expect(clippy::too_many_arguments, reason = "what a QP keeps")]
    fn new(
        dev: &device::Device,
        hw: &Arc<Hw>,
        qpn: u32,
        init: &QpInit,
        env: &QpEnv,
        rq_max_gs: u32,
        sq_cap: (u32, u32, u32),
        live: Live,
        mem: QpMem,
    ) -> Result<Self> {
        let live = match Arc::pin_init(new_mutex!(live), GFP_KERNEL) {
            Ok(l) => l,
            Err(e) => {
                Self::teardown(hw, dev, qpn, mem, false);
                return Err(e);
            }
        };
        Ok(Self {
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
        })
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

    /// post_send of a kernel QP (upstream `mlx5_ib_post_send`): each request's WQE
    /// written at the producer counter, then one doorbell for the batch: the
    /// doorbell record, then the first 8 bytes of the last WQE to the UAR's
    /// BlueFlame register (`mlx5r_ring_db`), under the send queue's lock.
    ///
    /// # Errors
    ///
    /// For the first request not posted, as upstream in its order
    /// (`send_wqe::build_send`): `EINVAL` for more gather entries than the QP's, an
    /// opcode upstream has no WQE for, one the QP's type does not carry, a UD-type
    /// request without an address handle, a REG_MR of an MR without a translation
    /// list (not of alloc_mr) or with IB_SEND_INLINE; `ENOMEM` for a full queue or
    /// inline data beyond the QP's; `EOPNOTSUPP` for atomics (upstream: "not supported
    /// yet"). `EINVAL` for a user QP; `EIO` after the device's fatal error but for a
    /// drain's request (upstream's internal-error state).
    fn post_send(&self, chain: &mut SendChain<'_>) -> (usize, Result) {
        let (Some(k), Some(QpMem::Kernel { buf, dbr })) = (&self.kdp, &self.mem) else {
            return (0, Err(EINVAL));
        };
        let sq_bytes = k.sq.wqe_cnt as usize * SEND_WQE_BB_BYTES;
        let mut sq = k.wq.sq.lock();
        // After a fatal error only a drain's request (upstream: `-EIO` unless
        // `drain`), checked under the lock the fatal error's walk takes.
        if k.kcqs.dead() && !chain.drain() {
            return (0, Err(EIO));
        }
        // SAFETY: the send queue's lock is held, and `rq_bytes..+sq_bytes` is the send
        // queue's range of the buffer.
        let Some(ring) = (unsafe { wq_slice(buf, k.rq_bytes, sq_bytes) }) else {
            return (0, Err(EINVAL));
        };
        let mut posted = 0;
        let mut res = Ok(());
        let mut last = None;
        let mut wr = SendWrC::new_zeroed();
        while chain.next_into(&mut wr) {
            match Self::post_one_send(k, &mut sq, chain, &wr, ring) {
                Ok(ctrl) => {
                    posted += 1;
                    last = Some(ctrl);
                }
                Err(e) => {
                    res = Err(e);
                    break;
                }
            }
        }
        if let Some(ctrl) = last {
            let mut first8 = [0u8; 8];
            first8.copy_from_slice(&ctrl.as_bytes()[..8]);
            // The WQEs before the doorbell record, the record before the doorbell.
            mb(Write);
            let _ = coherent_io::write_bytes(dbr, SND_DBR, &sq_doorbell_record(sq.st.cur_post));
            mb(Write);
            let off = k.uar_bar_off + UAR_BF_OFFSET + sq.bf_half * k.bf_half;
            // A failure means the BAR is gone: the WQEs stay unexecuted, as on a dead
            // device (their flush is the device's error path).
            let _ = self.hw.doorbell64(off, first8);
            sq.bf_half ^= 1;
        }
        (posted, res)
    }

    /// post_recv of a kernel QP (upstream `mlx5_ib_post_recv`): each request's WQE
    /// written at `head`, then the doorbell record once for the call.
    ///
    /// # Errors
    ///
    /// For the first request not posted, as upstream (`recv_wqe::build_recv`):
    /// `ENOMEM` for a full queue, `EINVAL` for more scatter entries than the QP's;
    /// `EINVAL` for a QP without a receive queue of its own (SRQ) and a user QP;
    /// `EIO` after the device's fatal error but for a drain's request.
    fn post_recv(&self, chain: &mut RecvChain<'_>) -> (usize, Result) {
        let (Some(k), Some(QpMem::Kernel { buf, dbr })) = (&self.kdp, &self.mem) else {
            return (0, Err(EINVAL));
        };
        if k.rq.wqe_cnt == 0 {
            return (0, Err(EINVAL));
        }
        let mut rq = k.wq.rq.lock();
        if k.kcqs.dead() && !chain.drain() {
            return (0, Err(EIO));
        }
        // SAFETY: the receive queue's lock is held, and `0..rq_bytes` is the receive
        // queue's range of the buffer.
        let Some(ring) = (unsafe { wq_slice(buf, 0, k.rq_bytes) }) else {
            return (0, Err(EINVAL));
        };
        let mut posted = 0;
        let mut res = Ok(());
        let mut wr = RecvWrC::new_zeroed();
        while chain.next_into(&mut wr) {
            match build_recv(&k.rq, rq.head, rq.tail, chain.sg(&wr), ring) {
                Ok(slot) => {
                    if let Some(w) = rq.wrid.get_mut(slot as usize) {
                        *w = wr.wr_id;
                    }
                    rq.head = rq.head.wrapping_add(1);
                    posted += 1;
                }
                Err(e) => {
                    res = Err(Error::from(e));
                    break;
                }
            }
        }
        if posted != 0 {
            // The WQEs before the doorbell record.
            mb(Write);
            let _ = coherent_io::write_bytes(dbr, RCV_DBR, &rq_doorbell_record(rq.head));
        }
        (posted, res)
    }

    fn internal_error(&self) -> bool {
        self.kdp.as_ref().is_some_and(|k| k.kcqs.dead())
    }
}

impl Qp {
    /// Builds one send WQE of `wr` into `ring` and records it; its control segment.
    fn post_one_send(
        k: &KernelDp,
        sq: &mut SqSide,
        chain: &SendChain<'_>,
        wr: &SendWrC,
        ring: &mut [u8],
    ) -> Result<WqeCtrlSeg> {
        let op = send_op(wr)?;
        let list = chain.sg(wr);
        // The inline entries' bytes, gathered only for an inline request.
        let inl: [&[u8]; MAX_SGE];
        let payload = if wr.send_flags & send_flag::INLINE != 0 {
            if list.len() > MAX_SGE {
                return Err(EINVAL);
            }
            inl = core::array::from_fn(|i| list.get(i).map_or(&[][..], |e| chain.inline_bytes(e)));
            Payload::Inline(&inl[..list.len()])
        } else {
            Payload::Gather(list)
        };
        let ud = if wr.has_ah != 0 {
            Some(UdDest {
                av: Av::read_from_bytes(&wr.av).map_err(|_| EINVAL)?,
                remote_qpn: wr.remote_qpn,
                remote_qkey: wr.remote_qkey,
            })
        } else {
            None
        };
        let swr = SendWr {
            op,
            payload,
            signaled: wr.send_flags & send_flag::SIGNALED != 0,
            solicited: wr.send_flags & send_flag::SOLICITED != 0,
            fence: wr.send_flags & send_flag::FENCE != 0,
            ud,
            reg_list: chain.reg_list(wr),
        };
        let umr = match op {
            SendOp::LocalInv { .. } => wc_op::LOCAL_INV as u8,
            SendOp::RegMr { .. } | SendOp::Umr { .. } => wc_op::REG_MR as u8,
            _ => 0,
        };
        let head = sq.st.head;
        let p = build_send(&k.sq, &mut sq.st, &swr, ring).map_err(Error::from)?;
        let idx = p.idx as usize;
        if let (Some(w), Some(h), Some(u)) = (
            sq.wrid.get_mut(idx),
            sq.wqe_head.get_mut(idx),
            sq.umr_op.get_mut(idx),
        ) {
            *w = wr.wr_id;
            *h = head;
            *u = umr;
        }
        Ok(p.ctrl)
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
