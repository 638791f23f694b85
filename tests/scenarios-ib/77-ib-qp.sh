# Scenario: user QPs. pyverbs (libibverbs + libmlx5 56.1) creates RC, UC and UD QPs on
# mlx5-rs's mlx5_N, walks each RESET -> INIT -> RTR -> RTS (connected ones loop back to
# their own QPN and the port's LID), reads the attributes back after each step, has the
# transitions the verbs forbid refused with upstream's errno (EINVAL), moves them to ERR
# and RESET and destroys them; then an XRC target (created by the kernel on an XRC
# domain, upstream create_xrc_tgt_qp) to RTR and an XRC initiator to RTS, connected
# to each other, the same way (tests/guest/ib-qp.py walk). A process holding a QP shows
# it in `rdma res show qp` and the emulator, and it goes when the process exits. No
# warning or error line, no emulator violation, the emulator's QP count back to zero,
# no kmemleak report.
# libmlx5 56.1 asks for dynamic UARs and rings its CQs' and QPs' doorbells on a UAR
# object (MLX5_IB_OBJECT_UAR, non-cached); the same walk runs through the raw uverbs
# write commands on a context with static UARs (tests/guest/ib-qp.py raw). Both run on
# upstream mlx5_core + mlx5_ib first, on the same port: each case passes there too and
# both drivers print the same cases (tests/guest/ib-oracle.sh).
. "$MLX5RS_REPO/tests/guest/lib.sh"
CASES=$MLX5RS_REPO/tests/guest/cases
. "$MLX5RS_REPO/tests/guest/ib-oracle.sh"
bdf=$(mlx_bdf) || { fail qp.device-present "no 15b3 function"; exit 1; }
QPY=$MLX5RS_REPO/tests/guest/ib-qp.py
ib_scenario_start

# --- upstream mlx5_ib: the oracle of the cases' errnos -------------------------------
upstream_load qp
upstream_cases /tmp/qp-raw.upstream env IB_DRIVER=upstream timeout 300 python3 "$QPY" raw "$uv"
upstream_cases /tmp/qp-walk.upstream env IB_DRIVER=upstream timeout 600 python3 "$QPY" walk "$dev"
upstream_unload qp
ib_scenario_start

# --- mlx5_rs -----------------------------------------------------------------------
ib_load qp

# --- raw uverbs commands (a context with static UARs) --------------------------------
qp0=$(live qp)
timeout 300 python3 "$QPY" raw "$(uverbs_of "$dev")" >/tmp/qp-raw.out 2>&1
case_lines /tmp/qp-raw.out "$CASES/qp-raw.cases" $?
cases_agree qp.raw.same-cases-as-upstream /tmp/qp-raw.upstream /tmp/qp-raw.out
check qp.raw.emu-qps-back test "$(live qp)" = "$qp0"

# --- libmlx5 (pyverbs): RC, UC and UD walks on UAR objects -------------------------
uar0=$(uars_held)
timeout 600 python3 "$QPY" walk "$dev" >/tmp/qp-walk.out 2>&1
case_lines /tmp/qp-walk.out "$CASES/qp-walk.cases" $?
cases_agree qp.walk.same-cases-as-upstream /tmp/qp-walk.upstream /tmp/qp-walk.out
check qp.walk.emu-qps-back test "$(live qp)" = "$qp0"
check qp.walk.uar-objects-released test "$(uars_held)" = "$uar0"

# --- a process holding a QP ----------------------------------------------------------
python3 "$QPY" hold "$dev" >/tmp/qp-hold.out 2>&1 &
hold=$!
check qp.hold.ready wait_line /tmp/qp-hold.out ready
cat /tmp/qp-hold.out
check qp.hold.emu-qp test "$(live qp)" = $((qp0 + 1))
check qp.hold.emu-uar-object test "$(uars_held)" -gt "$uar0"
rdma res show qp >/tmp/qp-res 2>&1
cat /tmp/qp-res
check qp.hold.rdma-res-qp grep -q "pid $hold " /tmp/qp-res
kill $hold
wait $hold 2>/dev/null
check qp.exit.emu-qps test "$(live qp)" = "$qp0"
check qp.exit.uar-objects-released test "$(uars_held)" = "$uar0"

ib_log_checks qp

# --- unload -----------------------------------------------------------------------
ib_unload_checks qp
