#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest helper of scenario 80: every create verb from user space, its N-th slab
allocation failed (fail-nth, Documentation/fault-injection/fault-injection.rst), for
N = 1, 2, ... until the verb succeeds without reaching the N-th allocation.

  ib-failnth.py cases IBDEV UVERBS

Verbs: ucontext (GET_CONTEXT), PD, MR, CQ, QP, basic SRQ (an RMP), XRC domain, XRC
SRQ, AH (raw CREATE_AH: libmlx5 builds InfiniBand AHs itself), UAR object
(MLX5_IB_METHOD_UAR_OBJ_ALLOC). The failing allocation may be the RDMA core's, the
driver's or libibverbs' own (a system call it makes): whichever, after a failed verb
the device holds what it held before (the emulator's live objects and UARs), and
after a verb that succeeded and was destroyed too. One "name: PASS|FAIL (detail)"
line per verb: how many N were tried, how many failed, which left something behind.

failslab must let GFP_KERNEL allocations fail (ignore-gfp-wait N, set by the
scenario); the write of N and the verb run on the same thread (fail-nth is per task).
"""
import ctypes
import errno
import os
import struct
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr, SrqInitAttrEx
from pyverbs.xrcd import XRCD, XRCDInitAttr

import ib_mr_lib as L
import uverbs_ioctl as ui

MAX_N = 400
RESULTS = []
FN = os.open("/proc/thread-self/fail-nth", os.O_RDWR)

# Legacy write commands (ib_user_verbs.h).
GET_CONTEXT, ALLOC_PD, CREATE_AH, DEALLOC_PD, DESTROY_AH = 0, 3, 5, 4, 8

def case(name, ok, detail):
    RESULTS.append(ok)
    print("failnth.%s: %s (%s)" % (name, "PASS" if ok else "FAIL", detail), flush=True)


def emu_get(path):
    r = L.emuctl({"cmd": "get", "path": path})
    if r is None:
        raise RuntimeError("no emulator control channel")
    return r.get("value", 0) if r.get("ok") else 0


def device_state():
    """What the device holds for us: live objects per type, UARs handed out; and the
    protocol violations it counted (a destroy of an object still in use, ...)."""
    live = emu_get(["objects", "live"]) or {}
    uars = emu_get(["commands", "ALLOC_UAR", "OK"]) - emu_get(["commands", "DEALLOC_UAR", "OK"])
    return dict(live, uars=uars, violations=emu_get(["violations"]))


def write_cmd(fd, cmd, body, outlen):
    resp = ctypes.create_string_buffer(max(outlen, 8))
    ptr = struct.pack("<Q", ctypes.addressof(resp)) if outlen else b""
    data = struct.pack("<IHH", cmd, (8 + len(ptr) + len(body)) // 4, outlen // 4) + ptr + body
    os.write(fd, data)
    return resp.raw[:outlen]


def get_context(fd):
    # mlx5 v2 request: 4 bfregs, 4K UARs + dynamic UARs, CQE version 1.
    req = struct.pack("<IIIIBBHIQ", 4, 0, 0, 0, 1, 0, 0, 0, 3)
    write_cmd(fd, GET_CONTEXT, req, 8 + 80)


class Raw:
    """A uverbs file with a context and a PD, made with plain write commands."""

    def __init__(self, uverbs):
        self.fd = os.open("/dev/infiniband/" + uverbs, os.O_RDWR)
        get_context(self.fd)
        self.pd = struct.unpack_from("<I", write_cmd(self.fd, ALLOC_PD, b"", 16))[0]

    def ah(self):
        # struct ib_uverbs_ah_attr: DLID 0x12, port 1, no GRH.
        attr = struct.pack("<16sIBBBBHBBBBBB", b"\0" * 16, 0, 0, 0, 0, 0, 0x12, 0, 0, 0, 0, 1,
                           0)
        r = write_cmd(self.fd, CREATE_AH, struct.pack("<QII", 1, self.pd, 0) + attr, 8)
        h = struct.unpack_from("<I", r)[0]
        return lambda: write_cmd(self.fd, DESTROY_AH, struct.pack("<I", h), 0)

    def uar(self):
        # Non-cached (blue flame needs write combining, which the device is not known
        # to do).
        err, h = ui.uar_alloc(self.fd, ui.UAR_TYPE_NC)[:2]
        if err:
            raise OSError(err, "UAR_OBJ_ALLOC")

        def destroy():
            err = ui.uar_destroy(self.fd, h)
            if err:
                raise OSError(err, "UAR_OBJ_DESTROY")

        return destroy


def closer(o):
    return o.close


def verbs(name, uverbs):
    ctx = Context(name=name)
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    xrcd_attr = XRCDInitAttr(e.IBV_XRCD_INIT_ATTR_FD | e.IBV_XRCD_INIT_ATTR_OFLAGS, os.O_CREAT,
                             -1)
    xrcd = XRCD(ctx, xrcd_attr)
    raw = Raw(uverbs)

    def ucontext():
        fd = os.open("/dev/infiniband/" + uverbs, os.O_RDWR)
        try:
            get_context(fd)
        except BaseException:
            os.close(fd)
            raise
        return lambda: os.close(fd)

    def qp():
        cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
        return closer(QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap)))

    def xrc_srq():
        a = SrqInitAttrEx(max_wr=15, max_sge=1)
        a.srq_type = e.IBV_SRQT_XRC
        a.pd = pd
        a.xrcd = xrcd
        a.cq = cq
        a.comp_mask = (e.IBV_SRQ_INIT_ATTR_TYPE | e.IBV_SRQ_INIT_ATTR_PD |
                       e.IBV_SRQ_INIT_ATTR_CQ | e.IBV_SRQ_INIT_ATTR_XRCD)
        return closer(SRQ(ctx, a))

    return [
        ("ucontext", ucontext),
        ("pd", lambda: closer(PD(ctx))),
        ("mr", lambda: closer(MR(pd, 4 * 4096, e.IBV_ACCESS_LOCAL_WRITE))),
        ("cq", lambda: closer(CQ(ctx, 16))),
        ("qp", qp),
        ("srq", lambda: closer(SRQ(pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1))))),
        ("xrcd", lambda: closer(XRCD(ctx, xrcd_attr))),
        ("xrc-srq", xrc_srq),
        ("ah", raw.ah),
        ("uar", raw.uar),
    ]


def attempt(make, n):
    """Arms fail-nth at n, runs make(): (destroy or None, whether the n-th fault
    happened, the error)."""
    os.write(FN, b"%d" % n)
    try:
        destroy, err = make(), None
    except Exception as ex:  # whatever failed: the verb, libibverbs, Python
        destroy, err = None, ex
    left = int(os.pread(FN, 32, 0))
    os.write(FN, b"0")
    return destroy, left == 0, err


def run(name, make, warm=False):
    if warm:
        # What a first use creates and keeps is the baseline: the MR cache's UMR QP
        # and the free mkey a dereg leaves in its bucket (upstream's cache keeps its
        # mkeys too).
        make()()
    before = device_state()
    failed, bad = 0, []
    for n in range(1, MAX_N + 1):
        destroy, injected, err = attempt(make, n)
        if destroy is not None:
            destroy()
        else:
            failed += 1
        after = device_state()
        if after != before:
            bad.append("n=%d (%s): %s -> %s" % (n, "failed: %r" % err if destroy is None
                                                 else "succeeded", before, after))
            before = after
        if destroy is not None and not injected:
            case(name, not bad, "%d allocations failed in turn, %d verbs failed%s" %
                 (n - 1, failed, "; left behind: " + "; ".join(bad[:3]) if bad else ""))
            return
    case(name, False, "still reaching allocation %d, last error %r" % (MAX_N, err))


def main():
    if len(sys.argv) != 4 or sys.argv[1] != "cases":
        print(__doc__)
        return 2
    vs = verbs(sys.argv[2], sys.argv[3])
    for name, make in vs:
        run(name, make, warm=name == "mr")
    print("failnth: %d verbs, %d failed" % (len(RESULTS), RESULTS.count(False)), flush=True)
    return 0 if all(RESULTS) else 1


if __name__ == "__main__":
    rc = main()
    sys.stdout.flush()
    # No interpreter teardown: pyverbs objects whose construction failed half-way
    # (an allocation of libibverbs or Python itself failed) have crashed it; the
    # kernel destroys what the process still holds when its files close.
    os._exit(rc)
