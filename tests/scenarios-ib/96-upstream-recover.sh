# Scenario: upstream mlx5_core + mlx5_ib recover by themselves from a firmware fatal
# error with reset-required (issue 24, the emulator's part): the health poll detects it,
# upstream takes the software-reset semaphore through the VSC gateway, asks for the
# firmware reset (nic_interface SW_RESET), waits for DISABLED, unloads, resets the slot,
# waits for the health counter and loads the function again; mlx5_0 comes back with
# its port ACTIVE. Every expectation is upstream's own log line or the emulator's
# ledger: nothing here is our driver's. Run twice (the second recovery after
# devlink's grace period would be refused, so it runs after a reload).
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail upstream-recover.device-present "no 15b3 function"; exit 1; }
d=/sys/class/infiniband/mlx5_0
T=upstream-recover
# The emulator's violation and DMA-error counts are the boot's (a reset between
# scenarios keeps them): this scenario is judged by what it adds.
viol0=$(violations)
dma0=$(emu_stat 'd["dma_errors"]')

logged() { dmesg | tail -n +$((MARK + 1)) | grep -a -q "$1"; }
wait_log() { # PATTERN: up to 180 s
	for _ in $(seq 180); do logged "$1" && return 0; sleep 1; done
	echo "no '$1' in the log"
	return 1
}

load() {
	timeout 300 modprobe mlx5_core
	timeout 300 modprobe mlx5_ib
	check "$T.$1.mlx5_0-active" wait_for "$d/ports/1/state" "4: ACTIVE" 120
}

recover() { # NAME
	n=$1
	restarts0=$(emu_stat 'd["fw_reset"]["restarts"]')
	dmesg_mark
	t0=$(now_ms)
	emuctl '{"cmd":"health","syndrome":7,"ext_syndrome":4660,"rfr":true,"severity":2}' >/dev/null
	check "$T.$n.recovered" wait_log 'health recovery succeeded'
	t1=$(now_ms)
	check "$T.$n.mlx5_0-back" wait_for "$d/ports/1/state" "4: ACTIVE" 120
	t2=$(now_ms)
	echo "$T.$n: fatal -> 'health recovery succeeded' $((t1 - t0)) ms, -> mlx5_0 port ACTIVE $((t2 - t0)) ms"
	dmesg_since | grep -a -E 'mlx5|infiniband' | head -n 60
	# Upstream's recovery, step by step (health.c, main.c).
	check "$T.$n.fatal-detected" logged 'Fatal error 5 detected'
	check "$T.$n.fw-reset-issued" logged 'Issuing FW Reset'
	check "$T.$n.recovery-started" logged 'starting health recovery flow'
	check "$T.$n.slot-reset" logged 'mlx5_pci_slot_reset Device state = .* result = 5, recovered'
	check "$T.$n.no-gw-failure" sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a -E 'Failed to set gw space|Failed to lock SW reset semaphore|NIC IFC still|recovery failed|wait vital failed'"
	check "$T.$n.no-kernel-warning" sh -c "! dmesg | tail -n +$((MARK + 1)) | grep -a -E 'WARNING:|BUG:|Call Trace'"
	# The emulator: one firmware restart, asked for under the semaphore, which is free again.
	check "$T.$n.one-restart" test "$(emu_stat 'd["fw_reset"]["restarts"]')" = $((restarts0 + 1))
	check "$T.$n.reset-under-semaphore" test "$(emu_stat 'd["fw_reset"]["without_semaphore"]')" = 0
	check "$T.$n.semaphore-free" test "$(emu_stat 'd["vsc"]["sw_reset_holder"]')" = 0
	check "$T.$n.gateway-free" test "$(emu_stat 'd["vsc"]["gw_holder"]')" = 0
	check "$T.$n.function-enabled" test "$(emu_stat 'd["function"]["enabled"]')" = True
	check "$T.$n.rdma-link" sh -c "rdma link show mlx5_0/1 | grep -q 'state ACTIVE'"
	check_ibv_devinfo "$T.$n" mlx5_0
}

unload() { # NAME
	check "$T.$1.rmmod-mlx5_ib" modprobe -r mlx5_ib
	check "$T.$1.objects-destroyed" test "$(emu_stat 'd["objects"]["total"]')" = 0
	[ -e /sys/bus/pci/devices/$bdf/driver ] && echo "$bdf" >/sys/bus/pci/devices/$bdf/driver/unbind
	check "$T.$1.rmmod-mlx5_core" modprobe -r mlx5_core
	check "$T.$1.all-pages-returned" test "$(emu_stat 'd["pages"]["held"]')" = 0
	echo "$T.$1: emulator: $(emu_stat 'd["uar_doorbells_after_stop"]') UAR doorbells after the restart, violations: $(emu_stat 'd["recent_violations"]')"
	check "$T.$1.no-violations" test "$(violations)" = "$viol0"
	check "$T.$1.dma-errors-0" test "$(emu_stat 'd["dma_errors"]')" = "$dma0"
}

load first
recover first
unload first
load second
recover second
unload second
[ "$FAILED" = 0 ]
