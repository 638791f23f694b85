#!/usr/bin/env bash
# Build mlx5_rs.ko against the test kernel, inside the toolbox (the module must be
# compiled by the same rustc as the kernel). Builds the toolbox and the kernel first
# if needed. `module.sh clean` removes the build products.
# Fails on any compiler warning: the module must build warning-free.
# This is the test build: it has the debugfs test hooks (Kconfig MLX5_RS_TEST_HOOKS)
# that the scenarios and the benchmark drive; `make KDIR=...` builds without them.
set -eu
. "$(dirname "$0")/lib.sh"

"$REPO/tests/vm/kernel.sh"
KB=$(kernel_build_dir)
[ -n "$KB" ] || die "no test kernel"

if [ "${1:-}" = clean ]; then
	in_toolbox make -s -C "$KB" M="$REPO" clean
	exit 0
fi

T0=$(date +%s)
logf=$CACHE/runs/module-build.log
mkdir -p "$CACHE/runs"
if ! in_toolbox make -C "$KB" M="$REPO" CONFIG_MLX5_RS=m CONFIG_MLX5_RS_TEST_HOOKS=y W=1 -j"$(nproc)" modules >"$logf" 2>&1; then
	cat "$logf" >&2
	die "module build failed"
fi
if grep -E -q '(^|[^a-z])warning(:|\[)' "$logf"; then
	grep -E -A6 '(^|[^a-z])warning(:|\[)' "$logf" >&2
	die "module build produced warnings (log: $logf)"
fi
log "built $REPO/mlx5_rs.ko in $(($(date +%s) - T0)) s"
