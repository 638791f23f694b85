# Scenario: a failed allocation inside a create verb leaves nothing in the device.
# tests/guest/ib-failnth.py runs each create verb from user space (ucontext, PD, MR,
# CQ, QP, basic and XRC SRQ, XRC domain, AH, UAR object) with its N-th slab
# allocation failed (/proc/thread-self/fail-nth, failslab letting GFP_KERNEL
# allocations fail), N = 1, 2, ... until the verb no longer reaches the N-th
# allocation; after each attempt the emulator holds the same live objects and UARs as
# before, and no protocol violation. Then no kernel warning and no error line but the
# command layer's "out of memory" ones, every object destroyed at unload, no kmemleak
# report.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail failnth.device-present "no 15b3 function"; exit 1; }
HELPER=$MLX5RS_REPO/tests/guest/ib-failnth.py
FS=/sys/kernel/debug/failslab
ib_scenario_start
[ -d $FS ] || { fail failnth.failslab "no $FS (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS)"; exit 1; }
# fail-nth takes precedence over probability and times; ignore-gfp-wait would spare
# every GFP_KERNEL allocation; verbose 0: no stack dump per failure.
echo N >$FS/ignore-gfp-wait
echo 0 >$FS/verbose
# An allocation made by DMA-API debug itself is never failed: failing add_dma_entry's
# cacheline radix node turns DMA-API debug off for the rest of the boot ("cacheline
# tracking ENOMEM, dma-debug disabled"), and every later scenario would lose its
# mapping checks. The stack filter (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER) spares
# any allocation with add_dma_entry on its stack: [its address, the next symbol's).
reject=$(python3 -c '
import sys
syms = []
for line in open("/proc/kallsyms"):
    f = line.split()
    if len(f) >= 3 and f[1] in "tT":
        syms.append((int(f[0], 16), f[2]))
start = [a for a, n in syms if n == "add_dma_entry"]
if len(start) != 1 or start[0] == 0:
    sys.exit("add_dma_entry: %d text symbols" % len(start))
end = min(a for a, n in syms if a > start[0])
print("0x%x 0x%x" % (start[0], end))
')
check failnth.dma-debug-spared sh -c "[ -f $FS/reject-start ] && [ -n '$reject' ]"
set -- $reject
echo "${1:-0}" >$FS/reject-start
echo "${2:-0}" >$FS/reject-end
ib_load failnth
pins0=$(foll_pins)
python3 "$HELPER" cases "$dev" "$(uverbs_of "$dev")" >/tmp/failnth-cases.out 2>&1
rc=$?
echo "ib-failnth.py exit status $rc"
check failnth.helper-exit-0 test "$rc" = 0
case_lines /tmp/failnth-cases.out "$MLX5RS_REPO/tests/guest/cases/failnth.cases" "$rc"
check failnth.helper-finished grep -q '^failnth: 10 verbs' /tmp/failnth-cases.out
check failnth.pins-balanced test "$(foll_pins)" = "$pins0"
echo Y >$FS/ignore-gfp-wait
echo 2 >$FS/verbose
echo 0 >$FS/reject-start
echo 0 >$FS/reject-end
# A command whose input or mailboxes could not be allocated is logged (err level) by
# the command layer: expected here, one per allocation failed in the driver.
# (The core mm's 'Huh VM_FAULT_OOM leaked out to the #PF handler' is the helper's own
# page fault meeting the injected failure, not the driver's.)
dmesg -l $LEVELS | tail -n +$((WARN0 + 1)) | grep -a -v -E 'loading out-of-tree module taints kernel|Huh VM_FAULT_OOM leaked out to the #PF handler|mlx5_rs [0-9a-f:.]+: (command [A-Z0-9_]+\(0x[0-9a-f]+\) op_mod\(0x[0-9a-f]+\) failed, out of memory, syndrome \(0x0\)|CREATE_CQ \([0-9]+ entries\) failed)$' >/tmp/failnth-errors
cat /tmp/failnth-errors
check failnth.no-unexpected-error-lines test ! -s /tmp/failnth-errors
check failnth.dma-debug-still-on grep -q N /sys/kernel/debug/dma-api/disabled
check failnth.no-kernel-warning sh -c "! dmesg | tail -n +$((START + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"
emu_stat 'd["recent_violations"]'
ib_unload_checks failnth
