#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest helper of scenario 79: memory behind commands whose outcome is unknown.

  ib-unknown.py cases IBDEV   pyverbs (libibverbs + libmlx5) against IBDEV, for each of
                              MR (CREATE_MKEY / DESTROY_MKEY), CQ (CREATE_CQ /
                              DESTROY_CQ), QP (CREATE_QP / DESTROY_QP) and SRQ
                              (CREATE_RMP / DESTROY_RMP), with the emulator's fault
                              injection (one command each):
    - the CREATE times out (never completes: the driver cannot know whether the
      device made the object): ETIMEDOUT, and the buffer stays pinned;
    - the CREATE fails with a bad status (nothing created): EINVAL (BAD_PARAM), and the
      buffer is unpinned at once;
    - the DESTROY fails with a bad status (MR, CQ, SRQ): the object may still exist,
      so its pages stay pinned; the error is reported (upstream mlx5_ib returns it)
      and a second destroy succeeds;
    - DESTROY_QP times out (it executes and completes late): the pages stay pinned,
      and the destroy succeeds (upstream destroy_qp_common warns and goes on).
  The faults leave no object in the device that outlives its PD or CQ (the emulator
  would count that as a protocol violation, which later scenarios check is 0): a
  create that never completes made nothing, a failed MR/CQ/SRQ destroy is retried,
  the late DESTROY_QP did destroy the QP.
  One "name: PASS|FAIL (detail)" line per case. The pins are returned when the
  function is unbound (the scenario checks that).

The driver must have been loaded with the emulator advertising a command timeout of
TIMEOUT_MS (the scenario sets it); the late DESTROY_QP completes after DELAY_MS.
"""
import errno
import os
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr

import ib_mr_lib as L

TIMEOUT_MS = 1500
DELAY_MS = 2500
# BAD_PARAM (mlx5_ifc.h), which mlx5 maps to EINVAL; a syndrome to find in the log.
BAD_PARAM = 0x3
SYNDROME = 0x5A5A
RESULTS = []


def case(name, ok, detail):
    RESULTS.append(ok)
    print("unknown.%s: %s (%s)" % (name, "PASS" if ok else "FAIL", detail), flush=True)


def emuctl(req):
    r = L.emuctl(req)
    if not r or not r.get("ok"):
        raise RuntimeError("emulator: %s -> %s" % (req, r))
    return r


def inject(opcode, **action):
    emuctl(dict({"cmd": "inject", "opcode": opcode, "count": 1}, **action))


def errno_of(fn):
    """(errno, object): errno 0 and the object when fn() succeeds."""
    try:
        return 0, fn()
    except PyverbsRDMAError as ex:
        return ex.error_code, None
    except PyverbsError as ex:
        return getattr(ex, "error_code", -1) or -1, None


def en(x):
    return errno.errorcode.get(x, str(x)) if x else "0"


def kinds(ctx, pd, cq):
    """name, create opcode, destroy opcode, make(), pages the buffer has at least,
    whether a failed destroy is reported (upstream)."""
    mr_len = 16 * 4096
    access = e.IBV_ACCESS_LOCAL_WRITE

    def qp():
        cap = QPCap(max_send_wr=64, max_recv_wr=64, max_send_sge=1, max_recv_sge=1)
        return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))

    return [
        ("mr", "CREATE_MKEY", "DESTROY_MKEY", lambda: MR(pd, mr_len, access), 16, True),
        ("cq", "CREATE_CQ", "DESTROY_CQ", lambda: CQ(ctx, 255), 4, True),
        ("qp", "CREATE_QP", "DESTROY_QP", qp, 2, False),
        ("srq", "CREATE_RMP", "DESTROY_RMP",
         lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=64, max_sge=1))), 1, True),
    ]


def run(name, create_op, destroy_op, make, min_pages, destroy_reports):
    # 1. CREATE times out.
    p0 = L.pinned()
    inject(create_op, action="never")
    err, o = errno_of(make)
    case("%s.create-timeout.errno" % name, err == errno.ETIMEDOUT,
         "got %s, want ETIMEDOUT" % en(err))
    kept = L.pinned() - p0
    case("%s.create-timeout.pages-kept" % name, kept >= min_pages,
         "%d pages still pinned, want at least %d" % (kept, min_pages))
    if o is not None:
        o.close()

    # 2. CREATE fails: nothing was created, the pages go back at once.
    p0 = L.pinned()
    inject(create_op, action="status", status=BAD_PARAM, syndrome=SYNDROME)
    err, o = errno_of(make)
    case("%s.create-fails.errno" % name, err == errno.EINVAL, "got %s, want EINVAL" % en(err))
    left = L.pinned() - p0
    case("%s.create-fails.pages-returned" % name, left == 0, "%d pages still pinned" % left)
    if o is not None:
        o.close()

    # 3. DESTROY fails: the object may exist, its pages stay pinned.
    err, o = errno_of(make)
    case("%s.create" % name, err == 0, "got %s" % en(err))
    if o is None:
        return
    p0 = L.pinned()
    if destroy_reports:
        inject(destroy_op, action="status", status=BAD_PARAM, syndrome=SYNDROME)
    else:
        inject(destroy_op, action="delay", ms=DELAY_MS)
    err, _ = errno_of(o.close)
    if not destroy_reports:
        # The late completion returns the command slot.
        time.sleep((DELAY_MS - TIMEOUT_MS) / 1000 + 0.5)
    want = errno.EINVAL if destroy_reports else 0
    case("%s.destroy-fails.errno" % name, err == want, "got %s, want %s" % (en(err), en(want)))
    left = L.pinned() - p0
    case("%s.destroy-fails.pages-kept" % name, left == 0,
         "%d pages unpinned under an object that may exist" % -left)
    if destroy_reports:
        err, _ = errno_of(o.close)
        case("%s.destroy-again" % name, err == 0, "got %s" % en(err))


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "cases":
        print(__doc__)
        return 2
    ctx = Context(name=sys.argv[2])
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    for k in kinds(ctx, pd, cq):
        run(*k)
    print("unknown: %d cases, %d failed" % (len(RESULTS), RESULTS.count(False)), flush=True)
    return 0 if all(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
