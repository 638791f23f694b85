# Scenario: user QPs. pyverbs (libibverbs + libmlx5 56.1) creates RC, UC and UD QPs on
# mlx5-rs's mlx5_N, walks each RESET -> INIT -> RTR -> RTS (connected ones loop back to
# their own QPN and the port's LID), reads the attributes back after each step, has the
# transitions the verbs forbid refused with upstream's errno (EINVAL), moves them to ERR
# and RESET and destroys them (tests/guest/ib-qp.py walk). A process holding a QP shows
# it in `rdma res show qp` and the emulator, and it goes when the process exits. No
# warning or error line, no emulator violation, the emulator's QP count back to zero,
# no kmemleak report.
# Known state (i11-qp, 2026-12-01): libmlx5 56.1 asks for dynamic UARs and then needs
# the UAR ioctl object (MLX5_IB_OBJECT_UAR) for every CQ and QP; the provider does not
# serve it yet, so pyverbs' CQ/QP creation fails in the library and the walk checks
# fail until it does. The raw part (tests/guest/ib-qp.py raw: a context with static
# UARs over the uverbs write commands) runs the RC walk today: 2026-12-01 run, every
# raw QP check passed (its three setup checks misread before e48861f).
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail qp.device-present "no 15b3 function"; exit 1; }
QPY=$MLX5RS_REPO/tests/guest/ib-qp.py
emu_heal
[ -e /sys/module/ib_uverbs ] || modprobe ib_uverbs
LEVELS=emerg,alert,crit,err,warn
WARN0=$(dmesg -l $LEVELS | wc -l)
START=$(dmesg | wc -l)

ibdev() {
	for _d in /sys/bus/pci/devices/$bdf/infiniband/*; do
		[ -d "$_d" ] && { basename "$_d"; return 0; }
	done
	return 1
}
wait_log() {
	_i=0
	while ! dmesg_since | grep -a -q "$1" && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
	dmesg_since | grep -a -q "$1"
}
wait_line() {
	_i=0
	while ! grep -q "$2" "$1" 2>/dev/null && [ $_i -lt 300 ]; do sleep 0.1; _i=$((_i + 1)); done
	grep -q "$2" "$1"
}
live() { emu_stat "d['objects']['live'].get('$1', 0)"; }
cmds_ok() { emu_stat "d['commands'].get('$1', {}).get('OK', 0)"; }

dmesg_mark
check qp.insmod insmod "$KO"
check qp.registered wait_log 'InfiniBand device registered'
dev=$(ibdev)

uverbs_of() {
	for _u in /sys/class/infiniband_verbs/uverbs*; do
		[ "$(cat "$_u/ibdev" 2>/dev/null)" = "$1" ] && { basename "$_u"; return 0; }
	done
	return 1
}
run_cases() {
	while IFS= read -r l; do
		case $l in
		*": PASS "*) pass "${l%%: PASS*}" ;;
		*": FAIL "*) fail "${l%%: FAIL*}" "${l#*: FAIL }" ;;
		*) echo "$l" ;;
		esac
	done <"$1"
}

# --- raw uverbs commands (a context with static UARs) --------------------------------
qp0=$(live qp)
timeout 300 python3 "$QPY" raw "$(uverbs_of "$dev")" >/tmp/qp-raw.out 2>&1
echo "raw helper exit status $?"
run_cases /tmp/qp-raw.out
check qp.raw.cases-run test "$(grep -c ': PASS \|: FAIL ' /tmp/qp-raw.out)" -ge 15
check qp.raw.emu-qps-back test "$(live qp)" = "$qp0"

# --- create, walk to RTS, query, refuse, destroy -------------------------------------
c0=$(cmds_ok CREATE_QP)
d0=$(cmds_ok DESTROY_QP)
timeout 300 python3 "$QPY" walk "$dev" >/tmp/qp-walk.out 2>&1
echo "walk helper exit status $?"
while IFS= read -r l; do
	case $l in
	*": PASS "*) pass "${l%%: PASS*}" ;;
	*": FAIL "*) fail "${l%%: FAIL*}" "${l#*: FAIL }" ;;
	*) echo "$l" ;;
	esac
done </tmp/qp-walk.out
check qp.walk.cases-run test "$(grep -c ': PASS \|: FAIL ' /tmp/qp-walk.out)" -ge 60
check qp.walk.emu-created test "$(($(cmds_ok CREATE_QP) - c0))" -ge 13
check qp.walk.emu-destroyed test "$(($(cmds_ok DESTROY_QP) - d0))" = "$(($(cmds_ok CREATE_QP) - c0))"
for op in RST2INIT_QP INIT2RTR_QP RTR2RTS_QP RTS2RTS_QP _2ERR_QP _2RST_QP QUERY_QP; do
	check "qp.walk.emu-$op" test "$(cmds_ok $op)" -ge 1
done
check qp.walk.emu-qps-back test "$(live qp)" = "$qp0"

# --- a process holding a QP ---------------------------------------------------------
python3 "$QPY" hold "$dev" >/tmp/qp-hold.out 2>&1 &
hold=$!
check qp.hold.ready wait_line /tmp/qp-hold.out ready
cat /tmp/qp-hold.out
rdma res show qp link "$dev/1" >/tmp/qp-res 2>&1
cat /tmp/qp-res
check qp.hold.rdma-res-qp grep -q "type RC" /tmp/qp-res
check qp.hold.emu-qp test "$(live qp)" = $((qp0 + 1))
kill $hold 2>/dev/null
wait $hold 2>/dev/null
_i=0
while [ "$(live qp)" != "$qp0" ] && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
check qp.exit.emu-qp test "$(live qp)" = "$qp0"

dmesg -l $LEVELS | tail -n +$((WARN0 + 1)) | grep -a -v 'loading out-of-tree module taints kernel' >/tmp/qp-errors
cat /tmp/qp-errors
check qp.no-error-lines test ! -s /tmp/qp-errors
check qp.no-kernel-warning sh -c "! dmesg | tail -n +$((START + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"

# --- unload -----------------------------------------------------------------------
check qp.rmmod rmmod mlx5_rs
check qp.emu-objects-destroyed test "$(emu_stat 'd["objects"]["total"]')" = 0
check qp.emu-pages-all-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check qp.emu-no-violations test "$(emu_stat 'd["violations"]')" = 0
check_kmemleak qp.no-leaks
[ "$FAILED" = 0 ]
