//! The QP state machine: which command moves a QP from which state to which, and the
//! optional parameters (`opt_param_mask`) each transition accepts per service type.
//!
//! Sources: the PRM's QP state-transition table and its per-transition parameter
//! tables; upstream `mlx5_ib` (`qp.c` `optab`, `opt_mask`) follows them. The command
//! interface has no RTS→SQD command (`mlx5_ifc.h` declares none; upstream's `optab`
//! has no RTS→SQD entry): a QP enters SQD or SQER only by device action (the control
//! socket's `qp_state`).

use crate::ifc::opcodes::Opcode;

/// QP states (`qpc.state`, upstream `include/linux/mlx5/qp.h` `MLX5_QP_STATE_*`).
pub mod state {
    /// Reset.
    pub const RST: u8 = 0;
    /// Initialized.
    pub const INIT: u8 = 1;
    /// Ready to receive.
    pub const RTR: u8 = 2;
    /// Ready to send.
    pub const RTS: u8 = 3;
    /// Send queue error.
    pub const SQER: u8 = 4;
    /// Send queue drained.
    pub const SQD: u8 = 5;
    /// Error.
    pub const ERR: u8 = 6;
    /// Every state a QP can be in (the ones a command or the device sets).
    pub const ALL: [u8; 7] = [RST, INIT, RTR, RTS, SQER, SQD, ERR];
    /// Name for logs and tests.
    pub fn name(s: u8) -> &'static str {
        match s {
            RST => "RST",
            INIT => "INIT",
            RTR => "RTR",
            RTS => "RTS",
            SQER => "SQER",
            SQD => "SQD",
            ERR => "ERR",
            _ => "?",
        }
    }
}

/// Service types (`qpc.st`, `mlx5_ifc.h` `MLX5_QPC_ST_*`, upstream `MLX5_QP_ST_*`).
pub mod st {
    /// Reliable connected.
    pub const RC: u8 = 0x0;
    /// Unreliable connected.
    pub const UC: u8 = 0x1;
    /// Unreliable datagram.
    pub const UD: u8 = 0x2;
    /// XRC (initiator or target).
    pub const XRC: u8 = 0x3;
    /// QP0 (SMI).
    pub const QP0: u8 = 0x7;
    /// QP1 (GSI).
    pub const QP1: u8 = 0x8;
    /// UMR registration QP.
    pub const REG_UMR: u8 = 0xc;
    /// The service types this model creates.
    pub const MODELLED: [u8; 7] = [RC, UC, UD, XRC, QP0, QP1, REG_UMR];
}

/// `opt_param_mask` bits (upstream `MLX5_QP_OPTPAR_*`).
pub mod opt {
    /// Alternate address path.
    pub const ALT_ADDR_PATH: u32 = 1 << 0;
    /// Remote read enable.
    pub const RRE: u32 = 1 << 1;
    /// Remote atomic enable.
    pub const RAE: u32 = 1 << 2;
    /// Remote write enable.
    pub const RWE: u32 = 1 << 3;
    /// P_Key index.
    pub const PKEY_INDEX: u32 = 1 << 4;
    /// Q_Key.
    pub const Q_KEY: u32 = 1 << 5;
    /// Minimum RNR NAK timer.
    pub const RNR_TIMEOUT: u32 = 1 << 6;
    /// Primary address path.
    pub const PRIMARY_ADDR_PATH: u32 = 1 << 7;
    /// Outstanding RDMA reads / atomics as requester.
    pub const SRA_MAX: u32 = 1 << 8;
    /// Outstanding RDMA reads / atomics as responder.
    pub const RRA_MAX: u32 = 1 << 9;
    /// Path migration state.
    pub const PM_STATE: u32 = 1 << 10;
    /// Retry count.
    pub const RETRY_COUNT: u32 = 1 << 12;
    /// RNR retry.
    pub const RNR_RETRY: u32 = 1 << 13;
    /// ACK timeout.
    pub const ACK_TIMEOUT: u32 = 1 << 14;
    /// LAG TX port affinity.
    pub const LAG_TX_AFF: u32 = 1 << 15;
    /// Primary port.
    pub const PRI_PORT: u32 = 1 << 16;
    /// SRQ number.
    pub const SRQN: u32 = 1 << 18;
    /// Receive CQ.
    pub const CQN_RCV: u32 = 1 << 19;
    /// Packet pacing index.
    pub const PP_INDEX: u32 = 1 << 22;
    /// Counter set.
    pub const COUNTER_SET_ID: u32 = 1 << 25;
}

/// A state-transition command: (from states, to state). `None` for other opcodes.
pub fn transition(op: Opcode) -> Option<(&'static [u8], u8)> {
    use state::*;
    Some(match op {
        Opcode::RST2INIT_QP => (&[RST], INIT),
        Opcode::INIT2INIT_QP => (&[INIT], INIT),
        Opcode::INIT2RTR_QP => (&[INIT], RTR),
        Opcode::RTR2RTS_QP => (&[RTR], RTS),
        Opcode::RTS2RTS_QP => (&[RTS], RTS),
        Opcode::SQERR2RTS_QP => (&[SQER], RTS),
        Opcode::SQD_RTS_QP => (&[SQD], RTS),
        Opcode::_2ERR_QP => (&ALL, ERR),
        Opcode::_2RST_QP => (&ALL, RST),
        _ => return None,
    })
}

/// Every state-transition command.
pub const TRANSITIONS: [Opcode; 9] = [
    Opcode::RST2INIT_QP,
    Opcode::INIT2INIT_QP,
    Opcode::INIT2RTR_QP,
    Opcode::RTR2RTS_QP,
    Opcode::RTS2RTS_QP,
    Opcode::SQERR2RTS_QP,
    Opcode::SQD_RTS_QP,
    Opcode::_2ERR_QP,
    Opcode::_2RST_QP,
];

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
