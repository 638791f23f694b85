//! Command dispatch: opcode → handler, with the per-function state gate.

use super::rsc::SrqKind;
use super::util::{bad_state, CmdErr, CmdResult};
use super::{syndrome, Env, Firmware};
use crate::ifc::opcodes::Opcode;
use crate::ifc::status::CmdStatus;

/// Which state a command needs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Needs {
    /// Any state.
    Any,
    /// After ENABLE_HCA.
    Enabled,
    /// After INIT_HCA.
    Initialized,
}

/// Source: the PRM start-up sequence (ENABLE_HCA first; ISSI, pages, capabilities,
/// registers and INIT_HCA on an enabled function; resources after INIT_HCA), as
/// upstream `mlx5_function_enable` / `mlx5_function_open` issue them. A command in the
/// wrong state fails with status 0x4 BAD_SYS_STATE. NOP is allowed in any state
/// (permissive: nothing says firmware refuses it).
fn needs(op: Opcode) -> Needs {
    use Opcode::*;
    match op {
        NOP | ENABLE_HCA => Needs::Any,
        QUERY_ISSI | SET_ISSI | QUERY_PAGES | MANAGE_PAGES | ACCESS_REG | QUERY_HCA_CAP
        | SET_HCA_CAP | INIT_HCA | DISABLE_HCA | QUERY_ADAPTER => Needs::Enabled,
        _ => Needs::Initialized,
    }
}

impl Firmware {
    /// Executes one command message; returns an output of exactly `outlen` bytes.
    pub(super) fn execute(&mut self, env: &Env<'_>, input: &[u8], outlen: usize) -> Vec<u8> {
        let mut out = vec![0u8; outlen];
        let raw = u16::from_be_bytes([input[0], input[1]]);
        let res = match Opcode::from_raw(raw) {
            Some(op) => self.dispatch(env, op, input, &mut out),
            None => Err((CmdStatus::BAD_OP_ERR, syndrome::BAD_OPCODE)),
        };
        let status = match res {
            Ok(()) => 0,
            Err((st, synd)) => {
                // A failing command returns only its header: status and syndrome
                // (mlx5_ifc_cmd_out_bits); the rest zero (our choice, the PRM leaves it).
                out.fill(0);
                out[0] = st as u8;
                out[4..8].copy_from_slice(&synd.to_be_bytes());
                st as u8
            }
        };
        self.stats.command(raw, status);
        log::debug!(
            "{}({raw:#x}) op_mod {:#x} inlen {} outlen {outlen}: status {status:#x}",
            crate::ifc::opcodes::opcode_name(raw),
            u16::from_be_bytes([
                input.get(6).copied().unwrap_or(0),
                input.get(7).copied().unwrap_or(0)
            ]),
            input.len()
        );
        if status != 0 {
            log::debug!(
                "{}({raw:#x}) failed: status {} syndrome {:#x}",
                crate::ifc::opcodes::opcode_name(raw),
                CmdStatus::from_raw(status).map_or("?", |s| s.name()),
                u32::from_be_bytes([out[4], out[5], out[6], out[7]])
            );
        }
        out
    }

    fn dispatch(&mut self, env: &Env<'_>, op: Opcode, input: &[u8], out: &mut [u8]) -> CmdResult {
        let ok = match needs(op) {
            Needs::Any => true,
            Needs::Enabled => self.func.enabled,
            Needs::Initialized => self.func.enabled && self.func.initialized,
        };
        if !ok {
            return Err(bad_state());
        }
        use Opcode::*;
        match op {
            NOP => Ok(()),
            // Verbs objects (issue 11, emulator objects slice).
            ALLOC_PD => self.alloc_pd(env, input, out),
            DEALLOC_PD => self.dealloc_pd(env, input),
            ALLOC_XRCD => self.alloc_xrcd(env, input, out),
            DEALLOC_XRCD => self.dealloc_xrcd(env, input),
            ALLOC_TRANSPORT_DOMAIN => self.alloc_td(env, input, out),
            DEALLOC_TRANSPORT_DOMAIN => self.dealloc_td(env, input),
            ALLOC_Q_COUNTER => self.alloc_q_counter(env, input, out),
            DEALLOC_Q_COUNTER => self.dealloc_q_counter(env, input),
            QUERY_Q_COUNTER => self.query_q_counter(input, out),
            QUERY_SPECIAL_CONTEXTS => self.query_special_contexts(out),
            CREATE_CQ => self.create_cq(env, input, out),
            DESTROY_CQ => self.destroy_cq(env, input),
            QUERY_CQ => self.query_cq(input, out),
            MODIFY_CQ => self.modify_cq(env, input),
            CREATE_QP => self.create_qp(env, input, out),
            DESTROY_QP => self.destroy_qp(env, input),
            QUERY_QP => self.query_qp(input, out),
            RST2INIT_QP | INIT2INIT_QP | INIT2RTR_QP | RTR2RTS_QP | RTS2RTS_QP | SQERR2RTS_QP
            | SQD_RTS_QP | _2ERR_QP | _2RST_QP => self.modify_qp(op, input),
            CREATE_SRQ => self.create_srq(env, input, out),
            CREATE_XRC_SRQ => self.create_xrc_srq(env, input, out),
            CREATE_RMP => self.create_rmp(env, input, out),
            DESTROY_SRQ => self.destroy_srq_kind(env, SrqKind::Basic, input),
            DESTROY_XRC_SRQ => self.destroy_srq_kind(env, SrqKind::Xrc, input),
            DESTROY_RMP => self.destroy_srq_kind(env, SrqKind::Rmp, input),
            QUERY_SRQ => self.query_srq_kind(SrqKind::Basic, input, out),
            QUERY_XRC_SRQ => self.query_srq_kind(SrqKind::Xrc, input, out),
            QUERY_RMP => self.query_srq_kind(SrqKind::Rmp, input, out),
            ARM_RQ => self.arm_srq(SrqKind::Basic, input),
            ARM_XRC_SRQ => self.arm_srq(SrqKind::Xrc, input),
            MODIFY_RMP => self.modify_rmp(input),
            CREATE_MKEY => self.create_mkey(env, input, out),
            DESTROY_MKEY => self.destroy_mkey(env, input),
            QUERY_MKEY => self.query_mkey(input, out),
            // End verbs objects.
            ENABLE_HCA => self.enable_hca(input),
            DISABLE_HCA => self.disable_hca(input),
            QUERY_ISSI => self.query_issi(out),
            SET_ISSI => self.set_issi(input),
            QUERY_HCA_CAP => self.query_hca_cap(input, out),
            SET_HCA_CAP => self.set_hca_cap(input),
            INIT_HCA => self.init_hca(input),
            TEARDOWN_HCA => self.teardown_hca(input, out),
            SET_DRIVER_VERSION => self.set_driver_version(input),
            QUERY_ADAPTER => self.query_adapter(out),
            QUERY_PAGES => self.query_pages(input, out),
            MANAGE_PAGES => self.manage_pages(env, input, out),
            ACCESS_REG => self.access_reg(input, out),
            ALLOC_UAR => self.alloc_uar(out),
            DEALLOC_UAR => self.dealloc_uar(input),
            CREATE_EQ => self.create_eq(env, input, out),
            DESTROY_EQ => self.destroy_eq(input),
            QUERY_EQ => self.query_eq(input, out),
            GEN_EQE => self.gen_eqe(env, input),
            // IB port (i11-emu-port): sma.rs, vport.rs.
            MAD_IFC => self.mad_ifc(input, out),
            QUERY_HCA_VPORT_CONTEXT => self.query_hca_vport_context(input, out),
            MODIFY_HCA_VPORT_CONTEXT => self.modify_hca_vport_context(input),
            QUERY_HCA_VPORT_GID => self.query_hca_vport_gid(input, out),
            QUERY_HCA_VPORT_PKEY => self.query_hca_vport_pkey(input, out),
            QUERY_VPORT_STATE => self.query_vport_state(input, out),
            QUERY_NIC_VPORT_CONTEXT => self.query_nic_vport_context(input, out),
            // End IB port.
            // Outside the model: status 0x2 BAD_OP (what firmware answers an opcode it
            // does not know; upstream treats it as "not supported").
            _ => Err(unmodelled()),
        }
    }
}

fn unmodelled() -> CmdErr {
    (CmdStatus::BAD_OP_ERR, syndrome::BAD_OPCODE)
}
