# Guest side of `make check`: every guest scenario, one boot. Scenario scripts live in
# tests/scenarios/ and are run in name order; each prints MLX5RS-TEST lines.
. "$MLX5RS_REPO/tests/guest/lib.sh"
rc=0
# page_owner window around each scenario (see check_page_owner in lib.sh): opened here,
# checked and opened again after each scenario (one show_stacks read per scenario).
po_mark scenario
for s in "$REPO"/tests/scenarios/*.sh; do
	echo "== scenario $(basename "$s")"
	t0=$(now_ms)
	sh "$s" || rc=1
	echo "== scenario $(basename "$s") took $((($(now_ms) - t0) / 1000)) s"
	# Every scenario must leave the module unloaded.
	if grep -q '^mlx5_rs ' /proc/modules; then
		fail "$(basename "$s" .sh).left-module-loaded" "mlx5_rs still loaded"; rmmod mlx5_rs; rc=1
	fi
	# No page allocated through mlx5_rs's code during the scenario is still allocated.
	check_page_owner "$(basename "$s" .sh).no-pages-left" scenario
	# Isolation: the next scenario starts from a device in its power-on state, whatever
	# this one left behind (each scenario asserts its own ledger before this point).
	emuctl '{"cmd":"reset"}' >/dev/null || { fail "$(basename "$s" .sh).emulator-reset" "no reply"; rc=1; }
done
# Leaks of the last seconds of any scenario: kmemleak reports objects older than 5 s.
sleep 6
check_kmemleak all-scenarios.no-leaks
[ "$FAILED" = 0 ] || rc=1
exit $rc
