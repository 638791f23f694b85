# Guest side of `make check`'s data-path boot (lane 3 of tests/run-all.sh, after the
# wired boot): the scenarios of tests/scenarios-ib/ 93 to 95, which move data on both
# drivers (rdma-core's examples, perftest, the kernel consumer and infiniband-diags
# (93), the faults under traffic (94), pyverbs' traffic files (95)). From 96 up, the
# recovery scenarios run in their own boot (tests/guest/check-rec.sh, lane 4); below
# 93, the InfiniBand boot (tests/guest/check-ib.sh, lane 2). The runner and its
# isolation between scenarios: tests/guest/run-scenarios.sh.
list=""
for s in "$MLX5RS_REPO"/tests/scenarios-ib/9[3-5]-*.sh; do
	list="$list tests/scenarios-ib/$(basename "$s")"
done
# shellcheck disable=SC2086 # the list splits on purpose
exec sh "$MLX5RS_REPO/tests/guest/run-scenarios.sh" --tag scenarios-dp $list
