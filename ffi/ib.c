// SPDX-License-Identifier: GPL-2.0
/*
 * The InfiniBand shim: the only code of mlx5-rs that touches struct ib_device.
 *
 * The kernel crate has no RDMA bindings (rdma/ib_verbs.h is not in its bindgen set),
 * and ib_alloc_device(), INIT_RDMA_OBJ_SIZE() and the ops table need C anyway. The
 * driver's device object puts struct ib_device at offset 0 (what ib_alloc_device()
 * and rdma_device_to_drv_device() require) followed by an opaque pointer back to the
 * Rust provider and the strings sysfs shows. Every op is a trampoline into an
 * extern "C" Rust function that fills a plain structure of this shim's own
 * (mlx5rs_ffi.h); the trampoline copies it into the core's structure, so Rust never
 * writes a core structure.
 *
 * Ops the provider does not implement stay NULL: without the data-path ops
 * (post_send, poll_cq, create_qp, ...) the device is not a kverbs provider and the
 * core attaches no MAD/SA/CM client, and without alloc_ucontext ib_uverbs creates no
 * uverbs device. Both are the intended state until the provider implements them.
 */
#include <linux/build_bug.h>
#include <linux/device.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <net/net_namespace.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>
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

static struct mlx5rs_ib_dev *to_rsdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct mlx5rs_ib_dev, ib);
}

static struct mlx5rs_ib_dev *dev_to_rsdev(struct device *device)
{
	return rdma_device_to_drv_device(device, struct mlx5rs_ib_dev, ib);
}

static int mlx5rs_ib_query_device(struct ib_device *ibdev, struct ib_device_attr *props,
				  struct ib_udata *uhw)
{
	struct mlx5rs_ib_device_attr a = {};
	int err;

	/* No driver-specific request or response is defined yet. */
	if (uhw && uhw->inlen)
		return -EINVAL;
	err = mlx5rs_ib_rs_query_device(to_rsdev(ibdev)->rust, &a);
	if (err)
		return err;
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
	return 0;
}

static int mlx5rs_ib_query_port(struct ib_device *ibdev, u32 port, struct ib_port_attr *props)
{
	struct mlx5rs_ib_port_attr a = {};
	int err;

	err = mlx5rs_ib_rs_query_port(to_rsdev(ibdev)->rust, port, &a);
	if (err)
		return err;
	/* The Rust side produced only values of the enums below (ib/port.rs). */
	props->state = a.state;
	props->max_mtu = a.max_mtu;
	props->active_mtu = a.active_mtu;
	props->gid_tbl_len = a.gid_tbl_len;
	props->port_cap_flags = a.port_cap_flags;
	props->max_msg_sz = a.max_msg_sz;
	props->bad_pkey_cntr = a.bad_pkey_cntr;
	props->qkey_viol_cntr = a.qkey_viol_cntr;
	props->pkey_tbl_len = a.pkey_tbl_len;
	props->sm_lid = a.sm_lid;
	props->lid = a.lid;
	props->lmc = a.lmc;
	props->max_vl_num = a.max_vl_num;
	props->sm_sl = a.sm_sl;
	props->subnet_timeout = a.subnet_timeout;
	props->init_type_reply = a.init_type_reply;
	props->active_width = a.active_width;
	props->active_speed = a.active_speed;
	props->phys_state = a.phys_state;
	props->port_cap_flags2 = a.port_cap_flags2;
	return 0;
}

static int mlx5rs_ib_get_port_immutable(struct ib_device *ibdev, u32 port,
					struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr;
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_IB;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer mlx5rs_ib_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_INFINIBAND;
}

static int mlx5rs_ib_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	return mlx5rs_ib_rs_query_pkey(to_rsdev(ibdev)->rust, port, index, pkey);
}

static int mlx5rs_ib_query_gid(struct ib_device *ibdev, u32 port, int index, union ib_gid *gid)
{
	u8 raw[16] = {};
	int err;

	BUILD_BUG_ON(sizeof(gid->raw) != sizeof(raw));
	if (index < 0)
		return -EINVAL;
	err = mlx5rs_ib_rs_query_gid(to_rsdev(ibdev)->rust, port, index, raw);
	if (err)
		return err;
	memcpy(gid->raw, raw, sizeof(raw));
	return 0;
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

/*
 * Room for later ops: alloc_ucontext/dealloc_ucontext/mmap/mmap_free (with
 * INIT_RDMA_OBJ_SIZE(ib_ucontext, ...)), then PD, CQ, QP, MR.
 */
static const struct ib_device_ops mlx5rs_ib_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_MLX5,
	.uverbs_abi_ver = MLX5RS_IB_UVERBS_ABI_VERSION,
	.device_group = &mlx5rs_ib_attr_group,
	.get_dev_fw_str = mlx5rs_ib_get_dev_fw_str,
	.get_link_layer = mlx5rs_ib_get_link_layer,
	.get_port_immutable = mlx5rs_ib_get_port_immutable,
	.query_device = mlx5rs_ib_query_device,
	.query_gid = mlx5rs_ib_query_gid,
	.query_pkey = mlx5rs_ib_query_pkey,
	.query_port = mlx5rs_ib_query_port,
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
	dev->ib.uverbs_cmd_mask = 0;
	ib_set_device_ops(&dev->ib, &mlx5rs_ib_ops);
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
	dev->ib.dev.parent = dma_device;
	return ib_register_device(&dev->ib, "mlx5_%d", dma_device);
}

/**
 * mlx5rs_ib_unregister() - undo mlx5rs_ib_register()
 * @dev: a registered device
 *
 * Every client is removed and no op is called any more when this returns.
 */
void mlx5rs_ib_unregister(struct mlx5rs_ib_dev *dev)
{
	ib_unregister_device(&dev->ib);
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

/* The event numbers ffi/ib.rs passes, checked against the core's enum. */
static_assert(IB_EVENT_DEVICE_FATAL == MLX5RS_IB_EVENT_DEVICE_FATAL);
static_assert(IB_EVENT_PORT_ACTIVE == MLX5RS_IB_EVENT_PORT_ACTIVE);
static_assert(IB_EVENT_PORT_ERR == MLX5RS_IB_EVENT_PORT_ERR);
static_assert(IB_EVENT_LID_CHANGE == MLX5RS_IB_EVENT_LID_CHANGE);
static_assert(IB_EVENT_PKEY_CHANGE == MLX5RS_IB_EVENT_PKEY_CHANGE);
static_assert(IB_EVENT_GID_CHANGE == MLX5RS_IB_EVENT_GID_CHANGE);
static_assert(IB_EVENT_CLIENT_REREGISTER == MLX5RS_IB_EVENT_CLIENT_REREGISTER);
static_assert(IB_EVENT_DEVICE_SPEED_CHANGE == MLX5RS_IB_EVENT_DEVICE_SPEED_CHANGE);
/* And the port enums ib/port.rs produces. */
static_assert(IB_PORT_ACTIVE == 4 && IB_PORT_DOWN == 1 && IB_PORT_ACTIVE_DEFER == 5);
static_assert(IB_MTU_256 == 1 && IB_MTU_4096 == 5);
static_assert(IB_WIDTH_1X == 1 && IB_WIDTH_2X == 16 && IB_WIDTH_12X == 8);
static_assert(IB_SPEED_SDR == 1 && IB_SPEED_EDR == 32 && IB_SPEED_XDR == 256);
