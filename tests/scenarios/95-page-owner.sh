# Scenario: memory kmemleak cannot see. Firmware pages, EQ rings and mailboxes come
# from the page allocator, which kmemleak does not track; page_owner does (see
# check_page_owner in tests/guest/lib.sh). After each of these, no page allocated with
# mlx5_rs code on its stack is still allocated once the module is gone:
#   - a load and unload holding 16,448 firmware pages (and page_owner sees them held
#     while bound: the positive control that the tool sees firmware pages at all),
#   - probe/remove cycles (unbind/bind; page_owner sees a leak of one cycle, so a few
#     cycles with the default demand keep this short under TCG),
#   - module loads whose probe fails at ENABLE_HCA.
# The outside measurement (MemAvailable drift over many cycles, both drivers) is
# tests/guest/page-drift.sh, too slow for every run.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail po.device-present "no 15b3 function"; exit 1; }
drv=/sys/bus/pci/drivers/mlx5_rs
FW=16448
[ -r "$PO_STACKS" ] || { fail po.page-owner-available "no $PO_STACKS (page_owner=on?)"; exit 1; }
boot0=$(emu_stat 'd["pages"]["demand"]["boot"]')
init0=$(emu_stat 'd["pages"]["demand"]["init"]')
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

# 1. One load and unload with the pages.
po_mark
check po.load.insmod insmod "$KO"
check po.load.fw-pages-held test "$(emu_stat 'd["pages"]["held"]')" = $FW
seen=$(po_module_pages mlx5_rs)
echo "page_owner: $seen pages held by allocation stacks through mlx5_rs, bound with $FW firmware pages"
po_summary | awk -F'\t' 'index($2, "[mlx5_rs]") && $1 >= 16 { print "  " $1 " pages: " $2 }' | sort -t: -k1 -n -r | head -n 8 | cut -c1-400
check po.load.sees-fw-pages test "$seen" -ge $FW
check po.load.rmmod rmmod mlx5_rs
check_page_owner po.load.no-pages-left

# 2. Probe/remove cycles.
# (check_page_owner opened the next window.)
emuctl "{\"cmd\":\"set_pages\",\"boot\":$boot0,\"init\":$init0}" >/dev/null
check po.loop.insmod insmod "$KO"
check po.loop.all-bound test "$(unbind_bind 5 $drv)" = 5
check po.loop.rmmod rmmod mlx5_rs
check po.loop.fw-pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check_page_owner po.loop.no-pages-left

# 3. Loads whose probe fails at ENABLE_HCA (the module stays loaded, unbound).
failed=0 i=0
while [ $i -lt 3 ]; do
	emuctl '{"cmd":"inject","opcode":"ENABLE_HCA","action":"status","status":3,"syndrome":305419896,"count":1}' >/dev/null
	insmod "$KO"
	[ -e /sys/bus/pci/devices/$bdf/driver ] || failed=$((failed + 1))
	rmmod mlx5_rs
	i=$((i + 1))
done
emuctl '{"cmd":"clear_injections"}' >/dev/null
check po.enable-hca-fail.probes-failed test $failed = 3
check_page_owner po.enable-hca-fail.no-pages-left

emuctl "{\"cmd\":\"set_pages\",\"boot\":$boot0,\"init\":$init0}" >/dev/null
check po.no-violations test "$(violations)" = 0
[ "$FAILED" = 0 ]
