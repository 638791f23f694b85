//! The plain C structures of the SRQ / AH slice (`ifc/av.rs`) against the kernel's
//! headers: `struct mlx5_av` and `struct mlx5_wqe_data_seg` (`include/linux/mlx5/qp.h`,
//! the latter in `ifc/wqe.rs`) and `struct mlx5_wqe_srq_next_seg` (`device.h`), member by member in declaration order, each
//! member's size from its declaration (`u8 x[N]`, `__be16`, `__be32`, and the 8-byte
//! key union), so a reordered or resized member fails.

use mlx5_emu::ifc::av::{Av, WqeSrqNextSeg, AV_BYTES};
use mlx5_emu::ifc::wqe::WqeDataSeg;
use std::mem::{offset_of, size_of};

#[path = "common/c_struct.rs"]
mod c_struct;

use c_struct::{body, header, members};

#[test]
fn av_matches_qp_h() {
    let text = header("MLX5_QP_H", "include/linux/mlx5/qp.h");
    let m = members(body(&text, "mlx5_av"));
    let ours = [
        ("key", offset_of!(Av, key), 8),
        ("dqp_dct", offset_of!(Av, dqp_dct), 4),
        ("stat_rate_sl", offset_of!(Av, stat_rate_sl), 1),
        ("fl_mlid", offset_of!(Av, fl_mlid), 1),
        ("", offset_of!(Av, rlid), 2),
        ("reserved0", offset_of!(Av, reserved0), 4),
        ("rmac", offset_of!(Av, rmac), 6),
        ("tclass", offset_of!(Av, tclass), 1),
        ("hop_limit", offset_of!(Av, hop_limit), 1),
        ("grh_gid_fl", offset_of!(Av, grh_gid_fl), 4),
        ("rgid", offset_of!(Av, rgid), 16),
    ];
    assert_eq!(m.len(), ours.len(), "{m:?}");
    let mut off = 0;
    for ((hn, hsz), (n, o, sz)) in m.iter().zip(ours) {
        assert_eq!((hn.as_str(), *hsz), (n, sz), "member at {off}");
        assert_eq!(o, off, "{n}");
        off += hsz;
    }
    assert_eq!((size_of::<Av>(), AV_BYTES, off), (48, 48, 48));
}

#[test]
fn srq_next_seg_matches_device_h() {
    let text = header("MLX5_DEVICE_H", "include/linux/mlx5/device.h");
    let m = members(body(&text, "mlx5_wqe_srq_next_seg"));
    let ours = [
        ("rsvd0", offset_of!(WqeSrqNextSeg, rsvd0), 2),
        (
            "next_wqe_index",
            offset_of!(WqeSrqNextSeg, next_wqe_index),
            2,
        ),
        ("signature", offset_of!(WqeSrqNextSeg, signature), 1),
        ("rsvd1", offset_of!(WqeSrqNextSeg, rsvd1), 11),
    ];
    assert_eq!(m.len(), ours.len(), "{m:?}");
    let mut off = 0;
    for ((hn, hsz), (n, o, sz)) in m.iter().zip(ours) {
        assert_eq!((hn.as_str(), *hsz), (n, sz));
        assert_eq!(o, off, "{n}");
        off += hsz;
    }
    assert_eq!(size_of::<WqeSrqNextSeg>(), 16);
}

#[test]
fn data_seg_matches_qp_h() {
    let text = header("MLX5_QP_H", "include/linux/mlx5/qp.h");
    let m = members(body(&text, "mlx5_wqe_data_seg"));
    let ours = [
        ("byte_count", offset_of!(WqeDataSeg, byte_count), 4),
        ("lkey", offset_of!(WqeDataSeg, lkey), 4),
        ("addr", offset_of!(WqeDataSeg, addr), 8),
    ];
    assert_eq!(m.len(), ours.len(), "{m:?}");
    let mut off = 0;
    for ((hn, hsz), (n, o, sz)) in m.iter().zip(ours) {
        assert_eq!((hn.as_str(), *hsz), (n, sz));
        assert_eq!(o, off, "{n}");
        off += hsz;
    }
    assert_eq!(size_of::<WqeDataSeg>(), 16);
}
