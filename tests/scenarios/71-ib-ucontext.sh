# Scenario: user contexts. With mlx5-rs's mlx5_N registered, ib_uverbs gives it a
# uverbs device and rdma-core (libibverbs + libmlx5 56.1) opens it as it opens
# upstream's: `ibv_devices` lists it, `ibv_devinfo -v` shows port 1 as the emulator
# reports it (the checks scenario 91 makes of upstream mlx5_ib, tests/guest/lib.sh
# check_ibv_devinfo). A process holding a context and a PD shows in `rdma res show pd`
# and the emulator, and both go when it exits. Raw GET_CONTEXT commands with malformed
# mlx5 requests, and mmaps of offsets never handed out, fail with upstream's errno
# (tests/guest/ib-uverbs.py udata); a context's static UARs are released. UAR objects
# (MLX5_IB_OBJECT_UAR through the uverbs ioctl) are allocated, mapped and destroyed,
# bad types and mappings refused, every UAR released (ib-uverbs.py uarobj). Unbind
# under a process that has the device open completes, and the process sees
# IB_EVENT_DEVICE_FATAL. QUERY_CONTEXT answers the GET_CONTEXT response again, and
# ibv_import_device builds a working libmlx5 context from it; mlx5's PD_QUERY
# (ibv_import_pd) and QUERY_PORT (mlx5dv_query_port) answer (ib-uverbs.py query). No warning or error line, no emulator violation, every object
# destroyed, no kmemleak report. The udata and uarobj cases run on upstream mlx5_core
# + mlx5_ib first, on the same port: each passes there too and both drivers print the
# same cases (tests/guest/ib-oracle.sh); so do the query cases.
. "$MLX5RS_REPO/tests/guest/lib.sh"
CASES=$MLX5RS_REPO/tests/guest/cases
. "$MLX5RS_REPO/tests/guest/ib-oracle.sh"
bdf=$(mlx_bdf) || { fail uctx.device-present "no 15b3 function"; exit 1; }
drv=/sys/bus/pci/drivers/mlx5_rs
UV=$MLX5RS_REPO/tests/guest/ib-uverbs.py
ib_scenario_start

# --- upstream mlx5_ib: the oracle of the cases' errnos -------------------------------
upstream_load uctx
upstream_cases /tmp/uctx-udata.upstream env IB_DRIVER=upstream timeout 300 python3 "$UV" udata "$uv"
upstream_cases /tmp/uctx-uarobj.upstream env IB_DRIVER=upstream timeout 300 python3 "$UV" uarobj "$uv"
upstream_cases /tmp/uctx-query.upstream env IB_DRIVER=upstream timeout 300 python3 "$UV" query "$uv"
upstream_unload uctx
ib_scenario_start

# --- mlx5_rs -----------------------------------------------------------------------
ib_load uctx
check uctx.uverbs-device sh -c "test -n \"\$(ls /sys/class/infiniband/$dev/device/infiniband_verbs 2>/dev/null)\""
uv=$(uverbs_of "$dev")
check uctx.uverbs-node test -c "/dev/infiniband/$uv"
check uctx.ibv_devices sh -c "ibv_devices | grep -q '$dev'"
check_ibv_devinfo uctx "$dev"
check_open_no_task_leak uctx "$dev"

# --- a process with a context and a PD ------------------------------------------------
pd0=$(live pd)
td0=$(live transport_domain)
python3 "$UV" hold "$dev" >/tmp/uctx-hold.out 2>&1 &
hold=$!
check uctx.hold.ready wait_line /tmp/uctx-hold.out ready
cat /tmp/uctx-hold.out
rdma res show pd dev "$dev" >/tmp/uctx-res-pd 2>&1
cat /tmp/uctx-res-pd
check uctx.hold.rdma-res-pd grep -q "pid $hold " /tmp/uctx-res-pd
check uctx.hold.emu-pd test "$(live pd)" = $((pd0 + 1))
check uctx.hold.emu-transport-domain test "$(live transport_domain)" = $((td0 + 1))
kill $hold
wait $hold 2>/dev/null
check uctx.exit.emu-pd test "$(live pd)" = "$pd0"
check uctx.exit.emu-transport-domain test "$(live transport_domain)" = "$td0"
check uctx.exit.rdma-res-pd sh -c "! rdma res show pd dev $dev | grep -q 'pid $hold '"

# --- malformed requests, mmaps never handed out ---------------------------------------
ua0=$(cmds_ok ALLOC_UAR)
ud0=$(cmds_ok DEALLOC_UAR)
python3 "$UV" udata "$uv" >/tmp/uctx-udata.out 2>&1
case_lines /tmp/uctx-udata.out "$CASES/uctx-udata.cases" $?
cases_agree uctx.udata.same-cases-as-upstream /tmp/uctx-udata.upstream /tmp/uctx-udata.out
check uctx.udata.static-uars-allocated test "$(($(cmds_ok ALLOC_UAR) - ua0))" = 2
check uctx.udata.static-uars-released test "$(($(cmds_ok DEALLOC_UAR) - ud0))" = 2
check uctx.udata.emu-transport-domain test "$(live transport_domain)" = "$td0"

# --- UAR objects (libmlx5's dynamic UARs) on a raw context ---------------------------
ua0=$(cmds_ok ALLOC_UAR)
ud0=$(cmds_ok DEALLOC_UAR)
python3 "$UV" uarobj "$uv" >/tmp/uctx-uarobj.out 2>&1
case_lines /tmp/uctx-uarobj.out "$CASES/uctx-uarobj.cases" $?
cases_agree uctx.uarobj.same-cases-as-upstream /tmp/uctx-uarobj.upstream /tmp/uctx-uarobj.out
# Three objects allocated (the refused types allocate nothing), all three released:
# the one destroyed while mapped at its munmap, the last one when the file closed.
check uctx.uarobj.uars-allocated test "$(($(cmds_ok ALLOC_UAR) - ua0))" = 3
check uctx.uarobj.uars-released test "$(($(cmds_ok DEALLOC_UAR) - ud0))" = 3

# --- a UAR object's UAR stays allocated while a CQ or QP names it -------------------------
ua0=$(cmds_ok ALLOC_UAR)
ud0=$(cmds_ok DEALLOC_UAR)
python3 "$UV" uarhold "$uv" >/tmp/uctx-uarhold.out 2>&1
case_lines /tmp/uctx-uarhold.out "$CASES/uctx-uarhold.cases" $?
check uctx.uarhold.uars-balanced test "$(($(cmds_ok ALLOC_UAR) - ua0))" = "$(($(cmds_ok DEALLOC_UAR) - ud0))"

# --- QUERY_CONTEXT, ibv_import_device, mlx5's PD_QUERY and QUERY_PORT --------------------
ua0=$(cmds_ok ALLOC_UAR)
ud0=$(cmds_ok DEALLOC_UAR)
python3 "$UV" query "$uv" >/tmp/uctx-query.out 2>&1
case_lines /tmp/uctx-query.out "$CASES/uctx-query.cases" $?
cases_agree uctx.query.same-cases-as-upstream /tmp/uctx-query.upstream /tmp/uctx-query.out
# The imported context's UAR objects (libmlx5's) all released with the file.
check uctx.query.uars-balanced test "$(($(cmds_ok ALLOC_UAR) - ua0))" = "$(($(cmds_ok DEALLOC_UAR) - ud0))"

# --- unbind while a process has the device open ------------------------------------------
python3 "$UV" hold "$dev" >/tmp/uctx-hold2.out 2>&1 &
hold=$!
check uctx.unbind.ready wait_line /tmp/uctx-hold2.out ready
check uctx.unbind.completes timeout 120 sh -c "echo $bdf >$drv/unbind"
check uctx.unbind.device-gone test -z "$(ibdev)"
check uctx.unbind.process-sees-fatal wait_line /tmp/uctx-hold2.out 'event 8$'
cat /tmp/uctx-hold2.out
kill $hold 2>/dev/null
wait $hold 2>/dev/null
check uctx.unbind.emu-objects test "$(emu_stat 'd["objects"]["total"]')" = 0
dmesg_mark
echo "$bdf" >$drv/bind
check uctx.rebind.registered wait_log 'InfiniBand device registered'
check uctx.rebind.ibv_devinfo sh -c "ibv_devinfo -d $(ibdev) | grep -q PORT_ACTIVE"

ib_log_checks uctx

# --- unload -----------------------------------------------------------------------
ib_unload_checks uctx
