//! ACCESS_REG: the registers the core touches at probe.
//!
//! The register data is echoed from the input (so index fields such as the PCAM/MCAM
//! feature group come back as asked) with device-owned fields filled in. Feature
//! masks read back zero (nothing optional is supported) except MCAM's `mfrl` and its
//! `reset_state`: the sync reset of `sync_reset.rs`, whose MFRL register is here.
//!
//! Sources: op_mod 0 write / 1 read (mlx5_ifc.h `MLX5_ACCESS_REGISTER_IN_OP_MOD_*`,
//! anything else BAD_PARAM); registers outside the model fail
//! with BAD_PARAM (what firmware answers for an unknown register id); DTOR, PCAM, MCAM
//! and QCAM are read-only (PRM register descriptions), a write is BAD_PARAM. Values
//! (DTOR timeouts) are our model. The IB port registers (PTYS, PMTU, PVLC, PCAP,
//! NODE_DESC) are served from the port model in `port_regs.rs`.

use super::util::{bad_param, get, need_out, CmdResult};
use super::{syndrome, Firmware};
use crate::ifc::init_seg::encode_timeout;
use crate::ifc::opcodes::access_reg_op_mod as am;
use crate::ifc::regs::{
    access_register_in, dtor_reg, mfrl, mfrl_reg, paos_reg, port_status, reg_id, REG_DATA_OFFSET,
};
use crate::ifc::status::CmdStatus;

impl Firmware {
    pub(super) fn access_reg(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        let op_mod = get(input, access_register_in::OP_MOD)? as u16;
        let id = get(input, access_register_in::REGISTER_ID)? as u16;
        if op_mod != am::READ && op_mod != am::WRITE {
            return Err(bad_param());
        }
        let data_in = input.get(REG_DATA_OFFSET..).unwrap_or(&[]);
        let known = Self::is_port_reg(id)
            || matches!(
                id,
                reg_id::HOST_ENDIANNESS
                    | reg_id::DTOR
                    | reg_id::PCAM
                    | reg_id::MCAM
                    | reg_id::QCAM
                    | reg_id::PAOS
                    | reg_id::MFRL
            );
        if !known {
            return Err((CmdStatus::BAD_PARAM_ERR, syndrome::BAD_REGISTER));
        }
        let data_out = out.get_mut(REG_DATA_OFFSET..).unwrap_or(&mut []);
        let n = data_out.len().min(data_in.len());
        data_out[..n].copy_from_slice(&data_in[..n]);
        if Self::is_port_reg(id) {
            // IB port registers (port_regs.rs).
            return self.port_reg(id, op_mod, data_in, data_out);
        }
        match (id, op_mod) {
            (reg_id::HOST_ENDIANNESS, am::WRITE) => {
                let n = data_in.len().min(16);
                self.func.host_endianness = [0; 16];
                self.func.host_endianness[..n].copy_from_slice(&data_in[..n]);
            }
            (reg_id::HOST_ENDIANNESS, am::READ) => {
                let n = data_out.len().min(16);
                data_out[..n].copy_from_slice(&self.func.host_endianness[..n]);
            }
            (reg_id::DTOR, am::READ) => {
                need_out(out, REG_DATA_OFFSET + dtor_reg::BYTES)?;
                let d = &mut out[REG_DATA_OFFSET..REG_DATA_OFFSET + dtor_reg::BYTES];
                d.fill(0);
                let secs = |s| u64::from(encode_timeout(1, s));
                let fields = [
                    (dtor_reg::PCIE_TOGGLE_TO, secs(2)),
                    (dtor_reg::HEALTH_POLL_TO, secs(2)),
                    (dtor_reg::FULL_CRDUMP_TO, secs(60)),
                    (dtor_reg::FW_RESET_TO, secs(60)),
                    (dtor_reg::FLUSH_ON_ERR_TO, secs(2)),
                    (dtor_reg::PCI_SYNC_UPDATE_TO, secs(5)),
                    (dtor_reg::TEAR_DOWN_TO, secs(3)),
                    (dtor_reg::FSM_REACTIVATE_TO, secs(5)),
                    (dtor_reg::RECLAIM_PAGES_TO, secs(5)),
                    (dtor_reg::RECLAIM_VFS_PAGES_TO, secs(120)),
                    (dtor_reg::RESET_UNLOAD_TO, secs(300)),
                ];
                for (f, v) in fields {
                    f.raw().set(d, v).ok_or_else(bad_param)?;
                }
            }
            (reg_id::PAOS, am::WRITE) => {
                let admin = paos_reg::ADMIN_STATUS.raw().get(data_in).unwrap_or(0) as u8;
                if paos_reg::ASE.raw().get(data_in) == Some(1) && admin != 0 {
                    self.port_admin_up = admin == port_status::UP;
                }
            }
            (reg_id::PAOS, am::READ) => {
                let up = self.port_admin_up && self.port_link_up;
                let admin = if self.port_admin_up {
                    port_status::UP
                } else {
                    port_status::DOWN
                };
                let oper = if up {
                    port_status::UP
                } else {
                    port_status::DOWN
                };
                paos_reg::ADMIN_STATUS
                    .raw()
                    .set(data_out, u64::from(admin))
                    .ok_or_else(bad_param)?;
                paos_reg::OPER_STATUS
                    .raw()
                    .set(data_out, u64::from(oper))
                    .ok_or_else(bad_param)?;
            }
            (reg_id::MCAM, am::READ) => {
                // Access-register group 0 and feature group 0 (upstream
                // `mlx5_get_mcam_access_reg_group` / `MLX5_CAP_MCAM_FEATURE`): MFRL and
                // its `reset_state` are supported; everything else reads zero.
                use crate::ifc::regs::{mcam_access_reg, mcam_features, mcam_off, mcam_reg as m};
                let reg_group = m::ACCESS_REG_GROUP.raw().get(data_in).unwrap_or(0);
                let feat_group = m::FEATURE_GROUP.raw().get(data_in).unwrap_or(0);
                if reg_group == 0 {
                    let d = data_out
                        .get_mut(mcam_off::ACCESS_REG_CAP_MASK..)
                        .unwrap_or(&mut []);
                    mcam_access_reg::MFRL
                        .raw()
                        .set(d, 1)
                        .ok_or_else(bad_param)?;
                }
                if feat_group == 0 {
                    let d = data_out
                        .get_mut(mcam_off::FEATURE_CAP_MASK..)
                        .unwrap_or(&mut []);
                    mcam_features::RESET_STATE
                        .raw()
                        .set(d, 1)
                        .ok_or_else(bad_param)?;
                }
            }
            (reg_id::MFRL, am::READ) => {
                need_out(out, REG_DATA_OFFSET + mfrl_reg::BYTES)?;
                self.sync.stats.queries += 1;
                let d = &mut out[REG_DATA_OFFSET..REG_DATA_OFFSET + mfrl_reg::BYTES];
                d.fill(0);
                for (f, v) in self.sync.mfrl_fields() {
                    f.set(d, v).ok_or_else(bad_param)?;
                }
            }
            (reg_id::MFRL, am::WRITE) => return self.mfrl_write(data_in),
            (reg_id::DTOR | reg_id::PCAM | reg_id::MCAM | reg_id::QCAM, am::WRITE) => {
                return Err(bad_param());
            }
            _ => {}
        }
        Ok(())
    }
}

impl Firmware {
    /// MFRL write (upstream `mlx5_reg_mfrl_set`, `mlx5_fw_reset_set_reset_sync`): a
    /// sync-reset start (level 3 with `pci_sync_for_fw_update_start`) or the
    /// function's answer to RESET_REQUEST (`pci_sync_for_fw_update_resp` 1 / 2).
    /// Refusals: a level other than 3, or a start with an answer, BAD_PARAM; a start
    /// while one runs or with no function taking part, an answer outside a
    /// negotiation, BAD_SYS_STATE (upstream then reads `reset_state` for the reason).
    /// A write with neither is accepted and does nothing (the level is armed for a
    /// reset nobody negotiates: not modelled, PRM silent, most permissive).
    fn mfrl_write(&mut self, data_in: &[u8]) -> CmdResult {
        use super::sync_reset::Initiator;
        let level = mfrl_reg::RESET_LEVEL.raw().get(data_in).unwrap_or(0) as u8;
        let start = mfrl_reg::PCI_SYNC_FOR_FW_UPDATE_START.raw().get(data_in) == Some(1);
        let resp = mfrl_reg::PCI_SYNC_FOR_FW_UPDATE_RESP
            .raw()
            .get(data_in)
            .unwrap_or(0) as u8;
        if (start || resp != 0) && level != mfrl::LEVEL3 {
            return Err(bad_param());
        }
        if start && resp != 0 || resp > mfrl::RESP_NACK {
            return Err(bad_param());
        }
        let r = if start {
            self.sync_reset_start(Initiator::Function)
        } else if resp != 0 {
            self.sync_reset_answer(resp)
        } else {
            Ok(())
        };
        r.map_err(|_| (CmdStatus::BAD_SYS_STATE_ERR, syndrome::SYNC_RESET_STATE))
    }
}
