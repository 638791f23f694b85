# Scenario: a command that times out keeps its slot and mailboxes parked (never reused
# or freed while the device may still write them); later commands go through on the
# other slots; a late completion releases the slot; a command that never completes
# does not block unload, and its mailboxes are freed only after bus mastering is off.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail timeout.device-present "no 15b3 function"; exit 1; }
d=/sys/kernel/debug/mlx5_rs/$bdf
field() { tr ' ' '\n' <"$d/nop_storm" | sed -n "/^$1\$/{n;p;}"; }
# The device advertises a 1.5 s command timeout (init segment 0xFF8); read at probe.
emuctl '{"cmd":"set_cmd_timeout","ms":1500}' >/dev/null
check timeout.insmod insmod "$KO"

# 1. Late completion: the NOP completes after 4 s, the driver gives up after 1.5 s.
emuctl '{"cmd":"inject","opcode":"NOP","action":"delay","ms":4000,"count":1}' >/dev/null
dmesg_mark
echo "1 1" >"$d/nop_storm"; cat "$d/nop_storm"
check timeout.late.reported test "$(field errors)" = 1
check timeout.late.logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'NOP(0x80d) op_mod(0x0) failed, timeout'"
# Later commands go through while that slot is parked.
echo "200 8" >"$d/nop_storm"; cat "$d/nop_storm"
check timeout.late.later-commands-ok test "$(field errors)/$(field nops)" = 0/200
sleep 4
echo "10 1" >"$d/nop_storm"
check timeout.late.slot-released sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'completed late; its mailboxes are released'"
check timeout.late.no-violations test "$(emu_stat 'd["violations"]')" = 0
check timeout.late.dma-errors-0 test "$(emu_stat 'd["dma_errors"]')" = 0

# 2. Never completes: unload must still work and free everything.
emuctl '{"cmd":"inject","opcode":"NOP","action":"never","count":1}' >/dev/null
echo "1 1" >"$d/nop_storm"
check timeout.never.reported test "$(field errors)" = 1
echo "50 4" >"$d/nop_storm"
check timeout.never.later-commands-ok test "$(field errors)/$(field nops)" = 0/50
grep '^opcode=NOP ' "$d/cmd_stats"
check timeout.stats-count-timeouts test "$(kv_rec "$d/cmd_stats" opcode=NOP timeouts)" = 2
check timeout.never.rmmod rmmod mlx5_rs
check timeout.never.pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
emuctl '{"cmd":"clear_injections"}' >/dev/null
emuctl '{"cmd":"set_cmd_timeout","ms":0}' >/dev/null
check timeout.reload insmod "$KO"
check timeout.reload-bound test -e /sys/bus/pci/devices/$bdf/driver
check timeout.reload-no-violations test "$(emu_stat 'd["violations"]')" = 0
check timeout.final-rmmod rmmod mlx5_rs
check_kmemleak timeout.no-leaks
[ "$FAILED" = 0 ]
