#!/usr/bin/env bash
# `make bench`: mlx5_rs next to upstream mlx5_core on the emulated ConnectX.
#
# Builds the module (tests/vm/module.sh, set-up included), then boots four VMs, one at
# a time (tests/vm/vm.sh; the emulator is built here):
#   1. probe-nop: probe-to-ready over unbind/bind cycles, NOP storms (event mode and
#      polling) and interrupt latency under a page-request + NOP load, of both drivers
#      (upstream's NOPs through its exported mlx5_cmd_exec from the test module
#      tests/modules/mlx5_nop_bench, built with the driver)      (guest-bench.sh)
#   2. teardown: teardown time against pages held for the points $MLX5RS_BENCH_TD_POINTS:
#      upstream graceful, ours graceful, ours fast               (guest-teardown.sh)
#   3. reclaim: the same at $MLX5RS_BENCH_PAGES (1 GiB)          (guest-reclaim.sh)
#   4. upfast: upstream loaded with 1 GiB and left bound          (guest-upfast.sh)
# Upstream's fast teardown runs only from its PCI shutdown callback: VMs 1, 2 and 4 end
# with upstream bound (first point, last small point, 1 GiB), and this script times the
# teardown at power-off from the emulator's final stats (its log, see emu/README.md).
# The guests print "BENCH <key> <value>" lines on the console; this script collects
# them and prints two tables, also written to $MLX5RS_CACHE/bench/last.md (default cache
# ~/.cache/mlx5-rs), and plots teardown time against pages held to
# $MLX5RS_CACHE/bench/teardown.svg. A figure that could not be measured is printed as such.
#
# Environment: MLX5RS_BENCH_REPS (bind cycles, default 5), MLX5RS_BENCH_NOPS1 (NOPs with
# 1 caller, default 5000), MLX5RS_BENCH_NOPS32 (with 32 callers, default 20000),
# MLX5RS_BENCH_IRQ_REQS / MLX5RS_BENCH_IRQ_NOPS (interrupt load: page requests, default
# 40, and NOPs with 1 caller, default 2000), MLX5RS_BENCH_TD_POINTS (small teardown points, default
# "16384 65536"), MLX5RS_BENCH_PAGES (the large point, default 262144),
# MLX5RS_BENCH_UPFAST_BIG=0 (skip VM 4), MLX5RS_BENCH_VMS (the VMs to boot, a subset of
# "probe-nop teardown reclaim upfast"; default all; the others' figures are then "not run"),
# MLX5RS_BENCH_REV=<git revision>: benchmark that commit instead of the working tree
# (exported to $MLX5RS_CACHE/bench/src-<rev>, built there; immune to concurrent edits).
# `run.sh --report` prints the tables again from the last run's logs.
set -eu
. "$(dirname "$0")/../vm/lib.sh"

if [ -n "${MLX5RS_BENCH_REV:-}" ] && [ -z "${MLX5RS_BENCH_SNAPSHOT:-}" ] && [ "${1:-}" != --report ]; then
	rev=$(git -C "$REPO" rev-parse --short "$MLX5RS_BENCH_REV^{commit}") || die "no revision $MLX5RS_BENCH_REV"
	snap=$CACHE/bench/src-$rev
	# Keep the two newest older exports.
	ls -1dt "$CACHE"/bench/src-* 2>/dev/null | grep -v -x "$snap" | tail -n +3 | xargs -r rm -rf
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
VMS="probe-nop teardown reclaim upfast"
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
(cd "$REPO" && cargo build -q --release -p mlx5-emu) || die "building the emulator failed"
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
	for k in REPS NOPS1 NOPS32 IRQ_REQS IRQ_NOPS; do
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
# Writes BENCH lines to $OUT/NAME.host.log.
host_upfast() {
	local name=$1 p h
	rm -f "$OUT/$name.host.log" "$OUT/$name.final-stats.json"
	p=$(tr -d '\r' <"$OUT/$name.console.log" | sed -n 's/^BENCH upfast.pages \([0-9]*\)$/\1/p' | tail -n1)
	h=$(tr -d '\r' <"$OUT/$name.console.log" | sed -n 's/^BENCH upfast.held \([0-9]*\)$/\1/p' | tail -n1)
	[ -n "$p" ] && [ -n "$h" ] || return 0
	grep -a -o 'mlx5-emu: final stats: .*' "$OUT/$name.emu.log" | tail -n1 |
		sed 's/^mlx5-emu: final stats: //' >"$OUT/$name.final-stats.json"
	if [ ! -s "$OUT/$name.final-stats.json" ]; then
		echo "BENCH-NOTE $name: no final stats in the emulator log: upstream fast teardown with $p pages not measured" >"$OUT/$name.host.log"
		return 0
	fi
	in_toolbox python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); p = sys.argv[2]; held = int(sys.argv[3]); name = sys.argv[4]
f = d["function"]; t = d.get("timeline", {}); td = f["teardowns"]
us = t.get("fast_teardown_us")
if td["prepare_fast"] == 1 and td["graceful"] + td["force"] == 0 and f["quiesced"] is True and us is not None:
    print("BENCH td.%s.up_fast_dev_ms %.3f" % (p, us / 1000))
else:
    print("BENCH-NOTE %s: upstream power-off with %s pages: no fast teardown seen by the emulator "
          "(prepare_fast %d, graceful %d, force %d, quiesced %s, fast_teardown_us %s)"
          % (name, p, td["prepare_fast"], td["graceful"], td["force"], f["quiesced"], us))
print("BENCH td.%s.up_fast_held_after %d" % (p, d["pages"]["held"]))
if d["pages"]["held"] != held:
    print("BENCH-NOTE %s: upstream power-off with %s pages: the emulator held %d pages before, %d after"
          % (name, p, held, d["pages"]["held"]))
print("BENCH td.%s.up_fast_violations %d" % (p, d["violations"]))
ld, nd = t.get("last_doorbell_ms"), t.get("nic_disabled_ms")
if ld is not None and nd is not None and ld > nd:
    print("BENCH-NOTE %s: upstream power-off with %s pages: a doorbell %.3f ms after nic_interface DISABLED" % (name, p, ld - nd))
' "$OUT/$name.final-stats.json" "$p" "$h" "$name" >"$OUT/$name.host.log" 2>&1 ||
		echo "BENCH-NOTE $name: parsing the emulator's final stats failed" >>"$OUT/$name.host.log"
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
	echo "$(($(date +%s) - T_START))" >"$OUT/total.secs"
fi
COMMIT=$(cat "$OUT/commit" 2>/dev/null || echo "?")
DATE=$(cat "$OUT/date" 2>/dev/null || echo "?")
TOTAL=$(cat "$OUT/total.secs" 2>/dev/null || echo "?")
PAGES=$(cat "$OUT/pages" 2>/dev/null || echo "$PAGES")
TD_POINTS=$(cat "$OUT/td_points" 2>/dev/null || echo "$TD_POINTS")

# vm.sh logs "booting (tcg, 1 function(s)) ..."; no match is "?" below, not a failure.
ACCEL=$(grep -a -h -o 'booting ([a-z]*' "$OUT/probe-nop.vm.log" 2>/dev/null | head -n1 | sed 's/booting (//' | tr a-z A-Z || true)
[ -n "$ACCEL" ] || ACCEL="?"

# ---- figures ---------------------------------------------------------------------
# All BENCH lines: the guests' consoles and the host's own (final stats of power-offs).
logs() { for v in $VMS; do cat "$OUT/$v.console.log" "$OUT/$v.host.log" 2>/dev/null; done | tr -d '\r'; }
declare -A V
while read -r _ k v; do
	V[$k]="${V[$k]:+${V[$k]} }$v"
done < <(logs | grep -a -E '^BENCH [a-z0-9._]+ [0-9.?-]+$' || true)

NA="not measured"
isnum() { [[ "$1" =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; }
# get KEY: the first value of KEY, or empty.
get() { echo "${V[$1]:-}" | awk '{ print $1 }'; }
# median KEY: median of all values of KEY (mean of the middle two if even).
median() {
	[ -n "${V[$1]:-}" ] || return 0
	tr ' ' '\n' <<<"${V[$1]}" | grep -E '^-?[0-9.]+$' | sort -g | awk '{ a[NR] = $1 } END {
		if (!NR) exit; if (NR % 2) printf "%.1f", a[(NR + 1) / 2]; else printf "%.1f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
count() { [ -n "${V[$1]:-}" ] && wc -w <<<"${V[$1]}" || echo 0; }
range() {
	[ -n "${V[$1]:-}" ] || return 0
	tr ' ' '\n' <<<"${V[$1]}" | grep -E '^-?[0-9.]+$' | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%.1f … %.1f", lo, hi }'
}
# fmt VALUE [AWK-FORMAT [DIVISOR]]: formatted, or "not measured" when empty or not a number.
fmt() {
	isnum "$1" || { echo "$NA"; return; }
	awk -v x="$1" -v f="${2:-%s}" -v d="${3:-1}" 'BEGIN { printf f, x / d }'
}
nz() { [ -n "$1" ] && echo "$1" || echo "$NA"; }

NOUP="n/a (no such path upstream)"
rows=()
row() { rows+=("| $1 | $2 | $3 | $4 |"); }

# -- probe
n_rs=$(count rs.probe_ms) n_up=$(count up.probe_ms)
row "probe-to-ready, median of bind cycles (rs: first probe line → \"ready\" line; upstream: \"firmware version\" → bind returned)" \
	"$(nz "$(median rs.probe_ms)") (n=$n_rs)" "$(nz "$(median up.probe_ms)") (n=$n_up)" ms
row "probe-to-ready, min … max" "$(nz "$(range rs.probe_ms)")" "$(nz "$(range up.probe_ms)")" ms
row "probe: first probe line → last probe log line, median" "$(nz "$(median rs.probe_ms)")" "$(nz "$(median up.probe_ms_lastlog)")" ms
row "probe: first probe line → bind write returned, median" "$(nz "$(median rs.probe_ms_ret)")" "$(nz "$(median up.probe_ms)")" ms
row "bind write wall time (date before/after), median" "$(nz "$(median rs.bind_wall_ms)")" "$(nz "$(median up.bind_wall_ms)")" ms
row "first load: insmod / modprobe wall time (upstream: + dependency modules)" "$(fmt "$(get rs.load_wall_ms)" %.1f)" "$(fmt "$(get up.load_wall_ms)" %.1f)" ms

# -- NOPs
UPPOLL="n/a (upstream has no polling switch: it polls only before its EQs exist and during teardown)"
for mode in events polling; do
	pre=nop; [ $mode = polling ] && pre=pnop
	for c in 1 32; do
		if [ $mode = events ]; then
			up_mean=$(fmt "$(get up.nop$c.mean_ns)" %.1f 1000) up_p50=$(fmt "$(get up.nop$c.p50_ns)" %.1f 1000)
			up_p99=$(fmt "$(get up.nop$c.p99_ns)" %.1f 1000) up_max=$(fmt "$(get up.nop$c.max_ns)" %.1f 1000)
			up_t=$(fmt "$(get up.nop$c.ops_per_sec)" %d)
			up_what="; upstream: mlx5_nop_bench, $(nz "$(get up.nop$c.nops)") NOPs, $(nz "$(get up.nop$c.errors)") errors"
		else
			up_mean=$UPPOLL up_p50=$UPPOLL up_p99=$UPPOLL up_max=$UPPOLL up_t=$UPPOLL up_what=""
		fi
		row "NOP latency mean, $c caller(s), $mode (both: each NOP call → return)" "$(fmt "$(get rs.$pre$c.mean_ns)" %.1f 1000)" "$up_mean" µs
		row "NOP latency p50, $c caller(s), $mode" "$(fmt "$(get rs.$pre$c.p50_ns)" %.1f 1000)" "$up_p50" µs
		row "NOP latency p99, $c caller(s), $mode" "$(fmt "$(get rs.$pre$c.p99_ns)" %.1f 1000)" "$up_p99" µs
		row "NOP latency max, $c caller(s), $mode" "$(fmt "$(get rs.$pre$c.max_ns)" %.1f 1000)" "$up_max" µs
		row "NOP throughput, $c caller(s), $mode (rs: nop_storm, $(nz "$(get rs.$pre$c.nops)") NOPs, $(nz "$(get rs.$pre$c.errors)") errors$up_what)" \
			"$(fmt "$(get rs.$pre$c.ops_per_sec)" %d)" "$up_t" ops/s
		[ $mode = polling ] ||
			row "NOP mean, $c caller(s), events, upstream's own per-opcode counter over the same storm (debugfs commands/NOP/average: post → completion handled; n=$(nz "$(get up.nop$c.dbg_n)"))" \
				"n/a (only call → return, above)" "$(fmt "$(get up.nop$c.dbg_mean_ns)" %.1f 1000)" µs
	done
done

# -- interrupt latency
row "interrupt load: runtime page requests answered (±16 pages each, one at a time)" \
	"$(nz "$(get rs.irq.page_requests)")" "$(nz "$(get up.irq.page_requests)")" requests
row "interrupt load: then NOPs, 1 caller, event mode (rs: nop_storm; upstream: mlx5_nop_bench)" \
	"$(nz "$(get rs.irq.nops)")" "$(nz "$(get up.irq.nops)")" NOPs
for role in cmd pages; do
	what="command-completion EQ"; [ $role = pages ] && what="page-request EQ"
	for k in mean p50 p99 max; do
		row "IRQ raised → next CI doorbell of the $what, $k (emulator; rs EQ $(nz "$(get rs.irq.$role.eqn)") n=$(nz "$(get rs.irq.$role.count)"), upstream EQ $(nz "$(get up.irq.$role.eqn)") n=$(nz "$(get up.irq.$role.count)"))" \
			"$(fmt "$(get rs.irq.$role.${k}_ns)" %.1f 1000)" "$(fmt "$(get up.irq.$role.${k}_ns)" %.1f 1000)" µs
	done
	row "IRQ → EQE handled, $what, mean / max (driver's own: our debugfs eqs irq_mean_ns / irq_max_ns)" \
		"$(fmt "$(get rs.irq.$role.drv_mean_ns)" %.1f 1000) / $(fmt "$(get rs.irq.$role.drv_max_ns)" %.1f 1000)" "n/a (no such counter upstream)" µs
done

# -- teardown against pages held: one row per point
trows=()
# tcell KEY: ms with 1 decimal, or "not measured".
tcell() { fmt "$(get "$1")" "${2:-%.1f}"; }
# back WHO P: graceful unload left pages with the firmware?
back() {
	local h; h=$(get "td.$2.$1_held_after")
	case "$h" in 0) echo "" ;; "") echo " (?)" ;; *) echo " (RECLAIM INCOMPLETE: $h left)" ;; esac
}
fastnote() { # P: ours fast freed = held?
	local f h; f=$(get "td.$1.rs_fast_freed"); h=$(echo "${V[td.$1.rs_held]:-}" | awk '{ print $NF }')
	[ -n "$f" ] && [ "$f" = "$h" ] && echo "" || echo " (freed ${f:-?} of ${h:-?})"
}
for P in $TD_POINTS $PAGES; do
	trows+=("| $P ($(nz "$(get "td.$P.up_held")") / $(nz "$(get "td.$P.rs_held")")) | $(tcell "td.$P.rs_fast_ms")$(fastnote "$P") | $(tcell "td.$P.rs_fast_dev_ms" %.3f) | $(tcell "td.$P.rs_fast_free_log_ms") | $(tcell "td.$P.rs_graceful_ms")$(back rs "$P") | $(tcell "td.$P.rs_graceful_dev_ms") | $(tcell "td.$P.rs_reclaim_log_ms") | $(tcell "td.$P.up_graceful_ms")$(back up "$P") | $(tcell "td.$P.up_graceful_dev_ms") | $(tcell "td.$P.up_fast_dev_ms" %.3f) | $(tcell "td.$P.rs_load_ms") / $(tcell "td.$P.up_load_ms") |")
done

# ---- plot ------------------------------------------------------------------------
SVG=$OUT/teardown.svg
{
	echo "T Teardown time against firmware pages held (emulated ConnectX, $ACCEL, $DATE)"
	echo "X firmware pages held (demanded at init; 4 KiB each)"
	echo "Y teardown time, ms (log scale)"
	echo "S 1 mlx5_rs fast (rmmod, fast_unload=1)"
	echo "S 2 mlx5_rs graceful (rmmod)"
	echo "S 3 upstream graceful (modprobe -r)"
	echo "S 4 upstream fast (power-off, device-side prepare → DISABLED)"
	echo "S 5 mlx5_rs fast, device-side prepare → DISABLED"
	for P in $TD_POINTS $PAGES; do
		echo "P 1 $P $(get "td.$P.rs_fast_ms")"
		echo "P 2 $P $(get "td.$P.rs_graceful_ms")"
		echo "P 3 $P $(get "td.$P.up_graceful_ms")"
		echo "P 4 $P $(get "td.$P.up_fast_dev_ms")"
		echo "P 5 $P $(get "td.$P.rs_fast_dev_ms")"
	done
} >"$OUT/teardown.dat"
awk -f "$REPO/tests/bench/plot.awk" "$OUT/teardown.dat" >"$SVG"

{
	echo "# mlx5_rs vs upstream mlx5_core on the emulated ConnectX ($DATE)"
	echo
	echo "| metric | mlx5_rs | upstream mlx5_core | unit |"
	echo "|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Teardown time against pages held (ms; graceful = page reclaim before DISABLE_HCA; fast = no reclaim; device-side = emulator timeline: graceful TEARDOWN_HCA → DISABLE_HCA, fast prepare-fast TEARDOWN_HCA → nic_interface DISABLED; upstream fast only runs at power-off, so only device-side):"
	echo
	echo "| init pages demanded (held: upstream / rs) | rs fast, rmmod | rs fast, device-side | rs fast, local page freeing (own log) | rs graceful, rmmod | rs graceful, device-side | rs reclaim, own log | upstream graceful, modprobe -r | upstream graceful, device-side | upstream fast at power-off, device-side | load: insmod / modprobe |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${trows[@]}"
	echo
	echo "Plot: $SVG"
	echo
	loads=$(awk '{ printf "%s%s %s %s %s", (NR > 1 ? "; " : ""), $1, $2, $3, $4 }' "$OUT/loadavg" 2>/dev/null || true)
	echo "Conditions: $ACCEL, 2 vCPUs, 2 GiB guest RAM, host $(nproc) CPUs shared (load average 1/5/15 min after each VM: ${loads:-not recorded});"
	echo "guest kernel $(grep -a -h -o 'kernel [0-9][^ ,]*' "$OUT/probe-nop.console.log" 2>/dev/null | head -n1 | sed 's/kernel //' | tr -d '\r' || true) with lockdep, kmemleak, DMA-API debug (tests/kernel/mlx5-rs.config);"
	echo "emulator mlx5-emu (default page demands, set per point with set_pages; --init-pages $PAGES for the 1 GiB VMs); mlx5_rs at $COMMIT; date $DATE; make bench took ${TOTAL} s."
	vms=""
	for v in $VMS; do vms="$vms${vms:+; }$v: $(verdict "$v")"; done
	echo "VM runs: $vms (judge verdicts; consoles in $OUT/)."
	notes=$(logs | grep -a '^BENCH-NOTE ' | sed 's/^BENCH-NOTE /- /' || true)
	[ -n "$notes" ] && { echo; echo "Notes:"; echo "$notes"; }
	errs=$(logs | sed -n '/^---- mlx5_core kernel log (errors\/warnings) ----$/,/^-----*$/p' | grep -a '^\[' | sort -u | sed 's/^/    /' || true)
	[ -n "$errs" ] && { echo; echo "Upstream mlx5_core errors/warnings in dmesg:"; echo "$errs"; }
	true
} >"$OUT/last.md"
echo
cat "$OUT/last.md"
echo
log "table written to $OUT/last.md"
log "teardown plot written to $SVG"
