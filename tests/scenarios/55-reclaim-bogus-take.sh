# Scenario: a device that answers every MANAGE_PAGES take at unbind with addresses it
# was never given (emulator fault `take_fault`). Entries come back but the ledger count
# never drops: that is no progress, so reclaim gives up after its no-progress timeout
# (5 s) with a log line naming MANAGE_PAGES, and unbind finishes instead of waiting
# forever (before the fix every answer with entries restarted the deadline). The pages
# the device kept are leaked, never freed (page_owner shows exactly those, accounted
# here); the ledger never frees a page on a bogus address. Then 20 takes answered with duplicates of one real page: one page back per
# take is progress, the copies are rejected, and reclaim completes.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail bogus.device-present "no 15b3 function"; exit 1; }
d=/sys/kernel/debug/mlx5_rs/$bdf
unknown() { awk '$1 == "unknown_returns" { print $2 }' "$d/pages"; }

dmesg_mark
check bogus.insmod insmod "$KO"
held=$(emu_stat 'd["pages"]["held"]')
fault_on() { emuctl '{"cmd":"take_fault","mode":"never_given"}' | grep -q '"ok":true'; }
check bogus.fault-on fault_on
start=$(now_ms)
# Bounded by the test harness, not asserted on time: it must return at all.
check bogus.unbind-returns timeout 120 sh -c "echo $bdf >/sys/bus/pci/devices/$bdf/driver/unbind"
echo "bogus: unbind took $(($(now_ms) - start)) ms"
check bogus.logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a mlx5_rs | grep -q 'MANAGE_PAGES take: device returned no page we gave for 5000 ms'"
check bogus.leaked-not-freed sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a mlx5_rs | grep -q 'firmware pages not returned by the device are leaked'"
check bogus.device-kept-its-pages test "$(emu_stat 'd["pages"]["held"]')" = "$held"
check bogus.faults-used test "$(emu_stat 'd["pages"]["take_faults"]')" -gt 0
emuctl '{"cmd":"take_fault","mode":"off"}' >/dev/null
check bogus.rmmod rmmod mlx5_rs
# page_owner (make check keeps a window "scenario" around each scenario, see
# check_page_owner): the pages the device kept are the only pages left from mlx5_rs's
# stacks (one 4 KiB host page per firmware page here); account for them, then reopen
# the window so the per-scenario check covers the rest of this scenario.
if [ -s "$PO_DIR/ranges.scenario" ] && [ -r "$PO_STACKS" ]; then
	g=$(po_grown scenario)
	left=$(printf '%s\n' "$g" | awk -F'\t' '$1 == "leak" { s += $2 } END { print s + 0 }')
	echo "bogus: page_owner: $left pages left allocated through mlx5_rs; the device kept $held"
	check bogus.page-owner-leak-is-what-device-kept test "$left" -ge "$held" -a "$left" -le $((held + 64))
	mv "$PO_DIR/after.scenario" "$PO_DIR/base.scenario"
fi
emuctl '{"cmd":"reset"}' >/dev/null

# Duplicates: each take returns one page repeated; only the first copy is a page back.
dmesg_mark
check bogus.dup-insmod insmod "$KO"
emuctl '{"cmd":"take_fault","mode":"duplicate","count":20}' >/dev/null
check bogus.dup-unbind timeout 600 sh -c "echo $bdf >/sys/bus/pci/devices/$bdf/driver/unbind"
check bogus.dup-all-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check bogus.dup-rejected-logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a mlx5_rs | grep -q 'addresses it was never given'"
check bogus.dup-faults-used test "$(emu_stat 'd["pages"]["take_faults"]')" -ge 20
check bogus.dup-rmmod rmmod mlx5_rs
check bogus.no-dma-errors test "$(emu_stat 'd["dma_errors"]')" = 0
[ "$FAILED" = 0 ]
