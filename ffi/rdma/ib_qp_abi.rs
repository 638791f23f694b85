// SPDX-License-Identifier: GPL-2.0

//! The plain structures the QP shim (`ffi/rdma/ib_qp.c`) and the Rust QP verbs exchange,
//! mirrors of the QP section of `mlx5rs_ffi.h` (both sides check the same sizes):
//! the C side copies `struct ib_qp_attr` / `struct ib_qp_init_attr` into them and
//! back, so Rust never sees a core structure. A path's address vector is the address
//! handles' [`AhAttr`] (one form of `struct rdma_ah_attr` for both).
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use zerocopy_derive::{FromBytes, Immutable, IntoBytes, KnownLayout};

use super::ib_ah_abi::AhAttr;

/// `struct mlx5rs_ib_qp_attr`: the fields of `struct ib_qp_attr` the provider reads
/// (modify_qp) or fills (query_qp), enums as their values. For modify_qp the shim has
/// resolved `cur_qp_state` and `qp_state` (the QP's state where the mask names none).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct QpAttr {
    /// `enum ib_qp_attr_mask` bits.
    pub attr_mask: u32,
    /// `enum ib_qp_state`: the state to move to.
    pub qp_state: u32,
    /// `enum ib_qp_state`: the state it is in.
    pub cur_qp_state: u32,
    /// `enum ib_mtu`.
    pub path_mtu: u32,
    /// `enum ib_mig_state`.
    pub path_mig_state: u32,
    /// Q_Key.
    pub qkey: u32,
    /// Receive PSN.
    pub rq_psn: u32,
    /// Send PSN.
    pub sq_psn: u32,
    /// Remote QP number.
    pub dest_qp_num: u32,
    /// `IB_ACCESS_REMOTE_*`.
    pub qp_access_flags: u32,
    /// `cap.max_send_wr`.
    pub max_send_wr: u32,
    /// `cap.max_recv_wr`.
    pub max_recv_wr: u32,
    /// `cap.max_send_sge`.
    pub max_send_sge: u32,
    /// `cap.max_recv_sge`.
    pub max_recv_sge: u32,
    /// `cap.max_inline_data`.
    pub max_inline_data: u32,
    /// P_Key index.
    pub pkey_index: u16,
    /// Alternate path P_Key index.
    pub alt_pkey_index: u16,
    /// `en_sqd_async_notify`.
    pub en_sqd_async_notify: u8,
    /// `sq_draining`.
    pub sq_draining: u8,
    /// Outstanding RDMA reads / atomics as initiator.
    pub max_rd_atomic: u8,
    /// Outstanding RDMA reads / atomics as responder.
    pub max_dest_rd_atomic: u8,
    /// Minimum RNR NAK timer.
    pub min_rnr_timer: u8,
    /// Port.
    pub port_num: u8,
    /// Local ACK timeout.
    pub timeout: u8,
    /// Retry count.
    pub retry_cnt: u8,
    /// RNR retry.
    pub rnr_retry: u8,
    /// Alternate path port.
    pub alt_port_num: u8,
    /// Alternate path ACK timeout.
    pub alt_timeout: u8,
    /// query_qp: every send WR signals (`IB_SIGNAL_ALL_WR`).
    pub sq_sig_all: u8,
    /// Primary path (the one plain address vector, [`super::ib_ah_abi`]).
    pub ah_attr: AhAttr,
    /// Alternate path.
    pub alt_ah_attr: AhAttr,
}

/// `struct mlx5rs_ib_qp_init`: what create_qp gives the provider (`struct
/// ib_qp_init_attr` and the numbers of the objects it names, 0 for none).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable,
)]
#[repr(C)]
pub struct QpInit {
    /// `enum ib_qp_type`.
    pub qp_type: u32,
    /// `create_flags`.
    pub create_flags: u32,
    /// PD number.
    pub pdn: u32,
    /// Send CQ number (`has_send_cq`).
    pub send_cqn: u32,
    /// Receive CQ number (`has_recv_cq`).
    pub recv_cqn: u32,
    /// SRQ number (`has_srq`).
    pub srqn: u32,
    /// `cap.max_send_wr` (updated to what the QP got, kernel QPs).
    pub max_send_wr: u32,
    /// `cap.max_recv_wr`.
    pub max_recv_wr: u32,
    /// `cap.max_send_sge`.
    pub max_send_sge: u32,
    /// `cap.max_recv_sge`.
    pub max_recv_sge: u32,
    /// `cap.max_inline_data`.
    pub max_inline_data: u32,
    /// Port (QP0 / QP1).
    pub port_num: u32,
    /// A send CQ was given.
    pub has_send_cq: u8,
    /// A receive CQ was given.
    pub has_recv_cq: u8,
    /// An SRQ was given.
    pub has_srq: u8,
    /// `sq_sig_type` is `IB_SIGNAL_ALL_WR`.
    pub sq_sig_all: u8,
    /// The send CQ has 128-byte CQEs (scatter-to-CQE size).
    pub send_cqe_128: u8,
    /// The receive CQ has 128-byte CQEs.
    pub recv_cqe_128: u8,
    /// Padding.
    pub rsvd: [u8; 2],
    /// XRC_TGT: the XRC domain the core names (`attr->xrcd`).
    pub xrcdn: u32,
    /// XRC QPs: the device resources' PD (upstream `devr->p0`), 0 for other types.
    pub devr_pdn: u32,
    /// XRC QPs: the device resources' CQ (upstream `devr->c0`).
    pub devr_cqn: u32,
    /// XRC QPs: the device resources' XRC SRQ (upstream `devr->s0`).
    pub devr_srqn: u32,
    /// XRC QPs: the device resources' XRC domain (upstream `devr->xrcdn1`).
    pub devr_xrcdn: u32,
    /// XRC QPs: the device resources' basic SRQ (upstream `devr->s1`).
    pub devr_srqn1: u32,
    /// XRC QPs: the device resources' other XRC domain (upstream `devr->xrcdn0`).
    pub devr_xrcdn0: u32,
}

// The sizes `mlx5rs_ffi.h` declares (MLX5RS_IB_QP_ATTR_SIZE, MLX5RS_IB_QP_INIT_SIZE),
// which ffi/rdma/ib_qp.c checks on its side.
const _: () = assert!(core::mem::size_of::<QpAttr>() == 156);
const _: () = assert!(core::mem::size_of::<QpInit>() == 84);
