# Benchmark guest script 2 (emulator started with --init-pages 262144, i.e. 1 GiB of
# firmware pages): how long each driver takes to give the pages back at unload.
# Upstream (the reference) runs first: pages our driver might leak at unload would
# otherwise be missing from the 2 GiB guest when upstream asks for its 1 GiB.
# Prints BENCH lines (see tests/bench/lib-guest.sh); tests/bench/run.sh tabulates them.
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/bench/lib-guest.sh"
bdf=$(mlx_bdf) || { note "no 15b3 function"; exit 1; }
note "device $bdf, $(nproc) vCPUs, $(awk '/MemTotal/ { print $2 / 1024 " MiB" }' /proc/meminfo) RAM"

# ---- upstream mlx5_core -----------------------------------------------------------
kmark up-load
t0=$(now_ns); timeout 400 modprobe mlx5_core; rc=$?; t1=$(now_ns)
if [ $rc = 0 ] && [ "$(bound_to "$bdf")" = mlx5_core ]; then
	bench up.big_load_wall_ms "$(ms_between "$t0" "$t1")"
	bench up.held_before_unload "$(held)"
	free -m
	kmark up-unload
	t0=$(now_ns); timeout 400 rmmod mlx5_core; rc=$?; t1=$(now_ns)
	[ $rc = 0 ] || note "rmmod mlx5_core failed (rc $rc)"
	bench up.rmmod_wall_ms "$(ms_between "$t0" "$t1")"
	echo "---- mlx5_core at unload ----"
	klog_after up-unload | grep -a mlx5 | head -n 20
	echo "-----------------------------"
else
	note "modprobe mlx5_core failed or did not bind (rc $rc)"
	klog_after up-load | grep -a mlx5 | tail -n 20
fi
bench up.held_after_unload "$(held)"
reset_if_pages_left mlx5_core

# ---- mlx5_rs ---------------------------------------------------------------------
kmark rs-load
t0=$(now_ns); insmod "$KO"; rc=$?; t1=$(now_ns)
if [ $rc = 0 ] && [ "$(bound_to "$bdf")" = mlx5_rs ]; then
	bench rs.big_load_wall_ms "$(ms_between "$t0" "$t1")"
	bench rs.held_before_unload "$(held)"
	d=/sys/kernel/debug/mlx5_rs/$bdf
	[ -e "$d/pages" ] && { echo "debugfs pages:"; cat "$d/pages"; }
	free -m
	kmark rs-unload
	t0=$(now_ns); rmmod mlx5_rs; rc=$?; t1=$(now_ns)
	[ $rc = 0 ] || note "rmmod mlx5_rs failed (rc $rc)"
	bench rs.rmmod_wall_ms "$(ms_between "$t0" "$t1")"
	# "reclaimed N firmware pages in T ms"
	line=$(klog_after rs-unload | grep -a 'mlx5_rs' | grep -a -o 'reclaimed [0-9]* firmware pages in [0-9]* ms' | head -n1)
	echo "mlx5_rs: $line"
	if [ -n "$line" ]; then
		bench rs.reclaimed_pages "$(echo "$line" | awk '{ print $2 }')"
		bench rs.reclaim_log_ms "$(echo "$line" | awk '{ print $6 }')"
	else
		note "no 'reclaimed ... pages in ... ms' line from mlx5_rs"
	fi
else
	note "insmod mlx5_rs failed (rc $rc)"; dmesg | tail -n 20
	rmmod mlx5_rs 2>/dev/null
fi
bench rs.held_after_unload "$(held)"

echo "---- mlx5_core kernel log (errors/warnings) ----"
klog_after up-load | grep -a mlx5_core | grep -a -i -E 'err|warn|fail|timeout|syndrome' | head -n 20
echo "------------------------------------------------"
echo "BENCH-DONE"
