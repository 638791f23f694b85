# Guest side of `make check`'s second boot, with two emulated functions
# (tests/vm/vm.sh --functions 2): every scenario in tests/scenarios-2fn/, in name order,
# each printing MLX5RS-TEST lines. Kept short: the one-function scenarios run in the
# first boot (tests/guest/check.sh).
. "$MLX5RS_REPO/tests/guest/lib.sh"
rc=0
n=$(emu_count)
if [ "$n" -lt 2 ]; then
	fail check-2fn.two-emulators "$n emulator control channel(s); boot with vm.sh --functions 2"
	exit 1
fi
for s in "$REPO"/tests/scenarios-2fn/*.sh; do
	echo "== scenario (2 functions) $(basename "$s")"
	sh "$s" || rc=1
	# Every scenario must leave the module unloaded.
	if grep -q '^mlx5_rs ' /proc/modules; then
		fail "$(basename "$s" .sh).left-module-loaded" "mlx5_rs still loaded"; rmmod mlx5_rs; rc=1
	fi
	# Isolation: every function's device back to its power-on state.
	i=0
	while [ $i -lt "$n" ]; do
		emuctl_n $i '{"cmd":"reset"}' >/dev/null || { fail "$(basename "$s" .sh).emulator$i-reset" "no reply"; rc=1; }
		i=$((i + 1))
	done
done
# Leaks of the last seconds of any scenario: kmemleak reports objects older than 5 s.
sleep 6
check_kmemleak all-scenarios-2fn.no-leaks
[ "$FAILED" = 0 ] || rc=1
exit $rc
