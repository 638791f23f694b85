#!/usr/bin/env python3
"""User-context and MR figures for `make bench` (tests/bench/guest-ib.sh).

Usage: ib-bench.py IBDEV PREFIX [N [open]]

Prints the medians over N (default 20; 1 GiB once: minutes under TCG) in microseconds, as the bench
report reads them (tests/bench/report):
    BENCH PREFIX.open_us <µs>          ibv_open_device + ibv_close_device's open half
                                       (the user context: ALLOC_UCONTEXT, UARs, mmaps)
    BENCH PREFIX.close_us <µs>         ibv_close_device
    BENCH PREFIX.mr_4k_us <µs>         ibv_reg_mr of a 4 KiB buffer (pinning included)
    BENCH PREFIX.mr_1m_us <µs>         ... 1 MiB
    BENCH PREFIX.mr_1g_us <µs>         ... 1 GiB, once (the buffers are touched first, so
                                       the figure is registration, not first-touch faults)
With `open`, only the first two (tests/bench/guest-ib.sh then takes the MR figures from
tests/guest/ib-mr-bench.py, where that exists). The buffers are mmapped anonymous memory, made once and registered again each time.
A verb the driver does not have (EOPNOTSUPP, the RDMA core's answer for an op the
driver leaves out) prints `na` (`n/a (verb missing)` in the table); any other failure
prints `?` and a BENCH-NOTE line. Exit status 0 either way: a figure is not a test.
"""
import ctypes
import errno
import mmap
import statistics
import sys
import time

from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
import pyverbs.enums as e


def missing(ex):
    return isinstance(ex, PyverbsRDMAError) and ex.error_code in (errno.EOPNOTSUPP, errno.ENOSYS)


def fail(prefix, keys, ex):
    v = "na" if missing(ex) else "?"
    for k in keys:
        print(f"BENCH {prefix}.{k} {v}")
    if v == "?":
        print(f"BENCH-NOTE {prefix} {'/'.join(keys)}: {type(ex).__name__}: {ex}")


def median_us(xs):
    return f"{statistics.median(xs) / 1000:.1f}"


def main():
    if len(sys.argv) not in (3, 4, 5) or sys.argv[4:] not in ([], ["open"]):
        print(__doc__, file=sys.stderr)
        return 2
    dev, prefix = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) >= 4 else 20
    opens, closes = [], []
    try:
        for _ in range(n):
            t0 = time.perf_counter_ns()
            ctx = Context(name=dev)
            t1 = time.perf_counter_ns()
            ctx.close()
            t2 = time.perf_counter_ns()
            opens.append(t1 - t0)
            closes.append(t2 - t1)
        print(f"BENCH {prefix}.open_us {median_us(opens)}")
        print(f"BENCH {prefix}.close_us {median_us(closes)}")
    except Exception as ex:
        fail(prefix, ("open_us", "close_us"), ex)
        return 0
    if sys.argv[4:] == ["open"]:
        return 0
    ctx = Context(name=dev)
    pd = PD(ctx)
    access = e.IBV_ACCESS_LOCAL_WRITE
    no_verb = None
    for key, size, reps in (("mr_4k_us", 4096, n), ("mr_1m_us", 1 << 20, n), ("mr_1g_us", 1 << 30, 1)):
        if no_verb is not None:
            # No reg_mr at all: touching 1 GiB first would cost minutes for nothing.
            fail(prefix, (key,), no_verb)
            continue
        buf = mmap.mmap(-1, size)
        # Touch every page: the figure is the registration, not first-touch faults.
        for off in range(0, size, 4096):
            buf[off] = 1
        cbuf = ctypes.c_char.from_buffer(buf)
        addr = ctypes.addressof(cbuf)
        regs = []
        try:
            for _ in range(reps):
                t0 = time.perf_counter_ns()
                mr = MR(pd, size, access, address=addr)
                t1 = time.perf_counter_ns()
                mr.close()
                regs.append(t1 - t0)
            print(f"BENCH {prefix}.{key} {median_us(regs)}")
        except Exception as ex:
            fail(prefix, (key,), ex)
            if missing(ex):
                no_verb = ex
        del cbuf
        buf.close()
    pd.close()
    ctx.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
