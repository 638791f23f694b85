# Benchmark guest script 3 (emulator started with --init-pages $TD_BIG, default 262144,
# i.e. 1 GiB of firmware pages): how long each driver takes to tear down with the
# pages held — upstream mlx5_core graceful (modprobe -r), mlx5_rs graceful (rmmod,
# page reclaim), mlx5_rs fast (fast_unload=1: no reclaim). Upstream (the reference)
# runs first: pages our driver might leak at unload would otherwise be missing from
# the 2 GiB guest when upstream asks for its 1 GiB; every step checks the pages came
# back (tests/bench/lib-teardown.sh).
# Prints BENCH lines (see tests/bench/lib-guest.sh); tests/bench/run.sh tabulates them.
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/bench/lib-guest.sh"
. "$MLX5RS_REPO/tests/bench/lib-teardown.sh"
bdf=$(mlx_bdf) || { note "no 15b3 function"; exit 1; }
P=${TD_BIG:-262144}
note "device $bdf, $(nproc) vCPUs, $(memavail_mib) MiB available, teardown point $P pages"

kmark up-load
td_up_graceful "$P"
td_rs_graceful "$P"
td_rs_fast "$P"

echo "---- mlx5_core kernel log (errors/warnings) ----"
klog_after up-load | grep -a mlx5_core | grep -a -i -E 'err|warn|fail|timeout|syndrome' | head -n 20
echo "------------------------------------------------"
echo "BENCH-DONE"
