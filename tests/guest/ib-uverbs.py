#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Guest helper of scenario 71: user space against an mlx5 uverbs device.

  ib-uverbs.py hold IBDEV     open IBDEV with libibverbs (libmlx5), allocate a PD,
                              print "ready", then wait for an async event and print
                              "event N" (IBV_EVENT_DEVICE_FATAL = 8 when the device
                              is unregistered under it)
  ib-uverbs.py udata UVERBS   raw GET_CONTEXT commands (the legacy write path) with
                              malformed mlx5 requests and mmaps of offsets never
                              handed out on /dev/infiniband/UVERBS; prints one
                              "name: PASS|FAIL (detail)" line per case
  ib-uverbs.py uarobj UVERBS  UAR objects (MLX5_IB_OBJECT_UAR through the uverbs
                              ioctl) on a raw dynamic-UAR context: allocate, map,
                              bad types and mappings, destroy with and without a
                              mapping left; the same output
  ib-uverbs.py query UVERBS   QUERY_CONTEXT (the GET_CONTEXT response again),
                              ibv_import_device on that file, mlx5's PD_QUERY and
                              QUERY_PORT; the same output
  ib-uverbs.py uarhold UVERBS a CQ and a QP naming a UAR object's UAR
                              (UAR_PAGE_INDEX): the UAR stays allocated in the
                              emulator after the object is destroyed, until the last
                              of them is destroyed; the same output

Only Python's standard library (ctypes for libibverbs.so.1): the guest has the
rdma-core libraries but no development headers.
"""
import ctypes
import errno
import mmap
import os
import struct
import time
import sys

from uverbs_ioctl import UAR_TYPE_BF, UAR_TYPE_NC, ioctl, uar_alloc, uar_destroy

PAGE = mmap.PAGESIZE
GET_CONTEXT = 0  # IB_USER_VERBS_CMD_GET_CONTEXT
# mlx5 mmap commands (mlx5-abi.h), in bits 15:8 of the page offset
REGULAR, WC, NC, CORE_CLOCK = 0, 2, 3, 5
LIB_CAP_4K_UAR, LIB_CAP_DYN_UAR = 1 << 0, 1 << 1
DEVX = 1 << 0


def hold(name):
    v = ctypes.CDLL("libibverbs.so.1", use_errno=True)
    vp = ctypes.c_void_p
    v.ibv_get_device_list.restype = ctypes.POINTER(vp)
    v.ibv_get_device_list.argtypes = [ctypes.POINTER(ctypes.c_int)]
    v.ibv_get_device_name.restype = ctypes.c_char_p
    v.ibv_get_device_name.argtypes = [vp]
    v.ibv_open_device.restype = vp
    v.ibv_open_device.argtypes = [vp]
    v.ibv_alloc_pd.restype = vp
    v.ibv_alloc_pd.argtypes = [vp]
    v.ibv_get_async_event.argtypes = [vp, vp]
    n = ctypes.c_int()
    lst = v.ibv_get_device_list(ctypes.byref(n))
    devs = [lst[i] for i in range(n.value) if v.ibv_get_device_name(lst[i]) == name.encode()]
    if not devs:
        print("no device", name, flush=True)
        return 1
    ctx = v.ibv_open_device(devs[0])
    if not ctx:
        print("ibv_open_device failed, errno", ctypes.get_errno(), flush=True)
        return 1
    pd = v.ibv_alloc_pd(ctx)
    if not pd:
        print("ibv_alloc_pd failed, errno", ctypes.get_errno(), flush=True)
        return 1
    print("ready", flush=True)
    # struct ibv_async_event: union element (a pointer), enum ibv_event_type.
    ev = ctypes.create_string_buffer(16)
    if v.ibv_get_async_event(ctx, ev) != 0:
        print("ibv_get_async_event failed, errno", ctypes.get_errno(), flush=True)
        return 1
    print("event", struct.unpack_from("<i", ev.raw, 8)[0], flush=True)
    return 0


def get_context(fd, driver, outlen):
    """GET_CONTEXT with driver request bytes `driver`, `outlen` driver response bytes:
    (errno or 0, driver response bytes)."""
    resp = ctypes.create_string_buffer(8 + outlen)
    cmd = struct.pack("<IHHQ", GET_CONTEXT, (16 + len(driver)) // 4, (8 + outlen) // 4,
                      ctypes.addressof(resp)) + driver
    try:
        os.write(fd, cmd)
    except OSError as e:
        return e.errno, b""
    return 0, resp.raw[8:]


def req_v2(total=0, low=0, flags=0, comp_mask=0, cqe=1, r0=0, r1=0, r2=0,
           caps=LIB_CAP_4K_UAR | LIB_CAP_DYN_UAR):
    return struct.pack("<IIIIBBHIQ", total, low, flags, comp_mask, cqe, r0, r1, r2, caps)


def try_mmap(fd, cmd, index, prot=mmap.PROT_READ | mmap.PROT_WRITE, flags=mmap.MAP_SHARED):
    try:
        m = mmap.mmap(fd, PAGE, flags, prot, offset=((cmd << 8) | index) * PAGE)
    except OSError as e:
        return e.errno
    m.close()
    return 0


def clock_info_page(fd):
    """The clock info page's contents (struct mlx5_ib_clock_info, mlx5-abi.h), as
    upstream mlx5_core fills it (lib/clock.c): `sign` even (no update in progress),
    the cyclecounter of cap device_frequency_khz (156,250 kHz on the emulator: shift
    29, mult 3,435,973,837 by mlx5_ptp_shift_constant and clocksource_khz2mult), mask
    CLOCKSOURCE_MASK(41), the wall clock in `nsec` (started at ktime_get_real, so within
    a day of now), the overflow period of that counter; with CLOCK_INFO_WAIT set, updated
    by the overflow work: after that period `nsec` and `cycles` moved on."""
    try:
        m = mmap.mmap(fd, PAGE, mmap.MAP_SHARED, mmap.PROT_READ, offset=(7 << 8) * PAGE)
    except OSError as e:
        case("clock-info.mapped", en(e.errno), "0")
        return

    def fields():
        sign, _, nsec, cycles, frac, mult, shift, mask, period = struct.unpack_from(
            "<IIQQQIIQQ", m, 0)
        return sign, nsec, cycles, frac, mult, shift, mask, period
    sign, nsec, cycles, _, mult, shift, mask, period = fields()
    print("%sclock-info: sign %d nsec %d cycles %d mult %d shift %d mask %#x period %d"
          % (PREFIX[0], sign, nsec, cycles, mult, shift, mask, period), flush=True)
    case("clock-info.sign-even", sign % 2, 0)
    case("clock-info.shift-mult", (shift, mult), (29, 3435973837))
    case("clock-info.mask", mask, (1 << 41) - 1)
    case("clock-info.nsec-near-now", abs(nsec - time.time_ns()) < 86400 * 10**9, True)
    # In jiffies: 17,179 at HZ 1000 (about 17 s: `mlx5_init_overflow_period`). The
    # update after it is not waited for here (it would cost the scenario 2 x 17 s).
    case("clock-info.overflow-period", period, 17179)
    if os.environ.get("CLOCK_INFO_WAIT"):
        time.sleep(period / 1000 + 1.5)
        _, nsec2, cycles2, _, _, _, _, _ = fields()
        case("clock-info.updated", (nsec2 > nsec, cycles2 != cycles), (True, True))
    m.close()


PAT_LIST = "/sys/kernel/debug/x86/pat_memtype_list"


def memtype_of_mmap(fd, cmd, index):
    """Maps page `index` of mmap command `cmd` and returns (errno or 0, the memory types
    of the PAT entries the mapping added: x86 PAT tracks every remap_pfn_range, one
    entry per mapping with the cache mode it got), or (errno, None) without the PAT's
    debugfs list."""
    def entries():
        with open(PAT_LIST) as f:
            return set(line.strip() for line in f if line.startswith("PAT: "))
    if not os.path.exists(PAT_LIST):
        return 0, None
    before = entries()
    try:
        m = mmap.mmap(fd, PAGE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE,
                      offset=((cmd << 8) | index) * PAGE)
    except OSError as e:
        return e.errno, []
    try:
        new = entries() - before
    finally:
        m.close()
    return 0, sorted(line.rsplit(" ", 1)[1] for line in new)


RESULTS = []
PREFIX = ["uctx.udata."]
# The driver under test (tests/guest/ib-oracle.sh sets `upstream`): cases whose
# outcome legitimately differs are split by it.
DRIVER = os.environ.get("IB_DRIVER", "mlx5_rs")


def case(name, got, want):
    ok = got == want
    RESULTS.append(ok)
    print("%s%s: %s (got %s, want %s)" % (PREFIX[0], name, "PASS" if ok else "FAIL", got, want),
          flush=True)


def en(e):
    return errno.errorcode.get(e, str(e)) if e else "0"


def udata(uverbs):
    path = "/dev/infiniband/" + uverbs

    def fresh():
        return os.open(path, os.O_RDWR)

    # Malformed requests, each on its own file (a refused GET_CONTEXT leaves none).
    bad = [
        ("short-12", b"\0" * 12, errno.EINVAL),
        ("v0-zero-bfregs", struct.pack("<II", 0, 0), errno.EINVAL),
        ("comp-mask", req_v2(comp_mask=1), errno.EOPNOTSUPP),
        ("unknown-flag", req_v2(flags=2), errno.EOPNOTSUPP),
        ("reserved-bits", req_v2(r2=1), errno.EOPNOTSUPP),
        ("devx-refused", req_v2(flags=DEVX), errno.EINVAL),
        ("low-latency-all", req_v2(total=4, low=4, caps=LIB_CAP_4K_UAR), errno.EINVAL),
    ]
    for name, d, want in bad:
        fd = fresh()
        e, _ = get_context(fd, d, 80)
        case(name, en(e), en(want))
        os.close(fd)

    # Bytes after the v2 request are never read (upstream copies min(inlen,
    # sizeof(req)) and checks nothing after it), zero or not, within the first 256
    # bytes or past them.
    for name, tail in (("trailing-nonzero-ignored", b"\0\0\0\0\1\0\0\0"),
                       ("trailing-nonzero-300-ignored", b"\0" * 299 + b"\1")):
        fd = fresh()
        e, _ = get_context(fd, req_v2() + tail, 80)
        case(name, en(e), "0")
        os.close(fd)

    # A long request whose extra bytes are zero is accepted; dynamic UARs: no static
    # bfreg, so no REGULAR page to map; a response shorter than the structure.
    fd = fresh()
    e, r = get_context(fd, req_v2() + b"\0" * 8, 16)
    case("dyn-uar-ok", en(e), "0")
    if e == 0:
        case("dyn-uar-tot-bfregs-0", struct.unpack_from("<I", r, 8)[0], 0)
        case("mmap.dyn-no-regular-page", en(try_mmap(fd, REGULAR, 0)), "EINVAL")
        case("mmap.core-clock-read", en(try_mmap(fd, CORE_CLOCK, 0, mmap.PROT_READ)), "0")
        case("mmap.core-clock-write", en(try_mmap(fd, CORE_CLOCK, 0)), "EPERM")
        case("mmap.wc-without-wc", en(try_mmap(fd, WC, 0)), "EPERM")
        case("mmap.entry-never-inserted", en(try_mmap(fd, 9, 0)), "EINVAL")
        case("mmap.command-4", en(try_mmap(fd, 4, 0)), "EINVAL")
        # The clock info page mlx5_core keeps when the device has a clock frequency,
        # mapped read-only (upstream mlx5_ib_mmap_clock_info_page): writable → EPERM,
        # another version → EOPNOTSUPP, private → EINVAL.
        case("mmap.clock-info", en(try_mmap(fd, 7, 0, mmap.PROT_READ)), "0")
        case("mmap.clock-info-write", en(try_mmap(fd, 7, 0)), "EPERM")
        case("mmap.clock-info-v2", en(try_mmap(fd, 7, 1, mmap.PROT_READ)), en(errno.EOPNOTSUPP))
        case("mmap.clock-info-private",
             en(try_mmap(fd, 7, 0, mmap.PROT_READ, mmap.MAP_PRIVATE)), "EINVAL")
        clock_info_page(fd)
    os.close(fd)

    # v0 with static UARs: 4 bfregs = 2 UAR pages; page 2 does not exist.
    fd = fresh()
    e, r = get_context(fd, struct.pack("<II", 4, 0), 80)
    case("v0-static-ok", en(e), "0")
    if e == 0:
        case("v0-tot-bfregs", struct.unpack_from("<I", r, 8)[0], 4)
        # bf_reg_size: 1 << log_bf_reg_size only where write combining is proven
        # (upstream mlx5_wc_support_get, which answers no without cap log_max_sq, as
        # on the emulated InfiniBand-only function); libmlx5 then writes no WQE body
        # to a BlueFlame register.
        case("resp.bf-reg-size", struct.unpack_from("<I", r, 4)[0], 0)
        # clock_info_versions: bit MLX5_IB_CLOCK_INFO_V1, the page mapped above.
        case("resp.clock-info-versions", r[47], 1)
        case("mmap.static-page-0", en(try_mmap(fd, REGULAR, 0)), "0")
        case("mmap.static-page-1-nc", en(try_mmap(fd, NC, 1)), "0")
        case("mmap.static-page-2", en(try_mmap(fd, NC, 2)), "EINVAL")
        # The cache mode each mapping got (x86 PAT): NC uncached (UC-); REGULAR
        # write-combining whether or not write combining is proven (upstream
        # uar_mmap's "best effort WC"). One page each.
        e, types = memtype_of_mmap(fd, NC, 1)
        case("mmap.static-page-1-nc.memtype", (en(e), types), ("0", ["uncached-minus"]))
        # REGULAR: write-combining on both, which needs the kernel to have mapped
        # none of the page itself: upstream ioremaps only the init segment and its own
        # UAR pages; so does mlx5_rs (ffi/core/bar.rs), else PAT would give a later
        # mapping of the page the kernel's uncached type (UC-).
        e, types = memtype_of_mmap(fd, REGULAR, 0)
        case("mmap.static-page-0.memtype", (en(e), types), ("0", ["write-combining"]))
    os.close(fd)
    return 0 if all(RESULTS) else 1


# UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT; the driver's attribute
# MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX (mlx5_user_ioctl_cmds.h).
OBJ_DEVICE, METHOD_QUERY_CONTEXT, QUERY_CONTEXT_RESP_UCTX = 0, 4, 1 << 12


def query_context(fd, outlen):
    """(errno or 0, the driver's `outlen` response bytes) of QUERY_CONTEXT."""
    out = ctypes.create_string_buffer(outlen)
    e, _ = ioctl(fd, OBJ_DEVICE, METHOD_QUERY_CONTEXT,
                 [(QUERY_CONTEXT_RESP_UCTX, outlen, ctypes.addressof(out))])
    return e, out.raw


# MLX5_IB_METHOD_QUERY_PORT of UVERBS_OBJECT_DEVICE, its attributes; the size of
# struct mlx5_ib_uapi_query_port (mlx5_user_ioctl_verbs.h).
METHOD_QUERY_PORT, QUERY_PORT_PORT_NUM, QUERY_PORT_RESP = 1 << 12, 1 << 12, (1 << 12) + 1
QUERY_PORT_SIZE = 40


def query_port(fd, port):
    """(errno or 0, the answer's bytes) of mlx5's QUERY_PORT for `port`."""
    out = ctypes.create_string_buffer(QUERY_PORT_SIZE)
    e, _ = ioctl(fd, OBJ_DEVICE, METHOD_QUERY_PORT,
                 [(QUERY_PORT_PORT_NUM, 4, port),
                  (QUERY_PORT_RESP, QUERY_PORT_SIZE, ctypes.addressof(out))])
    return e, out.raw


# MLX5_IB_METHOD_PD_QUERY of UVERBS_OBJECT_PD, its attributes.
OBJ_PD, METHOD_PD_QUERY, PD_QUERY_HANDLE, PD_QUERY_RESP_PDN = 1, 1 << 12, 1 << 12, (1 << 12) + 1


def query_pd(fd, handle):
    """(errno or 0, the PD number) of mlx5's PD_QUERY for PD `handle`."""
    out = ctypes.c_uint32()
    e, _ = ioctl(fd, OBJ_PD, METHOD_PD_QUERY,
                 [(PD_QUERY_HANDLE, 0, handle),
                  (PD_QUERY_RESP_PDN, 4, ctypes.addressof(out))])
    return e, out.value


def query(uverbs):
    PREFIX[0] = "uctx.query."
    path = "/dev/infiniband/" + uverbs
    # The response again (UVERBS_METHOD_QUERY_CONTEXT with the driver's attribute,
    # upstream mlx5_ib_query_ucontext), then ibv_import_device on the same file:
    # libmlx5 builds its context from that response and drives it (a PD).
    fd = os.open(path, os.O_RDWR)
    e, r = get_context(fd, req_v2(), 80)
    case("get-context", en(e), "0")
    if e == 0:
        e, q = query_context(fd, 80)
        case("context", en(e), "0")
        # Both: response_length (bytes 40..44) min(80, the structure's 72).
        case("same-response", q == r, True)
        v = ctypes.CDLL("libibverbs.so.1", use_errno=True)
        v.ibv_import_device.restype = ctypes.c_void_p
        v.ibv_import_device.argtypes = [ctypes.c_int]
        v.ibv_alloc_pd.restype = ctypes.c_void_p
        v.ibv_alloc_pd.argtypes = [ctypes.c_void_p]
        v.ibv_dealloc_pd.argtypes = [ctypes.c_void_p]
        v.ibv_close_device.argtypes = [ctypes.c_void_p]
        # On a duplicate of the file (the same context): closing the imported
        # context closes its descriptor.
        dup = os.dup(fd)
        ctx = v.ibv_import_device(dup)
        case("import-device", en(0 if ctx else ctypes.get_errno() or errno.EIO), "0")
        if ctx:
            pd = v.ibv_alloc_pd(ctx)
            case("import-device.alloc-pd", en(0 if pd else ctypes.get_errno() or errno.EIO), "0")
            if pd:
                # mlx5's PD_QUERY (libmlx5's ibv_import_pd): the PD number libmlx5
                # keeps (struct mlx5_pd: the ibv_pd, context pointer and handle, then
                # pdn at byte 16) for the PD's handle (struct ibv_pd, byte 8).
                handle = ctypes.c_uint32.from_address(pd + 8).value
                e, pdn = query_pd(fd, handle)
                case("pd-query", (en(e), pdn), ("0", ctypes.c_uint32.from_address(pd + 16).value))
                case("pd-query.no-such-handle", en(query_pd(fd, handle + 1000)[0]), "ENOENT")
                case("import-device.dealloc-pd", en(v.ibv_dealloc_pd(pd)), "0")
            v.ibv_close_device(ctx)
        else:
            os.close(dup)
        # mlx5dv_query_port: all zeros for a valid port of a function without an
        # e-switch in offloads mode or multiport (upstream std_types.c), EINVAL for
        # another port.
        for port, want in ((1, ("0", True)), (0, ("EINVAL", False)), (2, ("EINVAL", False))):
            e, b = query_port(fd, port)
            case("port.%d" % port, (en(e), e == 0 and b == bytes(len(b))), want)
    os.close(fd)
    return 0 if all(RESULTS) else 1


def map_at(fd, offset, length=PAGE, flags=mmap.MAP_SHARED):
    try:
        return 0, mmap.mmap(fd, length, flags, mmap.PROT_WRITE, offset=offset)
    except OSError as e:
        return e.errno, None


def uarobj(uverbs):
    PREFIX[0] = "uctx."
    fd = os.open("/dev/infiniband/" + uverbs, os.O_RDWR)
    e, _ = get_context(fd, req_v2(), 80)
    case("uarobj.get-context-dyn", en(e), "0")
    e, h, off, ln, pid = uar_alloc(fd, UAR_TYPE_NC)
    case("uarobj.alloc-nc", en(e), "0")
    case("uarobj.length-one-page", ln, PAGE)
    case("uarobj.page-id-set", pid != 0, True)
    # The offset names an mmap entry: command 9..255 in bits 15:8 of the page offset.
    case("uarobj.offset-is-an-entry", 9 <= ((off // PAGE) >> 8) & 0xFF, True)
    e, m = map_at(fd, off)
    case("uarobj.mmap", en(e), "0")
    case("uarobj.mmap-two-pages", en(map_at(fd, off, 2 * PAGE)[0]), "EINVAL")
    case("uarobj.mmap-private", en(map_at(fd, off, PAGE, mmap.MAP_PRIVATE)[0]), "EINVAL")
    # A second object gets its own UAR and offset.
    e2, h2, off2, _, pid2 = uar_alloc(fd, UAR_TYPE_NC)
    case("uarobj.second-own-uar", (en(e2), pid2 != pid, off2 != off), ("0", True, True))
    # Blue flame needs write combining, which the device is not known to do; unknown
    # types are refused too (upstream: EOPNOTSUPP).
    case("uarobj.alloc-bf", en(uar_alloc(fd, UAR_TYPE_BF)[0]), en(errno.EOPNOTSUPP))
    case("uarobj.alloc-type-7", en(uar_alloc(fd, 7)[0]), en(errno.EOPNOTSUPP))
    # Destroying the object with its page still mapped: the mapping stays usable until
    # munmap (its UAR goes then); the offset cannot be mapped again.
    case("uarobj.destroy-mapped", en(uar_destroy(fd, h)), "0")
    case("uarobj.mmap-after-destroy", en(map_at(fd, off)[0]), "EINVAL")
    if m is not None:
        m.close()
    case("uarobj.destroy-twice", en(uar_destroy(fd, h)), "ENOENT")
    case("uarobj.destroy-unmapped", en(uar_destroy(fd, h2)), "0")
    # One left for the close of the file to release.
    e, _, off3, _, _ = uar_alloc(fd, UAR_TYPE_NC)
    case("uarobj.alloc-left-for-close", en(e), "0")
    os.close(fd)
    return 0 if all(RESULTS) else 1


def emu_count(*path):
    """The emulator's count at d[path...] (its `get` request on the control channel,
    as tests/guest/lib.sh's emu_count_at): 0 for a command never run OK."""
    import json
    with open(os.environ.get("EMUCTL_DEV", "/dev/mlx5emu-ctl"), "r+b", buffering=0) as f:
        f.write((json.dumps({"cmd": "get", "path": list(path)}) + "\n").encode())
        line = b""
        while not line.endswith(b"\n"):
            c = f.read(1)
            if not c:
                break
            line += c
    r = json.loads(line)
    return int(r["value"]) if r.get("ok") else 0


def wcmd(fd, cmd, body, outlen):
    """A legacy write command with a response of `outlen` bytes: (errno, response)."""
    resp = ctypes.create_string_buffer(max(outlen, 8))
    data = struct.pack("<IHHQ", cmd, (16 + len(body)) // 4, outlen // 4,
                       ctypes.addressof(resp)) + body
    try:
        os.write(fd, data)
    except OSError as e:
        return e.errno, b""
    return 0, resp.raw[:outlen]


def uarhold(uverbs):
    """A UAR object's UAR is not handed back (DEALLOC_UAR) while a CQ or QP names it."""
    PREFIX[0] = "uctx."
    ALLOC_PD, CREATE_CQ, DESTROY_CQ, CREATE_QP, DESTROY_QP = 3, 18, 20, 24, 27
    CQ_UAR_PAGE_INDEX, QP_UAR_PAGE_INDEX = 1 << 1, 1 << 10
    keep = []

    def mem(n=PAGE):
        m = mmap.mmap(-1, max(n, PAGE), mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        keep.append(m)
        return ctypes.addressof(ctypes.c_char.from_buffer(m))

    def deallocs():
        return emu_count("commands", "DEALLOC_UAR", "OK")

    fd = os.open("/dev/infiniband/" + uverbs, os.O_RDWR)
    e, _ = get_context(fd, req_v2(), 80)
    case("uarhold.get-context-dyn", en(e), "0")
    e, h, _, _, uar = uar_alloc(fd, UAR_TYPE_NC)
    case("uarhold.alloc", en(e), "0")
    e, r = wcmd(fd, ALLOC_PD, b"", 8)
    pd = struct.unpack_from("<I", r)[0] if r else 0

    def create_cq():
        drv = struct.pack("<QQIBBHHHI", mem(), mem(), 64, 0, 0, CQ_UAR_PAGE_INDEX, uar, 0, 0)
        e, r = wcmd(fd, CREATE_CQ, struct.pack("<QIIiI", 0, 15, 0, -1, 0) + drv, 16)
        return e, (struct.unpack_from("<I", r)[0] if r else None)

    e, cq = create_cq()
    case("uarhold.cq-on-object", en(e), "0")
    qdrv = struct.pack("<QQIIIIIIQIBBH", mem(16 * 64 + 16 * 64), mem(), 16, 16, 6,
                       QP_UAR_PAGE_INDEX, 1, uar, 0, 0, 0, 0, 0)
    core = struct.pack("<QIIIIIIIIIBBBB", 0, pd, cq or 0, cq or 0, 0, 16, 16, 1, 1, 0, 0, 2,
                       0, 0)
    e, r = wcmd(fd, CREATE_QP, core + qdrv, 72)
    qp = struct.unpack_from("<I", r)[0] if r else None
    case("uarhold.qp-on-object", en(e), "0")
    d0 = deallocs()
    case("uarhold.destroy-object", en(uar_destroy(fd, h)), "0")
    case("uarhold.kept-while-named", deallocs() - d0, 0)
    # The object is gone: no new queue may name its UAR.
    e, _ = create_cq()
    case("uarhold.new-cq-refused", en(e), "EINVAL")
    if qp is not None:
        e, _ = wcmd(fd, DESTROY_QP, struct.pack("<II", qp, 0), 4)
        case("uarhold.destroy-qp", en(e), "0")
    case("uarhold.kept-for-the-cq", deallocs() - d0, 0)
    if cq is not None:
        e, _ = wcmd(fd, DESTROY_CQ, struct.pack("<II", cq, 0), 8)
        case("uarhold.destroy-cq", en(e), "0")
    case("uarhold.released-with-the-last", deallocs() - d0, 1)
    os.close(fd)
    return 0 if all(RESULTS) else 1


if __name__ == "__main__":
    modes = {"hold": hold, "udata": udata, "uarobj": uarobj, "uarhold": uarhold,
             "query": query}
    if len(sys.argv) != 3 or sys.argv[1] not in modes:
        sys.exit(__doc__)
    sys.exit(modes[sys.argv[1]](sys.argv[2]))
