// SPDX-License-Identifier: GPL-2.0

//! The structures of `include/uapi/rdma/mlx5-abi.h` the control path uses, declared
//! once, with C layout.
//!
//! Each `uabi_struct!` declares a `#[repr(C)]` `zerocopy` structure whose field
//! names are the header's, and (host builds only) a table of its C name, size and
//! fields (offset, width) that `host/tests/uabi.rs` compares with the header. Fields
//! are in the CPU's byte order, as the header's `__u32` / `__u64`; a request is read
//! from any byte slice with [`zerocopy::FromBytes::read_from_bytes`] (no alignment
//! needed), a response written from [`zerocopy::IntoBytes::as_bytes`]. `IntoBytes`
//! also proves at compile time that no structure has implicit padding (which would
//! leak kernel stack to user space).

use zerocopy_derive::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// One field of a structure, for the header test.
#[cfg(not(CONFIG_RUST))]
#[derive(Clone, Copy, Debug)]
pub struct AbiField {
    /// Field name as in the header (for a member of an anonymous union: one of
    /// the union's names).
    pub name: &'static str,
    /// Byte offset.
    pub offset: usize,
    /// Width in bytes.
    pub size: usize,
}

/// A structure, for the header test.
#[cfg(not(CONFIG_RUST))]
#[derive(Clone, Copy, Debug)]
pub struct AbiStruct {
    /// C name (`struct <c_name>`).
    pub c_name: &'static str,
    /// `sizeof`.
    pub size: usize,
    /// Every field, in order.
    pub fields: &'static [AbiField],
}

macro_rules! uabi_struct {
    (
        $(#[$m:meta])*
        pub struct $name:ident = $c:literal {
            $( $(#[$fm:meta])* pub $f:ident : $t:ty, )*
        }
    ) => {
        $(#[$m])*
        #[derive(
            Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
        )]
        #[repr(C)]
        pub struct $name {
            $( $(#[$fm])* pub $f: $t, )*
        }

        #[cfg(not(CONFIG_RUST))]
        impl $name {
            /// This structure's C name, size and fields (header test).
            pub const TABLE: AbiStruct = AbiStruct {
                c_name: $c,
                size: core::mem::size_of::<$name>(),
                fields: &[$(AbiField {
                    name: stringify!($f),
                    offset: core::mem::offset_of!($name, $f),
                    size: core::mem::size_of::<$t>(),
                }),*],
            };
        }
    };
}

uabi_struct! {
    /// alloc_ucontext request, version 0 (the first 8 bytes of v2).
    pub struct AllocUcontextReq = "mlx5_ib_alloc_ucontext_req" {
        /// Static blue-flame registers asked for.
        pub total_num_bfregs: u32,
        /// How many of them are low-latency (high class).
        pub num_low_latency_bfregs: u32,
    }
}

uabi_struct! {
    /// alloc_ucontext request, version 2 (accepted from 16 bytes on).
    pub struct AllocUcontextReqV2 = "mlx5_ib_alloc_ucontext_req_v2" {
        /// Static blue-flame registers asked for.
        pub total_num_bfregs: u32,
        /// How many of them are low-latency (high class).
        pub num_low_latency_bfregs: u32,
        /// `MLX5_IB_ALLOC_UCTX_*` flags.
        pub flags: u32,
        /// No bit defined: must be zero.
        pub comp_mask: u32,
        /// Highest CQE version the library handles.
        pub max_cqe_version: u8,
        /// Reserved, zero.
        pub reserved0: u8,
        /// Reserved, zero.
        pub reserved1: u16,
        /// Reserved, zero.
        pub reserved2: u32,
        /// `MLX5_LIB_CAP_*` bits.
        pub lib_caps: u64,
    }
}

uabi_struct! {
    /// alloc_ucontext response.
    pub struct AllocUcontextResp = "mlx5_ib_alloc_ucontext_resp" {
        /// QP table size (`1 << log_max_qp`).
        pub qp_tab_size: u32,
        /// Blue-flame register size, 0 without write combining.
        pub bf_reg_size: u32,
        /// Static bfregs of the context (0 with dynamic UARs).
        pub tot_bfregs: u32,
        /// Host cache line size.
        pub cache_line_size: u32,
        /// Largest send WQE (bytes).
        pub max_sq_desc_sz: u16,
        /// Largest receive WQE (bytes).
        pub max_rq_desc_sz: u16,
        /// Largest send queue (WQE basic blocks).
        pub max_send_wqebb: u32,
        /// Largest receive queue.
        pub max_recv_wr: u32,
        /// Largest SRQ.
        pub max_srq_recv_wr: u32,
        /// Ports.
        pub num_ports: u16,
        /// `MLX5_USER_ALLOC_UCONTEXT_FLOW_ACTION_FLAGS_*`.
        pub flow_action_flags: u16,
        /// `MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_*`.
        pub comp_mask: u32,
        /// Bytes of this response the kernel filled.
        pub response_length: u32,
        /// CQE version in use.
        pub cqe_version: u8,
        /// `MLX5_USER_CMDS_SUPP_UHW_*`.
        pub cmds_supp_uhw: u8,
        /// Ethernet minimum inline mode + 1 (0 on InfiniBand).
        pub eth_min_inline: u8,
        /// Bit `MLX5_IB_CLOCK_INFO_V1` when the clock info page exists.
        pub clock_info_versions: u8,
        /// Offset of the core clock inside its mmap page.
        pub hca_core_clock_offset: u64,
        /// log2 of a UAR's size as mapped.
        pub log_uar_size: u32,
        /// UARs per system page.
        pub num_uars_per_page: u32,
        /// Dynamic bfregs of the context.
        pub num_dyn_bfregs: u32,
        /// Dump-fill mkey (with its comp_mask bit).
        pub dump_fill_mkey: u32,
    }
}

uabi_struct! {
    /// alloc_pd response.
    pub struct AllocPdResp = "mlx5_ib_alloc_pd_resp" {
        /// PD number.
        pub pdn: u32,
    }
}

uabi_struct! {
    /// TSO capabilities of query_device.
    pub struct TsoCaps = "mlx5_ib_tso_caps" {
        /// Largest TSO payload (bytes).
        pub max_tso: u32,
        /// Bit per `ib_qp_type` supported.
        pub supported_qpts: u32,
    }
}

uabi_struct! {
    /// RSS capabilities of query_device.
    pub struct RssCaps = "mlx5_ib_rss_caps" {
        /// `MLX5_RX_HASH_*` fields.
        pub rx_hash_fields_mask: u64,
        /// `MLX5_RX_HASH_FUNC_*`.
        pub rx_hash_function: u8,
        /// Reserved.
        pub reserved: [u8; 7],
    }
}

uabi_struct! {
    /// CQE compression capabilities of query_device.
    pub struct CqeCompCaps = "mlx5_ib_cqe_comp_caps" {
        /// Largest compression session.
        pub max_num: u32,
        /// `MLX5_IB_CQE_RES_FORMAT_*`.
        pub supported_format: u32,
    }
}

uabi_struct! {
    /// Packet pacing capabilities of query_device.
    pub struct PacketPacingCaps = "mlx5_packet_pacing_caps" {
        /// Lowest rate limit (kbps).
        pub qp_rate_limit_min: u32,
        /// Highest rate limit (kbps).
        pub qp_rate_limit_max: u32,
        /// Bit per `ib_qp_type` supported.
        pub supported_qpts: u32,
        /// `MLX5_IB_PP_SUPPORT_*`.
        pub cap_flags: u8,
        /// Reserved.
        pub reserved: [u8; 3],
    }
}

uabi_struct! {
    /// Software parsing capabilities of query_device.
    pub struct SwParsingCaps = "mlx5_ib_sw_parsing_caps" {
        /// `MLX5_IB_SW_PARSING*`.
        pub sw_parsing_offloads: u32,
        /// Bit per `ib_qp_type` supported.
        pub supported_qpts: u32,
    }
}

uabi_struct! {
    /// Striding RQ capabilities of query_device.
    pub struct StridingRqCaps = "mlx5_ib_striding_rq_caps" {
        /// Smallest log2 stride size.
        pub min_single_stride_log_num_of_bytes: u32,
        /// Largest log2 stride size.
        pub max_single_stride_log_num_of_bytes: u32,
        /// Smallest log2 strides per WQE.
        pub min_single_wqe_log_num_of_strides: u32,
        /// Largest log2 strides per WQE.
        pub max_single_wqe_log_num_of_strides: u32,
        /// Bit per `ib_qp_type` supported.
        pub supported_qpts: u32,
        /// Reserved.
        pub reserved: u32,
    }
}

uabi_struct! {
    /// DCI stream capabilities of query_device.
    pub struct DciStreamsCaps = "mlx5_ib_dci_streams_caps" {
        /// Largest log2 concurrent streams.
        pub max_log_num_concurent: u8,
        /// Largest log2 errored streams.
        pub max_log_num_errored: u8,
    }
}

uabi_struct! {
    /// A register value and mask (`mlx5_user_ioctl_verbs.h`).
    pub struct UapiReg = "mlx5_ib_uapi_reg" {
        /// Value.
        pub value: u32,
        /// Mask.
        pub mask: u32,
    }
}

uabi_struct! {
    /// query_device (extended) response, driver part.
    pub struct QueryDeviceResp = "mlx5_ib_query_device_resp" {
        /// Reserved for extensions.
        pub comp_mask: u32,
        /// Bytes of this response the kernel filled.
        pub response_length: u32,
        /// TSO.
        pub tso_caps: TsoCaps,
        /// RSS.
        pub rss_caps: RssCaps,
        /// CQE compression.
        pub cqe_comp_caps: CqeCompCaps,
        /// Packet pacing.
        pub packet_pacing_caps: PacketPacingCaps,
        /// `MLX5_IB_ALLOW_MPW` / `MLX5_IB_SUPPORT_EMPW`.
        pub mlx5_ib_support_multi_pkt_send_wqes: u32,
        /// `MLX5_IB_QUERY_DEV_RESP_*`.
        pub flags: u32,
        /// Software parsing.
        pub sw_parsing_caps: SwParsingCaps,
        /// Striding RQ.
        pub striding_rq_caps: StridingRqCaps,
        /// `MLX5_IB_TUNNELED_OFFLOADS_*`.
        pub tunnel_offloads_caps: u32,
        /// DCI streams.
        pub dci_streams_caps: DciStreamsCaps,
        /// Reserved.
        pub reserved: u16,
        /// Metadata register C0.
        pub reg_c0: UapiReg,
    }
}

uabi_struct! {
    /// create_cq request.
    pub struct CreateCq = "mlx5_ib_create_cq" {
        /// CQ buffer (user virtual address).
        pub buf_addr: u64,
        /// Doorbell record (user virtual address).
        pub db_addr: u64,
        /// CQE size, 64 or 128.
        pub cqe_size: u32,
        /// CQE compression on (1).
        pub cqe_comp_en: u8,
        /// `MLX5_IB_CQE_RES_FORMAT_*` of compressed CQEs.
        pub cqe_comp_res_format: u8,
        /// `MLX5_IB_CREATE_CQ_FLAGS_*`.
        pub flags: u16,
        /// UAR page, with `MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX`.
        pub uar_page_index: u16,
        /// Reserved, zero.
        pub reserved0: u16,
        /// Reserved, zero.
        pub reserved1: u32,
    }
}

uabi_struct! {
    /// create_cq response.
    pub struct CreateCqResp = "mlx5_ib_create_cq_resp" {
        /// CQ number.
        pub cqn: u32,
        /// Reserved.
        pub reserved: u32,
    }
}

uabi_struct! {
    /// resize_cq request.
    pub struct ResizeCq = "mlx5_ib_resize_cq" {
        /// New CQ buffer.
        pub buf_addr: u64,
        /// CQE size, 64 or 128.
        pub cqe_size: u16,
        /// Reserved, zero.
        pub reserved0: u16,
        /// Reserved, zero.
        pub reserved1: u32,
    }
}

uabi_struct! {
    /// alloc_mw request (libmlx5 56.1 sends none: `mlx5_alloc_mw` passes the bare
    /// `ibv_alloc_mw` command).
    pub struct AllocMw = "mlx5_ib_alloc_mw" {
        /// No bit is known (upstream validates it against 0).
        pub comp_mask: u32,
        /// KLM entries the window may hold (0: one).
        pub num_klms: u8,
        /// Reserved, zero.
        pub reserved1: u8,
        /// Reserved, zero.
        pub reserved2: u16,
    }
}

uabi_struct! {
    /// create_srq request.
    pub struct CreateSrq = "mlx5_ib_create_srq" {
        /// SRQ buffer.
        pub buf_addr: u64,
        /// Doorbell record.
        pub db_addr: u64,
        /// `MLX5_SRQ_FLAG_*`.
        pub flags: u32,
        /// Reserved, zero.
        pub reserved0: u32,
        /// User index (XRC SRQs with CQE version 1).
        pub uidx: u32,
        /// Reserved, zero.
        pub reserved1: u32,
    }
}

uabi_struct! {
    /// create_srq response.
    pub struct CreateSrqResp = "mlx5_ib_create_srq_resp" {
        /// SRQ number.
        pub srqn: u32,
        /// Reserved.
        pub reserved: u32,
    }
}

uabi_struct! {
    /// DCI stream sizes of create_qp.
    pub struct CreateQpDciStreams = "mlx5_ib_create_qp_dci_streams" {
        /// log2 concurrent streams.
        pub log_num_concurent: u8,
        /// log2 errored streams.
        pub log_num_errored: u8,
    }
}

uabi_struct! {
    /// create_qp request (not RSS).
    pub struct CreateQp = "mlx5_ib_create_qp" {
        /// Work queue buffer (RQ then SQ).
        pub buf_addr: u64,
        /// Doorbell record.
        pub db_addr: u64,
        /// SQ size in 64-byte basic blocks (power of two or 0).
        pub sq_wqe_count: u32,
        /// RQ WQEs.
        pub rq_wqe_count: u32,
        /// log2 RQ WQE size.
        pub rq_wqe_shift: u32,
        /// `MLX5_QP_FLAG_*`.
        pub flags: u32,
        /// User index (CQE version 1).
        pub uidx: u32,
        /// bfreg or UAR page (with `MLX5_QP_FLAG_BFREG_INDEX` / `_UAR_PAGE_INDEX`).
        pub bfreg_index: u32,
        /// SQ buffer of a raw packet QP; the union's other name is `access_key`
        /// (DCT).
        pub sq_buf_addr: u64,
        /// ECE options.
        pub ece_options: u32,
        /// DCI streams.
        pub dci_streams: CreateQpDciStreams,
        /// Reserved, zero.
        pub reserved: u16,
    }
}

uabi_struct! {
    /// create_qp response.
    pub struct CreateQpResp = "mlx5_ib_create_qp_resp" {
        /// bfreg the QP rings (as the library numbers them), or `MLX5_IB_INVALID_BFREG`.
        pub bfreg_index: u32,
        /// ECE options.
        pub ece_options: u32,
        /// `MLX5_IB_CREATE_QP_RESP_MASK_*`.
        pub comp_mask: u32,
        /// TIR (raw packet).
        pub tirn: u32,
        /// TIS (raw packet).
        pub tisn: u32,
        /// RQ (raw packet).
        pub rqn: u32,
        /// SQ (raw packet).
        pub sqn: u32,
        /// Reserved.
        pub reserved1: u32,
        /// TIR ICM address.
        pub tir_icm_addr: u64,
    }
}

uabi_struct! {
    /// create_ah response.
    pub struct CreateAhResp = "mlx5_ib_create_ah_resp" {
        /// Bytes of this response the kernel filled.
        pub response_length: u32,
        /// Destination MAC (RoCE).
        pub dmac: [u8; 6],
        /// Reserved.
        pub reserved: [u8; 6],
    }
}

uabi_struct! {
    /// Packet pacing burst of modify_qp.
    pub struct BurstInfo = "mlx5_ib_burst_info" {
        /// Largest burst (bytes).
        pub max_burst_sz: u32,
        /// Typical packet size (bytes).
        pub typical_pkt_sz: u16,
        /// Reserved.
        pub reserved: u16,
    }
}

uabi_struct! {
    /// modify_qp request.
    pub struct ModifyQp = "mlx5_ib_modify_qp" {
        /// `MLX5_IB_MODIFY_QP_*`.
        pub comp_mask: u32,
        /// Burst.
        pub burst_info: BurstInfo,
        /// ECE options.
        pub ece_options: u32,
    }
}

uabi_struct! {
    /// modify_qp response.
    pub struct ModifyQpResp = "mlx5_ib_modify_qp_resp" {
        /// Bytes of this response the kernel filled.
        pub response_length: u32,
        /// DCT number.
        pub dctn: u32,
        /// ECE options.
        pub ece_options: u32,
        /// Reserved.
        pub reserved: u32,
    }
}

/// Every structure declared here, for the header test (host builds only).
#[cfg(not(CONFIG_RUST))]
pub const ALL_ABI_STRUCTS: &[AbiStruct] = &[
    AllocUcontextReq::TABLE,
    AllocUcontextReqV2::TABLE,
    AllocUcontextResp::TABLE,
    AllocPdResp::TABLE,
    TsoCaps::TABLE,
    RssCaps::TABLE,
    CqeCompCaps::TABLE,
    PacketPacingCaps::TABLE,
    SwParsingCaps::TABLE,
    StridingRqCaps::TABLE,
    DciStreamsCaps::TABLE,
    UapiReg::TABLE,
    QueryDeviceResp::TABLE,
    CreateCq::TABLE,
    CreateCqResp::TABLE,
    ResizeCq::TABLE,
    AllocMw::TABLE,
    CreateSrq::TABLE,
    CreateSrqResp::TABLE,
    CreateQpDciStreams::TABLE,
    CreateQp::TABLE,
    CreateQpResp::TABLE,
    CreateAhResp::TABLE,
    BurstInfo::TABLE,
    ModifyQp::TABLE,
    ModifyQpResp::TABLE,
];
