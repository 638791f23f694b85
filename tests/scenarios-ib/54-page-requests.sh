# Scenario: page requests as firmware may send them. With mlx5_rs bound, the emulator
# sends 1,000 page requests of mixed sign back to back, without waiting for answers
# (as many at once as the pages EQ holds; the rest as the driver frees entries), then a
# give and a take of 60,000 pages each (the take is answered with 50,000, the per-
# MANAGE_PAGES cap upstream uses, and the firmware asks again for the rest). Every
# request must be answered (0 unanswered, none outstanding), in order, the ledger exact
# (driver's count = emulator's), every page back, no violation, no DMA error. Then the
# same with upstream mlx5_core on the same emulator. Prints one `figures:` line per
# driver (requests, pages moved, MANAGE_PAGES commands, time taken).
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail pr.device-present "no 15b3 function"; exit 1; }

# A cycle of 20 requests summing to 0; 50 cycles = 1,000 requests.
PATTERN='[1,-1,7,-7,16,-16,64,-64,3,5,-8,100,-50,-50,33,-33,2,-2,500,-500]'
BIG=60000

# One stats request for the counters this scenario compares (python under TCG is slow).
snap() {
	set -- $(emu_stat '" ".join(str(x) for x in [d["pages"]["held"], d["pages"]["requests_sent"], d["pages"]["requests_answered"], d["pages"]["requests_unanswered"], d["pages"]["requests_outstanding"], d["pages"]["requests_queued"], d["pages"]["requests_out_of_order"], d["pages"]["requests_reasked"], d["pages"]["given"], d["pages"]["taken"], sum(d["commands"].get("MANAGE_PAGES", {}).values()), d["violations"], d["dma_errors"]])')
	HELD=$1 SENT=$2 ANS=$3 UNANS=$4 OUT=$5 QUE=$6 OOO=$7 REASK=$8 GIVEN=$9
	shift 9
	TAKEN=$1 MP=$2 VIOL=$3 DMA=$4
}
settled() { snap; [ "$OUT" = 0 ] && [ "$QUE" = 0 ]; }
# wait_settled: until every request sent was answered (bounded: 15 min under TCG).
wait_settled() {
	i=0
	until settled; do
		i=$((i + 1)); [ $i -gt 1800 ] && return 1; sleep 0.5
	done
}

# send JSON: one control request that must succeed (emuctl is a shell function).
send() { emuctl "$1" | grep -q '"ok":true'; }

# run DRV HELD_CMD: the requests against the bound driver DRV, whose own count of
# pages the device holds HELD_CMD prints (`check` owns the variable `name`).
run() {
	drv=$1 held_cmd=$2
	snap
	h0=$HELD s0=$SENT a0=$ANS u0=$UNANS g0=$GIVEN t0=$TAKEN mp0=$MP v0=$VIOL d0=$DMA o0=$OOO r0=$REASK
	check pr.$drv.driver-ledger-before test "$($held_cmd)" = "$h0"
	start=$(now_ms)
	check pr.$drv.send-1000 send "{\"cmd\":\"page_requests\",\"pattern\":$PATTERN,\"count\":1000}"
	check pr.$drv.send-big send "{\"cmd\":\"page_requests\",\"num_pages\":[$BIG,-$BIG]}"
	check pr.$drv.all-answered wait_settled
	ms=$(($(now_ms) - start))
	snap
	echo "figures: driver=$drv requests=$((SENT - s0)) answered=$((ANS - a0)) pages_given=$((GIVEN - g0)) pages_taken=$((TAKEN - t0)) manage_pages=$((MP - mp0)) reasked=$((REASK - r0)) time_ms=$ms"
	# 1,000 + 2 + the firmware's re-ask of the 10,000 the capped take left.
	check pr.$drv.requests-sent test $((SENT - s0)) = 1003
	check pr.$drv.requests-answered test $((ANS - a0)) = 1003
	check pr.$drv.take-asked-again test $((REASK - r0)) = 1
	check pr.$drv.none-unanswered test "$UNANS" = "$u0"
	check pr.$drv.in-order test "$OOO" = "$o0"
	check pr.$drv.ledger-exact test "$($held_cmd)" = "$HELD"
	check pr.$drv.pages-back test "$HELD" = "$h0"
	check pr.$drv.pages-moved test $((GIVEN - g0)) = $((50 * 731 + BIG))
	check pr.$drv.no-violations test "$VIOL" = "$v0"
	check pr.$drv.no-dma-errors test "$DMA" = "$d0"
}

rs_held() { awk '$1 == "held" { print $2 }' /sys/kernel/debug/mlx5_rs/$bdf/pages; }
up_held() { cat /sys/kernel/debug/mlx5/$bdf/pages/fw_pages_total; }

# --- mlx5_rs ---
dmesg_mark
check pr.rs.insmod insmod "$KO"
run rs rs_held
# An event-driven give the guest cannot supply (3 GiB) is answered with MANAGE_PAGES
# allocation failure (upstream page_notify_fail), which the emulator counts as answered.
snap; a0=$ANS
f0=$(emu_stat 'd["pages"]["alloc_fail_reports"]')
emuctl '{"cmd":"page_requests","num_pages":[786432]}' >/dev/null
check pr.rs.alloc-fail-answered wait_settled
check pr.rs.alloc-fail-reported test "$(emu_stat 'd["pages"]["alloc_fail_reports"]')" = $((f0 + 1))
check pr.rs.alloc-fail-counted test "$(emu_stat 'd["pages"]["requests_cant_give"]')" -ge 1
check pr.rs.alloc-fail-ledger-exact test "$(rs_held)" = "$(emu_stat 'd["pages"]["held"]')"
check pr.rs.no-oom-killer sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a -E -i 'oom-kill|invoked oom-killer|page allocation failure'"
check pr.rs.no-overlapping-drop sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a -E 'outstanding; ignored|not queued'"
check pr.rs.rmmod rmmod mlx5_rs
check pr.rs.all-pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check pr.rs.none-unanswered-after-unload test "$(emu_stat 'd["pages"]["requests_unanswered"]')" = "$UNANS"
emuctl '{"cmd":"reset"}' >/dev/null

# --- upstream mlx5_core on the same emulator (as scenario 90 loads it) ---
dmesg_mark
timeout 300 modprobe mlx5_core
check pr.up.bound test -e /sys/bus/pci/devices/$bdf/driver
if [ -e /sys/bus/pci/devices/$bdf/driver ] && [ -r /sys/kernel/debug/mlx5/$bdf/pages/fw_pages_total ]; then
	run up up_held
	echo "---- upstream mlx5_core printed ----"
	dmesg_since | grep -a mlx5 | grep -a -v -E 'firmware version|PCIe|link|Port module' | head -n 20
	echo "------------------------------------"
	check pr.up.no-error-lines sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a mlx5_core | grep -a -i -E 'error|fail|timeout'"
	echo "$bdf" >/sys/bus/pci/devices/$bdf/driver/unbind
else
	fail pr.up.debugfs "upstream pages debugfs missing"
fi
check pr.up.rmmod modprobe -r mlx5_core
check pr.up.all-pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check pr.up.none-unanswered-after-unload test "$(emu_stat 'd["pages"]["requests_unanswered"]')" = "$UNANS"
check pr.up.no-violations-after-unload test "$(emu_stat 'd["violations"]')" = "$VIOL"
[ "$FAILED" = 0 ]
