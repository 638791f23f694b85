#!/usr/bin/env python3
"""QP figures for `make bench` (tests/bench/guest-ib.sh): create an RC QP, and walk it
RESET → INIT → RTR → RTS (connected to itself through the port's LID), N times.

Usage: ib-qp-bench.py IBDEV PREFIX [N]

Prints, as the bench report reads them (tests/bench/report), the medians over N
(default 20) in microseconds:
    BENCH PREFIX.qp_create_us <µs>     ibv_create_qp (RESET state)
    BENCH PREFIX.qp_rts_us <µs>        three ibv_modify_qp: RESET → INIT → RTR → RTS
    BENCH PREFIX.qp_destroy_us <µs>    ibv_destroy_qp of a QP in RTS
A verb the driver does not have (EOPNOTSUPP, as the RDMA core answers for an op the
driver leaves out; a CQ counts, a QP needs one) prints `na` for every figure that
needs it (`n/a (verb missing)` in the table); any other failure prints `?` and a
BENCH-NOTE line with the error. Exit status 0 either way: a figure is not a test.
"""
import errno
import statistics
import sys
import time

from pyverbs.addr import AHAttr
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
import pyverbs.enums as e

KEYS = ("qp_create_us", "qp_rts_us", "qp_destroy_us")


def missing(ex):
    return isinstance(ex, PyverbsRDMAError) and ex.error_code in (errno.EOPNOTSUPP, errno.ENOSYS)


def us(t0, t1):
    return (t1 - t0) / 1000


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    dev, prefix = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) == 4 else 20
    figs = {k: [] for k in KEYS}
    try:
        ctx = Context(name=dev)
        lid = ctx.query_port(1).lid
        pd = PD(ctx)
        cq = CQ(ctx, 64)
        init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                          cap=QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1))
        for _ in range(n):
            t0 = time.perf_counter_ns()
            qp = QP(pd, init)
            t1 = time.perf_counter_ns()
            attr = QPAttr(port_num=1)
            attr.path_mtu = e.IBV_MTU_1024
            attr.max_dest_rd_atomic = 1
            attr.max_rd_atomic = 1
            attr.min_rnr_timer = 12
            attr.timeout = 14
            attr.retry_cnt = 7
            attr.rnr_retry = 7
            attr.ah_attr = AHAttr(port_num=1, dlid=lid)
            attr.dest_qp_num = qp.qp_num
            attr.rq_psn = 0
            attr.sq_psn = 0
            t2 = time.perf_counter_ns()
            qp.to_rts(attr)
            t3 = time.perf_counter_ns()
            qp.close()
            t4 = time.perf_counter_ns()
            figs["qp_create_us"].append(us(t0, t1))
            figs["qp_rts_us"].append(us(t2, t3))
            figs["qp_destroy_us"].append(us(t3, t4))
    except Exception as ex:  # a figure is not a test: say what happened
        v = "na" if missing(ex) else "?"
        for k in KEYS:
            if not figs[k]:
                print(f"BENCH {prefix}.{k} {v}")
        if v == "?":
            print(f"BENCH-NOTE {prefix} QP figures: {type(ex).__name__}: {ex}")
        return 0
    for k in KEYS:
        print(f"BENCH {prefix}.{k} {statistics.median(figs[k]):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
