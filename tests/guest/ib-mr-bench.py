#!/usr/bin/env python3
"""Time memory-region registration on an IB device (libibverbs through ctypes).

  ib-mr-bench.py IBDEV [--n N] [--sizes 4k,1m,1g] [--thp] [--insn LABEL]

For each size: one anonymous buffer, touched first (THP refused unless --thp, which
advises huge pages so both drivers may use 2 MiB blocks), then N rounds of
ibv_reg_mr (LOCAL_WRITE | REMOTE_READ | REMOTE_WRITE) and ibv_dereg_mr, each timed
alone. One line per size, fields `key=value`, times in microseconds:

  MR-BENCH dev=mlx5_0 size=1073741824 thp=0 n=5 reg_median_us=812345 reg_min_us=...
      reg_max_us=... dereg_median_us=... errors=0

(one line). A registration that fails counts in `errors` and is not timed; a size
whose every round failed prints `reg_median_us=-`. Exit status 0 unless a round failed.

With --insn LABEL (tests/bench/guest-insn.sh, the instruction profile): each size's N
rounds between two `sync`s, at which the TCG plugin snapshots its counters, with the
profile's lines after them (`INSN-MARK LABEL/mr<size> start|end`, then
`INSN-BENCH LABEL/mr<size> sends=N unit=registration`: one ibv_reg_mr and its
ibv_dereg_mr).
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ib_mr_lib as L  # noqa: E402

UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(s):
    s = s.strip().lower()
    return int(s[:-1]) * UNITS[s[-1]] if s[-1] in UNITS else int(s)


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) // 2


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__)
        return 2
    dev, n, sizes, thp, insn = args[0], 5, "4k,1m,1g", False, None
    i = 1
    while i < len(args):
        if args[i] == "--n":
            n = int(args[i + 1])
            i += 2
        elif args[i] == "--sizes":
            sizes = args[i + 1]
            i += 2
        elif args[i] == "--thp":
            thp = True
            i += 1
        elif args[i] == "--insn":
            insn = args[i + 1]
            i += 2
        else:
            print("unknown argument " + args[i], file=sys.stderr)
            return 2
    v = L.lib()
    ctx = L.open_dev(v, dev)
    pd = L.alloc_pd(v, ctx)
    acc = L.LOCAL_WRITE | L.REMOTE_READ | L.REMOTE_WRITE
    bad = 0
    for name, size in ((s, parse_size(s)) for s in sizes.split(",")):
        buf = L.buffer(size, huge=thp)
        reg_us, dereg_us, errors = [], [], 0
        if insn:
            os.sync()
            print("INSN-MARK %s/mr%s start" % (insn, name), flush=True)
        for _ in range(n):
            t0 = time.perf_counter_ns()
            mr, err = L.reg(v, pd, buf, size, acc)
            t1 = time.perf_counter_ns()
            if not mr:
                errors += 1
                continue
            L.dereg(v, mr)
            t2 = time.perf_counter_ns()
            reg_us.append((t1 - t0) // 1000)
            dereg_us.append((t2 - t1) // 1000)
        if insn:
            os.sync()
            print("INSN-MARK %s/mr%s end" % (insn, name), flush=True)
            print("INSN-BENCH %s/mr%s sends=%d unit=registration" % (insn, name, n), flush=True)
        L.unmap(buf, size)
        bad += errors
        if reg_us:
            f = "reg_median_us=%d reg_min_us=%d reg_max_us=%d dereg_median_us=%d" % (
                median(reg_us), min(reg_us), max(reg_us), median(dereg_us))
        else:
            f = "reg_median_us=- reg_min_us=- reg_max_us=- dereg_median_us=-"
        print("MR-BENCH dev=%s size=%d thp=%d n=%d %s errors=%d" % (
            dev, size, int(thp), n, f, errors), flush=True)
    v.ibv_dealloc_pd(pd)
    v.ibv_close_device(ctx)
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
