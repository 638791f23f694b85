# Benchmark guest script, the data-path figures alone (tests/bench/guest-dp-figures.sh)
# of mlx5_rs and of upstream mlx5_core + mlx5_ib on the same emulator, interleaved
# (dp_interleaved: DP_ROUNDS rounds each, ABBA): `make bench` takes them in its "ib"
# VM (guest-ib.sh); this boot is for them alone:
#   tests/vm/vm.sh --timeout 5400 --run tests/bench/guest-dp.sh
# (2026-12-05, host load 13-17: 205-380 s per driver's round of eight runs, 3,300 s
# were not enough for the 8th pass; at a load of 5-6 a round with twice the iterations
# took 76-83 s).
# Prints BENCH lines (tests/bench/lib-guest.sh).
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/bench/lib-guest.sh"
. "$MLX5RS_REPO/tests/bench/guest-dp-figures.sh"
bdf=$(mlx_bdf) || { note "no 15b3 function"; exit 1; }
[ -e /sys/module/ib_uverbs ] || modprobe ib_uverbs
dp_interleaved
echo "BENCH-DONE"
