# Scenario: the InfiniBand device. After the load, mlx5_N exists on the RDMA core with
# node type CA, fw_ver, board_id, hca_type, node and system image GUIDs, and port 1
# shows what the emulator's port reports (state, LID, SM LID, LMC, rate, physical
# state, link layer, GID 0, P_Key 0, capability mask); `rdma dev` / `rdma link` list
# it. Port changes through the emulator's control socket reach the device (`link` down
# and up: the port state follows and IB_EVENT_PORT_ERR / PORT_ACTIVE are raised; a new
# LID is read back; GID and P_Key changes raise their events and the core's caches
# follow them). Unbind removes the device, bind brings it back; both port access
# methods (cap ib_virt 0: MAD_IFC, 1: HCA vport commands) give the same sysfs view, and
# none of it logs a warning or an error. A provider whose MAD_IFC fails leaves the core
# bound without an IB device. rmmod leaves no IB device and no leak.
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail ib.device-present "no 15b3 function"; exit 1; }
drv=/sys/bus/pci/drivers/mlx5_rs
ib_scenario_start

# port KEY: field KEY of the emulator's IB port (`ib_port` request; one Python run).
port() {
	emuctl '{"cmd":"ib_port"}' | python3 -c "import json,sys; print(json.load(sys.stdin)['port']['$1'])"
}
# port_snapshot: every field of the emulator's IB port at once, as P_<field> (one Python
# run, where a port call per field cost ~1 s each in the TCG guest).
port_snapshot() {
	# (A failed request leaves them unset, not as the last snapshot had them.)
	for _f in node_guid sys_guid node_desc lid sm_lid sm_sl lmc cap_mask port_guid \
		subnet_prefix gid_table_len pkey_table_len; do unset "P_$_f"; done
	eval "$(emuctl '{"cmd":"ib_port"}' | python3 -c 'import json, shlex, sys
for k, v in json.load(sys.stdin)["port"].items():
    print("P_%s=%s" % (k, shlex.quote(str(v))))')"
}
# sysguid 0x0002c90300a50000 -> 0002:c903:00a5:0000 (the sysfs GUID format; the
# emulator prints 16 hex digits, which shell arithmetic cannot hold above 2^63).
sysguid() { echo "${1#0x}" | sed 's/\(....\)\(....\)\(....\)\(....\)/\1:\2:\3:\4/'; }
# wait_quick FILE VALUE: up to 10 s for FILE to read VALUE, every 0.1 s (the lib's
# wait_for looks once a second).
wait_quick() {
	_i=0
	while [ "$(cat "$1" 2>/dev/null)" != "$2" ] && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
	[ "$(cat "$1" 2>/dev/null)" = "$2" ]
}

# sysfs_view TAG: the device and port 1 as sysfs shows them, against the emulator.
sysfs_view() {
	t=$1
	port_snapshot
	dev=$(ibdev)
	check ib.$t.registered test -n "$dev"
	c=/sys/class/infiniband/$dev
	p=$c/ports/1
	check ib.$t.class-entry test -d "$c"
	check ib.$t.name test "${dev%_*}" = mlx5
	check ib.$t.node-type test "$(cat $c/node_type)" = "1: CA"
	fw=$(dmesg | grep -a "mlx5_rs $bdf" | grep -a -o 'firmware [0-9]*\.[0-9]*\.[0-9]*' | tail -n1)
	check ib.$t.fw-ver test "firmware $(cat $c/fw_ver)" = "$fw"
	board=$(dmesg | grep -a "mlx5_rs $bdf" | grep -a -o 'board [^,]*' | tail -n1)
	check ib.$t.board-id test "board $(cat $c/board_id)" = "$board"
	check ib.$t.hca-type test "$(cat $c/hca_type)" = "MT$(($(cat /sys/bus/pci/devices/$bdf/device)))"
	check ib.$t.node-guid test "$(cat $c/node_guid)" = "$(sysguid "$P_node_guid")"
	check ib.$t.sys-image-guid test "$(cat $c/sys_image_guid)" = "$(sysguid "$P_sys_guid")"
	check ib.$t.node-desc test "$(cat $c/node_desc)" = "$P_node_desc"
	check ib.$t.port-count test "$(ls $c/ports | wc -l)" = 1
	check ib.$t.port-state test "$(cat $p/state)" = "4: ACTIVE"
	check ib.$t.port-phys-state test "$(cat $p/phys_state)" = "5: LinkUp"
	check ib.$t.port-lid test "$(cat $p/lid)" = "$(printf '0x%x' "$P_lid")"
	check ib.$t.port-sm-lid test "$(cat $p/sm_lid)" = "$(printf '0x%x' "$P_sm_lid")"
	check ib.$t.port-sm-sl test "$(cat $p/sm_sl)" = "$P_sm_sl"
	check ib.$t.port-lmc test "$(cat $p/lid_mask_count)" = "$P_lmc"
	check ib.$t.port-rate test "$(cat $p/rate)" = "100 Gb/sec (4X EDR)"
	check ib.$t.port-link-layer test "$(cat $p/link_layer)" = InfiniBand
	check ib.$t.port-cap-mask test "$(cat $p/cap_mask)" = "$P_cap_mask"
	pg=$P_port_guid
	prefix=$P_subnet_prefix
	check ib.$t.gid0 test "$(cat $p/gids/0)" = "$(sysguid "$prefix"):$(sysguid "$pg")"
	check ib.$t.pkey0 test "$(cat $p/pkeys/0)" = 0xffff
	check ib.$t.gid-table-len test "$(ls $p/gids | wc -l)" = "$P_gid_table_len"
	check ib.$t.pkey-table-len test "$(ls $p/pkeys | wc -l)" = "$P_pkey_table_len"
	rdma dev
	rdma link
	# "0: mlx5_0: node_type ca protocol ib fw 16.35.1012 node_guid ... sys_image_guid ..."
	check ib.$t.rdma-dev sh -c "rdma dev show $dev | grep -q 'node_type ca .*fw $(cat $c/fw_ver) node_guid $(cat $c/node_guid) sys_image_guid $(cat $c/sys_image_guid)'"
	# "link mlx5_0/1 subnet_prefix fe80:... lid 2 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP"
	check ib.$t.rdma-link sh -c "rdma link show $dev/1 | grep -q 'lid $P_lid sm_lid $P_sm_lid lmc $P_lmc state ACTIVE physical_state LINK_UP'"
}

# --- MAD path (cap ib_virt 0, the power-on default) ---------------------------------
dmesg_mark
check ib.insmod insmod "$KO"
check ib.mad.registered-logged wait_log 'InfiniBand device registered: 1 port(s), port access MAD_IFC'
sysfs_view mad
dev=$(ibdev)
p=/sys/class/infiniband/$dev/ports/1

# Port changes from the emulator (the cable, then the subnet manager).
dmesg_mark
emuctl '{"cmd":"link","up":false}'
check ib.link-down.state wait_quick $p/state "1: DOWN"
check ib.link-down.phys-state test "$(cat $p/phys_state)" = "2: Polling"
check ib.link-down.event wait_log "PORT_CHANGE on port 1 -> IB_EVENT_PORT_ERR"
check ib.link-down.rdma-link sh -c "rdma link show $dev/1 | grep -q 'state DOWN'"
emuctl '{"cmd":"link","up":true}'
check ib.link-up.state wait_quick $p/state "4: ACTIVE"
check ib.link-up.event wait_log "PORT_CHANGE on port 1 -> IB_EVENT_PORT_ACTIVE"
dmesg_mark
emuctl '{"cmd":"ib_port","state":"init"}'
check ib.sm-init.state wait_quick $p/state "2: INIT"
check ib.sm-init.event wait_log "IB_EVENT_PORT_ERR"
emuctl '{"cmd":"ib_port","state":"active","lid":"0x1234"}'
check ib.sm-active.state wait_quick $p/state "4: ACTIVE"
check ib.sm-lid.read-back test "$(cat $p/lid)" = 0x1234
check ib.sm-lid.event wait_log "PORT_CHANGE on port 1 -> IB_EVENT_LID_CHANGE"
# The core's GID and P_Key caches are refreshed by the events, through our queries.
dmesg_mark
emuctl '{"cmd":"ib_port","subnet_prefix":"0xfe80000000001234"}'
check ib.gid-change.event wait_log "PORT_CHANGE on port 1 -> IB_EVENT_GID_CHANGE"
check ib.gid-change.cache wait_quick $p/gids/0 "fe80:0000:0000:1234:$(sysguid "$(port port_guid)")"
emuctl '{"cmd":"ib_port","pkey":{"index":1,"value":"0x8001"}}'
check ib.pkey-change.event wait_log "PORT_CHANGE on port 1 -> IB_EVENT_PKEY_CHANGE"
check ib.pkey-change.cache wait_quick $p/pkeys/1 0x8001
emuctl '{"cmd":"ib_port","client_rereg":true}'
check ib.client-rereg.event wait_log "PORT_CHANGE on port 1 -> IB_EVENT_CLIENT_REREGISTER"

# Unbind removes the device (first stage down), bind brings it back. The port's
# defaults come back while no driver is bound: set before the unbind, their three
# PORT_CHANGE events (LID, P_Key, GUID) made the core refresh its caches three times
# (128 GIDs each, queried through the device) and the unbind wait ~6 s for that.
dmesg_mark
echo "$bdf" >$drv/unbind
check ib.unbind.gone test ! -e "/sys/class/infiniband/$dev"
check ib.unbind.no-ib-device test -z "$(ibdev)"
emuctl '{"cmd":"ib_port","defaults":true}' >/dev/null
echo "$bdf" >$drv/bind
check ib.rebind.back wait_log 'InfiniBand device registered'
sysfs_view rebind

# --- HCA vport path (cap ib_virt 1, read at probe) ----------------------------------
emuctl '{"cmd":"ib_port","ib_virt":true}' >/dev/null
dmesg_mark
echo "$bdf" >$drv/unbind
echo "$bdf" >$drv/bind
check ib.hca.registered-logged wait_log 'InfiniBand device registered: 1 port(s), port access HCA vport'
sysfs_view hca
dev=$(ibdev)
p=/sys/class/infiniband/$dev/ports/1
dmesg_mark
emuctl '{"cmd":"link","up":false}'
check ib.hca.link-down.state wait_quick $p/state "1: DOWN"
check ib.hca.link-down.event wait_log "PORT_CHANGE on port 1 -> IB_EVENT_PORT_ERR"
emuctl '{"cmd":"link","up":true}'
check ib.hca.link-up.state wait_quick $p/state "4: ACTIVE"
emuctl '{"cmd":"ib_port","pkey":{"index":1,"value":"0x8002"}}'
check ib.hca.pkey-change.cache wait_quick $p/pkeys/1 0x8002
emuctl '{"cmd":"ib_port","ib_virt":false,"defaults":true}' >/dev/null

# Nothing above logged a warning or an error (the kernel's, the RDMA core's or ours).
# (The first load of an out-of-tree module taints the kernel, at warning level.)
ib_log_checks ib

# --- a provider that cannot register leaves the core bound, without an IB device ----
emuctl '{"cmd":"inject","opcode":"MAD_IFC","action":"status","status":3,"syndrome":305419896}' >/dev/null
dmesg_mark
echo "$bdf" >$drv/unbind
echo "$bdf" >$drv/bind
check ib.no-mad.still-bound test -e /sys/bus/pci/devices/$bdf/driver
check ib.no-mad.no-ib-device test -z "$(ibdev)"
check ib.no-mad.logged wait_log 'InfiniBand provider not registered (E[A-Z]*); the core stays bound'
emuctl '{"cmd":"clear_injections"}' >/dev/null
echo "$bdf" >$drv/unbind
echo "$bdf" >$drv/bind
check ib.no-mad.back-after-heal wait_log 'InfiniBand device registered'

# --- unload -----------------------------------------------------------------------
ib_unload_checks ib
