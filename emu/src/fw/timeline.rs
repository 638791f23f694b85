//! Device-side timestamps of the teardown sequence, for benchmarks that cannot time
//! the driver from inside the guest (upstream's fast teardown runs in its PCI
//! `shutdown` callback, at the guest's power-off): when the last prepare-fast and
//! graceful/force TEARDOWN_HCA executed, when nic_interface DISABLED was accepted,
//! when DISABLE_HCA succeeded, and when the last doorbell (command or EQ) arrived.
//! Kept across function-level resets, like the statistics.

use std::time::Instant;

/// Teardown timestamps (the latest of each kind).
#[derive(Clone, Debug)]
pub struct Timeline {
    /// When the firmware model started (the reference of every reported time).
    pub start: Instant,
    /// TEARDOWN_HCA(prepare fast teardown) executed.
    pub prepare_fast: Option<Instant>,
    /// nic_interface DISABLED accepted after a prepared fast teardown.
    pub nic_disabled: Option<Instant>,
    /// TEARDOWN_HCA(graceful or force) executed.
    pub teardown: Option<Instant>,
    /// DISABLE_HCA succeeded.
    pub disable_hca: Option<Instant>,
    /// Last doorbell (command or UAR) written by the driver.
    pub last_doorbell: Option<Instant>,
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline {
            start: Instant::now(),
            prepare_fast: None,
            nic_disabled: None,
            teardown: None,
            disable_hca: None,
            last_doorbell: None,
        }
    }
}

/// Microseconds from `a` to `b`, if both happened and `b` is not earlier.
fn us_between(a: Option<Instant>, b: Option<Instant>) -> Option<u64> {
    let (a, b) = (a?, b?);
    let d = b.checked_duration_since(a)?;
    u64::try_from(d.as_micros()).ok()
}

impl Timeline {
    /// Milliseconds (3 decimals) since the model started, `None` if `t` never happened.
    pub fn ms(&self, t: Option<Instant>) -> Option<f64> {
        let d = t?.checked_duration_since(self.start)?;
        Some(d.as_micros() as f64 / 1000.0)
    }

    /// Fast teardown as the device saw it: prepare-fast TEARDOWN_HCA → nic_interface
    /// DISABLED, in µs (only when DISABLED followed this prepare).
    pub fn fast_teardown_us(&self) -> Option<u64> {
        us_between(self.prepare_fast, self.nic_disabled)
    }

    /// Graceful teardown as the device saw it: TEARDOWN_HCA → DISABLE_HCA (the page
    /// reclaim lies between), in µs (only when DISABLE_HCA followed this teardown).
    pub fn graceful_teardown_us(&self) -> Option<u64> {
        us_between(self.teardown, self.disable_hca)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn intervals_need_both_ends_in_order() {
        let mut t = Timeline::default();
        assert_eq!(
            (
                t.fast_teardown_us(),
                t.graceful_teardown_us(),
                t.ms(t.prepare_fast)
            ),
            (None, None, None)
        );
        let p = t.start + Duration::from_millis(5);
        t.prepare_fast = Some(p);
        assert_eq!(t.fast_teardown_us(), None);
        t.nic_disabled = Some(p + Duration::from_micros(1500));
        assert_eq!(t.fast_teardown_us(), Some(1500));
        assert_eq!(t.ms(t.prepare_fast), Some(5.0));
        // A later prepare without DISABLED yet: no interval (not a negative one).
        t.prepare_fast = Some(p + Duration::from_secs(1));
        assert_eq!(t.fast_teardown_us(), None);
        t.teardown = Some(p);
        t.disable_hca = Some(p + Duration::from_millis(70));
        assert_eq!(t.graceful_teardown_us(), Some(70_000));
    }
}
