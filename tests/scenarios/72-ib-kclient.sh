# Scenario: a kernel consumer on mlx5_rs, the same walk as on upstream mlx5_ib
# (92-upstream-kclient.sh, the oracle). The test module ib_kclient
# (tests/modules/ib_kclient) is an ib_client: on our IB device it allocates a PD with
# the core's DMA MR, two CQs, an RC QP that it walks RESET -> INIT -> RTR -> RTS ->
# ERR -> RESET on a loopback path with a query after each step, a UD QP to RTS, an
# SRQ and an AH, two forbidden transitions that must fail with -EINVAL, and frees it
# all; it keeps a PD, a CQ and an RC QP in RTS until the device leaves it. Every step
# is asserted (tests/guest/kclient.sh, the same list as upstream), the kept QP is in
# RTS on the device, QP events the device raises on it reach its event_handler as
# upstream maps them, unbinding our function under the module runs the client's remove
# (which frees the kept set before the provider unregisters), a rebound device is
# walked again, and after rmmod of both no object is left on the device, every page
# is returned, no firmware command failed and kmemleak finds nothing.
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/guest/kclient.sh"
bdf=$(mlx_bdf) || { fail ib-kclient.device-present "no 15b3 function"; exit 1; }
drv=/sys/bus/pci/drivers/mlx5_rs
emu_heal
START=$(dmesg | wc -l)

# ibdev_active: our function's IB device exists and port 1 is ACTIVE (up to 60 s).
ibdev_active() {
	for _ in $(seq 300); do
		for _d in /sys/bus/pci/devices/$bdf/infiniband/*; do
			[ "$(cat "$_d/ports/1/state" 2>/dev/null)" = "4: ACTIVE" ] && return 0
		done
		sleep 0.2
	done
	echo "no IB device with port 1 ACTIVE on $bdf"
	return 1
}

before=$(failed_cmds)
check ib-kclient.insmod insmod "$KO"
check ib-kclient.device-active ibdev_active
objs0=$(emu_stat 'd["objects"]["total"]')

# Add 1: the walk on our device as the module loads.
check ib-kclient.insmod-client insmod "$KCLIENT_KO"
kclient_add_checks ib-kclient 1
kclient_event_checks ib-kclient 1
check ib-kclient.kept-set-on-device test "$(emu_stat 'd["objects"]["total"]')" -gt "$objs0"

# The device goes away under the module: remove frees the kept set.
check ib-kclient.unbind-under-client sh -c "echo $bdf >$drv/unbind"
kclient_steps ib-kclient "$KCLIENT_DIR/results" 1 "$KCLIENT_REMOVE_STEPS"
check ib-kclient.objects-destroyed test "$(emu_stat 'd["objects"]["total"]')" = 0

# A new device is added to the loaded client: the walk again.
check ib-kclient.rebind sh -c "echo $bdf >$drv/bind"
check ib-kclient.device-back ibdev_active
kclient_add_checks ib-kclient 2
s=$(kclient_summary)
echo "ib_kclient summary: $s"
check ib-kclient.summary sh -c "echo '$s' | grep -q '^adds 2 removes 1 pass [1-9][0-9]* fail 0 skip 0\$'"

# Unloading the client removes it from the device (the kernel log has the results);
# what the client kept is gone from the device, what the provider holds stays.
dmesg_mark
check ib-kclient.rmmod-client rmmod ib_kclient
dmesg_since >/tmp/ib_kclient.remove2
kclient_steps ib-kclient /tmp/ib_kclient.remove2 2 "$KCLIENT_REMOVE_STEPS"
check ib-kclient.kept-set-destroyed test "$(emu_stat 'd["objects"]["total"]')" = "$objs0"
check ib-kclient.rmmod rmmod mlx5_rs
check ib-kclient.objects-destroyed-again test "$(emu_stat 'd["objects"]["total"]')" = 0
check ib-kclient.all-pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check ib-kclient.no-failed-commands test "$(failed_cmds)" = "$before"
check ib-kclient.no-violations test "$(violations)" = 0
check ib-kclient.no-kernel-warning sh -c "! dmesg | tail -n +$((START + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"
check_kmemleak ib-kclient.no-leaks
[ "$FAILED" = 0 ]
