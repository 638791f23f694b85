#!/usr/bin/env bash
# Copies the pyverbs table a run of scenario 73-pyverbs printed (its `PYVDOC` console
# lines, tests/guest/pyverbs_compare.py markdown) into Documentation/ib-vs-upstream.md,
# between the `pyverbs-table` markers, and the run's per-driver times into the line
# after them. The scenario's check `pyverbs.doc-table-is-this-runs` fails until the
# committed table is the one the run generated.
#
#   tests/pyverbs-doc.sh CONSOLE_LOG [DOCUMENT]
set -euo pipefail
log=${1:?usage: tests/pyverbs-doc.sh CONSOLE_LOG [DOCUMENT]}
doc=${2:-$(dirname "$0")/../Documentation/ib-vs-upstream.md}
frag=$(tr -d '\r' <"$log" | sed -n 's/^.*PYVDOC \(.*\)$/\1/p')
times=$(tr -d '\r' <"$log" | sed -n 's/^.*PYVDOC-TIMES \(.*\)$/\1/p' | tail -n1)
[ "$(printf '%s\n' "$frag" | grep -c 'pyverbs-table')" = 2 ] || {
	echo "pyverbs-doc: no complete PYVDOC table in $log" >&2
	exit 1
}
grep -q '^<!-- pyverbs-table: ' "$doc" && grep -q '^<!-- pyverbs-table end -->' "$doc" || {
	echo "pyverbs-doc: $doc has no pyverbs-table markers" >&2
	exit 1
}
tmp=$(mktemp)
awk -v frag="$frag" -v times="$times" '
	/^<!-- pyverbs-table: / { print frag; skip = 1; next }
	/^<!-- pyverbs-table end -->/ { skip = 0; after = 1; next }
	after && /^Time of this run: / { after = 0; if (times != "") print "Time of this run: " times "."; next }
	after && !/^$/ { after = 0 }
	!skip { print }
' "$doc" >"$tmp"
mv "$tmp" "$doc"
echo "pyverbs-doc: $doc table from $log${times:+ ($times)}"
