# Guest script (figures, not a scenario): MR registration times of mlx5_rs and of
# upstream mlx5_core + mlx5_ib on the same emulated device, through
# tests/guest/ib-mr-bench.py (one `MR-BENCH drv=<driver> ...` line per size and
# buffer kind): 20 rounds of 4 KiB, 64 KiB and 1 MiB (the sizes both drivers serve
# from their MR cache), 3 of 1 GiB (MR_BENCH_1G=0 leaves it out), buffers of 4 KiB pages
# (THP refused; MR_BENCH_THP=1 in the script's environment adds THP-advised ones).
# Then the command layer's mean CREATE_MKEY latency of each driver and how many there
# were (debugfs: ours cmd_stats, upstream commands/CREATE_MKEY/average), `MR-BENCH-CMD`
# lines: with an MR cache, registrations the cache serves take none.
# Run: tests/vm/vm.sh --timeout 2400 --run tests/guest/ib-mr-bench.sh
. "$MLX5RS_REPO/tests/guest/lib.sh"
B=$MLX5RS_REPO/tests/guest/ib-mr-bench.py
THP=${MR_BENCH_THP:-0}
bdf=$(mlx_bdf) || { fail mr-bench.device-present "no 15b3 function"; exit 1; }
[ -e /sys/module/ib_uverbs ] || modprobe ib_uverbs
run() { # DRIVER
	for t in "" $([ "$THP" = 1 ] && echo --thp); do
		python3 "$B" mlx5_0 --n 20 --sizes 4k,64k,1m $t 2>&1 | sed "s/^MR-BENCH /MR-BENCH drv=$1 /"
		[ "${MR_BENCH_1G:-1}" = 0 ] ||
			python3 "$B" mlx5_0 --n 3 --sizes 1g $t 2>&1 | sed "s/^MR-BENCH /MR-BENCH drv=$1 /"
	done
}
emuctl '{"cmd":"reset"}' >/dev/null
check mr-bench.insmod insmod "$KO"
for _ in $(seq 100); do [ -d /sys/class/infiniband/mlx5_0 ] && break; sleep 0.1; done
run mlx5_rs
echo "MR-BENCH-CMD drv=mlx5_rs $(grep -h 'opcode=CREATE_MKEY \|opcode=DESTROY_MKEY ' /sys/kernel/debug/mlx5_rs/*/cmd_stats | tr '\n' ' ')"
check mr-bench.rmmod rmmod mlx5_rs
emuctl '{"cmd":"reset"}' >/dev/null
timeout 300 modprobe mlx5_core && timeout 300 modprobe mlx5_ib
for _ in $(seq 300); do [ -d /sys/class/infiniband/mlx5_0 ] && break; sleep 0.1; done
check mr-bench.upstream-registered test -d /sys/class/infiniband/mlx5_0
run upstream
for o in CREATE_MKEY DESTROY_MKEY; do
	c=/sys/kernel/debug/mlx5/$bdf/commands/$o
	echo "MR-BENCH-CMD drv=upstream opcode=$o count=$(cat $c/n 2>/dev/null) mean_ns=$(cat $c/average 2>/dev/null)"
done
modprobe -r mlx5_ib
[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
modprobe -r mlx5_core
[ "$FAILED" = 0 ]
