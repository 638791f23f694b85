"""libibverbs memory regions through ctypes, for tests/guest/ib-mr.py and
tests/guest/ib-mr-bench.py (the guest has no libibverbs headers; Python's standard
library only), and what the other guest helpers share with them (ib-qp.py,
ib-unknown.py, ib-failnth.py).

Verbs: open a device by name, alloc/dealloc a PD, ibv_reg_mr / ibv_reg_mr_iova,
ibv_rereg_mr, ibv_dereg_mr; an MR's lkey/rkey read from struct ibv_mr. Also the
pinned-page counters (/proc/vmstat nr_foll_pin_*, VmPin) and the emulator's control
channel (/dev/mlx5emu-ctl, JSON lines).
"""

import ctypes
import json
import os

LOCAL_WRITE = 1
REMOTE_WRITE = 2
REMOTE_READ = 4
REMOTE_ATOMIC = 8
ON_DEMAND = 64

REREG_TRANS = 1
REREG_PD = 2
REREG_ACCESS = 4

vp = ctypes.c_void_p


class IbvMr(ctypes.Structure):
    """struct ibv_mr (verbs.h)."""

    _fields_ = [
        ("context", vp),
        ("pd", vp),
        ("addr", vp),
        ("length", ctypes.c_size_t),
        ("handle", ctypes.c_uint32),
        ("lkey", ctypes.c_uint32),
        ("rkey", ctypes.c_uint32),
    ]


class IbvPd(ctypes.Structure):
    """struct ibv_pd (verbs.h)."""

    _fields_ = [("context", vp), ("handle", ctypes.c_uint32)]


def lib():
    v = ctypes.CDLL("libibverbs.so.1", use_errno=True)
    v.ibv_get_device_list.restype = ctypes.POINTER(vp)
    v.ibv_get_device_list.argtypes = [ctypes.POINTER(ctypes.c_int)]
    v.ibv_get_device_name.restype = ctypes.c_char_p
    v.ibv_get_device_name.argtypes = [vp]
    v.ibv_open_device.restype = vp
    v.ibv_open_device.argtypes = [vp]
    v.ibv_close_device.argtypes = [vp]
    v.ibv_alloc_pd.restype = vp
    v.ibv_alloc_pd.argtypes = [vp]
    v.ibv_dealloc_pd.argtypes = [vp]
    v.ibv_reg_mr.restype = ctypes.POINTER(IbvMr)
    v.ibv_reg_mr.argtypes = [vp, vp, ctypes.c_size_t, ctypes.c_int]
    v.ibv_reg_mr_iova.restype = ctypes.POINTER(IbvMr)
    v.ibv_reg_mr_iova.argtypes = [vp, vp, ctypes.c_size_t, ctypes.c_uint64, ctypes.c_int]
    v.ibv_rereg_mr.restype = ctypes.c_int
    v.ibv_rereg_mr.argtypes = [ctypes.POINTER(IbvMr), ctypes.c_int, vp, vp,
                               ctypes.c_size_t, ctypes.c_int]
    v.ibv_dereg_mr.restype = ctypes.c_int
    v.ibv_dereg_mr.argtypes = [ctypes.POINTER(IbvMr)]
    return v


def open_dev(v, name):
    n = ctypes.c_int()
    lst = v.ibv_get_device_list(ctypes.byref(n))
    for i in range(n.value):
        if v.ibv_get_device_name(lst[i]).decode() == name:
            ctx = v.ibv_open_device(lst[i])
            if not ctx:
                raise OSError(ctypes.get_errno(), "ibv_open_device " + name)
            return ctx
    raise OSError(19, "no device " + name)


def alloc_pd(v, ctx):
    pd = v.ibv_alloc_pd(ctx)
    if not pd:
        raise OSError(ctypes.get_errno(), "ibv_alloc_pd")
    return pd


def reg(v, pd, addr, length, access, iova=None):
    """(mr, 0) or (None, errno)."""
    ctypes.set_errno(0)
    if iova is None:
        mr = v.ibv_reg_mr(pd, addr, length, access)
    else:
        mr = v.ibv_reg_mr_iova(pd, addr, length, iova, access)
    if not mr:
        return None, ctypes.get_errno()
    return mr, 0


def dereg(v, mr):
    """0 or errno (ibv_dereg_mr returns the errno)."""
    return v.ibv_dereg_mr(mr)


def keys(mr):
    return mr.contents.lkey, mr.contents.rkey


libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = vp
libc.mmap.argtypes = [vp, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.munmap.argtypes = [vp, ctypes.c_size_t]
libc.madvise.argtypes = [vp, ctypes.c_size_t, ctypes.c_int]
PROT_RW = 3
MAP_PRIVATE_ANON = 0x02 | 0x20
MAP_POPULATE = 0x8000
MADV_HUGEPAGE = 14
MADV_NOHUGEPAGE = 15


def buffer(size, huge=False, populate=True):
    """An anonymous private mapping of `size` bytes, touched; with `huge`, THP
    advised (else THP refused, so every 4 KiB page is its own block)."""
    a = libc.mmap(None, size, PROT_RW, MAP_PRIVATE_ANON, -1, 0)
    if a is None or a == ctypes.c_void_p(-1).value:
        raise OSError(ctypes.get_errno(), "mmap")
    libc.madvise(a, size, MADV_HUGEPAGE if huge else MADV_NOHUGEPAGE)
    if populate:
        ctypes.memset(a, 0x5a, size)
    return a


def unmap(addr, size):
    libc.munmap(addr, size)


def vmstat(key):
    """A /proc/vmstat counter, exact: the per-CPU parts are folded into the totals
    first (a write to vm.stat_refresh). /proc/vmstat alone shows the global totals,
    which lag the truth by up to each CPU's stat threshold (seen: 9 released pins
    missing right after the last unpin)."""
    with open("/proc/sys/vm/stat_refresh", "w") as f:
        f.write("1")
    with open("/proc/vmstat") as f:
        for line in f:
            k, val = line.split()
            if k == key:
                return int(val)
    return None


def vm_pin_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmPin:"):
                return int(line.split()[1])
    return None


def res_mr_keys(pid=None):
    """{(lkey, rkey)} of the MRs the RDMA core holds for process `pid` (this one by
    default), as `rdma res show mr` reports them: the keys the core took from the
    driver's MR, whatever driver it is."""
    import subprocess

    pid = os.getpid() if pid is None else pid
    out = subprocess.run(["rdma", "-j", "res", "show", "mr"], capture_output=True,
                         text=True, check=False).stdout
    rows = json.loads(out or "[]")

    def key(v):  # iproute2 prints keys as hex strings in JSON
        return int(v, 16) if isinstance(v, str) else int(v or 0)

    return {(key(r.get("lkey")), key(r.get("rkey"))) for r in rows if r.get("pid") == pid}


def pinned():
    """Pages pinned system-wide (FOLL_PIN acquired - released), exact."""
    return vmstat("nr_foll_pin_acquired") - vmstat("nr_foll_pin_released")


def emuctl(req):
    """The emulator's reply (a dict) to the control request `req` (one JSON line
    each way), or None without a channel."""
    dev = os.environ.get("EMUCTL_DEV", "/dev/mlx5emu-ctl")
    if not os.path.exists(dev):
        return None
    fd = os.open(dev, os.O_RDWR)
    try:
        os.write(fd, (json.dumps(req) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            buf += chunk
    finally:
        os.close(fd)
    return json.loads(buf)


def emu_get(path):
    """A value of the emulator's stats (request `get`), or None without a channel."""
    r = emuctl({"cmd": "get", "path": path})
    return r.get("value") if r and r.get("ok") else None
