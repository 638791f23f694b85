// SPDX-License-Identifier: GPL-2.0
/*
 * What libmlx5 made of the driver's answers, as the data path uses them: one
 * "dv <key> <value>" line per field (tests/bench/guest-dp-figures.sh runs it under each
 * driver and compares the two lists). mlx5dv_query_device (its context flags: CQE
 * version, compression, padding; the dynamic bfregs), and for a CQ and two RC QPs as
 * perftest creates them (depth 128, max_inline_data 220) what mlx5dv_init_obj returns:
 * CQE size and count, the QP's send / receive queue sizes and strides, the BlueFlame
 * register's size and its offset in the UAR page (which bfreg libmlx5 rings), the
 * capabilities ibv_create_qp handed back (max_inline_data: when libmlx5 inlines), and
 * where the buffers and doorbell records sit within their pages. Pointers are printed
 * as page offsets only (addresses differ from run to run).
 *
 * Layouts: rdma-core 56.1 <infiniband/mlx5dv.h> (no headers in the toolbox; only the
 * fields read are declared, with the structures' full size reserved).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include "ib-verbs.h"

struct mlx5dv_qp {
	uint32_t *dbrec;
	struct {
		void *buf;
		uint32_t wqe_cnt;
		uint32_t stride;
	} sq, rq;
	struct {
		void *reg;
		uint32_t size;
	} bf;
	uint64_t comp_mask;
	off_t uar_mmap_offset;
	uint32_t tirn, tisn, rqn, sqn;
	uint64_t tir_icm_addr;
};

struct mlx5dv_cq {
	void *buf;
	uint32_t *dbrec;
	uint32_t cqe_cnt;
	uint32_t cqe_size;
	void *cq_uar;
	uint32_t cqn;
	uint64_t comp_mask;
};

/* struct mlx5dv_obj: {in, out} pairs for qp, cq, srq, rwq, dm, ah, pd. */
struct mlx5dv_obj {
	struct {
		struct ibv_qp *in;
		struct mlx5dv_qp *out;
	} qp;
	struct {
		struct ibv_cq *in;
		struct mlx5dv_cq *out;
	} cq;
	void *rest[10];
};

enum { MLX5DV_OBJ_QP = 1, MLX5DV_OBJ_CQ = 2, MLX5DV_QP_MASK_UAR_MMAP_OFFSET = 1 };

int mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t obj_type);
int mlx5dv_query_device(struct ibv_context *ctx, void *attrs_out);

static unsigned long pgoff(const void *p)
{
	return (unsigned long)p & 4095;
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "mlx5_0";
	struct ibv_context *ctx = open_dev(dev);
	/* struct mlx5dv_context, zeroed, with room to spare: the words up to
	 * hca_core_clock (byte 88), whose comp_mask bit (1 << 8) is not asked. */
	uint32_t dvc[256];
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int i;

	if (!ctx) {
		printf("dv open-failed 1\n");
		return 1;
	}
	memset(dvc, 0, sizeof(dvc));
	((uint64_t *)dvc)[2] = 0xff; /* comp_mask: caps up to dc_odp_caps */
	printf("dv query_device.rc %d\n", mlx5dv_query_device(ctx, dvc));
	for (i = 0; i < 22; i++)
		printf("dv query_device.w%02d %#x\n", i, dvc[i]);

	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 128, NULL, NULL, 0) : NULL;
	if (!cq) {
		printf("dv create-failed 1\n");
		return 1;
	}
	for (i = 0; i < 2; i++) {
		struct ibv_qp_init_attr a = {
			.send_cq = cq,
			.recv_cq = cq,
			.cap = { .max_send_wr = 128, .max_recv_wr = 128, .max_send_sge = 1,
				 .max_recv_sge = 1, .max_inline_data = 220 },
			.qp_type = IBV_QPT_RC,
		};
		struct ibv_qp *qp = ibv_create_qp(pd, &a);
		struct mlx5dv_qp dq;
		struct mlx5dv_cq dc;
		struct mlx5dv_obj o;

		if (!qp) {
			printf("dv qp%d.create-failed 1\n", i);
			return 1;
		}
		memset(&dq, 0, sizeof(dq));
		memset(&dc, 0, sizeof(dc));
		memset(&o, 0, sizeof(o));
		dq.comp_mask = MLX5DV_QP_MASK_UAR_MMAP_OFFSET;
		o.qp.in = qp;
		o.qp.out = &dq;
		o.cq.in = cq;
		o.cq.out = &dc;
		printf("dv qp%d.init_obj.rc %d\n", i, mlx5dv_init_obj(&o, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ));
		printf("dv qp%d.cap %u %u %u %u %u\n", i, a.cap.max_send_wr, a.cap.max_recv_wr,
		       a.cap.max_send_sge, a.cap.max_recv_sge, a.cap.max_inline_data);
		printf("dv qp%d.sq %u %u\n", i, dq.sq.wqe_cnt, dq.sq.stride);
		printf("dv qp%d.rq %u %u\n", i, dq.rq.wqe_cnt, dq.rq.stride);
		printf("dv qp%d.bf %u %#lx\n", i, dq.bf.size, pgoff(dq.bf.reg));
		printf("dv qp%d.comp_mask %#llx\n", i, (unsigned long long)dq.comp_mask);
		printf("dv qp%d.uar_mmap_offset %#llx\n", i, (unsigned long long)dq.uar_mmap_offset);
		printf("dv qp%d.buf_pgoff %#lx %#lx\n", i, pgoff(dq.sq.buf), pgoff(dq.rq.buf));
		printf("dv qp%d.dbrec_pgoff_mod64 %lu\n", i, pgoff(dq.dbrec) % 64);
		if (i == 0) {
			printf("dv cq.cqe %u %u\n", dc.cqe_cnt, dc.cqe_size);
			printf("dv cq.uar_pgoff %#lx\n", pgoff(dc.cq_uar));
			printf("dv cq.buf_pgoff %#lx\n", pgoff(dc.buf));
			printf("dv cq.dbrec_pgoff_mod64 %lu\n", pgoff(dc.dbrec) % 64);
			printf("dv cq.comp_mask %#llx\n", (unsigned long long)dc.comp_mask);
		}
	}
	/* The objects go with the process: the emulator's object counts are the scenario's. */
	return 0;
}
