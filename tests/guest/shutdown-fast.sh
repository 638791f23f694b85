# Guest script (manual, not a scenario): leaves mlx5_rs bound so that the power-off at
# the end of the run calls the PCI shutdown callback, which must take the fast-teardown
# path; the console then shows "fast teardown (shutdown): prepared, nic_interface
# DISABLED confirmed". Run: tests/vm/vm.sh --run tests/guest/shutdown-fast.sh
. "$MLX5RS_REPO/tests/guest/lib.sh"
check shutdown.insmod insmod "$KO"
check shutdown.bound test -e /sys/bus/pci/devices/"$(mlx_bdf)"/driver
