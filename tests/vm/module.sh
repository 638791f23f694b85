#!/usr/bin/env bash
# Build mlx5_rs.ko against the test kernel, inside the toolbox (the module must be
# compiled by the same rustc as the kernel). Builds the toolbox and the kernel first
# if needed. `module.sh clean` removes the build products.
# Fails on any compiler warning: the module must build warning-free.
# This is the test build: it has the debugfs test hooks (Kconfig MLX5_RS_TEST_HOOKS)
# that the scenarios and the benchmark drive, and the KUnit suites (Kconfig
# MLX5_RS_KUNIT_TEST); `make KDIR=...` builds without them.
# Then the test modules under tests/modules/ (C modules that the benchmark and the
# scenarios load next to upstream mlx5_core; not part of the driver), warning-free too,
# and the guest's C programs (tests/guest/*.c, into tests/guest/bin/ with the toolbox's
# gcc: tests/guest/lib/progs.sh), warning-free too.
set -eu
. "$(dirname "$0")/lib.sh"

"$REPO/tests/vm/kernel.sh"
KB=$(kernel_build_dir)
[ -n "$KB" ] || die "no test kernel"

TEST_MODULES=$(ls -d "$REPO"/tests/modules/*/ 2>/dev/null | sed 's,/$,,')
if [ "${1:-}" = clean ]; then
	in_toolbox make -s -C "$KB" M="$REPO" clean
	for m in $TEST_MODULES; do in_toolbox make -s -C "$KB" M="$m" clean; done
	rm -rf "$REPO/tests/guest/bin"
	exit 0
fi

T0=$(date +%s)
# The build logs are per checkout (other clones and worktrees build at the same time).
tag=$(checkout_tag)
logf=$CACHE/runs/module-build-$tag.log
mkdir -p "$CACHE/runs"
if ! in_toolbox make -C "$KB" M="$REPO" CONFIG_MLX5_RS=m CONFIG_MLX5_RS_TEST_HOOKS=y CONFIG_MLX5_RS_KUNIT_TEST=y W=1 -j"$(nproc)" modules >"$logf" 2>&1; then
	cat "$logf" >&2
	die "module build failed"
fi
if grep -E -q '(^|[^a-z])warning(:|\[)' "$logf"; then
	grep -E -A6 '(^|[^a-z])warning(:|\[)' "$logf" >&2
	die "module build produced warnings (log: $logf)"
fi
log "built $REPO/mlx5_rs.ko in $(($(date +%s) - T0)) s"

for m in $TEST_MODULES; do
	T0=$(date +%s)
	logf=$CACHE/runs/module-build-$tag-$(basename "$m").log
	if ! in_toolbox make -C "$KB" M="$m" W=1 -j"$(nproc)" modules >"$logf" 2>&1; then
		cat "$logf" >&2
		die "test module build failed ($m)"
	fi
	if grep -E -q '(^|[^a-z])warning(:|\[)' "$logf"; then
		grep -E -A6 '(^|[^a-z])warning(:|\[)' "$logf" >&2
		die "test module build produced warnings ($m; log: $logf)"
	fi
	log "built test module $(ls "$m"/*.ko | sed "s,^$REPO/,,") in $(($(date +%s) - T0)) s"
done

. "$REPO/tests/guest/lib/progs.sh"
T0=$(date +%s)
mkdir -p "$REPO/tests/guest/bin"
for c in "$REPO"/tests/guest/*.c; do
	n=$(basename "$c" .c)
	# shellcheck disable=SC2046 # the libraries split on purpose
	in_toolbox gcc -O2 -Wall -Werror -o "$REPO/tests/guest/bin/$n" "$c" $(guest_prog_libs "$n") ||
		die "guest program build failed ($c)"
done
log "built the guest programs ($(cd "$REPO/tests/guest/bin" && echo *)) in $(($(date +%s) - T0)) s"
