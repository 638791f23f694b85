// SPDX-License-Identifier: GPL-2.0
/*
 * The InfiniBand shim: the only code of mlx5-rs that touches struct ib_device.
 *
 * The kernel crate has no RDMA bindings (rdma/ib_verbs.h is not in its bindgen set),
 * and ib_alloc_device(), INIT_RDMA_OBJ_SIZE() and the ops tables need C anyway. The
 * driver's device object puts struct ib_device at offset 0 (what ib_alloc_device()
 * and rdma_device_to_drv_device() require) followed by an opaque pointer back to the
 * Rust provider and the strings sysfs shows. Every op is a trampoline into an
 * extern "C" Rust function that fills a plain structure of this shim's own
 * (mlx5rs_ffi.h); the trampoline copies it into the core's structure, so Rust never
 * writes a core structure.
 *
 * This file is the device: allocation, registration, events, sysfs, query_device,
 * the staging of a verb's driver data (udata) every family uses, and the one place
 * the families' ops tables are applied. Each verbs family has a file of its own
 * (ib_<family>.c: port, uctx, pd, ah, cq, qp, srq, mr, and uar for the UAR objects)
 * that owns its ops table mlx5rs_ib_<family>_ops, and a Rust side
 * ffi/rdma/ib_<family>.rs. The driver part of a verb (udata) is staged here in
 * kernel buffers (mlx5rs_ib_stage()), so the Rust side sees byte slices and never a
 * user pointer, and the response goes back through _ib_respond_udata() (truncated to
 * what user space asked for, the rest of its buffer zeroed).
 *
 * Ops the provider does not implement stay NULL. With the kernel data-path ops
 * (post_send, post_recv, poll_cq, req_notify_cq in ib_qp.c / ib_cq.c) every op the
 * core calls mandatory is set, so the device is a kverbs provider: the core attaches
 * its MAD, SA, CM and multicast clients, and the MAD layer sends and receives on
 * QP0/QP1 and hands local MADs to process_mad (ib_port.c).
 */
#include <linux/build_bug.h>
#include <linux/device.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include "ib_priv.h"

/*
 * Allocates a staging area for @udata (NULL: a kernel verb, nothing to stage) and
 * copies the request in. A request longer than the staging buffer has its bytes past
 * it checked as upstream's verb checks its trailing bytes: @tail_err when one is not
 * zero (-EOPNOTSUPP for ib_copy_validate_udata_in(), -EINVAL for create_qp's
 * ib_is_udata_cleared(), which reads at most 64 KiB), or 0 to ignore them
 * (alloc_ucontext reads its request's size and no more); the Rust side then sees
 * the staged prefix, which is all any mlx5 request structure holds.
 */
struct mlx5rs_ib_stage *mlx5rs_ib_stage_tail(struct ib_udata *udata, int tail_err, int *err)
{
	struct mlx5rs_ib_stage *st;
	size_t n;

	*err = 0;
	if (!udata)
		return NULL;
	if (tail_err && udata->inlen > MLX5RS_IB_UDATA_MAX &&
	    !ib_is_udata_cleared(udata, MLX5RS_IB_UDATA_MAX,
				 udata->inlen - MLX5RS_IB_UDATA_MAX)) {
		*err = tail_err;
		return NULL;
	}
	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st) {
		*err = -ENOMEM;
		return NULL;
	}
	n = min_t(size_t, udata->inlen, MLX5RS_IB_UDATA_MAX);
	if (ib_copy_from_udata(st->in, udata, n)) {
		kfree(st);
		*err = -EFAULT;
		return NULL;
	}
	st->u.in = st->in;
	st->u.inlen = n;
	st->u.out = st->out;
	st->u.outcap = sizeof(st->out);
	st->u.outlen = udata->outlen;
	st->u.resp_len = 0;
	return st;
}

/* mlx5rs_ib_stage_tail() with the trailing-byte errno of ib_copy_validate_udata_in(). */
struct mlx5rs_ib_stage *mlx5rs_ib_stage(struct ib_udata *udata, int *err)
{
	return mlx5rs_ib_stage_tail(udata, -EOPNOTSUPP, err);
}

static int mlx5rs_ib_query_device(struct ib_device *ibdev, struct ib_device_attr *props,
				  struct ib_udata *uhw)
{
	struct mlx5rs_ib_device_attr a = {};
	struct mlx5rs_ib_stage *st = NULL;
	int err;

	BUILD_BUG_ON(sizeof(struct mlx5rs_ib_udata) != MLX5RS_IB_UDATA_SIZE);
	if (uhw && (uhw->inlen || uhw->outlen)) {
		st = mlx5rs_ib_stage(uhw, &err);
		if (!st)
			return err;
		/* The driver response (struct mlx5_ib_query_device_resp). */
		err = mlx5rs_ib_rs_query_device_uhw(to_rsdev(ibdev)->rust, &st->u);
		if (err)
			goto out;
	}
	err = mlx5rs_ib_rs_query_device(to_rsdev(ibdev)->rust, &a);
	if (err)
		goto out;
	props->fw_ver = a.fw_ver;
	props->sys_image_guid = cpu_to_be64(a.sys_image_guid);
	props->max_mr_size = a.max_mr_size;
	props->page_size_cap = a.page_size_cap;
	props->device_cap_flags = a.device_cap_flags;
	props->kernel_cap_flags = a.kernel_cap_flags;
	props->timestamp_mask = a.timestamp_mask;
	props->hca_core_clock = a.hca_core_clock;
	props->vendor_id = a.vendor_id;
	props->vendor_part_id = a.vendor_part_id;
	props->hw_ver = a.hw_ver;
	props->max_qp = a.max_qp;
	props->max_qp_wr = a.max_qp_wr;
	props->max_send_sge = a.max_send_sge;
	props->max_recv_sge = a.max_recv_sge;
	props->max_sge_rd = a.max_sge_rd;
	props->max_cq = a.max_cq;
	props->max_cqe = a.max_cqe;
	props->max_mr = a.max_mr;
	props->max_pd = a.max_pd;
	props->max_qp_rd_atom = a.max_qp_rd_atom;
	props->max_res_rd_atom = a.max_res_rd_atom;
	props->max_qp_init_rd_atom = a.max_qp_init_rd_atom;
	props->atomic_cap = a.atomic_cap ? IB_ATOMIC_HCA : IB_ATOMIC_NONE;
	props->masked_atomic_cap = IB_ATOMIC_NONE;
	props->max_mw = a.max_mw;
	props->max_mcast_grp = a.max_mcast_grp;
	props->max_mcast_qp_attach = a.max_mcast_qp_attach;
	props->max_total_mcast_qp_attach = a.max_total_mcast_qp_attach;
	props->max_ah = a.max_ah;
	props->max_srq = a.max_srq;
	props->max_srq_wr = a.max_srq_wr;
	props->max_srq_sge = a.max_srq_sge;
	props->max_fast_reg_page_list_len = a.max_fast_reg_page_list_len;
	props->max_pi_fast_reg_page_list_len = a.max_pi_fast_reg_page_list_len;
	props->max_sgl_rd = a.max_sgl_rd;
	props->max_pkeys = a.max_pkeys;
	props->local_ca_ack_delay = a.local_ca_ack_delay;
	props->cq_caps.max_cq_moderation_count = a.max_cq_moderation_count;
	props->cq_caps.max_cq_moderation_period = a.max_cq_moderation_period;
	/* Upstream copies response_length bytes, which the buffer holds. */
	if (st && st->u.resp_len)
		err = ib_copy_to_udata(uhw, st->out,
				       min3(st->u.resp_len, uhw->outlen, sizeof(st->out)));
out:
	kfree(st);
	return err;
}

static void mlx5rs_ib_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	strscpy(str, to_rsdev(ibdev)->fw_ver, IB_FW_VERSION_NAME_MAX);
}

static ssize_t board_id_show(struct device *device, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", dev_to_rsdev(device)->board_id);
}
static DEVICE_ATTR_RO(board_id);

static ssize_t hca_type_show(struct device *device, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", dev_to_rsdev(device)->hca_type);
}
static DEVICE_ATTR_RO(hca_type);

static ssize_t hw_rev_show(struct device *device, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%x\n", dev_to_rsdev(device)->hw_rev);
}
static DEVICE_ATTR_RO(hw_rev);

static struct attribute *mlx5rs_ib_attrs[] = {
	&dev_attr_hw_rev.attr,
	&dev_attr_hca_type.attr,
	&dev_attr_board_id.attr,
	NULL,
};

static const struct attribute_group mlx5rs_ib_attr_group = {
	.attrs = mlx5rs_ib_attrs,
};

/* The device family's ops and what the device is (the other families have their files). */
static const struct ib_device_ops mlx5rs_ib_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_MLX5,
	.uverbs_abi_ver = MLX5RS_IB_UVERBS_ABI_VERSION,
	.device_group = &mlx5rs_ib_attr_group,
	.get_dev_fw_str = mlx5rs_ib_get_dev_fw_str,
	.query_device = mlx5rs_ib_query_device,
};

/*
 * Every verbs family's ops table (ffi/rdma/ib_<family>.c, each with the
 * INIT_RDMA_OBJ_SIZE of its objects), applied in this one place as upstream mlx5_ib
 * applies its per-feature tables; ib_set_device_ops() takes every non-NULL op of a
 * table. The UAR objects are uverbs objects: a kernel without uverbs has no user
 * contexts, so neither them nor their mmap_free.
 */
static const struct ib_device_ops *const mlx5rs_ib_family_ops[] = {
	&mlx5rs_ib_dev_ops,
	&mlx5rs_ib_port_ops,
	&mlx5rs_ib_uctx_ops,
	&mlx5rs_ib_pd_ops,
	&mlx5rs_ib_ah_ops,
	&mlx5rs_ib_cq_ops,
	&mlx5rs_ib_qp_ops,
	&mlx5rs_ib_srq_ops,
	&mlx5rs_ib_mr_ops,
	&mlx5rs_ib_mw_ops,
#if IS_ENABLED(CONFIG_INFINIBAND_USER_ACCESS)
	&mlx5rs_ib_uar_ops,
#endif
};

/**
 * mlx5rs_ib_alloc() - allocate the IB device of one function, not yet registered
 * @rust: the Rust provider the ops call into; must stay valid until
 *        mlx5rs_ib_unregister() returned
 * @init: what the device shows (node type CA, ports, vectors, GUID, strings)
 *
 * Return: the device, or NULL when out of memory.
 */
struct mlx5rs_ib_dev *mlx5rs_ib_alloc(const void *rust, const struct mlx5rs_ib_init *init)
{
	struct mlx5rs_ib_dev *dev;
	size_t i;

	BUILD_BUG_ON(offsetof(struct mlx5rs_ib_dev, ib) != 0);
	BUILD_BUG_ON(sizeof(struct mlx5rs_ib_init) != MLX5RS_IB_INIT_SIZE);
	BUILD_BUG_ON(sizeof(struct mlx5rs_ib_device_attr) != MLX5RS_IB_DEVICE_ATTR_SIZE);
	BUILD_BUG_ON(sizeof(struct mlx5rs_ib_port_attr) != MLX5RS_IB_PORT_ATTR_SIZE);
	BUILD_BUG_ON(sizeof(init->node_desc) != IB_DEVICE_NODE_DESC_MAX);
	BUILD_BUG_ON(sizeof(init->fw_ver) > IB_FW_VERSION_NAME_MAX);

	dev = ib_alloc_device(mlx5rs_ib_dev, ib);
	if (!dev)
		return NULL;
	dev->rust = rust;
	dev->clock_info = init->clock_info;
	mutex_init(&dev->devr.lock);
	mutex_init(&dev->umr.lock);
	dev->hw_rev = init->hw_rev;
	strscpy(dev->fw_ver, init->fw_ver, sizeof(dev->fw_ver));
	strscpy(dev->board_id, init->board_id, sizeof(dev->board_id));
	strscpy(dev->hca_type, init->hca_type, sizeof(dev->hca_type));
	/* node_desc is not NUL-terminated when all 64 bytes are used (IBA NodeDescription). */
	memcpy(dev->ib.node_desc, init->node_desc, sizeof(dev->ib.node_desc));
	dev->ib.node_type = RDMA_NODE_IB_CA;
	dev->ib.node_guid = cpu_to_be64(init->node_guid);
	dev->ib.phys_port_cnt = init->phys_port_cnt;
	dev->ib.num_comp_vectors = init->num_comp_vectors;
	dev->ib.local_dma_lkey = init->local_dma_lkey;
	for (i = 0; i < ARRAY_SIZE(mlx5rs_ib_family_ops); i++)
		ib_set_device_ops(&dev->ib, mlx5rs_ib_family_ops[i]);
#if IS_ENABLED(CONFIG_INFINIBAND_USER_ACCESS)
	dev->ib.driver_def = mlx5rs_ib_uapi_defs;
#endif
	return dev;
}

/**
 * mlx5rs_ib_register() - register @dev as "mlx5_%d" with the RDMA core
 * @dev: from mlx5rs_ib_alloc(), not registered
 * @dma_device: the PCI function's struct device (sysfs parent, DMA device)
 *
 * The core queries the device and every port before this returns.
 *
 * Return: 0, or the core's error (the device stays allocated).
 */
int mlx5rs_ib_register(struct mlx5rs_ib_dev *dev, struct device *dma_device)
{
	int err;

	dev->ib.dev.parent = dma_device;
	/* The UMR QP's PD first, as upstream's UMR stage before its IB_REG stage. */
	mlx5rs_ib_umr_init(dev);
	err = ib_register_device(&dev->ib, "mlx5_%d", dma_device);
	if (err)
		mlx5rs_ib_umr_cleanup(dev);
	return err;
}

/**
 * mlx5rs_ib_unregister() - undo mlx5rs_ib_register()
 * @dev: a registered device
 *
 * Every client is removed, then the device resources of XRC QPs, the MR cache and
 * the UMR QP are destroyed (through the ops); no op is called any more when this
 * returns.
 */
void mlx5rs_ib_unregister(struct mlx5rs_ib_dev *dev)
{
	ib_unregister_device(&dev->ib);
	/* As upstream's mlx5_ib_dev_res_cleanup() after its IB_REG stage. */
	mlx5rs_ib_devres_cleanup(dev);
	/*
	 * Every MR is gone: the cache's free mkeys are destroyed, then the UMR QP and
	 * its PD (upstream: mlx5r_frmr_pools_cleanup(), mlx5r_umr_resource_cleanup(),
	 * mlx5r_umr_cleanup()).
	 */
	mlx5rs_ib_rs_mr_cache_flush(dev->rust);
	mlx5rs_ib_umr_cleanup(dev);
}

/**
 * mlx5rs_ib_dealloc() - free a device from mlx5rs_ib_alloc()
 * @dev: not registered (never, or unregistered)
 *
 * The memory goes when the last reference to the device is dropped.
 */
void mlx5rs_ib_dealloc(struct mlx5rs_ib_dev *dev)
{
	ib_dealloc_device(&dev->ib);
}

/**
 * mlx5rs_ib_name() - the name the core gave @dev ("mlx5_0", ...)
 * @dev: a registered device
 */
const char *mlx5rs_ib_name(struct mlx5rs_ib_dev *dev)
{
	return dev_name(&dev->ib.dev);
}

/**
 * mlx5rs_ib_dispatch_event() - tell the core's clients about an async event
 * @dev: a registered device
 * @event: an enum ib_event_type value
 * @port: port number for port events (1-based), 1 for device events
 *
 * ib_dispatch_event() only queues work (GFP_ATOMIC), so this may run from an IRQ
 * thread.
 */
void mlx5rs_ib_dispatch_event(struct mlx5rs_ib_dev *dev, u32 event, u32 port)
{
	struct ib_event ev = {};

	ev.device = &dev->ib;
	ev.event = event;
	ev.element.port_num = port;
	ib_dispatch_event(&ev);
}

/* The event numbers ffi/rdma/ib.rs passes, checked against the core's enum. */
static_assert(IB_EVENT_QP_FATAL == MLX5RS_IB_EVENT_QP_FATAL);
static_assert(IB_EVENT_QP_REQ_ERR == MLX5RS_IB_EVENT_QP_REQ_ERR);
static_assert(IB_EVENT_QP_ACCESS_ERR == MLX5RS_IB_EVENT_QP_ACCESS_ERR);
static_assert(IB_EVENT_COMM_EST == MLX5RS_IB_EVENT_COMM_EST);
static_assert(IB_EVENT_SQ_DRAINED == MLX5RS_IB_EVENT_SQ_DRAINED);
static_assert(IB_EVENT_PATH_MIG == MLX5RS_IB_EVENT_PATH_MIG);
static_assert(IB_EVENT_PATH_MIG_ERR == MLX5RS_IB_EVENT_PATH_MIG_ERR);
static_assert(IB_EVENT_SRQ_ERR == MLX5RS_IB_EVENT_SRQ_ERR);
static_assert(IB_EVENT_SRQ_LIMIT_REACHED == MLX5RS_IB_EVENT_SRQ_LIMIT_REACHED);
static_assert(IB_EVENT_QP_LAST_WQE_REACHED == MLX5RS_IB_EVENT_QP_LAST_WQE_REACHED);
static_assert(IB_EVENT_DEVICE_FATAL == MLX5RS_IB_EVENT_DEVICE_FATAL);
static_assert(IB_EVENT_PORT_ACTIVE == MLX5RS_IB_EVENT_PORT_ACTIVE);
static_assert(IB_EVENT_PORT_ERR == MLX5RS_IB_EVENT_PORT_ERR);
static_assert(IB_EVENT_LID_CHANGE == MLX5RS_IB_EVENT_LID_CHANGE);
static_assert(IB_EVENT_PKEY_CHANGE == MLX5RS_IB_EVENT_PKEY_CHANGE);
static_assert(IB_EVENT_GID_CHANGE == MLX5RS_IB_EVENT_GID_CHANGE);
static_assert(IB_EVENT_CLIENT_REREGISTER == MLX5RS_IB_EVENT_CLIENT_REREGISTER);
static_assert(IB_EVENT_DEVICE_SPEED_CHANGE == MLX5RS_IB_EVENT_DEVICE_SPEED_CHANGE);
