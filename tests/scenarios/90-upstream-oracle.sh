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
theirs=$(dmesg | grep -a mlx5_core | grep -a -o 'firmware version: [0-9]*\.[0-9]*\.[0-9]*' | head -n1 | sed 's/.*: //')
ours=$(dmesg | grep -a mlx5_rs | grep -a -o 'firmware [0-9]*\.[0-9]*\.[0-9]*' | head -n1 | sed 's/.* //')
check upstream.reads-fw-version test -n "$theirs"
# Our driver and upstream read the same BAR0 registers: they must agree.
check upstream.fw-version-agrees-with-mlx5_rs test "$theirs" = "$ours"
check upstream.probe-completed test -e "/sys/bus/pci/devices/$bdf/driver"
# Its load path ran to the end: command EQ, async EQ, pages EQ created, no error logged.
check upstream.eqs-created test "$(emu_stat 'len(d["eqs"])')" -ge 3
check upstream.no-error-lines sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a mlx5_core | grep -a -i -E 'error|fail|timeout'"
# NOPs through upstream's exported mlx5_cmd_exec from the test module the benchmark
# uses (tests/modules/mlx5_nop_bench, built by tests/vm/module.sh): every NOP of a
# 1- and a 4-caller storm completes, none fails.
nb=/sys/kernel/debug/mlx5_nop_bench/nop_storm
check upstream.nop-bench-loads insmod "$MLX5RS_REPO/tests/modules/mlx5_nop_bench/mlx5_nop_bench.ko"
for c in 1 4; do
	r=$( (echo "200 $c" >$nb && cat $nb) 2>&1)
	echo "mlx5_nop_bench '200 $c': $r"
	case "$r" in "nops 200 callers $c errors 0 "*) pass "upstream.nop-storm-$c-callers" ;;
	*) fail "upstream.nop-storm-$c-callers" "$r" ;; esac
done
rmmod mlx5_nop_bench
held=$(emu_stat 'd["pages"]["held"]')
echo "upstream: device holds $held pages before unload"
check upstream.holds-pages test "$held" -gt 0
[ -e /sys/bus/pci/devices/$bdf/driver ] && echo "$bdf" >/sys/bus/pci/devices/$bdf/driver/unbind
check upstream.rmmod modprobe -r mlx5_core
held=$(emu_stat 'd["pages"]["held"]')
echo "upstream: device holds $held pages after unload"
check upstream.all-pages-returned test "$held" = 0
check upstream.no-violations test "$(emu_stat 'd["violations"]')" = 0
[ "$FAILED" = 0 ]
