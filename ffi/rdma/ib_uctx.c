// SPDX-License-Identifier: GPL-2.0
/*
 * The user-context verbs of the InfiniBand shim: alloc_ucontext, dealloc_ucontext,
 * disassociate_ucontext and mmap, trampolines into ffi/rdma/ib_uctx.rs. The Rust
 * context (ib/uctx/) lives behind the rust field of struct mlx5rs_ib_ucontext from
 * alloc to dealloc; mmap maps the page of BAR 0 it names, or the mmap entry of a UAR
 * object (ffi/rdma/ib_uar.c, the context's uverbs objects).
 */
#include <linux/build_bug.h>
#include <linux/cache.h>
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/mlx5-abi.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/uverbs_ioctl.h>
#include "ib_priv.h"

/**
 * mlx5rs_ib_udata_uctx() - the Rust context of the user context a verb runs in
 * @udata: the verb's udata (NULL for a kernel verb)
 *
 * Return: the context's rust pointer (a UcontextBox, ffi/rdma/ib_uctx.rs), or NULL.
 */
void *mlx5rs_ib_udata_uctx(struct ib_udata *udata)
{
	struct mlx5rs_ib_ucontext *uc;

	if (!udata)
		return NULL;
	uc = rdma_udata_to_drv_context(udata, struct mlx5rs_ib_ucontext, ibuc);
	return uc ? uc->rust : NULL;
}

static int mlx5rs_ib_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct mlx5rs_ib_ucontext *uc = container_of(ibuc, struct mlx5rs_ib_ucontext, ibuc);
	const void *rust = to_rsdev(ibuc->device)->rust;
	struct mlx5rs_ib_stage *st;
	int err;

	/* Upstream reads the request's size and ignores any bytes after it. */
	st = mlx5rs_ib_stage_tail(udata, 0, &err);
	if (!st)
		return err ? err : -EINVAL;
	err = mlx5rs_ib_rs_alloc_ucontext(rust, &st->u, cache_line_size(), &uc->rust);
	if (!err) {
		err = _ib_respond_udata(udata, st->out,
					min_t(size_t, st->u.resp_len, sizeof(st->out)));
		if (err) {
			mlx5rs_ib_rs_dealloc_ucontext(rust, uc->rust);
			uc->rust = NULL;
		}
	}
	kfree(st);
	return err;
}

static void mlx5rs_ib_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct mlx5rs_ib_ucontext *uc = container_of(ibuc, struct mlx5rs_ib_ucontext, ibuc);

	mlx5rs_ib_rs_dealloc_ucontext(to_rsdev(ibuc->device)->rust, uc->rust);
	uc->rust = NULL;
}

/*
 * The core zaps every mapping of the context (rdma_user_mmap_io() tracks them) and
 * destroys its objects itself; the context's UARs and transport domain go at
 * dealloc_ucontext, as upstream's empty mlx5_ib_disassociate_ucontext. Having the op
 * lets unregistration proceed while processes keep the device open.
 */
static void mlx5rs_ib_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/* Maps the page at @bar_offset of BAR 0 (tracked for zapping, with @entry if any). */
static int mlx5rs_ib_mmap_bar(struct ib_ucontext *ibuc, struct vm_area_struct *vma,
			      u64 bar_offset, bool write_combining,
			      struct rdma_user_mmap_entry *entry)
{
	struct pci_dev *pdev = to_pci_dev(ibuc->device->dev.parent);
	pgprot_t prot;

	if (bar_offset > pci_resource_len(pdev, 0) ||
	    pci_resource_len(pdev, 0) - bar_offset < PAGE_SIZE)
		return -EINVAL;
	prot = write_combining ? pgprot_writecombine(vma->vm_page_prot) :
				 pgprot_noncached(vma->vm_page_prot);
	return rdma_user_mmap_io(ibuc, vma, (pci_resource_start(pdev, 0) + bar_offset) >> PAGE_SHIFT,
				 PAGE_SIZE, prot, entry);
}

/*
 * Maps the mmap entry of key @key (a UAR object's page); a key never inserted, or
 * one whose object is destroyed, is EINVAL. rdma_user_mmap_io() refuses a length
 * other than the entry's page and a private mapping.
 */
static int mlx5rs_ib_mmap_entry(struct ib_ucontext *ibuc, struct vm_area_struct *vma, u64 key)
{
	struct rdma_user_mmap_entry *entry;
	struct mlx5rs_ib_uar_entry *e;
	int err;

	entry = rdma_user_mmap_entry_get_pgoff(ibuc, key);
	if (!entry)
		return -EINVAL;
	e = container_of(entry, struct mlx5rs_ib_uar_entry, rdma);
	err = mlx5rs_ib_mmap_bar(ibuc, vma, e->obj.bar_offset, e->obj.write_combining, entry);
	rdma_user_mmap_entry_put(entry);
	return err;
}

/*
 * The core's clock info page, as upstream's mlx5_ib_mmap_clock_info_page: the Rust
 * side checked length, sharing, version and write/exec (ib/abi/mmap.rs decode) and
 * that a page exists. The mapping takes its own reference to the page, so it outlives
 * the device; the core does not zap it at disassociate (upstream's neither).
 */
static int mlx5rs_ib_mmap_clock_info(struct mlx5rs_ib_dev *dev, struct vm_area_struct *vma)
{
	if (!dev->clock_info)
		return -EOPNOTSUPP;
	return vm_insert_page(vma, vma->vm_start, virt_to_page(dev->clock_info));
}

static int mlx5rs_ib_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct mlx5rs_ib_ucontext *uc = container_of(ibuc, struct mlx5rs_ib_ucontext, ibuc);
	struct mlx5rs_ib_mmap_req req = {};
	struct mlx5rs_ib_mmap_map map = {};
	int err;

	BUILD_BUG_ON(sizeof(req) != MLX5RS_IB_MMAP_REQ_SIZE);
	BUILD_BUG_ON(sizeof(map) != MLX5RS_IB_MMAP_MAP_SIZE);
	req.pgoff = vma->vm_pgoff;
	req.len = vma->vm_end - vma->vm_start;
	req.shared = !!(vma->vm_flags & VM_SHARED);
	req.write = !!(vma->vm_flags & VM_WRITE);
	req.exec = !!(vma->vm_flags & VM_EXEC);
	err = mlx5rs_ib_rs_mmap(to_rsdev(ibuc->device)->rust, uc->rust, &req, &map);
	if (err)
		return err;
	if (map.entry)
		return mlx5rs_ib_mmap_entry(ibuc, vma, map.entry_key);
	if (map.read_only)
		vm_flags_clear(vma, VM_MAYWRITE);
	if (map.clock_info)
		return mlx5rs_ib_mmap_clock_info(to_rsdev(ibuc->device), vma);
	return mlx5rs_ib_mmap_bar(ibuc, vma, map.bar_offset, map.write_combining, NULL);
}

/*
 * UVERBS_METHOD_QUERY_CONTEXT (libibverbs' ibv_import_device): the alloc_ucontext
 * response again, in the driver attribute upstream adds to the method
 * (MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX, ffi/rdma/ib_uar.c), as mlx5_ib_query_ucontext.
 */
static int mlx5rs_ib_query_ucontext(struct ib_ucontext *ibuc, struct uverbs_attr_bundle *attrs)
{
	struct mlx5rs_ib_ucontext *uc = container_of(ibuc, struct mlx5rs_ib_ucontext, ibuc);
	struct mlx5_ib_alloc_ucontext_resp resp = {};
	int len, err;

	len = uverbs_attr_get_len(attrs, MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX);
	if (len < 0)
		return len;
	err = mlx5rs_ib_rs_query_ucontext(to_rsdev(ibuc->device)->rust, uc->rust, len,
					  (__u8 *)&resp, sizeof(resp));
	if (err)
		return err;
	return uverbs_copy_to_struct_or_zero(attrs, MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX, &resp,
					     sizeof(resp));
}

const struct ib_device_ops mlx5rs_ib_uctx_ops = {
	.query_ucontext = mlx5rs_ib_query_ucontext,
	.alloc_ucontext = mlx5rs_ib_alloc_ucontext,
	.dealloc_ucontext = mlx5rs_ib_dealloc_ucontext,
	.disassociate_ucontext = mlx5rs_ib_disassociate_ucontext,
	.mmap = mlx5rs_ib_mmap,
	INIT_RDMA_OBJ_SIZE(ib_ucontext, mlx5rs_ib_ucontext, ibuc),
};
