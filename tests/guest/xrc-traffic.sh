# Guest script (exploratory, not a scenario): mlx5_rs's XRC QPs under rdma-core's
# unmodified ibv_xsrq_pingpong (a server and a client process on the same port,
# loopback through the port's LID; "success" printed, the bytes scattered counted by
# the emulator as scenario 93 counts them), then the two XRC atomic tests and the
# XRC send tests of pyverbs; unload with every emulator object destroyed (the XRC
# device resources included) and every page back. Run:
#   tests/vm/vm.sh --timeout 1500 --run tests/guest/xrc-traffic.sh
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/guest/dp-traffic.sh"
bdf=$(mlx_bdf) || { fail xrc.device-present "no 15b3 function"; exit 1; }
ib_scenario_start
ip link set lo up
ib_load xrc
modprobe ib_uverbs 2>/dev/null
D0=$dev
b=$(dp_counters 0)
dp_pair xrc.xsrq_pingpong ibv_xsrq_pingpong "-d $D0 -i 1 -s 4096 -n 5" "-d $D0 -i 1 -s 4096 -n 5" '^success'
dp_bytes_check xrc.xsrq_pingpong "$b" "$(dp_counters 0)" scattered $((2 * 5 * 4096))
for s in server client; do echo "---- $s ----"; cat "$DP_OUT/xrc.xsrq_pingpong.$s"; done
emu_stat 'json.dumps(d["objects"], sort_keys=True)'
ib_log_checks xrc
ib_unload_checks xrc
