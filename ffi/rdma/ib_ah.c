// SPDX-License-Identifier: GPL-2.0
/*
 * The InfiniBand shim's address handle verbs: create_ah, create_user_ah, query_ah
 * and destroy_ah (the ops table mlx5rs_ib_ah_ops; their Rust side is
 * ffi/rdma/ib_ah.rs). The trampolines read the core's struct rdma_ah_attr into a
 * plain struct mlx5rs_ib_ah_attr of mlx5rs_ffi.h and back with the two copy helpers
 * mlx5rs_ib_ah_attr_to_rs() / mlx5rs_ib_ah_attr_from_rs(), which the QP verbs
 * (ffi/rdma/ib_qp.c) use for their paths too. The address vector is
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

/**
 * mlx5rs_ib_ah_attr_to_rs() - a core address vector in the shim's plain form
 * @ah: the core's attributes (create_ah's, or a path of modify_qp's)
 * @o: filled: the type, port, SL and static rate; the DLID and source path bits of an
 *     InfiniBand address; the GRH fields when IB_AH_GRH is set (zero otherwise)
 */
void mlx5rs_ib_ah_attr_to_rs(const struct rdma_ah_attr *ah, struct mlx5rs_ib_ah_attr *o)
{
	u32 port = rdma_ah_get_port_num(ah);

	BUILD_BUG_ON(sizeof(*o) != MLX5RS_IB_AH_ATTR_SIZE);
	memset(o, 0, sizeof(*o));
	o->ah_type = ah->type;
	/* u32 in the core; above 255 cannot be a port of this device. */
	o->port_num = port > 255 ? 255 : port;
	o->sl = rdma_ah_get_sl(ah);
	o->static_rate = rdma_ah_get_static_rate(ah);
	if (ah->type == RDMA_AH_ATTR_TYPE_IB) {
		o->dlid = rdma_ah_get_dlid(ah);
		o->src_path_bits = rdma_ah_get_path_bits(ah);
	}
	if (rdma_ah_get_ah_flags(ah) & IB_AH_GRH) {
		const struct ib_global_route *grh = rdma_ah_read_grh(ah);

		o->is_global = 1;
		memcpy(o->dgid, grh->dgid.raw, sizeof(o->dgid));
		o->flow_label = grh->flow_label;
		o->sgid_index = grh->sgid_index;
		o->hop_limit = grh->hop_limit;
		o->traffic_class = grh->traffic_class;
	}
}

/**
 * mlx5rs_ib_ah_attr_from_rs() - the shim's plain address vector back to the core's
 * @a: what Rust answered (query_ah's, or a path of query_qp's)
 * @type: the address type to report (the handle's, or the port's)
 * @ah: cleared, then given @type and @a's port, SL, DLID, source path bits, static rate
 *      and, with @a->is_global, its GRH
 */
void mlx5rs_ib_ah_attr_from_rs(const struct mlx5rs_ib_ah_attr *a, enum rdma_ah_attr_type type,
			       struct rdma_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->type = type;
	rdma_ah_set_port_num(ah, a->port_num);
	rdma_ah_set_sl(ah, a->sl);
	rdma_ah_set_dlid(ah, a->dlid);
	rdma_ah_set_path_bits(ah, a->src_path_bits);
	rdma_ah_set_static_rate(ah, a->static_rate);
	if (a->is_global) {
		rdma_ah_set_grh(ah, NULL, a->flow_label, a->sgid_index, a->hop_limit,
				a->traffic_class);
		rdma_ah_set_dgid_raw(ah, (void *)a->dgid);
	}
}

static int mlx5rs_ib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			struct ib_udata *udata)
{
	struct mlx5rs_ib_ah_attr in;
	u8 resp[32] = {};
	struct mlx5rs_ib_udata u = {
		.out = resp,
		.outcap = sizeof(resp),
		.outlen = udata ? udata->outlen : 0,
	};
	int err;

	BUILD_BUG_ON(sizeof(to_rsah(ibah)->av) != MLX5RS_IB_AV_SIZE);
	mlx5rs_ib_ah_attr_to_rs(init->ah_attr, &in);
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
	mlx5rs_ib_ah_attr_from_rs(&out, ibah->type, attr);
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
