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
 * User contexts (alloc_ucontext, mmap) and PDs are served: ib_uverbs creates the
 * uverbs device. The driver part of a verb (udata) is staged here in kernel buffers
 * (mlx5rs_ib_stage()), so the Rust side sees byte slices and never a user pointer,
 * and the response goes back through _ib_respond_udata() (truncated to what user
 * space asked for, the rest of its buffer zeroed).
 *
 * Ops the provider does not implement stay NULL: without the data-path ops
 * (post_send, poll_cq, create_qp, ...) the device is not a kverbs provider and the
 * core attaches no MAD/SA/CM client, the intended state until the provider
 * implements them.
 */
#include <linux/build_bug.h>
#include <linux/device.h>
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <net/net_namespace.h>
#include <rdma/ib_mad.h>
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
	return mlx5rs_ib_mmap_bar(ibuc, vma, map.bar_offset, map.write_combining, NULL);
}

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

static int mlx5rs_ib_query_port(struct ib_device *ibdev, u32 port, struct ib_port_attr *props)
{
	struct mlx5rs_ib_port_attr a = {};
	int err;

	err = mlx5rs_ib_rs_query_port(to_rsdev(ibdev)->rust, port, &a);
	if (err)
		return err;
	/* The Rust side produced only values of the enums below (ib/port/attr.rs). */
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
 * The MR ops (ffi/rdma/ib_mr.c) and mmap_free of the UAR objects (ffi/rdma/ib_uar.c) are
 * tables of their own, merged in by mlx5rs_ib_alloc().
 */
static const struct ib_device_ops mlx5rs_ib_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_MLX5,
	.uverbs_abi_ver = MLX5RS_IB_UVERBS_ABI_VERSION,
	.device_group = &mlx5rs_ib_attr_group,
	.alloc_pd = mlx5rs_ib_alloc_pd,
	.alloc_ucontext = mlx5rs_ib_alloc_ucontext,
	.dealloc_pd = mlx5rs_ib_dealloc_pd,
	.dealloc_ucontext = mlx5rs_ib_dealloc_ucontext,
	.disassociate_ucontext = mlx5rs_ib_disassociate_ucontext,
	.get_dev_fw_str = mlx5rs_ib_get_dev_fw_str,
	.get_link_layer = mlx5rs_ib_get_link_layer,
	.get_port_immutable = mlx5rs_ib_get_port_immutable,
	.mmap = mlx5rs_ib_mmap,
	.query_device = mlx5rs_ib_query_device,
	.query_gid = mlx5rs_ib_query_gid,
	.query_pkey = mlx5rs_ib_query_pkey,
	.query_port = mlx5rs_ib_query_port,
	/* QP verbs (ffi/rdma/ib_qp.c). */
	.create_qp = mlx5rs_ib_create_qp,
	.destroy_qp = mlx5rs_ib_destroy_qp,
	.modify_qp = mlx5rs_ib_modify_qp,
	.query_qp = mlx5rs_ib_query_qp,
	/* SRQ / XRC domain / AH (ffi/rdma/ib_srq.c). */
	.alloc_xrcd = mlx5rs_ib_alloc_xrcd,
	.create_ah = mlx5rs_ib_create_ah,
	.create_srq = mlx5rs_ib_create_srq,
	.create_user_ah = mlx5rs_ib_create_ah,
	.dealloc_xrcd = mlx5rs_ib_dealloc_xrcd,
	.destroy_ah = mlx5rs_ib_destroy_ah,
	.destroy_srq = mlx5rs_ib_destroy_srq,
	.modify_srq = mlx5rs_ib_modify_srq,
	.query_ah = mlx5rs_ib_query_ah,
	.query_srq = mlx5rs_ib_query_srq,

	/* CQ verbs (ffi/rdma/ib_cq.c). */
	.create_cq = mlx5rs_ib_create_cq,
	.create_user_cq = mlx5rs_ib_create_user_cq,
	.destroy_cq = mlx5rs_ib_destroy_cq,
	.modify_cq = mlx5rs_ib_modify_cq,
	.resize_user_cq = mlx5rs_ib_resize_user_cq,
	INIT_RDMA_OBJ_SIZE(ib_cq, mlx5rs_ib_cq, ibcq),

	INIT_RDMA_OBJ_SIZE(ib_pd, mlx5rs_ib_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, mlx5rs_ib_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_qp, mlx5rs_ib_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_ah, mlx5rs_ib_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_srq, mlx5rs_ib_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, mlx5rs_ib_xrcd, ibxrcd),
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
	ib_set_device_ops(&dev->ib, &mlx5rs_ib_ops);
	ib_set_device_ops(&dev->ib, &mlx5rs_ib_mr_ops);
#if IS_ENABLED(CONFIG_INFINIBAND_USER_ACCESS)
	/* UAR objects (ffi/rdma/ib_uar.c): a kernel without uverbs has no user contexts. */
	ib_set_device_ops(&dev->ib, &mlx5rs_ib_uar_ops);
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
/* And the port enums ib/port/attr.rs produces. */
static_assert(IB_PORT_ACTIVE == 4 && IB_PORT_DOWN == 1 && IB_PORT_ACTIVE_DEFER == 5);
static_assert(IB_MTU_256 == 1 && IB_MTU_4096 == 5);
static_assert(IB_WIDTH_1X == 1 && IB_WIDTH_2X == 16 && IB_WIDTH_12X == 8);
static_assert(IB_SPEED_SDR == 1 && IB_SPEED_EDR == 32 && IB_SPEED_XDR == 256);
