//! Upstream's fast teardown at power-off, timed from the emulator's final stats.
//!
//! Upstream runs its fast teardown only from its PCI shutdown callback, so a guest that
//! wants it timed leaves upstream bound and prints `BENCH upfast.pages P` and
//! `BENCH upfast.held H` (pages the emulator held). When QEMU disconnects, the emulator
//! logs `mlx5-emu: final stats: {json}` (the `stats` reply, see emu/README.md); its
//! `timeline.fast_teardown_us` is prepare-fast TEARDOWN_HCA → nic_interface DISABLED.
//! The figure counts only if that was the one prepare since the guest's last function
//! reset (no graceful or force teardown), the function quiesced and the pages were not
//! reclaimed; otherwise a note says what the emulator saw. The lines go to
//! `<vm>.host.log`, read by the report with the consoles.

use std::fs;
use std::path::Path;

use serde_json::Value;

/// The last `BENCH <key> <digits>` of a console.
fn last_figure(console: &str, key: &str) -> Option<String> {
    let prefix = format!("BENCH {key} ");
    console
        .lines()
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .rfind(|v| v.bytes().all(|b| b.is_ascii_digit()))
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// Python's `str()` of a JSON scalar, as the notes print it.
fn show(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "None".to_string(),
        Some(Value::Bool(true)) => "True".to_string(),
        Some(Value::Bool(false)) => "False".to_string(),
        Some(v) => v.to_string(),
    }
}

/// The host's lines for VM `vm` whose guest left upstream bound with `pages` demanded
/// and `held` held, from the final stats `json`. Lines made before a malformed field
/// are kept; the error says which field.
pub fn lines(json: &str, pages: &str, held: u64, vm: &str) -> (Vec<String>, Result<(), String>) {
    let mut out = Vec::new();
    let r = figures(json, pages, held, vm, &mut out);
    (out, r)
}

fn figures(json: &str, p: &str, held: u64, vm: &str, out: &mut Vec<String>) -> Result<(), String> {
    let d: Value = serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
    let field = |v: &Value, path: &[&str]| -> Result<Value, String> {
        let mut v = v;
        for k in path {
            v = v.get(k).ok_or_else(|| format!("no {}", path.join(".")))?;
        }
        Ok(v.clone())
    };
    let int = |path: &[&str]| -> Result<u64, String> {
        field(&d, path)?
            .as_u64()
            .ok_or_else(|| format!("{} is not a count", path.join(".")))
    };
    let timeline = d.get("timeline");
    let at = |k: &str| timeline.and_then(|t| t.get(k)).filter(|v| !v.is_null());
    let us = at("fast_teardown_us");
    let prepare = int(&["function", "teardowns", "prepare_fast"])?;
    let graceful = int(&["function", "teardowns", "graceful"])?;
    let force = int(&["function", "teardowns", "force"])?;
    let quiesced = field(&d, &["function", "quiesced"])?;
    match us.and_then(Value::as_f64) {
        Some(us) if prepare == 1 && graceful + force == 0 && quiesced == Value::Bool(true) => {
            out.push(format!("BENCH td.{p}.up_fast_dev_ms {:.3}", us / 1000.0));
        }
        _ => out.push(format!(
            "BENCH-NOTE {vm}: upstream power-off with {p} pages: no fast teardown seen by the emulator \
             (prepare_fast {prepare}, graceful {graceful}, force {force}, quiesced {}, fast_teardown_us {})",
            show(Some(&quiesced)),
            show(us)
        )),
    }
    let after = int(&["pages", "held"])?;
    out.push(format!("BENCH td.{p}.up_fast_held_after {after}"));
    if after != held {
        out.push(format!(
            "BENCH-NOTE {vm}: upstream power-off with {p} pages: the emulator held {held} pages before, {after} after"
        ));
    }
    out.push(format!(
        "BENCH td.{p}.up_fast_violations {}",
        int(&["violations"])?
    ));
    if let (Some(ld), Some(nd)) = (
        at("last_doorbell_ms").and_then(Value::as_f64),
        at("nic_disabled_ms").and_then(Value::as_f64),
    ) {
        if ld > nd {
            out.push(format!(
                "BENCH-NOTE {vm}: upstream power-off with {p} pages: a doorbell {:.3} ms after nic_interface DISABLED",
                ld - nd
            ));
        }
    }
    Ok(())
}

/// For VM `vm` of the run in `out`: `<vm>.host.log` from `<vm>.console.log` and
/// `<vm>.emu.log` (and the final stats alone in `<vm>.final-stats.json`); nothing when
/// the guest did not leave upstream bound.
pub fn host_log(out: &str, vm: &str) -> std::io::Result<()> {
    let file = |ext: &str| Path::new(out).join(format!("{vm}.{ext}"));
    for ext in ["host.log", "final-stats.json"] {
        match fs::remove_file(file(ext)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    let read = |ext: &str| {
        fs::read(file(ext))
            .map(|b| String::from_utf8_lossy(&b).replace('\r', ""))
            .unwrap_or_default()
    };
    let console = read("console.log");
    let (Some(p), Some(h)) = (
        last_figure(&console, "upfast.pages"),
        last_figure(&console, "upfast.held"),
    ) else {
        return Ok(());
    };
    const STATS: &str = "mlx5-emu: final stats: ";
    let emu = read("emu.log");
    let stats = emu
        .lines()
        .filter_map(|l| l.find(STATS).map(|i| &l[i + STATS.len()..]))
        .next_back()
        .unwrap_or("");
    fs::write(
        file("final-stats.json"),
        if stats.is_empty() {
            String::new()
        } else {
            format!("{stats}\n")
        },
    )?;
    let text = if stats.is_empty() {
        format!("BENCH-NOTE {vm}: no final stats in the emulator log: upstream fast teardown with {p} pages not measured\n")
    } else {
        let held = h.parse().unwrap_or(u64::MAX);
        let (mut l, r) = lines(stats, &p, held, vm);
        if let Err(e) = r {
            l.push(format!(
                "BENCH-NOTE {vm}: parsing the emulator's final stats failed ({e})"
            ));
        }
        l.iter().map(|s| format!("{s}\n")).collect()
    };
    fs::write(file("host.log"), text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(
        prepare: u32,
        graceful: u32,
        quiesced: &str,
        us: &str,
        held: u64,
        doorbell: &str,
    ) -> String {
        format!(
            r#"{{"ok":true,"function":{{"quiesced":{quiesced},"teardowns":{{"graceful":{graceful},"force":0,"prepare_fast":{prepare}}}}},
               "pages":{{"held":{held}}},"violations":0,
               "timeline":{{"fast_teardown_us":{us},"last_doorbell_ms":{doorbell},"nic_disabled_ms":100.0}}}}"#
        )
    }

    #[test]
    fn fast_teardown_seen() {
        let (l, r) = lines(
            &stats(1, 0, "true", "1534", 16448, "99.5"),
            "16384",
            16448,
            "probe-nop",
        );
        assert_eq!(r, Ok(()));
        assert_eq!(
            l,
            [
                "BENCH td.16384.up_fast_dev_ms 1.534",
                "BENCH td.16384.up_fast_held_after 16448",
                "BENCH td.16384.up_fast_violations 0",
            ]
        );
    }

    #[test]
    fn not_the_one_fast_teardown() {
        for (s, why) in [
            (
                stats(2, 0, "true", "1534", 7, "null"),
                "(prepare_fast 2, graceful 0, force 0, quiesced True, fast_teardown_us 1534)",
            ),
            (
                stats(1, 1, "true", "1534", 7, "null"),
                "(prepare_fast 1, graceful 1, force 0, quiesced True, fast_teardown_us 1534)",
            ),
            (
                stats(1, 0, "false", "1534", 7, "null"),
                "(prepare_fast 1, graceful 0, force 0, quiesced False, fast_teardown_us 1534)",
            ),
            (
                stats(1, 0, "true", "null", 7, "null"),
                "(prepare_fast 1, graceful 0, force 0, quiesced True, fast_teardown_us None)",
            ),
        ] {
            let (l, r) = lines(&s, "65536", 7, "teardown");
            assert_eq!(r, Ok(()));
            assert_eq!(l[0], format!("BENCH-NOTE teardown: upstream power-off with 65536 pages: no fast teardown seen by the emulator {why}"));
            assert_eq!(l[1], "BENCH td.65536.up_fast_held_after 7");
            assert_eq!(l.len(), 3);
        }
    }

    #[test]
    fn pages_reclaimed_and_late_doorbell() {
        let (l, r) = lines(
            &stats(1, 0, "true", "1745", 0, "102.25"),
            "262144",
            262208,
            "upfast",
        );
        assert_eq!(r, Ok(()));
        assert_eq!(l[2], "BENCH-NOTE upfast: upstream power-off with 262144 pages: the emulator held 262208 pages before, 0 after");
        assert_eq!(l[4], "BENCH-NOTE upfast: upstream power-off with 262144 pages: a doorbell 2.250 ms after nic_interface DISABLED");
    }

    #[test]
    fn malformed() {
        let (l, r) = lines("{\"function\":", "1", 1, "x");
        assert!(l.is_empty() && r.unwrap_err().starts_with("not JSON"));
        // The figure is kept, the missing field reported.
        let s = stats(1, 0, "true", "1000", 1, "null").replace(r#""violations":0,"#, "");
        let (l, r) = lines(&s, "1", 1, "x");
        assert_eq!(l.len(), 2);
        assert_eq!(r, Err("no violations".to_string()));
    }

    #[test]
    fn host_log_files() {
        let dir = std::env::temp_dir().join(format!("mlx5-bench-upfast-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let out = dir.to_str().unwrap();
        let w = |f: &str, t: &str| fs::write(dir.join(f), t).unwrap();
        let host = || fs::read_to_string(dir.join("vm.host.log")).ok();
        // Upstream not left bound: no host log (and a stale one removed).
        w("vm.console.log", "BENCH upfast.pages 16384\r\n");
        w("vm.host.log", "stale");
        host_log(out, "vm").unwrap();
        assert_eq!(host(), None);
        // No final stats.
        w(
            "vm.console.log",
            "BENCH upfast.pages 1\r\nBENCH upfast.pages 16384\r\nBENCH upfast.held 16448\r\n",
        );
        w("vm.emu.log", "mlx5-emu: listening\n");
        host_log(out, "vm").unwrap();
        assert_eq!(host().unwrap(), "BENCH-NOTE vm: no final stats in the emulator log: upstream fast teardown with 16384 pages not measured\n");
        // The last final stats line counts.
        let s = stats(1, 0, "true", "1534", 16448, "null");
        w(
            "vm.emu.log",
            &format!(
                "x mlx5-emu: final stats: {{}}\n[emu] mlx5-emu: final stats: {}\nbye\n",
                s.replace('\n', "")
            ),
        );
        host_log(out, "vm").unwrap();
        let h = host().unwrap();
        assert!(
            h.starts_with(
                "BENCH td.16384.up_fast_dev_ms 1.534\nBENCH td.16384.up_fast_held_after 16448\n"
            ),
            "{h}"
        );
        assert!(fs::read_to_string(dir.join("vm.final-stats.json"))
            .unwrap()
            .starts_with("{\"ok\":true"));
        // Unparsable.
        w("vm.emu.log", "mlx5-emu: final stats: {\"ok\":\n");
        host_log(out, "vm").unwrap();
        assert!(host()
            .unwrap()
            .starts_with("BENCH-NOTE vm: parsing the emulator's final stats failed (not JSON"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
