// SPDX-License-Identifier: GPL-2.0
/*
 * The InfiniBand shim's CQ verbs: create_cq (kernel consumers), create_user_cq
 * (libmlx5), destroy_cq, resize_user_cq, modify_cq, and for kernel CQs poll_cq and
 * req_notify_cq, each a trampoline into ffi/rdma/ib_cq.rs (poll_cq's Rust writes the
 * core's struct ib_wc in place). The Rust side owns the CQ's memory, its device CQ
 * and its event subscription; this file only stages udata (mlx5rs_ib_stage()),
 * copies numbers into struct ib_cq and calls the core's handlers when Rust reports
 * an event.
 *
 * Events: mlx5rs_ib_cq_comp() and mlx5rs_ib_cq_err() are called from the EQ's
 * interrupt thread through the CQ's subscription, which destroy_cq ends (waiting
 * for a call in flight) before the core frees the ib_cq.
 */
#include <linux/errno.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
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

/*
 * struct ib_wc as ffi/rdma/ib_dp_abi.rs mirrors it (Rust writes the core's array in
 * place): its size, alignment and every field's offset, and the opcode and flag
 * numbers Rust writes.
 */
static_assert(sizeof(struct ib_wc) == 72 && __alignof__(struct ib_wc) == 8);
static_assert(offsetof(struct ib_wc, wr_id) == 0 && offsetof(struct ib_wc, status) == 8 &&
	      offsetof(struct ib_wc, opcode) == 12 && offsetof(struct ib_wc, vendor_err) == 16 &&
	      offsetof(struct ib_wc, byte_len) == 20 && offsetof(struct ib_wc, qp) == 24 &&
	      offsetof(struct ib_wc, ex) == 32 && offsetof(struct ib_wc, src_qp) == 36 &&
	      offsetof(struct ib_wc, slid) == 40 && offsetof(struct ib_wc, wc_flags) == 44 &&
	      offsetof(struct ib_wc, pkey_index) == 48 && offsetof(struct ib_wc, sl) == 50 &&
	      offsetof(struct ib_wc, dlid_path_bits) == 51 &&
	      offsetof(struct ib_wc, port_num) == 52 && offsetof(struct ib_wc, smac) == 56 &&
	      offsetof(struct ib_wc, vlan_id) == 62 &&
	      offsetof(struct ib_wc, network_hdr_type) == 64);
static_assert(sizeof(enum ib_wc_status) == 4 && sizeof(enum ib_wc_opcode) == 4);
static_assert(IB_WC_SEND == 0 && IB_WC_RDMA_WRITE == 1 && IB_WC_RDMA_READ == 2 &&
	      IB_WC_COMP_SWAP == 3 && IB_WC_FETCH_ADD == 4 && IB_WC_LOCAL_INV == 6 &&
	      IB_WC_REG_MR == 10 && IB_WC_MASKED_COMP_SWAP == 11 &&
	      IB_WC_MASKED_FETCH_ADD == 12 && IB_WC_RECV == 128 &&
	      IB_WC_RECV_RDMA_WITH_IMM == 129);
static_assert(IB_WC_GRH == 1 && IB_WC_WITH_IMM == 2 && IB_WC_WITH_INVALIDATE == 4);

/*
 * poll_cq: up to @num_entries completions written by Rust into @wc in one call (one
 * CQ lock, as upstream's mlx5_ib_poll_cq). A successful QP1 receive carries the
 * packet's P_Key in pkey_index; as upstream's handle_responder, it becomes the
 * P_Key's index in the port's table (0 when the table has none).
 */
static int mlx5rs_ib_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct mlx5rs_ib_cq *cq = container_of(ibcq, struct mlx5rs_ib_cq, ibcq);
	u64 outcome;
	u16 pkey;
	int n, i;

	if (num_entries <= 0)
		return 0;
	outcome = mlx5rs_ib_rs_poll_cq(cq->rust, wc, num_entries);
	n = mlx5rs_poll_n(outcome);
	if (!mlx5rs_poll_qp1_recv(outcome))
		return n;
	for (i = 0; i < n; i++) {
		if (wc[i].qp->qp_type != IB_QPT_GSI || !(wc[i].opcode & IB_WC_RECV) ||
		    wc[i].status != IB_WC_SUCCESS)
			continue;
		pkey = wc[i].pkey_index;
		wc[i].pkey_index = 0;
		ib_find_cached_pkey(ibcq->device, wc[i].qp->port, pkey, &wc[i].pkey_index);
	}
	return n;
}

/* req_notify_cq: arm the CQ; with IB_CQ_REPORT_MISSED_EVENTS, 1 if completions wait. */
static int mlx5rs_ib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct mlx5rs_ib_cq *cq = container_of(ibcq, struct mlx5rs_ib_cq, ibcq);

	return mlx5rs_ib_rs_req_notify_cq(cq->rust,
					  (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED,
					  !!(flags & IB_CQ_REPORT_MISSED_EVENTS));
}

/* The statuses ib/cq/wc_status.rs numbers as the core's enum. */
static_assert(IB_WC_SUCCESS == 0 && IB_WC_LOC_LEN_ERR == 1 && IB_WC_LOC_QP_OP_ERR == 2 &&
	      IB_WC_LOC_PROT_ERR == 4 && IB_WC_WR_FLUSH_ERR == 5 && IB_WC_MW_BIND_ERR == 6 &&
	      IB_WC_BAD_RESP_ERR == 7 && IB_WC_LOC_ACCESS_ERR == 8 &&
	      IB_WC_REM_INV_REQ_ERR == 9 && IB_WC_REM_ACCESS_ERR == 10 &&
	      IB_WC_REM_OP_ERR == 11 && IB_WC_RETRY_EXC_ERR == 12 &&
	      IB_WC_RNR_RETRY_EXC_ERR == 13 && IB_WC_REM_ABORT_ERR == 16 &&
	      IB_WC_GENERAL_ERR == 21);

const struct ib_device_ops mlx5rs_ib_cq_ops = {
	.create_cq = mlx5rs_ib_create_cq,
	.create_user_cq = mlx5rs_ib_create_user_cq,
	.destroy_cq = mlx5rs_ib_destroy_cq,
	.modify_cq = mlx5rs_ib_modify_cq,
	.poll_cq = mlx5rs_ib_poll_cq,
	.req_notify_cq = mlx5rs_ib_req_notify_cq,
	.resize_user_cq = mlx5rs_ib_resize_user_cq,
	INIT_RDMA_OBJ_SIZE(ib_cq, mlx5rs_ib_cq, ibcq),
};

/**
 * mlx5rs_ib_cq_comp() - a completion event of @cq: call the consumer's handler
 * @cq: a CQ between create and destroy
 *
 * Called from an EQ's interrupt thread and from the fatal-error path's notification
 * of the CQs with work outstanding (process context). A CQ its owner polls directly
 * (ib_alloc_cq() with IB_POLL_DIRECT: the driver's own UMR CQ, or a consumer's) gets
 * no callback: the RDMA core's handler for it only warns ("got unsolicited
 * completion"), and its owner sees the flushed work by polling.
 */
void mlx5rs_ib_cq_comp(struct mlx5rs_ib_cq *cq)
{
	if (cq->ibcq.poll_ctx == IB_POLL_DIRECT)
		return;
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
