//! Memory key commands: CREATE_MKEY, DESTROY_MKEY, QUERY_MKEY.
//!
//! Rules and sources: emu/README.md, "Verbs objects".

use super::dp::xlate::MkeyState;
use super::rsc::{bad_res, Mkey};
use super::util::{bad_param, get, need_in, need_out, put, CmdResult};
use super::{Env, Firmware};
use crate::ifc::caps::cmd_hca_cap as g;
use crate::ifc::field::Field;
use crate::ifc::mkey::{create_mkey_in as c, destroy_mkey_in, mkc, query_mkey_in, query_mkey_out};

/// Access modes (`mkc.access_mode_4_2 << 2 | access_mode_1_0`, upstream
/// `MLX5_MKC_ACCESS_MODE_*`): the ones this model accepts.
pub mod access_mode {
    /// Physical addresses.
    pub const PA: u8 = 0;
    /// Memory translation table.
    pub const MTT: u8 = 1;
    /// Key-length-memory list.
    pub const KLM: u8 = 2;
    /// Fixed-size KLM.
    pub const KSM: u8 = 3;
}

/// Byte offset of the mkey context in CREATE_MKEY input and QUERY_MKEY output.
const MKC_OFF: usize = c::MEMORY_KEY_MKEY_ENTRY.raw().byte_off();
/// Byte offset of the translation entries in CREATE_MKEY input.
const XLT_OFF: usize = c::KLM_PAS_MTT.raw().byte_off();

fn cx(ctx: &[u8], f: impl Into<Field>) -> u64 {
    f.into().get(ctx).unwrap_or(0)
}

impl Firmware {
    pub(super) fn create_mkey(&mut self, env: &Env<'_>, input: &[u8], out: &mut [u8]) -> CmdResult {
        self.check_uid(input)?;
        need_in(input, XLT_OFF)?;
        let ctx = input[MKC_OFF..MKC_OFF + mkc::BYTES].to_vec();
        if get(input, c::MKEY_UMEM_VALID)? != 0 {
            return Err(bad_param());
        }
        let mode = ((cx(&ctx, mkc::ACCESS_MODE_4_2) << 2) | cx(&ctx, mkc::ACCESS_MODE_1_0)) as u8;
        if mode > access_mode::KSM {
            self.stats
                .violation(format!("CREATE_MKEY: access mode {mode} not modelled"));
            return Err(bad_param());
        }
        let pd = cx(&ctx, mkc::PD) as u32;
        if !self.objs.pds.contains(pd) {
            self.stats
                .violation(format!("CREATE_MKEY: unknown PD {pd}"));
            return Err(bad_res());
        }
        // Translation entries: `translations_octword_actual_size` 16-byte octwords
        // follow in the input, at most `translations_octword_size` (PRM CREATE_MKEY).
        let actual = get(input, c::TRANSLATIONS_OCTWORD_ACTUAL_SIZE)?;
        let size = cx(&ctx, mkc::TRANSLATIONS_OCTWORD_SIZE);
        if actual > size {
            self.stats.violation(format!(
                "CREATE_MKEY: {actual} translation octwords for a table of {size}"
            ));
            return Err(bad_param());
        }
        let bytes = usize::try_from(actual.saturating_mul(16)).map_err(|_| bad_param())?;
        need_in(input, XLT_OFF.saturating_add(bytes))?;
        // A KLM list is bounded by cap log_max_klm_list_size (`mlx5_ifc.h`).
        if mode == access_mode::KLM && size > self.cap_limit(g::LOG_MAX_KLM_LIST_SIZE) {
            return Err(bad_param());
        }
        let lim = self.cap_limit(g::LOG_MAX_MKEY);
        let idx = self.objs.mkey_idx.alloc(lim)?;
        put(
            out,
            crate::ifc::mkey::create_mkey_out::MKEY_INDEX,
            u64::from(idx),
        )?;
        let translations = input[XLT_OFF..XLT_OFF + bytes].to_vec();
        // The data path's live table starts as the inline entries (`dp/xlate.rs`);
        // `pg_access` says MTT entries carry read / write enable bits (ifc
        // `create_mkey_in`, upstream `mlx5_ib_populate_pas` with `MLX5_IB_MTT_PRESENT`).
        let dp = MkeyState {
            xlt: translations.clone(),
            pg_access: get(input, c::PG_ACCESS)? != 0,
            umrs: 0,
        };
        self.objs.mkeys.insert(
            idx,
            Mkey {
                ctx,
                pd,
                translations,
                dp,
            },
        );
        self.created(env, "mkey");
        Ok(())
    }

    pub(super) fn destroy_mkey(&mut self, env: &Env<'_>, input: &[u8]) -> CmdResult {
        let idx = get(input, destroy_mkey_in::MKEY_INDEX)? as u32;
        if self.objs.mkeys.remove(&idx).is_none() {
            return Err(bad_res());
        }
        self.objs.mkey_idx.free(idx);
        self.destroyed(env, "mkey");
        Ok(())
    }

    pub(super) fn query_mkey(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        let idx = get(input, query_mkey_in::MKEY_INDEX)? as u32;
        let m = self.objs.mkeys.get(&idx).ok_or_else(bad_res)?;
        let at = query_mkey_out::MEMORY_KEY_MKEY_ENTRY.raw().byte_off();
        need_out(out, at + mkc::BYTES)?;
        out[at..at + mkc::BYTES].copy_from_slice(&m.ctx);
        // The first translation octwords as the data path has them now (UMR updates
        // included), as far as the output has room.
        let t = query_mkey_out::BSF0_KLM0_PAS_MTT0_1.raw().byte_off();
        let n = m.dp.xlt.len().min(out.len().saturating_sub(t)).min(32);
        if let (Some(dst), Some(src)) = (out.get_mut(t..t + n), m.dp.xlt.get(..n)) {
            dst.copy_from_slice(src);
        }
        Ok(())
    }
}
