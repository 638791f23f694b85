/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the InfiniBand shim's files share: the driver's IB device and verbs-object
 * structures (each embeds the core's object first, INIT_RDMA_OBJ_SIZE), udata
 * staging, and the ops each file contributes to the one ops table in ffi/ib.c.
 * One file per verbs family (ffi/ib_<family>.c), this header the only link.
 */
#ifndef MLX5RS_IB_PRIV_H
#define MLX5RS_IB_PRIV_H

#include <linux/device.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include "mlx5rs_ffi.h"

/**
 * struct mlx5rs_ib_dev - the driver's IB device
 * @ib: the core's device; at offset 0 (ib_alloc_device(), rdma_device_to_drv_device())
 * @rust: the Rust provider the ops call into (ffi/ib.rs, valid until unregistered)
 * @fw_ver: get_dev_fw_str() text
 * @board_id: sysfs board_id
 * @hca_type: sysfs hca_type
 * @hw_rev: sysfs hw_rev
 */
struct mlx5rs_ib_dev {
	struct ib_device ib;
	const void *rust;
	char fw_ver[IB_FW_VERSION_NAME_MAX];
	char board_id[MLX5RS_IB_STR_LEN];
	char hca_type[MLX5RS_IB_STR_LEN];
	u32 hw_rev;
};

/**
 * struct mlx5rs_ib_ucontext - a user context
 * @ibuc: the core's context (INIT_RDMA_OBJ_SIZE)
 * @rust: the Rust context state (ffi/ib.rs), freed by dealloc_ucontext
 */
struct mlx5rs_ib_ucontext {
	struct ib_ucontext ibuc;
	void *rust;
};

/**
 * struct mlx5rs_ib_pd - a protection domain
 * @ibpd: the core's PD (INIT_RDMA_OBJ_SIZE)
 * @pdn: the device's PD number (ALLOC_PD)
 */
struct mlx5rs_ib_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

/**
 * struct mlx5rs_ib_stage - a verb's udata staged in kernel memory
 * @u: what the Rust side gets (pointers into @in and @out)
 * @in: the first bytes of the request
 * @out: the response
 */
struct mlx5rs_ib_stage {
	struct mlx5rs_ib_udata u;
	u8 in[MLX5RS_IB_UDATA_MAX];
	u8 out[MLX5RS_IB_UDATA_MAX];
};

static inline struct mlx5rs_ib_dev *to_rsdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mlx5rs_ib_dev, ib);
}

static inline struct mlx5rs_ib_dev *dev_to_rsdev(struct device *device)
{
	return rdma_device_to_drv_device(device, struct mlx5rs_ib_dev, ib);
}

struct mlx5rs_ib_stage *mlx5rs_ib_stage(struct ib_udata *udata, int *err);

#endif /* MLX5RS_IB_PRIV_H */
