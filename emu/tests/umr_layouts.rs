//! The UMR layouts of `ifc/umr.rs` against the kernel's headers, member by member in
//! declaration order (`struct mlx5_wqe_umr_ctrl_seg`, `mlx5_mtt`, `mlx5_klm`,
//! `mlx5_ksm` in `qp.h`, `struct mlx5_mkey_seg` in `device.h`), the flag and mask
//! values against the enums that define them, and the mkey segment against the `mkc`
//! bit-array whose bits it carries (upstream writes it with `MLX5_SET(mkc, ...)`).

use mlx5_emu::ifc::field::{Msg, MsgMut};
use mlx5_emu::ifc::mkey::mkc;
use mlx5_emu::ifc::umr::{vals as v, Klm, Ksm, MkeySeg, Mtt, UmrCtrlSeg};
use std::mem::{offset_of, size_of};
use zerocopy::IntoBytes;

#[path = "common/c_struct.rs"]
mod c_struct;

use c_struct::{check, header, value};

fn qp_h() -> String {
    header("MLX5_QP_H", "include/linux/mlx5/qp.h")
}

fn device_h() -> String {
    header("MLX5_DEVICE_H", "include/linux/mlx5/device.h")
}

#[test]
fn umr_ctrl_seg_matches_qp_h() {
    let n = check(
        &qp_h(),
        "mlx5_wqe_umr_ctrl_seg",
        &[
            ("flags", offset_of!(UmrCtrlSeg, flags), 1),
            ("rsvd0", offset_of!(UmrCtrlSeg, rsvd0), 3),
            ("xlt_octowords", offset_of!(UmrCtrlSeg, xlt_octowords), 2),
            ("", offset_of!(UmrCtrlSeg, xlt_offset), 2),
            ("mkey_mask", offset_of!(UmrCtrlSeg, mkey_mask), 8),
            (
                "xlt_offset_47_16",
                offset_of!(UmrCtrlSeg, xlt_offset_47_16),
                4,
            ),
            ("rsvd1", offset_of!(UmrCtrlSeg, rsvd1), 28),
        ],
    );
    assert_eq!((n, size_of::<UmrCtrlSeg>()), (48, 48));
}

#[test]
fn mkey_seg_matches_device_h() {
    let n = check(
        &device_h(),
        "mlx5_mkey_seg",
        &[
            ("status", offset_of!(MkeySeg, status), 1),
            ("pcie_control", offset_of!(MkeySeg, pcie_control), 1),
            ("flags", offset_of!(MkeySeg, flags), 1),
            ("version", offset_of!(MkeySeg, version), 1),
            ("qpn_mkey7_0", offset_of!(MkeySeg, qpn_mkey7_0), 4),
            ("rsvd1", offset_of!(MkeySeg, rsvd1), 4),
            ("flags_pd", offset_of!(MkeySeg, flags_pd), 4),
            ("start_addr", offset_of!(MkeySeg, start_addr), 8),
            ("len", offset_of!(MkeySeg, len), 8),
            ("bsfs_octo_size", offset_of!(MkeySeg, bsfs_octo_size), 4),
            ("rsvd2", offset_of!(MkeySeg, rsvd2), 16),
            ("xlt_oct_size", offset_of!(MkeySeg, xlt_oct_size), 4),
            ("rsvd3", offset_of!(MkeySeg, rsvd3), 3),
            ("log2_page_size", offset_of!(MkeySeg, log2_page_size), 1),
            ("rsvd4", offset_of!(MkeySeg, rsvd4), 4),
        ],
    );
    assert_eq!((n, size_of::<MkeySeg>(), mkc::BYTES), (64, 64, 64));
}

#[test]
fn translation_entries_match_qp_h() {
    let text = qp_h();
    let n = check(&text, "mlx5_mtt", &[("ptag", offset_of!(Mtt, ptag), 8)]);
    assert_eq!((n, size_of::<Mtt>()), (8, 8));
    let n = check(
        &text,
        "mlx5_klm",
        &[
            ("bcount", offset_of!(Klm, bcount), 4),
            ("key", offset_of!(Klm, key), 4),
            ("va", offset_of!(Klm, va), 8),
        ],
    );
    assert_eq!((n, size_of::<Klm>()), (16, 16));
    let n = check(
        &text,
        "mlx5_ksm",
        &[
            ("reserved", offset_of!(Ksm, reserved), 4),
            ("key", offset_of!(Ksm, key), 4),
            ("va", offset_of!(Ksm, va), 8),
        ],
    );
    assert_eq!((n, size_of::<Ksm>()), (16, 16));
}

#[test]
fn flag_and_mask_values_match_the_headers() {
    let dev = device_h();
    let qp = qp_h();
    let pairs: &[(&str, u64)] = &[
        ("MLX5_OPCODE_UMR", v::OPCODE_UMR.into()),
        (
            "MLX5_UMR_TRANSLATION_OFFSET_EN",
            v::UMR_TRANSLATION_OFFSET_EN.into(),
        ),
        ("MLX5_UMR_CHECK_NOT_FREE", v::UMR_CHECK_NOT_FREE.into()),
        ("MLX5_UMR_CHECK_FREE", v::UMR_CHECK_FREE.into()),
        ("MLX5_UMR_INLINE", v::UMR_INLINE.into()),
        ("MLX5_UMR_FLEX_ALIGNMENT", v::UMR_FLEX_ALIGNMENT as u64),
        ("MLX5_MKEY_MASK_LEN", v::MKEY_MASK_LEN),
        ("MLX5_MKEY_MASK_PAGE_SIZE", v::MKEY_MASK_PAGE_SIZE),
        ("MLX5_MKEY_MASK_START_ADDR", v::MKEY_MASK_START_ADDR),
        ("MLX5_MKEY_MASK_PD", v::MKEY_MASK_PD),
        ("MLX5_MKEY_MASK_EN_RINVAL", v::MKEY_MASK_EN_RINVAL),
        ("MLX5_MKEY_MASK_EN_SIGERR", v::MKEY_MASK_EN_SIGERR),
        ("MLX5_MKEY_MASK_BSF_EN", v::MKEY_MASK_BSF_EN),
        ("MLX5_MKEY_MASK_KEY", v::MKEY_MASK_KEY),
        ("MLX5_MKEY_MASK_QPN", v::MKEY_MASK_QPN),
        ("MLX5_MKEY_MASK_LR", v::MKEY_MASK_LR),
        ("MLX5_MKEY_MASK_LW", v::MKEY_MASK_LW),
        ("MLX5_MKEY_MASK_RR", v::MKEY_MASK_RR),
        ("MLX5_MKEY_MASK_RW", v::MKEY_MASK_RW),
        ("MLX5_MKEY_MASK_A", v::MKEY_MASK_A),
        ("MLX5_MKEY_MASK_SMALL_FENCE", v::MKEY_MASK_SMALL_FENCE),
        (
            "MLX5_MKEY_MASK_RELAXED_ORDERING_WRITE",
            v::MKEY_MASK_RELAXED_ORDERING_WRITE,
        ),
        ("MLX5_MKEY_MASK_FREE", v::MKEY_MASK_FREE),
        ("MLX5_MKEY_MASK_PAGE_SIZE_5", v::MKEY_MASK_PAGE_SIZE_5),
        (
            "MLX5_MKEY_MASK_RELAXED_ORDERING_READ",
            v::MKEY_MASK_RELAXED_ORDERING_READ,
        ),
        ("MLX5_MKEY_STATUS_FREE", v::MKEY_STATUS_FREE.into()),
        ("MLX5_PERM_LOCAL_READ", v::PERM_LOCAL_READ.into()),
        ("MLX5_PERM_LOCAL_WRITE", v::PERM_LOCAL_WRITE.into()),
        ("MLX5_PERM_REMOTE_READ", v::PERM_REMOTE_READ.into()),
        ("MLX5_PERM_REMOTE_WRITE", v::PERM_REMOTE_WRITE.into()),
        ("MLX5_PERM_ATOMIC", v::PERM_ATOMIC.into()),
        ("MLX5_PERM_UMR_EN", v::PERM_UMR_EN.into()),
        ("MLX5_MKEY_REMOTE_INVAL", v::MKEY_REMOTE_INVAL.into()),
    ];
    for (name, ours) in pairs {
        assert_eq!(value(&dev, name), *ours, "{name}");
    }
    assert_eq!(
        value(&qp, "MLX5_TERMINATE_SCATTER_LIST_LKEY"),
        u64::from(v::TERMINATE_SCATTER_LIST_LKEY)
    );
}

/// Every `mkc` field the data path reads from a UMR's mkey segment lies where
/// `struct mlx5_mkey_seg` declares it: written through the struct, read through `mkc`,
/// and back.
#[test]
fn mkey_seg_carries_the_mkc_bits() {
    let mut s = MkeySeg {
        status: v::MKEY_STATUS_FREE,
        flags: v::PERM_UMR_EN | v::PERM_ATOMIC | v::PERM_LOCAL_READ | 2,
        log2_page_size: 21,
        ..Default::default()
    };
    s.qpn_mkey7_0.set(0x00ab_cd00 | 0x5a);
    s.flags_pd.set(v::MKEY_REMOTE_INVAL | 0x12_3456);
    s.start_addr.set(0x1122_3344_5566_7788);
    s.len.set(0x99aa_bbcc);
    s.xlt_oct_size.set(0x40);
    let m = Msg::<mkc::Layout>::new(s.as_bytes()).unwrap();
    assert!(m.get(mkc::FREE));
    assert!(m.get(mkc::UMR_EN) && m.get(mkc::A) && m.get(mkc::LR));
    assert!(!m.get(mkc::RW) && !m.get(mkc::RR) && !m.get(mkc::LW));
    assert_eq!(m.get(mkc::ACCESS_MODE_1_0), 2);
    assert_eq!(m.get(mkc::QPN), 0xab_cd);
    assert_eq!(m.get(mkc::MKEY_7_0), 0x5a);
    assert!(m.get(mkc::EN_RINVAL));
    assert_eq!(m.get(mkc::PD), 0x12_3456);
    assert_eq!(m.get(mkc::START_ADDR), 0x1122_3344_5566_7788);
    assert_eq!(m.get(mkc::LEN), 0x99aa_bbcc);
    assert_eq!(m.get(mkc::TRANSLATIONS_OCTWORD_SIZE), 0x40);
    assert_eq!(m.get(mkc::LOG_PAGE_SIZE), 21);

    let mut b = [0u8; 64];
    let mut w = MsgMut::<mkc::Layout>::of_array(&mut b);
    w.set(mkc::LW, true).unwrap();
    w.set(mkc::RR, true).unwrap();
    w.set(mkc::RW, true).unwrap();
    w.set(mkc::LENGTH64, true).unwrap();
    let s: MkeySeg = zerocopy::transmute!(b);
    assert_eq!(
        s.flags,
        v::PERM_LOCAL_WRITE | v::PERM_REMOTE_READ | v::PERM_REMOTE_WRITE
    );
    assert_eq!(s.flags_pd.get(), 1 << 31);
}
