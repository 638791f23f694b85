// SPDX-License-Identifier: GPL-2.0
/*
 * The protection-domain verbs of the InfiniBand shim: alloc_pd and dealloc_pd,
 * trampolines into ffi/rdma/ib_pd.rs. The PD number is kept in struct mlx5rs_ib_pd,
 * where the other families read it (ib_priv.h).
 */
#include <linux/errno.h>
#include <rdma/ib_verbs.h>
#include "ib_priv.h"

static int mlx5rs_ib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct mlx5rs_ib_pd *pd = container_of(ibpd, struct mlx5rs_ib_pd, ibpd);
	const void *rust = to_rsdev(ibpd->device)->rust;
	u8 resp[16] = {};
	struct mlx5rs_ib_udata u = {
		.out = resp,
		.outcap = sizeof(resp),
		.outlen = udata ? udata->outlen : 0,
	};
	int err;

	/* Like upstream, the request is not read (libmlx5 sends none). */
	err = mlx5rs_ib_rs_alloc_pd(rust, &pd->pdn, udata ? &u : NULL);
	if (err)
		return err;
	if (udata) {
		err = _ib_respond_udata(udata, resp, min_t(size_t, u.resp_len, sizeof(resp)));
		if (err)
			mlx5rs_ib_rs_dealloc_pd(rust, pd->pdn);
	}
	return err;
}

static int mlx5rs_ib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct mlx5rs_ib_pd *pd = container_of(ibpd, struct mlx5rs_ib_pd, ibpd);

	return mlx5rs_ib_rs_dealloc_pd(to_rsdev(ibpd->device)->rust, pd->pdn);
}

const struct ib_device_ops mlx5rs_ib_pd_ops = {
	.alloc_pd = mlx5rs_ib_alloc_pd,
	.dealloc_pd = mlx5rs_ib_dealloc_pd,
	INIT_RDMA_OBJ_SIZE(ib_pd, mlx5rs_ib_pd, ibpd),
};
