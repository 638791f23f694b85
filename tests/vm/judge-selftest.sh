#!/usr/bin/env bash
# Self-test of the VM judge: feed judge.sh synthetic console logs and check that it
# fails runs it must fail (a FAIL line, a kernel WARNING, lockdep, kmemleak, a guest
# that never finished, a KUnit failure) and passes a clean one; and that the host-side
# shutdown verdict fails a run whose power-off did not take the fast-teardown path;
# scripts that exit non-zero or never return fail; the guest library runs nothing when
# sourced and case_lines holds helpers to their exact case lists.
# Last line: N passed, N failed.
set -u
J=$(dirname "$0")/judge.sh
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0 fail=0
expect() { # expect NAME want(0|1) LOG-CONTENT
	printf '%b' "$3" >"$T/$1.log"
	"$J" "$T/$1.log" >"$T/$1.out" 2>&1; got=$([ $? -eq 0 ] && echo 0 || echo 1)
	if [ "$got" = "$2" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "judge-selftest: $1: exit $got, wanted $2"; cat "$T/$1.out"; fi
}
OK='[    1.0] MLX5RS-TEST: PASS a\n'
DONE='MLX5RS-GUEST-DONE rc=0\n'
expect clean 0 "$OK$DONE"
expect failing-check 1 "${OK}MLX5RS-TEST: FAIL b (x)\n$DONE"
expect no-done 1 "$OK"
expect warning 1 "$OK[    2.1] WARNING: CPU: 0 PID: 1 at foo.c:1 bar\n$DONE"
expect lockdep 1 "$OK[    2.1] WARNING: possible circular locking dependency detected\n$DONE"
expect health-severity-ok 0 "$OK[    2.1] mlx5_core 0000:01:00.0: print_health_info:438:(pid 1236): Health issue observed, High temperature, severity(4) WARNING:\n$DONE"
expect kmemleak 1 "${OK}unreferenced object 0xffff888 (size 64):\n$DONE"
expect dma-api 1 "$OK[    3.0] DMA-API: mlx5_rs 0000:00:03.0: device driver frees DMA memory with wrong function\n$DONE"
expect oops 1 "$OK[    3.0] Oops: general protection fault\n$DONE"
KS='[    3.0]     # Subtest: mlx5_rs_cmd\n'
# The KUnit cases the synthetic logs must hold (judge.sh reads the sources' list
# otherwise, tests/vm/kunit-cases.sh).
printf 'mlx5_rs_cmd.mailbox_chain\n' >"$T/kunit.cases"
export MLX5RS_KUNIT_CASES=$T/kunit.cases
expect kunit-fail 1 "$OK$KS[    3.0]     not ok 2 mailbox_chain\n$DONE"
expect kunit-ok 0 "$OK$KS[    3.0]     ok 1 mailbox_chain\n$DONE"
expect kunit-only 0 "$KS[    3.0]     ok 1 mailbox_chain\n$DONE"
expect kunit-rerun-fail 1 "$KS[    3.0]     ok 1 mailbox_chain\n$KS[    9.0]     not ok 1 mailbox_chain\n$DONE"
# Held to the exact list: a case that did not run (a suite not registered, one that
# stopped half-way), one not in the sources, or a skipped one fails.
printf 'mlx5_rs_cmd.mailbox_chain\nmlx5_rs_cmd.mailbox_len\n' >"$T/kunit2.cases"
MLX5RS_KUNIT_CASES=$T/kunit2.cases expect kunit-case-missing 1 "$OK$KS[    3.0]     ok 1 mailbox_chain\n$DONE"
expect kunit-case-unknown 1 "$OK$KS[    3.0]     ok 1 mailbox_chain\n[    3.0]     ok 2 mailbox_len\n$DONE"
expect kunit-skip 1 "$OK$KS[    3.0]     ok 1 mailbox_chain # SKIP no device\n$DONE"
expect kunit-absent-not-required 0 "$OK$DONE"
MLX5RS_KUNIT_REQUIRED=1 expect kunit-absent-required 1 "$OK$DONE"
# Without MLX5RS_KUNIT_CASES the list is the sources': every case of it passes, one
# of them missing fails.
ktap() { # ktap DROP: the sources' cases as KTAP lines, less the last DROP of them
	"$(dirname "$0")/kunit-cases.sh" | head -n "-$1" | awk -F. '
		$1 != s { s = $1; printf "[    3.0]     # Subtest: %s\\n", s }
		{ printf "[    3.0]     ok %d %s\\n", NR, $2 }'
}
MLX5RS_KUNIT_CASES= expect kunit-sources-list 0 "$OK$(ktap 0)$DONE"
MLX5RS_KUNIT_CASES= expect kunit-sources-list-one-missing 1 "$OK$(ktap 1)$DONE"
expect dma-debug-disabled 1 "$OK[  619.5] DMA-API: cacheline tracking ENOMEM, dma-debug disabled\n$DONE"
expect foreign-kunit-not-counted 1 "[    3.0]     # Subtest: rust_netlink\n[    3.0]     ok 1 x\n$DONE"
expect dma-api-info-ok 0 "$OK[    0.5] DMA-API: preallocated 65536 debug entries\n$DONE"
expect oom 1 "$OK[    5.0] sh invoked oom-killer: gfp_mask=0x140cca\n$DONE"
expect alloc-failure 1 "$OK[    5.0] insmod: page allocation failure: order:0\n$DONE"
expect nothing 1 "$DONE"
# A known upstream report (judge.sh KNOWN_*): excused only after its announcement in
# the kernel log, only whole (header and every signature line), once per announcement.
KA='[   60.0] MLX5RS-KNOWN-REPORT: upstream-7.3.4-fw-reset-cleanup\n'
KR='[   63.6] ======================================================\n[   63.6] WARNING: possible circular locking dependency detected\n[   63.6] modprobe/508 is trying to acquire lock:\n[   63.6] ff46 ((wq_completion)mlx5_fw_reset_events){+.+.}-{0:0}, at: touch_wq_lockdep_map+0x21/0x80\n[   63.6] ff46 (&dev->lock_key){+.+.}-{4:4}, at: mlx5_uninit_one+0x2c/0xb0 [mlx5_core]\n[   63.6]        mlx5_sync_reset_now_event.cold+0xc6/0xc8 [mlx5_core]\n[   63.7]        mlx5_fw_reset_cleanup+0x37/0x50 [mlx5_core]\n[   63.7] Call Trace:\n[   63.7]  <TASK>\n[   63.7]  dump_stack_lvl+0x5d/0x80\n[   63.7]  </TASK>\n'
expect known-report-announced 0 "$OK$KA$KR$DONE"
expect known-report-unannounced 1 "$OK$KR$DONE"
expect known-report-before-announcement 1 "$OK$KR$KA$DONE"
expect known-report-twice 1 "$OK$KA$KR$KR$DONE"
expect known-report-other-lockdep 1 "$OK$KA[   63.6] WARNING: possible circular locking dependency detected\n[   63.6] (&foo->lock){+.+.}\n[   63.7]  </TASK>\n$DONE"
expect known-report-signature-missing 1 "$OK$KA$(printf '%s' "$KR" | sed 's/mlx5_fw_reset_cleanup/mlx5_other_cleanup/')$DONE"
expect known-report-then-warning 1 "$OK$KA$KR[   70.0] WARNING: CPU: 0 PID: 1 at foo.c:1 bar\n$DONE"
expect known-report-announced-absent 0 "$OK$KA$DONE"
# Scripts and scenarios between MLX5RS-BEGIN / MLX5RS-END (tests/guest/stage2.sh,
# run-scenarios.sh): a non-zero status or a missing END fails, whatever PASS lines.
B='MLX5RS-BEGIN tests/guest/check.sh\nMLX5RS-BEGIN scenarios/10-a\n'
E0='MLX5RS-END scenarios/10-a rc=0 secs=3\nMLX5RS-END tests/guest/check.sh rc=0 secs=9\n'
expect markers-clean 0 "$B$OK$E0$DONE"
expect nonzero-exit 1 "${B}${OK}MLX5RS-END scenarios/10-a rc=1 secs=3\nMLX5RS-END tests/guest/check.sh rc=1 secs=9\n$DONE"
expect nonzero-exit-script 1 "MLX5RS-BEGIN tests/guest/msix-few.sh\n${OK}MLX5RS-END tests/guest/msix-few.sh rc=2 secs=1\n$DONE"
expect missing-end 1 "${B}${OK}MLX5RS-BEGIN scenarios/20-b\n${OK}MLX5RS-END scenarios/10-a rc=0 secs=3\nMLX5RS-END tests/guest/check.sh rc=0 secs=9\n$DONE"
expect missing-end-crash 1 "${B}${OK}"
expect end-without-begin 1 "${OK}MLX5RS-END scenarios/10-a rc=0 secs=3\n$DONE"
expect end-with-forks 0 "${B}${OK}MLX5RS-END scenarios/10-a rc=0 secs=3 forks=12\nMLX5RS-END tests/guest/check.sh rc=0 secs=9\n$DONE"
expect end-with-forks-nonzero-exit 1 "${B}${OK}MLX5RS-END scenarios/10-a rc=1 secs=3 forks=12\nMLX5RS-END tests/guest/check.sh rc=1 secs=9\n$DONE"
# counted once: a failed check explains its scenario's and its script's status.
counts() { # counts NAME "N passed, M failed" LOG-CONTENT
	printf '%b' "$3" >"$T/$1.log"
	got=$("$J" "$T/$1.log" 2>&1 | tail -n1)
	if [ "$got" = "vm: $2" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "judge-selftest: $1: '$got', wanted 'vm: $2'"; fi
}
counts fail-explains-exit "1 passed, 1 failed" "${B}${OK}MLX5RS-TEST: FAIL b (x)\nMLX5RS-END scenarios/10-a rc=1 secs=3\nMLX5RS-END tests/guest/check.sh rc=1 secs=9\n$DONE"
counts exit-counted-once "1 passed, 1 failed" "${B}${OK}MLX5RS-END scenarios/10-a rc=1 secs=3\nMLX5RS-END tests/guest/check.sh rc=1 secs=9\n$DONE"
counts end-after-timestamp "1 passed, 0 failed" "[    1.0] MLX5RS-BEGIN scenarios/10-a\n$OK[    2.0] MLX5RS-END scenarios/10-a rc=0 secs=1\n$DONE"

# The host-side shutdown verdict (shutdown-verdict.sh): its lines go through the judge.
V=$(dirname "$0")/shutdown-verdict.sh; export MLX5RS_EMU_FINAL_WAIT=1
FASTLINE='[   82.3] mlx5_rs 0000:01:00.0: fast teardown (shutdown): prepared, nic_interface DISABLED confirmed in 2 ms\n[   82.4] mlx5_rs 0000:01:00.0: shutdown: Fast teardown done; 3 IRQ vector(s) freed, MSI-X disabled, device disabled\n'
NOIRQLINE='[   82.3] mlx5_rs 0000:01:00.0: fast teardown (shutdown): prepared, nic_interface DISABLED confirmed in 2 ms\n'
EXPECT='MLX5RS-SHUTDOWN-EXPECT held=8256\n'
stats() { # stats PREPARE_FAST GRACEFUL QUIESCED HELD VIOLATIONS [MSIX_ENABLED]
	printf 'mlx5-emu: final stats: {"function":{"teardowns":{"graceful":%s,"force":0,"prepare_fast":%s},"quiesced":%s},"pages":{"held":%s},"violations":%s,"dma_errors":0,"timeline":{"prepare_fast_ms":1000},"pci":{"msix_enabled":%s,"msix_disabled_ms":1010,"bus_master":false,"master_cleared_ms":1011}}\n' "$2" "$1" "$3" "$4" "$5" "${6:-false}"
}
verdict() { # verdict NAME want(0|1) CONSOLE EMU-LOG
	printf '%b' "$3$DONE" >"$T/$1.console"; printf '%s' "$4" >"$T/$1.emu"
	"$V" "$T/$1.console" "$T/$1.emu" >>"$T/$1.console" 2>"$T/$1.err"
	"$J" "$T/$1.console" >"$T/$1.out" 2>&1; got=$([ $? -eq 0 ] && echo 0 || echo 1)
	if [ "$got" = "$2" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "judge-selftest: $1: exit $got, wanted $2"; cat "$T/$1.out" "$T/$1.err"; fi
}
verdict shutdown-fast 0 "$OK$EXPECT$FASTLINE" "$(stats 1 0 true 8256 0)"
verdict shutdown-no-fast-line 1 "$OK$EXPECT" "$(stats 1 0 true 8256 0)"
verdict shutdown-reclaimed 1 "$OK$EXPECT$FASTLINE" "$(stats 1 0 true 0 0)"
verdict shutdown-graceful 1 "$OK$EXPECT$FASTLINE" "$(stats 0 1 false 8256 0)"
verdict shutdown-doorbell-after-stop 1 "$OK$EXPECT$FASTLINE" "$(stats 1 0 true 8256 1)"
verdict shutdown-no-final-stats 1 "$OK$EXPECT$FASTLINE" ""
verdict shutdown-no-irq-line 1 "$OK$EXPECT$NOIRQLINE" "$(stats 1 0 true 8256 0)"
verdict shutdown-msix-left-on 1 "$OK$EXPECT$FASTLINE" "$(stats 1 0 true 8256 0 true)"
# Two functions (vm.sh --functions 2): function 1 has its own EXPECT line, driver line
# and emulator log, and fails on its own.
verdict2() { # verdict2 NAME want(0|1) CONSOLE EMU-LOG EMU1-LOG
	printf '%b' "$3$DONE" >"$T/$1.console"; printf '%s' "$4" >"$T/$1.emu"; printf '%s' "$5" >"$T/$1.emu1"
	"$V" "$T/$1.console" "$T/$1.emu" "$T/$1.emu1" >>"$T/$1.console" 2>"$T/$1.err"
	"$J" "$T/$1.console" >"$T/$1.out" 2>&1; got=$([ $? -eq 0 ] && echo 0 || echo 1)
	if [ "$got" = "$2" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "judge-selftest: $1: exit $got, wanted $2"; cat "$T/$1.out" "$T/$1.err"; fi
}
EXPECT1='MLX5RS-SHUTDOWN-EXPECT fn=1 bdf=0000:02:00.0 held=8300\n'
FASTLINE1='[   82.4] mlx5_rs 0000:02:00.0: fast teardown (shutdown): prepared, nic_interface DISABLED confirmed in 3 ms\n[   82.5] mlx5_rs 0000:02:00.0: shutdown: Fast teardown done; 3 IRQ vector(s) freed, MSI-X disabled, device disabled\n'
verdict2 shutdown-2fn-fast 0 "$OK$EXPECT$EXPECT1$FASTLINE$FASTLINE1" "$(stats 1 0 true 8256 0)" "$(stats 1 0 true 8300 0)"
verdict2 shutdown-2fn-second-reclaimed 1 "$OK$EXPECT$EXPECT1$FASTLINE$FASTLINE1" "$(stats 1 0 true 8256 0)" "$(stats 1 0 true 0 0)"
verdict2 shutdown-2fn-second-not-logged 1 "$OK$EXPECT$EXPECT1$FASTLINE" "$(stats 1 0 true 8256 0)" "$(stats 1 0 true 8300 0)"
verdict2 shutdown-2fn-second-no-expect 1 "$OK$EXPECT$FASTLINE$FASTLINE1" "$(stats 1 0 true 8256 0)" "$(stats 1 0 true 8300 0)"
# Not asked for (no EXPECT line): no verdict lines at all.
printf '%b' "$OK$DONE" >"$T/none.console"; : >"$T/none.emu"
if [ -z "$("$V" "$T/none.console" "$T/none.emu")" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "judge-selftest: shutdown verdict printed lines without an EXPECT line"; fi

# The guest library (tests/guest/lib.sh) on the host's sh: sourcing it runs no command
# (every external command it could call is a stub that records its name), and
# case_lines holds a helper to its exact case list.
G=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$T/stubs"
for c in modprobe insmod rmmod dmesg awk cat grep sed python3 mkdir sleep cut tr ls wc tail head; do
	printf '#!/bin/sh\necho %s >>"%s/called"\n' "$c" "$T" >"$T/stubs/$c"; chmod +x "$T/stubs/$c"
done
if PATH=$T/stubs MLX5RS_REPO=$G /bin/sh -c '. "$MLX5RS_REPO/tests/guest/lib.sh"' && [ ! -e "$T/called" ]; then
	pass=$((pass + 1))
else
	fail=$((fail + 1)); echo "judge-selftest: sourcing tests/guest/lib.sh ran: $(cat "$T/called" 2>/dev/null | tr '\n' ' ')"
fi
printf 'h.a\nh.b\nh.c SKIP needs a data path\n' >"$T/h.cases"
cases() { # cases NAME STATUS WANT-GREP [!] HELPER-OUTPUT: case_lines' output has (or with !, has not) WANT-GREP
	printf '%b' "$5" >"$T/$1.out"
	MLX5RS_REPO=$G /bin/sh -c '. "$MLX5RS_REPO/tests/guest/lib.sh"; case_lines "$1" "$2" "$3"' sh "$T/$1.out" "$T/h.cases" "$2" >"$T/$1.res" 2>&1
	if grep -q -- "$3" "$T/$1.res"; then got=has; else got=lacks; fi
	if [ "$got" = "$4" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "judge-selftest: case_lines $1: output $got '$3'"; cat "$T/$1.res"; fi
}
cases exact 0 'PASS h.cases-exact' has 'h.a: PASS x\nh.b: PASS y\nh.c: SKIP (no data path)\n'
cases exact-no-fail 0 'FAIL' lacks 'h.a: PASS x\nh.b: PASS y\nh.c: PASS z\n'
cases stopped-half-way 1 'FAIL h.cases-exact (missing:.* h.b' has 'h.a: PASS x\nTraceback (most recent call last):\n'
cases not-listed 0 'FAIL h.cases-exact (not listed: h.d' has 'h.a: PASS x\nh.b: PASS y\nh.c: PASS z\nh.d: PASS w\n'
cases printed-twice 0 'FAIL h.cases-exact (printed twice: h.a' has 'h.a: PASS x\nh.a: PASS x\nh.b: PASS y\nh.c: PASS z\n'
cases skip-not-listed 0 'FAIL h.b (skipped' has 'h.a: PASS x\nh.b: SKIP (why)\nh.c: PASS z\n'
cases exit-unexplained 1 'FAIL h.helper-exit' has 'h.a: PASS x\nh.b: PASS y\nh.c: PASS z\n'
cases exit-explained 1 'FAIL h.helper-exit' lacks 'h.a: PASS x\nh.b: FAIL (y)\nh.c: PASS z\n'
printf 'h.a: PASS x\n' >"$T/nolist.out"
if MLX5RS_REPO=$G /bin/sh -c '. "$MLX5RS_REPO/tests/guest/lib.sh"; case_lines "$1" "$2"' sh "$T/nolist.out" "$T/none.cases" | grep -q 'FAIL none.cases-exact (no case list'; then
	pass=$((pass + 1))
else
	fail=$((fail + 1)); echo "judge-selftest: case_lines without its list did not fail"
fi
# The pyverbs judge (tests/guest/pyverbs_compare.py, scenario 73): ours worse than
# upstream, or failing for another reason, fails unless listed; better passes (and is
# reported); a Documentation table that is not the run's fails.
PV=$(dirname "$0")/../guest/pyverbs_compare.py
pvc() { # pvc NAME want(0|1) MODE UPSTREAM-LINES OURS-LINES [THIRD-FILE-CONTENT]
	printf '%b' "$4" >"$T/$1.up"; printf '%b' "$5" >"$T/$1.ours"; printf '%b' "${6:-}" >"$T/$1.third"
	if [ "$3" = ours ] || [ "$3" = doc ]; then set -- "$1" "$2" "$3" "$T/$1.third"; else set -- "$1" "$2" "$3"; fi
	python3 "$PV" "$3" "$T/$1.up" "$T/$1.ours" ${4:+"$4"} >"$T/$1.out" 2>&1; got=$([ $? -eq 0 ] && echo 0 || echo 1)
	if [ "$got" = "$2" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "judge-selftest: pyverbs $1: exit $got, wanted $2"; cat "$T/$1.out"; fi
}
A='PYV upstream ok 1.0 tests.test_a.T.test_x\n'
E='PYV upstream error 1.0 tests.test_a.T.test_y PyverbsError: Got timeout on polling (1 CQEs remaining)\n'
pvc pv-same 0 ours "$A$E" "$A$E"
pvc pv-worse 1 ours "$A$E" "PYV mlx5_rs skip 1.0 tests.test_a.T.test_x no\n$E"
pvc pv-worse-listed 0 ours "$A$E" "PYV mlx5_rs skip 1.0 tests.test_a.T.test_x no\n$E" 'tests.test_a.T.test_x  a reason\n'
pvc pv-other-reason 1 ours "$A$E" "${A}PYV mlx5_rs error 1.0 tests.test_a.T.test_y PyverbsRDMAError: Failed to modify QP. Errno: 22\n"
pvc pv-same-reason-other-handle 0 ours "${A}PYV u error 1.0 tests.test_a.T.test_y E: at 0x7f00aa handle 123456\n" "${A}PYV m error 1.0 tests.test_a.T.test_y E: at 0x7f11bb handle 654321\n"
pvc pv-better 0 ours "$A$E" "${A}PYV mlx5_rs ok 1.0 tests.test_a.T.test_y\n"
# A listed test that no longer differs is stale, but only if its file ran: an entry of
# a file this run did not run (the other set's) is not judged.
pvc pv-stale-ran 0 ours "$A$E" "$A$E" 'tests.test_a.T.test_x  a reason\n'
grep -q '^stale .*tests.test_a.T.test_x' "$T/pv-stale-ran.out" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "judge-selftest: pyverbs: a stale entry of a file that ran not reported"; }
pvc pv-stale-not-ran 0 ours "$A$E" "$A$E" 'tests.test_b.T.test_*  a reason\n'
grep -q '^stale ' "$T/pv-stale-not-ran.out" && { fail=$((fail + 1)); echo "judge-selftest: pyverbs: an entry of a file that did not run called stale"; } || pass=$((pass + 1))
grep -q '^BETTER ' "$T/pv-better.out" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "judge-selftest: pyverbs: a better test not reported"; }
python3 "$PV" markdown "$T/pv-same.up" "$T/pv-same.ours" | sed 's/^PYVDOC //' >"$T/doc.md"
pvc pv-doc-current 0 doc "$A$E" "$A$E" "$(cat "$T/doc.md")\n"
pvc pv-doc-stale 1 doc "$A$E" "$A$A" "$(cat "$T/doc.md")\n"
# A set run on upstream alone (OURS `-`, PYVERBS_DRIVERS=upstream) has its own markers; its
# block names each skip and error with its reason, and a changed reason is a changed
# table. Another set's block does not stand in for it.
printf '%b' "$A$E" >"$T/pvu.up"
python3 "$PV" --set upstream markdown "$T/pvu.up" - | sed 's/^PYVDOC *//' >"$T/docu.md"
pvu() { # pvu NAME want(0|1) UPSTREAM-LINES DOC-FILE
	printf '%b' "$3" >"$T/$1.up"
	python3 "$PV" --set upstream doc "$T/$1.up" - "$4" >"$T/$1.out" 2>&1; got=$([ $? -eq 0 ] && echo 0 || echo 1)
	if [ "$got" = "$2" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "judge-selftest: pyverbs $1: exit $got, wanted $2"; cat "$T/$1.out"; fi
}
pvu pv-up-doc-current 0 "$A$E" "$T/docu.md"
pvu pv-up-doc-other-reason 1 "${A}PYV upstream error 1.0 tests.test_a.T.test_y PyverbsRDMAError: Failed to modify QP. Errno: 22\n" "$T/docu.md"
pvu pv-up-doc-other-set 1 "$A$E" "$T/doc.md"
grep -q '| test_a | error | test_y | PyverbsError: Got timeout on polling (1 CQEs remaining) |' "$T/docu.md" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "judge-selftest: pyverbs: an upstream error without its reason in the table"; }

# The pyverbs runner (tests/guest/pyverbs_run.py): each file in its own process, so a
# file whose process dies (here SIGSEGV) reports its running test and the ones it did
# not reach as errors, and the next file still runs.
mkdir -p "$T/pvr/tests"
printf 'class P:\n    args = {}\n    def parse_args(self): pass\nparser = P()\n' >"$T/pvr/args_parser.py"
: >"$T/pvr/tests/__init__.py"; echo 'POLL_CQ_TIMEOUT = 10' >"$T/pvr/tests/utils.py"
printf 'import ctypes, unittest\nclass T(unittest.TestCase):\n    def test_1(self): pass\n    def test_2(self): ctypes.string_at(0)\n    def test_3(self): pass\n' >"$T/pvr/tests/test_a.py"
printf 'import unittest\nclass T(unittest.TestCase):\n    def test_1(self): pass\n' >"$T/pvr/tests/test_b.py"
python3 "$(dirname "$0")/../guest/pyverbs_run.py" d x "$T/pvr" test_a test_b >"$T/pvr.out" 2>/dev/null
printf '%s\n' 'PYV d ok tests.test_a.T.test_1' 'PYV d error tests.test_a.T.test_2 the file'"'"'s process died of SIGSEGV in this test' \
	'PYV d error tests.test_a.T.test_3 not run: the file'"'"'s process died of SIGSEGV in tests.test_a.T.test_2' \
	'PYVERBS d test_a run=3 ok=1 skip=0 fail=0 error=2' 'PYV d ok tests.test_b.T.test_1' 'PYVERBS d test_b run=1 ok=1 skip=0 fail=0 error=0' >"$T/pvr.want"
if sed -E 's/ [0-9]+\.[0-9]{2} / /; s/ secs=[0-9]+$//' "$T/pvr.out" | cmp -s - "$T/pvr.want"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1)); echo "judge-selftest: pyverbs_run: a file's crash not contained"; diff "$T/pvr.want" "$T/pvr.out"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
