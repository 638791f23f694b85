# Benchmark guest script 2 (default emulator, demands set per point): teardown time
# against pages held for the smaller points ($TD_POINTS, default "16384 65536"), each
# point: upstream graceful, mlx5_rs graceful, mlx5_rs fast (tests/bench/lib-teardown.sh).
# Leaves upstream bound with the last point's pages, so the power-off times upstream's
# fast teardown (read by the host from the emulator's final stats).
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/bench/lib-guest.sh"
. "$MLX5RS_REPO/tests/bench/lib-teardown.sh"
bdf=$(mlx_bdf) || { note "no 15b3 function"; exit 1; }
POINTS=${TD_POINTS:-16384 65536}
note "device $bdf, $(memavail_mib) MiB available, teardown points $POINTS pages"

kmark up-load
last=""
for P in $POINTS; do
	td_up_graceful "$P"
	td_rs_graceful "$P"
	td_rs_fast "$P"
	last=$P
done
echo "---- mlx5_core kernel log (errors/warnings) ----"
klog_after up-load | grep -a mlx5_core | grep -a -i -E 'err|warn|fail|timeout|syndrome' | head -n 20
echo "------------------------------------------------"
[ -n "$last" ] && td_up_leave_bound "$last"
echo "BENCH-DONE"
