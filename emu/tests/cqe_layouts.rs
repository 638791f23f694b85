//! The CQE structures of `ifc/wqe.rs` against the kernel's `include/linux/mlx5/device.h`
//! (`struct mlx5_cqe64`, `struct mlx5_err_cqe`) member by member in declaration order
//! (the parser of `common/c_struct.rs`), so a reordered or resized member fails; and
//! the CQE opcodes and syndromes against `cq.h` / `mlx5_ifc.h`.

use mlx5_emu::ifc::wqe::{vals, Cqe64, ErrCqe};
use std::mem::{offset_of, size_of};

#[path = "common/c_struct.rs"]
mod c_struct;

use c_struct::{check, header, value};

#[test]
fn cqe64_matches_device_h() {
    let text = header("MLX5_DEVICE_H", "include/linux/mlx5/device.h");
    let ours = [
        (
            "tls_outer_l3_tunneled",
            offset_of!(Cqe64, tls_outer_l3_tunneled),
            1,
        ),
        ("rsvd0", offset_of!(Cqe64, rsvd0), 1),
        ("wqe_id", offset_of!(Cqe64, wqe_id), 2),
        ("", offset_of!(Cqe64, lro_shampo), 8),
        ("rss_hash_result", offset_of!(Cqe64, rss_hash_result), 4),
        ("rss_hash_type", offset_of!(Cqe64, rss_hash_type), 1),
        ("ml_path", offset_of!(Cqe64, ml_path), 1),
        ("rsvd20", offset_of!(Cqe64, rsvd20), 2),
        ("check_sum", offset_of!(Cqe64, check_sum), 2),
        ("slid", offset_of!(Cqe64, slid), 2),
        ("flags_rqpn", offset_of!(Cqe64, flags_rqpn), 4),
        ("hds_ip_ext", offset_of!(Cqe64, hds_ip_ext), 1),
        ("l4_l3_hdr_type", offset_of!(Cqe64, l4_l3_hdr_type), 1),
        ("vlan_info", offset_of!(Cqe64, vlan_info), 2),
        ("srqn", offset_of!(Cqe64, srqn), 4),
        ("", offset_of!(Cqe64, imm_inval_pkey), 4),
        ("rsvd40", offset_of!(Cqe64, rsvd40), 4),
        ("byte_cnt", offset_of!(Cqe64, byte_cnt), 4),
        ("timestamp_h", offset_of!(Cqe64, timestamp_h), 4),
        ("timestamp_l", offset_of!(Cqe64, timestamp_l), 4),
        ("sop_drop_qpn", offset_of!(Cqe64, sop_drop_qpn), 4),
        ("wqe_counter", offset_of!(Cqe64, wqe_counter), 2),
        ("", offset_of!(Cqe64, signature), 1),
        ("op_own", offset_of!(Cqe64, op_own), 1),
    ];
    assert_eq!(check(&text, "mlx5_cqe64", &ours), 64);
    assert_eq!(size_of::<Cqe64>(), 64);
}

#[test]
fn err_cqe_matches_device_h() {
    let text = header("MLX5_DEVICE_H", "include/linux/mlx5/device.h");
    let ours = [
        ("rsvd0", offset_of!(ErrCqe, rsvd0), 32),
        ("srqn", offset_of!(ErrCqe, srqn), 4),
        ("rsvd1", offset_of!(ErrCqe, rsvd1), 18),
        ("vendor_err_synd", offset_of!(ErrCqe, vendor_err_synd), 1),
        ("syndrome", offset_of!(ErrCqe, syndrome), 1),
        ("s_wqe_opcode_qpn", offset_of!(ErrCqe, s_wqe_opcode_qpn), 4),
        ("wqe_counter", offset_of!(ErrCqe, wqe_counter), 2),
        ("signature", offset_of!(ErrCqe, signature), 1),
        ("op_own", offset_of!(ErrCqe, op_own), 1),
    ];
    assert_eq!(check(&text, "mlx5_err_cqe", &ours), 64);
    assert_eq!(size_of::<ErrCqe>(), 64);
}

#[test]
fn cqe_opcodes_and_syndromes_match_cq_h() {
    let cq = header("MLX5_CQ_H", "include/linux/mlx5/cq.h");
    let ifc = header("MLX5_IFC_H", "include/linux/mlx5/mlx5_ifc.h");
    for (name, v) in [
        ("MLX5_CQE_OWNER_MASK", vals::CQE_OWNER_MASK),
        ("MLX5_CQE_REQ", vals::CQE_REQ),
        ("MLX5_CQE_RESP_WR_IMM", vals::CQE_RESP_WR_IMM),
        ("MLX5_CQE_RESP_SEND", vals::CQE_RESP_SEND),
        ("MLX5_CQE_RESP_SEND_IMM", vals::CQE_RESP_SEND_IMM),
        ("MLX5_CQE_RESP_SEND_INV", vals::CQE_RESP_SEND_INV),
        ("MLX5_CQE_RESIZE_CQ", vals::CQE_RESIZE_CQ),
        ("MLX5_CQE_SIG_ERR", vals::CQE_SIG_ERR),
        ("MLX5_CQE_REQ_ERR", vals::CQE_REQ_ERR),
        ("MLX5_CQE_RESP_ERR", vals::CQE_RESP_ERR),
        ("MLX5_CQE_INVALID", vals::CQE_INVALID),
        (
            "MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR",
            vals::SYNDROME_LOCAL_LENGTH_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR",
            vals::SYNDROME_LOCAL_QP_OP_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_LOCAL_PROT_ERR",
            vals::SYNDROME_LOCAL_PROT_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_WR_FLUSH_ERR",
            vals::SYNDROME_WR_FLUSH_ERR,
        ),
        ("MLX5_CQE_SYNDROME_MW_BIND_ERR", vals::SYNDROME_MW_BIND_ERR),
        (
            "MLX5_CQE_SYNDROME_BAD_RESP_ERR",
            vals::SYNDROME_BAD_RESP_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR",
            vals::SYNDROME_LOCAL_ACCESS_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR",
            vals::SYNDROME_REMOTE_INVAL_REQ_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR",
            vals::SYNDROME_REMOTE_ACCESS_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_REMOTE_OP_ERR",
            vals::SYNDROME_REMOTE_OP_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR",
            vals::SYNDROME_TRANSPORT_RETRY_EXC_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR",
            vals::SYNDROME_RNR_RETRY_EXC_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR",
            vals::SYNDROME_REMOTE_ABORTED_ERR,
        ),
    ] {
        assert_eq!(value(&cq, name), u64::from(v), "{name}");
    }
    for (name, v) in [
        (
            "MLX5_CQ_ERROR_SYNDROME_CQ_OVERRUN",
            vals::CQ_ERROR_SYNDROME_CQ_OVERRUN,
        ),
        (
            "MLX5_CQ_ERROR_SYNDROME_CQ_ACCESS_VIOLATION_ERROR",
            vals::CQ_ERROR_SYNDROME_CQ_ACCESS_VIOLATION,
        ),
        ("MLX5_CQC_STATUS_CQ_OVERFLOW", vals::CQC_STATUS_CQ_OVERFLOW),
        (
            "MLX5_CQC_STATUS_CQ_WRITE_FAIL",
            vals::CQC_STATUS_CQ_WRITE_FAIL,
        ),
    ] {
        assert_eq!(value(&ifc, name), u64::from(v), "{name}");
    }
}
