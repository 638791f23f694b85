//! The QP state machine: which command moves a QP from which state to which, and the
//! optional parameters (`opt_param_mask`) each transition accepts per service type.
//!
//! Sources: the PRM's QP state-transition table (`ifc/qp_state.rs`, shared with the
//! driver) and its per-transition parameter tables; upstream `mlx5_ib` (`qp.c`
//! `optab`, `opt_mask`) follows them. The command
//! interface has no RTS→SQD command (`mlx5_ifc.h` declares none; upstream's `optab`
//! has no RTS→SQD entry): a QP enters SQD or SQER only by device action (the control
//! socket's `qp_state`).

use crate::ifc::opcodes::Opcode;
// The states, service types and `opt_param_mask` bits are the PRM's, declared once in
// `ifc/qp_state.rs` for the driver and this model.
pub use crate::ifc::qp_state::{optpar as opt, state, transition, TRANSITIONS};

/// Service types (`qpc.st`): the PRM's ([`crate::ifc::qp_state::st`]) and the ones
/// this model creates.
pub mod st {
    pub use crate::ifc::qp_state::st::*;
    /// The service types this model creates.
    pub const MODELLED: [u8; 7] = [RC, UC, UD, XRC, QP0, QP1, REG_UMR];
}

/// Whether `op` moves a QP out of `from`; its target state if so.
pub fn next_state(op: Opcode, from: u8) -> Option<u8> {
    let (froms, to) = transition(op)?;
    froms.contains(&from).then_some(to)
}

/// The optional parameters the PRM allows for `op` on service type `st` (upstream
/// `opt_mask`, plus COUNTER_SET_ID on RTS→RTS, which upstream's counter binding sends).
/// QP0 and QP1 take the MLX column (upstream `MLX5_QP_ST_MLX`); XRC SQD→RTS takes
/// RC's (the PRM treats XRC as RC there; upstream's table has no XRC entry).
pub fn allowed_opt(op: Opcode, st: u8) -> u32 {
    use opt::*;
    let rc_like = st == st::RC || st == st::XRC;
    let mlx = st == st::QP0 || st == st::QP1;
    match op {
        Opcode::INIT2INIT_QP => match st {
            _ if rc_like => RRE | RAE | RWE | PKEY_INDEX | PRI_PORT | LAG_TX_AFF,
            st::UC => RWE | PKEY_INDEX | PRI_PORT | LAG_TX_AFF,
            st::UD => PKEY_INDEX | Q_KEY | PRI_PORT,
            _ => 0,
        },
        Opcode::INIT2RTR_QP => match st {
            _ if rc_like => ALT_ADDR_PATH | RRE | RAE | RWE | PKEY_INDEX | LAG_TX_AFF,
            st::UC => ALT_ADDR_PATH | RWE | PKEY_INDEX | LAG_TX_AFF,
            st::UD => PKEY_INDEX | Q_KEY,
            _ if mlx => PKEY_INDEX | Q_KEY,
            _ => 0,
        },
        Opcode::RTR2RTS_QP => match st {
            _ if rc_like => ALT_ADDR_PATH | RRE | RAE | RWE | PM_STATE | RNR_TIMEOUT,
            st::UC => ALT_ADDR_PATH | RWE | PM_STATE | PP_INDEX,
            st::UD => Q_KEY | PP_INDEX,
            _ => 0,
        },
        Opcode::RTS2RTS_QP => {
            COUNTER_SET_ID
                | match st {
                    _ if rc_like => RRE | RAE | RWE | RNR_TIMEOUT | PM_STATE | ALT_ADDR_PATH,
                    st::UC => RWE | PM_STATE | ALT_ADDR_PATH | PP_INDEX,
                    st::UD => Q_KEY | SRQN | CQN_RCV | PP_INDEX,
                    _ => 0,
                }
        }
        Opcode::SQERR2RTS_QP | Opcode::SQD_RTS_QP => match st {
            _ if rc_like => RNR_TIMEOUT | RWE | RAE | RRE,
            st::UC => RWE,
            st::UD => Q_KEY,
            _ if mlx => Q_KEY,
            _ => 0,
        },
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_reaches_err_and_rst() {
        for s in state::ALL {
            assert_eq!(next_state(Opcode::_2ERR_QP, s), Some(state::ERR));
            assert_eq!(next_state(Opcode::_2RST_QP, s), Some(state::RST));
        }
        assert_eq!(next_state(Opcode::RTR2RTS_QP, state::INIT), None);
        assert_eq!(transition(Opcode::CREATE_QP), None);
    }
}
