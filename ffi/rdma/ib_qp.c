// SPDX-License-Identifier: GPL-2.0
/*
 * The QP verbs of the InfiniBand shim: create_qp, modify_qp, query_qp,
 * destroy_qp, post_send and post_recv trampolines into Rust (ffi/rdma/ib_qp.rs).
 * post_send and post_recv hand the core's work request chain to Rust, which walks it
 * under the queue's lock: a connected QP's send request of the opcodes RDMA_WRITE to
 * ATOMIC_FETCH_AND_ADD and each receive request read in place (struct ib_send_wr,
 * ib_rdma_wr, ib_atomic_wr and ib_recv_wr, whose layouts Rust mirrors, with the opcode
 * and flag numbers: checked below), any other send request copied into the shim's
 * plain struct mlx5rs_ib_send_wr (a UD request's address vector taken from its address
 * handle) by mlx5rs_ib_send_wr_next(); bad_wr is answered as upstream does.
 *
 * Each trampoline copies the core's structures into the shim's plain ones
 * (struct mlx5rs_ib_qp_init, struct mlx5rs_ib_qp_attr, mlx5rs_ffi.h) and back: the
 * numbers of the PD, CQs and SRQ a QP names are read from the other families'
 * objects (ib_priv.h, their fixed first fields), an address vector is taken as an
 * InfiniBand one (RoCE addresses are refused, the provider has no RoCE port) and
 * copied with the address handles' helpers (mlx5rs_ib_ah_attr_to_rs() / _from_rs()). The
 * driver part of a verb is staged with mlx5rs_ib_stage() and the response goes back
 * through _ib_respond_udata(). The state-transition rules of the core
 * (ib_modify_qp_is_ok()) are offered to Rust by mlx5rs_ib_modify_qp_is_ok().
 */
#include <linux/build_bug.h>
#include <linux/completion.h>
#include <linux/errno.h>
#include <linux/irq_poll.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include "ib_priv.h"

/* A path of query_qp: the core's form when its port is one of the device's (zero otherwise). */
static void path_from_rs(struct ib_device *ibdev, const struct mlx5rs_ib_ah_attr *a,
			 struct rdma_ah_attr *ah)
{
	if (!a->port_num || a->port_num > ibdev->phys_port_cnt) {
		memset(ah, 0, sizeof(*ah));
		return;
	}
	mlx5rs_ib_ah_attr_from_rs(a, rdma_ah_find_type(ibdev, a->port_num), ah);
}

/**
 * mlx5rs_ib_modify_qp_is_ok() - the core's ib_modify_qp_is_ok() for Rust
 * @cur: enum ib_qp_state the QP is in
 * @next: enum ib_qp_state asked for
 * @type: enum ib_qp_type of the QP
 * @mask: enum ib_qp_attr_mask of the request
 *
 * Return: whether the transition exists and @mask has the attributes it requires
 * and no others it does not allow.
 */
bool mlx5rs_ib_modify_qp_is_ok(u32 cur, u32 next, u32 type, u32 mask)
{
	if (cur > IB_QPS_ERR || next > IB_QPS_ERR || type >= IB_QPT_MAX)
		return false;
	return ib_modify_qp_is_ok(cur, next, type, mask);
}

/* The core's optional QP buffer attributes (uverbs_std_types_qp.c): refused. */
static const u16 qp_buf_attrs[] = {
	UVERBS_ATTR_CREATE_QP_BUF_UMEM, UVERBS_ATTR_CREATE_QP_RQ_BUF_UMEM,
	UVERBS_ATTR_CREATE_QP_SQ_BUF_UMEM,
};

static int mlx5rs_ib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
			struct ib_udata *udata)
{
	struct mlx5rs_ib_qp *qp = container_of(ibqp, struct mlx5rs_ib_qp, ibqp);
	const void *rust = to_rsdev(ibqp->device)->rust;
	struct mlx5rs_ib_qp_init init = {};
	struct mlx5rs_ib_stage *st = NULL;
	void *uctx = NULL;
	int err;

	BUILD_BUG_ON(sizeof(struct mlx5rs_ib_qp_attr) != MLX5RS_IB_QP_ATTR_SIZE);
	BUILD_BUG_ON(sizeof(struct mlx5rs_ib_qp_init) != MLX5RS_IB_QP_INIT_SIZE);
	if (attr->rwq_ind_tbl || attr->qp_type >= IB_QPT_MAX)
		return -EOPNOTSUPP;
	init.qp_type = attr->qp_type;
	init.create_flags = attr->create_flags;
	if (ibqp->pd)
		init.pdn = container_of(ibqp->pd, struct mlx5rs_ib_pd, ibpd)->pdn;
	if (attr->send_cq) {
		struct mlx5rs_ib_cq *cq = container_of(attr->send_cq, struct mlx5rs_ib_cq, ibcq);

		init.has_send_cq = 1;
		init.send_cqn = cq->cqn;
		init.send_cqe_128 = mlx5rs_ib_rs_cq_cqe_size(cq->rust) == 128;
	}
	if (attr->recv_cq) {
		struct mlx5rs_ib_cq *cq = container_of(attr->recv_cq, struct mlx5rs_ib_cq, ibcq);

		init.has_recv_cq = 1;
		init.recv_cqn = cq->cqn;
		init.recv_cqe_128 = mlx5rs_ib_rs_cq_cqe_size(cq->rust) == 128;
	}
	if (attr->srq) {
		init.has_srq = 1;
		init.srqn = container_of(attr->srq, struct mlx5rs_ib_srq, ibsrq)->srqn;
	}
	init.max_send_wr = attr->cap.max_send_wr;
	init.max_recv_wr = attr->cap.max_recv_wr;
	init.max_send_sge = attr->cap.max_send_sge;
	init.max_recv_sge = attr->cap.max_recv_sge;
	init.max_inline_data = attr->cap.max_inline_data;
	init.port_num = attr->port_num;
	init.sq_sig_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	if (attr->qp_type == IB_QPT_XRC_TGT) {
		/* The core names the domain of a target (ib_create_qp_user()). */
		if (!attr->xrcd)
			return -EINVAL;
		init.xrcdn = container_of(attr->xrcd, struct mlx5rs_ib_xrcd, ibxrcd)->xrcdn;
	}
	if (attr->qp_type == IB_QPT_XRC_TGT || attr->qp_type == IB_QPT_XRC_INI) {
		/* Upstream's mlx5_ib_dev_res_srq_init() at create_qp. */
		err = mlx5rs_ib_devres_get(to_rsdev(ibqp->device), &init);
		if (err)
			return err;
	}
	if (mlx5rs_ib_names_buffer(udata, qp_buf_attrs, ARRAY_SIZE(qp_buf_attrs)))
		return -EOPNOTSUPP;
	if (udata) {
		/* Trailing bytes: upstream's ib_is_udata_cleared() answer, EINVAL. */
		st = mlx5rs_ib_stage_tail(udata, -EINVAL, &err);
		if (!st)
			return err ? err : -EINVAL;
		uctx = mlx5rs_ib_udata_uctx(udata);
	}
	err = mlx5rs_ib_rs_create_qp(rust, ibqp->device, uctx, &init, st ? &st->u : NULL, ibqp,
				     &qp->rust, &qp->qpn);
	if (err)
		goto out;
	/* QP0 and QP1 are numbered 0 and 1 to the core, as upstream's. */
	if (attr->qp_type == IB_QPT_SMI)
		ibqp->qp_num = 0;
	else if (attr->qp_type == IB_QPT_GSI)
		ibqp->qp_num = 1;
	else
		ibqp->qp_num = qp->qpn;
	attr->cap.max_send_wr = init.max_send_wr;
	attr->cap.max_recv_wr = init.max_recv_wr;
	attr->cap.max_send_sge = init.max_send_sge;
	attr->cap.max_recv_sge = init.max_recv_sge;
	attr->cap.max_inline_data = init.max_inline_data;
	if (st) {
		err = _ib_respond_udata(udata, st->out,
					min_t(size_t, st->u.resp_len, sizeof(st->out)));
		if (err) {
			mlx5rs_ib_rs_destroy_qp(rust, qp->rust);
			qp->rust = NULL;
		}
	}
out:
	kfree(st);
	return err;
}

/**
 * mlx5rs_ib_qp_event() - an async event of @ibqp: to the consumer's handler
 * @ibqp: a QP between create and destroy
 * @event: enum ib_event_type (a QP event)
 *
 * Called from a work item (process context, may sleep), as upstream mlx5_ib calls
 * the handler from its QP event workqueue; never after destroy_qp started.
 */
void mlx5rs_ib_qp_event(struct ib_qp *ibqp, u32 event)
{
	struct ib_event ev = {};

	if (!ibqp->event_handler)
		return;
	ev.device = ibqp->device;
	ev.element.qp = ibqp;
	ev.event = event;
	ibqp->event_handler(&ev, ibqp->qp_context);
}

static int mlx5rs_ib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct mlx5rs_ib_qp *qp = container_of(ibqp, struct mlx5rs_ib_qp, ibqp);

	mlx5rs_ib_rs_destroy_qp(to_rsdev(ibqp->device)->rust, qp->rust);
	qp->rust = NULL;
	return 0;
}

static int mlx5rs_ib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int attr_mask,
			struct ib_udata *udata)
{
	struct mlx5rs_ib_qp *qp = container_of(ibqp, struct mlx5rs_ib_qp, ibqp);
	struct mlx5rs_ib_stage *st = NULL;
	struct mlx5rs_ib_qp_attr *a;
	int err;

	if ((attr_mask & IB_QP_AV) && attr->ah_attr.type != RDMA_AH_ATTR_TYPE_IB)
		return -EINVAL;
	if ((attr_mask & IB_QP_ALT_PATH) && attr->alt_ah_attr.type != RDMA_AH_ATTR_TYPE_IB)
		return -EINVAL;
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	a->attr_mask = attr_mask;
	a->qp_state = attr->qp_state;
	a->cur_qp_state = attr->cur_qp_state;
	a->path_mtu = attr->path_mtu;
	a->path_mig_state = attr->path_mig_state;
	a->qkey = attr->qkey;
	a->rq_psn = attr->rq_psn;
	a->sq_psn = attr->sq_psn;
	a->dest_qp_num = attr->dest_qp_num;
	a->qp_access_flags = attr->qp_access_flags;
	a->pkey_index = attr->pkey_index;
	a->alt_pkey_index = attr->alt_pkey_index;
	a->en_sqd_async_notify = attr->en_sqd_async_notify;
	a->max_rd_atomic = attr->max_rd_atomic;
	a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	a->min_rnr_timer = attr->min_rnr_timer;
	/* u32 in the core; above 255 cannot be a port of this device. */
	a->port_num = attr->port_num > 255 ? 255 : attr->port_num;
	a->timeout = attr->timeout;
	a->retry_cnt = attr->retry_cnt;
	a->rnr_retry = attr->rnr_retry;
	a->alt_port_num = attr->alt_port_num > 255 ? 255 : attr->alt_port_num;
	a->alt_timeout = attr->alt_timeout;
	if (attr_mask & IB_QP_AV)
		mlx5rs_ib_ah_attr_to_rs(&attr->ah_attr, &a->ah_attr);
	if (attr_mask & IB_QP_ALT_PATH)
		mlx5rs_ib_ah_attr_to_rs(&attr->alt_ah_attr, &a->alt_ah_attr);
	if (udata && (udata->inlen || udata->outlen)) {
		st = mlx5rs_ib_stage(udata, &err);
		if (!st)
			goto out;
	}
	err = mlx5rs_ib_rs_modify_qp(to_rsdev(ibqp->device)->rust, qp->rust, a,
				     st ? &st->u : NULL);
	if (!err && st && st->u.resp_len)
		err = _ib_respond_udata(udata, st->out,
					min_t(size_t, st->u.resp_len, sizeof(st->out)));
out:
	kfree(st);
	kfree(a);
	return err;
}

static int mlx5rs_ib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int attr_mask,
		       struct ib_qp_init_attr *init_attr)
{
	struct mlx5rs_ib_qp *qp = container_of(ibqp, struct mlx5rs_ib_qp, ibqp);
	struct mlx5rs_ib_qp_attr *a;
	int err;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	err = mlx5rs_ib_rs_query_qp(to_rsdev(ibqp->device)->rust, qp->rust, a);
	if (err)
		goto out;
	memset(attr, 0, sizeof(*attr));
	memset(init_attr, 0, sizeof(*init_attr));
	/* The Rust side produced only values of the enums below (ib/qp/modify.rs). */
	attr->qp_state = a->qp_state;
	attr->cur_qp_state = a->cur_qp_state;
	attr->path_mtu = a->path_mtu;
	attr->path_mig_state = a->path_mig_state;
	attr->qkey = a->qkey;
	attr->rq_psn = a->rq_psn;
	attr->sq_psn = a->sq_psn;
	attr->dest_qp_num = a->dest_qp_num;
	attr->qp_access_flags = a->qp_access_flags;
	attr->cap.max_send_wr = a->max_send_wr;
	attr->cap.max_recv_wr = a->max_recv_wr;
	attr->cap.max_send_sge = a->max_send_sge;
	attr->cap.max_recv_sge = a->max_recv_sge;
	attr->cap.max_inline_data = a->max_inline_data;
	attr->pkey_index = a->pkey_index;
	attr->alt_pkey_index = a->alt_pkey_index;
	attr->sq_draining = a->sq_draining;
	attr->max_rd_atomic = a->max_rd_atomic;
	attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
	attr->min_rnr_timer = a->min_rnr_timer;
	attr->port_num = a->port_num;
	attr->timeout = a->timeout;
	attr->retry_cnt = a->retry_cnt;
	attr->rnr_retry = a->rnr_retry;
	attr->alt_port_num = a->alt_port_num;
	attr->alt_timeout = a->alt_timeout;
	if (a->ah_attr.port_num)
		path_from_rs(ibqp->device, &a->ah_attr, &attr->ah_attr);
	if (a->alt_ah_attr.port_num)
		path_from_rs(ibqp->device, &a->alt_ah_attr, &attr->alt_ah_attr);
	init_attr->qp_type = ibqp->qp_type;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->srq = ibqp->srq;
	init_attr->cap = attr->cap;
	init_attr->sq_sig_type = a->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	if (!ibqp->uobject)
		init_attr->qp_context = ibqp->qp_context;
out:
	kfree(a);
	return err;
}

static u32 mlx5rs_wr_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE: return MLX5RS_WR_RDMA_WRITE;
	case IB_WR_RDMA_WRITE_WITH_IMM: return MLX5RS_WR_RDMA_WRITE_IMM;
	case IB_WR_SEND: return MLX5RS_WR_SEND;
	case IB_WR_SEND_WITH_IMM: return MLX5RS_WR_SEND_IMM;
	case IB_WR_RDMA_READ: return MLX5RS_WR_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP: return MLX5RS_WR_ATOMIC_CMP_AND_SWP;
	case IB_WR_ATOMIC_FETCH_AND_ADD: return MLX5RS_WR_ATOMIC_FETCH_AND_ADD;
	case IB_WR_LOCAL_INV: return MLX5RS_WR_LOCAL_INV;
	case IB_WR_REG_MR: return MLX5RS_WR_REG_MR;
	default: return MLX5RS_WR_OTHER;
	}
}

/*
 * One core send work request as the plain structure Rust reads. Called for every
 * request of a chain into the one structure Rust zeroed for the chain, so no memset:
 * every field is written here but @av, written only with an address handle (Rust reads
 * it only with @has_ah), and the reserved bytes, which stay zero. (Zeroing the 176
 * bytes was a string store per request on the kernel's post path.)
 */
static void mlx5rs_send_wr_to_rs(const struct ib_qp *ibqp, const struct ib_send_wr *wr,
				 struct mlx5rs_ib_send_wr *o)
{
	o->remote_addr = 0;
	o->compare_add = 0;
	o->swap = 0;
	o->imm = 0;
	o->rkey = 0;
	o->remote_qpn = 0;
	o->remote_qkey = 0;
	o->has_ah = 0;
	o->reg_iova = 0;
	o->reg_len = 0;
	o->reg_desc_map = 0;
	o->reg_descs = 0;
	o->reg_key = 0;
	o->reg_access = 0;
	o->reg_ndescs = 0;
	o->reg_desc_lkey = 0;
	o->reg_page_shift = 0;
	o->wr_id = wr->wr_id;
	o->sg = (u64)(uintptr_t)wr->sg_list;
	o->num_sge = wr->num_sge > 0 ? wr->num_sge : 0;
	o->opcode = mlx5rs_wr_opcode(wr->opcode);
	o->send_flags = (wr->send_flags & IB_SEND_FENCE ? MLX5RS_SEND_FENCE : 0) |
			(wr->send_flags & IB_SEND_SIGNALED ? MLX5RS_SEND_SIGNALED : 0) |
			(wr->send_flags & IB_SEND_SOLICITED ? MLX5RS_SEND_SOLICITED : 0) |
			(wr->send_flags & IB_SEND_INLINE ? MLX5RS_SEND_INLINE : 0);
	switch (wr->opcode) {
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		o->imm = be32_to_cpu(wr->ex.imm_data);
		break;
	case IB_WR_LOCAL_INV:
		o->imm = wr->ex.invalidate_rkey;
		break;
	default:
		break;
	}
	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		o->remote_addr = rdma_wr(wr)->remote_addr;
		o->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		o->remote_addr = atomic_wr(wr)->remote_addr;
		o->rkey = atomic_wr(wr)->rkey;
		o->compare_add = atomic_wr(wr)->compare_add;
		o->swap = atomic_wr(wr)->swap;
		break;
	default:
		break;
	}
	if (wr->opcode == IB_WR_REG_MR) {
		struct mlx5rs_ib_mr *mr = container_of(reg_wr(wr)->mr, struct mlx5rs_ib_mr, ibmr);

		o->reg_key = reg_wr(wr)->key;
		o->reg_access = reg_wr(wr)->access;
		o->reg_iova = mr->ibmr.iova;
		o->reg_len = mr->ibmr.length;
		o->reg_page_shift = mr->ibmr.page_size ? ilog2(mr->ibmr.page_size) : 0;
		o->reg_desc_map = mr->desc_map;
		o->reg_descs = (u64)(uintptr_t)mr->descs;
		o->reg_ndescs = mr->ndescs;
		o->reg_desc_lkey = ibqp->pd->local_dma_lkey;
	}
	/* The provider's own UMR, only on its UMR QP (any other QP: MLX5RS_WR_OTHER). */
	if (wr->opcode == MLX5RS_IB_WR_UMR && mlx5rs_ib_is_umr_qp(ibqp))
		mlx5rs_ib_umr_wr_to_rs(wr, o);
	switch (ibqp->qp_type) {
	case IB_QPT_UD:
	case IB_QPT_GSI:
	case IB_QPT_SMI:
		if (ud_wr(wr)->ah) {
			struct mlx5rs_ib_ah *ah = container_of(ud_wr(wr)->ah, struct mlx5rs_ib_ah,
							       ibah);

			o->has_ah = 1;
			memcpy(o->av, ah->av, sizeof(o->av));
		}
		o->remote_qpn = ud_wr(wr)->remote_qpn;
		o->remote_qkey = ud_wr(wr)->remote_qkey;
		break;
	default:
		break;
	}
}

/*
 * post_send: Rust walks the chain under the send queue's lock, one request at a time
 * through mlx5rs_ib_send_wr_next(), and rings the doorbell once after the last one
 * posted (upstream's mlx5_ib_post_send: one lock, one doorbell a call); on error
 * *bad_wr is the request that failed (those before it are posted), as upstream's.
 */
static int mlx5rs_ib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			       const struct ib_send_wr **bad_wr)
{
	struct mlx5rs_ib_qp *qp = container_of(ibqp, struct mlx5rs_ib_qp, ibqp);
	u64 outcome;
	u32 done;
	int err;

	BUILD_BUG_ON(sizeof(struct mlx5rs_ib_send_wr) != MLX5RS_IB_SEND_WR_SIZE);
	BUILD_BUG_ON(sizeof(struct ib_sge) != 16 || offsetof(struct ib_sge, length) != 8 ||
		     offsetof(struct ib_sge, lkey) != 12);
	outcome = mlx5rs_ib_rs_post_send(qp->rust, ibqp, wr, 0);
	err = mlx5rs_post_err(outcome);
	if (err) {
		done = mlx5rs_post_done(outcome);
		for (; done && wr; done--)
			wr = wr->next;
		*bad_wr = wr;
	}
	return err;
}

/* post_recv: as post_send, for receive work requests (Rust reads each in place). */
static int mlx5rs_ib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad_wr)
{
	struct mlx5rs_ib_qp *qp = container_of(ibqp, struct mlx5rs_ib_qp, ibqp);
	u64 outcome;
	u32 done;
	int err;

	outcome = mlx5rs_ib_rs_post_recv(qp->rust, wr, 0);
	err = mlx5rs_post_err(outcome);
	if (err) {
		done = mlx5rs_post_done(outcome);
		for (; done && wr; done--)
			wr = wr->next;
		*bad_wr = wr;
	}
	return err;
}

/**
 * mlx5rs_ib_send_wr_next() - one send work request as Rust reads it
 * @ibqp: the core's QP posted to (const struct ib_qp *)
 * @wr: a request of the chain passed to post_send (const struct ib_send_wr *)
 * @o: filled in
 *
 * Return: the next request of the chain, NULL after the last.
 */
const void *mlx5rs_ib_send_wr_next(const void *ibqp, const void *wr,
				   struct mlx5rs_ib_send_wr *o)
{
	const struct ib_send_wr *w = wr;

	mlx5rs_send_wr_to_rs(ibqp, w, o);
	return w->next;
}

/*
 * struct ib_send_wr, ib_rdma_wr and ib_atomic_wr as ffi/rdma/ib_dp_abi.rs mirrors them
 * (Rust reads a connected QP's requests of these opcodes in place), and the opcode and
 * flag numbers Rust reads there, which are the shim's own.
 */
static_assert(sizeof(struct ib_send_wr) == 40 && offsetof(struct ib_send_wr, next) == 0 &&
	      offsetof(struct ib_send_wr, wr_id) == 8 &&
	      offsetof(struct ib_send_wr, sg_list) == 16 &&
	      offsetof(struct ib_send_wr, num_sge) == 24 &&
	      offsetof(struct ib_send_wr, opcode) == 28 &&
	      sizeof(enum ib_wr_opcode) == 4 &&
	      offsetof(struct ib_send_wr, send_flags) == 32 &&
	      offsetof(struct ib_send_wr, ex) == 36 &&
	      sizeof(((struct ib_send_wr *)0)->ex) == 4);
static_assert(sizeof(struct ib_rdma_wr) == 56 && offsetof(struct ib_rdma_wr, wr) == 0 &&
	      offsetof(struct ib_rdma_wr, remote_addr) == 40 &&
	      offsetof(struct ib_rdma_wr, rkey) == 48);
static_assert(sizeof(struct ib_atomic_wr) == 88 && offsetof(struct ib_atomic_wr, wr) == 0 &&
	      offsetof(struct ib_atomic_wr, remote_addr) == 40 &&
	      offsetof(struct ib_atomic_wr, compare_add) == 48 &&
	      offsetof(struct ib_atomic_wr, swap) == 56 &&
	      offsetof(struct ib_atomic_wr, rkey) == 80);
static_assert((int)IB_WR_RDMA_WRITE == (int)MLX5RS_WR_RDMA_WRITE &&
	      (int)IB_WR_RDMA_WRITE_WITH_IMM == (int)MLX5RS_WR_RDMA_WRITE_IMM &&
	      (int)IB_WR_SEND == (int)MLX5RS_WR_SEND &&
	      (int)IB_WR_SEND_WITH_IMM == (int)MLX5RS_WR_SEND_IMM &&
	      (int)IB_WR_RDMA_READ == (int)MLX5RS_WR_RDMA_READ &&
	      (int)IB_WR_ATOMIC_CMP_AND_SWP == (int)MLX5RS_WR_ATOMIC_CMP_AND_SWP &&
	      (int)IB_WR_ATOMIC_FETCH_AND_ADD == (int)MLX5RS_WR_ATOMIC_FETCH_AND_ADD);
static_assert((int)IB_SEND_FENCE == (int)MLX5RS_SEND_FENCE &&
	      (int)IB_SEND_SIGNALED == (int)MLX5RS_SEND_SIGNALED &&
	      (int)IB_SEND_SOLICITED == (int)MLX5RS_SEND_SOLICITED &&
	      (int)IB_SEND_INLINE == (int)MLX5RS_SEND_INLINE);

/* struct ib_recv_wr as ffi/rdma/ib_dp_abi.rs mirrors it (Rust walks the chain in place). */
static_assert(sizeof(struct ib_recv_wr) == 32 && offsetof(struct ib_recv_wr, next) == 0 &&
	      offsetof(struct ib_recv_wr, wr_id) == 8 &&
	      offsetof(struct ib_recv_wr, sg_list) == 16 &&
	      offsetof(struct ib_recv_wr, num_sge) == 24);

/*
 * Draining, as upstream's mlx5_ib_drain_sq/rq (qp.c): the QP to ERR, then a drain work
 * request whose completion the consumer's CQ reports. After a fatal error (Rust's
 * internal-error state: the move to ERR may fail, posts fail with -EIO but for this
 * request, the kernel CQs give flush completions of every outstanding request in
 * software) the drain goes on and makes the CQ's handler run, so that ib_drain_qp
 * returns on a dead device.
 */
struct mlx5rs_drain_cqe {
	struct ib_cqe cqe;
	struct completion done;
};

static void mlx5rs_drain_qp_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct mlx5rs_drain_cqe *d = container_of(wc->wr_cqe, struct mlx5rs_drain_cqe, cqe);

	complete(&d->done);
}

/* Upstream's handle_drain_completion. */
static void mlx5rs_drain_wait(struct ib_cq *cq, struct mlx5rs_drain_cqe *d, bool dead)
{
	struct mlx5rs_ib_cq *rcq = container_of(cq, struct mlx5rs_ib_cq, ibcq);

	if (cq->poll_ctx == IB_POLL_DIRECT) {
		while (wait_for_completion_timeout(&d->done, HZ / 10) <= 0)
			ib_process_cq_direct(cq, -1);
		return;
	}
	if (dead) {
		/* The handler may have been scheduled by the fatal error: let it end. */
		if (mlx5rs_ib_rs_cq_reset_notify(rcq->rust)) {
			switch (cq->poll_ctx) {
			case IB_POLL_SOFTIRQ:
				irq_poll_disable(&cq->iop);
				irq_poll_enable(&cq->iop);
				break;
			case IB_POLL_WORKQUEUE:
			case IB_POLL_UNBOUND_WORKQUEUE:
				cancel_work_sync(&cq->work);
				break;
			default:
				WARN_ON_ONCE(1);
			}
		}
		/* The handler runs, so the drain request's flush is polled. */
		if (cq->comp_handler)
			cq->comp_handler(cq, cq->cq_context);
	}
	wait_for_completion(&d->done);
}

/*
 * One body for both queues (@sq: the send queue, else the receive queue), as upstream's
 * mlx5_ib_drain_sq/rq: the QP to ERR, the drain request posted (an RDMA write without
 * data on the send queue, an empty receive), its completion waited for.
 */
static void mlx5rs_drain_queue(struct ib_qp *ibqp, bool sq)
{
	struct mlx5rs_ib_qp *qp = container_of(ibqp, struct mlx5rs_ib_qp, ibqp);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct mlx5rs_drain_cqe drain;
	struct ib_rdma_wr swr = {
		.wr = {
			.next = NULL,
			{ .wr_cqe = &drain.cqe, },
			.opcode = IB_WR_RDMA_WRITE,
		},
	};
	struct ib_recv_wr rwr = { .wr_cqe = &drain.cqe };
	const char *q = sq ? "send" : "recv";
	bool dead;
	int ret;

	ret = ib_modify_qp(ibqp, &attr, IB_QP_STATE);
	dead = mlx5rs_ib_rs_qp_internal_error(qp->rust);
	if (ret && !dead) {
		WARN_ONCE(ret, "failed to drain %s queue: %d\n", q, ret);
		return;
	}
	drain.cqe.done = mlx5rs_drain_qp_done;
	init_completion(&drain.done);
	if (sq)
		ret = mlx5rs_post_err(mlx5rs_ib_rs_post_send(qp->rust, ibqp, &swr.wr, 1));
	else
		ret = mlx5rs_post_err(mlx5rs_ib_rs_post_recv(qp->rust, &rwr, 1));
	if (ret) {
		WARN_ONCE(ret, "failed to drain %s queue: %d\n", q, ret);
		return;
	}
	mlx5rs_drain_wait(sq ? ibqp->send_cq : ibqp->recv_cq, &drain, dead);
}

static void mlx5rs_ib_drain_sq(struct ib_qp *ibqp)
{
	mlx5rs_drain_queue(ibqp, true);
}

static void mlx5rs_ib_drain_rq(struct ib_qp *ibqp)
{
	mlx5rs_drain_queue(ibqp, false);
}

const struct ib_device_ops mlx5rs_ib_qp_ops = {
	.create_qp = mlx5rs_ib_create_qp,
	.destroy_qp = mlx5rs_ib_destroy_qp,
	.drain_rq = mlx5rs_ib_drain_rq,
	.drain_sq = mlx5rs_ib_drain_sq,
	.modify_qp = mlx5rs_ib_modify_qp,
	.post_recv = mlx5rs_ib_post_recv,
	.post_send = mlx5rs_ib_post_send,
	.query_qp = mlx5rs_ib_query_qp,
	INIT_RDMA_OBJ_SIZE(ib_qp, mlx5rs_ib_qp, ibqp),
};

/* The values ib/qp/modify.rs uses, checked against the core's enums. */
static_assert(IB_QPS_RESET == 0 && IB_QPS_SQD == 4 && IB_QPS_SQE == 5 && IB_QPS_ERR == 6);
static_assert(IB_QPT_SMI == 0 && IB_QPT_GSI == 1 && IB_QPT_RC == 2 && IB_QPT_UC == 3 &&
	      IB_QPT_UD == 4 && IB_QPT_XRC_INI == 9 && IB_QPT_XRC_TGT == 10);
static_assert(IB_QP_STATE == 1 && IB_QP_DEST_QPN == (1 << 20) && IB_QP_RATE_LIMIT == (1 << 25));
static_assert(IB_MIG_MIGRATED == 0 && IB_MIG_REARM == 1 && IB_MIG_ARMED == 2);
static_assert(IB_MTU_256 == 1 && IB_MTU_4096 == 5);
