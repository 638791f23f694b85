#!/usr/bin/env bash
# `make check`: set up everything and run every test; the last line is
#   N passed, N failed
# Phases: toolbox; kernel and module (cached, rebuilt only when inputs change; with the
# test modules of tests/modules/), with the cold toolbox check (toolbox.sh --cold-check)
# and the emulator's build beside them; harness self-test; then the VM runs one after
# another, with the lint (tests/lint.sh:
# rustfmt, clippy, production build without test hooks) and the host tests (cargo
# test) running beside the first: the main VM run (KUnit suites + guest scenarios), the
# VM run with two emulated functions (tests/scenarios-2fn/, 2 MSI-X vectors on one),
# the InfiniBand VM run (tests/scenarios-ib/ below 93: pyverbs, the verbs storm, the
# user-space verbs scenarios, upstream mlx5_ib's oracles, devlink), the wired VM run
# (two emulated devices joined by the wire, tests/scenarios-wire/) and the data-path VM
# run (tests/scenarios-ib/ 93 to 99: traffic, recovery and resets on both drivers).
set -u
. "$(dirname "$0")/vm/lib.sh"

PASSED=0 FAILED=0 PHASES=()
phase_start() { P_NAME=$1; P_T0=$(date +%s); log "== $1"; }
phase_end() { PHASES+=("$(printf '%-10s %5d s' "$P_NAME" $(($(date +%s) - P_T0)))"); }
add_counts() { # add_counts "N passed, M failed" line
	local p f
	p=$(sed -E -n 's/(^|.*[^0-9])([0-9]+) passed.*/\2/p' <<<"$1" | tail -n1)
	f=$(sed -E -n 's/(^|.*[^0-9])([0-9]+) failed.*/\2/p' <<<"$1" | tail -n1)
	PASSED=$((PASSED + ${p:-0})); FAILED=$((FAILED + ${f:-0}))
}
finish() {
	echo
	echo "phase times:"; printf '  %s\n' "${PHASES[@]}"
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
	exit $?
}
BESIDE_PIDS=()
setup_failed() {
	FAILED=$((FAILED + 1)); log "set-up failed: $1"
	[ ${#BESIDE_PIDS[@]} -gt 0 ] && kill "${BESIDE_PIDS[@]}" 2>/dev/null
	phase_end; finish
}

phase_start toolbox; "$REPO/tests/vm/toolbox.sh" || setup_failed toolbox; phase_end

# Two phases run beside the kernel and module phases, each with its output kept for
# when they are joined (before the self-test): neither needs what those make, nor they
# anything of theirs, and the module build leaves part of the two cores idle.
#   cold-tbox  the from-nothing toolbox path, in a scratch cache with a reduced package
#              list: the path a new machine takes, which the cached toolbox above no
#              longer exercises (~18 s, mostly dpkg)
#   emu        the emulator, built once before the lanes: the boots take it from here
#              (MLX5RS_EMU_BIN), so none of them waits on cargo's lock while the host
#              tests build beside them
BESIDE=$CACHE/runs/beside-$$
rm -rf "$BESIDE"
mkdir -p "$BESIDE"
# beside NAME CMD...: CMD in the background; its output, status and seconds in $BESIDE.
beside() {
	local name=$1 t0
	shift
	t0=$(date +%s)
	{
		"$@" >"$BESIDE/$name.log" 2>&1
		echo $? >"$BESIDE/$name.rc"
		echo $(($(date +%s) - t0)) >"$BESIDE/$name.secs"
	} &
	BESIDE_PIDS+=("$!")
}
# joined NAME: waits for NAME, prints its output, records its time; its status.
joined() {
	local rc
	while [ ! -e "$BESIDE/$1.secs" ] && jobs -r | grep -q .; do wait -n 2>/dev/null || true; done
	log "== $1 (beside the kernel and module phases)"
	cat "$BESIDE/$1.log" 2>/dev/null
	PHASES+=("$(printf '%-10s %5s s' "$1" "$(cat "$BESIDE/$1.secs" 2>/dev/null || echo '?')")")
	rc=$(cat "$BESIDE/$1.rc" 2>/dev/null || echo 1)
	return "$rc"
}
beside cold-tbox "$REPO/tests/vm/toolbox.sh" --cold-check
beside emu sh -c 'cd "$1" && cargo build -q --release -p mlx5-emu' emu "$REPO"

phase_start kernel; "$REPO/tests/vm/kernel.sh" || setup_failed kernel; phase_end
phase_start module; "$REPO/tests/vm/module.sh" || setup_failed "module build"; phase_end

if joined cold-tbox; then add_counts "1 passed, 0 failed"; else add_counts "0 passed, 1 failed"; fi
if joined emu; then
	export MLX5RS_EMU_BIN=$CARGO_TARGET_DIR/release/mlx5-emu
else
	P_NAME=emu P_T0=$(date +%s)
	setup_failed "emulator build"
fi
BESIDE_PIDS=()
rm -rf "$BESIDE"

phase_start selftest
st=$("$REPO/tests/vm/judge-selftest.sh" 2>&1 | tail -n1); echo "$st" >&2; add_counts "$st"
phase_end

# The VM boots run one after another (the host has 2 cores, and a TCG guest with 2
# vCPUs uses them: Documentation/testing.md "The VM lanes" measured one lane against
# three side by side), in this order:
#           vm      the main boot: KUnit + tests/scenarios/ (the longest by far); the
#                   only boot that runs the module's KUnit suites (the others boot
#                   with MLX5RS_KUNIT=0: the same suites again would prove nothing)
#           vm-2fn  two emulated functions (tests/scenarios-2fn/), function 1 offering
#                   only 2 MSI-X vectors (tests/guest/msix-few.sh: mlx5_rs and upstream
#                   mlx5_core bind with fewer completion EQs; QEMU fixes the table size
#                   when it realizes the device)
#           vm-ib   tests/scenarios-ib/ below 93 (tests/guest/check-ib.sh): page
#                   requests against both drivers (54), pyverbs against both (73), the
#                   verbs storm, MRs, CQs, QPs and SRQs from user space, upstream
#                   mlx5_ib's oracles, devlink on both drivers (82)
#           vm-wire two emulated devices whose ports are wired to each other (vm.sh
#                   --wired, tests/scenarios-wire/): both ports up, the cable pulled,
#                   MADs across the devices under upstream mlx5_core + mlx5_ib, traffic
#                   across them under upstream and then mlx5_rs (30-wire-traffic)
#           vm-dp   tests/scenarios-ib/ 93 to 95 and 97 to 99 (tests/guest/check-dp.sh):
#                   traffic on both drivers (93), faults under traffic (94), pyverbs'
#                   traffic files on both (95), both drivers' recovery from a fatal
#                   error (97), a PCI error (98) and a sync reset (99)
# vm and vm-2fn end with their driver(s) left bound for the power-off's shutdown callback.
# Each boot's console goes to $CACHE/runs/last-check-<boot>.log, not to the terminal; a
# progress line a minute shows the lane, and each boot's failures print when it ends.
# A lane has a time budget: each boot's --timeout is cut to what the lane has left, and
# a boot with less than a minute left is not started (counted as one failure).
# The counts are each boot's judge line, added up as before; a boot that failed without
# a counted failure (no tests ran, set-up broke) still counts one.
LANES=$CACHE/runs/lanes-$$
# (Other clones' runs may be under way: only lane directories of a day ago go.)
find "$CACHE/runs" -maxdepth 1 -name 'lanes-*' -mmin +1440 -exec rm -rf {} + 2>/dev/null
mkdir -p "$LANES"
# lane_boot LANE-DEADLINE NAME TIMEOUT VM.SH-ARGS...: one boot within the lane's budget;
# its exit status, seconds and console in $LANES/NAME.{rc,secs} and last-check-NAME.log.
# LANE_KUNIT=0 (set for the call) for a boot that runs no KUnit suite.
lane_boot() {
	local deadline=$1 name=$2 tmo=$3; shift 3
	local logf=$CACHE/runs/last-check-$name.log left t0 rc
	left=$((deadline - $(date +%s)))
	[ "$left" -lt "$tmo" ] && tmo=$left
	echo "$name" >"$LANES/current.$BASHPID"
	if [ "$tmo" -lt 60 ]; then
		echo "vm: lane out of time before this boot" >"$logf"
		echo 124 >"$LANES/$name.rc"; echo 0 >"$LANES/$name.secs"
		return
	fi
	t0=$(date +%s)
	# The boot with KUnit (LANE_KUNIT unset: the main one) is held by the judge to
	# tests/vm/kunit-cases.sh's list, and fails if none ran; the others (LANE_KUNIT=0)
	# run no suite. 1 GiB of guest RAM, not vm.sh's 2 (the benchmarks'): each kmemleak
	# scan reads the struct page of every page frame, ~1.8 s a scan at 2 GiB in the TCG
	# guest and ~1.2 s at 1, and a run makes some 50 scans; no scenario needs more.
	MLX5RS_KUNIT=${LANE_KUNIT:-1} MLX5RS_KUNIT_REQUIRED=${LANE_KUNIT:-1} \
		"$REPO/tests/vm/vm.sh" --timeout "$tmo" --mem 1G "$@" >"$logf" 2>&1
	rc=$?
	echo "$rc" >"$LANES/$name.rc"
	echo $(($(date +%s) - t0)) >"$LANES/$name.secs"
}
# boot_counts NAME: a finished boot's judge line added to the totals, its failures shown.
boot_counts() {
	local logf=$CACHE/runs/last-check-$1.log vm_rc vm_out
	vm_rc=$(cat "$LANES/$1.rc" 2>/dev/null || echo 125)
	vm_out=$(tail -n1 "$logf" 2>/dev/null)
	[ -n "$vm_out" ] || vm_out="no verdict"
	sed -n '/^vm: failures:/,$p' "$logf" >&2
	log "$1: ${vm_out#vm: } (exit $vm_rc, $(cat "$LANES/$1.secs" 2>/dev/null || echo '?') s; console: $logf)"
	case "$vm_out" in *passed*) add_counts "$vm_out" ;; esac
	if [ "$vm_rc" -ne 0 ] && ! grep -Eq '[1-9][0-9]* failed' <<<"$vm_out"; then
		FAILED=$((FAILED + 1)); log "$1: run failed (exit $vm_rc) without a counted failure"
	fi
	PHASES+=("$(printf '%-10s %5s s' "$1" "$(cat "$LANES/$1.secs" 2>/dev/null || echo '?')")")
	# Its slowest scenarios (the runner's MLX5RS-END lines), for the lane balance.
	log "$1: slowest scenarios: $(sed -n 's/^.*MLX5RS-END \([^ ]*\) rc=[0-9]* secs=\([0-9]*\).*$/\2 s \1/p' "$logf" |
		grep -v " s tests/" | sort -rn | head -n 5 | paste -sd, | sed "s/,/, /g")"
}
# lane_status PID: "boot: N s, P passed F failed, <last scenario>" of a running lane.
lane_status() {
	local name logf
	name=$(cat "$LANES/current.$1" 2>/dev/null) || { echo "starting"; return; }
	logf=$CACHE/runs/last-check-$name.log
	printf '%s: %d s, %d passed %d failed, %s' "$name" $(($(date +%s) - $(stat -c %Y "$LANES/current.$1"))) \
		"$(grep -a -c 'MLX5RS-TEST: PASS' "$logf" 2>/dev/null)" "$(grep -a -c 'MLX5RS-TEST: FAIL' "$logf" 2>/dev/null)" \
		"$(grep -a -o '^== scenario.*' "$logf" 2>/dev/null | tail -n1 | sed 's/^== scenario *//')"
}

# Lint and host tests run beside the VM lanes (they need nothing the boots use: the
# lint builds its modules in a scratch copy, the host tests in cargo's target dir): a
# TCG guest leaves part of the two cores idle while it waits on its emulator, and the
# two phases (~150 s one after the other) fill it instead of delaying the first boot.
# Their output goes to $LANES/host-side.log; their counts and times join the totals
# after the lanes.
host_side() {
	local t0 lo out rc hp hf
	t0=$(date +%s)
	lo=$("$REPO/tests/lint.sh" | tail -n1)
	case "$lo" in *passed*) echo "$lo" >"$LANES/lint.counts" ;; *) echo "0 passed, 1 failed" >"$LANES/lint.counts"; log "lint: did not run" ;; esac
	echo $(($(date +%s) - t0)) >"$LANES/lint.secs"
	t0=$(date +%s)
	out=$(cd "$REPO" && nice -n 5 cargo test --workspace --release 2>&1); rc=$?
	echo "$out" | grep -E '^test result:|FAILED|panicked' >&2
	hp=$(echo "$out" | sed -n 's/^test result: .* \([0-9]*\) passed; \([0-9]*\) failed.*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
	hf=$(echo "$out" | sed -n 's/^test result: .* \([0-9]*\) passed; \([0-9]*\) failed.*/\2/p' | awk '{ s += $1 } END { print s + 0 }')
	[ "$rc" -ne 0 ] && [ "${hf:-0}" -eq 0 ] && { echo "$out" | tail -n 30 >&2; hf=1; }
	log "host: ${hp:-0} passed, ${hf:-0} failed"
	echo "${hp:-0} passed, ${hf:-0} failed" >"$LANES/host.counts"
	echo $(($(date +%s) - t0)) >"$LANES/host.secs"
}
# host_side_counts NAME: the counts and time of one host-side phase (a phase that did not
# finish counts one failure).
host_side_counts() {
	local c
	c=$(cat "$LANES/$1.counts" 2>/dev/null) || { c="0 passed, 1 failed"; log "$1: did not finish"; }
	add_counts "$c"
	PHASES+=("$(printf '%-10s %5s s' "$1" "$(cat "$LANES/$1.secs" 2>/dev/null || echo '?')")")
}

phase_start vm-lanes
T_LANES=$(date +%s)
host_side >"$LANES/host-side.log" 2>&1 &
HOST_SIDE=$!
# The boots (lane_boot DEADLINE NAME TIMEOUT ...), each in a function the lanes call.
boot_vm() { lane_boot "$1" vm 4200 --run tests/guest/check.sh,tests/guest/shutdown-handoff.sh; }
boot_2fn() {
	LANE_KUNIT=0 lane_boot "$1" vm-2fn 1800 --functions 2 --fn-emu-arg 1 --msix-vectors --fn-emu-arg 1 2 \
		--run tests/guest/check-2fn.sh,tests/guest/msix-few.sh,tests/guest/shutdown-handoff.sh
}
boot_ib() { LANE_KUNIT=0 lane_boot "$1" vm-ib 2700 --run tests/guest/check-ib.sh; }
boot_wire() { LANE_KUNIT=0 lane_boot "$1" vm-wire 1200 --wired --run tests/guest/check-wire.sh; }
boot_dp() { LANE_KUNIT=0 lane_boot "$1" vm-dp 2400 --run tests/guest/check-dp.sh; }
# MLX5RS_CHECK_LANES: 1 (one boot after another, the default) or 3 (three lanes side by
# side: vm; vm-2fn and vm-ib; vm-wire and vm-dp); a lane's budget is its boots' own
# timeouts, added up.
case ${MLX5RS_CHECK_LANES:-1} in
3)
	( boot_vm $((T_LANES + 4200)) ) &
	LANE_PIDS=("$!")
	(
		d=$((T_LANES + 1800 + 2700))
		boot_2fn $d; boot_ib $d
	) &
	LANE_PIDS+=("$!")
	(
		d=$((T_LANES + 1200 + 2400))
		boot_wire $d; boot_dp $d
	) &
	LANE_PIDS+=("$!")
	;;
*)
	(
		d=$((T_LANES + 4200 + 1800 + 2700 + 1200 + 2400))
		boot_vm $d; boot_2fn $d; boot_ib $d; boot_wire $d; boot_dp $d
	) &
	LANE_PIDS=("$!")
	;;
esac
# Progress once a minute until every lane is done (a lane ends by itself: every boot
# has a timeout, and vm.sh kills QEMU and the emulators on every exit path).
lanes_running() {
	local p
	for p in "${LANE_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done
	return 1
}
while lanes_running; do
	for _ in $(seq 60); do
		lanes_running || break
		sleep 1
	done
	st=""
	for l in "${!LANE_PIDS[@]}"; do
		p=${LANE_PIDS[$l]}
		if kill -0 "$p" 2>/dev/null; then st="$st | lane $((l + 1)) $(lane_status "$p")"; else st="$st | lane $((l + 1)) done"; fi
	done
	if kill -0 "$HOST_SIDE" 2>/dev/null; then st="$st | lint+host running"; else st="$st | lint+host done"; fi
	log "vm lanes, $(($(date +%s) - T_LANES)) s: ${st# | }"
done
wait "${LANE_PIDS[@]}"
if kill -0 "$HOST_SIDE" 2>/dev/null; then log "lanes done; waiting for the lint and host tests"; fi
wait "$HOST_SIDE"
grep -E 'lint: FAIL|FAILED|panicked|did not' "$LANES/host-side.log" >&2
log "lint and host tests: $(cat "$LANES/lint.counts" 2>/dev/null || echo 'no counts') (lint), $(cat "$LANES/host.counts" 2>/dev/null || echo 'no counts') (host); log: $LANES/host-side.log"
host_side_counts lint
host_side_counts host
for b in vm vm-2fn vm-ib vm-wire vm-dp; do boot_counts "$b"; done
phase_end

finish
