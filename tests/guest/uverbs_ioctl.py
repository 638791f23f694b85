# SPDX-License-Identifier: GPL-2.0
"""Raw uverbs ioctls for the guest helpers (ib-cq.py, ib-qp.py, ib-srq.py,
ib-uverbs.py, ib-failnth.py): the create methods of the RDMA core's CQ, QP and SRQ
objects with the driver's request as UHW attributes, optionally with one of the
core's buffer attributes (include/uapi/rdma/ib_user_ioctl_cmds.h,
rdma_user_ioctl_cmds.h), and their destroy methods; mlx5's UAR object
(mlx5_user_ioctl_cmds.h, mlx5_user_ioctl_verbs.h). Only Python's standard library: the guest has no libibverbs headers.

An attribute is (id, len, data): data is the value itself for inputs of up to 8
bytes and handles, else the address of the bytes.
"""
import ctypes
import fcntl
import struct

# _IOWR(0x1b, 1, struct ib_uverbs_ioctl_hdr): header 24 bytes, attributes 16 each.
RDMA_VERBS_IOCTL = (3 << 30) | (24 << 16) | (0x1B << 8) | 1
RDMA_DRIVER_MLX5 = 1
F_MANDATORY = 1
OBJ_CQ, OBJ_QP, OBJ_SRQ = 3, 4, 5
METHOD_CREATE, METHOD_DESTROY = 0, 1
UHW_IN, UHW_OUT = 1 << 12, (1 << 12) + 1

# enum uverbs_attrs_create_cq_cmd_attr_ids
CQ_HANDLE, CQ_CQE, CQ_USER_HANDLE, CQ_COMP_VECTOR, CQ_RESP_CQE = 0, 1, 2, 4, 6
CQ_BUFFER_VA, CQ_BUFFER_LENGTH, CQ_BUF_UMEM = 8, 9, 12
# enum uverbs_attrs_create_qp_cmd_attr_ids
(QP_HANDLE, QP_PD, QP_SEND_CQ, QP_RECV_CQ, QP_USER_HANDLE, QP_CAP, QP_TYPE,
 QP_RESP_CAP, QP_RESP_QP_NUM) = 0, 2, 4, 5, 7, 8, 9, 13, 14
QP_BUF_UMEM, QP_RQ_BUF_UMEM, QP_SQ_BUF_UMEM = 15, 16, 17
# enum uverbs_attrs_create_srq_cmd_attr_ids
(SRQ_HANDLE, SRQ_PD, SRQ_USER_HANDLE, SRQ_MAX_WR, SRQ_MAX_SGE, SRQ_LIMIT, SRQ_TYPE,
 SRQ_RESP_MAX_WR, SRQ_RESP_MAX_SGE) = 0, 1, 4, 5, 6, 7, 9, 11, 12
SRQ_XRCD, SRQ_CQ, SRQ_RESP_SRQ_NUM, SRQ_BUF_UMEM = 2, 3, 13, 14
IB_UVERBS_BUFFER_TYPE_VA = 1
# MLX5_IB_OBJECT_UAR, its methods and attributes; enum mlx5_ib_uapi_uar_alloc_type.
OBJ_UAR = (1 << 12) + 8
METHOD_UAR_ALLOC, METHOD_UAR_DESTROY = 1 << 12, (1 << 12) + 1
UAR_HANDLE, UAR_TYPE, UAR_MMAP_OFFSET, UAR_MMAP_LENGTH, UAR_PAGE_ID = (
    (1 << 12) + i for i in range(5))
UAR_TYPE_BF, UAR_TYPE_NC = 0, 1


def ioctl(fd, obj, method, attrs):
    """One uverbs ioctl: (errno or 0, the attributes' data words as the kernel left
    them, the first a new object's handle)."""
    buf = bytearray(struct.pack("<HHHHQII", 24 + 16 * len(attrs), obj, method, len(attrs),
                                0, RDMA_DRIVER_MLX5, 0))
    for aid, alen, data in attrs:
        buf += struct.pack("<HHHHQ", aid, alen, F_MANDATORY, 0, data)
    try:
        fcntl.ioctl(fd, RDMA_VERBS_IOCTL, buf, True)
    except OSError as e:
        return e.errno, []
    return 0, [struct.unpack_from("<Q", buf, 24 + 16 * i + 8)[0] for i in range(len(attrs))]


def uar_alloc(fd, alloc_type):
    """(errno, handle, mmap offset, length, page id) of UAR_OBJ_ALLOC."""
    off, ln, pid = ctypes.c_uint64(), ctypes.c_uint32(), ctypes.c_uint32()
    e, words = ioctl(fd, OBJ_UAR, METHOD_UAR_ALLOC, [
        (UAR_HANDLE, 0, 0),
        (UAR_TYPE, 8, alloc_type),
        (UAR_MMAP_OFFSET, 8, ctypes.addressof(off)),
        (UAR_MMAP_LENGTH, 4, ctypes.addressof(ln)),
        (UAR_PAGE_ID, 4, ctypes.addressof(pid)),
    ])
    return e, (words[0] if words else None), off.value, ln.value, pid.value


def uar_destroy(fd, handle):
    """errno or 0 of UAR_OBJ_DESTROY."""
    return ioctl(fd, OBJ_UAR, METHOD_UAR_DESTROY, [(UAR_HANDLE, 0, handle)])[0]


class Bytes:
    """Bytes kept alive at a fixed address (an attribute's data)."""

    def __init__(self, data=b"", size=0):
        self.b = ctypes.create_string_buffer(bytes(data), max(len(data), size, 1))
        self.addr = ctypes.addressof(self.b)
        self.len = max(len(data), size)


def buffer_desc(addr, length):
    """struct ib_uverbs_buffer_desc of a user VA (the UMEM attributes' data)."""
    return Bytes(struct.pack("<IiIIQQ", IB_UVERBS_BUFFER_TYPE_VA, -1, 0, 0, addr, length))


def uhw(req, outlen, keep):
    """UHW_IN / UHW_OUT attributes of driver request `req` and an `outlen` response."""
    i, o = Bytes(req), Bytes(size=outlen)
    keep.extend([i, o])
    return [(UHW_IN, i.len, i.addr), (UHW_OUT, o.len, o.addr)]


def create_cq(fd, cqe, req, extra=()):
    """CQ_CREATE with driver request `req` and `extra` attributes: (errno, handle)."""
    keep = []
    out = Bytes(size=4)
    attrs = [(CQ_HANDLE, 0, 0), (CQ_CQE, 4, cqe), (CQ_USER_HANDLE, 8, 0),
             (CQ_COMP_VECTOR, 4, 0), (CQ_RESP_CQE, 4, out.addr)]
    e, w = ioctl(fd, OBJ_CQ, METHOD_CREATE, attrs + uhw(req, 16, keep) + list(extra))
    return e, (w[0] if w else None)


def create_qp(fd, pd, cq, qp_type, cap, req, extra=()):
    """QP_CREATE (cap: send wr, recv wr, send sge, recv sge, inline): (errno, handle)."""
    keep = []
    c, rc, qpn = Bytes(struct.pack("<5I", *cap)), Bytes(size=20), Bytes(size=4)
    attrs = [(QP_HANDLE, 0, 0), (QP_PD, 0, pd), (QP_SEND_CQ, 0, cq), (QP_RECV_CQ, 0, cq),
             (QP_USER_HANDLE, 8, 0), (QP_CAP, c.len, c.addr), (QP_TYPE, 8, qp_type),
             (QP_RESP_CAP, rc.len, rc.addr), (QP_RESP_QP_NUM, 4, qpn.addr)]
    e, w = ioctl(fd, OBJ_QP, METHOD_CREATE, attrs + uhw(req, 40, keep) + list(extra))
    return e, (w[0] if w else None)


def create_srq(fd, pd, max_wr, max_sge, req, extra=(), xrc=None):
    """SRQ_CREATE of a basic SRQ, or an XRC one with xrc = (XRCD handle, CQ handle):
    (errno, handle)."""
    keep = []
    mw, ms = Bytes(size=4), Bytes(size=4)
    num = Bytes(size=4)
    if xrc:
        # The core answers an XRC SRQ's number, into an attribute it requires then.
        extra = [(SRQ_XRCD, 0, xrc[0]), (SRQ_CQ, 0, xrc[1]),
                 (SRQ_RESP_SRQ_NUM, 4, num.addr)] + list(extra)
    attrs = [(SRQ_HANDLE, 0, 0), (SRQ_PD, 0, pd), (SRQ_TYPE, 8, 1 if xrc else 0),
             (SRQ_USER_HANDLE, 8, 0),
             (SRQ_MAX_WR, 4, max_wr), (SRQ_MAX_SGE, 4, max_sge), (SRQ_LIMIT, 4, 0),
             (SRQ_RESP_MAX_WR, 4, mw.addr), (SRQ_RESP_MAX_SGE, 4, ms.addr)]
    e, w = ioctl(fd, OBJ_SRQ, METHOD_CREATE, attrs + uhw(req, 16, keep) + list(extra))
    return e, (w[0] if w else None)


def destroy(fd, obj, handle):
    """The DESTROY method of `obj` (CQ, QP, SRQ): errno or 0."""
    resp = Bytes(size=8 if obj == OBJ_CQ else 4)
    return ioctl(fd, obj, METHOD_DESTROY, [(0, 0, handle), (1, resp.len, resp.addr)])[0]
