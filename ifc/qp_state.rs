//! The PRM's QP state machine: context states (`qpc.state`), service types (`qpc.st`),
//! path-migration states (`qpc.pm_state`), the optional-parameter bits of the
//! transition commands (`opt_param_mask`) and which command moves a QP from which
//! state to which. Declared once here for the driver (`ib/qp_modify.rs`) and the
//! emulator (`emu/src/fw/qp_state.rs`).
//!
//! Sources: the PRM's QP state-transition table; the values are those of upstream
//! `include/linux/mlx5/qp.h` (`MLX5_QP_STATE_*`, `MLX5_QP_ST_*`, `MLX5_QP_PM_*`,
//! `MLX5_QP_OPTPAR_*`) and `mlx5_ifc.h` (`MLX5_QPC_ST_*`, the transition opcodes). The
//! command interface has no RTS→SQD command: a QP enters SQD or SQER only by device
//! action.

use super::opcodes::Opcode;

/// QP context states (`qpc.state`, `MLX5_QP_STATE_*`).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "`name` and `ALL` serve the emulator")
)]
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
    /// Send queue draining (QUERY_QP only: on the way to SQD).
    pub const SQ_DRAINING: u8 = 7;
    /// Every state a command or the device leaves a QP in (`SQ_DRAINING` is transient).
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
            SQ_DRAINING => "SQ_DRAINING",
            _ => "?",
        }
    }
}

/// Service types (`qpc.st`, `MLX5_QPC_ST_*` / `MLX5_QP_ST_*`).
#[cfg_attr(CONFIG_RUST, expect(dead_code, reason = "REG_UMR serves the emulator"))]
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
}

/// Path-migration states (`qpc.pm_state`, `MLX5_QP_PM_*`).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_INFINIBAND)),
    expect(dead_code, reason = "used by the InfiniBand provider only")
)]
pub mod pm_state {
    /// Armed.
    pub const ARMED: u8 = 0;
    /// Rearm.
    pub const REARM: u8 = 1;
    /// Migrated.
    pub const MIGRATED: u8 = 3;
}

/// `opt_param_mask` bits of the transition commands (`MLX5_QP_OPTPAR_*`).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "COUNTER_SET_ID serves the emulator")
)]
pub mod optpar {
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

/// The state-transition commands: (command, states it moves a QP out of, state it
/// leaves it in).
pub const TRANSITIONS: [(Opcode, &[u8], u8); 9] = {
    use state::*;
    [
        (Opcode::RST2INIT_QP, &[RST], INIT),
        (Opcode::INIT2INIT_QP, &[INIT], INIT),
        (Opcode::INIT2RTR_QP, &[INIT], RTR),
        (Opcode::RTR2RTS_QP, &[RTR], RTS),
        (Opcode::RTS2RTS_QP, &[RTS], RTS),
        (Opcode::SQERR2RTS_QP, &[SQER], RTS),
        (Opcode::SQD_RTS_QP, &[SQD], RTS),
        (Opcode::_2ERR_QP, &ALL, ERR),
        (Opcode::_2RST_QP, &ALL, RST),
    ]
};

/// A state-transition command's (from states, to state); `None` for other opcodes.
#[cfg_attr(CONFIG_RUST, expect(dead_code, reason = "used by the emulator"))]
pub fn transition(op: Opcode) -> Option<(&'static [u8], u8)> {
    TRANSITIONS
        .iter()
        .find(|(o, _, _)| *o == op)
        .map(|&(_, from, to)| (from, to))
}

/// The command that moves a QP from state `cur` to state `new` (upstream's `optab`),
/// `None` where there is none.
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_INFINIBAND)),
    expect(dead_code, reason = "used by the InfiniBand provider only")
)]
pub fn transition_op(cur: u8, new: u8) -> Option<Opcode> {
    TRANSITIONS
        .iter()
        .find(|(_, from, to)| *to == new && from.contains(&cur))
        .map(|&(op, _, _)| op)
}
