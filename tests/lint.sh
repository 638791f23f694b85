#!/usr/bin/env bash
# The lint phase of `make check` (also runnable alone); last line "N passed, N failed".
#
#   rustfmt       every tracked .rs file is formatted (toolbox rustfmt, .rustfmt.toml)
#   clippy        the module with the kernel's lint set (CLIPPY=1, W=1), test build
#                 (CONFIG_MLX5_RS_TEST_HOOKS=y, CONFIG_MLX5_RS_KUNIT_TEST=y): no warning;
#                 the safety lints denied in every module build here, whatever the
#                 kernel's set says: a `// SAFETY:` comment on every unsafe block and
#                 unsafe impl (clippy::undocumented_unsafe_blocks), a `# Safety`
#                 section on every unsafe fn, private ones included
#                 (clippy::missing_safety_doc with the kernel's .clippy.toml
#                 `check-private-items = true`, checked)
#   production    the module as `make KDIR=...` builds it (no test hooks, no KUnit
#                 suites), CLIPPY=1, W=1: no warning, none of the hooks' debugfs file
#                 names and no .kunit_test_suites section in the .ko (the test build
#                 above must have both: the check's positive control); the test
#                 build's .ko registers every KUnit suite the sources declare
#   frames        no function of the production .ko reserves more stack than the
#                 kernel's CONFIG_FRAME_WARN (2048) allows C code without a warning
#   core-only     the same without the InfiniBand provider (CONFIG_MLX5_RS_INFINIBAND=n,
#                 what a kernel without CONFIG_INFINIBAND gets): no warning, and no
#                 ib_core symbol in the .ko (the production .ko must have them)
#   scripts       every test script parses (sh -n, bash -n, Python's parser)
#   host-clippy   the host crates (workspace: emulator, pure driver logic, bench tools),
#                 every target, `cargo clippy`: no warning
#
# The module builds run in a scratch copy of the driver sources under the cache (the
# kernel refuses a separate output directory for a source tree that holds build
# products, and the normal build's objects would hide the warnings), against the
# cached test kernel, and the copy is deleted afterwards. Needs the toolbox and the
# test kernel (tests/vm/module.sh builds them).
set -u
. "$(dirname "$0")/vm/lib.sh"

KB=$(kernel_build_dir)
[ -n "$KB" ] && [ -d "$KB" ] || die "no test kernel (run tests/vm/module.sh first)"

PASSED=0 FAILED=0
result() { # result NAME OK(0|1) DETAIL
	if [ "$2" -eq 0 ]; then
		PASSED=$((PASSED + 1)); log "lint: PASS $1${3:+ ($3)}"
	else
		FAILED=$((FAILED + 1)); log "lint: FAIL $1${3:+ ($3)}"
	fi
}

# rustfmt: one call over every tracked .rs file; --check prints the diffs.
mapfile -t rs < <(cd "$REPO" && git ls-files '*.rs')
if out=$(in_toolbox sh -c 'cd "$1" && shift && rustfmt --edition 2021 --check "$@"' sh "$REPO" "${rs[@]}" 2>&1); then
	result rustfmt 0 "${#rs[@]} files"
else
	echo "$out" | head -n 60 >&2
	result rustfmt 1 "run rustfmt --edition 2021 on the files above, in the toolbox"
fi

mkdir -p "$CACHE/runs"
SCRATCH=$(mktemp -d "$CACHE/runs/lint.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
# The driver's files (tracked and new, not ignored ones), not the host crates or tests.
(cd "$REPO" && git ls-files -co --exclude-standard -z -- . ':!emu' ':!host' ':!tests' ':!Documentation' |
	tar --null -T - -cf -) | tar -xf - -C "$SCRATCH"

# The safety lints (KRUSTFLAGS: added to the kernel's Rust flags). Clippy reads the
# kernel's .clippy.toml (CLIPPY_CONF_DIR = the kernel source tree); without its
# `check-private-items = true`, missing_safety_doc would see exported functions only.
SAFETY_LINTS="-Dclippy::undocumented_unsafe_blocks -Dclippy::missing_safety_doc"
private_items=0
grep -q -E '^check-private-items *= *true' "$KB/source/.clippy.toml" 2>/dev/null || private_items=1

# build LOG MAKE-ARGS...: the scratch module with clippy; fails on any warning or error.
build() {
	local logf=$1; shift
	in_toolbox make -C "$KB" M="$SCRATCH" CONFIG_MLX5_RS=m W=1 CLIPPY=1 KRUSTFLAGS="$SAFETY_LINTS" \
		-j"$(nproc)" "$@" modules >"$logf" 2>&1
	local rc=$? n
	n=$(grep -E -c '^(warning|error)(\[|:)' "$logf")
	if [ "$rc" -ne 0 ] || [ "$n" -ne 0 ]; then
		grep -E -A12 '^(warning|error)(\[|:)' "$logf" | head -n 200 >&2
		echo "exit $rc, $n warning/error line(s)"
		return 1
	fi
	echo "0 warnings"
}
# The hooks' debugfs file names, as the NUL-terminated C strings the .ko holds.
hooks_in() { LC_ALL=C grep -a -o -P '(nop_storm|gen_comp|cmd_mode)\x00' "$1" | tr -d '\0' | sort -u | paste -sd " "; }

T0=$(date +%s)
d=$(build "$SCRATCH/clippy.log" CONFIG_MLX5_RS_TEST_HOOKS=y CONFIG_MLX5_RS_KUNIT_TEST=y); rc=$?
if [ "$private_items" -ne 0 ]; then
	rc=1 d="$d; $KB/source/.clippy.toml lacks check-private-items = true: private unsafe fns go unchecked"
fi
result clippy $rc "$d, test build, $(($(date +%s) - T0)) s"
# KUnit suites the .ko registers: the size of its .kunit_test_suites section (name,
# type, address, offset, size) / 8, one pointer per suite; 0 without the section.
suites_in() {
	local size
	size=$(in_toolbox readelf -S -W "$1" 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) if ($i == ".kunit_test_suites") print $(i + 4) }')
	echo $((0x${size:-0} / 8))
}
with="" with_suites=0
# The KUnit suites the driver's sources declare (`kunit_tests(` attributes): the test
# build must register each (a suite whose cfg leaves it out would otherwise vanish
# from make check's count unnoticed).
src_suites=$(cd "$REPO" && git ls-files -co --exclude-standard -z -- '*.rs' ':!emu' ':!host' ':!tests' |
	xargs -0 grep -h -E '^\s*#\[(cfg_attr\(CONFIG_RUST, )?(kernel::macros::)?kunit_tests\(' | grep -c .)
[ "$rc" -eq 0 ] && with=$(hooks_in "$SCRATCH/mlx5_rs.ko") && with_suites=$(suites_in "$SCRATCH/mlx5_rs.ko")

# The same tree again without the option: Kbuild rebuilds the crate (its command line
# changed) and reuses the C objects.
T0=$(date +%s)
d=$(build "$SCRATCH/production.log"); rc=$?
if [ "$rc" -eq 0 ]; then
	found=$(hooks_in "$SCRATCH/mlx5_rs.ko")
	suites=$(suites_in "$SCRATCH/mlx5_rs.ko")
	if [ -n "$found" ]; then
		rc=1 d="hooks in the production .ko: $found"
	elif [ "$(wc -w <<<"$with")" -ne 3 ]; then
		rc=1 d="the test build's .ko lacks hook names (found: ${with:-none}): the check sees nothing"
	elif [ "$suites" -ne 0 ]; then
		rc=1 d="$suites KUnit suite(s) in the production .ko"
	elif [ "$with_suites" -eq 0 ]; then
		rc=1 d="the test build's .ko has no KUnit suite: the check sees nothing"
	elif [ "$with_suites" -ne "$src_suites" ]; then
		rc=1 d="the test build's .ko registers $with_suites KUnit suites, the sources declare $src_suites"
	else
		d="$d, no test hook ($with only in the test build), no KUnit suite ($with_suites in the test build)"
	fi
fi
result production $rc "$d, $(($(date +%s) - T0)) s"
prod_rc=$rc

# frames: no function of the production .ko reserves more stack than the kernel lets C
# code have without a warning (the test kernel's CONFIG_FRAME_WARN, 2048 on 64-bit;
# rustc has no such check). The frame is the prologue's `sub $N,%rsp`. The verbs run
# on the caller's stack (the MAD layer creates its QPs from inside
# ib_register_device, in the probe; a consumer posts from its completion handler), so
# one large frame is a stack overflow waiting for a deep enough caller.
T0=$(date +%s)
rc=1 d="no production .ko"
if [ "$prod_rc" -eq 0 ]; then
	limit=$(sed -n 's/^CONFIG_FRAME_WARN=//p' "$KB/.config")
	limit=${limit:-2048}
	frames=$(in_toolbox objdump -d --no-show-raw-insn "$SCRATCH/mlx5_rs.ko" 2>/dev/null | awk '
		function hex(s,   i, n) {
			n = 0
			for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return n
		}
		/^[0-9a-f]+ <.*>:$/ { fn = $2; seen = 0; next }
		!seen && /sub +\$0x[0-9a-f]+,%rsp/ {
			seen = 1; v = $0; sub(/.*sub +\$0x/, "", v); sub(/,.*/, "", v)
			printf "%d %s\n", hex(v), fn
		}')
	n=$(grep -c . <<<"$frames")
	over=$(awk -v l="$limit" '$1 > l' <<<"$frames" | sort -rn)
	if [ "$n" -lt 100 ]; then
		rc=1 d="read $n frames from the production .ko: the check sees nothing"
	elif [ -n "$over" ]; then
		echo "$over" | head -n 20 >&2
		rc=1 d="$(grep -c . <<<"$over") function(s) above $limit bytes (listed above)"
	else
		rc=0 d="$n functions, the largest $(sort -rn <<<"$frames" | head -n 1 | cut -d' ' -f1) bytes, limit $limit"
	fi
fi
result frames $rc "$d, $(($(date +%s) - T0)) s"

# ib_core symbols the .ko imports (its undefined symbols).
ib_syms() { in_toolbox nm -u "$1" 2>/dev/null | grep -c -E ' (ib_register_device|_ib_alloc_device|ib_dispatch_event)$'; }
with_ib=0
[ "$prod_rc" -eq 0 ] && with_ib=$(ib_syms "$SCRATCH/mlx5_rs.ko")
T0=$(date +%s)
d=$(build "$SCRATCH/core-only.log" CONFIG_MLX5_RS_INFINIBAND=n); rc=$?
if [ "$rc" -eq 0 ]; then
	n=$(ib_syms "$SCRATCH/mlx5_rs.ko")
	if [ "$n" -ne 0 ]; then
		rc=1 d="the core-only .ko imports $n ib_core symbol(s)"
	elif [ "$with_ib" -ne 3 ]; then
		rc=1 d="the production .ko imports $with_ib of the 3 ib_core symbols checked: the check sees nothing"
	else
		d="$d, no ib_core symbol"
	fi
fi
result core-only $rc "$d, $(($(date +%s) - T0)) s"

# scripts: every tracked test script parses: the guest's (run by its /bin/sh, dash)
# with `sh -n`, the host's bash scripts with `bash -n`, the Python helpers with
# Python's parser. (A syntax error in a scenario otherwise shows only in a VM boot.)
T0=$(date +%s)
bad=()
while IFS= read -r f; do
	case "$f" in
	tests/guest/*.sh | tests/guest/lib/*.sh | tests/scenarios*/*.sh | tests/bench/guest*.sh)
		sh -n "$REPO/$f" 2>/dev/null || bad+=("$f") ;;
	*.sh) bash -n "$REPO/$f" 2>/dev/null || bad+=("$f") ;;
	*.py) python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' "$REPO/$f" 2>/dev/null || bad+=("$f") ;;
	esac
done < <(cd "$REPO" && git ls-files -co --exclude-standard 'tests/*.sh' 'tests/*.py')
result scripts ${#bad[@]} "${bad[*]:-every test script parses}, $(($(date +%s) - T0)) s"

# The host crates share the driver's pure files (ifc/, cmd/, pagealloc/, ...), so a
# lint there is a lint in the driver's code too.
T0=$(date +%s)
if ! cargo clippy --version >/dev/null 2>&1; then
	result host-clippy 1 "cargo has no clippy: rustup component add clippy"
else
	if out=$(cd "$REPO" && cargo clippy --workspace --all-targets --release 2>&1); then
		n=$(grep -E -c '^(warning|error)(\[|:)' <<<"$out")
	else
		n=-1
	fi
	if [ "$n" -eq 0 ]; then
		result host-clippy 0 "0 warnings, $(($(date +%s) - T0)) s"
	else
		grep -E -A12 '^(warning|error)(\[|:)' <<<"$out" | head -n 200 >&2
		result host-clippy 1 "cargo clippy --workspace --all-targets: $n warning/error line(s) (-1: clippy failed)"
	fi
fi

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
