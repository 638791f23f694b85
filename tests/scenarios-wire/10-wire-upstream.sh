# Guest scenario: two emulated devices wired to each other (tests/vm/vm.sh --wired; emu/README.md
# "Two devices") under upstream mlx5_core + mlx5_ib. Expectations from the subnet the
# emulators model (README port table: SM LID 1; `--lid 2` / `--lid 3`, GUIDs apart by
# `--device-index`) and from upstream's own reporting (ibv_devinfo, sysfs):
# - each emulator's wire is up before the driver loads (the emulators connected at start);
# - `ibv_devinfo` shows two devices, port 1 PORT_ACTIVE on both, LIDs 2 and 3, SM LID 1,
#   distinct node GUIDs;
# - the cable pulled (control `wire` `connected:false` on function 1): both ports go
#   DOWN through the port-change EQE upstream turns into IB_EVENT_PORT_ERR; put back:
#   both ACTIVE again;
# - unload: every page back to each emulator, no protocol violation on either.
# A scenario of the wired boot: tests/vm/vm.sh --wired --run tests/guest/check-wire.sh.
. "$MLX5RS_REPO/tests/guest/lib.sh"
[ "$(emu_count)" = 2 ] || { fail wire.two-emulators "$(emu_count) emulator(s); boot with vm.sh --wired"; exit 1; }
for i in 0 1; do
	check wire.fn$i.up-before-load test "$(emu_stat_n $i 'd["dp"]["wire"]["link_up"]')" = True
done
dmesg_mark
timeout 300 modprobe mlx5_core
timeout 300 modprobe mlx5_ib
# wait_for FILE WANT: up to 60 s.
devs=$(ls /sys/class/infiniband 2>/dev/null | grep '^mlx5_' | sort)
check wire.two-ib-devices test "$(echo $devs | wc -w)" = 2
for d in $devs; do
	check wire.$d.active wait_for /sys/class/infiniband/$d/ports/1/state "4: ACTIVE"
done
echo "---- ibv_devinfo ----"
info=$(ibv_devinfo 2>&1)
echo "$info"
echo "---------------------"
# One line per device: "<hca_id> <node_guid> <state> <port_lid> <sm_lid>".
rows=$(echo "$info" | awk '
	/hca_id:/ { if (id != "") print id, guid, st, lid, sm; id = $2; guid = st = lid = sm = "" }
	/node_guid:/ { guid = $2 }
	/state:/ && st == "" { st = $2 }
	/port_lid:/ { lid = $2 }
	/sm_lid:/ { sm = $2 }
	END { if (id != "") print id, guid, st, lid, sm }')
echo "$rows" | sed 's/^/wire: /'
check wire.devinfo-two-ports test "$(echo "$rows" | grep -c .)" = 2
check wire.devinfo-both-active test "$(echo "$rows" | awk '$3 == "PORT_ACTIVE"' | grep -c .)" = 2
check wire.devinfo-lids-2-and-3 test "$(echo "$rows" | awk '{print $4}' | sort -n | tr '\n' ' ')" = "2 3 "
check wire.devinfo-sm-lid-1 test "$(echo "$rows" | awk '$5 == 1' | grep -c .)" = 2
check wire.devinfo-distinct-guids test "$(echo "$rows" | awk '{print $2}' | sort -u | grep -c .)" = 2
# Pull the cable, then put it back.
emuctl_n 1 '{"cmd":"wire","connected":false}' >/dev/null
for d in $devs; do
	check wire.$d.down-when-pulled wait_for /sys/class/infiniband/$d/ports/1/state "1: DOWN"
done
emuctl_n 1 '{"cmd":"wire","connected":true}' >/dev/null
for d in $devs; do
	check wire.$d.active-when-back wait_for /sys/class/infiniband/$d/ports/1/state "4: ACTIVE"
done
for i in 0 1; do
	echo "wire: fn$i: $(emu_stat_n $i 'json.dumps(d["dp"]["wire"], sort_keys=True)')"
done
echo "---- upstream printed ----"
dmesg_since | grep -a -E 'mlx5|infiniband' | head -n 40
# Unload: mlx5_ib destroys what it created, mlx5_core gives every page back.
check wire.rmmod-mlx5_ib modprobe -r mlx5_ib
for b in $(mlx_bdfs); do
	[ -e /sys/bus/pci/devices/$b/driver ] && echo "$b" >/sys/bus/pci/devices/$b/driver/unbind
done
check wire.rmmod-mlx5_core modprobe -r mlx5_core
for i in 0 1; do
	check wire.fn$i.pages-returned test "$(emu_stat_n $i 'd["pages"]["held"]')" = 0
	check wire.fn$i.no-violations test "$(emu_stat_n $i 'd["violations"]')" = 0
done
[ "$FAILED" = 0 ]
