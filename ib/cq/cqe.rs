// SPDX-License-Identifier: GPL-2.0

//! CQE reading for kernel `poll_cq`, as upstream `mlx5_poll_one` (`cq.c`) reads one:
//! the ownership test of `get_sw_cqe`, then the entry parsed (`handle_good_req`,
//! `handle_responder`, `mlx5_handle_error_cqe`), its values handed to a [`CqeSink`]
//! kind by kind (the kernel's work completion, or a [`Completion`]).
//!
//! A CQE is untrusted device input: every value is read from the `ifc::wqe::Cqe64`
//! layout through its typed fields, and an entry upstream would not expect (an
//! unknown CQE or send opcode, a compressed-CQE format this provider never enables,
//! a signature error with no signature MR) is [`Malformed`], which the caller counts
//! and skips, never follows. What the CQE names (QPN, WQE counter) the caller still
//! bounds against its own tables.
//!
//! Pure `core` code, host-tested and run as a KUnit suite.

use crate::ib::cq::wc_status::{status_of_syndrome, WcStatus};
use crate::ifc::wqe::{opcode, vals, Cqe64, ErrCqe};
use zerocopy::FromBytes;

/// The CQ buffer as created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CqGeometry {
    /// Entries (`ibcq.cqe + 1`, a power of two).
    nent: u32,
    /// Bytes per entry (64 or 128).
    cqe_sz: u32,
}

impl CqGeometry {
    /// A geometry of `nent` entries of `cqe_sz` bytes; `None` unless `nent` is a power
    /// of two and `cqe_sz` 64 or 128.
    pub fn new(nent: u32, cqe_sz: u32) -> Option<Self> {
        (nent.is_power_of_two() && (cqe_sz == 64 || cqe_sz == 128)).then_some(Self { nent, cqe_sz })
    }

    /// Entries.
    pub fn entries(&self) -> u32 {
        self.nent
    }

    /// Bytes of one entry (64 or 128).
    pub fn entry_bytes(&self) -> u32 {
        self.cqe_sz
    }

    /// Bytes of the buffer.
    pub fn bytes(&self) -> usize {
        self.nent as usize * self.cqe_sz as usize
    }

    /// Byte offset in the buffer of the 64 bytes of entry `n` (consumer counter) that
    /// carry the CQE: the entry's slot, for 128-byte entries its second half.
    pub fn cqe_offset(&self, n: u32) -> usize {
        let slot = (n & self.nent.wrapping_sub(1)) as usize;
        // The end of the entry less the CQE's 64 bytes: an entry has 64 or 128 of
        // them (`new`), so this does not wrap.
        ((slot + 1) * self.cqe_sz as usize).wrapping_sub(64)
    }

    /// Whether software owns the entry at counter `n` whose `op_own` byte is `op_own`
    /// (upstream `get_sw_cqe`: opcode not `MLX5_CQE_INVALID` and the owner bit equal
    /// to the counter's wrap bit `n & nent`).
    pub fn sw_owned(&self, op_own: u8, n: u32) -> bool {
        let owner = op_own & vals::CQE_OWNER_MASK != 0;
        let wrap = n & self.nent != 0;
        op_own >> 4 != vals::CQE_INVALID && owner == wrap
    }
}

/// The 64 bytes of entry `n` (consumer counter) that carry the CQE, if software owns
/// it (upstream `get_sw_cqe`: opcode not `MLX5_CQE_INVALID` and the owner bit equal
/// to the counter's wrap bit `n & nent`); for 128-byte entries, the second half.
/// `None` too when `buf` is not the geometry's size.
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(
        dead_code,
        reason = "for a contiguous buffer: the kernel CQ's is in pages"
    )
)]
pub fn sw_cqe(geo: &CqGeometry, buf: &[u8], n: u32) -> Option<Cqe64> {
    if buf.len() != geo.bytes() {
        return None;
    }
    let off = geo.cqe_offset(n);
    let cqe = Cqe64::read_from_bytes(buf.get(off..off + 64)?).ok()?;
    geo.sw_owned(cqe.op_own, n).then_some(cqe)
}

/// What a requester completion completed (`handle_good_req`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReqOp {
    /// `IB_WC_SEND` (send, send with immediate or with invalidate).
    Send,
    /// `IB_WC_RDMA_WRITE`.
    RdmaWrite,
    /// `IB_WC_RDMA_READ`.
    RdmaRead,
    /// `IB_WC_COMP_SWAP`.
    CmpSwap,
    /// `IB_WC_FETCH_ADD`.
    FetchAdd,
    /// `IB_WC_MASKED_COMP_SWAP`.
    MaskedCmpSwap,
    /// `IB_WC_MASKED_FETCH_ADD`.
    MaskedFetchAdd,
    /// A UMR WQE: `IB_WC_LOCAL_INV` or `IB_WC_REG_MR` after what the caller posted at
    /// that index (upstream `get_umr_comp`).
    Umr,
}

/// What a responder completion received (`handle_responder`); the immediate or the
/// invalidated rkey is [`Completion::imm`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecvOp {
    /// `IB_WC_RECV`.
    Recv,
    /// `IB_WC_RECV` with `IB_WC_WITH_IMM`.
    RecvImm,
    /// `IB_WC_RECV_RDMA_WITH_IMM`.
    RdmaWithImm,
    /// `IB_WC_RECV` with `IB_WC_WITH_INVALIDATE`.
    RecvInv,
}

/// What a CQE completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CqeKind {
    /// A successful send-queue completion.
    Req(ReqOp),
    /// A successful receive completion.
    Resp(RecvOp),
    /// An error completion (`MLX5_CQE_REQ_ERR` / `MLX5_CQE_RESP_ERR`) of the send
    /// queue (`requester`) or of the receive queue.
    Error {
        /// The send queue's.
        requester: bool,
    },
    /// `MLX5_CQE_RESIZE_CQ`: the resize completed (no work completion).
    Resize,
}

/// A parsed CQE: its kind and the values the work completion takes, each zero where
/// the kind carries none ([`parse_cqe`]: the tests and the CQ cleaner). poll_cq does
/// not make one: its [`CqeSink`] writes each kind's work completion as it is parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// What completed.
    pub kind: CqeKind,
    /// QPN (`sop_drop_qpn` 23:0; errors: `s_wqe_opcode_qpn` 23:0).
    pub qpn: u32,
    /// WQE counter (the caller masks it with its `wqe_cnt - 1`; SRQ: the WQE index).
    pub wqe_counter: u16,
    /// A send with immediate (`IB_WC_WITH_IMM`).
    pub with_imm: bool,
    /// Bytes: received (responder), the RDMA read's byte count or 8 for an atomic
    /// (requester, as `handle_good_req` sets them).
    pub byte_len: u32,
    /// A receive's immediate or invalidated rkey (`imm_inval_pkey`).
    pub imm: u32,
    /// Source QPN (`flags_rqpn` 23:0).
    pub src_qp: u32,
    /// Source LID.
    pub slid: u16,
    /// Service level (`flags_rqpn` 27:24).
    pub sl: u8,
    /// A GRH is present (`flags_rqpn` 29:28 nonzero: `IB_WC_GRH`).
    pub grh: bool,
    /// `dlid_path_bits` (`ml_path`).
    pub dlid_path_bits: u8,
    /// The P_Key the packet carried (`imm_inval_pkey` 15:0); upstream looks its index
    /// up for QP1 only.
    pub pkey: u16,
    /// SRQ number / user index (`srqn` 23:0).
    pub srqn_uidx: u32,
    /// `ib_wc_status` of an error's syndrome; `Success` otherwise.
    pub status: WcStatus,
    /// An error's syndrome as the device wrote it.
    pub syndrome: u8,
    /// An error's vendor syndrome (`wc->vendor_err`).
    pub vendor_err: u8,
}

impl Completion {
    /// A completion of `kind` with every value zero.
    const fn empty(kind: CqeKind) -> Self {
        Self {
            kind,
            qpn: 0,
            wqe_counter: 0,
            with_imm: false,
            byte_len: 0,
            imm: 0,
            src_qp: 0,
            slid: 0,
            sl: 0,
            grh: false,
            dlid_path_bits: 0,
            pkey: 0,
            srqn_uidx: 0,
            status: WcStatus::Success,
            syndrome: 0,
            vendor_err: 0,
        }
    }
}

/// Why a software-owned CQE is not followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// A CQE opcode upstream has no case for (or `MLX5_CQE_INVALID`).
    Opcode(u8),
    /// A requester CQE whose send opcode is none upstream's `handle_good_req` knows.
    SendOpcode(u8),
    /// A compressed-CQE format (`op_own` 3:2); this provider never enables
    /// compression.
    Format(u8),
    /// `MLX5_CQE_SIG_ERR`: no signature MR exists on this provider.
    SigErr,
}

/// What a parsed CQE names beside the values it gives: its kind, QP, WQE counter, and
/// an error's syndrome as the device wrote it (0 otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CqeHead {
    /// What completed.
    pub kind: CqeKind,
    /// QPN (`sop_drop_qpn` 23:0; errors: `s_wqe_opcode_qpn` 23:0; a resize: 0).
    pub qpn: u32,
    /// WQE counter (the caller masks it with its `wqe_cnt - 1`; SRQ: the WQE index).
    pub wqe_counter: u16,
    /// An error's syndrome.
    pub syndrome: u8,
}

/// A successful receive's values ([`Completion`]'s fields of the same names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RespValues {
    /// Bytes received.
    pub byte_len: u32,
    /// The immediate or invalidated rkey (`imm_inval_pkey`; 0 for a plain receive).
    pub imm: u32,
    /// Source QPN.
    pub src_qp: u32,
    /// Source LID.
    pub slid: u16,
    /// Service level.
    pub sl: u8,
    /// A GRH is present.
    pub grh: bool,
    /// `dlid_path_bits`.
    pub dlid_path_bits: u8,
    /// The packet's P_Key.
    pub pkey: u16,
    /// SRQ number / user index.
    pub srqn_uidx: u32,
}

/// Where [`parse_into`] writes a CQE's values, one call for its kind: the kernel's
/// work completion, each kind's fields straight from the CQE (`ib/qp/kdp.rs`), or a
/// [`Completion`] ([`parse_cqe`]: the tests and the CQ cleaner).
pub trait CqeSink {
    /// A successful send-queue completion of `op`: with an immediate, and its bytes
    /// (an RDMA read's byte count, 8 for an atomic, 0 otherwise).
    fn req(&mut self, op: ReqOp, with_imm: bool, byte_len: u32);
    /// A successful receive of `op`.
    fn resp(&mut self, op: RecvOp, v: &RespValues);
    /// An error completion: its status (of `syndrome`) and vendor syndrome.
    fn error(&mut self, requester: bool, status: WcStatus, syndrome: u8, vendor_err: u8);
}

impl CqeSink for Completion {
    fn req(&mut self, op: ReqOp, with_imm: bool, byte_len: u32) {
        *self = Completion {
            with_imm,
            byte_len,
            ..Completion::empty(CqeKind::Req(op))
        };
    }

    fn resp(&mut self, op: RecvOp, v: &RespValues) {
        *self = Completion {
            byte_len: v.byte_len,
            imm: v.imm,
            src_qp: v.src_qp,
            slid: v.slid,
            sl: v.sl,
            grh: v.grh,
            dlid_path_bits: v.dlid_path_bits,
            pkey: v.pkey,
            srqn_uidx: v.srqn_uidx,
            ..Completion::empty(CqeKind::Resp(op))
        };
    }

    fn error(&mut self, requester: bool, status: WcStatus, syndrome: u8, vendor_err: u8) {
        *self = Completion {
            status,
            syndrome,
            vendor_err,
            ..Completion::empty(CqeKind::Error { requester })
        };
    }
}

/// Parses a software-owned CQE (from [`sw_cqe`]) into a [`Completion`].
pub fn parse_cqe(cqe: &Cqe64) -> Result<Completion, Malformed> {
    let mut c = Completion::empty(CqeKind::Resize);
    let h = parse_into(cqe, &mut c)?;
    c.qpn = h.qpn;
    c.wqe_counter = h.wqe_counter;
    Ok(c)
}

/// Parses a software-owned CQE (from [`sw_cqe`]): its values to `sink` (nothing for
/// a resize), what it names returned. Inlined: poll_cq calls it once per CQE (measured
/// under TCG: 5 % of a polled CQE's time as a call), and its sink writes each kind's
/// work completion at once (a record of every kind's values, made and then read back,
/// cost ~50 instructions a CQE).
#[inline(always)]
pub fn parse_into<S: CqeSink>(cqe: &Cqe64, sink: &mut S) -> Result<CqeHead, Malformed> {
    let op = cqe.op_own >> 4;
    let format = (cqe.op_own >> 2) & 3;
    if format != 0 {
        return Err(Malformed::Format(format));
    }
    let sop_qpn = cqe.sop_drop_qpn.get();
    let head = |kind| CqeHead {
        kind,
        qpn: sop_qpn & 0x00ff_ffff,
        wqe_counter: cqe.wqe_counter.get(),
        syndrome: 0,
    };
    match op {
        vals::CQE_REQ => {
            let send_op = (sop_qpn >> 24) as u8;
            // Constants only (the compiler makes the match a table lookup); an RDMA
            // READ's length is the CQE's.
            let (op, with_imm, fixed_len) = match send_op {
                opcode::RDMA_WRITE_IMM => (ReqOp::RdmaWrite, true, 0),
                opcode::RDMA_WRITE => (ReqOp::RdmaWrite, false, 0),
                opcode::SEND_IMM => (ReqOp::Send, true, 0),
                opcode::SEND | opcode::SEND_INVAL => (ReqOp::Send, false, 0),
                opcode::RDMA_READ => (ReqOp::RdmaRead, false, 0),
                opcode::ATOMIC_CS => (ReqOp::CmpSwap, false, 8),
                opcode::ATOMIC_FA => (ReqOp::FetchAdd, false, 8),
                opcode::ATOMIC_MASKED_CS => (ReqOp::MaskedCmpSwap, false, 8),
                opcode::ATOMIC_MASKED_FA => (ReqOp::MaskedFetchAdd, false, 8),
                opcode::UMR => (ReqOp::Umr, false, 0),
                other => return Err(Malformed::SendOpcode(other)),
            };
            let byte_len = if op == ReqOp::RdmaRead {
                cqe.byte_cnt.get()
            } else {
                fixed_len
            };
            sink.req(op, with_imm, byte_len);
            Ok(head(CqeKind::Req(op)))
        }
        vals::CQE_RESP_WR_IMM
        | vals::CQE_RESP_SEND
        | vals::CQE_RESP_SEND_IMM
        | vals::CQE_RESP_SEND_INV => {
            let word = cqe.imm_inval_pkey.get();
            let (rop, imm) = match op {
                vals::CQE_RESP_WR_IMM => (RecvOp::RdmaWithImm, word),
                vals::CQE_RESP_SEND_IMM => (RecvOp::RecvImm, word),
                vals::CQE_RESP_SEND_INV => (RecvOp::RecvInv, word),
                _ => (RecvOp::Recv, 0),
            };
            let flags_rqpn = cqe.flags_rqpn.get();
            let v = RespValues {
                byte_len: cqe.byte_cnt.get(),
                imm,
                src_qp: flags_rqpn & 0x00ff_ffff,
                slid: cqe.slid.get(),
                sl: ((flags_rqpn >> vals::CQE_FLAGS_SL_SHIFT) & 0xf) as u8,
                grh: (flags_rqpn >> 28) & 3 != 0,
                dlid_path_bits: cqe.ml_path,
                pkey: (word & 0xffff) as u16,
                srqn_uidx: cqe.srqn.get() & 0x00ff_ffff,
            };
            sink.resp(rop, &v);
            Ok(head(CqeKind::Resp(rop)))
        }
        vals::CQE_REQ_ERR | vals::CQE_RESP_ERR => {
            // Same 64 bytes in the error layout (`struct mlx5_err_cqe`).
            let e = ErrCqe::read_from_bytes(zerocopy::IntoBytes::as_bytes(cqe))
                .map_err(|_| Malformed::Opcode(op))?;
            let requester = op == vals::CQE_REQ_ERR;
            sink.error(
                requester,
                status_of_syndrome(e.syndrome),
                e.syndrome,
                e.vendor_err_synd,
            );
            Ok(CqeHead {
                kind: CqeKind::Error { requester },
                qpn: e.s_wqe_opcode_qpn.get() & 0x00ff_ffff,
                wqe_counter: e.wqe_counter.get(),
                syndrome: e.syndrome,
            })
        }
        vals::CQE_RESIZE_CQ => Ok(CqeHead {
            kind: CqeKind::Resize,
            qpn: 0,
            wqe_counter: 0,
            syndrome: 0,
        }),
        vals::CQE_SIG_ERR => Err(Malformed::SigErr),
        other => Err(Malformed::Opcode(other)),
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_cq_cqe))]
mod tests {
    use super::*;

    // Offsets of `struct mlx5_cqe64` (`device.h`): ml_path @0x11, slid @0x16,
    // flags_rqpn @0x18, srqn @0x20, imm_inval_pkey @0x24, byte_cnt @0x2c,
    // sop_drop_qpn @0x38, wqe_counter @0x3c, op_own @0x3f; `struct mlx5_err_cqe`:
    // vendor_err_synd @0x36, syndrome @0x37, s_wqe_opcode_qpn @0x38. Opcodes of
    // `cq.h` / `device.h` written out.

    fn put32(b: &mut [u8], off: usize, v: u32) {
        b[off..off + 4].copy_from_slice(&v.to_be_bytes());
    }

    fn cqe(bytes: &[u8; 64]) -> Cqe64 {
        Cqe64::read_from_bytes(bytes).unwrap()
    }

    fn raw(op: u8, owner: u8) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[0x3f] = (op << 4) | owner;
        b
    }

    #[test]
    fn geometry() {
        assert!(CqGeometry::new(4, 64).is_some());
        assert!(CqGeometry::new(4, 128).is_some());
        assert!(CqGeometry::new(3, 64).is_none());
        assert!(CqGeometry::new(4, 96).is_none());
        assert!(CqGeometry::new(0, 64).is_none());
    }

    #[test]
    fn owner_bit_follows_the_wrap() {
        let g = CqGeometry::new(4, 64).unwrap();
        let mut buf = [0u8; 4 * 64];
        // Entry 1 written on the first pass (owner 0).
        buf[64..128].copy_from_slice(&raw(0x0, 0));
        assert!(sw_cqe(&g, &buf, 1).is_some());
        // The consumer on its second pass (n & 4) expects owner 1.
        assert!(sw_cqe(&g, &buf, 5).is_none());
        buf[127] |= 1;
        assert!(sw_cqe(&g, &buf, 5).is_some());
        assert!(sw_cqe(&g, &buf, 1).is_none());
        // MLX5_CQE_INVALID (0xf) is never software's, whatever the owner bit.
        buf[127] = 0xf0;
        assert!(sw_cqe(&g, &buf, 1).is_none());
        buf[127] = 0xf1;
        assert!(sw_cqe(&g, &buf, 5).is_none());
        // A buffer of the wrong size.
        assert!(sw_cqe(&g, &buf[..192], 1).is_none());
    }

    #[test]
    fn cqe128_reads_the_second_half() {
        let g = CqGeometry::new(2, 128).unwrap();
        let mut buf = [0u8; 2 * 128];
        // Slot 1: first half looks invalid, second half a valid requester CQE.
        buf[128 + 63] = 0xf0;
        let mut c = raw(0x0, 0);
        put32(&mut c, 0x38, (0x0a << 24) | 0x77);
        buf[192..256].copy_from_slice(&c);
        let e = sw_cqe(&g, &buf, 1).unwrap();
        assert_eq!(e.sop_drop_qpn.get() & 0xffffff, 0x77);
        // Entry 0 of 128 bytes: its second half is zero, owner 0, opcode REQ.
        buf[63] = 0xf0;
        assert!(sw_cqe(&g, &buf, 0).is_some());
        assert!(sw_cqe(&g, &buf, 2).is_none());
    }

    #[test]
    fn requester_opcodes() {
        // `handle_good_req`.
        let cases = [
            (0x08u8, ReqOp::RdmaWrite, false, 0),
            (0x09, ReqOp::RdmaWrite, true, 0),
            (0x0a, ReqOp::Send, false, 0),
            (0x0b, ReqOp::Send, true, 0),
            (0x01, ReqOp::Send, false, 0),
            (0x10, ReqOp::RdmaRead, false, 0x1234),
            (0x11, ReqOp::CmpSwap, false, 8),
            (0x12, ReqOp::FetchAdd, false, 8),
            (0x14, ReqOp::MaskedCmpSwap, false, 8),
            (0x15, ReqOp::MaskedFetchAdd, false, 8),
            (0x25, ReqOp::Umr, false, 0),
        ];
        for (sop, op, with_imm, byte_len) in cases {
            let mut b = raw(0x0, 0);
            put32(&mut b, 0x38, (u32::from(sop) << 24) | 0x00ab_cdef);
            put32(&mut b, 0x2c, 0x1234);
            b[0x3c] = 0x01;
            b[0x3d] = 0x02;
            assert_eq!(
                parse_cqe(&cqe(&b)),
                Ok(Completion {
                    qpn: 0x00ab_cdef,
                    wqe_counter: 0x0102,
                    with_imm,
                    byte_len,
                    ..Completion::empty(CqeKind::Req(op))
                })
            );
        }
        // Every other value of the byte (NOP 0x00, LSO 0x0e, the undefined ones).
        for sop in (0..=u8::MAX).filter(|s| !cases.iter().any(|c| c.0 == *s)) {
            let mut b = raw(0x0, 0);
            put32(&mut b, 0x38, u32::from(sop) << 24);
            assert_eq!(parse_cqe(&cqe(&b)), Err(Malformed::SendOpcode(sop)));
        }
    }

    #[test]
    fn responder_send_imm() {
        let mut b = raw(0x3, 1);
        b[0x11] = 0x05;
        b[0x16] = 0x00;
        b[0x17] = 0x2a;
        // GRH (bits 29:28 = 1), SL 0xb, source QPN 0x000101.
        put32(&mut b, 0x18, (1 << 28) | (0xb << 24) | 0x0101);
        put32(&mut b, 0x20, 0xff00_0007);
        put32(&mut b, 0x24, 0xdead_beef);
        put32(&mut b, 0x2c, 256);
        put32(&mut b, 0x38, 0x42);
        assert_eq!(
            parse_cqe(&cqe(&b)),
            Ok(Completion {
                qpn: 0x42,
                wqe_counter: 0,
                byte_len: 256,
                imm: 0xdead_beef,
                src_qp: 0x0101,
                slid: 0x2a,
                sl: 0xb,
                grh: true,
                dlid_path_bits: 5,
                pkey: 0xbeef,
                srqn_uidx: 7,
                ..Completion::empty(CqeKind::Resp(RecvOp::RecvImm))
            })
        );
    }

    #[test]
    fn responder_kinds() {
        let mut b = raw(0x2, 0);
        put32(&mut b, 0x24, 0xffff);
        put32(&mut b, 0x18, 2 << 28);
        assert!(matches!(
            parse_cqe(&cqe(&b)),
            Ok(Completion {
                kind: CqeKind::Resp(RecvOp::Recv),
                imm: 0,
                pkey: 0xffff,
                grh: true,
                sl: 0,
                ..
            })
        ));
        put32(&mut b, 0x18, 0);
        b[0x3f] = 0x40;
        put32(&mut b, 0x24, 0x0bad_c0de);
        assert!(matches!(
            parse_cqe(&cqe(&b)),
            Ok(Completion {
                kind: CqeKind::Resp(RecvOp::RecvInv),
                imm: 0x0bad_c0de,
                grh: false,
                ..
            })
        ));
        b[0x3f] = 0x10;
        assert!(matches!(
            parse_cqe(&cqe(&b)),
            Ok(Completion {
                kind: CqeKind::Resp(RecvOp::RdmaWithImm),
                imm: 0x0bad_c0de,
                ..
            })
        ));
    }

    #[test]
    fn error_cqes() {
        let mut b = raw(0xd, 0);
        b[0x36] = 0x99;
        b[0x37] = 0x05;
        put32(&mut b, 0x38, (0x0a << 24) | 0x00_1234);
        b[0x3d] = 9;
        assert_eq!(
            parse_cqe(&cqe(&b)),
            Ok(Completion {
                qpn: 0x1234,
                wqe_counter: 9,
                status: WcStatus::WrFlushErr,
                syndrome: 0x05,
                vendor_err: 0x99,
                ..Completion::empty(CqeKind::Error { requester: true })
            })
        );
        // Responder error, a syndrome upstream's table lacks: IB_WC_GENERAL_ERR, the
        // syndrome and vendor syndrome kept.
        b[0x3f] = 0xe0;
        b[0x37] = 0x77;
        assert!(matches!(
            parse_cqe(&cqe(&b)),
            Ok(Completion {
                kind: CqeKind::Error { requester: false },
                status: WcStatus::GeneralErr,
                syndrome: 0x77,
                vendor_err: 0x99,
                byte_len: 0,
                ..
            })
        ));
    }

    #[test]
    fn malformed_and_other_opcodes() {
        assert_eq!(
            parse_cqe(&cqe(&raw(0x5, 0))),
            Ok(Completion::empty(CqeKind::Resize))
        );
        assert_eq!(parse_cqe(&cqe(&raw(0xc, 0))), Err(Malformed::SigErr));
        for op in [0x6u8, 0x7, 0x8, 0x9, 0xa, 0xb, 0xf] {
            assert_eq!(parse_cqe(&cqe(&raw(op, 0))), Err(Malformed::Opcode(op)));
        }
        // Compressed-CQE format bits (3:2).
        let mut b = raw(0x0, 0);
        b[0x3f] |= 3 << 2;
        assert_eq!(parse_cqe(&cqe(&b)), Err(Malformed::Format(3)));
    }

    // A sink that records which of its calls came: `parse_into` makes exactly one for a
    // completion's kind, none for a resize or a malformed CQE, and returns what the CQE
    // names (an error's syndrome with it).
    struct Calls(u32, u32, u32);

    impl CqeSink for Calls {
        fn req(&mut self, _: ReqOp, _: bool, _: u32) {
            self.0 += 1;
        }
        fn resp(&mut self, _: RecvOp, _: &RespValues) {
            self.1 += 1;
        }
        fn error(&mut self, _: bool, _: WcStatus, _: u8, _: u8) {
            self.2 += 1;
        }
    }

    #[test]
    fn one_sink_call_per_kind() {
        let calls = |b: &[u8; 64]| {
            let mut k = Calls(0, 0, 0);
            let h = parse_into(&cqe(b), &mut k);
            (h, (k.0, k.1, k.2))
        };
        let mut b = raw(0x0, 0);
        put32(&mut b, 0x38, (0x0a << 24) | 0x00_0042);
        b[0x3d] = 3;
        let want = CqeHead {
            kind: CqeKind::Req(ReqOp::Send),
            qpn: 0x42,
            wqe_counter: 3,
            syndrome: 0,
        };
        assert_eq!(calls(&b), (Ok(want), (1, 0, 0)));
        b[0x3f] = 0x20;
        assert_eq!(
            calls(&b),
            (
                Ok(CqeHead {
                    kind: CqeKind::Resp(RecvOp::Recv),
                    ..want
                }),
                (0, 1, 0)
            )
        );
        b[0x3f] = 0xd0;
        b[0x37] = 0x05;
        assert_eq!(
            calls(&b),
            (
                Ok(CqeHead {
                    kind: CqeKind::Error { requester: true },
                    syndrome: 0x05,
                    ..want
                }),
                (0, 0, 1)
            )
        );
        assert_eq!(
            calls(&raw(0x5, 0)),
            (
                Ok(CqeHead {
                    kind: CqeKind::Resize,
                    qpn: 0,
                    wqe_counter: 0,
                    syndrome: 0
                }),
                (0, 0, 0)
            )
        );
        assert_eq!(calls(&raw(0xc, 0)), (Err(Malformed::SigErr), (0, 0, 0)));
        b[0x3f] = 0x00;
        put32(&mut b, 0x38, (0x77 << 24) | 0x00_0042);
        assert_eq!(calls(&b), (Err(Malformed::SendOpcode(0x77)), (0, 0, 0)));
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // Any 64 bytes give a completion or a malformed result; every buffer and
        // consumer counter an answer.
        let g = CqGeometry::new(8, 128).unwrap();
        let mut buf = [0u8; 8 * 128];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut seen_ok = 0;
        // Fewer rounds in KUnit, where the guest runs under emulation.
        let rounds = if cfg!(test) { 20_000 } else { 2_000 };
        for _ in 0..rounds {
            for byte in buf.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *byte = x as u8;
            }
            for n in [0u32, 7, 8, x as u32, u32::MAX] {
                if let Some(c) = sw_cqe(&g, &buf, n) {
                    if parse_cqe(&c).is_ok() {
                        seen_ok += 1;
                    }
                }
            }
        }
        assert!(seen_ok > 0);
    }
}
