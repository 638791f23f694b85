// SPDX-License-Identifier: GPL-2.0
/*
 * The clock info page (clock/mod.rs): the page libmlx5 maps read-only
 * (MLX5_IB_MMAP_CLOCK_INFO) to convert device timestamps to nanoseconds, laid out as
 * struct mlx5_ib_clock_info (include/uapi/rdma/mlx5-abi.h) and published with
 * upstream's sign protocol (mlx5_core lib/clock.c mlx5_update_clock_info_page);
 * and the wall clock the timecounter starts from. The kernel crate has neither
 * get_zeroed_page() nor the barriers (smp_store_mb, smp_store_release are macros).
 */
#include <linux/gfp.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/timekeeping.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/mlx5-abi.h>
#include "mlx5rs_ffi.h"

/**
 * mlx5rs_clock_page_alloc() - a zeroed page for the clock info (NULL: no memory)
 */
void *mlx5rs_clock_page_alloc(void)
{
	BUILD_BUG_ON(sizeof(struct mlx5_ib_clock_info) > PAGE_SIZE);
	return (void *)get_zeroed_page(GFP_KERNEL);
}

/**
 * mlx5rs_clock_page_free() - drops the driver's reference to the page
 * @page: from mlx5rs_clock_page_alloc()
 *
 * A user mapping (vm_insert_page) holds its own reference: the page outlives it.
 */
void mlx5rs_clock_page_free(void *page)
{
	free_page((unsigned long)page);
}

/**
 * mlx5rs_clock_page_publish() - writes @v into the clock info page @page
 * @page: from mlx5rs_clock_page_alloc()
 * @v: the timecounter state and the cyclecounter
 *
 * As upstream's mlx5_update_clock_info_page: the reader (libmlx5
 * mlx5dv_get_clock_info) retries while @sign has MLX5_IB_CLOCK_INFO_KERNEL_UPDATING
 * set or changed under it. Callers serialize (one writer).
 */
void mlx5rs_clock_page_publish(void *page, const struct mlx5rs_clock_vals *v)
{
	struct mlx5_ib_clock_info *ci = page;
	u32 sign;

	BUILD_BUG_ON(sizeof(*v) != MLX5RS_CLOCK_VALS_SIZE);
	sign = smp_load_acquire(&ci->sign);
	smp_store_mb(ci->sign, sign | MLX5_IB_CLOCK_INFO_KERNEL_UPDATING);
	ci->cycles = v->cycles;
	ci->mult = v->mult;
	ci->nsec = v->nsec;
	ci->frac = v->frac;
	ci->shift = v->shift;
	ci->mask = v->mask;
	ci->overflow_period = v->overflow_period;
	smp_store_release(&ci->sign, sign + MLX5_IB_CLOCK_INFO_KERNEL_UPDATING * 2);
}

/**
 * mlx5rs_clock_real_ns() - ktime_get_real() in nanoseconds (the timecounter's start)
 */
u64 mlx5rs_clock_real_ns(void)
{
	return ktime_to_ns(ktime_get_real());
}

/**
 * mlx5rs_clock_hz() - HZ (jiffies per second)
 */
u64 mlx5rs_clock_hz(void)
{
	return HZ;
}
