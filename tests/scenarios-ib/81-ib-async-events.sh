# Scenario: async events of QPs and SRQs reach user space. tests/guest/ib-async.c
# (built with the toolbox's gcc against libibverbs.so.1: guest_prog) creates an RC QP and an SRQ; the
# emulated device raises each QP event (path migrated, communication established, SQ
# drained, last WQE reached, WQ catastrophic / invalid request / access error, path
# migration failed) on the QP and each SRQ event (limit reached, catastrophic error) on
# the SRQ, one at a time, and ibv_get_async_event must return the IB event upstream
# mlx5_ib maps it to (qp.c `mlx5_ib_handle_qp_event`, srq.c `mlx5_ib_srq_event`) on that
# object. The same run is made on upstream mlx5_core + mlx5_ib (loaded as 91 does),
# which must give the same events: the expectation is upstream's.
# On mlx5_rs only: an event for a QP number nobody registered is counted (debugfs
# `rsc_unknown`) and dropped, one naming a resource type that does not take it is a
# malformed EQE (counted, logged, not acted on); QPs destroyed while bursts of events
# arrive for them (ib-async churn) leave no warning, no kernel splat (lockdep, DMA-API
# debug) and nothing behind. Then no warning or error line, every object destroyed, no
# kmemleak report.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail async.device-present "no 15b3 function"; exit 1; }
d=/sys/kernel/debug/mlx5_rs/$bdf
ib_scenario_start
BIN=$(guest_prog ib-async)
check async.build test -x "$BIN"

# Event raised, object, `enum ibv_event_type` expected (upstream's mapping).
EVENTS="PATH_MIG:qp:6 COMM_EST:qp:4 SQ_DRAINED:qp:5 SRQ_LAST_WQE:qp:16
WQ_CATAS_ERROR:qp:1 PATH_MIG_FAILED:qp:7 WQ_INVAL_REQ_ERROR:qp:2 WQ_ACCESS_ERROR:qp:3
SRQ_RQ_LIMIT:srq:15 SRQ_CATAS_ERROR:srq:14"
NEVENTS=10

srqns() { emu_stat '" ".join(str(n) for n in d["objects"]["srqns"])'; }

# run_events P IBDEV: the events above on a fresh QP and SRQ of IBDEV, checked as P.*.
run_events() {
	# (check() sets `out` and `name`: names of our own here.)
	p=$1
	ev_out=/tmp/$p-events.out
	before=$(srqns)
	$BIN "$2" events $NEVENTS >"$ev_out" 2>&1 &
	pid=$!
	check "$p.ready" wait_line "$ev_out" READY
	qpn=$(sed -n 's/^READY qpn=\([0-9]*\).*/\1/p' "$ev_out")
	srqn=""
	for n in $(srqns); do
		case " $before " in *" $n "*) ;; *) srqn=$n ;; esac
	done
	echo "$p: QP $qpn, SRQ $srqn"
	i=0
	for e in $EVENTS; do
		ev_name=${e%%:*} rest=${e#*:}
		on=${rest%%:*} want=${rest#*:}
		if [ "$on" = qp ]; then
			emuctl "{\"cmd\":\"qp_event\",\"qpn\":${qpn:-0},\"event\":\"$ev_name\"}"
		else
			emuctl "{\"cmd\":\"srq_event\",\"srqn\":${srqn:-0},\"event\":\"$ev_name\"}"
		fi
		check "$p.$ev_name" wait_line "$ev_out" "^EVENT $i type=$want on=$on\$"
		i=$((i + 1))
	done
	wait $pid
	check "$p.exit-status" test $? = 0
	cat "$ev_out"
	check "$p.events-exactly" test "$(grep -c '^EVENT ' "$ev_out")" = $NEVENTS
	check "$p.done" grep -q '^DONE$' "$ev_out"
}

# --- mlx5_rs ----------------------------------------------------------------------
ib_load async
kv() { tr ' ' '\n' <"$d/eqs" | sed -n "/^$1\$/{n;p;}"; }
disp0=$(kv rsc_dispatched)
run_events async "$dev"
check async.dispatched-counted test "$(($(kv rsc_dispatched) - disp0))" = $NEVENTS

# An event for a QP number with no QP, written raw into the async EQ: counted, dropped.
ASYNC=$(kv_rec "$d/eqs" "eq=async idx=0" eqn)
unk0=$(kv rsc_unknown)
mal0=$(kv_rec "$d/eqs" "eq=async idx=0" malformed)
# Data: 20 reserved bytes, type 0 (QP), 3 reserved, QPN 0xabcde.
emuctl "{\"cmd\":\"eqe\",\"eqn\":$ASYNC,\"type\":2,\"data\":\"000000000000000000000000000000000000000000000000000abcde\"}" >/dev/null
sleep 0.5
check async.unknown-qp-counted test "$(($(kv rsc_unknown) - unk0))" = 1
check async.unknown-qp-logged sh -c "dmesg | tail -n +$((START + 1)) | grep -q 'COMM_EST event for resource 0xabcde with no handler'"
ib_log_checks async.before-malformed
# COMM_EST naming a DCT (resource type 6): malformed (upstream: not allowed on it).
emuctl "{\"cmd\":\"eqe\",\"eqn\":$ASYNC,\"type\":2,\"data\":\"000000000000000000000000000000000000000006000000000abcde\"}" >/dev/null
sleep 0.5
check async.not-allowed-malformed test "$(($(kv_rec "$d/eqs" "eq=async idx=0" malformed) - mal0))" = 1
check async.not-allowed-not-dispatched test "$(kv rsc_unknown)" = "$((unk0 + 1))"
check async.not-allowed-logged sh -c "dmesg | tail -n +$((START + 1)) | grep -q 'malformed EQE type COMM_EST'"
# That warning is the expected one: the log checks below start after it.
WARN0=$(dmesg -l $LEVELS | wc -l)

# Destroy while events arrive: 10 QPs, each destroyed right after the device raised a
# burst of 80 events on it (64 COMM_EST, 16 WQ_CATAS_ERROR). Every event is either
# delivered (dispatched) or finds the QP gone (unknown): none is lost or malformed.
ch_out=/tmp/async-churn.out
ch_in=/tmp/async-churn.in
rm -f "$ch_in"
mkfifo "$ch_in"
qp0=$(live qp)
disp1=$(kv rsc_dispatched)
unk1=$(kv rsc_unknown)
mal1=$(kv_rec "$d/eqs" "eq=async idx=0" malformed)
$BIN "$dev" churn 10 <"$ch_in" >"$ch_out" 2>&1 &
pid=$!
# A helper that died must fail its checks, not end this script on SIGPIPE.
trap '' PIPE
exec 4>"$ch_in"
written=0
for c in $(seq 10); do
	wait_line "$ch_out" "^QPN [0-9]* $c\$" || break
	q=$(sed -n "s/^QPN \([0-9]*\) $c\$/\1/p" "$ch_out")
	for e in COMM_EST:64 WQ_CATAS_ERROR:16; do
		r=$(emuctl "{\"cmd\":\"qp_event\",\"qpn\":$q,\"event\":\"${e%:*}\",\"count\":${e#*:}}")
		w=${r#*\"written\":}
		w=${w%%[!0-9]*}
		written=$((written + ${w:-0}))
	done
	echo go >&4
done
exec 4>&-
wait $pid
check async.churn.exit-status test $? = 0
check async.churn.done grep -q '^DONE$' "$ch_out"
check async.churn.qps test "$(grep -c '^QPN ' "$ch_out")" = 10
check async.churn.emu-qps-gone test "$(live qp)" = "$qp0"
check async.churn.events-written test "$written" = 800
sleep 1
disp=$(($(kv rsc_dispatched) - disp1)) unk=$(($(kv rsc_unknown) - unk1))
echo "churn: $written events raised, $disp delivered to a registered QP, $unk to a QP already gone"
check async.churn.every-event-accounted test $((disp + unk)) = "$written"
check async.churn.none-malformed test "$(kv_rec "$d/eqs" "eq=async idx=0" malformed)" = "$mal1"
cat "$d/eqs" | grep rsc_
ib_log_checks async
ib_unload_checks async

# --- upstream mlx5_ib: the same events ---------------------------------------------
timeout 300 modprobe mlx5_core
timeout 300 modprobe mlx5_ib
check upstream-async.mlx5_0-active wait_for /sys/class/infiniband/mlx5_0/ports/1/state "4: ACTIVE" 60
run_events upstream-async mlx5_0
modprobe -r mlx5_ib
[ -e /sys/bus/pci/devices/$bdf/driver ] && echo "$bdf" >/sys/bus/pci/devices/$bdf/driver/unbind
check upstream-async.rmmod-mlx5_core modprobe -r mlx5_core
check upstream-async.emu-objects-destroyed test "$(emu_stat 'd["objects"]["total"]')" = 0
[ "$FAILED" = 0 ]
