#!/bin/sh
# Second stage of the guest init, inside the writable root (see init.sh).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb
arg() { tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p" | tail -n1; }
REPO=$(arg mlx5rs.repo)
KBUILD=$(arg mlx5rs.kbuild)
export MLX5RS_REPO=$REPO MLX5RS_KBUILD=$KBUILD

# /tmp must be writable; the overlay root already is. Without it, a tmpfs, unless
# the repo or the kernel tree live below /tmp (a CI clone may), which it would hide.
if ! touch /tmp/.mlx5rs-w 2>/dev/null; then
	case "$REPO$KBUILD" in /tmp/*) echo "guest: /tmp read-only and holds the repo" ;; *) mount -t tmpfs tmpfs /tmp ;; esac
fi
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
hostname mlx5rs-guest
# The test kernel's modules (upstream mlx5_core, mlx5_ib, ib_core, rdma_rxe).
if [ -d "$KBUILD/mod-install/lib/modules" ]; then
	mkdir -p /lib/modules && mount --bind "$KBUILD/mod-install/lib/modules" /lib/modules
fi
# The emulators' control channels: virtio-serial port mlx5emu.ctl (function 0) becomes
# /dev/mlx5emu-ctl, mlx5emu<i>.ctl (function i, vm.sh --functions) /dev/mlx5emu<i>-ctl.
for p in /sys/class/virtio-ports/*; do
	[ -f "$p/name" ] || continue
	n=$(cat "$p/name")
	case "$n" in
	mlx5emu.ctl | mlx5emu[0-9].ctl) ln -sf "/dev/$(basename "$p")" "/dev/${n%.ctl}-ctl" ;;
	esac
done
# Baseline for kmemleak: forget what boot left behind, report only what tests leak.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak; echo clear >/sys/kernel/debug/kmemleak
fi
echo "guest: up after $(cut -d' ' -f1 /proc/uptime) s"

rc=0
if [ "$(arg mlx5rs.shell)" = 1 ]; then
	echo "guest: interactive shell (exit or Ctrl-D powers off)"
	setsid sh -c 'exec /bin/bash -i </dev/ttyS0 >/dev/ttyS0 2>&1'
else
	# Each script between MLX5RS-BEGIN and MLX5RS-END lines (tests/vm/judge.sh fails
	# a BEGIN without its END, and a non-zero status no failed check explains).
	for s in $(arg mlx5rs.run | tr ',' ' '); do
		echo "guest: running $s"
		echo "MLX5RS-BEGIN $s"
		read -r t0 _ </proc/uptime
		sh "$REPO/$s"
		src=$?
		read -r t1 _ </proc/uptime
		echo "MLX5RS-END $s rc=$src secs=$((${t1%.*} - ${t0%.*}))"
		[ $src = 0 ] || rc=1
	done
fi
echo "MLX5RS-GUEST-DONE rc=$rc"
sync
# reboot(2) directly: nothing after this may touch the 9p root.
busybox poweroff -f
echo o >/proc/sysrq-trigger
while :; do :; done
