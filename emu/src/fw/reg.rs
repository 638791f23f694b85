//! ACCESS_REG: the registers the core touches at probe.
//!
//! The register data is echoed from the input (so index fields such as the PCAM/MCAM
//! feature group come back as asked) with device-owned fields filled in. Feature
//! masks read back zero: nothing optional is supported.
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
    access_register_in, dtor_reg, paos_reg, port_status, reg_id, REG_DATA_OFFSET,
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
            (reg_id::DTOR | reg_id::PCAM | reg_id::MCAM | reg_id::QCAM, am::WRITE) => {
                return Err(bad_param());
            }
            _ => {}
        }
        Ok(())
    }
}
