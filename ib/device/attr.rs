// SPDX-License-Identifier: GPL-2.0

//! The device attributes (`query_device`) and the strings the IB device shows
//! (`fw_ver`, `hca_type`, `board_id`), from what the core already read: the general
//! capabilities, the firmware version, the PCI ids and QUERY_ADAPTER's board id.
//!
//! The values follow upstream `mlx5_ib_query_device` (mlx5_ib main.c) for the
//! capabilities this driver reads (the general `cmd_hca_cap` and the atomic caps; ODP,
//! tag-matching and Ethernet offload caps are not queried, so those features are
//! reported absent). `atomic_cap` is upstream's `get_atomic_caps_qp`; masked atomics
//! are never reported (upstream sets `masked_atomic_cap` to none whatever the caps).
//!
//! What is advertised is what the provider implements, whatever the device could do
//! ([`NOT_SERVED`], [`NOT_SERVED_KERNEL`]): gappy registration (`alloc_mr` serves
//! `IB_MR_TYPE_MEM_REG` only, no KLM-based `SG_GAPS` MR), UD checksum and TSO offloads
//! (no send path) and PCI write end padding (the create flag is refused). Upstream
//! reports each from its cap; the limits that only mean something with the feature are
//! 0 without it: the protection-information page list length (no integrity MRs), and
//! the multicast limits (no `attach_mcast` / `detach_mcast`; upstream reports
//! `log_max_mcg` / `max_qp_mcg` whatever the verbs). The memory management extensions
//! (`alloc_mr`, `map_mr_sg`, the REG_MR and LOCAL_INV work requests) and multicast
//! loopback blocking (the create flag, `qpc.block_lb_mc`) are advertised from their
//! caps, as upstream does. Memory windows (type 1 and 2B,
//! `alloc_mw`) are advertised with cap `imaicl`, as upstream does, with `max_mw`.
//!
//! Pure `core` code, compiled into the module and into the host test crate.

use crate::{
    cmd::commands::{gen_cap, AtomicCaps, GeneralCaps},
    ffi::rdma::ib_abi::DeviceAttr,
    ib::cq::commands::{MAX_CQ_COUNT, MAX_CQ_PERIOD},
};

/// `device_cap_flags` bits (`IB_UVERBS_DEVICE_*`, ib_user_verbs.h).
pub mod dev_cap {
    /// P_Key violation counter.
    pub const BAD_PKEY_CNTR: u64 = 1 << 1;
    /// Q_Key violation counter.
    pub const BAD_QKEY_CNTR: u64 = 1 << 2;
    /// Automatic path migration.
    pub const AUTO_PATH_MIG: u64 = 1 << 4;
    /// Changing the physical port of a QP.
    pub const CHANGE_PHY_PORT: u64 = 1 << 5;
    /// Port active event.
    pub const PORT_ACTIVE_EVENT: u64 = 1 << 10;
    /// System image GUID.
    pub const SYS_IMAGE_GUID: u64 = 1 << 11;
    /// RC RNR NAK generation.
    pub const RC_RNR_NAK_GEN: u64 = 1 << 12;
    /// Memory windows.
    pub const MEM_WINDOW: u64 = 1 << 17;
    /// UD IP checksum offload.
    pub const UD_IP_CSUM: u64 = 1 << 18;
    /// XRC.
    pub const XRC: u64 = 1 << 20;
    /// Memory management extensions (fast registration).
    pub const MEM_MGT_EXTENSIONS: u64 = 1 << 21;
    /// Type 2B memory windows.
    pub const MEM_WINDOW_TYPE_2B: u64 = 1 << 24;
    /// PCI write end padding.
    pub const PCI_WRITE_END_PADDING: u64 = 1 << 36;
}

/// `kernel_cap_flags` bits (`IBK_*`, ib_verbs.h).
pub mod kernel_cap {
    /// Gappy memory registration.
    pub const SG_GAPS_REG: u64 = 1 << 3;
    /// Multicast loopback blocking.
    pub const BLOCK_MULTICAST_LOOPBACK: u64 = 1 << 5;
    /// UD TSO.
    pub const UD_TSO: u64 = 1 << 6;
    /// A virtual function.
    pub const VIRTUAL_FUNCTION: u64 = 1 << 7;
}

/// `device_cap_flags` upstream derives from the caps that this provider does not serve
/// (the verbs behind them are absent or refuse): never advertised.
pub const NOT_SERVED: u64 = dev_cap::UD_IP_CSUM | dev_cap::PCI_WRITE_END_PADDING;

/// The most entries `alloc_mr` gives an MR (`ffi/rdma/ib_mr.c` refuses a larger
/// `max_num_sg`): the fast-registration list length is reported no larger.
pub const ALLOC_MR_MAX_SG: u32 = 1 << 20;

/// `kernel_cap_flags` upstream derives from the caps that this provider does not serve.
pub const NOT_SERVED_KERNEL: u64 = kernel_cap::SG_GAPS_REG | kernel_cap::UD_TSO;

/// Bytes of one send/receive WQE segment (`struct mlx5_wqe_data_seg`, also the control
/// and remote-address segments).
const SEG: u32 = 16;
/// Bytes of the largest kernel send WQE with one data segment, in 64-byte basic
/// blocks rounded to a power of two, as upstream's `mlx5_ib_calc_max_qp_wr` computes
/// it (XRC initiator with UMR overhead, 148 bytes + one data segment → 256).
const MAX_KERNEL_SQ_WQE: u32 = 256;
/// Send WQE basic block (`MLX5_SEND_WQE_BB`).
const SEND_WQE_BB: u32 = 64;

/// Everything `query_device` reports that is not in the caps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceIds {
    /// Firmware version (major, minor, sub-minor).
    pub fw: (u16, u16, u16),
    /// System image GUID (host order).
    pub sys_image_guid: u64,
    /// Vendor id (IEEE OUI, 24 bits).
    pub vendor_id: u32,
    /// PCI device id.
    pub device_id: u16,
    /// PCI revision.
    pub revision: u8,
    /// A virtual function.
    pub is_vf: bool,
}

/// `1 << log`, saturated to `u32::MAX` for a log the device made too large.
fn pow2(log: u8) -> u32 {
    1u32.checked_shl(u32::from(log)).unwrap_or(u32::MAX)
}

/// `fw_ver` as the core's `u64` (major << 32 | minor << 16 | sub).
pub fn fw_ver_u64(fw: (u16, u16, u16)) -> u64 {
    (u64::from(fw.0) << 32) | (u64::from(fw.1) << 16) | u64::from(fw.2)
}

/// `enum ib_atomic_cap` values (ib_verbs.h).
pub mod ib_atomic {
    /// No atomics.
    pub const NONE: u32 = 0;
    /// Atomic within the HCA.
    pub const HCA: u32 = 1;
}

/// `MLX5_ATOMIC_OPS_CMP_SWAP | MLX5_ATOMIC_OPS_FETCH_ADD` (mlx5 driver.h).
const ATOMIC_OPS_CMP_SWAP_FETCH_ADD: u16 = 0b11;
/// `MLX5_ATOMIC_SIZE_QP_8BYTES` (mlx5_ib.h).
const ATOMIC_SIZE_QP_8BYTES: u16 = 1 << 3;

/// `atomic_cap` as upstream `get_atomic_caps_qp` computes it: HCA-wide atomics when
/// the device does 8-byte compare-swap and fetch-add on QPs and responds in host
/// endianness; none otherwise, and none without the atomic caps (cap `atomic` 0,
/// where upstream reads a page of zeros). Upstream reads the fields as `u8`: the bits
/// tested are in the low byte either way.
pub fn atomic_cap(atomic: Option<&AtomicCaps>) -> u32 {
    let Some(a) = atomic else {
        return ib_atomic::NONE;
    };
    let (ops, size_qp) = (a.operations, a.size_qp);
    if ops & ATOMIC_OPS_CMP_SWAP_FETCH_ADD == ATOMIC_OPS_CMP_SWAP_FETCH_ADD
        && size_qp & ATOMIC_SIZE_QP_8BYTES != 0
        && a.req_8b_endianness_mode != 0
    {
        ib_atomic::HCA
    } else {
        ib_atomic::NONE
    }
}

/// The device attributes of `caps`, `atomic` (the atomic caps, `None` without cap
/// `atomic`) and `ids`, as upstream `mlx5_ib_query_device` fills them, less what the
/// provider does not serve ([`NOT_SERVED`], [`NOT_SERVED_KERNEL`]). `max_pkeys` is the
/// P_Key table length.
pub fn device_attr(
    caps: &GeneralCaps,
    atomic: Option<&AtomicCaps>,
    ids: &DeviceIds,
    max_pkeys: u16,
) -> DeviceAttr {
    let mut a = device_attr_of_caps(caps, ids, max_pkeys);
    a.atomic_cap = atomic_cap(atomic);
    a.device_cap_flags &= !NOT_SERVED;
    a.kernel_cap_flags &= !NOT_SERVED_KERNEL;
    if a.device_cap_flags & dev_cap::MEM_MGT_EXTENSIONS == 0 {
        a.max_fast_reg_page_list_len = 0;
    } else {
        // No more than alloc_mr takes (upstream: 1 << log_max_klm_list_size alone).
        a.max_fast_reg_page_list_len = a.max_fast_reg_page_list_len.min(ALLOC_MR_MAX_SG);
    }
    // No integrity MRs (`IB_MR_TYPE_INTEGRITY`): no protection-information limit.
    a.max_pi_fast_reg_page_list_len = 0;
    // No multicast verbs: no group can be attached.
    a.max_mcast_grp = 0;
    a.max_mcast_qp_attach = 0;
    a.max_total_mcast_qp_attach = 0;
    a
}

/// The device attributes as upstream derives them from the caps.
fn device_attr_of_caps(caps: &GeneralCaps, ids: &DeviceIds, max_pkeys: u16) -> DeviceAttr {
    let mut flags = dev_cap::CHANGE_PHY_PORT
        | dev_cap::PORT_ACTIVE_EVENT
        | dev_cap::SYS_IMAGE_GUID
        | dev_cap::RC_RNR_NAK_GEN;
    let mut kflags = 0;
    let mut max_mw = 0;
    if caps.get(gen_cap::PKV) {
        flags |= dev_cap::BAD_PKEY_CNTR;
    }
    if caps.get(gen_cap::QKV) {
        flags |= dev_cap::BAD_QKEY_CNTR;
    }
    if caps.get(gen_cap::APM) {
        flags |= dev_cap::AUTO_PATH_MIG;
    }
    if caps.get(gen_cap::XRC) {
        flags |= dev_cap::XRC;
    }
    if caps.get(gen_cap::IMAICL) {
        flags |= dev_cap::MEM_WINDOW | dev_cap::MEM_WINDOW_TYPE_2B;
        max_mw = pow2(caps.get(gen_cap::LOG_MAX_MKEY));
        kflags |= kernel_cap::SG_GAPS_REG;
    }
    if !caps.get(gen_cap::UMR_MODIFY_ENTITY_SIZE_DISABLED) {
        flags |= dev_cap::MEM_MGT_EXTENSIONS;
    }
    if caps.get(gen_cap::BLOCK_LB_MC) {
        kflags |= kernel_cap::BLOCK_MULTICAST_LOOPBACK;
    }
    if caps.get(gen_cap::IPOIB_BASIC_OFFLOADS) {
        flags |= dev_cap::UD_IP_CSUM;
        kflags |= kernel_cap::UD_TSO;
    }
    if caps.get(gen_cap::END_PAD) {
        flags |= dev_cap::PCI_WRITE_END_PADDING;
    }
    if ids.is_vf {
        kflags |= kernel_cap::VIRTUAL_FUNCTION;
    }
    // A page size below 4 KiB (log 12) is what the PRM counts `log_pg_sz` from; a
    // value of 63 or more would leave no page size at all.
    let min_page = 1u64
        .checked_shl(u32::from(caps.get(gen_cap::LOG_PG_SZ)))
        .unwrap_or(0);
    let page_size_cap = if min_page == 0 { 0 } else { !(min_page - 1) };
    let max_qp = pow2(caps.get(gen_cap::LOG_MAX_QP));
    let max_rq_sg = u32::from(caps.get(gen_cap::MAX_WQE_SZ_RQ)) / SEG;
    let max_sq_desc = u32::from(caps.get(gen_cap::MAX_WQE_SZ_SQ)).min(512);
    let max_sq_sg = max_sq_desc.saturating_sub(2 * SEG) / SEG;
    let max_qp_rd_atom = pow2(caps.get(gen_cap::LOG_MAX_RA_REQ_QP));
    let max_fast_reg = pow2(caps.get(gen_cap::LOG_MAX_KLM_LIST_SIZE));
    let max_mcast_grp = pow2(caps.get(gen_cap::LOG_MAX_MCG));
    let max_mcast_qp_attach = caps.get(gen_cap::MAX_QP_MCG);
    // Upstream reports the CQ moderation limits with cap `cq_moderation`.
    let moderation = caps.get(gen_cap::CQ_MODERATION);
    DeviceAttr {
        fw_ver: fw_ver_u64(ids.fw),
        sys_image_guid: ids.sys_image_guid,
        max_mr_size: u64::MAX,
        page_size_cap,
        device_cap_flags: flags,
        kernel_cap_flags: kflags,
        timestamp_mask: 0x7FFF_FFFF_FFFF_FFFF,
        // The clock user space reads through the core-clock page (upstream likewise).
        hca_core_clock: u64::from(caps.get(gen_cap::DEVICE_FREQUENCY_KHZ)),
        vendor_id: ids.vendor_id & 0x00ff_ffff,
        vendor_part_id: u32::from(ids.device_id),
        hw_ver: u32::from(ids.revision),
        max_qp,
        max_qp_wr: pow2(caps.get(gen_cap::LOG_MAX_QP_SZ)).saturating_mul(SEND_WQE_BB)
            / MAX_KERNEL_SQ_WQE,
        max_send_sge: max_sq_sg,
        max_recv_sge: max_rq_sg,
        max_sge_rd: (512 - 2 * SEG) / SEG,
        max_cq: pow2(caps.get(gen_cap::LOG_MAX_CQ)),
        max_cqe: pow2(caps.get(gen_cap::LOG_MAX_CQ_SZ)).saturating_sub(1),
        max_mr: pow2(caps.get(gen_cap::LOG_MAX_MKEY)),
        max_pd: pow2(caps.get(gen_cap::LOG_MAX_PD)),
        max_qp_rd_atom,
        max_res_rd_atom: max_qp_rd_atom.saturating_mul(max_qp),
        max_qp_init_rd_atom: pow2(caps.get(gen_cap::LOG_MAX_RA_RES_QP)),
        // From the atomic caps ([`atomic_cap`], set by `device_attr`).
        atomic_cap: ib_atomic::NONE,
        max_mw,
        max_mcast_grp,
        max_mcast_qp_attach,
        max_total_mcast_qp_attach: max_mcast_qp_attach.saturating_mul(max_mcast_grp),
        max_ah: i32::MAX as u32,
        max_srq: pow2(caps.get(gen_cap::LOG_MAX_SRQ)),
        max_srq_wr: pow2(caps.get(gen_cap::LOG_MAX_SRQ_SZ)).saturating_sub(1),
        max_srq_sge: max_rq_sg.saturating_sub(1),
        max_fast_reg_page_list_len: max_fast_reg,
        max_pi_fast_reg_page_list_len: max_fast_reg / 2,
        max_sgl_rd: u32::from(caps.get(gen_cap::MAX_SGL_FOR_OPTIMIZED_PERFORMANCE)),
        max_pkeys,
        local_ca_ack_delay: caps.get(gen_cap::LOCAL_CA_ACK_DELAY),
        rsvd: 0,
        max_cq_moderation_count: if moderation { MAX_CQ_COUNT } else { 0 },
        max_cq_moderation_period: if moderation { MAX_CQ_PERIOD } else { 0 },
        rsvd2: 0,
    }
}

/// A fixed-size, NUL-terminated text buffer that `core::fmt` can write into;
/// output beyond its capacity is cut (the last byte stays NUL).
pub struct TextBuf<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> TextBuf<N> {
    /// An empty buffer.
    pub fn new() -> Self {
        Self {
            buf: [0; N],
            len: 0,
        }
    }

    /// The bytes, NUL-padded.
    pub fn bytes(&self) -> [u8; N] {
        self.buf
    }

    /// The text written.
    #[cfg_attr(CONFIG_RUST, expect(dead_code, reason = "used by the host tests"))]
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl<const N: usize> Default for TextBuf<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> core::fmt::Write for TextBuf<N> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for b in s.bytes() {
            if self.len + 1 >= N {
                return Err(core::fmt::Error);
            }
            self.buf[self.len] = b;
            self.len += 1;
        }
        Ok(())
    }
}

/// `fw_ver` text: "%d.%d.%04d" as upstream's `get_dev_fw_str`.
pub fn fw_ver_text(fw: (u16, u16, u16)) -> TextBuf<32> {
    use core::fmt::Write;
    let mut t = TextBuf::new();
    // At most 5 + 1 + 5 + 1 + 5 characters: always fits.
    let _ = write!(t, "{}.{}.{:04}", fw.0, fw.1, fw.2);
    t
}

/// `hca_type` text: "MT" and the PCI device id in decimal, as upstream's
/// `hca_type_show` ("MT4119" for a ConnectX-5, device 0x1017).
pub fn hca_type_text(device_id: u16) -> TextBuf<64> {
    use core::fmt::Write;
    let mut t = TextBuf::new();
    let _ = write!(t, "MT{}", device_id);
    t
}

/// `board_id` text: the PSID QUERY_ADAPTER returned (printable ASCII, NUL-padded,
/// already filtered by the command), up to its first NUL.
pub fn board_id_text(psid: &[u8; 16]) -> TextBuf<64> {
    let mut t = TextBuf::new();
    let n = psid.iter().position(|b| *b == 0).unwrap_or(psid.len());
    t.buf[..n].copy_from_slice(&psid[..n]);
    t.len = n;
    t
}
