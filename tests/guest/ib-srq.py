#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest helper of scenario 78: SRQs, XRC domains and address handles from user space.

  ib-srq.py cases IBDEV UVERBS   pyverbs (libibverbs + libmlx5) against IBDEV: SRQ
                                 create / query / modify limit / destroy, refusals
                                 with upstream's errno, XRC domain open / close, XRC
                                 SRQ (skipped without CQ verbs); raw CREATE_AH /
                                 DESTROY_AH on /dev/infiniband/UVERBS (libmlx5 builds
                                 InfiniBand address handles without the kernel). One
                                 "name: PASS|FAIL|SKIP (detail)" line per case.
  ib-srq.py hold IBDEV           two SRQs and one XRC domain, "ready", then wait to be
                                 killed (the scenario counts the emulator's objects)
"""
import ctypes
import errno
import os
import signal
import struct
import sys

from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr, SrqInitAttrEx
from pyverbs.xrcd import XRCD, XRCDInitAttr
import pyverbs.enums as e

RESULTS = []


def case(name, got, want):
    ok = got == want
    RESULTS.append(ok)
    print("srq.%s: %s (got %s, want %s)" % (name, "PASS" if ok else "FAIL", got, want),
          flush=True)


def skip(name, why):
    print("srq.%s: SKIP (%s)" % (name, why), flush=True)


def en(x):
    return errno.errorcode.get(x, str(x)) if x else "0"


def err_of(f):
    """errno of f() (0 when it succeeds; the object is closed)."""
    try:
        o = f()
    except PyverbsRDMAError as ex:
        return ex.error_code
    except PyverbsError as ex:
        return getattr(ex, "error_code", -1) or -1
    if o is not None and hasattr(o, "close"):
        o.close()
    return 0


def srq(pd, wr, sge, limit=0):
    return SRQ(pd, SrqInitAttr(SrqAttr(max_wr=wr, max_sge=sge, srq_limit=limit)))


def xrcd(ctx):
    a = XRCDInitAttr(e.IBV_XRCD_INIT_ATTR_FD | e.IBV_XRCD_INIT_ATTR_OFLAGS, os.O_CREAT, -1)
    return XRCD(ctx, a)


def srq_cases(ctx, pd):
    da = ctx.query_device()
    case("device.max_srq_wr", da.max_srq_wr > 0, True)
    s = srq(pd, 100, 2)
    a = s.query()
    # libmlx5 asks for more than the user (room for its link WQE and one more
    # scatter entry); the kernel rounds the ring up to a power of two and reports
    # ring - 1 (upstream).
    ring = a.max_wr + 1
    case("query.max_wr-covers", a.max_wr >= 100, True)
    case("query.ring-power-of-two", ring & (ring - 1), 0)
    case("query.max_sge-covers", a.max_sge >= 2, True)
    case("query.limit-0", a.srq_limit, 0)
    s.modify(SrqAttr(srq_limit=10), e.IBV_SRQ_LIMIT)
    case("modify.limit-10", s.query().srq_limit, 10)
    s.modify(SrqAttr(srq_limit=ring - 1), e.IBV_SRQ_LIMIT)
    case("modify.limit-ring-1", s.query().srq_limit, ring - 1)
    case("modify.limit-at-ring", en(err_of(
        lambda: s.modify(SrqAttr(srq_limit=ring), e.IBV_SRQ_LIMIT))), en(errno.EINVAL))
    case("modify.limit-kept", s.query().srq_limit, ring - 1)
    case("modify.resize-refused", en(err_of(
        lambda: s.modify(SrqAttr(max_wr=2 * ring), e.IBV_SRQ_MAX_WR))), en(errno.EINVAL))
    s.close()
    # The device's limits (libmlx5 may refuse first; the errno is upstream's either way).
    case("create.max_wr-at-cap", en(err_of(lambda: srq(pd, da.max_srq_wr + 1, 1))),
         en(errno.EINVAL))
    # max_srq_sge is max_wqe_sz_rq / 16 - 1 (upstream); the request may name one more.
    case("create.max_sge-above-wqe", en(err_of(lambda: srq(pd, 8, da.max_srq_sge + 2))),
         en(errno.EINVAL))
    case("create.small", en(err_of(lambda: srq(pd, 1, 1))), "0")
    case("create.max_sge-at-cap", en(err_of(lambda: srq(pd, 8, da.max_srq_sge))), "0")
    # libmlx5 adds a scatter entry: max_srq_sge + 1 no longer fits the WQE.
    case("create.max_sge-full-wqe", en(err_of(lambda: srq(pd, 8, da.max_srq_sge + 1))),
         en(errno.EINVAL))
    big = srq(pd, 4000, 1)
    bw = big.query().max_wr
    case("create.4000-wr", (bw >= 4000, (bw + 1) & bw), (True, 0))
    big.close()


def xrc_cases(ctx, pd):
    x = xrcd(ctx)
    case("xrcd.open", x is not None, True)
    try:
        from pyverbs.cq import CQ
        cq = CQ(ctx, 16)
    except (PyverbsRDMAError, PyverbsError) as ex:
        skip("xrc-srq", "no CQ verbs: %s" % ex)
        x.close()
        return
    a = SrqInitAttrEx(max_wr=15, max_sge=1)
    a.srq_type = e.IBV_SRQT_XRC
    a.pd = pd
    a.xrcd = x
    a.cq = cq
    a.comp_mask = (e.IBV_SRQ_INIT_ATTR_TYPE | e.IBV_SRQ_INIT_ATTR_PD |
                   e.IBV_SRQ_INIT_ATTR_CQ | e.IBV_SRQ_INIT_ATTR_XRCD)
    s = SRQ(ctx, a)
    # libmlx5 asks for its ring less one (31 for 15, as for a basic SRQ) and the query
    # answers the kernel's size, as upstream's: at least what was asked.
    case("xrc-srq.query.max_wr-covers", s.query().max_wr >= 15, True)
    s.modify(SrqAttr(srq_limit=3), e.IBV_SRQ_LIMIT)
    case("xrc-srq.limit", s.query().srq_limit, 3)
    case("xrc-srq.number", s.get_srq_num() > 0, True)
    s.close()
    cq.close()
    x.close()


# Raw uverbs write commands (ib_user_verbs.h), as ib-uverbs.py sends GET_CONTEXT.
GET_CONTEXT, ALLOC_PD, CREATE_AH, DESTROY_AH = 0, 3, 5, 8


def write_cmd(fd, cmd, body, outlen):
    """One legacy write command: the header, the response pointer when `outlen`
    (commands with a response start with it), `body`."""
    resp = ctypes.create_string_buffer(max(outlen, 8))
    ptr = struct.pack("<Q", ctypes.addressof(resp)) if outlen else b""
    data = struct.pack("<IHH", cmd, (8 + len(ptr) + len(body)) // 4, outlen // 4) + ptr + body
    try:
        os.write(fd, data)
    except OSError as ex:
        return ex.errno, b""
    return 0, resp.raw[:outlen]


def ah_attr(dlid, sl=0, rate=0, grh=None, port=1):
    """struct ib_uverbs_ah_attr (32 bytes)."""
    g = grh or (b"\0" * 16, 0, 0, 0, 0)
    return struct.pack("<16sIBBBBHBBBBBB", g[0], g[1], g[2], g[3], g[4], 0, dlid, sl, 0,
                       rate, 1 if grh else 0, port, 0)


def ah_cases(uverbs):
    fd = os.open("/dev/infiniband/" + uverbs, os.O_RDWR)
    # GET_CONTEXT (mlx5 v2 request: 4 bfregs, 4K UARs + dynamic UARs, CQE version 1).
    req = struct.pack("<IIIIBBHIQ", 4, 0, 0, 0, 1, 0, 0, 0, 3)
    rc, _ = write_cmd(fd, GET_CONTEXT, req, 8 + 80)
    case("ah.context", en(rc), "0")
    rc, r = write_cmd(fd, ALLOC_PD, b"", 16)
    case("ah.pd", en(rc), "0")
    pd = struct.unpack_from("<I", r)[0] if r else 0

    def create(attr):
        rc, r = write_cmd(fd, CREATE_AH, struct.pack("<QII", 1, pd, 0) + attr, 8)
        return rc, (struct.unpack_from("<I", r)[0] if r else None)

    rc, h = create(ah_attr(0x12))
    case("ah.create", en(rc), "0")
    rc, h2 = create(ah_attr(0x34, sl=3, grh=(bytes(range(16)), 0x12345, 0, 64, 0x20)))
    case("ah.create-grh", en(rc), "0")
    rc, _ = create(ah_attr(0x34, rate=1))
    case("ah.bad-rate", en(rc), en(errno.EINVAL))
    rc, _ = create(ah_attr(0x34, rate=26))
    case("ah.rate-above-1600", en(rc), en(errno.EINVAL))
    for n, hh in (("ah.destroy", h), ("ah.destroy-grh", h2)):
        rc, _ = write_cmd(fd, DESTROY_AH, struct.pack("<I", hh or 0), 0)
        case(n, en(rc), "0")
    os.close(fd)


OPEN_XRCD, CREATE_CQ = 37, 18
DEFAULT_UIDX = 0xFFFFFF


def srq_req(buf, db, uidx=0):
    """struct mlx5_ib_create_srq."""
    return struct.pack("<QQIIII", buf, db, 0, 0, uidx, 0)


def raw_srq_cases(uverbs):
    """SRQ_CREATE ioctls on a context of CQE version 0 (the v0 GET_CONTEXT request)."""
    import mmap
    import uverbs_ioctl as ui
    page = mmap.PAGESIZE
    keep = []

    def mem(n=page):
        m = mmap.mmap(-1, max(n, page), mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        keep.append(m)
        return ctypes.addressof(ctypes.c_char.from_buffer(m))

    fd = os.open("/dev/infiniband/" + uverbs, os.O_RDWR)
    rc, _ = write_cmd(fd, GET_CONTEXT, struct.pack("<II", 4, 0), 8 + 80)
    case("raw-srq.context-v0", en(rc), "0")
    rc, r = write_cmd(fd, ALLOC_PD, b"", 16)
    pd = struct.unpack_from("<I", r)[0] if r else 0
    # A basic SRQ of 16 WRs, 1 SGE: 32 WQEs of 32 bytes. Without a buffer attribute
    # the ring is the request's; with the core's SRQ_BUF_UMEM it is refused with
    # EOPNOTSUPP before anything is pinned (upstream serves it through
    # ib_umem_get_attr_or_va; mlx5-rs does not).
    rc, h = ui.create_srq(fd, pd, 16, 1, srq_req(mem(), mem()))
    case("raw-srq.ioctl.create", en(rc), "0")
    if not rc:
        case("raw-srq.ioctl.destroy", en(ui.destroy(fd, ui.OBJ_SRQ, h)), "0")
    # Driver-specific (upstream serves SRQ_BUF_UMEM): run on mlx5_rs only.
    if os.environ.get("IB_DRIVER", "mlx5_rs") != "upstream":
        ring = mem()
        d = ui.buffer_desc(ring, 1024)
        rc, h = ui.create_srq(fd, pd, 16, 1, srq_req(ring, mem()),
                              [(ui.SRQ_BUF_UMEM, d.len, d.addr)])
        case("raw-srq.ioctl.buf-umem-refused.mlx5_rs", en(rc), en(errno.EOPNOTSUPP))
        if not rc:
            ui.destroy(fd, ui.OBJ_SRQ, h)
    # An XRC SRQ's user index follows the context's CQE version (0 here), not the
    # device's (1): the default index is the only one taken (upstream
    # get_srq_user_index: EINVAL for another).
    rc, r = write_cmd(fd, OPEN_XRCD, struct.pack("<iI", -1, os.O_CREAT), 8)
    xrcd = struct.unpack_from("<I", r)[0] if r else 0
    case("raw-srq.xrcd", en(rc), "0")
    cq_req = struct.pack("<QQIBBHHHI", mem(), mem(), 64, 0, 0, 0, 0, 0, 0)
    core = struct.pack("<QIIiI", 0, 15, 0, -1, 0)
    rc, r = write_cmd(fd, CREATE_CQ, core + cq_req, 16)
    cq = struct.unpack_from("<I", r)[0] if r else 0
    case("raw-srq.cq", en(rc), "0")
    for name, uidx, want in (("default-uidx", DEFAULT_UIDX, 0), ("uidx-5", 5, errno.EINVAL)):
        rc, h = ui.create_srq(fd, pd, 16, 1, srq_req(mem(), mem(), uidx), xrc=(xrcd, cq))
        case("raw-srq.xrc-v0-" + name, en(rc), en(want))
        if not rc:
            ui.destroy(fd, ui.OBJ_SRQ, h)
    os.close(fd)


def cases(name, uverbs):
    ctx = Context(name=name)
    pd = PD(ctx)
    for f in (srq_cases, xrc_cases):
        try:
            f(ctx, pd)
        except Exception as ex:  # a failed verb fails the rest of its group
            case(f.__name__ + ".exception", repr(ex), "none")
    pd.close()
    ctx.close()
    try:
        ah_cases(uverbs)
    except Exception as ex:
        case("ah.exception", repr(ex), "none")
    try:
        raw_srq_cases(uverbs)
    except Exception as ex:
        case("raw-srq.exception", repr(ex), "none")
    return 0 if all(RESULTS) else 1


def hold(name):
    ctx = Context(name=name)
    pd = PD(ctx)
    objs = [srq(pd, 63, 1), srq(pd, 255, 4), xrcd(ctx)]
    print("ready", len(objs), flush=True)
    signal.pause()
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "cases":
        sys.exit(cases(sys.argv[2], sys.argv[3]))
    sys.exit(hold(sys.argv[2]))
