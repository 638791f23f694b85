# Guest script (exploratory, not a scenario): upstream mlx5_core + mlx5_ib on the
# emulated ConnectX, then rdma-core's unmodified ibv_rc_pingpong between two processes
# on the same port (loopback through the port's LID), with its buffer check (-c).
# Shows what the data path did (stats dp.send). Run:
#   tests/vm/vm.sh --timeout 1500 --run tests/guest/dp-pingpong.sh
. "$MLX5RS_REPO/tests/guest/lib.sh"
bdf=$(mlx_bdf) || { fail dp-pingpong.device-present "no 15b3 function"; exit 1; }
dmesg_mark
timeout 300 modprobe mlx5_core
timeout 300 modprobe mlx5_ib
modprobe ib_uverbs 2>/dev/null
ip link set lo up 2>/dev/null
d=/sys/class/infiniband/mlx5_0
for _ in $(seq 60); do
	case "$(cat $d/ports/1/state 2>/dev/null)" in *ACTIVE*) break ;; esac
	sleep 1
done
echo "port: $(cat $d/ports/1/state 2>&1) lid $(cat $d/ports/1/lid 2>&1)"
check dp-pingpong.port-active grep -q ACTIVE $d/ports/1/state
timeout 300 ibv_rc_pingpong -d mlx5_0 -n 100 -s 4096 -c >/tmp/pp-server.log 2>&1 &
srv=$!
sleep 3
timeout 300 ibv_rc_pingpong -d mlx5_0 -n 100 -s 4096 -c 127.0.0.1 >/tmp/pp-client.log 2>&1
crc=$?
wait $srv
src=$?
echo "---- server (rc $src) ----"; cat /tmp/pp-server.log
echo "---- client (rc $crc) ----"; cat /tmp/pp-client.log
check dp-pingpong.client test "$crc" = 0
check dp-pingpong.server test "$src" = 0
echo "---- emulator data path ----"
emu_stat 'json.dumps(d["dp"]["send"], sort_keys=True)'
emu_stat 'json.dumps(d["dp"]["cqes"], sort_keys=True)'
emu_stat 'json.dumps(d["dp"]["recv"], sort_keys=True)'
echo "---- upstream printed ----"
dmesg_since | grep -a -E 'mlx5|infiniband' | tail -n 30
echo "violations: $(violations)"
[ "$FAILED" = 0 ]
