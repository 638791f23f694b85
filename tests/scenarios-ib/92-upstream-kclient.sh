# Scenario: a kernel consumer on upstream mlx5_core + mlx5_ib (the oracle for 72, the
# same walk on mlx5_rs). The test module ib_kclient (tests/modules/ib_kclient) is an
# ib_client: on mlx5_0 it allocates a PD with the core's DMA MR, two CQs, an RC QP
# that it walks RESET -> INIT -> RTR -> RTS -> ERR -> RESET on a loopback path with a
# query after each step, a UD QP to RTS, an SRQ and an AH, two forbidden transitions
# that must fail with -EINVAL, and frees it all; it keeps a PD, a CQ and an RC QP in
# RTS until the device leaves it. Every step is asserted (tests/guest/kclient.sh), the
# kept QP is in RTS on the device, QP events the device raises on it reach its
# event_handler (the expectation of 72), unloading mlx5_ib under the module runs the
# client's remove (which frees the kept set), a new mlx5_ib is walked again, and
# after rmmod of all three no object is left on the device, every page is returned,
# no firmware command failed and kmemleak finds nothing.
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/guest/kclient.sh"
bdf=$(mlx_bdf) || { fail upstream-kclient.device-present "no 15b3 function"; exit 1; }
d=/sys/class/infiniband/mlx5_0
START=$(dmesg | wc -l)

before=$(failed_cmds)
timeout 300 modprobe mlx5_core
check upstream-kclient.core-probe test -e "/sys/bus/pci/devices/$bdf/driver"
timeout 300 modprobe mlx5_ib
check upstream-kclient.mlx5_0-active wait_for "$d/ports/1/state" "4: ACTIVE"
objs0=$(emu_stat 'd["objects"]["total"]')

# Add 1: the walk on mlx5_0 as the module loads.
check upstream-kclient.insmod insmod "$KCLIENT_KO"
kclient_add_checks upstream-kclient 1
kclient_event_checks upstream-kclient 1
check upstream-kclient.kept-set-on-device test "$(emu_stat 'd["objects"]["total"]')" -gt "$objs0"

# The device goes away under the module: remove frees the kept set.
check upstream-kclient.rmmod-mlx5_ib-under-client modprobe -r mlx5_ib
kclient_steps upstream-kclient "$KCLIENT_DIR/results" 1 "$KCLIENT_REMOVE_STEPS"
check upstream-kclient.objects-destroyed test "$(emu_stat 'd["objects"]["total"]')" = 0

# A new device is added to the loaded client: the walk again.
timeout 300 modprobe mlx5_ib
check upstream-kclient.mlx5_0-back wait_for "$d/ports/1/state" "4: ACTIVE"
kclient_add_checks upstream-kclient 2
s=$(kclient_summary)
echo "ib_kclient summary: $s"
check upstream-kclient.summary sh -c "echo '$s' | grep -q '^adds 2 removes 1 pass [1-9][0-9]* fail 0 skip 0\$'"

# Unloading the client removes it from the device (the kernel log has the results);
# what the client kept is gone from the device, what mlx5_ib holds stays.
dmesg_mark
check upstream-kclient.rmmod-client rmmod ib_kclient
dmesg_since >/tmp/ib_kclient.remove2
kclient_steps upstream-kclient /tmp/ib_kclient.remove2 2 "$KCLIENT_REMOVE_STEPS"
check upstream-kclient.kept-set-destroyed test "$(emu_stat 'd["objects"]["total"]')" = "$objs0"
check upstream-kclient.rmmod-mlx5_ib modprobe -r mlx5_ib
check upstream-kclient.objects-destroyed-again test "$(emu_stat 'd["objects"]["total"]')" = 0
[ -e /sys/bus/pci/devices/$bdf/driver ] && echo "$bdf" >/sys/bus/pci/devices/$bdf/driver/unbind
check upstream-kclient.rmmod-mlx5_core modprobe -r mlx5_core
check upstream-kclient.all-pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check upstream-kclient.no-failed-commands test "$(failed_cmds)" = "$before"
check upstream-kclient.no-violations test "$(violations)" = 0
check upstream-kclient.no-kernel-warning sh -c "! dmesg | tail -n +$((START + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"
check_kmemleak upstream-kclient.no-leaks
emuctl '{"cmd":"reset"}' >/dev/null
[ "$FAILED" = 0 ]
