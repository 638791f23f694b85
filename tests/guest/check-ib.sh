# Guest side of `make check`'s InfiniBand boot (lane 2 of tests/run-all.sh, after the
# two-function boot): every scenario in tests/scenarios-ib/ in name order, run while the
# main boot (tests/guest/check.sh) runs beside it: 73-pyverbs (rdma-core's pyverbs files
# against upstream mlx5_ib and ours), 74-ib-storm (create-destroy cycles of verbs
# objects), the verbs from user space (75 MR, 76 CQ, 77 QP, 78 SRQ, XRCD and AH) and
# upstream mlx5_ib's runs (91 the port and ibv_devinfo, 92 the kernel client). Each
# scenario prints MLX5RS-TEST lines; between scenarios the same isolation as check.sh:
# module unloaded, no page left allocated through mlx5_rs (page_owner), device reset.
. "$MLX5RS_REPO/tests/guest/lib.sh"
rc=0
po_mark scenario
for s in "$REPO"/tests/scenarios-ib/*.sh; do
	echo "== scenario (ib) $(basename "$s")"
	t0=$(now_ms)
	sh "$s" || rc=1
	echo "== scenario (ib) $(basename "$s") took $((($(now_ms) - t0) / 1000)) s"
	if grep -q '^mlx5_rs ' /proc/modules; then
		fail "$(basename "$s" .sh).left-module-loaded" "mlx5_rs still loaded"; rmmod mlx5_rs; rc=1
	fi
	check_page_owner "$(basename "$s" .sh).no-pages-left" scenario
	emuctl '{"cmd":"reset"}' >/dev/null || { fail "$(basename "$s" .sh).emulator-reset" "no reply"; rc=1; }
done
# Leaks of the last seconds of any scenario: kmemleak reports objects older than 5 s.
sleep 6
check_kmemleak all-scenarios-ib.no-leaks
[ "$FAILED" = 0 ] || rc=1
exit $rc
