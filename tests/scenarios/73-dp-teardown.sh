# Scenario: the provider goes away while traffic runs (issue 23, "Bad input and
# faults": rmmod and unbind while traffic runs, from user space and from a kernel
# consumer; a device fatal error mid-traffic from user space), first under upstream
# mlx5_core + mlx5_ib (the oracle: the expectations are what it does), then under
# mlx5_rs with the same cases, unchanged.
# Knob (environment; the default is what make check runs):
#  - DPT_DRIVERS: the drivers, in order (default "upstream mlx5_rs").
# Each case loads the driver, starts the traffic, waits until it flows, takes the
# provider away, then unloads whatever is left and holds the device to: every emulator
# object destroyed, every page returned, no violation.
#  rmmod, unbind: a user-space process and a kernel consumer run traffic at once; the
#    provider's module is unloaded (upstream `modprobe -r mlx5_ib`, ours `rmmod
#    mlx5_rs`) or its PCI function unbound, within 120 s.
#    <case>.user: tests/guest/dp-teardown.py (pyverbs: an RC pair in loopback
#      exchanging SENDs, each receive's bytes checked). The unregistration does not
#      wait for the process: ib_uverbs disassociates its context (both drivers have
#      disassociate_ucontext), the process gets IBV_EVENT_DEVICE_FATAL (uverbs'
#      ib_uverbs_free_hw_resources), its loop ends on it or on an error completion
#      before it (the QPs are destroyed under the traffic), and it closes what it
#      holds and exits within 30 s.
#    <case>.kernel: tests/modules/ib_kclient loaded with bench_bg=1 runs rounds of 32
#      SENDs between two RC QPs from a kernel thread (64 SENDs counted by the
#      emulator before the provider goes). The RDMA core calls the client's remove
#      before the device goes: the consumer stops after its round, every completion
#      counted (bench.run, bench.exact: sends = receives = rounds x 32, both CQs
#      empty), and frees its QPs, CQs and PD (bench.teardown, remove.*); then the
#      unregistration completes.
#  fatal: the user-space traffic, then the emulator raises a firmware fatal error
#    (health syndrome, reset required; emu/README.md "Health"): the process gets
#    IBV_EVENT_DEVICE_FATAL (upstream: mlx5_core's error state, mlx5_ib's
#    IB_EVENT_DEVICE_FATAL) and exits as above; the driver then unloads within 120 s
#    (the device is dead: what it holds is its reset's to reclaim, printed). (The
#    kernel consumer's drain after a fatal error is not here.)
# Then: no kernel splat, no kmemleak report. Each case's and driver's seconds are
# printed ("dpt: <driver> <case> secs=N", "dpt: <driver> secs=N").
DPT_DRIVERS=${DPT_DRIVERS:-upstream mlx5_rs}
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/guest/kclient.sh"
. "$MLX5RS_REPO/tests/guest/dp-traffic.sh"
bdf=$(mlx_bdf) || { fail dp-teardown.device-present "no 15b3 function"; exit 1; }
ib_scenario_start
P=dp-teardown
H=$MLX5RS_REPO/tests/guest/dp-teardown.py

# wait_grep FILE PATTERN SECS: PATTERN (grep -E) in FILE within SECS seconds.
wait_grep() {
	_w=0
	while ! grep -q -E "$2" "$1" 2>/dev/null && [ $_w -lt $(($3 * 10)) ]; do sleep 0.1; _w=$((_w + 1)); done
	grep -q -E "$2" "$1"
}

load() { # CASE
	case $drv in
	upstream)
		timeout 300 modprobe mlx5_core
		timeout 300 modprobe mlx5_ib ;;
	mlx5_rs) check "$1.insmod" insmod "$KO" ;;
	esac
	D0=$(ibdev)
	check "$1.device" test -n "$D0"
	check "$1.active" wait_for "/sys/class/infiniband/$D0/ports/1/state" "4: ACTIVE"
}

# take_away CASE HOW: the provider goes (rmmod or unbind), within 120 s.
take_away() {
	case $2 in
	rmmod)
		case $drv in
		upstream) check "$1.rmmod" timeout 120 modprobe -r mlx5_ib ;;
		mlx5_rs) check "$1.rmmod" timeout 120 rmmod mlx5_rs ;;
		esac ;;
	unbind) check "$1.unbind" timeout 120 sh -c "echo $bdf >/sys/bus/pci/devices/$bdf/driver/unbind" ;;
	esac
	check "$1.device-gone" test -z "$(ibdev)"
}

# unload_rest CASE [dead]: whatever of the driver is left goes; the device is clean
# (dead: after a fatal error, its objects and pages printed, not held).
unload_rest() {
	[ "$drv" = upstream ] && grep -q '^mlx5_ib ' /proc/modules && check "$1.rmmod-mlx5_ib" timeout 120 modprobe -r mlx5_ib
	[ -e "/sys/bus/pci/devices/$bdf/driver" ] && check "$1.unbind-rest" timeout 120 sh -c "echo $bdf >/sys/bus/pci/devices/$bdf/driver/unbind"
	case $drv in
	upstream) check "$1.unload" timeout 120 modprobe -r mlx5_core ;;
	mlx5_rs) grep -q '^mlx5_rs ' /proc/modules && check "$1.unload" timeout 120 rmmod mlx5_rs ;;
	esac
	if [ "${2:-}" = dead ]; then
		echo "dpt: $1: after the unload the dead device holds $(emu_stat 'd["objects"]["total"]') objects, $(emu_stat 'd["pages"]["held"]') pages"
	else
		check "$1.objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
		check "$1.pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	fi
	check "$1.no-violations" test "$(violations)" = "$viol0"
}

# user_start CASE: the user-space traffic (dp-teardown.py) in the background, $UPID,
# output /tmp/CASE.out; it flows (20 good round trips within 120 s).
user_start() {
	python3 "$H" "$D0" 600 >"/tmp/$1.out" 2>&1 &
	UPID=$!
	check "$1.traffic-flows" wait_grep "/tmp/$1.out" '^ready' 120
}

# user_end CASE: the process saw DEVICE_FATAL, its loop ended at it or at an error
# completion, it exited within 30 s.
user_end() {
	_o=/tmp/$1.out
	check "$1.process-sees-fatal" wait_grep "$_o" '^event 8$' 60
	_i=0
	while kill -0 $UPID 2>/dev/null && [ $_i -lt 300 ]; do sleep 0.1; _i=$((_i + 1)); done
	check "$1.process-exits" sh -c "! kill -0 $UPID 2>/dev/null"
	kill -KILL $UPID 2>/dev/null
	wait $UPID
	check "$1.loop-ended-by-error" grep -q -E '^ended reason=(device-fatal|wc-error) ' "$_o"
	echo "dpt: $1: $(grep -v '^progress' "$_o" | head -n 12 | tr '\n' '|')"
}

# kernel_start CASE: ib_kclient with bench_bg=1; its SENDs flow (64 within 60 s).
kernel_start() {
	_b=$(dp_counters 0)
	check "$1.kclient-insmod" insmod "$KCLIENT_KO" bench_bg=1
	kclient_steps "$1" "$KCLIENT_DIR/results" 1 "bench.setup"
	# Looked at every 0.2 s (the SENDs flow within a fraction of a second; a look is
	# one control request and a subshell).
	_i=0 _sent=0
	while [ $_i -lt 300 ]; do
		_sent=$(dp_delta "$_b" "$(dp_counters 0)" op0a)
		[ "$_sent" -ge 64 ] && break
		sleep 0.2; _i=$((_i + 1))
	done
	check "$1.traffic-flows" test "$_sent" -ge 64
}

# kernel_end CASE: the consumer's remove ran whole before the device went.
kernel_end() {
	_r=/tmp/$1.results
	cat "$KCLIENT_DIR/results" >"$_r"
	grep -a -E '^# (1\.bench-bg|remove)|^not ok' "$_r"
	kclient_steps "$1" "$_r" 1 "bench.run bench.exact bench.teardown"
	kclient_steps "$1" "$_r" 1 "$KCLIENT_REMOVE_STEPS"
	check "$1.no-failed-step" sh -c "! grep -a -q '^not ok' $_r"
	check "$1.kclient-rmmod" rmmod ib_kclient
}

# gone CASE HOW: rmmod or unbind under both kinds of traffic. (_gc, not _n: the
# helpers of kclient.sh set _n.)
gone() {
	_gc=$P.$drv.$1 _t=$(now_ms)
	load "$_gc"
	# (The process first: its Python start is slow under TCG, the consumer's thread
	# would flood the emulator meanwhile.)
	user_start "$_gc.user"
	kernel_start "$_gc.kernel"
	take_away "$_gc" "$2"
	user_end "$_gc.user"
	kernel_end "$_gc.kernel"
	unload_rest "$_gc"
	echo "dpt: $drv $1 secs=$((($(now_ms) - _t) / 1000))"
}

# fatal CASE: a firmware fatal error under the user-space traffic.
fatal() {
	_gc=$P.$drv.$1 _t=$(now_ms)
	load "$_gc"
	user_start "$_gc.user"
	emuctl '{"cmd":"health","syndrome":1,"rfr":true}' >/dev/null
	# (mlx5_core's and mlx5_rs's health poll: every 2 s by default.)
	user_end "$_gc.user"
	unload_rest "$_gc" dead
	echo "dpt: $drv $1 secs=$((($(now_ms) - _t) / 1000))"
	emu_heal
}

if [ ! -e "$KCLIENT_KO" ]; then
	fail "$P.kclient-module" "no $KCLIENT_KO (tests/vm/module.sh builds it)"
	exit 1
fi
for drv in $DPT_DRIVERS; do
	t=$(now_ms)
	viol0=$(violations)
	dmesg_mark
	gone rmmod rmmod
	gone unbind unbind
	fatal fatal
	echo "---- $drv printed ----"
	dmesg_since | grep -a -E 'mlx5|infiniband|ib_kclient' | grep -a -v -E 'KTAP|# |\] +ok [0-9]' | tail -n 30
	check "$P.$drv.no-kernel-warning" sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"
	echo "dpt: $drv secs=$((($(now_ms) - t) / 1000))"
	emu_heal
done
check_kmemleak $P.no-leaks
emuctl '{"cmd":"reset"}' >/dev/null
[ "$FAILED" = 0 ]
