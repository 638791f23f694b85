//! Firmware-initiated reset (sync reset): the MFRL register, the handshake with the
//! functions through PCI_SYNC_FOR_FW_UPDATE general events, and the PCI reset that
//! activates the firmware (emu/README.md, "Sync reset").
//!
//! Sequence (upstream `fw_reset.c`, `devlink.c` `mlx5_devlink_reload_fw_activate`):
//! a function (or another host's tool, control `sync_reset`) writes MFRL with reset
//! level 3 and `pci_sync_for_fw_update_start`; the firmware raises RESET_REQUEST to
//! every function that enabled `pci_sync_for_fw_update_event`; each answers with an
//! MFRL write (`pci_sync_for_fw_update_resp` 1 ack, 2 nack); once all acked the
//! firmware raises RESET_NOW and waits for the PCI reset (the method MFRL's
//! `pci_reset_req_method` names), at which the new firmware comes up at its power-on
//! state. A nack, a negotiation that times out, or an abort from the control socket
//! raises RESET_ABORT to the functions that acknowledged.

use super::{eq, Env, Firmware};
use crate::ifc::caps::cmd_hca_cap as g;
use crate::ifc::eqe::{event_type, general_sub};
use crate::ifc::regs::mfrl;
use std::time::{Duration, Instant};

/// How long the firmware waits for the functions' answers (ours: the DTOR
/// `pci_sync_update_to` this device reports, 5 s; upstream waits as long for
/// RESET_NOW after it acks, `mlx5_sync_reset_set_reset_requested`).
pub const DEFAULT_NEGOTIATION_MS: u64 = 5000;

/// Who asked for the sync reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Initiator {
    /// The function's driver (MFRL write, upstream `fw_activate`).
    Function,
    /// Another function or host's tool (control `sync_reset`, as `mlxfwreset` does).
    Other,
}

/// Where the handshake is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// No sync reset.
    Idle,
    /// RESET_REQUEST raised; waiting for the function's answer until `deadline`.
    Negotiation {
        /// Who asked.
        initiator: Initiator,
        /// The negotiation times out then.
        deadline: Instant,
    },
    /// RESET_NOW raised; the firmware waits for the PCI reset.
    AwaitPciReset,
}

/// What the handshake saw (control `stats` `sync_reset`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncStats {
    /// Sync resets started by the function (MFRL start).
    pub requests_function: u64,
    /// Sync resets started from the control socket.
    pub requests_other: u64,
    /// Starts refused (one in progress, no function takes part, bad level).
    pub requests_refused: u64,
    /// RESET_REQUEST events written.
    pub request_events: u64,
    /// Acknowledgements / refusals (MFRL response 1 / 2).
    pub acks: u64,
    /// See [`SyncStats::acks`].
    pub nacks: u64,
    /// Responses outside a negotiation (refused: BAD_SYS_STATE).
    pub late_responses: u64,
    /// RESET_NOW events written.
    pub reset_now_events: u64,
    /// RESET_ABORT events written.
    pub abort_events: u64,
    /// Negotiations that timed out.
    pub timeouts: u64,
    /// Aborts from the control socket.
    pub aborts_requested: u64,
    /// PCI resets that activated the firmware (sync reset completed).
    pub activations: u64,
    /// MFRL reads.
    pub queries: u64,
    /// Events that found no EQ subscribed to the general event, or a full one.
    pub events_lost: u64,
}

/// The sync-reset state of the device.
#[derive(Clone, Debug)]
pub struct SyncReset {
    /// Where the handshake is.
    pub phase: Phase,
    /// MFRL `reset_state`: the current negotiation, or the last one's outcome until
    /// the next start or activation.
    pub reset_state: u8,
    /// MFRL `pci_reset_req_method` (control `sync_reset` `method`).
    pub method: u8,
    /// Negotiation timeout (control `sync_reset` `timeout_ms`).
    pub negotiation: Duration,
    /// The function was sent RESET_REQUEST in this negotiation and acked / nacked.
    asked: bool,
    acked: bool,
    /// Events to write at the next firmware step (raised while executing a command).
    pending: Vec<u8>,
    /// Observations.
    pub stats: SyncStats,
}

impl Default for SyncReset {
    fn default() -> Self {
        SyncReset {
            phase: Phase::Idle,
            reset_state: mfrl::STATE_IDLE,
            method: mfrl::METHOD_HOT_RESET,
            negotiation: Duration::from_millis(DEFAULT_NEGOTIATION_MS),
            asked: false,
            acked: false,
            pending: Vec::new(),
            stats: SyncStats::default(),
        }
    }
}

/// Why a start or an answer is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// A sync reset is in progress already.
    InProgress,
    /// No function enabled `pci_sync_for_fw_update_event`: none can take part.
    NoParticipant,
    /// An answer outside a negotiation.
    NotNegotiating,
}

impl Refused {
    /// As the control socket reports it.
    pub fn as_str(self) -> &'static str {
        match self {
            Refused::InProgress => "a sync reset is in progress",
            Refused::NoParticipant => {
                "no function enabled pci_sync_for_fw_update_event (none can take part)"
            }
            Refused::NotNegotiating => "no sync reset negotiation in progress",
        }
    }
}

impl SyncReset {
    /// MFRL as read: supported levels (3 only: `fw_activate`; no live patch), reset
    /// types (full chip), the state and the PCI reset method.
    pub fn mfrl_fields(&self) -> [(crate::ifc::field::Field, u64); 4] {
        use crate::ifc::regs::mfrl_reg as r;
        [
            (r::RESET_LEVEL.raw(), u64::from(mfrl::LEVEL3)),
            (r::RESET_TYPE.raw(), u64::from(mfrl::TYPE_FULL_CHIP)),
            (r::RESET_STATE.raw(), u64::from(self.reset_state)),
            (r::PCI_RESET_REQ_METHOD.raw(), u64::from(self.method)),
        ]
    }

    /// Phase as the control socket reports it.
    pub fn phase_name(&self) -> &'static str {
        match self.phase {
            Phase::Idle => "idle",
            Phase::Negotiation { .. } => "negotiation",
            Phase::AwaitPciReset => "await_pci_reset",
        }
    }

    /// The negotiation's deadline, if one runs.
    pub fn deadline(&self) -> Option<Instant> {
        match self.phase {
            Phase::Negotiation { deadline, .. } => Some(deadline),
            _ => None,
        }
    }
}

impl Firmware {
    /// Whether the function takes part in sync resets: it enabled the event with
    /// SET_HCA_CAP (upstream `handle_hca_cap` sets `pci_sync_for_fw_update_event` when
    /// the maximum offers it) and is initialized.
    pub fn sync_participant(&self) -> bool {
        self.func.initialized && self.caps.cur(g::PCI_SYNC_FOR_FW_UPDATE_EVENT.raw()) != 0
    }

    /// Starts a sync reset (MFRL write with `pci_sync_for_fw_update_start`, or the
    /// control socket): RESET_REQUEST to the function.
    pub fn sync_reset_start(&mut self, who: Initiator) -> Result<(), Refused> {
        if self.sync.phase != Phase::Idle {
            self.sync.stats.requests_refused += 1;
            return Err(Refused::InProgress);
        }
        if !self.sync_participant() {
            self.sync.stats.requests_refused += 1;
            return Err(Refused::NoParticipant);
        }
        match who {
            Initiator::Function => self.sync.stats.requests_function += 1,
            Initiator::Other => self.sync.stats.requests_other += 1,
        }
        self.sync.phase = Phase::Negotiation {
            initiator: who,
            deadline: Instant::now() + self.sync.negotiation,
        };
        self.sync.reset_state = mfrl::STATE_IN_NEGOTIATION;
        self.sync.asked = true;
        self.sync.acked = false;
        self.sync.pending.push(general_sub::RST_REQUEST);
        Ok(())
    }

    /// The function's answer (MFRL `pci_sync_for_fw_update_resp`).
    pub fn sync_reset_answer(&mut self, resp: u8) -> Result<(), Refused> {
        if !matches!(self.sync.phase, Phase::Negotiation { .. }) || !self.sync.asked {
            self.sync.stats.late_responses += 1;
            return Err(Refused::NotNegotiating);
        }
        if resp == mfrl::RESP_ACK {
            self.sync.stats.acks += 1;
            self.sync.acked = true;
            // Every function asked has acked (one function): reset now.
            self.sync.phase = Phase::AwaitPciReset;
            self.sync.reset_state = mfrl::STATE_RESET_IN_PROGRESS;
            self.sync.pending.push(general_sub::RST_NOW);
        } else {
            self.sync.stats.nacks += 1;
            self.sync.asked = false;
            self.sync_reset_end(mfrl::STATE_NACK);
        }
        Ok(())
    }

    /// Ends a negotiation without a reset: RESET_ABORT to the function if it acked.
    fn sync_reset_end(&mut self, state: u8) {
        if self.sync.acked {
            self.sync.pending.push(general_sub::RST_ABORT);
        }
        self.sync.phase = Phase::Idle;
        self.sync.reset_state = state;
        self.sync.asked = false;
        self.sync.acked = false;
    }

    /// Aborts a sync reset in negotiation or waiting for the PCI reset (control
    /// socket: the firmware gives up, as when the initiating tool is stopped).
    pub fn sync_reset_abort(&mut self) -> bool {
        if self.sync.phase == Phase::Idle {
            return false;
        }
        self.sync.stats.aborts_requested += 1;
        self.sync_reset_end(mfrl::STATE_IDLE);
        true
    }

    /// The negotiation's timer (firmware thread): returns the deadline still ahead.
    pub fn sync_reset_tick(&mut self, now: Instant) -> Option<Instant> {
        let d = self.sync.deadline()?;
        if now < d {
            return Some(d);
        }
        self.sync.stats.timeouts += 1;
        self.sync_reset_end(mfrl::STATE_NEG_TIMEOUT);
        None
    }

    /// Writes the events raised since the last step (general event, sub-type
    /// PCI_SYNC_FOR_FW_UPDATE, `sync_rst_state` in data byte 3).
    pub fn sync_reset_flush(&mut self, env: &Env<'_>) {
        for st in std::mem::take(&mut self.sync.pending) {
            let mut data = [0u8; 28];
            data[general_sub::SYNC_RST_STATE_BYTE] = st;
            let p = self.eqs.post(
                event_type::GENERAL_EVENT,
                general_sub::PCI_SYNC_FOR_FW_UPDATE,
                &data,
                env.mem,
                env.irq,
                env.msix_ok,
            );
            match p {
                eq::Posted::Written(_) | eq::Posted::Queued(_) => match st {
                    general_sub::RST_REQUEST => self.sync.stats.request_events += 1,
                    general_sub::RST_NOW => self.sync.stats.reset_now_events += 1,
                    _ => self.sync.stats.abort_events += 1,
                },
                eq::Posted::Dma(e) => {
                    self.sync.stats.events_lost += 1;
                    self.stats.dma_error(format!("sync reset EQE: {e}"));
                }
                _ => self.sync.stats.events_lost += 1,
            }
        }
    }

    /// A PCI reset reached the device (function-level or bus reset, vfio-user
    /// DEVICE_RESET): while the firmware waits for it after RESET_NOW, the new
    /// firmware comes up (the caller brings the device to its power-on state). True
    /// when this activated a sync reset.
    pub fn sync_reset_pci_reset(&mut self) -> bool {
        if self.sync.phase != Phase::AwaitPciReset {
            return false;
        }
        self.sync.stats.activations += 1;
        self.sync.phase = Phase::Idle;
        self.sync.reset_state = mfrl::STATE_IDLE;
        self.sync.asked = false;
        self.sync.acked = false;
        self.sync.pending.clear();
        true
    }
}
