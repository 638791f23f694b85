//! The MR cache's UMR WQEs (`ib/mr/umr.rs`) against upstream `umr.c`: which checks,
//! which mask bits and which mkey fields each of enable, revoke and rereg of PD /
//! access sets, read back through the `mkc` field definitions; the cache buckets.
//! The emulator executes these WQEs in `emu/tests/dp_mkey.rs`.

use mlx5_rs_pure::errno::Errno;
use mlx5_rs_pure::ib::mr::commands::MkeyAccess;
use mlx5_rs_pure::ib::mr::umr::*;
use mlx5_rs_pure::ifc::field::Msg;
use mlx5_rs_pure::ifc::mkey::mkc;
use mlx5_rs_pure::ifc::umr::vals as v;
use zerocopy::IntoBytes;

/// A device with cap `atomic` and no relaxed-ordering UMR caps (the emulator's).
const CAPS: UmrCaps = UmrCaps {
    atomic: true,
    ro_write_umr: false,
    ro_read_umr: false,
    log_entity_size_5: false,
};

const RW: MkeyAccess = MkeyAccess {
    a: false,
    rw: true,
    rr: true,
    lw: true,
    ro_write: false,
    ro_read: false,
};

fn seg(w: &UmrWqe) -> [u8; 64] {
    w.mkey.as_bytes().try_into().unwrap()
}

#[test]
fn enable_is_upstreams_update_mr_pas_with_enable() {
    let xlt = Xlt {
        addr: 0x1234_5000,
        lkey: 0x100,
        entries: 3,
        page_shift: 12,
    };
    let w = enable(
        0x0004_2117,
        7,
        &RW,
        0x7f00_0000_0100,
        3 * 4096 - 0x100,
        &xlt,
        &CAPS,
    )
    .unwrap();
    // mlx5r_umr_set_update_xlt_ctrl_seg with ENABLE: "fail if not free"; the offset
    // set by mlx5r_umr_update_offset (0).
    assert_eq!(
        w.ctrl.flags,
        v::UMR_CHECK_NOT_FREE | v::UMR_TRANSLATION_OFFSET_EN
    );
    assert_eq!(
        (w.ctrl.xlt_offset.get(), w.ctrl.xlt_offset_47_16.get()),
        (0, 0)
    );
    // Three entries are 24 bytes, sent as one 64-byte unit: 4 octowords.
    assert_eq!(w.ctrl.xlt_octowords.get(), 4);
    // mlx5r_umr_final_update_xlt: enable + access + PD + translation masks.
    assert_eq!(
        w.ctrl.mkey_mask.get(),
        v::MKEY_MASK_KEY
            | v::MKEY_MASK_FREE
            | v::MKEY_MASK_LR
            | v::MKEY_MASK_LW
            | v::MKEY_MASK_RR
            | v::MKEY_MASK_RW
            | v::MKEY_MASK_A
            | v::MKEY_MASK_PD
            | v::MKEY_MASK_LEN
            | v::MKEY_MASK_PAGE_SIZE
            | v::MKEY_MASK_START_ADDR
    );
    let b = seg(&w);
    let m = Msg::<mkc::Layout>::of_array(&b);
    assert!(!m.get(mkc::FREE));
    assert!(m.get(mkc::LR) && m.get(mkc::LW) && m.get(mkc::RR) && m.get(mkc::RW));
    assert!(!m.get(mkc::A));
    assert_eq!(m.get(mkc::PD), 7);
    assert_eq!(m.get(mkc::START_ADDR), 0x7f00_0000_0100);
    assert_eq!(m.get(mkc::LEN), 3 * 4096 - 0x100);
    assert!(!m.get(mkc::LENGTH64));
    assert_eq!(m.get(mkc::LOG_PAGE_SIZE), 12);
    assert_eq!(m.get(mkc::QPN), 0xff_ffff);
    assert_eq!(m.get(mkc::MKEY_7_0), 0x17);
    let d = w.data.unwrap();
    assert_eq!(
        (d.byte_count.get(), d.lkey.get(), d.addr.get()),
        (64, 0x100, 0x1234_5000)
    );
    // mlx5r_umr_post_send with data: the whole struct mlx5r_umr_wqe, 128 bytes.
    assert_eq!(w.size(), 128);
    let mut out = [0xffu8; 130];
    assert_eq!(w.write(&mut out), Some(128));
    assert_eq!(&out[..48], w.ctrl.as_bytes());
    assert_eq!(&out[48..112], w.mkey.as_bytes());
    assert_eq!(&out[112..128], d.as_bytes());
    assert_eq!(&out[128..], &[0xff, 0xff]);
    assert_eq!(w.write(&mut [0u8; 127]), None);
}

#[test]
fn enable_of_zero_length_sets_length64_and_big_tables_count_octowords() {
    let xlt = Xlt {
        addr: 0x1000,
        lkey: 1,
        entries: 17,
        page_shift: 21,
    };
    let w = enable(0x105, 1, &RW, 0, 0, &xlt, &CAPS).unwrap();
    let b = seg(&w);
    let m = Msg::<mkc::Layout>::of_array(&b);
    assert!(m.get(mkc::LENGTH64));
    assert_eq!(m.get(mkc::LOG_PAGE_SIZE), 21);
    // 17 entries = 136 bytes, three units: 12 octowords, 192 bytes read.
    assert_eq!(w.ctrl.xlt_octowords.get(), 12);
    assert_eq!(w.data.unwrap().byte_count.get(), 192);
    // More than 16 bits of octowords: refused.
    let big = Xlt {
        entries: 1 << 18,
        ..xlt
    };
    assert_eq!(enable(0x105, 1, &RW, 0, 0, &big, &CAPS), Err(Errno::EINVAL));
    // Page size bit 5 without cap umr_log_entity_size_5: refused; with it, in the mask.
    let huge = Xlt {
        page_shift: 32,
        ..xlt
    };
    assert_eq!(
        enable(0x105, 1, &RW, 0, 0, &huge, &CAPS),
        Err(Errno::EINVAL)
    );
    let caps5 = UmrCaps {
        log_entity_size_5: true,
        ..CAPS
    };
    let w = enable(0x105, 1, &RW, 0, 0, &huge, &caps5).unwrap();
    assert_ne!(w.ctrl.mkey_mask.get() & v::MKEY_MASK_PAGE_SIZE_5, 0);
}

#[test]
fn revoke_is_upstreams_revoke_mr() {
    let w = revoke(0x0004_21ab, 3).unwrap();
    assert_eq!(w.ctrl.flags, v::UMR_INLINE);
    assert_eq!(w.ctrl.mkey_mask.get(), v::MKEY_MASK_PD | v::MKEY_MASK_FREE);
    assert_eq!(w.ctrl.xlt_octowords.get(), 0);
    let b = seg(&w);
    let m = Msg::<mkc::Layout>::of_array(&b);
    assert!(m.get(mkc::FREE));
    assert_eq!(m.get(mkc::PD), 3);
    assert_eq!(m.get(mkc::QPN), 0xff_ffff);
    assert_eq!(m.get(mkc::MKEY_7_0), 0xab);
    assert!(!m.get(mkc::LR));
    // mlx5r_umr_post_send without data: 112 bytes.
    assert_eq!((w.data, w.size()), (None, 112));
}

#[test]
fn rereg_pd_access_is_upstreams_and_keeps_the_key() {
    let a = MkeyAccess {
        a: true,
        rw: false,
        rr: true,
        lw: false,
        ro_write: false,
        ro_read: false,
    };
    let w = rereg_pd_access(0x0004_2117, 9, &a, &CAPS).unwrap();
    assert_eq!(w.ctrl.flags, v::UMR_CHECK_FREE | v::UMR_INLINE);
    assert_eq!(
        w.ctrl.mkey_mask.get(),
        v::MKEY_MASK_LR
            | v::MKEY_MASK_LW
            | v::MKEY_MASK_RR
            | v::MKEY_MASK_RW
            | v::MKEY_MASK_A
            | v::MKEY_MASK_PD
    );
    // No key in the mask: the key byte written is the MR's own.
    assert_eq!(w.ctrl.mkey_mask.get() & v::MKEY_MASK_KEY, 0);
    let b = seg(&w);
    let m = Msg::<mkc::Layout>::of_array(&b);
    assert!(m.get(mkc::A) && m.get(mkc::RR) && m.get(mkc::LR));
    assert!(!m.get(mkc::RW) && !m.get(mkc::LW) && !m.get(mkc::FREE));
    assert_eq!(m.get(mkc::PD), 9);
    assert_eq!(m.get(mkc::MKEY_7_0), 0x17);
    // Atomic rights on a device whose UMR cannot set `a`: refused (the caller
    // re-creates the MR, as upstream when it cannot reconfigure).
    let no_a = UmrCaps {
        atomic: false,
        ..CAPS
    };
    assert_eq!(rereg_pd_access(0x117, 9, &a, &no_a), Err(Errno::EINVAL));
    assert!(rereg_pd_access(0x117, 9, &RW, &no_a).is_ok());
    let ro = MkeyAccess {
        ro_write: true,
        ..RW
    };
    assert_eq!(rereg_pd_access(0x117, 9, &ro, &CAPS), Err(Errno::EINVAL));
    let ro_caps = UmrCaps {
        ro_write_umr: true,
        ..CAPS
    };
    let w = rereg_pd_access(0x117, 9, &ro, &ro_caps).unwrap();
    assert_ne!(
        w.ctrl.mkey_mask.get() & v::MKEY_MASK_RELAXED_ORDERING_WRITE,
        0
    );
}

#[test]
fn octowords_and_buckets() {
    assert_eq!(xlt_octo(0), 0);
    assert_eq!(xlt_octo(8), 4);
    assert_eq!(xlt_octo(64), 4);
    assert_eq!(xlt_octo(65), 8);
    // get_mkc_octo_size for MTT: two entries per octoword.
    assert_eq!(mkc_octo_size(1), 1);
    assert_eq!(mkc_octo_size(16), 8);
    assert_eq!(mkc_octo_size(17), 9);
    // 4 KiB: one entry; 64 KiB: 16; 1 MiB: 256 (4 KiB pages).
    assert_eq!(bucket(1, 16), Some(8));
    assert_eq!(bucket(8, 16), Some(8));
    assert_eq!(bucket(9, 16), Some(16));
    assert_eq!(bucket(16, 16), Some(16));
    assert_eq!(bucket(256, 16), Some(256));
    assert_eq!(bucket(1 << 16, 16), Some(1 << 16));
    assert_eq!(bucket((1 << 16) + 1, 16), None);
    assert_eq!(bucket(u64::MAX, 40), None);
    assert_eq!(bucket(1 << 33, 40), None);
    // Within upstream's pool bound (entries < 2 * the MR's) from 8 up.
    for n in 8..5000u64 {
        let b = u64::from(bucket(n, 16).unwrap());
        assert!(b >= n && b < 2 * n, "{n} -> {b}");
    }
}
