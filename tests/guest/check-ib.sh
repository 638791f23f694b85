# Guest side of `make check`'s InfiniBand boot (lane 2 of tests/run-all.sh): the
# scenarios of tests/scenarios-ib/ below 93 (page requests against both drivers,
# pyverbs, the verbs storm, the user-space verbs, upstream mlx5_ib's oracles, devlink
# on both drivers). Those from 93 to 95 move data and run in their own boot
# (tests/guest/check-dp.sh, lane 3), those from 96 up recover from fatal errors
# (tests/guest/check-rec.sh, lane 4). The runner and its isolation between scenarios:
# tests/guest/run-scenarios.sh.
list=""
for s in "$MLX5RS_REPO"/tests/scenarios-ib/*.sh; do
	n=$(basename "$s")
	case $n in 9[3-9]-*) continue ;; esac
	list="$list tests/scenarios-ib/$n"
done
# shellcheck disable=SC2086 # the list splits on purpose
exec sh "$MLX5RS_REPO/tests/guest/run-scenarios.sh" --tag scenarios-ib $list
