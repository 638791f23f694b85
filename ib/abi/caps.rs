// SPDX-License-Identifier: GPL-2.0

//! The device side of each check, read from the general HCA capabilities
//! (`cmd_hca_cap`, [`GeneralCaps`]) and what the host contributes, so that a verb
//! never maps a cap field by hand.

use super::cq::CqCaps;
use super::device::QueryDeviceCaps;
use super::qp::QpCaps;
use super::srq::SrqCaps;
use super::ucontext::{UctxDevCaps, UctxRespCaps};
use crate::cmd::commands::GeneralCaps;
use crate::ifc::caps::cmd_hca_cap as c;

/// What the host and the driver contribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostInfo {
    /// log2 of the host page size (`PAGE_SHIFT`).
    pub page_shift: u32,
    /// `cache_line_size()`.
    pub cache_line_size: u32,
    /// Write combining works on this host and device (upstream `mlx5_wc_support_get`).
    pub wc: bool,
    /// The driver serves DEVX contexts (with cap `log_max_uctx`).
    pub devx: bool,
}

/// Values of the alloc_ucontext response that are not HCA caps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UctxExtra {
    /// Ports of the device.
    pub num_ports: u16,
    /// The dump-fill mkey (QUERY_SPECIAL_CONTEXTS), reported with cap `dump_fill_mkey`.
    pub dump_fill_mkey: u32,
    /// Ethernet only: the minimum inline mode.
    pub eth_min_inline: Option<u8>,
    /// A clock info page exists.
    pub clock_info: bool,
    /// Real-time timestamps on SQ, RQ and RoCE QPs (caps `sq_ts_format`,
    /// `rq_ts_format` and RoCE `qp_ts_format`).
    pub real_time_ts: bool,
}

impl UctxDevCaps {
    /// From the current general caps.
    pub fn from_caps(caps: &GeneralCaps, host: &HostInfo) -> Self {
        Self {
            devx: host.devx && caps.get(c::LOG_MAX_UCTX) != 0,
            uar_4k: caps.get(c::UAR_4K),
            page_shift: host.page_shift,
            cqe_version: caps.get(c::CQE_VERSION),
        }
    }
}

impl UctxRespCaps {
    /// From the current general caps.
    pub fn from_caps(caps: &GeneralCaps, host: &HostInfo, extra: &UctxExtra) -> Self {
        Self {
            log_max_qp: caps.get(c::LOG_MAX_QP),
            wc: host.wc,
            log_bf_reg_size: caps.get(c::LOG_BF_REG_SIZE),
            cache_line_size: host.cache_line_size,
            max_wqe_sz_sq: caps.get(c::MAX_WQE_SZ_SQ),
            max_wqe_sz_rq: caps.get(c::MAX_WQE_SZ_RQ),
            log_max_qp_sz: caps.get(c::LOG_MAX_QP_SZ),
            log_max_srq_sz: caps.get(c::LOG_MAX_SRQ_SZ),
            uar_4k: caps.get(c::UAR_4K),
            num_of_uars_per_page: caps.get(c::NUM_OF_UARS_PER_PAGE),
            num_ports: extra.num_ports,
            dump_fill_mkey: caps.get(c::DUMP_FILL_MKEY).then_some(extra.dump_fill_mkey),
            eth_min_inline: extra.eth_min_inline,
            clock_info: extra.clock_info,
            page_shift: host.page_shift,
            // ECE is not implemented (create_qp's `ece_options` is not written to the
            // device): not advertised whatever cap `ece_support` says, so libmlx5
            // offers no ECE, and a request that carries options anyway is answered 0,
            // as upstream answers without the cap.
            ece: false,
            real_time_ts: extra.real_time_ts,
            drain_sigerr: caps.get(c::DRAIN_SIGERR),
        }
    }
}

impl CqCaps {
    /// From the current general caps.
    pub fn from_caps(caps: &GeneralCaps, page_shift: u32) -> Self {
        Self {
            log_max_cq_sz: caps.get(c::LOG_MAX_CQ_SZ),
            cqe_compression: caps.get(c::CQE_COMPRESSION),
            cqe_compression_128: caps.get(c::CQE_COMPRESSION_128),
            mini_cqe_resp_stride_index: caps.get(c::MINI_CQE_RESP_STRIDE_INDEX),
            cqe_128_always: caps.get(c::CQE_128_ALWAYS),
            cq_resize: caps.get(c::CQ_RESIZE),
            page_shift,
        }
    }
}

impl QpCaps {
    /// From the current general caps.
    pub fn from_caps(caps: &GeneralCaps, page_shift: u32) -> Self {
        Self {
            log_max_qp_sz: caps.get(c::LOG_MAX_QP_SZ),
            max_wqe_sz_sq: u32::from(caps.get(c::MAX_WQE_SZ_SQ)),
            max_wqe_sz_rq: u32::from(caps.get(c::MAX_WQE_SZ_RQ)),
            sctr_data_cqe: caps.get(c::SCTR_DATA_CQE),
            qp_packet_based: caps.get(c::QP_PACKET_BASED),
            page_shift,
        }
    }
}

impl SrqCaps {
    /// From the current general caps.
    pub fn from_caps(caps: &GeneralCaps, page_shift: u32) -> Self {
        Self {
            log_max_srq_sz: caps.get(c::LOG_MAX_SRQ_SZ),
            max_wqe_sz_rq: u32::from(caps.get(c::MAX_WQE_SZ_RQ)),
            page_shift,
        }
    }
}

impl QueryDeviceCaps {
    /// From the current general caps. Packet pacing (QoS caps) and out-of-order
    /// placement (GENERAL_2 caps) are not in them: the caller adds them when it
    /// reads those capability types.
    pub fn from_caps(caps: &GeneralCaps) -> Self {
        Self {
            cqe_compression: caps.get(c::CQE_COMPRESSION),
            cqe_compression_max_num: u32::from(caps.get(c::CQE_COMPRESSION_MAX_NUM)),
            mini_cqe_resp_stride_index: caps.get(c::MINI_CQE_RESP_STRIDE_INDEX),
            packet_pacing: None,
            cqe_compression_128: caps.get(c::CQE_COMPRESSION_128),
            cqe_128_always: caps.get(c::CQE_128_ALWAYS),
            qp_packet_based: caps.get(c::QP_PACKET_BASED),
            ooo_dp: false,
            raw_support: true,
            striding_rq: caps.get(c::STRIDING_RQ),
            ext_stride_num_range: caps.get(c::EXT_STRIDE_NUM_RANGE),
            log_max_dci_stream_channels: caps.get(c::LOG_MAX_DCI_STREAM_CHANNELS),
            log_max_dci_errored_streams: caps.get(c::LOG_MAX_DCI_ERRORED_STREAMS),
        }
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_abi_caps))]
mod tests {
    use super::*;

    #[test]
    fn caps_are_read_from_their_fields() {
        let mut g = GeneralCaps::from_bytes(&[0u8; 256]).unwrap();
        g.set(c::LOG_MAX_QP, 18).unwrap();
        g.set(c::LOG_MAX_UCTX, 4).unwrap();
        g.set(c::UAR_4K, true).unwrap();
        g.set(c::CQE_VERSION, 1).unwrap();
        g.set(c::MAX_WQE_SZ_SQ, 1024).unwrap();
        g.set(c::LOG_MAX_CQ_SZ, 22).unwrap();
        g.set(c::CQ_RESIZE, true).unwrap();
        g.set(c::DUMP_FILL_MKEY, true).unwrap();
        let host = HostInfo {
            page_shift: 12,
            cache_line_size: 64,
            wc: true,
            devx: false,
        };
        let u = UctxDevCaps::from_caps(&g, &host);
        assert_eq!((u.devx, u.uar_4k, u.cqe_version), (false, true, 1));
        let with_devx = HostInfo { devx: true, ..host };
        assert!(UctxDevCaps::from_caps(&g, &with_devx).devx);
        let extra = UctxExtra {
            dump_fill_mkey: 7,
            ..Default::default()
        };
        let r = UctxRespCaps::from_caps(&g, &host, &extra);
        assert_eq!((r.log_max_qp, r.max_wqe_sz_sq), (18, 1024));
        assert_eq!(r.dump_fill_mkey, Some(7));
        let cq = CqCaps::from_caps(&g, 12);
        assert_eq!((cq.log_max_cq_sz, cq.cq_resize), (22, true));
        assert_eq!(QpCaps::from_caps(&g, 12).max_wqe_sz_sq, 1024);
        g.set(c::DUMP_FILL_MKEY, false).unwrap();
        g.set(c::LOG_MAX_UCTX, 0).unwrap();
        assert_eq!(
            UctxRespCaps::from_caps(&g, &host, &extra).dump_fill_mkey,
            None
        );
        assert!(!UctxDevCaps::from_caps(&g, &with_devx).devx);
        // ECE is not advertised to user space, even by a device that has it.
        g.set(c::ECE_SUPPORT, true).unwrap();
        assert!(!UctxRespCaps::from_caps(&g, &host, &extra).ece);
    }
}
