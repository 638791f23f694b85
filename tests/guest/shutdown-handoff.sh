# Guest step run last in `make check`: leaves mlx5_rs bound with a known number of
# firmware pages held, so that the guest's final power-off (reboot(2) → device_shutdown
# → the PCI `shutdown` callback, wired through ffi/shutdown.rs) must take the fast
# teardown path. The guest cannot see what happens after its own power-off: it prints
# the expectation as "MLX5RS-SHUTDOWN-EXPECT held=N", and the host checks the
# emulator's final statistics against it after QEMU exits (tests/vm/shutdown-verdict.sh,
# called by tests/vm/vm.sh).
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail shutdown.device-present "no 15b3 function"; exit 1; }
emu_heal
emuctl '{"cmd":"set_pages","init":8192}' >/dev/null
check shutdown.insmod insmod "$KO"
check shutdown.bound test -e /sys/bus/pci/devices/"$bdf"/driver
held=$(emu_stat 'd["pages"]["held"]')
check shutdown.pages-held test "$held" -gt 8192
check shutdown.no-teardown-yet test "$(emu_stat 'sum(d["function"]["teardowns"].values())')" = 0
echo "MLX5RS-SHUTDOWN-EXPECT held=$held"
[ "$FAILED" = 0 ]
