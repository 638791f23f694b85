//! `mlx5-bench-report [--pages N] [--td-points "P1 P2"] OUT`: writes `OUT/last.md` and
//! `OUT/teardown.svg` from the logs tests/bench/run.sh left in OUT (see `report.rs`).
//! `--pages` / `--td-points` are the teardown points when OUT does not record them.
//!
//! `mlx5-bench-report --host-upfast VM OUT`: writes `OUT/VM.host.log`, the timing of
//! upstream's fast teardown at VM's power-off from the emulator's final stats (see
//! `upfast.rs`); run after each VM.

use std::process::ExitCode;

use mlx5_bench_report::report::Run;

fn usage() -> ExitCode {
    eprintln!("usage: mlx5-bench-report [--pages N] [--td-points \"P1 P2\"] OUT");
    eprintln!("       mlx5-bench-report --host-upfast VM OUT");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut pages = "262144".to_string();
    let mut td_points = "16384 65536".to_string();
    let mut out = None;
    let mut upfast = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--pages" => match args.next() {
                Some(v) => pages = v,
                None => return usage(),
            },
            "--td-points" => match args.next() {
                Some(v) => td_points = v,
                None => return usage(),
            },
            "--host-upfast" => match args.next() {
                Some(v) => upfast = Some(v),
                None => return usage(),
            },
            _ if a.starts_with('-') || out.is_some() => return usage(),
            _ => out = Some(a),
        }
    }
    let Some(out) = out else {
        return usage();
    };
    if let Some(vm) = upfast {
        return match mlx5_bench_report::upfast::host_log(&out, &vm) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("mlx5-bench-report: {out}/{vm}.host.log: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let run = Run::read(&out, &pages, &td_points, cpus);
    let md = match run.markdown() {
        Ok(md) => md,
        Err(e) => {
            eprintln!("mlx5-bench-report: {e}");
            return ExitCode::FAILURE;
        }
    };
    for (file, text) in [("last.md", md), ("teardown.svg", run.svg())] {
        let p = std::path::Path::new(&out).join(file);
        if let Err(e) = std::fs::write(&p, text) {
            eprintln!("mlx5-bench-report: writing {}: {e}", p.display());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
