# Guest side of `make check`'s two-function boot (tests/vm/vm.sh --functions 2, lane 2
# of tests/run-all.sh): every scenario of tests/scenarios-2fn/; the one-function
# scenarios run in the main boot.
# The runner and its isolation between scenarios: tests/guest/run-scenarios.sh.
exec sh "$MLX5RS_REPO/tests/guest/run-scenarios.sh" --functions 2 tests/scenarios-2fn
