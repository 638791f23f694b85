# Guest side of `make check`'s main boot (lane 1 of tests/run-all.sh): KUnit runs at
# insmod; every scenario of tests/scenarios/.
# The runner and its isolation between scenarios: tests/guest/run-scenarios.sh.
exec sh "$MLX5RS_REPO/tests/guest/run-scenarios.sh" tests/scenarios
