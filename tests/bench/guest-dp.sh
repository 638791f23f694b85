# Benchmark guest script, the data-path figures alone (tests/bench/guest-dp-figures.sh)
# of mlx5_rs and then of upstream mlx5_core + mlx5_ib on the same emulator: `make
# bench` takes them in its "ib"
# VM (guest-ib.sh); this boot is for them alone:
#   tests/vm/vm.sh --timeout 2400 --run tests/bench/guest-dp.sh
# (1,244 s with a load average of 10-13 on 2 cores, 2026-12-05: boot and module load
# ~14 min, the data-path part 375 s).
# Prints BENCH lines (tests/bench/lib-guest.sh).
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/bench/lib-guest.sh"
. "$MLX5RS_REPO/tests/bench/guest-dp-figures.sh"
bdf=$(mlx_bdf) || { note "no 15b3 function"; exit 1; }
[ -e /sys/module/ib_uverbs ] || modprobe ib_uverbs
# wait_active: port 1 of mlx5_0 ACTIVE, within 60 s.
wait_active() {
	for _ in $(seq 60); do
		grep -q ACTIVE /sys/class/infiniband/mlx5_0/ports/1/state 2>/dev/null && return 0
		sleep 1
	done
	note "mlx5_0 port 1 not ACTIVE in 60 s"
}
insmod "$KO" || note "insmod mlx5_rs failed"
wait_active
dp_figures rs
kbench_figures rs
rmmod mlx5_rs
reset_if_pages_left mlx5_rs
timeout 300 modprobe mlx5_ib || note "modprobe mlx5_ib failed"
wait_active
dp_figures up
kbench_figures up
modprobe -r mlx5_ib
[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
modprobe -r mlx5_core
reset_if_pages_left upstream
echo "BENCH-DONE"
