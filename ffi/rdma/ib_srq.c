// SPDX-License-Identifier: GPL-2.0
/*
 * The InfiniBand shim's shared receive queue and XRC domain verbs (the ops table
 * mlx5rs_ib_srq_ops; their Rust side is ffi/rdma/ib_srq.rs).
 *
 * Each trampoline reads what Rust needs out of the core's structures into a plain
 * structure of mlx5rs_ffi.h (struct mlx5rs_ib_srq_init, mlx5rs_ib_srq_attr),
 * including the device numbers of the objects a verb names (the PD, the XRC domain
 * and the CQ of an XRC SRQ, read from the fixed first fields of their structures in
 * ib_priv.h), and copies the answer back.
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

static int mlx5rs_ib_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	/* Like upstream, no driver data either way. */
	return mlx5rs_ib_rs_alloc_xrcd(to_rsdev(ibxrcd->device)->rust,
				       &to_rsxrcd(ibxrcd)->xrcdn);
}

static int mlx5rs_ib_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return mlx5rs_ib_rs_dealloc_xrcd(to_rsdev(ibxrcd->device)->rust,
					 to_rsxrcd(ibxrcd)->xrcdn);
}

/* The core's optional SRQ buffer attribute (uverbs_std_types_srq.c): refused. */
static const u16 srq_buf_attrs[] = { UVERBS_ATTR_CREATE_SRQ_BUF_UMEM };

static int mlx5rs_ib_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
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

static int mlx5rs_ib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			 enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	/* Like upstream, the driver data is not read. */
	return mlx5rs_ib_rs_modify_srq(to_rsdev(ibsrq->device)->rust, to_rssrq(ibsrq)->rust,
				       mask, attr->srq_limit);
}

static int mlx5rs_ib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
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

static int mlx5rs_ib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct mlx5rs_ib_srq *srq = to_rssrq(ibsrq);
	int err;

	/* On failure the SRQ stays as it is (upstream returns the error too). */
	err = mlx5rs_ib_rs_destroy_srq(to_rsdev(ibsrq->device)->rust, srq->rust);
	if (!err)
		srq->rust = NULL;
	return err;
}

/* The enum values ffi/rdma/ib_srq.rs and ib/srq/ rely on. */
static_assert(IB_SRQT_BASIC == 0 && IB_SRQT_XRC == 1 && IB_SRQT_TM == 2);
static_assert(IB_SRQ_MAX_WR == 1 && IB_SRQ_LIMIT == 2);

/*
 * post_srq_recv: the chain walked by Rust (each request read in place) and posted
 * (ib/srq/kdp.rs, upstream's mlx5_ib_post_srq_recv: the WQEs at the SRQ's free list,
 * the WQE counter to the doorbell record); on error *bad_wr is the request that
 * failed (those before it are posted). A user SRQ answers -EINVAL.
 */
static int mlx5rs_ib_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
				   const struct ib_recv_wr **bad_wr)
{
	struct mlx5rs_ib_srq *srq = to_rssrq(ibsrq);
	u64 outcome;
	u32 done;
	int err;

	outcome = mlx5rs_ib_rs_post_srq_recv(srq->rust, wr);
	err = mlx5rs_post_err(outcome);
	if (err) {
		done = mlx5rs_post_done(outcome);
		for (; done && wr; done--)
			wr = wr->next;
		*bad_wr = wr;
	}
	return err;
}

const struct ib_device_ops mlx5rs_ib_srq_ops = {
	.alloc_xrcd = mlx5rs_ib_alloc_xrcd,
	.create_srq = mlx5rs_ib_create_srq,
	.dealloc_xrcd = mlx5rs_ib_dealloc_xrcd,
	.destroy_srq = mlx5rs_ib_destroy_srq,
	.modify_srq = mlx5rs_ib_modify_srq,
	.post_srq_recv = mlx5rs_ib_post_srq_recv,
	.query_srq = mlx5rs_ib_query_srq,
	INIT_RDMA_OBJ_SIZE(ib_srq, mlx5rs_ib_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, mlx5rs_ib_xrcd, ibxrcd),
};
