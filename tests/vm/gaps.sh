#!/usr/bin/env bash
# gaps.sh [-n N] LOG...: where a boot's time goes, from its console log(s) (e.g.
# ~/.cache/mlx5-rs/runs/last-check-vm-dp.log): the N (default 40) longest waits before
# a check ("MLX5RS-GAP <ms> <check>", printed by tests/guest/lib/checks.sh when a check
# comes 1 s or more after the one before it), each with its scenario, then each
# scenario's time (MLX5RS-END) beside the sum of its gaps.
set -eu
n=40
[ "${1:-}" = -n ] && { n=$2; shift 2; }
[ $# -gt 0 ] || { echo "usage: $0 [-n N] LOG..." >&2; exit 2; }
cat "$@" | tr -d '\r' | awk -v n="$n" '
	/MLX5RS-BEGIN / { sc = $2 }
	/MLX5RS-GAP / { print $2, sc, $3 | "sort -rn | head -n " n; sum[sc] += $2 }
	/MLX5RS-END / { split($4, a, "="); secs[$2] = a[2]; sc = "(runner, after " $2 ")" }
	END {
		close("sort -rn | head -n " n)
		print ""
		print "scenario: secs, of which in gaps of 1 s or more"
		for (s in secs) printf "%5d s %5.1f s  %s\n", secs[s], sum[s] / 1000, s | "sort -rn"
	}'
