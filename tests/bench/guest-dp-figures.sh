# Data-path figures of the benchmark (issue 22, "Figures"; sourced by guest-ib.sh and
# guest-dp.sh after tests/guest/lib.sh and lib-guest.sh; defines functions only).
# dp_interleaved runs dp_figures DP_ROUNDS times per driver (MLX5RS_BENCH_DP_ROUNDS,
# default 4: an even count balances ABBA), the drivers alternating ABBA (rs up, up rs,
# rs up, ...: a driver loaded for two rounds in a row stays loaded), so that a steady
# drift of the host's load falls on both alike; every round prints the same BENCH keys again and the report takes their
# median and spread (one run under TCG on a loaded host decides nothing: two runs of
# one commit gave ratios of 0.52x to 3.3x, 2026-12-05).
# perftest, unmodified, in loopback on mlx5_0 (a server and a client process, the
# pairs of tests/guest/dp-traffic.sh; -F: a TCG guest's CPU frequency reads
# inconsistent): ib_write_bw and ib_send_bw at 64 B, 4 KiB and 64 KiB (message rate
# and bandwidth, perftest's "BW average" and "MsgRate" of the client, the sender;
# ib_send_bw's receiver's rate too), ib_write_lat and ib_send_lat at 64 B (perftest's
# typical = median, and 99th percentile, one way).
# Around each run the emulator's full stats are kept, and after all runs one Python
# process derives the emulator's own cost of each run from `stats` → `dp` → `send`:
# WQEs and doorbells handled, the mean time per WQE (wqe_time: decode + execute +
# deliver) and per doorbell (doorbell_time: everything one doorbell causes, loopback
# responses included) over the run, from the histograms' count and mean before and
# after it (the histograms are cumulative; their p50 / p99 are printed once, after the
# last run: every send WQE and doorbell since the emulator started). Iterations:
# DP_BENCH_ITERS_BW (default 400000; 64 KiB: a quarter) and DP_BENCH_ITERS_LAT (default
# 5000: six runs of one test on one driver spread 1.40-2.24x (lowest to highest typical
# latency) with 500, 1.31-1.42x with 5000, and a run takes ~2 s either way, mostly the
# pair's start-up; 2026-12-07), times
# DP_ROUNDS per driver. A bw run of 1,000 or 8,000 iterations moves data for
# 3-30 ms (64 B at ~300,000 messages/s) and its rate spread 2-4x between the runs of
# one driver; with 400,000 (~1.5-4 s of transfer a run) the runs of one driver fell
# within ~10-30 % of each other (2026-12-06, quiet host: a round of eight runs ~25 s).
# Per run also the emulator's counters over it, to show whether libmlx5 took the same
# path on both drivers: UAR write messages (a BlueFlame copy is several per WQE, a
# doorbell one), CQEs written (and how many 128-byte), CQ arms, completion events,
# interrupts, memory-key translations; and the guest's vCPUs over it (/proc/stat: busy
# share, and the kernel's share: a driver's background work competing with perftest).
# Per run also the emulator's doorbell time per message (a bw run's iterations, a lat
# run's twice: one message each way) against the guest's time per message (1 / message
# rate; the mean one-way latency), and the emulator's share of it in percent.
# BENCH keys: WHO.dp.<case>.{mb_per_sec,msg_per_sec,lat_typ_us,lat_p99_us,wqes,
# doorbells,wqe_mean_ns,db_mean_ns,emu_ns_per_msg,msg_ns,emu_pct,uar_msgs,uar_writes,
# cqes,cqes_wide,arms,comp_events,irqs,xlates,guest_busy_pct,guest_kernel_pct},
# send_bw_*.rx_msg_per_sec,
# WHO.dp.all.{wqe,db}_{p50,p99,count}, WHO.dp.{secs,iters_bw,iters_lat,round}, once per
# round; dp.{rounds,dv_fields,dv_differ} once.
. "$MLX5RS_REPO/tests/guest/dp-traffic.sh"
DP_BENCH_OUT=/tmp/dp-bench
DP_BENCH_ITERS_BW=${MLX5RS_BENCH_DP_ITERS_BW:-400000}
DP_BENCH_ITERS_LAT=${MLX5RS_BENCH_DP_ITERS_LAT:-5000}
DP_ROUNDS=${MLX5RS_BENCH_DP_ROUNDS:-4}
# Each run's limit (s): ib_send_lat is the longest (149 s with a load average of 10-13,
# 2026-12-05; 1,000 round trips at 47 ms one way).
DP_TIMEOUT=${MLX5RS_BENCH_DP_TIMEOUT:-600}

# dp_bench_run CASE PROG ARGS: one perftest pair on mlx5_0, the emulator's stats
# before and after it in $DP_BENCH_OUT/CASE.{before,after}, the outputs in
# $DP_OUT/dpbench.CASE.{client,server} (dp_pair).
dp_bench_run() {
	emuctl '{"cmd":"stats"}' >"$DP_BENCH_OUT/$1.before" || note "dp: no stats before $1"
	head -n 1 /proc/stat >"$DP_BENCH_OUT/$1.cpu-before"
	dp_pair "dpbench.$1" "$2" "-d mlx5_0 -i 1 -F $3" "-d mlx5_0 -i 1 -F $3" ||
		note "dp: $1 failed: $(tail -n 2 "$DP_OUT/dpbench.$1.client" 2>/dev/null | tr '\n' ' ')"
	head -n 1 /proc/stat >"$DP_BENCH_OUT/$1.cpu-after"
	emuctl '{"cmd":"stats"}' >"$DP_BENCH_OUT/$1.after" || note "dp: no stats after $1"
	# perftest's result rows of both sides, for the record (the console keeps them).
	for _s in client server; do
		awk -v p="dp-row: $1 $_s:" '/#bytes/ { h = 1; next }
			h && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { print p, $0; exit }' "$DP_OUT/dpbench.$1.$_s"
	done
	echo "$1" >>"$DP_BENCH_OUT/cases"
}

# dp_figures WHO: the runs, then their BENCH lines (WHO: up, or rs in issue 23).
dp_figures() {
	rm -rf "$DP_BENCH_OUT" "$DP_OUT"
	mkdir -p "$DP_BENCH_OUT" "$DP_OUT"
	ip link set lo up
	_t=$(now_ms)
	_nb=$DP_BENCH_ITERS_BW _nl=$DP_BENCH_ITERS_LAT
	for _op in write send; do
		dp_bench_run "${_op}_bw_64" "ib_${_op}_bw" "-n $_nb -s 64"
		dp_bench_run "${_op}_bw_4k" "ib_${_op}_bw" "-n $_nb -s 4096"
		dp_bench_run "${_op}_bw_64k" "ib_${_op}_bw" "-n $((_nb / 4)) -s 65536"
		dp_bench_run "${_op}_lat_64" "ib_${_op}_lat" "-n $_nl -s 64"
	done
	bench "$1.dp.secs" $((($(now_ms) - _t) / 1000))
	bench "$1.dp.iters_bw" "$_nb"
	bench "$1.dp.iters_lat" "$_nl"
	python3 - "$1" "$DP_BENCH_OUT" "$DP_OUT" <<'PY'
import json, math, sys
who, d, out = sys.argv[1:4]

def load_all(p):
    try:
        with open(p) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def load(p):
    try:
        return load_all(p)["dp"]["send"]
    except (KeyError, TypeError):
        return None

# The emulator's counters of one run (after - before): what the device saw libmlx5 do.
COUNTERS = (
    ("uar_msgs", ("dp", "doorbells", "uar_messages")),
    ("uar_writes", ("dp", "doorbells", "uar_writes")),
    ("cqes", ("dp", "cqes", "written")),
    ("cqes_wide", ("dp", "cqes", "wide")),
    ("arms", ("dp", "cqes", "arms")),
    ("comp_events", ("dp", "cqes", "completion_events")),
    ("xlates", ("dp", "mkeys", "translated")),
)

def counter(d, path):
    try:
        for k in path:
            d = d[k]
        return int(d)
    except (KeyError, TypeError, ValueError):
        return None

def cpu(p):
    # /proc/stat's "cpu" line: user nice system idle iowait irq softirq steal (jiffies,
    # both vCPUs together).
    try:
        with open(p) as f:
            w = f.readline().split()
        return [int(x) for x in w[1:9]] if w and w[0] == "cpu" else None
    except (OSError, ValueError):
        return None

def irqs(d):
    try:
        return sum(int(n) for n in d["interrupts"].values())
    except (KeyError, TypeError, ValueError, AttributeError):
        return None

def num(x):
    # perftest's own clock under TCG sometimes yields 0.00 or inf for a run that
    # completed (seen on both drivers, 2026-12-05): not a measurement, so `?`.
    try:
        v = float(x)
    except ValueError:
        return None
    return v if math.isfinite(v) and v > 0 else None

def row(case, side="client"):
    # perftest's result row: the first line of numbers under its "#bytes" header. The
    # figures are the client's, the sender's (ib_write_bw's server prints the client's
    # row); ib_send_bw's server, the receiver, also gives its rate, which counts from
    # its first receive completion: when the emulator is the bottleneck (64 KiB) the
    # sender has queued WQEs that then complete in bursts, and the receiver's window
    # probably misses time (2026-12-05: 17,960 msg/s against the sender's 9,641).
    try:
        with open("%s/dpbench.%s.%s" % (out, case, side)) as f:
            h = False
            for line in f:
                w = line.split()
                if line.lstrip().startswith("#bytes"):
                    h = True
                elif h and len(w) >= 5 and w[0].isdigit() and w[1].isdigit():
                    # positional: a column that is not a number is None, not skipped
                    r = [num(x) for x in w[:9]]
                    # the columns the figures use: BW average, MsgRate / typical,
                    # average, 99 %
                    used = (3, 4) if "_bw_" in case else (4, 5, 7)
                    if any(i >= len(r) or r[i] is None for i in used):
                        print("BENCH-NOTE dp: %s %s %s: perftest's row has 0, inf or nan where a figure is read: %s"
                              % (who, case, side, " ".join(w[2:9])))
                    return r
    except OSError:
        pass
    return None

def b(k, v):
    print("BENCH %s.dp.%s %s" % (who, k, v))

def mean_delta(a, z, k):
    ca, cz = a[k]["count"], z[k]["count"]
    if cz <= ca:
        return "?"
    return "%.0f" % ((cz * z[k]["mean_ns"] - ca * a[k]["mean_ns"]) / (cz - ca))

last = None
for case in open(d + "/cases").read().split():
    r = row(case)
    f = lambda i, fmt, m=1.0: "?" if r is None or len(r) <= i or r[i] is None else fmt % (r[i] * m)
    if "_bw_" in case:
        # #bytes #iterations BW-peak BW-average [MB/sec] MsgRate [Mpps]
        b(case + ".mb_per_sec", f(3, "%.3f"))
        b(case + ".msg_per_sec", f(4, "%.0f", 1e6))
        if case.startswith("send_bw"):
            rx = row(case, "server")
            ok = rx is not None and len(rx) > 4 and rx[4] is not None
            b(case + ".rx_msg_per_sec", "%.0f" % (rx[4] * 1e6) if ok else "?")
    else:
        # #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% [usec]
        b(case + ".lat_typ_us", f(4, "%.2f"))
        b(case + ".lat_p99_us", f(7, "%.2f"))
    fa, fz = load_all("%s/%s.before" % (d, case)), load_all("%s/%s.after" % (d, case))
    for k, path in COUNTERS + (("irqs", None),):
        x, y = (irqs(fa), irqs(fz)) if path is None else (counter(fa, path), counter(fz, path))
        b(case + "." + k, "?" if x is None or y is None else y - x)
    # The guest's vCPUs over the run: busy share (not idle, not iowait) and of it the
    # kernel's (system, irq, softirq): a driver's background work shows here.
    ca, cz = cpu("%s/%s.cpu-before" % (d, case)), cpu("%s/%s.cpu-after" % (d, case))
    dl = [y - x for x, y in zip(ca, cz)] if ca and cz else None
    tot = sum(dl) if dl else 0
    b(case + ".guest_busy_pct", "%.1f" % (100.0 * (tot - dl[3] - dl[4]) / tot) if tot else "?")
    b(case + ".guest_kernel_pct", "%.1f" % (100.0 * (dl[2] + dl[5] + dl[6]) / tot) if tot else "?")
    a, z = load("%s/%s.before" % (d, case)), load("%s/%s.after" % (d, case))
    if a is None or z is None:
        b(case + ".wqes", "?")
        continue
    last = z
    b(case + ".wqes", z["wqes"] - a["wqes"])
    b(case + ".doorbells", z["doorbells"] - a["doorbells"])
    b(case + ".wqe_mean_ns", mean_delta(a, z, "wqe_time"))
    b(case + ".db_mean_ns", mean_delta(a, z, "doorbell_time"))
    # Which side the time is on: the emulator's doorbell time over the run per message
    # (a bw run's iterations; a lat run's iterations twice, one message each way) set
    # against the time one message takes in the guest's view: 1 / message rate, or
    # the one-way latency (mean, as the doorbell figure is a mean).
    t = a["doorbell_time"], z["doorbell_time"]
    db_ns = t[1]["count"] * t[1]["mean_ns"] - t[0]["count"] * t[0]["mean_ns"]
    lat = "_lat_" in case
    msgs = r[1] * (2 if lat else 1) if r is not None and r[1] else None
    if lat:
        per = r[5] * 1e3 if r is not None and len(r) > 5 and r[5] else None
    else:
        per = 1e9 / (r[4] * 1e6) if r is not None and len(r) > 4 and r[4] else None
    emu = db_ns / msgs if msgs else None
    b(case + ".emu_ns_per_msg", "?" if emu is None else "%.0f" % emu)
    b(case + ".msg_ns", "?" if per is None else "%.0f" % per)
    b(case + ".emu_pct", "?" if emu is None or per is None else "%.1f" % (100 * emu / per))
if last is not None:
    for k, n in (("wqe_time", "wqe"), ("doorbell_time", "db")):
        b("all.%s_p50_ns" % n, last[k]["p50_ns"])
        b("all.%s_p99_ns" % n, last[k]["p99_ns"])
        b("all.%s_count" % n, last[k]["count"])
PY
}

# dp_load WHO / dp_unload WHO: bind or unbind mlx5_rs (rs) or upstream mlx5_core +
# mlx5_ib (up) on the emulated function, port 1 ACTIVE after a load (60 s at most);
# after an unload the function is reset if the driver left pages with the firmware.
dp_load() {
	case $1 in
	rs) insmod "$KO" || note "insmod mlx5_rs failed" ;;
	up) timeout 300 modprobe mlx5_ib || note "modprobe mlx5_ib failed" ;;
	esac
	for _ in $(seq 60); do
		grep -q ACTIVE /sys/class/infiniband/mlx5_0/ports/1/state 2>/dev/null && return 0
		sleep 1
	done
	note "$1: mlx5_0 port 1 not ACTIVE in 60 s"
}
dp_unload() {
	case $1 in
	rs) rmmod mlx5_rs ;;
	up)
		modprobe -r mlx5_ib
		[ -e "/sys/bus/pci/devices/$bdf/driver" ] && echo "$bdf" >"/sys/bus/pci/devices/$bdf/driver/unbind"
		modprobe -r mlx5_core
		;;
	esac
	reset_if_pages_left "$1"
}

# dp_dv WHO: tests/guest/dp-dv.c (what libmlx5 made of the driver's answers: mlx5dv
# context flags, CQE size, queue strides, the BlueFlame register and bfreg, inline
# size) under WHO, its lines kept in $DP_DV/WHO (guest_prog: the host's build, or one
# made once per boot).
DP_DV=/tmp/dp-dv.out
dp_dv() {
	mkdir -p "$DP_DV"
	[ -n "${DP_DV_BIN:-}" ] || DP_DV_BIN=$(guest_prog dp-dv) || note "dv: dp-dv.c did not build"
	"$DP_DV_BIN" mlx5_0 >"$DP_DV/$1" 2>&1 || note "dv: $1: $(tail -n 1 "$DP_DV/$1")"
	sed "s/^/dv-$1: /" "$DP_DV/$1"
}

# dp_dv_compare: the two drivers' dp-dv lines side by side; every field that differs is
# a note, BENCH dp.dv_fields (fields of upstream's list) and dp.dv_differ (of them, how
# many differ or are missing on ours).
dp_dv_compare() {
	[ -s "$DP_DV/up" ] && [ -s "$DP_DV/rs" ] || { bench dp.dv_fields "?"; bench dp.dv_differ "?"; return; }
	awk 'NR == FNR { up[$2] = substr($0, length($1 $2) + 3); n++; next }
		{ rs[$2] = substr($0, length($1 $2) + 3) }
		END {
			for (k in up) if (!(k in rs) || rs[k] != up[k]) {
				d++; print "BENCH-NOTE dv: " k ": upstream " up[k] ", mlx5_rs " (k in rs ? rs[k] : "missing")
			}
			print "BENCH dp.dv_fields " n + 0; print "BENCH dp.dv_differ " d + 0
		}' "$DP_DV/up" "$DP_DV/rs"
}

# dp_interleaved [LOADED]: DP_ROUNDS rounds of dp_figures of each driver, ABBA (round 1
# rs then up, round 2 up then rs, ...; starting with LOADED, the driver the caller left
# bound, if any); at each driver's first load also dp_dv and kbench_figures. Leaves
# nothing bound.
dp_interleaved() {
	# Names of their own: the functions called here (lib.sh's insmod wrapper, emu_stat,
	# kbench_figures) set _r, _s, _t and more in the one shell namespace.
	dpi_cur=${1:-} dpi_round=1 dpi_first=${1:-rs}
	dpi_other=up; [ "$dpi_first" = up ] && dpi_other=rs
	rm -rf "$DP_DV"
	bench dp.rounds "$DP_ROUNDS"
	while [ "$dpi_round" -le "$DP_ROUNDS" ]; do
		dpi_order="$dpi_first $dpi_other"
		[ $((dpi_round % 2)) = 0 ] && dpi_order="$dpi_other $dpi_first"
		for dpi_w in $dpi_order; do
			if [ "$dpi_w" != "$dpi_cur" ]; then
				[ -n "$dpi_cur" ] && dp_unload "$dpi_cur"
				dp_load "$dpi_w"
				dpi_cur=$dpi_w
			fi
			echo "dp: round $dpi_round of $DP_ROUNDS: $dpi_w ($(cut -d' ' -f1-3 /proc/loadavg))"
			bench "$dpi_w.dp.round" "$dpi_round"
			dp_figures "$dpi_w"
			if [ ! -e "$DP_DV/$dpi_w" ]; then
				dp_dv "$dpi_w"
				kbench_figures "$dpi_w"
			fi
		done
		dpi_round=$((dpi_round + 1))
	done
	[ -n "$dpi_cur" ] && dp_unload "$dpi_cur"
	dp_dv_compare
}

# kbench_figures WHO: the driver's own cost through the kernel verbs, from the test
# module tests/modules/ib_kclient loaded with bench=$MLX5RS_BENCH_KV_WRS (default
# 20000) in chains of bench_batch=$MLX5RS_BENCH_KV_BATCH (default 32): per work request
# posted (ib_post_send / ib_post_recv of one chain, one doorbell), per completion
# polled (ib_poll_cq calls that returned CQEs), and ib_post_send returned → completion
# handler (see its bench.c). Its steps bench.{setup,run,exact,teardown} must all be
# "ok" (a note otherwise; the figures are then `?`).
# BENCH keys: WHO.kv.{wrs,batch,post_send_ns,post_recv_ns,poll_send_ns,poll_recv_ns,
# empty_polls,irq_early,irq_n,irq_ns_p50,irq_ns_mean,irq_ns_min,irq_ns_max,secs,steps_ok,
# emu_wqes,emu_doorbells,empty_send_polls,send_polls,recv_polls,post_send_p50_ns,
# post_recv_p50_ns,poll_send_p50_ns,poll_recv_p50_ns}.
KV_WRS=${MLX5RS_BENCH_KV_WRS:-20000}
KV_BATCH=${MLX5RS_BENCH_KV_BATCH:-32}
kbench_figures() {
	_ko=$MLX5RS_REPO/tests/modules/ib_kclient/ib_kclient.ko
	_e0=$(emu_stat '"%d %d" % (d["dp"]["send"]["wqes"], d["dp"]["send"]["doorbells"])') || _e0=""
	_t=$(now_ms)
	if ! timeout 900 insmod "$_ko" bench="$KV_WRS" bench_batch="$KV_BATCH"; then
		note "kv: insmod ib_kclient bench=$KV_WRS failed"
		return
	fi
	bench "$1.kv.secs" $((($(now_ms) - _t) / 1000))
	# The emulator's send WQEs and doorbells over the load (the walk posts none).
	_e1=$(emu_stat '"%d %d" % (d["dp"]["send"]["wqes"], d["dp"]["send"]["doorbells"])') || _e1=""
	if [ -n "$_e0" ] && [ -n "$_e1" ]; then
		bench "$1.kv.emu_wqes" $((${_e1% *} - ${_e0% *}))
		bench "$1.kv.emu_doorbells" $((${_e1#* } - ${_e0#* }))
	else
		bench "$1.kv.emu_wqes" "?"
		bench "$1.kv.emu_doorbells" "?"
	fi
	_r=/tmp/ib_kclient.bench.$1
	cat /sys/kernel/debug/ib_kclient/results >"$_r"
	grep -a -E '^(not ok [0-9]+ 1\.|# 1\.bench)' "$_r"
	_ok=0
	for _s in setup run exact teardown; do
		if grep -a -q -E "^ok [0-9]+ 1\\.bench\\.$_s\$" "$_r"; then
			_ok=$((_ok + 1))
		else
			note "kv: $1 step bench.$_s: $(grep -a -E "^(not )?ok [0-9]+ 1\\.bench\\.$_s( |\$)" "$_r" | tail -n 1 || echo 'no result line')"
		fi
	done
	bench "$1.kv.steps_ok" "$_ok"
	sed -n -e 's/^# 1\.bench wrs=/wrs=/p' -e 's/^# 1\.bench calls //p' "$_r" | tr ' ' '\n' | awk -F= -v w="$1" 'NF == 2 { print "BENCH " w ".kv." $1 " " $2 }'
	rmmod ib_kclient || note "kv: rmmod ib_kclient failed"
}
