#!/usr/bin/env bash
# The KUnit cases the test build of mlx5_rs.ko runs, one "<suite>.<case>" a line,
# sorted (C locale): every `#[test] fn` of the module under each
# `kunit_tests(mlx5_rs_...)` attribute in the driver's sources (not host/, emu/,
# tests/). tests/vm/judge.sh holds a run's KTAP cases to this list.
#   kunit-cases.sh [REPO]
# Relies on rustfmt's layout (tests/lint.sh): the module's `#[test]` and `fn` lines
# indented 4 spaces, its closing brace in column 0.
set -eu
REPO=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$REPO"
files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -- '*.rs' ':!:host/' ':!:emu/' ':!:tests/'
	else
		find . -name '*.rs' -not -path './host/*' -not -path './emu/*' -not -path './tests/*' | sed 's|^\./||'
	fi
}
files | xargs grep -l 'kunit_tests(mlx5_rs' | xargs awk '
	FNR == 1 { suite = ""; inmod = 0; want = 0; t = 0 }
	match($0, /kunit_tests\(mlx5_rs[a-z0-9_]*\)/) {
		suite = substr($0, RSTART + 12, RLENGTH - 13); want = 1; next
	}
	want && /^(pub(\(crate\))? )?mod [a-z_]+ \{/ { inmod = 1; want = 0; next }
	inmod && /^\}/ { inmod = 0; suite = ""; next }
	inmod && /^    #\[test\]/ { t = 1; next }
	inmod && t && /^    (pub(\(crate\))? )?fn [a-z0-9_]+/ {
		n = $0; sub(/^    (pub(\(crate\))? )?fn /, "", n); sub(/[^a-z0-9_].*/, "", n)
		print suite "." n; t = 0; next
	}' | LC_ALL=C sort -u
