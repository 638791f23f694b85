// SPDX-License-Identifier: GPL-2.0

//! Latency summaries: percentiles and throughput of a batch of command latencies.
//!
//! Pure `core` code shared with the host tests.

/// Summary of a batch of latencies, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LatencySummary {
    /// Number of samples.
    pub count: u64,
    /// Median.
    pub p50_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// Largest sample.
    pub max_ns: u64,
    /// Mean (rounded down).
    pub mean_ns: u64,
}

/// The `p`-th percentile (0..=100) of `sorted` by the nearest-rank method; 0 when empty.
pub fn percentile(sorted: &[u64], p: u32) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let p = u64::from(p.min(100));
    let n = sorted.len() as u64;
    // Nearest rank: ceil(p/100 * n), at least 1.
    let rank = (p * n).div_ceil(100).max(1);
    sorted[(rank - 1) as usize]
}

/// Sorts in place, ascending (heapsort: no recursion, no allocation, O(n log n);
/// `core`'s slice sorts trip objtool in the kernel build).
pub fn heapsort(v: &mut [u64]) {
    fn sift_down(v: &mut [u64], mut root: usize, end: usize) {
        loop {
            let mut child = 2 * root + 1;
            if child >= end {
                return;
            }
            if child + 1 < end && v[child] < v[child + 1] {
                child += 1;
            }
            if v[root] >= v[child] {
                return;
            }
            v.swap(root, child);
            root = child;
        }
    }
    let n = v.len();
    for start in (0..n / 2).rev() {
        sift_down(v, start, n);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift_down(v, 0, end);
    }
}

/// Sorts `samples` in place and summarizes them.
pub fn summarize(samples: &mut [u64]) -> LatencySummary {
    heapsort(samples);
    let count = samples.len() as u64;
    let sum = samples.iter().fold(0u64, |a, v| a.saturating_add(*v));
    LatencySummary {
        count,
        p50_ns: percentile(samples, 50),
        p99_ns: percentile(samples, 99),
        max_ns: samples.last().copied().unwrap_or(0),
        mean_ns: sum.checked_div(count).unwrap_or(0),
    }
}

/// Operations per second for `count` operations in `elapsed_ns` (0 when no time passed;
/// saturates instead of overflowing).
pub fn ops_per_sec(count: u64, elapsed_ns: u64) -> u64 {
    if elapsed_ns == 0 {
        return 0;
    }
    count.saturating_mul(1_000_000_000) / elapsed_ns
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_cmd_latency))]
mod tests {
    use super::*;
    use crate::testing::ArrayVec;

    #[test]
    fn nearest_rank() {
        let v: ArrayVec<u64, 100> = (1..=100).collect();
        assert_eq!(percentile(&v, 50), 50);
        assert_eq!(percentile(&v, 99), 99);
        assert_eq!(percentile(&v, 100), 100);
        assert_eq!(percentile(&v, 0), 1);
        assert_eq!(percentile(&[7], 99), 7);
        assert_eq!(percentile(&[], 50), 0);
    }

    #[test]
    fn summary_sorts_and_averages() {
        let mut v = [30u64, 10, 20, 40];
        let s = summarize(&mut v);
        assert_eq!(v, [10, 20, 30, 40]);
        assert_eq!(
            s,
            LatencySummary {
                count: 4,
                p50_ns: 20,
                p99_ns: 40,
                max_ns: 40,
                mean_ns: 25
            }
        );
        assert_eq!(summarize(&mut []), LatencySummary::default());
    }

    #[test]
    fn throughput() {
        assert_eq!(ops_per_sec(1000, 1_000_000_000), 1000);
        assert_eq!(ops_per_sec(1, 1_000), 1_000_000);
        assert_eq!(ops_per_sec(5, 0), 0);
        assert_eq!(ops_per_sec(u64::MAX, 1), u64::MAX);
    }

    #[test]
    fn heapsort_sorts_and_keeps_every_value() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        // No reference sort: core's pulls code objtool rejects into the module. The
        // stack of a KUnit case is small: 300 values (2.4 KB) and 1,000 counts (2 KB).
        for n in [0usize, 1, 2, 3, 7, 64, 300] {
            let mut v: ArrayVec<u64, 300> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x % 1000
                })
                .collect();
            // How many times each value occurs, before and after.
            let mut count = [0u16; 1000];
            for &a in v.iter() {
                count[a as usize] += 1;
            }
            heapsort(&mut v);
            assert!(v.windows(2).all(|w| w[0] <= w[1]));
            for &a in v.iter() {
                count[a as usize] = count[a as usize].wrapping_sub(1);
            }
            assert!(count.iter().all(|&c| c == 0));
        }
    }
}
