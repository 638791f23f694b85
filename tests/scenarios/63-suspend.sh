# Scenario: system suspend and resume of the function (issue 24), on both drivers with
# the same expectation (upstream mlx5_core + mlx5_ib first: the oracle). The guest
# cannot enter real S3 and wake (QEMU gives it no wakeup), so the kernel's PM test
# mode does it (/sys/power/pm_test, CONFIG_PM_DEBUG in tests/kernel/mlx5-rs.config):
# `echo mem > /sys/power/state` freezes the processes, runs every device's suspend
# phases up to the platform's (level "platform": suspend, suspend_late, suspend_noirq
# and the ACPI preparation), waits PM_DELAY seconds, and resumes them all. Upstream's
# suspend unloads the function (mlx5_suspend → mlx5_unload_one: mlx5_ib removed, pages
# reclaimed, DISABLE_HCA) and its resume loads it again (mlx5_resume → mlx5_load_one).
# Knobs (environment; the defaults are what make check runs):
#  - PM_DRIVERS: the drivers, in order (default "upstream mlx5_rs");
#  - PM_LEVEL: the pm_test level (default "platform"; "devices" stops earlier);
#  - PM_DELAY: seconds suspended (default 1; the kernel's own default is 5).
# Per driver: a process holds mlx5_0 open (a PD, waiting for an async event); the
#   suspend and resume succeed (the write returns 0, no "failed to suspend/resume" of
#   the function in the log); the process sees IB_EVENT_DEVICE_FATAL (8) after the
#   thaw and ends; mlx5_0 is back with its port ACTIVE, a new process opens it and
#   ibv_devinfo works; the emulator saw the HCA disabled and enabled once more, every
#   page taken back while suspended and given again, and no firmware restart nor PCI
#   reset (the firmware kept power). No kernel warning. Unload: every object
#   destroyed, every page returned, no new violation or DMA error. The time from the
#   write to port ACTIVE is printed ("pm: <driver> suspend+resume->ACTIVE N ms").
PM_DRIVERS=${PM_DRIVERS:-upstream mlx5_rs}
PM_LEVEL=${PM_LEVEL:-platform}
PM_DELAY=${PM_DELAY:-1}
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail pm.device-present "no 15b3 function"; exit 1; }
T=pm
ib_scenario_start

check $T.pm-test-available grep -q "$PM_LEVEL" /sys/power/pm_test
check $T.mem-state-available grep -q mem /sys/power/state
delay0=$(cat /sys/module/suspend/parameters/pm_test_delay)
echo "$PM_DELAY" >/sys/module/suspend/parameters/pm_test_delay

restarts() { emu_stat 'd["fw_reset"]["restarts"]'; }
pci_resets() { emu_stat 'd["sync_reset"]["pci_resets"]'; }

for drv in $PM_DRIVERS; do
	p=$T.$drv
	viol0=$(violations)
	dma0=$(emu_stat 'd["dma_errors"]')
	dmesg_mark
	M0=$MARK
	load_driver "$drv" "$p"
	holder_start "$p"
	enables0=$(cmds_ok ENABLE_HCA)
	disables0=$(cmds_ok DISABLE_HCA)
	restarts0=$(restarts)
	resets0=$(pci_resets)
	echo "$PM_LEVEL" >/sys/power/pm_test
	t0=$(now_ms)
	check "$p.suspend-resume" sh -c 'echo mem >/sys/power/state'
	echo none >/sys/power/pm_test
	holder_sees_fatal "$p"
	check "$p.mlx5_0-back-active" wait_for /sys/class/infiniband/mlx5_0/ports/1/state "4: ACTIVE" 120
	echo "pm: $drv suspend+resume->ACTIVE $(($(now_ms) - t0)) ms"
	holder_exited "$p"
	dmesg_since | grep -a -E 'mlx5|infiniband|PM:|suspend|resume' | grep -a -v -E 'assert_var|KTAP' | head -n 60
	check "$p.no-pm-failure" sh -c "! dmesg | tail -n +$((M0 + 1)) | grep -a -E 'failed to (suspend|resume)|dpm_run_callback|PM: Some devices failed'"
	check "$p.hca-disabled-once" test "$(cmds_ok DISABLE_HCA)" = $((disables0 + 1))
	check "$p.hca-enabled-once" test "$(cmds_ok ENABLE_HCA)" = $((enables0 + 1))
	check "$p.no-fw-restart" test "$(restarts)" = "$restarts0"
	check "$p.no-pci-reset" test "$(pci_resets)" = "$resets0"
	check_reopen "$p"
	no_kernel_warning "$p" "$M0"
	unload_driver "$drv" "$p"
	check_emu_clean "$p" "$viol0" "$dma0"
	emuctl '{"cmd":"reset"}' >/dev/null
done
echo none >/sys/power/pm_test
echo "$delay0" >/sys/module/suspend/parameters/pm_test_delay
