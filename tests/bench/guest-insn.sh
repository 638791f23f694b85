# Guest script of tests/bench/insn-profile.sh: the kernel-verbs bench (the test module
# ib_kclient, bench=N in chains of B, as `make bench`'s kbench_figures) once on
# mlx5_rs, once on upstream mlx5_core + mlx5_ib, each between two `sync`s: the TCG
# plugin (tests/bench/insn/tbcount.c) snapshots its instruction counters at each
# `sync`, in order, so snapshot 2k and 2k+1 bracket the k-th bench. Prints:
#   INSN-MARK <driver> <start|end>          after each sync (snapshot k = k-th mark)
#   INSN-SYM <driver> <addr> <type> <name> [<module>]
#                                           text symbols of the modules loaded for it
#   INSN-BENCH <driver> <ib_kclient's bench line>
# and checks that each bench ran whole (bench.run, bench.exact), so a profile of a
# failed run is never reported. With INSN_IDLE=S (seconds) also a window of S seconds
# in which nothing runs but the driver (bound, port ACTIVE, no consumer): INSN-MARK
# <driver>/idle, INSN-BENCH <driver>/idle sends=S unit=second. With INSN_DP=N also
# perftest's ib_write_bw, 64 B, N iterations in loopback (tests/guest/dp-traffic.sh's
# dp_pair): INSN-MARK <driver>/write_bw, INSN-BENCH <driver>/write_bw sends=N
# unit=message; the plugin then counts user space too (insn-profile.sh --dp). With
# INSN_MR=N also N registrations of a 4 KiB and of a 64 KiB buffer (ibv_reg_mr and
# ibv_dereg_mr, tests/guest/ib-mr-bench.py --insn): INSN-MARK <driver>/mr4k and
# <driver>/mr64k, unit=registration.
# Knobs (the host's $MLX5RS_CACHE/bench/insn.env): INSN_WRS (default 20000),
# INSN_BATCH (32), INSN_IDLE (0: none), INSN_DP (0: none), INSN_MR (0: none).
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/guest/kclient.sh"
. "$MLX5RS_REPO/tests/guest/dp-traffic.sh"
INSN_ENV=${MLX5RS_KBUILD%/kernel/*}/bench/insn.env
[ -r "$INSN_ENV" ] && . "$INSN_ENV"
INSN_WRS=${INSN_WRS:-20000}
INSN_BATCH=${INSN_BATCH:-32}
INSN_IDLE=${INSN_IDLE:-0}
INSN_DP=${INSN_DP:-0}
INSN_MR=${INSN_MR:-0}
bdf=$(mlx_bdf) || { fail insn.function "no 15b3 function"; exit 1; }
module_deps
# perftest's pair meets over TCP on the loopback interface.
[ "$INSN_DP" -gt 0 ] && ip link set lo up

# syms DRIVER REGEX: text symbols of the modules matching REGEX.
syms() { grep -E " [tT] .*\[($2)\]\$" /proc/kallsyms | sed "s/^/INSN-SYM $1 /"; }

for drv in mlx5_rs upstream; do
	load_driver "$drv" "insn.$drv"
	case $drv in
	mlx5_rs) syms "$drv" 'mlx5_rs|ib_core|ib_uverbs' ;;
	upstream) syms "$drv" 'mlx5_ib|mlx5_core|ib_core|ib_uverbs' ;;
	esac
	sync
	echo "INSN-MARK $drv start"
	check "insn.$drv.bench-insmod" insmod "$KCLIENT_KO" bench="$INSN_WRS" bench_batch="$INSN_BATCH"
	sync
	echo "INSN-MARK $drv end"
	syms "$drv" 'ib_kclient'
	sed -n "s/^# 1\\.bench /INSN-BENCH $drv /p" "$KCLIENT_DIR/results"
	kclient_steps "insn.$drv" "$KCLIENT_DIR/results" 1 "bench.run bench.exact"
	check "insn.$drv.bench-rmmod" rmmod ib_kclient
	if [ "$INSN_IDLE" -gt 0 ]; then
		sync
		echo "INSN-MARK $drv/idle start"
		sleep "$INSN_IDLE"
		sync
		echo "INSN-MARK $drv/idle end"
		echo "INSN-BENCH $drv/idle sends=$INSN_IDLE unit=second"
	fi
	if [ "$INSN_DP" -gt 0 ]; then
		sync
		echo "INSN-MARK $drv/write_bw start"
		# A failed pair is its check's failure (dp_pair), and the boot's.
		dp_pair "insn.$drv.write_bw" ib_write_bw "-d mlx5_0 -i 1 -F -s 64 -n $INSN_DP" \
			"-d mlx5_0 -i 1 -F -s 64 -n $INSN_DP" || true
		sync
		echo "INSN-MARK $drv/write_bw end"
		echo "INSN-BENCH $drv/write_bw sends=$INSN_DP unit=message"
		awk '/#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { print "INSN-PERFTEST '"$drv"' " $0; exit }' \
			"$DP_OUT/insn.$drv.write_bw.client"
	fi
	if [ "$INSN_MR" -gt 0 ]; then
		# Its marks are printed by the script after each of its syncs (to the console,
		# in order: not through `check`, which keeps a command's output).
		if python3 "$MLX5RS_REPO/tests/guest/ib-mr-bench.py" mlx5_0 --n "$INSN_MR" \
			--sizes 4k,64k --insn "$drv"; then
			pass "insn.$drv.mr"
		else
			fail "insn.$drv.mr" "ib-mr-bench.py failed (a registration or the device)"
		fi
	fi
	unload_driver "$drv" "insn.$drv"
done
