# Guest step run last in `make check`: leaves mlx5_rs bound with a known number of
# firmware pages held, so that the guest's final power-off (reboot(2) → device_shutdown
# → the PCI `shutdown` callback, wired through ffi/core/shutdown.rs) must take the fast
# teardown path. The guest cannot see what happens after its own power-off: it prints
# the expectation as "MLX5RS-SHUTDOWN-EXPECT held=N", and the host checks the
# emulator's final statistics against it after QEMU exits (tests/vm/shutdown-verdict.sh,
# called by tests/vm/vm.sh).
#
# With several functions (vm.sh --functions N) every one is left bound, and function
# I > 0 gets its own line "MLX5RS-SHUTDOWN-EXPECT fn=I bdf=<address> held=N", checked
# against its own emulator's final statistics.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail shutdown.device-present "no 15b3 function"; exit 1; }
nfn=$(emu_count)
i=0
while [ $i -lt "$nfn" ]; do
	emu_heal_n $i
	emuctl_n $i '{"cmd":"set_pages","init":8192}' >/dev/null
	i=$((i + 1))
done
check shutdown.insmod insmod "$KO"
check shutdown.bound test -e /sys/bus/pci/devices/"$bdf"/driver
held=$(emu_stat 'd["pages"]["held"]')
check shutdown.pages-held test "$held" -gt 8192
check shutdown.no-teardown-yet test "$(emu_stat 'sum(d["function"]["teardowns"].values())')" = 0
# The host checks that the shutdown callback turns both off: on now.
check shutdown.msix-enabled-now test "$(emu_stat 'd["pci"]["msix_enabled"]')" = True
check shutdown.bus-master-now test "$(emu_stat 'd["pci"]["bus_master"]')" = True
echo "MLX5RS-SHUTDOWN-EXPECT held=$held"
i=1
while [ $i -lt "$nfn" ]; do
	b=$(mlx_bdf_n $i) || { fail shutdown.fn$i.device-present "no function $i"; i=$((i + 1)); continue; }
	check shutdown.fn$i.bound test -e /sys/bus/pci/devices/"$b"/driver
	h=$(emu_stat_n $i 'd["pages"]["held"]')
	check shutdown.fn$i.pages-held test "$h" -gt 8192
	check shutdown.fn$i.no-teardown-yet test "$(emu_stat_n $i 'sum(d["function"]["teardowns"].values())')" = 0
	echo "MLX5RS-SHUTDOWN-EXPECT fn=$i bdf=$b held=$h"
	i=$((i + 1))
done
[ "$FAILED" = 0 ]
