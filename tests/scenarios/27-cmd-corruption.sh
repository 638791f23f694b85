# Scenario: the device writes one completion field wrong (emulator "corrupt" knob).
# mlx5_rs checks of a completion only what the PRM says the device guarantees
# (ownership, delivery status, command status and syndrome; signatures only with
# checksums on, which are off): fields software owns (the entry's output_length and
# token, the output mailboxes' block number, token, next pointer, and signatures with
# checksums off) are ignored, as upstream mlx5_copy_from_msg ignores them, and the
# command succeeds with its data. A wrong delivery status fails the command (or the
# probe, cleanly) with a log line naming the opcode; ownership left with the device is
# a timeout naming the opcode, the slot stays parked while the device owns it, and the
# driver goes on and unloads clean.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail corrupt.device-present "no 15b3 function"; exit 1; }
d=/sys/kernel/debug/mlx5_rs/$bdf
field() { tr ' ' '\n' <"$d/nop_storm" | sed -n "/^$1\$/{n;p;}"; }
corrupted() { emuctl "{\"cmd\":\"get\",\"path\":[\"corruptions\",\"$1\"]}" | sed -n 's/.*"value":\([0-9]*\).*/\1/p'; }
inject() { emuctl "{\"cmd\":\"inject\",$1}" | grep -q '"ok":true'; }
# A short command timeout for the ownership case (init segment 0xFF8, read at probe).
emuctl '{"cmd":"set_cmd_timeout","ms":1500}' >/dev/null

# 1. Bring-up with mailbox control fields corrupted in every output block of
#    QUERY_HCA_CAP (8 blocks), QUERY_ISSI and QUERY_ADAPTER: the probe succeeds.
emuctl '{"cmd":"clear_injections"}' >/dev/null
rules=0
inject '"opcode":"QUERY_HCA_CAP","action":"corrupt","field":"block_num","count":2' && rules=$((rules + 1))
inject '"opcode":"QUERY_HCA_CAP","action":"corrupt","field":"block_sig"' && rules=$((rules + 1))
inject '"opcode":"QUERY_ISSI","action":"corrupt","field":"block_token"' && rules=$((rules + 1))
inject '"opcode":"QUERY_ADAPTER","action":"corrupt","field":"block_next"' && rules=$((rules + 1))
check corrupt.rules-set test "$rules" = 4
dmesg_mark
check corrupt.mailbox-fields.insmod insmod "$KO"
check corrupt.mailbox-fields.probe-ok test -e /sys/bus/pci/devices/$bdf/driver
for f in block_num block_sig block_token block_next; do
	check corrupt.$f.applied test "$(corrupted $f)" -ge 1
done
check corrupt.mailbox-fields.no-mailbox-error sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a mlx5_rs | grep -a -q 'bad output mailbox'"
emuctl '{"cmd":"clear_injections"}' >/dev/null

# 2. Entry fields software owns, on every NOP of a storm: all succeed.
for f in out_len entry_token entry_sig; do
	before=$(corrupted $f); before=${before:-0}
	check corrupt.$f.rule inject "\"opcode\":\"NOP\",\"action\":\"corrupt\",\"field\":\"$f\""
	echo "100 4" >"$d/nop_storm"; cat "$d/nop_storm"
	check corrupt.$f.nops-ok test "$(field errors)/$(field nops)" = 0/100
	check corrupt.$f.applied test "$(corrupted $f)" -ge $((before + 100))
	emuctl '{"cmd":"clear_injections"}' >/dev/null
done

# 3. A delivery status the PRM does not define: that NOP fails, named in the log.
dmesg_mark
inject '"opcode":"NOP","action":"corrupt","field":"status","value":"0x7f","count":1'
echo "1 1" >"$d/nop_storm"
check corrupt.status.reported test "$(field errors)" = 1
check corrupt.status.logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a mlx5_rs | grep -a -q 'NOP(0x80d) op_mod(0x0) failed, delivery status UNKNOWN(0x7f)'"
echo "50 4" >"$d/nop_storm"
check corrupt.status.later-commands-ok test "$(field errors)/$(field nops)" = 0/50

# 4. Ownership left with the device (output, status and completion event written):
#    the command times out, named in the log; the slot stays parked; others go on.
dmesg_mark
inject '"opcode":"NOP","action":"corrupt","field":"own","count":1'
echo "1 1" >"$d/nop_storm"
check corrupt.own.reported test "$(field errors)" = 1
check corrupt.own.logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a mlx5_rs | grep -a -q 'NOP(0x80d) op_mod(0x0) failed, timeout'"
check corrupt.own.applied test "$(corrupted own)" = 1
echo "200 8" >"$d/nop_storm"; cat "$d/nop_storm"
check corrupt.own.later-commands-ok test "$(field errors)/$(field nops)" = 0/200
check corrupt.own.timeout-counted test "$(kv_rec "$d/cmd_stats" opcode=NOP timeouts)" = 1
check corrupt.rmmod rmmod mlx5_rs
check corrupt.pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check corrupt.hca-disabled test "$(emu_stat 'd["function"]["enabled"]')" = False

# 5. A bad delivery status during bring-up: the probe fails cleanly, naming the opcode.
dmesg_mark
inject '"opcode":"QUERY_HCA_CAP","action":"corrupt","field":"status","value":"0x7f","count":1'
insmod "$KO"
check corrupt.probe.failed test ! -e /sys/bus/pci/devices/$bdf/driver
check corrupt.probe.logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a mlx5_rs | grep -a -q 'QUERY_HCA_CAP(0x100) op_mod(0x[0-9a-f]*) failed, delivery status UNKNOWN(0x7f)'"
check corrupt.probe.rmmod rmmod mlx5_rs
check corrupt.probe.pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check corrupt.probe.hca-disabled test "$(emu_stat 'd["function"]["enabled"]')" = False

# Usable afterwards: a clean load and unload.
emuctl '{"cmd":"clear_injections"}' >/dev/null
emuctl '{"cmd":"set_cmd_timeout","ms":0}' >/dev/null
check corrupt.reload insmod "$KO"
check corrupt.reload-bound test -e /sys/bus/pci/devices/$bdf/driver
check corrupt.final-rmmod rmmod mlx5_rs
check corrupt.no-violations test "$(emu_stat 'd["violations"]')" = 0
check corrupt.dma-errors-0 test "$(emu_stat 'd["dma_errors"]')" = 0
check_kmemleak corrupt.no-leaks
[ "$FAILED" = 0 ]
