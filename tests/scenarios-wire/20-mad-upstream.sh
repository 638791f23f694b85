# Guest scenario: the MAD QPs carry real MADs under upstream mlx5_core + mlx5_ib, two
# emulated devices wired to each other (tests/vm/vm.sh --wired; emu/README.md "MAD
# QPs"). Upstream's MAD layer opens QP0 and QP1 on each device; a user-space MAD client
# (tests/guest/umad-get.py on /dev/infiniband/umad*, the ib_user_mad ABI) sends through
# them. Expectations from the IBTA and from what the peer's sysfs says:
# - SubnGet(NodeInfo) from one device to the peer's LID on QP0 is answered (GetResp,
#   status 0) from source QP 0 at the peer's LID, with the peer's node GUID and
#   NodeType CA. As on a ConnectX the peer device delivers the request to its host's
#   QP0; upstream's MAD layer there (core mad.c `ib_mad_recv_done` → mlx5 mad.c
#   `mlx5_ib_process_mad` → MAD_IFC) answers through its QP0 (agent.c
#   `agent_send_response`): the peer counts MADs to its QP0, no device answer;
# - PerfMgmt Get(PortCounters) and Get(PortCountersExtended) to the peer's LID on QP1
#   are answered from source QP 1 with non-zero packet counters (the traffic just
#   moved), the same way through the peer host's QP1 and MAD_IFC;
# - sysfs port counters (read by the RDMA core through process_mad → MAD_IFC → the
#   same PMA) grow with the traffic;
# - unload: every page back, no protocol violation on either emulator.
# A scenario of the wired boot: tests/vm/vm.sh --wired --run tests/guest/check-wire.sh.
. "$MLX5RS_REPO/tests/guest/lib.sh"
[ "$(emu_count)" = 2 ] || { fail mad.two-emulators "$(emu_count) emulator(s); boot with vm.sh --wired"; exit 1; }
dmesg_mark
timeout 300 modprobe mlx5_core
timeout 300 modprobe mlx5_ib
modprobe ib_umad 2>/dev/null
devs=$(ls /sys/class/infiniband 2>/dev/null | grep '^mlx5_' | sort)
check mad.two-ib-devices test "$(echo $devs | wc -w)" = 2
for d in $devs; do
	check mad.$d.active wait_for /sys/class/infiniband/$d/ports/1/state "4: ACTIVE"
done
a=$(echo $devs | awk '{print $1}')
b=$(echo $devs | awk '{print $2}')
lid_b=$(cat /sys/class/infiniband/$b/ports/1/lid)
guid_b=$(cat /sys/class/infiniband/$b/node_guid)
echo "mad: $a sends to $b (LID $lid_b, node GUID $guid_b)"
ls -l /dev/infiniband/ 2>&1 | sed 's/^/mad: /'
counters() {
	for f in port_xmit_data port_rcv_data port_xmit_packets port_rcv_packets; do
		printf '%s=%s ' "$f" "$(cat /sys/class/infiniband/$1/ports/1/counters/$f 2>&1)"
	done
}
echo "mad: $b sysfs counters before: $(counters $b)"
pk_before=$(cat /sys/class/infiniband/$b/ports/1/counters/port_rcv_packets 2>/dev/null)
stats() {
	for i in 0 1; do
		echo "mad: fn$i dp.mad: $(emu_stat_n $i 'json.dumps(d["dp"]["mad"], sort_keys=True)')"
	done
}
stats
UM="python3 $REPO/tests/guest/umad-get.py"
ni=$($UM $a $lid_b node_info 2>&1)
echo "mad: NodeInfo: $ni"
check mad.node-info-answered test "$(echo "$ni" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["umad_status"], d["mad_status"], d["method"], d["src_qpn"])' 2>&1)" = "0 0 129 0"
check mad.node-info-peer-guid test "$(echo "$ni" | python3 -c 'import json,sys; print(json.load(sys.stdin)["node_guid"])' 2>&1)" = "$guid_b"
check mad.node-info-slid test "$(echo "$ni" | python3 -c 'import json,sys; print(hex(json.load(sys.stdin)["slid"]))' 2>&1)" = "$lid_b"
pc=$($UM $a $lid_b port_counters 2>&1)
echo "mad: PortCounters: $pc"
check mad.port-counters-answered test "$(echo "$pc" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["umad_status"], d["mad_status"], d["src_qpn"], d["counters"]["rcv_pkts"] > 0)' 2>&1)" = "0 0 1 True"
pcx=$($UM $a $lid_b port_counters_ext 2>&1)
echo "mad: PortCountersExtended: $pcx"
check mad.port-counters-ext-answered test "$(echo "$pcx" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["umad_status"], d["mad_status"], d["src_qpn"], d["counters"]["xmit_pkts"] > 0)' 2>&1)" = "0 0 1 True"
stats
# Requests and answers reached the hosts' QP0 / QP1 (the peer's got the requests,
# ours the answers); neither device answered a MAD itself (knob off).
check mad.peer-host-qp0-received test "$(emu_stat_n 1 'd["dp"]["mad"]["to_qp0"]')" -ge 1
check mad.peer-host-qp1-received test "$(emu_stat_n 1 'd["dp"]["mad"]["to_qp1"]')" -ge 2
check mad.answers-to-our-host test "$(emu_stat_n 0 'd["dp"]["mad"]["to_qp0"] >= 1 and d["dp"]["mad"]["to_qp1"] >= 2')" = True
check mad.no-device-answers test "$(emu_stat_n 0 'd["dp"]["mad"]["sma"] + d["dp"]["mad"]["pma"]') $(emu_stat_n 1 'd["dp"]["mad"]["sma"] + d["dp"]["mad"]["pma"]')" = "0 0"
echo "mad: $b sysfs counters after: $(counters $b)"
pk_after=$(cat /sys/class/infiniband/$b/ports/1/counters/port_rcv_packets 2>/dev/null)
check mad.sysfs-counters-grow test "${pk_after:-0}" -gt "${pk_before:-0}"
echo "---- upstream printed ----"
dmesg_since | grep -a -E 'mlx5|infiniband|mad' | head -n 40
check mad.rmmod-mlx5_ib modprobe -r mlx5_ib
for bdf in $(mlx_bdfs); do
	[ -e /sys/bus/pci/devices/$bdf/driver ] && echo "$bdf" >/sys/bus/pci/devices/$bdf/driver/unbind
done
check mad.rmmod-mlx5_core modprobe -r mlx5_core
for i in 0 1; do
	check mad.fn$i.pages-returned test "$(emu_stat_n $i 'd["pages"]["held"]')" = 0
	check mad.fn$i.no-violations test "$(emu_stat_n $i 'd["violations"]')" = 0
done
[ "$FAILED" = 0 ]
