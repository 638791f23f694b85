# Scenario: device faults on the data path under upstream mlx5_core + mlx5_ib (the
# expectation is upstream's behaviour). tests/guest/dp-faults.py (pyverbs: libibverbs
# + libmlx5) connects a fresh pair of RC QPs through the port's LID for each fault the
# emulator's control request `dp_fault` sets (emu/README.md "Faults on demand"), posts
# one SEND or RDMA WRITE, and checks what user space sees, every wait bounded:
#   cqe_error (syndrome 0x04, vendor 0x42) -> IBV_WC_LOC_PROT_ERR with vendor_err 0x42,
#     the QP in ERR, the next WR flushed, the peer received the data;
#   lost_cqe -> that WR never completes (a hung WR, not even flushed when the QP is
#     moved to ERR), the next WR completes;
#   cq_overrun -> no completion, IBV_EVENT_CQ_ERR;
#   wqe_dma -> IBV_WC_LOC_QP_OP_ERR, IBV_EVENT_QP_FATAL, nothing sent;
#   rkey -> IBV_WC_REM_ACCESS_ERR at the requester, the responder's receive flushed,
#     IBV_EVENT_QP_ACCESS_ERR, both QPs in ERR.
# Before and after, a fresh pair moves data. Then: the helper did not hang, no kernel
# splat, unload destroys every object and returns every page, no emulator violation.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail dp-faults.device-present "no 15b3 function"; exit 1; }
d=/sys/class/infiniband/mlx5_0
emu_heal
module_deps
START=$(dmesg | wc -l)
viol0=$(violations)

wait_for() { # FILE WANT: up to 60 s
	for _ in $(seq 60); do [ "$(cat "$1" 2>/dev/null)" = "$2" ] && return 0; sleep 1; done
	echo "$1: $(cat "$1" 2>&1), wanted $2"
	return 1
}

timeout 300 modprobe mlx5_core
check dp-faults.core-probe test -e "/sys/bus/pci/devices/$bdf/driver"
timeout 300 modprobe mlx5_ib
check dp-faults.mlx5_0-active wait_for "$d/ports/1/state" "4: ACTIVE"
emuctl '{"cmd":"clear_injections"}' >/dev/null

timeout 900 python3 "$MLX5RS_REPO/tests/guest/dp-faults.py" mlx5_0 >/tmp/dp-faults.out 2>&1
st=$?
check dp-faults.helper-not-hung test "$st" != 124
case_lines /tmp/dp-faults.out "$MLX5RS_REPO/tests/guest/cases/dp-faults.cases" "$st"
echo "---- emulator dp faults ----"
emu_stat 'json.dumps(d["dp"]["faults"], sort_keys=True)'
echo "---- upstream printed ----"
dmesg | tail -n +$((START + 1)) | grep -a -E 'mlx5|infiniband' | tail -n 30
check dp-faults.no-kernel-warning sh -c "! dmesg | tail -n +$((START + 1)) | grep -a -q -E 'WARNING:|BUG:|Call Trace'"

emuctl '{"cmd":"clear_injections"}' >/dev/null
check dp-faults.rmmod-mlx5_ib modprobe -r mlx5_ib
check dp-faults.objects-destroyed test "$(emu_stat 'd["objects"]["total"]')" = 0
[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
check dp-faults.rmmod-mlx5_core modprobe -r mlx5_core
check dp-faults.all-pages-returned test "$(emu_stat 'd["pages"]["held"]')" = 0
check dp-faults.no-violations test "$(violations)" = "$viol0"
emuctl '{"cmd":"reset"}' >/dev/null
[ "$FAILED" = 0 ]
