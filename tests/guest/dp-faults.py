#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest helper of scenario 94: device faults and bad input on the data path.

  dp-faults.py IBDEV    for each fault of the emulator's control request `dp_fault`
                        (emu/README.md "Faults on demand"), a fresh pair of RC QPs
                        connected to each other through the port's LID (pyverbs:
                        libibverbs + libmlx5), the fault set on one of them, one
                        SEND (or RDMA WRITE) posted, and what user space then sees:
                        the work completions' status and vendor syndrome, the QP
                        states, the async events; every wait is bounded. Then a
                        fresh pair moves data again. Then bad input with no
                        fault set: an rkey never granted, a remote address past
                        the MR's end, an MR of another PD (remote and local), a
                        SEND to a peer with no receive posted and rnr_retry 0;
                        memory windows used from another QP, past their range, a
                        bound type 2 window bound again.
                        Prints one "name: PASS|FAIL (detail)" line per check.

The expectations are what upstream (mlx5_ib, libmlx5 `mlx5_handle_error_cqe`,
uverbs async events from mlx5_ib's `mlx5_ib_handle_qp_event` / `mlx5_ib_cq_event`)
makes of what the device reports (scenario 94 runs it on upstream first, then on
mlx5_rs with the same expectations).
"""
import os
import select
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ib_mr_lib  # noqa: E402  (emuctl / emu_get: the emulator's control channel)

FAILED = 0
MSG = 64


def check(name, ok, detail=""):
    global FAILED
    if not ok:
        FAILED += 1
    print("dpf.%s: %s (%s)" % (name, "PASS" if ok else "FAIL", detail), flush=True)


def emuctl(req):
    r = ib_mr_lib.emuctl(req)
    if not r or not r.get("ok"):
        print("emulator refused %s: %s" % (req, r), flush=True)
    return r


def async_fd():
    """The context's async event file (uverbs names it [infinibandevent]; no
    completion channel is created here), to wait on it with a timeout."""
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + fd) == "anon_inode:[infinibandevent]":
                return int(fd)
        except OSError:
            pass
    return None


def events(ctx, fd, secs):
    """The async event types that arrive within `secs` seconds (each acked)."""
    got = []
    if fd is None:
        return got
    end = time.time() + secs
    while True:
        left = end - time.time()
        if left <= 0:
            return got
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            return got
        ev = ctx.get_async_event()
        got.append(ev.event_type)
        ev.ack()
        # Whatever else arrives with it, briefly.
        end = min(end, time.time() + 0.5)


def poll(cq, secs):
    """The next work completion of `cq` within `secs` seconds, or None (a hung WR)."""
    end = time.time() + secs
    while True:
        n, wcs = cq.poll(1)
        if n:
            return wcs[0]
        if time.time() >= end:
            return None
        time.sleep(0.01)


def wc_str(wc):
    if wc is None:
        return "no completion"
    return "status %d vendor_err %#x wr_id %d opcode %d" % (
        wc.status, wc.vendor_err, wc.wr_id, wc.opcode)


def status_is(wc, want, vendor=None):
    return wc is not None and wc.status == want and (vendor is None or wc.vendor_err == vendor)


def state_of(qp):
    a, _ = qp.query(e.IBV_QP_STATE)
    return a.qp_state


ACCESS = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ


class Side:
    """One RC QP with its own send and receive CQs and a registered buffer."""

    def __init__(self, ctx, pd, mr_pd=None):
        self.scq = CQ(ctx, 16)
        self.rcq = CQ(ctx, 16)
        cap = QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=1, max_recv_sge=1)
        self.qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.scq, rcq=self.rcq, cap=cap))
        self.mr = MR(mr_pd or pd, 4096, ACCESS)
        self.mr.write(bytes(4096), 4096)
        self.wr_id = 0

    def connect(self, remote, lid, rnr_retry=7):
        a = QPAttr(qp_state=e.IBV_QPS_INIT)
        a.pkey_index = 0
        a.port_num = 1
        a.qp_access_flags = ACCESS
        self.qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
                       e.IBV_QP_ACCESS_FLAGS)
        a = QPAttr(qp_state=e.IBV_QPS_RTR)
        a.path_mtu = e.IBV_MTU_1024
        a.dest_qp_num = remote
        a.rq_psn = 0
        a.ah_attr = AHAttr(dlid=lid, sl=0, port_num=1)
        a.max_dest_rd_atomic = 1
        a.min_rnr_timer = 12
        self.qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
                       e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN |
                       e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER)
        a = QPAttr(qp_state=e.IBV_QPS_RTS)
        a.timeout = 14
        a.retry_cnt = 7
        a.rnr_retry = rnr_retry
        a.sq_psn = 0
        a.max_rd_atomic = 1
        self.qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT |
                       e.IBV_QP_RNR_RETRY | e.IBV_QP_SQ_PSN | e.IBV_QP_MAX_QP_RD_ATOMIC)

    def recv(self):
        self.wr_id += 1
        sge = SGE(self.mr.buf, MSG, self.mr.lkey)
        self.qp.post_recv(RecvWR(wr_id=self.wr_id, num_sge=1, sg=[sge]))

    def send(self, byte):
        self.wr_id += 1
        self.mr.write(bytes([byte]) * MSG, MSG)
        sge = SGE(self.mr.buf, MSG, self.mr.lkey)
        self.qp.post_send(SendWR(wr_id=self.wr_id, opcode=e.IBV_WR_SEND, num_sge=1,
                                 sg=[sge], send_flags=e.IBV_SEND_SIGNALED))

    def write(self, peer, rkey=None, addr=None, byte=0x77):
        self.wr_id += 1
        self.mr.write(bytes([byte]) * MSG, MSG)
        sge = SGE(self.mr.buf, MSG, self.mr.lkey)
        wr = SendWR(wr_id=self.wr_id, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[sge],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(peer.mr.rkey if rkey is None else rkey,
                       peer.mr.buf if addr is None else addr)
        self.qp.post_send(wr)

    def close(self):
        for o in (self.qp, self.mr, self.scq, self.rcq):
            o.close()


def pair(ctx, pd, lid, rnr_retry=7, b_mr_pd=None):
    a, b = Side(ctx, pd), Side(ctx, pd, b_mr_pd)
    a.connect(b.qp.qp_num, lid, rnr_retry)
    b.connect(a.qp.qp_num, lid, rnr_retry)
    return a, b


def fault(name, **kw):
    req = {"cmd": "dp_fault", "fault": name}
    req.update(kw)
    r = emuctl(req)
    return bool(r and r.get("ok"))


def moves_data(ctx, pd, lid, tag):
    a, b = pair(ctx, pd, lid)
    b.recv()
    a.send(0x5A)
    wa, wb = poll(a.scq, 10), poll(b.rcq, 10)
    check(tag + ".send-success", status_is(wa, e.IBV_WC_SUCCESS), wc_str(wa))
    check(tag + ".recv-success", status_is(wb, e.IBV_WC_SUCCESS) and wb.byte_len == MSG,
          wc_str(wb))
    got = b.mr.read(MSG, 0)
    check(tag + ".data", got == bytes([0x5A]) * MSG, "%r" % got[:8])
    a.close()
    b.close()


def remote_refused(ctx, afd, tag, a, b):
    """A's RDMA WRITE to B was refused by B's checks (IBTA 9.7.4.1.3, 10.6.3.2): NAK
    remote access at A (IBV_WC_REM_ACCESS_ERR), B's bytes untouched, B's posted
    receive flushed with B in ERR and IBV_EVENT_QP_ACCESS_ERR (a local access
    violation WQ error, 11.6.3), A in ERR."""
    wa = poll(a.scq, 10)
    check(tag + ".status", status_is(wa, e.IBV_WC_REM_ACCESS_ERR), wc_str(wa))
    got = b.mr.read(MSG * 2, 4096 - MSG * 2)
    check(tag + ".bytes-untouched", got == bytes(MSG * 2), "%r" % got[-8:])
    wb = poll(b.rcq, 10)
    check(tag + ".peer-recv-flushed", status_is(wb, e.IBV_WC_WR_FLUSH_ERR), wc_str(wb))
    ev = events(ctx, afd, 10)
    check(tag + ".access-err-event", e.IBV_EVENT_QP_ACCESS_ERR in ev, "events %s" % ev)
    check(tag + ".both-err", state_of(a.qp) == e.IBV_QPS_ERR and state_of(b.qp) == e.IBV_QPS_ERR,
          "states %d %d" % (state_of(a.qp), state_of(b.qp)))


def bad_input(ctx, pd, lid):
    """Work requests the device refuses by its own checks (no fault set)."""
    # An rkey never granted: B's MR's key with another index (the 24 bits above the
    # variant byte), no MR of this context has it.
    a, b = pair(ctx, pd, lid)
    bad = (b.mr.rkey + 0x5500) & 0xffffffff
    b.recv()
    a.write(b, rkey=bad, addr=b.mr.buf + 4096 - MSG)
    remote_refused(ctx, afd_global, "bad-rkey", a, b)
    a.close()
    b.close()

    # A remote address out of the MR's bounds: the last 64 bytes of the WRITE land
    # past the end of B's 4 KiB MR (starting MSG/2 before it).
    a, b = pair(ctx, pd, lid)
    b.recv()
    a.write(b, addr=b.mr.buf + 4096 - MSG // 2)
    remote_refused(ctx, afd_global, "out-of-bounds", a, b)
    a.close()
    b.close()

    # An MR of the wrong PD: B's MR is registered on another PD than B's QP, so its
    # rkey does not pass B's check.
    pd2 = PD(ctx)
    a, b = pair(ctx, pd, lid, b_mr_pd=pd2)
    b.recv()
    a.write(b, addr=b.mr.buf + 4096 - MSG)
    remote_refused(ctx, afd_global, "wrong-pd-rkey", a, b)
    a.close()
    b.close()

    # The same locally: A gathers a SEND through the lkey of an MR of another PD:
    # IBV_WC_LOC_PROT_ERR (the device's lkey check, IBTA 10.6.3.1), A in ERR, nothing
    # sent.
    a, b = pair(ctx, pd, lid)
    other = MR(pd2, 4096, ACCESS)
    b.recv()
    a.wr_id += 1
    a.qp.post_send(SendWR(wr_id=a.wr_id, opcode=e.IBV_WR_SEND, num_sge=1,
                          sg=[SGE(other.buf, MSG, other.lkey)],
                          send_flags=e.IBV_SEND_SIGNALED))
    wa = poll(a.scq, 10)
    check("wrong-pd-lkey.status", status_is(wa, e.IBV_WC_LOC_PROT_ERR), wc_str(wa))
    check("wrong-pd-lkey.qp-err", state_of(a.qp) == e.IBV_QPS_ERR, "state %d" % state_of(a.qp))
    wb = poll(b.rcq, 2)
    check("wrong-pd-lkey.nothing-received", wb is None, wc_str(wb))
    a.close()
    b.close()
    other.close()
    pd2.close()

    # A receive queue with nothing posted, rnr_retry 0: B answers the SEND with an RNR
    # NAK and A may not retry (IBTA 9.7.5.2.8, C9-145): IBV_WC_RNR_RETRY_EXC_ERR, A in
    # ERR; B stays in RTS and has no completion.
    a, b = pair(ctx, pd, lid, rnr_retry=0)
    a.send(9)
    wa = poll(a.scq, 20)
    check("rnr.status", status_is(wa, e.IBV_WC_RNR_RETRY_EXC_ERR), wc_str(wa))
    check("rnr.qp-err", state_of(a.qp) == e.IBV_QPS_ERR, "state %d" % state_of(a.qp))
    check("rnr.peer-still-rts", state_of(b.qp) == e.IBV_QPS_RTS, "state %d" % state_of(b.qp))
    wb = poll(b.rcq, 1)
    check("rnr.peer-no-completion", wb is None, wc_str(wb))
    a.close()
    b.close()


def windows(ctx, pd, lid):
    """Memory windows the device refuses (no fault set): type 2 windows bound by B
    over 128 bytes of an MR of B's with remote write (pyverbs' MWTest binds the same
    way), then used or bound wrongly (IBTA 10.6.7.2: a type 2 window is bound to one
    QP and must be free to be bound; 10.6.7.3: an access through a window stays in
    its range; 11.6.2: a failed bind completes with Memory Window Bind Error)."""
    from pyverbs.mr import MW, MWBindInfo

    span = MSG * 2

    def bind(side, mr, mw):
        side.wr_id += 1
        wr = SendWR(wr_id=side.wr_id, opcode=e.IBV_WR_BIND_MW,
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_bind_wr(mw, MWBindInfo(mr, mr.buf, span, e.IBV_ACCESS_REMOTE_WRITE))
        side.qp.post_send(wr)
        return wr.rkey, poll(side.scq, 10)

    a, b = pair(ctx, pd, lid)
    mr = MR(pd, 4096, ACCESS | e.IBV_ACCESS_MW_BIND)
    mr.write(bytes(4096), 4096)
    mw = MW(pd, e.IBV_MW_TYPE_2)
    rkey, wb = bind(b, mr, mw)
    check("mw.bind", status_is(wb, e.IBV_WC_SUCCESS), wc_str(wb))
    # Through the window, in its range: the bytes land in the MR.
    a.write(b, rkey=rkey, addr=mr.buf, byte=0x3C)
    wa = poll(a.scq, 10)
    check("mw.write", status_is(wa, e.IBV_WC_SUCCESS), wc_str(wa))
    got = mr.read(MSG, 0)
    check("mw.write-data", got == bytes([0x3C]) * MSG, "%r" % got[:8])
    # From another QP pair: the window serves B's QP only.
    c, d = pair(ctx, pd, lid)
    c.write(d, rkey=rkey, addr=mr.buf, byte=0x4D)
    wc = poll(c.scq, 10)
    check("mw.other-qp.status", status_is(wc, e.IBV_WC_REM_ACCESS_ERR), wc_str(wc))
    # Across the window's end (the MR goes on): refused, nothing written.
    a.write(b, rkey=rkey, addr=mr.buf + span - MSG // 2, byte=0x5E)
    wa = poll(a.scq, 10)
    check("mw.out-of-range.status", status_is(wa, e.IBV_WC_REM_ACCESS_ERR), wc_str(wa))
    got = mr.read(MSG * 2, MSG)
    check("mw.bytes-untouched", got == bytes(MSG * 2), "%r" % got[:8])
    mw.close()
    for s in (a, b, c, d):
        s.close()

    # Binding a bound type 2 window again: Memory Window Bind Error, B in ERR.
    a, b = pair(ctx, pd, lid)
    mw = MW(pd, e.IBV_MW_TYPE_2)
    _, wb = bind(b, mr, mw)
    check("mw-rebind.first", status_is(wb, e.IBV_WC_SUCCESS), wc_str(wb))
    _, wb = bind(b, mr, mw)
    check("mw-rebind.status", status_is(wb, e.IBV_WC_MW_BIND_ERR), wc_str(wb))
    check("mw-rebind.qp-err", state_of(b.qp) == e.IBV_QPS_ERR, "state %d" % state_of(b.qp))
    mw.close()
    a.close()
    b.close()
    mr.close()


afd_global = None


def main():
    global afd_global
    ctx = Context(name=sys.argv[1])
    pd = PD(ctx)
    lid = ctx.query_port(1).lid
    afd = async_fd()
    afd_global = afd
    check("async-fd", afd is not None, "fd %s" % afd)
    emuctl({"cmd": "clear_injections"})
    total0 = ib_mr_lib.emu_get(["dp", "faults", "total"]) or 0

    moves_data(ctx, pd, lid, "before")

    # cqe_error on A: A's SEND completes with the injected syndrome (local protection,
    # 0x04 -> IBV_WC_LOC_PROT_ERR) and vendor syndrome, B received it; A in ERR, a
    # later WR flushes.
    a, b = pair(ctx, pd, lid)
    check("cqe-error.set", fault("cqe_error", qpn=a.qp.qp_num, syndrome=4, vendor=0x42))
    b.recv()
    a.send(1)
    wa, wb = poll(a.scq, 10), poll(b.rcq, 10)
    check("cqe-error.status", status_is(wa, e.IBV_WC_LOC_PROT_ERR, 0x42), wc_str(wa))
    check("cqe-error.peer-received", status_is(wb, e.IBV_WC_SUCCESS), wc_str(wb))
    check("cqe-error.qp-err", state_of(a.qp) == e.IBV_QPS_ERR, "state %d" % state_of(a.qp))
    a.send(2)
    wa = poll(a.scq, 10)
    check("cqe-error.next-flushed", status_is(wa, e.IBV_WC_WR_FLUSH_ERR), wc_str(wa))
    a.close()
    b.close()

    # lost_cqe on A: the SEND executed (B got it) but its completion never comes — a
    # hung WR; the next WR completes; moving the QP to ERR does not bring it back.
    a, b = pair(ctx, pd, lid)
    check("lost-cqe.set", fault("lost_cqe", qpn=a.qp.qp_num))
    b.recv()
    b.recv()
    a.send(3)
    wb = poll(b.rcq, 10)
    check("lost-cqe.peer-received", status_is(wb, e.IBV_WC_SUCCESS), wc_str(wb))
    wa = poll(a.scq, 3)
    check("lost-cqe.no-completion", wa is None, wc_str(wa))
    a.send(4)
    wa = poll(a.scq, 10)
    check("lost-cqe.next-completes", status_is(wa, e.IBV_WC_SUCCESS) and wa.wr_id == 2,
          wc_str(wa))
    a.qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
    wa = poll(a.scq, 2)
    check("lost-cqe.not-flushed-at-err", wa is None, wc_str(wa))
    a.close()
    b.close()

    # cq_overrun on A's send CQ: no completion, IBV_EVENT_CQ_ERR.
    a, b = pair(ctx, pd, lid)
    check("cq-overrun.set", fault("cq_overrun", qpn=a.qp.qp_num))
    b.recv()
    a.send(5)
    wb = poll(b.rcq, 10)
    check("cq-overrun.peer-received", status_is(wb, e.IBV_WC_SUCCESS), wc_str(wb))
    wa = poll(a.scq, 2)
    check("cq-overrun.no-completion", wa is None, wc_str(wa))
    ev = events(ctx, afd, 10)
    check("cq-overrun.cq-err-event", e.IBV_EVENT_CQ_ERR in ev, "events %s" % ev)
    a.close()
    b.close()

    # wqe_dma on A: the WQE fetch fails; IBV_WC_LOC_QP_OP_ERR, QP fatal event, nothing
    # sent.
    a, b = pair(ctx, pd, lid)
    check("wqe-dma.set", fault("wqe_dma", qpn=a.qp.qp_num))
    b.recv()
    a.send(6)
    wa = poll(a.scq, 10)
    check("wqe-dma.status", status_is(wa, e.IBV_WC_LOC_QP_OP_ERR), wc_str(wa))
    ev = events(ctx, afd, 10)
    check("wqe-dma.qp-fatal-event", e.IBV_EVENT_QP_FATAL in ev, "events %s" % ev)
    check("wqe-dma.qp-err", state_of(a.qp) == e.IBV_QPS_ERR, "state %d" % state_of(a.qp))
    wb = poll(b.rcq, 2)
    check("wqe-dma.nothing-sent", wb is None, wc_str(wb))
    a.close()
    b.close()

    # rkey on B: A's RDMA WRITE is refused: IBV_WC_REM_ACCESS_ERR at A, B's receive
    # flushed, IBV_EVENT_QP_ACCESS_ERR for B.
    a, b = pair(ctx, pd, lid)
    check("rkey.set", fault("rkey", qpn=b.qp.qp_num))
    b.recv()
    a.write(b)
    wa = poll(a.scq, 10)
    check("rkey.status", status_is(wa, e.IBV_WC_REM_ACCESS_ERR), wc_str(wa))
    wb = poll(b.rcq, 10)
    check("rkey.peer-recv-flushed", status_is(wb, e.IBV_WC_WR_FLUSH_ERR), wc_str(wb))
    ev = events(ctx, afd, 10)
    check("rkey.access-err-event", e.IBV_EVENT_QP_ACCESS_ERR in ev, "events %s" % ev)
    check("rkey.both-err", state_of(a.qp) == e.IBV_QPS_ERR and state_of(b.qp) == e.IBV_QPS_ERR,
          "states %d %d" % (state_of(a.qp), state_of(b.qp)))
    a.close()
    b.close()

    total = ib_mr_lib.emu_get(["dp", "faults", "total"])
    check("emu-counted-each", total == total0 + 5, "dp.faults.total %s (was %s)" % (total, total0))

    bad_input(ctx, pd, lid)
    windows(ctx, pd, lid)
    total = ib_mr_lib.emu_get(["dp", "faults", "total"])
    check("bad-input-no-fault-hit", total == total0 + 5,
          "dp.faults.total %s (was %s)" % (total, total0))
    moves_data(ctx, pd, lid, "after")
    pd.close()
    ctx.close()
    return 1 if FAILED else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except PyverbsError as ex:
        print("dpf.helper: FAIL (%s)" % ex, flush=True)
        sys.exit(1)
