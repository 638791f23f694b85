/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the InfiniBand shim's files share: the driver's IB device and verbs-object
 * structures (each embeds the core's object first, INIT_RDMA_OBJ_SIZE), udata
 * staging, the address-vector copy the AH and QP verbs share, and each family's ops
 * table, which ffi/rdma/ib.c applies. One file per
 * verbs family (ffi/rdma/ib_<family>.c, owning mlx5rs_ib_<family>_ops with the
 * INIT_RDMA_OBJ_SIZE of its objects; its ops are static), this header the only link.
 */
#ifndef MLX5RS_IB_PRIV_H
#define MLX5RS_IB_PRIV_H

#include <linux/device.h>
#include <linux/mutex.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include "mlx5rs_ffi.h"

/**
 * struct mlx5rs_ib_devres - the device's own verbs objects that XRC QPs name, as
 * upstream's struct mlx5_ib_resources (ffi/rdma/ib_devres.c)
 * @lock: serializes their creation
 * @p0: a PD (an XRC target's context names one)
 * @c0: a one-entry CQ (the receive CQ of XRC QPs, the CQ of @s0)
 * @x0: the XRC domain of @s0 (upstream xrcdn0)
 * @x1: the XRC domain of XRC initiators (upstream xrcdn1)
 * @s0: an XRC SRQ (the SRQ XRC QPs' contexts name)
 * @s1: a basic SRQ (the SRQ a kernel XRC initiator's context names, upstream
 *	create_kernel_qp())
 *
 * Created on the first XRC create_qp, all or none, and destroyed after the device
 * is unregistered (every QP naming them is gone then).
 */
struct mlx5rs_ib_devres {
	struct mutex lock;
	struct ib_pd *p0;
	struct ib_cq *c0;
	struct ib_xrcd *x0;
	struct ib_xrcd *x1;
	struct ib_srq *s0;
	struct ib_srq *s1;
};

/**
 * struct mlx5rs_ib_umr - the provider's UMR QP, as upstream's struct umr_common
 * (ffi/rdma/ib_umr.c)
 * @lock: serializes creation, posting and teardown (one UMR in flight)
 * @pd: its PD (upstream umrc.pd): the MR cache's free mkeys are in it, and its
 *      local_dma_lkey reads translation tables
 * @cq: its CQ, polled directly
 * @qp: an RC QP in RTS, connected to itself
 * @broken: a UMR did not complete in time or the resources could not be made: no
 *          more UMR (the MR verbs use commands)
 */
struct mlx5rs_ib_umr {
	struct mutex lock;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	bool broken;
};

/**
 * struct mlx5rs_ib_dev - the driver's IB device
 * @ib: the core's device; at offset 0 (ib_alloc_device(), rdma_device_to_drv_device())
 * @rust: the Rust provider the ops call into (ffi/rdma/ib.rs, valid until unregistered)
 * @fw_ver: get_dev_fw_str() text
 * @board_id: sysfs board_id
 * @hca_type: sysfs hca_type
 * @hw_rev: sysfs hw_rev
 * @devr: the XRC QPs' device resources
 * @clock_info: the core's clock info page (NULL: none), which outlives the device
 * @umr: the UMR QP of the MR cache
 */
struct mlx5rs_ib_dev {
	struct ib_device ib;
	const void *rust;
	void *clock_info;
	char fw_ver[IB_FW_VERSION_NAME_MAX];
	char board_id[MLX5RS_IB_STR_LEN];
	char hca_type[MLX5RS_IB_STR_LEN];
	u32 hw_rev;
	struct mlx5rs_ib_devres devr;
	struct mlx5rs_ib_umr umr;
};

int mlx5rs_ib_devres_get(struct mlx5rs_ib_dev *dev, struct mlx5rs_ib_qp_init *init);
void mlx5rs_ib_devres_cleanup(struct mlx5rs_ib_dev *dev);
void mlx5rs_ib_umr_init(struct mlx5rs_ib_dev *dev);
void mlx5rs_ib_umr_cleanup(struct mlx5rs_ib_dev *dev);
bool mlx5rs_ib_is_umr_qp(const struct ib_qp *ibqp);
/* The provider's private send opcode of a UMR work request (ffi/rdma/ib_umr.c). */
#define MLX5RS_IB_WR_UMR IB_WR_RESERVED1
void mlx5rs_ib_umr_wr_to_rs(const struct ib_send_wr *wr, struct mlx5rs_ib_send_wr *o);

/**
 * struct mlx5rs_ib_ucontext - a user context
 * @ibuc: the core's context (INIT_RDMA_OBJ_SIZE)
 * @rust: the Rust context state (ffi/rdma/ib_uctx.rs), freed by dealloc_ucontext
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

/*
 * The verbs objects. Each family's file (ffi/rdma/ib_<family>.c) owns its structure and
 * may add fields after the ones below; the first fields are fixed because other
 * families read them (a QP reads its CQs' and SRQ's numbers, an XRC SRQ its XRCD's).
 * The core allocates every one of them (INIT_RDMA_OBJ_SIZE) except the MR, which
 * the driver allocates and returns.
 */

/**
 * struct mlx5rs_ib_cq - a completion queue
 * @ibcq: the core's CQ
 * @rust: the Rust CQ state, freed by destroy_cq
 * @cqn: the device's CQ number (CREATE_CQ)
 */
struct mlx5rs_ib_cq {
	struct ib_cq ibcq;
	void *rust;
	u32 cqn;
};

/**
 * struct mlx5rs_ib_qp - a queue pair
 * @ibqp: the core's QP
 * @rust: the Rust QP state, freed by destroy_qp
 * @qpn: the device's QP number (CREATE_QP), what ibqp.qp_num shows
 */
struct mlx5rs_ib_qp {
	struct ib_qp ibqp;
	void *rust;
	u32 qpn;
};

/**
 * struct mlx5rs_ib_srq - a shared receive queue (basic or XRC)
 * @ibsrq: the core's SRQ
 * @rust: the Rust SRQ state, freed by destroy_srq
 * @srqn: the device's SRQ number (CREATE_SRQ / CREATE_XRC_SRQ)
 */
struct mlx5rs_ib_srq {
	struct ib_srq ibsrq;
	void *rust;
	u32 srqn;
};

/**
 * struct mlx5rs_ib_xrcd - an XRC domain
 * @ibxrcd: the core's XRCD
 * @xrcdn: the device's XRCD number (ALLOC_XRCD)
 */
struct mlx5rs_ib_xrcd {
	struct ib_xrcd ibxrcd;
	u32 xrcdn;
};

/**
 * struct mlx5rs_ib_mr - a memory region (allocated by the driver, not the core)
 * @ibmr: the core's MR
 * @rust: the Rust MR state (the mkey, the pinned memory), freed by dereg_mr
 * @descs_alloc: a fast-registration MR's (alloc_mr) translation list as allocated
 * @descs: the list (struct mlx5_mtt entries, big-endian), 2048-byte aligned
 * @desc_map: its DMA address (mapped to the device)
 * @max_descs: entries it holds
 * @ndescs: entries map_mr_sg wrote
 */
struct mlx5rs_ib_mr {
	struct ib_mr ibmr;
	void *rust;
	void *descs_alloc;
	__be64 *descs;
	dma_addr_t desc_map;
	u32 max_descs;
	u32 ndescs;
};

/**
 * struct mlx5rs_ib_mw - a memory window (allocated by the core)
 * @ibmw: the core's window
 * @rust: the Rust window state (its mkey), freed by dealloc_mw
 */
struct mlx5rs_ib_mw {
	struct ib_mw ibmw;
	void *rust;
};

struct mlx5rs_ib_stage *mlx5rs_ib_stage_tail(struct ib_udata *udata, int tail_err, int *err);
struct mlx5rs_ib_stage *mlx5rs_ib_stage(struct ib_udata *udata, int *err);

/**
 * mlx5rs_ib_names_buffer() - whether a create verb's request names its ring through
 * one of the core's optional buffer attributes
 * @udata: the verb's udata (NULL for a kernel consumer)
 * @ids: the attributes (UVERBS_ATTR_CREATE_CQ_BUFFER_*, UVERBS_ATTR_CREATE_*_BUF_UMEM)
 * @n: how many
 *
 * The provider pins a ring at the address of its driver request only (upstream reads
 * these attributes through ib_umem_get_*_or_va()): a request with one is refused
 * (EOPNOTSUPP) before anything is pinned, not served from the udata address. The
 * write path's bundle has no attribute present.
 */
static inline bool mlx5rs_ib_names_buffer(struct ib_udata *udata, const u16 *ids,
					  size_t n)
{
	const struct uverbs_attr_bundle *b;
	size_t i;

	if (!udata)
		return false;
	b = rdma_udata_to_uverbs_attr_bundle(udata);
	for (i = 0; i < n; i++)
		if (uverbs_attr_is_valid(b, ids[i]))
			return true;
	return false;
}


/**
 * struct mlx5rs_ib_uar_entry - the mmap entry of a UAR object
 * @rdma: the core's entry (its key is the object's mmap offset)
 * @obj: the UAR, its page in BAR 0 and caching (from Rust)
 *
 * Freed by mmap_free when the object is destroyed and its last mapping is gone; the
 * UAR is deallocated then.
 */
struct mlx5rs_ib_uar_entry {
	struct rdma_user_mmap_entry rdma;
	struct mlx5rs_ib_uar_obj obj;
};

/**
 * struct mlx5rs_ib_ah - an address handle
 * @ibah: the core's AH
 * @av: the address vector (struct mlx5_av, built by ib/ah/av.rs), what a UD send
 *      copies into its datagram segment
 */
struct mlx5rs_ib_ah {
	struct ib_ah ibah;
	u8 av[MLX5RS_IB_AV_SIZE];
};

/*
 * The one copy of a core struct rdma_ah_attr into the plain struct mlx5rs_ib_ah_attr and
 * back (ffi/rdma/ib_ah.c), for the address handles and the QP paths (ffi/rdma/ib_qp.c).
 * The way out takes the address type from the caller (the handle's, or the port's).
 */
void mlx5rs_ib_ah_attr_to_rs(const struct rdma_ah_attr *ah, struct mlx5rs_ib_ah_attr *o);
void mlx5rs_ib_ah_attr_from_rs(const struct mlx5rs_ib_ah_attr *a, enum rdma_ah_attr_type type,
			       struct rdma_ah_attr *ah);

/* UAR objects (ffi/rdma/ib_uar.c): the driver's uverbs objects. */
extern const struct uapi_definition mlx5rs_ib_uapi_defs[];

/*
 * The ops table of each verbs family, in its file ffi/rdma/ib_<family>.c, applied
 * by mlx5rs_ib_alloc() (ffi/rdma/ib.c).
 */
extern const struct ib_device_ops mlx5rs_ib_port_ops;
extern const struct ib_device_ops mlx5rs_ib_uctx_ops;
extern const struct ib_device_ops mlx5rs_ib_pd_ops;
extern const struct ib_device_ops mlx5rs_ib_ah_ops;
extern const struct ib_device_ops mlx5rs_ib_cq_ops;
extern const struct ib_device_ops mlx5rs_ib_qp_ops;
extern const struct ib_device_ops mlx5rs_ib_srq_ops;
extern const struct ib_device_ops mlx5rs_ib_mr_ops;
extern const struct ib_device_ops mlx5rs_ib_mw_ops;
/* mmap_free of the UAR objects' mmap entries. */
extern const struct ib_device_ops mlx5rs_ib_uar_ops;

#endif /* MLX5RS_IB_PRIV_H */
