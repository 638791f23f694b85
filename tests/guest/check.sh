# Guest side of `make check`'s main boot (lane 1 of tests/run-all.sh): KUnit runs at
# insmod; every scenario of tests/scenarios/, then mlx5_rs's recovery cycles at make
# check's size (tests/guest/recover-cycles.sh, REC_CYCLES=3: a recovery that leaves one
# object or page behind shows at the second cycle; make soak runs 100).
# The runner and its isolation between scenarios: tests/guest/run-scenarios.sh.
export REC_CYCLES=3
exec sh "$MLX5RS_REPO/tests/guest/run-scenarios.sh" --tag scenarios tests/scenarios tests/guest/recover-cycles.sh
