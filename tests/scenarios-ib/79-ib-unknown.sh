# Scenario: memory behind commands whose outcome is unknown (Documentation/
# architecture.md, "Pinned memory"). With a 1 s command timeout advertised by the
# emulator, tests/guest/ib-unknown.py makes CREATE_MKEY, CREATE_CQ, CREATE_QP and
# CREATE_RMP of user objects time out (the pages stay pinned) and fail with a bad
# status (nothing created: the pages go back at once), DESTROY_MKEY, DESTROY_CQ and
# DESTROY_RMP fail and DESTROY_QP time out (the pages stay pinned).
# Then create_cq and create_srq fail a late allocation (fail-nth) while their undo's
# DESTROY times out: ENOMEM, the pages kept, the half-made object dropped (an object
# leaked there would hold the function's `Hw`, and with it the kept pins, past unbind).
# Each kept buffer is logged with its opcode, syndrome and page count. Then the
# function is unbound: every pin is returned (/proc/vmstat, folded), DMA-API debug
# reports no pending mapping, no kernel warning, kmemleak and page_owner clean.
# The faults are chosen so that no object outlives its PD or CQ in the device (see
# the helper): the emulator's violation count stays 0.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail unknown.device-present "no 15b3 function"; exit 1; }
HELPER=$MLX5RS_REPO/tests/guest/ib-unknown.py
drv=/sys/bus/pci/drivers/mlx5_rs
ib_scenario_start
po_mark
# Read at probe (init segment 0xFF8): the timed-out commands (26) cost 1 s each; the
# scenario's other commands take milliseconds under TCG.
emuctl '{"cmd":"set_cmd_timeout","ms":1000}' >/dev/null
pins0=$(foll_pins)
viol0=$(violations)
ib_load unknown
python3 "$HELPER" cases "$dev" >/tmp/unknown-cases.out 2>&1
st=$?
case_lines /tmp/unknown-cases.out "$MLX5RS_REPO/tests/guest/cases/unknown.cases" "$st"
check unknown.helper-finished grep -q '^unknown: 36 cases' /tmp/unknown-cases.out
# Each buffer kept is logged with its command, syndrome and page count.
for op in CREATE_MKEY CREATE_CQ CREATE_QP CREATE_RMP; do
	check "unknown.logged.$op-timeout" sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q -E '$op\\(0x[0-9a-f]+\\) op_mod\\(0x0\\) failed, timeout, syndrome \\(0x0\\): the object may exist, its [0-9]+ pages are kept'"
done
check unknown.logged.DESTROY_QP-timeout sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q -E 'DESTROY_QP\\(0x[0-9a-f]+\\) op_mod\\(0x0\\) failed, timeout, syndrome \\(0x0\\): the object may exist, its [0-9]+ pages are kept'"
for op in DESTROY_MKEY DESTROY_CQ DESTROY_RMP; do
	check "unknown.logged.$op" sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q -E '$op\\(0x[0-9a-f]+\\) op_mod\\(0x0\\) failed, status BAD_PARAM_ERR\\(0x3\\), syndrome \\(0x5a5a\\): the object may exist, its [0-9]+ pages are kept'"
done
check unknown.pins-held-before-unbind test "$(foll_pins)" -gt "$pins0"
dmesg_mark
check unknown.unbind sh -c "echo $bdf >$drv/unbind"
check unknown.unbound test ! -e /sys/bus/pci/devices/$bdf/driver
check unknown.pins-back-after-unbind test "$(foll_pins)" = "$pins0"
dmesg_since | grep -a 'DMA-API' >/tmp/unknown-dma-api
cat /tmp/unknown-dma-api
check unknown.no-dma-api-report test ! -s /tmp/unknown-dma-api
check unknown.no-kernel-warning sh -c "! dmesg | tail -n +$((START + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"
emuctl '{"cmd":"set_cmd_timeout","ms":0}' >/dev/null
check unknown.rmmod rmmod mlx5_rs
check unknown.emu-objects-destroyed test "$(emu_stat 'd["objects"]["total"]')" = 0
check unknown.emu-pages-all-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check unknown.emu-no-violations test "$(violations)" = "$viol0"
check_kmemleak unknown.no-leaks
check_page_owner unknown.page-owner
emu_heal
[ "$FAILED" = 0 ]
