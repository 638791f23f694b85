// SPDX-License-Identifier: GPL-2.0

//! The work completion status of an error CQE, as upstream `mlx5_handle_error_cqe`
//! (`cq.c`) maps the CQE's syndrome (`ifc::wqe::vals::SYNDROME_*`) to
//! `enum ib_wc_status`; the vendor syndrome goes to `wc->vendor_err` unchanged.
//!
//! Pure `core` code, host-tested and run as a KUnit suite.

use crate::ifc::wqe::vals;

/// `enum ib_wc_status` (`include/rdma/ib_verbs.h`), the members a completion of
/// this provider can carry. The kernel glue maps each to the kernel's constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WcStatus {
    /// `IB_WC_SUCCESS`.
    Success,
    /// `IB_WC_LOC_LEN_ERR`.
    LocLenErr,
    /// `IB_WC_LOC_QP_OP_ERR`.
    LocQpOpErr,
    /// `IB_WC_LOC_PROT_ERR`.
    LocProtErr,
    /// `IB_WC_WR_FLUSH_ERR`.
    WrFlushErr,
    /// `IB_WC_MW_BIND_ERR`.
    MwBindErr,
    /// `IB_WC_BAD_RESP_ERR`.
    BadRespErr,
    /// `IB_WC_LOC_ACCESS_ERR`.
    LocAccessErr,
    /// `IB_WC_REM_INV_REQ_ERR`.
    RemInvReqErr,
    /// `IB_WC_REM_ACCESS_ERR`.
    RemAccessErr,
    /// `IB_WC_REM_OP_ERR`.
    RemOpErr,
    /// `IB_WC_RETRY_EXC_ERR`.
    RetryExcErr,
    /// `IB_WC_RNR_RETRY_EXC_ERR`.
    RnrRetryExcErr,
    /// `IB_WC_REM_ABORT_ERR`.
    RemAbortErr,
    /// `IB_WC_GENERAL_ERR`.
    GeneralErr,
}

/// The status of an error CQE's syndrome: upstream's table, `IB_WC_GENERAL_ERR` for
/// any other value (its `default:`).
pub fn status_of_syndrome(syndrome: u8) -> WcStatus {
    match syndrome {
        vals::SYNDROME_LOCAL_LENGTH_ERR => WcStatus::LocLenErr,
        vals::SYNDROME_LOCAL_QP_OP_ERR => WcStatus::LocQpOpErr,
        vals::SYNDROME_LOCAL_PROT_ERR => WcStatus::LocProtErr,
        vals::SYNDROME_WR_FLUSH_ERR => WcStatus::WrFlushErr,
        vals::SYNDROME_MW_BIND_ERR => WcStatus::MwBindErr,
        vals::SYNDROME_BAD_RESP_ERR => WcStatus::BadRespErr,
        vals::SYNDROME_LOCAL_ACCESS_ERR => WcStatus::LocAccessErr,
        vals::SYNDROME_REMOTE_INVAL_REQ_ERR => WcStatus::RemInvReqErr,
        vals::SYNDROME_REMOTE_ACCESS_ERR => WcStatus::RemAccessErr,
        vals::SYNDROME_REMOTE_OP_ERR => WcStatus::RemOpErr,
        vals::SYNDROME_TRANSPORT_RETRY_EXC_ERR => WcStatus::RetryExcErr,
        vals::SYNDROME_RNR_RETRY_EXC_ERR => WcStatus::RnrRetryExcErr,
        vals::SYNDROME_REMOTE_ABORTED_ERR => WcStatus::RemAbortErr,
        _ => WcStatus::GeneralErr,
    }
}

/// Whether upstream dumps the CQE for this syndrome (`dump = 0` for flush, transport
/// retry and RNR retry exceeded: expected in normal operation).
pub fn syndrome_is_dumped(syndrome: u8) -> bool {
    !matches!(
        syndrome,
        vals::SYNDROME_WR_FLUSH_ERR
            | vals::SYNDROME_TRANSPORT_RETRY_EXC_ERR
            | vals::SYNDROME_RNR_RETRY_EXC_ERR
    )
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_cq_wc_status))]
mod tests {
    use super::*;

    /// Upstream `mlx5_handle_error_cqe`'s table, syndrome numbers from `cq.h`
    /// (`MLX5_CQE_SYNDROME_*`) written out rather than through `vals`.
    #[test]
    fn syndrome_table_is_upstreams() {
        let want = [
            (0x01, WcStatus::LocLenErr),
            (0x02, WcStatus::LocQpOpErr),
            (0x04, WcStatus::LocProtErr),
            (0x05, WcStatus::WrFlushErr),
            (0x06, WcStatus::MwBindErr),
            (0x10, WcStatus::BadRespErr),
            (0x11, WcStatus::LocAccessErr),
            (0x12, WcStatus::RemInvReqErr),
            (0x13, WcStatus::RemAccessErr),
            (0x14, WcStatus::RemOpErr),
            (0x15, WcStatus::RetryExcErr),
            (0x16, WcStatus::RnrRetryExcErr),
            (0x22, WcStatus::RemAbortErr),
        ];
        for (s, st) in want {
            assert_eq!(status_of_syndrome(s), st);
        }
        // Every other value is upstream's `default:`.
        for s in 0..=u8::MAX {
            if !want.iter().any(|(w, _)| *w == s) {
                assert_eq!(status_of_syndrome(s), WcStatus::GeneralErr);
            }
        }
    }

    #[test]
    fn flush_and_retries_are_not_dumped() {
        assert!(!syndrome_is_dumped(0x05));
        assert!(!syndrome_is_dumped(0x15));
        assert!(!syndrome_is_dumped(0x16));
        assert!(syndrome_is_dumped(0x01));
        assert!(syndrome_is_dumped(0x22));
        assert!(syndrome_is_dumped(0x77));
    }
}
