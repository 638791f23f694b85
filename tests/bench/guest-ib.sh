# Benchmark guest script 5 (default emulator): the InfiniBand figures of mlx5_rs and
# then of upstream mlx5_core + mlx5_ib on the same emulated IB port (ours first: its
# figures are quick, upstream's 1 GiB registration takes minutes under TCG):
#   - registration: the load command → mlx5_0 in sysfs, and → port 1 ACTIVE, over
#     MLX5RS_BENCH_IB_REPS (default 3) loads (upstream: modprobe mlx5_ib, which loads
#     and probes mlx5_core with it; ours: insmod), each unloaded again;
#   - ibv_open_device / close, MR registration of 4 KiB, 1 MiB and 1 GiB
#     (tests/guest/ib-bench.py), QP create + RESET → RTS + destroy
#     (tests/guest/ib-qp-bench.py), with the driver loaded once more;
#   - the data path of both, interleaved (dp_interleaved, tests/bench/guest-dp-figures.sh;
#     tests/bench/guest-dp.sh boots for these alone): perftest in loopback and the
#     emulator's own time per WQE and per doorbell (dp_figures, DP_ROUNDS rounds per
#     driver, ABBA), what libmlx5 made of each driver's answers (dp_dv), and the kernel
#     verbs' own cost from the test module ib_kclient's bench mode (kbench_figures, once
#     per driver).
# A verb mlx5_rs does not have yet prints `na` (the table: `n/a (verb missing)`).
# Prints BENCH lines (see tests/bench/lib-guest.sh); tests/bench/run.sh tabulates them.
. "$MLX5RS_REPO/tests/guest/lib.sh"
. "$MLX5RS_REPO/tests/bench/lib-guest.sh"
. "$MLX5RS_REPO/tests/bench/guest-dp-figures.sh"
IB_REPS=${MLX5RS_BENCH_IB_REPS:-3}
G=$MLX5RS_REPO/tests/guest
bdf=$(mlx_bdf) || { note "no 15b3 function"; exit 1; }
[ -e /sys/module/ib_uverbs ] || modprobe ib_uverbs
# The IB core both drivers need is loaded above, the other modules upstream's two
# depend on here, so that no figure includes loading them.
for m in $(modprobe --show-depends mlx5_ib | awk '$1 == "insmod" { print $2 }'); do
	case "$m" in */mlx5_core.ko* | */mlx5_ib.ko*) ;; *) command insmod "$m" 2>/dev/null ;; esac
done

# load_figures WHO CMD...: CMD's start → mlx5_0 in sysfs / port ACTIVE, in ms, polled
# every 2 ms by one Python process started before CMD (a process costs ~0.1 s in the
# TCG guest, so neither the poll nor the start is in the figure).
load_figures() {
	who=$1; shift
	python3 - "$@" <<'PY' | sed "s/^/BENCH $who.ib./"
import os, subprocess, sys, time
d = "/sys/class/infiniband/mlx5_0"
t0 = time.monotonic()
p = subprocess.Popen(sys.argv[1:])
reg = act = None
while time.monotonic() - t0 < 300 and act is None:
    if reg is None and os.path.isdir(d):
        reg = time.monotonic()
    if reg is not None:
        try:
            with open(d + "/ports/1/state") as f:
                if "ACTIVE" in f.read():
                    act = time.monotonic()
        except OSError:
            pass
    time.sleep(0.002)
p.wait()
for k, t in (("register_ms", reg), ("active_ms", act)):
    print(k, "%.1f" % ((t - t0) * 1000) if t is not None else "?")
PY
}
unload_up() {
	modprobe -r mlx5_ib
	[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
	modprobe -r mlx5_core
}
# mr_figures WHO: the MR figures from the MR verbs' own script, tests/guest/ib-mr-bench.py
# (`MR-BENCH ... size=S ... reg_median_us=U|-` lines), as BENCH WHO.ib.mr_{4k,1m,1g}_us;
# a size none of whose rounds registered is `na` when the first failure was EOPNOTSUPP
# (the script's stderr says so), else `?`.
mr_figures() {
	{
		python3 "$G/ib-mr-bench.py" mlx5_0 --n 20 --sizes 4k,1m
		python3 "$G/ib-mr-bench.py" mlx5_0 --n 1 --sizes 1g
	} >/tmp/ib-mr-bench.$1 2>&1
	awk -v w="$1" -v na="$(grep -q -i 'not supported\|EOPNOTSUPP\|errno 95' /tmp/ib-mr-bench.$1 && echo na || echo '?')" '
		/^MR-BENCH / {
			s = ""; u = ""
			for (i = 2; i <= NF; i++) {
				if ($i ~ /^size=/) s = substr($i, 6)
				if ($i ~ /^reg_median_us=/) u = substr($i, 15)
			}
			k = s == 4096 ? "4k" : s == 1048576 ? "1m" : s == 1073741824 ? "1g" : ""
			if (k != "") print "BENCH " w ".ib.mr_" k "_us " (u == "-" || u == "" ? na : u)
		}' /tmp/ib-mr-bench.$1
}
figures() { # WHO: user-space figures with mlx5_0 there
	bench "$1.ib.reps" 20
	if [ -f "$G/ib-mr-bench.py" ]; then
		python3 "$G/ib-bench.py" mlx5_0 "$1.ib" 20 open
		mr_figures "$1"
	else
		python3 "$G/ib-bench.py" mlx5_0 "$1.ib" 20
	fi
	python3 "$G/ib-qp-bench.py" mlx5_0 "$1.ib" 20
}

# ---- mlx5_rs ----------------------------------------------------------------------
i=1
while [ $i -le "$IB_REPS" ]; do
	load_figures rs insmod "$KO"
	[ $i = "$IB_REPS" ] || rmmod mlx5_rs
	i=$((i + 1))
done
figures rs
rmmod mlx5_rs
reset_if_pages_left mlx5_rs
# ---- upstream ---------------------------------------------------------------------
i=1
while [ $i -le "$IB_REPS" ]; do
	load_figures up timeout 300 modprobe mlx5_ib
	[ $i = "$IB_REPS" ] || unload_up
	i=$((i + 1))
done
figures up
# The data path, both drivers interleaved (upstream is bound: its rounds go first).
dp_interleaved up

echo "BENCH-DONE"
