#!/usr/bin/env bash
# Host-side checks of the PCI shutdown path: shutdown-verdict.sh CONSOLE-LOG EMU-LOG
#
# tests/guest/shutdown-handoff.sh leaves mlx5_rs bound and prints
# "MLX5RS-SHUTDOWN-EXPECT held=N"; the guest's power-off then runs the driver's
# `shutdown` callback. After QEMU exits, the emulator (its client gone) prints
# "mlx5-emu: final stats: {json}" to its log. This script asserts, from those two logs,
# that the callback took the fast-teardown path and the device confirmed it stopped:
# the driver's log line; exactly one prepare-fast TEARDOWN_HCA and no graceful or force
# one; nic_interface DISABLED reached (quiesced); the pages still held (no per-page
# reclaim on the way down); no protocol violation (a doorbell after the stop counts
# as one) and no DMA error. Prints MLX5RS-TEST lines for the judge; prints nothing when
# the run did not ask for it (no EXPECT line).
set -u
CONSOLE=$1 EMULOG=$2
REPO=$(cd "$(dirname "$0")/../.." && pwd)
. "$REPO/tests/vm/lib.sh"

expect=$(sed -e 's/\r$//' "$CONSOLE" | grep -a -o 'MLX5RS-SHUTDOWN-EXPECT held=[0-9]*' | tail -n1)
[ -n "$expect" ] || exit 0
held=${expect##*=}
result() { # result NAME OK DETAIL
	if [ "$2" = 1 ]; then echo "MLX5RS-TEST: PASS $1"; else echo "MLX5RS-TEST: FAIL $1 ($3)"; fi
}

if grep -a -q 'fast teardown (shutdown): prepared, nic_interface DISABLED confirmed' "$CONSOLE"; then
	result shutdown.fast-path-logged 1
else
	result shutdown.fast-path-logged 0 "no 'fast teardown (shutdown): prepared' line on the console"
fi

# The emulator prints its final stats once its client (QEMU) is gone (wait up to
# MLX5RS_EMU_FINAL_WAIT tenths of a second, default 50).
for _ in $(seq "${MLX5RS_EMU_FINAL_WAIT:-50}"); do grep -a -q 'mlx5-emu: final stats: ' "$EMULOG" 2>/dev/null && break; sleep 0.1; done
json=$(grep -a -o 'mlx5-emu: final stats: .*' "$EMULOG" 2>/dev/null | tail -n1 | sed 's/^mlx5-emu: final stats: //')
if [ -z "$json" ]; then
	result shutdown.emulator-final-stats 0 "no final stats in $EMULOG"
	exit 0
fi
result shutdown.emulator-final-stats 1
# One line per check: "name ok detail", computed by the toolbox's python3.
in_toolbox python3 -c '
import json, sys
d = json.loads(sys.argv[1]); held = int(sys.argv[2])
f = d["function"]; t = f["teardowns"]
checks = [
    ("shutdown.prepare-fast-once", t["prepare_fast"] == 1, "prepare_fast %d" % t["prepare_fast"]),
    ("shutdown.no-graceful-or-force", t["graceful"] + t["force"] == 0, "graceful %d force %d" % (t["graceful"], t["force"])),
    ("shutdown.device-quiesced", f["quiesced"] is True, "quiesced %s" % f["quiesced"]),
    ("shutdown.no-reclaim", d["pages"]["held"] == held, "held %d, expected %d" % (d["pages"]["held"], held)),
    ("shutdown.no-violations", d["violations"] == 0, "violations %s" % d["violations"]),
    ("shutdown.no-dma-errors", d["dma_errors"] == 0, "dma_errors %s" % d["dma_errors"]),
]
for name, ok, detail in checks:
    print("MLX5RS-TEST: PASS %s" % name if ok else "MLX5RS-TEST: FAIL %s (%s)" % (name, detail))
' "$json" "$held" || result shutdown.final-stats-parsed 0 "python3 failed on the final stats"
