#!/usr/bin/env bash
# Build (once) the Rust-enabled test kernel from the toolbox's linux-source-7.3 with
# the repo's config fragment, inside the toolbox (gcc 14, rustc 1.85.1, bindgen 0.71.1:
# the toolchain Debian built its own 7.3.4 with), and with the fixes of
# tests/kernel/patches/ applied (kernel bugs the tests found; each patch says which).
#
# Cached by a hash of (source package version, patches, fragment, toolchain versions):
# an unchanged input set is a no-op. Output: $CACHE/kernel/current (and this
# checkout's current-<tag>, which its scripts read: tests/vm/lib.sh) -> build-<hash>/ with
# arch/x86/boot/bzImage, the object tree for out-of-tree modules, and mod-install/
# (upstream mlx5_core/mlx5_ib/ib_core/rdma_rxe modules, installed for the guest).
set -eu
. "$(dirname "$0")/lib.sh"

FRAGMENT=$REPO/tests/kernel/mlx5-rs.config
PATCHES=$(ls "$REPO"/tests/kernel/patches/*.patch 2>/dev/null | sort || true)
"$REPO/tests/vm/toolbox.sh"

# One build at a time: a second caller (another worktree's `make`, a helper) waits
# for the first and then finds its build done.
mkdir -p "$CACHE/kernel"
exec 9>"$CACHE/kernel/.lock"
if ! flock -n 9; then
	log "waiting for another kernel.sh to finish"
	flock 9
fi

tarball=$(kernel_source_tarball)
[ -n "$tarball" ] || die "no linux-source-7.3 tarball in the toolbox"
srcver=$(awk '$1 ~ /^linux-source-7.3/ { print $2 }' "$CACHE/toolbox/packages.txt")
tools=$(in_toolbox /bin/sh -c 'gcc -dumpfullversion; rustc --version; bindgen --version' | tr '\n' ' ')
# shellcheck disable=SC2086 # PATCHES is a list of paths without blanks
phash=$( [ -z "$PATCHES" ] || cat $PATCHES | sha256sum | cut -c1-12)
HASH=$( { echo "$srcver"; echo "$phash"; echo "$tools"; cat "$FRAGMENT"; } | sha256sum | cut -c1-12)
SRC=$CACHE/kernel/src-$srcver${phash:+-p$phash}
OUT=$CACHE/kernel/build-$HASH

if [ -f "$OUT/.mlx5rs-done" ]; then
	ln -sfn "$OUT" "$CACHE/kernel/current"
	ln -sfn "$OUT" "$CACHE/kernel/current-$(checkout_tag)"
	log "test kernel up to date ($OUT)"
	exit 0
fi

if [ ! -f "$SRC/.unpacked" ]; then
	log "unpacking $(basename "$tarball") ($srcver)"
	rm -rf "$SRC" "$SRC.tmp"; mkdir -p "$SRC.tmp"
	tar -C "$SRC.tmp" --strip-components=1 -xf "$tarball"
	# git apply, with repository discovery stopped above the tree: inside a git work
	# tree (a cache under a checkout) it would take paths from that repository's top
	# and skip the patch without an error. Each patch must then reverse-apply: it is in.
	for p in $PATCHES; do
		log "applying $(basename "$p")"
		(cd "$SRC.tmp" && GIT_CEILING_DIRECTORIES=$(dirname "$SRC.tmp") git apply "$p" &&
			GIT_CEILING_DIRECTORIES=$(dirname "$SRC.tmp") git apply --check -R "$p") ||
			die "kernel patch $(basename "$p") does not apply to $srcver"
	done
	mv "$SRC.tmp" "$SRC"; touch "$SRC/.unpacked"
fi

NPROC=$(nproc)
T0=$(date +%s)
mkdir -p "$OUT"
log "configuring kernel $srcver in $OUT (toolchain: $tools)"
in_toolbox /bin/sh -c "
	set -e
	cd '$SRC'
	make -s O='$OUT' x86_64_defconfig
	scripts/kconfig/merge_config.sh -m -O '$OUT' '$OUT/.config' kernel/configs/kvm_guest.config '$FRAGMENT' >/dev/null
	make -s O='$OUT' olddefconfig
" >"$OUT/config.log" 2>&1 || { tail -n 30 "$OUT/config.log" >&2; die "kernel configuration failed (log: $OUT/config.log)"; }

# Every option the fragment sets must have survived olddefconfig: a silently
# dropped CONFIG_RUST (rustc not found, ...) would otherwise surface much later.
missing=""
while read -r line; do
	case "$line" in
	CONFIG_*=*) grep -qxF "$line" "$OUT/.config" || missing="$missing $line" ;;
	"# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *}; grep -q "^$opt=[ym]" "$OUT/.config" && missing="$missing !$opt" ;;
	esac
done <"$FRAGMENT"
if [ -n "$missing" ]; then
	die "kernel config lost options of the fragment:$missing (see $OUT/config.log; for CONFIG_RUST run 'make rustavailable' in the toolbox)"
fi

# A progress line a minute: files compiled so far, and the share of the last complete
# build's count when this cache has one (a first build has no reference to compare).
progress() {
	local t0=$1 ref n pct
	ref=$(cat "$CACHE/kernel/build-steps" 2>/dev/null || true)
	while sleep 60; do
		n=$(grep -cE '^  (CC|RUSTC|AS|LD|AR)' "$OUT/build.log" 2>/dev/null || true)
		pct=""
		[ -n "$ref" ] && [ "$ref" -gt 0 ] && pct=" (~$((n * 100 / ref))% of the last build's $ref)"
		log "kernel build: $((($(date +%s) - t0) / 60)) min, ${n:-0} steps done$pct, now: $(grep -E '^  (CC|RUSTC)' "$OUT/build.log" | tail -n1 | awk '{ print $NF }')"
	done
}
log "building kernel with $NPROC jobs (log: $OUT/build.log; a progress line a minute)"
: >"$OUT/build.log"
# Without the lock's descriptor: the loop's `sleep` outlives the kill below by up to a
# minute, and holding fd 9 it kept the next kernel.sh (module.sh's) waiting that long.
progress "$T0" 9>&- &
PROGRESS_PID=$!
trap 'kill $PROGRESS_PID 2>/dev/null || true' EXIT
in_toolbox /bin/sh -c "
	set -e
	cd '$SRC'
	make O='$OUT' -j$NPROC bzImage modules
	rm -rf '$OUT/mod-install'
	make O='$OUT' -s INSTALL_MOD_PATH='$OUT/mod-install' modules_install
" >"$OUT/build.log" 2>&1 || { grep -E 'error|Error' "$OUT/build.log" | tail -n 20 >&2; die "kernel build failed (log: $OUT/build.log)"; }

kill $PROGRESS_PID 2>/dev/null || true
grep -cE '^  (CC|RUSTC|AS|LD|AR)' "$OUT/build.log" >"$CACHE/kernel/build-steps" || true
touch "$OUT/.mlx5rs-done"
ln -sfn "$OUT" "$CACHE/kernel/current"
ln -sfn "$OUT" "$CACHE/kernel/current-$(checkout_tag)"
log "test kernel built in $(($(date +%s) - T0)) s: $OUT/arch/x86/boot/bzImage"
