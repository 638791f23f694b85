# Scenario: devlink on both drivers (issue 24, the devlink part), upstream mlx5_core +
# mlx5_ib first (the oracle), then mlx5_rs, on the same emulated function:
#  1. before any error: `devlink dev info`, `devlink dev param show`, `devlink health
#     show`, the `fw` reporter's diagnose;
#  2. a non-fatal health syndrome (0x10, High temperature, no reset-required; the
#     emulator's health counter stops with it, as 61's): the `fw` reporter counts two
#     errors, as upstream's poll_health reports them (the new syndrome, then the miss
#     count reached), then `devlink health show`, `fw` diagnose and dump, and
#     `fw_fatal` diagnose;
#  3. the driverinit parameters io_eq_size, event_eq_size and enable_rdma applied by
#     `devlink dev reload` (driverinit() below);
#  4. tests/guest/devlink_diff.py compares the answers field by field: every difference
#     must be a row of the table in Documentation/devlink-vs-upstream.md, with the
#     values measured here, and every row a difference (the table cannot go stale).
# Then mlx5_rs alone: the `fw` dump holds the syndrome (upstream's dump layout; upstream
# has none on this device, see the table), a fatal syndrome with `fw_fatal`'s
# auto-recover off is reported to it with its dump and the function stays in error; the module unloads while devlink requests run and a `devlink monitor`
# listens; probe failures (ENABLE_HCA, the first command after the instance is
# allocated, and QUERY_ADAPTER, the last of the bring-up) leave no devlink instance;
# no kernel warning, nothing left to kmemleak. Each driver's part prints its seconds.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail devlink.device-present "no 15b3 function"; exit 1; }
ib_scenario_start
T=devlink
H=pci/$bdf
command -v devlink >/dev/null || { fail devlink.tool "no devlink (iproute2) in the guest"; exit 1; }

# ask DIR NAME ARGS...: one devlink request, its JSON in DIR/NAME.json or its error in
# DIR/NAME.err.
ask() {
	_d=$1 _n=$2
	shift 2
	if devlink -j "$@" >"$_d/$_n.json" 2>"$_d/$_n.err"; then rm -f "$_d/$_n.err"; else rm -f "$_d/$_n.json"; fi
}
# errors REPORTER: the reporter's error count (empty without the reporter). No python
# in the loops: a TCG guest starts it in seconds.
errors() {
	devlink -j health show "$H" reporter "$1" 2>/dev/null | grep -o '"error":[0-9]*' | cut -d: -f2
}
wait_errors() { # REPORTER N: up to 30 s
	for _ in $(seq 60); do [ "$(errors "$1")" = "$2" ] && return 0; sleep 0.5; done
	echo "$1: error count $(errors "$1"), wanted $2"
	return 1
}
instance() { devlink dev show 2>/dev/null | grep -q "^$H\$"; }

part() { # DRIVER
	drv=$1
	# Not `out`: check() sets that.
	res=/tmp/devlink.$drv
	rm -rf "$res" && mkdir -p "$res"
	t0=$(now_ms)
	emu_heal
	case $drv in
	upstream)
		timeout 300 modprobe mlx5_core
		timeout 300 modprobe mlx5_ib ;;
	mlx5_rs) check "$T.$drv.insmod" insmod "$KO" ;;
	esac
	check "$T.$drv.instance" instance
	ask "$res" info dev info "$H"
	ask "$res" param dev param show "$H"
	ask "$res" health-before health show "$H"
	ask "$res" diagnose-fw-before health diagnose "$H" reporter fw
	dmesg_mark
	emuctl '{"cmd":"health","syndrome":16,"rfr":false,"severity":4}' >/dev/null
	check "$T.$drv.fw-reported-twice" wait_errors fw 2
	ask "$res" health-after health show "$H"
	ask "$res" diagnose-fw health diagnose "$H" reporter fw
	ask "$res" dump-fw health dump show "$H" reporter fw
	ask "$res" diagnose-fw_fatal health diagnose "$H" reporter fw_fatal
	check "$T.$drv.not-fatal" sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a -q 'Fatal error'"
	emuctl '{"cmd":"clear_health"}' >/dev/null
	echo "$T: $drv asked at $((($(now_ms) - t0) / 1000)) s"
	for f in "$res"/*; do echo "-- $drv $(basename "$f"): $(head -c 600 "$f")"; done
	driverinit "$drv"
}

# EQ log sizes on the emulator: comp_logs (the completion EQs': no event mask), one per
# line, sorted and unique; event_log (the largest of the others: the async EQ's).
comp_logs() { emu_stat '"\n".join(sorted({str(e["log_size"]) for e in d["eqs"] if all(int(m, 16) == 0 for m in e["mask"])}))'; }
event_log() { emu_stat 'max(e["log_size"] for e in d["eqs"] if any(int(m, 16) for m in e["mask"]))'; }
reload() { timeout 300 devlink dev reload "$H" action driver_reinit; }
set_param() { devlink dev param set "$H" name "$1" value "$2" cmode driverinit; }
# The ring of an EQ of N entries is N plus the 128 spare entries, rounded up to a
# power of two (upstream's create_map_eq): 256 -> 2^9, 1024 -> 2^11, 4096 -> 2^13.
has_ib() { ibdev >/dev/null; }
no_ib() { ! ibdev >/dev/null; }
ib_active() { d=$(ibdev) && wait_for "/sys/class/infiniband/$d/ports/1/state" "4: ACTIVE" 120; }

# driverinit DRIVER: the driverinit parameters (upstream's mlx5_devlink_params and
# enable_rdma) take effect at `devlink dev reload`: smaller EQs (io_eq_size 256,
# event_eq_size 1024), then no IB device (enable_rdma false), then the defaults back
# with the IB device; an EQ depth out of 64..4096 is refused.
driverinit() {
	p=$T.$1.driverinit
	check "$p.io-default" sh -c "devlink dev param show $H name io_eq_size | grep -q 'driverinit value 1024'"
	check "$p.event-default" sh -c "devlink dev param show $H name event_eq_size | grep -q 'driverinit value 4096'"
	check "$p.comp-eqs-default" test "$(comp_logs)" = 11
	check "$p.async-eq-default" test "$(event_log)" = 13
	check "$p.refuses-63" sh -c "! devlink dev param set $H name io_eq_size value 63 cmode driverinit"
	check "$p.refuses-4097" sh -c "! devlink dev param set $H name event_eq_size value 4097 cmode driverinit"
	check "$p.set-io" set_param io_eq_size 256
	check "$p.set-event" set_param event_eq_size 1024
	check "$p.not-before-reload" test "$(comp_logs)" = 11
	check "$p.reload-small" reload
	check "$p.small-ib-active" ib_active
	check "$p.comp-eqs-small" test "$(comp_logs)" = 9
	check "$p.async-eq-small" test "$(event_log)" = 11
	check "$p.set-no-rdma" set_param enable_rdma false
	check "$p.reload-no-rdma" reload
	check "$p.no-ib-device" no_ib
	check "$p.no-rdma-shown" sh -c "devlink dev param show $H name enable_rdma | grep -q 'driverinit value false'"
	check "$p.set-rdma" set_param enable_rdma true
	check "$p.set-io-back" set_param io_eq_size 1024
	check "$p.set-event-back" set_param event_eq_size 4096
	check "$p.reload-defaults" reload
	check "$p.ib-back" has_ib
	check "$p.ib-active" ib_active
	check "$p.comp-eqs-back" test "$(comp_logs)" = 11
	check "$p.async-eq-back" test "$(event_log)" = 13
}

unload_upstream() {
	check "$T.upstream.rmmod-mlx5_ib" modprobe -r mlx5_ib
	[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
	check "$T.upstream.rmmod-mlx5_core" modprobe -r mlx5_core
	check "$T.upstream.no-instance" sh -c "! devlink dev show 2>/dev/null | grep -q '^$H\$'"
}

part upstream
unload_upstream
echo "$T: upstream part secs=$((($(now_ms) - t0) / 1000))"

part mlx5_rs
t_rs=$t0
# The `fw` dump (upstream's layout: the report's context, then the health buffer).
# has FILE ERE: devlink's compact JSON holds ERE.
has() { grep -q -E "$2" "$1"; }
dump=/tmp/devlink.mlx5_rs/dump-fw.json
check "$T.mlx5_rs.dump-fw.context" has $dump '^\{"syndrome":16,"fw_miss_counter":[0-9]+,"health buffer":\{'
check "$T.mlx5_rs.dump-fw.assert-var" has $dump '"assert_var":\[[0-9]+(,[0-9]+){5}\]'
check "$T.mlx5_rs.dump-fw.buffer" has $dump '"rfr":0,"severity":4,"irisc_index":[0-9]+,"synd":16,"ext_synd":0,'

echo "$T: mlx5_rs dump checked at $((($(now_ms) - t_rs) / 1000)) s"
# Fatal: `fw_fatal` counts the error and its stored dump holds the syndrome. Its
# auto-recover is turned off first: this part reads the dump of the dead function, as
# 60 and 61 test the dead state (the recovery is 97's).
no_auto_recover "$T.mlx5_rs.no-auto-recover" "$bdf"
check "$T.mlx5_rs.auto-recover-shown-off" sh -c "devlink health show $H reporter fw_fatal | grep -q 'auto_recover false'"
dmesg_mark
emuctl '{"cmd":"health","syndrome":7,"ext_syndrome":4660,"rfr":true,"severity":2}' >/dev/null
check "$T.mlx5_rs.fw_fatal-reported" wait_errors fw_fatal 1
check "$T.mlx5_rs.dead" sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'Fatal error 5 detected'"
devlink -j health dump show "$H" reporter fw_fatal >/tmp/devlink.fatal.json 2>&1
head -c 600 /tmp/devlink.fatal.json; echo
check "$T.mlx5_rs.dump-fw_fatal.context" has /tmp/devlink.fatal.json '^\{"syndrome":7,"fw_miss_counter":[0-9]+,"health buffer":\{'
check "$T.mlx5_rs.dump-fw_fatal.buffer" has /tmp/devlink.fatal.json '"rfr":1,"severity":2,"irisc_index":[0-9]+,"synd":7,"ext_synd":4660,'
check "$T.mlx5_rs.stays-in-error" sh -c "devlink health show $H reporter fw_fatal | grep -q 'state error'"
check "$T.mlx5_rs.not-recovered" sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'automatic recovery off'"

# The unload while devlink requests run and a monitor listens.
devlink monitor >/tmp/devlink.monitor 2>&1 &
mon=$!
(while :; do devlink dev info "$H"; devlink health diagnose "$H" reporter fw; devlink health dump show "$H" reporter fw_fatal; done) >/dev/null 2>&1 &
busy=$!
sleep 1
check "$T.mlx5_rs.rmmod-while-busy" rmmod mlx5_rs
kill $busy $mon 2>/dev/null
wait $busy $mon 2>/dev/null
check "$T.mlx5_rs.no-instance" sh -c "! devlink dev show 2>/dev/null | grep -q '^$H\$'"
emu_heal
echo "$T: mlx5_rs part secs=$((($(now_ms) - t_rs) / 1000))"

# Probe failures after the instance is allocated: none left behind.
for op in ENABLE_HCA QUERY_ADAPTER; do
	emuctl '{"cmd":"clear_injections"}' >/dev/null
	emuctl "{\"cmd\":\"inject\",\"opcode\":\"$op\",\"action\":\"status\",\"status\":3,\"syndrome\":1,\"count\":1}" >/dev/null
	insmod "$KO"
	check "$T.probe-fails-$op.not-bound" test ! -e "/sys/bus/pci/devices/$bdf/driver"
	check "$T.probe-fails-$op.no-instance" sh -c "! devlink dev show 2>/dev/null | grep -q '^$H\$'"
	check "$T.probe-fails-$op.rmmod" rmmod mlx5_rs
done
emu_heal

# Field by field against upstream (the rows the table would need, on a failure).
TABLE=$REPO/Documentation/devlink-vs-upstream.md
python3 "$REPO/tests/guest/devlink_diff.py" /tmp/devlink.upstream /tmp/devlink.mlx5_rs "$TABLE" >/tmp/devlink.diff 2>&1
rc=$?
cat /tmp/devlink.diff
check "$T.same-as-upstream-but-the-table" test $rc = 0
[ $rc = 0 ] || python3 "$REPO/tests/guest/devlink_diff.py" /tmp/devlink.upstream /tmp/devlink.mlx5_rs "$TABLE" --rows

check "$T.no-kernel-warning" sh -c "! dmesg | tail -n +$((START + 1)) | grep -a -E 'cut here|BUG:|Call Trace'"
check "$T.no-violations" test "$(violations)" = 0
check_kmemleak "$T.no-leaks"
[ "$FAILED" = 0 ]
