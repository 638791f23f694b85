#!/bin/sh
# PID 1 of the test guest. The root file system is the toolbox, read-only over 9p.
# Sets up a writable tmpfs overlay on top of it, the upstream modules, debugfs, and
# the emulator's control channel, then runs the guest script(s) named on the kernel
# command line (mlx5rs.run=a.sh,b.sh or mlx5rs.shell=1) and powers off.
#
# Protocol with the host (tests/vm/vm.sh reads the serial console):
#   MLX5RS-TEST: PASS|FAIL <name>   one result (written by tests/guest/lib.sh)
#   MLX5RS-BEGIN <script>           a guest script (or a scenario, run-scenarios.sh) starts
#   MLX5RS-END <script> rc=<n> secs=<s>  it returned with status n after s seconds
#   MLX5RS-GUEST-DONE rc=<n>        the guest scripts finished with exit code n
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null

arg() { tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p" | tail -n1; }
REPO=$(arg mlx5rs.repo)

# Writable root: overlay of tmpfs over the read-only 9p root.
mount -t tmpfs -o size=512m tmpfs /run
mkdir -p /run/ov/upper /run/ov/work /run/ov/root
if mount -t overlay overlay -o lowerdir=/,upperdir=/run/ov/upper,workdir=/run/ov/work /run/ov/root; then
	NEWROOT=/run/ov/root
	mount --move /proc $NEWROOT/proc
	mount --move /sys $NEWROOT/sys
	mount --move /dev $NEWROOT/dev
	mkdir -p $NEWROOT/run && mount -t tmpfs tmpfs $NEWROOT/run
	cd $NEWROOT && exec chroot . /bin/sh "$REPO/tests/guest/stage2.sh"
fi
echo "init: overlay unavailable; the root stays read-only" >&2
exec /bin/sh "$REPO/tests/guest/stage2.sh"
