/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C shim of mlx5-rs: prototypes of the small functions the Rust crate calls for
 * what the kernel crate does not wrap. Each is documented where it is defined.
 */
#ifndef MLX5RS_FFI_H
#define MLX5RS_FFI_H

#include <linux/types.h>

struct pci_dev;

void mlx5rs_pci_disable(struct pci_dev *pdev);
void mlx5rs_pci_clear_master(struct pci_dev *pdev);
struct device;
int mlx5rs_device_trylock(struct device *dev);
void mlx5rs_device_unlock(struct device *dev);
int mlx5rs_pci_vsc_cap(struct pci_dev *pdev);
int mlx5rs_pci_cfg_read(struct pci_dev *pdev, int off, u32 *val);
int mlx5rs_pci_cfg_write(struct pci_dev *pdev, int off, u32 val);
int mlx5rs_pci_has_bridge(struct pci_dev *pdev);
int mlx5rs_pci_reset_bus(struct pci_dev *pdev);

unsigned int mlx5rs_num_online_cpus(void);

/* The clock info page (ffi/core/clock.c): what mlx5rs_clock_page_publish() writes. */
struct mlx5rs_clock_vals {
	__u64 cycles;
	__u64 nsec;
	__u64 frac;
	__u64 mask;
	__u64 overflow_period;
	__u32 mult;
	__u32 shift;
};
#define MLX5RS_CLOCK_VALS_SIZE 48

void *mlx5rs_clock_page_alloc(void);
void mlx5rs_clock_page_free(void *page);
void mlx5rs_clock_page_publish(void *page, const struct mlx5rs_clock_vals *v);
__u64 mlx5rs_clock_real_ns(void);
__u64 mlx5rs_clock_hz(void);

/*
 * devlink shim (ffi/core/devlink.c). The structures are this shim's own: Rust fills
 * them (#[repr(C)] mirrors in health/report.rs, which check the same sizes).
 */
struct devlink;

#define MLX5RS_DEVLINK_STR_LEN 32
/* `devlink dev info`: strings NUL-terminated; an empty firmware version is absent. */
struct mlx5rs_devlink_info {
	char psid[MLX5RS_DEVLINK_STR_LEN];
	char fw_running[MLX5RS_DEVLINK_STR_LEN];
	char fw_stored[MLX5RS_DEVLINK_STR_LEN];
	__u32 is_pf;
};
#define MLX5RS_DEVLINK_INFO_SIZE 100

/* The health buffer as the reporters print it (values as upstream derives them). */
struct mlx5rs_health_buf {
	__u32 assert_var[6];
	__u32 assert_exit_ptr;
	__u32 assert_callra;
	__u32 time;
	__u32 hw_id;
	__u32 ext_synd;
	__u32 raw_fw_ver;
	__u8 rfr;
	__u8 severity;
	__u8 irisc_index;
	__u8 synd;
	char synd_name[MLX5RS_DEVLINK_STR_LEN];
};
#define MLX5RS_HEALTH_BUF_SIZE 84

/* A report's context: the syndrome and the health-counter misses. */
struct mlx5rs_fw_report {
	__u32 synd;
	__u32 miss_counter;
};

/*
 * The driverinit parameters' values (io_eq_size, event_eq_size, enable_rdma): what a
 * load of the function uses. EQ depths between the bounds below, as upstream's
 * mlx5_devlink_eq_depth_validate().
 */
struct mlx5rs_devlink_driverinit {
	__u32 io_eq_size;
	__u32 event_eq_size;
	__u32 enable_rdma;
};
#define MLX5RS_DEVLINK_DRIVERINIT_SIZE 12
#define MLX5RS_EQ_DEPTH_MIN 64
#define MLX5RS_EQ_DEPTH_MAX 4096

struct devlink *mlx5rs_devlink_alloc(struct pci_dev *pdev, const void *rust);
int mlx5rs_devlink_register(struct devlink *devlink, int is_vf, int remote_reset, int rdma,
			    const struct mlx5rs_devlink_driverinit *defaults);
int mlx5rs_devlink_remote_reset_allowed(struct devlink *devlink);
void mlx5rs_devlink_remote_reload_done(struct devlink *devlink);
int mlx5rs_devlink_report(struct devlink *devlink, int fatal, const char *msg,
			  const struct mlx5rs_fw_report *r, const void *here);
void mlx5rs_devlink_fatal_healthy(struct devlink *devlink);
void mlx5rs_devlink_unregister(struct devlink *devlink);
void mlx5rs_devlink_free(struct devlink *devlink);

int mlx5rs_nth_online_cpu(unsigned int n);
int mlx5rs_irq_set_cpu_hint(unsigned int irq, unsigned int cpu);
void mlx5rs_irq_clear_hint(unsigned int irq);

/*
 * InfiniBand shim (ffi/rdma/ib.c, only with CONFIG_MLX5_RS_INFINIBAND). The structures
 * below are this shim's own: Rust fills them (#[repr(C)] mirrors in ffi/rdma/ib_abi.rs, which
 * check the same sizes) and ib.c copies them into the core's structures.
 */
struct device;
struct mlx5rs_ib_dev;
struct ib_udata;

/* MLX5_IB_UVERBS_ABI_VERSION (include/uapi/rdma/mlx5-abi.h). */
#define MLX5RS_IB_UVERBS_ABI_VERSION 1
/* Room for board_id, hca_type (with the NUL). */
#define MLX5RS_IB_STR_LEN 64

/* enum ib_event_type values ffi/rdma/ib.rs passes (checked in ib.c). */
#define MLX5RS_IB_EVENT_QP_FATAL 1
#define MLX5RS_IB_EVENT_QP_REQ_ERR 2
#define MLX5RS_IB_EVENT_QP_ACCESS_ERR 3
#define MLX5RS_IB_EVENT_COMM_EST 4
#define MLX5RS_IB_EVENT_SQ_DRAINED 5
#define MLX5RS_IB_EVENT_PATH_MIG 6
#define MLX5RS_IB_EVENT_PATH_MIG_ERR 7
#define MLX5RS_IB_EVENT_DEVICE_FATAL 8
#define MLX5RS_IB_EVENT_PORT_ACTIVE 9
#define MLX5RS_IB_EVENT_PORT_ERR 10
#define MLX5RS_IB_EVENT_LID_CHANGE 11
#define MLX5RS_IB_EVENT_PKEY_CHANGE 12
#define MLX5RS_IB_EVENT_SRQ_ERR 14
#define MLX5RS_IB_EVENT_SRQ_LIMIT_REACHED 15
#define MLX5RS_IB_EVENT_QP_LAST_WQE_REACHED 16
#define MLX5RS_IB_EVENT_CLIENT_REREGISTER 17
#define MLX5RS_IB_EVENT_GID_CHANGE 18
#define MLX5RS_IB_EVENT_DEVICE_SPEED_CHANGE 20

/* What the device shows from its allocation on (GUIDs in host order). */
struct mlx5rs_ib_init {
	__u64 node_guid;
	/* The core's clock info page (ffi/core/clock.c), NULL without a clock. */
	void *clock_info;
	__u32 phys_port_cnt;
	__u32 num_comp_vectors;
	__u32 local_dma_lkey;
	__u32 hw_rev;
	char node_desc[64];
	char fw_ver[32];
	char board_id[MLX5RS_IB_STR_LEN];
	char hca_type[MLX5RS_IB_STR_LEN];
};
#define MLX5RS_IB_INIT_SIZE 256

/* query_device (struct ib_device_attr's fields the provider sets). */
struct mlx5rs_ib_device_attr {
	__u64 fw_ver;
	__u64 sys_image_guid;
	__u64 max_mr_size;
	__u64 page_size_cap;
	__u64 device_cap_flags;
	__u64 kernel_cap_flags;
	__u64 timestamp_mask;
	__u64 hca_core_clock;
	__u32 vendor_id;
	__u32 vendor_part_id;
	__u32 hw_ver;
	__u32 max_qp;
	__u32 max_qp_wr;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_sge_rd;
	__u32 max_cq;
	__u32 max_cqe;
	__u32 max_mr;
	__u32 max_pd;
	__u32 max_qp_rd_atom;
	__u32 max_res_rd_atom;
	__u32 max_qp_init_rd_atom;
	__u32 atomic_cap; /* 0: IB_ATOMIC_NONE, else IB_ATOMIC_HCA */
	__u32 max_mw;
	__u32 max_mcast_grp;
	__u32 max_mcast_qp_attach;
	__u32 max_total_mcast_qp_attach;
	__u32 max_ah;
	__u32 max_srq;
	__u32 max_srq_wr;
	__u32 max_srq_sge;
	__u32 max_fast_reg_page_list_len;
	__u32 max_pi_fast_reg_page_list_len;
	__u32 max_sgl_rd;
	__u16 max_pkeys;
	__u8 local_ca_ack_delay;
	__u8 rsvd;
	__u16 max_cq_moderation_count;	/* cq_caps; 0: no CQ moderation */
	__u16 max_cq_moderation_period;
	__u32 rsvd2;
};
#define MLX5RS_IB_DEVICE_ATTR_SIZE 184

/* query_port (struct ib_port_attr; enum fields hold valid enum values). */
struct mlx5rs_ib_port_attr {
	__u32 state;
	__u32 max_mtu;
	__u32 active_mtu;
	__u32 gid_tbl_len;
	__u32 port_cap_flags;
	__u32 max_msg_sz;
	__u32 bad_pkey_cntr;
	__u32 qkey_viol_cntr;
	__u32 sm_lid;
	__u32 lid;
	__u16 pkey_tbl_len;
	__u16 active_speed;
	__u16 port_cap_flags2;
	__u8 lmc;
	__u8 max_vl_num;
	__u8 sm_sl;
	__u8 subnet_timeout;
	__u8 init_type_reply;
	__u8 active_width;
	__u8 phys_state;
	__u8 rsvd[3];
};
#define MLX5RS_IB_PORT_ATTR_SIZE 56

/*
 * The driver part of a verb (udata), staged in kernel buffers by ib.c: @in holds the
 * first @inlen bytes user space gave (any bytes past the staging buffer were checked
 * zero), @out has room for @outcap bytes, @outlen is the length user space asked
 * for; Rust sets @resp_len to the bytes of @out to respond with (ib_respond_udata).
 */
struct mlx5rs_ib_udata {
	const __u8 *in;
	__u64 inlen;
	__u8 *out;
	__u64 outcap;
	__u64 outlen;
	__u64 resp_len;
};
#define MLX5RS_IB_UDATA_SIZE 48
/* Staging buffer of a request and of a response. */
#define MLX5RS_IB_UDATA_MAX 256

/* An mmap of a user context, as the VMA asks it. */
struct mlx5rs_ib_mmap_req {
	__u64 pgoff;
	__u64 len;
	__u32 shared;
	__u32 write;
	__u32 exec;
	__u32 rsvd;
};
#define MLX5RS_IB_MMAP_REQ_SIZE 32

/*
 * What it maps: one page of BAR 0, or (@entry 1) the mmap entry of key @entry_key
 * (a UAR object's page, whose address and caching the entry holds), or (@clock_info
 * 1) the core's clock info page, read-only.
 */
struct mlx5rs_ib_mmap_map {
	__u64 bar_offset;
	__u32 write_combining;
	__u32 read_only;
	__u32 entry;
	__u32 clock_info;
	__u64 entry_key;
};
#define MLX5RS_IB_MMAP_MAP_SIZE 32

/* A UAR object (MLX5_IB_OBJECT_UAR): its UAR, and where and how its page maps. */
struct mlx5rs_ib_uar_obj {
	__u64 bar_offset;
	__u32 uar_index;
	__u32 write_combining;
};
#define MLX5RS_IB_UAR_OBJ_SIZE 16

struct mlx5rs_ib_dev *mlx5rs_ib_alloc(const void *rust, const struct mlx5rs_ib_init *init);
int mlx5rs_ib_register(struct mlx5rs_ib_dev *dev, struct device *dma_device);
void mlx5rs_ib_unregister(struct mlx5rs_ib_dev *dev);
void mlx5rs_ib_dealloc(struct mlx5rs_ib_dev *dev);
const char *mlx5rs_ib_name(struct mlx5rs_ib_dev *dev);
void mlx5rs_ib_dispatch_event(struct mlx5rs_ib_dev *dev, __u32 event, __u32 port);

/*
 * Implemented in Rust, one file a verbs family (ffi/rdma/ib_<family>.rs; the device's
 * in ffi/rdma/ib.rs); @rust is the pointer given to mlx5rs_ib_alloc().
 */
int mlx5rs_ib_rs_query_device(const void *rust, struct mlx5rs_ib_device_attr *out);
int mlx5rs_ib_rs_query_device_uhw(const void *rust, struct mlx5rs_ib_udata *uhw);
/* Ports (ffi/rdma/ib_port.c). */
int mlx5rs_ib_rs_query_port(const void *rust, __u32 port, struct mlx5rs_ib_port_attr *out);
int mlx5rs_ib_rs_query_pkey(const void *rust, __u32 port, __u16 index, __u16 *out);
int mlx5rs_ib_rs_query_gid(const void *rust, __u32 port, int index, __u8 *out);
/* User contexts (ffi/rdma/ib_uctx.c). */
int mlx5rs_ib_rs_alloc_ucontext(const void *rust, struct mlx5rs_ib_udata *udata,
				__u32 cache_line_size, void **uctx);
void mlx5rs_ib_rs_dealloc_ucontext(const void *rust, void *uctx);
int mlx5rs_ib_rs_mmap(const void *rust, const void *uctx, const struct mlx5rs_ib_mmap_req *req,
		      struct mlx5rs_ib_mmap_map *map);
/* The alloc_ucontext response of @uctx again, for a user buffer of @outlen bytes. */
int mlx5rs_ib_rs_query_ucontext(const void *rust, const void *uctx, int outlen, __u8 *out,
				size_t size);
/* The Rust context of the user context a verb's @udata belongs to (NULL: none). */
void *mlx5rs_ib_udata_uctx(struct ib_udata *udata);
/* UAR objects (ffi/rdma/ib_uar.c): allocate one of @alloc_type for context @uctx, free it. */
int mlx5rs_ib_rs_uar_obj_alloc(const void *rust, const void *uctx, __u32 alloc_type,
			       struct mlx5rs_ib_uar_obj *out);
void mlx5rs_ib_rs_uar_obj_free(const void *rust, const void *uctx, __u32 uar_index);
/* The mmap offset (bytes) user space passes for the entry of key @key. */
__u64 mlx5rs_ib_rs_entry_mmap_offset(__u64 key);
/* The range of keys UAR objects' entries are inserted in, inclusive. */
void mlx5rs_ib_rs_uar_obj_keys(__u64 *first, __u64 *last);
/* Protection domains (ffi/rdma/ib_pd.c). */
int mlx5rs_ib_rs_alloc_pd(const void *rust, __u32 *pdn, struct mlx5rs_ib_udata *resp);
int mlx5rs_ib_rs_dealloc_pd(const void *rust, __u32 pdn);

/*
 * Shared receive queues and XRC domains (ffi/rdma/ib_srq.c) and address handles
 * (ffi/rdma/ib_ah.c); Rust mirrors in ffi/rdma/ib_srq_abi.rs and ib_ah_abi.rs.
 */

/* A create_srq: struct ib_srq_init_attr and the numbers of the objects it names. */
struct mlx5rs_ib_srq_init {
	__u32 srq_type;  /* enum ib_srq_type */
	__u32 max_wr;    /* in: asked for; out: what the queue holds */
	__u32 max_sge;
	__u32 srq_limit;
	__u32 pdn;
	__u32 xrcdn;     /* XRC SRQ */
	__u32 cqn;       /* XRC SRQ */
	__u32 srqn;      /* out */
};
#define MLX5RS_IB_SRQ_INIT_SIZE 32

/* struct ib_srq_attr. */
struct mlx5rs_ib_srq_attr {
	__u32 max_wr;
	__u32 max_sge;
	__u32 srq_limit;
	__u32 rsvd;
};
#define MLX5RS_IB_SRQ_ATTR_SIZE 16

/*
 * An InfiniBand struct rdma_ah_attr: create_ah / query_ah, and the paths of
 * struct mlx5rs_ib_qp_attr (modify_qp / query_qp). Copied in and out by
 * mlx5rs_ib_ah_attr_to_rs() / mlx5rs_ib_ah_attr_from_rs() (ffi/rdma/ib_ah.c).
 */
struct mlx5rs_ib_ah_attr {
	__u8 dgid[16];
	__u32 flow_label;
	__u32 ah_type;   /* enum rdma_ah_attr_type (copy-in only) */
	__u16 dlid;
	__u8 sl;
	__u8 src_path_bits;
	__u8 static_rate; /* enum ib_rate */
	__u8 is_global;   /* IB_AH_GRH */
	__u8 sgid_index;
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 port_num;    /* 0: none */
	__u8 rsvd[6];
};
#define MLX5RS_IB_AH_ATTR_SIZE 40
/* sizeof(struct mlx5_av) (include/linux/mlx5/qp.h). */
#define MLX5RS_IB_AV_SIZE 48

int mlx5rs_ib_rs_alloc_xrcd(const void *rust, __u32 *xrcdn);
int mlx5rs_ib_rs_dealloc_xrcd(const void *rust, __u32 xrcdn);
struct ib_device;
struct ib_udata;
struct ib_srq;
int mlx5rs_ib_rs_create_srq(const void *rust, struct mlx5rs_ib_srq_init *init,
			    struct mlx5rs_ib_udata *staged, struct ib_device *ibdev,
			    struct ib_udata *udata, struct ib_srq *ibsrq, void **srq);
/* An SRQ event (MLX5RS_IB_EVENT_SRQ_*) to @ibsrq's handler (ffi/rdma/ib_srq.c). */
void mlx5rs_ib_srq_event(struct ib_srq *ibsrq, __u32 event);
int mlx5rs_ib_rs_modify_srq(const void *rust, const void *srq, __u32 mask, __u32 limit);
int mlx5rs_ib_rs_query_srq(const void *rust, const void *srq, struct mlx5rs_ib_srq_attr *out);
int mlx5rs_ib_rs_destroy_srq(const void *rust, void *srq);
int mlx5rs_ib_rs_create_ah(const void *rust, const struct mlx5rs_ib_ah_attr *attr, __u8 *av,
			   struct mlx5rs_ib_udata *resp);
void mlx5rs_ib_rs_query_ah(const void *rust, const __u8 *av, __u32 ah_type,
			   struct mlx5rs_ib_ah_attr *out);

/*
 * Pinned user memory (ffi/rdma/ib_umem.c, wrapped by ffi/rdma/umem.rs): the trampolines of user
 * verbs pass their object's struct ib_device as an opaque pointer.
 */
struct ib_device;
struct ib_umem;
struct ib_udata;
struct ib_srq;

/* Bytes of block-iterator state the caller provides (8-byte aligned). */
#define MLX5RS_UMEM_ITER_SIZE 64

struct ib_umem *mlx5rs_umem_get(struct ib_device *ibdev, __u64 addr, __u64 len, int access,
				int *err);
void mlx5rs_umem_release(struct ib_umem *umem);
__u64 mlx5rs_umem_find_best_pgsz(struct ib_umem *umem, __u64 bitmap, __u64 iova);
__u64 mlx5rs_umem_num_dma_blocks(struct ib_umem *umem, __u64 pgsz);
__u64 mlx5rs_umem_dma_offset(struct ib_umem *umem, __u64 pgsz);
__u64 mlx5rs_umem_start_dma(struct ib_umem *umem);
bool mlx5rs_umem_is_contiguous(struct ib_umem *umem);
void mlx5rs_umem_iter_start(struct ib_umem *umem, __u64 pgsz, void *it);
__u64 mlx5rs_umem_iter_fill(void *it, __u64 *out, __u64 n);
const void *mlx5rs_mm_current(void);
void *mlx5rs_mm_grab_current(void);
void mlx5rs_mm_drop(void *mm);

/*
 * Memory regions (ffi/rdma/ib_mr.c, trampolines into ffi/rdma/ib_mr.rs). @mr is the Rust MR
 * state a call returned (the rust field of struct mlx5rs_ib_mr); rereg_user_mr sets
 * *@mr to NULL when it changed the MR in place.
 */
struct mlx5rs_ib_mr_keys {
	__u32 lkey;
	__u32 rkey;
};
#define MLX5RS_IB_MR_KEYS_SIZE 8

int mlx5rs_ib_rs_get_dma_mr(const void *rust, __u32 pdn, int acc, struct mlx5rs_ib_mr_keys *k,
			    void **mr);
int mlx5rs_ib_rs_reg_user_mr(const void *rust, struct ib_device *ibdev, __u32 pdn, __u64 start,
			     __u64 length, __u64 iova, int acc, struct mlx5rs_ib_mr_keys *k,
			     void **mr);
int mlx5rs_ib_rs_rereg_user_mr(const void *rust, struct ib_device *ibdev, void *old, int flags,
			       __u64 start, __u64 length, __u64 iova, int acc, __u32 pdn,
			       struct mlx5rs_ib_mr_keys *k, void **mr);
int mlx5rs_ib_rs_dereg_mr(const void *rust, struct ib_device *ibdev, void *mr);
/* Implemented in Rust (ib/mr/mod.rs): destroys the MR cache's free mkeys; called once
 * every MR is gone, before the UMR QP's PD is. */
void mlx5rs_ib_rs_mr_cache_flush(const void *rust);
/* Implemented in C (ffi/rdma/ib_umr.c), called by the MR cache. */
int mlx5rs_ib_umr_res(struct ib_device *ibdev, __u32 *pdn, __u32 *lkey);
int mlx5rs_ib_umr_run(struct ib_device *ibdev, __u32 key, const void *segs, __u32 len);

/*
 * QP verbs (ffi/rdma/ib_qp.c; Rust mirrors in ffi/rdma/ib_qp_abi.rs). Enum fields hold the
 * core's enum values.
 */
struct mlx5rs_ib_qp_attr {
	__u32 attr_mask;
	__u32 qp_state;
	__u32 cur_qp_state;
	__u32 path_mtu;
	__u32 path_mig_state;
	__u32 qkey;
	__u32 rq_psn;
	__u32 sq_psn;
	__u32 dest_qp_num;
	__u32 qp_access_flags;
	__u32 max_send_wr;
	__u32 max_recv_wr;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline_data;
	__u16 pkey_index;
	__u16 alt_pkey_index;
	__u8 en_sqd_async_notify;
	__u8 sq_draining;
	__u8 max_rd_atomic;
	__u8 max_dest_rd_atomic;
	__u8 min_rnr_timer;
	__u8 port_num;
	__u8 timeout;
	__u8 retry_cnt;
	__u8 rnr_retry;
	__u8 alt_port_num;
	__u8 alt_timeout;
	__u8 sq_sig_all;
	struct mlx5rs_ib_ah_attr ah_attr;     /* the address handles' form */
	struct mlx5rs_ib_ah_attr alt_ah_attr;
};
#define MLX5RS_IB_QP_ATTR_SIZE 156

struct mlx5rs_ib_qp_init {
	__u32 qp_type;
	__u32 create_flags;
	__u32 pdn;
	__u32 send_cqn;
	__u32 recv_cqn;
	__u32 srqn;
	__u32 max_send_wr;
	__u32 max_recv_wr;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline_data;
	__u32 port_num;
	__u8 has_send_cq;
	__u8 has_recv_cq;
	__u8 has_srq;
	__u8 sq_sig_all;
	__u8 send_cqe_128;
	__u8 recv_cqe_128;
	__u8 rsvd[2];
	/* XRC: the target's XRC domain (XRC_TGT), and the device resources upstream
	 * names in an XRC QP's context (mlx5_ib_resources: p0, c0, s0, xrcdn1; a
	 * kernel initiator's s1 or xrcdn0). */
	__u32 xrcdn;
	__u32 devr_pdn;
	__u32 devr_cqn;
	__u32 devr_srqn;
	__u32 devr_xrcdn;
	__u32 devr_srqn1;
	__u32 devr_xrcdn0;
};
#define MLX5RS_IB_QP_INIT_SIZE 84

bool mlx5rs_ib_modify_qp_is_ok(__u32 cur, __u32 next, __u32 type, __u32 mask);
/* Implemented in Rust (ffi/rdma/ib_qp.rs): @ibdev the core's struct ib_device, @uctx the
 * Rust context of a user QP (NULL for a kernel QP), @ibqp the core's QP (its events
 * go back through mlx5rs_ib_qp_event()), @qp the Rust QP. */
struct ib_qp;
int mlx5rs_ib_rs_create_qp(const void *rust, void *ibdev, void *uctx,
			   struct mlx5rs_ib_qp_init *init, struct mlx5rs_ib_udata *udata,
			   struct ib_qp *ibqp, void **qp, __u32 *qpn);
/* A QP event (MLX5RS_IB_EVENT_*) to @ibqp's handler (ffi/ib_qp.c). */
void mlx5rs_ib_qp_event(struct ib_qp *ibqp, __u32 event);
void mlx5rs_ib_rs_destroy_qp(const void *rust, void *qp);
/* Implemented in Rust (ffi/rdma/ib_cq.rs): the CQE size in bytes of CQ @cq_rust. */
__u32 mlx5rs_ib_rs_cq_cqe_size(void *cq_rust);
int mlx5rs_ib_rs_modify_qp(const void *rust, void *qp, const struct mlx5rs_ib_qp_attr *attr,
			   struct mlx5rs_ib_udata *udata);
int mlx5rs_ib_rs_query_qp(const void *rust, void *qp, struct mlx5rs_ib_qp_attr *attr);

/*
 * CQ verbs (ffi/rdma/ib_cq.c, ffi/rdma/ib_cq.rs): struct ib_cq_init_attr as the core gives it,
 * plus the host's cache line (kernel CQs use 128-byte CQEs on 128-byte lines).
 */
struct mlx5rs_ib_cq_init {
	__u32 cqe;
	__u32 comp_vector;
	__u32 flags;
	__u32 cache_line_size;
};
#define MLX5RS_IB_CQ_INIT_SIZE 16

struct mlx5rs_ib_cq;
void mlx5rs_ib_cq_comp(struct mlx5rs_ib_cq *cq);
void mlx5rs_ib_cq_err(struct mlx5rs_ib_cq *cq);

/*
 * Implemented in Rust (ffi/rdma/ib_cq.rs). create: @uctx NULL and @udata NULL for a kernel
 * CQ; @cq is the shim's CQ (passed back to mlx5rs_ib_cq_comp()/_err()); on success
 * *@cq_rust, *@cqn and *@ncqe (ring entries - 1) are set; @ibdev is the CQ's struct
 * ib_device (user memory is pinned for it). destroy frees @cq_rust only when it
 * returns 0.
 */
int mlx5rs_ib_rs_create_cq(const void *rust, void *uctx, const struct mlx5rs_ib_cq_init *init,
			   struct mlx5rs_ib_udata *udata, struct mlx5rs_ib_cq *cq,
			   void **cq_rust, __u32 *cqn, int *ncqe, void *ibdev);
int mlx5rs_ib_rs_destroy_cq(const void *rust, void *cq_rust);
int mlx5rs_ib_rs_resize_cq(const void *rust, void *cq_rust, __u32 cqe,
			   struct mlx5rs_ib_udata *udata, int *ncqe, void *ibdev);
int mlx5rs_ib_rs_modify_cq(const void *rust, void *cq_rust, __u16 count, __u16 period);

/*
 * The kernel verbs data path (ffi/rdma/ib_qp.c, ffi/rdma/ib_cq.c; Rust mirrors in
 * ffi/rdma/ib_dp_abi.rs). The trampolines walk the core's work request chains and copy
 * each request into one of these, whose opcodes and flags are this shim's own numbers
 * (MLX5RS_WR_*, MLX5RS_SEND_*), translated by the C side. poll_cq's work completions
 * are written by Rust into the core's struct ib_wc in place, with the core's status,
 * opcode and flag numbers (their layout and values checked in ib_cq.c).
 */
enum {
	MLX5RS_WR_RDMA_WRITE = 0,
	MLX5RS_WR_RDMA_WRITE_IMM = 1,
	MLX5RS_WR_SEND = 2,
	MLX5RS_WR_SEND_IMM = 3,
	MLX5RS_WR_RDMA_READ = 4,
	MLX5RS_WR_ATOMIC_CMP_AND_SWP = 5,
	MLX5RS_WR_ATOMIC_FETCH_AND_ADD = 6,
	MLX5RS_WR_LOCAL_INV = 7,
	MLX5RS_WR_REG_MR = 8,
	/* Any other opcode of the core's. */
	MLX5RS_WR_OTHER = 9,
	/*
	 * The provider's own UMR WQE, only on its UMR QP (ffi/rdma/ib_umr.c):
	 * @imm the mkey, @reg_descs the kernel address of the segments after the control
	 * segment, @reg_ndescs their length in 8-byte units.
	 */
	MLX5RS_WR_UMR = 10,
};

enum {
	MLX5RS_SEND_FENCE = 1 << 0,
	MLX5RS_SEND_SIGNALED = 1 << 1,
	MLX5RS_SEND_SOLICITED = 1 << 2,
	MLX5RS_SEND_INLINE = 1 << 3,
};

/*
 * One send work request. @sg: the core's struct ib_sge array (@num_sge entries; with
 * MLX5RS_SEND_INLINE each entry's addr is a kernel virtual address of @length bytes).
 * @imm: be32_to_cpu() of the immediate, or the key to invalidate. UD-type QPs: @av
 * the address handle's address vector (@has_ah), @remote_qpn, @remote_qkey.
 * IB_WR_REG_MR (@reg_descs non-zero for an MR of alloc_mr): the MR's IOVA, length
 * and page shift, its translation list (@reg_ndescs entries of 8 bytes at the kernel
 * address @reg_descs, DMA address @reg_desc_map, read with @reg_desc_lkey), the new
 * key and access.
 */
struct mlx5rs_ib_send_wr {
	__u64 wr_id;
	__u64 sg;
	__u64 remote_addr;
	__u64 compare_add;
	__u64 swap;
	__u32 opcode;
	__u32 send_flags;
	__u32 num_sge;
	__u32 imm;
	__u32 rkey;
	__u32 remote_qpn;
	__u32 remote_qkey;
	__u8 has_ah;
	__u8 rsvd[3];
	__u8 av[MLX5RS_IB_AV_SIZE];
	__u64 reg_iova;
	__u64 reg_len;
	__u64 reg_desc_map;
	__u64 reg_descs;
	__u32 reg_key;
	__u32 reg_access;
	__u32 reg_ndescs;
	__u32 reg_desc_lkey;
	__u8 reg_page_shift;
	__u8 reg_rsvd[7];
};
#define MLX5RS_IB_SEND_WR_SIZE 176


/* Implemented in Rust (ffi/rdma/ib_qp.rs): posts the chain of work requests from @wr
 * (a const struct ib_send_wr / ib_recv_wr of the core's QP @ibqp), each read under
 * the queue's lock (a receive request and a connected QP's common send request in
 * place, any other send request through mlx5rs_ib_send_wr_next()); returns the outcome
 * mlx5rs_post_err() and mlx5rs_post_done() unpack: 0, or the errno of the request
 * after the ones posted. @drain not 0 for a drain's request (posted after a fatal
 * error too). */
__u64 mlx5rs_ib_rs_post_send(void *qp, const void *ibqp, const void *wr, __u32 drain);
__u64 mlx5rs_ib_rs_post_recv(void *qp, const void *wr, __u32 drain);
/* A post's outcome (ffi/rdma/ib.rs post_outcome()): the errno, 0 on success, in the
 * low 32 bits, the number of requests posted before the failing one in the high 32;
 * one value in a register, so that the verb entries take no local's address. */
static inline int mlx5rs_post_err(__u64 outcome)
{
	return (int)(__u32)outcome;
}

static inline __u32 mlx5rs_post_done(__u64 outcome)
{
	return outcome >> 32;
}

/* Implemented in ffi/rdma/ib_qp.c, called by Rust's post: request @wr (of the core's
 * QP @ibqp) into @o; returns the next request of the chain, NULL after the last. @o is
 * the caller's structure for the whole chain, zeroed once: every field is written but
 * @av (only with @has_ah) and the reserved bytes, which are never written. */
const void *mlx5rs_ib_send_wr_next(const void *ibqp, const void *wr,
				   struct mlx5rs_ib_send_wr *o);
/* Implemented in Rust (ffi/rdma/ib_qp.rs): 1 when the QP's device met a fatal error. */
int mlx5rs_ib_rs_qp_internal_error(void *qp);
/* Implemented in Rust (ffi/rdma/ib_cq.rs): a drain's notification of a kernel CQ after a
 * fatal error; 1 if the CQ was notified before. */
int mlx5rs_ib_rs_cq_reset_notify(void *cq_rust);
/* Implemented in Rust (ffi/rdma/ib_srq.rs): as mlx5rs_ib_rs_post_recv, on an SRQ. */
__u64 mlx5rs_ib_rs_post_srq_recv(const void *srq, const void *wr);
/* Implemented in Rust (ffi/rdma/ib_cq.rs): up to @n completions written into the
 * core's struct ib_wc array @wc (a layout both sides check); returns the outcome
 * mlx5rs_poll_n() and mlx5rs_poll_qp1_recv() unpack: their number or a negative
 * errno, and whether one is a successful QP1 receive, whose pkey_index holds the
 * packet's P_Key (the C side looks its index up). */
__u64 mlx5rs_ib_rs_poll_cq(void *cq_rust, void *wc, __u32 n);
/* poll's outcome (ffi/rdma/ib.rs poll_outcome()): the count or negative errno in the
 * low 32 bits, bit 32 set for a QP1 receive among the completions. */
static inline int mlx5rs_poll_n(__u64 outcome)
{
	return (int)(__u32)outcome;
}

static inline bool mlx5rs_poll_qp1_recv(__u64 outcome)
{
	return outcome >> 32;
}

/* Arms CQ @cq_rust (@solicited: solicited completions only); with @report_missed, 1
 * when completions may have arrived before the arm (IB_CQ_REPORT_MISSED_EVENTS). */
int mlx5rs_ib_rs_req_notify_cq(void *cq_rust, __u8 solicited, __u8 report_missed);

/* Implemented in Rust (ffi/rdma/ib_mr.rs): the free mkey of a fast-registration MR
 * with room for @ndescs entries of pages of 1 << @page_shift bytes. */
struct mlx5rs_ib_mr_keys;
int mlx5rs_ib_rs_alloc_mr(const void *rust, __u32 pdn, __u32 ndescs, __u32 page_shift,
			  struct mlx5rs_ib_mr_keys *k, void **mr);
/*
 * Memory windows (ffi/rdma/ib_mw.c, ffi/rdma/ib_mw.rs): alloc_mw of @type (enum
 * ib_mw_type) on PD @pdn, the driver data staged in @udata; the rkey into *@rkey, the
 * window into *@mw. dealloc_mw destroys the window's mkey and, on success, its state.
 */
int mlx5rs_ib_rs_alloc_mw(const void *rust, __u32 pdn, __u32 type, struct mlx5rs_ib_udata *udata,
			  __u32 *rkey, void **mw);
int mlx5rs_ib_rs_dealloc_mw(const void *rust, void *mw);

/* Implemented in Rust (ffi/rdma/ib_port.rs): process_mad of the 256-byte MAD @in on
 * @port; IB_MAD_RESULT_* bits, @out the response when they say REPLY. */
int mlx5rs_ib_rs_process_mad(const void *rust, __u32 port, int flags, __u8 has_wc, __u16 slid,
			     const void *in, void *out);

#endif /* MLX5RS_FFI_H */
