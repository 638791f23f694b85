# Scenario: fast teardown on unload (module parameter fast_unload=1) with 256 MiB of
# firmware pages held (65,536 init pages + boot pages): TEARDOWN_HCA
# prepare-fast-teardown, nic_interface DISABLED written and read back, no page reclaim,
# no DISABLE_HCA, no doorbell or DMA afterwards (the emulator confirms it quiesced),
# pages freed after bus mastering is off. A graceful unload of 4,096 pages runs first as
# the reference (the graceful reclaim of 1 GiB is scenario 40's; figures for both at
# equal sizes, 1 GiB held, come from `make bench`; 256 MiB keeps this scenario near a
# minute in the debug-kernel TCG guest, where 1 GiB took 3.5 min). Then the fallback
# when prepare fails: force teardown, then page reclaim and DISABLE_HCA. The module
# reloads after each.
# The PCI shutdown callback's fast teardown is checked at the end of `make check`
# (tests/guest/shutdown-handoff.sh, tests/vm/shutdown-verdict.sh).
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail fast.device-present "no 15b3 function"; exit 1; }
N=4096
emu_heal
emuctl "{\"cmd\":\"set_pages\",\"init\":$N}" >/dev/null

# 1. Graceful unload of N init pages (the reference).
check fast.graceful.insmod insmod "$KO"
held=$(emu_stat 'd["pages"]["held"]')
dmesg_mark
t0=$(now_ms)
check fast.graceful.rmmod rmmod mlx5_rs
t1=$(now_ms)
graceful_ms=$((t1 - t0)); graceful_held=$held
check fast.graceful.pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
dmesg_since | grep -a -E 'reclaimed|teardown' || true

# 2. Fast teardown with 256 MiB held.
BIG=65536
emu_heal
emuctl "{\"cmd\":\"set_pages\",\"init\":$BIG}" >/dev/null
t0=$(now_ms)
check fast.unload.insmod insmod "$KO" fast_unload=1
echo "insmod with $BIG init pages: $(($(now_ms) - t0)) ms"
held=$(emu_stat 'd["pages"]["held"]')
check fast.unload.256mib-held test "$held" -gt "$BIG"
cmds() { emu_stat "sum(d['commands'].get('$1',{}).values())"; }
takes0=$(cmds MANAGE_PAGES); disables0=$(cmds DISABLE_HCA)
dmesg_mark
t0=$(now_ms)
check fast.unload.rmmod rmmod mlx5_rs
t1=$(now_ms)
fast_ms=$((t1 - t0))
dmesg_since | grep -a -E 'teardown|without reclaim' || true
echo "fast teardown with $held pages held: rmmod $fast_ms ms (graceful reference: $graceful_held pages, rmmod $graceful_ms ms)"
check fast.unload.logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'fast teardown (unload): prepared, nic_interface DISABLED confirmed'"
check fast.unload.pages-freed-without-reclaim sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q '$held firmware pages freed without reclaim'"
check fast.unload.prepared-once test "$(emu_stat 'd["function"]["teardowns"]["prepare_fast"]')" = 1
check fast.unload.no-graceful-or-force test "$(emu_stat 'd["function"]["teardowns"]["graceful"]+d["function"]["teardowns"]["force"]')" = 0
check fast.unload.quiesced test "$(emu_stat 'd["function"]["quiesced"]')" = True
check fast.unload.prepare-consumed test "$(emu_stat 'd["function"]["fast_prepared"]')" = False
check fast.unload.no-reclaim test "$(emu_stat 'd["pages"]["held"]')" = "$held"
# No MANAGE_PAGES take, no DISABLE_HCA; a doorbell after nic_interface DISABLED
# would be a violation.
check fast.unload.no-page-command test "$(cmds MANAGE_PAGES)" = "$takes0"
check fast.unload.no-disable-hca test "$(cmds DISABLE_HCA)" = "$disables0"
check fast.unload.no-violations test "$(violations)" = 0
check fast.unload.dma-errors-0 test "$(emu_stat 'd["dma_errors"]')" = 0
emu_heal
emuctl "{\"cmd\":\"set_pages\",\"init\":$N}" >/dev/null
check fast.unload.reload insmod "$KO"
check fast.unload.reload-rmmod rmmod mlx5_rs
check fast.unload.reload-pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0

# 3. Prepare fails: force teardown, then reclaim and DISABLE_HCA.
emuctl '{"cmd":"set_pages","init":1024}' >/dev/null
emu_heal
check fast.fallback.insmod insmod "$KO" fast_unload=1
emuctl '{"cmd":"inject","opcode":"TEARDOWN_HCA","action":"status","status":3,"count":1}' >/dev/null
dmesg_mark
check fast.fallback.rmmod rmmod mlx5_rs
dmesg_since | grep -a -E 'TEARDOWN|teardown' || true
check fast.fallback.prepare-failure-logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'TEARDOWN_HCA(0x103) op_mod(0x0) failed, status BAD_PARAM_ERR(0x3)'"
check fast.fallback.force-logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'force TEARDOWN_HCA done'"
check fast.fallback.force-once test "$(emu_stat 'd["function"]["teardowns"]["force"]')" = 1
check fast.fallback.no-graceful test "$(emu_stat 'd["function"]["teardowns"]["graceful"]')" = 0
check fast.fallback.not-quiesced test "$(emu_stat 'd["function"]["quiesced"]')" = False
check fast.fallback.pages-reclaimed test "$(emu_stat 'd["pages"]["held"]')" = 0
check fast.fallback.hca-disabled test "$(emu_stat 'd["function"]["enabled"]')" = False
check fast.fallback.no-violations test "$(violations)" = 0
check fast.fallback.dma-errors-0 test "$(emu_stat 'd["dma_errors"]')" = 0
emu_heal
check fast.reload insmod "$KO"
check fast.reload-bound test -e /sys/bus/pci/devices/$bdf/driver
check fast.final-rmmod rmmod mlx5_rs
check fast.final-pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check_kmemleak fast.no-leaks
[ "$FAILED" = 0 ]
