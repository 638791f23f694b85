# Guest side of `make check`'s recovery boot (lane 4 of tests/run-all.sh, after the
# two-function boot): the scenarios of tests/scenarios-ib/ 96 to 98, recovery from
# fatal errors on both drivers: upstream's own (96), both drivers' with a process
# holding the device and ours when recovery cannot end well (97). 99, upstream's sync
# reset, runs by hand (upstream 7.3.4 draws a lockdep report at its module removal
# after a sync reset: Documentation/testing.md). Mostly waits (health
# polls, the firmware's restart, the grace period): a lane of its own costs little CPU
# beside the others. The runner and its isolation between scenarios:
# tests/guest/run-scenarios.sh.
list=""
for s in "$MLX5RS_REPO"/tests/scenarios-ib/9[6-8]-*.sh; do
	list="$list tests/scenarios-ib/$(basename "$s")"
done
# shellcheck disable=SC2086 # the list splits on purpose
exec sh "$MLX5RS_REPO/tests/guest/run-scenarios.sh" --tag scenarios-rec $list
