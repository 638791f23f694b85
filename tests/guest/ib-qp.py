#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest helper of scenario 77: user QPs through pyverbs (libibverbs + libmlx5).

  ib-qp.py walk IBDEV   for RC, UC and UD: create a QP on a PD and a CQ, move it
                        RESET -> INIT -> RTR -> RTS (connected types loop back to
                        their own QPN and the port's LID), query it after each step
                        (the attributes read back must equal what was set), try
                        transitions the verbs forbid (upstream's errno: EINVAL),
                        move it to ERR and RESET, destroy it; prints one
                        "name: PASS|FAIL (detail)" line per check
  ib-qp.py hold IBDEV   create one RC QP, print "ready qpn N", wait for a signal
"""
import errno
import signal
import sys

import pyverbs.enums as e
from pyverbs.addr import AHAttr
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr

FAILED = 0


def check(name, ok, detail=""):
    global FAILED
    if not ok:
        FAILED += 1
    print("qp.%s: %s (%s)" % (name, "PASS" if ok else "FAIL", detail), flush=True)


def errno_of(fn):
    """The errno a verb failed with, 0 if it succeeded."""
    try:
        fn()
    except PyverbsRDMAError as ex:
        return ex.error_code
    return 0


TYPES = {"rc": e.IBV_QPT_RC, "uc": e.IBV_QPT_UC, "ud": e.IBV_QPT_UD}


def create(ctx, pd, cq, qpt):
    cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
    return QP(pd, QPInitAttr(qp_type=qpt, scq=cq, rcq=cq, cap=cap))


def state_of(qp):
    a, _ = qp.query(e.IBV_QP_STATE)
    return a.qp_state


def walk(ctx, pd, cq, name, qpt, lid):
    connected = qpt != e.IBV_QPT_UD
    qp = create(ctx, pd, cq, qpt)
    check(name + ".created", qp.qp_num != 0, "qpn %#x" % qp.qp_num)
    check(name + ".reset", state_of(qp) == e.IBV_QPS_RESET, "state %d" % state_of(qp))

    # RESET -> RTR is no transition.
    a = QPAttr(qp_state=e.IBV_QPS_RTR)
    got = errno_of(lambda: qp.modify(a, e.IBV_QP_STATE))
    check(name + ".reset-to-rtr-refused", got == errno.EINVAL, "errno %d" % got)

    # RESET -> INIT without the required port: EINVAL.
    a = QPAttr(qp_state=e.IBV_QPS_INIT)
    a.pkey_index = 0
    req = e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX
    req |= e.IBV_QP_ACCESS_FLAGS if connected else e.IBV_QP_QKEY
    got = errno_of(lambda: qp.modify(a, req))
    check(name + ".init-without-port-refused", got == errno.EINVAL, "errno %d" % got)
    # A port the device does not have: EINVAL.
    a.port_num = 2
    got = errno_of(lambda: qp.modify(a, req | e.IBV_QP_PORT))
    check(name + ".init-port-2-refused", got == errno.EINVAL, "errno %d" % got)

    a = QPAttr(qp_state=e.IBV_QPS_INIT)
    a.pkey_index = 0
    a.port_num = 1
    a.qkey = 0x11111111
    a.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_LOCAL_WRITE
    if qpt == e.IBV_QPT_RC:
        a.qp_access_flags |= e.IBV_ACCESS_REMOTE_READ
    got = errno_of(lambda: qp.modify(a, req | e.IBV_QP_PORT))
    check(name + ".to-init", got == 0, "errno %d" % got)
    q, _ = qp.query(e.IBV_QP_STATE | e.IBV_QP_PORT | e.IBV_QP_PKEY_INDEX)
    check(name + ".init.state", q.qp_state == e.IBV_QPS_INIT, "state %d" % q.qp_state)
    check(name + ".init.port", q.port_num == 1, "port %d" % q.port_num)
    if connected:
        want = a.qp_access_flags & (e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ)
        q, _ = qp.query(e.IBV_QP_ACCESS_FLAGS)
        # Without a responder depth only remote write is enabled (upstream).
        check(name + ".init.access", q.qp_access_flags == e.IBV_ACCESS_REMOTE_WRITE,
              "access %#x (asked %#x)" % (q.qp_access_flags, want))
    else:
        q, _ = qp.query(e.IBV_QP_QKEY)
        check(name + ".init.qkey", q.qkey == 0x11111111, "qkey %#x" % q.qkey)

    a = QPAttr(qp_state=e.IBV_QPS_RTR)
    m = e.IBV_QP_STATE
    if connected:
        a.path_mtu = e.IBV_MTU_1024
        a.dest_qp_num = qp.qp_num
        a.rq_psn = 0x123
        a.ah_attr = AHAttr(dlid=lid, sl=0, port_num=1)
        m |= e.IBV_QP_AV | e.IBV_QP_PATH_MTU | e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN
        if qpt == e.IBV_QPT_RC:
            a.max_dest_rd_atomic = 1
            a.min_rnr_timer = 12
            m |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
    got = errno_of(lambda: qp.modify(a, m))
    check(name + ".to-rtr", got == 0, "errno %d" % got)
    if connected:
        q, _ = qp.query(e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
                        e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN)
        check(name + ".rtr.state", q.qp_state == e.IBV_QPS_RTR, "state %d" % q.qp_state)
        check(name + ".rtr.mtu", q.path_mtu == e.IBV_MTU_1024, "mtu %d" % q.path_mtu)
        check(name + ".rtr.dest-qpn", q.dest_qp_num == qp.qp_num,
              "dest %#x qpn %#x" % (q.dest_qp_num, qp.qp_num))
        check(name + ".rtr.rq-psn", q.rq_psn == 0x123, "rq_psn %#x" % q.rq_psn)
        check(name + ".rtr.dlid", q.ah_attr.dlid == lid, "dlid %d lid %d" % (q.ah_attr.dlid, lid))
        check(name + ".rtr.ah-port", q.ah_attr.port_num == 1, "port %d" % q.ah_attr.port_num)
        if qpt == e.IBV_QPT_RC:
            q, _ = qp.query(e.IBV_QP_MIN_RNR_TIMER | e.IBV_QP_MAX_DEST_RD_ATOMIC |
                            e.IBV_QP_ACCESS_FLAGS)
            check(name + ".rtr.min-rnr", q.min_rnr_timer == 12, "%d" % q.min_rnr_timer)
            check(name + ".rtr.dest-rd-atomic", q.max_dest_rd_atomic == 1,
                  "%d" % q.max_dest_rd_atomic)
            check(name + ".rtr.access", q.qp_access_flags ==
                  e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ,
                  "access %#x" % q.qp_access_flags)

    # RTR -> RTS without the required send PSN: EINVAL.
    a = QPAttr(qp_state=e.IBV_QPS_RTS)
    got = errno_of(lambda: qp.modify(a, e.IBV_QP_STATE))
    check(name + ".rts-without-psn-refused", got == errno.EINVAL, "errno %d" % got)
    a.sq_psn = 0x456
    m = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
    if qpt == e.IBV_QPT_RC:
        a.timeout = 14
        a.retry_cnt = 7
        a.rnr_retry = 7
        a.max_rd_atomic = 1
        m |= (e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY |
              e.IBV_QP_MAX_QP_RD_ATOMIC)
    got = errno_of(lambda: qp.modify(a, m))
    check(name + ".to-rts", got == 0, "errno %d" % got)
    q, _ = qp.query(e.IBV_QP_STATE | e.IBV_QP_SQ_PSN | e.IBV_QP_TIMEOUT |
                    e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC)
    check(name + ".rts.state", q.qp_state == e.IBV_QPS_RTS, "state %d" % q.qp_state)
    check(name + ".rts.sq-psn", q.sq_psn == 0x456, "sq_psn %#x" % q.sq_psn)
    if qpt == e.IBV_QPT_RC:
        check(name + ".rts.timeout", q.timeout == 14, "%d" % q.timeout)
        check(name + ".rts.retry", (q.retry_cnt, q.rnr_retry) == (7, 7),
              "%d %d" % (q.retry_cnt, q.rnr_retry))
        check(name + ".rts.rd-atomic", q.max_rd_atomic == 1, "%d" % q.max_rd_atomic)
    _, init = qp.query(e.IBV_QP_CAP)
    check(name + ".query.type", init.qp_type == qpt, "type %d" % init.qp_type)
    check(name + ".query.max-recv-wr", init.cap.max_recv_wr >= 16,
          "max_recv_wr %d" % init.cap.max_recv_wr)

    # RTS -> RTR is no transition; RTS -> RTS with a new RNR timer (RC) is one.
    a = QPAttr(qp_state=e.IBV_QPS_RTR)
    got = errno_of(lambda: qp.modify(a, e.IBV_QP_STATE))
    check(name + ".rts-to-rtr-refused", got == errno.EINVAL, "errno %d" % got)
    if qpt == e.IBV_QPT_RC:
        a = QPAttr(qp_state=e.IBV_QPS_RTS)
        a.min_rnr_timer = 3
        got = errno_of(lambda: qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_MIN_RNR_TIMER))
        q, _ = qp.query(e.IBV_QP_MIN_RNR_TIMER)
        check(name + ".rts-to-rts", got == 0 and q.min_rnr_timer == 3,
              "errno %d min_rnr %d" % (got, q.min_rnr_timer))

    for st, nm in ((e.IBV_QPS_ERR, "err"), (e.IBV_QPS_RESET, "reset-again")):
        a = QPAttr(qp_state=st)
        got = errno_of(lambda: qp.modify(a, e.IBV_QP_STATE))
        check("%s.to-%s" % (name, nm), got == 0 and state_of(qp) == st,
              "errno %d state %d" % (got, state_of(qp)))
    qp.close()
    check(name + ".destroyed", True)


def main():
    cmd, dev = sys.argv[1], sys.argv[2]
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq = CQ(ctx, 64)
    if cmd == "hold":
        qp = create(ctx, pd, cq, e.IBV_QPT_RC)
        print("ready qpn %#x" % qp.qp_num, flush=True)
        signal.pause()
        return 0
    lid = ctx.query_port(1).lid
    for name, qpt in TYPES.items():
        try:
            walk(ctx, pd, cq, name, qpt, lid)
        except Exception as ex:  # a verb that should have worked raised
            check(name + ".no-exception", False, repr(ex))
    # Ten QPs at once, then none.
    qps = []
    got = errno_of(lambda: [qps.append(create(ctx, pd, cq, e.IBV_QPT_RC)) for _ in range(10)])
    check("many.created", got == 0 and len(qps) == 10 and len({q.qp_num for q in qps}) == 10,
          "errno %d qps %d" % (got, len(qps)))
    for q in qps:
        q.close()
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
