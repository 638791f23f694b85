//! A fixed-size latency histogram (log-linear buckets, ≤ 6.25 % relative error) with
//! exact count, sum, min and max: memory stays constant however many samples arrive.
//!
//! Values below 16 ns have a bucket each; above, every power of two is split into 16
//! equal buckets, up to 2^40 ns (~18 min); larger values land in the last bucket (max
//! stays exact). A percentile is reported as its bucket's midpoint, clamped to the
//! observed minimum and maximum.

/// Sub-buckets per power of two (2^SUB_BITS).
const SUB_BITS: u32 = 4;
const SUB: usize = 1 << SUB_BITS;
/// Highest power of two with buckets of its own.
const MAX_EXP: u32 = 40;
/// Number of buckets.
pub const BUCKETS: usize = SUB + (MAX_EXP as usize - SUB_BITS as usize + 1) * SUB;

/// Latency histogram in nanoseconds.
#[derive(Clone, Debug)]
pub struct LatencyHist {
    counts: Vec<u64>,
    /// Samples recorded.
    pub count: u64,
    /// Sum of all samples (saturating).
    pub sum_ns: u64,
    /// Smallest sample (0 when empty).
    pub min_ns: u64,
    /// Largest sample.
    pub max_ns: u64,
}

impl Default for LatencyHist {
    fn default() -> Self {
        LatencyHist {
            counts: vec![0; BUCKETS],
            count: 0,
            sum_ns: 0,
            min_ns: 0,
            max_ns: 0,
        }
    }
}

fn bucket(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    if e > MAX_EXP {
        return BUCKETS - 1;
    }
    let sub = ((v >> (e - SUB_BITS)) as usize) & (SUB - 1);
    SUB + (e - SUB_BITS) as usize * SUB + sub
}

/// Lowest value and width of bucket `i`.
fn bucket_range(i: usize) -> (u64, u64) {
    if i < SUB {
        return (i as u64, 1);
    }
    let e = (i - SUB) / SUB + SUB_BITS as usize;
    let sub = ((i - SUB) % SUB) as u64;
    let width = 1u64 << (e - SUB_BITS as usize);
    ((1u64 << e) + sub * width, width)
}

impl LatencyHist {
    /// Records one sample.
    pub fn record(&mut self, ns: u64) {
        if let Some(c) = self.counts.get_mut(bucket(ns)) {
            *c += 1;
        }
        self.min_ns = if self.count == 0 {
            ns
        } else {
            self.min_ns.min(ns)
        };
        self.max_ns = self.max_ns.max(ns);
        self.count += 1;
        self.sum_ns = self.sum_ns.saturating_add(ns);
    }

    /// Mean (0 when empty).
    pub fn mean_ns(&self) -> u64 {
        self.sum_ns.checked_div(self.count).unwrap_or(0)
    }

    /// The `p`-th percentile (0 < p ≤ 100), 0 when empty.
    pub fn percentile_ns(&self, p: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.count as f64)
            .ceil()
            .clamp(1.0, self.count as f64) as u64;
        if rank == self.count {
            return self.max_ns;
        }
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                if i == BUCKETS - 1 {
                    // The overflow bucket has no upper bound: the maximum is exact.
                    return self.max_ns;
                }
                let (lo, w) = bucket_range(i);
                return (lo + w / 2).clamp(self.min_ns, self.max_ns);
            }
        }
        self.max_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values_in_order_within_error() {
        let mut last = 0;
        for v in [
            0u64,
            1,
            15,
            16,
            17,
            31,
            32,
            1000,
            65_535,
            1 << 20,
            (1 << 40) - 1,
        ] {
            let b = bucket(v);
            assert!(b >= last, "bucket of {v} went backwards");
            last = b;
            let (lo, w) = bucket_range(b);
            assert!(
                lo <= v && v < lo + w,
                "{v} not in bucket [{lo}, {})",
                lo + w
            );
            assert!(w * 16 <= lo.max(16), "bucket of {v} too wide: {w}");
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut h = LatencyHist::default();
        assert_eq!((h.percentile_ns(50.0), h.mean_ns()), (0, 0));
        // 1..=1000 µs: p50 ≈ 500 µs, p99 ≈ 990 µs, within one bucket (6.25 %).
        for us in 1..=1000u64 {
            h.record(us * 1000);
        }
        assert_eq!(h.count, 1000);
        assert_eq!((h.min_ns, h.max_ns), (1000, 1_000_000));
        assert_eq!(h.mean_ns(), 500_500);
        let p50 = h.percentile_ns(50.0) as f64;
        let p99 = h.percentile_ns(99.0) as f64;
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.0625, "p50 {p50}");
        assert!((p99 - 990_000.0).abs() / 990_000.0 < 0.0625, "p99 {p99}");
        assert_eq!(h.percentile_ns(100.0), 1_000_000);
        // A huge outlier is clamped into the last bucket but max stays exact.
        h.record(u64::MAX / 2);
        assert_eq!(h.max_ns, u64::MAX / 2);
        assert_eq!(h.percentile_ns(100.0), u64::MAX / 2);
    }
}
