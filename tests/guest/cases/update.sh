#!/usr/bin/env bash
# update.sh CONSOLE-LOG...: rewrites the case lists of this folder from the cases the
# helpers printed in VM runs: the MLX5RS-TEST and SKIP lines between
# "case_lines: begin NAME" and "case_lines: end NAME" (case_lines in
# tests/guest/lib/checks.sh) become NAME.cases, in the order printed; the last run of
# a list wins. A list's comment lines and its "name SKIP reason" entries are kept.
# For a new or changed helper: run its scenario, run this on the console log, and read
# the diff before committing it.
set -eu
dir=$(dirname "$0")
sed -e 's/\r$//' -e 's/^\[ *[0-9.]*\] //' "$@" | awk -v dir="$dir" '
	/^case_lines: begin / { cur = $3; if (!(cur in blk)) order[++n] = cur; blk[cur] = ""; next }
	/^case_lines: end / { cur = ""; next }
	cur == "" { next }
	/MLX5RS-TEST: (PASS|FAIL) / { l = $0; sub(/.*MLX5RS-TEST: (PASS|FAIL) /, "", l); sub(/ \(.*$/, "", l); blk[cur] = blk[cur] l "\n"; next }
	/: SKIP/ { l = $0; sub(/: SKIP.*/, "", l); blk[cur] = blk[cur] l "\n" }
	END {
		for (i = 1; i <= n; i++) {
			f = dir "/" order[i] ".cases"; head = ""; split("", skip)
			while ((getline l < f) > 0) {
				if (l ~ /^#/) head = head l "\n"
				else if (l ~ / SKIP /) { k = l; sub(/ .*/, "", k); skip[k] = l }
			}
			close(f)
			m = split(blk[order[i]], L, "\n"); out = head
			for (j = 1; j < m; j++) out = out (L[j] in skip ? skip[L[j]] : L[j]) "\n"
			printf "%s", out > f; close(f)
			print "updated " f
		}
	}'
