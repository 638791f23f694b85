# Scenario: device faults and bad input on the data path, first under upstream
# mlx5_core + mlx5_ib (the oracle: the expectations are upstream's behaviour), then
# under mlx5_rs with the same cases, unchanged (issue 23, "Bad input and faults").
# Knob (environment; the default is what make check runs):
#  - DPF_DRIVERS: the drivers, in order (default "upstream mlx5_rs").
# Per driver:
# 1. tests/guest/dp-faults.py (pyverbs: libibverbs + libmlx5) connects a fresh pair of
#    RC QPs through the port's LID for each fault the emulator's control request
#    `dp_fault` sets (emu/README.md "Faults on demand"), posts one SEND or RDMA WRITE,
#    and checks what user space sees, every wait bounded:
#      cqe_error (syndrome 0x04, vendor 0x42) -> IBV_WC_LOC_PROT_ERR with vendor_err
#        0x42, the QP in ERR, the next WR flushed, the peer received the data;
#      lost_cqe -> that WR never completes (a hung WR, not even flushed when the QP is
#        moved to ERR), the next WR completes;
#      cq_overrun -> no completion, IBV_EVENT_CQ_ERR;
#      wqe_dma -> IBV_WC_LOC_QP_OP_ERR, IBV_EVENT_QP_FATAL, nothing sent;
#      rkey -> IBV_WC_REM_ACCESS_ERR at the requester, the responder's receive flushed,
#        IBV_EVENT_QP_ACCESS_ERR, both QPs in ERR.
#    Then bad input, no fault set (the device's own checks, IBTA 9.7.4.1.3, 9.7.5.2.8,
#    10.6.3): an RDMA WRITE through an rkey never granted, one past the end of the
#    peer's MR, one through the rkey of an MR of another PD -> IBV_WC_REM_ACCESS_ERR,
#    the peer's bytes untouched, IBV_EVENT_QP_ACCESS_ERR for the responder; a SEND
#    gathering through the lkey of another PD's MR -> IBV_WC_LOC_PROT_ERR; a SEND to a
#    peer with no receive posted and rnr_retry 0 -> IBV_WC_RNR_RETRY_EXC_ERR. Memory
#    windows (IBTA 10.6.7.2, 10.6.7.3, 11.6.2): a type 2 window bound by the responder's
#    QP takes a WRITE in its range; from another QP pair, or across the window's end
#    (inside the MR) -> IBV_WC_REM_ACCESS_ERR, nothing written; a bound type 2 window
#    bound again -> IBV_WC_MW_BIND_ERR, the QP in ERR.
#    Before and after, a fresh pair moves data.
# 2. A process killed mid-traffic: ibv_rc_pingpong (a server and a client) runs a long
#    exchange; once the emulator counts its SENDs growing, both get SIGKILL. They are
#    gone within 10 s, uverbs' cleanup destroys what they made (the emulator's object
#    count back to what it was before), and a fresh ibv_rc_pingpong -c pair passes.
# 3. Malformed CQEs on the kernel poll path (the emulator's test faults bad_cqe_*,
#    emu/README.md "Faults on demand"): for each, the fault set on the next CQE of the
#    device, then the kernel consumer tests/modules/ib_kclient loaded with traffic=1
#    traffic_wait_ms=2000 (its first completion is the one made malformed, waited for
#    2 s instead of 5); <case>.hit: the fault hit one CQE. bad_cqe_wqe_counter
#    (+ 0x8000): upstream's mlx5_poll_one masks the counter
#    to the queue, so every traffic step passes (the expectation, on both drivers).
#    bad_cqe_opcode, bad_cqe_qpn: upstream follows no check (an unknown opcode returns
#    a work completion it did not fill; an unknown QPN dereferences the NULL its QP
#    table returns, cq.c: not run on upstream, it would oops), so what the consumer
#    sees is printed, not compared; on mlx5_rs the CQE is skipped and counted (the
#    once-per-CQ "malformed CQE" line for the opcode). After each, no splat; at the
#    end, the consumer's traffic passes whole again (the device still works).
# 3b. Kernel XRC QPs: ib_kclient loaded with xrc=1 (tests/modules/ib_kclient/xrc.c)
#    creates an XRC target (with its XRC domain) and an XRC initiator as a kernel
#    consumer, connects them, posts one SEND and destroys everything. A kernel work
#    request cannot name the remote XRC SRQ; upstream's WQE names SRQ 0 (wr.c), the
#    target NAKs it: the send completes with IB_WC_REM_OP_ERR, nothing is received.
#    The emulator counts that request as a violation (no XRC SRQ 0 in the target's
#    domain, emu/README.md): ours must add exactly as many as upstream's run did;
#    they are then left out of the unload's no-violation check.
# Then: the helper did not hang, no kernel splat, unload destroys every object and
# returns every page, no emulator violation.
# 4. A drain after the device's fatal error, on a fresh load: ib_kclient loaded with
#    drain=1 arms a QP with SENDs (RNR forever) and receives outstanding on a CQ polled
#    from a work queue (tests/modules/ib_kclient/drain.c), the emulator's fatal health
#    syndrome is set (as 60-health-fatal does), and once the driver logged the fatal
#    error and the module saw IB_EVENT_DEVICE_FATAL (which both drivers raise after
#    their internal-error handling) the module is unloaded: its remove drains the QP. Upstream's
#    internal-error state is the expectation (main.c mlx5_ib_handle_internal_error,
#    cq.c mlx5_ib_poll_sw_comp, qp.c mlx5_ib_drain_sq/rq): ib_drain_qp returns, every
#    outstanding request completes with IB_WC_WR_FLUSH_ERR (3 sends, 5 receives),
#    posts fail with -EIO, a drain with nothing outstanding returns, the objects are
#    destroyed; the module unloads, the emulator is reset (its data path would go on
#    reading the freed queues), the driver unloads (bounded), no splat.
# At the end no kmemleak report. Each driver's seconds are printed ("dpf: <driver>
# secs=N").
DPF_DRIVERS=${DPF_DRIVERS:-upstream mlx5_rs}
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/guest/kclient.sh"
. "$MLX5RS_REPO/tests/guest/dp-traffic.sh"
bdf=$(mlx_bdf) || { fail dp-faults.device-present "no 15b3 function"; exit 1; }
ib_scenario_start
ip link set lo up

load() { # DRIVER
	case $1 in
	upstream)
		timeout 300 modprobe mlx5_core
		check "dp-faults.$1.core-probe" test -e "/sys/bus/pci/devices/$bdf/driver"
		timeout 300 modprobe mlx5_ib ;;
	mlx5_rs) check "dp-faults.$1.insmod" insmod "$KO" ;;
	esac
	D0=$(ibdev)
	check "dp-faults.$1.device" test -n "$D0"
	check "dp-faults.$1.$D0-active" wait_for "/sys/class/infiniband/$D0/ports/1/state" "4: ACTIVE"
}

unload() { # DRIVER
	emuctl '{"cmd":"clear_injections"}' >/dev/null
	case $1 in
	upstream)
		check "dp-faults.$1.rmmod-mlx5_ib" modprobe -r mlx5_ib
		check "dp-faults.$1.objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
		[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
		check "dp-faults.$1.rmmod-mlx5_core" modprobe -r mlx5_core ;;
	mlx5_rs)
		check "dp-faults.$1.rmmod" rmmod mlx5_rs
		check "dp-faults.$1.objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0 ;;
	esac
	check "dp-faults.$1.all-pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	check "dp-faults.$1.no-violations" test "$(violations)" = "$viol0"
}

# objects_but_mkeys: the device's live objects other than memory keys.
objects_but_mkeys() {
	echo $(($(emu_stat 'd["objects"]["total"]') - $(live mkey)))
}

# killed P: part 2 above.
killed() {
	_p=$1.killed
	if ! command -v ibv_rc_pingpong >/dev/null 2>&1; then
		fail "$_p.tool" "ibv_rc_pingpong not installed"
		return
	fi
	mkdir -p "$DP_OUT"
	# The baseline once the device's object count has settled: the previous case's
	# processes are released by uverbs asynchronously (up to 30 s). Memory keys are
	# left out: both drivers' MR caches keep a deregistered MR's mkey, and upstream's
	# shrinks its cache later by itself (a run of 2026-12-05 on upstream counted 17
	# objects after the kill against a baseline of 22: fewer, not more, as a cache
	# releasing mkeys meanwhile would make it).
	_o0=$(objects_but_mkeys)
	_i=0
	while [ $_i -lt 30 ]; do
		sleep 1; _i=$((_i + 1))
		_o1=$(objects_but_mkeys)
		[ "$_o1" = "$_o0" ] && break
		_o0=$_o1
	done
	_b=$(dp_counters 0)
	DP_TCP_PORT=$((DP_TCP_PORT + 1))
	ibv_rc_pingpong -d "$D0" -i 1 -s 4096 -n 1000000 -r 16 -p $DP_TCP_PORT >"$DP_OUT/killed.server" 2>&1 &
	_ks=$!
	_i=0
	while ! dp_listening $DP_TCP_PORT && kill -0 $_ks 2>/dev/null && [ $_i -lt 600 ]; do
		sleep 0.1; _i=$((_i + 1))
	done
	ibv_rc_pingpong -d "$D0" -i 1 -s 4096 -n 1000000 -r 16 -p $DP_TCP_PORT "$DP_HOST" >"$DP_OUT/killed.client" 2>&1 &
	_kc=$!
	# Traffic flows: the emulator's SEND count grows by 20 within 60 s (looked at every
	# 0.2 s).
	_i=0 _sent=0
	while [ $_i -lt 300 ] && [ "$_sent" -lt 20 ] && kill -0 $_kc 2>/dev/null; do
		sleep 0.2; _i=$((_i + 1))
		_sent=$(dp_delta "$_b" "$(dp_counters 0)" op0a)
	done
	check "$_p.traffic-flows" test "$_sent" -ge 20
	check "$_p.both-running" sh -c "kill -0 $_ks && kill -0 $_kc"
	kill -KILL $_ks $_kc 2>/dev/null
	_i=0
	while { kill -0 $_ks || kill -0 $_kc; } 2>/dev/null && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
	check "$_p.both-gone" sh -c "! kill -0 $_ks 2>/dev/null && ! kill -0 $_kc 2>/dev/null"
	wait $_ks $_kc 2>/dev/null
	echo "dpf: $_p: $_sent SENDs before the kill; $(tail -n 2 "$DP_OUT/killed.client" | tr '\n' ' ')"
	# The processes' objects are destroyed by uverbs' release of their files (bounded:
	# 60 s, a killed process's release under TCG on a loaded host took more than 30).
	_i=0
	while [ "$(objects_but_mkeys)" != "$_o0" ] && [ $_i -lt 60 ]; do sleep 1; _i=$((_i + 1)); done
	check "$_p.objects-back" test "$(objects_but_mkeys)" = "$_o0"
	dp_pair "$_p.pingpong-after" ibv_rc_pingpong "-d $D0 -i 1 -s 4096 -n 5 -r 16 -c" "-d $D0 -i 1 -s 4096 -n 5 -r 16 -c" ' iters in '
}

# kc_traffic NAME [ARG...]: ib_kclient loaded with traffic=1 (and ARGs), its results in
# /tmp/NAME.results (the module stays loaded).
kc_traffic() {
	_kn=$1; shift
	check "$_kn.insmod" insmod "$KCLIENT_KO" traffic=1 "$@"
	cat "$KCLIENT_DIR/results" >"/tmp/$_kn.results" 2>/dev/null
	grep -a -E '^not ok [0-9]+ 1\.traffic' "/tmp/$_kn.results"
}

# malformed P: part 3 above.
malformed() {
	_p=$1.malformed
	if [ ! -e "$KCLIENT_KO" ]; then
		fail "$_p.module" "no $KCLIENT_KO (tests/vm/module.sh builds it)"
		return
	fi
	for _bf in bad_cqe_wqe_counter bad_cqe_opcode bad_cqe_qpn; do
		if [ "$drv" = upstream ] && [ $_bf = bad_cqe_qpn ]; then
			echo "dpf: $_p.$_bf not run on upstream: mlx5_poll_one dereferences the NULL QP of an unknown QPN (cq.c)"
			continue
		fi
		dmesg_mark
		_h0=$(emu_stat "d['dp']['faults']['$_bf']")
		emuctl "{\"cmd\":\"dp_fault\",\"fault\":\"$_bf\"}" >/dev/null
		# The step whose completion the fault makes malformed waits for it in vain:
		# 2 s, not the module's 5 (the others complete in milliseconds).
		kc_traffic "$_p.$_bf" traffic_wait_ms=2000
		check "$_p.$_bf.hit" test "$(emu_stat "d['dp']['faults']['$_bf']")" = $((_h0 + 1))
		case $_bf in
		bad_cqe_wqe_counter) kclient_steps "$_p.$_bf" "/tmp/$_p.$_bf.results" 1 "$KCLIENT_TRAFFIC_STEPS" ;;
		*) echo "dpf: $_p.$_bf: the consumer saw: $(grep -a -c '^ok [0-9]* 1\.traffic' "/tmp/$_p.$_bf.results") traffic steps ok, $(grep -a -c '^not ok [0-9]* 1\.traffic' "/tmp/$_p.$_bf.results") not ok" ;;
		esac
		if [ "$drv" = mlx5_rs ] && [ $_bf = bad_cqe_opcode ]; then
			check "$_p.$_bf.counted" sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'malformed CQE'"
		fi
		check "$_p.$_bf.rmmod" rmmod ib_kclient
		emuctl '{"cmd":"clear_injections"}' >/dev/null
		dmesg_since | grep -a -E 'mlx5|ib_kclient' | grep -a -v -E 'KTAP|# |\] +ok [0-9]' | tail -n 8
		check "$_p.$_bf.no-kernel-warning" sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"
	done
	kc_traffic "$_p.after"
	kclient_steps "$_p.after" "/tmp/$_p.after.results" 1 "$KCLIENT_TRAFFIC_STEPS"
	check "$_p.after.rmmod" rmmod ib_kclient
}

# kxrc P: part 3b above (XRC_VIOL: upstream's violations, when it ran first).
kxrc() {
	_p=$1.xrc
	if [ ! -e "$KCLIENT_KO" ]; then
		fail "$_p.module" "no $KCLIENT_KO (tests/vm/module.sh builds it)"
		return
	fi
	_v=$(violations)
	check "$_p.insmod" insmod "$KCLIENT_KO" xrc=1
	cat "$KCLIENT_DIR/results" >"/tmp/$_p.results" 2>/dev/null
	grep -a -E '^# 1\.xrc|^not ok [0-9]+ 1\.xrc' "/tmp/$_p.results"
	kclient_steps "$_p" "/tmp/$_p.results" 1 "$KCLIENT_XRC_STEPS"
	check "$_p.rmmod" rmmod ib_kclient
	_dv=$(($(violations) - _v))
	echo "dpf: $_p: emulator violations: $_dv"
	if [ "$drv" = upstream ]; then
		XRC_VIOL=$_dv
	elif [ -n "${XRC_VIOL:-}" ]; then
		check "$_p.violations-as-upstream" test "$_dv" = "$XRC_VIOL"
	fi
	viol0=$((viol0 + _dv))
}

# fatal_drain P: part 4 above.
fatal_drain() {
	_p=$1.drain
	if [ ! -e "$KCLIENT_KO" ]; then
		fail "$_p.module" "no $KCLIENT_KO (tests/vm/module.sh builds it)"
		return
	fi
	# This part is about the dead device (drain, flush, -EIO, unload), not the
	# recovery (97-recover): both drivers are kept from recovering by themselves.
	# Otherwise each recovers once the emulator is healed below, and upstream's
	# recovery races that heal (a run of 2026-12-05: its ENABLE_HCA timed out and
	# leaked the command's buffer, as its log says it does).
	load "$drv"
	no_auto_recover "$_p.no-auto-recover" "$bdf"
	dmesg_mark
	_m=$MARK
	_v0=$(violations)
	check "$_p.insmod" insmod "$KCLIENT_KO" drain=1
	kclient_steps "$_p" "$KCLIENT_DIR/results" 1 "drain.qp-x.rts drain.qp-y.rts drain.armed"
	# The firmware offers no software reset either (init segment bit 30 clear, as on
	# firmware without reset support).
	emuctl '{"cmd":"init_seg","fw_reset_supported":false}' >/dev/null
	emuctl '{"cmd":"health","syndrome":7,"ext_syndrome":4660,"rfr":true,"severity":2}' >/dev/null
	# Both drivers log "Fatal error N detected" from their health poll (2 s).
	_i=0
	until dmesg | tail -n +$((_m + 1)) | grep -a -q 'Fatal error'; do
		[ $_i -ge 60 ] && break
		sleep 1
		_i=$((_i + 1))
	done
	check "$_p.fatal-detected" sh -c "dmesg | tail -n +$((_m + 1)) | grep -a -q 'Fatal error'"
	# The IB device's internal-error handling follows in the driver's event work, and
	# then its IB_EVENT_DEVICE_FATAL (8), which the module logs (drain.c).
	check "$_p.device-fatal-event" wait_log 'drain device event 8 ' 60
	check "$_p.rmmod-kclient" timeout 200 rmmod ib_kclient
	# The emulator's data path goes on after its fatal error (X answers Y's SENDs with
	# RNR forever) and would read the queues' memory once the driver freed it: the
	# device is reset (and healed) before the driver unloads. Printed, not asserted:
	# what it counted meanwhile.
	echo "dpf: $_p: emulator violations during the fatal error: $(($(violations) - _v0))"
	emu_heal
	emuctl '{"cmd":"init_seg","fw_reset_supported":true}' >/dev/null
	_v1=$(violations)
	dmesg | tail -n +$((_m + 1)) >"/tmp/$_p.log"
	grep -a -E 'ib_kclient: (# 1\.drain|(not )?ok [0-9]+ 1\.drain)' "/tmp/$_p.log"
	kclient_steps "$_p" "/tmp/$_p.log" 1 "drain.returned drain.flushed drain.post-eio drain.idle-returned drain.teardown.qp-x drain.teardown.qp-y drain.teardown.pd"
	case $drv in
	upstream)
		check "$_p.rmmod-mlx5_ib" timeout 200 modprobe -r mlx5_ib
		[ -e "/sys/bus/pci/devices/$bdf/driver" ] && timeout 200 sh -c "echo $bdf >/sys/bus/pci/devices/$bdf/driver/unbind"
		check "$_p.rmmod-mlx5_core" timeout 200 modprobe -r mlx5_core ;;
	mlx5_rs) check "$_p.rmmod" timeout 200 rmmod mlx5_rs ;;
	esac
	dmesg | tail -n +$((_m + 1)) | grep -a -E 'mlx5|ib_kclient|infiniband' | grep -a -v -E 'KTAP|# |\] +ok [0-9]' | tail -n 20
	check "$_p.no-kernel-warning" sh -c "! dmesg | tail -n +$((_m + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"
	# Printed, not asserted: upstream's unload after the reset counted one (a run of
	# 2026-12-05), ours none.
	echo "dpf: $_p: emulator violations after the reset: $(($(violations) - _v1))"
}

for drv in $DPF_DRIVERS; do
	t=$(now_ms)
	viol0=$(violations)
	dmesg_mark
	load "$drv"
	emuctl '{"cmd":"clear_injections"}' >/dev/null
	timeout 900 python3 "$MLX5RS_REPO/tests/guest/dp-faults.py" "$D0" >/tmp/dp-faults.out 2>&1
	st=$?
	check "dp-faults.$drv.helper-not-hung" test "$st" != 124
	# The case list, each name under this driver (dpf.<driver>.<case>).
	sed "s/^dpf\./dpf.$drv./" "$MLX5RS_REPO/tests/guest/cases/dp-faults.cases" >"/tmp/dp-faults.$drv.cases"
	sed "s/^dpf\./dpf.$drv./" /tmp/dp-faults.out >"/tmp/dp-faults.$drv.out"
	case_lines "/tmp/dp-faults.$drv.out" "/tmp/dp-faults.$drv.cases" "$st"
	echo "---- emulator dp faults ----"
	emu_stat 'json.dumps(d["dp"]["faults"], sort_keys=True)'
	emuctl '{"cmd":"clear_injections"}' >/dev/null
	killed "dp-faults.$drv"
	malformed "dp-faults.$drv"
	kxrc "dp-faults.$drv"
	echo "---- $drv printed ----"
	# (Not the KUnit report of mlx5_rs's first load: its suites are named mlx5_rs_*.)
	dmesg_since | grep -a -E 'mlx5|infiniband' | grep -a -v -E 'KTAP|# |\] +ok [0-9]' | tail -n 30
	unload "$drv"
	fatal_drain "dp-faults.$drv"
	echo "dpf: $drv secs=$((($(now_ms) - t) / 1000))"
	emu_heal
done
check dp-faults.no-kernel-warning sh -c "! dmesg | tail -n +$((START + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"
check_kmemleak dp-faults.no-leaks
emuctl '{"cmd":"reset"}' >/dev/null
[ "$FAILED" = 0 ]
