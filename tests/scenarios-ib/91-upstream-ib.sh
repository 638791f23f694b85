# Scenario: upstream mlx5_core + mlx5_ib (the emulator's independent oracle for its
# InfiniBand side) on the emulated IB port, in both ways upstream reads a port: through
# MAD_IFC to the device's SMA (cap ib_virt 0, the default) and through the HCA vport
# commands (ib_virt 1). In each mode: mlx5_0 registers with no error line and no failed
# firmware command, rdma-core's tools and sysfs show the port as the emulated subnet
# manager configured it, port changes reach the RDMA core, and unload returns every
# page and destroys every object. The exploratory variant with more output is
# tests/guest/upstream-ib.sh. Before upstream, mlx5_rs on the same port gives the
# `ibv_devinfo -v` output that upstream's is compared with.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail upstream-ib.device-present "no 15b3 function"; exit 1; }
d=/sys/class/infiniband/mlx5_0

# Failed commands per opcode, as "OPCODE:STATUS=N" words: earlier scenarios inject
# failures on purpose, so a mode compares its counts with the ones before its load.
failed_cmds() {
	emu_stat '" ".join(sorted("%s:%s=%d" % (o, s, n) for o, v in d["commands"].items() for s, n in v.items() if s != "OK"))'
}

run_mode() { # NAME: one load, checks and unload of upstream mlx5_core + mlx5_ib
	m=$1
	before=$(failed_cmds)
	dmesg_mark
	timeout 300 modprobe mlx5_core
	check "upstream-ib.$m.core-probe" test -e "/sys/bus/pci/devices/$bdf/driver"
	timeout 300 modprobe mlx5_ib
	check "upstream-ib.$m.mlx5_0-registered" wait_for "$d/ports/1/state" "4: ACTIVE"
	check "upstream-ib.$m.no-error-lines" sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a -E 'mlx5|infiniband' | grep -a -i -E 'error|fail|timeout|WARNING'"
	check "upstream-ib.$m.no-failed-commands" test "$(failed_cmds)" = "$before"
	check "upstream-ib.$m.node-type" test "$(cat $d/node_type)" = "1: CA"
	check "upstream-ib.$m.link-layer" test "$(cat $d/ports/1/link_layer)" = InfiniBand
	check "upstream-ib.$m.pkey0" test "$(cat $d/ports/1/pkeys/0)" = 0xffff
	lid=$(printf '0x%x' "$(ib_port_field lid)")
	check "upstream-ib.$m.lid" test "$(cat $d/ports/1/lid)" = "$lid"
	smlid=$(printf '0x%x' "$(ib_port_field sm_lid)")
	check "upstream-ib.$m.sm-lid" test "$(cat $d/ports/1/sm_lid)" = "$smlid"
	check "upstream-ib.$m.ibv_devices" sh -c "ibv_devices | grep -q 'mlx5_0'"
	check_ibv_devinfo "upstream-ib.$m" mlx5_0
	check_open_no_task_leak "upstream-ib.$m" mlx5_0
	check "upstream-ib.$m.rdma-link" sh -c "rdma link show mlx5_0/1 | grep -q 'state ACTIVE'"
	check "upstream-ib.$m.rdma-dev" sh -c "rdma dev show mlx5_0 | grep -q 'node_type ca'"
	# Port changes from the "subnet manager" (the emulator's ib_port request) reach the
	# RDMA core through PORT_CHANGE EQEs.
	emuctl '{"cmd":"ib_port","lid":7}' >/dev/null
	check "upstream-ib.$m.lid-follows" wait_for $d/ports/1/lid 0x7
	emuctl '{"cmd":"link","up":false}' >/dev/null
	check "upstream-ib.$m.link-down" wait_for $d/ports/1/state "1: DOWN"
	emuctl '{"cmd":"link","up":true}' >/dev/null
	check "upstream-ib.$m.link-up" wait_for $d/ports/1/state "4: ACTIVE"
	check "upstream-ib.$m.rmmod-mlx5_ib" modprobe -r mlx5_ib
	check "upstream-ib.$m.objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
	[ -e /sys/bus/pci/devices/$bdf/driver ] && echo "$bdf" >/sys/bus/pci/devices/$bdf/driver/unbind
	check "upstream-ib.$m.rmmod-mlx5_core" modprobe -r mlx5_core
	check "upstream-ib.$m.all-pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	check "upstream-ib.$m.no-violations" test "$(violations)" = 0
	emuctl '{"cmd":"ib_port","defaults":true}' >/dev/null
}

# Ours first, on the same port: its `ibv_devinfo -v` is compared with upstream's
# field by field after the MAD-mode load (tests/guest/devinfo_diff.py); every
# difference that stays is listed with its reason in tests/guest/ibv_devinfo.differences.
check upstream-ib.ours-insmod insmod "$KO"
check upstream-ib.ours-registered wait_for "$d/ports/1/state" "4: ACTIVE"
ibv_devinfo -v -d mlx5_0 >/tmp/ibv_devinfo.mlx5_rs 2>&1
check upstream-ib.ours-rmmod rmmod mlx5_rs
run_mode mad
check upstream-ib.devinfo-same-as-ours python3 "$REPO/tests/guest/devinfo_diff.py" \
	/tmp/ibv_devinfo.mlx5_rs /tmp/ibv_devinfo.upstream-ib.mad "$REPO/tests/guest/ibv_devinfo.differences"
python3 "$REPO/tests/guest/devinfo_diff.py" /tmp/ibv_devinfo.mlx5_rs /tmp/ibv_devinfo.upstream-ib.mad \
	"$REPO/tests/guest/ibv_devinfo.differences" | grep -v '^stale' | head -n 60
emuctl '{"cmd":"ib_port","ib_virt":true}' >/dev/null
run_mode hca
emuctl '{"cmd":"reset"}' >/dev/null
[ "$FAILED" = 0 ]
