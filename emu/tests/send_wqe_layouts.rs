//! The send WQE segments of `ifc/wqe.rs` against the kernel's `include/linux/mlx5/qp.h`
//! (`struct mlx5_wqe_raddr_seg`, `mlx5_wqe_atomic_seg`, `mlx5_wqe_masked_atomic_seg`,
//! `mlx5_wqe_inline_seg`, `mlx5_wqe_datagram_seg`, `mlx5_wqe_xrc_seg`,
//! `mlx5_wqe_ctrl_seg`), member by member in declaration order, each member's size from
//! its declaration, and the send opcodes (`device.h`), fence, completion and solicited
//! values (`qp.h`) against the headers' enums by name (the CQE values are
//! emu/tests/cqe_layouts.rs's), so a reordered or resized member or a wrong value fails.

use mlx5_emu::ifc::av::Av;
use mlx5_emu::ifc::wqe::{
    opcode, vals, WqeAtomicSeg, WqeCtrlSeg, WqeDatagramSeg, WqeInlineSeg, WqeMaskedAtomicSeg,
    WqeRaddrSeg, WqeXrcSeg,
};
use std::mem::{offset_of, size_of};

#[path = "common/c_struct.rs"]
mod c_struct;

use c_struct::{check_with, header, value};

fn qp_h() -> String {
    header("MLX5_QP_H", "include/linux/mlx5/qp.h")
}

/// Compares a header struct of `qp.h` with ours: (name, offset, size) in declaration
/// order, and the total size. A member of type `struct mlx5_av` has the size of [`Av`]
/// (itself checked by srq_ah_layouts.rs).
fn check(header_struct: &str, ours: &[(&str, usize, usize)], total: usize) {
    let size = check_with(
        &qp_h(),
        header_struct,
        ours,
        &[("struct mlx5_av", size_of::<Av>())],
    );
    assert_eq!(size, total, "{header_struct} size");
}

#[test]
fn ctrl_seg_matches_qp_h() {
    check(
        "mlx5_wqe_ctrl_seg",
        &[
            (
                "opmod_idx_opcode",
                offset_of!(WqeCtrlSeg, opmod_idx_opcode),
                4,
            ),
            ("qpn_ds", offset_of!(WqeCtrlSeg, qpn_ds), 4),
            ("signature", offset_of!(WqeCtrlSeg, signature), 1),
            ("rsvd", offset_of!(WqeCtrlSeg, rsvd), 2),
            ("fm_ce_se", offset_of!(WqeCtrlSeg, fm_ce_se), 1),
            ("", offset_of!(WqeCtrlSeg, imm), 4),
        ],
        size_of::<WqeCtrlSeg>(),
    );
}

#[test]
fn raddr_seg_matches_qp_h() {
    check(
        "mlx5_wqe_raddr_seg",
        &[
            ("raddr", offset_of!(WqeRaddrSeg, raddr), 8),
            ("rkey", offset_of!(WqeRaddrSeg, rkey), 4),
            ("reserved", offset_of!(WqeRaddrSeg, reserved), 4),
        ],
        size_of::<WqeRaddrSeg>(),
    );
}

#[test]
fn atomic_segs_match_qp_h() {
    check(
        "mlx5_wqe_atomic_seg",
        &[
            ("swap_add", offset_of!(WqeAtomicSeg, swap_add), 8),
            ("compare", offset_of!(WqeAtomicSeg, compare), 8),
        ],
        size_of::<WqeAtomicSeg>(),
    );
    check(
        "mlx5_wqe_masked_atomic_seg",
        &[
            ("swap_add", offset_of!(WqeMaskedAtomicSeg, swap_add), 8),
            ("compare", offset_of!(WqeMaskedAtomicSeg, compare), 8),
            (
                "swap_add_mask",
                offset_of!(WqeMaskedAtomicSeg, swap_add_mask),
                8,
            ),
            (
                "compare_mask",
                offset_of!(WqeMaskedAtomicSeg, compare_mask),
                8,
            ),
        ],
        size_of::<WqeMaskedAtomicSeg>(),
    );
}

#[test]
fn inline_datagram_xrc_segs_match_qp_h() {
    check(
        "mlx5_wqe_inline_seg",
        &[
            ("byte_count", offset_of!(WqeInlineSeg, byte_count), 4),
            ("data", size_of::<WqeInlineSeg>(), 0),
        ],
        size_of::<WqeInlineSeg>(),
    );
    check(
        "mlx5_wqe_datagram_seg",
        &[("av", offset_of!(WqeDatagramSeg, av), size_of::<Av>())],
        size_of::<WqeDatagramSeg>(),
    );
    check(
        "mlx5_wqe_xrc_seg",
        &[
            ("xrc_srqn", offset_of!(WqeXrcSeg, xrc_srqn), 4),
            ("rsvd", offset_of!(WqeXrcSeg, rsvd), 12),
        ],
        size_of::<WqeXrcSeg>(),
    );
}

#[test]
fn send_opcodes_match_device_h() {
    let d = header("MLX5_DEVICE_H", "include/linux/mlx5/device.h");
    for (n, v) in [
        ("MLX5_OPCODE_NOP", opcode::NOP),
        ("MLX5_OPCODE_SEND_INVAL", opcode::SEND_INVAL),
        ("MLX5_OPCODE_RDMA_WRITE", opcode::RDMA_WRITE),
        ("MLX5_OPCODE_RDMA_WRITE_IMM", opcode::RDMA_WRITE_IMM),
        ("MLX5_OPCODE_SEND", opcode::SEND),
        ("MLX5_OPCODE_SEND_IMM", opcode::SEND_IMM),
        ("MLX5_OPCODE_LSO", opcode::LSO),
        ("MLX5_OPCODE_RDMA_READ", opcode::RDMA_READ),
        ("MLX5_OPCODE_ATOMIC_CS", opcode::ATOMIC_CS),
        ("MLX5_OPCODE_ATOMIC_FA", opcode::ATOMIC_FA),
        ("MLX5_OPCODE_ATOMIC_MASKED_CS", opcode::ATOMIC_MASKED_CS),
        ("MLX5_OPCODE_ATOMIC_MASKED_FA", opcode::ATOMIC_MASKED_FA),
        ("MLX5_OPCODE_BIND_MW", opcode::BIND_MW),
        ("MLX5_OPCODE_UMR", opcode::UMR),
    ] {
        assert_eq!(value(&d, n), u64::from(v), "{n}");
    }
    assert_eq!(value(&d, "MLX5_INLINE_SEG"), u64::from(vals::INLINE_SEG));
    assert_eq!(
        value(&d, "MLX5_EXTENDED_UD_AV"),
        u64::from(vals::EXTENDED_UD_AV)
    );
}

#[test]
fn ctrl_flags_match_qp_h() {
    let q = qp_h();
    for (n, v) in [
        ("MLX5_WQE_CTRL_CQ_UPDATE", vals::CTRL_CQ_UPDATE),
        (
            "MLX5_WQE_CTRL_CQ_UPDATE_AND_EQE",
            vals::CTRL_CQ_UPDATE_AND_EQE,
        ),
        ("MLX5_WQE_CTRL_SOLICITED", vals::CTRL_SOLICITED),
        ("MLX5_FENCE_MODE_NONE", vals::FENCE_MODE_NONE),
        (
            "MLX5_FENCE_MODE_INITIATOR_SMALL",
            vals::FENCE_MODE_INITIATOR_SMALL,
        ),
        ("MLX5_FENCE_MODE_FENCE", vals::FENCE_MODE_FENCE),
        (
            "MLX5_FENCE_MODE_STRONG_ORDERING",
            vals::FENCE_MODE_STRONG_ORDERING,
        ),
        (
            "MLX5_FENCE_MODE_SMALL_AND_FENCE",
            vals::FENCE_MODE_SMALL_AND_FENCE,
        ),
    ] {
        assert_eq!(value(&q, n), u64::from(v), "{n}");
    }
    assert_eq!(
        value(&q, "MLX5_WQE_CTRL_DS_MASK"),
        u64::from(vals::CTRL_DS_MASK)
    );
    assert_eq!(
        value(&q, "MLX5_WQE_INLINE_SEG_BYTE_COUNT_MASK"),
        u64::from(vals::INLINE_SEG_BYTE_COUNT_MASK)
    );
    assert_eq!(
        value(&q, "MLX5_SEND_WQE_MAX_WQEBBS") as usize,
        vals::SEND_WQE_MAX_WQEBBS
    );
    assert_eq!(value(&q, "MLX5_SEND_WQE_DS") as usize, vals::SEND_WQE_DS);
    assert_eq!(value(&q, "MLX5_SEND_WQE_BB") as usize, vals::SEND_WQE_BB);
}
