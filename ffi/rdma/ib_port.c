// SPDX-License-Identifier: GPL-2.0
/*
 * The port verbs of the InfiniBand shim: query_port, get_port_immutable,
 * get_link_layer, query_pkey and query_gid, trampolines into ffi/rdma/ib_port.rs.
 * Rust answers a plain struct mlx5rs_ib_port_attr (ib/port/); the shim copies it
 * into the core's struct ib_port_attr. The port is InfiniBand only.
 */
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>
#include "ib_priv.h"

static int mlx5rs_ib_query_port(struct ib_device *ibdev, u32 port, struct ib_port_attr *props)
{
	struct mlx5rs_ib_port_attr a = {};
	int err;

	err = mlx5rs_ib_rs_query_port(to_rsdev(ibdev)->rust, port, &a);
	if (err)
		return err;
	/* The Rust side produced only values of the enums below (ib/port/attr.rs). */
	props->state = a.state;
	props->max_mtu = a.max_mtu;
	props->active_mtu = a.active_mtu;
	props->gid_tbl_len = a.gid_tbl_len;
	props->port_cap_flags = a.port_cap_flags;
	props->max_msg_sz = a.max_msg_sz;
	props->bad_pkey_cntr = a.bad_pkey_cntr;
	props->qkey_viol_cntr = a.qkey_viol_cntr;
	props->pkey_tbl_len = a.pkey_tbl_len;
	props->sm_lid = a.sm_lid;
	props->lid = a.lid;
	props->lmc = a.lmc;
	props->max_vl_num = a.max_vl_num;
	props->sm_sl = a.sm_sl;
	props->subnet_timeout = a.subnet_timeout;
	props->init_type_reply = a.init_type_reply;
	props->active_width = a.active_width;
	props->active_speed = a.active_speed;
	props->phys_state = a.phys_state;
	props->port_cap_flags2 = a.port_cap_flags2;
	return 0;
}

static int mlx5rs_ib_get_port_immutable(struct ib_device *ibdev, u32 port,
					struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr;
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_IB;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer mlx5rs_ib_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_INFINIBAND;
}

static int mlx5rs_ib_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	return mlx5rs_ib_rs_query_pkey(to_rsdev(ibdev)->rust, port, index, pkey);
}

static int mlx5rs_ib_query_gid(struct ib_device *ibdev, u32 port, int index, union ib_gid *gid)
{
	u8 raw[16] = {};
	int err;

	BUILD_BUG_ON(sizeof(gid->raw) != sizeof(raw));
	if (index < 0)
		return -EINVAL;
	err = mlx5rs_ib_rs_query_gid(to_rsdev(ibdev)->rust, port, index, raw);
	if (err)
		return err;
	memcpy(gid->raw, raw, sizeof(raw));
	return 0;
}

/*
 * process_mad: the MAD layer's local MADs (SMPs for the port's SMA, PerfMgmt for its
 * PMA) to the firmware, as upstream mlx5_ib_process_mad: Rust decides and runs
 * MAD_IFC; the source LID is the work completion's, or the permissive LID without one.
 */
static int mlx5rs_ib_process_mad(struct ib_device *ibdev, int mad_flags, u32 port_num,
				 const struct ib_wc *in_wc, const struct ib_grh *in_grh,
				 const struct ib_mad *in, struct ib_mad *out,
				 size_t *out_mad_size, u16 *out_mad_pkey_index)
{
	u16 slid = in_wc ? ib_lid_cpu16(in_wc->slid) : be16_to_cpu(IB_LID_PERMISSIVE);

	BUILD_BUG_ON(sizeof(*in) != 256 || sizeof(*out) != 256);
	return mlx5rs_ib_rs_process_mad(to_rsdev(ibdev)->rust, port_num, mad_flags, !!in_wc, slid,
					in, out);
}

const struct ib_device_ops mlx5rs_ib_port_ops = {
	.get_link_layer = mlx5rs_ib_get_link_layer,
	.get_port_immutable = mlx5rs_ib_get_port_immutable,
	.process_mad = mlx5rs_ib_process_mad,
	.query_gid = mlx5rs_ib_query_gid,
	.query_pkey = mlx5rs_ib_query_pkey,
	.query_port = mlx5rs_ib_query_port,
};

/* The port enums ib/port/attr.rs produces. */
static_assert(IB_PORT_ACTIVE == 4 && IB_PORT_DOWN == 1 && IB_PORT_ACTIVE_DEFER == 5);
static_assert(IB_MTU_256 == 1 && IB_MTU_4096 == 5);
static_assert(IB_WIDTH_1X == 1 && IB_WIDTH_2X == 16 && IB_WIDTH_12X == 8);
static_assert(IB_SPEED_SDR == 1 && IB_SPEED_EDR == 32 && IB_SPEED_XDR == 256);
