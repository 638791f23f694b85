#!/usr/bin/env python3
"""Memory regions of an IB device through libibverbs (ctypes), one line per case:
`mr.<case>: PASS <what>` or `mr.<case>: FAIL <why>` (tests/scenarios-ib/75-ib-mr.sh
counts them).

  ib-mr.py cases IBDEV

Registers and deregisters 4 KiB, 1 MiB and 64 MiB (lkey = rkey, keys distinct, the
process's VmPin and /proc/vmstat's pin counters follow, the emulator holds one mkey
per MR), re-registers (access, PD, translation: the MR's keys, new or kept as the verbs allow,
are the ones `rdma res show mr` shows for it, replaced ones gone; old pages unpinned),
and
tries the bad inputs with upstream's errno: zero length, start and IOVA at different
page offsets, a range that wraps, unknown access bits, remote write without local
write, ON_DEMAND, an address not mapped, the PD handle of another context.
"""

import errno
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ib_mr_lib as L  # noqa: E402

RESULTS = []
# The driver under test (tests/guest/ib-oracle.sh sets `upstream`): cases whose
# outcome legitimately differs are split by it (mkeys_back).
DRIVER = os.environ.get("IB_DRIVER", "mlx5_rs")


def case(name, ok, what):
    RESULTS.append(ok)
    print("mr.%s: %s %s" % (name, "PASS" if ok else "FAIL", what), flush=True)


def expect_err(v, pd, name, want, addr, length, access, iova=None):
    mr, err = L.reg(v, pd, addr, length, access, iova)
    if mr:
        L.dereg(v, mr)
        case(name, False, "registered, wanted %s" % errno.errorcode.get(want, want))
        return
    case(name, err == want, "errno %s (want %s)" % (errno.errorcode.get(err, err),
                                                    errno.errorcode.get(want, want)))


def mkeys():
    return L.emu_get(["objects", "live", "mkey"])


def cases(dev):
    v = L.lib()
    ctx = L.open_dev(v, dev)
    pd = L.alloc_pd(v, ctx)
    acc = L.LOCAL_WRITE | L.REMOTE_READ | L.REMOTE_WRITE
    pin0 = L.vm_pin_kb()
    acq0, rel0 = L.vmstat("nr_foll_pin_acquired"), L.vmstat("nr_foll_pin_released")
    mk0 = mkeys()

    # --- sizes ---------------------------------------------------------------------
    held = []
    seen = set()
    for name, size in (("4k", 4096), ("1m", 1 << 20), ("64m", 64 << 20)):
        buf = L.buffer(size)
        mr, err = L.reg(v, pd, buf, size, acc)
        if not mr:
            case("reg-" + name, False, "errno %s" % errno.errorcode.get(err, err))
            continue
        lk, rk = L.keys(mr)
        case("reg-" + name, True, "lkey %#x rkey %#x" % (lk, rk))
        case("keys-" + name, lk == rk and lk != 0 and lk not in seen,
             "lkey == rkey, non-zero, distinct")
        seen.add(lk)
        pin = L.vm_pin_kb()
        case("vmpin-" + name, pin - pin0 == sum(s for _, s, _ in held) // 1024 + size // 1024,
             "VmPin %d kB (base %d)" % (pin, pin0))
        held.append((buf, size, mr))
    if mk0 is not None:
        case("emu-mkeys-held", mkeys() == mk0 + len(held),
             "emulator mkeys %s, base %s" % (mkeys(), mk0))
    for buf, size, mr in held:
        case("dereg-%d" % size, L.dereg(v, mr) == 0, "dereg")
        L.unmap(buf, size)
    case("vmpin-back", L.vm_pin_kb() == pin0, "VmPin %d kB" % L.vm_pin_kb())
    if mk0 is not None:
        mkeys_back("emu-mkeys-back", mk0, len(held))

    # --- an IOVA of its own, rereg ----------------------------------------------------
    size = 8 << 12
    buf = L.buffer(2 * size)
    mr, err = L.reg(v, pd, buf, size, acc, iova=0x10000000)
    case("reg-iova", mr is not None, "errno %s" % err)
    if mr:
        pd2 = L.alloc_pd(v, ctx)
        # The verbs let a re-registration return new keys or keep the old ones (IBA
        # vol. 1, the Reregister Memory Region verb: L_Key and R_Key are outputs;
        # upstream keeps them when it re-registers through UMR, makes new ones
        # otherwise). What
        # must hold: it succeeds, the MR's keys are the ones the RDMA core now holds
        # for it (`rdma res show mr`), and keys it replaced are gone from there.
        steps = (
            ("rereg-access", (L.REREG_ACCESS, None, None, 0, L.LOCAL_WRITE)),
            ("rereg-pd", (L.REREG_PD, pd2, None, 0, 0)),
            ("rereg-trans", (L.REREG_TRANS | L.REREG_PD, pd, buf + size, size, 0)),
        )
        for name, args in steps:
            before = L.keys(mr)
            r = v.ibv_rereg_mr(mr, *args)
            after = L.keys(mr)
            res = L.res_mr_keys()
            case(name, r == 0 and after[0] != 0 and res == {after},
                 "rc %d keys %#x/%#x -> %#x/%#x, the core holds %s%s"
                 % (r, before[0], before[1], after[0], after[1],
                    sorted("%#x/%#x" % k for k in res),
                    "" if after == before else " (new keys: the old ones must be gone)"))
        # New pages pinned read-only, then access to writable without new
        # translation: EACCES (ib_umem_check_rereg).
        r = v.ibv_rereg_mr(mr, L.REREG_TRANS | L.REREG_ACCESS, None, buf, size,
                           L.REMOTE_READ)
        case("rereg-trans-readonly", r == 0, "rc %d" % r)
        L.ctypes.set_errno(0)
        r = v.ibv_rereg_mr(mr, L.REREG_ACCESS, None, None, 0, L.LOCAL_WRITE)
        case("rereg-to-writable-over-readonly", r != 0 and L.ctypes.get_errno() == errno.EACCES,
             "rc %d errno %s (want EACCES)" % (r, ctypes_errno()))
        case("rereg-dereg", L.dereg(v, mr) == 0, "dereg")
        v.ibv_dealloc_pd(pd2)
    L.unmap(buf, 2 * size)

    # --- bad inputs -------------------------------------------------------------------
    buf = L.buffer(1 << 16)
    expect_err(v, pd, "bad-zero-length", errno.EINVAL, buf, 0, acc)
    expect_err(v, pd, "bad-offset-mismatch", errno.EINVAL, buf + 0x100, 4096, acc,
               iova=0x20000000)
    expect_err(v, pd, "bad-wraps", errno.EINVAL, 0xfffffffffffff000, 0x2000, acc)
    expect_err(v, pd, "bad-access-bit", errno.EINVAL, buf, 4096, acc | (1 << 15))
    expect_err(v, pd, "bad-remote-write-no-local", errno.EINVAL, buf, 4096, L.REMOTE_WRITE)
    expect_err(v, pd, "bad-on-demand", errno.EOPNOTSUPP, buf, 4096, acc | L.ON_DEMAND)
    hole = L.buffer(1 << 16, populate=False)
    L.unmap(hole, 1 << 16)
    expect_err(v, pd, "bad-not-mapped", errno.EFAULT, hole, 1 << 16, acc)
    # The PD handle of another context (that context's eighth PD; this one has one).
    ctx2 = L.open_dev(v, dev)
    pds2 = [L.alloc_pd(v, ctx2) for _ in range(8)]
    other = L.IbvPd.from_address(pds2[-1])
    fake = L.IbvPd(ctx, other.handle)
    expect_err(v, L.ctypes.addressof(fake), "bad-pd-other-context", errno.ENOENT, buf,
               4096, acc)
    for p in pds2:
        v.ibv_dealloc_pd(p)
    v.ibv_close_device(ctx2)
    L.unmap(buf, 1 << 16)

    v.ibv_dealloc_pd(pd)
    v.ibv_close_device(ctx)
    acq, rel = L.vmstat("nr_foll_pin_acquired"), L.vmstat("nr_foll_pin_released")
    case("foll-pins-balanced", acq - acq0 == rel - rel0 and acq > acq0,
         "pins acquired %d, released %d" % (acq - acq0, rel - rel0))
    case("vmpin-end", L.vm_pin_kb() == pin0, "VmPin %d kB" % L.vm_pin_kb())
    if mk0 is not None:
        # Every MR of the run: the three sizes, the IOVA one and its three
        # re-registrations (each may take a new mkey).
        mkeys_back("emu-mkeys-end", mk0, len(held) + 4)
    return all(RESULTS)


def mkeys_back(name, mk0, n):
    """The emulator's mkeys after the MRs went. Both drivers keep the mkeys of MRs
    served by their MR cache (upstream 7.3: `ib_frmr_pool_push` at dereg; mlx5_rs: the
    cache of ib/mr/mod.rs, MRs of up to 512 entries) for the next MR of that size until
    the driver unloads, and destroy the others: no mkey beyond one per MR registered is
    left (deregistration creates none), and at least one is kept (the 4 KiB MR of the
    first step is cached on both). The scenario's unload check finds them destroyed."""
    now = mkeys()
    case(name, mk0 <= now <= mk0 + n, "emulator mkeys %s, base %s, %d MRs" % (now, mk0, n))
    case(name + ".cached", now > mk0,
         "emulator mkeys %s, base %s: kept by the MR cache (%s)" % (now, mk0, DRIVER))


def ctypes_errno():
    e = L.ctypes.get_errno()
    return errno.errorcode.get(e, e)


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "cases":
        print(__doc__)
        return 2
    return 0 if cases(sys.argv[2]) else 1


if __name__ == "__main__":
    sys.exit(main())
