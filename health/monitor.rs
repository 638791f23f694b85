// SPDX-License-Identifier: GPL-2.0

//! Health poll decisions: fatal sensors, health-counter misses and
//! syndrome changes.
//!
//! Every poll period the shell reads a few init-segment words and feeds
//! them to [`HealthMonitor::poll`], which decides, in upstream's order:
//!
//! 1. fatal sensors, first match wins: PCI gone (health `fw_ver` reads all
//!    ones), PCI channel offline, `nic_interface` DISABLED, `nic_interface`
//!    SW_RESET, reset-required (`rfr`) with a non-zero syndrome. The first
//!    time one fires the device is to be declared dead;
//! 2. the health counter (init segment 0x1010, whole dword) not changing
//!    since the previous poll is a miss; exactly when the misses reach
//!    [`MAX_MISSES`] the health is reported compromised (once per streak);
//! 3. a non-zero health syndrome that differs from the last one seen is
//!    reported (non-fatal unless `rfr` is set, which is case 1).
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use super::buffer::{HealthBuffer, DWORDS};
use crate::ifc::init_seg::{self as seg, health_buffer as hb, NicInterface};

/// Consecutive unchanged health counters that mean "compromised".
pub const MAX_MISSES: u32 = 3;

/// Between two polls, the fatal sensors alone are checked this often (ms), so that a
/// fatal error is found within this time rather than within the poll period
/// (upstream's 2 s): the recovery starts sooner. The health counter is still sampled
/// once per poll period, so "compromised" keeps upstream's timing.
pub const FATAL_CHECK_MS: u32 = 250;

/// The fatal-sensor check's period for a poll period of `period_ms`: the shorter of
/// the two ([`FATAL_CHECK_MS`]).
pub const fn fatal_check_ms(period_ms: u32) -> u32 {
    if period_ms < FATAL_CHECK_MS {
        period_ms
    } else {
        FATAL_CHECK_MS
    }
}

/// Checks per poll period (the last of them is the full poll): the period over the
/// check's, rounded up, at least 1.
pub const fn checks_per_poll(period_ms: u32) -> u32 {
    let c = fatal_check_ms(period_ms);
    if c == 0 {
        1
    } else {
        period_ms.div_ceil(c)
    }
}

/// A fatal condition (upstream sensor numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FatalSensor {
    /// Health `fw_ver` reads 0xffffffff: the device is off the bus.
    PciCommErr = 1,
    /// The PCI channel is offline (AER).
    PciErr = 2,
    /// `nic_interface` is DISABLED.
    NicDisabled = 3,
    /// `nic_interface` is SW_RESET.
    NicSwReset = 4,
    /// Reset-required bit with a non-zero syndrome.
    FwSyndRfr = 5,
}

/// What one poll read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HealthSample {
    /// Health buffer `fw_ver` (init segment 0x230).
    pub fw_ver: u32,
    /// Whether the PCI channel is offline.
    pub pci_offline: bool,
    /// `nic_interface` field of `cmdq_addr_l_sz` (3 bits).
    pub nic_interface: u32,
    /// Health buffer `rfr` (reset required).
    pub rfr: bool,
    /// Health syndrome (0x23d).
    pub synd: u8,
    /// Health counter dword (0x1010).
    pub counter: u32,
}

/// Decision of one poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HealthEvent {
    /// Nothing to report.
    Healthy,
    /// Fatal: declare the device dead, stop polling.
    Fatal(FatalSensor),
    /// The health counter stalled for [`MAX_MISSES`] polls.
    Compromised,
    /// A new non-zero health syndrome.
    SyndromeChanged(u8),
}

/// Byte offset of the health buffer's `fw_ver` in the init segment.
const FW_VER_OFF: usize = seg::HEALTH_BUFFER_OFF + hb::FW_VERSION.raw().byte_off();

/// Reads one poll's sample through `read` (a dword of the init segment by byte offset):
/// `nic_interface`, the health buffer's dwords that hold `rfr` and `synd`, the health
/// counter, and last `fw_ver`: what the monitor decides on, as upstream's
/// `poll_health` reads it (the rest of the buffer is read for the log only, by
/// [`read_buffer`], when there is something to report).
///
/// A device that leaves the bus (surprise removal) turns every later read to all ones,
/// and a poll may straddle that moment. The all-ones `nic_interface` field reads as
/// SW_RESET, and an all-ones buffer dword as a syndrome with `rfr`. Because `fw_ver` is
/// read last, any all-ones word read before it comes with an all-ones `fw_ver`, so the
/// first sensor in order is PCI_COMM_ERR and the device is not reported as reset by
/// firmware.
///
/// # Errors
///
/// The first error of `read`.
pub fn read_sample<E>(mut read: impl FnMut(usize) -> Result<u32, E>) -> Result<HealthSample, E> {
    let nic = u32::from(seg::reg::NIC_INTERFACE.get(read(seg::CMDQ_ADDR_L_SZ)?));
    let buf = read_rfr_synd(&mut read)?;
    let counter = read(seg::HEALTH_COUNTER)?;
    let fw_ver = read(FW_VER_OFF)?;
    Ok(HealthSample {
        fw_ver,
        // No AER error handler yet: the channel state is not known here.
        pci_offline: false,
        nic_interface: nic,
        rfr: buf.rfr,
        synd: buf.synd,
        counter,
    })
}

/// Reads the whole health buffer (the log of a report, devlink's diagnose and dump).
///
/// # Errors
///
/// The first error of `read`.
pub fn read_buffer<E>(mut read: impl FnMut(usize) -> Result<u32, E>) -> Result<HealthBuffer, E> {
    let mut d = [0u32; DWORDS];
    for (i, w) in d.iter_mut().enumerate() {
        *w = read(seg::HEALTH_BUFFER_OFF + 4 * i)?;
    }
    Ok(HealthBuffer::from_dwords(&d))
}

/// The health buffer with only the dwords of `rfr` and `synd` read (once each; one
/// read when they share a dword), the others zero.
fn read_rfr_synd<E>(read: &mut impl FnMut(usize) -> Result<u32, E>) -> Result<HealthBuffer, E> {
    let mut d = [0u32; DWORDS];
    d[RFR_DWORD] = read(seg::HEALTH_BUFFER_OFF + 4 * RFR_DWORD)?;
    if SYND_DWORD != RFR_DWORD {
        d[SYND_DWORD] = read(seg::HEALTH_BUFFER_OFF + 4 * SYND_DWORD)?;
    }
    Ok(HealthBuffer::from_dwords(&d))
}

/// Reads only what the fatal sensors need, the check between two polls:
/// `nic_interface`, the health buffer's dwords that hold `rfr` and `synd`, and
/// `fw_ver` last (for the reason [`read_sample`] gives: a removal during the check
/// reads as PCI_COMM_ERR). Returns the sensor that fires, if any; the poll that
/// follows a hit reads everything.
///
/// # Errors
///
/// The first error of `read`.
pub fn read_fatal<E>(
    mut read: impl FnMut(usize) -> Result<u32, E>,
) -> Result<Option<FatalSensor>, E> {
    let nic = u32::from(seg::reg::NIC_INTERFACE.get(read(seg::CMDQ_ADDR_L_SZ)?));
    let buf = read_rfr_synd(&mut read)?;
    let fw_ver = read(FW_VER_OFF)?;
    Ok(fatal_sensor(&HealthSample {
        fw_ver,
        pci_offline: false,
        nic_interface: nic,
        rfr: buf.rfr,
        synd: buf.synd,
        counter: 0,
    }))
}

/// The health buffer's dwords that hold `rfr` and `synd`.
const RFR_DWORD: usize = hb::RFR.raw().byte_off() / 4;
const SYND_DWORD: usize = hb::SYND.raw().byte_off() / 4;

/// The fatal sensor that fires for `s`, if any (first match wins).
pub fn fatal_sensor(s: &HealthSample) -> Option<FatalSensor> {
    if s.fw_ver == u32::MAX {
        Some(FatalSensor::PciCommErr)
    } else if s.pci_offline {
        Some(FatalSensor::PciErr)
    } else {
        match NicInterface::from_raw(s.nic_interface & 0x7) {
            Some(NicInterface::Disabled) => Some(FatalSensor::NicDisabled),
            Some(NicInterface::SwReset) => Some(FatalSensor::NicSwReset),
            _ if s.rfr && s.synd != 0 => Some(FatalSensor::FwSyndRfr),
            _ => None,
        }
    }
}

/// State carried between polls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HealthMonitor {
    prev_counter: Option<u32>,
    misses: u32,
    last_synd: u8,
    fatal: Option<FatalSensor>,
}

impl HealthMonitor {
    /// Fresh state; the first poll only records the counter.
    pub const fn new() -> Self {
        Self {
            prev_counter: None,
            misses: 0,
            last_synd: 0,
            fatal: None,
        }
    }

    /// Consecutive misses so far.
    pub fn misses(&self) -> u32 {
        self.misses
    }

    /// The fatal sensor that fired, once one has.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn fatal(&self) -> Option<FatalSensor> {
        self.fatal
    }

    /// Evaluates one poll. After a fatal event every further poll returns
    /// the same fatal event (the shell should have stopped polling).
    pub fn poll(&mut self, s: &HealthSample) -> HealthEvent {
        if let Some(f) = self.fatal {
            return HealthEvent::Fatal(f);
        }
        if let Some(f) = fatal_sensor(s) {
            self.fatal = Some(f);
            return HealthEvent::Fatal(f);
        }
        let mut event = HealthEvent::Healthy;
        match self.prev_counter {
            Some(p) if p == s.counter => {
                self.misses = self.misses.saturating_add(1);
                if self.misses == MAX_MISSES {
                    event = HealthEvent::Compromised;
                }
            }
            _ => self.misses = 0,
        }
        self.prev_counter = Some(s.counter);
        if s.synd != 0 && s.synd != self.last_synd && event == HealthEvent::Healthy {
            event = HealthEvent::SyndromeChanged(s.synd);
        }
        if event != HealthEvent::Compromised {
            self.last_synd = s.synd;
        }
        event
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_health_monitor))]
mod tests {
    use super::*;

    fn ok(counter: u32) -> HealthSample {
        HealthSample {
            fw_ver: 0x0010_0020,
            pci_offline: false,
            nic_interface: 0,
            rfr: false,
            synd: 0,
            counter,
        }
    }

    #[test]
    fn three_misses_compromised_once() {
        let mut m = HealthMonitor::new();
        assert_eq!(m.poll(&ok(5)), HealthEvent::Healthy);
        assert_eq!(m.poll(&ok(5)), HealthEvent::Healthy);
        assert_eq!(m.poll(&ok(5)), HealthEvent::Healthy);
        assert_eq!(m.misses(), 2);
        assert_eq!(m.poll(&ok(5)), HealthEvent::Compromised);
        // reported once per streak
        assert_eq!(m.poll(&ok(5)), HealthEvent::Healthy);
        assert_eq!(m.misses(), 4);
        // progress resets
        assert_eq!(m.poll(&ok(6)), HealthEvent::Healthy);
        assert_eq!(m.misses(), 0);
        for _ in 0..2 {
            assert_eq!(m.poll(&ok(6)), HealthEvent::Healthy);
        }
        assert_eq!(m.poll(&ok(6)), HealthEvent::Compromised);
    }

    #[test]
    fn counter_wrap_is_progress() {
        let mut m = HealthMonitor::new();
        m.poll(&ok(u32::MAX));
        assert_eq!(m.poll(&ok(0)), HealthEvent::Healthy);
        assert_eq!(m.misses(), 0);
    }

    #[test]
    fn fatal_sensors_in_order() {
        let mut s = ok(1);
        assert_eq!(fatal_sensor(&s), None);
        s.synd = 9; // syndrome without rfr is not fatal
        assert_eq!(fatal_sensor(&s), None);
        s.rfr = true;
        assert_eq!(fatal_sensor(&s), Some(FatalSensor::FwSyndRfr));
        s.nic_interface = 7;
        assert_eq!(fatal_sensor(&s), Some(FatalSensor::NicSwReset));
        s.nic_interface = 1;
        assert_eq!(fatal_sensor(&s), Some(FatalSensor::NicDisabled));
        s.pci_offline = true;
        assert_eq!(fatal_sensor(&s), Some(FatalSensor::PciErr));
        s.fw_ver = u32::MAX;
        assert_eq!(fatal_sensor(&s), Some(FatalSensor::PciCommErr));
        // rfr without syndrome is not fatal
        let mut s = ok(1);
        s.rfr = true;
        assert_eq!(fatal_sensor(&s), None);
        // nic_interface NO_DRAM_NIC is not fatal
        s.nic_interface = 2;
        assert_eq!(fatal_sensor(&s), None);
    }

    /// An init segment whose reads all return ones from read number `gone` on (a
    /// surprise removal during the poll); before it, a healthy device.
    struct Removal {
        gone: usize,
        reads: usize,
    }

    impl Removal {
        fn read(&mut self, off: usize) -> Result<u32, ()> {
            self.reads += 1;
            if self.reads > self.gone {
                return Ok(u32::MAX);
            }
            Ok(if off == FW_VER_OFF { 0x0010_0023 } else { 0 })
        }
    }

    #[test]
    fn removal_during_a_poll_is_pci_comm_err() {
        // Every moment of the removal: before the first read, between any two, after
        // the last (5 reads a poll: nic_interface, the rfr and synd dwords, counter,
        // fw_ver).
        for gone in 0..=5 {
            let mut r = Removal { gone, reads: 0 };
            let got = read_sample(|off| r.read(off));
            assert!(got.is_ok());
            assert_eq!(r.reads, 5);
            let want = (gone < 5).then_some(FatalSensor::PciCommErr);
            if let Ok(s) = got {
                assert_eq!(fatal_sensor(&s), want);
            }
        }
    }

    #[test]
    fn quick_check_schedule() {
        assert_eq!(fatal_check_ms(2000), 250);
        assert_eq!(checks_per_poll(2000), 8);
        // A period that is no multiple: the poll comes at the next check after it.
        assert_eq!(checks_per_poll(1100), 5);
        // Short periods: every check is a full poll.
        assert_eq!(fatal_check_ms(100), 100);
        assert_eq!(checks_per_poll(100), 1);
        assert_eq!(checks_per_poll(250), 1);
        assert_eq!(checks_per_poll(0), 1);
    }

    /// A healthy init segment with `nic` as `nic_interface`, the health buffer's dwords
    /// from `buf`, counting the reads.
    struct Seg {
        nic: u8,
        buf: [u32; DWORDS],
        reads: usize,
    }

    impl Seg {
        fn read(&mut self, off: usize) -> Result<u32, ()> {
            self.reads += 1;
            if off == seg::CMDQ_ADDR_L_SZ {
                return Ok(seg::reg::NIC_INTERFACE.put(0, self.nic).unwrap_or(0));
            }
            let b = seg::HEALTH_BUFFER_OFF;
            if (b..b + 4 * DWORDS).contains(&off) {
                return Ok(self.buf[(off - b) / 4]);
            }
            Ok(0)
        }
    }

    #[test]
    fn quick_check_finds_what_the_poll_finds() {
        // Healthy, then each sensor the quick check can see, as read_sample sees it.
        let mut seg = Seg {
            nic: 0,
            buf: [0; DWORDS],
            reads: 0,
        };
        seg.buf[FW_VER_OFF.wrapping_sub(seg::HEALTH_BUFFER_OFF) / 4] = 0x0010_0023;
        assert_eq!(read_fatal(|o| seg.read(o)), Ok(None));
        assert_eq!(seg.reads, 4);
        // A syndrome with rfr, in the buffer's own layout.
        let mut bytes = [0u8; 4 * DWORDS];
        {
            let mut m = crate::ifc::field::MsgMut::<hb::Layout>::of_array(&mut bytes);
            assert!(m.set(hb::RFR, true).is_ok());
            assert!(m.set(hb::SYND, 7).is_ok());
            assert!(m.set(hb::FW_VERSION, 0x0010_0023).is_ok());
        }
        for (i, w) in seg.buf.iter_mut().enumerate() {
            *w = u32::from_be_bytes([
                bytes[4 * i],
                bytes[4 * i + 1],
                bytes[4 * i + 2],
                bytes[4 * i + 3],
            ]);
        }
        assert_eq!(
            read_fatal(|o| seg.read(o)),
            Ok(Some(FatalSensor::FwSyndRfr))
        );
        let full = read_sample(|o| seg.read(o)).map(|s| fatal_sensor(&s));
        assert_eq!(full, Ok(Some(FatalSensor::FwSyndRfr)));
        // The whole buffer, for the log: every dword once, the fields as written.
        seg.reads = 0;
        let b = read_buffer(|o| seg.read(o));
        assert_eq!(seg.reads, DWORDS);
        assert_eq!(
            b.map(|b| (b.rfr, b.synd, b.fw_ver)),
            Ok((true, 7, 0x0010_0023))
        );
        seg.nic = 7;
        assert_eq!(
            read_fatal(|o| seg.read(o)),
            Ok(Some(FatalSensor::NicSwReset))
        );
        seg.nic = 1;
        assert_eq!(
            read_fatal(|o| seg.read(o)),
            Ok(Some(FatalSensor::NicDisabled))
        );
    }

    #[test]
    fn removal_during_a_quick_check_is_pci_comm_err() {
        for gone in 0..=4 {
            let mut r = Removal { gone, reads: 0 };
            let got = read_fatal(|off| r.read(off));
            assert_eq!(r.reads, 4);
            let want = (gone < 4).then_some(FatalSensor::PciCommErr);
            assert_eq!(got, Ok(want));
        }
    }

    #[test]
    fn fatal_is_sticky() {
        let mut m = HealthMonitor::new();
        let mut s = ok(1);
        s.fw_ver = u32::MAX;
        assert_eq!(m.poll(&s), HealthEvent::Fatal(FatalSensor::PciCommErr));
        assert_eq!(m.poll(&ok(2)), HealthEvent::Fatal(FatalSensor::PciCommErr));
        assert_eq!(m.fatal(), Some(FatalSensor::PciCommErr));
    }

    #[test]
    fn syndrome_change_reported_once() {
        let mut m = HealthMonitor::new();
        let mut s = ok(1);
        s.synd = 0x10;
        assert_eq!(m.poll(&s), HealthEvent::SyndromeChanged(0x10));
        s.counter = 2;
        assert_eq!(m.poll(&s), HealthEvent::Healthy);
        s.counter = 3;
        s.synd = 0x0c;
        assert_eq!(m.poll(&s), HealthEvent::SyndromeChanged(0x0c));
        s.counter = 4;
        s.synd = 0;
        assert_eq!(m.poll(&s), HealthEvent::Healthy);
    }
}
