# Scenario: device faults and bad input on the data path, first under upstream
# mlx5_core + mlx5_ib (the oracle: the expectations are upstream's behaviour), then
# under mlx5_rs with the same cases, unchanged (issue 23, "Bad input and faults").
# Knob (environment; the default is what make check runs):
#  - DPF_DRIVERS: the drivers, in order (default "upstream mlx5_rs").
# Per driver:
# 1. tests/guest/dp-faults.py (pyverbs: libibverbs + libmlx5) connects a fresh pair of
#    RC QPs through the port's LID for each fault the emulator's control request
#    `dp_fault` sets (emu/README.md "Faults on demand"), posts one SEND or RDMA WRITE,
#    and checks what user space sees, every wait bounded:
#      cqe_error (syndrome 0x04, vendor 0x42) -> IBV_WC_LOC_PROT_ERR with vendor_err
#        0x42, the QP in ERR, the next WR flushed, the peer received the data;
#      lost_cqe -> that WR never completes (a hung WR, not even flushed when the QP is
#        moved to ERR), the next WR completes;
#      cq_overrun -> no completion, IBV_EVENT_CQ_ERR;
#      wqe_dma -> IBV_WC_LOC_QP_OP_ERR, IBV_EVENT_QP_FATAL, nothing sent;
#      rkey -> IBV_WC_REM_ACCESS_ERR at the requester, the responder's receive flushed,
#        IBV_EVENT_QP_ACCESS_ERR, both QPs in ERR.
#    Then bad input, no fault set (the device's own checks, IBTA 9.7.4.1.3, 9.7.5.2.8,
#    10.6.3): an RDMA WRITE through an rkey never granted, one past the end of the
#    peer's MR, one through the rkey of an MR of another PD -> IBV_WC_REM_ACCESS_ERR,
#    the peer's bytes untouched, IBV_EVENT_QP_ACCESS_ERR for the responder; a SEND
#    gathering through the lkey of another PD's MR -> IBV_WC_LOC_PROT_ERR; a SEND to a
#    peer with no receive posted and rnr_retry 0 -> IBV_WC_RNR_RETRY_EXC_ERR.
#    Before and after, a fresh pair moves data.
# 2. A process killed mid-traffic: ibv_rc_pingpong (a server and a client) runs a long
#    exchange; once the emulator counts its SENDs growing, both get SIGKILL. They are
#    gone within 10 s, uverbs' cleanup destroys what they made (the emulator's object
#    count back to what it was before), and a fresh ibv_rc_pingpong -c pair passes.
# Then: the helper did not hang, no kernel splat, unload destroys every object and
# returns every page, no emulator violation, no kmemleak report. Each driver's seconds
# are printed ("dpf: <driver> secs=N").
DPF_DRIVERS=${DPF_DRIVERS:-upstream mlx5_rs}
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/guest/dp-traffic.sh"
bdf=$(mlx_bdf) || { fail dp-faults.device-present "no 15b3 function"; exit 1; }
ib_scenario_start
ip link set lo up

wait_for() { # FILE WANT: up to 60 s
	for _ in $(seq 60); do [ "$(cat "$1" 2>/dev/null)" = "$2" ] && return 0; sleep 1; done
	echo "$1: $(cat "$1" 2>&1), wanted $2"
	return 1
}

load() { # DRIVER
	case $1 in
	upstream)
		timeout 300 modprobe mlx5_core
		check "dp-faults.$1.core-probe" test -e "/sys/bus/pci/devices/$bdf/driver"
		timeout 300 modprobe mlx5_ib ;;
	mlx5_rs) check "dp-faults.$1.insmod" insmod "$KO" ;;
	esac
	D0=$(ibdev)
	check "dp-faults.$1.device" test -n "$D0"
	check "dp-faults.$1.$D0-active" wait_for "/sys/class/infiniband/$D0/ports/1/state" "4: ACTIVE"
}

unload() { # DRIVER
	emuctl '{"cmd":"clear_injections"}' >/dev/null
	case $1 in
	upstream)
		check "dp-faults.$1.rmmod-mlx5_ib" modprobe -r mlx5_ib
		check "dp-faults.$1.objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
		[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
		check "dp-faults.$1.rmmod-mlx5_core" modprobe -r mlx5_core ;;
	mlx5_rs)
		check "dp-faults.$1.rmmod" rmmod mlx5_rs
		check "dp-faults.$1.objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0 ;;
	esac
	check "dp-faults.$1.all-pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	check "dp-faults.$1.no-violations" test "$(violations)" = "$viol0"
}

# killed P: part 2 above.
killed() {
	_p=$1.killed
	if ! command -v ibv_rc_pingpong >/dev/null 2>&1; then
		fail "$_p.tool" "ibv_rc_pingpong not installed"
		return
	fi
	mkdir -p "$DP_OUT"
	_o0=$(emu_stat 'd["objects"]["total"]')
	_b=$(dp_counters 0)
	DP_TCP_PORT=$((DP_TCP_PORT + 1))
	ibv_rc_pingpong -d "$D0" -i 1 -s 4096 -n 1000000 -r 16 -p $DP_TCP_PORT >"$DP_OUT/killed.server" 2>&1 &
	_ks=$!
	_i=0
	while ! dp_listening $DP_TCP_PORT && kill -0 $_ks 2>/dev/null && [ $_i -lt 600 ]; do
		sleep 0.1; _i=$((_i + 1))
	done
	ibv_rc_pingpong -d "$D0" -i 1 -s 4096 -n 1000000 -r 16 -p $DP_TCP_PORT "$DP_HOST" >"$DP_OUT/killed.client" 2>&1 &
	_kc=$!
	# Traffic flows: the emulator's SEND count grows by 20 within 60 s.
	_i=0 _sent=0
	while [ $_i -lt 60 ] && [ "$_sent" -lt 20 ] && kill -0 $_kc 2>/dev/null; do
		sleep 1; _i=$((_i + 1))
		_sent=$(dp_delta "$_b" "$(dp_counters 0)" op0a)
	done
	check "$_p.traffic-flows" test "$_sent" -ge 20
	check "$_p.both-running" sh -c "kill -0 $_ks && kill -0 $_kc"
	kill -KILL $_ks $_kc 2>/dev/null
	_i=0
	while { kill -0 $_ks || kill -0 $_kc; } 2>/dev/null && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
	check "$_p.both-gone" sh -c "! kill -0 $_ks 2>/dev/null && ! kill -0 $_kc 2>/dev/null"
	wait $_ks $_kc 2>/dev/null
	echo "dpf: $_p: $_sent SENDs before the kill; $(tail -n 2 "$DP_OUT/killed.client" | tr '\n' ' ')"
	# The processes' objects are destroyed by uverbs' release of their files (bounded).
	_i=0
	while [ "$(emu_stat 'd["objects"]["total"]')" != "$_o0" ] && [ $_i -lt 30 ]; do sleep 1; _i=$((_i + 1)); done
	check "$_p.objects-back" test "$(emu_stat 'd["objects"]["total"]')" = "$_o0"
	dp_pair "$_p.pingpong-after" ibv_rc_pingpong "-d $D0 -i 1 -s 4096 -n 5 -r 16 -c" "-d $D0 -i 1 -s 4096 -n 5 -r 16 -c" ' iters in '
}

for drv in $DPF_DRIVERS; do
	t=$(now_ms)
	viol0=$(violations)
	dmesg_mark
	load "$drv"
	emuctl '{"cmd":"clear_injections"}' >/dev/null
	timeout 900 python3 "$MLX5RS_REPO/tests/guest/dp-faults.py" "$D0" >/tmp/dp-faults.out 2>&1
	st=$?
	check "dp-faults.$drv.helper-not-hung" test "$st" != 124
	# The case list, each name under this driver (dpf.<driver>.<case>).
	sed "s/^dpf\./dpf.$drv./" "$MLX5RS_REPO/tests/guest/cases/dp-faults.cases" >"/tmp/dp-faults.$drv.cases"
	sed "s/^dpf\./dpf.$drv./" /tmp/dp-faults.out >"/tmp/dp-faults.$drv.out"
	case_lines "/tmp/dp-faults.$drv.out" "/tmp/dp-faults.$drv.cases" "$st"
	echo "---- emulator dp faults ----"
	emu_stat 'json.dumps(d["dp"]["faults"], sort_keys=True)'
	emuctl '{"cmd":"clear_injections"}' >/dev/null
	killed "dp-faults.$drv"
	echo "---- $drv printed ----"
	# (Not the KUnit report of mlx5_rs's first load: its suites are named mlx5_rs_*.)
	dmesg_since | grep -a -E 'mlx5|infiniband' | grep -a -v -E 'KTAP|# |\] +ok [0-9]' | tail -n 30
	unload "$drv"
	echo "dpf: $drv secs=$((($(now_ms) - t) / 1000))"
	emu_heal
done
check dp-faults.no-kernel-warning sh -c "! dmesg | tail -n +$((START + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"
check_kmemleak dp-faults.no-leaks
emuctl '{"cmd":"reset"}' >/dev/null
[ "$FAILED" = 0 ]
