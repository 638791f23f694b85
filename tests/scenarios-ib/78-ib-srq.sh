# Scenario: shared receive queues, XRC domains and address handles. pyverbs (libibverbs
# + libmlx5 56.1) creates basic SRQs on mlx5-rs's mlx5_N (RMPs on the emulator, as
# upstream makes them at ISSI 1), queries them, arms and reads back the limit, and
# gets upstream's errno for a limit at the ring size, a resize and sizes above the
# device's caps; opens and closes an XRC domain; makes an XRC SRQ on it and a libmlx5
# CQ (its size read back, its limit armed, its number set); raw CREATE_AH / DESTROY_AH commands make and drop
# InfiniBand address handles (software address vectors: no command), bad static rates
# refused. A process holding two SRQs and an XRC domain shows them as emulator
# objects, and they go when it exits. No warning or error line, no emulator
# violation, every object destroyed, no kmemleak report. The cases run on upstream
# mlx5_core + mlx5_ib first, on the same port: each passes there too and both drivers
# print the same cases (tests/guest/ib-oracle.sh).
. "$MLX5RS_REPO/tests/guest/lib.sh"
CASES=$MLX5RS_REPO/tests/guest/cases
. "$MLX5RS_REPO/tests/guest/ib-oracle.sh"
bdf=$(mlx_bdf) || { fail srq.device-present "no 15b3 function"; exit 1; }
PY=$MLX5RS_REPO/tests/guest/ib-srq.py
ib_scenario_start

# --- upstream mlx5_ib: the oracle of the cases' errnos -------------------------------
upstream_load srq
upstream_cases /tmp/srq-cases.upstream env IB_DRIVER=upstream timeout 300 python3 "$PY" cases "$dev" "$uv"
upstream_unload srq
ib_scenario_start

# --- mlx5_rs -----------------------------------------------------------------------
ib_load srq
uv=$(uverbs_of "$dev")
check srq.uverbs-node test -c "/dev/infiniband/$uv"

# --- the cases ------------------------------------------------------------------------
# The objects the RDMA core's own kernel clients hold on the device (the MAD layer's
# PD, CQs and QP0/QP1, as on upstream mlx5_ib): the cases leave exactly these.
objs0=$(emu_stat 'd["objects"]["total"]')
rmp0=$(cmds_ok CREATE_RMP)
mod0=$(cmds_ok MODIFY_RMP)
xd0=$(cmds_ok ALLOC_XRCD)
python3 "$PY" cases "$dev" "$uv" >/tmp/srq-cases.out 2>&1
case_lines /tmp/srq-cases.out "$CASES/srq.cases" $?
# Basic SRQs are RMPs (four by pyverbs, one by the raw SRQ_CREATE ioctl); the limit
# goes by MODIFY_RMP; the XRC domain by ALLOC_XRCD.
check srq.emu-create-rmp test "$(($(cmds_ok CREATE_RMP) - rmp0))" = 5
cases_agree srq.same-cases-as-upstream /tmp/srq-cases.upstream /tmp/srq-cases.out
check srq.emu-modify-rmp test "$(($(cmds_ok MODIFY_RMP) - mod0))" = 2
check srq.emu-alloc-xrcd test "$(($(cmds_ok ALLOC_XRCD) - xd0))" -ge 1
check srq.emu-no-create-srq test "$(cmds_ok CREATE_SRQ)" = 0
check srq.cases.emu-objects test "$(emu_stat 'd["objects"]["total"]')" = "$objs0"

# --- objects of a live process ----------------------------------------------------------
r0=$(live rmp)
x0=$(live xrcd)
python3 "$PY" hold "$dev" >/tmp/srq-hold.out 2>&1 &
hold=$!
check srq.hold.ready wait_line /tmp/srq-hold.out ready
cat /tmp/srq-hold.out
check srq.hold.emu-rmp test "$(live rmp)" = $((r0 + 2))
check srq.hold.emu-xrcd test "$(live xrcd)" = $((x0 + 1))
rdma res show srq dev "$dev" >/tmp/srq-res 2>&1
cat /tmp/srq-res
check srq.hold.rdma-res-srq test "$(grep -c "pid $hold " /tmp/srq-res)" = 2
kill $hold
wait $hold 2>/dev/null
check srq.exit.emu-rmp test "$(live rmp)" = "$r0"
check srq.exit.emu-xrcd test "$(live xrcd)" = "$x0"

ib_log_checks srq

# --- unload -----------------------------------------------------------------------
ib_unload_checks srq
