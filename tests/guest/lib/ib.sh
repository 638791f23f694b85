# InfiniBand scenarios' helpers (sourced by tests/guest/lib.sh; defines functions only).

# The IB scenarios' common start and end:
#   ib_scenario_start      the emulator healed, ib_uverbs loaded, the kernel log marked
#                          (LEVELS, WARN0, START) for the checks below
#   ib_load P              P.insmod of mlx5_rs and P.registered ("InfiniBand device
#                          registered" logged); sets dev to its IB device
#   ib_log_checks P        P.no-error-lines: no line of warning level or worse since the
#                          mark (the out-of-tree taint aside); P.no-kernel-warning: no
#                          WARNING, BUG or Call Trace
#   ib_unload_checks P     P.rmmod of mlx5_rs, P.rmmod.no-ib-device, then from the emulator P.emu-objects-destroyed,
#                          P.emu-pages-all-returned, P.emu-no-violations, and P.no-leaks
#                          (kmemleak); returns non-zero if any check of the scenario failed
ib_scenario_start() {
	emu_heal
	module_deps
	LEVELS=emerg,alert,crit,err,warn
	WARN0=$(dmesg -l $LEVELS | wc -l)
	START=$(dmesg | wc -l)
}
ib_load() {
	dmesg_mark
	check "$1.insmod" insmod "$KO"
	check "$1.registered" wait_log 'InfiniBand device registered'
	dev=$(ibdev)
}
ib_log_checks() {
	dmesg -l $LEVELS | tail -n +$((WARN0 + 1)) | grep -a -v 'loading out-of-tree module taints kernel' >"/tmp/$1-errors"
	cat "/tmp/$1-errors"
	check "$1.no-error-lines" test ! -s "/tmp/$1-errors"
	check "$1.no-kernel-warning" sh -c "! dmesg | tail -n +$((START + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"
}
ib_unload_checks() {
	check "$1.rmmod" rmmod mlx5_rs
	check "$1.rmmod.no-ib-device" test -z "$(ls /sys/class/infiniband 2>/dev/null | grep '^mlx5_')"
	check "$1.emu-objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
	check "$1.emu-pages-all-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	check "$1.emu-no-violations" test "$(emu_stat 'd["violations"]')" = 0
	check_kmemleak "$1.no-leaks"
	[ "$FAILED" = 0 ]
}
# ibdev: the IB device of the function $bdf (the caller's mlx_bdf); fails if none.
ibdev() {
	for _d in /sys/bus/pci/devices/$bdf/infiniband/*; do
		[ -d "$_d" ] && { basename "$_d"; return 0; }
	done
	return 1
}
# uverbs_of IBDEV: its uverbs character device (uverbsN).
uverbs_of() {
	for _u in /sys/class/infiniband_verbs/uverbs*; do
		[ "$(cat "$_u/ibdev" 2>/dev/null)" = "$1" ] && { basename "$_u"; return 0; }
	done
	return 1
}

# --- InfiniBand port, as the emulator reports it and rdma-core shows it ---------------
# ib_port_field KEY: field KEY of the emulator's IB port (the {"cmd":"ib_port"} reply).
ib_port_field() {
	emuctl '{"cmd":"ib_port"}' | python3 -c 'import json, sys; print(json.load(sys.stdin)["port"][sys.argv[1]])' "$1"
}

# check_ibv_devinfo PREFIX IBDEV: `ibv_devinfo -v -d IBDEV` succeeds and shows port 1
# active with the LID, SM LID and node GUID the emulator reports (checks
# PREFIX.ibv_devinfo*; the output stays in /tmp/ibv_devinfo.PREFIX). The same checks
# for upstream mlx5_ib and for mlx5-rs.
check_ibv_devinfo() {
	_di=/tmp/ibv_devinfo.$1
	check "$1.ibv_devinfo" sh -c "ibv_devinfo -v -d $2 >$_di 2>&1"
	head -n 40 "$_di"
	check "$1.ibv_devinfo-active" grep -q 'state:.*PORT_ACTIVE' "$_di"
	check "$1.ibv_devinfo-lid" grep -q "port_lid:[[:space:]]*$(ib_port_field lid)\$" "$_di"
	check "$1.ibv_devinfo-sm-lid" grep -q "sm_lid:[[:space:]]*$(ib_port_field sm_lid)\$" "$_di"
	# ibv_devinfo prints GUIDs as four groups of 4 hex digits.
	_ng=$(ib_port_field node_guid | sed -E 's/^0x(....)(....)(....)(....)$/\1:\2:\3:\4/')
	check "$1.ibv_devinfo-node-guid" grep -q "node_guid:[[:space:]]*$_ng" "$_di"
}

# check_open_no_task_leak PREFIX IBDEV: 20 `ibv_open_device`s (ibv_devinfo -d IBDEV) do
# not keep their processes' task_structs (check PREFIX.open-no-task-leak). libmlx5
# asks for a DEVX context first and retries without when the driver refuses it, as
# both drivers do on a device with cap log_max_uctx 0; the RDMA core's GET_CONTEXT
# ioctl then failed without dropping the task reference its restrack entry took
# (fixed in the test kernel by tests/kernel/patches/0001-*). kmemleak sees such a
# task_struct only when no stale pointer to it is left on a stack, which may take
# minutes, so this counts the task_struct cache instead: a leaking kernel keeps 20
# more, the slab's per-CPU slabs blur the count by a few (0 in the runs of
# 2026-12-06, where 40 opens took ~9 s in the TCG guest).
task_structs() { cut -d' ' -f1 /sys/kernel/slab/task_struct/objects; }
check_open_no_task_leak() {
	_t0=$(task_structs)
	_i=0
	while [ $_i -lt 20 ]; do ibv_devinfo -d "$2" >/dev/null 2>&1; _i=$((_i + 1)); done
	# Reaped tasks are freed after an RCU grace period.
	_i=0
	while [ $(($(task_structs) - _t0)) -ge 10 ] && [ $_i -lt 50 ]; do sleep 0.2; _i=$((_i + 1)); done
	echo "$1: task_struct objects $_t0 before 20 opens, $(task_structs) after"
	check "$1.open-no-task-leak" test $(($(task_structs) - _t0)) -lt 10
}


# A process holding mlx5_0 open across a fault, for the scenarios that run the same
# expectation on both drivers (97, 98, 63):
#   holder_start P       tests/guest/ib-uverbs.py hold (a PD, then it waits for an async
#                        event and prints "event N") in the background; P.holder-ready.
#                        Its output is in $HOLD_OUT, its pid in $HOLD_PID
#   holder_sees_fatal P  P.holder-sees-device-fatal: it printed IB_EVENT_DEVICE_FATAL (8)
#   holder_exited P      up to 10 s for it to end (it ends after the event);
#                        P.holder-exited; its output shown
#   check_reopen P       a new process opens mlx5_0 and allocates from it
#                        (P.new-device-opens), and ibv_devinfo works (check_ibv_devinfo)
#   check_emu_clean P V0 D0  after the unload: P.objects-destroyed, P.pages-returned,
#                        P.no-new-violations (V0 before), P.no-new-dma-errors (D0 before)
holder_start() {
	HOLD_OUT=/tmp/holder.out
	python3 "$MLX5RS_REPO/tests/guest/ib-uverbs.py" hold mlx5_0 >"$HOLD_OUT" 2>&1 &
	HOLD_PID=$!
	check "$1.holder-ready" wait_line "$HOLD_OUT" '^ready'
}
holder_sees_fatal() { check "$1.holder-sees-device-fatal" wait_line "$HOLD_OUT" '^event 8$'; }
holder_exited() {
	_i=0
	while kill -0 "$HOLD_PID" 2>/dev/null && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
	check "$1.holder-exited" sh -c "! kill -0 $HOLD_PID 2>/dev/null"
	holder_stop
	cat "$HOLD_OUT"
}
holder_stop() { kill "$HOLD_PID" 2>/dev/null; wait "$HOLD_PID" 2>/dev/null; }
check_reopen() {
	python3 "$MLX5RS_REPO/tests/guest/ib-uverbs.py" hold mlx5_0 >/tmp/holder2.out 2>&1 &
	_rp=$!
	check "$1.new-device-opens" wait_line /tmp/holder2.out '^ready'
	kill $_rp 2>/dev/null
	wait $_rp 2>/dev/null
	check_ibv_devinfo "$1" mlx5_0
}
check_emu_clean() {
	check "$1.objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
	check "$1.pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	check "$1.no-new-violations" test "$(violations)" = "$2"
	check "$1.no-new-dma-errors" test "$(emu_stat 'd["dma_errors"]')" = "$3"
}
