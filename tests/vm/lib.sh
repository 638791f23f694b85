# Shared helpers for the test platform scripts (sourced, not run).
#
# Every path the platform uses is derived here, so the toolbox, kernel, module and
# VM scripts agree on one cache layout:
#
#   $MLX5RS_CACHE/                     default ~/.cache/mlx5-rs
#     toolbox/rootfs/                  Debian trixie (+backports) root file system
#     toolbox/stamp                    hash of the package list it was built from
#     toolbox/packages.txt             what was installed (dpkg -l), for the record
#     kernel/src-<ver>[-p<hash>]/      unpacked linux-source tree (-p: with tests/kernel/patches/)
#     kernel/build-<hash>/             kernel object tree (hash of source, patches, fragment)
#     kernel/current                   symlink to the build the last `kernel.sh` made
#     kernel/current-<checkout>        the same, per checkout (cksum of the repo's path):
#                                      worktrees whose fragments differ share the cache
#     runs/                            per-run scratch (sockets, logs), pruned
#     cargo-target/<hash>/             cargo's build products of one clone (CARGO_TARGET_DIR)
#
# Nothing here may depend on state that only a machine which ran the scripts before
# has: every path is derived from the environment below, and a child script sees the
# same values as its parent (MLX5RS_ROOTFS is how toolbox.sh points its children at the
# root file system it is still building).

set -o pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${MLX5RS_CACHE:-$HOME/.cache/mlx5-rs}
ROOTFS=${MLX5RS_ROOTFS:-$CACHE/toolbox/rootfs}
# One cargo build directory per clone, shared by every script of that clone (make run,
# make check and make bench find the same emulator binary). Not one for every clone:
# cargo judges freshness by file times, and its unit hashes do not include where the
# workspace lives, so a second clone whose files are older than the first's last build
# got that build's emulator and test binaries as "fresh" (found 2026-12-05: a make check
# ran the emulator of a clone 2 commits ahead). `repo` in the directory names its clone
# (rewritten on every use); directories whose clone is gone and unused for a day go.
if [ -z "${CARGO_TARGET_DIR:-}" ]; then
	CARGO_TARGET_DIR=$CACHE/cargo-target/$(printf '%s' "$REPO" | sha256sum | cut -c1-12)
	mkdir -p "$CARGO_TARGET_DIR"
	printf '%s\n' "$REPO" >"$CARGO_TARGET_DIR/repo"
	for _t in "$CACHE"/cargo-target/*/repo; do
		[ -f "$_t" ] || continue
		[ -d "$(cat "$_t")" ] && continue
		[ -n "$(find "$_t" -mmin -1440)" ] && continue
		rm -rf "${_t%/repo}"
	done
	# The layout before (one directory for all clones), once a day has passed.
	for _t in "$CACHE"/cargo-target/release "$CACHE"/cargo-target/debug; do
		[ -d "$_t" ] && [ -z "$(find "$_t" -maxdepth 0 -mmin -1440)" ] && rm -rf "$_t"
	done
	unset _t
fi
export CARGO_TARGET_DIR

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Unmount everything still mounted below $ROOTFS (left by a killed run outside a
# mount namespace). Deepest first.
clear_stale_mounts() {
	local m
	[ -d "$ROOTFS" ] || return 0
	for m in $(awk -v r="$ROOTFS" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r); do
		log "clearing stale mount $m"
		umount -l "$m" 2>/dev/null || true
	done
}

# Run a command inside the toolbox (see in-toolbox).
in_toolbox() { "$REPO/tests/vm/in-toolbox" "$@"; }

# Kernel version the toolbox's linux-source package provides.
kernel_source_tarball() {
	ls "$ROOTFS"/usr/src/linux-source-7.3*.tar.* 2>/dev/null | head -n1
}

# The checkout's tag in the cache's per-checkout names (its path's cksum).
checkout_tag() { printf '%s' "$REPO" | cksum | cut -d' ' -f1; }

# Path of this checkout's test-kernel object tree: the build its last `kernel.sh` made
# (another checkout with another fragment may have moved `current` since), else the
# last one any checkout made; empty if none built yet.
kernel_build_dir() {
	local l
	for l in "$CACHE/kernel/current-$(checkout_tag)" "$CACHE/kernel/current"; do
		[ -e "$l" ] && { readlink -f "$l"; return 0; }
	done
	return 0
}
