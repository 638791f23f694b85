// SPDX-License-Identifier: GPL-2.0
/*
 * The InfiniBand shim's shared receive queue, XRC domain and address handle verbs
 * (the ops ffi/rdma/ib.c lists; their Rust side is ffi/rdma/ib_srq.rs).
 *
 * Each trampoline reads what Rust needs out of the core's structures into a plain
 * structure of mlx5rs_ffi.h (struct mlx5rs_ib_srq_init, mlx5rs_ib_srq_attr,
 * mlx5rs_ib_ah_attr), including the device numbers of the objects a verb names (the
 * PD, the XRC domain and the CQ of an XRC SRQ, read from the fixed first fields of
 * their structures in ib_priv.h), and copies the answer back. The address vector of
 * an address handle is built by Rust into the handle's own structure; creating one
 * neither sleeps nor allocates (the core may call create_ah in atomic context).
 */
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include "ib_priv.h"

static struct mlx5rs_ib_srq *to_rssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct mlx5rs_ib_srq, ibsrq);
}

static struct mlx5rs_ib_xrcd *to_rsxrcd(struct ib_xrcd *ibxrcd)
{
	return container_of(ibxrcd, struct mlx5rs_ib_xrcd, ibxrcd);
}

static struct mlx5rs_ib_ah *to_rsah(struct ib_ah *ibah)
{
	return container_of(ibah, struct mlx5rs_ib_ah, ibah);
}

int mlx5rs_ib_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	/* Like upstream, no driver data either way. */
	return mlx5rs_ib_rs_alloc_xrcd(to_rsdev(ibxrcd->device)->rust,
				       &to_rsxrcd(ibxrcd)->xrcdn);
}

int mlx5rs_ib_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return mlx5rs_ib_rs_dealloc_xrcd(to_rsdev(ibxrcd->device)->rust,
					 to_rsxrcd(ibxrcd)->xrcdn);
}

/* The core's optional SRQ buffer attribute (uverbs_std_types_srq.c): refused. */
static const u16 srq_buf_attrs[] = { UVERBS_ATTR_CREATE_SRQ_BUF_UMEM };

int mlx5rs_ib_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
			 struct ib_udata *udata)
{
	struct mlx5rs_ib_srq *srq = to_rssrq(ibsrq);
	const void *rust = to_rsdev(ibsrq->device)->rust;
	struct mlx5rs_ib_srq_init in = {};
	struct mlx5rs_ib_stage *st = NULL;
	int err;

	BUILD_BUG_ON(sizeof(in) != MLX5RS_IB_SRQ_INIT_SIZE);
	if (mlx5rs_ib_names_buffer(udata, srq_buf_attrs, ARRAY_SIZE(srq_buf_attrs)))
		return -EOPNOTSUPP;
	in.srq_type = init->srq_type;
	in.max_wr = init->attr.max_wr;
	in.max_sge = init->attr.max_sge;
	in.srq_limit = init->attr.srq_limit;
	in.pdn = container_of(ibsrq->pd, struct mlx5rs_ib_pd, ibpd)->pdn;
	if (init->srq_type == IB_SRQT_XRC) {
		/*
		 * The core passes both for XRC (ib_srq_has_cq()); upstream falls back to
		 * device-wide ones this provider does not keep.
		 */
		if (!init->ext.xrc.xrcd || !init->ext.cq)
			return -EINVAL;
		in.xrcdn = to_rsxrcd(init->ext.xrc.xrcd)->xrcdn;
		in.cqn = container_of(init->ext.cq, struct mlx5rs_ib_cq, ibcq)->cqn;
	}
	if (udata) {
		st = mlx5rs_ib_stage(udata, &err);
		if (!st)
			return err ? err : -EINVAL;
	}
	err = mlx5rs_ib_rs_create_srq(rust, &in, st ? &st->u : NULL, ibsrq->device, udata, ibsrq,
				      &srq->rust);
	if (err)
		goto out;
	srq->srqn = in.srqn;
	ibsrq->ext.xrc.srq_num = in.srqn;
	init->attr.max_wr = in.max_wr;
	if (st) {
		err = _ib_respond_udata(udata, st->out,
					min_t(size_t, st->u.resp_len, sizeof(st->out)));
		if (err && !mlx5rs_ib_rs_destroy_srq(rust, srq->rust))
			srq->rust = NULL;
	}
out:
	kfree(st);
	return err;
}

int mlx5rs_ib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			 enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	/* Like upstream, the driver data is not read. */
	return mlx5rs_ib_rs_modify_srq(to_rsdev(ibsrq->device)->rust, to_rssrq(ibsrq)->rust,
				       mask, attr->srq_limit);
}

int mlx5rs_ib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct mlx5rs_ib_srq_attr a = {};
	int err;

	BUILD_BUG_ON(sizeof(a) != MLX5RS_IB_SRQ_ATTR_SIZE);
	err = mlx5rs_ib_rs_query_srq(to_rsdev(ibsrq->device)->rust, to_rssrq(ibsrq)->rust, &a);
	if (err)
		return err;
	attr->max_wr = a.max_wr;
	attr->max_sge = a.max_sge;
	attr->srq_limit = a.srq_limit;
	return 0;
}

/**
 * mlx5rs_ib_srq_event() - an async event of @ibsrq: to the consumer's handler
 * @ibsrq: an SRQ between create and destroy
 * @event: enum ib_event_type (IB_EVENT_SRQ_LIMIT_REACHED or IB_EVENT_SRQ_ERR)
 *
 * Called from a work item (process context); never after destroy_srq started.
 */
void mlx5rs_ib_srq_event(struct ib_srq *ibsrq, u32 event)
{
	struct ib_event ev = {};

	if (!ibsrq->event_handler)
		return;
	ev.device = ibsrq->device;
	ev.element.srq = ibsrq;
	ev.event = event;
	ibsrq->event_handler(&ev, ibsrq->srq_context);
}

int mlx5rs_ib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct mlx5rs_ib_srq *srq = to_rssrq(ibsrq);
	int err;

	/* On failure the SRQ stays as it is (upstream returns the error too). */
	err = mlx5rs_ib_rs_destroy_srq(to_rsdev(ibsrq->device)->rust, srq->rust);
	if (!err)
		srq->rust = NULL;
	return err;
}

int mlx5rs_ib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			struct ib_udata *udata)
{
	struct rdma_ah_attr *a = init->ah_attr;
	struct mlx5rs_ib_ah_attr in = {};
	u8 resp[32] = {};
	struct mlx5rs_ib_udata u = {
		.out = resp,
		.outcap = sizeof(resp),
		.outlen = udata ? udata->outlen : 0,
	};
	int err;

	BUILD_BUG_ON(sizeof(in) != MLX5RS_IB_AH_ATTR_SIZE);
	BUILD_BUG_ON(sizeof(to_rsah(ibah)->av) != MLX5RS_IB_AV_SIZE);
	in.ah_type = a->type;
	in.port_num = rdma_ah_get_port_num(a);
	in.sl = rdma_ah_get_sl(a);
	in.static_rate = rdma_ah_get_static_rate(a);
	if (a->type == RDMA_AH_ATTR_TYPE_IB) {
		in.dlid = rdma_ah_get_dlid(a);
		in.src_path_bits = rdma_ah_get_path_bits(a);
	}
	if (rdma_ah_get_ah_flags(a) & IB_AH_GRH) {
		const struct ib_global_route *grh = rdma_ah_read_grh(a);

		in.is_global = 1;
		memcpy(in.dgid, grh->dgid.raw, sizeof(in.dgid));
		in.flow_label = grh->flow_label;
		in.sgid_index = grh->sgid_index;
		in.hop_limit = grh->hop_limit;
		in.traffic_class = grh->traffic_class;
	}
	err = mlx5rs_ib_rs_create_ah(to_rsdev(ibah->device)->rust, &in, to_rsah(ibah)->av,
				     udata ? &u : NULL);
	if (err || !udata || !u.resp_len)
		return err;
	/* Only a RoCE handle has a response (upstream); none is made on InfiniBand. */
	return _ib_respond_udata(udata, resp, min_t(size_t, u.resp_len, sizeof(resp)));
}

int mlx5rs_ib_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct mlx5rs_ib_ah_attr out = {};

	mlx5rs_ib_rs_query_ah(to_rsdev(ibah->device)->rust, to_rsah(ibah)->av, ibah->type, &out);
	memset(attr, 0, sizeof(*attr));
	attr->type = ibah->type;
	if (out.is_global) {
		rdma_ah_set_grh(attr, NULL, out.flow_label, out.sgid_index, out.hop_limit,
				out.traffic_class);
		rdma_ah_set_dgid_raw(attr, out.dgid);
	}
	rdma_ah_set_dlid(attr, out.dlid);
	rdma_ah_set_static_rate(attr, out.static_rate);
	rdma_ah_set_sl(attr, out.sl);
	return 0;
}

int mlx5rs_ib_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	/* A software address vector: nothing on the device. */
	return 0;
}

/* The enum values ffi/rdma/ib_srq.rs and ib/ relies on. */
static_assert(IB_SRQT_BASIC == 0 && IB_SRQT_XRC == 1 && IB_SRQT_TM == 2);
static_assert(IB_SRQ_MAX_WR == 1 && IB_SRQ_LIMIT == 2);
static_assert(RDMA_AH_ATTR_TYPE_IB == 1);
