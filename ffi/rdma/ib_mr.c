// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions of the InfiniBand shim: get_dma_mr, reg_user_mr, rereg_user_mr,
 * alloc_mr, dereg_mr, trampolines into ffi/rdma/ib_mr.rs, and map_mr_sg, which
 * writes a fast-registration MR's translation list (this file owns it; the core's
 * ib_sg_to_pages() walks the scatterlist). The driver allocates struct mlx5rs_ib_mr
 * (the core does not for MRs) and keeps the Rust MR state in its rust field; Rust
 * answers the keys (struct mlx5rs_ib_mr_keys) and the shim sets ibmr.lkey/rkey.
 * The core fills the other ib_mr fields (device, pd, iova, length, uobject).
 *
 * The ops are a table of their own, merged into the device's by mlx5rs_ib_alloc()
 * (ib_set_device_ops() takes every non-NULL op of a table).
 */
#include <linux/align.h>
#include <linux/build_bug.h>
#include <linux/dma-mapping.h>
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

/* Alignment of a translation list (upstream MLX5_UMR_ALIGN). */
#define MLX5RS_UMR_ALIGN 2048
/* The read and write bits of an MTT entry (upstream MLX5_EN_RD, MLX5_EN_WR). */
#define MLX5RS_MTT_EN_RD 1ULL
#define MLX5RS_MTT_EN_WR 2ULL

static void mlx5rs_free_descs(struct ib_device *ibdev, struct mlx5rs_ib_mr *mr)
{
	if (!mr->descs_alloc)
		return;
	ib_dma_unmap_single(ibdev, mr->desc_map, mr->max_descs * sizeof(u64), DMA_TO_DEVICE);
	kfree(mr->descs_alloc);
	mr->descs_alloc = NULL;
	mr->descs = NULL;
}

static int mlx5rs_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct mlx5rs_ib_mr *mr = container_of(ibmr, struct mlx5rs_ib_mr, ibmr);
	int err;

	err = mlx5rs_ib_rs_dereg_mr(to_rsdev(ibmr->device)->rust, ibmr->device, mr->rust);
	if (err)
		return err;
	/* The mkey is gone: the device reads the list no more. */
	mlx5rs_free_descs(ibmr->device, mr);
	kfree(mr);
	return 0;
}

/*
 * alloc_mr of IB_MR_TYPE_MEM_REG (upstream mlx5_alloc_mem_reg_descs): room for
 * max_num_sg pages rounded up to 4, the translation list allocated and mapped here
 * (written by map_mr_sg, read by the device through an IB_WR_REG_MR), the free mkey
 * created by Rust. Upstream also serves SG_GAPS and INTEGRITY MRs (KLM and signature
 * mkeys); here they are -EINVAL, as upstream answers a type it does not know.
 */
static struct ib_mr *mlx5rs_ib_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
					u32 max_num_sg)
{
	struct ib_device *ibdev = ibpd->device;
	struct mlx5rs_ib_mr_keys k = {};
	struct mlx5rs_ib_mr *mr;
	u32 ndescs;
	size_t size;
	int err;

	/* 1 << 20: ib/device/attr.rs ALLOC_MR_MAX_SG, the list length query_device reports. */
	if (type != IB_MR_TYPE_MEM_REG || !max_num_sg || max_num_sg > (1U << 20))
		return ERR_PTR(-EINVAL);
	ndescs = ALIGN(max_num_sg, 4);
	size = ndescs * sizeof(u64);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->descs_alloc = kzalloc(size + MLX5RS_UMR_ALIGN - 1, GFP_KERNEL);
	if (!mr->descs_alloc) {
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->descs = PTR_ALIGN(mr->descs_alloc, MLX5RS_UMR_ALIGN);
	mr->max_descs = ndescs;
	mr->desc_map = ib_dma_map_single(ibdev, mr->descs, size, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, mr->desc_map)) {
		kfree(mr->descs_alloc);
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	err = mlx5rs_ib_rs_alloc_mr(to_rsdev(ibdev)->rust, pdn_of(ibpd), ndescs, PAGE_SHIFT, &k,
				    &mr->rust);
	if (err) {
		mlx5rs_free_descs(ibdev, mr);
		kfree(mr);
		return ERR_PTR(err);
	}
	return mr_done(mr, &k);
}

/* One page of map_mr_sg (upstream mlx5_set_page). */
static int mlx5rs_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct mlx5rs_ib_mr *mr = container_of(ibmr, struct mlx5rs_ib_mr, ibmr);

	if (unlikely(mr->ndescs == mr->max_descs))
		return -ENOMEM;
	mr->descs[mr->ndescs++] = cpu_to_be64(addr | MLX5RS_MTT_EN_RD | MLX5RS_MTT_EN_WR);
	return 0;
}

/* map_mr_sg (upstream mlx5_ib_map_mr_sg for an MTT MR): the pages into the list. */
static int mlx5rs_ib_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
			       unsigned int *sg_offset)
{
	struct mlx5rs_ib_mr *mr = container_of(ibmr, struct mlx5rs_ib_mr, ibmr);
	int n;

	if (!mr->descs)
		return -EINVAL;
	mr->ndescs = 0;
	ib_dma_sync_single_for_cpu(ibmr->device, mr->desc_map, mr->max_descs * sizeof(u64),
				   DMA_TO_DEVICE);
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, mlx5rs_set_page);
	ib_dma_sync_single_for_device(ibmr->device, mr->desc_map, mr->max_descs * sizeof(u64),
				      DMA_TO_DEVICE);
	return n;
}

const struct ib_device_ops mlx5rs_ib_mr_ops = {
	.alloc_mr = mlx5rs_ib_alloc_mr,
	.dereg_mr = mlx5rs_ib_dereg_mr,
	.get_dma_mr = mlx5rs_ib_get_dma_mr,
	.map_mr_sg = mlx5rs_ib_map_mr_sg,
	.reg_user_mr = mlx5rs_ib_reg_user_mr,
	.rereg_user_mr = mlx5rs_ib_rereg_user_mr,
};
