// SPDX-License-Identifier: GPL-2.0

//! The arithmetic of the device clock, as upstream mlx5_core's `lib/clock.c` and the
//! kernel's cyclecounter / timecounter (`include/linux/timecounter.h`,
//! `kernel/time/timecounter.c`) do it.
//!
//! - [`ClockParams::from_khz`]: the cyclecounter of a device counting at
//!   `device_frequency_khz` (`mlx5_timecounter_init`): shift
//!   `min(ilog2(khz) + 16, ilog2(U32_MAX / NSEC_PER_MSEC * khz))`
//!   (`mlx5_ptp_shift_constant`), mult `clocksource_khz2mult(khz, shift)`, mask 41 bits;
//! - [`ClockParams::overflow_period`]: the period of the overflow work, in jiffies
//!   (`mlx5_init_overflow_period`): the counter is read at least twice per wrap and
//!   before `cycles * mult` can overflow 63 bits;
//! - [`Timecounter`]: the nanoseconds of the last read and the cycles then
//!   (`timecounter_init` / `timecounter_read`), what the clock info page publishes;
//! - [`read_timer`]: the internal timer's two halves read high, low, high again
//!   (`mlx5_read_time`).
//!
//! The tests convert device timestamps with what the page would hold as libmlx5 does
//! (`mlx5dv_ts_to_ns`).
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

/// Width of the cycle counter upstream uses (`CLOCKSOURCE_MASK(41)`).
pub const CYCLES_MASK_BITS: u32 = 41;
/// Nanoseconds per millisecond.
const NSEC_PER_MSEC: u64 = 1_000_000;
/// Nanoseconds per second.
const NSEC_PER_SEC: u64 = 1_000_000_000;

/// Offsets of the internal timer in the init segment (`internal_timer_h`, `_l`).
pub use crate::ifc::init_seg::{INTERNAL_TIMER_H, INTERNAL_TIMER_L};

/// The cyclecounter of the device's internal timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockParams {
    /// Cycles to nanoseconds: `ns = cycles * mult >> shift`.
    pub mult: u32,
    /// See `mult`.
    pub shift: u32,
    /// The counter's width (`CLOCKSOURCE_MASK(41)`).
    pub mask: u64,
}

/// `ilog2` (0 for 0).
fn ilog2(v: u64) -> u32 {
    v.checked_ilog2().unwrap_or(0)
}

impl ClockParams {
    /// The counter of a device counting at `khz` kHz; `None` for 0 (upstream:
    /// "invalid device_frequency_khz, aborting HW clock init").
    pub fn from_khz(khz: u32) -> Option<Self> {
        if khz == 0 {
            return None;
        }
        let k = u64::from(khz);
        // `mlx5_ptp_shift_constant`: (U32_MAX / NSEC_PER_MSEC) * khz is computed in
        // 64 bits there (NSEC_PER_MSEC is a long).
        let shift = (ilog2(k) + 16).min(ilog2(
            (u64::from(u32::MAX) / NSEC_PER_MSEC).saturating_mul(k),
        ));
        // `clocksource_khz2mult`: (1e6 << shift + khz / 2) / khz, truncated to 32
        // bits. shift <= 44 (4294 * khz < 2^45), so 1e6 << shift fits 64 bits. No
        // operation here can panic (the checked ones cannot fail).
        let tmp = NSEC_PER_MSEC.checked_shl(shift)?.checked_add(k / 2)?;
        let mult = tmp.checked_div(k)? as u32;
        Some(ClockParams {
            mult,
            shift,
            mask: (1u64 << CYCLES_MASK_BITS) - 1,
        })
    }

    /// `cyclecounter_cyc2ns`: nanoseconds of `cycles`, carrying the fractional
    /// nanoseconds in `frac` (the low `shift` bits).
    pub fn cyc2ns(&self, cycles: u64, frac: &mut u64) -> u64 {
        let ns = cycles
            .wrapping_mul(u64::from(self.mult))
            .wrapping_add(*frac);
        *frac = ns & 1u64.checked_shl(self.shift).map_or(u64::MAX, |b| b - 1);
        ns.checked_shr(self.shift).unwrap_or(0)
    }

    /// The overflow work's period in jiffies at `hz` (`mlx5_init_overflow_period`):
    /// the nanoseconds of `min((2^63 - 1) / mult, mask / 3)` cycles, in jiffies; `hz`
    /// (one second) if that is 0.
    pub fn overflow_period(&self, hz: u64) -> u64 {
        // No division can panic: a zero divisor gives the one-second fallback.
        let cycles = (!0u64 >> 1)
            .checked_div(u64::from(self.mult))
            .unwrap_or(0)
            .min(self.mask / 3);
        let mut frac = 0;
        let ns = self.cyc2ns(cycles, &mut frac);
        let per_jiffy = NSEC_PER_SEC.checked_div(hz).unwrap_or(0);
        match ns.checked_div(per_jiffy).unwrap_or(0) {
            0 => hz,
            p => p,
        }
    }
}

/// `struct timecounter`: where the clock stood at the last read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timecounter {
    /// The counter at the last read (`cycle_last`).
    pub cycle_last: u64,
    /// Nanoseconds at the last read (`nsec`).
    pub nsec: u64,
    /// Fractional nanoseconds (`frac`).
    pub frac: u64,
}

impl Timecounter {
    /// `timecounter_init`: the counter reads `cycles` at `start_ns`.
    pub fn new(cycles: u64, start_ns: u64) -> Self {
        Timecounter {
            cycle_last: cycles,
            nsec: start_ns,
            frac: 0,
        }
    }

    /// `timecounter_read`: the counter now reads `cycles` (already masked); advances
    /// by the cycles since the last read (modulo the mask) and returns the nanoseconds.
    pub fn read(&mut self, p: &ClockParams, cycles: u64) -> u64 {
        let delta = cycles.wrapping_sub(self.cycle_last) & p.mask;
        let ns = p.cyc2ns(delta, &mut self.frac);
        self.cycle_last = cycles;
        self.nsec = self.nsec.wrapping_add(ns);
        self.nsec
    }
}

/// `mlx5_read_time` (free-running): the high half, the low half, the high half again;
/// if the high half changed (the low one wrapped) the low half is read once more and
/// goes with the second high half.
///
/// # Errors
///
/// The first error of `read` (the BAR gone).
pub fn read_timer<E>(mut read: impl FnMut(usize) -> Result<u32, E>) -> Result<u64, E> {
    let h = read(INTERNAL_TIMER_H)?;
    let mut l = read(INTERNAL_TIMER_L)?;
    let h1 = read(INTERNAL_TIMER_H)?;
    if h != h1 {
        l = read(INTERNAL_TIMER_L)?;
    }
    Ok((u64::from(h1) << 32) | u64::from(l))
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_clock_calc))]
mod tests {
    use super::*;

    /// The emulated ConnectX's frequency (cap `device_frequency_khz`).
    const KHZ: u32 = 156_250;

    /// libmlx5's `mlx5dv_ts_to_ns` over what the clock info page holds (`tc` and `p`): a
    /// device timestamp less than half the mask ahead of `cycle_last` is later, else
    /// earlier.
    fn ts_to_ns(p: &ClockParams, tc: &Timecounter, ts: u64) -> u64 {
        let mult = u64::from(p.mult);
        let delta = ts.wrapping_sub(tc.cycle_last) & p.mask;
        if delta > p.mask / 2 {
            let back = tc.cycle_last.wrapping_sub(ts) & p.mask;
            let ns = back.wrapping_mul(mult).wrapping_sub(tc.frac);
            tc.nsec.wrapping_sub(ns.checked_shr(p.shift).unwrap_or(0))
        } else {
            let ns = delta.wrapping_mul(mult).wrapping_add(tc.frac);
            tc.nsec.wrapping_add(ns.checked_shr(p.shift).unwrap_or(0))
        }
    }

    #[test]
    fn params_as_upstream_computes_them() {
        // 156,250 kHz: ilog2 17 + 16 = 33, but 4294 * 156250 = 670,937,500 has ilog2 29.
        let p = ClockParams::from_khz(KHZ).unwrap();
        assert_eq!(p.shift, 29);
        // (1e6 << 29 + 78125) / 156250 = 3,435,973,836.8 → 3,435,973,837 (6.4 ns a
        // cycle, in 2^-29 ns).
        assert_eq!(p.mult, 3_435_973_837);
        assert_eq!(p.mask, 0x1ff_ffff_ffff);
        // A 1 GHz clock: ilog2(1e6) 19 + 16 = 35 vs ilog2(4294e6) 31.
        let g = ClockParams::from_khz(1_000_000).unwrap();
        assert_eq!((g.shift, g.mult), (31, 1 << 31));
        // A 1 kHz clock: ilog2(1) + 16 = 16 vs ilog2(4294) 12; 1 ms a cycle.
        let k = ClockParams::from_khz(1).unwrap();
        assert_eq!((k.shift, k.mult), (12, 1_000_000 << 12));
        assert_eq!(ClockParams::from_khz(0), None);
    }

    #[test]
    fn cycles_convert_to_nanoseconds_with_the_fraction_carried() {
        let p = ClockParams::from_khz(KHZ).unwrap();
        let mut frac = 0;
        // 156,250,000 cycles are one second.
        assert_eq!(p.cyc2ns(156_250_000, &mut frac), 1_000_000_000);
        // One cycle is 6.4 ns: five single cycles make 32 ns with the fraction carried,
        // not 30.
        let mut frac = 0;
        let five: u64 = (0..5).map(|_| p.cyc2ns(1, &mut frac)).sum();
        assert_eq!(five, 32);
    }

    #[test]
    fn overflow_period_reads_the_counter_well_before_it_wraps() {
        let p = ClockParams::from_khz(KHZ).unwrap();
        // (2^63 - 1) / mult = 2,684,354,559 cycles (mask / 3 is larger) ≈ 17.18 s.
        let cycles = (u64::MAX >> 1) / u64::from(p.mult);
        assert_eq!(cycles, 2_684_354_559);
        assert_eq!(p.overflow_period(1000), 17_179);
        assert_eq!(p.overflow_period(250), 4_294);
        // The 41-bit counter wraps after 2^41 / 156.25e6 s ≈ 14,073 s: read at least
        // twice per wrap (in ms at HZ 1000).
        assert!(p.overflow_period(1000) * 2 < p.mask / 156_250);
        // Nothing to convert: one second.
        let tiny = ClockParams {
            mult: 1,
            shift: 31,
            mask: 3,
        };
        assert_eq!(tiny.overflow_period(1000), 1000);
    }

    #[test]
    fn the_timecounter_advances_by_the_cycles_since_its_last_read_across_a_wrap() {
        let p = ClockParams::from_khz(KHZ).unwrap();
        let start = 1_700_000_000_000_000_000;
        let mut tc = Timecounter::new(p.mask - 78_125_000, start);
        // Half a second later the 41-bit counter has wrapped.
        let now = 78_125_000 - 1;
        assert_eq!(tc.read(&p, now), start + 1_000_000_000);
        assert_eq!(tc.cycle_last, now);
    }

    #[test]
    fn device_timestamps_convert_as_libmlx5_converts_them() {
        let p = ClockParams::from_khz(KHZ).unwrap();
        let start = 1_700_000_000_000_000_000;
        let mut tc = Timecounter::new(1_000_000_000, start);
        tc.read(&p, 1_000_000_000 + 156_250); // 1 ms later
        let at = tc.nsec;
        // A completion 1,562,500 cycles (10 ms) after the last read, and one 10 ms
        // before it: the clock's nanoseconds ± 10 ms.
        assert_eq!(
            ts_to_ns(&p, &tc, tc.cycle_last + 1_562_500),
            at + 10_000_000
        );
        assert_eq!(
            ts_to_ns(&p, &tc, tc.cycle_last - 1_562_500),
            at - 10_000_000
        );
        // Converting and reading the timecounter agree.
        let mut later = tc;
        assert_eq!(later.read(&p, tc.cycle_last + 1_562_500), at + 10_000_000);
    }

    #[test]
    fn the_timer_is_read_high_low_high() {
        use core::cell::Cell;
        // No carry between the reads: one low read.
        let reads = Cell::new(0);
        let t = read_timer(|off| -> Result<u32, ()> {
            reads.set(reads.get() + 1);
            Ok(if off == INTERNAL_TIMER_H { 7 } else { 0x1234 })
        });
        assert_eq!((t, reads.get()), (Ok((7 << 32) | 0x1234), 3));
        // The low half wrapped between the reads: the high half read second goes with
        // a fresh low read.
        let seq = [
            (INTERNAL_TIMER_H, 7u32),
            (INTERNAL_TIMER_L, 0xffff_fff0),
            (INTERNAL_TIMER_H, 8),
            (INTERNAL_TIMER_L, 3),
        ];
        let i = Cell::new(0);
        let t = read_timer(|off| -> Result<u32, ()> {
            let (want, v) = seq[i.get()];
            assert_eq!(off, want);
            i.set(i.get() + 1);
            Ok(v)
        });
        assert_eq!((t, i.get()), (Ok((8 << 32) | 3), 4));
        assert_eq!(read_timer(|_| Err::<u32, _>(5)), Err(5));
    }
}
