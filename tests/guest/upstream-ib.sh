# Guest script (exploratory, not a scenario): load the upstream C mlx5_core and
# mlx5_ib on the emulated ConnectX (IB port) and show how far the IB device gets:
# whether mlx5_0 registers, its port as the RDMA core reads it, and which firmware
# commands failed. Run: tests/vm/vm.sh --run tests/guest/upstream-ib.sh
# (add `--emu-arg --ib-virt` to read the port through the HCA vport commands).
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail upstream-ib.device-present "no 15b3 function"; exit 1; }
dmesg_mark
timeout 300 modprobe mlx5_core
check upstream-ib.core-probe test -e "/sys/bus/pci/devices/$bdf/driver"
timeout 300 modprobe mlx5_ib
sleep 2
echo "---- upstream mlx5_core / mlx5_ib printed ----"
dmesg_since | grep -a -E 'mlx5|infiniband|ib_' | head -n 60
echo "----------------------------------------------"
check upstream-ib.mlx5_0-registered test -d /sys/class/infiniband/mlx5_0
d=/sys/class/infiniband/mlx5_0
if [ -d "$d" ]; then
	for f in node_type node_guid sys_image_guid node_desc fw_ver hca_type \
		ports/1/state ports/1/phys_state ports/1/lid ports/1/sm_lid ports/1/sm_sl \
		ports/1/lid_mask_count ports/1/rate ports/1/cap_mask ports/1/link_layer \
		ports/1/gids/0 ports/1/pkeys/0 ports/1/counters/port_xmit_data; do
		printf '%s: %s\n' "$f" "$(cat "$d/$f" 2>&1)"
	done
fi
if [ -d "$d" ]; then
	# Port changes from the "subnet manager" (the emulator's ib_port request) reach
	# the RDMA core through PORT_CHANGE EQEs: the GID cache is refreshed on the GUID
	# event, the port goes DOWN and ACTIVE with the link.
	emuctl '{"cmd":"ib_port","port_guid":"0x0002c90300000042","lid":7}' >/dev/null
	check upstream-ib.gid-follows-guid-event wait_for $d/ports/1/gids/0 fe80:0000:0000:0000:0002:c903:0000:0042
	check upstream-ib.lid-follows wait_for $d/ports/1/lid 0x7
	emuctl '{"cmd":"link","up":false}' >/dev/null
	check upstream-ib.link-down wait_for $d/ports/1/state "1: DOWN"
	emuctl '{"cmd":"link","up":true}' >/dev/null
	check upstream-ib.link-up wait_for $d/ports/1/state "4: ACTIVE"
	emuctl '{"cmd":"ib_port","defaults":true}' >/dev/null
fi
echo "---- emulator commands (opcode: status counts) ----"
emu_stat 'json.dumps(d["commands"], sort_keys=True)'
# Unload: mlx5_ib destroys what it created, mlx5_core gives every page back.
check upstream-ib.rmmod-mlx5_ib modprobe -r mlx5_ib
[ -e /sys/bus/pci/devices/$bdf/driver ] && echo "$bdf" >/sys/bus/pci/devices/$bdf/driver/unbind
check upstream-ib.rmmod-mlx5_core modprobe -r mlx5_core
check upstream-ib.all-pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
echo "---- emulator commands after unload (opcode: status counts) ----"
emu_stat 'json.dumps({k: v for k, v in d["commands"].items() if "DESTROY" in k or "DEALLOC" in k or "TEARDOWN" in k or set(v) != {"OK"}}, sort_keys=True)'
echo "violations: $(violations)"
check upstream-ib.no-violations test "$(violations)" = 0
[ "$FAILED" = 0 ]
