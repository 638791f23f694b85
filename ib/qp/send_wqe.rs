// SPDX-License-Identifier: GPL-2.0

//! Send WQE building for kernel `post_send`, as upstream `mlx5_ib_post_send` (`wr.c`)
//! builds one work request: the checks in upstream's order, the segments of the
//! opcode and QP type (`ifc::wqe` / `ifc::umr` layouts), the control segment
//! (`mlx5r_begin_wqe` / `mlx5r_finish_wqe`) and the new producer counter.
//!
//! The WQE is written straight into the ring, 16 bytes at a time, wrapping at the
//! ring's end as upstream's `handle_post_send_edge` does; the control segment goes
//! last, once `ds` is known. Ringing the doorbell (record = [`SqState::cur_post`],
//! then the first 8 bytes of the last control segment to the UAR / BlueFlame
//! register) is the caller's, after a batch.
//!
//! Pure `core` code, host-tested; not yet part of the kernel module's tree.

use crate::errno::Errno;
use crate::ib::qp::modify::QpType;
use crate::ifc::av::Av;
use crate::ifc::umr::{vals as umr_vals, MkeySeg, UmrCtrlSeg};
use crate::ifc::wqe::{
    opcode, vals, WqeCtrlSeg, WqeDataSeg, WqeDatagramSeg, WqeInlineSeg, WqeRaddrSeg,
};
use zerocopy::byteorder::big_endian::{U32, U64};
use zerocopy::IntoBytes;

/// One gather entry (`struct ib_sge`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sge {
    /// Address in the key's space.
    pub addr: u64,
    /// Bytes.
    pub length: u32,
    /// Local key.
    pub lkey: u32,
}

/// What a send work request does (`ib_wr_opcode` with its operands).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendOp {
    /// `IB_WR_SEND`.
    Send,
    /// `IB_WR_SEND_WITH_IMM`; the immediate is the value of the consumer's `__be32`
    /// (`be32_to_cpu`), written back big-endian, so the wire bytes are the consumer's.
    SendImm(u32),
    /// `IB_WR_RDMA_WRITE`.
    RdmaWrite {
        /// Remote address.
        raddr: u64,
        /// Remote key.
        rkey: u32,
    },
    /// `IB_WR_RDMA_WRITE_WITH_IMM`.
    RdmaWriteImm {
        /// Remote address.
        raddr: u64,
        /// Remote key.
        rkey: u32,
        /// Immediate data.
        imm: u32,
    },
    /// `IB_WR_RDMA_READ`.
    RdmaRead {
        /// Remote address.
        raddr: u64,
        /// Remote key.
        rkey: u32,
    },
    /// `IB_WR_ATOMIC_CMP_AND_SWP`.
    CmpSwap {
        /// Remote address.
        raddr: u64,
        /// Remote key.
        rkey: u32,
        /// Compare value.
        compare: u64,
        /// Swap value.
        swap: u64,
    },
    /// `IB_WR_ATOMIC_FETCH_AND_ADD`.
    FetchAdd {
        /// Remote address.
        raddr: u64,
        /// Remote key.
        rkey: u32,
        /// Addend.
        add: u64,
    },
    /// `IB_WR_LOCAL_INV` of an mkey.
    LocalInv {
        /// The key to invalidate.
        rkey: u32,
    },
}

/// The payload of a send work request.
#[derive(Clone, Copy, Debug)]
pub enum Payload<'a> {
    /// Gather list (`sg_list`); entries of 0 bytes are skipped as upstream does.
    Gather(&'a [Sge]),
    /// `IB_SEND_INLINE`: the bytes of each entry, copied into the WQE.
    Inline(&'a [&'a [u8]]),
}

/// Destination of a UD / GSI / SMI send (`struct ib_ud_wr`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdDest {
    /// The address handle's address vector (as create_ah built it).
    pub av: Av,
    /// Remote QPN.
    pub remote_qpn: u32,
    /// Remote Q_Key.
    pub remote_qkey: u32,
}

/// A send work request.
#[derive(Clone, Copy, Debug)]
pub struct SendWr<'a> {
    /// Opcode and operands.
    pub op: SendOp,
    /// Gather list or inline data.
    pub payload: Payload<'a>,
    /// `IB_SEND_SIGNALED`.
    pub signaled: bool,
    /// `IB_SEND_SOLICITED`.
    pub solicited: bool,
    /// `IB_SEND_FENCE`.
    pub fence: bool,
    /// Destination (UD / GSI / SMI QPs; ignored on connected QPs).
    pub ud: Option<UdDest>,
}

/// The send queue as created (`mlx5_ib_wq` and the QP's fixed fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SqGeometry {
    /// QP type.
    pub qp_type: QpType,
    /// QP number (24 bits).
    pub qpn: u32,
    /// Basic blocks in the ring (`sq.wqe_cnt`, a power of two).
    pub wqe_cnt: u32,
    /// Work requests the queue holds (`sq.max_post`).
    pub max_post: u32,
    /// Gather entries per WQE (`sq.max_gs`).
    pub max_gs: u32,
    /// Inline bytes per WQE (`max_inline_data`).
    pub max_inline: u32,
    /// `IB_SIGNAL_ALL_WR` (upstream's `sq_signal_bits`).
    pub sig_all: bool,
}

/// The send queue's counters (`mlx5_ib_wq`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SqState {
    /// Producer counter in basic blocks (`sq.cur_post`, 16 bits as upstream's).
    pub cur_post: u16,
    /// Work requests posted (`sq.head`).
    pub head: u32,
    /// Work requests completed (`sq.tail`).
    pub tail: u32,
    /// Fence mode the next WQE inherits (`qp->next_fence`).
    pub next_fence: u8,
}

/// What one posted work request occupies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posted {
    /// Slot of its first basic block (`idx`: where the caller records `wr_id`).
    pub idx: u32,
    /// Basic blocks it takes.
    pub bbs: u32,
    /// Its control segment as written.
    pub ctrl: WqeCtrlSeg,
}

/// Writes 16-byte-aligned pieces of one WQE into the ring from a start byte, wrapping
/// at the end of the ring.
struct RingWriter<'r> {
    ring: &'r mut [u8],
    start: usize,
    off: usize,
}

impl RingWriter<'_> {
    fn put(&mut self, bytes: &[u8]) {
        let len = self.ring.len();
        for (i, b) in bytes.iter().enumerate() {
            self.ring[(self.start + self.off + i) % len] = *b;
        }
        self.off += bytes.len();
    }

    fn pad_to_ds(&mut self) {
        let pad = (vals::SEND_WQE_DS - self.off % vals::SEND_WQE_DS) % vals::SEND_WQE_DS;
        self.put(&[0u8; vals::SEND_WQE_DS][..pad]);
    }
}

/// The device opcode of a work request (upstream `mlx5_ib_opcode[]`).
fn device_opcode(op: &SendOp) -> u8 {
    match op {
        SendOp::Send => opcode::SEND,
        SendOp::SendImm(_) => opcode::SEND_IMM,
        SendOp::RdmaWrite { .. } => opcode::RDMA_WRITE,
        SendOp::RdmaWriteImm { .. } => opcode::RDMA_WRITE_IMM,
        SendOp::RdmaRead { .. } => opcode::RDMA_READ,
        SendOp::CmpSwap { .. } => opcode::ATOMIC_CS,
        SendOp::FetchAdd { .. } => opcode::ATOMIC_FA,
        SendOp::LocalInv { .. } => opcode::UMR,
    }
}

/// Whether the QP type carries the opcode: RDMA on RC / UC / XRC (read: not UC),
/// local invalidate on RC / XRC, only sends on datagram QPs (IBTA 1.7 table 50:
/// "Supported service types"). Upstream does not check (it builds a WQE the device
/// completes in error); this provider refuses the request with `-EINVAL`.
fn op_allowed(t: QpType, op: &SendOp) -> bool {
    let datagram = matches!(t, QpType::Ud | QpType::Gsi | QpType::Smi);
    match op {
        SendOp::Send | SendOp::SendImm(_) => t != QpType::XrcTgt,
        SendOp::RdmaWrite { .. } | SendOp::RdmaWriteImm { .. } => !datagram && t != QpType::XrcTgt,
        SendOp::RdmaRead { .. }
        | SendOp::CmpSwap { .. }
        | SendOp::FetchAdd { .. }
        | SendOp::LocalInv { .. } => matches!(t, QpType::Rc | QpType::XrcIni),
    }
}

/// Builds one send WQE into `ring` (the SQ buffer, `wqe_cnt` basic blocks) at the
/// producer counter and advances `st` (upstream `mlx5_ib_post_send`, one work request
/// of a batch: `head` counts it at once, so the overflow check is `head - tail >=
/// max_post`, upstream's `mlx5r_wq_overflow` with its `nreq` folded into `head`).
///
/// Errors, in upstream's order: more gather entries than `max_gs` `-EINVAL`; queue
/// full `-ENOMEM`; an atomic `-EOPNOTSUPP` (upstream `handle_qpt_rc`: "Atomic
/// operations are not supported yet"); inline data over `max_inline` `-ENOMEM`
/// (`set_data_inl_seg`). An opcode the QP type does not carry, a UD-type QP without
/// a destination, or a geometry the ring does not match: `-EINVAL`. On error nothing
/// of `st` changes.
pub fn build_send(
    geo: &SqGeometry,
    st: &mut SqState,
    wr: &SendWr<'_>,
    ring: &mut [u8],
) -> Result<Posted, Errno> {
    let wqe_cnt = geo.wqe_cnt as usize;
    if !geo.wqe_cnt.is_power_of_two() || ring.len() != wqe_cnt * vals::SEND_WQE_BB {
        return Err(Errno::EINVAL);
    }
    let num_sge = match wr.payload {
        Payload::Gather(s) => s.len(),
        Payload::Inline(s) => s.len(),
    };
    if num_sge > geo.max_gs as usize {
        return Err(Errno::EINVAL);
    }
    if st.head.wrapping_sub(st.tail) >= geo.max_post {
        return Err(Errno::ENOMEM);
    }
    if !op_allowed(geo.qp_type, &wr.op) {
        return Err(Errno::EINVAL);
    }
    if matches!(wr.op, SendOp::CmpSwap { .. } | SendOp::FetchAdd { .. }) {
        return Err(Errno::EOPNOTSUPP);
    }
    let datagram = matches!(geo.qp_type, QpType::Ud | QpType::Gsi | QpType::Smi);
    if datagram && wr.ud.is_none() {
        return Err(Errno::EINVAL);
    }
    let inline_len = match wr.payload {
        Payload::Inline(s) => s.iter().map(|b| b.len()).sum::<usize>(),
        Payload::Gather(_) => 0,
    };
    if inline_len > geo.max_inline as usize {
        return Err(Errno::ENOMEM);
    }
    // LOCAL_INV carries no data (upstream sets `num_sge = 0`).
    let linv = matches!(wr.op, SendOp::LocalInv { .. });

    // Size in 16-byte units, before writing: the WQE must fit the ds field and
    // `MLX5_SEND_WQE_MAX_WQEBBS`.
    let mut ds = 1usize;
    ds += match wr.op {
        SendOp::RdmaWrite { .. } | SendOp::RdmaWriteImm { .. } | SendOp::RdmaRead { .. } => {
            if geo.qp_type == QpType::Uc && matches!(wr.op, SendOp::RdmaRead { .. }) {
                0
            } else {
                1
            }
        }
        SendOp::LocalInv { .. } => {
            (core::mem::size_of::<UmrCtrlSeg>() + core::mem::size_of::<MkeySeg>())
                / vals::SEND_WQE_DS
        }
        _ => 0,
    };
    if datagram {
        ds += core::mem::size_of::<WqeDatagramSeg>() / vals::SEND_WQE_DS;
    }
    if !linv {
        ds += match wr.payload {
            Payload::Gather(s) => s.iter().filter(|e| e.length != 0).count(),
            Payload::Inline(_) if inline_len == 0 => 0,
            Payload::Inline(_) => (inline_len + 4).div_ceil(vals::SEND_WQE_DS),
        };
    }
    let bbs = (ds * vals::SEND_WQE_DS).div_ceil(vals::SEND_WQE_BB);
    if ds > vals::CTRL_DS_MASK as usize || bbs > vals::SEND_WQE_MAX_WQEBBS || bbs > wqe_cnt {
        return Err(Errno::EINVAL);
    }

    let idx = usize::from(st.cur_post) & (wqe_cnt - 1);
    let mut w = RingWriter {
        ring,
        start: idx * vals::SEND_WQE_BB,
        off: core::mem::size_of::<WqeCtrlSeg>(),
    };
    match wr.op {
        SendOp::RdmaWrite { raddr, rkey }
        | SendOp::RdmaWriteImm { raddr, rkey, .. }
        | SendOp::RdmaRead { raddr, rkey } => {
            // UC carries no read; a raddr segment only for writes (`IB_QPT_UC` case).
            if !(geo.qp_type == QpType::Uc && matches!(wr.op, SendOp::RdmaRead { .. })) {
                let seg = WqeRaddrSeg {
                    raddr: U64::new(raddr),
                    rkey: U32::new(rkey),
                    reserved: [0; 4],
                };
                w.put(seg.as_bytes());
            }
        }
        SendOp::LocalInv { .. } => {
            // `set_linv_umr_seg` / `set_linv_mkey_seg`.
            let umr = UmrCtrlSeg {
                flags: umr_vals::UMR_INLINE,
                mkey_mask: U64::new(umr_vals::MKEY_MASK_FREE),
                ..Default::default()
            };
            let mkey = MkeySeg {
                status: umr_vals::MKEY_STATUS_FREE,
                ..Default::default()
            };
            w.put(umr.as_bytes());
            w.put(mkey.as_bytes());
        }
        _ => {}
    }
    if let (true, Some(ud)) = (datagram, wr.ud) {
        // `set_datagram_seg`: the AV, the remote QPN with the extended-AV flag, the
        // Q_Key in the first word of `key`.
        let mut av = ud.av;
        av.dqp_dct = U32::new((ud.remote_qpn & 0x00ff_ffff) | vals::EXTENDED_UD_AV);
        av.key = [0; 8];
        av.key[..4].copy_from_slice(&ud.remote_qkey.to_be_bytes());
        w.put(WqeDatagramSeg { av }.as_bytes());
    }
    if !linv {
        match wr.payload {
            Payload::Gather(list) => {
                for e in list.iter().filter(|e| e.length != 0) {
                    let seg = WqeDataSeg {
                        byte_count: U32::new(e.length),
                        lkey: U32::new(e.lkey),
                        addr: U64::new(e.addr),
                    };
                    w.put(seg.as_bytes());
                }
            }
            Payload::Inline(list) if inline_len != 0 => {
                // `inline_len <= max_inline`, a `u32`.
                let seg = WqeInlineSeg {
                    byte_count: U32::new(inline_len as u32 | vals::INLINE_SEG),
                };
                w.put(seg.as_bytes());
                for b in list {
                    w.put(b);
                }
                w.pad_to_ds();
            }
            Payload::Inline(_) => {}
        }
    }

    // Fence: upstream `mlx5_ib_post_send` (REG_MR, the only setter of `next_fence`,
    // is not built here, so the next WQE inherits none).
    let fence = if wr.fence {
        if st.next_fence != 0 {
            vals::FENCE_MODE_SMALL_AND_FENCE
        } else {
            vals::FENCE_MODE_FENCE
        }
    } else {
        st.next_fence
    };
    let imm = match wr.op {
        SendOp::SendImm(i) => i,
        SendOp::RdmaWriteImm { imm, .. } => imm,
        SendOp::LocalInv { rkey } => rkey,
        _ => 0,
    };
    let mut fm_ce_se = fence;
    if geo.sig_all || wr.signaled {
        fm_ce_se |= vals::CTRL_CQ_UPDATE;
    }
    if wr.solicited {
        fm_ce_se |= vals::CTRL_SOLICITED;
    }
    let ctrl = WqeCtrlSeg {
        opmod_idx_opcode: U32::new(
            (u32::from(st.cur_post) << 8) | u32::from(device_opcode(&wr.op)),
        ),
        qpn_ds: U32::new(((geo.qpn & 0x00ff_ffff) << 8) | ds as u32),
        signature: 0,
        rsvd: [0; 2],
        fm_ce_se,
        imm: U32::new(imm),
    };
    w.off = 0;
    w.put(ctrl.as_bytes());

    st.next_fence = 0;
    // `bbs <= 16`, checked above.
    st.cur_post = st.cur_post.wrapping_add(bbs as u16);
    st.head = st.head.wrapping_add(1);
    Ok(Posted {
        idx: idx as u32,
        bbs: bbs as u32,
        ctrl,
    })
}
