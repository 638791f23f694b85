# Benchmark guest script, the data-path figures alone (tests/bench/guest-dp-figures.sh)
# of upstream mlx5_core + mlx5_ib on the emulator: `make bench` takes them in its "ib"
# VM (guest-ib.sh); this boot is for them alone:
#   tests/vm/vm.sh --timeout 2400 --run tests/bench/guest-dp.sh
# (1,244 s with a load average of 10-13 on 2 cores, 2026-12-05: boot and module load
# ~14 min, the data-path part 375 s).
# Prints BENCH lines (tests/bench/lib-guest.sh).
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/bench/lib-guest.sh"
. "$MLX5RS_REPO/tests/bench/guest-dp-figures.sh"
bdf=$(mlx_bdf) || { note "no 15b3 function"; exit 1; }
timeout 300 modprobe mlx5_ib || note "modprobe mlx5_ib failed"
for _ in $(seq 60); do
	grep -q ACTIVE /sys/class/infiniband/mlx5_0/ports/1/state 2>/dev/null && break
	sleep 1
done
dp_figures up
modprobe -r mlx5_ib
[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
modprobe -r mlx5_core
reset_if_pages_left upstream
echo "BENCH-DONE"
