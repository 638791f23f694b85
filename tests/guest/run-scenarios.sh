# The scenario runner of every boot: run-scenarios.sh [--functions N] [--tag TAG] PATH...
# Runs the scenarios of each PATH, a folder (tests/scenarios, tests/scenarios-ib,
# tests/scenarios-2fn, tests/scenarios-wire: every script in name order) or one script,
# in a boot with at least N emulated functions (default 1). tests/guest/check.sh,
# check-ib.sh, check-dp.sh, check-2fn.sh, check-wire.sh and soak.sh name theirs and call
# it (the guest's init runs scripts without arguments). TAG names the boot's own checks
# (default: the first PATH's folder).
#
# Around each scenario it prints
#   == scenario (<folder>) <name>.sh                  for the reader and run-all's progress line
#   MLX5RS-BEGIN <folder>/<name>                      before
#   MLX5RS-END <folder>/<name> rc=<status> secs=<s> forks=<n>
#                                                     after the script returned (forks:
#                                                     processes it started, lib/checks.sh)
# and the judge (tests/vm/judge.sh) fails the run for a BEGIN without its END (the
# scenario crashed the guest, hung, or the runner died) and for a non-zero status that
# no failed check of the scenario explains (it stopped before its last check).
# Between scenarios the isolation every scenario relies on: mlx5_rs unloaded (a
# scenario that leaves it loaded fails), no page allocated through mlx5_rs's code
# still allocated (page_owner window, lib/pages.sh), every function's emulator reset to
# its power-on state. At the end a kmemleak scan after kmemleak's 5 s minimum age.
. "$MLX5RS_REPO/tests/guest/lib.sh"
want=1
[ "${1:-}" = --functions ] && { want=$2; shift 2; }
tag=""
[ "${1:-}" = --tag ] && { tag=$2; shift 2; }
[ $# -gt 0 ] || { echo "usage: run-scenarios.sh [--functions N] [--tag TAG] PATH..." >&2; exit 2; }
# The scripts, as REPO-relative paths.
list=""
for p; do
	p=${p%/}
	if [ -d "$REPO/$p" ]; then
		for s in "$REPO/$p"/*.sh; do list="$list ${s#"$REPO/"}"; done
	else
		list="$list $p"
	fi
done
# The name of the boot's own checks (the last kmemleak scan): TAG, or the first PATH's
# folder.
if [ -z "$tag" ]; then
	tag=$1; [ -d "$REPO/${tag%/}" ] || tag=$(dirname "$tag")
	tag=$(basename "$tag")
fi
rc=0
n=$(emu_count)
if [ "$n" -lt "$want" ]; then
	fail "$tag.emulators" "$n emulator control channel(s), want $want; boot with vm.sh --functions $want"
	exit 1
fi
module_deps
po_mark scenario
for s in $list; do
	# (Cut in the shell: a process costs ~50 ms in the TCG guest.)
	name=${s##*/}; name=${name%.sh}
	folder=${s%/*}; folder=${folder##*/}
	echo "== scenario ($folder) $name.sh"
	echo "MLX5RS-BEGIN $folder/$name"
	t0=$(now_ms) f0=$(forks_now)
	sh "$REPO/$s"
	src=$?
	echo "MLX5RS-END $folder/$name rc=$src secs=$((($(now_ms) - t0) / 1000)) forks=$(($(forks_now) - f0))"
	[ $src = 0 ] || rc=1
	gap_mark
	if grep -q '^mlx5_rs ' /proc/modules; then
		fail "$name.left-module-loaded" "mlx5_rs still loaded"; rmmod mlx5_rs; rc=1
	fi
	check_page_owner "$name.no-pages-left" scenario
	i=0
	while [ $i -lt "$n" ]; do
		emuctl_n $i '{"cmd":"reset"}' >/dev/null || { fail "$name.emulator$i-reset" "no reply"; rc=1; }
		i=$((i + 1))
	done
done
sleep 6
check_kmemleak "all-$tag.no-leaks"
[ "$FAILED" = 0 ] || rc=1
exit $rc
