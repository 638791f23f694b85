#!/usr/bin/env bash
# Boot the test kernel under QEMU with the emulated ConnectX attached and run guest
# scripts; judge the run from the serial console.
#
#   vm.sh --run tests/guest/smoke.sh[,more.sh]   run guest scripts (paths in the repo)
#   vm.sh --shell                                interactive guest shell on this terminal
#   options: --timeout SEC (default 900)  --emu-arg ARG (repeatable; every emulator)
#            --fn-emu-arg I ARG (repeatable; function I's emulator only)
#            --no-emu  --functions N (emulated ConnectX functions, default 1, max 4)
#            --wired (two functions whose ports are wired to each other, below)
#            --log FILE (console log; default $CACHE/runs/<id>/console.log)
#            --mem SIZE (guest RAM, e.g. 1G or 1536M; default 2G)
#
# Function i (0-based) is its own emulator process: data socket emu.sock / emu<i>.sock,
# control socket ctl.sock / ctl<i>.sock, log emu.log / emu<i>.log in the run directory
# (function 0 keeps the one-function names), behind its own PCIe root port; its control
# channel is the virtio-serial port mlx5emu.ctl / mlx5emu<i>.ctl, which the guest links
# as /dev/mlx5emu-ctl / /dev/mlx5emu<i>-ctl. The root ports are added in function order,
# so the guest numbers their buses in that order: function i is the i-th 15b3 function
# in PCI address order (tests/guest/lib.sh: mlx_bdf_n, emuctl_n).
# With --wired (implies --functions 2) the two emulators are two devices of one subnet,
# their ports joined by the wire (emu/README.md "Two devices"): function 0 listens on
# wire.sock in the run directory with LID 2 (device index 0), function 1 connects to it
# with LID 3 (device index 1: other GUIDs); the SM LID of both stays 1.
# Guest RAM (--mem, default 2G: the benchmarks' 1 GiB of firmware pages and their 1 GiB
# registration need it) is a shared memfd (vfio-user needs it); the root file system is
# the toolbox over 9p, read-only, with a tmpfs overlay in the guest; the repo and the
# cache are visible in the guest at their host paths. Accelerator: TCG unless a probe
# boot proved KVM works on this machine (cached), or MLX5RS_ACCEL=kvm|tcg.
# MLX5RS_KUNIT=0: the module's KUnit suites do not run in this boot (KUnit's filter
# matches no suite); `make check` runs them in its main boot only.
# MLX5RS_QEMU_PLUGIN=PLUGIN[,ARGS]: QEMU loads this TCG plugin (`-plugin`) and the guest
# kernel boots with `nokaslr`, so that kernel addresses match System.map
# (tests/bench/insn-profile.sh, the instruction-count profile). Unset: neither.
#
# Exit status 0 only if every guest check passed, the guest finished, and the kernel
# log has no oops, BUG, WARN, lockdep, KASAN, DMA-API-debug or kmemleak report.
# QEMU and the emulator are killed on every exit path.
set -eu
. "$(dirname "$0")/lib.sh"

RUN_SCRIPTS="" SHELL_MODE=0 TIMEOUT=900 MEM=2G NO_EMU=0 LOGF="" EMU_ARGS=() FUNCTIONS=1 WIRED=0
FN_EMU_ARGS=("" "" "" "") # per function, newline-separated
while [ $# -gt 0 ]; do
	case "$1" in
	--run) RUN_SCRIPTS=$2; shift 2 ;;
	--shell) SHELL_MODE=1; shift ;;
	--timeout) TIMEOUT=$2; shift 2 ;;
	--emu-arg) EMU_ARGS+=("$2"); shift 2 ;;
	--fn-emu-arg)
		case "$2" in [0-3]) ;; *) die "vm.sh: --fn-emu-arg takes a function 0 to 3, not $2" ;; esac
		FN_EMU_ARGS[$2]+="$3"$'\n'; shift 3 ;;
	--no-emu) NO_EMU=1; shift ;;
	--functions) FUNCTIONS=$2; shift 2 ;;
	--wired) WIRED=1; shift ;;
	--log) LOGF=$2; shift 2 ;;
	--mem) MEM=$2; shift 2 ;;
	*) die "vm.sh: unknown argument $1" ;;
	esac
done

case "$MEM" in [1-9]G | [1-9][0-9][0-9]M | [1-9][0-9][0-9][0-9]M) ;; *) die "vm.sh: --mem takes a size such as 1G or 1536M, not $MEM" ;; esac
case "$FUNCTIONS" in [1-4]) ;; *) die "vm.sh: --functions takes 1 to 4, not $FUNCTIONS" ;; esac
if [ "$WIRED" = 1 ]; then
	[ "$FUNCTIONS" = 1 ] && FUNCTIONS=2
	[ "$FUNCTIONS" = 2 ] || die "vm.sh: --wired joins two functions, not $FUNCTIONS"
fi
for ((i = FUNCTIONS; i < 4; i++)); do
	[ -z "${FN_EMU_ARGS[$i]}" ] || die "vm.sh: --fn-emu-arg for function $i, but only $FUNCTIONS function(s)"
done

KB=$(kernel_build_dir)
[ -n "$KB" ] && [ -f "$KB/arch/x86/boot/bzImage" ] || die "no test kernel: run tests/vm/kernel.sh"
RUNDIR=$CACHE/runs/vm-$$
mkdir -p "$RUNDIR"
if [ "$WIRED" = 1 ]; then
	FN_EMU_ARGS[0]+="--wire-listen"$'\n'"$RUNDIR/wire.sock"$'\n'"--lid"$'\n'"2"$'\n'"--device-index"$'\n'"0"$'\n'
	FN_EMU_ARGS[1]+="--wire-connect"$'\n'"$RUNDIR/wire.sock"$'\n'"--lid"$'\n'"3"$'\n'"--device-index"$'\n'"1"$'\n'
fi
# Keep the last 20 run directories, and every one whose vm.sh still runs (its pid
# names it): other clones boot VMs too, and a long run's directory must outlive theirs.
# Boots that start together (make check's lanes) prune at once: a directory another
# one removed makes `ls` fail, which under pipefail would end this boot before it
# printed a line (exit 2), so the listing's status is not this script's.
{ ls -1dt "$CACHE"/runs/vm-* 2>/dev/null || true; } | tail -n +21 | while read -r d; do
	kill -0 "${d##*/vm-}" 2>/dev/null || rm -rf "$d"
done
[ -n "$LOGF" ] || LOGF=$RUNDIR/console.log

EMU_PIDS=() QEMU_PID=""
cleanup() {
	[ -n "$QEMU_PID" ] && kill -- -"$QEMU_PID" 2>/dev/null && sleep 0.5 && kill -9 -- -"$QEMU_PID" 2>/dev/null
	local p
	for p in "${EMU_PIDS[@]}"; do
		kill "$p" 2>/dev/null && sleep 0.2 && kill -9 "$p" 2>/dev/null
	done
	true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# qemu_cmd ACCEL APPEND [extra args...]: the QEMU command line (run inside the toolbox).
# The root file system is the host's /, over virtio-9p, behind its own PCIe root port
# (at slot 0x1e, after the functions' ports, so their bus numbers do not move: 01 for
# the first function; the emulator's control channels sit at 0x1d the same way) with
# the PM capability's No_Soft_Reset set: a system suspend (tests/scenarios/63-suspend.sh)
# then leaves the device as it is (virtio_pci_suspend), where a device without it is
# reset, and virtio-9p, which has no restore, would hang every file access after the
# resume (seen: the guest stopped at "PM: suspend exit").
qemu_cmd() {
	local accel=$1 append=$2; shift 2
	local cpu=max
	[ "$accel" = kvm ] && cpu=host
	echo qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -smp 2 -m $MEM \
		-object memory-backend-memfd,id=mem,size=$MEM,share=on \
		-machine q35,memory-backend=mem \
		-kernel "$KB/arch/x86/boot/bzImage" \
		-append "'$append'" \
		-fsdev local,id=rootfs,path=/,security_model=none,readonly=on \
		-device pcie-root-port,id=rp9p,chassis=99,addr=0x1e \
		-device virtio-9p-pci,fsdev=rootfs,mount_tag=rootfs,bus=rp9p,x-pcie-pm-no-soft-reset=on \
		-display none -no-reboot ${MLX5RS_QEMU_PLUGIN:+-plugin "$MLX5RS_QEMU_PLUGIN"} "$@"
}

KUNIT_GLOB='mlx5_rs*'
[ "${MLX5RS_KUNIT:-1}" = 0 ] && KUNIT_GLOB=none
# log_buf_len: a kernel log ring that no boot fills (the config's is 256 KiB; the
# data-path boot of make check logs more, make soak's 100 recovery cycles ~1 MB; 4 MiB
# of text cost ~18 MiB of guest memory with the ring's metadata).
# The scenarios read the log since a line count (dmesg_mark): once the ring wraps,
# the count no longer points at the mark, and checks of what was logged fail (make
# soak's 96-upstream-recover after the recovery cycles) or pass on nothing.
BASE_APPEND="${MLX5RS_QEMU_PLUGIN:+nokaslr }console=ttyS0 log_buf_len=4M page_owner=on kunit.filter_glob=$KUNIT_GLOB root=rootfs rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose ro panic=-1 oops=panic mlx5rs.repo=$REPO mlx5rs.kbuild=$KB init=$REPO/tests/guest/init.sh"

choose_accel() {
	if [ -n "${MLX5RS_ACCEL:-}" ]; then echo "$MLX5RS_ACCEL"; return; fi
	if [ ! -w /dev/kvm ]; then echo tcg; return; fi
	local probe=$CACHE/kernel/accel-probe-$(basename "$KB")
	if [ ! -f "$probe" ]; then
		log "probing whether KVM can run the test guest (once; cached in $probe)"
		local plog=$RUNDIR/kvm-probe.log
		# shellcheck disable=SC2046
		in_toolbox timeout -k 5 60 /bin/sh -c "$(qemu_cmd kvm "$BASE_APPEND mlx5rs.run=tests/guest/kvm-probe.sh") -serial stdio" \
			</dev/null >"$plog" 2>&1 || true
		if grep -q 'MLX5RS-KVM-PROBE-OK' "$plog"; then echo kvm >"$probe"; else
			echo tcg >"$probe"
			{ echo "# $(grep -m1 -E 'KVM internal error|emulation failure|error' "$plog" || echo 'no guest output within 60 s')"; } >>"$probe"
		fi
	fi
	head -n1 "$probe"
}
ACCEL=$(choose_accel)
[ "$ACCEL" = tcg ] && [ -w /dev/kvm ] && log "accelerator: TCG (KVM probe failed: $(sed -n 2p "$CACHE/kernel/accel-probe-$(basename "$KB")" | cut -c3-))"
[ "$ACCEL" = kvm ] && log "accelerator: KVM (probe boot succeeded)"
[ -w /dev/kvm ] || log "accelerator: TCG (no /dev/kvm)"

# fn_sfx I: the file-name suffix of function I ("" for function 0, else I).
fn_sfx() { [ "$1" = 0 ] || echo "$1"; }
EMU_LOGS=()
DEV_ARGS=()
if [ "$NO_EMU" = 0 ]; then
	EMU_BIN=${MLX5RS_EMU_BIN:-$CARGO_TARGET_DIR/release/mlx5-emu}
	if [ -z "${MLX5RS_EMU_BIN:-}" ]; then
		(cd "$REPO" && cargo build -q --release -p mlx5-emu) || die "building the emulator failed"
	fi
	for ((i = 0; i < FUNCTIONS; i++)); do
		x=$(fn_sfx $i)
		fn_args=()
		[ -n "${FN_EMU_ARGS[$i]}" ] && mapfile -t fn_args < <(printf '%s' "${FN_EMU_ARGS[$i]}")
		"$EMU_BIN" --socket "$RUNDIR/emu$x.sock" --control "$RUNDIR/ctl$x.sock" "${EMU_ARGS[@]}" "${fn_args[@]}" \
			>"$RUNDIR/emu$x.log" 2>&1 &
		EMU_PIDS+=($!)
		EMU_LOGS+=("$RUNDIR/emu$x.log")
	done
	for ((i = 0; i < FUNCTIONS; i++)); do
		x=$(fn_sfx $i)
		for _ in $(seq 100); do [ -S "$RUNDIR/emu$x.sock" ] && [ -S "$RUNDIR/ctl$x.sock" ] && break; sleep 0.1; done
		[ -S "$RUNDIR/emu$x.sock" ] || { cat "$RUNDIR/emu$x.log" >&2; die "emulator $i did not start within 10 s"; }
	done
	# Each function behind its own PCIe root port, so it has a real link (upstream
	# reads its speed); the control channels share one virtio-serial controller.
	for ((i = 0; i < FUNCTIONS; i++)); do
		x=$(fn_sfx $i)
		# x-speed=5: a root port of at most 5 GT/s, so that Linux's wait after a
		# secondary bus reset (upstream's sync reset, 99-sync-reset) reads the
		# device below instead of waiting for Data Link Layer Link Active, which QEMU's
		# root port advertises (LNKCAP DLLLARC above 2.5 GT/s) but never sets for a
		# device present at boot (measured: LNKSTA 0x0103; pci_bridge_wait_for_secondary_bus
		# then fails the reset with "Link Active not set in 100 msec").
		DEV_ARGS+=(-device "pcie-root-port,id=rp$i,chassis=$((i + 1)),x-speed=5"
			-device "'{\"driver\":\"vfio-user-pci\",\"bus\":\"rp$i\",\"socket\":{\"type\":\"unix\",\"path\":\"$RUNDIR/emu$x.sock\"}}'")
	done
	# Behind a root port with No_Soft_Reset, as the root file system's device (see
	# qemu_cmd): a system suspend resets a device without it, and the control
	# channels' next request after the resume then never got a reply.
	DEV_ARGS+=(-device pcie-root-port,id=rpser,chassis=98,addr=0x1d
		-device virtio-serial-pci,bus=rpser,x-pcie-pm-no-soft-reset=on)
	for ((i = 0; i < FUNCTIONS; i++)); do
		x=$(fn_sfx $i)
		DEV_ARGS+=(-chardev "socket,id=emuctl$x,path=$RUNDIR/ctl$x.sock"
			-device "virtserialport,chardev=emuctl$x,name=mlx5emu$x.ctl")
	done
fi

if [ "$SHELL_MODE" = 1 ]; then
	log "interactive guest shell (Ctrl-A X quits QEMU); emulator log(s): ${EMU_LOGS[*]}"
	in_toolbox /bin/sh -c "$(qemu_cmd "$ACCEL" "$BASE_APPEND mlx5rs.shell=1" "${DEV_ARGS[@]}") -serial mon:stdio"
	exit 0
fi

[ -n "$RUN_SCRIPTS" ] || die "vm.sh: nothing to run (--run or --shell)"
log "booting ($ACCEL, $FUNCTIONS function(s)$([ "$WIRED" = 1 ] && echo ', wired')) to run $RUN_SCRIPTS; console: $LOGF"
T0=$(date +%s)
set +e
: >"$LOGF"
# Own process group, so cleanup can kill QEMU whatever wraps it.
setsid "$REPO/tests/vm/in-toolbox" timeout -k 10 "$TIMEOUT" /bin/sh -c \
	"$(qemu_cmd "$ACCEL" "$BASE_APPEND mlx5rs.run=$RUN_SCRIPTS" "${DEV_ARGS[@]}") -serial stdio" \
	</dev/null >"$LOGF" 2>&1 &
QEMU_PID=$!
tail -n +1 -f --pid="$QEMU_PID" "$LOGF" &
TAIL_PID=$!
wait "$QEMU_PID"
QEMU_PID=""
sleep 0.3
set -e
ELAPSED=$(($(date +%s) - T0))
# What the guest cannot see after its own power-off (the PCI shutdown path) is checked
# here, from the emulator's final statistics; the lines go to the console log the judge reads.
wait "$TAIL_PID" 2>/dev/null || true
if [ "$NO_EMU" = 0 ]; then
	"$REPO/tests/vm/shutdown-verdict.sh" "$LOGF" "${EMU_LOGS[@]}" | tee -a "$LOGF"
fi

"$REPO/tests/vm/judge.sh" "$LOGF" "$ELAPSED"
