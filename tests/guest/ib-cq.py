#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest helper of scenario 76: CQ verbs of an mlx5 uverbs device.

  ib-cq.py pyverbs IBDEV     libmlx5 through pyverbs: CQs of several sizes, with 64-
                             and 128-byte CQEs (MLX5_CQE_SIZE); refused until the
                             provider has UAR objects (see pyverbs())
  ib-cq.py raw UVERBS        raw legacy/extended write commands on
                             /dev/infiniband/UVERBS: CREATE_CQ with every field of
                             the mlx5 request valid and malformed, RESIZE_CQ,
                             EX_MODIFY_CQ (moderation), DESTROY_CQ, each errno as
                             upstream mlx5_ib returns it
  ib-cq.py hold UVERBS N     create N CQs, print "ready", wait to be killed

Each case prints one "name: PASS|FAIL (detail)" line. Only Python's standard library
and pyverbs: the guest has no libibverbs headers.
"""
import ctypes
import errno
import mmap
import os
import struct
import sys
import time

# The driver under test (tests/guest/ib-oracle.sh sets `upstream`): cases whose
# outcome legitimately differs are split by it.
DRIVER = os.environ.get("IB_DRIVER", "mlx5_rs")

PAGE = mmap.PAGESIZE
GET_CONTEXT, CREATE_CQ, RESIZE_CQ, DESTROY_CQ = 0, 18, 19, 20
EXTENDED = 0x80000000
EX_MODIFY_CQ = 57  # IB_USER_VERBS_CMD_THRESHOLD (50) + 7
IB_CQ_MODERATE = 1
# mlx5_ib_create_cq flags
CQE_128B_PAD, UAR_PAGE_INDEX = 1 << 0, 1 << 1

RESULTS = []


def case(name, got, want):
    ok = got == want
    RESULTS.append(ok)
    print("cq.%s: %s (got %s, want %s)" % (name, "PASS" if ok else "FAIL", got, want),
          flush=True)


def en(e):
    return errno.errorcode.get(e, str(e)) if e else "0"


class Mem:
    """Anonymous page-aligned memory and its address (kept mapped while referenced)."""

    def __init__(self, size):
        self.m = mmap.mmap(-1, max(size, PAGE), mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        self.addr = ctypes.addressof(ctypes.c_char.from_buffer(self.m))


def write(fd, cmd):
    try:
        os.write(fd, cmd)
    except OSError as e:
        return e.errno
    return 0


def get_context(fd):
    """v0 request with 4 static bfregs (2 static UAR pages): CQs use the first."""
    resp = ctypes.create_string_buffer(8 + 80)
    drv = struct.pack("<II", 4, 0)
    cmd = struct.pack("<IHHQ", GET_CONTEXT, (16 + len(drv)) // 4, (8 + 80) // 4,
                      ctypes.addressof(resp)) + drv
    return write(fd, cmd)


def mlx5_create(buf, db, cqe_size=64, flags=0, uar=0, comp_en=0, comp_fmt=0, r0=0, r1=0):
    return struct.pack("<QQIBBHHHI", buf, db, cqe_size, comp_en, comp_fmt, flags, uar, r0, r1)


def create_cq(fd, cqe, drv, vector=0, outlen=16):
    """CREATE_CQ: (errno, handle, cqe, cqn)."""
    resp = ctypes.create_string_buffer(max(outlen, 8))
    core = struct.pack("<QQIIiI", ctypes.addressof(resp), 0, cqe, vector, -1, 0)
    cmd = struct.pack("<IHH", CREATE_CQ, (8 + len(core) + len(drv)) // 4, outlen // 4)
    e = write(fd, cmd + core + drv)
    if e:
        return e, None, None, None
    h, n = struct.unpack_from("<II", resp.raw, 0)
    cqn = struct.unpack_from("<I", resp.raw, 8)[0] if outlen >= 12 else None
    return 0, h, n, cqn


def resize_cq(fd, h, cqe, drv):
    resp = ctypes.create_string_buffer(8)
    core = struct.pack("<QII", ctypes.addressof(resp), h, cqe)
    cmd = struct.pack("<IHH", RESIZE_CQ, (8 + len(core) + len(drv)) // 4, 2)
    e = write(fd, cmd + core + drv)
    return e, (struct.unpack_from("<I", resp.raw, 0)[0] if not e else None)


def mlx5_resize(buf, cqe_size=64, r0=0, r1=0):
    return struct.pack("<QHHI", buf, cqe_size, r0, r1)


def destroy_cq(fd, h):
    resp = ctypes.create_string_buffer(8)
    cmd = struct.pack("<IHHQII", DESTROY_CQ, 24 // 4, 8 // 4, ctypes.addressof(resp), h, 0)
    return write(fd, cmd)


def modify_cq(fd, h, count, period, mask=IB_CQ_MODERATE):
    body = struct.pack("<IIHHI", h, mask, count, period, 0)
    cmd = struct.pack("<IHH", EXTENDED | EX_MODIFY_CQ, len(body) // 8, 0)
    ex = struct.pack("<QHHI", 0, 0, 0, 0)
    return write(fd, cmd + ex + body)


def vm_pin_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmPin:"):
                return int(line.split()[1])
    return -1


def ring_bytes(cqe, cqe_size):
    n = 1
    while n < cqe + 1:
        n *= 2
    return n * cqe_size


def raw(uverbs):
    path = "/dev/infiniband/" + uverbs
    fd = os.open(path, os.O_RDWR)
    case("get-context", en(get_context(fd)), "0")
    keep = []

    def good(cqe, cqe_size=64, **kw):
        b = Mem(ring_bytes(cqe, cqe_size))
        d = Mem(PAGE)
        keep.extend([b, d])
        return mlx5_create(b.addr, d.addr, cqe_size, **kw)

    # Valid CQs of several sizes and both CQE sizes; the response has the ring size
    # (entries - 1) and a CQN.
    made = []
    for cqe in (1, 15, 255, 1000, 4096):
        for sz in (64, 128):
            e, h, n, cqn = create_cq(fd, cqe, good(cqe, sz))
            want = ring_bytes(cqe, 1) - 1
            case("create.%d-%d" % (cqe, sz), (en(e), n), ("0", want))
            if not e:
                made.append(h)
    # A long request with zero tail bytes, a short response (no driver response).
    e, h, _, _ = create_cq(fd, 7, good(7) + b"\0" * 8)
    case("create.long-zero-tail", en(e), "0")
    if not e:
        made.append(h)
    e, h, _, cqn = create_cq(fd, 7, good(7), outlen=8)
    case("create.no-driver-response", (en(e), cqn), ("0", None))
    if not e:
        made.append(h)

    # The CQ_CREATE ioctl: without a buffer attribute the ring is the request's; with
    # one of the core's optional buffer attributes (a UMEM descriptor, or the legacy
    # VA + length pair) it is refused with EOPNOTSUPP before anything is pinned
    # (upstream mlx5_ib serves them through ib_umem_get_cq_buf_or_va; mlx5-rs does not).
    import uverbs_ioctl as ui
    ring = Mem(ring_bytes(7, 64))
    keep.append(ring)
    e, h = ui.create_cq(fd, 7, good(7))
    case("ioctl.create", en(e), "0")
    if not e:
        case("ioctl.destroy", en(ui.destroy(fd, ui.OBJ_CQ, h)), "0")
    # Driver-specific (upstream serves the attributes): run on mlx5_rs only.
    if DRIVER != "upstream":
        desc = ui.buffer_desc(ring.addr, ring_bytes(7, 64))
        pin0 = vm_pin_kb()
        e, h = ui.create_cq(fd, 7, good(7), [(ui.CQ_BUF_UMEM, desc.len, desc.addr)])
        case("ioctl.buf-umem-refused.mlx5_rs", en(e), en(errno.EOPNOTSUPP))
        if not e:
            made.append(h)
        e, h = ui.create_cq(fd, 7, good(7), [(ui.CQ_BUFFER_VA, 8, ring.addr),
                                             (ui.CQ_BUFFER_LENGTH, 8, ring_bytes(7, 64))])
        case("ioctl.buffer-va-refused.mlx5_rs", en(e), en(errno.EOPNOTSUPP))
        if not e:
            made.append(h)
        case("ioctl.refused-nothing-pinned.mlx5_rs", vm_pin_kb(), pin0)

    # Malformed requests, as upstream mlx5_ib refuses them.
    b = Mem(1 << 16)
    d = Mem(PAGE)
    keep.extend([b, d])
    bad = [
        ("short-16", 7, mlx5_create(b.addr, d.addr)[:16], errno.EINVAL),
        ("short-21", 7, mlx5_create(b.addr, d.addr)[:21], errno.EINVAL),
        ("trailing-nonzero", 7, mlx5_create(b.addr, d.addr) + b"\0\0\0\1\0\0\0\0",
         errno.EOPNOTSUPP),
        ("cqe-size-32", 7, mlx5_create(b.addr, d.addr, 32), errno.EINVAL),
        ("cqe-size-256", 7, mlx5_create(b.addr, d.addr, 256), errno.EINVAL),
        ("unknown-flag", 7, mlx5_create(b.addr, d.addr, flags=1 << 3), errno.EINVAL),
        ("reserved0", 7, mlx5_create(b.addr, d.addr, r0=1), errno.EINVAL),
        ("reserved1", 7, mlx5_create(b.addr, d.addr, r1=1), errno.EINVAL),
        ("pad-with-64", 7, mlx5_create(b.addr, d.addr, flags=CQE_128B_PAD),
         errno.EOPNOTSUPP),
        ("buf-misaligned", 7, mlx5_create(b.addr + 32, d.addr), errno.EINVAL),
        ("db-straddles-page", 7, mlx5_create(b.addr, d.addr + PAGE - 4), errno.EINVAL),
        ("buf-unmapped", 7, mlx5_create(0x1000, d.addr), errno.EFAULT),
        # The emulated device has no CQE compression (caps cqe_compression 0).
        ("compression-unsupported", 7, mlx5_create(b.addr, d.addr, comp_en=1),
         errno.EOPNOTSUPP),
        ("cqe-above-max", (1 << 22) + 1, mlx5_create(b.addr, d.addr), errno.EINVAL),
        ("ring-above-max", 1 << 22, mlx5_create(b.addr, d.addr), errno.EINVAL),
    ]
    for name, cqe, drv, want in bad:
        e, h, _, _ = create_cq(fd, cqe, drv)
        case("create.bad." + name, en(e), en(want))
        if not e:
            made.append(h)
    e, h, _, _ = create_cq(fd, 7, mlx5_create(b.addr, d.addr), vector=1 << 20)
    case("create.bad.comp-vector", en(e), "EINVAL")
    # A UAR index the context does not hold. Driver-specific: mlx5_rs refuses it
    # before any command (EINVAL); upstream hands the user's index to the device as it
    # is (mlx5_ib cq.c create_cq_user, MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX) and
    # relies on firmware's check of the context's uid, which this emulator (no user
    # contexts: log_max_uctx 0) counts as a protocol violation; not run there.
    if DRIVER != "upstream":
        e, h, _, _ = create_cq(fd, 7, mlx5_create(b.addr, d.addr, flags=UAR_PAGE_INDEX,
                                                  uar=0xfff0))
        case("create.bad.foreign-uar-index.mlx5_rs", en(e), "EINVAL")
        if not e:
            made.append(h)

    if not made:
        case("create.any", "none created", "some")
        return 1
    # Moderation (EX_MODIFY_CQ): limits from the cq_moderation caps.
    h = made[0]
    case("modify.ok", en(modify_cq(fd, h, 16, 10)), "0")
    case("modify.max", en(modify_cq(fd, h, 0xffff, 0xfff)), "0")
    case("modify.period-too-large", en(modify_cq(fd, h, 1, 0x1000)), "EINVAL")
    case("modify.unknown-mask", en(modify_cq(fd, h, 1, 1, mask=2)), en(errno.EOPNOTSUPP))

    # Resize: grow, shrink, the same ring, malformed.
    e, h, n, _ = create_cq(fd, 63, good(63))
    case("resize.create", (en(e), n), ("0", 63))
    if e:
        return 1
    made.append(h)
    nb = Mem(ring_bytes(500, 64))
    keep.append(nb)
    case("resize.grow", resize_cq(fd, h, 500, mlx5_resize(nb.addr)), (0, 511))
    nb2 = Mem(ring_bytes(30, 128))
    keep.append(nb2)
    case("resize.shrink-128", resize_cq(fd, h, 30, mlx5_resize(nb2.addr, 128)), (0, 31))
    case("resize.same-ring", resize_cq(fd, h, 20, mlx5_resize(0)), (0, 31))
    case("resize.bad.short", en(resize_cq(fd, h, 100, mlx5_resize(nb.addr)[:8])[0]), "EINVAL")
    case("resize.bad.reserved", en(resize_cq(fd, h, 100, mlx5_resize(nb.addr, r0=1))[0]),
         "EINVAL")
    case("resize.bad.misaligned", en(resize_cq(fd, h, 100, mlx5_resize(nb.addr + 32))[0]),
         "EINVAL")
    case("resize.bad.above-max",
         en(resize_cq(fd, h, (1 << 22) + 1, mlx5_resize(nb.addr))[0]), "EINVAL")
    case("resize.bad.unmapped", en(resize_cq(fd, h, 100, mlx5_resize(0x1000))[0]), "EFAULT")
    # The CQ still works after the failed resizes.
    case("resize.after-failures", resize_cq(fd, h, 100, mlx5_resize(nb.addr)), (0, 127))
    # A CQE size other than 64 or 128: driver-specific, ours only. mlx5_rs refuses it
    # (EINVAL, as both drivers refuse it at create). Upstream's resize_user does not
    # check it (cqe_sz_to_mlx_sz makes any size but 64 a 128-byte CQE): the resize
    # succeeds, and on 2026-12-04 one page (VmPin 4 kB) stayed pinned after every CQ
    # was destroyed, which would hide a leak of the other cases from `pinned-pages-back`;
    # not run there (Documentation/testing.md, the errno helpers against upstream).
    if DRIVER != "upstream":
        r = en(resize_cq(fd, h, 60, mlx5_resize(nb.addr, 96))[0])
        case("resize.bad.cqe-size.mlx5_rs", r, "EINVAL")

    case("pinned-while-cqs-exist", vm_pin_kb() > 0, True)
    for h in made:
        case("destroy.%d" % h, en(destroy_cq(fd, h)), "0")
    # The core no longer finds the handle.
    case("destroy.twice", en(destroy_cq(fd, made[0])), en(errno.ENOENT))
    # Every ring and doorbell page is unpinned again. Driver-specific: upstream
    # mlx5_ib still held 4 KiB pinned here (make check, 2026-12-04), released with
    # the context; not yet explained, so not claimed for upstream.
    if DRIVER != "upstream":
        case("pinned-pages-back.mlx5_rs", vm_pin_kb(), 0)
    os.close(fd)

    # A context with dynamic UARs has no static page for a CQ: EINVAL.
    fd = os.open(path, os.O_RDWR)
    resp = ctypes.create_string_buffer(8 + 80)
    drv = struct.pack("<IIIIBBHIQ", 0, 0, 0, 0, 1, 0, 0, 0, 3)
    cmd = struct.pack("<IHHQ", GET_CONTEXT, (16 + len(drv)) // 4, (8 + 80) // 4,
                      ctypes.addressof(resp)) + drv
    case("dyn-uar.get-context", en(write(fd, cmd)), "0")
    e, _, _, _ = create_cq(fd, 7, mlx5_create(b.addr, d.addr))
    case("dyn-uar.create-no-uar", en(e), "EINVAL")
    os.close(fd)
    return 0 if all(RESULTS) else 1


def hold(uverbs, n):
    fd = os.open("/dev/infiniband/" + uverbs, os.O_RDWR)
    if get_context(fd):
        print("GET_CONTEXT failed", flush=True)
        return 1
    keep = []
    for i in range(n):
        b, d = Mem(ring_bytes(255, 64)), Mem(PAGE)
        keep.extend([b, d])
        e, _, _, _ = create_cq(fd, 255, mlx5_create(b.addr, d.addr))
        if e:
            print("CREATE_CQ failed", en(e), flush=True)
            return 1
    print("ready", flush=True)
    while True:
        time.sleep(1)


def pyverbs(name):
    """libmlx5 (56.1) asks for dynamic UARs and rings a CQ's doorbell on the non-cached
    UAR object it allocates at open (MLX5_IB_METHOD_UAR_OBJ_ALLOC, type NC: blue flame
    needs write combining, which the provider reports absent). CQs of several sizes
    with 64- and 128-byte CQEs are created, resized and destroyed through it."""
    from pyverbs.device import Context
    from pyverbs.cq import CQ
    from pyverbs.pyverbs_error import PyverbsRDMAError

    with Context(name=name) as ctx:
        for sz in ("64", "128"):
            os.environ["MLX5_CQE_SIZE"] = sz
            for cqe in (1, 100, 1024):
                cq = None
                try:
                    cq = CQ(ctx, cqe, None, None, 0)
                    got = "0"
                except PyverbsRDMAError as e:
                    got = en(e.error_code)
                case("pyverbs.create.%d-%s" % (cqe, sz), got, "0")
                if cq is None:
                    continue
                try:
                    cq.resize(2 * cqe + 1)
                    got = "0"
                except PyverbsRDMAError as e:
                    got = en(e.error_code)
                case("pyverbs.resize.%d-%s" % (cqe, sz), got, "0")
                cq.close()
    return 0 if all(RESULTS) else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "raw":
        sys.exit(raw(sys.argv[2]))
    if len(sys.argv) == 3 and sys.argv[1] == "pyverbs":
        sys.exit(pyverbs(sys.argv[2]))
    if len(sys.argv) == 4 and sys.argv[1] == "hold":
        sys.exit(hold(sys.argv[2], int(sys.argv[3])))
    sys.exit(__doc__)
