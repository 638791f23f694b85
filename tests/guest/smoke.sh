# Guest script of `make run`: load mlx5_rs on the emulated ConnectX and show what it
# found; then unbind and unload. Each step is also a check.
. "$MLX5RS_REPO/tests/guest/lib.sh"

bdf=$(mlx_bdf) || { fail smoke.device-present "no 15b3 PCI function in the guest"; exit 1; }
pass smoke.device-present
dmesg_mark
check smoke.insmod insmod "$KO"
echo "---- what mlx5_rs found ----"
dmesg_since | grep -a mlx5_rs
lspci -nnk -s "$bdf"
echo "----------------------------"
check smoke.bound-to-mlx5_rs test "$(basename "$(readlink /sys/bus/pci/devices/$bdf/driver)")" = mlx5_rs
check smoke.fw-version-logged sh -c "dmesg | grep -a mlx5_rs | grep -q 'firmware [0-9]*\.[0-9]*\.[0-9]*'"
if [ -d /sys/module/ib_core ]; then
	# The InfiniBand provider: what rdma-core's tools show of it.
	echo "---- the RDMA core and rdma-core see ----"
	rdma dev
	rdma link
	ibv_devices
	ibv_devinfo -d mlx5_0
	echo "-----------------------------------------"
	check smoke.mlx5_0-registered test -d /sys/class/infiniband/mlx5_0
	check smoke.ibv_devinfo ibv_devinfo -d mlx5_0
fi
check smoke.unbind sh -c "echo $bdf > /sys/bus/pci/drivers/mlx5_rs/unbind"
check smoke.unbound test ! -e "/sys/bus/pci/devices/$bdf/driver"
check smoke.rmmod rmmod mlx5_rs
check_kmemleak smoke.no-leaks
[ "$FAILED" = 0 ]
