# Scenario: the emulated device moves data (issue 22, "Checks"), proven with programs no
# one here wrote, first on upstream mlx5_core + mlx5_ib (the oracle), then on mlx5_rs
# with the same cases, unchanged (issue 23). Knobs (environment; the defaults are what
# make check runs):
#  - DP_DRIVERS: the drivers, in order (default "upstream mlx5_rs");
#  - DP_PARTS_<driver>: the parts below that run on the driver, words among "examples
#    perftest kclient diags" (parts 1 and 2 bring their part-3 byte checks); default all
#    four on both drivers;
#  - DP_PENDING_<driver>: cases of parts 1 and 2, by program (the case name's first
#    word: xsrq_pingpong, atomic_bw, ...), not run on the driver, each printed as
#    "not run"; default none.
# A part or case left out prints why. Per driver, each part a group of cases
# dp.<driver>.<part>.<name> (tests/guest/dp-traffic.sh runs each pair of processes
# under a timeout, DP_TIMEOUT, its output printed on failure):
#  1. examples: rdma-core's example programs, unmodified, a server and a client process
#     on the same port (loopback: the client connects over TCP to localhost, the QPs
#     address each other by the port's own LID): ibv_rc_pingpong, ibv_uc_pingpong,
#     ibv_ud_pingpong, ibv_srq_pingpong with their validation on (-c: the client
#     writes a known byte at the start of every page of its messages and the server
#     reports "invalid data in page N" for each that did not land, which fails the
#     case; rc, uc and ud start their buffers at 0x7b so a message that never landed
#     shows; srq starts at 0, so its -c proves nothing alone), ibv_xsrq_pingpong (no
#     validation option: "success" printed); with two wired devices in the guest
#     (tests/vm/vm.sh --wired) the same between them, server on one, client on the other
#     (-d), otherwise a line says why not.
#  2. perftest, unmodified, in loopback: ib_send_bw, ib_write_bw, ib_read_bw,
#     ib_atomic_bw (fetch-and-add and compare-and-swap), ib_send_lat, ib_write_lat,
#     ib_read_lat, 5 iterations each (perftest's minimum), -F (a TCG guest's CPU
#     frequency reads inconsistent). perftest checks no data, so:
#  3. the bytes landed, from the device's side: around every run of parts 1 and 2 the
#     emulator's data-path counters (stats dp: send WQEs per PRM opcode, payload bytes
#     sent or requested, receive bytes scattered, error CQEs, malformed WQEs,
#     violations; tests/guest/dp-traffic.sh dp_counters) are read, and <case>.bytes
#     requires that the run's opcode was executed at least as often, and at least as
#     many bytes moved, as the run itself says it did (perftest's "#bytes #iterations"
#     row; the example programs' -s, -n and their exchange pattern: every message
#     is sent by both sides), with no error CQE, malformed WQE or violation. What the
#     counters cannot tell is where the bytes went; the example programs' -c and the
#     kernel client's byte comparisons do.
#  4. kclient: the kernel consumer (tests/modules/ib_kclient loaded with traffic=1
#     kverbs=1 bench=$DP_KCLIENT_WRS, default 1000):
#     an RC QP pair in loopback, MRs by fast registration (ib_alloc_mr, ib_map_mr_sg,
#     IB_WR_REG_MR), SEND/RECV, RDMA WRITE, RDMA READ, SEND with an immediate, an
#     inline SEND, RDMA WRITE with an immediate (the receive's immediate, flag and
#     length checked), compare-and-swap, fetch-and-add, each followed by a
#     comparison of the bytes, then IB_WR_LOCAL_INV and a WRITE
#     through the invalidated rkey that must complete with a remote access error and
#     leave the bytes alone (tests/guest/kclient.sh KCLIENT_TRAFFIC_STEPS). Upstream
#     mlx5_ib refuses atomics from kernel consumers (wr.c, -EOPNOTSUPP at post): that
#     answer is accepted, and then both words must be untouched; the device's atomics
#     are proven from user space (part 2's ib_atomic_bw, 73-pyverbs' test_atomic).
#     Its kverbs step (kverbs.c, KCLIENT_KVERBS_STEPS): receives through a kernel SRQ
#     (post_srq_recv, each completion naming its SRQ WQE, the WQEs reused over three
#     rounds, a full SRQ refusing with -ENOMEM), and a QP's completions removed from
#     its CQ when it is moved to RESET or destroyed before they were polled
#     (upstream's __mlx5_ib_cq_clean), the SRQ WQEs of removed receives given back.
#     On mlx5_rs also: its kernel CQ pollers skipped no CQE as malformed (debugfs eqs
#     cqe_malformed 0) and found none of a destroyed QP left (cqe_stale unchanged
#     over the module's run: the cleaning removed them).
#     Then its bench loop: DP_KCLIENT_WRS SENDs in chains of 32 through another RC
#     pair, every completion successful and in order, and exactly as many send and
#     receive completions as requests, both CQs empty after (bench.exact: a request
#     or a completion lost or doubled fails it; `make soak` runs 1,000,000,
#     tests/guest/dp-endurance.sh); every call of its completion handler in hard IRQ
#     context, where upstream calls it (bench.handler-hardirq).
#  5. diags: infiniband-diags against the local port (ibstat, smpquery by directed
#     route and by LID, perfquery, ibnetdiscover): the MAD QPs carry real MADs. The
#     toolbox gains the package with this part (tests/vm/toolbox.sh PACKAGES).
# Then the driver unloads with every object destroyed and every page back, and no
# kmemleak report. Missing tools are failures naming them, never skips. Each part's
# seconds are printed ("dp: <driver> part <part> secs=N").
# The knobs of the header.
DP_DRIVERS=${DP_DRIVERS:-upstream mlx5_rs}
DP_PARTS_upstream=${DP_PARTS_upstream-examples perftest kclient diags}
DP_PARTS_mlx5_rs=${DP_PARTS_mlx5_rs-examples perftest kclient diags}
DP_PENDING_upstream=${DP_PENDING_upstream-}
DP_PENDING_mlx5_rs=${DP_PENDING_mlx5_rs-}
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/guest/kclient.sh"
. "$MLX5RS_REPO/tests/guest/dp-traffic.sh"
bdf=$(mlx_bdf) || { fail dp.device-present "no 15b3 function"; exit 1; }
ib_scenario_start
# The TCP side of every pair (rdma-core's and perftest's exchange of QPN, LID, PSN).
ip link set lo up
check dp.loopback-interface-up sh -c "ip -o link show lo | grep -q 'UP'"

# Two devices wired (vm.sh --wired): a second emulator whose wire is up.
WIRED=0
if [ "$(emu_count)" -ge 2 ] && [ "$(emu_stat 'd["dp"]["wire"]["link_up"]' 2>/dev/null)" = True ]; then
	WIRED=1
fi

# The IB devices, in the order of their functions: D0 on function 0 (emulator 0), D1
# on function 1 when wired.
ibdev_of() { # BDF
	for _d in /sys/bus/pci/devices/$1/infiniband/*; do
		[ -d "$_d" ] && { basename "$_d"; return 0; }
	done
	return 1
}

load() { # DRIVER
	case $1 in
	upstream)
		timeout 300 modprobe mlx5_core
		timeout 300 modprobe mlx5_ib ;;
	mlx5_rs) check "dp.$1.insmod" insmod "$KO" ;;
	esac
	D0=$(ibdev_of "$bdf")
	check "dp.$1.device" test -n "$D0"
	check "dp.$1.$D0.active" wait_for "/sys/class/infiniband/$D0/ports/1/state" "4: ACTIVE"
	D1=""
	if [ $WIRED = 1 ]; then
		D1=$(ibdev_of "$(mlx_bdf_n 1)")
		check "dp.$1.wired-device" test -n "$D1"
		check "dp.$1.$D1.active" wait_for "/sys/class/infiniband/$D1/ports/1/state" "4: ACTIVE"
	fi
}

unload() { # DRIVER
	case $1 in
	upstream)
		check "dp.$1.rmmod-mlx5_ib" modprobe -r mlx5_ib
		for b in $(mlx_bdfs); do
			[ -e "/sys/bus/pci/devices/$b/driver" ] && echo "$b" >"/sys/bus/pci/devices/$b/driver/unbind"
		done
		check "dp.$1.rmmod-mlx5_core" modprobe -r mlx5_core ;;
	mlx5_rs) check "dp.$1.rmmod" rmmod mlx5_rs ;;
	esac
	i=0
	while [ $i -lt "$(emu_count)" ]; do
		check "dp.$1.fn$i.objects-destroyed" test "$(emu_stat_n $i 'd["objects"]["total"]')" = 0
		check "dp.$1.fn$i.pages-returned" test "$(emu_stat_n $i 'd["pages"]["held"]')" = 0
		check "dp.$1.fn$i.no-violations" test "$(emu_stat_n $i 'd["violations"]')" = 0
		i=$((i + 1))
	done
}

# example P CASE PROG SERVER_DEV CLIENT_DEV MIN_SCATTERED ARGS [OKPAT]: one example
# program's pair; CASE.bytes wants MIN_SCATTERED bytes scattered into receive WQEs
# (on both emulators together when the two devices differ).
example() {
	_p=$1 _n=$2 _prog=$3 _sd=$4 _cd=$5 _min=$6 _args=$7 _ok=${8:-}
	dp_pending "$_p.$_n" && return
	_b0=$(dp_counters 0) _b1=""
	[ "$_sd" = "$_cd" ] || _b1=$(dp_counters 1)
	dp_pair "$_p.$_n" "$_prog" "-d $_sd -i 1 $_args" "-d $_cd -i 1 $_args" "$_ok"
	_a0=$(dp_counters 0)
	if [ "$_sd" = "$_cd" ]; then
		dp_bytes_check "$_p.$_n" "$_b0" "$_a0" scattered "$_min"
	else
		dp_bytes_check "$_p.$_n" "$(dp_sum "$_b0" "$_b1")" "$(dp_sum "$_a0" "$(dp_counters 1)")" scattered "$_min"
	fi
}

# Part 1. Sizes: rc, uc and srq 2 pages (8 KiB: -c checks both, over 8 packets of the
# 1 KiB path MTU the programs default to); ud one message within the port MTU.
# -r 16: receives posted at a time (the default 500 costs seconds under TCG).
examples() { # P SERVER_DEV CLIENT_DEV WHERE
	_p=$1.examples
	_w=$4
	example $_p rc_pingpong.$_w ibv_rc_pingpong "$2" "$3" $((2 * 10 * 8192)) "-s 8192 -n 10 -r 16 -c" ' iters in '
	example $_p uc_pingpong.$_w ibv_uc_pingpong "$2" "$3" $((2 * 10 * 8192)) "-s 8192 -n 10 -r 16 -c" ' iters in '
	example $_p ud_pingpong.$_w ibv_ud_pingpong "$2" "$3" $((2 * 10 * 1024)) "-s 1024 -n 10 -r 16 -c" ' iters in '
	# 2 QPs on the SRQ. -n counts the exchanges of all QPs together (its usage text
	# says "per QP"; the loop, `while (rcnt < iters || scnt < iters)`, counts them
	# together), and a side may send one more per QP: at least 10 each way.
	example $_p srq_pingpong.$_w ibv_srq_pingpong "$2" "$3" $((2 * 10 * 8192)) "-s 8192 -q 2 -n 10 -r 16 -c" ' iters in '
	# One client (the server's default), 5 tests: 5 messages each way.
	example $_p xsrq_pingpong.$_w ibv_xsrq_pingpong "$2" "$3" $((2 * 5 * 4096)) "-s 4096 -n 5" '^success'
}

# perf P CASE PROG OPKEY FACTOR SCATTER ARGS: one perftest pair in loopback on D0.
# CASE.bytes: the PRM opcode counter OPKEY grew by at least FACTOR × the run's
# iterations, payload bytes by FACTOR × iterations × size, and (SCATTER 1) as many
# bytes were scattered into receives. FACTOR 2 for the ping-pong latency tests (each
# side sends every message), 1 otherwise.
perf() {
	_p=$1 _n=$2 _prog=$3 _op=$4 _f=$5 _sc=$6 _args=$7
	dp_pending "$_p.$_n" && return
	_b=$(dp_counters 0)
	dp_pair "$_p.$_n" "$_prog" "-d $D0 -i 1 -F $_args" "-d $D0 -i 1 -F $_args"
	_a=$(dp_counters 0)
	_m=$(dp_perf_moved "$_p.$_n")
	if [ $DP_RAN = 0 ]; then
		fail "$_p.$_n.bytes" "the run did not start"
	elif [ -z "$_m" ]; then
		fail "$_p.$_n.bytes" "no '#bytes #iterations' result row in the client's output"
	else
		_sz=${_m% *} _it=${_m#* }
		echo "dp: $_p.$_n: the run says $_it iterations of $_sz bytes"
		if [ "$_sc" = 1 ]; then
			dp_bytes_check "$_p.$_n" "$_b" "$_a" "$_op" $((_f * _it)) bytes $((_f * _it * _sz)) scattered $((_f * _it * _sz))
		else
			dp_bytes_check "$_p.$_n" "$_b" "$_a" "$_op" $((_f * _it)) bytes $((_f * _it * _sz))
		fi
	fi
}

perftests() { # P
	_p=$1.perftest
	perf $_p send_bw ib_send_bw op0a 1 1 "-n 5 -s 4096"
	perf $_p write_bw ib_write_bw op08 1 0 "-n 5 -s 4096"
	perf $_p read_bw ib_read_bw op10 1 0 "-n 5 -s 4096"
	perf $_p atomic_bw.fetch_add ib_atomic_bw op12 1 0 "-n 5 -A FETCH_AND_ADD"
	perf $_p atomic_bw.cmp_swap ib_atomic_bw op11 1 0 "-n 5 -A CMP_AND_SWAP"
	perf $_p send_lat ib_send_lat op0a 2 1 "-n 5 -s 64"
	perf $_p write_lat ib_write_lat op08 2 0 "-n 5 -s 64"
	perf $_p read_lat ib_read_lat op10 1 0 "-n 5 -s 64"
}

# Part 4: the kernel client with its traffic step, on every device (add 1 on D0).
kclient_traffic() { # P
	_p=$1.kclient
	if [ ! -e "$KCLIENT_KO" ]; then
		fail "$_p.module" "no $KCLIENT_KO (tests/vm/module.sh builds it)"
		return
	fi
	[ "$drv" = mlx5_rs ] && _s0=$(cqe_count cqe_stale)
	check "$_p.insmod" insmod "$KCLIENT_KO" traffic=1 kverbs=1 bench="${DP_KCLIENT_WRS:-1000}"
	_r=/tmp/ib_kclient.traffic
	cat "$KCLIENT_DIR/results" >$_r
	grep -a -E '^(# 1[ .]|not ok [0-9]+ 1\.)' $_r
	kclient_steps "$_p" $_r 1 "$KCLIENT_ADD_STEPS $KCLIENT_TRAFFIC_STEPS $KCLIENT_KVERBS_STEPS $KCLIENT_BENCH_STEPS"
	echo "ib_kclient summary: $(kclient_summary)"
	check "$_p.rmmod" rmmod ib_kclient
	# Ours: the device wrote no CQE the kernel CQ pollers had to skip as malformed or
	# naming no work request in flight (debugfs eqs, cqe_malformed).
	if [ "$drv" = mlx5_rs ]; then
		check "$_p.no-malformed-cqe" test "$(cqe_count cqe_malformed)" = 0
		check "$_p.no-stale-cqe" test "$(cqe_count cqe_stale)" = "$_s0"
	fi
}

# cqe_count NAME: ours' counter NAME of skipped CQEs (debugfs eqs).
cqe_count() {
	tr ' ' '\n' <"/sys/kernel/debug/mlx5_rs/$bdf/eqs" | sed -n "/^$1\$/{n;p;}"
}

# Part 5: infiniband-diags on the local port of D0.
# diag P NAME TOOL PATTERN ARGS...: TOOL ARGS... exits 0 within 60 s and its output
# matches PATTERN (grep -E); a missing TOOL fails naming it. The output is printed.
diag() {
	_dn=$1.$2 _dk=$2 _dt=$3 _dp=$4
	shift 4
	if ! command -v "$_dt" >/dev/null 2>&1; then
		fail "$_dn" "$_dt not installed (Debian package infiniband-diags)"
		return
	fi
	timeout 60 "$_dt" "$@" >"$DP_OUT/$_dk.diag" 2>&1
	_drc=$?
	echo "---- $_dt $* (status $_drc) ----"
	head -n 40 "$DP_OUT/$_dk.diag"
	if [ $_drc != 0 ]; then
		fail "$_dn" "$_dt exit $_drc: $(tail -n 2 "$DP_OUT/$_dk.diag" | tr '\n' ' ')"
	elif ! grep -q -E "$_dp" "$DP_OUT/$_dk.diag"; then
		fail "$_dn" "$_dt output lacks /$_dp/"
	else
		pass "$_dn"
	fi
}
diags() { # P
	_p=$1.diags
	mkdir -p "$DP_OUT"
	dp_tools_present "$_p.tools" ibstat smpquery perfquery ibnetdiscover
	[ -e /sys/module/ib_umad ] || modprobe ib_umad
	_lid=$(($(cat /sys/class/infiniband/$D0/ports/1/lid)))
	_guid=$(sed 's/://g' /sys/class/infiniband/$D0/node_guid)
	diag $_p ibstat ibstat "Base lid: $_lid\$" "$D0" 1
	# Directed route with no hop: the MAD layer answers it on the local port itself.
	diag $_p smpquery-nodeinfo-dr smpquery "^Guid:\.*0x0*$_guid\$" -C "$D0" -P 1 -D nodeinfo 0
	# LID-routed to the port's own LID: out through QP0 and back in.
	diag $_p smpquery-portinfo-lid smpquery "^Lid:\.*$_lid\$" -C "$D0" -P 1 portinfo "$_lid" 1
	# The PMA through QP1 (GSI), to the own LID.
	diag $_p perfquery perfquery 'PortXmitData' -C "$D0" -P 1 "$_lid" 1
	# Its directed-route probe out of port 1 finds no cable and times out (libibmad's
	# default: 1 s a try, ~4 s in all here): 250 ms a try; the port's own answers come
	# through the local MAD path in milliseconds.
	diag $_p ibnetdiscover ibnetdiscover "$_guid" -t 250 -C "$D0" -P 1
}

# dp_part DRIVER PART: whether PART runs on DRIVER (DP_PARTS_<driver>; says so if not).
dp_part() {
	eval "_dpparts=\${DP_PARTS_$1-}"
	case " $_dpparts " in *" $2 "*) return 0 ;; esac
	echo "dp: $1 part $2 not run (DP_PARTS_$1=\"$_dpparts\")"
	return 1
}
# dp_pending CASE: whether CASE (dp.<driver>.<part>.<program>...) is pending on its
# driver, $drv (DP_PENDING_<driver>; says so if it is).
dp_pending() {
	eval "_dppend=\${DP_PENDING_$drv-}"
	_dpprog=${1#dp."$drv".*.}
	_dpprog=${_dpprog%%.*}
	case " $_dppend " in *" $_dpprog "*) ;; *) return 1 ;; esac
	echo "dp: $1 not run on $drv (DP_PENDING_$drv=\"$_dppend\")"
	return 0
}

for drv in $DP_DRIVERS; do
	P=dp.$drv
	load "$drv"
	if dp_part "$drv" examples; then
		t=$(now_ms)
		dp_tools_present "$P.examples.tools" ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong ibv_xsrq_pingpong
		examples "$P" "$D0" "$D0" loopback
		if [ $WIRED = 1 ]; then
			examples "$P" "$D0" "$D1" wired
		else
			echo "dp: $drv: across devices not run: this guest has $(emu_count) emulator(s) and no wired pair (tests/vm/vm.sh --wired runs it)"
		fi
		echo "dp: $drv part examples secs=$((($(now_ms) - t) / 1000))"
	fi
	if dp_part "$drv" perftest; then
		t=$(now_ms)
		dp_tools_present "$P.perftest.tools" ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat ib_write_lat ib_read_lat
		perftests "$P"
		echo "dp: $drv part perftest secs=$((($(now_ms) - t) / 1000))"
	fi
	if dp_part "$drv" kclient; then
		t=$(now_ms)
		kclient_traffic "$P"
		echo "dp: $drv part kclient secs=$((($(now_ms) - t) / 1000))"
	fi
	if dp_part "$drv" diags; then
		t=$(now_ms)
		diags "$P"
		echo "dp: $drv part diags secs=$((($(now_ms) - t) / 1000))"
	fi
	dmesg_since | grep -a -E 'mlx5|infiniband|ib_kclient' | grep -a -i -E 'error|fail|timeout|WARNING' | head -n 20
	unload "$drv"
	emu_heal
done
# Not ib_log_checks: the kernel client's deliberate remote access error makes upstream
# log the error CQE (mlx5_ib cq.c, "WC error"), as any error completion does.
check dp.no-kernel-warning sh -c "! dmesg | tail -n +$((START + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"
check_kmemleak dp.no-leaks
[ "$FAILED" = 0 ]
