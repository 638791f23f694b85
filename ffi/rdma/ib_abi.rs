// SPDX-License-Identifier: GPL-2.0

//! The structures the InfiniBand shim's device, port, user-context and CQ files
//! (`ffi/rdma/ib.c`, `ib_port.c`, `ib_uctx.c`, `ib_uar.c`, `ib_cq.c`) and the provider
//! exchange: `#[repr(C)]` mirrors of `struct mlx5rs_ib_init`, `mlx5rs_ib_device_attr`,
//! `mlx5rs_ib_port_attr`, the staged `mlx5rs_ib_udata` every family uses, the mmap and
//! UAR-object structures and `mlx5rs_ib_cq_init` in `mlx5rs_ffi.h` (the shim checks
//! the same sizes with `BUILD_BUG_ON`), and the `enum ib_event_type` values the
//! provider raises.
//!
//! Pure `core` code: the provider's decoders (`ib/`) build these and the host tests
//! check them.

/// `struct mlx5rs_ib_init`: what the device shows from its allocation on.
#[repr(C)]
pub struct IbInit {
    /// Node GUID, host order.
    pub node_guid: u64,
    /// The core's clock info page (`crate::clock`), null without a clock.
    pub clock_info: *mut core::ffi::c_void,
    /// Ports (`phys_port_cnt`), at least 1.
    pub phys_port_cnt: u32,
    /// Completion vectors (`num_comp_vectors`).
    pub num_comp_vectors: u32,
    /// The reserved lkey (`local_dma_lkey`).
    pub local_dma_lkey: u32,
    /// PCI revision (sysfs `hw_rev`).
    pub hw_rev: u32,
    /// NodeDescription (64 bytes, NUL-padded, not necessarily terminated).
    pub node_desc: [u8; 64],
    /// `fw_ver` text, NUL-terminated.
    pub fw_ver: [u8; 32],
    /// sysfs `board_id`, NUL-terminated.
    pub board_id: [u8; 64],
    /// sysfs `hca_type`, NUL-terminated.
    pub hca_type: [u8; 64],
}
const _: () = assert!(size_of::<IbInit>() == 256);

/// `struct mlx5rs_ib_device_attr`: the answer to `query_device` (fields named as in
/// `struct ib_device_attr`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceAttr {
    pub fw_ver: u64,
    /// Host order.
    pub sys_image_guid: u64,
    pub max_mr_size: u64,
    pub page_size_cap: u64,
    pub device_cap_flags: u64,
    pub kernel_cap_flags: u64,
    pub timestamp_mask: u64,
    pub hca_core_clock: u64,
    pub vendor_id: u32,
    pub vendor_part_id: u32,
    pub hw_ver: u32,
    pub max_qp: u32,
    pub max_qp_wr: u32,
    pub max_send_sge: u32,
    pub max_recv_sge: u32,
    pub max_sge_rd: u32,
    pub max_cq: u32,
    pub max_cqe: u32,
    pub max_mr: u32,
    pub max_pd: u32,
    pub max_qp_rd_atom: u32,
    pub max_res_rd_atom: u32,
    pub max_qp_init_rd_atom: u32,
    /// 0: `IB_ATOMIC_NONE`, else `IB_ATOMIC_HCA`.
    pub atomic_cap: u32,
    pub max_mw: u32,
    pub max_mcast_grp: u32,
    pub max_mcast_qp_attach: u32,
    pub max_total_mcast_qp_attach: u32,
    pub max_ah: u32,
    pub max_srq: u32,
    pub max_srq_wr: u32,
    pub max_srq_sge: u32,
    pub max_fast_reg_page_list_len: u32,
    pub max_pi_fast_reg_page_list_len: u32,
    pub max_sgl_rd: u32,
    pub max_pkeys: u16,
    pub local_ca_ack_delay: u8,
    pub rsvd: u8,
    /// `cq_caps.max_cq_moderation_count` (0: no CQ moderation).
    pub max_cq_moderation_count: u16,
    /// `cq_caps.max_cq_moderation_period`.
    pub max_cq_moderation_period: u16,
    pub rsvd2: u32,
}
const _: () = assert!(size_of::<DeviceAttr>() == 184);

/// `struct mlx5rs_ib_port_attr`: the answer to `query_port` (fields named as in
/// `struct ib_port_attr`). The enum fields hold
/// values of the core's enums (`ib/port/attr.rs` produces only those).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortAttr {
    pub state: u32,
    pub max_mtu: u32,
    pub active_mtu: u32,
    pub gid_tbl_len: u32,
    pub port_cap_flags: u32,
    pub max_msg_sz: u32,
    pub bad_pkey_cntr: u32,
    pub qkey_viol_cntr: u32,
    pub sm_lid: u32,
    pub lid: u32,
    pub pkey_tbl_len: u16,
    pub active_speed: u16,
    pub port_cap_flags2: u16,
    pub lmc: u8,
    pub max_vl_num: u8,
    pub sm_sl: u8,
    pub subnet_timeout: u8,
    pub init_type_reply: u8,
    pub active_width: u8,
    pub phys_state: u8,
    pub rsvd: [u8; 3],
}
const _: () = assert!(size_of::<PortAttr>() == 56);

/// Async events the provider raises (`enum ib_event_type` values, checked by the shim).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum IbEvent {
    /// A QP's work queue hit a catastrophic error.
    QpFatal = 1,
    /// Invalid request on a QP's work queue.
    QpReqErr = 2,
    /// Access error on a QP's work queue.
    QpAccessErr = 3,
    /// Communication established on a QP.
    CommEst = 4,
    /// A QP's send queue drained.
    SqDrained = 5,
    /// A QP's path migrated.
    PathMig = 6,
    /// A QP's path migration failed.
    PathMigErr = 7,
    /// The device is dead.
    DeviceFatal = 8,
    /// A port became active.
    PortActive = 9,
    /// A port left the active state.
    PortErr = 10,
    /// LID changed.
    LidChange = 11,
    /// P_Key table changed.
    PkeyChange = 12,
    /// An SRQ hit a catastrophic error.
    SrqErr = 14,
    /// An SRQ fell below its limit.
    SrqLimitReached = 15,
    /// The last WQE of a QP attached to an SRQ was reached.
    QpLastWqeReached = 16,
    /// The SM asks clients to register again.
    ClientReregister = 17,
    /// GID table changed.
    GidChange = 18,
    /// Link speed may have changed.
    DeviceSpeedChange = 20,
}

/// `struct mlx5rs_ib_udata`: a verb's driver data staged by the shim (the pointers
/// are the shim's kernel buffers; `ffi/rdma/udata.rs` turns them into slices).
#[repr(C)]
pub struct Udata {
    /// The staged request bytes.
    pub inp: *const u8,
    /// Bytes at `inp`.
    pub inlen: u64,
    /// The response buffer.
    pub out: *mut u8,
    /// Bytes at `out`.
    pub outcap: u64,
    /// The response length user space asked for.
    pub outlen: u64,
    /// Set by Rust: bytes of `out` to respond with.
    pub resp_len: u64,
}
const _: () = assert!(size_of::<Udata>() == 48);

/// `struct mlx5rs_ib_mmap_req`: the VMA of an mmap of a user context.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MmapReq {
    /// `vm_pgoff`.
    pub pgoff: u64,
    /// Length in bytes.
    pub len: u64,
    /// `VM_SHARED` (0 or 1).
    pub shared: u32,
    /// `VM_WRITE`.
    pub write: u32,
    /// `VM_EXEC`.
    pub exec: u32,
    pub rsvd: u32,
}
const _: () = assert!(size_of::<MmapReq>() == 32);

/// `struct mlx5rs_ib_mmap_map`: the page of BAR 0 the shim maps, or the mmap entry
/// whose page it maps.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MmapMap {
    /// Offset of the page in BAR 0 (page aligned).
    pub bar_offset: u64,
    /// 1: write-combining, 0: uncached.
    pub write_combining: u32,
    /// 1: the mapping may never become writable (`VM_MAYWRITE` cleared).
    pub read_only: u32,
    /// 1: map the mmap entry of key `entry_key` (a UAR object's page) instead; the
    /// fields above are then unused.
    pub entry: u32,
    /// 1: map the core's clock info page (read-only) instead of a page of BAR 0.
    pub clock_info: u32,
    /// With `entry`: the entry's key (`command << 16 | extended index`).
    pub entry_key: u64,
}
const _: () = assert!(size_of::<MmapMap>() == 32);

/// `struct mlx5rs_ib_uar_obj`: a UAR object's UAR, and where and how its page maps.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UarObj {
    /// Offset of the UAR's page in BAR 0 (page aligned).
    pub bar_offset: u64,
    /// The UAR index (PAGE_ID of UAR_OBJ_ALLOC).
    pub uar_index: u32,
    /// 1: write-combining, 0: uncached.
    pub write_combining: u32,
}
const _: () = assert!(size_of::<UarObj>() == 16);

/// `struct mlx5rs_ib_cq_init`: `struct ib_cq_init_attr` of a create_cq, and the host's
/// cache line size.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CqInit {
    /// Entries asked for.
    pub cqe: u32,
    /// Completion vector.
    pub comp_vector: u32,
    /// `IB_UVERBS_CQ_FLAGS_*`.
    pub flags: u32,
    /// `cache_line_size()`.
    pub cache_line_size: u32,
}
const _: () = assert!(size_of::<CqInit>() == 16);
