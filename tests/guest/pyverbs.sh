# Guest script (exploratory, not yet a scenario): rdma-core's pyverbs tests
# (/usr/share/doc/rdma-core/tests in the toolbox) that exercise the control path, run
# against upstream mlx5_core + mlx5_ib and then against mlx5_rs on the same emulated
# port; one `PYVERBS <driver> <file> rc= secs= <unittest summary>` line per file and
# the per-test outcome lines (`PYV-<driver> ...`).
# Run: tests/vm/vm.sh --timeout 2400 --run tests/guest/pyverbs.sh (about 12 min).
. "$MLX5RS_REPO/tests/guest/lib.sh"
FILES=${PYVERBS_FILES:-"test_device test_pd test_mr test_cq test_qp test_srq test_parent_domain"}
# The toolbox ships most test files gzipped; the root file system is read-only.
rm -rf /tmp/pv && mkdir -p /tmp/pv && cp -r /usr/share/doc/rdma-core/tests /tmp/pv/ &&
	gunzip -f /tmp/pv/tests/*.gz
run_files() { # DRIVER
	for f in $FILES; do
		t0=$(date +%s)
		out=$(cd /tmp/pv && timeout 240 python3 tests/run_tests.py --dev mlx5_0 -v "tests.$f" 2>&1)
		rc=$?
		summary=$(echo "$out" | grep -E '^(OK|FAILED)|^Ran ' | tr '\n' ' ')
		echo "PYVERBS $1 $f rc=$rc secs=$(($(date +%s) - t0)) $summary"
		echo "$out" | grep -E '\.\.\. (ok|FAIL|ERROR|skipped)' | sed "s/^/PYV-$1 /"
	done
}
bdf=$(mlx_bdf) || { fail pyverbs.device-present "no 15b3 function"; exit 1; }
timeout 300 modprobe mlx5_core && timeout 300 modprobe mlx5_ib
check pyverbs.upstream-registered test -d /sys/class/infiniband/mlx5_0
run_files upstream
modprobe -r mlx5_ib
[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
modprobe -r mlx5_core
emuctl '{"cmd":"reset"}' >/dev/null
check pyverbs.insmod insmod "$KO"
check pyverbs.mlx5_rs-registered test -d /sys/class/infiniband/mlx5_0
run_files mlx5_rs
check pyverbs.rmmod rmmod mlx5_rs
[ "$FAILED" = 0 ]
