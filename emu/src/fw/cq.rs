//! Completion queue commands: CREATE_CQ, DESTROY_CQ, QUERY_CQ, MODIFY_CQ.
//!
//! Rules and sources: emu/README.md, "Verbs objects".

use super::rsc::{bad_res, check_dbr, pages_for, read_pas, Cq};
use super::util::{bad_param, get, need_out, put, CmdResult};
use super::{Env, Firmware};
use crate::ifc::caps::cmd_hca_cap as g;
use crate::ifc::cq::{cqc, create_cq_in, create_cq_out, destroy_cq_in, modify_cq_in, query_cq_in};
use crate::ifc::field::Field;

/// Byte offset of the CQ context in CREATE_CQ / MODIFY_CQ input and QUERY_CQ output.
const CQC_OFF: usize = create_cq_in::CQ_CONTEXT.raw().byte_off();
/// Byte offset of `pas[]` in CREATE_CQ / MODIFY_CQ input and QUERY_CQ output.
const PAS_OFF: usize = create_cq_in::PAS.raw().byte_off();

/// CQ states (`cqc.st`, PRM; upstream `MLX5_CQ_STATE_*`).
pub mod cq_state {
    /// Armed: the next completion raises an event.
    pub const ARMED: u8 = 0x9;
    /// Fired: an event was raised, not re-armed.
    pub const FIRED: u8 = 0xa;
}

/// MODIFY_CQ op_mods and field selects (upstream `MLX5_CQ_OPMOD_RESIZE`,
/// `MLX5_CQ_MODIFY_*`, `MLX5_MODIFY_CQ_MASK_*`).
mod modify {
    pub const OPMOD_MODIFY: u16 = 0;
    pub const OPMOD_RESIZE: u16 = 1;
    pub const PERIOD: u32 = 1 << 0;
    pub const COUNT: u32 = 1 << 1;
    pub const OVERRUN: u32 = 1 << 2;
    pub const LOG_SIZE: u32 = 1 << 0;
    pub const PAGE_OFFSET: u32 = 1 << 1;
    pub const LOG_PAGE_SIZE: u32 = 1 << 2;
}

fn cx(ctx: &[u8], f: impl Into<Field>) -> u64 {
    f.into().get(ctx).unwrap_or(0)
}

/// CQE bytes for `cqc.cqe_sz`: 0 = 64, 1 = 128, 2 = 128 padded (upstream
/// `cqe_sz_to_mlx_sz`); `None` for other values.
fn cqe_bytes(sz: u8) -> Option<u32> {
    match sz {
        0 => Some(64),
        1 | 2 => Some(128),
        _ => None,
    }
}

impl Firmware {
    /// Validates a CQ buffer described by `ctx` and reads its pages.
    fn cq_buffer(
        &mut self,
        env: &Env<'_>,
        what: &str,
        input: &[u8],
        ctx: &[u8],
    ) -> Result<(u8, u32, u8, Vec<u64>), super::util::CmdErr> {
        let log_size = cx(ctx, cqc::LOG_CQ_SIZE) as u8;
        let Some(cqe) = cqe_bytes(cx(ctx, cqc::CQE_SZ) as u8) else {
            self.stats.violation(format!("{what}: bad cqe_sz"));
            return Err(bad_param());
        };
        // log_cq_size up to cap log_max_cq_sz (`mlx5_ifc.h` `cmd_hca_cap`).
        if u64::from(log_size) > self.caps.cur(g::LOG_MAX_CQ_SZ.raw()) {
            self.stats
                .violation(format!("{what}: log_cq_size {log_size} above the cap"));
            return Err(bad_param());
        }
        let log_page_size = cx(ctx, cqc::LOG_PAGE_SIZE) as u8;
        let page = 4096u64 << log_page_size;
        // page_offset: offset of the first CQE in the first page, in units of
        // page_size / 64 (upstream `mlx5_umem_find_best_cq_quantized_pgoff`, scale 64;
        // 64 bytes on 4 KiB pages).
        let offset = cx(ctx, cqc::PAGE_OFFSET) * (page / 64);
        let bytes = (1u64 << log_size) * u64::from(cqe);
        let n = pages_for(bytes, offset, page).ok_or_else(bad_param)?;
        let pas = read_pas(self, env, what, input, PAS_OFF, n, page.min(bytes))?;
        Ok((log_size, cqe, log_page_size, pas))
    }

    pub(super) fn create_cq(&mut self, env: &Env<'_>, input: &[u8], out: &mut [u8]) -> CmdResult {
        self.check_uid(input)?;
        let ctx = create_cq_in::CQ_CONTEXT
            .raw()
            .bytes(input)
            .ok_or_else(short_in)?
            .to_vec();
        // Umem-backed CQs (DEVX) are not modelled: no user context can exist.
        if get(input, create_cq_in::CQ_UMEM_VALID)? != 0 || cx(&ctx, cqc::DBR_UMEM_VALID) != 0 {
            return Err(bad_param());
        }
        let (log_size, cqe_bytes, log_page_size, pas) =
            self.cq_buffer(env, "CREATE_CQ", input, &ctx)?;
        // The EQ must exist (PRM CREATE_CQ c_eqn), the UAR be allocated.
        let eqn = cx(&ctx, cqc::C_EQN_OR_APU_ELEMENT);
        let Some(eqn) = u8::try_from(eqn)
            .ok()
            .filter(|e| self.eqs.eqs.contains_key(e))
        else {
            self.stats
                .violation(format!("CREATE_CQ on unknown EQ {eqn}"));
            return Err(bad_res());
        };
        let uar = cx(&ctx, cqc::UAR_PAGE) as u32;
        if !self.uar_owned(uar) {
            self.stats
                .violation(format!("CREATE_CQ with unallocated UAR {uar}"));
            return Err(bad_param());
        }
        let dbr = cx(&ctx, cqc::DBR_ADDR);
        check_dbr(self, env, "CREATE_CQ", dbr)?;
        let lim = self.cap_limit(g::LOG_MAX_CQ);
        let cqn = self.objs.cqns.alloc(lim)?;
        put(out, create_cq_out::CQN, u64::from(cqn))?;
        let mut ctx = ctx;
        // Device-owned fields start at zero; a new CQ raises no event until the driver
        // arms it through its UAR doorbell (PRM CQ states).
        let _ = cqc::ST.raw().set(&mut ctx, u64::from(cq_state::FIRED));
        let _ = cqc::PRODUCER_COUNTER.raw().set(&mut ctx, 0);
        let _ = cqc::CONSUMER_COUNTER.raw().set(&mut ctx, 0);
        self.objs.destroyed_cq_uar.remove(&cqn);
        self.objs.cqs.insert(
            cqn,
            Cq {
                ctx,
                pas,
                eqn,
                uar,
                log_size,
                cqe_bytes,
                dbr,
                log_page_size,
                pi: 0,
                armed: false,
                solicited_only: false,
                dp: Default::default(),
            },
        );
        self.created(env, "cq");
        Ok(())
    }

    pub(super) fn destroy_cq(&mut self, env: &Env<'_>, input: &[u8]) -> CmdResult {
        let cqn = get(input, destroy_cq_in::CQN)? as u32;
        if !self.objs.cqs.contains_key(&cqn) {
            return Err(bad_res());
        }
        self.in_use(&format!("CQ {cqn}"), self.objs.cq_users(cqn))?;
        if let Some(cq) = self.objs.cqs.remove(&cqn) {
            self.objs.destroyed_cq_uar.insert(cqn, cq.uar);
        }
        self.objs.cqns.free(cqn);
        self.destroyed(env, "cq");
        Ok(())
    }

    pub(super) fn query_cq(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        let cqn = get(input, query_cq_in::CQN)? as u32;
        let cq = self.objs.cqs.get(&cqn).ok_or_else(bad_res)?;
        need_out(out, PAS_OFF)?;
        let mut ctx = cq.ctx.clone();
        let st = if cq.armed {
            cq_state::ARMED
        } else {
            cq_state::FIRED
        };
        let _ = cqc::ST.raw().set(&mut ctx, u64::from(st));
        let _ = cqc::PRODUCER_COUNTER
            .raw()
            .set(&mut ctx, u64::from(cq.pi & 0xff_ffff));
        out[CQC_OFF..CQC_OFF + ctx.len()].copy_from_slice(&ctx);
        // The page list as far as the output holds it.
        for (i, a) in cq.pas.iter().enumerate() {
            let off = PAS_OFF + 8 * i;
            match out.get_mut(off..off + 8) {
                Some(b) => b.copy_from_slice(&a.to_be_bytes()),
                None => break,
            }
        }
        Ok(())
    }

    pub(super) fn modify_cq(&mut self, env: &Env<'_>, input: &[u8]) -> CmdResult {
        let cqn = get(input, modify_cq_in::CQN)? as u32;
        let op_mod = get(input, modify_cq_in::OP_MOD)? as u16;
        let sel = modify_cq_in::MODIFY_FIELD_SELECT_RESIZE_FIELD_SELECT
            .raw()
            .bytes(input)
            .ok_or_else(short_in)?;
        let sel = u32::from_be_bytes([sel[0], sel[1], sel[2], sel[3]]);
        let ctx = modify_cq_in::CQ_CONTEXT
            .raw()
            .bytes(input)
            .ok_or_else(short_in)?
            .to_vec();
        if !self.objs.cqs.contains_key(&cqn) {
            return Err(bad_res());
        }
        match op_mod {
            modify::OPMOD_MODIFY => {
                let cq = self.objs.cqs.get_mut(&cqn).ok_or_else(bad_res)?;
                for (bit, f) in [
                    (modify::PERIOD, cqc::CQ_PERIOD.raw()),
                    (modify::COUNT, cqc::CQ_MAX_COUNT.raw()),
                    (modify::OVERRUN, cqc::OI.raw()),
                ] {
                    if sel & bit != 0 {
                        let _ = f.set(&mut cq.ctx, f.get(&ctx).unwrap_or(0));
                    }
                }
                Ok(())
            }
            modify::OPMOD_RESIZE => {
                // Cap cq_resize (`mlx5_ifc.h`).
                if self.caps.cur(g::CQ_RESIZE.raw()) == 0 {
                    return Err(bad_param());
                }
                let mut newctx = self.objs.cqs[&cqn].ctx.clone();
                for (bit, f) in [
                    (modify::LOG_SIZE, cqc::LOG_CQ_SIZE.raw()),
                    (modify::PAGE_OFFSET, cqc::PAGE_OFFSET.raw()),
                    (modify::LOG_PAGE_SIZE, cqc::LOG_PAGE_SIZE.raw()),
                ] {
                    if sel & bit != 0 {
                        let _ = f.set(&mut newctx, f.get(&ctx).unwrap_or(0));
                    }
                }
                let (log_size, cqe, lps, pas) =
                    self.cq_buffer(env, "MODIFY_CQ(resize)", input, &newctx)?;
                // The old buffer ends with a RESIZE_CQ CQE (`dp/cqe.rs`).
                self.cqe_post_resize(env, cqn);
                let cq = self.objs.cqs.get_mut(&cqn).ok_or_else(bad_res)?;
                cq.ctx = newctx;
                cq.log_size = log_size;
                cq.cqe_bytes = cqe;
                cq.log_page_size = lps;
                cq.pas = pas;
                Ok(())
            }
            _ => Err(bad_param()),
        }
    }
}

fn short_in() -> super::util::CmdErr {
    (
        crate::ifc::status::CmdStatus::BAD_INP_LEN_ERR,
        super::syndrome::BAD_INPUT_LEN,
    )
}
