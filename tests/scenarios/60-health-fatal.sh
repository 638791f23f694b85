# Scenario: a firmware fatal error (health syndrome with reset-required) is detected by
# the health poll, idle and during a NOP storm: the log names the sensor and every
# health-buffer field, consumers are notified, every command waiter returns at once
# (none waits for its command timeout; the time is printed), unload issues no command and frees the pages only after
# bus mastering is off; the module reloads once the emulator is healthy again. devlink's
# fw_fatal auto-recover is turned off after each load: this scenario is about the dead
# function (the recovery that otherwise follows is 97-recover's).
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail fatal.device-present "no 15b3 function"; exit 1; }
d=/sys/kernel/debug/mlx5_rs/$bdf
field() { tr ' ' '\n' <"$d/nop_storm" | sed -n "/^$1\$/{n;p;}"; }
POLL=100
emu_heal

# 1. Idle: FW syndrome 0x7 (dead IRISC), rfr set.
check fatal.idle.insmod insmod "$KO" health_poll_ms=$POLL
no_auto_recover fatal.idle.no-auto-recover "$bdf"
dmesg_mark
emuctl '{"cmd":"health","syndrome":7,"ext_syndrome":4660,"rfr":true,"severity":2}' >/dev/null
sleep 1
dmesg_since | grep -a mlx5_rs | head -40
check fatal.idle.detected sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'Fatal error 5 detected: FW_SYND_RFR'"
for f in 'assert_var\[0\]' 'assert_var\[5\]' assert_exit_ptr assert_callra 'time ' fw_ver hw_id 'rfr 1' crr 'severity 2' irisc_index 'synd 0x7: dead IRISC' 'ext_synd 0x1234' 'nic_interface 0'; do
	check "fatal.idle.field.$(echo "$f" | tr -cd 'a-z0-9_')" sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q '$f'"
done
check fatal.idle.dead-logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'device is dead (FW_SYND_RFR'"
check fatal.idle.consumer-notified sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'IB_EVENT_DEVICE_FATAL'"
check fatal.idle.detected-once test "$(dmesg | tail -n +$((MARK + 1)) | grep -a -c 'Fatal error')" = 1
echo "10 1" >"$d/nop_storm"
check fatal.idle.commands-fail test "$(field errors)" = 10
# The storm's own clock (shell and debugfs overhead on TCG excluded).
check fatal.idle.commands-fail-fast test "$(field elapsed_ns)" -lt 1000000000
held=$(emu_stat 'd["pages"]["held"]')
cmds0=$(emu_stat 'd["commands_total"]')
t0=$(now_ms)
check fatal.idle.rmmod rmmod mlx5_rs
t1=$(now_ms)
echo "unload of a dead device: $((t1 - t0)) ms, $held pages held by the device"
# Not a speed target (the figure above is printed): the unload of a dead device must
# not wait for a command timeout (60 s each); freeing the pages under a loaded TCG
# host took 4 s where a quiet one takes under 3 s, so the bound is far from both.
check fatal.idle.rmmod-no-command-timeout test $((t1 - t0)) -lt 30000
check fatal.idle.no-command-at-unload test "$(emu_stat 'd["commands_total"]')" = "$cmds0"
check fatal.idle.pages-freed-after-stop sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q '$held firmware pages freed without reclaim'"
check fatal.idle.no-violations test "$(violations)" = 0
check fatal.idle.dma-errors-0 test "$(emu_stat 'd["dma_errors"]')" = 0
emu_heal
check fatal.idle.reload insmod "$KO"
check fatal.idle.reload-bound test -e /sys/bus/pci/devices/$bdf/driver
check fatal.idle.reload-rmmod rmmod mlx5_rs
check fatal.idle.reload-pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0

# 2. During a NOP storm of 32 callers: every waiter returns once the fatal error is
#    detected, none waits for its command timeout.
check fatal.storm.insmod insmod "$KO" health_poll_ms=$POLL
no_auto_recover fatal.storm.no-auto-recover "$bdf"
dmesg_mark
rm -f /tmp/storm.done
# 250,000 NOPs last far longer than the 2 s before the injection on TCG.
(echo "250000 32" >"$d/nop_storm"; now_ms >/tmp/storm.done) &
sleep 2
ti=$(now_ms)
emuctl '{"cmd":"health","syndrome":1,"rfr":true}' >/dev/null
wait
td=$(cat /tmp/storm.done)
cat "$d/nop_storm"
echo "fatal injected -> every storm waiter returned: $((td - ti)) ms (poll period $POLL ms)"
check fatal.storm.detected sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a -q 'Fatal error 5 detected'"
check fatal.storm.still-running-at-injection test "$td" -gt "$ti"
# Not a speed target (printed above): no waiter is left to its command timeout (60 s)
# after the fatal error is detected; a loaded host measured 2 s, a quiet one < 1.2 s.
check fatal.storm.waiters-returned-before-command-timeout test $((td - ti)) -lt $((POLL * 2 + 20000))
check fatal.storm.completed-some test "$(field p50_ns)" -gt 0
check fatal.storm.errors-reported test "$(field errors)" -gt 0
check fatal.storm.rmmod rmmod mlx5_rs
check fatal.storm.no-violations test "$(violations)" = 0
check fatal.storm.dma-errors-0 test "$(emu_stat 'd["dma_errors"]')" = 0
emu_heal
check fatal.storm.reload insmod "$KO"
check fatal.storm.reload-rmmod rmmod mlx5_rs
check fatal.storm.reload-pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check_kmemleak fatal.no-leaks
[ "$FAILED" = 0 ]
