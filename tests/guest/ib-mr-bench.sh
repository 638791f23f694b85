# Guest script (figures, not a scenario): MR registration times of mlx5_rs and of
# upstream mlx5_core + mlx5_ib on the same emulated device, through
# tests/guest/ib-mr-bench.py (one `MR-BENCH drv=<driver> ...` line per size and
# buffer kind). MR_BENCH_N rounds (default 5), MR_BENCH_SIZES (default 4k,1m,1g);
# each size with 4 KiB pages (THP refused) and with THP advised.
# Run: tests/vm/vm.sh --timeout 2400 --run tests/guest/ib-mr-bench.sh
. "$MLX5RS_REPO/tests/guest/lib.sh"
B=$MLX5RS_REPO/tests/guest/ib-mr-bench.py
N=${MR_BENCH_N:-5}
SIZES=${MR_BENCH_SIZES:-4k,1m,1g}
bdf=$(mlx_bdf) || { fail mr-bench.device-present "no 15b3 function"; exit 1; }
[ -e /sys/module/ib_uverbs ] || modprobe ib_uverbs
run() { # DRIVER
	for t in "" --thp; do
		python3 "$B" mlx5_0 --n "$N" --sizes "$SIZES" $t 2>&1 | sed "s/^MR-BENCH /MR-BENCH drv=$1 /"
	done
	echo "MR-BENCH-CMDS drv=$1 $(emu_stat '" ".join("%s=%d" % (o, v.get("OK", 0)) for o, v in sorted(d["commands"].items()) if "MKEY" in o or o in ("CREATE_QP", "CREATE_CQ")))')"
}
emuctl '{"cmd":"reset"}' >/dev/null
check mr-bench.insmod insmod "$KO"
for _ in $(seq 100); do [ -d /sys/class/infiniband/mlx5_0 ] && break; sleep 0.1; done
run mlx5_rs
check mr-bench.rmmod rmmod mlx5_rs
emuctl '{"cmd":"reset"}' >/dev/null
timeout 300 modprobe mlx5_core && timeout 300 modprobe mlx5_ib
for _ in $(seq 300); do [ -d /sys/class/infiniband/mlx5_0 ] && break; sleep 0.1; done
check mr-bench.upstream-registered test -d /sys/class/infiniband/mlx5_0
run upstream
modprobe -r mlx5_ib
[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
modprobe -r mlx5_core
[ "$FAILED" = 0 ]
