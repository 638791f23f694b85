//! The initialization segment as a register file (BAR0 0x0000..0x2010).
//!
//! Registers are big-endian dwords. Device-owned fields (log sizes, nic_interface
//! readback, initializing, health) are computed here; driver writes to the command
//! queue address are stored, and the doorbell / nic_interface requests are returned
//! to the caller as [`RegWrite`] so the device can hand them to the firmware thread.

use crate::config::EmuConfig;
use crate::ifc::field::{Msg, MsgMut, RegField};
use crate::ifc::init_seg::{self as is, health_buffer as hb};
use std::time::Instant;

/// log2 of the number of command queue slots.
pub const LOG_CMDQ_SIZE: u32 = 5;
/// log2 of the command queue entry stride.
pub const LOG_CMDQ_STRIDE: u32 = 6;

fn real_time() -> (u32, u32) {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs() as u32, d.subsec_nanos())
}

/// What a register write asks of the firmware.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegWrite {
    /// Nothing to do.
    None,
    /// Command doorbell with this slot vector.
    Doorbell(u32),
    /// nic_interface written with this value.
    NicInterface(u32),
    /// The command queue's address written (nic_interface FULL_DRIVER): a new driver
    /// instance sets its queue up.
    QueueSetUp,
}

/// Fields of the init segment the control socket can override (`init_seg`). `None`
/// keeps the modelled value. Raw register values where the register is a field of
/// its own (timeouts use the `default_timeout` encoding of `mlx5_ifc.h`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SegFields {
    /// `cmd_interface_rev` (0x004 bits 31:16).
    pub cmd_interface_rev: Option<u16>,
    /// `fw_rev_major`, `fw_rev_minor`, `fw_rev_subminor`.
    pub fw_rev: Option<(u16, u16, u16)>,
    /// `log_cmdq_size` (0x014 bits 7:4).
    pub log_cmdq_size: Option<u32>,
    /// `log_cmdq_stride` (0x014 bits 3:0).
    pub log_cmdq_stride: Option<u32>,
    /// 0xFF8: command execution timeout.
    pub cmd_exec_to: Option<u32>,
    /// 0xFFC: FW_INIT timeout (non-zero = the device reports timeouts).
    pub cmd_q_init_to: Option<u32>,
}

impl SegFields {
    /// `self` with the fields `over` sets replaced (for the control socket).
    pub fn overlay(self, over: &SegFields) -> SegFields {
        self.merged(over)
    }

    /// `self` with the fields `over` sets replaced.
    fn merged(&self, over: &SegFields) -> SegFields {
        SegFields {
            cmd_interface_rev: over.cmd_interface_rev.or(self.cmd_interface_rev),
            fw_rev: over.fw_rev.or(self.fw_rev),
            log_cmdq_size: over.log_cmdq_size.or(self.log_cmdq_size),
            log_cmdq_stride: over.log_cmdq_stride.or(self.log_cmdq_stride),
            cmd_exec_to: over.cmd_exec_to.or(self.cmd_exec_to),
            cmd_q_init_to: over.cmd_q_init_to.or(self.cmd_q_init_to),
        }
    }
}

/// How long `initializing` stays set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitHold {
    /// For this many milliseconds.
    Ms(u64),
    /// Until changed.
    Forever,
}

/// Init-segment fault knobs (control socket `init_seg`; cleared by the control
/// `reset`). The PRM has the driver read nothing but `initializing` before it clears
/// (upstream `mlx5_function_enable` waits in `wait_fw_init` before `mlx5_cmd_enable`
/// reads the revision and queue geometry), so what the other fields read meanwhile is
/// not defined: `while_initializing` makes them read something else until then.
#[derive(Clone, Debug, Default)]
pub struct SegKnobs {
    /// Overrides in effect always.
    pub fields: SegFields,
    /// Overrides in effect while `initializing` is set (on top of `fields`).
    pub while_initializing: SegFields,
    /// `initializing` set again for this long when the driver writes the command
    /// queue address (upstream waits a second time, FW_INIT budget, after
    /// `mlx5_cmd_enable`).
    pub initializing_after_cmdq: Option<InitHold>,
    /// `initializing` bit 30 (fw reset supported, upstream's
    /// `MLX5_FW_RESET_SUPPORTED_OFFSET`) clear: upstream then never asks for a software
    /// reset and waits for another function's (control `fw_reset`).
    pub fw_reset_unsupported: bool,
    /// How long a firmware restart lasts: nic_interface reads SW_RESET (7) and
    /// `initializing` stays set for this long before nic_interface reads DISABLED
    /// (0 = at once).
    pub sw_reset_ms: u64,
}

/// The device's free-running internal timer: it counts at `device_frequency_khz` from
/// the device's start. The init segment reads it (`internal_timer_h`/`_l`, PRM "Initialization
/// Segment") and the firmware stamps each CQE with it (PRM CQE `timestamp`, the
/// free-running format upstream's `mlx5_timecounter` converts with the same frequency).
#[derive(Clone, Copy, Debug)]
pub struct InternalTimer {
    start: Instant,
    khz: u32,
}

impl InternalTimer {
    /// A timer at zero now, counting at `khz`.
    pub fn new(khz: u32) -> Self {
        InternalTimer {
            start: Instant::now(),
            khz,
        }
    }

    /// Ticks since the start.
    pub fn now(&self) -> u64 {
        let ns = self.start.elapsed().as_nanos();
        (ns * u128::from(self.khz) / 1_000_000) as u64
    }
}

/// Init segment state.
pub struct Regs {
    /// Fault knobs.
    pub knobs: SegKnobs,
    /// `initializing` held until changed (`init_seg` `initializing_ms: "forever"`).
    pub initializing_forever: bool,
    /// Reads of each named register while `initializing` was set (observation: the
    /// driver should read only `initializing` then).
    pub reads_while_initializing: std::collections::BTreeMap<&'static str, u64>,
    cfg: EmuConfig,
    start: Instant,
    timer: InternalTimer,
    boot_deadline: Instant,
    /// Command queue address high.
    pub cmdq_addr_h: u32,
    /// Command queue address bits 31:12 (low 12 bits zero).
    pub cmdq_addr_l: u32,
    /// nic_interface as the device reports it.
    pub nic_interface: u32,
    /// Health buffer bytes (0x200..0x240).
    pub health: [u8; 64],
    /// Health counter frozen at this value (`None` = running).
    pub health_frozen: Option<u32>,
    /// Every BAR read returns all ones (surprise removal).
    pub all_ones: bool,
    /// Sync-reset state bits 15:12 and reset ack bit 22 of 0x1fc.
    pub reset_bits: u32,
    /// End of a firmware restart in progress (nic_interface reads SW_RESET until then).
    pub sw_reset_until: Option<Instant>,
}

impl Regs {
    /// Sets the command execution timeout the init segment reports (0xFF8), in
    /// milliseconds; 0 restores the configured value. Drivers read it at probe.
    pub fn set_cmd_exec_timeout_ms(&mut self, ms: u32, default: u32) {
        self.cfg.cmd_exec_to = if ms == 0 {
            default
        } else {
            crate::ifc::init_seg::encode_timeout(0, ms.min(0xf_ffff))
        };
    }

    /// Creates the register file; `initializing` stays set for the boot delay.
    pub fn new(cfg: &EmuConfig) -> Self {
        let now = Instant::now();
        let mut r = Regs {
            knobs: SegKnobs::default(),
            initializing_forever: false,
            reads_while_initializing: std::collections::BTreeMap::new(),
            cfg: cfg.clone(),
            start: now,
            timer: InternalTimer {
                start: now,
                khz: cfg.device_frequency_khz,
            },
            boot_deadline: now + std::time::Duration::from_millis(cfg.boot_delay_ms),
            cmdq_addr_h: 0,
            cmdq_addr_l: 0,
            nic_interface: 0,
            health: [0; 64],
            health_frozen: None,
            all_ones: false,
            reset_bits: 0,
            sw_reset_until: None,
        };
        r.reset_health();
        r
    }

    /// Function-level reset: forget the queue address and restart the boot delay.
    pub fn reset(&mut self) {
        let now = Instant::now();
        self.boot_deadline = now + std::time::Duration::from_millis(self.cfg.boot_delay_ms);
        self.cmdq_addr_h = 0;
        self.cmdq_addr_l = 0;
        self.nic_interface = 0;
        self.reset_bits = 0;
        self.sw_reset_until = None;
        self.health_frozen = None;
        self.reset_health();
    }

    /// Whether `initializing` advertises fw reset support (bit 30).
    pub fn fw_reset_supported(&self) -> bool {
        !self.knobs.fw_reset_unsupported
    }

    /// The firmware restarts (software reset): the health buffer cleared and its
    /// counter running again, the command queue address forgotten, `initializing` set
    /// for the boot delay, nic_interface reading DISABLED once the restart is over
    /// (upstream's `mlx5_error_sw_reset` waits for DISABLED; its comment on
    /// `MLX5_INITIAL_SEG_NIC_INTERFACE_SW_RESET`: the driver "can be reloaded to recover
    /// after the mode switches to MLX5_INITIAL_SEG_NIC_INTERFACE_DISABLED").
    pub fn restart(&mut self) {
        self.reset();
        self.nic_interface = crate::ifc::init_seg::NicInterface::Disabled as u32;
        let ms = self.knobs.sw_reset_ms;
        if ms > 0 {
            let until = Instant::now() + std::time::Duration::from_millis(ms);
            self.sw_reset_until = Some(until);
            self.boot_deadline = self.boot_deadline.max(until);
        }
    }

    /// nic_interface as it reads now.
    fn nic_interface_now(&self) -> u32 {
        match self.sw_reset_until {
            Some(t) if Instant::now() < t => crate::ifc::init_seg::NicInterface::SwReset as u32,
            _ => self.nic_interface,
        }
    }

    fn reset_health(&mut self) {
        self.health = [0; 64];
        let (maj, min, _) = self.cfg.fw_rev;
        let mut h = MsgMut::<hb::Layout>::of_array(&mut self.health);
        let _ = h.set(hb::FW_VERSION, (u32::from(maj) << 16) | u32::from(min));
        let _ = h.set(hb::HW_ID, 0x20d);
    }

    /// Sets a fatal health syndrome and freezes the health counter.
    pub fn set_fatal(&mut self, synd: u8, ext_synd: u16, rfr: bool, severity: u8) {
        let mut h = MsgMut::<hb::Layout>::of_array(&mut self.health);
        let _ = h.set(hb::SYND, synd);
        let _ = h.set(hb::EXT_SYND, ext_synd);
        let _ = h.set(hb::RFR, rfr);
        let _ = h.set(hb::VALID, true);
        let _ = h.set(hb::SEVERITY, severity & 7);
        self.stop_health_counter();
    }

    /// Clears the health buffer and restarts the health counter.
    pub fn clear_health(&mut self) {
        self.health_frozen = None;
        self.reset_health();
    }

    /// Freezes the health counter at its current value.
    pub fn stop_health_counter(&mut self) {
        if self.health_frozen.is_none() {
            self.health_frozen = Some(self.running_health_counter());
        }
    }

    /// True while the `initializing` bit is set.
    pub fn initializing(&self) -> bool {
        self.initializing_forever || Instant::now() < self.boot_deadline
    }

    /// Sets `initializing` for `hold` from now (`Ms(0)` clears it).
    pub fn hold_initializing(&mut self, hold: InitHold) {
        match hold {
            InitHold::Forever => self.initializing_forever = true,
            InitHold::Ms(ms) => {
                self.initializing_forever = false;
                self.boot_deadline = Instant::now() + std::time::Duration::from_millis(ms);
            }
        }
    }

    /// Removes every init-segment knob and the observations (control `reset`).
    pub fn clear_knobs(&mut self) {
        self.knobs = SegKnobs::default();
        self.initializing_forever = false;
        self.reads_while_initializing.clear();
    }

    /// The overridden fields in effect now.
    fn fields(&self) -> SegFields {
        if self.initializing() {
            self.knobs.fields.merged(&self.knobs.while_initializing)
        } else {
            self.knobs.fields.clone()
        }
    }

    /// Records a driver read of the dword at `off` (BAR reads only, not the merging
    /// reads of partial writes) while `initializing` is set.
    pub fn note_read(&mut self, off: usize) {
        if !self.initializing() {
            return;
        }
        let name = match off {
            is::FW_REV => "fw_rev",
            is::CMDIF_REV_FW_SUB => "cmdif_rev_fw_sub",
            is::CMDQ_ADDR_H => "cmdq_addr_h",
            is::CMDQ_ADDR_L_SZ => "cmdq_addr_l_sz",
            is::INITIALIZING => "initializing",
            is::CMD_EXEC_TO => "cmd_exec_to",
            is::CMD_Q_INIT_TO => "cmd_q_init_to",
            o if (is::HEALTH_BUFFER_OFF..is::HEALTH_BUFFER_OFF + 64).contains(&o) => {
                "health_buffer"
            }
            is::HEALTH_COUNTER => "health_counter",
            _ => "other",
        };
        *self.reads_while_initializing.entry(name).or_default() += 1;
    }

    /// Command queue DMA address.
    pub fn cmdq_addr(&self) -> u64 {
        (u64::from(self.cmdq_addr_h) << 32)
            | u64::from(self.cmdq_addr_l & is::reg::CMDQ_PHY_ADDR_31_12.bits_mask())
    }

    fn running_health_counter(&self) -> u32 {
        let ms = self.start.elapsed().as_millis() as u64;
        ((ms / self.cfg.health_period_ms.max(1)) as u32) & is::reg::HEALTH_COUNTER.bits_mask()
    }

    fn timer(&self) -> u64 {
        self.timer.now()
    }

    /// The internal timer, for the firmware's CQE timestamps.
    pub fn internal_timer(&self) -> InternalTimer {
        self.timer
    }

    /// Reads the dword at byte offset `off` (aligned), host order.
    pub fn read32(&self, off: usize) -> u32 {
        if self.all_ones {
            return u32::MAX;
        }
        let f = self.fields();
        let (maj, min, sub) = f.fw_rev.unwrap_or(self.cfg.fw_rev);
        match off {
            // Every value fits its 16-bit field: `put` cannot fail.
            is::FW_REV => {
                let v = is::reg::FW_REV_MINOR.put(0, min).unwrap_or(0);
                is::reg::FW_REV_MAJOR.put(v, maj).unwrap_or(v)
            }
            is::CMDIF_REV_FW_SUB => {
                let rev = f.cmd_interface_rev.unwrap_or(is::CMD_IF_REV);
                let v = is::reg::CMD_INTERFACE_REV.put(0, rev).unwrap_or(0);
                is::reg::FW_REV_SUBMINOR.put(v, sub).unwrap_or(v)
            }
            is::CMDQ_ADDR_H => self.cmdq_addr_h,
            is::CMDQ_ADDR_L_SZ => {
                // Values wider than their field are cut to it, as a register would.
                let field = |f: RegField<u8>, v: u32| (v << f.shift()) & f.bits_mask();
                (self.cmdq_addr_l & is::reg::CMDQ_PHY_ADDR_31_12.bits_mask())
                    | field(is::reg::NIC_INTERFACE, self.nic_interface_now())
                    | field(
                        is::reg::LOG_CMDQ_SIZE,
                        f.log_cmdq_size.unwrap_or(LOG_CMDQ_SIZE),
                    )
                    | field(
                        is::reg::LOG_CMDQ_STRIDE,
                        f.log_cmdq_stride.unwrap_or(LOG_CMDQ_STRIDE),
                    )
            }
            is::CMD_DBELL => 0,
            is::INITIALIZING => {
                let mut v = self.reset_bits;
                if self.fw_reset_supported() {
                    v |= is::FW_RESET_SUPPORTED_BIT;
                }
                if self.initializing() {
                    v |= is::reg::INITIALIZING.bits_mask();
                }
                v
            }
            o if (is::HEALTH_BUFFER_OFF..is::HEALTH_BUFFER_OFF + 64).contains(&o) => {
                let i = o - is::HEALTH_BUFFER_OFF;
                let mut b = [0u8; 4];
                b.copy_from_slice(&self.health[i..i + 4]);
                u32::from_be_bytes(b)
            }
            is::CMD_EXEC_TO => f.cmd_exec_to.unwrap_or(self.cfg.cmd_exec_to),
            is::CMD_Q_INIT_TO => f.cmd_q_init_to.unwrap_or(self.cfg.cmd_q_init_to),
            is::INTERNAL_TIMER_H => (self.timer() >> 32) as u32,
            is::INTERNAL_TIMER_L => self.timer() as u32,
            is::HEALTH_COUNTER => {
                let synd = Msg::<hb::Layout>::of_array(&self.health).get(hb::SYND);
                let c = self
                    .health_frozen
                    .unwrap_or_else(|| self.running_health_counter());
                // The counter is cut to its 24 bits, as a register would.
                let v = c & is::reg::HEALTH_COUNTER.bits_mask();
                is::reg::HEALTH_SYNDROME.put(v, synd).unwrap_or(v)
            }
            // Real-time clock: seconds (high) and nanoseconds (low) since the epoch.
            is::REAL_TIME_H => real_time().0,
            is::REAL_TIME_L => real_time().1,
            _ => 0,
        }
    }

    /// Writes the dword at byte offset `off` (aligned), host order.
    pub fn write32(&mut self, off: usize, val: u32) -> RegWrite {
        match off {
            is::CMDQ_ADDR_H => {
                self.cmdq_addr_h = val;
                RegWrite::None
            }
            is::CMDQ_ADDR_L_SZ => {
                self.cmdq_addr_l = val & is::reg::CMDQ_PHY_ADDR_31_12.bits_mask();
                let nic = u32::from(is::reg::NIC_INTERFACE.get(val));
                // Queue set-up (address with nic_interface FULL_DRIVER), not the
                // nic_interface write of fast teardown.
                if self.cmdq_addr_l != 0 && nic == 0 {
                    if let Some(hold) = self.knobs.initializing_after_cmdq {
                        self.hold_initializing(hold);
                    }
                }
                if nic != 0 {
                    RegWrite::NicInterface(nic)
                } else {
                    // The driver selects FULL_DRIVER with its queue address: a
                    // DISABLED left by a teardown or a firmware restart reads as such no
                    // more (upstream's health poll takes DISABLED for a fatal sensor,
                    // `MLX5_SENSOR_NIC_DISABLED`, so a reloaded function must not read it).
                    self.nic_interface = 0;
                    if self.cmdq_addr_l != 0 {
                        RegWrite::QueueSetUp
                    } else {
                        RegWrite::None
                    }
                }
            }
            is::CMD_DBELL => RegWrite::Doorbell(val),
            is::INITIALIZING => {
                // Reset ack (bit 22) is the only driver-writable bit.
                self.reset_bits = (self.reset_bits & !(1 << 22)) | (val & (1 << 22));
                RegWrite::None
            }
            _ => RegWrite::None,
        }
    }
}
