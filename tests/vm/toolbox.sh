#!/usr/bin/env bash
# Build (once) the toolbox: a Debian trixie root file system with trixie-backports that
# holds the kernel toolchain, QEMU >= 10.1 (vfio-user-pci) and rdma-core. It is also
# the guest's read-only root file system.
#
# Idempotent: rebuilt only when the package list below changes (its hash is the stamp).
# Needs root (debootstrap, chroot, mount namespaces). On a host with apt it installs the
# host packages it lacks itself (debootstrap, and debian-archive-keyring for a
# non-Debian host), saying which; elsewhere it names them and stops.
# Mirror: debootstrap's default; backports is derived from the root file system's own
# apt source, so no archive host is written here.
#
#   toolbox.sh               build or update the toolbox in $MLX5RS_CACHE
#   toolbox.sh --cold-check  the from-nothing path, proved on every `make check`: build a
#                            toolbox with a reduced package list (busybox) in a scratch
#                            cache through exactly the code path a new machine takes
#                            (debootstrap into rootfs.new, packages installed there by
#                            child processes, rename), run a command in it, delete it.
#                            Only debootstrap's download cache ($CACHE/debootstrap-debs,
#                            plain .deb files) is kept between runs.
set -eu
. "$(dirname "$0")/lib.sh"

COLD_CHECK=0
if [ "${1:-}" = --cold-check ]; then
	COLD_CHECK=1
	DEB_CACHE=$CACHE/debootstrap-debs
	CACHE=$CACHE/cold-check
	rm -rf "$CACHE"
	mkdir -p "$CACHE" "$DEB_CACHE"
	# The scratch cache for every child process (in-toolbox reads it through lib.sh).
	export MLX5RS_CACHE=$CACHE
	ROOTFS=$CACHE/toolbox/rootfs
	unset MLX5RS_ROOTFS
fi

# Packages from trixie. infiniband-diags (56.1, as rdma-core: ibstat, smpquery,
# perfquery, ibnetdiscover for 93-dp-traffic's MAD checks) brings libibmad5,
# libibnetdisc5t64 and perl (its scripts; ~8 MB to fetch, ~52 MB installed).
PACKAGES=(
	gcc make flex bison bc libelf-dev libssl-dev
	rustc rust-src rustfmt rust-clippy bindgen libclang-dev
	kmod cpio pahole xz-utils python3 busybox seabios
	rdma-core ibverbs-utils ibverbs-providers perftest python3-pyverbs infiniband-diags
	iproute2 pciutils procps util-linux
)
# Packages from trixie-backports.
BACKPORTS=(qemu-system-x86 linux-source-7.3)
SUITE=trixie
if [ "$COLD_CHECK" = 1 ]; then
	PACKAGES=(busybox)
	BACKPORTS=()
fi
STAMP_INPUT="$SUITE|${PACKAGES[*]}|${BACKPORTS[*]}|v2"
STAMP=$(printf '%s' "$STAMP_INPUT" | sha256sum | cut -c1-16)
# The base (suite + debootstrap variant) decides whether a change of the package
# list can be applied in place (apt-get install of the new list) or needs a new root.
BASE="$SUITE|minbase|v1"

[ "$(id -u)" = 0 ] || die "the toolbox needs root (debootstrap, chroot, mount namespaces). Run as root, e.g. with sudo."

if [ -f "$CACHE/toolbox/stamp" ] && [ "$(cat "$CACHE/toolbox/stamp")" = "$STAMP" ] && [ -x "$ROOTFS/usr/bin/qemu-system-x86_64" ]; then
	log "toolbox up to date ($ROOTFS, stamp $STAMP)"
	exit 0
fi

# Host prerequisites: command -> Debian package.
host_missing=()
command -v debootstrap >/dev/null || host_missing+=(debootstrap)
command -v unshare >/dev/null || host_missing+=(util-linux)
command -v setsid >/dev/null || host_missing+=(util-linux)
[ -e /usr/share/keyrings/debian-archive-keyring.gpg ] || host_missing+=(debian-archive-keyring)
if [ ${#host_missing[@]} -gt 0 ]; then
	mapfile -t host_missing < <(printf '%s\n' "${host_missing[@]}" | sort -u)
	command -v apt-get >/dev/null ||
		die "missing on the host: ${host_missing[*]} (packages of these names; install them and run again)"
	log "installing host packages: ${host_missing[*]} (apt-get; needed to build the toolbox)"
	mkdir -p "$CACHE"
	{ apt-get update -q && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "${host_missing[@]}"; } >"$CACHE/host-packages.log" 2>&1 || true
	for c in debootstrap unshare setsid; do
		command -v "$c" >/dev/null || {
			tail -n 20 "$CACHE/host-packages.log" >&2 2>/dev/null
			die "could not install the host packages ${host_missing[*]} (log: $CACHE/host-packages.log)"
		}
	done
fi
[ -e /usr/share/debootstrap/scripts/$SUITE ] || die "this debootstrap does not know '$SUITE': install a newer debootstrap"

clear_stale_mounts
mkdir -p "$CACHE/toolbox"

install_packages() {
	in_toolbox /bin/sh -c "
		set -e
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q
		apt-get install -y -q --no-install-recommends ${PACKAGES[*]}
		${BACKPORTS[*]:+apt-get install -y -q --no-install-recommends -t $SUITE-backports ${BACKPORTS[*]}}
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
debootstrap --variant=minbase ${DEB_CACHE:+--cache-dir="$DEB_CACHE"} "$SUITE" "$ROOTFS.new" >"$CACHE/toolbox/debootstrap.log" 2>&1 ||
	{ tail -n 20 "$CACHE/toolbox/debootstrap.log" >&2; die "debootstrap failed (log: $CACHE/toolbox/debootstrap.log)"; }

# Derive the backports source from the mirror debootstrap wrote.
src=$ROOTFS.new/etc/apt/sources.list
mirror=$(awk '$1 == "deb" { print $2; exit }' "$src")
[ -n "$mirror" ] || die "cannot find the mirror in $src"
printf 'deb %s %s-backports main\n' "$mirror" "$SUITE" >"$ROOTFS.new/etc/apt/sources.list.d/backports.list"

# in_toolbox starts a new process whose lib.sh derives ROOTFS again: point it (and
# only it) at the root file system that is still being built.
log "installing ${#PACKAGES[@]} packages + ${#BACKPORTS[@]} from $SUITE-backports"
MLX5RS_ROOTFS=$ROOTFS.new install_packages

qv=$(awk '$1 == "qemu-system-x86" { print $2 }' "$CACHE/toolbox/packages.txt")
log "qemu-system-x86 ${qv:-(not in this list)}, $(grep -c . "$CACHE/toolbox/packages.txt") packages"

rm -rf "$ROOTFS"
mv "$ROOTFS.new" "$ROOTFS"
echo "$STAMP" >"$CACHE/toolbox/stamp"
echo "$BASE" >"$CACHE/toolbox/base"
log "toolbox ready in $(($(date +%s) - T0)) s"

if [ "$COLD_CHECK" = 1 ]; then
	# The finished toolbox must work from a new process, as kernel.sh and vm.sh use it.
	out=$(in_toolbox busybox echo cold-check-ok) || die "cold check: the new toolbox does not run commands"
	[ "$out" = cold-check-ok ] || die "cold check: unexpected output '$out'"
	grep -q '^busybox ' "$CACHE/toolbox/packages.txt" || die "cold check: busybox not recorded as installed"
	[ ! -e "$ROOTFS.new" ] || die "cold check: $ROOTFS.new left behind"
	rm -rf "$CACHE"
	log "cold check passed: a toolbox was built from nothing and runs commands"
fi
