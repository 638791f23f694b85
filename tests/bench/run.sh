#!/usr/bin/env bash
# `make bench`: mlx5_rs next to upstream mlx5_core on the emulated ConnectX.
#
# Builds the module (tests/vm/module.sh, set-up included), then boots two VMs, one at a
# time (tests/vm/vm.sh; the emulator is built by vm.sh):
#   1. default emulator: probe-to-ready over unbind/bind cycles and NOP storms of
#      mlx5_rs, then probe-to-ready of upstream mlx5_core   (tests/bench/guest-bench.sh)
#   2. emulator with --init-pages 262144 (1 GiB held by the firmware): unload/reclaim
#      time of each driver                                     (tests/bench/guest-reclaim.sh)
# The guests print "BENCH <key> <value>" lines on the console; this script collects
# them and prints a table, also written to $MLX5RS_CACHE/bench/last.md (default cache
# ~/.cache/mlx5-rs). A figure that could not be measured is printed as such.
#
# Environment: MLX5RS_BENCH_REPS (bind cycles, default 5), MLX5RS_BENCH_NOPS1 (NOPs with
# 1 caller, default 5000), MLX5RS_BENCH_NOPS32 (with 32 callers, default 20000),
# MLX5RS_BENCH_PAGES (pages held for the reclaim run, default 262144),
# MLX5RS_BENCH_REV=<git revision>: benchmark that commit instead of the working tree
# (exported to $MLX5RS_CACHE/bench/src-<rev>, built there; immune to concurrent edits).
# `run.sh --report` prints the table again from the last run's console logs.
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
	[ -d "$CACHE/bench/target/release" ] || { mkdir -p "$CACHE/bench/target" && cp -a "$REPO/target/release" "$CACHE/bench/target/"; }
	log "benchmarking commit $rev from $snap"
	exec env MLX5RS_BENCH_SNAPSHOT=1 MLX5RS_BENCH_COMMIT="$rev" CARGO_TARGET_DIR="$CACHE/bench/target" \
		"$snap/tests/bench/run.sh" "$@"
fi

PAGES=${MLX5RS_BENCH_PAGES:-262144}
OUT=$CACHE/bench
mkdir -p "$OUT"
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
export MLX5RS_EMU_BIN=${CARGO_TARGET_DIR:-$REPO/target}/release/mlx5-emu
if [ -n "${MLX5RS_BENCH_COMMIT:-}" ]; then
	COMMIT="$MLX5RS_BENCH_COMMIT (clean export)"
else
	COMMIT=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo "?")
	git -C "$REPO" diff --quiet HEAD -- 2>/dev/null || COMMIT="$COMMIT + uncommitted changes of the working tree"
fi
echo "$COMMIT" >"$OUT/commit"
echo "$DATE" >"$OUT/date"
fi

# ---- VMs -------------------------------------------------------------------------
# run_vm NAME TIMEOUT GUEST-SCRIPT [vm.sh args...]: console in $OUT/NAME.console.log,
# vm.sh output (judge verdict) in $OUT/NAME.vm.log. A failed judge does not stop the
# benchmark: the verdict is reported with the table.
# verdict NAME: the judge's line, vm.sh's exit status and the VM's wall time.
verdict() {
	local v
	v="$(grep -a -o 'vm: [0-9]* passed, [0-9]* failed' "$OUT/$1.vm.log" 2>/dev/null | tail -n1 || true)"
	v="${v:-no verdict}, exit $(cat "$OUT/$1.rc" 2>/dev/null || echo '?'), $(cat "$OUT/$1.secs" 2>/dev/null || echo '?') s"
	grep -a -q 'BENCH-DONE' "$OUT/$1.console.log" 2>/dev/null || v="$v, GUEST DID NOT FINISH"
	echo "$v"
}
run_vm() {
	local name=$1 tmo=$2 script=$3; shift 3
	local t0=$(date +%s) rc=0
	log "VM '$name': $script $* (timeout ${tmo} s; console: $OUT/$name.console.log)"
	"$REPO/tests/vm/vm.sh" --run "$script" --timeout "$tmo" --log "$OUT/$name.console.log" "$@" \
		>"$OUT/$name.vm.log" 2>&1 || rc=$?
	echo "$rc" >"$OUT/$name.rc"
	echo "$(($(date +%s) - t0))" >"$OUT/$name.secs"
	log "VM '$name' done: $(verdict "$name")"
}
if [ "$REPORT_ONLY" = 0 ]; then
	rm -f "$OUT"/*.console.log "$OUT"/*.vm.log "$OUT"/*.rc "$OUT"/*.secs
	run_vm probe-nop 420 tests/bench/guest-bench.sh
	run_vm reclaim 480 tests/bench/guest-reclaim.sh --emu-arg --init-pages --emu-arg "$PAGES"
	echo "$(($(date +%s) - T_START))" >"$OUT/total.secs"
fi
COMMIT=$(cat "$OUT/commit" 2>/dev/null || echo "?")
DATE=$(cat "$OUT/date" 2>/dev/null || echo "?")
TOTAL=$(cat "$OUT/total.secs" 2>/dev/null || echo "?")

ACCEL=$(grep -a -h -o 'booting ([a-z]*)' "$OUT/probe-nop.vm.log" | head -n1 | sed 's/booting (\(.*\))/\1/' | tr a-z A-Z)
[ -n "$ACCEL" ] || ACCEL="?"

# ---- figures ---------------------------------------------------------------------
declare -A V
while read -r _ k v; do
	V[$k]="${V[$k]:+${V[$k]} }$v"
done < <(cat "$OUT/probe-nop.console.log" "$OUT/reclaim.console.log" 2>/dev/null |
	tr -d '\r' | grep -a -E '^BENCH [a-z0-9._]+ [0-9.?-]+$' || true)

NA="not measured"
# get KEY: the (single) value of KEY, or empty.
get() { echo "${V[$1]:-}" | awk '{ print $1 }'; }
# median KEY: median of all values of KEY (mean of the middle two if even).
median() {
	[ -n "${V[$1]:-}" ] || return 0
	tr ' ' '\n' <<<"${V[$1]}" | sort -g | awk '{ a[NR] = $1 } END {
		if (NR % 2) printf "%.1f", a[(NR + 1) / 2]; else printf "%.1f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
count() { [ -n "${V[$1]:-}" ] && wc -w <<<"${V[$1]}" || echo 0; }
range() {
	[ -n "${V[$1]:-}" ] || return 0
	tr ' ' '\n' <<<"${V[$1]}" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.1f … %.1f", lo, hi }'
}
# fmt VALUE [AWK-FORMAT [DIVISOR]]: formatted, or "not measured" when empty.
fmt() {
	[ -n "$1" ] || { echo "$NA"; return; }
	awk -v x="$1" -v f="${2:-%s}" -v d="${3:-1}" 'BEGIN { printf f, x / d }'
}
nz() { [ -n "$1" ] && echo "$1" || echo "$NA"; }

NOUP="n/a (no such path upstream)"
rows=()
row() { rows+=("| $1 | $2 | $3 | $4 |"); }

n_rs=$(count rs.probe_ms) n_up=$(count up.probe_ms)
row "probe-to-ready, median of bind cycles (rs: first probe line → \"ready\" line; upstream: \"firmware version\" → bind returned)" \
	"$(nz "$(median rs.probe_ms)") (n=$n_rs)" "$(nz "$(median up.probe_ms)") (n=$n_up)" ms
row "probe-to-ready, min … max" "$(nz "$(range rs.probe_ms)")" "$(nz "$(range up.probe_ms)")" ms
row "probe: first probe line → last probe log line, median" "$(nz "$(median rs.probe_ms)")" "$(nz "$(median up.probe_ms_lastlog)")" ms
row "probe: first probe line → bind write returned, median" "$(nz "$(median rs.probe_ms_ret)")" "$(nz "$(median up.probe_ms)")" ms
row "bind write wall time (date before/after), median" "$(nz "$(median rs.bind_wall_ms)")" "$(nz "$(median up.bind_wall_ms)")" ms
row "first load: insmod / modprobe wall time (upstream: + dependency modules)" "$(fmt "$(get rs.load_wall_ms)" %.1f)" "$(fmt "$(get up.load_wall_ms)" %.1f)" ms
for c in 1 32; do
	row "NOP latency p50, $c caller(s)" "$(fmt "$(get rs.nop$c.p50_ns)" %.1f 1000)" "$NOUP" µs
	row "NOP latency p99, $c caller(s)" "$(fmt "$(get rs.nop$c.p99_ns)" %.1f 1000)" "$NOUP" µs
	row "NOP latency max, $c caller(s)" "$(fmt "$(get rs.nop$c.max_ns)" %.1f 1000)" "$NOUP" µs
	row "NOP throughput, $c caller(s) ($(nz "$(get rs.nop$c.nops)") NOPs, $(nz "$(get rs.nop$c.errors)") errors)" \
		"$(fmt "$(get rs.nop$c.ops_per_sec)" %d)" "$NOUP" ops/s
done
held_note() { # VALUE → VALUE, flagged when below the pages asked for
	[ -n "$1" ] || { echo "$NA"; return; }
	case "$1" in *[!0-9]*) echo "$1 (unreadable)"; return ;; esac
	[ "$1" -ge "$PAGES" ] && echo "$1" || echo "$1 (< $PAGES: reclaim figure not comparable)"
}
row "pages held by the firmware before unload (init demand $PAGES)" "$(held_note "$(get rs.held_before_unload)")" "$(held_note "$(get up.held_before_unload)")" pages
row "reclaim time, driver's own log (\"reclaimed N firmware pages in T ms\")" \
	"$(fmt "$(get rs.reclaim_log_ms)" %d)$( [ -n "$(get rs.reclaimed_pages)" ] && echo " ($(get rs.reclaimed_pages) pages)")" "n/a (upstream logs no reclaim time)" ms
# incomplete WHO: a warning when WHO's unload left pages with the firmware.
incomplete() {
	local h
	h=$(get "$1.held_after_unload")
	[ -n "$(get "$1.rmmod_wall_ms")" ] || return 0
	case "$h" in "" | 0) ;; *) echo " (RECLAIM INCOMPLETE: $h pages not returned)" ;; esac
}
row "rmmod wall time with the pages held (includes teardown)" "$(fmt "$(get rs.rmmod_wall_ms)" %.1f)$(incomplete rs)" "$(fmt "$(get up.rmmod_wall_ms)" %.1f)$(incomplete up)" ms
row "pages still held after unload (emulator ledger)" "$(nz "$(get rs.held_after_unload)")" "$(nz "$(get up.held_after_unload)")" pages
row "load with $PAGES pages demanded: insmod / modprobe wall time" "$(fmt "$(get rs.big_load_wall_ms)" %.1f)" "$(fmt "$(get up.big_load_wall_ms)" %.1f)" ms

{
	echo "# mlx5_rs vs upstream mlx5_core on the emulated ConnectX ($DATE)"
	echo
	echo "| metric | mlx5_rs | upstream mlx5_core | unit |"
	echo "|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Conditions: $ACCEL, 2 vCPUs, 2 GiB guest RAM, host $(nproc) CPUs shared (load average $(cut -d' ' -f1-3 /proc/loadavg) at the end);"
	echo "guest kernel $(grep -a -h -o 'kernel [0-9][^ ,]*' "$OUT/probe-nop.console.log" | head -n1 | sed 's/kernel //' || true) with lockdep, kmemleak, DMA-API debug (tests/kernel/mlx5-rs.config);"
	echo "emulator mlx5-emu (default page demands for run 1; --init-pages $PAGES for run 2); mlx5_rs at $COMMIT; date $DATE; make bench took ${TOTAL} s."
	echo "VM runs: probe-nop: $(verdict probe-nop); reclaim: $(verdict reclaim) (judge verdicts; consoles in $OUT/)."
	notes=$(cat "$OUT/probe-nop.console.log" "$OUT/reclaim.console.log" 2>/dev/null | tr -d '\r' | grep -a '^BENCH-NOTE ' | sed 's/^BENCH-NOTE /- /' || true)
	[ -n "$notes" ] && { echo; echo "Guest notes:"; echo "$notes"; }
	errs=$(cat "$OUT/probe-nop.console.log" "$OUT/reclaim.console.log" 2>/dev/null | tr -d '\r' |
		sed -n '/^---- mlx5_core kernel log (errors\/warnings) ----$/,/^-----*$/p' | grep -a '^\[' | sort -u | sed 's/^/    /' || true)
	[ -n "$errs" ] && { echo; echo "Upstream mlx5_core errors/warnings in dmesg:"; echo "$errs"; }
	true
} >"$OUT/last.md"
echo
cat "$OUT/last.md"
echo
log "table written to $OUT/last.md"
