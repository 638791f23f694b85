# Guest side of `make check`'s InfiniBand boot (lane 2 of tests/run-all.sh, after the
# two-function boot): every scenario of tests/scenarios-ib/ (page requests against both
# drivers, pyverbs, the verbs storm, the user-space verbs, upstream mlx5_ib's oracles).
# The runner and its isolation between scenarios: tests/guest/run-scenarios.sh.
exec sh "$MLX5RS_REPO/tests/guest/run-scenarios.sh" tests/scenarios-ib
