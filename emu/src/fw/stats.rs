//! Counters the control socket reports: commands per opcode and status, delivery
//! errors, DMA errors and protocol violations.

use std::collections::{BTreeMap, VecDeque};

/// How many violation messages are kept.
const KEEP_VIOLATIONS: usize = 64;

/// Device statistics.
#[derive(Debug, Default)]
pub struct Stats {
    /// Commands executed: opcode → status → count.
    pub commands: BTreeMap<u16, BTreeMap<u8, u64>>,
    /// Delivery errors reported: status → count.
    pub delivery_errors: BTreeMap<u8, u64>,
    /// Doorbells rung.
    pub doorbells: u64,
    /// DMA accesses outside mapped memory.
    pub dma_errors: u64,
    /// Protocol violations seen (count).
    pub violations: u64,
    /// EQ doorbells on a UAR page that a teardown (graceful, force, or nic_interface
    /// DISABLED after prepare-fast) dropped: an interrupt handler's last arm racing the
    /// stop. Counted, not a violation unless the strict rule `eq_doorbell_after_stop`.
    pub eq_doorbells_after_stop: u64,
    /// CQ arm and send doorbells on a UAR page a teardown or a firmware restart
    /// dropped: counted and ignored (never a violation: nothing documents firmware
    /// reacting to them).
    pub uar_doorbells_after_stop: u64,
    /// Send and CQ arm doorbells naming a QP or CQ destroyed while its UAR page stays
    /// allocated (`Objects::destroyed_qp_uar`): counted and ignored, not a violation.
    pub doorbells_after_destroy: u64,
    /// The most recent violation messages.
    pub recent_violations: VecDeque<String>,
    /// Firmware restarts (software resets the driver asked for, control `fw_reset`).
    pub fw_restarts: u64,
    /// nic_interface SW_RESET written by the driver.
    pub sw_reset_requests: u64,
    /// ... of them while the VSC software-reset semaphore was free (upstream takes it
    /// first, and writes anyway when the gateway fails with anything but busy).
    pub sw_reset_without_semaphore: u64,
    /// ... of them refused: the init segment did not advertise fw reset support
    /// (init_seg knob `fw_reset_supported: false`); a violation.
    pub sw_reset_unsupported: u64,
    /// Commands whose completion was swallowed by injection.
    pub never_completed: u64,
    /// Completion fields written wrong by injection: field name → count
    /// (`not_applicable`: a mailbox field asked of a command without output mailbox).
    pub corruptions: BTreeMap<&'static str, u64>,
}

impl Stats {
    /// Records a command's status.
    pub fn command(&mut self, opcode: u16, status: u8) {
        *self
            .commands
            .entry(opcode)
            .or_default()
            .entry(status)
            .or_default() += 1;
    }

    /// Records a protocol violation.
    pub fn violation(&mut self, msg: String) {
        log::warn!("protocol violation: {msg}");
        self.violations += 1;
        if self.recent_violations.len() == KEEP_VIOLATIONS {
            self.recent_violations.pop_front();
        }
        self.recent_violations.push_back(msg);
    }

    /// Records a DMA error.
    pub fn dma_error(&mut self, msg: String) {
        self.dma_errors += 1;
        self.violation(msg);
    }
}
