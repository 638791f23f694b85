# Scenario: probe, firmware version read from BAR0, lspci binding, unbind/rebind,
# rmmod and reload. (Issue "Test platform".)
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail probe.device-present "no 15b3 function"; exit 1; }
drv=/sys/bus/pci/drivers/mlx5_rs
dmesg_mark
check probe.insmod insmod "$KO"
check probe.bound test "$(basename "$(readlink /sys/bus/pci/devices/$bdf/driver)")" = mlx5_rs
fw=$(dmesg_since | grep -a -o 'firmware [0-9]*\.[0-9]*\.[0-9]*' | head -n1)
check probe.fw-version-logged test -n "$fw"
check probe.device-initialized test "$(emu_stat 'd["function"]["initialized"]')" = True
check probe.cmdif-rev-5 sh -c "dmesg | grep -a mlx5_rs | grep -q 'command interface revision 5'"
lspci -nnk -s "$bdf"
check probe.lspci-driver sh -c "lspci -nnk -s $bdf | grep -q 'Kernel driver in use: mlx5_rs'"
i=0; ok=1
while [ $i -lt 5 ]; do
	echo "$bdf" >$drv/unbind || ok=0
	[ -e /sys/bus/pci/devices/$bdf/driver ] && ok=0
	echo "$bdf" >$drv/bind || ok=0
	[ "$(basename "$(readlink /sys/bus/pci/devices/$bdf/driver)")" = mlx5_rs ] || ok=0
	i=$((i + 1))
done
check probe.unbind-bind-x5 test $ok = 1
check probe.rmmod rmmod mlx5_rs
check probe.unbound-after-rmmod test ! -e /sys/bus/pci/devices/$bdf/driver
check probe.reinsmod insmod "$KO"
check probe.rebound test -e /sys/bus/pci/devices/$bdf/driver
check probe.rermmod rmmod mlx5_rs
# The emulated device's own ledger: every page given came back, nothing broke the protocol.
check probe.emu-pages-all-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check probe.emu-no-violations test "$(emu_stat 'd["violations"]')" = 0
check probe.emu-hca-disabled test "$(emu_stat 'd["function"]["enabled"]')" = False
check_kmemleak probe.no-leaks
[ "$FAILED" = 0 ]
