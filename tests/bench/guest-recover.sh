# Benchmark guest script 6 (default emulator): recovery from a firmware fatal error,
# upstream mlx5_core + mlx5_ib and then mlx5_rs on the same emulated IB port (issue 24's
# figure): the time from the emulator's fatal health syndrome with reset-required (as
# scenario 97-recover sets it) to the new mlx5_0's port 1 ACTIVE, MLX5RS_BENCH_REC_REPS
# times per driver (default 5; the table takes the median). Both recover by themselves
# with no grace period between recoveries: each driver's fw_fatal reporter set to
# grace_period 0 through devlink. Each figure is
# measured by one Python process that sends the fatal error to the emulator's control
# channel itself and polls sysfs every 2 ms (a process start would cost ~0.1 s in the
# TCG guest): BENCH <who>.rec.active_ms, and <who>.rec.gone_ms (fatal → the old
# mlx5_0 gone or its port no longer ACTIVE: the detection). A recovery that does not
# end within 300 s prints `?` and ends that driver's series.
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/bench/lib-guest.sh"
REC_REPS=${MLX5RS_BENCH_REC_REPS:-5}
bdf=$(mlx_bdf) || { note "no 15b3 function"; exit 1; }
[ -e /sys/module/ib_uverbs ] || modprobe ib_uverbs

# recover_once WHO: one fatal error → port ACTIVE again; prints the BENCH lines, exit
# status 0 when the device came back.
recover_once() {
	python3 - "$1" <<'PY'
import os, sys, time
who = sys.argv[1]
d = "/sys/class/infiniband/mlx5_0"
def active():
    try:
        with open(d + "/ports/1/state") as f:
            return "ACTIVE" in f.read()
    except OSError:
        return False
ctl = os.open("/dev/mlx5emu-ctl", os.O_RDWR)
req = b'{"cmd":"health","syndrome":7,"ext_syndrome":4660,"rfr":true,"severity":2}\n'
t0 = time.monotonic()
os.write(ctl, req)
os.read(ctl, 4096)
os.close(ctl)
gone = back = None
while time.monotonic() - t0 < 300 and back is None:
    a = active()
    if gone is None and not a:
        gone = time.monotonic()
    elif gone is not None and a:
        back = time.monotonic()
    time.sleep(0.002)
for k, t in (("gone_ms", gone), ("active_ms", back)):
    print(f"BENCH {who}.rec.{k}", "%.0f" % ((t - t0) * 1000) if t is not None else "?")
sys.exit(0 if back is not None else 1)
PY
}
series() { # WHO
	i=1
	while [ $i -le "$REC_REPS" ]; do
		recover_once "$1" || { note "$1: recovery $i did not bring mlx5_0 back within 300 s"; return 1; }
		i=$((i + 1))
	done
}
wait_active() {
	for _ in $(seq 120); do grep -q ACTIVE /sys/class/infiniband/mlx5_0/ports/1/state 2>/dev/null && return 0; sleep 1; done
	return 1
}

# ---- upstream ---------------------------------------------------------------------
bench rec.reps "$REC_REPS"
timeout 300 modprobe mlx5_core && timeout 300 modprobe mlx5_ib
if wait_active; then
	devlink health set "pci/$bdf" reporter fw_fatal grace_period 0 ||
		note "upstream: devlink health set grace_period 0 failed"
	if series up; then pass "bench.rec.upstream.every-recovery"; else fail "bench.rec.upstream.every-recovery" "see the BENCH-NOTE"; fi
	devlink health show "pci/$bdf" reporter fw_fatal | sed 's/^/BENCH-NOTE upstream: /'
else
	note "upstream: mlx5_0 not ACTIVE after loading"
fi
modprobe -r mlx5_ib
[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
modprobe -r mlx5_core
emu_heal

# ---- mlx5_rs ----------------------------------------------------------------------
if insmod "$KO" && wait_active && devlink health set "pci/$bdf" reporter fw_fatal grace_period 0; then
	if series rs; then pass "bench.rec.mlx5_rs.every-recovery"; else fail "bench.rec.mlx5_rs.every-recovery" "see the BENCH-NOTE"; fi
	devlink health show "pci/$bdf" reporter fw_fatal | sed 's/^/BENCH-NOTE mlx5_rs: /'
else
	fail "bench.rec.mlx5_rs.loaded" "not loaded, mlx5_0 not ACTIVE, or devlink health set grace_period 0 failed"
fi
rmmod mlx5_rs
note "emulator after both: pages held $(held), objects $(emu_stat 'd["objects"]["total"]'), firmware restarts $(emu_stat 'd["fw_reset"]["restarts"]')"
if [ "$(held)" = 0 ] && [ "$(emu_stat 'd["objects"]["total"]')" = 0 ]; then
	pass "bench.rec.nothing-left"
else
	fail "bench.rec.nothing-left" "pages held $(held), objects $(emu_stat 'd["objects"]["total"]')"
fi
echo "BENCH-DONE"
