# Guest side of `make soak` (tests/vm/soak.sh): the endurance sizes that `make check`
# cuts, run before an issue that touches them closes (Documentation/testing.md,
# "make soak"). One boot, the same runner and isolation as make check's boots, in this order:
#   recover-cycles.sh 100 fatal-error / recovery cycles of mlx5_rs with no grace period,
#                     every one recovered, nothing accumulated, nothing lost (make
#                     check: 97-recover's one recovery per driver)
#   96-upstream-recover upstream's recovery, twice, step by step by its log lines (make
#                     check: 97-recover's upstream part)
#   dp-endurance.sh   10,000,000 RDMA WRITEs from user space (ib_write_bw) and 1,000,000
#                     SENDs from the kernel consumer (ib_kclient bench=) through one QP
#                     pair, mlx5_rs and upstream, counted exactly, no leak (make check:
#                     93-dp-traffic's kclient part, 1,000 SENDs)
#   74-ib-storm       100,000 full cycles of PD, MR, CQ and QP (400,000 objects) on
#                     mlx5_rs (make check: 2,000), upstream's 300 as in make check
#   15-probe-loop     100 probe/remove cycles (make check: 10)
#   page-drift.sh     guest MemAvailable drift over probe/remove cycles and failed
#                     probes, mlx5_rs and upstream mlx5_core (figures, not asserts)
#   pyverbs-soak.sh   the pyverbs files make check's 73-pyverbs leaves out, both drivers,
#                     judged as there (tests/guest/pyverbs.upstream holds both sets)
# The guest has no host environment: the sizes are set here.
export STORM_FULL_CYCLES=100000 LOOP_CYCLES=100
# The recovery cycles and the data-path endurance run first: the newest parts, whose
# results open issues wait for.
exec sh "$MLX5RS_REPO/tests/guest/run-scenarios.sh" tests/guest/recover-cycles.sh \
	tests/scenarios-ib/96-upstream-recover.sh tests/guest/dp-endurance.sh \
	tests/scenarios-ib/74-ib-storm.sh tests/scenarios/15-probe-loop.sh tests/guest/page-drift.sh \
	tests/guest/pyverbs-soak.sh
