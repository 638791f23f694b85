//! The IB provider's CQ commands (`ib/cq/commands.rs`) against the firmware model:
//! CREATE_CQ as the kernel and user paths build it, MODIFY_CQ moderation stored and
//! read back, MODIFY_CQ resize to a new ring (and refused above the size cap),
//! DESTROY_CQ, the CQ count back to zero.

mod common;
#[path = "common/verbs.rs"]
mod verbs;

use common::input;
use mlx5_emu::ifc::cq::{cqc, query_cq_in, query_cq_out};
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_rs_pure::cmd::command::{self, CodecError, Command};
use mlx5_rs_pure::ib::cq::commands::{CqBuf, CreateCq, DestroyCq, ModifyCqModeration, ResizeCq};
use verbs::{set_at, Dev};

/// Runs `cmd`: the status, and the reply when it is 0.
fn exec<C: Command>(d: &mut Dev, cmd: C) -> (u8, Option<Result<C::Reply, CodecError>>) {
    let mut i = vec![0u8; command::in_len(&cmd)];
    command::encode(&cmd, &mut i).unwrap();
    let (status, _, out) = d.h.run(&i, command::out_len(&cmd));
    if status != 0 {
        return (status, None);
    }
    (0, Some(command::decode(cmd, &out)))
}

/// A ring of 2^log entries of `cqe` bytes in 4 KiB pages of fake guest memory.
fn ring(d: &mut Dev, log: u8, cqe: u64) -> Vec<u64> {
    let bytes = (cqe << log).max(4096);
    let base = d.h.alloc(bytes, 4096);
    (0..bytes.div_ceil(4096)).map(|i| base + 4096 * i).collect()
}

/// The CQ context QUERY_CQ returns.
fn query(d: &mut Dev, cqn: u32) -> Vec<u8> {
    let mut i = input(16, Opcode::QUERY_CQ as u16, 0, &[]);
    set_at(&mut i, 0, query_cq_in::CQN, u64::from(cqn));
    let out = d.h.ok(&i, query_cq_out::PAS.raw().byte_off());
    let c = query_cq_out::CQ_CONTEXT.raw().byte_off();
    out[c..c + cqc::BYTES].to_vec()
}

fn get(ctx: &[u8], f: impl Into<mlx5_emu::ifc::field::Field>) -> u64 {
    f.into().get(ctx).unwrap()
}

fn live_cqs(d: &Dev) -> usize {
    d.h.dev
        .fw()
        .objs
        .counts()
        .into_iter()
        .find(|(n, _)| *n == "cq")
        .map(|(_, c)| c)
        .unwrap()
}

#[test]
fn create_modify_resize_destroy() {
    let mut d = Dev::new();
    let dbr = d.h.alloc(64, 64);
    let pas = ring(&mut d, 8, 64);
    let (uar, eqn) = (d.uar, u32::from(d.eqn));
    let create = CreateCq {
        buf: CqBuf {
            log_size: 8,
            log_page_size: 0,
            page_offset: 0,
        },
        cqe_sz: 0,
        uar,
        eqn,
        dbr,
        ignore_overrun: false,
        cqe_comp: None,
        pas: &pas,
    };
    let (st, r) = exec(&mut d, create);
    assert_eq!(st, 0);
    let cqn = r.unwrap().unwrap();
    // A 128-byte-CQE CQ with `oi` (the user path with IGNORE_OVERRUN).
    let pas2 = ring(&mut d, 4, 128);
    let (st, r) = exec(
        &mut d,
        CreateCq {
            buf: CqBuf {
                log_size: 4,
                log_page_size: 0,
                page_offset: 0,
            },
            cqe_sz: 1,
            ignore_overrun: true,
            pas: &pas2,
            ..create
        },
    );
    assert_eq!(st, 0);
    let cqn2 = r.unwrap().unwrap();
    assert_ne!(cqn, cqn2);
    assert_eq!(live_cqs(&d), 2);
    let c = query(&mut d, cqn2);
    assert_eq!((get(&c, cqc::CQE_SZ), get(&c, cqc::OI)), (1, 1));
    assert_eq!(get(&c, cqc::LOG_CQ_SIZE), 4);

    // Moderation: stored, read back.
    let (st, _) = exec(
        &mut d,
        ModifyCqModeration {
            cqn,
            period: 0xfff,
            count: 77,
        },
    );
    assert_eq!(st, 0);
    let c = query(&mut d, cqn);
    assert_eq!(
        (get(&c, cqc::CQ_PERIOD), get(&c, cqc::CQ_MAX_COUNT)),
        (0xfff, 77)
    );
    assert_eq!(get(&c, cqc::LOG_CQ_SIZE), 8);

    // Resize to 2^10 entries in 8 KiB pages (log_page_size 1).
    let bytes = 64u64 << 10;
    let base = d.h.alloc(bytes, 8192);
    let big: Vec<u64> = (0..bytes / 8192).map(|i| base + 8192 * i).collect();
    let resize = ResizeCq {
        cqn,
        buf: CqBuf {
            log_size: 10,
            log_page_size: 1,
            page_offset: 0,
        },
        cqe_sz: 0,
        pas: &big,
    };
    let (st, _) = exec(&mut d, resize);
    assert_eq!(st, 0);
    let c = query(&mut d, cqn);
    assert_eq!(
        (get(&c, cqc::LOG_CQ_SIZE), get(&c, cqc::LOG_PAGE_SIZE)),
        (10, 1)
    );
    // The moderation survives the resize.
    assert_eq!(get(&c, cqc::CQ_MAX_COUNT), 77);
    // Nothing so far broke a rule of the device.
    assert_eq!(d.h.dev.fw().stats.violations, 0);
    // Above the cap log_max_cq_sz (22): refused, the CQ unchanged.
    let (st, _) = exec(
        &mut d,
        ResizeCq {
            buf: CqBuf {
                log_size: 23,
                ..resize.buf
            },
            ..resize
        },
    );
    assert_ne!(st, 0);
    assert_eq!(get(&query(&mut d, cqn), cqc::LOG_CQ_SIZE), 10);
    // A page list too short for the ring: refused.
    let (st, _) = exec(
        &mut d,
        ResizeCq {
            pas: &big[..2],
            ..resize
        },
    );
    assert_ne!(st, 0);

    for n in [cqn, cqn2] {
        assert_eq!(exec(&mut d, DestroyCq { cqn: n }).0, 0);
    }
    assert_eq!(live_cqs(&d), 0);
    // A second destroy is refused (bad resource), as is modify of a gone CQ.
    assert_ne!(exec(&mut d, DestroyCq { cqn }).0, 0);
    let (st, _) = exec(
        &mut d,
        ModifyCqModeration {
            cqn,
            period: 1,
            count: 1,
        },
    );
    assert_ne!(st, 0);
}

#[test]
fn create_refuses_what_the_device_does_not_know() {
    let mut d = Dev::new();
    let dbr = d.h.alloc(64, 64);
    let pas = ring(&mut d, 6, 64);
    let good = CreateCq {
        buf: CqBuf {
            log_size: 6,
            log_page_size: 0,
            page_offset: 0,
        },
        cqe_sz: 0,
        uar: d.uar,
        eqn: u32::from(d.eqn),
        dbr,
        ignore_overrun: false,
        cqe_comp: None,
        pas: &pas,
    };
    // An EQ that does not exist, a UAR never allocated, an unknown CQE size.
    for bad in [
        CreateCq { eqn: 200, ..good },
        CreateCq {
            uar: good.uar + 50,
            ..good
        },
        CreateCq { cqe_sz: 3, ..good },
    ] {
        assert_ne!(exec(&mut d, bad).0, 0);
    }
    assert_eq!(live_cqs(&d), 0);
    assert_eq!(exec(&mut d, good).0, 0);
    assert_eq!(live_cqs(&d), 1);
}
