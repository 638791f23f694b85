# Scenario: rdma-core's own tests (pyverbs, rdma-core 56.1, /usr/share/doc/rdma-core/tests
# in the toolbox), the files that exercise the control path, against upstream mlx5_core
# + mlx5_ib and then against mlx5_rs on the same emulated IB port. One line per test and
# driver (tests/guest/pyverbs_run.py: `PYV <driver> <outcome> <secs> <test id>`), then
# the table of ok / skip / fail / error per file for both drivers. Asserted:
#  - upstream's outcome of every test is the one kept in tests/guest/pyverbs.upstream
#    (an emulator change that breaks, or newly allows, something upstream does shows);
#  - no test goes worse on mlx5_rs than on upstream (upstream ok, ours skip / fail /
#    error; upstream skip, ours fail / error) unless tests/guest/pyverbs.differences
#    lists it with its reason (tests/guest/pyverbs_compare.py);
#  - each driver unloads with every emulator object destroyed and every page returned,
#    no emulator protocol violation, no kmemleak report.
# PYVERBS_FILES overrides the file list (exploration; the expectations then differ).
. "$MLX5RS_REPO/tests/guest/lib.sh"
FILES=${PYVERBS_FILES:-"test_device test_pd test_mr test_cq test_qp test_srq test_parent_domain"}
G=$REPO/tests/guest
bdf=$(mlx_bdf) || { fail pyverbs.device-present "no 15b3 function"; exit 1; }
emu_heal
[ -e /sys/module/ib_uverbs ] || modprobe ib_uverbs

# A writable copy of the tests package with only FILES among its test_*.py: its
# __init__ imports every test file present, and each costs seconds under TCG. The
# toolbox ships most files gzipped.
PV=/tmp/pv
rm -rf $PV && mkdir -p $PV/tests
for f in /usr/share/doc/rdma-core/tests/*; do
	b=$(basename "$f" .gz)
	case "$b" in test_*.py) case " $FILES " in *" ${b%.py} "*) ;; *) continue ;; esac ;; esac
	case "$f" in *.gz) gunzip -c "$f" >"$PV/tests/$b" ;; *) cp "$f" "$PV/tests/$b" ;; esac
done
check pyverbs.test-files-present test "$(ls $PV/tests/test_*.py | wc -l)" = "$(echo $FILES | wc -w)"

wait_for() { # FILE WANT: up to 60 s
	for _ in $(seq 60); do [ "$(cat "$1" 2>/dev/null)" = "$2" ] && return 0; sleep 1; done
	echo "$1: $(cat "$1" 2>&1), wanted $2"
	return 1
}
# run DRIVER: the files against mlx5_0, results in /tmp/pyv.DRIVER (and on the console).
run() {
	t0=$(now_ms)
	# Shown as the tests end (tee), kept for the comparison below.
	timeout 1500 python3 "$G/pyverbs_run.py" "$1" mlx5_0 $PV $FILES 2>/tmp/pyv.$1.err | tee /tmp/pyv.$1
	echo "pyverbs: $1 done after $((($(now_ms) - t0) / 1000)) s"
	tail -n 20 /tmp/pyv.$1.err
	check "pyverbs.$1.every-file-ran" test "$(grep -c "^PYVERBS $1 " /tmp/pyv.$1)" = "$(echo $FILES | wc -w)"
}
unload_checks() { # DRIVER
	check "pyverbs.$1.emu-objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
	check "pyverbs.$1.emu-pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	check "pyverbs.$1.emu-no-violations" test "$(violations)" = 0
}

# --- upstream mlx5_ib, the oracle --------------------------------------------------
timeout 300 modprobe mlx5_core && timeout 300 modprobe mlx5_ib
check pyverbs.upstream.registered wait_for /sys/class/infiniband/mlx5_0/ports/1/state "4: ACTIVE"
run upstream
check pyverbs.upstream.rmmod-mlx5_ib modprobe -r mlx5_ib
[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
check pyverbs.upstream.rmmod-mlx5_core modprobe -r mlx5_core
unload_checks upstream
emu_heal

# --- ours ---------------------------------------------------------------------------
check pyverbs.mlx5_rs.insmod insmod "$KO"
check pyverbs.mlx5_rs.registered wait_for /sys/class/infiniband/mlx5_0/ports/1/state "4: ACTIVE"
run mlx5_rs
check pyverbs.mlx5_rs.rmmod rmmod mlx5_rs
unload_checks mlx5_rs

# --- the comparison ---------------------------------------------------------------
echo "pyverbs: per file, ok / skip / fail / error"
python3 "$G/pyverbs_compare.py" table /tmp/pyv.upstream /tmp/pyv.mlx5_rs
check pyverbs.upstream.as-expected python3 "$G/pyverbs_compare.py" upstream /tmp/pyv.upstream "$G/pyverbs.upstream"
python3 "$G/pyverbs_compare.py" upstream /tmp/pyv.upstream "$G/pyverbs.upstream" | grep -v '^pyverbs upstream'
check pyverbs.mlx5_rs.no-worse-than-upstream python3 "$G/pyverbs_compare.py" ours /tmp/pyv.upstream /tmp/pyv.mlx5_rs "$G/pyverbs.differences"
python3 "$G/pyverbs_compare.py" ours /tmp/pyv.upstream /tmp/pyv.mlx5_rs "$G/pyverbs.differences"
check_kmemleak pyverbs.no-leaks
[ "$FAILED" = 0 ]
