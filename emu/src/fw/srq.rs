//! Shared receive queue commands: CREATE/DESTROY/QUERY_SRQ and ARM_RQ, the XRC SRQ
//! commands, and CREATE/DESTROY/QUERY/MODIFY_RMP (upstream `mlx5_ib` makes its basic
//! SRQs as RMPs at ISSI 1, `srq_cmd.c`).
//!
//! Rules and sources: emu/README.md, "Verbs objects".

use super::rsc::{bad_res, check_dbr, pages_for, read_pas, Srq, SrqKind};
use super::util::{bad_param, get, need_out, put, CmdErr, CmdResult};
use super::{syndrome, Env, Firmware};
use crate::ifc::caps::cmd_hca_cap as g;
use crate::ifc::field::Field;
use crate::ifc::srq::{self as s, rmpc, srqc, wq, xrc_srqc};
use crate::ifc::status::CmdStatus;

/// Byte offset of `pas[]` in CREATE_SRQ / CREATE_XRC_SRQ / CREATE_RMP input.
const PAS_OFF: usize = s::create_srq_in::PAS.raw().byte_off();
/// Byte offset of the SRQ context in CREATE_SRQ / CREATE_XRC_SRQ input and output.
const SRQC_OFF: usize = s::create_srq_in::SRQ_CONTEXT_ENTRY.raw().byte_off();
/// Byte offset of the work queue in the RMP context.
const WQ_OFF: usize = rmpc::WQ.raw().byte_off();

/// ARM_RQ / ARM_XRC_SRQ op_mod for an SRQ (`mlx5_ifc.h` `MLX5_ARM_RQ_IN_OP_MOD_SRQ`,
/// `MLX5_ARM_XRC_SRQ_IN_OP_MOD_XRC_SRQ`).
const ARM_OPMOD_SRQ: u64 = 1;
/// `rmp_bitmask.lwm` (bit 0 of the 64-bit bitmask).
const RMP_BITMASK_LWM: u64 = 1;

fn cx(ctx: &[u8], f: impl Into<Field>) -> u64 {
    f.into().get(ctx).unwrap_or(0)
}

fn short_in() -> CmdErr {
    (CmdStatus::BAD_INP_LEN_ERR, syndrome::BAD_INPUT_LEN)
}

/// What a create command said about its queue.
struct Shape {
    bytes: u64,
    offset: u64,
    page: u64,
    dbr: u64,
    pd: u32,
    cqn: u32,
    xrcd: u32,
}

impl Firmware {
    /// Checks references and limits, reads the pages and numbers the new queue.
    fn create_srq_common(
        &mut self,
        env: &Env<'_>,
        what: &str,
        kind: SrqKind,
        input: &[u8],
        ctx: Vec<u8>,
        sh: Shape,
    ) -> Result<u32, CmdErr> {
        if !self.objs.pds.contains(sh.pd) {
            self.stats
                .violation(format!("{what}: unknown PD {}", sh.pd));
            return Err(bad_res());
        }
        // An XRC SRQ names its XRC domain and CQ (PRM CREATE_XRC_SRQ); a basic SRQ's
        // xrcd / cqn, when set, must exist too.
        let need = kind == SrqKind::Xrc;
        let xrcd = (need || sh.xrcd != 0).then_some(sh.xrcd);
        if let Some(x) = xrcd {
            if !self.objs.xrcds.contains(x) {
                self.stats.violation(format!("{what}: unknown XRCD {x}"));
                return Err(bad_res());
            }
        }
        let cqn = (need || sh.cqn != 0).then_some(sh.cqn);
        if let Some(c) = cqn {
            if !self.objs.cqs.contains_key(&c) {
                self.stats.violation(format!("{what}: unknown CQ {c}"));
                return Err(bad_res());
            }
        }
        let n = pages_for(sh.bytes, sh.offset, sh.page).ok_or_else(bad_param)?;
        let pas = read_pas(self, env, what, input, PAS_OFF, n, sh.page.min(sh.bytes))?;
        check_dbr(self, env, what, sh.dbr)?;
        // Limits: log_max_srq for SRQs and XRC SRQs, log_max_rmp for RMPs (`mlx5_ifc.h`
        // cmd_hca_cap); one number space for all three.
        let (cap, same) = match kind {
            SrqKind::Rmp => (g::LOG_MAX_RMP.raw(), [SrqKind::Rmp, SrqKind::Rmp]),
            _ => (g::LOG_MAX_SRQ.raw(), [SrqKind::Basic, SrqKind::Xrc]),
        };
        let used = self
            .objs
            .srqs
            .values()
            .filter(|q| same.contains(&q.kind))
            .count() as u64;
        if used >= self.cap_limit(cap) {
            return Err((CmdStatus::LIM_ERR, syndrome::LIMIT));
        }
        let srqn = self.objs.srqns.alloc(u64::MAX)?;
        self.objs.srqs.insert(
            srqn,
            Srq {
                kind,
                ctx,
                pas,
                pd: sh.pd,
                cqn,
                xrcd,
                dp: Default::default(),
            },
        );
        self.created(env, kind.name());
        Ok(srqn)
    }

    fn srq_max_size(&mut self, what: &str, log: u64) -> CmdResult {
        if log > self.caps.cur(g::LOG_MAX_SRQ_SZ.raw()) {
            self.stats
                .violation(format!("{what}: size 2^{log} above log_max_srq_sz"));
            return Err(bad_param());
        }
        Ok(())
    }

    pub(super) fn create_srq(&mut self, env: &Env<'_>, input: &[u8], out: &mut [u8]) -> CmdResult {
        self.check_uid(input)?;
        let ctx = s::create_srq_in::SRQ_CONTEXT_ENTRY
            .raw()
            .bytes(input)
            .ok_or_else(short_in)?
            .to_vec();
        let log = cx(&ctx, srqc::LOG_SRQ_SIZE);
        self.srq_max_size("CREATE_SRQ", log)?;
        // WQE stride 16 << log_rq_stride bytes; page_offset in page_size / 64 units
        // (upstream's quantized page offset, scale 64).
        let sh = Shape {
            bytes: (1u64 << log) << (cx(&ctx, srqc::LOG_RQ_STRIDE) + 4),
            offset: cx(&ctx, srqc::PAGE_OFFSET)
                * ((4096 << cx(&ctx, srqc::LOG_PAGE_SIZE).min(30)) / 64),
            page: 4096 << cx(&ctx, srqc::LOG_PAGE_SIZE).min(30),
            dbr: cx(&ctx, srqc::DBR_ADDR),
            pd: cx(&ctx, srqc::PD) as u32,
            cqn: cx(&ctx, srqc::CQN) as u32,
            xrcd: cx(&ctx, srqc::XRCD) as u32,
        };
        let n = self.create_srq_common(env, "CREATE_SRQ", SrqKind::Basic, input, ctx, sh)?;
        put(out, s::create_srq_out::SRQN, u64::from(n))
    }

    pub(super) fn create_xrc_srq(
        &mut self,
        env: &Env<'_>,
        input: &[u8],
        out: &mut [u8],
    ) -> CmdResult {
        self.check_uid(input)?;
        let ctx = s::create_xrc_srq_in::XRC_SRQ_CONTEXT_ENTRY
            .raw()
            .bytes(input)
            .ok_or_else(short_in)?
            .to_vec();
        if get(input, s::create_xrc_srq_in::XRC_SRQ_UMEM_VALID)? != 0
            || cx(&ctx, xrc_srqc::DBR_UMEM_VALID) != 0
        {
            return Err(bad_param());
        }
        let log = cx(&ctx, xrc_srqc::LOG_XRC_SRQ_SIZE);
        self.srq_max_size("CREATE_XRC_SRQ", log)?;
        // The doorbell record address is split: bits 63:32 and 31:2 (`xrc_srqc`).
        let dbr = (cx(&ctx, xrc_srqc::DB_RECORD_ADDR_H) << 32)
            | (cx(&ctx, xrc_srqc::DB_RECORD_ADDR_L) << 2);
        let sh = Shape {
            bytes: (1u64 << log) << (cx(&ctx, xrc_srqc::LOG_RQ_STRIDE) + 4),
            offset: cx(&ctx, xrc_srqc::PAGE_OFFSET)
                * ((4096 << cx(&ctx, xrc_srqc::LOG_PAGE_SIZE).min(30)) / 64),
            page: 4096 << cx(&ctx, xrc_srqc::LOG_PAGE_SIZE).min(30),
            dbr,
            pd: cx(&ctx, xrc_srqc::PD) as u32,
            cqn: cx(&ctx, xrc_srqc::CQN) as u32,
            xrcd: cx(&ctx, xrc_srqc::XRCD) as u32,
        };
        let n = self.create_srq_common(env, "CREATE_XRC_SRQ", SrqKind::Xrc, input, ctx, sh)?;
        put(out, s::create_xrc_srq_out::XRC_SRQN, u64::from(n))
    }

    pub(super) fn create_rmp(&mut self, env: &Env<'_>, input: &[u8], out: &mut [u8]) -> CmdResult {
        self.check_uid(input)?;
        let ctx = s::create_rmp_in::CTX
            .raw()
            .bytes(input)
            .ok_or_else(short_in)?
            .to_vec();
        let w = &ctx[WQ_OFF..WQ_OFF + wq::BYTES];
        if cx(w, wq::DBR_UMEM_VALID) != 0 || cx(w, wq::WQ_UMEM_VALID) != 0 {
            return Err(bad_param());
        }
        let log = cx(w, wq::LOG_WQ_SZ);
        self.srq_max_size("CREATE_RMP", log)?;
        // WQE stride 1 << log_wq_stride bytes, page 4 KiB << log_wq_pg_sz, page_offset
        // in page_size / 64 units (upstream's quantized page offset, scale 64).
        let sh = Shape {
            bytes: (1u64 << log) << cx(w, wq::LOG_WQ_STRIDE),
            offset: cx(w, wq::PAGE_OFFSET) * ((4096 << cx(w, wq::LOG_WQ_PG_SZ).min(30)) / 64),
            page: 4096 << cx(w, wq::LOG_WQ_PG_SZ).min(30),
            dbr: cx(w, wq::DBR_ADDR),
            pd: cx(w, wq::PD) as u32,
            cqn: 0,
            xrcd: 0,
        };
        let n = self.create_srq_common(env, "CREATE_RMP", SrqKind::Rmp, input, ctx, sh)?;
        put(out, s::create_rmp_out::RMPN, u64::from(n))
    }

    /// DESTROY_SRQ / DESTROY_XRC_SRQ / DESTROY_RMP: the number must be one of that
    /// kind.
    pub(super) fn destroy_srq_kind(
        &mut self,
        env: &Env<'_>,
        kind: SrqKind,
        input: &[u8],
    ) -> CmdResult {
        let f = match kind {
            SrqKind::Basic => s::destroy_srq_in::SRQN.raw(),
            SrqKind::Xrc => s::destroy_xrc_srq_in::XRC_SRQN.raw(),
            SrqKind::Rmp => s::destroy_rmp_in::RMPN.raw(),
        };
        let n = get(input, f)? as u32;
        if self.objs.srqs.get(&n).is_none_or(|q| q.kind != kind) {
            return Err(bad_res());
        }
        self.in_use(&format!("{} {n}", kind.name()), self.objs.srq_users(n))?;
        self.objs.srqs.remove(&n);
        self.objs.srqns.free(n);
        self.destroyed(env, kind.name());
        Ok(())
    }

    /// QUERY_SRQ / QUERY_XRC_SRQ / QUERY_RMP.
    pub(super) fn query_srq_kind(
        &mut self,
        kind: SrqKind,
        input: &[u8],
        out: &mut [u8],
    ) -> CmdResult {
        let (f, at) = match kind {
            SrqKind::Basic => (s::query_srq_in::SRQN.raw(), SRQC_OFF),
            SrqKind::Xrc => (s::query_xrc_srq_in::XRC_SRQN.raw(), SRQC_OFF),
            SrqKind::Rmp => (
                s::query_rmp_in::RMPN.raw(),
                s::query_rmp_out::RMP_CONTEXT.raw().byte_off(),
            ),
        };
        let n = get(input, f)? as u32;
        let q = self
            .objs
            .srqs
            .get(&n)
            .filter(|q| q.kind == kind)
            .ok_or_else(bad_res)?;
        need_out(out, at + q.ctx.len())?;
        out[at..at + q.ctx.len()].copy_from_slice(&q.ctx);
        if kind != SrqKind::Rmp {
            for (i, a) in q.pas.iter().enumerate() {
                let off = PAS_OFF + 8 * i;
                match out.get_mut(off..off + 8) {
                    Some(b) => b.copy_from_slice(&a.to_be_bytes()),
                    None => break,
                }
            }
        }
        Ok(())
    }

    /// ARM_RQ (op_mod SRQ) / ARM_XRC_SRQ: sets the limit watermark.
    pub(super) fn arm_srq(&mut self, kind: SrqKind, input: &[u8]) -> CmdResult {
        let (nf, lf, mf) = match kind {
            SrqKind::Xrc => (
                s::arm_xrc_srq_in::XRC_SRQN.raw(),
                s::arm_xrc_srq_in::LWM.raw(),
                s::arm_xrc_srq_in::OP_MOD.raw(),
            ),
            _ => (
                s::arm_rq_in::SRQ_NUMBER.raw(),
                s::arm_rq_in::LWM.raw(),
                s::arm_rq_in::OP_MOD.raw(),
            ),
        };
        if get(input, mf)? != ARM_OPMOD_SRQ {
            return Err(bad_param());
        }
        let n = get(input, nf)? as u32;
        let lwm = get(input, lf)?;
        let q = self
            .objs
            .srqs
            .get_mut(&n)
            .filter(|q| q.kind == kind)
            .ok_or_else(bad_res)?;
        let f = if kind == SrqKind::Xrc {
            xrc_srqc::LWM.raw()
        } else {
            srqc::LWM.raw()
        };
        let _ = f.set(&mut q.ctx, lwm);
        Ok(())
    }

    /// MODIFY_RMP: the limit watermark (bitmask bit lwm) and the state.
    pub(super) fn modify_rmp(&mut self, input: &[u8]) -> CmdResult {
        let n = get(input, s::modify_rmp_in::RMPN)? as u32;
        let bm = s::modify_rmp_in::BITMASK
            .raw()
            .bytes(input)
            .ok_or_else(short_in)?;
        let bm = u64::from_be_bytes(bm.try_into().map_err(|_| short_in())?);
        let ctx = s::modify_rmp_in::CTX
            .raw()
            .bytes(input)
            .ok_or_else(short_in)?
            .to_vec();
        let q = self
            .objs
            .srqs
            .get_mut(&n)
            .filter(|q| q.kind == SrqKind::Rmp)
            .ok_or_else(bad_res)?;
        let _ = rmpc::STATE.raw().set(&mut q.ctx, cx(&ctx, rmpc::STATE));
        if bm & RMP_BITMASK_LWM != 0 {
            let lwm = cx(&ctx[WQ_OFF..], wq::LWM);
            let _ = wq::LWM.raw().set(&mut q.ctx[WQ_OFF..], lwm);
        }
        Ok(())
    }
}
