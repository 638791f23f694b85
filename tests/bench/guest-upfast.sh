# Benchmark guest script 4 (emulator started with --init-pages $TD_BIG): loads upstream
# mlx5_core with 1 GiB of firmware pages and leaves it bound, so that the guest's
# power-off runs its PCI shutdown callback, the only place upstream takes its fast
# teardown. The host times it from the emulator's final stats (run.sh).
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/bench/lib-guest.sh"
. "$MLX5RS_REPO/tests/bench/lib-teardown.sh"
bdf=$(mlx_bdf) || { note "no 15b3 function"; exit 1; }
td_up_leave_bound "${TD_BIG:-262144}"
echo "BENCH-DONE"
