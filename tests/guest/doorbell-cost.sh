# Guest script: what one BAR0 access of the emulated ConnectX costs, seen from the guest
# and from the emulator (emu/README.md "Doorbells"). No driver is bound (the function's
# memory decoding is switched on through sysfs `enable`); tests/guest/bar-timing.c
# (built with the toolbox's gcc: guest_prog) times N 32- and 64-bit writes to a UAR page's
# BlueFlame body (BAR0 UAR page 16, offset 0x808: past the control segment's first 8
# bytes, so nothing is rung), N reads there and N init-segment reads; the emulator's
# `stats` `dp` `doorbells` counts the UAR writes it received and its own time on them.
# Run: tests/vm/vm.sh --run tests/guest/doorbell-cost.sh (function 0).
. "$MLX5RS_REPO/tests/guest/lib.sh"
N=${DOORBELL_COST_N:-20000}
bdf=$(mlx_bdf) || { fail doorbell.device-present "no 15b3 function"; exit 1; }
d=/sys/bus/pci/devices/$bdf
[ -e "$d/driver" ] && echo "$bdf" >"$d/driver/unbind"
echo 1 >"$d/enable" 2>/dev/null
BIN=$(guest_prog bar-timing)
check doorbell.build test -x "$BIN"
before=$(emu_stat 'd["dp"]["doorbells"]["uar_writes"]' 2>/dev/null)
ns_before=$(emu_stat 'd["dp"]["doorbells"]["mmio_ns"]' 2>/dev/null)
out=$($BIN "$d/resource0" $((16 * 4096 + 0x808)) "$N" 2>&1)
rc=$?
echo "$out" | sed 's/^/doorbell-cost: /'
check doorbell.ran test "$rc" = 0
after=$(emu_stat 'd["dp"]["doorbells"]["uar_writes"]' 2>/dev/null)
ns_after=$(emu_stat 'd["dp"]["doorbells"]["mmio_ns"]' 2>/dev/null)
echo "doorbell-cost: emulator uar_writes ${before:-?} -> ${after:-?}, mmio_ns ${ns_before:-?} -> ${ns_after:-?}"
emu_stat 'json.dumps(d["dp"]["doorbells"], sort_keys=True)' 2>/dev/null | sed 's/^/doorbell-cost: emulator doorbells: /'
echo 0 >"$d/enable" 2>/dev/null
check doorbell.no-violations test "$(violations)" = 0
[ "$FAILED" = 0 ]
