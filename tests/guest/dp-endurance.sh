# Endurance of the data path (issue 23, "Endurance"; `make soak`, tests/guest/soak.sh):
# on each driver, mlx5_rs then upstream mlx5_core + mlx5_ib (the oracle) on the same
# emulator,
#  - user space: ENDURE_PERF_WRS (default 10,000,000) RDMA WRITEs of 64 B through one
#    QP pair, perftest's ib_write_bw -n in loopback (-F: a TCG guest's CPU frequency
#    reads inconsistent), unmodified; the emulator's RDMA_WRITE counter (stats dp send
#    per_opcode 0x08) grew by exactly the iterations perftest reports, which are the
#    ones asked for, with no error CQE, malformed WQE or violation;
#  - the kernel: ENDURE_KC_WRS (default 1,000,000) SENDs of 64 B through one RC QP pair
#    from the test module ib_kclient's bench mode (bench=N, chains of 32: its steps
#    bench.setup, bench.run — every completion in order, successful —, bench.exact —
#    exactly N send and N receive completions, both CQs empty after — and
#    bench.teardown), and the emulator's SEND counter (0x0a) grew by exactly N;
#  - then the driver unloaded: the emulator's objects all destroyed, its pages all
#    returned, no violation; at the end no kernel warning and kmemleak clean.
# Run alone: tests/vm/vm.sh --timeout 14400 --run tests/guest/dp-endurance.sh (sizes:
# ENDURE_PERF_WRS / ENDURE_KC_WRS from a wrapper guest script; the guest has no host
# environment). Figures: Documentation/testing.md, "make soak".
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/guest/kclient.sh"
. "$MLX5RS_REPO/tests/guest/dp-traffic.sh"
PERF_WRS=${ENDURE_PERF_WRS:-10000000}
KC_WRS=${ENDURE_KC_WRS:-1000000}
# A run's limit (s): 10 M WRITEs took 156 s on mlx5_rs and 223 s on upstream in the
# first make soak (2026-12-05, host load ~10-13), so 9,000 s is a hang, not a slow run.
DP_TIMEOUT=${ENDURE_TIMEOUT:-9000}
bdf=$(mlx_bdf) || { fail endure.device-present "no 15b3 function"; exit 1; }
ib_scenario_start
ip link set lo up

endure_load() { # DRIVER
	case $1 in
	upstream) timeout 300 modprobe mlx5_ib ;;
	mlx5_rs) check "endure.$1.insmod" insmod "$KO" ;;
	esac
	_d=$(ibdev) || _d=""
	check "endure.$1.device" test -n "$_d"
	check "endure.$1.active" wait_line "/sys/class/infiniband/$_d/ports/1/state" ACTIVE
}
endure_unload() { # DRIVER
	case $1 in
	upstream)
		check "endure.$1.rmmod-mlx5_ib" modprobe -r mlx5_ib
		[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
		check "endure.$1.rmmod-mlx5_core" modprobe -r mlx5_core ;;
	mlx5_rs) check "endure.$1.rmmod" rmmod mlx5_rs ;;
	esac
	check "endure.$1.objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
	check "endure.$1.pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	check "endure.$1.no-violations" test "$(emu_stat 'd["violations"]')" = 0
}
# endure_exact CASE BEFORE AFTER KEY N: counter KEY grew by exactly N, and no error CQE,
# malformed WQE or violation.
endure_exact() {
	dp_delta_to _d "$2" "$3" "$4"
	_why=""
	[ "$_d" = "$5" ] || _why="$4 grew by $_d, want exactly $5;"
	for _k in errors malformed violations; do
		dp_delta_to _e "$2" "$3" $_k
		[ "$_e" = 0 ] || _why="$_why $_k grew by $_e;"
	done
	echo "endure: $1: $4 +$_d"
	if [ -z "$_why" ]; then pass "$1"; else fail "$1" "${_why%;}"; fi
}

for drv in mlx5_rs upstream; do
	endure_load "$drv"
	_dev=$(ibdev)
	if [ "$PERF_WRS" -gt 0 ]; then
		_b=$(dp_counters 0)
		t=$(now_ms)
		dp_pair "endure.$drv.write_bw" ib_write_bw "-d $_dev -i 1 -F -s 64 -n $PERF_WRS" \
			"-d $_dev -i 1 -F -s 64 -n $PERF_WRS"
		echo "endure: $drv write_bw secs=$((($(now_ms) - t) / 1000))"
		_a=$(dp_counters 0)
		_m=$(dp_perf_moved "endure.$drv.write_bw")
		check "endure.$drv.write_bw.iterations" test "${_m#* }" = "$PERF_WRS"
		endure_exact "endure.$drv.write_bw.counted" "$_b" "$_a" op08 "$PERF_WRS"
	fi
	if [ "$KC_WRS" -gt 0 ]; then
		_b=$(dp_counters 0)
		t=$(now_ms)
		check "endure.$drv.kclient.insmod" timeout "$DP_TIMEOUT" insmod "$KCLIENT_KO" bench="$KC_WRS"
		echo "endure: $drv kclient secs=$((($(now_ms) - t) / 1000))"
		_a=$(dp_counters 0)
		_r=/tmp/ib_kclient.endure
		cat "$KCLIENT_DIR/results" >$_r
		grep -a -E '^(not ok [0-9]+ 1\.|# 1\.bench)' $_r
		kclient_steps "endure.$drv.kclient" $_r 1 "$KCLIENT_BENCH_STEPS"
		endure_exact "endure.$drv.kclient.counted" "$_b" "$_a" op0a "$KC_WRS"
		check "endure.$drv.kclient.rmmod" rmmod ib_kclient
	fi
	endure_unload "$drv"
	emu_heal
done
check endure.no-kernel-warning sh -c "! dmesg | tail -n +$((START + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"
check_kmemleak endure.no-leaks
[ "$FAILED" = 0 ]
