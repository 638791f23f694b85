/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the guest's C helpers (ib-storm.c, ib-async.c) use of libibverbs, and the
 * set-up they share: opening a device by name and creating an RC QP.
 *
 * The toolbox has libibverbs.so.1 but not its headers (no -dev package), so the
 * declarations are written out here as <infiniband/verbs.h> of rdma-core 56.1 lays
 * them out: opaque objects, the head of struct ibv_qp (what is read of it), and the
 * attribute structures passed in. The helpers include this file ("ib-verbs.h", found
 * next to them) and link libibverbs.so.1 directly.
 */
#ifndef MLX5RS_GUEST_IB_VERBS_H
#define MLX5RS_GUEST_IB_VERBS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct ibv_device;
struct ibv_context;
struct ibv_pd;
struct ibv_mr;
struct ibv_cq;
struct ibv_srq;
struct ibv_comp_channel;

/* The head of struct ibv_qp. */
struct ibv_qp {
	struct ibv_context *context;
	void *qp_context;
	struct ibv_pd *pd;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_srq *srq;
	uint32_t handle;
	uint32_t qp_num;
};

struct ibv_qp_cap {
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
};

struct ibv_qp_init_attr {
	void *qp_context;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	struct ibv_srq *srq;
	struct ibv_qp_cap cap;
	int qp_type; /* enum ibv_qp_type */
	int sq_sig_all;
};

struct ibv_srq_attr {
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t srq_limit;
};

struct ibv_srq_init_attr {
	void *srq_context;
	struct ibv_srq_attr attr;
};

struct ibv_async_event {
	union {
		struct ibv_cq *cq;
		struct ibv_qp *qp;
		struct ibv_srq *srq;
		void *wq;
		int port_num;
	} element;
	int event_type; /* enum ibv_event_type */
};

enum { IBV_QPT_RC = 2, IBV_ACCESS_LOCAL_WRITE = 1 };

struct ibv_device **ibv_get_device_list(int *num_devices);
void ibv_free_device_list(struct ibv_device **list);
const char *ibv_get_device_name(struct ibv_device *device);
struct ibv_context *ibv_open_device(struct ibv_device *device);
int ibv_close_device(struct ibv_context *context);
struct ibv_pd *ibv_alloc_pd(struct ibv_context *context);
int ibv_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access);
int ibv_dereg_mr(struct ibv_mr *mr);
struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector);
int ibv_destroy_cq(struct ibv_cq *cq);
struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
int ibv_destroy_qp(struct ibv_qp *qp);
struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
int ibv_destroy_srq(struct ibv_srq *srq);
int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event);
void ibv_ack_async_event(struct ibv_async_event *event);

/* A context on the device named `name` (mlx5_0, ...), NULL (errno set by libibverbs)
 * when there is no such device or it does not open. The context keeps its device
 * referenced, so the list is freed at once. */
static inline struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **l;
	struct ibv_context *ctx = NULL;
	int n, i;

	l = ibv_get_device_list(&n);
	if (!l)
		return NULL;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			ctx = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	return ctx;
}

/* An RC QP on `pd` with `cq` for both queues, 16 work requests of one SGE each way. */
static inline struct ibv_qp *rc_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(pd, &a);
}

#endif
