#!/usr/bin/env bash
# `make check`: set up everything and run every test; the last line is
#   N passed, N failed
# Phases: toolbox, cold toolbox check (toolbox.sh --cold-check), kernel, module (cached, rebuilt only when inputs change;
# with the test modules of tests/modules/),
# lint (tests/lint.sh: rustfmt, clippy, production build without test hooks), host
# tests (cargo test), harness self-test, VM run (KUnit suites + guest scenarios), VM run
# with 2 MSI-X vectors, VM run with two emulated functions (tests/scenarios-2fn/).
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
setup_failed() { FAILED=$((FAILED + 1)); log "set-up failed: $1"; phase_end; finish; }

phase_start toolbox; "$REPO/tests/vm/toolbox.sh" || setup_failed toolbox; phase_end
# The from-nothing toolbox path, in a scratch cache with a reduced package list: the
# path a new machine takes, which the cached toolbox above no longer exercises.
phase_start cold-tbox
if "$REPO/tests/vm/toolbox.sh" --cold-check; then add_counts "1 passed, 0 failed"; else add_counts "0 passed, 1 failed"; fi
phase_end
phase_start kernel; "$REPO/tests/vm/kernel.sh" || setup_failed kernel; phase_end
phase_start module; "$REPO/tests/vm/module.sh" || setup_failed "module build"; phase_end

phase_start lint
lo=$("$REPO/tests/lint.sh" | tail -n1)
case "$lo" in *passed*) add_counts "$lo" ;; *) add_counts "0 passed, 1 failed"; log "lint: did not run" ;; esac
phase_end

phase_start host
out=$(cd "$REPO" && cargo test --workspace --release 2>&1); rc=$?
echo "$out" | grep -E '^test result:|FAILED|panicked' >&2
hp=$(echo "$out" | sed -n 's/^test result: .* \([0-9]*\) passed; \([0-9]*\) failed.*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
hf=$(echo "$out" | sed -n 's/^test result: .* \([0-9]*\) passed; \([0-9]*\) failed.*/\2/p' | awk '{ s += $1 } END { print s + 0 }')
[ "$rc" -ne 0 ] && [ "${hf:-0}" -eq 0 ] && { echo "$out" | tail -n 30 >&2; hf=1; }
log "host: ${hp:-0} passed, ${hf:-0} failed"
add_counts "${hp:-0} passed, ${hf:-0} failed"
phase_end

phase_start selftest
st=$("$REPO/tests/vm/judge-selftest.sh" 2>&1 | tail -n1); echo "$st" >&2; add_counts "$st"
phase_end

# vm_boot LOG-NAME VM.SH-ARGS...: one VM boot, its judge's counts added to the totals.
vm_boot() {
	local logf=$CACHE/runs/$1; shift
	mkdir -p "$CACHE/runs"
	"$REPO/tests/vm/vm.sh" "$@" 2>&1 | tee "$logf"
	local vm_rc=${PIPESTATUS[0]} vm_out
	vm_out=$(tail -n1 "$logf")
	case "$vm_out" in *passed*) add_counts "$vm_out" ;; esac
	# A VM run that failed without counting a failure (no tests ran, set-up broke) still fails.
	if [ "$vm_rc" -ne 0 ] && ! grep -Eq '[1-9][0-9]* failed' <<<"$vm_out"; then
		FAILED=$((FAILED + 1)); log "vm: run failed (exit $vm_rc) without a counted failure"
	fi
}

phase_start vm
vm_boot last-check-vm.log --run tests/guest/check.sh,tests/guest/shutdown-handoff.sh --timeout 4200
phase_end
# A second, short boot with two emulated functions (tests/scenarios-2fn/), function 1
# offering only 2 MSI-X vectors (tests/guest/msix-few.sh: mlx5_rs and upstream
# mlx5_core bind with fewer completion EQs; QEMU fixes the table size when it realizes
# the device), ending with both left bound for the power-off's shutdown callback.
phase_start vm-2fn
vm_boot last-check-vm-2fn.log --functions 2 --fn-emu-arg 1 --msix-vectors --fn-emu-arg 1 2 \
	--run tests/guest/check-2fn.sh,tests/guest/msix-few.sh,tests/guest/shutdown-handoff.sh --timeout 1800
phase_end

finish
