#!/usr/bin/env bash
# `make bench`: mlx5_rs next to upstream mlx5_core on the emulated ConnectX.
#
# Builds the module (tests/vm/module.sh, set-up included), then boots six VMs, one at
# a time (tests/vm/vm.sh; the emulator is built here):
#   1. probe-nop: probe-to-ready over unbind/bind cycles, NOP storms (event mode and
#      polling) and interrupt latency under a page-request + NOP load, of both drivers
#      (upstream's NOPs through its exported mlx5_cmd_exec from the test module
#      tests/modules/mlx5_nop_bench, built with the driver)      (guest-bench.sh)
#   2. teardown: teardown time against pages held for the points $MLX5RS_BENCH_TD_POINTS:
#      upstream graceful, ours graceful, ours fast               (guest-teardown.sh)
#   3. reclaim: the same at $MLX5RS_BENCH_PAGES (1 GiB)          (guest-reclaim.sh)
#   4. upfast: upstream loaded with 1 GiB and left bound          (guest-upfast.sh)
#   5. ib: InfiniBand figures of upstream mlx5_ib and ours: registration, ibv_open_device,
#      MR registration 4 KiB / 1 MiB / 1 GiB, QP create + RESET → RTS  (guest-ib.sh),
#      and the data path of both: perftest ib_write_bw / ib_send_bw at 64 B, 4 KiB and
#      64 KiB, ib_write_lat / ib_send_lat, with the emulator's own time per WQE and per
#      doorbell, and the kernel verbs' own cost per work request posted, per CQE
#      polled and doorbell → completion handler (tests/modules/ib_kclient bench=N)
#      (guest-dp-figures.sh)
#   6. recover: recovery from a firmware fatal error, fatal → port ACTIVE again, of both
#      drivers, MLX5RS_BENCH_REC_REPS times each (default 5)     (guest-recover.sh)
# Upstream's fast teardown runs only from its PCI shutdown callback: VMs 1, 2 and 4 end
# with upstream bound (first point, last small point, 1 GiB), and this script times the
# teardown at power-off from the emulator's final stats (its log, see emu/README.md).
# The guests print "BENCH <key> <value>" lines on the console; this script collects
# the logs in $MLX5RS_CACHE/bench (default cache ~/.cache/mlx5-rs) and the report
# program, tests/bench/report (mlx5-bench-report, built here with cargo), prints two
# tables from them, also written to $MLX5RS_CACHE/bench/last.md, and plots teardown time
# against pages held to $MLX5RS_CACHE/bench/teardown.svg. A figure that could not be
# measured is printed as such. What the tables show: tests/bench/report/src/rows.rs.
#
# Environment: MLX5RS_BENCH_REPS (bind cycles, default 5), MLX5RS_BENCH_NOPS1 (NOPs with
# 1 caller, default 5000), MLX5RS_BENCH_NOPS32 (with 32 callers, default 20000),
# MLX5RS_BENCH_IRQ_REQS / MLX5RS_BENCH_IRQ_NOPS (interrupt load: page requests, default
# 40, and NOPs with 1 caller, default 2000), MLX5RS_BENCH_TD_POINTS (small teardown points, default
# "16384 65536"), MLX5RS_BENCH_PAGES (the large point, default 262144),
# MLX5RS_BENCH_UPFAST_BIG=0 (skip VM 4), MLX5RS_BENCH_IB_REPS (driver loads timed in VM 5,
# default 3), MLX5RS_BENCH_DP_ITERS_BW / MLX5RS_BENCH_DP_ITERS_LAT (perftest iterations
# in VM 5, default 400000, 64 KiB a quarter, / 5000), MLX5RS_BENCH_DP_TIMEOUT (each
# perftest run's limit in s, default 600), MLX5RS_BENCH_KV_WRS / MLX5RS_BENCH_KV_BATCH
# (the kernel-verbs loop's SENDs, default 20000, and chain length, default 32), MLX5RS_BENCH_VMS (the VMs to boot, a subset of
# "probe-nop teardown reclaim upfast ib recover"; default all; the others' figures are then "not run"),
# MLX5RS_BENCH_REV=<git revision>: benchmark that commit instead of the working tree
# (exported to $MLX5RS_CACHE/bench/src-<rev>, built there; immune to concurrent edits).
# `run.sh --report` prints the tables again from the last run's logs.
set -eu
. "$(dirname "$0")/../vm/lib.sh"

if [ -n "${MLX5RS_BENCH_REV:-}" ] && [ -z "${MLX5RS_BENCH_SNAPSHOT:-}" ] && [ "${1:-}" != --report ]; then
	rev=$(git -C "$REPO" rev-parse --short "$MLX5RS_BENCH_REV^{commit}") || die "no revision $MLX5RS_BENCH_REV"
	snap=$CACHE/bench/src-$rev
	# Keep the two newest older exports. On a new machine there is none: ls and grep
	# then fail, which under pipefail is not an error here.
	old=$(ls -1dt "$CACHE"/bench/src-* 2>/dev/null | grep -v -x "$snap" | tail -n +3) || true
	[ -z "$old" ] || xargs -r rm -rf <<<"$old"
	rm -rf "$snap" && mkdir -p "$snap"
	git -C "$REPO" archive "$rev" | tar -x -C "$snap"
	# The emulator builds in its own target directory, seeded from the tree's (cargo
	# rebuilds only what differs); the tree's own target/ is left alone.
	# (A missing source directory is fine: cargo then builds from nothing.)
	if [ ! -d "$CACHE/bench/target/release" ] && [ -d "$CARGO_TARGET_DIR/release" ]; then
		mkdir -p "$CACHE/bench/target" && cp -a "$CARGO_TARGET_DIR/release" "$CACHE/bench/target/"
	fi
	log "benchmarking commit $rev from $snap"
	exec env MLX5RS_BENCH_SNAPSHOT=1 MLX5RS_BENCH_COMMIT="$rev" CARGO_TARGET_DIR="$CACHE/bench/target" \
		"$snap/tests/bench/run.sh" "$@"
fi

PAGES=${MLX5RS_BENCH_PAGES:-262144}
TD_POINTS=${MLX5RS_BENCH_TD_POINTS:-16384 65536}
OUT=$CACHE/bench
mkdir -p "$OUT"
REPORTER=$CARGO_TARGET_DIR/release/mlx5-bench-report
VMS="probe-nop teardown reclaim upfast ib recover"
T_START=$(date +%s)
DATE=$(date -u '+%Y-%m-%d %H:%M UTC')

REPORT_ONLY=0
[ "${1:-}" = --report ] && REPORT_ONLY=1

# ---- build -----------------------------------------------------------------------
if [ "$REPORT_ONLY" = 0 ]; then
# Others edit the driver concurrently: one retry a minute later on a failed build.
if ! "$REPO/tests/vm/module.sh"; then
	log "module build failed; retrying in 60 s"
	sleep 60
	"$REPO/tests/vm/module.sh" || die "module build failed twice"
fi
(cd "$REPO" && cargo build -q --release -p mlx5-emu -p mlx5-bench-report) ||
	die "building the emulator or the report program failed"
# vm.sh builds the emulator too; we built it already, so it need not (nor rebuild mid-run).
export MLX5RS_EMU_BIN=$CARGO_TARGET_DIR/release/mlx5-emu
if [ -n "${MLX5RS_BENCH_COMMIT:-}" ]; then
	COMMIT="$MLX5RS_BENCH_COMMIT (clean export)"
else
	COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo "?")
	git -C "$REPO" diff --quiet HEAD -- 2>/dev/null || COMMIT="$COMMIT + uncommitted changes of the working tree"
fi
echo "$COMMIT" >"$OUT/commit"
echo "$DATE" >"$OUT/date"
echo "$PAGES" >"$OUT/pages"
echo "$TD_POINTS" >"$OUT/td_points"
# Knobs for the guests (they see the cache at its host path; tests/bench/lib-guest.sh).
{
	printf 'TD_BIG=%q\nTD_POINTS=%q\nTD_FIRST=%q\n' "$PAGES" "$TD_POINTS" "${TD_POINTS%% *}"
	for k in REPS NOPS1 NOPS32 IRQ_REQS IRQ_NOPS IB_REPS REC_REPS DP_ITERS_BW DP_ITERS_LAT DP_ROUNDS DP_TIMEOUT KV_WRS KV_BATCH; do
		v=$(eval "echo \${MLX5RS_BENCH_$k:-}")
		[ -z "$v" ] || printf 'MLX5RS_BENCH_%s=%q\n' "$k" "$v"
	done
} >"$OUT/guest.env"
fi

# ---- VMs -------------------------------------------------------------------------
# run_vm NAME TIMEOUT GUEST-SCRIPT [vm.sh args...]: console in $OUT/NAME.console.log,
# vm.sh output (judge verdict) in $OUT/NAME.vm.log, the emulator's log (vm.sh keeps it
# in $CACHE/runs/vm-<vm.sh's pid>/emu.log) copied to $OUT/NAME.emu.log. A failed judge
# does not stop the benchmark: the verdict is reported with the table.
# verdict NAME: the judge's line, vm.sh's exit status and the VM's wall time.
verdict() {
	local v
	[ -e "$OUT/$1.vm.log" ] || { echo "not run"; return; }
	v="$(grep -a -o 'vm: [0-9]* passed, [0-9]* failed' "$OUT/$1.vm.log" 2>/dev/null | tail -n1 || true)"
	v="${v:-no verdict}, exit $(cat "$OUT/$1.rc" 2>/dev/null || echo '?'), $(cat "$OUT/$1.secs" 2>/dev/null || echo '?') s"
	grep -a -q 'BENCH-DONE' "$OUT/$1.console.log" 2>/dev/null || v="$v, GUEST DID NOT FINISH"
	echo "$v"
}
run_vm() {
	local name=$1 tmo=$2 script=$3; shift 3
	local t0=$(date +%s) rc=0 pid
	log "VM '$name': $script $* (timeout ${tmo} s; console: $OUT/$name.console.log)"
	"$REPO/tests/vm/vm.sh" --run "$script" --timeout "$tmo" --log "$OUT/$name.console.log" "$@" \
		>"$OUT/$name.vm.log" 2>&1 &
	pid=$!
	wait "$pid" || rc=$?
	echo "$rc" >"$OUT/$name.rc"
	echo "$(($(date +%s) - t0))" >"$OUT/$name.secs"
	cp "$CACHE/runs/vm-$pid/emu.log" "$OUT/$name.emu.log" 2>/dev/null ||
		echo "no emulator log at $CACHE/runs/vm-$pid/emu.log" >"$OUT/$name.emu.log"
	host_upfast "$name"
	echo "$name $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/loadavg"
	log "VM '$name' done: $(verdict "$name")"
}
# host_upfast NAME: when the guest left upstream bound ("BENCH upfast.pages P"), time
# its fast teardown at power-off from the emulator's final stats: prepare-fast
# TEARDOWN_HCA → nic_interface DISABLED (emulator timeline), checked to be the one
# prepare since the guest's last function reset, with the pages not reclaimed.
# Writes BENCH lines to $OUT/NAME.host.log (tests/bench/report/src/upfast.rs).
host_upfast() {
	"$REPORTER" --host-upfast "$1" "$OUT" ||
		echo "BENCH-NOTE $1: timing upstream's fast teardown from the emulator's final stats failed" >>"$OUT/$1.host.log"
}
if [ "$REPORT_ONLY" = 0 ]; then
	for v in $VMS; do rm -f "$OUT/$v".*; done
	rm -f "$OUT/loadavg"
	# want NAME: NAME is among $MLX5RS_BENCH_VMS (default: all).
	want() { [[ " ${MLX5RS_BENCH_VMS:-$VMS} " == *" $1 "* ]]; }
	if want probe-nop; then run_vm probe-nop 720 tests/bench/guest-bench.sh; fi
	if want teardown; then run_vm teardown 900 tests/bench/guest-teardown.sh; fi
	if want reclaim; then
		run_vm reclaim 1200 tests/bench/guest-reclaim.sh --emu-arg --init-pages --emu-arg "$PAGES"
	fi
	if want upfast && [ "${MLX5RS_BENCH_UPFAST_BIG:-1}" != 0 ]; then
		run_vm upfast 600 tests/bench/guest-upfast.sh --emu-arg --init-pages --emu-arg "$PAGES"
	fi
	# ib: 202 s with upstream's data path (35 s) at a load average of 3.4, 774 s (168 s)
	# at 12.7 (2026-12-05); both drivers' data path and kernel loops took 176-309 s as a
	# boot of their own (guest-dp.sh) at a load average of 2-6 (2026-12-05).
	# The data path in 4 interleaved rounds per driver (guest-dp-figures.sh): 8 passes of
	# the eight perftest runs, 205-380 s each at a host load of 13-17 (2026-12-05: the
	# data-path boot alone hit 3,300 s in its last pass); at a load of 5-6 one pass with twice
	# the iterations took 76-83 s.
	if want ib; then run_vm ib 5400 tests/bench/guest-ib.sh; fi
	if want recover; then run_vm recover 1800 tests/bench/guest-recover.sh; fi
	echo "$(($(date +%s) - T_START))" >"$OUT/total.secs"
fi
# ---- report ----------------------------------------------------------------------
# The logs of the last run → $OUT/last.md and $OUT/teardown.svg. --pages/--td-points:
# the points when the run did not record them.
if [ "$REPORT_ONLY" = 1 ]; then
	(cd "$REPO" && cargo build -q --release -p mlx5-bench-report) || die "building the report program failed"
fi
"$REPORTER" --pages "$PAGES" --td-points "$TD_POINTS" "$OUT" || die "the report failed"
echo
cat "$OUT/last.md"
echo
log "table written to $OUT/last.md"
log "teardown plot written to $OUT/teardown.svg"
