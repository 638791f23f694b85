// SPDX-License-Identifier: GPL-2.0

//! The driver part of query_device (QUERY_DEVICE_EX), as upstream
//! `mlx5_ib_query_device` (`main.c`) fills it.
//!
//! The request carries no driver data (only zeros accepted, `EOPNOTSUPP`); a response
//! buffer shorter than `comp_mask` + `response_length` (8 bytes) is `EINVAL`, a
//! missing one (0 bytes) gets nothing. Each block of the response is reported only
//! when the user's buffer holds it whole, and `response_length` counts the blocks
//! reported (not the buffer), which is how libmlx5 tells which ones the kernel knows.
//! The Ethernet-only blocks (TSO, RSS, multi-packet WQEs, software parsing, tunnel
//! offloads) are reported empty: the link layer is InfiniBand.

use super::consts::{
    CQE_RES_FORMAT_CSUM, CQE_RES_FORMAT_CSUM_STRIDX, CQE_RES_FORMAT_HASH,
    EXT_MIN_SINGLE_WQE_LOG_NUM_STRIDES, IB_PP_SUPPORT_BURST, IB_QPT_RAW_PACKET, IB_QPT_UC,
    IB_QPT_UD, MAX_SINGLE_STRIDE_LOG_NUM_BYTES, MAX_SINGLE_WQE_LOG_NUM_STRIDES,
    MIN_SINGLE_STRIDE_LOG_NUM_BYTES, MIN_SINGLE_WQE_LOG_NUM_STRIDES,
    QUERY_DEV_RESP_FLAGS_CQE_128B_COMP, QUERY_DEV_RESP_FLAGS_CQE_128B_PAD,
    QUERY_DEV_RESP_FLAGS_OOO_DP, QUERY_DEV_RESP_FLAGS_SCAT2CQE_DCT,
    QUERY_DEV_RESP_PACKET_BASED_CREDIT_MODE,
};
use super::error::{Reason, UabiError};
use super::layout::QueryDeviceResp;
use super::udata;
use core::mem::{offset_of, size_of};

/// Packet pacing capabilities (the QoS caps).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketPacing {
    /// Raw packet QPs can be paced (cap `packet_pacing` and raw packet support).
    pub raw: bool,
    /// Cap `packet_pacing_req_ud`.
    pub ud: bool,
    /// Cap `packet_pacing_req_uc`.
    pub uc: bool,
    /// Cap `packet_pacing_min_rate`.
    pub min_rate: u32,
    /// Cap `packet_pacing_max_rate`.
    pub max_rate: u32,
    /// Caps `packet_pacing_burst_bound` and `packet_pacing_typical_size`.
    pub burst: bool,
}

/// Device values the response reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryDeviceCaps {
    /// Cap `cqe_compression`.
    pub cqe_compression: bool,
    /// Cap `cqe_compression_max_num`.
    pub cqe_compression_max_num: u32,
    /// Cap `mini_cqe_resp_stride_index`.
    pub mini_cqe_resp_stride_index: bool,
    /// Cap `qos` with its packet pacing caps (`None` without cap `qos`).
    pub packet_pacing: Option<PacketPacing>,
    /// Cap `cqe_compression_128`.
    pub cqe_compression_128: bool,
    /// Cap `cqe_128_always`.
    pub cqe_128_always: bool,
    /// Cap `qp_packet_based`.
    pub qp_packet_based: bool,
    /// Out-of-order data placement can be forced (GENERAL_2 `dp_ordering_force` and
    /// one of the `dp_ordering_ooo_all_*` caps).
    pub ooo_dp: bool,
    /// Raw packet QPs are available (upstream `!mlx5_core_mp_enabled`).
    pub raw_support: bool,
    /// Cap `striding_rq`.
    pub striding_rq: bool,
    /// Cap `ext_stride_num_range`.
    pub ext_stride_num_range: bool,
    /// Cap `log_max_dci_stream_channels`.
    pub log_max_dci_stream_channels: u8,
    /// Cap `log_max_dci_errored_streams`.
    pub log_max_dci_errored_streams: u8,
}

/// Whether a buffer of `outlen` bytes holds the response up to the end of the
/// field at `off` of `size` bytes.
fn fits(outlen: usize, off: usize, size: usize) -> bool {
    off + size <= outlen
}

/// Builds the response for a user buffer of `outlen` bytes; `inbuf` is the driver
/// request (must be empty). `Ok(None)` when the user gave no buffer.
///
/// # Errors
///
/// `EINVAL` when `outlen` is 1 to 7 (shorter than the response's first two fields);
/// `EOPNOTSUPP` when `inbuf` has a non-zero byte (`ib_is_udata_in_empty`).
pub fn query_device_response(
    caps: &QueryDeviceCaps,
    inbuf: &[u8],
    outlen: usize,
) -> Result<Option<QueryDeviceResp>, UabiError> {
    let head = size_of::<u32>() * 2;
    if outlen != 0 && outlen < head {
        return Err(UabiError::inval(Reason::BadLength {
            len: outlen,
            min: head,
        }));
    }
    udata::check_in_empty(inbuf)?;
    let mut r = QueryDeviceResp::default();
    let mut len = head;
    macro_rules! room {
        ($f:ident) => {
            fits(outlen, offset_of!(QueryDeviceResp, $f), size_of_val(&r.$f))
        };
    }
    macro_rules! count {
        ($f:ident) => {
            len += size_of_val(&r.$f)
        };
    }
    // InfiniBand: the TSO and RSS blocks are counted, and left empty.
    if room!(tso_caps) {
        count!(tso_caps);
    }
    if room!(rss_caps) {
        count!(rss_caps);
    }
    if room!(cqe_comp_caps) {
        count!(cqe_comp_caps);
        if caps.cqe_compression {
            r.cqe_comp_caps.max_num = caps.cqe_compression_max_num;
            let mut f = u32::from(CQE_RES_FORMAT_HASH | CQE_RES_FORMAT_CSUM);
            if caps.mini_cqe_resp_stride_index {
                f |= u32::from(CQE_RES_FORMAT_CSUM_STRIDX);
            }
            r.cqe_comp_caps.supported_format = f;
        }
    }
    if room!(packet_pacing_caps) {
        if let Some(pp) = caps.packet_pacing {
            let p = &mut r.packet_pacing_caps;
            for (on, qpt) in [
                (pp.raw, IB_QPT_RAW_PACKET),
                (pp.ud, IB_QPT_UD),
                (pp.uc, IB_QPT_UC),
            ] {
                if on {
                    p.supported_qpts |= 1 << qpt;
                }
            }
            if p.supported_qpts != 0 {
                p.qp_rate_limit_max = pp.max_rate;
                p.qp_rate_limit_min = pp.min_rate;
                if pp.burst {
                    p.cap_flags |= IB_PP_SUPPORT_BURST;
                }
            }
        }
        count!(packet_pacing_caps);
    }
    if room!(mlx5_ib_support_multi_pkt_send_wqes) {
        count!(mlx5_ib_support_multi_pkt_send_wqes);
    }
    if room!(flags) {
        count!(flags);
        if caps.cqe_compression_128 {
            r.flags |= QUERY_DEV_RESP_FLAGS_CQE_128B_COMP;
        }
        if caps.cqe_128_always {
            r.flags |= QUERY_DEV_RESP_FLAGS_CQE_128B_PAD;
        }
        if caps.qp_packet_based {
            r.flags |= QUERY_DEV_RESP_PACKET_BASED_CREDIT_MODE;
        }
        r.flags |= QUERY_DEV_RESP_FLAGS_SCAT2CQE_DCT;
        if caps.ooo_dp {
            r.flags |= QUERY_DEV_RESP_FLAGS_OOO_DP;
        }
    }
    if room!(sw_parsing_caps) {
        count!(sw_parsing_caps);
    }
    if room!(striding_rq_caps) && caps.raw_support {
        count!(striding_rq_caps);
        if caps.striding_rq {
            let s = &mut r.striding_rq_caps;
            s.min_single_stride_log_num_of_bytes = MIN_SINGLE_STRIDE_LOG_NUM_BYTES;
            s.max_single_stride_log_num_of_bytes = MAX_SINGLE_STRIDE_LOG_NUM_BYTES;
            s.min_single_wqe_log_num_of_strides = if caps.ext_stride_num_range {
                EXT_MIN_SINGLE_WQE_LOG_NUM_STRIDES
            } else {
                MIN_SINGLE_WQE_LOG_NUM_STRIDES
            };
            s.max_single_wqe_log_num_of_strides = MAX_SINGLE_WQE_LOG_NUM_STRIDES;
            s.supported_qpts = 1 << IB_QPT_RAW_PACKET;
        }
    }
    if room!(tunnel_offloads_caps) {
        count!(tunnel_offloads_caps);
    }
    if room!(dci_streams_caps) {
        count!(dci_streams_caps);
        r.dci_streams_caps.max_log_num_concurent = caps.log_max_dci_stream_channels;
        r.dci_streams_caps.max_log_num_errored = caps.log_max_dci_errored_streams;
    }
    if room!(reserved) {
        count!(reserved);
    }
    if room!(reg_c0) {
        // Only set with an eswitch in offloads mode, which this driver has not.
        count!(reg_c0);
    }
    r.response_length = u32::try_from(len).unwrap_or(u32::MAX);
    Ok((outlen != 0).then_some(r))
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_abi_device))]
mod tests {
    use super::*;
    use crate::errno::Errno;

    #[test]
    fn lengths_count_whole_blocks() {
        let caps = QueryDeviceCaps {
            raw_support: true,
            ..Default::default()
        };
        let full = size_of::<QueryDeviceResp>();
        let r = query_device_response(&caps, &[], full).unwrap().unwrap();
        assert_eq!(r.response_length as usize, full);
        assert_eq!(r.flags, QUERY_DEV_RESP_FLAGS_SCAT2CQE_DCT);
        // Without raw packet support the striding RQ block is not counted.
        let noraw = QueryDeviceCaps::default();
        let r = query_device_response(&noraw, &[], full).unwrap().unwrap();
        assert_eq!(r.response_length as usize, full - 24);
        // A buffer ending inside the RSS block: head + TSO only.
        let r = query_device_response(&caps, &[], 20).unwrap().unwrap();
        assert_eq!(r.response_length, 16);
        assert_eq!(query_device_response(&caps, &[], 0), Ok(None));
        let e = query_device_response(&caps, &[], 7).unwrap_err();
        assert_eq!(e.errno, Errno::EINVAL);
        let e = query_device_response(&caps, &[0, 1], 100).unwrap_err();
        assert_eq!(e.errno, Errno::EOPNOTSUPP);
        assert!(query_device_response(&caps, &[0; 9], 100).is_ok());
    }

    #[test]
    fn caps_reported() {
        let caps = QueryDeviceCaps {
            cqe_compression: true,
            cqe_compression_max_num: 64,
            mini_cqe_resp_stride_index: true,
            packet_pacing: Some(PacketPacing {
                ud: true,
                min_rate: 1,
                max_rate: 100,
                burst: true,
                ..Default::default()
            }),
            cqe_128_always: true,
            raw_support: true,
            striding_rq: true,
            log_max_dci_stream_channels: 4,
            ..Default::default()
        };
        let r = query_device_response(&caps, &[], 200).unwrap().unwrap();
        assert_eq!(
            (r.cqe_comp_caps.max_num, r.cqe_comp_caps.supported_format),
            (64, 7)
        );
        let pp = r.packet_pacing_caps;
        assert_eq!(
            (
                pp.supported_qpts,
                pp.qp_rate_limit_min,
                pp.qp_rate_limit_max
            ),
            (1 << 4, 1, 100)
        );
        assert_eq!(pp.cap_flags, IB_PP_SUPPORT_BURST);
        assert_eq!(
            r.flags,
            QUERY_DEV_RESP_FLAGS_CQE_128B_PAD | QUERY_DEV_RESP_FLAGS_SCAT2CQE_DCT
        );
        assert_eq!(r.striding_rq_caps.min_single_wqe_log_num_of_strides, 9);
        assert_eq!(r.dci_streams_caps.max_log_num_concurent, 4);
        // No pacing QP type: no rates either.
        let none = QueryDeviceCaps {
            packet_pacing: Some(PacketPacing {
                max_rate: 100,
                ..Default::default()
            }),
            ..caps
        };
        let r = query_device_response(&none, &[], 200).unwrap().unwrap();
        assert_eq!(r.packet_pacing_caps.qp_rate_limit_max, 0);
    }
}
