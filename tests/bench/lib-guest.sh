# Helpers of the benchmark guest scripts (sourced after tests/guest/lib.sh).
# Every figure is one console line the host collects:  BENCH <key> <value>
# (values in the unit the key ends with: _us, _ms, _ns, _per_sec, or a count).

bench() { echo "BENCH $1 $2"; }
note() { echo "BENCH-NOTE $*"; }

now_ns() { date +%s%N; }
# Wall-clock milliseconds (3 decimals) between two now_ns values.
ms_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e6 }'; }

# kmark TAG: a line in the kernel log, on the same clock as the driver's lines.
kmark() { echo "mlx5bench: $1" >/dev/kmsg; }
# klog_after TAG: kernel log lines after the marker TAG (ring-buffer safe, unlike line counts).
klog_after() { dmesg | sed -n "/mlx5bench: $1\$/,\$p" | tail -n +2; }
# First line on stdin → its printk timestamp in microseconds ("[   21.276185] ..." → 21276185).
ts_us() { head -n1 | sed -n 's/^\[ *\([0-9]*\)\.\([0-9]\{6\}\)\].*/\1\2/p'; }

# bound_to BDF: name of the driver bound to BDF (empty if none).
bound_to() { [ -e "/sys/bus/pci/devices/$1/driver" ] && basename "$(readlink "/sys/bus/pci/devices/$1/driver")"; }

held() { emu_stat 'd["pages"]["held"]' 2>/dev/null || echo "?"; }

# reset_if_pages_left WHO: when WHO left pages with the firmware, the emulated function
# stays in a state where the next driver's ENABLE_HCA fails: say so, and give the next
# driver a clean function (emulator function-level reset) so its figures still count.
reset_if_pages_left() {
	h=$(held)
	[ "$h" = 0 ] && return 0
	note "$1 left $h pages with the firmware; resetting the emulated function before the next driver"
	emuctl '{"cmd":"reset"}' >/dev/null || note "emulator reset failed"
	note "after reset: pages held $(held), function enabled $(emu_stat 'd["function"]["enabled"]' 2>/dev/null)"
}
