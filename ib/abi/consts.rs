// SPDX-License-Identifier: GPL-2.0

//! Constants of the mlx5 uverbs ABI: flags, `comp_mask` bits, mmap commands and the
//! ids of the UAR ioctl object, under their header names in Rust case.
//!
//! Sources: `include/uapi/rdma/mlx5-abi.h`, `mlx5_user_ioctl_cmds.h`,
//! `mlx5_user_ioctl_verbs.h`, `ib_user_ioctl_cmds.h`; the UAR/bfreg geometry of
//! `include/linux/mlx5/device.h`, and the kernel-internal values of
//! `drivers/infiniband/hw/mlx5/mlx5_ib.h` that user space sees (mmap offset layout,
//! default user index, invalid bfreg). [`ALL_ABI_CONSTS`] lists each with its C name
//! for the header test.

/// `MLX5_IB_UVERBS_ABI_VERSION`: the provider ABI version (`uverbs_abi_ver`).
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const UVERBS_ABI_VERSION: u32 = 1;

/// alloc_ucontext request `flags`: create a DEVX user context.
pub const ALLOC_UCTX_DEVX: u32 = 1 << 0;

/// alloc_ucontext request `lib_caps`: the library maps 4 KiB UARs.
pub const LIB_CAP_4K_UAR: u64 = 1 << 0;
/// alloc_ucontext request `lib_caps`: the library allocates UARs dynamically.
pub const LIB_CAP_DYN_UAR: u64 = 1 << 1;

/// alloc_ucontext response `comp_mask`: `hca_core_clock_offset` valid.
pub const UCTX_RESP_MASK_CORE_CLOCK_OFFSET: u32 = 1 << 0;
/// alloc_ucontext response `comp_mask`: `dump_fill_mkey` valid.
pub const UCTX_RESP_MASK_DUMP_FILL_MKEY: u32 = 1 << 1;
/// alloc_ucontext response `comp_mask`: ECE supported.
pub const UCTX_RESP_MASK_ECE: u32 = 1 << 2;
/// alloc_ucontext response `comp_mask`: SQD→RTS supported.
pub const UCTX_RESP_MASK_SQD2RTS: u32 = 1 << 3;
/// alloc_ucontext response `comp_mask`: real-time timestamps.
pub const UCTX_RESP_MASK_REAL_TIME_TS: u32 = 1 << 4;
/// alloc_ucontext response `comp_mask`: mkey update tag.
pub const UCTX_RESP_MASK_MKEY_UPDATE_TAG: u32 = 1 << 5;

/// `cmds_supp_uhw`: query_device takes the driver response.
pub const USER_CMDS_SUPP_UHW_QUERY_DEVICE: u8 = 1 << 0;
/// `cmds_supp_uhw`: create_ah takes the driver response.
pub const USER_CMDS_SUPP_UHW_CREATE_AH: u8 = 1 << 1;

/// `clock_info_versions` bit index of version 1.
pub const CLOCK_INFO_V1: u32 = 0;

/// create_cq `flags`: 128-byte CQE padding.
pub const CREATE_CQ_FLAGS_CQE_128B_PAD: u16 = 1 << 0;
/// create_cq `flags`: `uar_page_index` valid.
pub const CREATE_CQ_FLAGS_UAR_PAGE_INDEX: u16 = 1 << 1;
/// create_cq `flags`: real-time timestamps.
pub const CREATE_CQ_FLAGS_REAL_TIME_TS: u16 = 1 << 2;

/// ib create_cq `flags` (`ib_user_verbs.h`): timestamp completions.
pub const IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION: u32 = 1 << 0;
/// ib create_cq `flags`: ignore overrun.
pub const IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN: u32 = 1 << 1;

/// `IB_UVERBS_QPT_UC` (`ib_user_ioctl_verbs.h`): bit index in `supported_qpts`.
pub const IB_QPT_UC: u32 = 3;
/// `IB_UVERBS_QPT_UD`.
pub const IB_QPT_UD: u32 = 4;
/// `IB_UVERBS_QPT_RAW_PACKET`.
pub const IB_QPT_RAW_PACKET: u32 = 8;

/// query_device `flags`: 128-byte CQE compression.
pub const QUERY_DEV_RESP_FLAGS_CQE_128B_COMP: u32 = 1 << 0;
/// query_device `flags`: 128-byte CQE padding.
pub const QUERY_DEV_RESP_FLAGS_CQE_128B_PAD: u32 = 1 << 1;
/// query_device `flags`: packet-based credit mode.
pub const QUERY_DEV_RESP_PACKET_BASED_CREDIT_MODE: u32 = 1 << 2;
/// query_device `flags`: scatter to CQE on DCT.
pub const QUERY_DEV_RESP_FLAGS_SCAT2CQE_DCT: u32 = 1 << 3;
/// query_device `flags`: out-of-order data placement.
pub const QUERY_DEV_RESP_FLAGS_OOO_DP: u32 = 1 << 4;
/// Packet pacing `cap_flags`: burst supported.
pub const IB_PP_SUPPORT_BURST: u8 = 1 << 0;
/// Multi-packet send WQEs allowed.
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const IB_ALLOW_MPW: u32 = 1 << 1;
/// Enhanced multi-packet send WQEs.
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const IB_SUPPORT_EMPW: u32 = 1 << 2;
/// Striding RQ: smallest log2 stride (`MLX5_MIN_SINGLE_STRIDE_LOG_NUM_BYTES`).
pub const MIN_SINGLE_STRIDE_LOG_NUM_BYTES: u32 = 6;
/// Striding RQ: largest log2 stride.
pub const MAX_SINGLE_STRIDE_LOG_NUM_BYTES: u32 = 13;
/// Striding RQ: fewest log2 strides per WQE.
pub const MIN_SINGLE_WQE_LOG_NUM_STRIDES: u32 = 9;
/// Striding RQ: fewest log2 strides per WQE with cap `ext_stride_num_range`.
pub const EXT_MIN_SINGLE_WQE_LOG_NUM_STRIDES: u32 = 3;
/// Striding RQ: most log2 strides per WQE.
pub const MAX_SINGLE_WQE_LOG_NUM_STRIDES: u32 = 16;

/// Compressed CQE format: hash.
pub const CQE_RES_FORMAT_HASH: u8 = 1 << 0;
/// Compressed CQE format: checksum.
pub const CQE_RES_FORMAT_CSUM: u8 = 1 << 1;
/// Compressed CQE format: checksum and stride index.
pub const CQE_RES_FORMAT_CSUM_STRIDX: u8 = 1 << 2;

/// create_qp `flags`: WQE signature.
pub const QP_FLAG_SIGNATURE: u32 = 1 << 0;
/// create_qp `flags`: scatter to CQE.
pub const QP_FLAG_SCATTER_CQE: u32 = 1 << 1;
/// create_qp `flags`: tunnel offloads (raw packet).
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const QP_FLAG_TUNNEL_OFFLOADS: u32 = 1 << 2;
/// create_qp `flags`: `bfreg_index` names a dynamic bfreg.
pub const QP_FLAG_BFREG_INDEX: u32 = 1 << 3;
/// create_qp `flags`: DCT.
pub const QP_FLAG_TYPE_DCT: u32 = 1 << 4;
/// create_qp `flags`: DCI.
pub const QP_FLAG_TYPE_DCI: u32 = 1 << 5;
/// create_qp `flags`: TIR self loopback unicast (raw packet).
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const QP_FLAG_TIR_ALLOW_SELF_LB_UC: u32 = 1 << 6;
/// create_qp `flags`: TIR self loopback multicast (raw packet).
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const QP_FLAG_TIR_ALLOW_SELF_LB_MC: u32 = 1 << 7;
/// create_qp `flags`: allow scatter to CQE.
pub const QP_FLAG_ALLOW_SCATTER_CQE: u32 = 1 << 8;
/// create_qp `flags`: packet-based credit mode (RC).
pub const QP_FLAG_PACKET_BASED_CREDIT_MODE: u32 = 1 << 9;
/// create_qp `flags`: `bfreg_index` names a UAR page.
pub const QP_FLAG_UAR_PAGE_INDEX: u32 = 1 << 10;
/// create_qp `flags`: DCI streams.
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const QP_FLAG_DCI_STREAM: u32 = 1 << 11;

/// modify_qp `comp_mask`: out-of-order data placement on the RQ.
pub const IB_MODIFY_QP_OOO_DP: u32 = 1 << 0;

/// create_srq `flags`: WQE signature.
pub const SRQ_FLAG_SIGNATURE: u32 = 1 << 0;

/// mmap command: UAR page, write-combining when possible.
pub const MMAP_REGULAR_PAGE: u8 = 0;
/// mmap command: contiguous pages (not implemented upstream: ENOSYS).
pub const MMAP_GET_CONTIGUOUS_PAGES: u8 = 1;
/// mmap command: UAR page, write-combining.
pub const MMAP_WC_PAGE: u8 = 2;
/// mmap command: UAR page, uncached.
pub const MMAP_NC_PAGE: u8 = 3;
/// mmap command: the page holding the core clock.
pub const MMAP_CORE_CLOCK: u8 = 5;
/// mmap command: dynamic (legacy) write-combining UAR.
pub const MMAP_ALLOC_WC: u8 = 6;
/// mmap command: the clock info page.
pub const MMAP_CLOCK_INFO: u8 = 7;
/// mmap command: device memory.
pub const MMAP_DEVICE_MEM: u8 = 8;
/// First command of the `rdma_user_mmap_entry` range (`MLX5_IB_MMAP_OFFSET_START`).
pub const MMAP_OFFSET_START: u8 = 9;
/// Last command of that range (`MLX5_IB_MMAP_OFFSET_END`).
pub const MMAP_OFFSET_END: u8 = 255;
/// Shift of the command in the page offset (`MLX5_IB_MMAP_CMD_SHIFT`).
pub const MMAP_CMD_SHIFT: u32 = 8;
/// Mask of the command after the shift (`MLX5_IB_MMAP_CMD_MASK`).
pub const MMAP_CMD_MASK: u64 = 0xff;

/// `MLX5_IB_DEFAULT_UIDX`: no user index.
pub const IB_DEFAULT_UIDX: u32 = 0xff_ffff;
/// `MLX5_IB_INVALID_BFREG`: the QP rings no bfreg of the context.
pub const IB_INVALID_BFREG: u32 = 1 << 31;
/// `MLX5_IB_INVALID_UAR_INDEX`: a dynamic UAR page not allocated yet.
pub const IB_INVALID_UAR_INDEX: u32 = 1 << 31;

/// bfregs per 4 KiB UAR (`MLX5_BFREGS_PER_UAR`).
pub const BFREGS_PER_UAR: u32 = 4;
/// Regular (not fast-path) bfregs per UAR (`MLX5_NON_FP_BFREGS_PER_UAR`).
pub const NON_FP_BFREGS_PER_UAR: u32 = 2;
/// Fast-path bfregs per UAR (`MLX5_FP_BFREGS_PER_UAR`).
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const FP_BFREGS_PER_UAR: u32 = BFREGS_PER_UAR - NON_FP_BFREGS_PER_UAR;
/// UARs a context may ask for statically (`MLX5_MAX_UARS`).
pub const MAX_UARS: u32 = 1 << 8;
/// Static bfregs a context may ask for (`MLX5_MAX_BFREGS`).
pub const MAX_BFREGS: u32 = MAX_UARS * NON_FP_BFREGS_PER_UAR;
/// Dynamic bfregs with large pages and no 4 KiB UARs (`MLX5_MIN_DYN_BFREGS`).
pub const MIN_DYN_BFREGS: u32 = 512;
/// Dynamic bfregs otherwise (`MLX5_MAX_DYN_BFREGS`).
pub const MAX_DYN_BFREGS: u32 = 1024;
/// log2 of the device's UAR size (`MLX5_ADAPTER_PAGE_SHIFT`).
pub const ADAPTER_PAGE_SHIFT: u32 = 12;

/// `UVERBS_ID_NS_SHIFT`: driver ids start at `1 << 12`.
pub const UVERBS_ID_NS_SHIFT: u32 = 12;
/// First driver-namespace id.
const NS: u16 = 1 << UVERBS_ID_NS_SHIFT;

/// Object id `MLX5_IB_OBJECT_UAR`.
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const IB_OBJECT_UAR: u16 = NS + 8;
/// Method `MLX5_IB_METHOD_UAR_OBJ_ALLOC`.
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const IB_METHOD_UAR_OBJ_ALLOC: u16 = NS;
/// Method `MLX5_IB_METHOD_UAR_OBJ_DESTROY`.
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const IB_METHOD_UAR_OBJ_DESTROY: u16 = NS + 1;
/// UAR_OBJ_ALLOC attribute: the new object's handle (IDR, new).
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const IB_ATTR_UAR_OBJ_ALLOC_HANDLE: u16 = NS;
/// UAR_OBJ_ALLOC attribute: `MLX5_IB_UAPI_UAR_ALLOC_TYPE_*` (const in, u32 enum).
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const IB_ATTR_UAR_OBJ_ALLOC_TYPE: u16 = NS + 1;
/// UAR_OBJ_ALLOC attribute: mmap offset (ptr out, u64).
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET: u16 = NS + 2;
/// UAR_OBJ_ALLOC attribute: mmap length (ptr out, u32).
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH: u16 = NS + 3;
/// UAR_OBJ_ALLOC attribute: UAR index (ptr out, u32).
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID: u16 = NS + 4;
/// UAR_OBJ_DESTROY attribute: the handle (IDR, destroy).
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const IB_ATTR_UAR_OBJ_DESTROY_HANDLE: u16 = NS;
/// UAR allocation type: blue flame (write-combining).
pub const IB_UAPI_UAR_ALLOC_TYPE_BF: u32 = 0;
/// UAR allocation type: uncached.
pub const IB_UAPI_UAR_ALLOC_TYPE_NC: u32 = 1;
/// QUERY_CONTEXT attribute: the alloc_ucontext response (ptr out).
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const IB_ATTR_QUERY_CONTEXT_RESP_UCTX: u16 = NS;
/// `UVERBS_ID_DRIVER_NS_WITH_UHW`: first driver attribute after UHW in/out.
pub const UVERBS_ID_DRIVER_NS_WITH_UHW: u16 = NS + 2;
/// CREATE_CQ attribute: UAR index (ptr in, u32).
#[cfg_attr(
    CONFIG_RUST,
    expect(
        dead_code,
        reason = "ABI value of a verb or object not implemented yet (checked against the header by the host tests)"
    )
)]
pub const IB_ATTR_CREATE_CQ_UAR_INDEX: u16 = UVERBS_ID_DRIVER_NS_WITH_UHW;

/// create_qp `create_flags` (`ib_uverbs_qp_create_flags`, the bits of the kernel's
/// `ib_qp_create_flags` too): block multicast loopback (`qpc.block_lb_mc`).
pub const QP_CREATE_BLOCK_MULTICAST_LOOPBACK: u32 = 1 << 1;

/// Builds [`ALL_ABI_CONSTS`] from `header C_NAME = VALUE;` lines.
#[cfg(not(CONFIG_RUST))]
macro_rules! abi_consts {
    ($($h:ident $c:ident = $v:expr;)*) => {
        &[$((stringify!($h), stringify!($c), $v as u64)),*]
    };
}

/// Every constant with its C name (header, name, value), for the header test (host
/// builds only). Header: `abi` mlx5-abi.h, `cmds` mlx5_user_ioctl_cmds.h, `verbs`
/// mlx5_user_ioctl_verbs.h, `core` ib_user_ioctl_cmds.h, `ioverbs`
/// ib_user_ioctl_verbs.h, `uverbs` ib_user_verbs.h, `device` linux/mlx5/device.h,
/// `ib` drivers/infiniband/hw/mlx5/mlx5_ib.h.
#[cfg(not(CONFIG_RUST))]
pub const ALL_ABI_CONSTS: &[(&str, &str, u64)] = abi_consts! {
    abi MLX5_IB_UVERBS_ABI_VERSION = UVERBS_ABI_VERSION;
    ioverbs IB_UVERBS_QP_CREATE_BLOCK_MULTICAST_LOOPBACK = QP_CREATE_BLOCK_MULTICAST_LOOPBACK;
    abi MLX5_IB_ALLOC_UCTX_DEVX = ALLOC_UCTX_DEVX;
    abi MLX5_LIB_CAP_4K_UAR = LIB_CAP_4K_UAR;
    abi MLX5_LIB_CAP_DYN_UAR = LIB_CAP_DYN_UAR;
    abi MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_CORE_CLOCK_OFFSET = UCTX_RESP_MASK_CORE_CLOCK_OFFSET;
    abi MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_DUMP_FILL_MKEY = UCTX_RESP_MASK_DUMP_FILL_MKEY;
    abi MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_ECE = UCTX_RESP_MASK_ECE;
    abi MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_SQD2RTS = UCTX_RESP_MASK_SQD2RTS;
    abi MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_REAL_TIME_TS = UCTX_RESP_MASK_REAL_TIME_TS;
    abi MLX5_IB_ALLOC_UCONTEXT_RESP_MASK_MKEY_UPDATE_TAG = UCTX_RESP_MASK_MKEY_UPDATE_TAG;
    abi MLX5_USER_CMDS_SUPP_UHW_QUERY_DEVICE = USER_CMDS_SUPP_UHW_QUERY_DEVICE;
    abi MLX5_USER_CMDS_SUPP_UHW_CREATE_AH = USER_CMDS_SUPP_UHW_CREATE_AH;
    abi MLX5_IB_CLOCK_INFO_V1 = CLOCK_INFO_V1;
    abi MLX5_IB_CREATE_CQ_FLAGS_CQE_128B_PAD = CREATE_CQ_FLAGS_CQE_128B_PAD;
    abi MLX5_IB_CREATE_CQ_FLAGS_UAR_PAGE_INDEX = CREATE_CQ_FLAGS_UAR_PAGE_INDEX;
    abi MLX5_IB_CREATE_CQ_FLAGS_REAL_TIME_TS = CREATE_CQ_FLAGS_REAL_TIME_TS;
    uverbs IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION = IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
    uverbs IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN = IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN;
    ioverbs IB_UVERBS_QPT_UC = IB_QPT_UC;
    ioverbs IB_UVERBS_QPT_UD = IB_QPT_UD;
    ioverbs IB_UVERBS_QPT_RAW_PACKET = IB_QPT_RAW_PACKET;
    abi MLX5_IB_QUERY_DEV_RESP_FLAGS_CQE_128B_COMP = QUERY_DEV_RESP_FLAGS_CQE_128B_COMP;
    abi MLX5_IB_QUERY_DEV_RESP_FLAGS_CQE_128B_PAD = QUERY_DEV_RESP_FLAGS_CQE_128B_PAD;
    abi MLX5_IB_QUERY_DEV_RESP_PACKET_BASED_CREDIT_MODE = QUERY_DEV_RESP_PACKET_BASED_CREDIT_MODE;
    abi MLX5_IB_QUERY_DEV_RESP_FLAGS_SCAT2CQE_DCT = QUERY_DEV_RESP_FLAGS_SCAT2CQE_DCT;
    abi MLX5_IB_QUERY_DEV_RESP_FLAGS_OOO_DP = QUERY_DEV_RESP_FLAGS_OOO_DP;
    abi MLX5_IB_PP_SUPPORT_BURST = IB_PP_SUPPORT_BURST;
    abi MLX5_IB_ALLOW_MPW = IB_ALLOW_MPW;
    abi MLX5_IB_SUPPORT_EMPW = IB_SUPPORT_EMPW;
    ib MLX5_MIN_SINGLE_STRIDE_LOG_NUM_BYTES = MIN_SINGLE_STRIDE_LOG_NUM_BYTES;
    ib MLX5_MAX_SINGLE_STRIDE_LOG_NUM_BYTES = MAX_SINGLE_STRIDE_LOG_NUM_BYTES;
    ib MLX5_MIN_SINGLE_WQE_LOG_NUM_STRIDES = MIN_SINGLE_WQE_LOG_NUM_STRIDES;
    ib MLX5_EXT_MIN_SINGLE_WQE_LOG_NUM_STRIDES = EXT_MIN_SINGLE_WQE_LOG_NUM_STRIDES;
    ib MLX5_MAX_SINGLE_WQE_LOG_NUM_STRIDES = MAX_SINGLE_WQE_LOG_NUM_STRIDES;
    abi MLX5_IB_CQE_RES_FORMAT_HASH = CQE_RES_FORMAT_HASH;
    abi MLX5_IB_CQE_RES_FORMAT_CSUM = CQE_RES_FORMAT_CSUM;
    abi MLX5_IB_CQE_RES_FORMAT_CSUM_STRIDX = CQE_RES_FORMAT_CSUM_STRIDX;
    abi MLX5_QP_FLAG_SIGNATURE = QP_FLAG_SIGNATURE;
    abi MLX5_QP_FLAG_SCATTER_CQE = QP_FLAG_SCATTER_CQE;
    abi MLX5_QP_FLAG_TUNNEL_OFFLOADS = QP_FLAG_TUNNEL_OFFLOADS;
    abi MLX5_QP_FLAG_BFREG_INDEX = QP_FLAG_BFREG_INDEX;
    abi MLX5_QP_FLAG_TYPE_DCT = QP_FLAG_TYPE_DCT;
    abi MLX5_QP_FLAG_TYPE_DCI = QP_FLAG_TYPE_DCI;
    abi MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_UC = QP_FLAG_TIR_ALLOW_SELF_LB_UC;
    abi MLX5_QP_FLAG_TIR_ALLOW_SELF_LB_MC = QP_FLAG_TIR_ALLOW_SELF_LB_MC;
    abi MLX5_QP_FLAG_ALLOW_SCATTER_CQE = QP_FLAG_ALLOW_SCATTER_CQE;
    abi MLX5_QP_FLAG_PACKET_BASED_CREDIT_MODE = QP_FLAG_PACKET_BASED_CREDIT_MODE;
    abi MLX5_QP_FLAG_UAR_PAGE_INDEX = QP_FLAG_UAR_PAGE_INDEX;
    abi MLX5_QP_FLAG_DCI_STREAM = QP_FLAG_DCI_STREAM;
    abi MLX5_IB_MODIFY_QP_OOO_DP = IB_MODIFY_QP_OOO_DP;
    abi MLX5_SRQ_FLAG_SIGNATURE = SRQ_FLAG_SIGNATURE;
    abi MLX5_IB_MMAP_REGULAR_PAGE = MMAP_REGULAR_PAGE;
    abi MLX5_IB_MMAP_GET_CONTIGUOUS_PAGES = MMAP_GET_CONTIGUOUS_PAGES;
    abi MLX5_IB_MMAP_WC_PAGE = MMAP_WC_PAGE;
    abi MLX5_IB_MMAP_NC_PAGE = MMAP_NC_PAGE;
    abi MLX5_IB_MMAP_CORE_CLOCK = MMAP_CORE_CLOCK;
    abi MLX5_IB_MMAP_ALLOC_WC = MMAP_ALLOC_WC;
    abi MLX5_IB_MMAP_CLOCK_INFO = MMAP_CLOCK_INFO;
    abi MLX5_IB_MMAP_DEVICE_MEM = MMAP_DEVICE_MEM;
    ib MLX5_IB_MMAP_OFFSET_START = MMAP_OFFSET_START;
    ib MLX5_IB_MMAP_OFFSET_END = MMAP_OFFSET_END;
    ib MLX5_IB_MMAP_CMD_SHIFT = MMAP_CMD_SHIFT;
    ib MLX5_IB_MMAP_CMD_MASK = MMAP_CMD_MASK;
    ib MLX5_IB_DEFAULT_UIDX = IB_DEFAULT_UIDX;
    ib MLX5_IB_INVALID_BFREG = IB_INVALID_BFREG;
    ib MLX5_IB_INVALID_UAR_INDEX = IB_INVALID_UAR_INDEX;
    device MLX5_BFREGS_PER_UAR = BFREGS_PER_UAR;
    device MLX5_NON_FP_BFREGS_PER_UAR = NON_FP_BFREGS_PER_UAR;
    device MLX5_FP_BFREGS_PER_UAR = FP_BFREGS_PER_UAR;
    device MLX5_MAX_UARS = MAX_UARS;
    device MLX5_MAX_BFREGS = MAX_BFREGS;
    device MLX5_MIN_DYN_BFREGS = MIN_DYN_BFREGS;
    device MLX5_MAX_DYN_BFREGS = MAX_DYN_BFREGS;
    device MLX5_ADAPTER_PAGE_SHIFT = ADAPTER_PAGE_SHIFT;
    core UVERBS_ID_NS_SHIFT = UVERBS_ID_NS_SHIFT;
    core UVERBS_ID_DRIVER_NS_WITH_UHW = UVERBS_ID_DRIVER_NS_WITH_UHW;
    cmds MLX5_IB_OBJECT_UAR = IB_OBJECT_UAR;
    cmds MLX5_IB_METHOD_UAR_OBJ_ALLOC = IB_METHOD_UAR_OBJ_ALLOC;
    cmds MLX5_IB_METHOD_UAR_OBJ_DESTROY = IB_METHOD_UAR_OBJ_DESTROY;
    cmds MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE = IB_ATTR_UAR_OBJ_ALLOC_HANDLE;
    cmds MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE = IB_ATTR_UAR_OBJ_ALLOC_TYPE;
    cmds MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET = IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET;
    cmds MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH = IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH;
    cmds MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID = IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID;
    cmds MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE = IB_ATTR_UAR_OBJ_DESTROY_HANDLE;
    cmds MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX = IB_ATTR_QUERY_CONTEXT_RESP_UCTX;
    cmds MLX5_IB_ATTR_CREATE_CQ_UAR_INDEX = IB_ATTR_CREATE_CQ_UAR_INDEX;
    verbs MLX5_IB_UAPI_UAR_ALLOC_TYPE_BF = IB_UAPI_UAR_ALLOC_TYPE_BF;
    verbs MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC = IB_UAPI_UAR_ALLOC_TYPE_NC;
};
