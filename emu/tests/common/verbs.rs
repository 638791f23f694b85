//! Verbs-object helpers for host tests: an initialized function with an EQ and a UAR,
//! further EQs for async events and the EQEs they hold, and builders for PD, CQ, QP,
//! SRQ and mkey commands.
#![allow(dead_code)]

use crate::common::{create_eq, input, Host};
use mlx5_emu::ifc::cq::{cqc, create_cq_in, create_cq_out};
use mlx5_emu::ifc::field::Field;
use mlx5_emu::ifc::ib_res::{alloc_pd_out, alloc_xrcd_out};
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::qp::{create_qp_in, create_qp_out, qpc};
use mlx5_emu::mem::GuestMemory;

/// An initialized function: UAR, one EQ taking completion events (and page requests).
pub struct Dev {
    pub h: Host,
    pub uar: u32,
    pub eqn: u8,
    pub eq_buf: u64,
}

/// A second EQ of `d` taking the async event types of `mask`; returns its buffer.
pub fn async_eq(d: &mut Dev, mask: u64) -> u64 {
    let (eqn, buf) = create_eq(&mut d.h, d.uar, 6, mask, 0);
    assert_ne!(eqn, 0);
    buf
}

/// EQEs of type `t` in the EQ at `buf`: their 28 data bytes.
pub fn eqes(d: &Dev, buf: u64, t: u8) -> Vec<[u8; 28]> {
    let mut v = Vec::new();
    for i in 0..64u64 {
        let mut e = [0u8; 64];
        d.h.mem.read(buf + 64 * i, &mut e).unwrap();
        if e[1] == t && e[0x3f] & 1 == 0 && e[0x20..0x3c].iter().any(|b| *b != 0) {
            v.push(e[0x20..0x3c].try_into().unwrap());
        }
    }
    v
}

/// Sets field `f` of a nested structure at byte `base` of `buf`.
pub fn set_at(buf: &mut [u8], base: usize, f: impl Into<Field>, v: u64) {
    let f: Field = f.into();
    f.set(&mut buf[base..], v).unwrap();
}

impl Dev {
    pub fn new() -> Self {
        Self::on_host(Host::new())
    }

    /// An initialized function on host `h` (e.g. a device with its own LID).
    pub fn on_host(mut h: Host) -> Self {
        h.init_hca();
        let uar = h.alloc_uar();
        // Completion (0x00) and page-request (0x0b) events.
        let (eqn, eq_buf) = create_eq(&mut h, uar, 6, 1 | (1 << 0x0b), 0);
        Dev {
            h,
            uar,
            eqn,
            eq_buf,
        }
    }

    pub fn pd(&mut self) -> u32 {
        let out = self.h.ok(&input(16, Opcode::ALLOC_PD as u16, 0, &[]), 16);
        alloc_pd_out::PD.raw().get(&out).unwrap() as u32
    }

    pub fn xrcd(&mut self) -> u32 {
        let out = self.h.ok(&input(16, Opcode::ALLOC_XRCD as u16, 0, &[]), 16);
        alloc_xrcd_out::XRCD.raw().get(&out).unwrap() as u32
    }

    /// CREATE_CQ input for 2^log 64-byte CQEs on EQ `eqn`.
    pub fn cq_input(&mut self, log: u8, eqn: u8) -> Vec<u8> {
        let bytes = (64u64 << log).max(4096);
        let buf = self.h.alloc(bytes, 4096);
        let dbr = self.h.alloc(64, 64);
        let n = bytes.div_ceil(4096) as usize;
        let pas = create_cq_in::PAS.raw().byte_off();
        let mut inp = input(pas + 8 * n, Opcode::CREATE_CQ as u16, 0, &[]);
        let c = create_cq_in::CQ_CONTEXT.raw().byte_off();
        set_at(&mut inp, c, cqc::LOG_CQ_SIZE, u64::from(log));
        set_at(&mut inp, c, cqc::UAR_PAGE, u64::from(self.uar));
        set_at(&mut inp, c, cqc::C_EQN_OR_APU_ELEMENT, u64::from(eqn));
        set_at(&mut inp, c, cqc::DBR_ADDR, dbr);
        for i in 0..n {
            let a = buf + 4096 * i as u64;
            inp[pas + 8 * i..pas + 8 * i + 8].copy_from_slice(&a.to_be_bytes());
        }
        inp
    }

    pub fn cq(&mut self) -> u32 {
        let eqn = self.eqn;
        let inp = self.cq_input(4, eqn);
        let out = self.h.ok(&inp, 16);
        create_cq_out::CQN.raw().get(&out).unwrap() as u32
    }

    /// CREATE_QP input: service type `st`, PD, CQs; a 16-entry RQ (regular) and SQ
    /// unless `no_sq`.
    pub fn qp_input(&mut self, st: u8, pd: u32, cqn: u32) -> Vec<u8> {
        let buf = self.h.alloc(8192, 4096);
        let dbr = self.h.alloc(64, 64);
        let pas = create_qp_in::PAS.raw().byte_off();
        let mut inp = input(pas + 16, Opcode::CREATE_QP as u16, 0, &[]);
        let c = create_qp_in::QPC.raw().byte_off();
        set_at(&mut inp, c, qpc::ST, u64::from(st));
        set_at(&mut inp, c, qpc::PD, u64::from(pd));
        set_at(&mut inp, c, qpc::UAR_PAGE, u64::from(self.uar));
        set_at(&mut inp, c, qpc::LOG_RQ_SIZE, 4);
        set_at(&mut inp, c, qpc::LOG_RQ_STRIDE, 2);
        set_at(&mut inp, c, qpc::LOG_SQ_SIZE, 4);
        set_at(&mut inp, c, qpc::CQN_SND, u64::from(cqn));
        set_at(&mut inp, c, qpc::CQN_RCV, u64::from(cqn));
        set_at(&mut inp, c, qpc::DBR_ADDR, dbr);
        inp[pas..pas + 8].copy_from_slice(&buf.to_be_bytes());
        inp[pas + 8..pas + 16].copy_from_slice(&(buf + 4096).to_be_bytes());
        inp
    }

    pub fn qp(&mut self, st: u8, pd: u32, cqn: u32) -> u32 {
        let inp = self.qp_input(st, pd, cqn);
        let out = self.h.ok(&inp, 16);
        create_qp_out::QPN.raw().get(&out).unwrap() as u32
    }

    /// Runs a header-only command naming object `n` in `f`; returns the status.
    pub fn on(&mut self, op: Opcode, f: impl Into<Field>, n: u32) -> u8 {
        let inp = input(16, op as u16, 0, &[(f.into(), u64::from(n))]);
        self.h.run(&inp, 16).0
    }

    /// Live objects of `kind` (stats `objects.live`).
    pub fn live(&self, kind: &str) -> usize {
        let fw = self.h.dev.fw();
        fw.objs
            .counts()
            .into_iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, n)| n)
            .unwrap()
    }
}

/// Which create command an SRQ builder makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SrqCmd {
    Basic,
    Xrc,
    Rmp,
}

impl Dev {
    /// Create input of a 16-entry, 64-byte-stride shared receive queue.
    pub fn srq_input(&mut self, cmd: SrqCmd, pd: u32, cqn: u32, xrcd: u32) -> Vec<u8> {
        use mlx5_emu::ifc::srq::{
            create_rmp_in, create_srq_in, create_xrc_srq_in, rmpc, srqc, wq, xrc_srqc,
        };
        let buf = self.h.alloc(4096, 4096);
        let dbr = self.h.alloc(64, 64);
        let pas = create_srq_in::PAS.raw().byte_off();
        let (op, ctx_off) = match cmd {
            SrqCmd::Basic => (Opcode::CREATE_SRQ, create_srq_in::SRQ_CONTEXT_ENTRY.raw()),
            SrqCmd::Xrc => (
                Opcode::CREATE_XRC_SRQ,
                create_xrc_srq_in::XRC_SRQ_CONTEXT_ENTRY.raw(),
            ),
            SrqCmd::Rmp => (Opcode::CREATE_RMP, create_rmp_in::CTX.raw()),
        };
        let c = ctx_off.byte_off();
        let mut inp = input(pas + 8, op as u16, 0, &[]);
        match cmd {
            SrqCmd::Basic => {
                set_at(&mut inp, c, srqc::LOG_SRQ_SIZE, 4);
                set_at(&mut inp, c, srqc::LOG_RQ_STRIDE, 2);
                set_at(&mut inp, c, srqc::PD, u64::from(pd));
                set_at(&mut inp, c, srqc::DBR_ADDR, dbr);
            }
            SrqCmd::Xrc => {
                set_at(&mut inp, c, xrc_srqc::LOG_XRC_SRQ_SIZE, 4);
                set_at(&mut inp, c, xrc_srqc::LOG_RQ_STRIDE, 2);
                set_at(&mut inp, c, xrc_srqc::PD, u64::from(pd));
                set_at(&mut inp, c, xrc_srqc::CQN, u64::from(cqn));
                set_at(&mut inp, c, xrc_srqc::XRCD, u64::from(xrcd));
                set_at(&mut inp, c, xrc_srqc::DB_RECORD_ADDR_H, dbr >> 32);
                set_at(
                    &mut inp,
                    c,
                    xrc_srqc::DB_RECORD_ADDR_L,
                    (dbr & 0xffff_ffff) >> 2,
                );
            }
            SrqCmd::Rmp => {
                let w = c + rmpc::WQ.raw().byte_off();
                set_at(&mut inp, c, rmpc::STATE, 1);
                set_at(&mut inp, w, wq::LOG_WQ_SZ, 4);
                set_at(&mut inp, w, wq::LOG_WQ_STRIDE, 6);
                set_at(&mut inp, w, wq::PD, u64::from(pd));
                set_at(&mut inp, w, wq::DBR_ADDR, dbr);
            }
        }
        inp[pas..pas + 8].copy_from_slice(&buf.to_be_bytes());
        inp
    }

    /// Creates a shared receive queue; returns its number.
    pub fn srq(&mut self, cmd: SrqCmd, pd: u32, cqn: u32, xrcd: u32) -> u32 {
        let inp = self.srq_input(cmd, pd, cqn, xrcd);
        let out = self.h.ok(&inp, 16);
        // srqn, xrc_srqn and rmpn share the offset (`mlx5_ifc.h`).
        mlx5_emu::ifc::srq::create_srq_out::SRQN
            .raw()
            .get(&out)
            .unwrap() as u32
    }

    /// CREATE_MKEY input: MTT mode, `n` 8-byte entries, PD `pd`.
    pub fn mkey_input(&mut self, pd: u32, n: usize) -> Vec<u8> {
        use mlx5_emu::ifc::mkey::{create_mkey_in as c, mkc};
        let x = c::KLM_PAS_MTT.raw().byte_off();
        let octs = n.div_ceil(2);
        let mut inp = input(
            x + 16 * octs,
            Opcode::CREATE_MKEY as u16,
            0,
            &[(c::TRANSLATIONS_OCTWORD_ACTUAL_SIZE.raw(), octs as u64)],
        );
        let m = c::MEMORY_KEY_MKEY_ENTRY.raw().byte_off();
        set_at(&mut inp, m, mkc::ACCESS_MODE_1_0, 1);
        set_at(&mut inp, m, mkc::LR, 1);
        set_at(&mut inp, m, mkc::LW, 1);
        set_at(&mut inp, m, mkc::PD, u64::from(pd));
        set_at(&mut inp, m, mkc::QPN, 0xff_ffff);
        set_at(&mut inp, m, mkc::MKEY_7_0, 0x42);
        set_at(&mut inp, m, mkc::LOG_PAGE_SIZE, 12);
        set_at(&mut inp, m, mkc::LEN, 4096 * n as u64);
        set_at(&mut inp, m, mkc::TRANSLATIONS_OCTWORD_SIZE, octs as u64);
        for i in 0..n {
            let a = 0x2000_0000u64 + 4096 * i as u64;
            inp[x + 8 * i..x + 8 * i + 8].copy_from_slice(&a.to_be_bytes());
        }
        inp
    }

    /// Creates an mkey; returns its index.
    pub fn mkey(&mut self, pd: u32, n: usize) -> u32 {
        let inp = self.mkey_input(pd, n);
        let out = self.h.ok(&inp, 16);
        mlx5_emu::ifc::mkey::create_mkey_out::MKEY_INDEX
            .raw()
            .get(&out)
            .unwrap() as u32
    }

    /// A transition command's input for QP `qpn` (header + opt_param_mask + qpc).
    pub fn transition_input(&self, op: Opcode, qpn: u32, mask: u32) -> Vec<u8> {
        use mlx5_emu::ifc::qp::{ads, qpc, rst2init_qp_in as m};
        let mut inp = input(
            m::BYTES,
            op as u16,
            0,
            &[
                (m::QPN.raw(), u64::from(qpn)),
                (m::OPT_PARAM_MASK.raw(), u64::from(mask)),
            ],
        );
        let c = m::QPC.raw().byte_off();
        let p = c + qpc::PRIMARY_ADDRESS_PATH.raw().byte_off();
        set_at(&mut inp, p, ads::VHCA_PORT_NUM, 1);
        set_at(&mut inp, c, qpc::MTU, 3);
        set_at(&mut inp, c, qpc::REMOTE_QPN, 0x1234);
        set_at(&mut inp, c, qpc::NEXT_SEND_PSN, 0x77);
        set_at(&mut inp, c, qpc::Q_KEY, 0x8001_0000);
        inp
    }

    /// Runs a transition; returns its status.
    pub fn transition(&mut self, op: Opcode, qpn: u32, mask: u32) -> u8 {
        let inp = self.transition_input(op, qpn, mask);
        self.h.run(&inp, 16).0
    }

    /// QUERY_QP: (state, qpc bytes).
    pub fn query_qp(&mut self, qpn: u32) -> (u8, Vec<u8>) {
        use mlx5_emu::ifc::qp::{qpc, query_qp_in, query_qp_out};
        let inp = input(
            16,
            Opcode::QUERY_QP as u16,
            0,
            &[(query_qp_in::QPN.raw(), u64::from(qpn))],
        );
        let out = self.h.ok(&inp, query_qp_out::BYTES);
        let c = query_qp_out::QPC.raw().byte_off();
        let ctx = out[c..c + qpc::BYTES].to_vec();
        (qpc::STATE.raw().get(&ctx).unwrap() as u8, ctx)
    }
}
