//! HCA life cycle commands: ENABLE/DISABLE_HCA, ISSI, caps, INIT/TEARDOWN_HCA,
//! driver version, QUERY_ADAPTER, UARs.

use super::util::{bad_param, bad_state, get, need_in, need_out, put, CmdResult};
use super::{syndrome, Firmware};
use crate::ifc::caps::{query_hca_cap_in, CAP_OFFSET, CAP_UNION_BYTES};
use crate::ifc::cmds::*;
use crate::ifc::opcodes::{cap_type, teardown_profile, HCA_CAP_OPMOD_CUR};
use crate::ifc::status::CmdStatus;

/// ISSI values supported (bit n = ISSI n).
const SUPPORTED_ISSI: u64 = 0b11;
/// PSID reported by QUERY_ADAPTER.
const PSID: &[u8; 16] = b"MT_0000000008\0\0\0";

impl Firmware {
    // function_id / embedded_cpu_function name another function (a VF, the embedded
    // CPU's): `mlx5_ifc_enable_hca_in_bits`; the emulated PF manages none (no
    // vport_group_manager / ECPF), so only 0 is valid. Enabling an enabled function is
    // BAD_SYS_STATE (PRM start-up sequence: ENABLE_HCA once, before anything else).
    pub(super) fn enable_hca(&mut self, input: &[u8]) -> CmdResult {
        if get(input, enable_hca_in::FUNCTION_ID)? != 0
            || get(input, enable_hca_in::EMBEDDED_CPU_FUNCTION)? != 0
        {
            return Err(bad_param());
        }
        if self.func.enabled {
            return Err(bad_state());
        }
        self.func.enabled = true;
        Ok(())
    }

    // PRM teardown sequence: TEARDOWN_HCA, reclaim every page (MANAGE_PAGES take), then
    // DISABLE_HCA; out of order = BAD_SYS_STATE. Upstream reclaims before DISABLE_HCA and
    // WARNs when pages remain (pagealloc.c `mlx5_reclaim_startup_pages`).
    pub(super) fn disable_hca(&mut self, input: &[u8]) -> CmdResult {
        if get(input, disable_hca_in::FUNCTION_ID)? != 0 {
            return Err(bad_param());
        }
        if self.func.initialized {
            return Err(bad_state());
        }
        if self.ledger.held(0) != 0 {
            return Err((CmdStatus::BAD_SYS_STATE_ERR, syndrome::PAGES_HELD));
        }
        self.func.enabled = false;
        self.func.issi = 0;
        self.timeline.disable_hca = Some(std::time::Instant::now());
        // Requests not answered by now never will be.
        self.ledger.requests.drop_all();
        self.ledger.runtime_demand = 0;
        Ok(())
    }

    pub(super) fn query_issi(&mut self, out: &mut [u8]) -> CmdResult {
        put(out, query_issi_out::CURRENT_ISSI, u64::from(self.func.issi))?;
        put(out, query_issi_out::SUPPORTED_ISSI_DW0, SUPPORTED_ISSI)
    }

    // ISSI: only values in supported_issi (`mlx5_ifc_query_issi_out_bits`), else BAD_PARAM.
    pub(super) fn set_issi(&mut self, input: &[u8]) -> CmdResult {
        let issi = get(input, set_issi_in::CURRENT_ISSI)?;
        if issi >= 64 || SUPPORTED_ISSI & (1 << issi) == 0 {
            return Err(bad_param());
        }
        self.func.issi = issi as u16;
        Ok(())
    }

    // other_function needs vport_group_manager (absent): BAD_PARAM. Unknown capability
    // type: BAD_PARAM (op_mod names a cap type the device does not have).
    pub(super) fn query_hca_cap(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        let op_mod = get(input, query_hca_cap_in::OP_MOD)? as u16;
        if get(input, query_hca_cap_in::OTHER_FUNCTION)? != 0 {
            return Err(bad_param());
        }
        let cur = op_mod & HCA_CAP_OPMOD_CUR != 0;
        let cap = self
            .caps
            .query(op_mod >> 1, cur)
            .ok_or((CmdStatus::BAD_PARAM_ERR, syndrome::BAD_CAP_TYPE))?;
        need_out(out, CAP_OFFSET + cap.len())?;
        out[CAP_OFFSET..CAP_OFFSET + cap.len()].copy_from_slice(&cap);
        if op_mod >> 1 == cap_type::GENERAL && self.knobs.cap_tail_fill != 0 {
            // Knob: the reserved tail of hca_cap_union (mlx5_ifc.h) reads non-zero.
            let end = out.len().min(CAP_OFFSET + CAP_UNION_BYTES);
            if let Some(tail) = out.get_mut(CAP_OFFSET + cap.len()..end) {
                tail.fill(self.knobs.cap_tail_fill);
            }
        }
        Ok(())
    }

    // PRM start-up sequence: capabilities are set before INIT_HCA (BAD_SYS_STATE after).
    // GENERAL and ATOMIC are settable here (every other type is absent); which fields
    // are taken and the max check: see caps.rs.
    pub(super) fn set_hca_cap(&mut self, input: &[u8]) -> CmdResult {
        if self.func.initialized {
            return Err(bad_state());
        }
        let op_mod = get(input, crate::ifc::caps::set_hca_cap_in::OP_MOD)? as u16;
        need_in(input, CAP_OFFSET + super::caps::CAP_BYTES)?;
        let cap = &input[CAP_OFFSET..CAP_OFFSET + super::caps::CAP_BYTES];
        if op_mod >> 1 == cap_type::GENERAL {
            // Observation only: the bytes past cmd_hca_cap are the reserved tail of
            // hca_cap_union, which upstream's handle_hca_cap leaves zero.
            let end = input.len().min(CAP_OFFSET + CAP_UNION_BYTES);
            let tail = input
                .get(CAP_OFFSET + super::caps::CAP_BYTES..end)
                .unwrap_or(&[]);
            let nonzero = tail.iter().filter(|b| **b != 0).count() as u64;
            self.observed.set_general_caps += 1;
            self.observed.set_cap_tail_bytes_last = nonzero;
            if nonzero != 0 {
                self.observed.set_cap_nonzero_tail += 1;
            }
        }
        match op_mod >> 1 {
            cap_type::GENERAL => self.caps.set_general(cap).map_err(|_| bad_param()),
            cap_type::ATOMIC => self.caps.set_atomic(cap).map_err(|_| bad_param()),
            // Nothing is settable in the absent capability types.
            _ => Err((CmdStatus::BAD_PARAM_ERR, syndrome::BAD_CAP_TYPE)),
        }
    }

    // PRM start-up sequence: INIT_HCA once, after the boot and init pages QUERY_PAGES
    // asked for were given (BAD_SYS_STATE otherwise).
    pub(super) fn init_hca(&mut self, input: &[u8]) -> CmdResult {
        if self.func.initialized {
            return Err(bad_state());
        }
        // Observation: the driver instance's sw_owner_id (mlx5_ifc.h init_hca_in).
        if let Some(id) = init_hca_in::SW_OWNER_ID.raw().bytes(input) {
            let mut v = [0u8; 16];
            v.copy_from_slice(&id[..16.min(id.len())]);
            if self.observed.sw_owner_ids.len() == 16 {
                self.observed.sw_owner_ids.pop_front();
            }
            self.observed.sw_owner_ids.push_back(v);
        }
        let need = self.ledger.boot_demand as usize + self.ledger.init_demand as usize;
        if self.ledger.held(0) < need {
            return Err((CmdStatus::BAD_SYS_STATE_ERR, syndrome::PAGES_MISSING));
        }
        self.func.initialized = true;
        Ok(())
    }

    // Profiles of `mlx5_ifc_teardown_hca_in_bits`; prepare-fast needs cap fast_teardown;
    // not initialized = BAD_SYS_STATE. EQs or UARs left at graceful/force teardown are a
    // violation only (upstream `mlx5_unload` destroys them first); they are dropped.
    pub(super) fn teardown_hca(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        let profile = get(input, teardown_hca_in::PROFILE)? as u16;
        if !self.func.initialized {
            return Err(bad_state());
        }
        match profile {
            teardown_profile::FORCE_CLOSE if self.knobs.force_state_fail => {
                // Knob: the command succeeds, the HCA stays open.
                self.func.teardowns[usize::from(profile)] += 1;
                put(
                    out,
                    teardown_hca_out::STATE,
                    u64::from(teardown_state::FAIL),
                )
            }
            teardown_profile::GRACEFUL_CLOSE | teardown_profile::FORCE_CLOSE => {
                let leftover_eqs = self.eqs.eqs.len();
                let leftover_uars = self.uars.len();
                if leftover_eqs + leftover_uars != 0 {
                    self.stats.violation(format!(
                        "TEARDOWN_HCA with {leftover_eqs} EQs and {leftover_uars} UARs still allocated"
                    ));
                }
                self.func.initialized = false;
                self.drop_objects("TEARDOWN_HCA");
                self.eqs.eqs.clear();
                self.eqs.waiting.clear();
                self.stop_uars();
                self.func.teardowns[usize::from(profile)] += 1;
                self.timeline.teardown = Some(std::time::Instant::now());
                put(
                    out,
                    teardown_hca_out::STATE,
                    u64::from(teardown_state::SUCCESS),
                )
            }
            teardown_profile::PREPARE_FAST_TEARDOWN => {
                if self
                    .caps
                    .cur(crate::ifc::caps::cmd_hca_cap::FAST_TEARDOWN.raw())
                    == 0
                {
                    return Err(bad_param());
                }
                if self.knobs.prepare_fast_state_fail {
                    // Knob: answered with the fallback state, nothing prepared.
                    self.func.teardowns[2] += 1;
                    return put(
                        out,
                        teardown_hca_out::STATE,
                        u64::from(teardown_state::FAIL),
                    );
                }
                self.func.fast_prepared = true;
                self.func.teardowns[2] += 1;
                self.timeline.prepare_fast = Some(std::time::Instant::now());
                put(
                    out,
                    teardown_hca_out::STATE,
                    u64::from(teardown_state::SUCCESS),
                )
            }
            _ => Err(bad_param()),
        }
    }

    // Upstream sends it after INIT_HCA (`mlx5_function_open`); before: BAD_SYS_STATE.
    pub(super) fn set_driver_version(&mut self, input: &[u8]) -> CmdResult {
        if !self.func.initialized {
            return Err(bad_state());
        }
        let b = set_driver_version_in::DRIVER_VERSION
            .raw()
            .bytes(input)
            .unwrap_or(&input[input.len().min(16)..]);
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        self.func.driver_version = String::from_utf8_lossy(&b[..end]).into_owned();
        Ok(())
    }

    pub(super) fn query_adapter(&mut self, out: &mut [u8]) -> CmdResult {
        let base = query_adapter_out::QUERY_ADAPTER_STRUCT.raw().byte_off();
        need_out(out, base + query_adapter_param_block::BYTES)?;
        let blk = &mut out[base..base + query_adapter_param_block::BYTES];
        put(blk, query_adapter_param_block::IEEE_VENDOR_ID, 0x0002c9)?;
        put(blk, query_adapter_param_block::VSD_VENDOR_ID, 0x15b3)?;
        let psid = query_adapter_param_block::VSD_CONTD_PSID;
        blk[psid.raw().byte_off()..psid.raw().byte_off() + psid.raw().byte_len()]
            .copy_from_slice(PSID);
        Ok(())
    }

    // UAR indices: the lowest free system page of UARs, aligned, past the init segment
    // and MSI-X (fw/uar.rs); none left = NO_RES.
    pub(super) fn alloc_uar(&mut self, out: &mut [u8]) -> CmdResult {
        let idx = self
            .caps
            .uar_layout()
            .alloc_bases()
            .find(|i| !self.uars.contains(i))
            .ok_or((CmdStatus::NO_RES_ERR, syndrome::LIMIT))?;
        put(out, alloc_uar_out::UAR, u64::from(idx))?;
        self.uars.insert(idx);
        self.stopped_uars.remove(&idx);
        Ok(())
    }

    pub(super) fn dealloc_uar(&mut self, input: &[u8]) -> CmdResult {
        let idx = get(input, dealloc_uar_in::UAR)? as u32;
        if !self.uars.contains(&idx) {
            return Err((CmdStatus::BAD_RES_ERR, syndrome::BAD_RESOURCE));
        }
        // Unknown UAR: BAD_RES. One an EQ still rings: a violation (upstream destroys its
        // EQs first); refused only with strict rule dealloc_uar_in_use.
        let l = self.caps.uar_layout();
        if self.eqs.eqs.values().any(|e| l.in_alloc(idx, e.uar_page)) {
            self.stats
                .violation(format!("DEALLOC_UAR of UAR {idx} while an EQ uses it"));
            if self.strict.dealloc_uar_in_use {
                return Err((CmdStatus::BAD_RES_STATE_ERR, syndrome::RESOURCE_BUSY));
            }
        }
        self.uars.remove(&idx);
        // Doorbells on its pages are now `uar_doorbells_after_stop` or violations.
        self.objs
            .destroyed_qp_uar
            .retain(|_, page| !l.in_alloc(idx, *page));
        self.objs
            .destroyed_cq_uar
            .retain(|_, page| !l.in_alloc(idx, *page));
        Ok(())
    }
}
