# Scenario: a firmware-initiated reset (sync reset) on the emulator (issue 24), on both
# drivers with one expectation (SYNC_DRIVERS, default "mlx5_rs upstream"; checks
# `sync-reset.<driver>.*`): a request from another host's tool (control `sync_reset`,
# as mlxfwreset): RESET_REQUEST, the driver's ack through MFRL, RESET_NOW, its fast
# teardown, the hot reset of the bus below the root port (vfio-user DEVICE_RESET), the
# firmware at its power-on state, the function loaded again and mlx5_0 back, devlink's
# remote reload counted (fw_activate); then a request the driver refuses (devlink param
# enable_remote_dev_reset false: NACK, nothing reset). Every expectation is upstream's
# own log line, upstream's devlink counters or the emulator's ledger: nothing here is
# our driver's. make check runs both (tests/guest/check-dp.sh, the boot's last
# scenario). Upstream 7.3.4 draws a lockdep report at its module removal after a sync
# reset (Documentation/testing.md): the scenario announces it in the kernel log and the
# judge excuses exactly that report (tests/vm/judge.sh KNOWN_*); lockdep is off for the
# rest of the boot after a report, so upstream goes last.
# Not here: `devlink dev reload action fw_activate` (this host initiating). Upstream
# 7.3.4 cannot complete it on this topology: with the hot-reset method its
# pci_reset_bus only tries the device lock that devlink holds for the reload (-EAGAIN,
# "mlx5_pci_reset_bus failed"), and a link toggle of the root port never reaches a
# vfio-user device (emu/README.md "Sync reset"); mlx5_rs does not offer the action.
SYNC_DRIVERS=${SYNC_DRIVERS:-mlx5_rs upstream}
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail sync-reset.device-present "no 15b3 function"; exit 1; }
d=/sys/class/infiniband/mlx5_0
ib_scenario_start

sync_stat() { emu_stat "d[\"sync_reset\"][\"$1\"]"; }
init_hcas() { emu_stat 'd["commands"]["INIT_HCA"]["OK"]'; }
wait_stat() { # CMD WANT: up to 120 s
	for _ in $(seq 240); do [ "$($1)" = "$2" ] && return 0; sleep 0.5; done
	echo "$1: $($1), wanted $2"
	return 1
}
# After a reset: the handshake went as upstream drives it, the firmware was activated
# by the PCI reset, and the function and mlx5_0 are back.
after_reset() { # NAME
	n=$1
	check "$T.$n.acked" logged 'PCI Sync FW Update Reset Ack. Device reset is expected'
	check "$T.$n.reset-now" logged 'Sync Reset now. Device is going to reset'
	check "$T.$n.no-failure" sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a -E 'Nack|Reset Timeout|sync reset timeout|Fast teardown failed|sync_pci_reset failed|reset_bus failed|did not complete|Sync reset failed|PCI reads still not working|load one failed|loading the function failed'"
	check "$T.$n.no-kernel-warning" sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a -E 'WARNING:|BUG:|Call Trace'"
	check "$T.$n.one-activation" test "$(sync_stat activations)" = $((act0 + 1))
	check "$T.$n.one-request-event" test "$(sync_stat request_events)" = $((req0 + 1))
	check "$T.$n.one-ack" test "$(sync_stat acks)" = $((ack0 + 1))
	check "$T.$n.one-reset-now" test "$(sync_stat reset_now_events)" = $((now0 + 1))
	check "$T.$n.no-event-lost" test "$(sync_stat events_lost)" = 0
	check "$T.$n.idle" test "$(sync_stat phase)" = idle
	check "$T.$n.function-enabled" test "$(emu_stat 'd["function"]["enabled"]')" = True
	check "$T.$n.rdma-link" sh -c "rdma link show mlx5_0/1 | grep -q 'state ACTIVE'"
	# A new process opens the new device; ibv_devinfo works.
	check_reopen "$T.$n"
	# As upstream's mlx5_fw_reset_complete_reload: devlink counts the remote reload.
	check "$T.$n.devlink-remote-fw-activate" test "$(remote_fw_activate)" = $((rfa0 + 1))
}
# devlink's remote reload count of fw_activate (`devlink dev show -s`), "?" if absent.
remote_fw_activate() {
	devlink dev show -s "pci/$bdf" | python3 -c '
import re, sys
t = sys.stdin.read()
m = re.search(r"remote_reload:.*?fw_activate:\s*unspecified (\d+)", t, re.S)
print(m.group(1) if m else "?")
if not m:
    print(t, file=sys.stderr)
'
}
marks() {
	act0=$(sync_stat activations) req0=$(sync_stat request_events)
	ack0=$(sync_stat acks) now0=$(sync_stat reset_now_events)
	rfa0=$(remote_fw_activate)
}
load() {
	case $drv in
	upstream)
		timeout 300 modprobe mlx5_core
		timeout 300 modprobe mlx5_ib ;;
	mlx5_rs) check "$T.insmod" insmod "$KO" ;;
	esac
	check "$T.load.mlx5_0-active" wait_for "$d/ports/1/state" "4: ACTIVE" 120
}
unload() {
	case $drv in
	upstream)
		# Upstream 7.3.4's removal after a sync reset draws a lockdep report
		# (mlx5_uninit_one vs the mlx5_fw_reset_events workqueue): announced in the
		# kernel log, the judge (tests/vm/judge.sh KNOWN_*) excuses exactly that one.
		echo "MLX5RS-KNOWN-REPORT: upstream-7.3.4-fw-reset-cleanup" >/dev/kmsg
		check "$T.rmmod-mlx5_ib" modprobe -r mlx5_ib
		check "$T.objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
		[ -e /sys/bus/pci/devices/$bdf/driver ] && echo "$bdf" >/sys/bus/pci/devices/$bdf/driver/unbind
		check "$T.rmmod-mlx5_core" modprobe -r mlx5_core ;;
	mlx5_rs)
		check "$T.rmmod" timeout 120 rmmod mlx5_rs
		check "$T.objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0 ;;
	esac
}

part() {
	T=sync-reset.$drv
	viol0=$(violations)
	dma0=$(emu_stat 'd["dma_errors"]')
	dmesg_mark
	M0=$MARK
	load
	# Upstream offers the remote-reset parameter only with MCAM `mfrl` (mlx5_fw_reset_init).
	check "$T.load.remote-reset-param" sh -c "devlink dev param show pci/$bdf name enable_remote_dev_reset | grep -q 'value true'"

	# 1. The request from another host's tool (control sync_reset, as mlxfwreset).
	marks
	init0=$(init_hcas)
	dmesg_mark
	# A process holding mlx5_0 sees IB_EVENT_DEVICE_FATAL (the reset's error state) and ends.
	holder_start "$T.remote"
	t0=$(now_ms)
	r=$(emuctl '{"cmd":"sync_reset"}')
	check "$T.remote.request" sh -c "echo '$r' | grep -q '\"ok\": *true'"
	check "$T.remote.activated" wait_stat "sync_stat activations" $((act0 + 1))
	check "$T.remote.loaded-again" wait_stat init_hcas $((init0 + 1))
	check "$T.remote.mlx5_0-back" wait_for "$d/ports/1/state" "4: ACTIVE" 120
	t2=$(now_ms)
	holder_sees_fatal "$T.remote"
	holder_exited "$T.remote"
	echo "$T.remote: request -> mlx5_0 port ACTIVE after $((t2 - t0)) ms"
	echo "$T.remote: emulator: violations $(violations) (boot's before: $viol0) $(emu_stat 'd["recent_violations"]'), UAR doorbells after the reset $(emu_stat 'd["uar_doorbells_after_stop"]'), UARs $(emu_stat 'd["uars"]'), CQs $(emu_stat 'd["objects"]["cq"]' 2>/dev/null)"
	after_reset remote

	# 2. Remote resets disabled (devlink param): upstream refuses, nothing is reset.
	marks
	nack0=$(sync_stat nacks)
	dmesg_mark
	check "$T.nack.param-off" devlink dev param set "pci/$bdf" name enable_remote_dev_reset value false cmode runtime
	r=$(emuctl '{"cmd":"sync_reset"}')
	check "$T.nack.request" sh -c "echo '$r' | grep -q '\"ok\": *true'"
	check "$T.nack.logged" wait_log 'PCI Sync FW Update Reset Nack Sent' 120
	check "$T.nack.counted" wait_stat "sync_stat nacks" $((nack0 + 1))
	check "$T.nack.state-nack" test "$(sync_stat reset_state)" = 4
	check "$T.nack.no-reset" test "$(sync_stat activations)" = "$act0"
	check "$T.nack.no-reset-now" test "$(sync_stat reset_now_events)" = "$now0"
	check "$T.nack.param-on" devlink dev param set "pci/$bdf" name enable_remote_dev_reset value true cmode runtime
	check "$T.nack.still-active" wait_for "$d/ports/1/state" "4: ACTIVE" 120

	check "$T.no-kernel-warning" sh -c "! dmesg | tail -n +$((M0 + 1)) | grep -a -E 'WARNING:|BUG:|Call Trace'"
	unload
	check "$T.all-pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	echo "$T: emulator: $(emu_stat 'd["uar_doorbells_after_stop"]') UAR doorbells after the reset, violations: $(emu_stat 'd["recent_violations"]')"
	check "$T.no-violations" test "$(violations)" = "$viol0"
	check "$T.dma-errors-0" test "$(emu_stat 'd["dma_errors"]')" = "$dma0"
	emu_heal
}

for drv in $SYNC_DRIVERS; do
	t=$(now_ms)
	part
	echo "sync-reset: $drv secs=$((($(now_ms) - t) / 1000))"
done
[ "$FAILED" = 0 ]
