# Guest side of `make check`'s InfiniBand boot (lane 2 of tests/run-all.sh, after the
# two-function boot): the scenarios of tests/scenarios-ib/ below 93 (page requests
# against both drivers, pyverbs, the verbs storm, the user-space verbs, upstream
# mlx5_ib's oracles, devlink on both drivers). Those from 93 up run in the data-path
# boot (tests/guest/check-dp.sh, lane 3) or in make soak (96). The runner and its isolation between scenarios:
# tests/guest/run-scenarios.sh.
list=""
for s in "$MLX5RS_REPO"/tests/scenarios-ib/*.sh; do
	n=$(basename "$s")
	case $n in 9[3-9]-*) continue ;; esac
	list="$list tests/scenarios-ib/$n"
done
# shellcheck disable=SC2086 # the list splits on purpose
exec sh "$MLX5RS_REPO/tests/guest/run-scenarios.sh" --tag scenarios-ib $list
