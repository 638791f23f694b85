// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions of the InfiniBand shim: get_dma_mr, reg_user_mr, rereg_user_mr,
 * dereg_mr, trampolines into ffi/rdma/ib_mr.rs. The driver allocates struct mlx5rs_ib_mr
 * (the core does not for MRs) and keeps the Rust MR state in its rust field; Rust
 * answers the keys (struct mlx5rs_ib_mr_keys) and the shim sets ibmr.lkey/rkey.
 * The core fills the other ib_mr fields (device, pd, iova, length, uobject).
 *
 * The ops are a table of their own, merged into the device's by mlx5rs_ib_alloc()
 * (ib_set_device_ops() takes every non-NULL op of a table).
 */
#include <linux/build_bug.h>
#include <linux/err.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include "ib_priv.h"

static_assert(IB_MR_REREG_TRANS == 1 && IB_MR_REREG_PD == 2 && IB_MR_REREG_ACCESS == 4);

static u32 pdn_of(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct mlx5rs_ib_pd, ibpd)->pdn;
}

static struct ib_mr *mr_done(struct mlx5rs_ib_mr *mr, const struct mlx5rs_ib_mr_keys *k)
{
	mr->ibmr.lkey = k->lkey;
	mr->ibmr.rkey = k->rkey;
	return &mr->ibmr;
}

static struct ib_mr *mlx5rs_ib_get_dma_mr(struct ib_pd *ibpd, int acc)
{
	struct mlx5rs_ib_mr_keys k = {};
	struct mlx5rs_ib_mr *mr;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = mlx5rs_ib_rs_get_dma_mr(to_rsdev(ibpd->device)->rust, pdn_of(ibpd), acc, &k,
				      &mr->rust);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return mr_done(mr, &k);
}

static struct ib_mr *mlx5rs_ib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
					   u64 virt_addr, int acc, struct ib_dmah *dmah,
					   struct ib_udata *udata)
{
	struct mlx5rs_ib_mr_keys k = {};
	struct mlx5rs_ib_mr *mr;
	int err;

	/* No TPH DMA handles (upstream needs cap-dependent steering tags). */
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = mlx5rs_ib_rs_reg_user_mr(to_rsdev(ibpd->device)->rust, ibpd->device,
				       pdn_of(ibpd), start, length, virt_addr, acc, &k,
				       &mr->rust);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return mr_done(mr, &k);
}

/*
 * Returns NULL when the MR was changed in place, or a new MR the core puts in the
 * old one's place (it then deregisters the old one).
 */
static struct ib_mr *mlx5rs_ib_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
					     u64 length, u64 virt_addr, int acc,
					     struct ib_pd *new_pd, struct ib_udata *udata)
{
	struct mlx5rs_ib_mr *old = container_of(ibmr, struct mlx5rs_ib_mr, ibmr);
	struct mlx5rs_ib_mr_keys k = {};
	struct mlx5rs_ib_mr *mr;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = mlx5rs_ib_rs_rereg_user_mr(to_rsdev(ibmr->device)->rust, ibmr->device, old->rust,
					 flags, start, length, virt_addr, acc,
					 new_pd ? pdn_of(new_pd) : pdn_of(ibmr->pd), &k, &mr->rust);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	if (!mr->rust) {
		kfree(mr);
		ibmr->lkey = k.lkey;
		ibmr->rkey = k.rkey;
		return NULL;
	}
	return mr_done(mr, &k);
}

static int mlx5rs_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct mlx5rs_ib_mr *mr = container_of(ibmr, struct mlx5rs_ib_mr, ibmr);
	int err;

	err = mlx5rs_ib_rs_dereg_mr(to_rsdev(ibmr->device)->rust, mr->rust);
	if (err)
		return err;
	kfree(mr);
	return 0;
}

const struct ib_device_ops mlx5rs_ib_mr_ops = {
	.dereg_mr = mlx5rs_ib_dereg_mr,
	.get_dma_mr = mlx5rs_ib_get_dma_mr,
	.reg_user_mr = mlx5rs_ib_reg_user_mr,
	.rereg_user_mr = mlx5rs_ib_rereg_user_mr,
};
