# Scenario: PCI errors of the function reported through AER (issue 24, "PCI error
# handling"), on both drivers with the same expectation (upstream mlx5_core + mlx5_ib
# first: the oracle). The errors are injected with the kernel's aer_inject
# (/dev/aer_inject, CONFIG_PCIEAER_INJECT): the function has an AER capability (the
# emulator's config space, as a ConnectX-5's) and sits under QEMU's pcie-root-port rp0,
# whose AER service (portdrv) takes the injected error as a real one: the root port's
# error message, the function's status registers, pcie_do_recovery.
# Knob (environment; the default is what make check runs):
#  - AER_DRIVERS: the drivers, in order (default "upstream mlx5_rs").
# Per driver (shared):
#   correctable  Receiver Error (correctable status bit 0): logged by the AER service
#                as corrected; the driver's handlers are not called: a process holding
#                mlx5_0 sees no event, no PCI reset reaches the device, mlx5_0 stays
#                ACTIVE.
#   nonfatal     Completion Timeout (uncorrectable bit 14, non-fatal by the default
#                severity): error_detected (io_normal) unloads the function and asks
#                for a reset; the root port's secondary bus reset reaches the device
#                (the emulator counts a PCI reset); slot_reset waits for the firmware,
#                resume loads the function again. The holder sees DEVICE_FATAL (8) and
#                ends, mlx5_0 is back ACTIVE ("device recovery successful", err.c's
#                line), a new process opens it, ibv_devinfo works.
#   fatal        Malformed TLP (bit 18, fatal by default): the same through io_frozen.
#   Then no kernel warning; unload: every object destroyed, every page returned, no new
#   violation or DMA error. The time from the injection to port ACTIVE is printed
#   ("aer: <driver> <case> ->ACTIVE N ms").
AER_DRIVERS=${AER_DRIVERS:-upstream mlx5_rs}
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail aer.device-present "no 15b3 function"; exit 1; }
d=/sys/class/infiniband/mlx5_0
T=aer
ib_scenario_start
viol0=$(violations)
dma0=$(emu_stat 'd["dma_errors"]')

check $T.inject-device test -c /dev/aer_inject
# The function's AER capability is what aer_inject needs (dev->aer_cap).
check $T.function-has-aer sh -c "lspci -s $bdf -vv 2>/dev/null | grep -q 'Advanced Error Reporting' || dmesg | grep -a -q 'AER: enabled'"

pci_resets() { emu_stat 'd["sync_reset"]["pci_resets"]'; }

# inject UNCOR COR: one error of the function through /dev/aer_inject (struct
# aer_error_inj: bus, dev, fn, pad, uncor_status, cor_status, header_log0..3, domain).
inject() {
	python3 - "$bdf" "$1" "$2" <<'EOF'
import struct, sys
dom, bus, df = sys.argv[1].split(":")
dev, fn = df.split(".")
b = struct.pack("<BBBxIIIIIII", int(bus, 16), int(dev, 16), int(fn, 16),
                int(sys.argv[2], 0), int(sys.argv[3], 0), 0, 0, 0, 0, int(dom, 16))
with open("/dev/aer_inject", "wb", buffering=0) as f:
    f.write(b)
EOF
}

correctable() {
	p=$T.$drv.correctable
	holder_start "$p"
	r0=$(pci_resets)
	check "$p.injected" inject 0 0x1
	check "$p.logged" wait_log 'severity=Correctable' 30
	sleep 2
	check "$p.no-event" sh -c "! grep -q '^event' $HOLD_OUT"
	check "$p.holder-alive" kill -0 "$HOLD_PID"
	check "$p.no-pci-reset" test "$(pci_resets)" = "$r0"
	check "$p.mlx5_0-active" wait_for "$d/ports/1/state" "4: ACTIVE" 120
	holder_stop
}

# uncorrectable CASE STATUS
uncorrectable() {
	p=$T.$drv.$1
	dmesg_mark
	holder_start "$p"
	r0=$(pci_resets)
	t0=$(now_ms)
	check "$p.injected" inject "$2" 0
	holder_sees_fatal "$p"
	check "$p.recovered" wait_log 'device recovery successful' 180
	check "$p.mlx5_0-back-active" wait_for "$d/ports/1/state" "4: ACTIVE" 120
	echo "aer: $drv $1 ->ACTIVE $(($(now_ms) - t0)) ms"
	holder_exited "$p"
	dmesg_since | grep -a -E 'mlx5|infiniband|AER|pcieport|aer_inject' | grep -a -v -E 'assert_var|KTAP' | head -n 60
	check "$p.one-pci-reset" test "$(pci_resets)" = $((r0 + 1))
	check_reopen "$p"
}

for drv in $AER_DRIVERS; do
	dmesg_mark
	M0=$MARK
	load_driver "$drv" "$T.$drv"
	correctable
	uncorrectable nonfatal 0x4000
	uncorrectable fatal 0x40000
	no_kernel_warning "$T.$drv" "$M0"
	unload_driver "$drv" "$T.$drv"
	check_emu_clean "$T.$drv" "$viol0" "$dma0"
	emuctl '{"cmd":"reset"}' >/dev/null
done
