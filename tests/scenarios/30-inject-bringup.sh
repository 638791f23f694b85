# Scenario: a failure injected at each bring-up command unwinds exactly what succeeded:
# the probe fails with a log line naming the opcode, status and syndrome, the device
# holds no page, the function is disabled, no protocol violation, and the module
# unloads and loads again. SET_DRIVER_VERSION is informational: its failure must not
# stop the bring-up.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail inject.device-present "no 15b3 function"; exit 1; }
for op in ENABLE_HCA QUERY_ISSI SET_ISSI QUERY_PAGES MANAGE_PAGES QUERY_HCA_CAP SET_HCA_CAP INIT_HCA QUERY_ADAPTER SET_DRIVER_VERSION; do
	emuctl '{"cmd":"clear_injections"}' >/dev/null
	if [ $op = QUERY_ISSI ]; then
		# A firmware status on QUERY_ISSI means "ISSI 0" (PRM); a delivery failure is fatal.
		rule='"action":"delivery","status":6'
		what='delivery status INTERNAL_ERR'
	else
		rule='"action":"status","status":3,"syndrome":305419896'
		what='status BAD_PARAM_ERR(0x3), syndrome (0x12345678)'
	fi
	emuctl "{\"cmd\":\"inject\",\"opcode\":\"$op\",$rule,\"count\":1}" >/dev/null
	dmesg_mark
	insmod "$KO"
	if [ $op = SET_DRIVER_VERSION ]; then
		check inject.$op.still-bound test -e /sys/bus/pci/devices/$bdf/driver
	else
		check inject.$op.probe-failed test ! -e /sys/bus/pci/devices/$bdf/driver
	fi
	check inject.$op.logged sh -c "dmesg | tail -n +$((MARK + 1)) | grep -a mlx5_rs | grep -q '$op(0x[0-9a-f]*) op_mod(0x[0-9a-f]*) failed, $what'"
	check inject.$op.rmmod rmmod mlx5_rs
	check inject.$op.pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
	check inject.$op.hca-disabled test "$(emu_stat 'd["function"]["enabled"]')" = False
	check inject.$op.no-violations test "$(emu_stat 'd["violations"]')" = 0
done
emuctl '{"cmd":"clear_injections"}' >/dev/null
check inject.reload-after-all insmod "$KO"
check inject.bound-after-all test -e /sys/bus/pci/devices/$bdf/driver
check inject.final-rmmod rmmod mlx5_rs
check_kmemleak inject.no-leaks
[ "$FAILED" = 0 ]
