//! The CQ verbs' pure parts: the CQ commands as the device sees them (CREATE_CQ's
//! context and page list, DESTROY_CQ, MODIFY_CQ moderation and resize), the
//! moderation check, and the kernel-CQ / UAR / page-offset decisions.

use mlx5_rs_pure::cmd::command::{self, Command};
use mlx5_rs_pure::cmd::commands::GeneralCaps;
use mlx5_rs_pure::errno::Errno;
use mlx5_rs_pure::ib::abi::cq::CqUar;
use mlx5_rs_pure::ib::cq::commands::*;
use mlx5_rs_pure::ib::cq::plan::*;
use mlx5_rs_pure::ib::device::attr::{device_attr, DeviceIds};
use mlx5_rs_pure::ifc::caps::cmd_hca_cap;
use mlx5_rs_pure::ifc::cq::{cqc, create_cq_in, create_cq_out, destroy_cq_in, modify_cq_in};
use mlx5_rs_pure::ifc::field::{Msg, MsgMut};
use mlx5_rs_pure::ifc::opcodes::Opcode;

fn input<C: Command>(cmd: &C) -> Vec<u8> {
    let mut b = vec![0u8; command::in_len(cmd)];
    command::encode(cmd, &mut b).unwrap();
    b
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

fn ctx_of(b: &[u8]) -> Msg<'_, cqc::Layout> {
    let off = create_cq_in::CQ_CONTEXT.raw().byte_off();
    Msg::new(&b[off..off + cqc::BYTES]).unwrap()
}

#[test]
fn create_cq_carries_the_context_and_the_pages() {
    let pas = [0x1_0000_0000u64, 0x2000, 0xdead_b000];
    let cmd = CreateCq {
        buf: CqBuf {
            log_size: 9,
            log_page_size: 1,
            page_offset: 3,
        },
        cqe_sz: 1,
        uar: 0x123,
        eqn: 7,
        dbr: 0xabcd_ef00,
        ignore_overrun: true,
        cqe_comp: Some(1),
        pas: &pas,
    };
    let b = input(&cmd);
    assert_eq!(b.len(), create_cq_in::BYTES + 3 * 8);
    assert_eq!(be16(&b, 0), Opcode::CREATE_CQ as u16);
    let c = ctx_of(&b);
    assert_eq!(c.get(cqc::LOG_CQ_SIZE), 9);
    assert_eq!(c.get(cqc::LOG_PAGE_SIZE), 1);
    assert_eq!(c.get(cqc::PAGE_OFFSET), 3);
    assert_eq!(c.get(cqc::CQE_SZ), 1);
    assert_eq!(c.get(cqc::UAR_PAGE), 0x123);
    assert_eq!(c.get(cqc::C_EQN_OR_APU_ELEMENT), 7);
    assert_eq!(c.get(cqc::DBR_ADDR), 0xabcd_ef00);
    assert!(c.get(cqc::OI));
    assert!(c.get(cqc::CQE_COMP_EN));
    assert_eq!(c.get(cqc::MINI_CQE_RES_FORMAT), 1);
    // Nothing the driver does not set: no umem, no moderation.
    assert_eq!(c.get(cqc::CQ_PERIOD), 0);
    assert_eq!(c.get(cqc::CQ_MAX_COUNT), 0);
    assert!(!Msg::<create_cq_in::Layout>::new(&b)
        .unwrap()
        .get(create_cq_in::CQ_UMEM_VALID));
    for (i, a) in pas.iter().enumerate() {
        let at = create_cq_in::BYTES + 8 * i;
        assert_eq!(u64::from_be_bytes(b[at..at + 8].try_into().unwrap()), *a);
    }
    // Without compression the bits stay clear.
    let b = input(&CreateCq {
        cqe_comp: None,
        ignore_overrun: false,
        ..cmd
    });
    assert!(!ctx_of(&b).get(cqc::CQE_COMP_EN));
    assert!(!ctx_of(&b).get(cqc::OI));
}

#[test]
fn create_cq_refuses_values_wider_than_their_fields() {
    let pas = [0u64];
    let ok = CreateCq {
        buf: CqBuf {
            log_size: 31,
            log_page_size: 31,
            page_offset: 63,
        },
        cqe_sz: 7,
        uar: 0xff_ffff,
        eqn: 0,
        dbr: 0,
        ignore_overrun: false,
        cqe_comp: None,
        pas: &pas,
    };
    let mut b = vec![0u8; command::in_len(&ok)];
    assert!(command::encode(&ok, &mut b).is_ok());
    for bad in [
        CreateCq {
            buf: CqBuf {
                log_size: 32,
                ..ok.buf
            },
            ..ok
        },
        CreateCq {
            buf: CqBuf {
                page_offset: 64,
                ..ok.buf
            },
            ..ok
        },
        CreateCq { uar: 1 << 24, ..ok },
        CreateCq { cqe_sz: 8, ..ok },
    ] {
        let mut b = vec![0u8; command::in_len(&bad)];
        assert!(command::encode(&bad, &mut b).is_err());
    }
}

#[test]
fn create_cq_replies_the_cqn() {
    let mut o = vec![0u8; create_cq_out::BYTES];
    MsgMut::<create_cq_out::Layout>::new(&mut o)
        .unwrap()
        .set(create_cq_out::CQN, 0x00ab_cdefu32)
        .unwrap();
    let cmd = CreateCq {
        buf: CqBuf {
            log_size: 1,
            log_page_size: 0,
            page_offset: 0,
        },
        cqe_sz: 0,
        uar: 0,
        eqn: 0,
        dbr: 0,
        ignore_overrun: false,
        cqe_comp: None,
        pas: &[],
    };
    assert_eq!(command::decode(cmd, &o), Ok(0x00ab_cdef));
}

#[test]
fn destroy_and_modify_cq() {
    let b = input(&DestroyCq { cqn: 0x42 });
    assert_eq!(be16(&b, 0), Opcode::DESTROY_CQ as u16);
    assert_eq!(
        Msg::<destroy_cq_in::Layout>::new(&b)
            .unwrap()
            .get(destroy_cq_in::CQN),
        0x42
    );

    let b = input(&ModifyCqModeration {
        cqn: 9,
        period: 0xfff,
        count: 0xffff,
    });
    assert_eq!(be16(&b, 0), Opcode::MODIFY_CQ as u16);
    let m = Msg::<modify_cq_in::Layout>::new(&b).unwrap();
    assert_eq!(m.get(modify_cq_in::OP_MOD), OPMOD_MODIFY);
    assert_eq!(m.get(modify_cq_in::CQN), 9);
    let sel_at = modify_cq_in::MODIFY_FIELD_SELECT_RESIZE_FIELD_SELECT
        .raw()
        .byte_off();
    assert_eq!(be32(&b, sel_at), MODIFY_PERIOD | MODIFY_COUNT);
    let off = modify_cq_in::CQ_CONTEXT.raw().byte_off();
    let c = Msg::<cqc::Layout>::new(&b[off..off + cqc::BYTES]).unwrap();
    assert_eq!(c.get(cqc::CQ_PERIOD), 0xfff);
    assert_eq!(c.get(cqc::CQ_MAX_COUNT), 0xffff);
    // A period past the 12-bit field cannot be encoded.
    let bad = ModifyCqModeration {
        cqn: 9,
        period: 0x1000,
        count: 1,
    };
    let mut b = vec![0u8; command::in_len(&bad)];
    assert!(command::encode(&bad, &mut b).is_err());

    let pas = [0x4000u64, 0x8000];
    let b = input(&ResizeCq {
        cqn: 3,
        buf: CqBuf {
            log_size: 10,
            log_page_size: 2,
            page_offset: 1,
        },
        cqe_sz: 1,
        pas: &pas,
    });
    assert_eq!(b.len(), modify_cq_in::BYTES + 16);
    let m = Msg::<modify_cq_in::Layout>::new(&b).unwrap();
    assert_eq!(m.get(modify_cq_in::OP_MOD), OPMOD_RESIZE);
    assert_eq!(
        be32(&b, sel_at),
        RESIZE_LOG_SIZE | RESIZE_PG_OFFSET | RESIZE_PG_SIZE
    );
    let c = Msg::<cqc::Layout>::new(&b[off..off + cqc::BYTES]).unwrap();
    assert_eq!(
        (
            c.get(cqc::LOG_CQ_SIZE),
            c.get(cqc::LOG_PAGE_SIZE),
            c.get(cqc::PAGE_OFFSET),
            c.get(cqc::CQE_SZ)
        ),
        (10, 2, 1, 1)
    );
    let at = modify_cq_in::BYTES + 8;
    assert_eq!(
        u64::from_be_bytes(b[at..at + 8].try_into().unwrap()),
        0x8000
    );
}

#[test]
fn moderation_as_upstream() {
    assert_eq!(check_moderation(true, 0), Ok(()));
    assert_eq!(check_moderation(true, MAX_CQ_PERIOD), Ok(()));
    assert_eq!(
        check_moderation(true, MAX_CQ_PERIOD + 1),
        Err(ModerationError::PeriodTooLarge)
    );
    assert_eq!(
        check_moderation(false, 0),
        Err(ModerationError::NotSupported)
    );
    assert_eq!((MAX_CQ_COUNT, MAX_CQ_PERIOD), (65535, 4095));
    assert_eq!(ModerationError::NotSupported.errno(), Errno::EOPNOTSUPP);
    assert_eq!(ModerationError::PeriodTooLarge.errno(), Errno::EINVAL);
}

#[test]
fn query_device_reports_cq_moderation_with_the_cap() {
    let mut g = GeneralCaps::from_bytes(&[0u8; cmd_hca_cap::BYTES]).unwrap();
    let ids = DeviceIds {
        fw: (16, 35, 1012),
        sys_image_guid: 1,
        vendor_id: 0x02c9,
        device_id: 0x1017,
        revision: 0,
        is_vf: false,
    };
    let a = device_attr(&g, None, &ids, 128);
    assert_eq!(
        (a.max_cq_moderation_count, a.max_cq_moderation_period),
        (0, 0)
    );
    g.set(cmd_hca_cap::CQ_MODERATION, true).unwrap();
    let a = device_attr(&g, None, &ids, 128);
    assert_eq!(
        (a.max_cq_moderation_count, a.max_cq_moderation_period),
        (65535, 4095)
    );
}

#[test]
fn kernel_cq_sizes() {
    let p = kernel_cq_plan(255, 22, 64).unwrap();
    assert_eq!(
        (p.entries, p.log_size, p.cqe_size, p.cqe_sz),
        (256, 8, 64, 0)
    );
    assert_eq!(p.bytes(), 256 * 64);
    let p = kernel_cq_plan(256, 22, 128).unwrap();
    assert_eq!(
        (p.entries, p.log_size, p.cqe_size, p.cqe_sz),
        (512, 9, 128, 1)
    );
    // cqe 0 still gets a one-entry ring, as roundup_pow_of_two(1).
    assert_eq!(kernel_cq_plan(0, 22, 64).unwrap().entries, 1);
    // The limits: cqe above 2^log_max, or a ring above it.
    assert_eq!(
        kernel_cq_plan((1 << 22) - 1, 22, 64).unwrap().entries,
        1 << 22
    );
    assert_eq!(kernel_cq_plan(1 << 22, 22, 64), Err(Errno::EINVAL));
    assert_eq!(kernel_cq_plan((1 << 22) + 1, 22, 64), Err(Errno::EINVAL));
    assert_eq!(kernel_cq_plan(u32::MAX, 31, 64), Err(Errno::EINVAL));
    assert_eq!(kernel_cq_plan(u32::MAX, 63, 64), Err(Errno::EINVAL));
}

#[test]
fn eqn_and_uar_choices() {
    let eqns = [5u8, 6, 9];
    assert_eq!(eqn_of(0, &eqns), Some(5));
    assert_eq!(eqn_of(2, &eqns), Some(9));
    assert_eq!(eqn_of(3, &eqns), None);
    assert_eq!(eqn_of(u32::MAX, &eqns), None);
    assert_eq!(eqn_of(0, &[]), None);

    let uars = [17u32, 18];
    // The context owns its static pages and one UAR object, 40.
    let owns = |i: u32| uars.contains(&i) || i == 40;
    assert_eq!(resolve_uar(CqUar::FirstStaticPage, &uars, owns), Ok(17));
    assert_eq!(resolve_uar(CqUar::Index(18), &uars, owns), Ok(18));
    assert_eq!(resolve_uar(CqUar::Index(40), &uars, owns), Ok(40));
    assert_eq!(
        resolve_uar(CqUar::Index(3), &uars, owns),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        resolve_uar(CqUar::FirstStaticPage, &[], owns),
        Err(Errno::EINVAL)
    );
}

#[test]
fn page_offset_in_64ths() {
    assert_eq!(quantized_pgoff(0, 4096), Some(0));
    assert_eq!(quantized_pgoff(64, 4096), Some(1));
    assert_eq!(quantized_pgoff(4032, 4096), Some(63));
    assert_eq!(quantized_pgoff(32, 4096), None);
    // 8 KiB pages: units of 128 bytes.
    assert_eq!(quantized_pgoff(128, 8192), Some(1));
    assert_eq!(quantized_pgoff(64, 8192), None);
    assert_eq!(quantized_pgoff(0, 32), None);
    assert_eq!(quantized_pgoff(8192, 8192), None);
}

#[test]
fn op_own_bytes() {
    assert_eq!(INVALID_OP_OWN, 0xf0);
    assert_eq!(op_own_offset(0, 64), Some(63));
    assert_eq!(op_own_offset(2, 64), Some(191));
    // 128-byte CQEs: the 64-byte CQE is the second half.
    assert_eq!(op_own_offset(0, 128), Some(127));
    assert_eq!(op_own_offset(1, 128), Some(255));
    assert_eq!(op_own_offset(0, 0), None);
}
