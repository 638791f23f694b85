#!/usr/bin/env bash
# Judge a guest run from its serial console log: judge.sh LOG [SECONDS]
#
# Counts the guest's MLX5RS-TEST lines and the KUnit test cases (KTAP in the kernel
# log), and adds one failure for each of: a KUnit case of ours that failed, was
# skipped, did not run or is not in the source (once any of our suites ran, or always
# with MLX5RS_KUNIT_REQUIRED=1, the cases must be exactly those tests/vm/kunit-cases.sh
# lists, or the file MLX5RS_KUNIT_CASES), guest did not finish (hang, crash, timeout),
# a guest script or scenario that did not return or exited non-zero unexplained (its
# MLX5RS-BEGIN / MLX5RS-END lines), and each kind of kernel report (oops, BUG,
# WARNING, panic, lockdep, KASAN, UBSAN, DMA-API debug, kmemleak, hung task, RCU
# stall, OOM) but a known upstream report a scenario announced (below). Prints the
# failures and a last line
#   vm: N passed, N failed
# and exits non-zero if anything failed.
set -u
LOG=$1; SECS=${2:-?}
pass=0; fail=0
failures=()

strip() { sed -e 's/\r$//' -e 's/^\[ *[0-9.]*\] //' "$LOG"; }

while read -r line; do
	case "$line" in
	"MLX5RS-TEST: PASS "*) pass=$((pass + 1)) ;;
	"MLX5RS-TEST: FAIL "*) fail=$((fail + 1)); failures+=("${line#MLX5RS-TEST: }") ;;
	esac
done < <(strip | grep -a -o 'MLX5RS-TEST: .*')

# KUnit cases of our suites (mlx5_rs*): KTAP "    # Subtest: <suite>" then indented
# "    ok N <case>" / "    not ok N <case>" lines ("ok N <case> # SKIP ..." for a
# skipped one). The kernel's own suites are not ours.
kunit=$(strip | awk '
	/^    # Subtest: / { suite = $3; next }
	/^    ok [0-9]+ / { if (suite ~ /^mlx5_rs/) print (/ # SKIP/ ? "SKIP " : "PASS ") suite "." $3; next }
	/^    not ok [0-9]+ / { if (suite ~ /^mlx5_rs/) print "FAIL " suite "." $4; next }
	/^(not )?ok [0-9]+ / { suite = "" }')
# KUnit runs at every insmod: count each case once (a failure in any run still counts).
kp=$(grep '^PASS ' <<<"$kunit" | sort -u | grep -c .)
pass=$((pass + kp))
while read -r l; do
	[ -n "$l" ] || continue
	fail=$((fail + 1)); failures+=("KUnit: ${l#FAIL }")
done < <(grep '^FAIL ' <<<"$kunit")
while read -r l; do
	[ -n "$l" ] || continue
	fail=$((fail + 1)); failures+=("KUnit: ${l#SKIP } skipped")
done < <(grep '^SKIP ' <<<"$kunit" | sort -u)
# Held to the exact list of cases: a suite that was not built or registered, or that
# stopped half-way without an oops, is a failure, not fewer passes. The list comes
# from the sources (every #[test] of a kunit_tests module); a boot that loads no test
# build of the module (benchmarks, upstream-only boots) has none of our suites and is
# not held to it unless MLX5RS_KUNIT_REQUIRED=1.
if [ -n "$kunit" ] || [ "${MLX5RS_KUNIT_REQUIRED:-0}" = 1 ]; then
	if [ -n "${MLX5RS_KUNIT_CASES:-}" ]; then
		want=$(LC_ALL=C sort -u "$MLX5RS_KUNIT_CASES")
	else
		want=$("$(dirname "$0")/kunit-cases.sh")
	fi
	got=$(sed 's/^[A-Z]* //' <<<"$kunit" | LC_ALL=C sort -u)
	while read -r l; do
		[ -n "$l" ] || continue
		fail=$((fail + 1)); failures+=("KUnit: $l did not run")
	done < <(LC_ALL=C comm -23 <(printf '%s\n' "$want") <(printf '%s\n' "$got"))
	while read -r l; do
		[ -n "$l" ] || continue
		fail=$((fail + 1)); failures+=("KUnit: $l ran but is not in the sources (module of another tree?)")
	done < <(LC_ALL=C comm -13 <(printf '%s\n' "$want") <(printf '%s\n' "$got"))
fi

# Each guest script and scenario runs between "MLX5RS-BEGIN <name>" and
# "MLX5RS-END <name> rc=<status> secs=<s>" (tests/guest/stage2.sh, run-scenarios.sh):
# a BEGIN without its END is a script that never returned (crash, hang, a runner that
# died), and a non-zero status is a failure unless a failed check inside it (or a
# failure counted for a script inside it) already counts it: a script that stopped
# before its last check fails the run whatever PASS lines it printed.
while IFS= read -r l; do
	[ -n "$l" ] || continue
	fail=$((fail + 1)); failures+=("$l")
done < <(strip | grep -a -o -E 'MLX5RS-(TEST: FAIL |BEGIN |END ).*' | awk '
	/^MLX5RS-TEST: FAIL / { nf++; next }
	/^MLX5RS-BEGIN / { open[$2] = 1; at[$2] = nf; order[++n] = $2; next }
	/^MLX5RS-END / {
		rc = $3; sub(/^rc=/, "", rc)
		if (!($2 in open)) { print "script " $2 " ended without its BEGIN line"; nf++; next }
		delete open[$2]
		if (rc != "0" && nf == at[$2]) { print "script " $2 " exited with status " rc " with no failed check"; nf++ }
	}
	END { for (i = 1; i <= n; i++) if (order[i] in open) { print "script " order[i] " did not end (crash, hang or killed)"; delete open[order[i]] } }')

if ! grep -a -q 'MLX5RS-GUEST-DONE' "$LOG"; then
	fail=$((fail + 1)); failures+=("guest did not finish (hang, crash or timeout); last lines above")
fi

# Known reports of upstream's drivers, excused where a scenario announces them: a
# scenario about to trigger one writes "MLX5RS-KNOWN-REPORT: <id>" into the kernel log
# (/dev/kmsg, so that it is ordered with the report itself), and a report block that
# begins after that line, with the header and every signature line below, is left out
# of the report checks (and printed as excused). Anything else in the boot, and a
# report of the same kind that lacks one of the signatures, still fails it.
#   upstream-7.3.4-fw-reset-cleanup: upstream mlx5_core 7.3.4's module removal after a
#     sync reset: mlx5_uninit_one holds the device's intf_state_mutex (&dev->lock_key)
#     while mlx5_fw_reset_cleanup destroys the mlx5_fw_reset_events workqueue, whose
#     reset_now_work took that mutex in mlx5_enter_error_state (99-sync-reset,
#     Documentation/testing.md). Lockdep is off for the rest of the boot after it, so
#     the scenario that announces it runs last in its boot.
declare -A KNOWN_HEADER=(
	[upstream-7.3.4-fw-reset-cleanup]='WARNING: possible circular locking dependency detected'
)
declare -A KNOWN_SIGNATURE=(
	[upstream-7.3.4-fw-reset-cleanup]='(wq_completion)mlx5_fw_reset_events|&dev->lock_key|mlx5_sync_reset_now_event|mlx5_fw_reset_cleanup|mlx5_uninit_one'
)
known_args=()
for k in "${!KNOWN_HEADER[@]}"; do known_args+=("$k" "${KNOWN_HEADER[$k]}" "${KNOWN_SIGNATURE[$k]}"); done
KERNEL_LOG=$(mktemp); EXCUSED=$(mktemp); trap 'rm -f "$KERNEL_LOG" "$EXCUSED"' EXIT
# A report block runs from its header to the end of its stack trace ("</TASK>"), at
# most 400 lines; the "====" rule printed just before the header stays (it matches no
# report pattern).
strip | awk -v excused="$EXCUSED" '
	BEGIN {
		for (i = 1; i < ARGC; i += 3) { id[++n] = ARGV[i]; hdr[n] = ARGV[i + 1]; sig[n] = ARGV[i + 2] }
		ARGC = 1
	}
	function flush(   i, j, s, ok, parts, np) {
		ok = 0
		for (i = 1; i <= n && !ok; i++) {
			if (!(id[i] in announced) || index(buf[1], hdr[i]) == 0) continue
			np = split(sig[i], parts, "|"); ok = 1
			for (j = 1; j <= np; j++) {
				s = 0
				for (k = 1; k <= nb; k++) if (index(buf[k], parts[j])) { s = 1; break }
				if (!s) ok = 0
			}
			if (ok) { print id[i] ": " buf[1] " (" nb " lines)" >> excused; delete announced[id[i]] }
		}
		if (!ok) for (k = 1; k <= nb; k++) print buf[k]
		nb = 0; inblock = 0
	}
	{
		if (match($0, /MLX5RS-KNOWN-REPORT: [^ ]+/)) announced[substr($0, RSTART + 21, RLENGTH - 21)] = 1
		if (!inblock) for (i = 1; i <= n; i++) if ((id[i] in announced) && index($0, hdr[i])) { inblock = 1; break }
		if (!inblock) { print; next }
		buf[++nb] = $0
		if (index($0, "</TASK>") || nb >= 400) flush()
	}
	END { if (inblock) flush() }' "${known_args[@]}" >"$KERNEL_LOG"

# Kernel reports that fail a run whatever the guest scripts said.
declare -A REPORTS=(
	[oops]='Oops:|general protection fault|unable to handle'
	[BUG]='BUG:|kernel BUG at'
	# A kernel WARN starts its line ("WARNING: CPU: ..."); upstream mlx5_core's health
	# print ends "severity(4) WARNING:" mid-line (a syndrome's severity name).
	[WARNING]='^WARNING:|------------\[ cut here \]'
	[panic]='Kernel panic'
	[lockdep]='possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|sleeping function called from invalid context|INFO: lockdep is turned off|possible irq lock inversion|lock held when returning'
	[KASAN]='KASAN:'
	[UBSAN]='UBSAN:'
	[DMA-API]='DMA-API: [^ ]+ [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9]: |DMA-API: (device driver|debugging out of memory)|dma-debug disabled'
	[kmemleak]='kmemleak: [0-9]+ new suspected memory leaks|unreferenced object 0x'
	[hung-task]='blocked for more than [0-9]+ seconds'
	[rcu-stall]='rcu: INFO: .* detected stalls|self-detected stall'
	[oom]='invoked oom-killer|Out of memory: Killed process|page allocation failure'
)
for k in "${!REPORTS[@]}"; do
	hit=$(grep -a -m1 -E "${REPORTS[$k]}" "$KERNEL_LOG" || true)
	if [ -n "$hit" ]; then
		fail=$((fail + 1)); failures+=("kernel report ($k): $hit")
	fi
done

if [ ${#failures[@]} -gt 0 ]; then
	echo "vm: failures:"
	printf '  - %s\n' "${failures[@]}"
fi
while read -r l; do
	[ -n "$l" ] && echo "vm: excused, a known upstream report: $l"
done <"$EXCUSED"
echo "vm: run took ${SECS} s; console log: $LOG"
echo "vm: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
