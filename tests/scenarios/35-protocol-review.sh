# Scenario: behaviours review found to deviate from upstream mlx5_core (issue 9 §3),
# checked from the device side.
#  - SET_HCA_CAP sends only cmd_hca_cap (256 bytes): with the reserved tail of the
#    capability union reading non-zero, nothing of it comes back (upstream
#    handle_hca_cap).
#  - INIT_HCA's sw_owner_id: random, the same for every probe of one module load,
#    different after a reload (upstream mlx5_init: get_random_bytes once per load).
#  - Probe reads nothing but `initializing` until the firmware clears it (upstream
#    wait_fw_init "pre-initializing" before mlx5_cmd_enable), and times out with a
#    clear error when the second wait (FW_INIT budget from the device) never ends.
#  - Teardown honours teardown_hca_out.state: prepare-fast answering FAIL falls back
#    to force close, force close answering FORCE_STATE_FAIL falls back to the normal
#    teardown (upstream mlx5_cmd_force_teardown_hca / mlx5_try_fast_unload).
#  - The health poll runs from right after ENABLE_HCA: a FW fatal error while INIT_HCA
#    hangs fails the probe with no further command to the device (upstream
#    mlx5_function_enable starts the poll there).
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail proto.device-present "no 15b3 function"; exit 1; }
drv=/sys/bus/pci/drivers/mlx5_rs
bound() { test -e /sys/bus/pci/devices/$bdf/driver; }
owner() { emu_stat 'd["observed"]["last_sw_owner_id"]'; }
inits() { emu_stat 'len(d["observed"]["sw_owner_ids"])'; }

# --- SET_HCA_CAP: cmd_hca_cap only -------------------------------------------------
emuctl '{"cmd":"caps","reserved_tail_fill":165}' >/dev/null
check proto.insmod insmod "$KO"
check proto.bound bound
check proto.set-cap-sent test "$(emu_stat 'd["observed"]["set_general_caps"]')" -ge 1
check proto.set-cap-tail-zero test "$(emu_stat 'd["observed"]["set_cap_nonzero_tail"]')" = 0
emuctl '{"cmd":"caps","reserved_tail_fill":0}' >/dev/null

# --- sw_owner_id: random per load, stable across probes -------------------------------
id1=$(owner)
echo "sw_owner_id load 1: $id1"
# The constant an earlier version sent ("mlx5-rs-driver\0\0"), and all zeros.
check proto.owner-not-old-constant test "$id1" != 6d6c78352d72732d6472697665720000
check proto.owner-not-zero test "$id1" != 00000000000000000000000000000000
for i in 1 2; do
	echo "$bdf" >$drv/unbind
	echo "$bdf" >$drv/bind
	check proto.rebind-$i bound
	check proto.owner-same-probe-$i test "$(owner)" = "$id1"
done
check proto.three-init-hca test "$(inits)" = 3
check proto.rmmod-1 rmmod mlx5_rs
check proto.reload insmod "$KO"
id2=$(owner)
echo "sw_owner_id load 2: $id2"
check proto.owner-new-per-load test "$id2" != "$id1"

# --- initializing: nothing else is read before it clears ----------------------------
echo "$bdf" >$drv/unbind
# While initializing, the other fields read garbage (revision 0, an impossible queue
# size, no timeouts): a driver that reads them before the bit clears refuses the device.
emuctl '{"cmd":"init_seg","clear":true,"initializing_ms":3000,"while_initializing":{"cmd_interface_rev":0,"log_cmdq_size":15,"cmd_exec_to":0,"cmd_q_init_to":0}}' >/dev/null
dmesg_mark
echo "$bdf" >$drv/bind
check proto.bound-after-initializing bound
# The register's bit 31 (initializing) is set; bit 30 (firmware reset supported, set by
# default since the emulator models upstream's recovery) may be too.
check proto.waited-logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -q -E 'firmware pre-initializing \(init segment 0x1fc = 0x[89a-f]'"
reads=$(emu_stat 'sum(v for k, v in d["init_seg"]["reads_while_initializing"].items() if k != "initializing")')
echo "init segment reads while initializing (other than initializing): $reads"
check proto.nothing-read-while-initializing test "$reads" = 0
check proto.initializing-polled test "$(emu_stat 'd["init_seg"]["reads_while_initializing"].get("initializing", 0)')" -ge 2

# The second wait (after the queue address): FW_INIT budget from the device (1 s).
echo "$bdf" >$drv/unbind
emuctl '{"cmd":"init_seg","clear":true,"initializing_after_cmdq_ms":"forever","cmd_q_init_to":536870913}' >/dev/null
dmesg_mark
echo "$bdf" >$drv/bind 2>/dev/null
check proto.fw-init-timeout-fails-probe sh -c "! test -e /sys/bus/pci/devices/$bdf/driver"
check proto.fw-init-timeout-logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -q 'firmware still initializing after 1000 ms'"
check proto.fw-init-timeout-no-enable test "$(emu_stat 'd["function"]["enabled"]')" = False
emuctl '{"cmd":"init_seg","clear":true,"initializing_ms":0}' >/dev/null
echo "$bdf" >$drv/bind
check proto.bound-after-knobs-cleared bound
check proto.rmmod-2 rmmod mlx5_rs
check proto.no-violations-1 test "$(violations)" = 0

# --- teardown_hca_out.state ------------------------------------------------------------
t() { emu_stat "d[\"function\"][\"teardowns\"][\"$1\"]"; }
p0=$(t prepare_fast) f0=$(t force) g0=$(t graceful)
check proto.insmod-fast insmod "$KO" fast_unload=1
emuctl '{"cmd":"teardown_state","prepare_fast":"fail","force":"fail"}' >/dev/null
dmesg_mark
check proto.rmmod-state-fail rmmod mlx5_rs
dmesg_since | grep -a mlx5_rs | grep -a -i -E 'teardown|state' || true
check proto.prepare-answered-fail test $(($(t prepare_fast) - p0)) = 1
check proto.force-tried test $(($(t force) - f0)) = 1
check proto.graceful-after-force-state-fail test $(($(t graceful) - g0)) = 1
check proto.force-state-fail-logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -q 'FORCE_STATE_FAIL'"
check proto.state-fail-pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check proto.state-fail-hca-disabled test "$(emu_stat 'd["function"]["enabled"]')" = False
emuctl '{"cmd":"teardown_state","prepare_fast":"success","force":"success"}' >/dev/null
check proto.no-violations-2 test "$(violations)" = 0

# --- health poll from ENABLE_HCA: fatal during a hung INIT_HCA ------------------------
# A 30 s command timeout (INIT_HCA gets 60 s): far longer than the 200 ms poll needs,
# even in a slow guest, and still bounded for a driver without the early poll.
emuctl '{"cmd":"set_cmd_timeout","ms":30000}' >/dev/null
emuctl '{"cmd":"inject","opcode":"INIT_HCA","action":"never","count":1}' >/dev/null
dmesg_mark
# The count is cumulative over the boot (scenario 25 left one): wait for one more.
never0=$(emu_stat 'd["never_completed"]')
insmod "$KO" health_poll_ms=200 &
ins=$!
n=0
while [ "$(emu_stat 'd["never_completed"]')" = "$never0" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
check proto.init-hca-hanging test "$(emu_stat 'd["never_completed"]')" -gt "$never0"
bells=$(emu_stat 'd["doorbells"]')
emuctl '{"cmd":"health","syndrome":1,"rfr":true}' >/dev/null
wait $ins
check proto.fatal-fails-probe sh -c "! test -e /sys/bus/pci/devices/$bdf/driver"
after=$(emu_stat 'd["doorbells"]')
echo "command doorbells after the fatal error: $((after - bells))"
check proto.no-command-after-fatal test "$after" = "$bells"
check proto.fatal-detected-in-bringup sh -c "dmesg | tail -n +$((MARK + 1)) | grep -q 'Fatal error'"
check proto.rmmod-3 rmmod mlx5_rs
emu_heal
emuctl '{"cmd":"set_cmd_timeout","ms":0}' >/dev/null
check proto.reload-after-fatal insmod "$KO"
check proto.bound-after-fatal bound
check proto.rmmod-4 rmmod mlx5_rs
check proto.pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check_kmemleak proto.no-leaks
[ "$FAILED" = 0 ]
