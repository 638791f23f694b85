#!/usr/bin/env python3
"""A tiny user-space MAD client on /dev/infiniband/umad* (ib_user_mad ABI,
include/uapi/rdma/ib_user_mad.h): sends one Get MAD through the kernel's MAD layer
(QP0 for SMPs, QP1 for GMPs) and prints the answer as JSON.

  umad-get.py IBDEV DLID node_info      SubnGet(NodeInfo), LID routed, on QP0
  umad-get.py IBDEV DLID port_counters  PerfMgmt Get(PortCounters), on QP1
  umad-get.py IBDEV DLID port_counters_ext  PerfMgmt Get(PortCountersExtended)

Layouts: IBTA 13.4.3 (MAD header), 14.2.5.3 (NodeInfo), 16.1.3.5 / 16.1.4.11
(PortCounters / PortCountersExtended); no infiniband-diags needed."""

import fcntl
import json
import os
import select
import struct
import sys

# _IOWR(RDMA_IOCTL_MAGIC 0x1b, 1, struct ib_user_mad_reg_req: 28 bytes) and
# _IO(0x1b, 3) (rdma_user_ioctl.h).
REGISTER_AGENT = 0xC01C1B01
ENABLE_PKEY = 0x1B03
HDR = 64
MAD = 256
QP1_QKEY = 0x80010000


def umad_dev(ibdev):
    base = "/sys/class/infiniband_mad"
    for n in sorted(os.listdir(base)):
        if not n.startswith("umad"):
            continue
        d = os.path.join(base, n)
        if open(d + "/ibdev").read().strip() == ibdev and open(d + "/port").read().strip() == "1":
            return "/dev/infiniband/" + n
    raise SystemExit(f"no umad device for {ibdev} port 1")


def register(fd, qpn):
    # id, method_mask[4 x u32], qpn, mgmt_class 0 (send only: responses to our
    # requests come back), class version, oui[3], rmpp_version, pad.
    req = bytearray(struct.pack("<I16sBBB3sBx", 0, bytes(16), qpn, 0, 0, bytes(3), 0))
    assert len(req) == 28
    fcntl.ioctl(fd, REGISTER_AGENT, req, True)
    return struct.unpack_from("<I", req)[0]


def header(agent, qpn, qkey, dlid):
    h = struct.pack("<IIIII", agent, 0, 4000, 3, 0)
    h += struct.pack(">IIH", qpn, qkey, dlid)
    h += bytes(6)  # sl, path_bits, grh_present, gid_index, hop_limit, traffic_class
    h += bytes(16) + struct.pack(">I", 0)  # gid, flow_label
    h += struct.pack("<H", 0) + bytes(6)  # pkey_index 0, reserved
    assert len(h) == HDR
    return h


def mad(mgmt_class, class_version, attr, tid):
    m = bytearray(MAD)
    m[0], m[1], m[2], m[3] = 1, mgmt_class, class_version, 0x01  # Get
    struct.pack_into(">Q", m, 8, tid)
    struct.pack_into(">H", m, 16, attr)
    return m


def main():
    ibdev, dlid, what = sys.argv[1], int(sys.argv[2], 0), sys.argv[3]
    if what == "node_info":
        qpn, qkey, req = 0, 0, mad(0x01, 1, 0x0011, 0x1111)
    elif what in ("port_counters", "port_counters_ext"):
        attr = 0x0012 if what == "port_counters" else 0x001D
        qpn, qkey, req = 1, QP1_QKEY, mad(0x04, 1, attr, 0x2222)
        req[64 + 1] = 1  # PortSelect
    else:
        raise SystemExit("unknown request " + what)
    fd = os.open(umad_dev(ibdev), os.O_RDWR)
    fcntl.ioctl(fd, ENABLE_PKEY)
    agent = register(fd, qpn)
    os.write(fd, header(agent, qpn, qkey, dlid) + bytes(req))
    r, _, _ = select.select([fd], [], [], 60)
    if not r:
        print(json.dumps({"error": "no answer in 60 s"}))
        return 1
    buf = os.read(fd, HDR + MAD)
    h, m = buf[:HDR], buf[HDR:]
    out = {
        "umad_status": struct.unpack_from("<I", h, 4)[0],
        "src_qpn": struct.unpack_from(">I", h, 20)[0],
        "slid": struct.unpack_from(">H", h, 28)[0],
        "class": m[1],
        "method": m[3],
        "mad_status": struct.unpack_from(">H", m, 4)[0],
        "attr": struct.unpack_from(">H", m, 16)[0],
    }
    d = m[64:]
    if what == "node_info" and len(d) >= 40:
        g = d[12:20].hex()
        out["node_type"] = d[2]
        out["node_guid"] = ":".join(g[i : i + 4] for i in range(0, 16, 4))
    elif what == "port_counters" and len(d) >= 40:
        out["counters"] = dict(zip(("xmit_data", "rcv_data", "xmit_pkts", "rcv_pkts"), struct.unpack_from(">IIII", d, 24)))
    elif what == "port_counters_ext" and len(d) >= 40:
        out["counters"] = dict(zip(("xmit_data", "rcv_data", "xmit_pkts", "rcv_pkts"), struct.unpack_from(">QQQQ", d, 8)))
    print(json.dumps(out, sort_keys=True))
    return 0 if out["umad_status"] == 0 and out["mad_status"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
