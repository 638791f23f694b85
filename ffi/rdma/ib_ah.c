// SPDX-License-Identifier: GPL-2.0
/*
 * The InfiniBand shim's address handle verbs: create_ah, create_user_ah, query_ah
 * and destroy_ah (the ops table mlx5rs_ib_ah_ops; their Rust side is
 * ffi/rdma/ib_ah.rs). The trampolines read the core's struct rdma_ah_attr into a
 * plain struct mlx5rs_ib_ah_attr of mlx5rs_ffi.h and back. The address vector is
 * built by Rust into the handle's own structure; creating one neither sleeps nor
 * allocates (the core may call create_ah in atomic context), and destroying one
 * needs nothing of the device.
 */
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>
#include "ib_priv.h"

static struct mlx5rs_ib_ah *to_rsah(struct ib_ah *ibah)
{
	return container_of(ibah, struct mlx5rs_ib_ah, ibah);
}

static int mlx5rs_ib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
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

static int mlx5rs_ib_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
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

static int mlx5rs_ib_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	/* A software address vector: nothing on the device. */
	return 0;
}

const struct ib_device_ops mlx5rs_ib_ah_ops = {
	.create_ah = mlx5rs_ib_create_ah,
	.create_user_ah = mlx5rs_ib_create_ah,
	.destroy_ah = mlx5rs_ib_destroy_ah,
	.query_ah = mlx5rs_ib_query_ah,
	INIT_RDMA_OBJ_SIZE(ib_ah, mlx5rs_ib_ah, ibah),
};

/* The enum value ffi/rdma/ib_ah.rs and ib/ah/ rely on. */
static_assert(RDMA_AH_ATTR_TYPE_IB == 1);
