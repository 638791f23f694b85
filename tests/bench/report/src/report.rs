//! The report of a `make bench` run from what `tests/bench/run.sh` left in its output
//! directory: per VM `<vm>.console.log` (the guest's BENCH lines), `<vm>.host.log` (the
//! host's own, from the emulator's final stats), `<vm>.vm.log` (vm.sh's output and
//! judge verdict), `<vm>.rc`, `<vm>.secs`; and `commit`, `date`, `total.secs`, `pages`,
//! `td_points`, `loadavg`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::rows::{Cell, PLOT_SERIES, ROWS, TEARDOWN_COLUMNS};
use crate::stats::Values;
use crate::svg::{self, Plot};
use crate::template::expand;

/// The VMs of a run, in boot order.
pub const VMS: [&str; 6] = [
    "probe-nop",
    "teardown",
    "reclaim",
    "upfast",
    "ib",
    "recover",
];

/// The line that opens the guests' excerpt of upstream's kernel log.
const ERRORS_START: &str = "---- mlx5_core kernel log (errors/warnings) ----";

/// A run's output directory, read.
pub struct Run {
    /// The directory, as given (printed in the report).
    pub out: String,
    /// All consoles and host logs, VM by VM, carriage returns removed.
    pub logs: String,
    pub values: Values,
    pub commit: String,
    pub date: String,
    pub total_secs: String,
    /// The large teardown point.
    pub pages: String,
    /// The small teardown points, space-separated.
    pub td_points: String,
    /// QEMU's accelerator as vm.sh reported it, upper case.
    pub accel: String,
    /// CPUs of the host.
    pub host_cpus: usize,
}

fn path(out: &str, file: &str) -> PathBuf {
    Path::new(out).join(file)
}

/// A file's text (invalid UTF-8 replaced), `None` when it cannot be read.
fn read(p: &Path) -> Option<String> {
    fs::read(p)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// A file's content without its trailing newlines, like `$(cat FILE)`.
fn read_value(p: &Path) -> Option<String> {
    read(p).map(|s| s.trim_end_matches('\n').to_string())
}

impl Run {
    /// Reads `out`; `pages` and `td_points` are used when the run did not record them.
    pub fn read(out: &str, pages: &str, td_points: &str, host_cpus: usize) -> Run {
        let mut logs = String::new();
        for vm in VMS {
            for ext in ["console.log", "host.log"] {
                logs.push_str(&read(&path(out, &format!("{vm}.{ext}"))).unwrap_or_default());
            }
        }
        let logs = logs.replace('\r', "");
        let value = |f: &str, default: &str| {
            read_value(&path(out, f)).unwrap_or_else(|| default.to_string())
        };
        let vm_log = read(&path(out, "probe-nop.vm.log")).unwrap_or_default();
        let accel = vm_log
            .match_indices("booting (")
            .find_map(|(i, m)| {
                let rest = &vm_log[i + m.len()..];
                let end = rest
                    .find(|c: char| !c.is_ascii_lowercase())
                    .unwrap_or(rest.len());
                // "booting (tcg)" or, since vm.sh names the functions too,
                // "booting (tcg, 1 function(s))".
                (rest[end..].starts_with(')') || rest[end..].starts_with(','))
                    .then(|| rest[..end].to_ascii_uppercase())
            })
            .filter(|a| !a.is_empty())
            .unwrap_or_else(|| "?".to_string());
        Run {
            out: out.to_string(),
            values: Values::parse(&logs),
            logs,
            commit: value("commit", "?"),
            date: value("date", "?"),
            total_secs: value("total.secs", "?"),
            pages: value("pages", pages),
            td_points: value("td_points", td_points),
            accel,
            host_cpus,
        }
    }

    /// The teardown points: the small ones, then the large one.
    pub fn points(&self) -> Vec<&str> {
        self.td_points
            .split_whitespace()
            .chain(self.pages.split_whitespace())
            .collect()
    }

    /// The judge's verdict of VM `vm`, vm.sh's exit status and the VM's wall time.
    pub fn verdict(&self, vm: &str) -> String {
        let Some(log) = read(&path(&self.out, &format!("{vm}.vm.log"))) else {
            return "not run".to_string();
        };
        let judge = log
            .match_indices("vm: ")
            .filter_map(|(i, _)| verdict_at(&log[i..]))
            .last();
        let file = |ext: &str| {
            read_value(&path(&self.out, &format!("{vm}.{ext}"))).unwrap_or_else(|| "?".to_string())
        };
        let mut v = format!(
            "{}, exit {}, {} s",
            judge.unwrap_or("no verdict"),
            file("rc"),
            file("secs")
        );
        let console = read(&path(&self.out, &format!("{vm}.console.log"))).unwrap_or_default();
        if !console.contains("BENCH-DONE") {
            v.push_str(", GUEST DID NOT FINISH");
        }
        v
    }

    /// The guest kernel's release, from the first `kernel <digit>…` in probe-nop's console.
    fn kernel(&self) -> String {
        let console = read(&path(&self.out, "probe-nop.console.log")).unwrap_or_default();
        let release = console.match_indices("kernel ").find_map(|(i, m)| {
            let rest = &console[i + m.len()..];
            let end = rest.find([' ', ',', '\n']).unwrap_or(rest.len());
            rest.starts_with(|c: char| c.is_ascii_digit())
                .then(|| rest[..end].replace('\r', ""))
        });
        release.unwrap_or_default()
    }

    /// `name 1m 5m 15m` per VM, as run.sh appended them after each VM.
    fn loads(&self) -> String {
        let text = read(&path(&self.out, "loadavg")).unwrap_or_default();
        let loads: Vec<String> = text
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let at = |i: usize| f.get(i).copied().unwrap_or("");
                format!("{} {} {} {}", at(0), at(1), at(2), at(3))
            })
            .collect();
        if loads.is_empty() {
            "not recorded".to_string()
        } else {
            loads.join("; ")
        }
    }

    /// The plot of teardown time against pages held.
    pub fn plot(&self) -> Plot {
        let points = self.points();
        Plot {
            title: format!(
                "Teardown time against firmware pages held (emulated ConnectX, {}, {})",
                self.accel, self.date
            ),
            x_label: "firmware pages held (demanded at init; 4 KiB each)".to_string(),
            y_label: "teardown time, ms (log scale)".to_string(),
            series: PLOT_SERIES
                .iter()
                .map(|&(legend, key)| {
                    let pts = points
                        .iter()
                        .filter_map(|p| {
                            let y = self.values.first(&key.replace("{P}", p))?;
                            Some((plot_number(p)?, plot_number(y)?))
                        })
                        .collect();
                    (legend.to_string(), pts)
                })
                .collect(),
        }
    }

    /// The SVG of [`Run::plot`].
    pub fn svg(&self) -> String {
        svg::render(&self.plot())
    }

    /// The report (`last.md`).
    pub fn markdown(&self) -> Result<String, String> {
        let v = &self.values;
        let cell = |c: &Cell| match *c {
            Cell::T(t) => expand(t, v),
            Cell::Na(why) => Ok(format!("n/a ({why})")),
        };
        let mut o = String::new();
        let mut line = |s: &str| {
            o.push_str(s);
            o.push('\n');
        };
        line(&format!(
            "# mlx5_rs vs upstream mlx5_core on the emulated ConnectX ({})",
            self.date
        ));
        line("");
        line("| metric | mlx5_rs | upstream mlx5_core | unit |");
        line("|---|---|---|---|");
        for r in ROWS {
            line(&format!(
                "| {} | {} | {} | {} |",
                expand(r.0, v)?,
                cell(&r.1)?,
                cell(&r.2)?,
                r.3
            ));
        }
        line("");
        line("Teardown time against pages held (ms; graceful = page reclaim before DISABLE_HCA; fast = no reclaim; device-side = emulator timeline: graceful TEARDOWN_HCA → DISABLE_HCA, fast prepare-fast TEARDOWN_HCA → nic_interface DISABLED; upstream fast only runs at power-off, so only device-side):");
        line("");
        let headers: Vec<&str> = TEARDOWN_COLUMNS.iter().map(|c| c.0).collect();
        line(&format!("| {} |", headers.join(" | ")));
        line(&format!("|{}", "---|".repeat(headers.len())));
        for p in self.points() {
            let cells = TEARDOWN_COLUMNS
                .iter()
                .map(|c| expand(&c.1.replace("{P}", p), v))
                .collect::<Result<Vec<_>, _>>()?;
            line(&format!("| {} |", cells.join(" | ")));
        }
        line("");
        line(&format!("Plot: {}/teardown.svg", self.out));
        line("");
        line(&format!("Conditions: {}, 2 vCPUs, 2 GiB guest RAM, host {} CPUs shared (load average 1/5/15 min after each VM: {});", self.accel, self.host_cpus, self.loads()));
        line(&format!(
            "guest kernel {} with lockdep, kmemleak, DMA-API debug (tests/kernel/mlx5-rs.config);",
            self.kernel()
        ));
        line(&format!("emulator mlx5-emu (default page demands, set per point with set_pages; --init-pages {} for the 1 GiB VMs); mlx5_rs at {}; date {}; make bench took {} s.", self.pages, self.commit, self.date, self.total_secs));
        let vms: Vec<String> = VMS
            .iter()
            .map(|vm| format!("{vm}: {}", self.verdict(vm)))
            .collect();
        line(&format!(
            "VM runs: {} (judge verdicts; consoles in {}/).",
            vms.join("; "),
            self.out
        ));
        let notes: Vec<&str> = self
            .logs
            .lines()
            .filter_map(|l| l.strip_prefix("BENCH-NOTE "))
            .collect();
        if !notes.is_empty() {
            line("");
            line("Notes:");
            for n in notes {
                line(&format!("- {n}"));
            }
        }
        let errors = self.upstream_errors();
        if !errors.is_empty() {
            line("");
            line("Upstream mlx5_core errors/warnings in dmesg:");
            for e in errors {
                line(&format!("    {e}"));
            }
        }
        Ok(o)
    }

    /// The kernel log lines (`[…`) of the guests' excerpts of upstream's errors and
    /// warnings (from the opening line to the next line of dashes), sorted, each once.
    fn upstream_errors(&self) -> Vec<&str> {
        let mut inside = false;
        let mut out: Vec<&str> = Vec::new();
        for l in self.logs.lines() {
            if !inside {
                inside = l == ERRORS_START;
            } else {
                if l.len() >= 4 && l.bytes().all(|b| b == b'-') {
                    inside = false;
                }
                if l.starts_with('[') {
                    out.push(l);
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// `vm: N passed, M failed` at the start of `s` (N and M digits, maybe none).
fn verdict_at(s: &str) -> Option<&str> {
    let digits = |i: usize| i + s[i..].bytes().take_while(u8::is_ascii_digit).count();
    let i = digits("vm: ".len());
    let i = digits(
        i + s
            .get(i..)?
            .strip_prefix(" passed, ")
            .map(|_| " passed, ".len())?,
    );
    s.get(i..)?
        .starts_with(" failed")
        .then(|| &s[..i + " failed".len()])
}

/// A plot coordinate: an unsigned decimal (`[0-9]*\.?[0-9]+`, optional exponent).
fn plot_number(s: &str) -> Option<f64> {
    let mantissa = s.split(['e', 'E']).next().unwrap_or("");
    let ok = !mantissa.is_empty()
        && mantissa.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && mantissa.bytes().filter(|&b| b == b'.').count() <= 1
        && !mantissa.ends_with('.');
    if !ok {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        assert_eq!(
            verdict_at("vm: 8 passed, 0 failed (x)"),
            Some("vm: 8 passed, 0 failed")
        );
        assert_eq!(
            verdict_at("vm: 8 passed, 12 failed"),
            Some("vm: 8 passed, 12 failed")
        );
        assert_eq!(verdict_at("vm: booting (tcg)"), None);
        assert_eq!(verdict_at("vm: 8 passed"), None);
    }

    #[test]
    fn plot_numbers() {
        assert_eq!(plot_number("16384"), Some(16384.0));
        assert_eq!(plot_number("0.609"), Some(0.609));
        assert_eq!(plot_number(".5"), Some(0.5));
        assert_eq!(plot_number("1e3"), Some(1000.0));
        for bad in ["", "?", "-1", "1.", "1.2.3", "abc"] {
            assert_eq!(plot_number(bad), None, "{bad}");
        }
    }

    #[test]
    fn rows_expand() {
        // Every template of the tables is well-formed (an error would only show in a run).
        let v = Values::default();
        for r in ROWS {
            for c in [&r.1, &r.2] {
                if let Cell::T(t) = c {
                    expand(t, &v).unwrap();
                }
            }
            expand(r.0, &v).unwrap();
        }
        for c in TEARDOWN_COLUMNS {
            expand(&c.1.replace("{P}", "16384"), &v).unwrap();
        }
    }
}
