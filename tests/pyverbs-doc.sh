#!/usr/bin/env bash
# Copies the pyverbs tables a run of scenario 73-pyverbs printed (its `PYVDOC` console
# lines, tests/guest/pyverbs_compare.py markdown: per set, the per-file table and
# upstream's skips, failures and errors by reason) into Documentation/ib-vs-upstream.md,
# each between its set's `pyverbs-table` markers (make check's `check` set, the
# upstream-only set of 95-pyverbs-upstream, make soak's `soak` set), and the run's
# per-driver times (`PYVDOC-TIMES`, printed after each block) into the line after them.
# A log with several blocks (one boot running several sets) fills each. The
# scenario's check `pyverbs.doc-table-is-this-runs` fails until the committed table is
# the one the run generated.
#
#   tests/pyverbs-doc.sh CONSOLE_LOG [DOCUMENT]
set -euo pipefail
log=${1:?usage: tests/pyverbs-doc.sh CONSOLE_LOG [DOCUMENT]}
doc=${2:-$(dirname "$0")/../Documentation/ib-vs-upstream.md}
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT
# Block N: $tmpd/N.frag (begin marker … end marker), $tmpd/N.times.
tr -d '\r' <"$log" | sed -n 's/^.*\(PYVDOC\(-TIMES\)\{0,1\}\( .*\)\{0,1\}\)$/\1/p' | awk -v d="$tmpd" '
	/^PYVDOC <!-- pyverbs-table.*: generated / { n++; inside = 1 }
	/^PYVDOC( |$)/ && inside { sub(/^PYVDOC ?/, ""); print > (d "/" n ".frag"); if ($0 ~ /^<!-- pyverbs-table.* end -->$/) inside = 0; next }
	/^PYVDOC-TIMES / && n && !inside { sub(/^PYVDOC-TIMES /, ""); print > (d "/" n ".times") }
'
found=0
for frag in "$tmpd"/*.frag; do
	[ -e "$frag" ] || continue
	begin=$(head -n1 "$frag")
	end=$(tail -n1 "$frag")
	case "$end" in "<!-- pyverbs-table"*" end -->") ;; *) echo "pyverbs-doc: an incomplete PYVDOC block in $log ($begin)" >&2; exit 1 ;; esac
	grep -qxF "$begin" "$doc" && grep -qxF "$end" "$doc" || {
		echo "pyverbs-doc: $doc has no markers $begin" >&2
		exit 1
	}
	times=$(cat "${frag%.frag}.times" 2>/dev/null || true)
	awk -v fragf="$frag" -v begin="$begin" -v end="$end" -v times="$times" '
		$0 == begin { while ((getline l < fragf) > 0) print l; skip = 1; next }
		$0 == end { skip = 0; after = 1; next }
		after && /^Time of this run: / { after = 0; if (times != "") print "Time of this run: " times "."; next }
		after && !/^$/ { after = 0 }
		!skip { print }
	' "$doc" >"$tmpd/doc"
	cat "$tmpd/doc" >"$doc"
	found=$((found + 1))
	echo "pyverbs-doc: $doc: $begin${times:+ ($times)}"
done
[ "$found" -gt 0 ] || {
	echo "pyverbs-doc: no complete PYVDOC table in $log" >&2
	exit 1
}
