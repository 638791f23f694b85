# Helpers of the benchmark guest scripts (sourced after tests/guest/lib.sh).
# Every figure is one console line the host collects:  BENCH <key> <value>
# (values in the unit the key ends with: _us, _ms, _ns, _per_sec, or a count).

# The benchmark times loads of the module: its KUnit suites (run by KUnit at each load
# of the test build, about 18 s under TCG) are not run in a benchmark boot.
[ -w /sys/module/kunit/parameters/filter_glob ] && echo none >/sys/module/kunit/parameters/filter_glob

bench() { echo "BENCH $1 $2"; }
note() { echo "BENCH-NOTE $*"; }

now_ns() { date +%s%N; }
# Wall-clock milliseconds (3 decimals) between two now_ns values.
ms_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e6 }'; }

# kmark TAG: a line in the kernel log, on the same clock as the driver's lines.
kmark() { echo "mlx5bench: $1" >/dev/kmsg; }
# klog_after TAG: kernel log lines after the marker TAG (ring-buffer safe, unlike line counts).
klog_after() { dmesg | sed -n "/mlx5bench: $1\$/,\$p" | tail -n +2; }
# First line on stdin → its printk timestamp in microseconds ("[   21.276185] ..." → 21276185).
ts_us() { head -n1 | sed -n 's/^\[ *\([0-9]*\)\.\([0-9]\{6\}\)\].*/\1\2/p'; }

# bound_to BDF: name of the driver bound to BDF (empty if none).
bound_to() { [ -e "/sys/bus/pci/devices/$1/driver" ] && basename "$(readlink "/sys/bus/pci/devices/$1/driver")"; }

held() { emu_stat 'd["pages"]["held"]' 2>/dev/null || echo "?"; }

# reset_if_pages_left WHO: when WHO left pages with the firmware, the emulated function
# stays in a state where the next driver's ENABLE_HCA fails: say so, and give the next
# driver a clean function (emulator function-level reset) so its figures still count.
reset_if_pages_left() {
	h=$(held)
	[ "$h" = 0 ] && return 0
	note "$1 left $h pages with the firmware; resetting the emulated function before the next driver"
	emuctl '{"cmd":"reset"}' >/dev/null || note "emulator reset failed"
	note "after reset: pages held $(held), function enabled $(emu_stat 'd["function"]["enabled"]' 2>/dev/null)"
}

# Knobs the host wrote for this run (tests/bench/run.sh → $MLX5RS_CACHE/bench/guest.env;
# the cache is visible in the guest at its host path, next to the kernel build).
BENCH_ENV=${MLX5RS_KBUILD%/kernel/*}/bench/guest.env
if [ -r "$BENCH_ENV" ]; then . "$BENCH_ENV"; else note "no $BENCH_ENV: default knobs"; fi

# MemAvailable in MiB.
memavail_mib() { awk '/MemAvailable/ { printf "%d", $2 / 1024 }' /proc/meminfo; }

# page_load K N: K runtime page requests through the emulator, alternately +N and -N
# pages, each sent once the previous one was answered (latency per request; scenario 54
# sends them back to back).
# Prints the number accepted.
page_load() {
	i=0 ok=0
	while [ $i -lt "$1" ]; do
		n=$2; [ $((i % 2)) = 1 ] && n=-$2
		tries=0
		while [ $tries -lt 300 ]; do
			r=$(emuctl "{\"cmd\":\"page_request\",\"num_pages\":$n}")
			case "$r" in *'"ok":true'*) ok=$((ok + 1)); break ;; esac
			tries=$((tries + 1)); sleep 0.02
		done
		i=$((i + 1))
	done
	# Let the last one be answered before anyone reads figures.
	tries=0
	while [ $tries -lt 300 ] && [ "$(emu_stat 'len(d["pages"]["outstanding_requests"])')" != 0 ]; do
		tries=$((tries + 1)); sleep 0.02
	done
	echo "$ok"
}

# eq_latency WHO: the emulator's interrupt → next consumer-index doorbell figures of
# the EQ carrying command completions (event type 0x0a) and of the one carrying page
# requests (0x0b), as BENCH WHO.irq.{cmd,pages}.{eqn,count,mean_ns,p50_ns,p99_ns,max_ns}.
eq_latency() {
	emuctl '{"cmd":"stats"}' | python3 -c '
import json, sys
who = sys.argv[1]
d = json.load(sys.stdin)
for role, bit in (("cmd", 0x0a), ("pages", 0x0b)):
    for e in d.get("eqs", []):
        if int(e["mask"][bit // 64], 16) >> (bit % 64) & 1:
            l = e["irq_to_doorbell"]
            print("BENCH %s.irq.%s.eqn %d" % (who, role, e["eqn"]))
            for k in ("count", "mean_ns", "p50_ns", "p99_ns", "max_ns"):
                print("BENCH %s.irq.%s.%s %d" % (who, role, k, l[k]))
            break
' "$1"
}

# timeline_ms KEY: an interval of the emulator's teardown timeline (…_us) in ms, or "?".
timeline_ms() {
	emu_stat "'%.3f' % (d['timeline']['$1'] / 1000) if d['timeline']['$1'] is not None else '?'" 2>/dev/null || echo "?"
}
