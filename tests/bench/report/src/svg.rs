//! A line plot with logarithmic axes as plain SVG: x on a log2 scale, y on a log10 scale;
//! each series is a polyline through its points in x order, with a marker and the
//! value as a label per point.

use std::fmt::Write;

/// A plot: title, axis labels, and the series in legend order (legend, points (x, y)).
pub struct Plot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<(String, Vec<(f64, f64)>)>,
}

const W: f64 = 1120.0;
const H: f64 = 560.0;
const L: f64 = 90.0;
const T: f64 = 50.0;
const PW: f64 = 560.0;
const PH: f64 = 430.0;
const COLOURS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
];

fn lg(v: f64, base: f64) -> f64 {
    v.ln() / base.ln()
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// C's `%g` (6 significant digits, trailing zeros dropped, exponent form outside
/// 1e-4 ≤ |x| < 1e6).
pub fn g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    // The exponent after rounding to 6 significant digits.
    let e: i32 = format!("{x:.5e}")
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if (-4..6).contains(&e) {
        let decimals = usize::try_from(5 - e).unwrap_or(0);
        trim(format!("{x:.decimals$}"))
    } else {
        let s = format!("{x:.5e}");
        let (m, _) = s.split_once('e').unwrap_or((&s, ""));
        let sign = if e < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(m.to_string()), e.unsigned_abs())
    }
}

/// A number as awk prints it in text: whole numbers as integers, others as `%.6g`.
fn n(x: f64) -> String {
    if x == x.trunc() && x.abs() < 2147483647.0 {
        format!("{}", x as i64)
    } else {
        g(x)
    }
}

/// A point is drawn when both coordinates are positive.
pub fn drawable(x: f64, y: f64) -> bool {
    x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite()
}

/// The plot as an SVG document.
pub fn render(p: &Plot) -> String {
    let mut o = String::new();
    // Writing to a String cannot fail.
    macro_rules! w { ($($a:tt)*) => { let _ = writeln!(o, $($a)*); } }
    w!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">", n(W), n(H));
    w!("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    w!(
        "<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">{}</text>",
        n(W / 2.0),
        esc(&p.title)
    );
    let series: Vec<(&str, Vec<(f64, f64)>)> = p
        .series
        .iter()
        .map(|(name, pts)| {
            let mut pts: Vec<(f64, f64)> = pts
                .iter()
                .copied()
                .filter(|&(x, y)| drawable(x, y))
                .collect();
            // Stable: points with the same x keep their order.
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (name.as_str(), pts)
        })
        .collect();
    let all = series.iter().flat_map(|(_, pts)| pts.iter().copied());
    let Some((x_min, x_max, y_min, y_max)) = all.fold(None, |acc, (x, y)| {
        Some(match acc {
            None => (x, x, y, y),
            Some((a, b, c, d)) => (
                f64::min(a, x),
                f64::max(b, x),
                f64::min(c, y),
                f64::max(d, y),
            ),
        })
    }) else {
        w!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">no data</text></svg>",
            n(W / 2.0),
            n(H / 2.0)
        );
        return o;
    };
    // x: from the power of two at or below the smallest point to the largest, with a
    // margin of 0.3 octaves; y: whole decades around the points.
    let mut x0 = lg(x_min, 2.0).floor();
    let mut x1 = lg(x_max, 2.0);
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    x0 -= 0.3;
    x1 += 0.3;
    let y0 = lg(y_min, 10.0).floor();
    let mut y1 = lg(y_max, 10.0).ceil();
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    let sx = |x: f64| L + (lg(x, 2.0) - x0) / (x1 - x0) * PW;
    let sy = |y: f64| T + PH - (lg(y, 10.0) - y0) / (y1 - y0) * PH;

    w!(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>",
        n(L),
        n(T),
        n(PW),
        n(PH)
    );
    let mut e = y0;
    while e <= y1 {
        for m in 1..10 {
            let v = lg(f64::from(m), 10.0) + e;
            if v > y1 {
                break;
            }
            let y = T + PH - (v - y0) / (y1 - y0) * PH;
            let stroke = if m == 1 { "#bbb" } else { "#eee" };
            w!(
                "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{stroke}\"/>",
                n(L),
                n(L + PW),
                n(y),
                n(y)
            );
            if m == 1 {
                w!(
                    "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                    L - 6.0,
                    y + 4.0,
                    g(10f64.powf(e))
                );
            }
        }
        e += 1.0;
    }
    let mut e = x0.trunc() + 1.0;
    while e <= x1 {
        let x = L + (e - x0) / (x1 - x0) * PW;
        w!(
            "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"#eee\"/>",
            n(x),
            n(x),
            n(T),
            n(T + PH)
        );
        w!(
            "<text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            T + PH + 16.0,
            2f64.powf(e) as i64
        );
        e += 1.0;
    }
    w!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        n(L + PW / 2.0),
        n(T + PH + 38.0),
        esc(&p.x_label)
    );
    w!(
        "<text transform=\"translate(24,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        n(T + PH / 2.0),
        esc(&p.y_label)
    );
    for (s, (name, pts)) in series.iter().enumerate() {
        let c = COLOURS[s % COLOURS.len()];
        if pts.len() > 1 {
            let line: String = pts
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1} ", sx(x), sy(y)))
                .collect();
            w!("<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" points=\"{line}\"/>");
        }
        for &(x, y) in pts {
            w!(
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"{c}\"/>",
                sx(x),
                sy(y)
            );
            w!(
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"{c}\">{}</text>",
                sx(x) + 6.0,
                sy(y) - 5.0,
                g(y)
            );
        }
        let ly = T + 10.0 + s as f64 * 20.0;
        w!(
            "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{c}\" stroke-width=\"2\"/>",
            n(L + PW + 14.0),
            n(L + PW + 40.0),
            n(ly),
            n(ly)
        );
        let missing = if pts.is_empty() {
            " (not measured)"
        } else {
            ""
        };
        w!(
            "<text x=\"{}\" y=\"{}\">{}{missing}</text>",
            n(L + PW + 46.0),
            n(ly + 4.0),
            esc(name)
        );
    }
    w!("</svg>");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_percent_g() {
        for (x, s) in [
            (1.0, "1"),
            (0.1, "0.1"),
            (100000.0, "100000"),
            (1e6, "1e+06"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (7838.7, "7838.7"),
            (0.609, "0.609"),
            (73070.1, "73070.1"),
            (999999.5, "1e+06"),
            (-2.5, "-2.5"),
            (0.0, "0"),
        ] {
            assert_eq!(g(x), s, "{x}");
        }
        assert_eq!(n(560.0), "560");
        assert_eq!(n(137.5), "137.5");
        assert_eq!(n(1.0 / 3.0), "0.333333");
    }

    #[test]
    fn no_data() {
        let p = Plot {
            title: "a < b".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![("s".into(), vec![(0.0, 1.0)])],
        };
        let s = render(&p);
        assert!(s.contains("a &lt; b"));
        assert!(s.contains(">no data</text></svg>"));
    }
}
