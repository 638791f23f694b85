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
echo "---- emulator commands (opcode: status counts) ----"
emu_stat 'json.dumps(d["commands"], sort_keys=True)'
echo "violations: $(violations)"
[ "$FAILED" = 0 ]
