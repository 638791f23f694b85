# Upstream mlx5_core + mlx5_ib as the oracle of the InfiniBand scenarios' case helpers
# (tests/guest/ib-*.py): a helper whose cases claim upstream's errno runs them on
# upstream first, in the same scenario and on the same emulated port, and then on
# mlx5_rs; each case must pass on both and the two lists of cases must be the same
# (issue 21 §3). Sourced after tests/guest/lib.sh; defines functions only.
#
#   upstream_load P        P.upstream.probe: modprobe mlx5_core and mlx5_ib, wait for
#                          mlx5_0's port to be ACTIVE; sets dev (mlx5_0) and uv (its
#                          uverbs node)
#   upstream_unload P      P.upstream.rmmod, P.upstream.emu-objects-destroyed,
#                          P.upstream.emu-pages-returned, P.upstream.emu-no-violations:
#                          modprobe -r mlx5_ib, unbind, modprobe -r mlx5_core; every
#                          emulator object destroyed and page returned, no protocol
#                          violation since upstream_load (the count is cumulative: one
#                          here fails every later scenario's check); then the emulator
#                          healed for mlx5_rs
#   upstream_cases OUT CMD... (its cases held to tests/guest/cases/<list>.upstream.cases)
#                          runs CMD (a helper on upstream, with
#                          `IB_DRIVER=upstream` in its environment) into OUT, each of its case lines a check named
#                          `upstream.<case>`
#   cases_agree NAME UPSTREAM_OUT OURS_OUT
#                          NAME: the two runs printed the same cases with the same
#                          verdicts (a case only one driver prints fails it: a helper
#                          splits a driver-specific case as `<case>.upstream` /
#                          `<case>.mlx5_rs`, which this comparison leaves out)

upstream_load() {
	ORACLE_VIOLATIONS=$(violations)
	timeout 300 modprobe mlx5_core && timeout 300 modprobe mlx5_ib
	_i=0
	while [ "$(cat /sys/class/infiniband/mlx5_0/ports/1/state 2>/dev/null)" != "4: ACTIVE" ] && [ $_i -lt 60 ]; do
		sleep 1
		_i=$((_i + 1))
	done
	check "$1.upstream.probe" test "$(cat /sys/class/infiniband/mlx5_0/ports/1/state 2>/dev/null)" = "4: ACTIVE"
	dev=mlx5_0
	uv=$(uverbs_of mlx5_0)
}

upstream_unload() {
	check "$1.upstream.rmmod-mlx5_ib" modprobe -r mlx5_ib
	[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
	check "$1.upstream.rmmod-mlx5_core" modprobe -r mlx5_core
	check "$1.upstream.emu-objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
	check "$1.upstream.emu-pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	check "$1.upstream.emu-no-violations" test "$(violations)" = "$ORACLE_VIOLATIONS"
	emu_heal
}

upstream_cases() {
	_out=$1
	shift
	"$@" >"$_out" 2>&1
	_st=$?
	sed -e 's/^\([A-Za-z0-9_.-]*\): \(PASS\|FAIL\|SKIP\)/upstream.\1: \2/' "$_out" >"$_out.named"
	# Held to its own exact list (tests/guest/cases/<helper>.upstream.cases): OUT
	# /tmp/mr-cases.upstream is list mr, /tmp/cq-raw.upstream list cq-raw.
	_ln=$(basename "$_out" .upstream)
	case_lines "$_out.named" "$MLX5RS_REPO/tests/guest/cases/${_ln%-cases}.upstream.cases" "$_st"
}

# The `<case>: PASS|FAIL` words of a helper's output, driver-specific cases left out.
case_verdicts() {
	sed -n 's/^\([A-Za-z0-9_.-]*\): \(PASS\|FAIL\|SKIP\) .*/\1 \2/p' "$1" | grep -v -E '\.(upstream|mlx5_rs) ' | sort
}

cases_agree() {
	case_verdicts "$2" >/tmp/agree.upstream
	case_verdicts "$3" >/tmp/agree.mlx5_rs
	if cmp -s /tmp/agree.upstream /tmp/agree.mlx5_rs && [ -s /tmp/agree.upstream ]; then
		pass "$1"
	else
		diff /tmp/agree.upstream /tmp/agree.mlx5_rs | grep '^[<>]' | head -n 20
		fail "$1" "$(diff /tmp/agree.upstream /tmp/agree.mlx5_rs | grep -c '^[<>]') case lines differ (< upstream, > mlx5_rs)"
	fi
}
