# Scenario: firmware pages are carved from blocks of host memory of up to 2 MiB
# (pagealloc/block_size.rs). With memory to spare the blocks are large; when high-order
# allocations fail — forced with the kernel's own fault injection, fail_page_alloc
# with a minimum order, for the insmod task only (task-filter, /proc/self/make-it-fail)
# — the driver falls back to smaller blocks and finally to single pages, still supplies
# every page the device asks for (its batch of addresses comes from vmalloc when
# kmalloc has no 32 KiB), says so once in the log, and gets every page back at unload.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail blocks.device-present "no 15b3 function"; exit 1; }
d=/sys/kernel/debug/mlx5_rs/$bdf
fa=/sys/kernel/debug/fail_page_alloc
pg() { awk -v k="$1" '$1 == k { print $2 }' "$d/pages"; }
boot0=$(emu_stat 'd["pages"]["demand"]["boot"]')
init0=$(emu_stat 'd["pages"]["demand"]["init"]')
v0=$(violations)

# fail_on MIN_ORDER: every allocation of at least that order by a task marked
# make-it-fail fails, silently (no allocation-failure report, no stack).
fail_on() {
	echo Y >$fa/task-filter
	echo N >$fa/ignore-gfp-wait
	echo N >$fa/ignore-gfp-highmem
	echo 0 >$fa/verbose
	echo 0 >$fa/space
	echo 0 >$fa/interval
	echo -1 >$fa/times
	echo "$1" >$fa/min-order
	echo 100 >$fa/probability
}
fail_off() { echo 0 >$fa/probability; }
# insmod_marked ARGS: insmod from a task that fault injection applies to.
insmod_marked() {
	module_deps
	sh -c 'echo 1 >/proc/self/make-it-fail && exec insmod "$@"' insmod "$@"
	_rc=$?
	[ $_rc = 0 ] && po_note_module mlx5_rs
	return $_rc
}

# load NAME INIT: insmod (marked) with INIT init pages demanded; checks that every
# page demanded is held by the device and by the driver's ledger.
load() {
	emuctl "{\"cmd\":\"set_pages\",\"boot\":$boot0,\"init\":$2}" >/dev/null
	dmesg_mark
	check blocks.$1.insmod insmod_marked "$KO"
	fail_off
	check blocks.$1.bound test -e /sys/bus/pci/devices/$bdf/driver
	held=$((boot0 + $2))
	check blocks.$1.device-holds-all test "$(emu_stat 'd["pages"]["held"]')" = $held
	check blocks.$1.driver-holds-all test "$(pg held)" = $held
	blocks=$(pg blocks) fallbacks=$(pg block_fallbacks)
	echo "blocks.$1: $held pages in $blocks blocks, $fallbacks fallbacks"
}
unload() {
	check blocks.$1.rmmod rmmod mlx5_rs
	check blocks.$1.pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
	check blocks.$1.reclaim-logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'reclaimed $held firmware pages'"
}

[ -d $fa ] || { fail blocks.fault-injection "no $fa (CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS)"; exit 1; }

# 1. Nothing fails: 64 MiB of init pages. Blocks average at least 256 KiB (2 MiB for
# the init supply, a block sized to the 64-page boot supply).
load large 16384
check blocks.large.few-blocks test $((blocks * 64)) -le $held
check blocks.large.not-logged sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a -q 'supplied from smaller blocks'"
unload large

# 2. Order 9 (2 MiB) fails: 256 KiB blocks carry the 16 MiB init supply.
fail_on 9
load no-2m 4096
check blocks.no-2m.fell-back test "$fallbacks" -ge 1
check blocks.no-2m.256k-blocks test $((blocks * 64)) -ge $held -a $((blocks * 64)) -le $((held + 128))
check blocks.no-2m.logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a 'supplied from smaller blocks' | grep -q -v 'single pages'"
unload no-2m

# 3. Every allocation of 32 KiB (order 3) or more fails during the probe: one block
# per page, every page supplied, and the rest of the probe needs no order-3 block
# either (the page-request ring and the address batches come from kvmalloc).
fail_on 3
load probe-single 4096
check blocks.probe-single.fell-back test "$fallbacks" -ge 1
check blocks.probe-single.one-page-blocks test "$blocks" = $held
check blocks.probe-single.logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a 'supplied from smaller blocks' | grep -q 'down to single pages'"
unload probe-single

# 4. Every allocation of 32 KiB (order 3) or more fails, for every task this time (the
# page-request work runs in a kernel worker, which task-filter cannot mark), for the
# few seconds of one runtime request of 600 pages: one block per page, every page
# supplied; the batch of addresses comes from vmalloc.
load single 1024
b0=$blocks f0=$fallbacks
echo N >$fa/task-filter
fail_on 3
echo N >$fa/task-filter
emuctl '{"cmd":"page_request","num_pages":600}' >/dev/null
i=0
until [ "$(pg held)" = $((held + 600)) ] || [ $i -gt 200 ]; do i=$((i + 1)); sleep 0.05; done
fail_off
echo Y >$fa/task-filter
check blocks.single.runtime-give test "$(pg held)" = $((held + 600))
check blocks.single.fell-back test "$(pg block_fallbacks)" -ge $((f0 + 1))
check blocks.single.one-page-blocks test "$(pg blocks)" = $((b0 + 600))
check blocks.single.logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a 'supplied from smaller blocks' | grep -q 'down to single pages'"
held=$((held + 600))
# Without the fault, the next 600 pages come in 2 MiB + 256 KiB + 3 x 32 KiB blocks.
emuctl '{"cmd":"page_request","num_pages":600}' >/dev/null
i=0
until [ "$(pg held)" = $((held + 600)) ] || [ $i -gt 200 ]; do i=$((i + 1)); sleep 0.05; done
check blocks.single.large-again test "$(pg blocks)" = $((b0 + 600 + 5))
held=$((held + 600))
unload single

check blocks.no-violations test "$(violations)" = "$v0"
check blocks.no-oom sh -c "! dmesg | grep -a -E -i 'oom-kill|invoked oom-killer|page allocation failure'"
emuctl "{\"cmd\":\"set_pages\",\"boot\":$boot0,\"init\":$init0}" >/dev/null
check_kmemleak blocks.no-leaks
[ "$FAILED" = 0 ]
