// SPDX-License-Identifier: GPL-2.0
/*
 * Pinned user memory for the InfiniBand provider: thin wrappers over ib_umem
 * (pin, best page size, DMA blocks, release) and the calling process's mm, for
 * ffi/rdma/umem.rs. The block iterator (rdma_umem_for_each_dma_block) is an inline
 * function and a macro in rdma/iter.h, so it lives here; Rust holds its state in an
 * opaque buffer of MLX5RS_UMEM_ITER_SIZE bytes and fills its own arrays in chunks.
 *
 * Which ib_device to pin on: every trampoline of a user verb has the core's object
 * (its ->device) and passes that struct ib_device to Rust as an opaque pointer for
 * the duration of the call (ffi/rdma/umem.rs IbDev); pinning uses current->mm, so it must
 * run in the verb's process context, as every uverbs call does.
 */
#include <linux/build_bug.h>
#include <linux/device.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/iter.h>
#include <rdma/uverbs_ioctl.h>
#include "ib_priv.h"

struct mlx5rs_umem_iter {
	struct ib_block_iter bi;
};

static_assert(sizeof(struct mlx5rs_umem_iter) <= MLX5RS_UMEM_ITER_SIZE);
static_assert(__alignof__(struct mlx5rs_umem_iter) <= 8);
/*
 * The IB access bits ib/umem/plan.rs names (the provider's one definition of them,
 * which the MR, QP and CQ verbs use too): checked here only.
 */
static_assert(IB_ACCESS_LOCAL_WRITE == 1 && IB_ACCESS_REMOTE_WRITE == 2);
static_assert(IB_ACCESS_REMOTE_READ == 4 && IB_ACCESS_REMOTE_ATOMIC == 8);
static_assert(IB_ACCESS_MW_BIND == 16 && IB_ZERO_BASED == 32);
static_assert(IB_ACCESS_ON_DEMAND == 64 && IB_ACCESS_HUGETLB == 128);
static_assert(IB_ACCESS_FLUSH_GLOBAL == 256 && IB_ACCESS_FLUSH_PERSISTENT == 512);
static_assert(IB_ACCESS_RELAXED_ORDERING == (1 << 20));
static_assert(IB_ACCESS_OPTIONAL == 0x3ff00000 && IB_ACCESS_SUPPORTED == 0x3ff003ff);

/**
 * mlx5rs_umem_get() - pin [@addr, @addr + @len) of the calling process
 * @ibdev: the device to DMA-map the pages for
 * @addr: user virtual address
 * @len: bytes
 * @access: IB access flags (IB_ACCESS_LOCAL_WRITE etc.: writable pins)
 * @err: set to the negative errno on failure, 0 on success
 *
 * Return: the umem, or NULL (see @err).
 */
struct ib_umem *mlx5rs_umem_get(struct ib_device *ibdev, u64 addr, u64 len, int access,
				int *err)
{
	struct ib_umem *umem;

	*err = 0;
	if (addr > ULONG_MAX || len > SIZE_MAX) {
		*err = -EOVERFLOW;
		return NULL;
	}
	umem = ib_umem_get_va(ibdev, addr, len, access);
	if (IS_ERR(umem)) {
		*err = PTR_ERR(umem);
		return NULL;
	}
	/*
	 * ib_umem_release() unmaps through umem->ibdev: keep the ib_device's memory
	 * until then, even when the umem outlives the registration (a umem a device
	 * object may still reach is released only after the function stopped DMA,
	 * which is after ib_dealloc_device()).
	 */
	get_device(&ibdev->dev);
	return umem;
}

/**
 * mlx5rs_umem_release() - unpin and free a umem of mlx5rs_umem_get()
 *
 * Context: process context (ib_umem_release() may sleep); the pinning process may
 * be gone, the umem holds a reference on its mm.
 */
void mlx5rs_umem_release(struct ib_umem *umem)
{
	struct ib_device *ibdev = umem->ibdev;

	ib_umem_release(umem);
	put_device(&ibdev->dev);
}

/**
 * mlx5rs_umem_find_best_pgsz() - ib_umem_find_best_pgsz(): sets the umem's IOVA
 * Return: the largest page size of @bitmap that maps @iova onto the pages, 0: none.
 */
u64 mlx5rs_umem_find_best_pgsz(struct ib_umem *umem, u64 bitmap, u64 iova)
{
	if (bitmap > ULONG_MAX)
		bitmap &= ULONG_MAX;
	return ib_umem_find_best_pgsz(umem, bitmap, iova);
}

/** mlx5rs_umem_num_dma_blocks() - blocks of @pgsz the umem spans from its IOVA */
u64 mlx5rs_umem_num_dma_blocks(struct ib_umem *umem, u64 pgsz)
{
	return ib_umem_num_dma_blocks(umem, pgsz);
}

/** mlx5rs_umem_dma_offset() - offset of the umem's start in its first @pgsz block */
u64 mlx5rs_umem_dma_offset(struct ib_umem *umem, u64 pgsz)
{
	return ib_umem_dma_offset(umem, pgsz);
}

/** mlx5rs_umem_start_dma() - DMA address of the umem's first byte */
u64 mlx5rs_umem_start_dma(struct ib_umem *umem)
{
	return ib_umem_start_dma_addr(umem);
}

/** mlx5rs_umem_is_contiguous() - the umem is one DMA-contiguous range */
bool mlx5rs_umem_is_contiguous(struct ib_umem *umem)
{
	return ib_umem_is_contiguous(umem);
}

/**
 * mlx5rs_umem_iter_start() - start iterating the @pgsz DMA blocks of @umem
 * @it: MLX5RS_UMEM_ITER_SIZE bytes, 8-byte aligned, of the caller
 * @pgsz: PAGE_SIZE or smaller, or a size mlx5rs_umem_find_best_pgsz() returned
 */
void mlx5rs_umem_iter_start(struct ib_umem *umem, u64 pgsz, void *it)
{
	struct mlx5rs_umem_iter *i = it;

	__rdma_umem_block_iter_start(&i->bi, umem, pgsz);
}

/**
 * mlx5rs_umem_iter_fill() - the next DMA block addresses
 * @it: started by mlx5rs_umem_iter_start(), its umem still pinned
 * @out: room for @n addresses
 *
 * Return: addresses written; fewer than @n only at the end.
 */
u64 mlx5rs_umem_iter_fill(void *it, u64 *out, u64 n)
{
	struct mlx5rs_umem_iter *i = it;
	u64 k = 0;

	while (k < n && __rdma_umem_block_iter_next(&i->bi))
		out[k++] = rdma_block_iter_dma_address(&i->bi);
	return k;
}

/** mlx5rs_mm_current() - the calling process's mm (identity only, no reference) */
const void *mlx5rs_mm_current(void)
{
	return current->mm;
}

/** mlx5rs_mm_grab_current() - mmgrab() the calling process's mm; NULL if none */
void *mlx5rs_mm_grab_current(void)
{
	struct mm_struct *mm = current->mm;

	if (mm)
		mmgrab(mm);
	return mm;
}

/** mlx5rs_mm_drop() - mmdrop() an mm of mlx5rs_mm_grab_current() */
void mlx5rs_mm_drop(void *mm)
{
	mmdrop(mm);
}
