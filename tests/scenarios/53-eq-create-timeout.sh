# Scenario: CREATE_EQ times out at probe. A device that executed it late would write
# events into that ring, so the probe fails with the ring kept until bus mastering is
# off (never freed while DMA is on; upstream frees it), unwinds exactly what
# succeeded, and a later load binds normally.
# The command never completes here (not executed): a late execution leaves an EQ the
# driver cannot name (no EQN came back), which the emulator rightly reports at
# TEARDOWN_HCA as a violation, and make check requires none for the whole run.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail eqto.device-present "no 15b3 function"; exit 1; }
v0=$(violations)
# 1.5 s command timeout (init segment 0xFF8); the command EQ's CREATE_EQ never completes.
emuctl '{"cmd":"set_cmd_timeout","ms":1500}' >/dev/null
emuctl '{"cmd":"inject","opcode":"CREATE_EQ","action":"never","count":1}' >/dev/null
dmesg_mark
check eqto.insmod insmod "$KO"
check eqto.probe-failed test ! -e /sys/bus/pci/devices/$bdf/driver
dmesg_since | grep -a mlx5_rs
check eqto.timeout-logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'CREATE_EQ(0x301) op_mod(0x0) failed, timeout'"
check eqto.ring-kept sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'CREATE_EQ (cmd) failed .*its ring is freed only after bus mastering is off'"
check eqto.pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check eqto.hca-disabled test "$(emu_stat 'd["function"]["enabled"]')" = False
check eqto.no-dma-errors test "$(emu_stat 'd["dma_errors"]')" = 0
check eqto.rmmod rmmod mlx5_rs
emuctl '{"cmd":"clear_injections"}' >/dev/null
emuctl '{"cmd":"set_cmd_timeout","ms":0}' >/dev/null
emuctl '{"cmd":"reset"}' >/dev/null
check eqto.reload insmod "$KO"
check eqto.bound test -e /sys/bus/pci/devices/$bdf/driver
check eqto.rmmod-again rmmod mlx5_rs
check eqto.no-violations test "$(violations)" = "$v0"
check_kmemleak eqto.no-leaks
[ "$FAILED" = 0 ]
