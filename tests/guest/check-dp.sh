# Guest side of `make check`'s data-path boot (lane 3 of tests/run-all.sh, after the
# wired boot): the scenarios of tests/scenarios-ib/ from 93 up, which move data on both
# drivers (rdma-core's examples, perftest, the kernel consumer and infiniband-diags
<<<<<<< HEAD
# (93), the faults under traffic (94), pyverbs' traffic files (95)), upstream's
# recovery from a fatal error (96; here for the lanes' balance) and devlink on both
# drivers (97, here for the same reason). The others of that
=======
# (93), the faults under traffic (94), pyverbs' traffic files (95)), and upstream's
# recovery from a fatal error (96; here for the lanes' balance). 97-recover (both
# drivers' recovery, ~5 minutes under TCG) is not in make check: it runs on demand
# (Documentation/testing.md). The others of that
>>>>>>> recov
# folder run in the InfiniBand boot (tests/guest/check-ib.sh). The runner and its
# isolation between scenarios: tests/guest/run-scenarios.sh.
list=""
for s in "$MLX5RS_REPO"/tests/scenarios-ib/9[3-6]-*.sh; do
	list="$list tests/scenarios-ib/$(basename "$s")"
done
# shellcheck disable=SC2086 # the list splits on purpose
exec sh "$MLX5RS_REPO/tests/guest/run-scenarios.sh" --tag scenarios-dp $list
