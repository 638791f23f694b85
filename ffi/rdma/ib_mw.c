// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows of the InfiniBand shim: alloc_mw and dealloc_mw, trampolines into
 * ffi/rdma/ib_mw.rs. The core allocates struct mlx5rs_ib_mw (INIT_RDMA_OBJ_SIZE) and
 * fills its type and PD; Rust creates the window's mkey, answers its rkey and keeps
 * its state in the rust field. User space binds and invalidates the window itself
 * (libmlx5 posts the UMR WQEs); the kernel has no bind verb, as upstream has none.
 */
#include <linux/errno.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include "ib_priv.h"

static int mlx5rs_ib_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct mlx5rs_ib_mw *mw = container_of(ibmw, struct mlx5rs_ib_mw, ibmw);
	struct mlx5rs_ib_pd *pd = container_of(ibmw->pd, struct mlx5rs_ib_pd, ibpd);
	const void *rust = to_rsdev(ibmw->device)->rust;
	struct mlx5rs_ib_stage *st;
	int err;

	st = mlx5rs_ib_stage(udata, &err);
	if (err)
		return err;
	err = mlx5rs_ib_rs_alloc_mw(rust, pd->pdn, ibmw->type, st ? &st->u : NULL, &ibmw->rkey,
				    &mw->rust);
	if (!err && st && st->u.resp_len) {
		err = _ib_respond_udata(udata, st->out,
					min_t(size_t, st->u.resp_len, sizeof(st->out)));
		if (err && !mlx5rs_ib_rs_dealloc_mw(rust, mw->rust))
			mw->rust = NULL;
	}
	kfree(st);
	return err;
}

static int mlx5rs_ib_dealloc_mw(struct ib_mw *ibmw)
{
	struct mlx5rs_ib_mw *mw = container_of(ibmw, struct mlx5rs_ib_mw, ibmw);
	int err;

	err = mlx5rs_ib_rs_dealloc_mw(to_rsdev(ibmw->device)->rust, mw->rust);
	if (!err)
		mw->rust = NULL;
	return err;
}

const struct ib_device_ops mlx5rs_ib_mw_ops = {
	.alloc_mw = mlx5rs_ib_alloc_mw,
	.dealloc_mw = mlx5rs_ib_dealloc_mw,
	INIT_RDMA_OBJ_SIZE(ib_mw, mlx5rs_ib_mw, ibmw),
};
