# Endurance of mlx5_rs's recovery (issue 24: "100 fatal-error/recovery cycles with
# nothing lost"; make soak, tests/guest/soak.sh): mlx5_rs loaded, its devlink fw_fatal
# reporter set to grace_period 0 (no grace period between automatic recoveries), then
# REC_CYCLES (default 100) times: the emulator's fatal health syndrome with
# reset-required (as scenario 97 sets it), the driver's "health recovery succeeded"
# line for that cycle, mlx5_0's port ACTIVE again. Asserted: every cycle recovered
# within 120 s; the emulator counted exactly one firmware restart per cycle, each
# asked for under the VSC software-reset semaphore, semaphore and gateway free at the
# end; after each recovery the emulator's live objects and held pages are those of the
# first load (nothing a recovery leaves behind accumulates); no recovery failed or was
# refused, no kernel warning; rmmod destroys every object and returns every page, no
# new violation or DMA error (kmemleak: the runner's; kernel warnings: the judge's,
# from the whole console). Prints each 10th cycle's time
# from the fatal error to port ACTIVE and the median of all.
. "$MLX5RS_REPO/tests/guest/lib.sh"
N=${REC_CYCLES:-100}
T=recover-cycles
bdf=$(mlx_bdf) || { fail $T.device-present "no 15b3 function"; exit 1; }
d=/sys/class/infiniband/mlx5_0
viol0=$(violations)
dma0=$(emu_stat 'd["dma_errors"]')
active() { [ "$(cat "$d/ports/1/state" 2>/dev/null)" = "4: ACTIVE" ]; }
wait_active() { # up to 120 s
	for _ in $(seq 1200); do active && return 0; sleep 0.1; done
	return 1
}
# Whether the driver logged a successful recovery after this cycle's marker (written to
# the kernel log before the fault; a marker, not a line count: the kernel's log ring
# wraps within 100 cycles).
recovered_since_mark() { dmesg | sed -n "/$T: cycle $1 fault\$/,\$p" | grep -a -q 'health recovery succeeded'; }

check $T.insmod insmod "$KO"
check $T.mlx5_0-active wait_active
check $T.no-grace-period devlink health set "pci/$bdf" reporter fw_fatal grace_period 0
sleep 2 # the first load's page requests settle
objects0=$(emu_stat 'd["objects"]["total"]')
pages0=$(emu_stat 'd["pages"]["held"]')
restarts0=$(emu_stat 'd["fw_reset"]["restarts"]')
echo "$T: after the load: $objects0 emulator objects, $pages0 pages held"
i=1 bad=0
: >/tmp/rec-cycles.ms
while [ $i -le "$N" ]; do
	echo "$T: cycle $i fault" >/dev/kmsg
	t0=$(now_ms)
	emuctl '{"cmd":"health","syndrome":7,"ext_syndrome":4660,"rfr":true,"severity":2}' >/dev/null
	# This cycle's success line, then the new device's port (the old one may still
	# read ACTIVE until the recovery unregisters it).
	_w=0
	while ! recovered_since_mark $i && [ $_w -lt 600 ]; do sleep 0.2; _w=$((_w + 1)); done
	if ! recovered_since_mark $i || ! wait_active; then
		fail "$T.cycle-$i" "no 'health recovery succeeded' and port ACTIVE within 120 s"
		bad=1
		break
	fi
	ms=$(($(now_ms) - t0))
	echo "$ms" >>/tmp/rec-cycles.ms
	if dmesg | tail -n 400 | grep -a -q -E 'health recovery failed|recovery refused'; then
		fail "$T.cycle-$i.not-failed-or-refused" "$(dmesg | grep -a -E 'health recovery failed|recovery refused' | tail -n 1)"
		bad=1
		break
	fi
	# (Page requests of the new function may still be under way: up to 10 s.)
	_w=0
	while :; do
		o=$(emu_stat 'd["objects"]["total"]')
		p=$(emu_stat 'd["pages"]["held"]')
		{ [ "$o" = "$objects0" ] && [ "$p" = "$pages0" ]; } || [ $_w -ge 100 ] && break
		sleep 0.1
		_w=$((_w + 1))
	done
	if [ "$o" != "$objects0" ] || [ "$p" != "$pages0" ]; then
		fail "$T.cycle-$i.same-state" "after recovery $i: $o objects (first load $objects0), $p pages held (first load $pages0)"
		bad=1
		break
	fi
	[ $((i % 10)) = 0 ] && echo "$T: cycle $i: fatal -> port ACTIVE $ms ms; $o objects, $p pages held"
	i=$((i + 1))
done
[ $bad = 0 ] && pass "$T.every-cycle-recovered"
echo "$T: $((i - 1)) of $N cycles; fatal -> port ACTIVE median $(sort -n /tmp/rec-cycles.ms | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "?") }') ms"
check $T.one-restart-per-cycle test "$(emu_stat 'd["fw_reset"]["restarts"]')" = $((restarts0 + i - 1))
check $T.resets-under-semaphore test "$(emu_stat 'd["fw_reset"]["without_semaphore"]')" = 0
check $T.semaphore-free test "$(emu_stat 'd["vsc"]["sw_reset_holder"]')" = 0
check $T.gateway-free test "$(emu_stat 'd["vsc"]["gw_holder"]')" = 0
# (Kernel warnings: the judge reads the whole console; the log ring has wrapped.)
check $T.rmmod timeout 120 rmmod mlx5_rs
check $T.objects-destroyed test "$(emu_stat 'd["objects"]["total"]')" = 0
check $T.pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check $T.no-new-violations test "$(violations)" = "$viol0"
check $T.no-new-dma-errors test "$(emu_stat 'd["dma_errors"]')" = "$dma0"
[ "$FAILED" = 0 ]
