# Scenario: rdma-core's own tests (pyverbs, rdma-core 56.1, /usr/share/doc/rdma-core/tests
# in the toolbox): every generic test file and the test_mlx5_* files that apply to an
# InfiniBand port, against upstream mlx5_core + mlx5_ib and then against mlx5_rs on the
# same emulated IB port (PYVERBS_SET=upstream: scenario 95-pyverbs-upstream, another
# list of files, the same assertions). One line per test and
# driver (tests/guest/pyverbs_run.py: `PYV <driver> <outcome> <secs> <test id>`), then
# the table of ok / skip / fail / error per file for both drivers. Asserted:
#  - upstream's outcome of every test is the one kept in tests/guest/pyverbs.upstream
#    (an emulator change that breaks, or newly allows, something upstream does shows);
#  - no test goes worse on mlx5_rs than on upstream (upstream ok, ours skip / fail /
#    error; upstream skip, ours fail / error), and none that skips, fails or errors on
#    both does so for another reason (exception class and message, normalised), unless
#    tests/guest/pyverbs.differences lists it with its reason
#    (tests/guest/pyverbs_compare.py); tests that do better on ours print as BETTER;
#  - the table in Documentation/ib-vs-upstream.md is the one this run generates, with
#    upstream's skips, failures and errors by reason (printed as PYVDOC lines; one block
#    per set, PYVERBS_SET below; tests/pyverbs-doc.sh <console log> writes it there);
#  - each driver unloads with every emulator object destroyed and every page returned,
#    no emulator protocol violation, no kmemleak report.
# PYVERBS_FILES overrides the file list, PYVERBS_DRIVERS the drivers (exploration; the
# expectations then differ, and the Documentation table is not compared).
. "$MLX5RS_REPO/tests/guest/lib.sh"
# The 21 generic files of rdma-core 56.1 (all test_*.py but the efa and mlx5 ones).
GENERIC="test_addr test_atomic test_cq test_cq_events test_cqex test_cuda_dmabuf test_device
 test_flow test_fork test_mr test_odp test_parent_domain test_pd test_qp test_qpex test_rdmacm
 test_relaxed_ordering test_rss_traffic test_shared_pd test_srq test_tag_matching"
# The test_mlx5_* files that apply to an InfiniBand port. Left out: Ethernet or RoCE
# only (dr, flow, lag_affinity, pp, udp_sport: raw packet QPs, steering, LAG, RoCE
# source ports), CUDA (cuda_umem), and vfio (it rebinds the function to vfio-pci).
MLX5="test_mlx5_cq test_mlx5_crypto test_mlx5_dc test_mlx5_devx test_mlx5_dm_ops
 test_mlx5_dma_memcpy test_mlx5_dmabuf test_mlx5_huge_page test_mlx5_mkey test_mlx5_ooo_qp
 test_mlx5_query_port test_mlx5_raw_wqe test_mlx5_rdmacm test_mlx5_sched test_mlx5_timestamp
 test_mlx5_uar test_mlx5_var"
# make check runs CHECK on both drivers (the files measured to fit its budget,
# Documentation/ib-vs-upstream.md) and, in scenario 95-pyverbs-upstream
# (PYVERBS_SET=upstream), UPSTREAM on both drivers: files whose traffic tests the
# emulated data path serves (the set's name is from when it ran on upstream alone);
# make soak (PYVERBS_SET=soak, tests/guest/pyverbs-soak.sh) every file of GENERIC and
# MLX5 outside CHECK, on both drivers, and test_cq for its size sweeps (SIZE_SWEEPS).
CHECK="test_addr test_atomic test_cq test_device test_mr test_parent_domain test_pd test_qp
 test_srq test_mlx5_query_port test_mlx5_uar"
# The files of the rest that an InfiniBand ConnectX-5 port on the emulator serves, each
# with tests that pass on upstream (the others skip every test, for the reasons make
# soak's table gives: Ethernet or RoCE only, CUDA, no net interface, a feature the
# emulator does not offer: Documentation/ib-vs-upstream.md).
UPSTREAM="test_cq_events test_cqex test_fork test_qpex test_relaxed_ordering test_shared_pd
 test_mlx5_cq test_mlx5_huge_page test_mlx5_raw_wqe test_mlx5_timestamp"
SOAK=""
for f in $GENERIC $MLX5; do case " $(echo $CHECK) " in *" $f "*) ;; *) SOAK="$SOAK $f" ;; esac; done
# Size sweeps up to the device's largest CQ (max_cqe 4M: CQ buffers of 128 and 256 MiB
# that libmlx5 initialises CQE by CQE and the kernel pins and maps), 20-55 s each per
# driver under TCG, the same on both: make soak runs them (test_cq whole in its set,
# test_cqex is there already), make check's two sets leave them out.
SIZE_SWEEPS="tests.test_cq.CQAPITest.test_create_cq tests.test_cq.CQAPITest.test_create_cq_with_comp_channel
 tests.test_cq.CQAPITest.test_create_cq_bad_flow tests.test_cqex.CQEXAPITest.test_create_cq_ex_bad_flow"
SOAK="$SOAK test_cq"
SET=${PYVERBS_SET:-check}
case "$SET" in soak) ;; *) PYVERBS_EXCLUDE=$(echo $SIZE_SWEEPS); export PYVERBS_EXCLUDE ;; esac
# PYVERBS_DRIVERS=upstream runs upstream alone (its column only; exploration).
DRIVERS=${PYVERBS_DRIVERS:-upstream mlx5_rs}
case "$SET" in
soak)
	FILES=$SOAK
	# A hung test ends at this limit instead of pyverbs' 400 s. The slowest soak tests
	# are the size sweeps: test_create_cq_ex_bad_flow took 51 s in the first soak run,
	# test_create_cq 53 s in a make check (2026-12-05, beside two other TCG guests).
	export PYVERBS_TEST_TIMEOUT=${PYVERBS_TEST_TIMEOUT:-240}
	;;
upstream)
	FILES=$(echo $UPSTREAM)
	;;
*) FILES=$(echo $CHECK) ;;
esac
FILES=${PYVERBS_FILES:-$FILES}
G=$REPO/tests/guest
bdf=$(mlx_bdf) || { fail pyverbs.device-present "no 15b3 function"; exit 1; }
emu_heal
[ -e /sys/module/ib_uverbs ] || modprobe ib_uverbs
# The emulator's violation count is the boot's: each driver's run is judged by what it
# added (94-dp-faults, before 95 in the same boot, leaves the violations of its fatal
# error, which the emulator's data path keeps counting, as 94 reports).
VIOL0=$(violations)

# A writable copy of the tests package with only FILES among its test_*.py: its
# __init__ imports every test file present, and each costs seconds under TCG. The
# toolbox ships most files gzipped. (The name is cut in the shell: a basename process
# for each of the 59 files cost ~4 s in the TCG guest.)
PV=/tmp/pv
rm -rf $PV && mkdir -p $PV/tests
for f in /usr/share/doc/rdma-core/tests/*; do
	b=${f##*/}; b=${b%.gz}
	case "$b" in test_*.py) case " $FILES " in *" ${b%.py} "*) ;; *) continue ;; esac ;; esac
	case "$f" in *.gz) gunzip -c "$f" >"$PV/tests/$b" ;; *) cp "$f" "$PV/tests/$b" ;; esac
done
check pyverbs.test-files-present test "$(ls $PV/tests/test_*.py | wc -l)" = "$(echo $FILES | wc -w)"
# Test files the chosen ones import (test_mlx5_timestamp's FlowRes from test_flow,
# test_shared_pd's QpExRCRDMAWrite from test_qpex), copied for the import only: their
# own tests are not run (pyverbs_run.py runs FILES).
for _ in 1 2; do
	for d in $(sed -n 's/^from tests\.\(test_[a-z0-9_]*\) import.*/\1/p' $PV/tests/test_*.py | sort -u); do
		[ -e "$PV/tests/$d.py" ] && continue
		src=/usr/share/doc/rdma-core/tests/$d.py
		if [ -e "$src" ]; then cp "$src" "$PV/tests/"; else gunzip -c "$src.gz" >"$PV/tests/$d.py"; fi
		echo "pyverbs: $d copied for an import of the chosen files"
	done
done

# run DRIVER: the files against mlx5_0, results in /tmp/pyv.DRIVER (and on the console).
run() {
	t0=$(now_ms)
	# Shown as the tests end (tee), kept for the comparison below.
	timeout 1500 python3 "$G/pyverbs_run.py" "$1" mlx5_0 $PV $FILES 2>/tmp/pyv.$1.err | tee /tmp/pyv.$1
	echo "$((($(now_ms) - t0) / 1000))" >/tmp/pyv.$1.secs
	echo "pyverbs: $1 done after $(cat /tmp/pyv.$1.secs) s"
	# The tests that waited for a completion (none comes before the data path) and
	# what that wait cost: the figure behind the poll timeout (tests/guest/pyverbs_run.py).
	echo "pyverbs: $1: $(grep -c -i '^PYV .*\(timeout on polling\|got a\? timeout\|failed to poll CQ\|is empty or invalid\)' /tmp/pyv.$1) tests timed out polling a CQ"
	# pyverbs' own errors on stderr (a close that failed, often in a destructor), each
	# after the test it came in (pyverbs_run.py marks each test `--- <id>`).
	awk '/^--- /{t=$2; next} /pyverbs_error\.|^[A-Za-z]*Error:/{print "pyverbs: " t ": " $0}' /tmp/pyv.$1.err | uniq | head -n 40
	check "pyverbs.$1.every-file-ran" test "$(grep -c "^PYVERBS $1 " /tmp/pyv.$1)" = "$(echo $FILES | wc -w)"
}
unload_checks() { # DRIVER
	check "pyverbs.$1.emu-objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
	check "pyverbs.$1.emu-pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	check "pyverbs.$1.emu-no-violations" test "$(violations)" = "$VIOL0"
	VIOL0=$(violations)
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
if [ "$DRIVERS" != upstream ]; then
	check pyverbs.mlx5_rs.insmod insmod "$KO"
	check pyverbs.mlx5_rs.registered wait_for /sys/class/infiniband/mlx5_0/ports/1/state "4: ACTIVE"
	run mlx5_rs
	check pyverbs.mlx5_rs.rmmod rmmod mlx5_rs
	unload_checks mlx5_rs
fi

# --- the comparison ---------------------------------------------------------------
check pyverbs.upstream.as-expected python3 "$G/pyverbs_compare.py" upstream /tmp/pyv.upstream "$G/pyverbs.upstream"
python3 "$G/pyverbs_compare.py" upstream /tmp/pyv.upstream "$G/pyverbs.upstream" | grep -v '^pyverbs upstream'
if [ "$DRIVERS" != upstream ]; then
	echo "pyverbs: per file, ok / skip / fail / error"
	python3 "$G/pyverbs_compare.py" table /tmp/pyv.upstream /tmp/pyv.mlx5_rs
	check pyverbs.mlx5_rs.no-worse-than-upstream python3 "$G/pyverbs_compare.py" ours /tmp/pyv.upstream /tmp/pyv.mlx5_rs "$G/pyverbs.differences"
	python3 "$G/pyverbs_compare.py" ours /tmp/pyv.upstream /tmp/pyv.mlx5_rs "$G/pyverbs.differences"
	OURS=/tmp/pyv.mlx5_rs
	TIMES="upstream $(cat /tmp/pyv.upstream.secs) s, mlx5_rs $(cat /tmp/pyv.mlx5_rs.secs) s"
else
	OURS=-
	TIMES="upstream $(cat /tmp/pyv.upstream.secs) s"
fi
# The Documentation tables, as this run has them (tests/pyverbs-doc.sh copies them there).
python3 "$G/pyverbs_compare.py" --set "$SET" markdown /tmp/pyv.upstream $OURS
echo "PYVDOC-TIMES $TIMES"
if [ -z "${PYVERBS_FILES:-}" ] && [ -z "${PYVERBS_DRIVERS:-}" ]; then
	check pyverbs.doc-table-is-this-runs python3 "$G/pyverbs_compare.py" --set "$SET" doc /tmp/pyv.upstream $OURS "$REPO/Documentation/ib-vs-upstream.md"
	python3 "$G/pyverbs_compare.py" --set "$SET" doc /tmp/pyv.upstream $OURS "$REPO/Documentation/ib-vs-upstream.md" | grep -v '^pyverbs doc'
fi
check_kmemleak pyverbs.no-leaks
[ "$FAILED" = 0 ]
