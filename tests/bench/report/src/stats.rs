//! The figures of a run: every `BENCH <key> <value>` line, values kept per key in the
//! order they were printed, and the statistics the tables show.

use std::collections::HashMap;

/// Printed for a figure that is missing or not a number.
pub const NOT_MEASURED: &str = "not measured";

/// A guest's value for a figure whose path the driver does not have yet (an InfiniBand
/// verb it leaves out: tests/guest/ib-bench.py, ib-qp-bench.py).
pub const NA: &str = "na";
/// How the tables print [`NA`].
pub const NA_TEXT: &str = "n/a (verb missing)";

/// All values of every key, in log order.
#[derive(Debug, Default)]
pub struct Values {
    map: HashMap<String, Vec<String>>,
}

/// `BENCH <key> <value>` with key `[a-z0-9._]+` and value `[0-9.?-]+` or `na`, one space
/// each (the guests print `?` for a figure they could not read, `na` for one the driver
/// has no verb for); anything else is not a figure. Carriage returns are the caller's
/// to strip.
pub fn parse_bench_line(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.strip_prefix("BENCH ")?.split_once(' ')?;
    let key_ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '_';
    let value_ok = |c: char| c.is_ascii_digit() || c == '.' || c == '?' || c == '-';
    (!key.is_empty()
        && key.chars().all(key_ok)
        && (value == NA || (!value.is_empty() && value.chars().all(value_ok))))
    .then_some((key, value))
}

impl Values {
    /// The figures of a log text (lines that are not figures are skipped).
    pub fn parse(text: &str) -> Self {
        let mut v = Values::default();
        for line in text.lines() {
            if let Some((key, value)) = parse_bench_line(line) {
                v.map
                    .entry(key.to_string())
                    .or_default()
                    .push(value.to_string());
            }
        }
        v
    }

    /// All values of `key`, in log order.
    pub fn all(&self, key: &str) -> &[String] {
        self.map.get(key).map_or(&[], Vec::as_slice)
    }

    /// The first value of `key`.
    pub fn first(&self, key: &str) -> Option<&str> {
        self.all(key).first().map(String::as_str)
    }

    /// The last value of `key`.
    pub fn last(&self, key: &str) -> Option<&str> {
        self.all(key).last().map(String::as_str)
    }

    /// How many values `key` has (numbers or not).
    pub fn count(&self, key: &str) -> usize {
        self.all(key).len()
    }

    /// The numeric values of `key` (`-?[0-9.]+`), sorted.
    pub(crate) fn sorted_numbers(&self, key: &str) -> Vec<f64> {
        let mut n: Vec<f64> = self
            .all(key)
            .iter()
            .filter(|s| looks_numeric(s))
            .map(|s| leading_number(s))
            .collect();
        n.sort_by(f64::total_cmp);
        n
    }

    /// Median of the numeric values of `key` (mean of the middle two if even), one
    /// decimal; `None` without any.
    pub fn median(&self, key: &str) -> Option<String> {
        self.median_value(key).map(|m| format!("{m:.1}"))
    }

    /// Median of the numeric values of `key` (mean of the middle two if even); `None`
    /// without any.
    pub fn median_value(&self, key: &str) -> Option<f64> {
        let n = self.sorted_numbers(key);
        Some(match n.len() {
            0 => return None,
            l if l % 2 == 1 => n[l / 2],
            l => (n[l / 2 - 1] + n[l / 2]) / 2.0,
        })
    }

    /// How many of `key`'s values are numbers (a run whose figure was `?` is not).
    pub fn count_numbers(&self, key: &str) -> usize {
        self.sorted_numbers(key).len()
    }

    /// `min … max` of the numeric values of `key`, one decimal; `None` without any.
    pub fn range(&self, key: &str) -> Option<String> {
        let n = self.sorted_numbers(key);
        Some(format!("{:.1} … {:.1}", n.first()?, n.last()?))
    }
}

/// `-?[0-9.]+`: what the statistics take as a number.
fn looks_numeric(s: &str) -> bool {
    let d = s.strip_prefix('-').unwrap_or(s);
    !d.is_empty() && d.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// The longest prefix of `s` that is a decimal number (`-?[0-9]*(\.[0-9]*)?`), 0 when
/// none: `1.2.3` is 1.2, `.` is 0.
fn leading_number(s: &str) -> f64 {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    s[..i].parse().unwrap_or(0.0)
}

/// `-?[0-9]+(\.[0-9]+)?`: a figure the tables format; anything else is `not measured`.
pub fn is_number(s: &str) -> bool {
    let d = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = match d.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (d, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
    digits(int) && frac.is_none_or(digits)
}

/// How a figure is printed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Format {
    /// Fixed point with this many decimals.
    Fixed(usize),
    /// Whole number, truncated toward zero.
    Int,
}

/// `value / divisor` printed as `format`, `n/a (verb missing)` for [`NA`], or `not
/// measured` when `value` is missing or not a number.
pub fn fmt(value: Option<&str>, format: Format, divisor: f64) -> String {
    if value == Some(NA) {
        return NA_TEXT.to_string();
    }
    let Some(v) = value.filter(|v| is_number(v)) else {
        return NOT_MEASURED.to_string();
    };
    let x = v.parse::<f64>().unwrap_or(0.0) / divisor;
    match format {
        Format::Fixed(d) => format!("{x:.d$}"),
        // Saturating: a figure beyond i64 is not one the tables ever see.
        Format::Int => format!("{}", x.trunc() as i64),
    }
}

/// `value`, `n/a (verb missing)` for [`NA`], or `not measured` when missing.
pub fn nz(value: Option<&str>) -> String {
    match value {
        Some(NA) => NA_TEXT.to_string(),
        v => v.unwrap_or(NOT_MEASURED).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(lines: &[&str]) -> Values {
        Values::parse(&lines.join("\n"))
    }

    #[test]
    fn bench_lines() {
        assert_eq!(
            parse_bench_line("BENCH rs.probe_ms 12.5"),
            Some(("rs.probe_ms", "12.5"))
        );
        assert_eq!(
            parse_bench_line("BENCH td.16384.rs_fast_freed ?"),
            Some(("td.16384.rs_fast_freed", "?"))
        );
        assert_eq!(parse_bench_line("BENCH a -3"), Some(("a", "-3")));
        assert_eq!(
            parse_bench_line("BENCH rs.ib.mr_4k_us na"),
            Some(("rs.ib.mr_4k_us", "na"))
        );
        for bad in [
            "BENCH rs.probe_ms",
            "BENCH rs.probe_ms ",
            "BENCH Rs.probe_ms 1",
            "BENCH rs.probe_ms 1 2",
            "BENCH rs.probe_ms  1",
            "BENCH rs.probe_ms 1ms",
            "BENCH rs.probe_ms nan",
            "BENCH rs.probe_ms na?",
            "BENCH-NOTE rs.probe_ms 1",
            " BENCH rs.probe_ms 1",
            "BENCH-DONE",
        ] {
            assert_eq!(parse_bench_line(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn first_last_count() {
        let v = values(&["BENCH k 1", "noise", "BENCH k ?", "BENCH k 3", "BENCH j 9"]);
        assert_eq!(v.first("k"), Some("1"));
        assert_eq!(v.last("k"), Some("3"));
        assert_eq!(v.count("k"), 3);
        assert_eq!(v.count("missing"), 0);
        assert_eq!(v.first("missing"), None);
    }

    #[test]
    fn median_odd_even_and_non_numbers() {
        let v = values(&["BENCH o 3", "BENCH o 1", "BENCH o 20", "BENCH o ?"]);
        // Sorted numerically (not as text: "20" > "3").
        assert_eq!(v.median("o").as_deref(), Some("3.0"));
        let v = values(&["BENCH e 4", "BENCH e 1", "BENCH e 2", "BENCH e 10"]);
        assert_eq!(v.median("e").as_deref(), Some("3.0"));
        let v = values(&["BENCH e 237.15", "BENCH e 237.05"]);
        assert_eq!(v.median("e").as_deref(), Some("237.1"));
        let v = values(&["BENCH q ?"]);
        assert_eq!(v.median("q"), None);
        assert_eq!(v.median("missing"), None);
    }

    #[test]
    fn range_min_max() {
        let v = values(&["BENCH r 324.8", "BENCH r 186.1", "BENCH r -1", "BENCH r ?"]);
        assert_eq!(v.range("r").as_deref(), Some("-1.0 … 324.8"));
        let v = values(&["BENCH r 5"]);
        assert_eq!(v.range("r").as_deref(), Some("5.0 … 5.0"));
        assert_eq!(v.range("missing"), None);
    }

    #[test]
    fn numbers() {
        for ok in ["0", "12", "-3", "1.5", "-0.25"] {
            assert!(is_number(ok), "{ok}");
        }
        for bad in ["", "?", "-", "1.", ".5", "1.2.3", "1e3", "1-2", "--1"] {
            assert!(!is_number(bad), "{bad}");
        }
        assert_eq!(leading_number("1.2.3"), 1.2);
        assert_eq!(leading_number("."), 0.0);
        assert_eq!(leading_number("-7x"), -7.0);
    }

    #[test]
    fn formatting() {
        assert_eq!(fmt(Some("580912.3"), Format::Fixed(1), 1000.0), "580.9");
        assert_eq!(fmt(Some("1.5"), Format::Fixed(3), 1.0), "1.500");
        assert_eq!(fmt(Some("1694.9"), Format::Int, 1.0), "1694");
        assert_eq!(fmt(Some("-2.7"), Format::Int, 1.0), "-2");
        // Ties of exactly representable values round to even, as C's printf does.
        assert_eq!(fmt(Some("0.25"), Format::Fixed(1), 1.0), "0.2");
        assert_eq!(fmt(Some("0.75"), Format::Fixed(1), 1.0), "0.8");
        assert_eq!(fmt(Some("?"), Format::Fixed(1), 1.0), NOT_MEASURED);
        assert_eq!(fmt(None, Format::Int, 1.0), NOT_MEASURED);
        assert_eq!(nz(None), NOT_MEASURED);
        assert_eq!(nz(Some("7")), "7");
        assert_eq!(nz(Some(NA)), NA_TEXT);
        assert_eq!(fmt(Some(NA), Format::Fixed(1), 1000.0), NA_TEXT);
    }
}
