# Scenario: traffic between two emulated devices wired to each other (issue 22,
# "Checks": the example programs, perftest and infiniband-diags against "the other
# emulated port"), on upstream mlx5_core + mlx5_ib, with programs no one here wrote,
# then on mlx5_rs with the same cases, unchanged (issue 23: every check of issue 22 on
# ours too). Knob: WIRE_DP_DRIVERS, the drivers in order (default "upstream mlx5_rs");
# the cases are wire-dp.<driver>.<part>.<name>.
# What tests/scenarios-ib/93-dp-traffic.sh does in loopback on one port, across the
# wire: every pair of processes has its server on D0 (function 0, emulator 0, LID 2) and
# its client on D1 (function 1, emulator 1, LID 3), so every packet crosses the wire.
# Each part a group of cases wire-dp.<driver>.<part>.<name> (tests/guest/dp-traffic.sh runs each
# pair under a timeout, DP_TIMEOUT, its output printed on failure):
#  1. examples: ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong, ibv_srq_pingpong with
#     their validation on (-c, 93's part 1 says what it proves), ibv_xsrq_pingpong
#     ("success" printed). Both sides send every message, so <case>.fn0.bytes and
#     <case>.fn1.bytes want, on EACH emulator, at least the run's messages as SEND WQEs
#     (-n), their payload bytes (-n × -s) sent and as many bytes scattered into receive
#     WQEs, with no error CQE, malformed WQE or violation (dp_bytes_check).
#  2. perftest, unmodified, server on D0, client on D1: ib_send_bw, ib_write_bw,
#     ib_read_bw, ib_atomic_bw (fetch-and-add, compare-and-swap), ib_send_lat,
#     ib_write_lat, ib_read_lat, 5 iterations each, -F. The client is the requester of
#     the bandwidth tests and of ib_read_lat (perftest: the server only answers), so
#     <case>.fn1.bytes wants the run's opcode executed by emulator 1 at least as often,
#     and at least as many payload bytes, as perftest's "#bytes #iterations" row says;
#     ib_send_bw also wants those bytes scattered on emulator 0 (<case>.fn0.bytes). In
#     ib_send_lat and ib_write_lat each side sends every message: both emulators are
#     held to the row.
#  Every run of parts 1 and 2 also has <case>.wire: both devices queued frames for the
#  other and took frames from it, and neither dropped a frame for a DLID not its own
#  (dp_wire_check). What the counters cannot tell is where the bytes went; -c does.
#  3. diags: infiniband-diags from D0 against the OTHER port, expectations from the
#     peer's sysfs (node GUID, LID) and the IBTA: smpquery nodeinfo by the peer's LID
#     (its node GUID, NodeType Channel Adapter, IBTA 14.2.5.3) and by directed route out
#     of port 1 (path 0,1: the peer answers a directed-route SMP with the permissive
#     DLID, IBTA 14.2.2), the reverse nodeinfo from D1 to D0's LID, smpquery portinfo by
#     the peer's LID (its LID), perfquery to the peer's LID (PortCounters of the peer's
#     port 1; PortXmitData at least what the peer's sysfs counted before, as the traffic
#     of parts 1 and 2 moved), ibnetdiscover from D0 finding both CAs (two "Ca" nodes,
#     both node GUIDs).
# Then the driver unloads with every object destroyed and every page back on both
# emulators, no kernel warning and no kmemleak report. Missing tools are failures
# naming them, never skips. Each part's seconds are printed ("wire-dp.<driver>: part
# <part> secs=N").
WIRE_DP_DRIVERS=${WIRE_DP_DRIVERS:-upstream mlx5_rs}
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/guest/dp-traffic.sh"
P=wire-dp
[ "$(emu_count)" = 2 ] || { fail $P.two-emulators "$(emu_count) emulator(s); boot with vm.sh --wired"; exit 1; }
ib_scenario_start
emu_heal_n 1
[ -e /sys/module/ib_umad ] || modprobe ib_umad
# The TCP side of every pair (rdma-core's and perftest's exchange of QPN, LID, PSN).
ip link set lo up
check $P.loopback-interface-up sh -c "ip -o link show lo | grep -q 'UP'"
for i in 0 1; do
	check $P.fn$i.wire-up test "$(emu_stat_n $i 'd["dp"]["wire"]["link_up"]')" = True
done

ibdev_of() { # BDF: its IB device
	for _d in /sys/bus/pci/devices/$1/infiniband/*; do
		[ -d "$_d" ] && { basename "$_d"; return 0; }
	done
	return 1
}

# The counters of both emulators (dp_counters 0 1: one Python for both) in C0 and C1;
# both empty if either emulator gave none.
NL='
'
counters2() {
	_cc=$(dp_counters 0 1) || _cc=""
	C0=${_cc%%"$NL"*} C1=${_cc#*"$NL"}
}

# (The helpers' variables are globals of this shell: dp_pair, dp_bytes_check and
# dp_wire_check set _c, so the case name here is _xc.)
# xexample NAME PROG MSGS SIZE ARGS [OKPAT]: one example program's pair, server on D0,
# client on D1; each emulator must have sent MSGS SENDs of SIZE bytes and scattered
# MSGS × SIZE bytes.
xexample() {
	_xc=$P.examples.$1
	counters2; _b0=$C0 _b1=$C1
	dp_pair "$_xc" "$2" "-d $D0 -i 1 $5" "-d $D1 -i 1 $5" "${6:-}"
	counters2; _a0=$C0 _a1=$C1
	dp_bytes_check "$_xc.fn0" "$_b0" "$_a0" op0a "$3" bytes $(($3 * $4)) scattered $(($3 * $4))
	dp_bytes_check "$_xc.fn1" "$_b1" "$_a1" op0a "$3" bytes $(($3 * $4)) scattered $(($3 * $4))
	dp_wire_check "$_xc" "$_b0" "$_a0" "$_b1" "$_a1"
}

# xperf NAME PROG OPKEY SIDES SCATTER ARGS: one perftest pair, server on D0, client on
# D1. SIDES "1" (the client requests) or "0 1" (each side sends every message): each
# of those emulators executed OPKEY at least the run's iterations and moved its bytes;
# SCATTER 1: those bytes were scattered by the other side's emulator (the server's,
# for "1"), or by each (for "0 1").
xperf() {
	_xc=$P.perftest.$1 _prog=$2 _op=$3 _sides=$4 _sc=$5 _args=$6
	counters2; _b0=$C0 _b1=$C1
	dp_pair "$_xc" "$_prog" "-d $D0 -i 1 -F $_args" "-d $D1 -i 1 -F $_args"
	counters2; _a0=$C0 _a1=$C1
	_m=$(dp_perf_moved "$_xc")
	if [ $DP_RAN = 0 ]; then
		fail "$_xc.bytes" "the run did not start"
	elif [ -z "$_m" ]; then
		fail "$_xc.bytes" "no '#bytes #iterations' result row in the client's output"
	else
		_sz=${_m% *} _it=${_m#* }
		echo "$P: $_xc: the run says $_it iterations of $_sz bytes"
		for _i in 0 1; do
			case " $_sides " in *" $_i "*) _req=1 ;; *) _req=0 ;; esac
			if [ $_i = 0 ]; then _b=$_b0 _a=$_a0; else _b=$_b1 _a=$_a1; fi
			if [ $_req = 1 ] && [ "$_sc" = 1 ] && [ "$_sides" != 1 ]; then
				dp_bytes_check "$_xc.fn$_i" "$_b" "$_a" "$_op" "$_it" bytes $((_it * _sz)) scattered $((_it * _sz))
			elif [ $_req = 1 ]; then
				dp_bytes_check "$_xc.fn$_i" "$_b" "$_a" "$_op" "$_it" bytes $((_it * _sz))
			elif [ "$_sc" = 1 ]; then
				dp_bytes_check "$_xc.fn$_i" "$_b" "$_a" scattered $((_it * _sz))
			fi
		done
	fi
	dp_wire_check "$_xc" "$_b0" "$_a0" "$_b1" "$_a1"
}

# xdiag NAME TOOL PATTERN ARGS...: TOOL ARGS... exits 0 within 60 s and its output
# (kept in $DP_OUT/NAME.diag, printed) matches PATTERN (grep -E); a missing TOOL fails
# naming it.
xdiag() {
	_xc=$P.diags.$1 _f=$DP_OUT/$1.diag _t=$2 _pat=$3
	shift 3
	if ! command -v "$_t" >/dev/null 2>&1; then
		fail "$_xc" "$_t not installed (Debian package infiniband-diags)"
		return
	fi
	_t0=$(now_ms)
	timeout 60 "$_t" "$@" >"$_f" 2>&1
	_rc=$?
	echo "---- $_t $* (status $_rc, $(($(now_ms) - _t0)) ms) ----"
	head -n 40 "$_f"
	if [ $_rc != 0 ]; then
		fail "$_xc" "$_t exit $_rc: $(tail -n 2 "$_f" | tr '\n' ' ')"
	elif ! grep -q -E "$_pat" "$_f"; then
		fail "$_xc" "$_t output lacks /$_pat/"
	else
		pass "$_xc"
	fi
}

for drv in $WIRE_DP_DRIVERS; do
	P=wire-dp.$drv
	failed0=$FAILED
	dmesg_mark
	case $drv in
	upstream)
		timeout 300 modprobe mlx5_core
		timeout 300 modprobe mlx5_ib ;;
	mlx5_rs) check $P.insmod insmod "$KO" ;;
	esac
	D0=$(ibdev_of "$(mlx_bdf_n 0)")
	D1=$(ibdev_of "$(mlx_bdf_n 1)")
	check $P.fn0-device test -n "$D0"
	check $P.fn1-device test -n "$D1"
	for d in $D0 $D1; do
		check $P.$d.active wait_for "/sys/class/infiniband/$d/ports/1/state" "4: ACTIVE"
	done
	# What the ports are, from sysfs (upstream's reading of the devices).
	LID0=$(($(cat "/sys/class/infiniband/$D0/ports/1/lid")))
	LID1=$(($(cat "/sys/class/infiniband/$D1/ports/1/lid")))
	GUID0=$(sed 's/://g' "/sys/class/infiniband/$D0/node_guid")
	GUID1=$(sed 's/://g' "/sys/class/infiniband/$D1/node_guid")
	echo "$P: server $D0 (LID $LID0, node GUID $GUID0), client $D1 (LID $LID1, node GUID $GUID1)"
	check $P.distinct-lids test "$LID0" != "$LID1"
	check $P.distinct-guids test "$GUID0" != "$GUID1"

	t=$(now_ms)
	dp_tools_present $P.examples.tools ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong ibv_xsrq_pingpong
	# Sizes as 93's: rc, uc and srq 2 pages (8 KiB, -c checks both, 8 packets of the 1 KiB
	# path MTU); ud one message within the port MTU; -r 16 receives posted at a time.
	xexample rc_pingpong ibv_rc_pingpong 10 8192 "-s 8192 -n 10 -r 16 -c" ' iters in '
	xexample uc_pingpong ibv_uc_pingpong 10 8192 "-s 8192 -n 10 -r 16 -c" ' iters in '
	xexample ud_pingpong ibv_ud_pingpong 10 1024 "-s 1024 -n 10 -r 16 -c" ' iters in '
	# 2 QPs on the SRQ; -n counts the exchanges of all QPs together: at least 10 each way.
	xexample srq_pingpong ibv_srq_pingpong 10 8192 "-s 8192 -q 2 -n 10 -r 16 -c" ' iters in '
	# One client, 5 tests: 5 messages each way.
	xexample xsrq_pingpong ibv_xsrq_pingpong 5 4096 "-s 4096 -n 5" '^success'
	echo "$P: part examples secs=$((($(now_ms) - t) / 1000))"

	t=$(now_ms)
	dp_tools_present $P.perftest.tools ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat ib_write_lat ib_read_lat
	xperf send_bw ib_send_bw op0a 1 1 "-n 5 -s 4096"
	xperf write_bw ib_write_bw op08 1 0 "-n 5 -s 4096"
	xperf read_bw ib_read_bw op10 1 0 "-n 5 -s 4096"
	xperf atomic_bw.fetch_add ib_atomic_bw op12 1 0 "-n 5 -A FETCH_AND_ADD"
	xperf atomic_bw.cmp_swap ib_atomic_bw op11 1 0 "-n 5 -A CMP_AND_SWAP"
	xperf send_lat ib_send_lat op0a "0 1" 1 "-n 5 -s 64"
	xperf write_lat ib_write_lat op08 "0 1" 0 "-n 5 -s 64"
	xperf read_lat ib_read_lat op10 1 0 "-n 5 -s 64"
	echo "$P: part perftest secs=$((($(now_ms) - t) / 1000))"

	t=$(now_ms)
	mkdir -p "$DP_OUT"
	dp_tools_present $P.diags.tools smpquery perfquery ibnetdiscover
	# NodeInfo of the peer by its LID: its node GUID; NodeType 1, a channel adapter.
	xdiag smpquery-nodeinfo-peer-lid smpquery "^Guid:\.*0x0*$GUID1\$" -C "$D0" -P 1 nodeinfo "$LID1"
	check $P.diags.smpquery-nodeinfo-peer-lid.ca grep -q -E '^NodeType:\.*Channel Adapter$' "$DP_OUT/smpquery-nodeinfo-peer-lid.diag"
	# By directed route: one hop out of port 1 reaches the peer.
	xdiag smpquery-nodeinfo-peer-dr smpquery "^Guid:\.*0x0*$GUID1\$" -C "$D0" -P 1 -D nodeinfo 0,1
	# The other way: D1 asks D0.
	xdiag smpquery-nodeinfo-reverse smpquery "^Guid:\.*0x0*$GUID0\$" -C "$D1" -P 1 nodeinfo "$LID0"
	xdiag smpquery-portinfo-peer-lid smpquery "^Lid:\.*$LID1\$" -C "$D0" -P 1 portinfo "$LID1" 1
	# The peer's PMA (through its host's QP1): the peer's port 1, and at least the data
	# its sysfs counted before (the counter only grows; 32 bits of 4-byte words are far
	# from saturating here).
	xmit1=$(cat "/sys/class/infiniband/$D1/ports/1/counters/port_xmit_data")
	echo "$P: $D1 sysfs port_xmit_data before perfquery: $xmit1"
	xdiag perfquery-peer perfquery "^# Port counters: Lid $LID1 port 1" -C "$D0" -P 1 "$LID1" 1
	pq=$(sed -n 's/^PortXmitData:\.*\([0-9]*\)$/\1/p' "$DP_OUT/perfquery-peer.diag")
	check $P.diags.perfquery-peer.xmit-data test "${pq:-0}" -ge "$xmit1" -a "${pq:-0}" -gt 0
	# The fabric from D0: two channel adapters, both node GUIDs.
	xdiag ibnetdiscover-both-cas ibnetdiscover "$GUID1" -C "$D0" -P 1
	check $P.diags.ibnetdiscover-both-cas.count test "$(grep -c '^Ca' "$DP_OUT/ibnetdiscover-both-cas.diag")" = 2
	check $P.diags.ibnetdiscover-both-cas.own grep -q "$GUID0" "$DP_OUT/ibnetdiscover-both-cas.diag"
	echo "$P: part diags secs=$((($(now_ms) - t) / 1000))"

	# The wire's and the transport's counters, for the reader of a failure (four
	# Python starts, ~1.5 s each in the TCG guest: only when a check of this driver
	# failed).
	if [ "$FAILED" != "$failed0" ]; then
		for i in 0 1; do
			echo "$P: fn$i wire: $(emu_stat_n $i 'json.dumps(d["dp"]["wire"], sort_keys=True)')"
			echo "$P: fn$i transport: $(emu_stat_n $i 'json.dumps(d["dp"]["send"]["transport"], sort_keys=True)')"
		done
	fi
	echo "---- $drv printed ----"
	dmesg_since | grep -a -E 'mlx5|infiniband' | grep -a -i -E 'error|fail|timeout|WARNING' | head -n 20
	case $drv in
	upstream)
		check $P.rmmod-mlx5_ib modprobe -r mlx5_ib
		for b in $(mlx_bdfs); do
			[ -e "/sys/bus/pci/devices/$b/driver" ] && echo "$b" >"/sys/bus/pci/devices/$b/driver/unbind"
		done
		check $P.rmmod-mlx5_core modprobe -r mlx5_core ;;
	mlx5_rs) check $P.rmmod rmmod mlx5_rs ;;
	esac
	for i in 0 1; do
		check $P.fn$i.objects-destroyed test "$(emu_stat_n $i 'd["objects"]["total"]')" = 0
		check $P.fn$i.pages-returned test "$(emu_stat_n $i 'd["pages"]["held"]')" = 0
		check $P.fn$i.no-violations test "$(emu_stat_n $i 'd["violations"]')" = 0
	done
	check $P.no-kernel-warning sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"
	emu_heal_n 0
	emu_heal_n 1
done
check_kmemleak wire-dp.no-leaks
[ "$FAILED" = 0 ]
