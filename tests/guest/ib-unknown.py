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
  Then a late allocation of create_cq / create_srq fails (fail-nth, failslab's
  stack filter limited to the driver's create trampoline) while the DESTROY of the
  driver's undo times out (the device executes it, the completion comes late): the
  verb fails with ENOMEM, the buffer stays pinned, and the half-made object is
  dropped, not leaked (an SRQ's drop sends DESTROY_RMP once more): a leaked object
  would hold the function's `Hw` for good, so the pins would not come back at unbind
  (which the scenario checks).
  The faults leave no object in the device that outlives its PD or CQ (the emulator
  would count that as a protocol violation, which later scenarios check is 0): a
  create that never completes made nothing, a failed MR/CQ/SRQ destroy is retried,
  the late DESTROY_QP did destroy the QP.
  One "name: PASS|FAIL (detail)" line per case. The pins are returned when the
  function is unbound (the scenario checks that).

The driver must have been loaded with the emulator advertising a command timeout of
TIMEOUT_MS (the scenario sets it); the late DESTROY_QP completes after DELAY_MS.
The late-allocation cases set failslab up themselves (as scenario 80 does) and put it
back.
"""
import ctypes
import errno
import mmap
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

TIMEOUT_MS = 1000
DELAY_MS = 1500
# BAD_PARAM (mlx5_ifc.h), which mlx5 maps to EINVAL; a syndrome to find in the log.
BAD_PARAM = 0x3
SYNDROME = 0x5A5A
RESULTS = []
FS = "/sys/kernel/debug/failslab/"
MAX_N = 200


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


# The MR buffers of kinds()'s scattered_mr: never unmapped (an MR whose destroy failed
# may still exist, and its pages stay pinned).
BUFFERS = []


def en(x):
    return errno.errorcode.get(x, str(x)) if x else "0"


def kinds(ctx, pd, cq):
    """name, create opcode, destroy opcode, make(), pages the buffer has at least,
    whether a failed destroy is reported (upstream)."""
    # 16 MiB in 4 KiB blocks: more translation entries than the MR cache's largest
    # bucket (512), so the MR takes the command path (CREATE_MKEY / DESTROY_MKEY) on
    # both drivers, as upstream's beyond its cache. 4 KiB blocks only if the pages are
    # not physically contiguous: the kernel takes the largest page size the memory's
    # layout allows (ib_umem_find_best_pgsz), and a fresh guest's 16 MiB often comes in
    # contiguous 2 MiB runs, 8 blocks, a cached MR (the make check of 2026-12-05 18:30
    # UTC got one: its destroy went back to the cache, no DESTROY_MKEY). So the buffer
    # is ours (pyverbs registers a given address as it is), its pages faulted in even
    # ones first, then odd ones: neighbours are never allocated one after the other.
    mr_len = 4096 * 4096
    access = e.IBV_ACCESS_LOCAL_WRITE

    def scattered_mr():
        m = mmap.mmap(-1, mr_len, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        for first in (0, 4096):
            for off in range(first, mr_len, 8192):
                m[off] = 1
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        mr = MR(pd, mr_len, access, address=addr)
        BUFFERS.append(m)  # lives as long as the process: the MR may outlive close()
        return mr

    def qp():
        cap = QPCap(max_send_wr=64, max_recv_wr=64, max_send_sge=1, max_recv_sge=1)
        return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))

    return [
        ("mr", "CREATE_MKEY", "DESTROY_MKEY", scattered_mr, 4096, True),
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


def commands(opcode):
    """Commands of `opcode` the emulator executed, whatever their status."""
    r = emuctl({"cmd": "get", "path": ["commands", opcode]})
    v = r.get("value") or {}
    return sum(v.values()) if isinstance(v, dict) else 0


def text_range(name):
    """[address, next symbol's address) of text symbol `name` (kallsyms)."""
    syms = []
    for line in open("/proc/kallsyms"):
        f = line.split()
        if len(f) >= 3 and f[1] in "tT":
            syms.append((int(f[0], 16), f[2]))
    start = [a for a, n in syms if n == name]
    if len(start) != 1 or start[0] == 0:
        raise RuntimeError("%s: %d text symbols" % (name, len(start)))
    return start[0], min(a for a, n in syms if a > start[0])


class FailSlab:
    """failslab counting only allocations under `require` (a symbol) for fail-nth,
    GFP_KERNEL ones included; DMA-API debug's own allocations (add_dma_entry) never
    fail, as in scenario 80. Restored on exit."""

    KNOBS = ("ignore-gfp-wait", "verbose", "reject-start", "reject-end", "require-start",
             "require-end", "stacktrace-depth")

    def __init__(self, require):
        self.require = require

    def __enter__(self):
        self.saved = {k: open(FS + k).read().strip() for k in self.KNOBS}
        rs, re_ = text_range("add_dma_entry")
        qs, qe = text_range(self.require)
        for k, v in (("ignore-gfp-wait", "N"), ("verbose", "0"), ("stacktrace-depth", "32"),
                     ("reject-start", rs), ("reject-end", re_), ("require-start", qs),
                     ("require-end", qe)):
            with open(FS + k, "w") as f:
                f.write(str(v))
        self.fn = os.open("/proc/thread-self/fail-nth", os.O_RDWR)
        return self

    def attempt(self, make, n):
        """make() with the n-th counted allocation failed: (errno, object, whether the
        n-th allocation was reached)."""
        os.write(self.fn, b"%d" % n)
        err, o = errno_of(make)
        left = int(os.pread(self.fn, 32, 0))
        os.write(self.fn, b"0")
        return err, o, left == 0

    def __exit__(self, *exc):
        os.close(self.fn)
        for k in self.KNOBS:
            with open(FS + k, "w") as f:
                f.write(self.saved[k])


def late_alloc(name, trampoline, destroy_op, make, retried):
    """A create whose allocation after the create command fails, its undo's DESTROY
    timing out. `retried`: the object's drop sends the DESTROY once more (an SRQ).
    Every N is tried with the DESTROY's fault armed (an undo changes what the next
    create allocates: kept doorbell pages are reused), until the create no longer
    reaches the N-th allocation."""
    undone, twice, bad = [], 0, []
    with FailSlab(trampoline) as fs:
        for n in range(1, MAX_N + 1):
            p0, d0 = L.pinned(), commands(destroy_op)
            inject(destroy_op, action="delay", ms=DELAY_MS)
            err, o, reached = fs.attempt(make, n)
            emuctl({"cmd": "clear_injections"})
            sent = commands(destroy_op) - d0
            if sent:
                # The late completion returns the command slot.
                time.sleep((DELAY_MS - TIMEOUT_MS) / 1000 + 0.5)
                undone.append(n)
                kept = L.pinned() - p0
                if err != errno.ENOMEM or kept <= 0:
                    bad.append("n=%d: %s, %d pages kept" % (n, en(err), kept))
                twice += sent >= 2
            if o is not None:
                o.close()
            if not reached:
                break
    case("%s.late-alloc.found" % name, bool(undone) and not reached,
         "allocations whose failure undid a made object: %s" % undone)
    case("%s.late-alloc.destroy-fails" % name, bool(undone) and not bad,
         "%d undone creates, each ENOMEM with its pages kept%s" %
         (len(undone), "; " + "; ".join(bad[:3]) if bad else ""))
    if retried:
        case("%s.late-alloc.dropped" % name, twice > 0,
             "%d of %d undone creates sent %s again (the object dropped, not leaked)" %
             (twice, len(undone), destroy_op))


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "cases":
        print(__doc__)
        return 2
    ctx = Context(name=sys.argv[2])
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    for k in kinds(ctx, pd, cq):
        run(*k)
    late_alloc("cq", "mlx5rs_ib_rs_create_cq", "DESTROY_CQ", lambda: CQ(ctx, 255), False)
    late_alloc("srq", "mlx5rs_ib_rs_create_srq", "DESTROY_RMP",
               lambda: SRQ(pd, SrqInitAttr(SrqAttr(max_wr=64, max_sge=1))), True)
    print("unknown: %d cases, %d failed" % (len(RESULTS), RESULTS.count(False)), flush=True)
    return 0 if all(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
