# The outside measurement of issue 9 section 6, for both drivers on the same emulated
# device and firmware pages: guest MemAvailable after drop_caches, compaction and 15 s
# idle, before and after CYCLES probe/remove cycles (after one warm-up cycle: first-use
# allocations such as DMA-API debug entries, stack depot pools, IRQ threads' stacks),
# and over CYCLES module loads whose probe fails at ENABLE_HCA. Figures, not asserts:
# a page more or less per cycle is allocator noise; page_owner (scenario 95) is the
# verdict. Run: tests/vm/vm.sh --run tests/guest/page-drift.sh --timeout 7200
# DRIFT_CYCLES and DRIFT_PAGES (environment, e.g. from a wrapper guest script) change
# the run; each cycle with 16,448 pages costs ~20-70 s under TCG.
. "$MLX5RS_REPO/tests/guest/lib.sh"
CYCLES=${DRIFT_CYCLES:-10}
FW=${DRIFT_PAGES:-16448}
bdf=$(mlx_bdf) || { echo "no 15b3 function"; exit 1; }
boot0=$(emu_stat 'd["pages"]["demand"]["boot"]')
emuctl "{\"cmd\":\"set_pages\",\"boot\":$boot0,\"init\":$((FW - boot0))}" >/dev/null

# unbind_bind N DRIVER-DIR: N probe/remove cycles; prints how many ended bound.
unbind_bind() {
	_i=0 _ok=0
	while [ $_i -lt "$1" ]; do
		echo "$bdf" >"$2/unbind"
		echo "$bdf" >"$2/bind" && [ -e "/sys/bus/pci/devices/$bdf/driver" ] && _ok=$((_ok + 1))
		_i=$((_i + 1))
	done
	echo $_ok
}
drift() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%d kB lost over %d cycles, %.1f kB (%.1f pages) per cycle", a - b, n, (a - b) / n, (a - b) / n / 4 }'; }

# mlx5_rs probe/remove.
insmod "$KO"
unbind_bind 1 /sys/bus/pci/drivers/mlx5_rs >/dev/null
m0=$(mem_available_settled)
ok=$(unbind_bind $CYCLES /sys/bus/pci/drivers/mlx5_rs)
m1=$(mem_available_settled)
rmmod mlx5_rs
echo "DRIFT: mlx5_rs probe/remove with $FW firmware pages: $(drift "$m0" "$m1" $CYCLES) ($ok bound)"

# mlx5_rs module loads, probe failing at ENABLE_HCA.
emuctl '{"cmd":"inject","opcode":"ENABLE_HCA","action":"status","status":3,"syndrome":305419896}' >/dev/null
insmod "$KO"
rmmod mlx5_rs
m0=$(mem_available_settled)
i=0
while [ $i -lt $CYCLES ]; do insmod "$KO"; rmmod mlx5_rs; i=$((i + 1)); done
m1=$(mem_available_settled)
emuctl '{"cmd":"clear_injections"}' >/dev/null
echo "DRIFT: mlx5_rs module load, probe failing at ENABLE_HCA: $(drift "$m0" "$m1" $CYCLES)"

# Upstream mlx5_core probe/remove, the same way; what page_owner sees it leave too.
po_mark up
timeout 300 modprobe mlx5_core
po_note_module mlx5_core up
up=/sys/bus/pci/drivers/mlx5_core
if [ -e /sys/bus/pci/devices/$bdf/driver ]; then
	unbind_bind 1 $up >/dev/null
	m0=$(mem_available_settled)
	ok=$(unbind_bind $CYCLES $up)
	m1=$(mem_available_settled)
	echo "DRIFT: upstream mlx5_core probe/remove with $FW firmware pages: $(drift "$m0" "$m1" $CYCLES) ($ok bound)"
	[ -e /sys/bus/pci/devices/$bdf/driver ] && echo "$bdf" >$up/unbind
else
	echo "DRIFT: upstream mlx5_core did not bind; no figure"
fi
modprobe -r mlx5_core
echo "DRIFT: page_owner: upstream mlx5_core left $(po_grown up | awk -F'\t' '$1 == "leak" { s += $2 } END { print s + 0 }') pages allocated through its code after modprobe -r"
