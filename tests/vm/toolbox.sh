#!/usr/bin/env bash
# Build (once) the toolbox: a Debian trixie root file system with trixie-backports that
# holds the kernel toolchain, QEMU >= 10.1 (vfio-user-pci) and rdma-core. It is also
# the guest's read-only root file system.
#
# Idempotent: rebuilt only when the package list below changes (its hash is the stamp).
# Needs root (debootstrap, chroot, mount namespaces) and debootstrap on the host.
# Mirror: debootstrap's default; backports is derived from the root file system's own
# apt source, so no archive host is written here.
set -eu
. "$(dirname "$0")/lib.sh"

# Packages from trixie.
PACKAGES=(
	gcc make flex bison bc libelf-dev libssl-dev
	rustc rust-src rustfmt bindgen libclang-dev
	kmod cpio pahole xz-utils python3 busybox seabios
	rdma-core ibverbs-utils ibverbs-providers perftest python3-pyverbs
	iproute2 pciutils procps util-linux
)
# Packages from trixie-backports.
BACKPORTS=(qemu-system-x86 linux-source-7.3)
SUITE=trixie
STAMP_INPUT="$SUITE|${PACKAGES[*]}|${BACKPORTS[*]}|v2"
STAMP=$(printf '%s' "$STAMP_INPUT" | sha256sum | cut -c1-16)
# The base (suite + debootstrap variant) decides whether a change of the package
# list can be applied in place (apt-get install of the new list) or needs a new root.
BASE="$SUITE|minbase|v1"

[ "$(id -u)" = 0 ] || die "the toolbox needs root (debootstrap, chroot, mount namespaces). Run as root, e.g. with sudo."
command -v debootstrap >/dev/null || die "debootstrap not found on the host: apt-get install debootstrap"
command -v unshare >/dev/null || die "unshare (util-linux) not found on the host"
[ -e /usr/share/debootstrap/scripts/$SUITE ] || die "this debootstrap does not know '$SUITE': install a newer debootstrap"

if [ -f "$CACHE/toolbox/stamp" ] && [ "$(cat "$CACHE/toolbox/stamp")" = "$STAMP" ] && [ -x "$ROOTFS/usr/bin/qemu-system-x86_64" ]; then
	log "toolbox up to date ($ROOTFS, stamp $STAMP)"
	exit 0
fi

clear_stale_mounts
mkdir -p "$CACHE/toolbox"

install_packages() {
	in_toolbox /bin/sh -c "
		set -e
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q
		apt-get install -y -q --no-install-recommends ${PACKAGES[*]}
		apt-get install -y -q --no-install-recommends -t $SUITE-backports ${BACKPORTS[*]}
		apt-get clean
	" >"$CACHE/toolbox/install.log" 2>&1 ||
		{ tail -n 30 "$CACHE/toolbox/install.log" >&2; die "package installation failed (log: $CACHE/toolbox/install.log)"; }
	in_toolbox dpkg-query -W -f '${Package} ${Version}\n' >"$CACHE/toolbox/packages.txt"
}

if [ -x "$ROOTFS/usr/bin/env" ] && [ -f "$CACHE/toolbox/base" ] && [ "$(cat "$CACHE/toolbox/base")" = "$BASE" ]; then
	log "package list changed: updating the toolbox in place"
	T0=$(date +%s)
	install_packages
	echo "$STAMP" >"$CACHE/toolbox/stamp"
	log "toolbox updated in $(($(date +%s) - T0)) s"
	exit 0
fi
rm -rf "$ROOTFS.new" "$CACHE/toolbox/stamp"
T0=$(date +%s)
log "debootstrap $SUITE into $ROOTFS.new (default mirror)"
debootstrap --variant=minbase "$SUITE" "$ROOTFS.new" >"$CACHE/toolbox/debootstrap.log" 2>&1 ||
	{ tail -n 20 "$CACHE/toolbox/debootstrap.log" >&2; die "debootstrap failed (log: $CACHE/toolbox/debootstrap.log)"; }

# Derive the backports source from the mirror debootstrap wrote.
src=$ROOTFS.new/etc/apt/sources.list
mirror=$(awk '$1 == "deb" { print $2; exit }' "$src")
[ -n "$mirror" ] || die "cannot find the mirror in $src"
printf 'deb %s %s-backports main\n' "$mirror" "$SUITE" >"$ROOTFS.new/etc/apt/sources.list.d/backports.list"

ROOTFS_SAVE=$ROOTFS
ROOTFS=$ROOTFS.new
log "installing ${#PACKAGES[@]} packages + ${#BACKPORTS[*]} from $SUITE-backports"
install_packages
ROOTFS=$ROOTFS_SAVE

qv=$(awk '$1 == "qemu-system-x86" { print $2 }' "$CACHE/toolbox/packages.txt")
log "qemu-system-x86 $qv, $(grep -c . "$CACHE/toolbox/packages.txt") packages"

rm -rf "$ROOTFS"
mv "$ROOTFS.new" "$ROOTFS"
echo "$STAMP" >"$CACHE/toolbox/stamp"
echo "$BASE" >"$CACHE/toolbox/base"
log "toolbox ready in $(($(date +%s) - T0)) s"
