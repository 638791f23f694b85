# Scenario: memory regions. libibverbs (ctypes, tests/guest/ib-mr.py) registers and
# deregisters 4 KiB, 1 MiB and 64 MiB on mlx5-rs's mlx5_N (lkey = rkey, distinct keys,
# VmPin and the emulator's mkey count follow), re-registers (access, PD, translation)
# and tries bad inputs with upstream's errno (zero length, start/IOVA page offsets
# that differ, a wrapping range, unknown access bits, remote write without local
# write, ON_DEMAND, an unmapped address, another context's PD handle). Afterwards the
# pins are balanced (/proc/vmstat nr_foll_pin_acquired == released since the start),
# no mkey is left in the emulator beyond those the MR cache keeps (at most one per MR
# the run registered, as upstream's cache: tests/guest/ib-mr.py mkeys_back), no error
# line, no kmemleak report; unload destroys every object, the cache's mkeys too. The cases run on upstream mlx5_core + mlx5_ib first, on the same
# port: each passes there too and both drivers print the same cases
# (tests/guest/ib-oracle.sh).
. "$MLX5RS_REPO/tests/guest/lib.sh"
CASES=$MLX5RS_REPO/tests/guest/cases
. "$MLX5RS_REPO/tests/guest/ib-oracle.sh"
bdf=$(mlx_bdf) || { fail mr.device-present "no 15b3 function"; exit 1; }
MR=$MLX5RS_REPO/tests/guest/ib-mr.py
ib_scenario_start

# --- upstream mlx5_ib: the oracle of the cases' errnos -------------------------------
upstream_load mr
upstream_cases /tmp/mr-cases.upstream env IB_DRIVER=upstream timeout 300 python3 "$MR" cases "$dev"
upstream_unload mr
ib_scenario_start

# --- mlx5_rs -----------------------------------------------------------------------
ib_load mr
mk0=$(live mkey)
pins0=$(foll_pins)
python3 "$MR" cases "$dev" >/tmp/mr-cases.out 2>&1
case_lines /tmp/mr-cases.out "$CASES/mr.cases" $?
cases_agree mr.same-cases-as-upstream /tmp/mr-cases.upstream /tmp/mr-cases.out
check mr.pins-balanced test "$(foll_pins)" = "$pins0"
# The MR cache keeps the mkeys of cached MRs (the 4 KiB one at least) until unload; at
# most one per MR of the run (ib-mr.py: three sizes, the IOVA MR, three re-registrations).
mk=$(live mkey)
check mr.emu-mkeys-back test "$mk" -gt "$mk0" -a "$mk" -le "$((mk0 + 7))"

ib_log_checks mr
ib_unload_checks mr
