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
#     runs/                            per-run scratch (sockets, logs), pruned
#     cargo-target/                    cargo's build products (CARGO_TARGET_DIR)
#
# Nothing here may depend on state that only a machine which ran the scripts before
# has: every path is derived from the environment below, and a child script sees the
# same values as its parent (MLX5RS_ROOTFS is how toolbox.sh points its children at the
# root file system it is still building).

set -o pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${MLX5RS_CACHE:-$HOME/.cache/mlx5-rs}
ROOTFS=${MLX5RS_ROOTFS:-$CACHE/toolbox/rootfs}
# One cargo build directory for every script and every clone (make run, make check and
# make bench find the same emulator binary).
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$CACHE/cargo-target}

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

# Path of the current test-kernel object tree (empty if none built yet).
kernel_build_dir() {
	readlink -f "$CACHE/kernel/current" 2>/dev/null || true
}
