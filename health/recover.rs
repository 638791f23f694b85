// SPDX-License-Identifier: GPL-2.0

//! Recovery decisions (pure `core` code, host-tested): whether the firmware is asked
//! for a software reset ([`wants_fw_reset`]), when it is alive again ([`Vital`]), and
//! the VSC gateway protocol the software-reset semaphore is taken through ([`Vsc`]).
//! Whether an automatic recovery runs at all (auto-recover, the grace period) is
//! devlink's `fw_fatal` reporter's decision (`devlink.rs`).
//!
//! Sources, upstream's (the oracle):
//!
//! - software reset: health.c `mlx5_error_sw_reset`: only the FW_SYND_RFR sensor takes
//!   the semaphore and asks for the reset (`reset_fw_if_needed`, and only when
//!   `initializing` bit 30 says the firmware supports it); every fatal state then waits
//!   up to PCI_TOGGLE (2 s) for nic_interface DISABLED.
//! - firmware alive: main.c `wait_vital`: up to 100 reads 50 ms apart until the health
//!   counter reads two different values, neither 0 nor all ones.
//! - VSC gateway: lib/pci_vsc.c (`mlx5_vsc_gw_lock`, `mlx5_vsc_gw_set_space`,
//!   `mlx5_vsc_sem_set_space`, `mlx5_vsc_gw_write` / `_read`, `mlx5_vsc_wait_on_flag`).

use super::monitor::FatalSensor;

/// How long the firmware may take to report nic_interface DISABLED after a fatal
/// error (upstream's PCI_TOGGLE default).
pub const NIC_DISABLED_BUDGET_MS: u64 = 2_000;
/// How long the PCI reads may stay all ones before recovery gives up (upstream's
/// FW_RESET default, `mlx5_health_wait_pci_up`).
pub const PCI_UP_BUDGET_MS: u64 = 60_000;
/// Reads of the health counter [`Vital`] takes at most (upstream `wait_vital`).
pub const VITAL_READS: u32 = 100;
/// Time between two of them, in ms.
pub const VITAL_PERIOD_MS: u64 = 50;

/// Whether the fatal state `sensor` asks for a firmware software reset (under the VSC
/// semaphore) before the function is unloaded: only a firmware syndrome with
/// reset-required; a PCI error, or a firmware already reset (nic_interface DISABLED or
/// SW_RESET), would not be helped by one.
pub fn wants_fw_reset(sensor: Option<FatalSensor>) -> bool {
    sensor == Some(FatalSensor::FwSyndRfr)
}

/// The health-counter watch of `wait_vital`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Vital {
    last: u32,
    reads: u32,
}

/// What one health-counter read says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VitalStep {
    /// The counter moved: the firmware runs.
    Alive,
    /// Read again after [`VITAL_PERIOD_MS`].
    Wait,
    /// [`VITAL_READS`] reads without a move.
    TimedOut,
}

impl Vital {
    /// No read yet.
    pub const fn new() -> Self {
        Self { last: 0, reads: 0 }
    }

    /// Feeds one read of the health counter.
    pub fn step(&mut self, count: u32) -> VitalStep {
        self.reads = self.reads.saturating_add(1);
        if count != 0 && count != u32::MAX {
            if self.last != 0 && self.last != count {
                return VitalStep::Alive;
            }
            self.last = count;
        }
        if self.reads >= VITAL_READS {
            VitalStep::TimedOut
        } else {
            VitalStep::Wait
        }
    }

    /// Reads so far.
    pub fn reads(&self) -> u32 {
        self.reads
    }
}

/// Offsets in the vendor-specific capability (lib/pci_vsc.c `VSC_*_OFFSET`).
pub mod vsc_reg {
    /// Control: space 15:0, status 31:29.
    pub const CTRL: u8 = 0x4;
    /// A counter giving a unique value each read.
    pub const COUNTER: u8 = 0x8;
    /// The gateway semaphore.
    pub const SEMAPHORE: u8 = 0xc;
    /// Address 29:0, syndrome bit 30, flag bit 31.
    pub const ADDR: u8 = 0x10;
    /// Data.
    pub const DATA: u8 = 0x14;
}

/// The semaphore space (`MLX5_SEMAPHORE_SPACE_DOMAIN`).
pub const SPACE_SEMAPHORE: u16 = 0xa;
/// The software-reset semaphore in it (`MLX5_SEMAPHORE_SW_RESET`).
pub const SEM_SW_RESET: u32 = 0x20;
/// Attempts of a gateway lock or a flag wait (`VSC_MAX_RETRIES`).
pub const VSC_MAX_RETRIES: u32 = 2048;

/// Why a VSC operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VscError {
    /// A configuration-space access failed.
    Io,
    /// The gateway or the semaphore is held by someone else.
    Busy,
    /// The device does not have the space (status 0), or a bad address.
    Invalid,
}

/// Configuration-space access to the vendor-specific capability (offsets relative to
/// it) plus a short sleep between retries.
pub trait VscIo {
    /// Reads the dword at `off`.
    fn read(&mut self, off: u8) -> Result<u32, VscError>;
    /// Writes the dword at `off`.
    fn write(&mut self, off: u8, v: u32) -> Result<(), VscError>;
    /// Sleeps about a millisecond (between retries).
    fn pause(&mut self);
}

/// The VSC gateway protocol over a [`VscIo`].
pub struct Vsc<'a, T: VscIo>(pub &'a mut T);

impl<T: VscIo> Vsc<'_, T> {
    /// Takes the gateway: wait until the semaphore reads free, write the counter's
    /// value, read it back: the same value means taken.
    pub fn gw_lock(&mut self) -> Result<(), VscError> {
        let mut retries = 0u32;
        loop {
            if retries > VSC_MAX_RETRIES {
                return Err(VscError::Busy);
            }
            retries += 1;
            if self.0.read(vsc_reg::SEMAPHORE)? != 0 {
                self.0.pause();
                continue;
            }
            let id = self.0.read(vsc_reg::COUNTER)?;
            self.0.write(vsc_reg::SEMAPHORE, id)?;
            if self.0.read(vsc_reg::SEMAPHORE)? == id {
                return Ok(());
            }
        }
    }

    /// Frees the gateway.
    pub fn gw_unlock(&mut self) -> Result<(), VscError> {
        self.0.write(vsc_reg::SEMAPHORE, 0)
    }

    /// Selects `space`; a status of 0 read back means the device has no such space.
    pub fn set_space(&mut self, space: u16) -> Result<(), VscError> {
        let v = self.0.read(vsc_reg::CTRL)?;
        self.0
            .write(vsc_reg::CTRL, (v & !0xffff) | u32::from(space))?;
        if self.0.read(vsc_reg::CTRL)? >> 29 == 0 {
            return Err(VscError::Invalid);
        }
        Ok(())
    }

    fn wait_flag(&mut self, want: u32) -> Result<(), VscError> {
        let mut retries = 0u32;
        loop {
            if retries > VSC_MAX_RETRIES {
                return Err(VscError::Busy);
            }
            let flag = self.0.read(vsc_reg::ADDR)? >> 31;
            retries += 1;
            if flag == want {
                return Ok(());
            }
            if retries & 0xf == 0 {
                self.0.pause();
            }
        }
    }

    fn gw_write(&mut self, addr: u32, data: u32) -> Result<(), VscError> {
        if addr >> 30 != 0 {
            return Err(VscError::Invalid);
        }
        self.0.write(vsc_reg::DATA, data)?;
        self.0.write(vsc_reg::ADDR, addr | 1 << 31)?;
        self.wait_flag(0)
    }

    fn gw_read(&mut self, addr: u32) -> Result<u32, VscError> {
        if addr >> 30 != 0 {
            return Err(VscError::Invalid);
        }
        self.0.write(vsc_reg::ADDR, addr)?;
        self.wait_flag(1)?;
        self.0.read(vsc_reg::DATA)
    }

    /// Takes (`lock`) or frees the semaphore `sem` of the semaphore space; the gateway
    /// must be held. Taking it writes a unique id and reads it back: another value is
    /// [`VscError::Busy`] ("another PF started the reset").
    pub fn sem_set(&mut self, sem: u32, lock: bool) -> Result<(), VscError> {
        self.set_space(SPACE_SEMAPHORE)?;
        let id = if lock {
            self.0.read(vsc_reg::COUNTER)?
        } else {
            0
        };
        self.gw_write(sem, id)?;
        let got = self.gw_read(sem).map_err(|_| VscError::Invalid)?;
        if got != id {
            return Err(VscError::Busy);
        }
        Ok(())
    }

    /// The software-reset semaphore taken or freed as upstream's `lock_sem_sw_reset`:
    /// the gateway taken (a busy gateway is [`VscError::Invalid`] here: it does not mean
    /// another function started a reset), the semaphore set, the gateway freed.
    pub fn sw_reset_sem(&mut self, lock: bool) -> Result<(), VscError> {
        match self.gw_lock() {
            Ok(()) => {}
            Err(VscError::Busy) => return Err(VscError::Invalid),
            Err(e) => return Err(e),
        }
        let r = self.sem_set(SEM_SW_RESET, lock);
        // Freeing the gateway can only fail as the access did; the result above says more.
        let _ = self.gw_unlock();
        r
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_health_recover))]
mod tests {
    use super::*;

    #[test]
    fn only_rfr_syndrome_asks_for_a_reset() {
        assert!(wants_fw_reset(Some(FatalSensor::FwSyndRfr)));
        for s in [
            FatalSensor::PciCommErr,
            FatalSensor::PciErr,
            FatalSensor::NicDisabled,
            FatalSensor::NicSwReset,
        ] {
            assert!(!wants_fw_reset(Some(s)));
        }
        assert!(!wants_fw_reset(None));
    }

    #[test]
    fn vital_needs_two_different_valid_counts() {
        let mut v = Vital::new();
        assert_eq!(v.step(0), VitalStep::Wait);
        assert_eq!(v.step(u32::MAX), VitalStep::Wait);
        assert_eq!(v.step(7), VitalStep::Wait);
        assert_eq!(v.step(7), VitalStep::Wait);
        assert_eq!(v.step(u32::MAX), VitalStep::Wait);
        assert_eq!(v.step(8), VitalStep::Alive);
        // A frozen counter times out after VITAL_READS reads.
        let mut v = Vital::new();
        let mut last = VitalStep::Wait;
        for _ in 0..VITAL_READS {
            last = v.step(5);
        }
        assert_eq!(last, VitalStep::TimedOut);
        assert_eq!(v.reads(), VITAL_READS);
    }

    /// The emulator's gateway as emu/README.md describes it (one semaphore space).
    struct Gw {
        counter: u32,
        sem: u32,
        ctrl: u32,
        addr: u32,
        data: u32,
        space: [u32; 64],
        has_space: bool,
        pauses: u32,
    }

    impl Gw {
        fn new() -> Self {
            Self {
                counter: 0,
                sem: 0,
                ctrl: 0,
                addr: 0,
                data: 0,
                space: [0; 64],
                has_space: true,
                pauses: 0,
            }
        }
    }

    impl VscIo for Gw {
        fn read(&mut self, off: u8) -> Result<u32, VscError> {
            Ok(match off {
                vsc_reg::CTRL => self.ctrl,
                vsc_reg::COUNTER => {
                    self.counter += 1;
                    self.counter
                }
                vsc_reg::SEMAPHORE => self.sem,
                vsc_reg::ADDR => self.addr,
                vsc_reg::DATA => self.data,
                _ => return Err(VscError::Io),
            })
        }
        fn write(&mut self, off: u8, v: u32) -> Result<(), VscError> {
            match off {
                vsc_reg::CTRL => {
                    let space = v & 0xffff;
                    let ok = self.has_space && space == u32::from(SPACE_SEMAPHORE);
                    self.ctrl = space | if ok { 1 << 29 } else { 0 };
                }
                vsc_reg::SEMAPHORE => {
                    if v == 0 || self.sem == 0 {
                        self.sem = v;
                    }
                }
                vsc_reg::ADDR => {
                    let i = ((v & 0x3fff_ffff) / 4) as usize;
                    if v >> 31 == 1 {
                        let cur = self.space[i];
                        if self.data == 0 || cur == 0 {
                            self.space[i] = self.data;
                        }
                        self.addr = v & !(1 << 31);
                    } else {
                        self.data = self.space[i];
                        self.addr = v | 1 << 31;
                    }
                }
                vsc_reg::DATA => self.data = v,
                _ => return Err(VscError::Io),
            }
            Ok(())
        }
        fn pause(&mut self) {
            self.pauses += 1;
        }
    }

    #[test]
    fn sw_reset_semaphore_taken_and_freed() {
        let mut gw = Gw::new();
        assert_eq!(Vsc(&mut gw).sw_reset_sem(true), Ok(()));
        let holder = gw.space[(SEM_SW_RESET / 4) as usize];
        assert_ne!(holder, 0);
        // The gateway is freed.
        assert_eq!(gw.sem, 0);
        assert_eq!(Vsc(&mut gw).sw_reset_sem(false), Ok(()));
        assert_eq!(gw.space[(SEM_SW_RESET / 4) as usize], 0);
    }

    #[test]
    fn semaphore_held_elsewhere_is_busy() {
        let mut gw = Gw::new();
        gw.space[(SEM_SW_RESET / 4) as usize] = 0x1234;
        assert_eq!(Vsc(&mut gw).sw_reset_sem(true), Err(VscError::Busy));
        // The gateway is freed after a busy semaphore too.
        assert_eq!(gw.sem, 0);
    }

    #[test]
    fn no_semaphore_space_is_invalid() {
        let mut gw = Gw::new();
        gw.has_space = false;
        assert_eq!(Vsc(&mut gw).sw_reset_sem(true), Err(VscError::Invalid));
    }

    #[test]
    fn gateway_held_elsewhere_is_invalid_not_busy() {
        let mut gw = Gw::new();
        gw.sem = 99;
        assert_eq!(Vsc(&mut gw).sw_reset_sem(true), Err(VscError::Invalid));
        assert!(gw.pauses > VSC_MAX_RETRIES);
    }
}
