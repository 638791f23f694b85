// SPDX-License-Identifier: GPL-2.0
/*
 * The InfiniBand shim's CQ verbs: create_cq (kernel consumers), create_user_cq
 * (libmlx5), destroy_cq, resize_user_cq and modify_cq, each a trampoline into
 * ffi/rdma/ib_cq.rs. The Rust side owns the CQ's memory, its device CQ and its event
 * subscription; this file only stages udata (mlx5rs_ib_stage()), copies numbers
 * into struct ib_cq and calls the core's handlers when Rust reports an event.
 *
 * Events: mlx5rs_ib_cq_comp() and mlx5rs_ib_cq_err() are called from the EQ's
 * interrupt thread through the CQ's subscription, which destroy_cq ends (waiting
 * for a call in flight) before the core frees the ib_cq.
 */
#include <linux/errno.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include "ib_priv.h"

static int mlx5rs_ib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			struct uverbs_attr_bundle *attrs)
{
	struct mlx5rs_ib_cq *cq = container_of(ibcq, struct mlx5rs_ib_cq, ibcq);
	struct mlx5rs_ib_cq_init init = {
		.cqe = attr->cqe,
		.comp_vector = attr->comp_vector,
		.flags = attr->flags,
		.cache_line_size = cache_line_size(),
	};
	int ncqe = 0;
	int err;

	BUILD_BUG_ON(sizeof(init) != MLX5RS_IB_CQ_INIT_SIZE);
	err = mlx5rs_ib_rs_create_cq(to_rsdev(ibcq->device)->rust, NULL, &init, NULL, cq,
				     &cq->rust, &cq->cqn, &ncqe, ibcq->device);
	if (err)
		return err;
	ibcq->cqe = ncqe;
	return 0;
}

/* The core's optional CQ buffer attributes (uverbs_std_types_cq.c): refused. */
static const u16 cq_buf_attrs[] = {
	UVERBS_ATTR_CREATE_CQ_BUFFER_VA, UVERBS_ATTR_CREATE_CQ_BUFFER_LENGTH,
	UVERBS_ATTR_CREATE_CQ_BUFFER_FD, UVERBS_ATTR_CREATE_CQ_BUFFER_OFFSET,
	UVERBS_ATTR_CREATE_CQ_BUF_UMEM,
};

static int mlx5rs_ib_create_user_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			     struct uverbs_attr_bundle *attrs)
{
	struct mlx5rs_ib_cq *cq = container_of(ibcq, struct mlx5rs_ib_cq, ibcq);
	const void *rust = to_rsdev(ibcq->device)->rust;
	struct ib_udata *udata = &attrs->driver_udata;
	struct mlx5rs_ib_cq_init init = {
		.cqe = attr->cqe,
		.comp_vector = attr->comp_vector,
		.flags = attr->flags,
		.cache_line_size = cache_line_size(),
	};
	struct mlx5rs_ib_stage *st;
	void *uctx;
	int ncqe = 0;
	int err;

	uctx = mlx5rs_ib_udata_uctx(udata);
	if (!uctx)
		return -EINVAL;
	if (mlx5rs_ib_names_buffer(udata, cq_buf_attrs, ARRAY_SIZE(cq_buf_attrs)))
		return -EOPNOTSUPP;
	st = mlx5rs_ib_stage(udata, &err);
	if (!st)
		return err ? err : -EINVAL;
	err = mlx5rs_ib_rs_create_cq(rust, uctx, &init, &st->u, cq, &cq->rust, &cq->cqn, &ncqe,
				     ibcq->device);
	if (err)
		goto out;
	ibcq->cqe = ncqe;
	err = _ib_respond_udata(udata, st->out, min_t(size_t, st->u.resp_len, sizeof(st->out)));
	if (err) {
		mlx5rs_ib_rs_destroy_cq(rust, cq->rust);
		cq->rust = NULL;
	}
out:
	kfree(st);
	return err;
}

static int mlx5rs_ib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct mlx5rs_ib_cq *cq = container_of(ibcq, struct mlx5rs_ib_cq, ibcq);
	int err;

	err = mlx5rs_ib_rs_destroy_cq(to_rsdev(ibcq->device)->rust, cq->rust);
	if (!err)
		cq->rust = NULL;
	return err;
}

static int mlx5rs_ib_resize_user_cq(struct ib_cq *ibcq, unsigned int cqe, struct ib_udata *udata)
{
	struct mlx5rs_ib_cq *cq = container_of(ibcq, struct mlx5rs_ib_cq, ibcq);
	struct mlx5rs_ib_stage *st;
	int ncqe = ibcq->cqe;
	int err;

	st = mlx5rs_ib_stage(udata, &err);
	if (!st)
		return err ? err : -EINVAL;
	err = mlx5rs_ib_rs_resize_cq(to_rsdev(ibcq->device)->rust, cq->rust, cqe, &st->u, &ncqe,
				     ibcq->device);
	if (!err)
		ibcq->cqe = ncqe;
	kfree(st);
	return err;
}

static int mlx5rs_ib_modify_cq(struct ib_cq *ibcq, u16 cq_count, u16 cq_period)
{
	struct mlx5rs_ib_cq *cq = container_of(ibcq, struct mlx5rs_ib_cq, ibcq);

	return mlx5rs_ib_rs_modify_cq(to_rsdev(ibcq->device)->rust, cq->rust, cq_count,
				      cq_period);
}

const struct ib_device_ops mlx5rs_ib_cq_ops = {
	.create_cq = mlx5rs_ib_create_cq,
	.create_user_cq = mlx5rs_ib_create_user_cq,
	.destroy_cq = mlx5rs_ib_destroy_cq,
	.modify_cq = mlx5rs_ib_modify_cq,
	.resize_user_cq = mlx5rs_ib_resize_user_cq,
	INIT_RDMA_OBJ_SIZE(ib_cq, mlx5rs_ib_cq, ibcq),
};

/**
 * mlx5rs_ib_cq_comp() - a completion event of @cq: call the consumer's handler
 * @cq: a CQ between create and destroy
 *
 * Called from an EQ's interrupt thread (process context).
 */
void mlx5rs_ib_cq_comp(struct mlx5rs_ib_cq *cq)
{
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/**
 * mlx5rs_ib_cq_err() - a CQ error event of @cq: IB_EVENT_CQ_ERR to its handler
 * @cq: a CQ between create and destroy
 */
void mlx5rs_ib_cq_err(struct mlx5rs_ib_cq *cq)
{
	struct ib_event ev = {};

	if (!cq->ibcq.event_handler)
		return;
	ev.device = cq->ibcq.device;
	ev.event = IB_EVENT_CQ_ERR;
	ev.element.cq = &cq->ibcq;
	cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}
