#!/usr/bin/env bash
# Host-side checks of the PCI shutdown path:
#   shutdown-verdict.sh CONSOLE-LOG EMU-LOG [EMU-LOG of function 1 ...]
#
# tests/guest/shutdown-handoff.sh leaves mlx5_rs bound and prints
# "MLX5RS-SHUTDOWN-EXPECT held=N"; the guest's power-off then runs the driver's
# `shutdown` callback. After QEMU exits, the emulator (its client gone) prints
# "mlx5-emu: final stats: {json}" to its log. This script asserts, from those two logs,
# that the callback took the fast-teardown path and the device confirmed it stopped:
# the driver's log line; exactly one prepare-fast TEARDOWN_HCA and no graceful or force
# one; nic_interface DISABLED reached (quiesced); the pages still held (no per-page
# reclaim on the way down); no protocol violation (a doorbell after the stop counts
# as one) and no DMA error; then, as upstream's shutdown does after a fast teardown
# (mlx5_core_eq_free_irqs, mlx5_pci_disable_device), MSI-X disabled and bus mastering
# off in the device's config space, by writes that came after the prepare-fast command
# (the driver's "IRQ vector(s) freed, MSI-X disabled" line too). Prints MLX5RS-TEST
# lines for the judge; prints nothing when the run did not ask for it (no EXPECT line). With several functions, function I > 0
# is checked the same way from its line "MLX5RS-SHUTDOWN-EXPECT fn=I bdf=B held=N" and
# its own emulator log (test names shutdown.fnI.*).
set -u
CONSOLE=$1; shift
REPO=$(cd "$(dirname "$0")/../.." && pwd)
. "$REPO/tests/vm/lib.sh"

result() { # result NAME OK DETAIL
	if [ "$2" = 1 ]; then echo "MLX5RS-TEST: PASS $1"; else echo "MLX5RS-TEST: FAIL $1 ($3)"; fi
}

# verdict PREFIX HELD EMU-LOG FAST-LINE-PATTERN IRQ-LINE-PATTERN: the checks of one function.
verdict() {
	local pre=$1 held=$2 emulog=$3 fastre=$4 irqre=$5 json
	if grep -a -q -E "$fastre" "$CONSOLE"; then
		result "$pre.fast-path-logged" 1
	else
		result "$pre.fast-path-logged" 0 "no 'fast teardown (shutdown): prepared' line on the console"
	fi
	if grep -a -q -E "$irqre" "$CONSOLE"; then
		result "$pre.irqs-freed-logged" 1
	else
		result "$pre.irqs-freed-logged" 0 "no 'shutdown: Fast teardown done; N IRQ vector(s) freed' line on the console"
	fi
	# The emulator prints its final stats once its client (QEMU) is gone (wait up to
	# MLX5RS_EMU_FINAL_WAIT tenths of a second, default 50).
	for _ in $(seq "${MLX5RS_EMU_FINAL_WAIT:-50}"); do grep -a -q 'mlx5-emu: final stats: ' "$emulog" 2>/dev/null && break; sleep 0.1; done
	json=$(grep -a -o 'mlx5-emu: final stats: .*' "$emulog" 2>/dev/null | tail -n1 | sed 's/^mlx5-emu: final stats: //')
	if [ -z "$json" ]; then
		result "$pre.emulator-final-stats" 0 "no final stats in $emulog"
		return
	fi
	result "$pre.emulator-final-stats" 1
	# One line per check: "name ok detail", computed by the toolbox's python3.
	in_toolbox python3 -c '
import json, sys
d = json.loads(sys.argv[1]); held = int(sys.argv[2]); pre = sys.argv[3]
f = d["function"]; t = f["teardowns"]
checks = [
    ("prepare-fast-once", t["prepare_fast"] == 1, "prepare_fast %d" % t["prepare_fast"]),
    ("no-graceful-or-force", t["graceful"] + t["force"] == 0, "graceful %d force %d" % (t["graceful"], t["force"])),
    ("device-quiesced", f["quiesced"] is True, "quiesced %s" % f["quiesced"]),
    ("no-reclaim", d["pages"]["held"] == held, "held %d, expected %d" % (d["pages"]["held"], held)),
    ("no-violations", d["violations"] == 0, "violations %s" % d["violations"]),
    ("no-dma-errors", d["dma_errors"] == 0, "dma_errors %s" % d["dma_errors"]),
]
p = d.get("pci", {}); prep = d["timeline"]["prepare_fast_ms"]
after = lambda ms: ms is not None and prep is not None and ms >= prep
checks += [
    ("msix-disabled", p.get("msix_enabled") is False and after(p.get("msix_disabled_ms")),
     "msix_enabled %s, disabled at %s ms, prepare-fast at %s ms" % (p.get("msix_enabled"), p.get("msix_disabled_ms"), prep)),
    ("bus-master-off", p.get("bus_master") is False and after(p.get("master_cleared_ms")),
     "bus_master %s, cleared at %s ms, prepare-fast at %s ms" % (p.get("bus_master"), p.get("master_cleared_ms"), prep)),
]
for name, ok, detail in checks:
    print("MLX5RS-TEST: PASS %s.%s" % (pre, name) if ok else "MLX5RS-TEST: FAIL %s.%s (%s)" % (pre, name, detail))
' "$json" "$held" "$pre" || result "$pre.final-stats-parsed" 0 "python3 failed on the final stats"
}

console() { sed -e 's/\r$//' "$CONSOLE"; }
expect=$(console | grep -a -o 'MLX5RS-SHUTDOWN-EXPECT held=[0-9]*' | tail -n1)
[ -n "$expect" ] || exit 0
IRQRE='shutdown: Fast teardown done; [0-9]+ IRQ vector\(s\) freed, MSI-X disabled, device disabled'
verdict shutdown "${expect##*=}" "$1" 'fast teardown \(shutdown\): prepared, nic_interface DISABLED confirmed' "$IRQRE"
# Functions 1.. (vm.sh --functions N): their own EXPECT line, emulator log and
# driver line (which names the function's PCI address).
i=1
for emulog in "${@:2}"; do
	e=$(console | grep -a -o "MLX5RS-SHUTDOWN-EXPECT fn=$i bdf=[0-9a-f:.]* held=[0-9]*" | tail -n1)
	if [ -z "$e" ]; then
		result "shutdown.fn$i.expected" 0 "no MLX5RS-SHUTDOWN-EXPECT line for function $i"
	else
		bdf=$(sed -E 's/.* bdf=([^ ]*) .*/\1/' <<<"$e")
		verdict "shutdown.fn$i" "${e##*=}" "$emulog" "$bdf: fast teardown \\(shutdown\\): prepared, nic_interface DISABLED confirmed" "$bdf: $IRQRE"
	fi
	i=$((i + 1))
done
