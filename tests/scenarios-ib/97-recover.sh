# Scenario: a function recovers by itself from a firmware fatal error (issue 24, the
# driver's part), on both drivers with the same expectation (upstream mlx5_core +
# mlx5_ib first: the oracle), then ours-only cases of a recovery that cannot end well.
# Knob (environment; the default is what make check runs):
#  - REC_DRIVERS: the drivers, in order (default "upstream mlx5_rs").
# Per driver (shared):
#   a process holds mlx5_0 open (tests/guest/ib-uverbs.py hold: a PD, then waits for
#   an async event); the emulator's fatal health syndrome with reset-required is set;
#   the process sees IB_EVENT_DEVICE_FATAL (8) and ends; the driver recovers
#   ("health recovery succeeded", upstream's health.c line, which ours prints too),
#   mlx5_0 is back with its port ACTIVE, a new process can open it and ibv_devinfo
#   works; the emulator counts one firmware restart, asked for under the VSC
#   software-reset semaphore, which and whose gateway are free again (upstream's
#   mlx5_error_sw_reset); no kernel warning. The time from the fatal error to port
#   ACTIVE is printed ("rec: <driver> fatal->ACTIVE N ms", the issue's figure).
# Per driver, devlink's part (shared), on the function just recovered: a second fatal
#   error right after a recovery is refused within fw_fatal's grace period (devlink's
#   rule; upstream's 60 s on a PF):
#   the driver unloads the function ("Driver is in error state. Unloading", upstream's
#   health.c line, which ours prints too), mlx5_0 goes, no second firmware restart,
#   the reporter is in error state; `devlink health recover` then brings the function
#   back (one firmware restart, mlx5_0 ACTIVE, the reporter healthy, ibv_devinfo
#   works), and `devlink dev reload` (driver_reinit) unloads and loads it again
#   (mlx5_0 ACTIVE, no firmware restart). Unload: every object destroyed, every page
#   returned, no new violation or DMA error since the first part's load.
# Per driver, a busy function (shared): a fatal error while two processes storm the
#   command interface (tests/guest/ib-storm.c: PD, MR, CQ, QP created and destroyed in
#   a loop) and the driver works through 200 page requests the emulator raised just
#   before (give and take, 64 pages each): the function recovers (one firmware
#   restart, mlx5_0 ACTIVE, ibv_devinfo works), the storm is stopped, no kernel
#   warning; unload: every object destroyed, every page returned.
# Per driver, the device away and back (shared): every BAR read returns all ones
#   (the emulator's surprise_removal) while a process holds mlx5_0: the health poll
#   finds fatal sensor 1 (PCI_COMM_ERR), the process sees IB_EVENT_DEVICE_FATAL; 3 s
#   later the firmware restarts (as a reset beyond the link would restart it) and the
#   device answers again: the driver waits for PCI reads to work (upstream's
#   mlx5_health_wait_pci_up), recovers ("health recovery succeeded"), mlx5_0 is back
#   ACTIVE, a new process opens it, ibv_devinfo works; no kernel warning; unload:
#   every object destroyed, every page returned, no new violation or DMA error
#   (prints "rec: <driver> away->ACTIVE N ms").
# Ours only (mlx5_rs; upstream takes 2 h to give up):
#   no-fw      the firmware does not support the software reset (init_seg
#              fw_reset_supported false): the health counter stays stopped, the
#              recovery fails at wait_vital, logged with that cause; no IB device is
#              left, rmmod works, the dead function's pages were freed after bus
#              mastering went off;
#   stage-fails a bring-up stage of the recovery fails (the emulator answers the
#              recovery's INIT_HCA with status BAD_PARAM, syndrome 0x5a5a01): the
#              recovery fails, logged with the command, its status and syndrome; no
#              IB device is left, fw_fatal is in error; `devlink health recover`
#              then brings the function back (mlx5_0 ACTIVE, ibv_devinfo works) and
#              its unload destroys every object and returns every page;
#   rmmod-wait the firmware restart lasts 10 minutes (init_seg sw_reset_ms): the
#              recovery waits for it (pre-initializing); rmmod during that wait
#              returns within 30 s, the recovery says it stopped waiting;
#   unbind-wait the firmware restart lasts 8 s: a sysfs unbind during the recovery's
#              wait (it comes 1.5-3 s into it) does not deadlock: it waits for the
#              recovery (which holds the device lock; the time is printed, and it must
#              be a second or more, or the unbind did not meet the wait), then unloads
#              the recovered function (every object destroyed, every page returned);
#              binding again works.
# At the end of each case: no kernel warning; kmemleak is the runner's.
REC_DRIVERS=${REC_DRIVERS:-upstream mlx5_rs}
# REC_CASES: the cases to run (default all; a list of shared refused busy away no-fw
# stage-fails rmmod-wait unbind-wait, to rerun some by hand; refused runs only after
# shared, on the function it recovered).
REC_CASES=${REC_CASES:-all}
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail recover.device-present "no 15b3 function"; exit 1; }
d=/sys/class/infiniband/mlx5_0
T=recover
ib_scenario_start
module_deps
STORM=$(guest_prog ib-storm)
check $T.storm-build test -x "$STORM"

fatal() { emuctl '{"cmd":"health","syndrome":7,"ext_syndrome":4660,"rfr":true,"severity":2}' >/dev/null; }

shared() {
	p=$T.$drv
	# The baseline of each driver's part (another part's fault may leave its own).
	viol0=$(violations)
	dma0=$(emu_stat 'd["dma_errors"]')
	dmesg_mark
	load_driver "$drv" "$p"
	holder_start "$p"
	restarts0=$(emu_stat 'd["fw_reset"]["restarts"]')
	t0=$(now_ms)
	fatal
	holder_sees_fatal "$p"
	check "$p.recovered" wait_log 'health recovery succeeded' 180
	check "$p.mlx5_0-back-active" wait_for "$d/ports/1/state" "4: ACTIVE" 120
	t1=$(now_ms)
	echo "rec: $drv fatal->ACTIVE $((t1 - t0)) ms"
	holder_exited "$p"
	dmesg_since | grep -a -E 'mlx5|infiniband' | grep -a -v -E 'assert_var|KTAP' | head -n 50
	check "$p.fatal-detected" logged 'Fatal error 5 detected'
	# A new process opens the new device and allocates from it.
	check_reopen "$p"
	check "$p.one-fw-restart" test "$(emu_stat 'd["fw_reset"]["restarts"]')" = $((restarts0 + 1))
	check "$p.reset-under-semaphore" test "$(emu_stat 'd["fw_reset"]["without_semaphore"]')" = 0
	check "$p.semaphore-free" test "$(emu_stat 'd["vsc"]["sw_reset_holder"]')" = 0
	check "$p.gateway-free" test "$(emu_stat 'd["vsc"]["gw_holder"]')" = 0
	no_kernel_warning "$p"
}

restarts() { emu_stat 'd["fw_reset"]["restarts"]'; }
reporter_state() { # WANT: fw_fatal's state (healthy, error)
	devlink health show "pci/$bdf" reporter fw_fatal | grep -q "state $1"
}
gone() { # PATH: up to 60 s
	for _ in $(seq 300); do [ ! -e "$1" ] && return 0; sleep 0.2; done
	echo "$1 still there"
	return 1
}

# The device away and back, both drivers (the header).
away() {
	p=$T.$drv.away
	viol0=$(violations)
	dma0=$(emu_stat 'd["dma_errors"]')
	dmesg_mark
	load_driver "$drv" "$p"
	holder_start "$p"
	t0=$(now_ms)
	emuctl '{"cmd":"surprise_removal","enable":true}' >/dev/null
	check "$p.detected" wait_log 'Fatal error 1 detected' 60
	holder_sees_fatal "$p"
	sleep 3
	emuctl '{"cmd":"fw_reset"}' >/dev/null
	emuctl '{"cmd":"surprise_removal","enable":false}' >/dev/null
	check "$p.recovered" wait_log 'health recovery succeeded' 180
	check "$p.mlx5_0-back-active" wait_for "$d/ports/1/state" "4: ACTIVE" 120
	echo "rec: $drv away->ACTIVE $(($(now_ms) - t0)) ms (3 s away)"
	holder_exited "$p"
	dmesg_since | grep -a -E 'mlx5|infiniband' | grep -a -v -E 'assert_var|KTAP' | head -n 40
	check_reopen "$p"
	no_kernel_warning "$p"
	unload_driver "$drv" "$p"
	check_emu_clean "$p" "$viol0" "$dma0"
	emu_heal
}

# devlink's part, both drivers (the header), on the function the shared part
# recovered (no reload between them: a reload would start a new grace period). Ends
# with the driver unloaded and the emulator healed.
refused() {
	p=$T.$drv.refused
	dmesg_mark
	restarts0=$(restarts)
	fatal
	check "$p.second-refused" wait_log 'Driver is in error state. Unloading' 60
	check "$p.mlx5_0-gone" gone "$d"
	check "$p.no-second-restart" test "$(restarts)" = "$restarts0"
	check "$p.reporter-error" reporter_state error
	t0=$(now_ms)
	check "$p.recover" timeout 300 devlink health recover "pci/$bdf" reporter fw_fatal
	check "$p.recovered-active" wait_for "$d/ports/1/state" "4: ACTIVE" 120
	echo "rec: $drv devlink health recover -> ACTIVE $(($(now_ms) - t0)) ms"
	check "$p.recover-restarted-fw" test "$(restarts)" = $((restarts0 + 1))
	check "$p.reporter-healthy" reporter_state healthy
	check_ibv_devinfo "$p" mlx5_0
	t0=$(now_ms)
	check "$p.reload" timeout 300 devlink dev reload "pci/$bdf" action driver_reinit
	check "$p.reloaded-active" wait_for "$d/ports/1/state" "4: ACTIVE" 120
	echo "rec: $drv devlink dev reload -> ACTIVE $(($(now_ms) - t0)) ms"
	check "$p.reload-no-fw-restart" test "$(restarts)" = $((restarts0 + 1))
	dmesg_since | grep -a -E 'mlx5|infiniband|devlink' | grep -a -v -E 'assert_var|KTAP' | tail -n 40
	no_kernel_warning "$p"
	unload_driver "$drv" "$p"
	check_emu_clean "$p" "$viol0" "$dma0"
	emu_heal
}

# The busy function, both drivers (the header). Ends with the emulator healed.
busy() {
	p=$T.$drv.busy
	v0=$(violations)
	dmesg_mark
	load_driver "$drv" "$p"
	restarts0=$(restarts)
	timeout 900 "$STORM" mlx5_0 1000000 2 pd,mr,cq,qp >/tmp/rec.storm 2>&1 &
	sp=$!
	sleep 3
	check "$p.storm-running" kill -0 $sp
	emuctl '{"cmd":"page_requests","pattern":[64,-64],"count":200}' >/tmp/rec.preq
	check "$p.page-requests-raised" grep -q '"ok":true' /tmp/rec.preq
	fatal
	check "$p.recovered" wait_log 'health recovery succeeded' 180
	check "$p.active" wait_for "$d/ports/1/state" "4: ACTIVE" 120
	kill $sp 2>/dev/null
	wait $sp 2>/dev/null
	head -n 5 /tmp/rec.storm
	check "$p.one-fw-restart" test "$(restarts)" = $((restarts0 + 1))
	check_ibv_devinfo "$p" mlx5_0
	dmesg_since | grep -a -E 'mlx5|infiniband' | grep -a -v -E 'assert_var|KTAP' | tail -n 25
	no_kernel_warning "$p"
	unload_driver "$drv" "$p"
	check "$p.objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
	check "$p.pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	echo "rec: $drv busy: emulator violations $(($(violations) - v0)), page requests $(emu_stat 'd["pages"]["requests_outstanding"]') outstanding at the end"
	emu_heal
}

# Ours only: each case ends with the emulator healed (its reset forgets the knobs).

no_fw() {
	p=$T.mlx5_rs.no-fw
	dmesg_mark
	load_driver "$drv" "$p"
	emuctl '{"cmd":"init_seg","fw_reset_supported":false}' >/dev/null
	fatal
	check "$p.failed" wait_log 'health recovery failed' 120
	check "$p.cause-logged" logged 'wait vital failed'
	check "$p.reset-not-supported-logged" logged 'does not support a software reset'
	dmesg_since | grep -a -E 'mlx5|recovery' | grep -a -v assert_var | tail -n 20
	check "$p.no-ib-device" test ! -e "$d"
	check "$p.pages-freed-after-stop" logged 'firmware pages freed without reclaim'
	no_kernel_warning "$p"
	unload_driver "$drv" "$p"
	emu_heal
}

stage_fails() {
	p=$T.mlx5_rs.stage-fails
	dmesg_mark
	load_driver "$drv" "$p"
	# INIT_HCA is sent once per bring-up: the next one is the recovery's.
	emuctl '{"cmd":"inject","opcode":"INIT_HCA","action":"status","status":3,"syndrome":5921281,"count":1}' >/dev/null
	fatal
	check "$p.failed" wait_log 'health recovery failed' 120
	check "$p.command-logged" logged 'INIT_HCA(0x102) op_mod(0x0) failed, status BAD_PARAM_ERR(0x3), syndrome (0x5a5a01)'
	dmesg_since | grep -a -E 'mlx5|recovery' | grep -a -v assert_var | tail -n 20
	check "$p.no-ib-device" test ! -e "$d"
	check "$p.reporter-error" reporter_state error
	no_kernel_warning "$p"
	emuctl '{"cmd":"clear_injections"}' >/dev/null
	check "$p.recover" timeout 300 devlink health recover "pci/$bdf" reporter fw_fatal
	check "$p.recovered-active" wait_for "$d/ports/1/state" "4: ACTIVE" 120
	check "$p.reporter-healthy" reporter_state healthy
	check_ibv_devinfo "$p" mlx5_0
	no_kernel_warning "$p"
	unload_driver "$drv" "$p"
	check "$p.objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
	check "$p.pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	emu_heal
}

rmmod_wait() {
	p=$T.mlx5_rs.rmmod-wait
	dmesg_mark
	load_driver "$drv" "$p"
	emuctl '{"cmd":"init_seg","sw_reset_ms":600000}' >/dev/null
	fatal
	check "$p.waiting" wait_log 'firmware pre-initializing' 60
	t0=$(now_ms)
	unload_driver "$drv" "$p"
	t1=$(now_ms)
	echo "rec: rmmod during the recovery's firmware wait: $((t1 - t0)) ms"
	check "$p.rmmod-fast" test $((t1 - t0)) -lt 30000
	check "$p.stopped-waiting" logged 'stop waiting: the device is being removed'
	check "$p.failed-logged" logged 'health recovery failed'
	no_kernel_warning "$p"
	emu_heal
}

unbind_wait() {
	p=$T.mlx5_rs.unbind-wait
	dmesg_mark
	load_driver "$drv" "$p"
	emuctl '{"cmd":"init_seg","sw_reset_ms":8000}' >/dev/null
	fatal
	check "$p.waiting" wait_log 'firmware pre-initializing' 60
	t0=$(now_ms)
	check "$p.unbind" timeout 240 sh -c "echo $bdf >/sys/bus/pci/devices/$bdf/driver/unbind"
	t1=$(now_ms)
	echo "rec: unbind during the recovery's firmware wait: $((t1 - t0)) ms (it waits for the recovery, which holds the device lock)"
	check "$p.unbind-met-the-wait" test $((t1 - t0)) -ge 1000
	check "$p.recovery-ended-first" logged 'health recovery succeeded'
	check "$p.unbound" test ! -e "/sys/bus/pci/devices/$bdf/driver"
	check "$p.objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
	check "$p.pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	check "$p.rebind" sh -c "echo $bdf >/sys/bus/pci/drivers/mlx5_rs/bind"
	check "$p.rebound-active" wait_for "$d/ports/1/state" "4: ACTIVE" 120
	no_kernel_warning "$p"
	unload_driver "$drv" "$p"
	emu_heal
}

# want CASE: whether REC_CASES runs CASE.
want() { [ "$REC_CASES" = all ] || case " $REC_CASES " in *" $1 "*) true ;; *) false ;; esac; }
for drv in $REC_DRIVERS; do
	t=$(now_ms)
	if want shared; then
		shared
		if want refused; then
			refused
		else
			unload_driver "$drv" "$T.$drv"
			check_emu_clean "$T.$drv" "$viol0" "$dma0"
			emu_heal
		fi
	fi
	want busy && busy
	want away && away
	if [ "$drv" = mlx5_rs ]; then
		want no-fw && no_fw
		want stage-fails && stage_fails
		want rmmod-wait && rmmod_wait
		want unbind-wait && unbind_wait
	fi
	echo "rec: $drv secs=$((($(now_ms) - t) / 1000))"
done
[ "$FAILED" = 0 ]
