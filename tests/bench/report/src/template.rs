//! The cells and labels of the tables are templates: literal text with figures in
//! braces, `{<statistic>:<key>}`. The statistics:
//!
//! | template | prints |
//! |---|---|
//! | `{get:K}` | the first value of K |
//! | `{n:K}` | how many values K has |
//! | `{med:K}` | median of K's values, 1 decimal |
//! | `{range:K}` | `min … max` of K's values, 1 decimal |
//! | `{num:K}` | how many of K's values are numbers |
//! | `{medus:K}` | median of K's values / 1000 (ns → µs), 1 decimal |
//! | `{rangeus:K}` | `min … max` of K's values / 1000, 1 decimal |
//! | `{ratio:A,B}` | median of A / median of B, 2 decimals and `×` (`?×` when either has no number or B's is 0) |
//! | `{f1:K}` / `{f3:K}` | K's first value, 1 / 3 decimals |
//! | `{int:K}` | K's first value, whole number |
//! | `{us:K}` | K's first value / 1000 (ns → µs, µs → ms), 1 decimal |
//! | `{back:K}` | K = pages left with the firmware after a graceful unload: nothing if 0, ` (?)` if unknown, else ` (RECLAIM INCOMPLETE: N left)` |
//! | `{freed:F,H}` | nothing if F's first value (pages freed) equals H's last (pages held), else ` (freed F of H)` |
//!
//! A missing figure is printed as `not measured`, in `{back}`/`{freed}` as `?`.

use crate::stats::{fmt, nz, Format, Values};

/// The text of `template` with its figures from `v`; an unknown statistic or an
/// unclosed brace is an error (the tests expand every row).
pub fn expand(template: &str, v: &Values) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| format!("unclosed '{{' in {template:?}"))?;
        out.push_str(&figure(&rest[open + 1..open + close], v)?);
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn figure(spec: &str, v: &Values) -> Result<String, String> {
    let (stat, key) = spec
        .split_once(':')
        .ok_or_else(|| format!("{{{spec}}}: not <statistic>:<key>"))?;
    if key.is_empty() {
        return Err(format!("{{{spec}}}: no key"));
    }
    Ok(match stat {
        "get" => nz(v.first(key)),
        "n" => v.count(key).to_string(),
        "med" => nz(v.median(key).as_deref()),
        "range" => nz(v.range(key).as_deref()),
        "num" => v.count_numbers(key).to_string(),
        "medus" => fmt(
            v.median_value(key).map(|m| m.to_string()).as_deref(),
            Format::Fixed(1),
            1000.0,
        ),
        "rangeus" => {
            let n = v.sorted_numbers(key);
            match (n.first(), n.last()) {
                (Some(a), Some(b)) => format!("{:.1} … {:.1}", a / 1000.0, b / 1000.0),
                _ => nz(None),
            }
        }
        "ratio" => {
            let (a, b) = key
                .split_once(',')
                .ok_or_else(|| format!("{{{spec}}}: ratio takes two keys"))?;
            match (v.median_value(a), v.median_value(b)) {
                (Some(x), Some(y)) if y != 0.0 => format!("{:.2}×", x / y),
                _ => "?×".to_string(),
            }
        }
        "f1" => fmt(v.first(key), Format::Fixed(1), 1.0),
        "f3" => fmt(v.first(key), Format::Fixed(3), 1.0),
        "int" => fmt(v.first(key), Format::Int, 1.0),
        "us" => fmt(v.first(key), Format::Fixed(1), 1000.0),
        "back" => match v.first(key) {
            Some("0") => String::new(),
            None => " (?)".to_string(),
            Some(h) => format!(" (RECLAIM INCOMPLETE: {h} left)"),
        },
        "freed" => {
            let (freed, held) = key
                .split_once(',')
                .ok_or_else(|| format!("{{{spec}}}: freed takes two keys"))?;
            match (v.first(freed), v.last(held)) {
                (Some(f), Some(h)) if f == h => String::new(),
                (f, h) => format!(" (freed {} of {})", f.unwrap_or("?"), h.unwrap_or("?")),
            }
        }
        _ => return Err(format!("{{{spec}}}: unknown statistic {stat:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v() -> Values {
        Values::parse(
            "BENCH a 1500\nBENCH a 2500\nBENCH a ?\nBENCH z 0\nBENCH h 7\n\
             BENCH f 10\nBENCH held 9\nBENCH held 10\nBENCH q ?",
        )
    }

    #[test]
    fn statistics() {
        let v = v();
        let e = |t| expand(t, &v).unwrap();
        assert_eq!(e("plain text (no figures)"), "plain text (no figures)");
        assert_eq!(e("{get:a} of {n:a}"), "1500 of 3");
        assert_eq!(e("{med:a} | {range:a}"), "2000.0 | 1500.0 … 2500.0");
        assert_eq!(
            e("{f1:a}/{f3:a}/{int:a}/{us:a}"),
            "1500.0/1500.000/1500/1.5"
        );
        assert_eq!(
            e("x{get:nope}y {med:nope} {range:nope} {us:q} {n:nope}"),
            "xnot measuredy not measured not measured not measured 0"
        );
        assert_eq!(
            e("{back:z}|{back:h}|{back:nope}"),
            "| (RECLAIM INCOMPLETE: 7 left)| (?)"
        );
        assert_eq!(e("{freed:f,held}"), "");
        assert_eq!(e("{freed:f,h}"), " (freed 10 of 7)");
        assert_eq!(e("{freed:nope,held}"), " (freed ? of 10)");
        // `?` is a value but not a number; the ratio of the medians (2000 / 7).
        assert_eq!(e("{n:a} {num:a} {num:q} {num:nope}"), "3 2 0 0");
        assert_eq!(
            e("{medus:a} | {rangeus:a} | {medus:q}"),
            "2.0 | 1.5 … 2.5 | not measured"
        );
        assert_eq!(
            e("{ratio:a,h} {ratio:h,a} {ratio:a,z} {ratio:a,q}"),
            "285.71× 0.00× ?× ?×"
        );
    }

    #[test]
    fn bad_templates() {
        let v = v();
        assert!(expand("{get:a", &v).is_err());
        assert!(expand("{mean:a}", &v).is_err());
        assert!(expand("{get}", &v).is_err());
        assert!(expand("{get:}", &v).is_err());
        assert!(expand("{freed:f}", &v).is_err());
        assert!(expand("{ratio:a}", &v).is_err());
    }
}
