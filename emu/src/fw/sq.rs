//! The minimal send path: send doorbells consume WQEs of a QP's send queue and write
//! requester CQEs into its send CQ; CQ arm doorbells make the next CQE raise a
//! completion EQE. No data moves (there is no wire).
//!
//! Rules and sources: emu/README.md, "Verbs objects" (send path).

use super::qp_state::state;
use super::{Env, Firmware};
use crate::ifc::eqe::event_type;
use crate::ifc::qp::qpc;
use crate::ifc::wqe::{vals, Cqe64, ErrCqe, WqeCtrlSeg};
use zerocopy::{FromBytes, FromZeros, IntoBytes};

/// Most WQEs consumed per doorbell (a bound on the work one guest write causes).
const MAX_WQES_PER_DOORBELL: u32 = 1 << 16;

/// Size of one BlueFlame register half (cap `log_bf_reg_size` 9: 512-byte registers
/// used in two 256-byte halves, upstream `bf_reg_size / 2`).
const BF_HALF: usize = 256;

/// Guest address of byte `off` of a queue buffer made of `pas` pages of `page` bytes.
fn buf_addr(pas: &[u64], page: u64, off: u64) -> Option<u64> {
    let i = usize::try_from(off / page).ok()?;
    Some(pas.get(i)? + off % page)
}

/// One CQE to write.
struct Completion {
    qpn: u32,
    opcode: u8,
    wqe_counter: u16,
    error: bool,
    solicited: bool,
}

impl Firmware {
    /// A UAR write the EQ doorbells did not take: a CQ arm (+0x20 / +0x24) or a send
    /// doorbell (first 8 bytes of a BlueFlame half, +0x800 …). Other offsets are
    /// ignored.
    pub fn uar_write(&mut self, env: &Env<'_>, page: u32, off: usize, val: u32) {
        if off == vals::UAR_CQ_DOORBELL {
            self.objs.cq_arm_words.insert(page, val);
        } else if off == vals::UAR_CQ_DOORBELL + 4 {
            match self.objs.cq_arm_words.remove(&page) {
                Some(word) => self.cq_arm(env, page, val & 0xff_ffff, word),
                None => self
                    .stats
                    .violation(format!("CQ doorbell on UAR {page} without its arm word")),
            }
        } else if (vals::UAR_BF_OFFSET..vals::UAR_BF_OFFSET + vals::BFREGS_PER_UAR * 2 * BF_HALF)
            .contains(&off)
            && (off - vals::UAR_BF_OFFSET) % BF_HALF == 4
        {
            // The second dword of the control segment's first 8 bytes: QPN in 31:8.
            self.send_doorbell(env, page, val >> 8);
        }
    }

    fn cq_arm(&mut self, env: &Env<'_>, page: u32, cqn: u32, word: u32) {
        let Some(cq) = self.objs.cqs.get_mut(&cqn) else {
            self.stats
                .violation(format!("CQ arm doorbell for unknown CQ {cqn}"));
            return;
        };
        // Rung on the CQ's own UAR page (`cqc.uar_page`, upstream `mlx5_cq_arm`).
        if cq.uar != page {
            self.stats.violation(format!(
                "CQ arm doorbell for CQ {cqn} on UAR {page}, not its UAR {}",
                cq.uar
            ));
            return;
        }
        cq.armed = true;
        cq.solicited_only = word & vals::CQ_DB_REQ_NOT_SOL != 0;
        let ci = word & 0xff_ffff;
        // CQEs beyond the consumer index the arm carries: the event is due at once
        // (PRM CQ arming; upstream's "arm, then poll again" relies on it).
        if !cq.solicited_only && cq.pi & 0xff_ffff != ci {
            self.cq_event(env, cqn);
        }
    }

    fn cq_event(&mut self, env: &Env<'_>, cqn: u32) {
        let Some(cq) = self.objs.cqs.get_mut(&cqn) else {
            return;
        };
        cq.armed = false;
        let eqn = cq.eqn;
        let mut data = [0u8; 28];
        data[24..28].copy_from_slice(&(cqn & 0xff_ffff).to_be_bytes());
        match self.eqs.post_to(
            eqn,
            event_type::COMP,
            0,
            &data,
            env.mem,
            env.irq,
            env.msix_ok,
        ) {
            super::eq::Posted::Dma(e) => self.stats.dma_error(format!("completion EQE: {e}")),
            super::eq::Posted::Written(_) => self.objs.sent.1 += 1,
            _ => {}
        }
    }

    fn send_doorbell(&mut self, env: &Env<'_>, page: u32, qpn: u32) {
        let Some(qp) = self.objs.qps.get(&qpn) else {
            self.stats
                .violation(format!("send doorbell for unknown QP {qpn}"));
            return;
        };
        let ctx = &qp.ctx;
        let f = |fl: crate::ifc::field::Field| fl.get(ctx).unwrap_or(0);
        if f(qpc::NO_SQ.raw()) != 0 {
            self.stats
                .violation(format!("send doorbell for QP {qpn} without a send queue"));
            return;
        }
        let uar = f(qpc::UAR_PAGE.raw()) as u32;
        if uar != page {
            self.stats.violation(format!(
                "send doorbell for QP {qpn} on UAR {page}, not its UAR {uar}"
            ));
            return;
        }
        // Only RTS (and SQD's drain) executes; ERR and SQER flush with error CQEs;
        // RST, INIT, RTR keep the WQEs for later (PRM QP states).
        let flush = match qp.state {
            state::RTS => false,
            state::ERR | state::SQER => true,
            _ => return,
        };
        let dbr = f(qpc::DBR_ADDR.raw());
        let mut db = [0u8; 4];
        if let Err(e) = env.mem.read(dbr + 4, &mut db) {
            self.stats
                .dma_error(format!("QP {qpn} doorbell record: {e}"));
            return;
        }
        // Doorbell record DW1: the send queue producer counter in WQEBBs (16 bits).
        let head = u32::from_be_bytes(db) as u16;
        let log_sq = f(qpc::LOG_SQ_SIZE.raw());
        let sq_bbs = 1u64 << log_sq;
        let rq_bytes = if f(qpc::RQ_TYPE.raw()) == 0 {
            (1u64 << f(qpc::LOG_RQ_SIZE.raw())) << (f(qpc::LOG_RQ_STRIDE.raw()) + 4)
        } else {
            0
        };
        let page_bytes = 4096u64 << f(qpc::LOG_PAGE_SIZE.raw());
        // page_offset in page_size / 64 units (see `create_qp`).
        let base = f(qpc::PAGE_OFFSET.raw()) * (page_bytes / 64) + rq_bytes;
        let pas = qp.pas.clone();
        let cqn = qp.cqn_snd;
        let mut ctr = qp.sq_consumed;
        let mut done = Vec::new();
        let mut n = 0;
        while ctr != head && n < MAX_WQES_PER_DOORBELL {
            n += 1;
            let off = base + (u64::from(ctr) % sq_bbs) * vals::SEND_WQE_BB as u64;
            let Some(addr) = buf_addr(&pas, page_bytes, off) else {
                self.stats
                    .violation(format!("QP {qpn}: send WQE {ctr} outside its buffer"));
                break;
            };
            let mut raw = [0u8; 16];
            if let Err(e) = env.mem.read(addr, &mut raw) {
                self.stats
                    .dma_error(format!("QP {qpn} send WQE {ctr}: {e}"));
                break;
            }
            let Ok(c) = WqeCtrlSeg::read_from_bytes(&raw) else {
                break;
            };
            let ooi = c.opmod_idx_opcode.get();
            let ds = (c.qpn_ds.get() & 0x3f) as usize;
            // The control segment names its own index and QP (upstream `begin_wqe`).
            if (ooi >> 8) as u16 != ctr || c.qpn_ds.get() >> 8 != qpn || ds == 0 {
                self.stats.violation(format!(
                    "QP {qpn}: send WQE {ctr} has index {:#x}, qpn {:#x}, ds {ds}",
                    (ooi >> 8) & 0xffff,
                    c.qpn_ds.get() >> 8
                ));
                break;
            }
            let bbs = (ds * vals::SEND_WQE_DS).div_ceil(vals::SEND_WQE_BB) as u16;
            if flush || c.fm_ce_se & vals::CTRL_CQ_UPDATE != 0 {
                done.push(Completion {
                    qpn,
                    opcode: ooi as u8,
                    wqe_counter: ctr,
                    error: flush,
                    solicited: c.fm_ce_se & vals::CTRL_SOLICITED != 0,
                });
            }
            ctr = ctr.wrapping_add(bbs);
            self.objs.sent.2 += 1;
        }
        if let Some(qp) = self.objs.qps.get_mut(&qpn) {
            qp.sq_consumed = ctr;
        }
        let Some(cqn) = cqn else {
            return;
        };
        for c in done {
            self.write_cqe(env, cqn, &c);
        }
    }

    fn write_cqe(&mut self, env: &Env<'_>, cqn: u32, c: &Completion) {
        let Some(cq) = self.objs.cqs.get_mut(&cqn) else {
            self.stats
                .violation(format!("QP {} completes into destroyed CQ {cqn}", c.qpn));
            return;
        };
        let f = |fl: crate::ifc::field::Field| fl.get(&cq.ctx).unwrap_or(0);
        let nent = 1u32 << cq.log_size;
        // Hardware writes owner = (pi / nent) & 1 (upstream's consumer check
        // `!!(n & nent)`); a 128-byte entry carries the 64-byte CQE in its second half.
        let owner = ((cq.pi >> cq.log_size) & 1) as u8;
        let entry = u64::from(cq.pi & (nent - 1)) * u64::from(cq.cqe_bytes);
        let page = 4096u64 << cq.log_page_size;
        // page_offset in page_size / 64 units (see `create_cq`).
        let off = f(crate::ifc::cq::cqc::PAGE_OFFSET.raw()) * (page / 64)
            + entry
            + u64::from(cq.cqe_bytes - 64);
        let Some(addr) = buf_addr(&cq.pas, page, off) else {
            return;
        };
        let mut bytes = [0u8; 64];
        if c.error {
            let mut e = ErrCqe::new_zeroed();
            e.syndrome = vals::SYNDROME_WR_FLUSH_ERR;
            e.s_wqe_opcode_qpn
                .set((u32::from(c.opcode) << 24) | (c.qpn & 0xff_ffff));
            e.wqe_counter.set(c.wqe_counter);
            e.op_own = (vals::CQE_REQ_ERR << 4) | owner;
            bytes.copy_from_slice(e.as_bytes());
        } else {
            let mut e = Cqe64::new_zeroed();
            e.sop_drop_qpn
                .set((u32::from(c.opcode) << 24) | (c.qpn & 0xff_ffff));
            e.wqe_counter.set(c.wqe_counter);
            e.op_own = (vals::CQE_REQ << 4) | owner;
            bytes.copy_from_slice(e.as_bytes());
        }
        // The body first, the byte with the owner bit last (a CQE becomes valid
        // whole).
        let res = env
            .mem
            .write(addr, &bytes[..63])
            .and_then(|()| env.mem.write(addr + 63, &bytes[63..]));
        if let Err(e) = res {
            self.stats.dma_error(format!("CQ {cqn} CQE: {e}"));
            return;
        }
        cq.pi = cq.pi.wrapping_add(1);
        self.objs.sent.0 += 1;
        let fire = cq.armed && (!cq.solicited_only || c.solicited || c.error);
        if fire {
            self.cq_event(env, cqn);
        }
    }
}
