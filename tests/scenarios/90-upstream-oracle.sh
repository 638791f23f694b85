# Scenario: the upstream C mlx5_core (the emulator's independent oracle) binds the
# emulated ConnectX and reads its init segment. How far its probe gets depends on how
# much of the firmware the emulator models; what it printed is kept in the log.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail upstream.device-present "no 15b3 function"; exit 1; }
dmesg_mark
# Bounded: upstream waits up to its own command timeouts when a command goes unanswered.
timeout 300 modprobe mlx5_core
echo "---- upstream mlx5_core printed ----"
dmesg_since | grep -a -E 'mlx5' | head -n 40
echo "------------------------------------"
check upstream.reads-fw-version sh -c "dmesg | grep -a mlx5_core | grep -q 'firmware version: [0-9]*\.[0-9]*\.[0-9]*'"
[ -e /sys/bus/pci/devices/$bdf/driver ] && echo "$bdf" >/sys/bus/pci/devices/$bdf/driver/unbind
check upstream.rmmod modprobe -r mlx5_core
[ "$FAILED" = 0 ]
