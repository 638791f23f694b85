//! The report of captured runs against the expected `last.md` and `teardown.svg`.
//!
//! Fixtures (`tests/fixtures/`): `full/` is a run's output directory as tests/bench/run.sh
//! leaves it, with the figures of the run in Documentation/benchmarks.md ("Measured"),
//! consoles trimmed to the lines the report reads (BENCH, BENCH-NOTE, BENCH-DONE, the
//! kernel release, upstream's error excerpt) plus a little noise, with the serial
//! console's `\r\n`. `partial/` is the same run gone wrong: a `?` probe figure and an
//! even number of upstream probes, the polling 32-caller storm missing, a graceful
//! unload leaving pages, a fast unload whose freed count is `?`, a device-side figure
//! `?`, the teardown guest not finishing, no verdict for `reclaim`, `upfast` not run,
//! no load averages, and an `ib` VM that did not finish (upstream's figures stop before
//! its 1 GiB registration; ours has no MR or QP verbs: `na`). `full/`'s `ib` VM is
//! the first complete one (2026-12-01 21:52 UTC), joined to the older run, with the
//! data-path lines of both drivers (`rs.dp.*`, `up.dp.*`, `rs.kv.*`, `up.kv.*`) of a
//! boot of tests/bench/guest-dp.sh of 2026-12-05 09:13 UTC (its perftest figures that
//! perftest printed as 0 or inf written `?` with the notes the guest now prints). The expected `<name>.last.md` and `<name>.teardown.svg` are what
//! the shell reporter this program replaced (run.sh + plot.awk) printed for them, with
//! the output directory written as `OUT`.

use std::path::PathBuf;

use mlx5_bench_report::report::Run;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn run(name: &str) -> Run {
    let dir = fixture(name);
    Run::read(dir.to_str().unwrap(), "262144", "16384 65536", 2)
}

fn expected(file: &str) -> String {
    std::fs::read_to_string(fixture(file)).unwrap()
}

/// `got` equals the expected file `file`; with `MLX5_BENCH_REPORT_BLESS=1` in the
/// environment, `got` becomes the expected file instead (after a change of the rows:
/// review the diff of the fixtures).
fn assert_expected(got: &str, file: &str) {
    if std::env::var_os("MLX5_BENCH_REPORT_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(fixture(file), got).unwrap();
    }
    assert_same(got, &expected(file), file);
}

/// The first line that differs, for a readable failure.
fn assert_same(got: &str, want: &str, what: &str) {
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        assert_eq!(g, w, "{what}: line {} differs", i + 1);
    }
    assert_eq!(
        got.lines().count(),
        want.lines().count(),
        "{what}: line count"
    );
    assert_eq!(got, want, "{what}: line endings");
}

fn markdown(name: &str) -> String {
    let r = run(name);
    r.markdown().unwrap().replace(&r.out, "OUT")
}

#[test]
fn full_run_markdown() {
    let md = markdown("full");
    assert_expected(&md, "full.last.md");
    // The figures of the documented run, spot-checked independently of the file.
    assert!(md.contains("| probe-to-ready, min … max | 186.1 … 324.8 | 1367.5 … 2172.1 | ms |"));
    assert!(md.contains("| 262144 (262208 / 262208) | 8711.4 | 0.778 | 8176.1 | 15910.9 | 15311.2 | 15306.0 | 73070.1 | 69428.0 | 1.745 | 38579.0 / 85204.7 |"));
    // Only data-path figures are missing: the guest-CPU rows and dp-dv's count, which
    // the captured data-path boot (2026-12-05 14:37 UTC, cut off by its timeout in
    // mlx5_rs's fourth round) predates or did not reach; every other figure was measured.
    let missing: Vec<&str> = md.lines().filter(|l| l.contains("not measured")).collect();
    assert!(
        missing
            .iter()
            .all(|l| l.contains("the guest's two vCPUs") || l.starts_with("| what libmlx5")),
        "{missing:#?}"
    );
    assert!(md.contains("- dp: up send_lat_64 client: perftest's row has 0, inf or nan where a figure is read: inf inf inf inf -nan inf inf"));
    // The `ib` VM: ours has no MR or QP verbs yet.
    assert!(md.contains("| MR registration, 1 GiB, once | n/a (verb missing) | 6212.9 | ms |"));
    assert!(md.contains("| QP RESET → INIT → RTR → RTS (three ibv_modify_qp), median | n/a (verb missing) | 110554.2 | µs |"));
    // The data path in interleaved rounds: the median of the runs that gave a number
    // (perftest printed 0.00 / inf for one of mlx5_rs's three ib_write_bw 64 B runs), the
    // spread and ours / upstream of the medians.
    assert!(md.contains("| ib_write_bw 64 B: message rate, median of 2 / 4 runs (min … max; mlx5_rs / upstream of the medians) (perftest MsgRate; iterations: 1000) | 3641.5 (2897.0 … 4386.0; 0.60×) | 6097.5 (2752.0 … 8600.0) | msg/s |"));
    assert!(md.contains("| ib_write_bw 64 KiB: message rate, median of 3 / 3 runs (min … max; mlx5_rs / upstream of the medians) (perftest MsgRate; iterations: 1000 / 4) | 1382.0 (968.0 … 1569.0; 0.81×) | 1696.0 (1112.0 … 2836.0) | msg/s |"));
    assert!(md.contains("| ib_send_bw 64 KiB: message rate of the receiver, median (perftest MsgRate of the server; mlx5_rs / upstream of the medians) | 2167.0 (0.85×) | 2541.5 | msg/s |"));
    assert!(md.contains("| ib_send_bw 64 KiB: emulator time per message (its doorbell time over the run / messages) of the time per message (1 / message rate), share, medians | 877.9 of 1044.9 (67.2 %) | 553.3 of 770.4 (69.1 %) | µs |"));
    assert!(md.contains("| ib_write_lat 64 B: latency, typical (perftest's median of the run), median of 3 / 4 runs (min … max; mlx5_rs / upstream of the medians, lower is better) (one way; iterations: 500) | 8623.5 (6536.2 … 11035.7; 1.01×) | 8501.7 (6472.1 … 13614.3) | µs |"));
    assert!(md.contains("| ib_write_bw 64 B: the emulator's counters over a run, medians: UAR write messages / CQEs written (of them 128-byte) / CQ arms / completion events / interrupts / memory-key translations (equal counts: libmlx5 took the same path on both) | 1037.0 / 14.0 (0.0) / 0.0 / 0.0 / 33.0 / 3002.0 | 1138.5 / 14.0 (0.0) / 4.0 / 3.5 / 46.0 / 3002.0 | count |"));
    assert!(md.contains("| data-path runs, wall time of one round of the eight (perftest pairs included), median of 3 / 4 rounds (min … max) | 326.0 (205.0 … 367.0) | 302.0 (275.0 … 380.0) | s |"));
    // The kernel verbs' own cost (ib_kclient bench=20000), both drivers.
    assert!(md.contains("| kernel verbs: ib_post_send, per work request (one call and one doorbell per chain of 32 / 32; 20000 / 20000 SENDs; ib_kclient steps ok 4 / 4 of 4) | 26321 | 2786 | ns |"));
    assert!(md.contains("| kernel verbs: the emulator's send WQEs / doorbells over the loop (module load to return) | 20000 / 2500 | 20000 / 625 | count |"));
    assert!(md.contains("| kernel verbs: ib_poll_cq, per send CQE (the calls that returned CQEs; empty polls, not timed: 6841 / 107) | 9751 | 1350 | ns |"));
    assert!(md.contains("(n=361 / 562; rounds whose handler ran before the post returned, not sampled: 264 / 63) | 822.6 / 1394.3 | 332.0 / 684.8 | µs |"));
}

#[test]
fn partial_run_markdown() {
    let md = markdown("partial");
    assert_expected(&md, "partial.last.md");
    assert!(
        md.contains("| 237.1 (n=6) | 1719.3 (n=6) | ms |"),
        "? counted, not in the median; even median"
    );
    assert!(md.contains(
        "(rs: nop_storm, not measured NOPs, not measured errors) | not measured | n/a ("
    ));
    assert!(md.contains("| 7065.4 (freed ? of 65600) |"));
    assert!(md.contains("| 16953.1 (RECLAIM INCOMPLETE: 12 left) |"));
    assert!(md.contains(
        "313 s, GUEST DID NOT FINISH; reclaim: no verdict, exit 0, 333 s; upfast: not run; ib: vm: 0 passed, 1 failed, exit 143, 1140 s, GUEST DID NOT FINISH; recover: not run ("
    ));
    assert!(md.contains("after each VM: not recorded);"));
    // The `ib` VM: ours has no MR or QP verbs yet, upstream's run stopped before its
    // 1 GiB registration.
    assert!(md.contains("| MR registration, 4 KiB (ibv_reg_mr, pages touched before), median | n/a (verb missing) | 43827.0 | µs |"));
    assert!(md.contains("| MR registration, 1 GiB, once | not measured | not measured | ms |"));
    assert!(md.contains("(rs: insmod; upstream: modprobe mlx5_ib, mlx5_core with it; n=3 / 3) | 16794.2 | 70581.8 | ms |"));
}

/// The SVG is well-formed: every element closed in order, quotes balanced, `&` only in
/// entities.
fn check_well_formed(svg: &str) {
    let mut open: Vec<&str> = Vec::new();
    let mut rest = svg;
    while let Some(lt) = rest.find('<') {
        let text = &rest[..lt];
        assert!(!text.contains('>'), "stray '>' in {text:?}");
        for (i, _) in text.match_indices('&') {
            let t = &text[i..];
            assert!(
                ["&amp;", "&lt;", "&gt;"].iter().any(|e| t.starts_with(e)),
                "bare '&' in {text:?}"
            );
        }
        let gt = rest[lt..].find('>').expect("unclosed tag") + lt;
        let tag = &rest[lt + 1..gt];
        assert_eq!(
            tag.matches('"').count() % 2,
            0,
            "unbalanced quotes in <{tag}>"
        );
        assert!(!tag.contains('<'), "'<' inside <{tag}>");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(open.pop(), Some(name), "</{name}> closes the wrong element");
        } else if !tag.ends_with('/') {
            open.push(tag.split_whitespace().next().expect("empty tag"));
        }
        rest = &rest[gt + 1..];
    }
    assert!(rest.trim().is_empty(), "text after the root: {rest:?}");
    assert!(open.is_empty(), "not closed: {open:?}");
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
}

fn svg(name: &str, points: usize, polylines: usize) {
    let s = run(name).svg();
    check_well_formed(&s);
    assert_eq!(s.matches("<circle ").count(), points, "{name}: markers");
    assert_eq!(s.matches("<polyline ").count(), polylines, "{name}: lines");
    // One legend entry per series.
    assert_eq!(
        s.matches("stroke-width=\"2\"/>").count(),
        5,
        "{name}: legend"
    );
    assert_expected(&s, &format!("{name}.teardown.svg"));
}

#[test]
fn full_run_svg() {
    // 5 series × 3 points, each series a line.
    svg("full", 15, 5);
}

#[test]
fn partial_run_svg() {
    // Upstream fast at 1 GiB missing (upfast not run): 14 points, and that series still
    // has a line and no "(not measured)" in its legend.
    svg("partial", 14, 5);
    assert!(run("partial")
        .svg()
        .contains(">upstream fast (power-off, device-side prepare → DISABLED)</text>"));
}

#[test]
fn nothing_measured() {
    let dir = std::env::temp_dir().join(format!("mlx5-bench-report-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let r = Run::read(dir.to_str().unwrap(), "262144", "16384 65536", 2);
    let md = r.markdown().unwrap();
    let s = r.svg();
    std::fs::remove_dir_all(&dir).unwrap();
    check_well_formed(&s);
    assert!(s.contains(">no data</text>"));
    assert!(s.contains("(emulated ConnectX, ?, ?)"));
    assert!(md.contains(
        "| 16384 (not measured / not measured) | not measured (freed ? of ?) | not measured |"
    ));
    assert!(md.contains(
        "VM runs: probe-nop: not run; teardown: not run; reclaim: not run; upfast: not run; ib: not run; recover: not run ("
    ));
    assert!(md.contains("guest kernel  with lockdep"));
    assert!(!md.contains("Notes:"));
}
