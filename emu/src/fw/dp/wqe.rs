//! Send WQE decoding (control, XRC, remote address, atomic, datagram, data and inline
//! segments). See [`super`].
//!
//! [`decode`] turns the bytes of one send WQE (already unwrapped from the ring: a WQE
//! may wrap past the end of the send queue, upstream `handle_post_send_edge` and
//! libmlx5 continue it at the queue's start) into a [`SendWqe`]. Pure: no guest memory,
//! no state. The segment order per QP type is what upstream's mlx5_ib `wr.c`
//! (`mlx5_ib_post_send`) and rdma-core 56.1's libmlx5 (`qp.c` `_mlx5_post_send`)
//! write:
//! - control segment (`mlx5_wqe_ctrl_seg`, 16 bytes; `ds` counts 16-byte units of the
//!   whole WQE);
//! - XRC initiator: the XRC segment (remote XRC SRQ number);
//! - RC / XRC: RDMA READ / WRITE carry a remote address segment, compare-and-swap and
//!   fetch-and-add a remote address and an atomic segment (masked forms: the 32-byte
//!   masked segment for compare-and-swap, the 16-byte one (add, field boundary) for
//!   fetch-and-add); UC: RDMA WRITE carries a remote address segment;
//! - UD and the MAD QPs (QP0 / QP1, upstream `handle_qpt_hw_gsi`): a datagram segment
//!   (the address handle's `mlx5_av`, remote QPN, Q_Key);
//! - then the data: data segments (gather list), or inline data (`byte_count` with
//!   `MLX5_INLINE_SEG`, the bytes after it, padded to 16) which may fill several
//!   16-byte units and wrap like any segment.
//!
//! UMR WQEs (opcode 0x25, also local invalidate and memory-window bind in libmlx5) are
//! returned whole for dpmem's `exec_umr`. A malformed WQE (ds 0, ds past the largest
//! WQE, a segment overrunning `ds`, inline bytes past the WQE) is an error with a
//! message, never a panic.

use crate::fw::qp_state::st;
use crate::ifc::av::Av;
use crate::ifc::wqe::{
    opcode, vals, WqeAtomicSeg, WqeCtrlSeg, WqeDataSeg, WqeMaskedAtomicSeg, WqeRaddrSeg, WqeXrcSeg,
};
use zerocopy::FromBytes;

/// Largest send WQE (cap `max_wqe_sz_sq` 1024 = `MLX5_SEND_WQE_MAX_WQEBBS` × 64).
pub const MAX_WQE_BYTES: usize = vals::SEND_WQE_MAX_WQEBBS * vals::SEND_WQE_BB;

/// `opmod` of an atomic with an explicit operand size (PRM "extended atomic": bit 3
/// set, bits 2:0 = log2(size) - 2); 8-byte operands are the only size the caps
/// advertise (`atomic_size_qp` = 8 bytes, fw/caps.rs).
const OPMOD_EXT_ATOMIC_8B: u8 = 0x08 | 1;

/// Which segments follow the control segment (by `qpc.st`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpKind {
    /// Reliable connected (also upstream's UMR QP).
    Rc,
    /// Unreliable connected.
    Uc,
    /// Unreliable datagram.
    Ud,
    /// XRC initiator.
    XrcIni,
    /// QP0 / QP1 (MAD QPs; datagram segment like UD).
    Mad,
}

impl QpKind {
    /// The kind of a QP of service type `st`; `None` for types without a send path
    /// here.
    pub fn from_st(s: u8) -> Option<QpKind> {
        Some(match s {
            st::RC | st::REG_UMR => QpKind::Rc,
            st::UC => QpKind::Uc,
            st::UD => QpKind::Ud,
            st::XRC => QpKind::XrcIni,
            st::QP0 | st::QP1 => QpKind::Mad,
            _ => return None,
        })
    }
}

/// The local data of a SEND / WRITE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Data {
    /// Gather list (in order; zero-length entries kept).
    Gather(Vec<WqeDataSeg>),
    /// Inline bytes.
    Inline(Vec<u8>),
}

impl Data {
    /// Bytes the message carries (inline) or names (gather, saturating).
    pub fn len(&self) -> u64 {
        match self {
            Data::Gather(s) => s
                .iter()
                .fold(0u64, |a, d| a.saturating_add(u64::from(d.byte_count.get()))),
            Data::Inline(b) => b.len() as u64,
        }
    }

    /// No bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The operands of an atomic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicArgs {
    /// Compare-and-swap.
    CmpSwap {
        /// Swap value.
        swap: u64,
        /// Compare value.
        compare: u64,
    },
    /// Fetch-and-add.
    FetchAdd {
        /// Addend.
        add: u64,
    },
    /// Masked compare-and-swap.
    MaskedCmpSwap {
        /// Swap value.
        swap: u64,
        /// Compare value.
        compare: u64,
        /// Bits swapped.
        swap_mask: u64,
        /// Bits compared.
        compare_mask: u64,
    },
    /// Masked fetch-and-add: independent adds in fields whose top bits `boundary`
    /// marks (a carry does not cross a set bit).
    MaskedFetchAdd {
        /// Addend.
        add: u64,
        /// Field boundaries.
        boundary: u64,
    },
}

/// What one send WQE asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// No operation (completes when reached).
    Nop,
    /// SEND, SEND with immediate, SEND with invalidate (`imm` holds the immediate /
    /// the rkey to invalidate).
    Send {
        /// UD / MAD: the address vector with remote QPN and Q_Key.
        av: Option<Av>,
        /// The local data.
        data: Data,
    },
    /// RDMA WRITE (with immediate).
    Write {
        /// Remote address and key.
        raddr: WqeRaddrSeg,
        /// The local data.
        data: Data,
    },
    /// RDMA READ: `sges` receive the remote bytes.
    Read {
        /// Remote address and key.
        raddr: WqeRaddrSeg,
        /// Local scatter list.
        sges: Vec<WqeDataSeg>,
    },
    /// An 8-byte atomic: the original value lands in `sges`.
    Atomic {
        /// Remote address and key.
        raddr: WqeRaddrSeg,
        /// Operands.
        args: AtomicArgs,
        /// Local scatter list (8 bytes).
        sges: Vec<WqeDataSeg>,
    },
    /// UMR (also local invalidate, memory-window bind): the bytes after the control
    /// segment, for `exec_umr`.
    Umr {
        /// WQE bytes after the control segment.
        body: Vec<u8>,
    },
}

/// One decoded send WQE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SendWqe {
    /// The control segment as written.
    pub ctrl: WqeCtrlSeg,
    /// Opcode (`MLX5_OPCODE_*`).
    pub opcode: u8,
    /// Opcode modifier.
    pub opmod: u8,
    /// WQE index the control segment names (in WQEBBs).
    pub index: u16,
    /// QPN the control segment names.
    pub qpn: u32,
    /// Size in 16-byte units.
    pub ds: usize,
    /// Fence mode (`fm_ce_se` 7:5, `vals::FENCE_MODE_*`).
    pub fence: u8,
    /// A CQE is requested (CE 2 or 3).
    pub signalled: bool,
    /// Solicited event.
    pub solicited: bool,
    /// Immediate data / rkey to invalidate (as the guest wrote it, big-endian value).
    pub imm: u32,
    /// XRC initiator: the remote XRC SRQ.
    pub xrc_srqn: Option<u32>,
    /// What to do.
    pub op: Op,
}

impl SendWqe {
    /// Basic blocks the WQE occupies in the ring.
    pub fn bbs(&self) -> u16 {
        (self.ds * vals::SEND_WQE_DS).div_ceil(vals::SEND_WQE_BB) as u16
    }
}

/// The control segment of the first 16 bytes and its `ds`. Error: fewer than 16 bytes,
/// ds 0, ds past [`MAX_WQE_BYTES`].
pub fn ctrl_of(first: &[u8]) -> Result<(WqeCtrlSeg, usize), String> {
    let ctrl = WqeCtrlSeg::read_from_prefix(first)
        .map_err(|_| "WQE shorter than its control segment".to_string())?
        .0;
    let ds = (ctrl.qpn_ds.get() & vals::CTRL_DS_MASK) as usize;
    if ds == 0 {
        return Err("ds 0".into());
    }
    if ds * vals::SEND_WQE_DS > MAX_WQE_BYTES {
        return Err(format!(
            "ds {ds} ({} bytes) past the largest send WQE ({MAX_WQE_BYTES})",
            ds * vals::SEND_WQE_DS
        ));
    }
    Ok((ctrl, ds))
}

/// A cursor over the WQE's bytes after the control segment, bounded by `ds`.
struct Segs<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Segs<'a> {
    fn take<T: FromBytes>(&mut self, what: &str) -> Result<T, String> {
        let n = core::mem::size_of::<T>();
        let s = self
            .b
            .get(self.at..self.at + n)
            .ok_or_else(|| format!("{what} at byte {} overruns ds", self.at))?;
        self.at += n;
        T::read_from_bytes(s).map_err(|_| format!("{what}: bad size"))
    }

    fn rest(&self) -> usize {
        self.b.len() - self.at
    }

    /// Data segments until ds ends.
    fn sges(&mut self) -> Result<Vec<WqeDataSeg>, String> {
        let mut v = Vec::new();
        while self.rest() > 0 {
            v.push(self.take::<WqeDataSeg>("data segment")?);
        }
        Ok(v)
    }

    /// Data or inline segments until ds ends: inline bytes when the first segment is
    /// inline (then every segment must be), else the gather list.
    fn data(&mut self) -> Result<Data, String> {
        let peek = |s: &Self| {
            s.b.get(s.at..s.at + 4)
                .map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
        };
        match peek(self) {
            Some(w) if w & vals::INLINE_SEG != 0 => {}
            _ => return self.sges().map(Data::Gather),
        }
        let mut out = Vec::new();
        while let Some(w) = peek(self) {
            if w & vals::INLINE_SEG == 0 {
                return Err(format!(
                    "data segment after inline data at byte {}",
                    self.at
                ));
            }
            let len = (w & !vals::INLINE_SEG) as usize;
            let start = self.at + 4;
            let end = start
                .checked_add(len)
                .filter(|e| *e <= self.b.len())
                .ok_or_else(|| {
                    format!(
                        "inline length {len} at byte {} past the WQE's {} bytes",
                        self.at,
                        self.b.len()
                    )
                })?;
            out.extend_from_slice(&self.b[start..end]);
            // The next segment starts at the next 16-byte unit (upstream
            // `ALIGN(inl + sizeof(byte_count), 16)`).
            self.at = (self.at + (4 + len).div_ceil(16) * 16).min(self.b.len());
        }
        Ok(Data::Inline(out))
    }
}

/// Decodes one send WQE of a QP of kind `kind`. `bytes` is the whole WQE (at least
/// `ds` × 16 bytes, unwrapped from the ring; bytes past `ds` are ignored).
pub fn decode(bytes: &[u8], kind: QpKind) -> Result<SendWqe, String> {
    let (ctrl, ds) = ctrl_of(bytes)?;
    let len = ds * vals::SEND_WQE_DS;
    let b = bytes
        .get(..len)
        .ok_or_else(|| format!("ds {ds} but only {} bytes given", bytes.len()))?;
    let ooi = ctrl.opmod_idx_opcode.get();
    let opc = ooi as u8;
    let opmod = (ooi >> 24) as u8;
    let mut s = Segs {
        b,
        at: vals::SEND_WQE_DS,
    };
    let mut xrc_srqn = None;
    if kind == QpKind::XrcIni && opc != opcode::UMR && opc != opcode::NOP {
        xrc_srqn = Some(s.take::<WqeXrcSeg>("XRC segment")?.xrc_srqn.get() & 0xff_ffff);
    }
    let connected = matches!(kind, QpKind::Rc | QpKind::XrcIni);
    let op = match opc {
        opcode::NOP => Op::Nop,
        opcode::UMR => Op::Umr {
            body: b[vals::SEND_WQE_DS..].to_vec(),
        },
        opcode::SEND | opcode::SEND_IMM | opcode::SEND_INVAL => {
            let av = match kind {
                QpKind::Ud | QpKind::Mad => Some(
                    s.take::<crate::ifc::wqe::WqeDatagramSeg>("datagram segment")?
                        .av,
                ),
                _ => None,
            };
            if opc == opcode::SEND_INVAL && !connected {
                return Err(format!("SEND with invalidate on a {kind:?} QP"));
            }
            Op::Send {
                av,
                data: s.data()?,
            }
        }
        opcode::RDMA_WRITE | opcode::RDMA_WRITE_IMM if connected || kind == QpKind::Uc => {
            let raddr = s.take::<WqeRaddrSeg>("remote address segment")?;
            Op::Write {
                raddr,
                data: s.data()?,
            }
        }
        opcode::RDMA_READ if connected => {
            let raddr = s.take::<WqeRaddrSeg>("remote address segment")?;
            Op::Read {
                raddr,
                sges: s.sges()?,
            }
        }
        opcode::ATOMIC_CS | opcode::ATOMIC_FA if connected => {
            if opmod != 0 && opmod != OPMOD_EXT_ATOMIC_8B {
                return Err(format!("atomic opmod {opmod:#x}: only 8-byte operands"));
            }
            let raddr = s.take::<WqeRaddrSeg>("remote address segment")?;
            let a = s.take::<WqeAtomicSeg>("atomic segment")?;
            let args = if opc == opcode::ATOMIC_CS {
                AtomicArgs::CmpSwap {
                    swap: a.swap_add.get(),
                    compare: a.compare.get(),
                }
            } else {
                AtomicArgs::FetchAdd {
                    add: a.swap_add.get(),
                }
            };
            Op::Atomic {
                raddr,
                args,
                sges: s.sges()?,
            }
        }
        opcode::ATOMIC_MASKED_CS | opcode::ATOMIC_MASKED_FA if connected => {
            if opmod != 0 && opmod != OPMOD_EXT_ATOMIC_8B {
                return Err(format!(
                    "masked atomic opmod {opmod:#x}: only 8-byte operands"
                ));
            }
            let raddr = s.take::<WqeRaddrSeg>("remote address segment")?;
            let args = if opc == opcode::ATOMIC_MASKED_CS {
                let m = s.take::<WqeMaskedAtomicSeg>("masked atomic segment")?;
                AtomicArgs::MaskedCmpSwap {
                    swap: m.swap_add.get(),
                    compare: m.compare.get(),
                    swap_mask: m.swap_add_mask.get(),
                    compare_mask: m.compare_mask.get(),
                }
            } else {
                let m = s.take::<WqeAtomicSeg>("masked fetch-add segment")?;
                AtomicArgs::MaskedFetchAdd {
                    add: m.swap_add.get(),
                    boundary: m.compare.get(),
                }
            };
            Op::Atomic {
                raddr,
                args,
                sges: s.sges()?,
            }
        }
        o => return Err(format!("opcode {o:#04x} not executed on a {kind:?} QP")),
    };
    let fm_ce_se = ctrl.fm_ce_se;
    Ok(SendWqe {
        ctrl,
        opcode: opc,
        opmod,
        index: (ooi >> 8) as u16,
        qpn: ctrl.qpn_ds.get() >> 8,
        ds,
        fence: fm_ce_se & vals::CTRL_FENCE_MASK,
        signalled: fm_ce_se & vals::CTRL_CQ_UPDATE != 0,
        solicited: fm_ce_se & vals::CTRL_SOLICITED != 0,
        imm: ctrl.imm.get(),
        xrc_srqn,
        op,
    })
}

/// The masked / plain atomic on the 8-byte value `old`: the new value (upstream's and
/// the IBTA's semantics; masked forms as the PRM's masked atomics: compare and swap
/// only the masked bits, add per field).
pub fn atomic_apply(old: u64, args: &AtomicArgs) -> u64 {
    match *args {
        AtomicArgs::CmpSwap { swap, compare } => {
            if old == compare {
                swap
            } else {
                old
            }
        }
        AtomicArgs::FetchAdd { add } => old.wrapping_add(add),
        AtomicArgs::MaskedCmpSwap {
            swap,
            compare,
            swap_mask,
            compare_mask,
        } => {
            if (old ^ compare) & compare_mask == 0 {
                (old & !swap_mask) | (swap & swap_mask)
            } else {
                old
            }
        }
        AtomicArgs::MaskedFetchAdd { add, boundary } => {
            // Field i ends at each set bit of `boundary` (its most significant bit):
            // add without carrying out of a field.
            let mut out = 0u64;
            let mut lo = 0u32;
            for bit in 0..64u32 {
                if boundary & (1 << bit) != 0 || bit == 63 {
                    let width = bit + 1 - lo;
                    let mask = if width == 64 {
                        u64::MAX
                    } else {
                        ((1u64 << width) - 1) << lo
                    };
                    let sum = ((old & mask) >> lo).wrapping_add((add & mask) >> lo);
                    out |= (sum << lo) & mask;
                    lo = bit + 1;
                }
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zerocopy::IntoBytes;

    fn ctrl(opc: u8, idx: u16, qpn: u32, ds: u8, fm_ce_se: u8, imm: u32) -> Vec<u8> {
        let mut c = [0u8; 16];
        c[0..4].copy_from_slice(&((u32::from(idx) << 8) | u32::from(opc)).to_be_bytes());
        c[4..8].copy_from_slice(&((qpn << 8) | u32::from(ds)).to_be_bytes());
        c[11] = fm_ce_se;
        c[12..16].copy_from_slice(&imm.to_be_bytes());
        c.to_vec()
    }

    fn dseg(len: u32, lkey: u32, addr: u64) -> Vec<u8> {
        let mut d = WqeDataSeg::default();
        d.byte_count.set(len);
        d.lkey.set(lkey);
        d.addr.set(addr);
        d.as_bytes().to_vec()
    }

    fn raddr(va: u64, rkey: u32) -> Vec<u8> {
        let mut r = WqeRaddrSeg::default();
        r.raddr.set(va);
        r.rkey.set(rkey);
        r.as_bytes().to_vec()
    }

    #[test]
    fn rc_send_with_gather_list() {
        let mut w = ctrl(opcode::SEND_IMM, 5, 0x42, 3, 0x08 | 0x02, 0xdead_beef);
        w.extend(dseg(10, 0x100, 0x1000));
        w.extend(dseg(20, 0x200, 0x2000));
        let d = decode(&w, QpKind::Rc).unwrap();
        assert_eq!((d.index, d.qpn, d.ds, d.bbs()), (5, 0x42, 3, 1));
        assert!(d.signalled && d.solicited);
        assert_eq!(d.imm, 0xdead_beef);
        let Op::Send { av: None, data } = &d.op else {
            panic!("{:?}", d.op)
        };
        assert_eq!(data.len(), 30);
    }

    #[test]
    fn inline_spanning_units_and_padding() {
        let payload: Vec<u8> = (0..40u8).collect();
        // ctrl + raddr + inline header (4) + 40 bytes = 16+16+48 → ds 5
        let mut w = ctrl(opcode::RDMA_WRITE, 0, 1, 5, 0, 0);
        w.extend(raddr(0x5000, 7));
        w.extend((vals::INLINE_SEG | 40).to_be_bytes());
        w.extend(&payload);
        w.resize(80, 0);
        let d = decode(&w, QpKind::Rc).unwrap();
        let Op::Write { raddr: r, data } = &d.op else {
            panic!()
        };
        assert_eq!((r.raddr.get(), r.rkey.get()), (0x5000, 7));
        assert_eq!(data, &Data::Inline(payload));
    }

    #[test]
    fn inline_past_the_wqe_is_an_error() {
        let mut w = ctrl(opcode::SEND, 0, 1, 2, 0, 0);
        w.extend((vals::INLINE_SEG | 100).to_be_bytes());
        w.resize(32, 0);
        let e = decode(&w, QpKind::Rc).unwrap_err();
        assert!(e.contains("inline length 100"), "{e}");
    }

    #[test]
    fn malformed_sizes_are_errors() {
        assert!(decode(&ctrl(opcode::SEND, 0, 1, 0, 0, 0), QpKind::Rc)
            .unwrap_err()
            .contains("ds 0"));
        // The largest ds (63 units, 1008 bytes) fits a WQE; fewer bytes than it says
        // do not.
        assert!(ctrl_of(&ctrl(opcode::SEND, 0, 1, 0x3f, 0, 0)).is_ok());
        let e = decode(&ctrl(opcode::SEND, 0, 1, 0x3f, 0, 0), QpKind::Rc).unwrap_err();
        assert!(e.contains("only 16 bytes"), "{e}");
        // ds 2 covers only half a raddr + atomic.
        let mut w = ctrl(opcode::ATOMIC_CS, 0, 1, 2, 0, 0);
        w.extend(raddr(0, 0));
        assert!(decode(&w, QpKind::Rc)
            .unwrap_err()
            .contains("atomic segment"));
        // Fewer bytes than ds says.
        assert!(decode(&ctrl(opcode::SEND, 0, 1, 4, 0, 0), QpKind::Rc).is_err());
        // A data segment cut by ds (ds 2 + 8 bytes is impossible: ds counts 16s), and
        // a UD send without room for its datagram segment.
        let mut w = ctrl(opcode::SEND, 0, 1, 2, 0, 0);
        w.extend(dseg(1, 1, 1));
        assert!(decode(&w, QpKind::Ud)
            .unwrap_err()
            .contains("datagram segment"));
        // Opcodes a QP type does not have.
        let mut w = ctrl(opcode::RDMA_READ, 0, 1, 2, 0, 0);
        w.extend(raddr(0, 0));
        assert!(decode(&w, QpKind::Uc).is_err());
        assert!(decode(&w, QpKind::Ud).is_err());
    }

    #[test]
    fn ud_xrc_atomic_and_umr_layouts() {
        let mut av = Av::default();
        av.rlid.set(7);
        av.dqp_dct.set(0x8000_0033);
        av.key[0..4].copy_from_slice(&0x1111_2222u32.to_be_bytes());
        let mut w = ctrl(opcode::SEND, 0, 1, 5, 0, 0);
        w.extend(av.as_bytes());
        w.extend(dseg(4, 1, 2));
        let d = decode(&w, QpKind::Ud).unwrap();
        let Op::Send { av: Some(a), .. } = &d.op else {
            panic!()
        };
        assert_eq!(a.rlid.get(), 7);

        let mut w = ctrl(opcode::ATOMIC_FA, 0, 1, 5, 0, 0);
        w.extend((9u32).to_be_bytes());
        w.extend([0u8; 12]);
        w.extend(raddr(0x100, 3));
        w.extend(5u64.to_be_bytes());
        w.extend(0u64.to_be_bytes());
        w.extend(dseg(8, 1, 0x40));
        let d = decode(&w, QpKind::XrcIni).unwrap();
        assert_eq!(d.xrc_srqn, Some(9));
        let Op::Atomic { args, sges, .. } = &d.op else {
            panic!()
        };
        assert_eq!(*args, AtomicArgs::FetchAdd { add: 5 });
        assert_eq!(sges.len(), 1);

        let mut w = ctrl(opcode::UMR, 0, 1, 4, 0, 0);
        w.extend([0xabu8; 48]);
        let d = decode(&w, QpKind::Rc).unwrap();
        assert_eq!(
            d.op,
            Op::Umr {
                body: vec![0xab; 48]
            }
        );
    }

    #[test]
    fn atomics_compute() {
        let cs = AtomicArgs::CmpSwap {
            swap: 9,
            compare: 1,
        };
        assert_eq!(atomic_apply(1, &cs), 9);
        assert_eq!(atomic_apply(2, &cs), 2);
        assert_eq!(atomic_apply(u64::MAX, &AtomicArgs::FetchAdd { add: 2 }), 1);
        let m = AtomicArgs::MaskedCmpSwap {
            swap: 0xff00,
            compare: 0x00ab,
            swap_mask: 0xff00,
            compare_mask: 0x00ff,
        };
        assert_eq!(atomic_apply(0x12ab, &m), 0xffab);
        assert_eq!(atomic_apply(0x12ac, &m), 0x12ac);
        // Two 32-bit fields: no carry from the low into the high one.
        let fa = AtomicArgs::MaskedFetchAdd {
            add: 0x0000_0001_0000_0001,
            boundary: 0x8000_0000_8000_0000,
        };
        assert_eq!(
            atomic_apply(0x0000_0001_ffff_ffff, &fa),
            0x0000_0002_0000_0000
        );
    }
}
