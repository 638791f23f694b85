# Guest side of `make check`'s wired boot (tests/vm/vm.sh --wired, lane 1 of
# tests/run-all.sh, after the main boot): every scenario of tests/scenarios-wire/, two
# emulated devices whose ports are joined by the wire (emu/README.md "Two devices"),
# under upstream mlx5_core + mlx5_ib: both ports up and the cable pulled (10), MADs
# across the devices (20); traffic between them under upstream and then mlx5_rs (30).
# The runner and its isolation between scenarios: tests/guest/run-scenarios.sh.
exec sh "$MLX5RS_REPO/tests/guest/run-scenarios.sh" --functions 2 tests/scenarios-wire
