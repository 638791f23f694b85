# Scenario: CQ verbs. User CQs through libmlx5 (pyverbs) of several sizes with 64- and
# 128-byte CQEs, created on libmlx5's UAR object, resized and destroyed
# (tests/guest/ib-cq.py pyverbs); raw uverbs commands (tests/guest/ib-cq.py raw)
# with every field of the mlx5 create_cq / resize_cq request valid and malformed,
# moderation through EX_MODIFY_CQ, destroy, each refused with upstream mlx5_ib's
# errno; every pinned ring and doorbell page unpinned again. A process holding CQs
# shows them in the emulator and `rdma res show cq`, and they go when it exits.
# ibv_devinfo shows the CQ moderation caps. No warning or error line, no emulator
# violation, every object destroyed, no kmemleak report. The pyverbs and raw cases run
# on upstream mlx5_core + mlx5_ib first, on the same port: each passes there too and
# both drivers print the same cases (tests/guest/ib-oracle.sh).
. "$MLX5RS_REPO/tests/guest/lib.sh"
CASES=$MLX5RS_REPO/tests/guest/cases
. "$MLX5RS_REPO/tests/guest/ib-oracle.sh"
bdf=$(mlx_bdf) || { fail cq.device-present "no 15b3 function"; exit 1; }
CQ=$MLX5RS_REPO/tests/guest/ib-cq.py
ib_scenario_start

# run_cases NAME CMD...: CMD prints "name: PASS|FAIL (...)" lines; each becomes a check,
# held to the list tests/guest/cases/cq-NAME.cases.
run_cases() {
	_n=$1; shift
	"$@" >/tmp/cq-$_n.out 2>&1
	case_lines /tmp/cq-$_n.out "$CASES/cq-$_n.cases" $?
}

# --- upstream mlx5_ib: the oracle of the cases' errnos -------------------------------
upstream_load cq
upstream_cases /tmp/cq-pyverbs.upstream env IB_DRIVER=upstream timeout 300 python3 "$CQ" pyverbs "$dev"
upstream_cases /tmp/cq-raw.upstream env IB_DRIVER=upstream timeout 300 python3 "$CQ" raw "$uv"
upstream_unload cq
ib_scenario_start

# --- mlx5_rs -----------------------------------------------------------------------
ib_load cq
uv=$(uverbs_of "$dev")
check cq.uverbs-node test -c "/dev/infiniband/$uv"
ibv_devinfo -v -d "$dev" >/tmp/cq-devinfo 2>&1
check cq.devinfo.max_cq_count grep -q 'max_cq_count:[[:space:]]*65535' /tmp/cq-devinfo
check cq.devinfo.max_cq_period grep -q 'max_cq_period:[[:space:]]*4095 us' /tmp/cq-devinfo
cq0=$(live cq)
uar0=$(uars_held)

# --- libmlx5 -------------------------------------------------------------------------
run_cases pyverbs python3 "$CQ" pyverbs "$dev"
cases_agree cq.pyverbs.same-cases-as-upstream /tmp/cq-pyverbs.upstream /tmp/cq-pyverbs.out
check cq.pyverbs.emu-cqs-back test "$(live cq)" = "$cq0"
check cq.pyverbs.uar-objects-released test "$(uars_held)" = "$uar0"

# --- raw commands ----------------------------------------------------------------------
run_cases raw python3 "$CQ" raw "$uv"
cases_agree cq.raw.same-cases-as-upstream /tmp/cq-raw.upstream /tmp/cq-raw.out
check cq.raw.emu-cqs-back test "$(live cq)" = "$cq0"

# --- a process holding CQs -------------------------------------------------------------
python3 "$CQ" hold "$uv" 3 >/tmp/cq-hold.out 2>&1 &
hold=$!
check cq.hold.ready wait_line /tmp/cq-hold.out ready
cat /tmp/cq-hold.out
check cq.hold.emu-cqs test "$(live cq)" = $((cq0 + 3))
rdma res show cq dev "$dev" >/tmp/cq-res 2>&1
cat /tmp/cq-res
check cq.hold.rdma-res-cq test "$(grep -c "pid $hold " /tmp/cq-res)" = 3
kill $hold
wait $hold 2>/dev/null
check cq.exit.emu-cqs test "$(live cq)" = "$cq0"

ib_log_checks cq

# --- unload -----------------------------------------------------------------------
ib_unload_checks cq
