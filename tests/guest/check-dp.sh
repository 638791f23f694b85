# Guest side of `make check`'s data-path boot (lane 3 of tests/run-all.sh, after the
# wired boot): the scenarios of tests/scenarios-ib/ 93 to 95, which move data on both
# drivers (rdma-core's examples, perftest, the kernel consumer and infiniband-diags
# (93), the faults under traffic (94), pyverbs' traffic files (95)), and both drivers'
# recovery from a fatal error (97), from PCI errors reported through AER (98) and the
# sync reset (99, last: upstream 7.3.4's removal after it draws a lockdep report the
# judge excuses, and lockdep is off after a report: Documentation/testing.md). 96
# (upstream's recovery, twice, step by step) runs in make soak: 97's upstream part
# covers its recovery in make check. Those below 93 run in the InfiniBand
# boot (tests/guest/check-ib.sh). The runner and its isolation between scenarios:
# tests/guest/run-scenarios.sh.
list=""
for s in "$MLX5RS_REPO"/tests/scenarios-ib/9[3-5]-*.sh "$MLX5RS_REPO"/tests/scenarios-ib/9[7-9]-*.sh; do
	list="$list tests/scenarios-ib/$(basename "$s")"
done
# shellcheck disable=SC2086 # the list splits on purpose
exec sh "$MLX5RS_REPO/tests/guest/run-scenarios.sh" --tag scenarios-dp $list
