// SPDX-License-Identifier: GPL-2.0

//! The kernel data path of a QP: post_send and post_recv of a kernel QP, as upstream
//! `mlx5_ib_post_send` / `mlx5_ib_post_recv` (`wr.c`).
//!
//! post_send builds each request's WQE with [`crate::ib::qp::send_wqe`] at the
//! producer counter under the send queue's lock, records its `wr_id` and position
//! ([`crate::ib::qp::kdp`]), and rings once per batch as upstream's `mlx5r_ring_db`
//! (write barrier, doorbell record, write barrier, the first 8 bytes of the last WQE
//! to the UAR's BlueFlame register, halves alternating); post_recv builds receive
//! WQEs with [`crate::ib::qp::recv_wqe`] and writes the doorbell record after a write
//! barrier. A QP moved to ERR gets its flush completions from the device; one moved
//! to RESET starts both queues over. IB_WR_REG_MR registers an MR of alloc_mr with
//! the translation list map_mr_sg wrote (inline up to 64 bytes, as upstream). Not
//! served: atomics (EOPNOTSUPP, as upstream), post_srq_recv (EOPNOTSUPP from the
//! shim, `ffi/rdma/ib_srq.c`).

use core::sync::atomic::{AtomicU64, Ordering};

use kernel::{dma::Coherent, prelude::*};
use zerocopy::{FromBytes, FromZeros, IntoBytes};

use super::kernel_qp::KernelDp;
use super::object::{Qp, QpMem};
use crate::coherent_io;
use crate::ffi::rdma::{
    ib_dp_abi::{send_flag, wc_op, wr_op},
    ib_qp::{IbSge, RecvChain, RecvWrC, SendChain, SendReq, SendWrC},
};
use crate::ffi::wmb;
use crate::ib::qp::kdp::{SqSide, SqSlots};
use crate::ib::qp::modify::QpType;
use crate::ib::qp::recv_wqe::{rq_doorbell_record, RecvRing};
use crate::ib::qp::send_wqe::{
    build_gather, build_send, sq_doorbell_record, InlineParts, Payload, Posted, SendFlags, SendOp,
    SendWr, UdDest,
};
use crate::ifc::{
    av::Av,
    wqe::{
        vals::{SEND_WQE_BB as SEND_WQE_BB_BYTES, UAR_BF_OFFSET},
        WqeCtrlSeg,
    },
};

/// The receive counter's offset in the doorbell record (upstream `MLX5_RCV_DBR`).
const RCV_DBR: usize = 0;
/// The send counter's offset in the doorbell record (upstream `MLX5_SND_DBR`).
const SND_DBR: usize = 4;

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

impl Qp {
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
    pub(super) fn kernel_post_send(&self, chain: &mut SendChain<'_>) -> (usize, Result) {
        let (Some(k), Some(QpMem::Kernel { buf, dbr })) = (&self.kdp, &self.mem) else {
            return (0, Err(EINVAL));
        };
        let sq_bytes = k.sq.wqe_cnt as usize * SEND_WQE_BB_BYTES;
        let slots = &k.wq.sq_slots;
        let mut sq = k.wq.sq.lock();
        // After a fatal error only a drain's request (upstream: `-EIO` unless
        // `drain`).
        if k.kcqs.dead() && !chain.drain() {
            return (0, Err(EIO));
        }
        // The requests completed so far, for the overflow check.
        sq.st.tail = slots.tail.load(Ordering::Acquire);
        // SAFETY: the send queue's lock is held, and `rq_bytes..+sq_bytes` is the send
        // queue's range of the buffer.
        let Some(ring) = (unsafe { wq_slice(buf, k.rq_bytes, sq_bytes) }) else {
            return (0, Err(EINVAL));
        };
        let mut posted = 0;
        let mut res = Ok(());
        let mut last = None;
        // A connected QP's common requests are read where the consumer wrote them; a
        // datagram QP's need the shim (the address handle's vector).
        let in_place = !matches!(k.sq.qp_type, QpType::Ud | QpType::Gsi | QpType::Smi);
        let mut wr = SendWrC::new_zeroed();
        while let Some(req) = chain.next(in_place, &mut wr) {
            let one = match req {
                SendReq::InPlace(w) => {
                    let (op, flags, list) = (w.op(), w.flags(), w.sg());
                    // The common request from its parts; a `SendWr` only for the rest.
                    let head = sq.st.head;
                    let sf = SendFlags {
                        signaled: flags & send_flag::SIGNALED != 0,
                        solicited: flags & send_flag::SOLICITED != 0,
                        fence: flags & send_flag::FENCE != 0,
                    };
                    let common = if flags & send_flag::INLINE == 0 {
                        build_gather(&k.sq, &mut sq.st, op, list, sf, ring)
                    } else {
                        None
                    };
                    match common {
                        Some(r) => r.map_err(Error::from).map(|p| {
                            record_send(slots, &p, head, w.wr_id(), 0);
                            p.ctrl
                        }),
                        None => {
                            let req = OneSend {
                                wr_id: w.wr_id(),
                                op,
                                flags,
                                list,
                                ud: None,
                                reg_list: &[],
                            };
                            Self::post_one_send(k, &mut sq, slots, chain, &req, ring)
                        }
                    }
                }
                SendReq::Copied => Self::post_copied(k, &mut sq, slots, chain, &wr, ring),
            };
            match one {
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
            // The requests' slots to the poller (then ordered with the WQEs), the WQEs
            // before the doorbell record, the record before the doorbell.
            slots.head.store(sq.st.head, Ordering::Release);
            wmb();
            let _ = coherent_io::write_bytes(dbr, SND_DBR, &sq_doorbell_record(sq.st.cur_post));
            wmb();
            let off = k.uar_bar_off + UAR_BF_OFFSET + sq.bf_half * k.bf_half;
            // SAFETY: the function is bound for this call: the core calls the verbs
            // only while the IB device is registered (a kernel consumer's QP is
            // destroyed before unregistration returns), and the provider's own UMR QP
            // is destroyed in remove after unregistration; both are stages of the PCI
            // function's binding.
            let bound = unsafe { self.dev.as_bound() };
            // A failure cannot happen while bound (the kernel UAR is mapped before the
            // IB device registers); the WQEs would stay unexecuted, as on a dead device.
            let _ = self.hw.doorbell64(bound, off, first8);
            sq.bf_half ^= 1;
        }
        (posted, res)
    }

    /// post_recv of a kernel QP (upstream `mlx5_ib_post_recv`): each request's WQE
    /// written at `head`, then the doorbell record once for the call.
    ///
    /// # Errors
    ///
    /// For the first request not posted, as upstream (`recv_wqe::RecvRing::build`):
    /// `ENOMEM` for a full queue, `EINVAL` for more scatter entries than the QP's;
    /// `EINVAL` for a QP without a receive queue of its own (SRQ) and a user QP;
    /// `EIO` after the device's fatal error but for a drain's request.
    pub(super) fn kernel_post_recv(&self, chain: &mut RecvChain<'_>) -> (usize, Result) {
        let (Some(k), Some(QpMem::Kernel { buf, dbr })) = (&self.kdp, &self.mem) else {
            return (0, Err(EINVAL));
        };
        let Some(shape) = &k.rq else {
            return (0, Err(EINVAL));
        };
        let slots = &k.wq.rq_slots;
        let _rq = k.wq.rq.lock();
        if k.kcqs.dead() && !chain.drain() {
            return (0, Err(EIO));
        }
        // The requests posted (only posters, under this lock, store it) and completed
        // so far, for the overflow check.
        let head = slots.head.load(Ordering::Relaxed);
        let tail = slots.tail.load(Ordering::Acquire);
        // SAFETY: the receive queue's lock is held, and `0..rq_bytes` is the receive
        // queue's range of the buffer.
        let Some(ring) = (unsafe { wq_slice(buf, 0, k.rq_bytes) }) else {
            return (0, Err(EINVAL));
        };
        // The ring against the shape checked at creation: its length, once for the call.
        let mut ring = match RecvRing::new(shape, ring, head, tail) {
            Ok(r) => r,
            Err(e) => return (0, Err(Error::from(e))),
        };
        let wrid: &[AtomicU64] = &slots.wrid;
        let mut res = Ok(());
        let mut wr = RecvWrC::new_zeroed();
        while chain.next_into(&mut wr) {
            match ring.build(chain.sg(&wr)) {
                Ok(slot) => {
                    if let Some(w) = wrid.get(slot as usize) {
                        w.store(wr.wr_id, Ordering::Relaxed);
                    }
                }
                Err(e) => {
                    res = Err(Error::from(e));
                    break;
                }
            }
        }
        let posted = ring.head().wrapping_sub(head);
        if posted != 0 {
            // The requests' slots to the poller, the WQEs before the doorbell record.
            slots.head.store(ring.head(), Ordering::Release);
            wmb();
            let _ = coherent_io::write_bytes(dbr, RCV_DBR, &rq_doorbell_record(ring.head()));
        }
        (posted as usize, res)
    }

    /// [`Self::post_one_send`] of a request the shim copied (out of line: the
    /// connected QPs' common requests, read in place, are the loop's hot path).
    #[inline(never)]
    fn post_copied(
        k: &KernelDp,
        sq: &mut SqSide,
        slots: &SqSlots,
        chain: &SendChain<'_>,
        wr: &SendWrC,
        ring: &mut [u8],
    ) -> Result<WqeCtrlSeg> {
        let op = send_op(wr)?;
        let dest;
        let ud = if wr.has_ah != 0 {
            dest = UdDest {
                av: Av::read_from_bytes(&wr.av).map_err(|_| EINVAL)?,
                remote_qpn: wr.remote_qpn,
                remote_qkey: wr.remote_qkey,
            };
            Some(&dest)
        } else {
            None
        };
        let req = OneSend {
            wr_id: wr.wr_id,
            op,
            flags: wr.send_flags,
            list: chain.sg(wr),
            ud,
            reg_list: chain.reg_list(wr),
        };
        Self::post_one_send(k, sq, slots, chain, &req, ring)
    }

    /// Builds one send WQE of `wr` into `ring` and records it; its control segment.
    /// (Inlined into the loop: a call with `wr` in memory cost more than the shim's
    /// copy it replaced, measured by tests/bench/insn-profile.sh.)
    #[inline(always)]
    fn post_one_send(
        k: &KernelDp,
        sq: &mut SqSide,
        slots: &SqSlots,
        chain: &SendChain<'_>,
        wr: &OneSend<'_>,
        ring: &mut [u8],
    ) -> Result<WqeCtrlSeg> {
        let list = wr.list;
        let inl = ChainInline { chain, list };
        let payload = if wr.flags & send_flag::INLINE != 0 {
            Payload::Inline(&inl)
        } else {
            Payload::Gather(list)
        };
        let op = wr.op;
        let swr = SendWr {
            op,
            payload,
            signaled: wr.flags & send_flag::SIGNALED != 0,
            solicited: wr.flags & send_flag::SOLICITED != 0,
            fence: wr.flags & send_flag::FENCE != 0,
            ud: wr.ud,
            reg_list: wr.reg_list,
        };
        let umr = match op {
            SendOp::LocalInv { .. } => wc_op::LOCAL_INV as u8,
            SendOp::RegMr { .. } | SendOp::Umr { .. } => wc_op::REG_MR as u8,
            _ => 0,
        };
        let head = sq.st.head;
        let p = build_send(&k.sq, &mut sq.st, &swr, ring).map_err(Error::from)?;
        record_send(slots, &p, head, wr.wr_id, umr);
        Ok(p.ctrl)
    }
}

/// Records the WQE `p` built at producer counter `head`: its `wr_id`, its start and its
/// UMR completion opcode (`umr`, 0 for none), for the poller (`kdp`).
#[inline(always)]
fn record_send(slots: &SqSlots, p: &Posted, head: u32, wr_id: u64, umr: u8) {
    if let Some(slot) = slots.slots.get(p.idx as usize) {
        slot.wrid.store(wr_id, Ordering::Relaxed);
        slot.wqe_head.store(head, Ordering::Relaxed);
        slot.umr_op.store(umr, Ordering::Relaxed);
    }
}

/// An inline request's entries, each one's bytes read from the consumer's buffer as
/// the WQE builder copies them ([`SendChain::inline_bytes`]).
struct ChainInline<'c, 'a> {
    /// The chain the request is of.
    chain: &'c SendChain<'a>,
    /// The request's list.
    list: &'a [IbSge],
}

impl InlineParts for ChainInline<'_, '_> {
    fn count(&self) -> usize {
        self.list.len()
    }
    fn part(&self, i: usize) -> &[u8] {
        self.list.get(i).map_or(&[], |e| self.chain.inline_bytes(e))
    }
}

/// One send request as post_send builds it, read in place or from the shim's copy.
struct OneSend<'a> {
    /// `wr_id`.
    wr_id: u64,
    /// The WQE and its operands.
    op: SendOp,
    /// [`send_flag`] bits.
    flags: u32,
    /// The gather list (inline: the entries whose bytes are copied).
    list: &'a [IbSge],
    /// A datagram QP's destination.
    ud: Option<&'a UdDest>,
    /// [`SendWr::reg_list`].
    reg_list: &'a [u8],
}
