// SPDX-License-Identifier: GPL-2.0

//! Per-opcode command statistics: count, errors, mean and max latency.
//!
//! A fixed table with one entry per opcode known to [`crate::ifc::opcodes`]
//! plus one shared entry for unknown opcodes; no allocation, O(log n)
//! lookup. The kernel shell records every completed command under its
//! statistics lock and prints the table in debugfs.
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use core::fmt;

use crate::ifc::opcodes::Opcode;

/// Number of table entries: known opcodes plus one for unknown ones.
pub const ENTRIES: usize = Opcode::ALL.len() + 1;

/// Statistics of one opcode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpStats {
    /// Completed commands (successful or not).
    pub count: u64,
    /// Commands that failed (any error, timeouts included).
    pub errors: u64,
    /// Commands that timed out.
    pub timeouts: u64,
    /// Sum of latencies in ns (saturating).
    pub total_ns: u64,
    /// Largest latency in ns.
    pub max_ns: u64,
}

impl OpStats {
    /// Mean latency in ns (0 when nothing was recorded).
    pub fn mean_ns(&self) -> u64 {
        self.total_ns.checked_div(self.count).unwrap_or(0)
    }
}

impl fmt::Display for OpStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "count {} errors {} timeouts {} mean_ns {} max_ns {}",
            self.count,
            self.errors,
            self.timeouts,
            self.mean_ns(),
            self.max_ns
        )
    }
}

/// Outcome of a command, for [`CmdStats::record`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Success.
    Ok,
    /// Failed (delivery, status, corrupt output, ...).
    Error,
    /// Timed out.
    Timeout,
}

/// Statistics of all opcodes.
#[derive(Clone, Debug)]
pub struct CmdStats {
    table: [OpStats; ENTRIES],
}

impl Default for CmdStats {
    fn default() -> Self {
        Self::new()
    }
}

fn index(opcode: u16) -> usize {
    Opcode::ALL
        .binary_search_by_key(&opcode, |o| *o as u16)
        .unwrap_or(ENTRIES - 1)
}

impl CmdStats {
    /// All zero.
    pub const fn new() -> Self {
        Self {
            table: [OpStats {
                count: 0,
                errors: 0,
                timeouts: 0,
                total_ns: 0,
                max_ns: 0,
            }; ENTRIES],
        }
    }

    /// Records one completed command of `opcode` that took `latency_ns`.
    pub fn record(&mut self, opcode: u16, latency_ns: u64, outcome: Outcome) {
        if let Some(s) = self.table.get_mut(index(opcode)) {
            s.count = s.count.saturating_add(1);
            if outcome != Outcome::Ok {
                s.errors = s.errors.saturating_add(1);
            }
            if outcome == Outcome::Timeout {
                s.timeouts = s.timeouts.saturating_add(1);
            }
            s.total_ns = s.total_ns.saturating_add(latency_ns);
            s.max_ns = s.max_ns.max(latency_ns);
        }
    }

    /// Statistics of `opcode` (unknown opcodes share one entry).
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn get(&self, opcode: u16) -> OpStats {
        self.table.get(index(opcode)).copied().unwrap_or_default()
    }

    /// Statistics of the unknown-opcode entry.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn unknown(&self) -> OpStats {
        self.table.get(ENTRIES - 1).copied().unwrap_or_default()
    }

    /// Every known opcode that ran at least once, with its statistics, in
    /// opcode order (for debugfs); see [`CmdStats::unknown`] for the rest.
    pub fn used(&self) -> impl Iterator<Item = (Opcode, OpStats)> + '_ {
        Opcode::ALL
            .iter()
            .zip(self.table.iter())
            .filter(|(_, s)| s.count > 0)
            .map(|(o, s)| (*o, *s))
    }

    /// Clears everything.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn reset(&mut self) {
        *self = Self::new();
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_cmd_stats))]
mod tests {
    use super::*;
    use crate::testing::{text, ArrayVec};

    #[test]
    fn opcode_table_sorted_for_binary_search() {
        let raw: ArrayVec<u16, 256> = Opcode::ALL.iter().map(|o| *o as u16).collect();
        // ifc's Opcode::ALL must be sorted.
        assert!(raw.windows(2).all(|w| w[0] < w[1]));
        for (i, o) in Opcode::ALL.iter().enumerate() {
            assert_eq!(index(*o as u16), i);
        }
    }

    #[test]
    fn count_errors_mean_max() {
        let mut s = CmdStats::new();
        assert_eq!(s.get(0x80d).mean_ns(), 0);
        s.record(0x80d, 100, Outcome::Ok);
        s.record(0x80d, 300, Outcome::Error);
        s.record(0x80d, 200, Outcome::Timeout);
        s.record(0x108, 50, Outcome::Ok);
        let n = s.get(0x80d);
        assert_eq!(n.count, 3);
        assert_eq!(n.errors, 2);
        assert_eq!(n.timeouts, 1);
        assert_eq!(n.mean_ns(), 200);
        assert_eq!(n.max_ns, 300);
        assert_eq!(s.get(0x108).count, 1);
        assert_eq!(s.get(0x107).count, 0);
        assert_eq!(
            text(n).as_str(),
            "count 3 errors 2 timeouts 1 mean_ns 200 max_ns 300"
        );
        let used: ArrayVec<u16, 8> = s.used().map(|(o, _)| o as u16).collect();
        assert_eq!(used, [0x108, 0x80d]);
    }

    #[test]
    fn unknown_opcodes_share_an_entry() {
        let mut s = CmdStats::new();
        s.record(0x0fff, 10, Outcome::Ok);
        s.record(0x0001, 30, Outcome::Error);
        assert_eq!(s.unknown().count, 2);
        assert_eq!(s.get(0x0fff).count, 2);
        assert_eq!(s.unknown().mean_ns(), 20);
        assert_eq!(s.used().count(), 0);
    }

    #[test]
    fn saturates_and_resets() {
        let mut s = CmdStats::new();
        s.record(0x100, u64::MAX, Outcome::Ok);
        s.record(0x100, u64::MAX, Outcome::Ok);
        assert_eq!(s.get(0x100).total_ns, u64::MAX);
        assert_eq!(s.get(0x100).max_ns, u64::MAX);
        s.reset();
        assert_eq!(s.get(0x100), OpStats::default());
    }
}
