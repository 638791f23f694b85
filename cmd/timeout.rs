// SPDX-License-Identifier: GPL-2.0

//! Timeout policy: device-provided defaults and per-opcode command timeouts.
//!
//! The driver starts from built-in defaults (milliseconds) and overrides
//! them from the device: when the initialization segment's `cmd_q_init_to`
//! (0x0ffc) is non-zero the device "supports timeouts" and `cmd_q_init_to`
//! gives FW_INIT while `cmd_exec_to` (0x0ff8) gives CMD; later the DTOR
//! register can override the others (a zero field keeps the default). Each
//! device value is a `default_timeout` dword (multiplier bits 31:29 —
//! ms, s, min, h — and value bits 19:0), decoded by
//! [`crate::ifc::init_seg::decode_timeout_ms`].
//!
//! Per command, [`Timeouts::cmd_ms`] gives how long to wait for a
//! completion. Our choice for "long" commands: the function-wide
//! ENABLE_HCA, DISABLE_HCA, INIT_HCA and TEARDOWN_HCA get
//! [`LONG_CMD_FACTOR`] times the CMD value, since the firmware sets up or
//! tears down the whole function behind them; all others get CMD.
//! Polling mode adds [`POLL_SLACK_MS`]; event mode may add one
//! [`RECOVER_MS`] window after polling the command EQ by hand.
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use crate::ifc::field::{Msg, F};
use crate::ifc::init_seg::decode_timeout_ms;
use crate::ifc::opcodes::Opcode;
use crate::ifc::regs::dtor_reg;

/// Multiplier applied to CMD for the long, function-wide commands.
pub const LONG_CMD_FACTOR: u64 = 2;
/// Extra wait when completing by polling the ownership bit.
pub const POLL_SLACK_MS: u64 = 1_000;
/// Extra wait after recovering missed completion events.
pub const RECOVER_MS: u64 = 5_000;

/// Each named timeout, with its index into [`Timeouts`].
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "host-tested, not used by the driver yet")
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Tout {
    /// Waiting for `initializing` to clear before the command interface.
    FwPreInit = 0,
    /// Same on the recovery path.
    FwPreInitOnRecovery,
    /// Poll period of the pre-init wait.
    FwPreInitWait,
    /// Waiting for `initializing` to clear after the command interface.
    FwInit,
    /// Completion of one command.
    Cmd,
    /// PCI link toggle.
    PciToggle,
    /// Health poll period.
    HealthPollInterval,
    /// Full crash dump.
    FullCrdump,
    /// Firmware reset.
    FwReset,
    /// Flush on error.
    FlushOnError,
    /// PCI sync for update.
    PciSyncUpdate,
    /// Teardown.
    Teardown,
    /// FSM reactivate.
    FsmReactivate,
    /// Reclaim of the function's pages (restarted on progress).
    ReclaimPages,
    /// Reclaim of VF pages (restarted on progress).
    ReclaimVfsPages,
    /// Reset unload.
    ResetUnload,
}

/// Number of named timeouts.
pub const TOUT_COUNT: usize = 16;

const DEFAULTS: [u64; TOUT_COUNT] = [
    120_000,   // FwPreInit
    7_200_000, // FwPreInitOnRecovery
    2,         // FwPreInitWait
    2_000,     // FwInit
    60_000,    // Cmd
    2_000,     // PciToggle
    2_000,     // HealthPollInterval
    60_000,    // FullCrdump
    60_000,    // FwReset
    2_000,     // FlushOnError
    5_000,     // PciSyncUpdate
    3_000,     // Teardown
    5_000,     // FsmReactivate
    5_000,     // ReclaimPages
    120_000,   // ReclaimVfsPages
    300_000,   // ResetUnload
];

/// DTOR fields and the timeout each one sets.
const DTOR_FIELDS: [(F<u32, dtor_reg::Layout>, Tout); 11] = [
    (dtor_reg::PCIE_TOGGLE_TO, Tout::PciToggle),
    (dtor_reg::HEALTH_POLL_TO, Tout::HealthPollInterval),
    (dtor_reg::FULL_CRDUMP_TO, Tout::FullCrdump),
    (dtor_reg::FW_RESET_TO, Tout::FwReset),
    (dtor_reg::FLUSH_ON_ERR_TO, Tout::FlushOnError),
    (dtor_reg::PCI_SYNC_UPDATE_TO, Tout::PciSyncUpdate),
    (dtor_reg::TEAR_DOWN_TO, Tout::Teardown),
    (dtor_reg::FSM_REACTIVATE_TO, Tout::FsmReactivate),
    (dtor_reg::RECLAIM_PAGES_TO, Tout::ReclaimPages),
    (dtor_reg::RECLAIM_VFS_PAGES_TO, Tout::ReclaimVfsPages),
    (dtor_reg::RESET_UNLOAD_TO, Tout::ResetUnload),
];

/// How a command's completion is detected.
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(dead_code, reason = "host-tested, not used by the driver yet")
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionMode {
    /// Busy-polling the ownership bit.
    Polling,
    /// Command-completion events.
    Events,
}

/// The device's timeouts, in milliseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeouts {
    ms: [u64; TOUT_COUNT],
    supported: bool,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self::new()
    }
}

impl Timeouts {
    /// Built-in defaults.
    pub const fn new() -> Self {
        Self {
            ms: DEFAULTS,
            supported: false,
        }
    }

    /// A timeout in ms.
    pub fn get(&self, t: Tout) -> u64 {
        self.ms
            .get(t as usize)
            .copied()
            .unwrap_or(DEFAULTS[Tout::Cmd as usize])
    }

    /// Whether the device advertised its own timeouts (then the DTOR
    /// register should be read too).
    pub fn device_supported(&self) -> bool {
        self.supported
    }

    fn set_raw(&mut self, t: Tout, raw: u32) {
        if let Some(ms) = decode_timeout_ms(raw) {
            if ms != 0 {
                if let Some(slot) = self.ms.get_mut(t as usize) {
                    *slot = ms;
                }
            }
        }
    }

    /// Applies the initialization segment values `cmd_q_init_to` (0x0ffc)
    /// and `cmd_exec_to` (0x0ff8), both as read (host order). A zero
    /// `cmd_q_init_to` means the device gives no timeouts: defaults stay.
    pub fn apply_init_seg(&mut self, cmd_q_init_to: u32, cmd_exec_to: u32) {
        if cmd_q_init_to == 0 {
            return;
        }
        self.supported = true;
        self.set_raw(Tout::FwInit, cmd_q_init_to);
        self.set_raw(Tout::Cmd, cmd_exec_to);
    }

    /// Applies a DTOR register (64 bytes read with ACCESS_REG); zero fields
    /// keep their value. Returns false if `dtor` is too short.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn apply_dtor(&mut self, dtor: &[u8]) -> bool {
        let Some(dtor) = Msg::<dtor_reg::Layout>::new(dtor) else {
            return false;
        };
        for (field, t) in DTOR_FIELDS {
            self.set_raw(t, dtor.get(field));
        }
        true
    }

    /// Whether `opcode` is one of the long, function-wide commands.
    pub fn is_long(opcode: u16) -> bool {
        matches!(
            Opcode::from_raw(opcode),
            Some(
                Opcode::ENABLE_HCA | Opcode::DISABLE_HCA | Opcode::INIT_HCA | Opcode::TEARDOWN_HCA
            )
        )
    }

    /// How long to wait for the completion of a command of `opcode`.
    pub fn cmd_ms(&self, opcode: u16) -> u64 {
        let cmd = self.get(Tout::Cmd);
        if Self::is_long(opcode) {
            cmd.saturating_mul(LONG_CMD_FACTOR)
        } else {
            cmd
        }
    }

    /// Total wait before declaring a command timed out in `mode`: the
    /// command timeout plus the polling slack or the event-recovery window.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn cmd_deadline_ms(&self, opcode: u16, mode: CompletionMode) -> u64 {
        let extra = match mode {
            CompletionMode::Polling => POLL_SLACK_MS,
            CompletionMode::Events => RECOVER_MS,
        };
        self.cmd_ms(opcode).saturating_add(extra)
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_cmd_timeout))]
mod tests {
    use super::*;
    use crate::ifc::init_seg::encode_timeout;

    const NOP: u16 = 0x80d;
    const INIT_HCA: u16 = 0x102;
    const TEARDOWN_HCA: u16 = 0x103;

    #[test]
    fn defaults() {
        let t = Timeouts::new();
        assert_eq!(t.get(Tout::Cmd), 60_000);
        assert_eq!(t.get(Tout::FwInit), 2_000);
        assert_eq!(t.get(Tout::ReclaimPages), 5_000);
        assert_eq!(t.get(Tout::ResetUnload), 300_000);
        assert_eq!(t.cmd_ms(NOP), 60_000);
        assert_eq!(t.cmd_ms(INIT_HCA), 120_000);
        assert_eq!(t.cmd_ms(TEARDOWN_HCA), 120_000);
        assert_eq!(t.cmd_deadline_ms(NOP, CompletionMode::Polling), 61_000);
        assert_eq!(t.cmd_deadline_ms(NOP, CompletionMode::Events), 65_000);
        assert!(!t.device_supported());
    }

    #[test]
    fn init_seg_override() {
        let mut t = Timeouts::new();
        // not supported: cmd_exec_to ignored
        t.apply_init_seg(0, encode_timeout(1, 5));
        assert_eq!(t.get(Tout::Cmd), 60_000);
        // supported: 3 s FW init, 90 s cmd
        t.apply_init_seg(encode_timeout(1, 3), encode_timeout(1, 90));
        assert!(t.device_supported());
        assert_eq!(t.get(Tout::FwInit), 3_000);
        assert_eq!(t.get(Tout::Cmd), 90_000);
        assert_eq!(t.cmd_ms(NOP), 90_000);
        assert_eq!(t.cmd_ms(INIT_HCA), 180_000);
        // a zero cmd value keeps the previous one; minutes decode
        t.apply_init_seg(encode_timeout(2, 1), 0);
        assert_eq!(t.get(Tout::FwInit), 60_000);
        assert_eq!(t.get(Tout::Cmd), 90_000);
        // milliseconds multiplier
        t.apply_init_seg(encode_timeout(0, 1500), encode_timeout(0, 700));
        assert_eq!(t.get(Tout::Cmd), 700);
    }

    #[test]
    fn dtor_override() {
        let mut t = Timeouts::new();
        assert!(!t.apply_dtor(&[0u8; 10]));
        let mut d = [0u8; 64];
        let mut m = crate::ifc::field::MsgMut::<dtor_reg::Layout>::of_array(&mut d);
        m.set(dtor_reg::RECLAIM_PAGES_TO, encode_timeout(1, 7))
            .unwrap();
        m.set(dtor_reg::TEAR_DOWN_TO, encode_timeout(0, 250))
            .unwrap();
        assert!(t.apply_dtor(&d));
        assert_eq!(t.get(Tout::ReclaimPages), 7_000);
        assert_eq!(t.get(Tout::Teardown), 250);
        // zero fields keep defaults
        assert_eq!(t.get(Tout::HealthPollInterval), 2_000);
        assert_eq!(t.get(Tout::Cmd), 60_000);
        // byte offsets as in the PRM: reclaim_pages_to at 0x30
        assert_eq!(&d[0x30..0x34], &encode_timeout(1, 7).to_be_bytes());
    }

    #[test]
    fn huge_values_saturate() {
        let mut t = Timeouts::new();
        t.apply_init_seg(1, encode_timeout(3, 0xf_ffff));
        assert_eq!(t.get(Tout::Cmd), 0xf_ffff * 3_600_000);
        assert!(t.cmd_deadline_ms(INIT_HCA, CompletionMode::Events) > t.get(Tout::Cmd));
    }

    #[test]
    fn table_size() {
        assert_eq!(Tout::ResetUnload as usize + 1, TOUT_COUNT);
    }
}
