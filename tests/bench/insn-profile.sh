#!/usr/bin/env bash
# The kernel-verbs bench counted in guest instructions, mlx5_rs beside upstream:
#
#   tests/bench/insn-profile.sh [--wrs N] [--batch B] [--top K] [--idle S] [--dp N]
#                               [--mr N]
#
# Under TCG a guest instruction costs about the same whatever it does, and the count
# does not move with the host's load, where the timed figures of `make bench`
# (kbench_figures) move ±10 % between boots. One boot (tests/vm/vm.sh, KUnit off) with
# the TCG plugin tests/bench/insn/tbcount.c (built here with the toolbox's gcc): the
# guest (tests/bench/guest-insn.sh) runs ib_kclient's bench (bench=N, chains of B;
# default 20000 and 32) on mlx5_rs, then on upstream mlx5_core + mlx5_ib, each between
# two `sync`s, at which the plugin snapshots its counters; tests/bench/insn/report.py
# prints the instructions per work request (one SEND and one receive, both polled) of
# each driver in all, in its own modules, and by function. Everything the guest runs
# between the two snapshots is counted (the bench's own code, lockdep, and what the
# guest runs meanwhile at a rate per second: the total grows with the bench's
# duration, the driver's own count does not). The boot takes about a minute.
# --idle S adds a window of S seconds per driver with nothing but the driver running
# (its background: timers, health poll, interrupts; per second); --dp N one of
# perftest's ib_write_bw, 64 B, N iterations in loopback (per message; user space
# counted too, as one bucket); --mr N one of N registrations (ibv_reg_mr and
# ibv_dereg_mr) of a 4 KiB and one of a 64 KiB buffer (per registration; the kernel
# only, unless --dp asks for user space too).
# Output: $MLX5RS_CACHE/bench/insn/ (console log, snapshots, report.txt).
set -euo pipefail
. "$(dirname "$0")/../vm/lib.sh"
WRS=20000 BATCH=32 TOP=25 IDLE=0 DP=0 MR=0
while [ $# -gt 0 ]; do
	case $1 in
	--wrs) WRS=$2; shift 2 ;;
	--batch) BATCH=$2; shift 2 ;;
	--top) TOP=$2; shift 2 ;;
	--idle) IDLE=$2; shift 2 ;;
	--dp) DP=$2; shift 2 ;;
	--mr) MR=$2; shift 2 ;;
	*) die "usage: $0 [--wrs N] [--batch B] [--top K] [--idle S] [--dp N] [--mr N]" ;;
	esac
done
KB=$(kernel_build_dir)
[ -n "$KB" ] && [ -f "$KB/System.map" ] || die "no test kernel built: run tests/vm/kernel.sh"
[ -f "$REPO/mlx5_rs.ko" ] && [ -f "$REPO/tests/modules/ib_kclient/ib_kclient.ko" ] ||
	die "modules not built: run tests/vm/module.sh"
OUT=$CACHE/bench/insn
rm -rf "$OUT"
mkdir -p "$OUT"
printf 'INSN_WRS=%s\nINSN_BATCH=%s\nINSN_IDLE=%s\nINSN_DP=%s\nINSN_MR=%s\n' \
	"$WRS" "$BATCH" "$IDLE" "$DP" "$MR" >"$CACHE/bench/insn.env"
user=""
[ "$DP" -gt 0 ] && user=,user=1
in_toolbox gcc -O2 -Wall -Werror -shared -fPIC -fvisibility=hidden \
	-o "$OUT/tbcount.so" "$REPO/tests/bench/insn/tbcount.c"
trigger=$(awk '$3 == "ksys_sync" { print $1; exit }' "$KB/System.map")
[ -n "$trigger" ] || die "no ksys_sync in $KB/System.map"
log "instruction profile: bench=$WRS batch=$BATCH, snapshots at ksys_sync ($trigger)"
rc=0
MLX5RS_QEMU_PLUGIN="$OUT/tbcount.so,trigger=$trigger,out=$OUT/snap$user" MLX5RS_KUNIT=0 \
	"$REPO/tests/vm/vm.sh" --timeout 1800 --log "$OUT/console.log" \
	--run tests/bench/guest-insn.sh || rc=$?
rm -f "$CACHE/bench/insn.env"
[ "$rc" = 0 ] || die "the profile boot failed (status $rc): $OUT/console.log"
python3 "$REPO/tests/bench/insn/report.py" "$OUT/console.log" "$OUT/snap" "$KB/System.map" "$TOP" |
	tee "$OUT/report.txt"
