// SPDX-License-Identifier: GPL-2.0

//! Send WQE building for kernel `post_send`, as upstream `mlx5_ib_post_send` (`wr.c`)
//! builds one work request: the checks in upstream's order, the segments of the
//! opcode and QP type (`ifc::wqe` / `ifc::umr` layouts), the control segment
//! (`mlx5r_begin_wqe` / `mlx5r_finish_wqe`) and the new producer counter.
//!
//! An XRC initiator's WQE has the XRC segment after the control segment, whatever
//! the opcode, as upstream's `case IB_QPT_XRC_INI` reserves it. Upstream never writes
//! it: `struct ib_send_wr` has no remote SRQ number, so a kernel XRC send names the
//! SRQ number its (zeroed) buffer holds there, 0. Written here as zeros, so that a
//! wrapped queue names 0 as a fresh one does.
//!
//! The WQE is written straight into the ring, 16 bytes at a time, wrapping at the
//! ring's end as upstream's `handle_post_send_edge` does; the control segment goes
//! last, once `ds` is known. The kernel consumers' common request (SEND / RDMA WRITE /
//! RDMA READ with a gather list on RC or UC) takes a shorter builder with the same
//! checks and bytes (`build_common`, compared with the general one in the tests),
//! which the kernel post path also calls with the request's parts, without a
//! [`SendWr`] ([`build_gather`]). Ringing the doorbell (record = [`SqState::cur_post`],
//! then the first 8 bytes of the last control segment to the UAR / BlueFlame
//! register) is the caller's, after a batch.
//!
//! Pure `core` code, host-tested and run as a KUnit suite.

use crate::errno::Errno;
use crate::ib::mr::commands::ACCESS_MODE_MTT;
use crate::ib::qp::modify::QpType;
use crate::ifc::av::Av;
use crate::ifc::umr::{vals as umr_vals, MkeySeg, UmrCtrlSeg};
use crate::ifc::wqe::{
    opcode, vals, WqeCtrlSeg, WqeDataSeg, WqeDatagramSeg, WqeInlineSeg, WqeRaddrSeg, WqeXrcSeg,
};
use zerocopy::byteorder::big_endian::{U16, U32, U64};
use zerocopy::IntoBytes;

/// One gather entry, laid out as `struct ib_sge` (the kernel post path reads the
/// consumer's list as these in place).
#[repr(C)]
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
    /// `IB_WR_REG_MR` of a fast-registration MR (MTT mode; upstream `set_reg_wr`):
    /// the translation entries are [`SendWr::reg_list`], inline in the WQE when they
    /// take at most 64 bytes, else read by the device from `desc_addr`.
    RegMr {
        /// The key the MR gets (`reg_wr->key`: its low byte is the new variant).
        key: u32,
        /// `IB_ACCESS_*` bits it gets.
        access: u32,
        /// IOVA of its first byte.
        iova: u64,
        /// Its length.
        length: u64,
        /// log2 of its page size.
        page_shift: u8,
        /// DMA address of the translation list (when not inline).
        desc_addr: u64,
        /// The key the device reads the list with (the PD's `local_dma_lkey`).
        desc_lkey: u32,
    },
    /// The provider's own UMR WQE on its UMR QP (upstream `mlx5r_umr_post_send`): the
    /// segments after the control segment are [`SendWr::reg_list`] as built by
    /// `ib/mr/umr.rs` (112 or 128 bytes), with the initiator small fence.
    Umr {
        /// The mkey the WQE changes (the control segment's `imm`).
        key: u32,
    },
}

/// `IB_ACCESS_*` bits a registration reads (`ib_verbs.h`).
pub mod ib_access {
    /// `IB_ACCESS_LOCAL_WRITE`.
    pub const LOCAL_WRITE: u32 = 1 << 0;
    /// `IB_ACCESS_REMOTE_WRITE`.
    pub const REMOTE_WRITE: u32 = 1 << 1;
    /// `IB_ACCESS_REMOTE_READ`.
    pub const REMOTE_READ: u32 = 1 << 2;
    /// `IB_ACCESS_REMOTE_ATOMIC`.
    pub const REMOTE_ATOMIC: u32 = 1 << 3;
}

/// Most bytes of translation entries a REG_MR WQE carries inline (upstream
/// `MLX5_IB_SQ_UMR_INLINE_THRESHOLD`).
pub const UMR_INLINE_THRESHOLD: usize = 64;

/// Bytes of a UMR control segment and an mkey segment (an inline UMR without entries).
pub const UMR_SEGS: usize = 112;
/// [`UMR_SEGS`] and a data segment pointing to translation entries.
pub const UMR_SEGS_DATA: usize = 128;

/// The payload of a send work request.
#[derive(Clone, Copy, Debug)]
pub enum Payload<'a> {
    /// Gather list (`sg_list`); entries of 0 bytes are skipped as upstream does.
    Gather(&'a [Sge]),
    /// `IB_SEND_INLINE`: the bytes of each entry, copied into the WQE.
    Inline(&'a dyn InlineParts),
}

/// The entries of an inline request, each entry's bytes read where the consumer left
/// them when the WQE is written (a list of the bytes gathered beforehand would take
/// 16 bytes a possible entry of the post path's stack).
pub trait InlineParts {
    /// Entries (the request's `num_sge`).
    fn count(&self) -> usize;
    /// The bytes of entry `i` (`i < count()`).
    fn part(&self, i: usize) -> &[u8];
}

impl<const N: usize> InlineParts for [&[u8]; N] {
    fn count(&self) -> usize {
        N
    }
    fn part(&self, i: usize) -> &[u8] {
        self.get(i).copied().unwrap_or_default()
    }
}

impl core::fmt::Debug for dyn InlineParts + '_ {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "InlineParts({} entries)", self.count())
    }
}

/// The bytes of each entry of `parts`, in order.
fn inline_parts(parts: &dyn InlineParts) -> impl Iterator<Item = &[u8]> {
    (0..parts.count()).map(|i| parts.part(i))
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
    /// Destination (UD / GSI / SMI QPs; ignored on connected QPs). By reference: the
    /// request is built on the stack per work request, and a connected QP's carries
    /// none (an inline `Option<UdDest>` cost 48 bytes of address vector copied each
    /// time, measured by tests/bench/insn-profile.sh).
    pub ud: Option<&'a UdDest>,
    /// [`SendOp::RegMr`]: the MR's translation entries (`struct mlx5_mtt`, big-endian
    /// page addresses with their read / write bits); [`SendOp::Umr`]: the WQE's
    /// segments after the control segment; empty otherwise.
    pub reg_list: &'a [u8],
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
    /// Fence mode of a REG_MR WQE (upstream `dev->umr_fence`, from cap `umr_fence`).
    pub umr_fence: u8,
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
    /// Copies `bytes` (at most one WQE, never longer than the ring). Whole 16-byte
    /// units at a 16-byte offset (every segment) go one unit at a time as fixed-size
    /// copies: a unit never straddles the ring's end, whose length is whole basic
    /// blocks. Other pieces (inline data, padding) go in one or two copies, split where
    /// the ring ends. The ring's length is a power of two (`wqe_cnt` basic blocks,
    /// checked by [`build_send`]), so a position wraps with a mask.
    fn put(&mut self, bytes: &[u8]) {
        const DS: usize = vals::SEND_WQE_DS;
        let len = self.ring.len();
        let mask = len.wrapping_sub(1);
        if bytes.len() % DS == 0 && self.off % DS == 0 {
            for unit in bytes.chunks_exact(DS) {
                let at = self.start.wrapping_add(self.off) & mask;
                if let (Some(dst), Some(src)) = (
                    self.ring
                        .get_mut(at..)
                        .and_then(|r| r.first_chunk_mut::<DS>()),
                    unit.first_chunk::<DS>(),
                ) {
                    // (Always: `at` is a multiple of 16 below the ring's length.)
                    *dst = *src;
                }
                self.off += DS;
            }
            return;
        }
        let at = self.start.wrapping_add(self.off) & mask;
        let first = bytes.len().min(len - at);
        self.ring[at..at + first].copy_from_slice(&bytes[..first]);
        let rest = &bytes[first..];
        self.ring[..rest.len()].copy_from_slice(rest);
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
        SendOp::LocalInv { .. } | SendOp::RegMr { .. } | SendOp::Umr { .. } => opcode::UMR,
    }
}

/// `get_umr_flags`: the mkey segment's permission bits for `IB_ACCESS_*` `access`.
fn umr_perm(access: u32) -> u8 {
    let mut f = umr_vals::PERM_LOCAL_READ;
    if access & ib_access::REMOTE_ATOMIC != 0 {
        f |= umr_vals::PERM_ATOMIC;
    }
    if access & ib_access::REMOTE_WRITE != 0 {
        f |= umr_vals::PERM_REMOTE_WRITE;
    }
    if access & ib_access::REMOTE_READ != 0 {
        f |= umr_vals::PERM_REMOTE_READ;
    }
    if access & ib_access::LOCAL_WRITE != 0 {
        f |= umr_vals::PERM_LOCAL_WRITE;
    }
    f
}

/// `frwr_mkey_mask`: what a REG_MR WQE changes in the mkey.
fn frwr_mkey_mask(atomic: bool) -> u64 {
    let mut m = umr_vals::MKEY_MASK_LEN
        | umr_vals::MKEY_MASK_PAGE_SIZE
        | umr_vals::MKEY_MASK_START_ADDR
        | umr_vals::MKEY_MASK_EN_RINVAL
        | umr_vals::MKEY_MASK_KEY
        | umr_vals::MKEY_MASK_LR
        | umr_vals::MKEY_MASK_LW
        | umr_vals::MKEY_MASK_RR
        | umr_vals::MKEY_MASK_RW
        | umr_vals::MKEY_MASK_SMALL_FENCE
        | umr_vals::MKEY_MASK_FREE;
    if atomic {
        m |= umr_vals::MKEY_MASK_A;
    }
    m
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
        | SendOp::LocalInv { .. }
        | SendOp::RegMr { .. } => matches!(t, QpType::Rc | QpType::XrcIni),
        SendOp::Umr { .. } => t == QpType::Rc,
    }
}

/// The fence mode of a consumer's request (upstream `mlx5_ib_post_send`): with
/// IB_SEND_FENCE a full fence, combined with the small fence a REG_MR left; else what
/// the last WQE left.
fn consumer_fence(st: &SqState, fence: bool) -> u8 {
    match (fence, st.next_fence != 0) {
        (true, true) => vals::FENCE_MODE_SMALL_AND_FENCE,
        (true, false) => vals::FENCE_MODE_FENCE,
        (false, _) => st.next_fence,
    }
}

/// The control segment's `fm_ce_se`: the fence mode, a completion when the request is
/// signaled (or the QP signals all), solicited.
fn fm_ce_se(geo: &SqGeometry, signaled: bool, solicited: bool, fence: u8) -> u8 {
    let mut f = fence;
    if geo.sig_all || signaled {
        f |= vals::CTRL_CQ_UPDATE;
    }
    if solicited {
        f |= vals::CTRL_SOLICITED;
    }
    f
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
#[inline(always)]
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
    if let Some(r) = build_common(geo, st, wr, ring) {
        return r;
    }
    build_general(geo, st, wr, ring)
}

/// [`build_send`] of any request, once the ring matches the geometry.
fn build_general(
    geo: &SqGeometry,
    st: &mut SqState,
    wr: &SendWr<'_>,
    ring: &mut [u8],
) -> Result<Posted, Errno> {
    let wqe_cnt = geo.wqe_cnt as usize;
    let num_sge = match wr.payload {
        Payload::Gather(s) => s.len(),
        Payload::Inline(s) => s.count(),
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
        Payload::Inline(s) => inline_parts(s).map(<[u8]>::len).sum::<usize>(),
        Payload::Gather(_) => 0,
    };
    if inline_len > geo.max_inline as usize {
        return Err(Errno::ENOMEM);
    }
    let reg = matches!(wr.op, SendOp::RegMr { .. });
    // `set_reg_wr`: "Invalid IB_SEND_INLINE send flag".
    if reg && matches!(wr.payload, Payload::Inline(_)) {
        return Err(Errno::EINVAL);
    }
    let reg_inline = reg && wr.reg_list.len() <= UMR_INLINE_THRESHOLD;
    let umr = matches!(wr.op, SendOp::Umr { .. });
    // The provider's UMR: its two or three segments, whole 16-byte units, no data.
    if umr
        && (!matches!(wr.reg_list.len(), UMR_SEGS | UMR_SEGS_DATA)
            || !matches!(wr.payload, Payload::Gather(&[])))
    {
        return Err(Errno::EINVAL);
    }
    // LOCAL_INV and REG_MR carry no data (upstream sets `num_sge = 0`).
    let linv = matches!(wr.op, SendOp::LocalInv { .. }) || reg || umr;

    // Size in 16-byte units, before writing: the WQE must fit the ds field and
    // `MLX5_SEND_WQE_MAX_WQEBBS`. The control segment, and an initiator's XRC segment.
    let xrc = geo.qp_type == QpType::XrcIni;
    let head = 1 + usize::from(xrc);
    let mut ds = head;
    ds += match wr.op {
        SendOp::RdmaWrite { .. } | SendOp::RdmaWriteImm { .. } | SendOp::RdmaRead { .. } => 1,
        SendOp::LocalInv { .. } => {
            (core::mem::size_of::<UmrCtrlSeg>() + core::mem::size_of::<MkeySeg>())
                / vals::SEND_WQE_DS
        }
        SendOp::RegMr { .. } => {
            let segs = (core::mem::size_of::<UmrCtrlSeg>() + core::mem::size_of::<MkeySeg>())
                / vals::SEND_WQE_DS;
            if reg_inline {
                // The entries, then the WQE padded to whole basic blocks.
                let n = head + segs + wr.reg_list.len().div_ceil(vals::SEND_WQE_DS);
                n.next_multiple_of(vals::SEND_WQE_BB / vals::SEND_WQE_DS) - head
            } else {
                segs + 1
            }
        }
        SendOp::Umr { .. } => wr.reg_list.len() / vals::SEND_WQE_DS,
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
    if xrc {
        // Upstream's `xrc = seg; seg += sizeof(*xrc)`: reserved, remote SRQ 0.
        w.put(WqeXrcSeg::default().as_bytes());
    }
    match wr.op {
        SendOp::RdmaWrite { raddr, rkey }
        | SendOp::RdmaWriteImm { raddr, rkey, .. }
        | SendOp::RdmaRead { raddr, rkey } => {
            // `handle_rdma_op` (a read reaches here on RC / XRC only).
            let seg = WqeRaddrSeg {
                raddr: U64::new(raddr),
                rkey: U32::new(rkey),
                reserved: [0; 4],
            };
            w.put(seg.as_bytes());
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
        SendOp::Umr { .. } => w.put(wr.reg_list),
        SendOp::RegMr {
            key,
            access,
            iova,
            length,
            page_shift,
            desc_addr,
            desc_lkey,
        } => {
            let atomic = access & ib_access::REMOTE_ATOMIC != 0;
            let list = wr.reg_list.len();
            // `set_reg_umr_seg`: the list in octowords, rounded to 64 bytes.
            let xlt = list.next_multiple_of(umr_vals::UMR_FLEX_ALIGNMENT) / umr_vals::UMR_OCTOWORD;
            let mut flags = umr_vals::UMR_CHECK_NOT_FREE;
            if reg_inline {
                flags |= umr_vals::UMR_INLINE;
            }
            let umr = UmrCtrlSeg {
                flags,
                xlt_octowords: U16::new(u16::try_from(xlt).map_err(|_| Errno::EINVAL)?),
                mkey_mask: U64::new(frwr_mkey_mask(atomic)),
                ..Default::default()
            };
            // `set_reg_mkey_seg`: MTT entries, two per octoword, rounded to 8.
            let entries = list / core::mem::size_of::<u64>();
            let mkey = MkeySeg {
                flags: umr_perm(access) | ACCESS_MODE_MTT,
                qpn_mkey7_0: U32::new((key & 0xff) | 0xffff_ff00),
                flags_pd: U32::new(umr_vals::MKEY_REMOTE_INVAL),
                start_addr: U64::new(iova),
                len: U64::new(length),
                xlt_oct_size: U32::new((entries.next_multiple_of(8) >> 1) as u32),
                log2_page_size: page_shift,
                ..Default::default()
            };
            w.put(umr.as_bytes());
            w.put(mkey.as_bytes());
            if reg_inline {
                w.put(wr.reg_list);
                // Zeros up to the end of the last basic block.
                let pad = (vals::SEND_WQE_BB - w.off % vals::SEND_WQE_BB) % vals::SEND_WQE_BB;
                w.put(&[0u8; vals::SEND_WQE_BB][..pad]);
            } else {
                // `set_reg_data_seg`.
                let seg = WqeDataSeg {
                    byte_count: U32::new(
                        u32::try_from(list.next_multiple_of(umr_vals::UMR_FLEX_ALIGNMENT))
                            .map_err(|_| Errno::EINVAL)?,
                    ),
                    lkey: U32::new(desc_lkey),
                    addr: U64::new(desc_addr),
                };
                w.put(seg.as_bytes());
            }
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
                for b in inline_parts(list) {
                    w.put(b);
                }
                w.pad_to_ds();
            }
            Payload::Inline(_) => {}
        }
    }

    // Fence: upstream `mlx5_ib_post_send`: a REG_MR WQE has the device's UMR fence
    // and makes the next WQE wait for it (initiator small fence).
    let fence = if reg {
        geo.umr_fence
    } else if umr {
        // `mlx5r_umr_post_send`: `MLX5_FENCE_MODE_INITIATOR_SMALL`.
        vals::FENCE_MODE_INITIATOR_SMALL
    } else {
        consumer_fence(st, wr.fence)
    };
    let imm = match wr.op {
        SendOp::SendImm(i) => i,
        SendOp::RdmaWriteImm { imm, .. } => imm,
        SendOp::LocalInv { rkey } => rkey,
        SendOp::RegMr { key, .. } | SendOp::Umr { key } => key,
        _ => 0,
    };
    let fm_ce_se = fm_ce_se(geo, wr.signaled, wr.solicited, fence);
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

    st.next_fence = if reg {
        vals::FENCE_MODE_INITIATOR_SMALL
    } else {
        0
    };
    // `bbs <= 16`, checked above.
    st.cur_post = st.cur_post.wrapping_add(bbs as u16);
    st.head = st.head.wrapping_add(1);
    Ok(Posted {
        idx: idx as u32,
        bbs: bbs as u32,
        ctrl,
    })
}

/// [`build_send`] of the common request, in fewer steps: a SEND or RDMA WRITE (with or
/// without immediate) or an RDMA READ with a gather list on an RC or UC QP (a READ on
/// RC only), the kernel consumers' traffic. `None` for any other request, which the
/// general builder takes. The same checks in the same order, the same bytes (the host
/// tests compare the two on every such request they build): it skips the general
/// builder's walk over the opcodes and payload kinds it does not have, which under a
/// guest's instruction emulation cost more than the WQE's stores. Inlined into the
/// post loop, as its unit writer: a call is a measurable share of a request under TCG.
#[inline(always)]
fn build_common(
    geo: &SqGeometry,
    st: &mut SqState,
    wr: &SendWr<'_>,
    ring: &mut [u8],
) -> Option<Result<Posted, Errno>> {
    let Payload::Gather(list) = wr.payload else {
        return None;
    };
    let flags = SendFlags {
        signaled: wr.signaled,
        solicited: wr.solicited,
        fence: wr.fence,
    };
    build_gather(geo, st, wr.op, list, flags, ring)
}

/// A request's [`SendWr::signaled`], [`SendWr::solicited`] and [`SendWr::fence`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendFlags {
    /// `IB_SEND_SIGNALED`.
    pub signaled: bool,
    /// `IB_SEND_SOLICITED`.
    pub solicited: bool,
    /// `IB_SEND_FENCE`.
    pub fence: bool,
}

/// [`build_common`] of a request given by its parts (`op` with gather list `list`), not
/// as a [`SendWr`]: the kernel post path tries it first with the parts it read in
/// place, and builds a [`SendWr`] only for what it refuses (`None`) (the whole request
/// in memory, read back by the builder, cost 31 instructions a request under TCG).
#[inline(always)]
pub fn build_gather(
    geo: &SqGeometry,
    st: &mut SqState,
    op: SendOp,
    list: &[Sge],
    flags: SendFlags,
    ring: &mut [u8],
) -> Option<Result<Posted, Errno>> {
    const DS: usize = vals::SEND_WQE_DS;
    let wqe_cnt = geo.wqe_cnt as usize;
    if !geo.wqe_cnt.is_power_of_two() || ring.len() != wqe_cnt * vals::SEND_WQE_BB {
        return None;
    }
    let rc = match geo.qp_type {
        QpType::Rc => true,
        QpType::Uc => false,
        _ => return None,
    };
    let (opcode, raddr, imm) = match op {
        SendOp::Send => (opcode::SEND, None, 0),
        SendOp::SendImm(i) => (opcode::SEND_IMM, None, i),
        SendOp::RdmaWrite { raddr, rkey } => (opcode::RDMA_WRITE, Some((raddr, rkey)), 0),
        SendOp::RdmaWriteImm { raddr, rkey, imm } => {
            (opcode::RDMA_WRITE_IMM, Some((raddr, rkey)), imm)
        }
        SendOp::RdmaRead { raddr, rkey } if rc => (opcode::RDMA_READ, Some((raddr, rkey)), 0),
        _ => return None,
    };
    // The general builder's checks, in its order, that such a request can fail.
    if list.len() > geo.max_gs as usize {
        return Some(Err(Errno::EINVAL));
    }
    if st.head.wrapping_sub(st.tail) >= geo.max_post {
        return Some(Err(Errno::ENOMEM));
    }
    let data = list.iter().filter(|e| e.length != 0).count();
    let ds = 1 + usize::from(raddr.is_some()) + data;
    let bbs = (ds * DS).div_ceil(vals::SEND_WQE_BB);
    if ds > vals::CTRL_DS_MASK as usize || bbs > vals::SEND_WQE_MAX_WQEBBS || bbs > wqe_cnt {
        return Some(Err(Errno::EINVAL));
    }

    // Each 16-byte unit at its place, wrapping at the ring's end (a power of two of
    // bytes): a unit never straddles it. (`RingWriter::put` does the same for any
    // piece; its general path costs this builder 194 host instructions against 176.)
    let idx = usize::from(st.cur_post) & (wqe_cnt - 1);
    let mask = ring.len().wrapping_sub(1);
    let base = idx * vals::SEND_WQE_BB;
    let mut unit = 1;
    if let Some((raddr, rkey)) = raddr {
        let seg = WqeRaddrSeg {
            raddr: U64::new(raddr),
            rkey: U32::new(rkey),
            reserved: [0; 4],
        };
        put_unit(ring, (base + unit * DS) & mask, seg.as_bytes());
        unit += 1;
    }
    for e in list.iter().filter(|e| e.length != 0) {
        let seg = WqeDataSeg {
            byte_count: U32::new(e.length),
            lkey: U32::new(e.lkey),
            addr: U64::new(e.addr),
        };
        put_unit(ring, (base + unit * DS) & mask, seg.as_bytes());
        unit += 1;
    }
    let fm_ce_se = fm_ce_se(
        geo,
        flags.signaled,
        flags.solicited,
        consumer_fence(st, flags.fence),
    );
    let ctrl = WqeCtrlSeg {
        opmod_idx_opcode: U32::new((u32::from(st.cur_post) << 8) | u32::from(opcode)),
        qpn_ds: U32::new(((geo.qpn & 0x00ff_ffff) << 8) | ds as u32),
        signature: 0,
        rsvd: [0; 2],
        fm_ce_se,
        imm: U32::new(imm),
    };
    // The control segment last, at the WQE's start (in the ring: `base` < its length).
    if let (Some(dst), Some(src)) = (
        ring.get_mut(base..).and_then(|r| r.first_chunk_mut::<DS>()),
        ctrl.as_bytes().first_chunk::<DS>(),
    ) {
        *dst = *src;
    }
    st.next_fence = 0;
    // `bbs <= 16`, checked above.
    st.cur_post = st.cur_post.wrapping_add(bbs as u16);
    st.head = st.head.wrapping_add(1);
    Some(Ok(Posted {
        idx: idx as u32,
        bbs: bbs as u32,
        ctrl,
    }))
}

/// Copies the first 16-byte unit of `bytes` into `ring` at `at`; nothing when either
/// is shorter ([`build_common`] computes `at` inside the ring).
#[inline(always)]
fn put_unit(ring: &mut [u8], at: usize, bytes: &[u8]) {
    const DS: usize = vals::SEND_WQE_DS;
    if let (Some(dst), Some(src)) = (
        ring.get_mut(at..).and_then(|r| r.first_chunk_mut::<DS>()),
        bytes.first_chunk::<DS>(),
    ) {
        *dst = *src;
    }
}

/// The send doorbell record's value after a batch (upstream `mlx5r_ring_db`:
/// `qp->db.db[MLX5_SND_DBR] = cpu_to_be32(qp->sq.cur_post)`).
pub fn sq_doorbell_record(cur_post: u16) -> [u8; 4] {
    u32::from(cur_post).to_be_bytes()
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_qp_send_wqe))]
mod tests {
    use super::*;

    // Expected bytes are written from the C structures (`qp.h`: `mlx5_wqe_ctrl_seg`
    // is opmod_idx_opcode @0, qpn_ds @4, signature @8, fm_ce_se @11, imm @12;
    // `mlx5_wqe_data_seg` byte_count @0, lkey @4, addr @8; `mlx5_wqe_raddr_seg`
    // raddr @0, rkey @8; `mlx5_av` key @0, dqp_dct @8, rlid @14), big-endian, and
    // the opcode values of `device.h` (`MLX5_OPCODE_SEND` 0x0a, ...) written out.

    fn be32(b: &[u8], off: usize) -> u32 {
        u32::from_be_bytes(b[off..off + 4].try_into().unwrap())
    }

    fn be64(b: &[u8], off: usize) -> u64 {
        u64::from_be_bytes(b[off..off + 8].try_into().unwrap())
    }

    fn geo(qp_type: QpType) -> SqGeometry {
        SqGeometry {
            qp_type,
            qpn: 0x12_3456,
            wqe_cnt: 8,
            max_post: 4,
            max_gs: 4,
            max_inline: 64,
            sig_all: false,
            umr_fence: 0,
        }
    }

    fn wr<'a>(op: SendOp, payload: Payload<'a>) -> SendWr<'a> {
        SendWr {
            op,
            payload,
            signaled: false,
            solicited: false,
            fence: false,
            ud: None,
            reg_list: &[],
        }
    }

    const SG: [Sge; 2] = [
        Sge {
            addr: 0x1111_2222_3333_4444,
            length: 100,
            lkey: 0xabcd,
        },
        Sge {
            addr: 0x5555_6666_7777_8888,
            length: 200,
            lkey: 0xbeef,
        },
    ];

    #[test]
    fn xrc_initiator_wqes_carry_a_zero_xrc_segment() {
        // Upstream `mlx5_ib_post_send`: `case IB_QPT_XRC_INI` takes 16 bytes
        // (`struct mlx5_wqe_xrc_seg`) after the control segment, then RC's segments.
        let g = geo(QpType::XrcIni);
        let mut st = SqState::default();
        // A ring holding an earlier WQE's bytes: the segment still names SRQ 0.
        let mut ring = [0xffu8; 8 * 64];
        let p = build_send(
            &g,
            &mut st,
            &wr(SendOp::Send, Payload::Gather(&SG[..1])),
            &mut ring,
        )
        .unwrap();
        assert_eq!((p.idx, p.bbs), (0, 1));
        let b = &ring[..64];
        // SEND.
        assert_eq!(be32(b, 0), 0x0a);
        // ds: ctrl + xrc + data.
        assert_eq!(be32(b, 4), (0x12_3456 << 8) | 3);
        // xrc_srqn 0, reserved 0.
        assert_eq!(&b[16..32], &[0u8; 16]);
        assert_eq!(
            (be32(b, 32), be32(b, 36), be64(b, 40)),
            (100, 0xabcd, 0x1111_2222_3333_4444)
        );
        let w = wr(
            SendOp::RdmaWrite {
                raddr: 0x9000,
                rkey: 0x77,
            },
            Payload::Gather(&SG[..1]),
        );
        let p = build_send(&g, &mut st, &w, &mut ring).unwrap();
        assert_eq!((p.idx, p.bbs), (1, 1));
        let b = &ring[64..128];
        // ds: ctrl + xrc + raddr + data.
        assert_eq!(be32(b, 4), (0x12_3456 << 8) | 4);
        assert_eq!(&b[16..32], &[0u8; 16]);
        assert_eq!((be64(b, 32), be32(b, 40)), (0x9000, 0x77));
        assert_eq!(be32(b, 48), 100);
        // An RC WQE of the same request has no such segment.
        let mut st = SqState::default();
        build_send(&geo(QpType::Rc), &mut st, &w, &mut ring).unwrap();
        assert_eq!(be32(&ring, 4), (0x12_3456 << 8) | 3);
        assert_eq!((be64(&ring, 16), be32(&ring, 24)), (0x9000, 0x77));
    }

    #[test]
    fn common_requests_are_built_as_the_general_builder_builds_them() {
        // Every common request shape (`build_common`) against `build_general`: the
        // result, the counters after it and every byte of the ring.
        let sg3 = [
            SG[0],
            Sge {
                addr: 9,
                length: 0,
                lkey: 1,
            },
            SG[1],
        ];
        let lists: [&[Sge]; 6] = [&[], &sg3[1..2], &SG[..1], &SG, &sg3, &[SG[0]; 5]];
        let ops = [
            SendOp::Send,
            SendOp::SendImm(0x1234_5678),
            SendOp::RdmaWrite {
                raddr: 0x10_0000_0001,
                rkey: 0x77,
            },
            SendOp::RdmaWriteImm {
                raddr: 0x20,
                rkey: 0x88,
                imm: 0xfeed_beef,
            },
            SendOp::RdmaRead {
                raddr: 0x30,
                rkey: 0x99,
            },
        ];
        let mut cases = 0;
        for qp_type in [QpType::Rc, QpType::Uc] {
            for op in ops {
                for list in lists {
                    for flags in 0..16u32 {
                        for (cur_post, head, tail, next_fence) in [
                            (0u16, 0u32, 0u32, 0u8),
                            (7, 3, 1, 0),
                            (0xffff, 9, 6, 1),
                            (5, 4, 0, 0),
                        ] {
                            let g = SqGeometry {
                                sig_all: flags & 8 != 0,
                                ..geo(qp_type)
                            };
                            let w = SendWr {
                                signaled: flags & 1 != 0,
                                solicited: flags & 2 != 0,
                                fence: flags & 4 != 0,
                                ..wr(op, Payload::Gather(list))
                            };
                            let st0 = SqState {
                                cur_post,
                                head,
                                tail,
                                next_fence,
                            };
                            let (mut st_a, mut st_b) = (st0, st0);
                            let mut ring_a = [0xa5u8; 8 * 64];
                            let mut ring_b = ring_a;
                            let fast = build_common(&g, &mut st_a, &w, &mut ring_a);
                            let general = build_general(&g, &mut st_b, &w, &mut ring_b);
                            let read_on_uc =
                                qp_type == QpType::Uc && matches!(op, SendOp::RdmaRead { .. });
                            if read_on_uc {
                                // Refused by the general builder (EINVAL, or ENOMEM first
                                // on a full queue).
                                assert!(fast.is_none());
                                assert!(general.is_err());
                                continue;
                            }
                            assert_eq!(fast, Some(general));
                            assert_eq!(st_a, st_b);
                            assert_eq!(ring_a, ring_b);
                            cases += 1;
                        }
                    }
                }
            }
        }
        // 2 types x 5 opcodes x 6 lists x 16 flag sets x 4 states, less READ on UC.
        assert_eq!(cases, 2 * 5 * 6 * 16 * 4 - 6 * 16 * 4);
        // Not common: the general builder's.
        let mut st = SqState::default();
        let mut ring = [0u8; 8 * 64];
        let inline: [&[u8]; 1] = [b"abc"];
        for (t, op, payload) in [
            (QpType::Rc, SendOp::Send, Payload::Inline(&inline)),
            (QpType::Ud, SendOp::Send, Payload::Gather(&SG)),
            (QpType::XrcIni, SendOp::Send, Payload::Gather(&SG)),
            (
                QpType::Rc,
                SendOp::LocalInv { rkey: 1 },
                Payload::Gather(&[]),
            ),
        ] {
            assert!(build_common(&geo(t), &mut st, &wr(op, payload), &mut ring).is_none());
        }
    }

    #[test]
    fn signaled_send_with_two_sges() {
        let g = geo(QpType::Rc);
        let mut st = SqState {
            cur_post: 5,
            ..Default::default()
        };
        let mut ring = [0u8; 8 * 64];
        let mut w = wr(SendOp::Send, Payload::Gather(&SG));
        w.signaled = true;
        let p = build_send(&g, &mut st, &w, &mut ring).unwrap();
        assert_eq!((p.idx, p.bbs), (5, 1));
        let b = &ring[5 * 64..6 * 64];
        assert_eq!(be32(b, 0), (5 << 8) | 0x0a);
        // ds: ctrl + 2 data segments.
        assert_eq!(be32(b, 4), (0x12_3456 << 8) | 3);
        // MLX5_WQE_CTRL_CQ_UPDATE = 2 << 2.
        assert_eq!(b[11], 0x08);
        assert_eq!(be32(b, 12), 0);
        assert_eq!(
            (be32(b, 16), be32(b, 20), be64(b, 24)),
            (100, 0xabcd, 0x1111_2222_3333_4444)
        );
        assert_eq!(
            (be32(b, 32), be32(b, 36), be64(b, 40)),
            (200, 0xbeef, 0x5555_6666_7777_8888)
        );
        assert_eq!(st.cur_post, 6);
        assert_eq!(st.head, 1);
        // Nothing outside the slot.
        assert!(ring[..5 * 64]
            .iter()
            .chain(&ring[6 * 64..])
            .all(|&x| x == 0));
    }

    #[test]
    fn zero_length_sges_are_skipped() {
        let sg = [SG[0], Sge { length: 0, ..SG[1] }];
        let mut st = SqState::default();
        let mut ring = [0u8; 8 * 64];
        let p = build_send(
            &geo(QpType::Rc),
            &mut st,
            &wr(SendOp::Send, Payload::Gather(&sg)),
            &mut ring,
        )
        .unwrap();
        assert_eq!(p.ctrl.qpn_ds.get() & 0x3f, 2);
        assert!(ring[32..64].iter().all(|&x| x == 0));
    }

    #[test]
    fn rdma_write_imm_solicited() {
        let mut st = SqState::default();
        let mut ring = [0u8; 8 * 64];
        let op = SendOp::RdmaWriteImm {
            raddr: 0xdead_beef_0000_1000,
            rkey: 0x77,
            imm: 0x0102_0304,
        };
        let mut w = wr(op, Payload::Gather(&SG[..1]));
        w.solicited = true;
        build_send(&geo(QpType::Uc), &mut st, &w, &mut ring).unwrap();
        assert_eq!(be32(&ring, 0), 0x09);
        assert_eq!(be32(&ring, 4) & 0x3f, 3);
        // MLX5_WQE_CTRL_SOLICITED = 1 << 1; no CQE requested.
        assert_eq!(ring[11], 0x02);
        assert_eq!(&ring[12..16], &[1, 2, 3, 4]);
        assert_eq!(
            (be64(&ring, 16), be32(&ring, 24)),
            (0xdead_beef_0000_1000, 0x77)
        );
        assert_eq!(be32(&ring, 32), 100);
    }

    #[test]
    fn rdma_read_on_rc_only() {
        let op = SendOp::RdmaRead {
            raddr: 0x1000,
            rkey: 9,
        };
        let mut ring = [0u8; 8 * 64];
        let mut st = SqState::default();
        let p = build_send(
            &geo(QpType::Rc),
            &mut st,
            &wr(op, Payload::Gather(&SG[..1])),
            &mut ring,
        )
        .unwrap();
        assert_eq!(p.ctrl.opmod_idx_opcode.get() & 0xff, 0x10);
        assert_eq!(p.ctrl.qpn_ds.get() & 0x3f, 3);
        for t in [QpType::Uc, QpType::Ud, QpType::Gsi] {
            let mut st = SqState::default();
            let mut w = wr(op, Payload::Gather(&SG[..1]));
            let dest = UdDest::default();
            w.ud = Some(&dest);
            assert_eq!(
                build_send(&geo(t), &mut st, &w, &mut ring),
                Err(Errno::EINVAL)
            );
            assert_eq!(st, SqState::default());
        }
    }

    #[test]
    fn atomics_are_refused_as_upstream() {
        // Upstream `handle_qpt_rc`: -EOPNOTSUPP, "Atomic operations are not supported yet".
        let mut ring = [0u8; 8 * 64];
        for op in [
            SendOp::CmpSwap {
                raddr: 8,
                rkey: 1,
                compare: 2,
                swap: 3,
            },
            SendOp::FetchAdd {
                raddr: 8,
                rkey: 1,
                add: 2,
            },
        ] {
            let mut st = SqState::default();
            let r = build_send(
                &geo(QpType::Rc),
                &mut st,
                &wr(op, Payload::Gather(&[])),
                &mut ring,
            );
            assert_eq!(r, Err(Errno::EOPNOTSUPP));
            assert_eq!(st, SqState::default());
        }
        assert!(ring.iter().all(|&x| x == 0));
    }

    #[test]
    fn local_inv_is_a_umr_wqe() {
        let mut ring = [0u8; 8 * 64];
        let mut st = SqState::default();
        // The gather list of a LOCAL_INV is ignored (upstream `num_sge = 0`).
        let p = build_send(
            &geo(QpType::Rc),
            &mut st,
            &wr(SendOp::LocalInv { rkey: 0xa5a5 }, Payload::Gather(&SG)),
            &mut ring,
        )
        .unwrap();
        // ctrl + umr ctrl (48) + mkey seg (64) = 128 bytes: ds 8, two basic blocks.
        assert_eq!((p.bbs, p.ctrl.qpn_ds.get() & 0x3f), (2, 8));
        assert_eq!(be32(&ring, 0) & 0xff, 0x25);
        assert_eq!(be32(&ring, 12), 0xa5a5);
        // MLX5_UMR_INLINE (1 << 7); mkey_mask @8 of the UMR segment MLX5_MKEY_MASK_FREE
        // (1 << 29); the mkey segment's status MLX5_MKEY_STATUS_FREE (1 << 6).
        assert_eq!(ring[16], 0x80);
        assert_eq!(be64(&ring, 24), 1 << 29);
        assert_eq!(ring[64], 0x40);
        assert!(ring[65..128].iter().all(|&x| x == 0));
        assert_eq!(st.cur_post, 2);
        // Not on UC / UD.
        let mut st = SqState::default();
        let r = build_send(
            &geo(QpType::Uc),
            &mut st,
            &wr(SendOp::LocalInv { rkey: 1 }, Payload::Gather(&[])),
            &mut ring,
        );
        assert_eq!(r, Err(Errno::EINVAL));
    }

    #[test]
    fn provider_umr_wqe_copies_its_segments_with_the_small_fence() {
        let mut ring = [0u8; 8 * 64];
        let mut st = SqState::default();
        let body: [u8; UMR_SEGS_DATA] = core::array::from_fn(|i| i as u8 + 1);
        let mut w = wr(SendOp::Umr { key: 0x4217 }, Payload::Gather(&[]));
        w.reg_list = &body;
        w.signaled = true;
        let p = build_send(&geo(QpType::Rc), &mut st, &w, &mut ring).unwrap();
        // ctrl 16 + 128 bytes: ds 9, three basic blocks (upstream: the WQE with its
        // data segment).
        assert_eq!((p.bbs, p.ctrl.qpn_ds.get() & 0x3f), (3, 9));
        assert_eq!(be32(&ring, 0) & 0xff, 0x25);
        assert_eq!(be32(&ring, 12), 0x4217);
        // MLX5_FENCE_MODE_INITIATOR_SMALL | MLX5_WQE_CTRL_CQ_UPDATE.
        assert_eq!(ring[11], (1 << 5) | (2 << 2));
        assert_eq!(&ring[16..16 + UMR_SEGS_DATA], &body[..]);
        assert_eq!(st.cur_post, 3);
        // Without the data segment: 112 bytes, ds 8.
        let mut w = wr(SendOp::Umr { key: 1 }, Payload::Gather(&[]));
        w.reg_list = &body[..UMR_SEGS];
        let p = build_send(&geo(QpType::Rc), &mut st, &w, &mut ring).unwrap();
        assert_eq!(p.ctrl.qpn_ds.get() & 0x3f, 8);
        // Any other length, a gather list, or a QP other than RC: refused, nothing
        // changes.
        let before = st;
        for (len, sg, t) in [
            (UMR_SEGS - 16, &[][..], QpType::Rc),
            (UMR_SEGS_DATA + 16, &[][..], QpType::Rc),
            (UMR_SEGS, &SG[..1], QpType::Rc),
            (UMR_SEGS, &[][..], QpType::Uc),
            (UMR_SEGS, &[][..], QpType::XrcIni),
        ] {
            let big = [0u8; UMR_SEGS_DATA + 16];
            let mut w = wr(SendOp::Umr { key: 1 }, Payload::Gather(sg));
            w.reg_list = &big[..len];
            assert_eq!(
                build_send(&geo(t), &mut st, &w, &mut ring),
                Err(Errno::EINVAL)
            );
            assert_eq!(st, before);
        }
    }

    #[test]
    fn ud_send_carries_the_datagram_segment() {
        let av = Av {
            rlid: U16::new(0x0042),
            stat_rate_sl: 0x03,
            ..Default::default()
        };
        let mut ring = [0u8; 8 * 64];
        let mut st = SqState::default();
        let mut w = wr(SendOp::SendImm(0xcafe_f00d), Payload::Gather(&SG[..1]));
        let dest = UdDest {
            av,
            remote_qpn: 0x00ab_cdef,
            remote_qkey: 0x8001_0000,
        };
        w.ud = Some(&dest);
        let p = build_send(&geo(QpType::Ud), &mut st, &w, &mut ring).unwrap();
        // ctrl 1 + datagram 3 + data 1.
        assert_eq!((p.ctrl.qpn_ds.get() & 0x3f, p.bbs), (5, 2));
        assert_eq!(be32(&ring, 0) & 0xff, 0x0b);
        assert_eq!(be32(&ring, 12), 0xcafe_f00d);
        assert_eq!(be32(&ring, 16), 0x8001_0000);
        // MLX5_EXTENDED_UD_AV | remote QPN.
        assert_eq!(be32(&ring, 24), 0x80ab_cdef);
        assert_eq!(ring[28], 0x03);
        assert_eq!(&ring[30..32], &[0x00, 0x42]);
        assert_eq!(be32(&ring, 64), 100);
        // A UD send without a destination.
        let mut st = SqState::default();
        let r = build_send(
            &geo(QpType::Gsi),
            &mut st,
            &wr(SendOp::Send, Payload::Gather(&[])),
            &mut ring,
        );
        assert_eq!(r, Err(Errno::EINVAL));
        // RDMA write on UD.
        let mut w2 = wr(
            SendOp::RdmaWrite { raddr: 0, rkey: 0 },
            Payload::Gather(&[]),
        );
        w2.ud = w.ud;
        assert_eq!(
            build_send(&geo(QpType::Ud), &mut st, &w2, &mut ring),
            Err(Errno::EINVAL)
        );
    }

    #[test]
    fn inline_data() {
        let mut ring = [0xeeu8; 8 * 64];
        let mut st = SqState::default();
        let parts: [&[u8]; 2] = [&[1, 2, 3, 4, 5], &[6, 7, 8]];
        let p = build_send(
            &geo(QpType::Rc),
            &mut st,
            &wr(SendOp::Send, Payload::Inline(&parts)),
            &mut ring,
        )
        .unwrap();
        // ctrl 1 + ALIGN(4 + 8, 16) / 16 = 2.
        assert_eq!(p.ctrl.qpn_ds.get() & 0x3f, 2);
        // MLX5_INLINE_SEG | 8.
        assert_eq!(be32(&ring, 16), 0x8000_0008);
        assert_eq!(&ring[20..28], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert!(ring[28..32].iter().all(|&x| x == 0));
        // Empty inline: no inline segment.
        let empty: [&[u8]; 1] = [&[]];
        let p = build_send(
            &geo(QpType::Rc),
            &mut st,
            &wr(SendOp::Send, Payload::Inline(&empty)),
            &mut ring,
        )
        .unwrap();
        assert_eq!(p.ctrl.qpn_ds.get() & 0x3f, 1);
    }

    #[test]
    fn inline_over_max_is_enomem() {
        // Upstream `set_data_inl_seg`: `inl > qp->max_inline_data` -> -ENOMEM.
        let big = [0u8; 65];
        let parts: [&[u8]; 1] = [&big];
        let mut ring = [0u8; 8 * 64];
        let mut st = SqState::default();
        let r = build_send(
            &geo(QpType::Rc),
            &mut st,
            &wr(SendOp::Send, Payload::Inline(&parts)),
            &mut ring,
        );
        assert_eq!(r, Err(Errno::ENOMEM));
        assert_eq!(st, SqState::default());
        let ok = [9u8; 64];
        let parts: [&[u8]; 1] = [&ok];
        let p = build_send(
            &geo(QpType::Rc),
            &mut st,
            &wr(SendOp::Send, Payload::Inline(&parts)),
            &mut ring,
        )
        .unwrap();
        // ctrl 1 + ALIGN(68, 16) / 16 = 5 -> 6 ds, 2 basic blocks.
        assert_eq!((p.ctrl.qpn_ds.get() & 0x3f, p.bbs), (6, 2));
    }

    #[test]
    fn too_many_sges_is_einval_before_full() {
        // Upstream checks `num_sge > max_gs` (-EINVAL) before the overflow (-ENOMEM).
        let sg = [SG[0]; 5];
        let mut ring = [0u8; 8 * 64];
        let mut st = SqState {
            head: 4,
            ..Default::default()
        };
        let r = build_send(
            &geo(QpType::Rc),
            &mut st,
            &wr(SendOp::Send, Payload::Gather(&sg)),
            &mut ring,
        );
        assert_eq!(r, Err(Errno::EINVAL));
        let r = build_send(
            &geo(QpType::Rc),
            &mut st,
            &wr(SendOp::Send, Payload::Gather(&sg[..4])),
            &mut ring,
        );
        assert_eq!(r, Err(Errno::ENOMEM));
    }

    #[test]
    fn full_queue_with_wrapped_counters() {
        // `mlx5r_wq_overflow`: head - tail >= max_post, counters wrapping.
        let mut ring = [0u8; 8 * 64];
        let mut st = SqState {
            head: 1,
            tail: u32::MAX - 1,
            ..Default::default()
        };
        // 3 outstanding of 4: one more fits.
        build_send(
            &geo(QpType::Rc),
            &mut st,
            &wr(SendOp::Send, Payload::Gather(&[])),
            &mut ring,
        )
        .unwrap();
        assert_eq!(st.head, 2);
        let before = st;
        let r = build_send(
            &geo(QpType::Rc),
            &mut st,
            &wr(SendOp::Send, Payload::Gather(&[])),
            &mut ring,
        );
        assert_eq!(r, Err(Errno::ENOMEM));
        assert_eq!(st, before);
        st.tail = st.tail.wrapping_add(1);
        assert!(build_send(
            &geo(QpType::Rc),
            &mut st,
            &wr(SendOp::Send, Payload::Gather(&[])),
            &mut ring
        )
        .is_ok());
    }

    #[test]
    fn wqe_wraps_at_the_end_of_the_ring() {
        let g = SqGeometry {
            wqe_cnt: 4,
            ..geo(QpType::Rc)
        };
        let mut ring = [0u8; 4 * 64];
        let mut st = SqState {
            cur_post: 7,
            ..Default::default()
        };
        let p = build_send(
            &g,
            &mut st,
            &wr(SendOp::LocalInv { rkey: 3 }, Payload::Gather(&[])),
            &mut ring,
        )
        .unwrap();
        // First block in slot 3, the second (the mkey segment) in slot 0.
        assert_eq!((p.idx, p.bbs), (3, 2));
        assert_eq!(be32(&ring, 192), (7 << 8) | 0x25);
        assert_eq!(ring[192 + 16], 0x80);
        assert_eq!(ring[0], 0x40);
        assert!(ring[64..192].iter().all(|&x| x == 0));
        assert_eq!(st.cur_post, 9);
    }

    #[test]
    fn producer_counter_is_sixteen_bits() {
        let mut ring = [0u8; 8 * 64];
        let mut st = SqState {
            cur_post: 0xffff,
            ..Default::default()
        };
        let p = build_send(
            &geo(QpType::Rc),
            &mut st,
            &wr(SendOp::Send, Payload::Gather(&[])),
            &mut ring,
        )
        .unwrap();
        // WQE index 0xffff in bits 23:8, opmod 0.
        assert_eq!(p.ctrl.opmod_idx_opcode.get(), 0x00ff_ff0a);
        assert_eq!(p.idx, 7);
        assert_eq!(st.cur_post, 0);
    }

    #[test]
    fn fence_and_signal_all() {
        let mut ring = [0u8; 8 * 64];
        let g = SqGeometry {
            sig_all: true,
            ..geo(QpType::Rc)
        };
        let mut w = wr(SendOp::Send, Payload::Gather(&[]));
        w.fence = true;
        let mut st = SqState::default();
        // MLX5_FENCE_MODE_FENCE (2 << 5) | CQ update.
        assert_eq!(
            build_send(&g, &mut st, &w, &mut ring)
                .unwrap()
                .ctrl
                .fm_ce_se,
            0x48
        );
        // After a WQE that sets the initiator small fence: small-and-fence (4 << 5).
        let mut st = SqState {
            next_fence: 1 << 5,
            ..Default::default()
        };
        assert_eq!(
            build_send(&g, &mut st, &w, &mut ring)
                .unwrap()
                .ctrl
                .fm_ce_se,
            0x88
        );
        assert_eq!(st.next_fence, 0);
        // Without the flag the pending fence is inherited.
        let mut st = SqState {
            next_fence: 1 << 5,
            ..Default::default()
        };
        w.fence = false;
        assert_eq!(
            build_send(&g, &mut st, &w, &mut ring)
                .unwrap()
                .ctrl
                .fm_ce_se,
            0x28
        );
    }

    #[test]
    fn bad_geometry_and_oversize() {
        let mut st = SqState::default();
        let mut short = [0u8; 7 * 64];
        let r = build_send(
            &geo(QpType::Rc),
            &mut st,
            &wr(SendOp::Send, Payload::Gather(&[])),
            &mut short,
        );
        assert_eq!(r, Err(Errno::EINVAL));
        // 63 data segments do not fit the ds field with the control segment.
        let sg = [SG[0]; 63];
        let g = SqGeometry {
            max_gs: 63,
            wqe_cnt: 64,
            ..geo(QpType::Rc)
        };
        let mut ring = [0u8; 64 * 64];
        let r = build_send(
            &g,
            &mut st,
            &wr(SendOp::Send, Payload::Gather(&sg)),
            &mut ring,
        );
        assert_eq!(r, Err(Errno::EINVAL));
        // 62 do (ds 63, 16 basic blocks).
        let p = build_send(
            &g,
            &mut st,
            &wr(SendOp::Send, Payload::Gather(&sg[..62])),
            &mut ring,
        )
        .unwrap();
        assert_eq!((p.ctrl.qpn_ds.get() & 0x3f, p.bbs), (63, 16));
    }

    #[test]
    fn inline_data_split_at_the_end_of_the_ring() {
        let g = SqGeometry {
            wqe_cnt: 2,
            ..geo(QpType::Rc)
        };
        let mut ring = [0xeeu8; 2 * 64];
        let mut st = SqState {
            cur_post: 1,
            ..Default::default()
        };
        let data: [u8; 64] = core::array::from_fn(|i| i as u8);
        let parts: [&[u8]; 1] = [&data];
        let p = build_send(
            &g,
            &mut st,
            &wr(SendOp::Send, Payload::Inline(&parts)),
            &mut ring,
        )
        .unwrap();
        assert_eq!((p.idx, p.bbs), (1, 2));
        assert_eq!(be32(&ring, 80), 0x8000_0040);
        // 44 bytes to the end of the ring, the other 20 from its start, then the
        // padding to 16 bytes.
        assert_eq!(&ring[84..128], &data[..44]);
        assert_eq!(&ring[..20], &data[44..]);
        assert!(ring[20..32].iter().all(|&x| x == 0));
        assert!(ring[32..64].iter().all(|&x| x == 0xee));
    }

    #[test]
    fn doorbell_record_is_the_producer_counter() {
        assert_eq!(sq_doorbell_record(0x1234), [0, 0, 0x12, 0x34]);
        assert_eq!(sq_doorbell_record(0xffff), [0, 0, 0xff, 0xff]);
    }

    #[test]
    fn reg_mr_inline_and_by_reference() {
        // `set_reg_wr` (wr.c): UMR ctrl seg (48 bytes: flags @0, xlt_octowords @4,
        // mkey_mask @8), mkey seg (64 bytes: flags @2, qpn_mkey7_0 @4, flags_pd @12,
        // start_addr @16, len @24, xlt_oct_size @52, log2_page_size @59), then the
        // MTTs inline (at most 64 bytes) padded to the basic block, or a data segment.
        let mut g = geo(QpType::Rc);
        g.umr_fence = 3 << 5;
        let mut st = SqState::default();
        let mtt = 0x1234_5000u64 | 3;
        let list = mtt.to_be_bytes();
        let op = SendOp::RegMr {
            key: 0x0000_4507,
            access: 0xf,
            iova: 0x1234_5000,
            length: 4096,
            page_shift: 12,
            desc_addr: 0xdead_0000,
            desc_lkey: 0x77,
        };
        let mut w = wr(op, Payload::Gather(&[]));
        w.reg_list = &list;
        w.signaled = true;
        let mut ring = [0xeeu8; 8 * 64];
        let p = build_send(&g, &mut st, &w, &mut ring).unwrap();
        // 1 + 3 + 4 + 1 descriptors, padded to 12: 3 basic blocks.
        assert_eq!((p.idx, p.bbs), (0, 3));
        assert_eq!(be32(&ring, 0), 0x25);
        assert_eq!(be32(&ring, 4), (0x12_3456 << 8) | 12);
        // Fence: the device's UMR fence; CQE requested; imm: the key.
        assert_eq!(ring[11], (3 << 5) | 8);
        assert_eq!(be32(&ring, 12), 0x0000_4507);
        // UMR control: CHECK_NOT_FREE | INLINE, 64 bytes of list = 4 octowords.
        assert_eq!(ring[16], (1 << 5) | (1 << 7));
        assert_eq!(u16::from_be_bytes([ring[20], ring[21]]), 4);
        assert_eq!(be64(&ring, 24) & (1 << 21), 1 << 21);
        assert_eq!(be64(&ring, 24) & (1 << 29), 1 << 29);
        // Mkey: permissions (atomic, remote write and read, local write and read) |
        // MTT mode, the key's variant, remote invalidation, the range, 4 octowords.
        let m = 64;
        assert_eq!(ring[m + 2], 0x7c | 1);
        assert_eq!(be32(&ring, m + 4), 0xffff_ff07);
        assert_eq!(be32(&ring, m + 12), 1 << 24);
        assert_eq!(be64(&ring, m + 16), 0x1234_5000);
        assert_eq!(be64(&ring, m + 24), 4096);
        assert_eq!(be32(&ring, m + 52), 4);
        assert_eq!(ring[m + 59], 12);
        // The MTT inline, zeros to the end of the third basic block.
        assert_eq!(be64(&ring, 128), mtt);
        assert!(ring[136..192].iter().all(|b| *b == 0));
        assert_eq!(ring[192], 0xee);
        assert_eq!(st.next_fence, 1 << 5);

        // Nine entries (72 bytes): by reference, through a data segment.
        let long = [0u8; 72];
        w.reg_list = &long;
        let p = build_send(&g, &mut st, &w, &mut ring).unwrap();
        assert_eq!((p.idx, p.bbs), (3, 3));
        let d = 3 * 64 + 16 + 48 + 64;
        assert_eq!(be32(&ring, d), 128);
        assert_eq!(be32(&ring, d + 4), 0x77);
        assert_eq!(be64(&ring, d + 8), 0xdead_0000);
        assert_eq!(ring[3 * 64 + 16], 1 << 5);

        // An inline REG_MR is refused, as upstream.
        let data = [0u8; 4];
        let ins: [&[u8]; 1] = [&data];
        let w2 = SendWr {
            payload: Payload::Inline(&ins),
            ..w
        };
        assert_eq!(build_send(&g, &mut st, &w2, &mut ring), Err(Errno::EINVAL));
    }
}
