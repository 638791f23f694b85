# Guest side of `make check`'s data-path boot (lane 3 of tests/run-all.sh, after the
# wired boot): the scenarios of tests/scenarios-ib/ from 93 up, which move data on both
# drivers (rdma-core's examples, perftest, the kernel consumer and infiniband-diags
# (93), the faults under traffic (94), pyverbs' traffic files (95)), and upstream's
# recovery from a fatal error (96; here for the lanes' balance). The others of that
# folder run in the InfiniBand boot (tests/guest/check-ib.sh), but for
# 97-upstream-sync-reset, which runs by hand: after a sync reset upstream 7.3.4's module
# removal draws a lockdep report (its fw_reset workqueue destroyed under
# intf_state_mutex, which the reset work takes), which fails the boot and turns lockdep
# off for the rest of it (Documentation/testing.md). The runner and its isolation
# between scenarios: tests/guest/run-scenarios.sh.
list=""
for s in "$MLX5RS_REPO"/tests/scenarios-ib/9[3-6]-*.sh; do
	list="$list tests/scenarios-ib/$(basename "$s")"
done
# shellcheck disable=SC2086 # the list splits on purpose
exec sh "$MLX5RS_REPO/tests/guest/run-scenarios.sh" --tag scenarios-dp $list
