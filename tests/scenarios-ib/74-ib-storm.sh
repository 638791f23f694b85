# Scenario: creation/destruction storm from user space. tests/guest/ib-storm.c, built
# with the toolbox's gcc against libibverbs.so.1 (guest_prog), runs cycles of alloc PD, register
# a 4 KiB MR, create a CQ and an RC QP, destroy all four, in STORM_WORKERS (default 2,
# one per vCPU) processes on the device; the objects the driver does not have yet are
# left out and reported (STORM-NA), those in STORM_REQUIRE must be in.
# Sizes: `make check` gives mlx5_rs STORM_FULL_CYCLES (default 2,000) full cycles, 8,000
# object create-destroy cycles: every count below is compared exactly, so one object
# (or one pinned page) left behind by any cycle fails it; ~12 ms a cycle under TCG
# with this kernel's debugging (2 workers, idle host). `make soak`
# (tests/guest/soak.sh) runs the endurance size, 100,000 full cycles (400,000
# objects, ~20 min), which finds what needs many cycles to show (a rare race, slow
# growth); STORM_PD_CYCLES (default 0: none) adds a storm of PDs alone before it.
# After each storm, with the driver still loaded: every cycle ran (the workers' own
# counts) and reached the device (the emulator's CREATE_QP count), the emulator's live
# objects and `rdma res` are back where they were, and every page the storm pinned is
# unpinned again (/proc/vmstat nr_foll_pin_acquired − released); after rmmod: no
# object, no page left with the emulator, no violation, no kmemleak report. Upstream
# mlx5_ib first, a full storm of STORM_UPSTREAM_CYCLES (default 300), for its cost per
# cycle and object next to ours (its live objects are not compared while loaded: its
# MR cache keeps mkeys). Ours has an MR cache too (ib/mr/mod.rs): one cycle before its
# storm makes its UMR QP and caches a 4 KiB mkey, then every live object but the mkeys
# is compared exactly, and the mkeys may have grown by the MRs the cache had to serve at
# once beyond the first (at most STORM_WORKERS - 1: one MR live per worker).
. "$MLX5RS_REPO/tests/guest/lib.sh"
PD_CYCLES=${STORM_PD_CYCLES:-0}
FULL_CYCLES=${STORM_FULL_CYCLES:-2000}
UP_CYCLES=${STORM_UPSTREAM_CYCLES:-300}
WORKERS=${STORM_WORKERS:-2}
# The objects mlx5_rs must storm: all four (libmlx5's CQs and QPs ring on its UAR object).
STORM_REQUIRE=${STORM_REQUIRE:-"pd mr cq qp"}
bdf=$(mlx_bdf) || { fail storm.device-present "no 15b3 function"; exit 1; }
emu_heal
module_deps
BIN=$(guest_prog ib-storm)
check storm.build test -x "$BIN"

res_count() { rdma res show "$1" dev mlx5_0 2>/dev/null | grep -c .; }
objs() { emu_stat 'd["objects"]["total"]'; }

# storm NAME CYCLES OBJECTS [same-objects]: CYCLES cycles of OBJECTS on mlx5_0, output in
# /tmp/storm.NAME; checks storm.NAME.* (the emulator's live objects only with the 4th
# argument).
storm() {
	o0=$(objs) p0=$(foll_pins) r0=$(res_count pd) q0=$(res_count qp) c0=$(cmds_ok CREATE_QP)
	m0=$(live mkey)
	t0=$(now_ms)
	# Through tee, so that the progress lines show while it runs; the status by file.
	# A time limit of 10 minutes and 0.1 s a cycle (8 times the idle host's cost).
	{ timeout $((600 + $2 / 10)) $BIN mlx5_0 "$2" "$WORKERS" "$3" 2>&1; echo $? >/tmp/storm.$1.rc; } | tee /tmp/storm.$1
	rc=$(cat /tmp/storm.$1.rc)
	echo "storm: $1 took $((($(now_ms) - t0) / 1000)) s"
	check "storm.$1.every-cycle-succeeded" test $rc = 0
	# Each worker prints the cycles it ran when it is done; a worker that died prints none.
	check "storm.$1.all-cycles-ran" test "$(awk '/^STORM-WORKER / { sub(/cycles=/, "", $3); s += $3 } END { print s + 0 }' /tmp/storm.$1)" = "$2"
	# The device created a QP for every cycle, plus the program's probe cycle: exactly
	# that many for ours (same-objects); upstream mlx5_ib creates its UMR QP on the first
	# MR registration that needs it, so at least that many there.
	c1=$(($(cmds_ok CREATE_QP) - c0))
	case ",$3,${4:+same}" in
	*,qp,same) check "storm.$1.device-created-every-qp" test "$c1" = $(($2 + 1)) ;;
	*,qp,*) check "storm.$1.device-created-every-qp" test "$c1" -ge $(($2 + 1)) ;;
	esac
	if [ -n "${4:-}" ]; then
		m1=$(($(live mkey) - m0))
		check "storm.$1.emu-objects-back" test "$(($(objs) - m1))" = "$o0"
		check "storm.$1.emu-mkeys-cached-at-most-one-per-worker" test "$m1" -ge 0 -a "$m1" -lt "$WORKERS"
	fi
	check "storm.$1.pinned-pages-back" test "$(foll_pins)" = "$p0"
	check "storm.$1.rdma-res-pd-back" test "$(res_count pd)" = "$r0"
	check "storm.$1.rdma-res-qp-back" test "$(res_count qp)" = "$q0"
	echo "storm: $1: pages held with the firmware after it: $(emu_stat 'd["pages"]["held"]')"
}
unload_checks() { # WHO
	check "storm.$1.emu-objects-destroyed" test "$(objs)" = 0
	check "storm.$1.emu-pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	check "storm.$1.emu-no-violations" test "$(violations)" = 0
}

# --- upstream mlx5_ib: a full storm, its cost per cycle -------------------------------
timeout 300 modprobe mlx5_core && timeout 300 modprobe mlx5_ib
check storm.upstream.registered wait_for /sys/class/infiniband/mlx5_0/ports/1/state "4: ACTIVE"
storm upstream "$UP_CYCLES" pd,mr,cq,qp
modprobe -r mlx5_ib
[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
modprobe -r mlx5_core
unload_checks upstream
emu_heal

# --- ours: PDs, then every object it has -----------------------------------------------
check storm.mlx5_rs.insmod insmod "$KO"
check storm.mlx5_rs.registered wait_for /sys/class/infiniband/mlx5_0/ports/1/state "4: ACTIVE"
[ "$PD_CYCLES" -gt 0 ] && storm mlx5_rs-pd "$PD_CYCLES" pd same-objects
# The UMR QP and a cached 4 KiB mkey, made by the first registration (as upstream's).
check storm.mlx5_rs.warm-up $BIN mlx5_0 1 1 pd,mr,cq,qp
storm mlx5_rs-full "$FULL_CYCLES" pd,mr,cq,qp same-objects
for o in $STORM_REQUIRE; do
	check "storm.mlx5_rs-full.includes-$o" grep -q "^STORM objects=\(.*,\)\?$o\(,\|[[:space:]]\)" /tmp/storm.mlx5_rs-full
done
check storm.mlx5_rs.rmmod rmmod mlx5_rs
unload_checks mlx5_rs
check_kmemleak storm.no-leaks
[ "$FAILED" = 0 ]
