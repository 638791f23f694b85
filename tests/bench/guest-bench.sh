# Benchmark guest script 1 (default emulator): probe-to-ready, NOP storms (event mode
# and polling) and interrupt latency under a page-request + NOP load of mlx5_rs; then
# probe-to-ready, NOP storms (event mode, through the test module
# tests/modules/mlx5_nop_bench) and the same interrupt load of upstream mlx5_core on the
# same emulated function. Leaves upstream bound with the first
# teardown point's pages, so the power-off times upstream's fast teardown (host side).
# Prints BENCH lines (see tests/bench/lib-guest.sh); tests/bench/run.sh tabulates them.
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/bench/lib-guest.sh"
. "$MLX5RS_REPO/tests/bench/lib-teardown.sh"
REPS=${MLX5RS_BENCH_REPS:-5}
IRQ_REQS=${MLX5RS_BENCH_IRQ_REQS:-40}   # page requests of the interrupt load (±16 pages)
IRQ_NOPS=${MLX5RS_BENCH_IRQ_NOPS:-2000} # NOPs of the interrupt load (1 caller)
bdf=$(mlx_bdf) || { note "no 15b3 function"; exit 1; }
note "device $bdf, $(nproc) vCPUs, kernel $(uname -r)"

# ---- mlx5_rs ---------------------------------------------------------------------
# One probe of ours: from "firmware X.Y.Z, command interface revision 5" (first line of
# probe) to " ready: firmware" (last line of probe), on the printk clock.
# Also to the marker written right after the binding write returned ("_ret"; kmark is
# a shell builtin echo, so no fork lies between the write returning and the marker).
rs_probe_figures() { # $1 = marker tag before, $2 = marker tag after, $3 = key prefix
	log=$(klog_after "$1")
	s=$(echo "$log" | grep -a 'mlx5_rs' | grep -a 'command interface revision 5' | ts_us)
	e=$(echo "$log" | grep -a 'mlx5_rs' | grep -a ' ready: firmware' | ts_us)
	r=$(echo "$log" | grep -a "mlx5bench: $2\$" | ts_us)
	if [ -n "$s" ] && [ -n "$e" ]; then
		bench "$3" "$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f", (b - a) / 1000 }')"
		[ -n "$r" ] && bench "${3}_ret" "$(awk -v a="$s" -v b="$r" 'BEGIN { printf "%.3f", (b - a) / 1000 }')"
	else
		note "$3: probe lines not found"; echo "$log" | grep -a mlx5 | tail -n 5
	fi
}

kmark rs-load
t0=$(now_ns); insmod "$KO"; rc=$?; kmark rs-load-done; t1=$(now_ns)
if [ $rc = 0 ] && [ "$(bound_to "$bdf")" = mlx5_rs ]; then
	bench rs.load_wall_ms "$(ms_between "$t0" "$t1")"
	rs_probe_figures rs-load rs-load-done rs.first_probe_ms
	drv=/sys/bus/pci/drivers/mlx5_rs
	i=1
	while [ $i -le "$REPS" ]; do
		echo "$bdf" >$drv/unbind
		kmark "rs-bind-$i"
		t0=$(now_ns); echo "$bdf" >$drv/bind; kmark "rs-bind-$i-done"; t1=$(now_ns)
		if [ "$(bound_to "$bdf")" = mlx5_rs ]; then
			bench rs.bind_wall_ms "$(ms_between "$t0" "$t1")"
			rs_probe_figures "rs-bind-$i" "rs-bind-$i-done" rs.probe_ms
		else
			note "rs bind $i failed"
		fi
		i=$((i + 1))
	done

	d=/sys/kernel/debug/mlx5_rs/$bdf
	[ -e "$d/nop_storm" ] || d=/sys/kernel/debug/mlx5_rs-$bdf
	if [ -w "$d/nop_storm" ]; then
		# rs.nop<C>.* in event mode, rs.pnop<C>.* with completions polled.
		for mode in events polling; do
			echo "$mode" >"$d/cmd_mode" || note "cmd_mode $mode rejected"
			grep -a "^cmd_mode" "$d/eqs"
			grep -a -q "^cmd_mode $mode" "$d/eqs" || note "cmd_mode did not switch to $mode"
			pre=nop; [ $mode = polling ] && pre=pnop
			echo "200 1" >"$d/nop_storm" # warm-up
			for spec in "${MLX5RS_BENCH_NOPS1:-5000} 1" "${MLX5RS_BENCH_NOPS32:-20000} 32"; do
				c=${spec#* }
				if echo "$spec" >"$d/nop_storm"; then
					r=$(cat "$d/nop_storm")
					echo "nop_storm $spec ($mode): $r"
					# "nops N callers C errors E elapsed_ns T ops_per_sec R p50_ns A p99_ns B ..."
					echo "$r" | tr ' ' '\n' | paste - - | while read -r k v; do bench "rs.$pre$c.$k" "$v"; done
				else
					note "nop_storm '$spec' ($mode) rejected"
				fi
			done
		done
		echo events >"$d/cmd_mode"
	else
		note "no nop_storm in debugfs"
	fi

	# Interrupt latency under load, on fresh EQs (rebind): page requests ±16, then
	# NOPs with 1 caller (completions by event). The emulator times interrupt → next
	# consumer-index doorbell per EQ; our debugfs `eqs` has IRQ → EQE handled.
	echo "$bdf" >$drv/unbind; echo "$bdf" >$drv/bind
	if [ "$(bound_to "$bdf")" = mlx5_rs ]; then
		bench rs.irq.page_requests "$(page_load "$IRQ_REQS" 16)"
		echo "$IRQ_NOPS 1" >"$d/nop_storm" || note "nop_storm for the interrupt load rejected"
		bench rs.irq.nops "$(cat "$d/nop_storm" | tr ' ' '\n' | sed -n '/^nops$/{n;p;}')"
		eq_latency rs | tee /tmp/rs-irq
		cat "$d/eqs"
		for role in cmd pages; do
			eqn=$(sed -n "s/^BENCH rs.irq.$role.eqn //p" /tmp/rs-irq)
			v=$(kv_rec "$d/eqs" "eqn=$eqn" irq_mean_ns irq_max_ns)
			if [ -n "$eqn" ] && [ -n "$v" ]; then
				bench "rs.irq.$role.drv_mean_ns" "${v% *}"; bench "rs.irq.$role.drv_max_ns" "${v#* }"
			fi
		done
	else
		note "rs rebind for the interrupt load failed"
	fi
	rmmod mlx5_rs || note "rmmod mlx5_rs failed"
else
	note "insmod mlx5_rs failed (rc $rc)"; dmesg | tail -n 20
	rmmod mlx5_rs 2>/dev/null
fi
bench rs.held_after_rmmod "$(held)"
reset_if_pages_left mlx5_rs

# ---- upstream mlx5_core -----------------------------------------------------------
# Upstream's probe: from "firmware version:" to the moment the binding write (or
# modprobe) returned, marked in the kernel log right after it.
up_probe_figures() { # $1 = marker tag before, $2 = marker tag after, $3 = key prefix
	log=$(klog_after "$1")
	s=$(echo "$log" | grep -a 'mlx5_core' | grep -a 'firmware version:' | ts_us)
	e=$(echo "$log" | grep -a "mlx5bench: $2\$" | ts_us)
	last=$(echo "$log" | sed "/mlx5bench: $2\$/q" | grep -a 'mlx5_core' | tail -n1 | ts_us)
	if [ -n "$s" ] && [ -n "$e" ]; then
		bench "$3" "$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.3f", (b - a) / 1000 }')"
		[ -n "$last" ] && bench "${3}_lastlog" "$(awk -v a="$s" -v b="$last" 'BEGIN { printf "%.3f", (b - a) / 1000 }')"
	else
		note "$3: probe lines not found"; echo "$log" | grep -a mlx5 | tail -n 5
	fi
}

kmark up-load
t0=$(now_ns); timeout 300 modprobe mlx5_core; rc=$?; kmark up-load-done; t1=$(now_ns)
if [ $rc = 0 ] && [ "$(bound_to "$bdf")" = mlx5_core ]; then
	bench up.load_wall_ms "$(ms_between "$t0" "$t1")"
	up_probe_figures up-load up-load-done up.first_probe_ms
	drv=/sys/bus/pci/drivers/mlx5_core
	i=1
	while [ $i -le "$REPS" ]; do
		echo "$bdf" >$drv/unbind
		kmark "up-bind-$i"
		t0=$(now_ns); echo "$bdf" >$drv/bind; kmark "up-bind-$i-done"; t1=$(now_ns)
		if [ "$(bound_to "$bdf")" = mlx5_core ]; then
			bench up.bind_wall_ms "$(ms_between "$t0" "$t1")"
			up_probe_figures "up-bind-$i" "up-bind-$i-done" up.probe_ms
		else
			note "upstream bind $i failed"
		fi
		i=$((i + 1))
	done

	# NOP storms through upstream's exported command function, mlx5_cmd_exec, from the
	# test module tests/modules/mlx5_nop_bench: timed like ours (each NOP call → return
	# in work-item callers, the same warm-up, the same statistics; up.nop<C>.*), in event
	# mode (upstream has no polling switch). Upstream's own per-opcode mean, post →
	# completion handled (debugfs commands/NOP/average, reset before each storm), is
	# kept next to it as a cross-check of the module's mean.
	u=/sys/kernel/debug/mlx5/$bdf
	nb=/sys/kernel/debug/mlx5_nop_bench/nop_storm
	if insmod "$MLX5RS_REPO/tests/modules/mlx5_nop_bench/mlx5_nop_bench.ko"; then
		echo "200 1" >$nb # warm-up
		for spec in "${MLX5RS_BENCH_NOPS1:-5000} 1" "${MLX5RS_BENCH_NOPS32:-20000} 32"; do
			c=${spec#* }
			[ -e "$u/commands/NOP/reset" ] && echo 1 >"$u/commands/NOP/reset"
			if echo "$spec" >$nb; then
				r=$(cat $nb)
				echo "mlx5_nop_bench $spec: $r"
				echo "$r" | tr ' ' '\n' | paste - - | while read -r k v; do bench "up.nop$c.$k" "$v"; done
				if [ -e "$u/commands/NOP/average" ]; then
					bench "up.nop$c.dbg_mean_ns" "$(cat "$u/commands/NOP/average")"
					bench "up.nop$c.dbg_n" "$(cat "$u/commands/NOP/n")"
				fi
			else
				note "mlx5_nop_bench '$spec' rejected: $(cat $nb)"
			fi
		done
	else
		note "insmod mlx5_nop_bench failed (built by tests/vm/module.sh)"
	fi

	# The same interrupt load as ours, on fresh EQs (rebind): page requests ±16, then
	# NOPs with 1 caller through the test module (completions by event).
	echo "$bdf" >$drv/unbind; echo "$bdf" >$drv/bind
	if [ "$(bound_to "$bdf")" = mlx5_core ]; then
		bench up.irq.page_requests "$(page_load "$IRQ_REQS" 16)"
		if [ -w $nb ] && echo "$IRQ_NOPS 1" >$nb; then
			bench up.irq.nops "$(cat $nb | tr ' ' '\n' | sed -n '/^nops$/{n;p;}')"
		else
			note "mlx5_nop_bench for the interrupt load failed"
		fi
	else
		note "upstream rebind for the interrupt load failed"
	fi
	eq_latency up
	rmmod mlx5_nop_bench 2>/dev/null
	rmmod mlx5_core || note "rmmod mlx5_core failed"
else
	note "modprobe mlx5_core failed or did not bind (rc $rc)"
fi
bench up.held_after_rmmod "$(held)"
echo "---- mlx5_core kernel log (errors/warnings) ----"
klog_after up-load | grep -a mlx5_core | grep -a -i -E 'err|warn|fail|timeout|syndrome' | head -n 20
echo "------------------------------------------------"
# Upstream's fast teardown runs only from its PCI shutdown callback (power-off).
td_up_leave_bound "${TD_FIRST:-16384}"
echo "BENCH-DONE"
