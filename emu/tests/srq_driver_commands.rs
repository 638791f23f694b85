//! The provider's XRC domain and shared receive queue commands (`ib/srq/commands.rs`,
//! through the host crate) against the firmware model: each input built by the
//! driver's encoder from the pure plan (`ib/srq/plan.rs`), executed by the model,
//! parsed by the driver's decoder. Basic SRQs are RMPs and XRC SRQs XRC SRQs, as
//! upstream `srq_cmd.c` makes them at ISSI 1; limits are armed and read back; every
//! object is released again and the model counts no protocol violation.

mod common;
#[path = "common/verbs.rs"]
mod verbs;

use mlx5_emu::ifc::srq::{rmpc, wq};
use mlx5_rs_pure::cmd::command::{self, CodecError, Command};
use mlx5_rs_pure::ib::srq::commands::*;
use mlx5_rs_pure::ib::srq::plan::{
    modify_limit, srq_shape, SrqCtx, SrqLimits, SrqShape, SrqType, DEFAULT_UIDX, IB_SRQ_LIMIT,
    KERNEL_PAGE,
};
use verbs::Dev;

fn exec<C: Command>(d: &mut Dev, cmd: C) -> Result<C::Reply, CodecError> {
    let mut i = vec![0u8; command::in_len(&cmd)];
    command::encode(&cmd, &mut i).unwrap();
    let out = d.h.ok(&i, command::out_len(&cmd));
    command::decode(cmd, &out)
}

/// The command's status (0 = OK) without checking it.
fn status<C: Command>(d: &mut Dev, cmd: C) -> u8 {
    let mut i = vec![0u8; command::in_len(&cmd)];
    command::encode(&cmd, &mut i).unwrap();
    d.h.run(&i, command::out_len(&cmd)).0
}

/// The emulator's caps, as the driver reads them.
const LIM: SrqLimits = SrqLimits {
    log_max_srq_sz: 15,
    max_wqe_sz_rq: 1024,
    cqe_version: 1,
};

/// A kernel queue's memory: its pages and doorbell record in guest memory.
fn kernel_mem(d: &mut Dev, s: &SrqShape) -> (Vec<u64>, u64) {
    let pas = (0..s.kernel_pages())
        .map(|_| d.h.alloc(KERNEL_PAGE as u64, 4096))
        .collect();
    (pas, d.h.alloc(64, 64))
}

fn violations(d: &Dev) -> u64 {
    d.h.dev.fw().stats.violations
}

#[test]
fn xrcd_allocated_and_released() {
    let mut d = Dev::new();
    let a = exec(&mut d, AllocXrcd).unwrap();
    let b = exec(&mut d, AllocXrcd).unwrap();
    assert_ne!(a, b);
    assert!(a < 1 << 24 && b < 1 << 24);
    assert_eq!(d.live("xrcd"), 2);
    exec(&mut d, DeallocXrcd { xrcdn: a }).unwrap();
    exec(&mut d, DeallocXrcd { xrcdn: b }).unwrap();
    assert_eq!(d.live("xrcd"), 0);
    // A second dealloc is refused (bad resource).
    assert_ne!(status(&mut d, DeallocXrcd { xrcdn: a }), 0);
    assert_eq!(d.h.dev.fw().objs.total(), 0);
}

#[test]
fn basic_srq_is_an_rmp_with_its_limit() {
    let mut d = Dev::new();
    let v0 = violations(&d);
    let pd = d.pd();
    let s = srq_shape(100, 3, &LIM).unwrap();
    let (pas, db) = kernel_mem(&mut d, &s);
    assert_eq!(pas.len(), 2);
    let ctx = SrqCtx::new(SrqType::Basic, &s, pd, db, 0, 0, false, None, 1);
    let rmpn = exec(&mut d, CreateRmp { ctx, pas: &pas }).unwrap();
    assert_eq!(d.live("rmp"), 1);
    assert_eq!((d.live("srq"), d.live("xrc_srq")), (0, 0));
    // The context as the model keeps it: size, stride (bytes: 16 << shift), PD,
    // doorbell, ready.
    {
        let fw = d.h.dev.fw();
        let q = &fw.objs.srqs[&rmpn];
        let w = &q.ctx[rmpc::WQ.raw().byte_off()..];
        assert_eq!(wq::LOG_WQ_SZ.raw().get(w), Some(7));
        assert_eq!(wq::LOG_WQ_STRIDE.raw().get(w), Some(6));
        assert_eq!(wq::PD.raw().get(w), Some(u64::from(pd)));
        assert_eq!(wq::DBR_ADDR.raw().get(w), Some(db));
        assert_eq!(rmpc::STATE.raw().get(&q.ctx), Some(1));
        assert_eq!(q.pas, pas);
    }
    let st = exec(&mut d, QueryRmp { rmpn }).unwrap();
    assert_eq!(
        st,
        SrqState {
            lwm: 0,
            error: false
        }
    );
    // modify_srq(IB_SRQ_LIMIT, 10) → MODIFY_RMP lwm 10, read back by QUERY_RMP.
    let lwm = modify_limit(IB_SRQ_LIMIT, 10, s.max).unwrap().unwrap();
    exec(&mut d, ModifyRmpLwm { rmpn, lwm }).unwrap();
    assert_eq!(exec(&mut d, QueryRmp { rmpn }).unwrap().lwm, 10);
    exec(&mut d, ModifyRmpLwm { rmpn, lwm: 0 }).unwrap();
    assert_eq!(exec(&mut d, QueryRmp { rmpn }).unwrap().lwm, 0);
    exec(&mut d, DestroyRmp { rmpn }).unwrap();
    assert_eq!(d.live("rmp"), 0);
    // Gone: query and destroy refused.
    assert_ne!(status(&mut d, QueryRmp { rmpn }), 0);
    assert_ne!(status(&mut d, DestroyRmp { rmpn }), 0);
    assert_eq!(violations(&d), v0);
}

#[test]
fn xrc_srq_names_its_domain_and_cq() {
    let mut d = Dev::new();
    let v0 = violations(&d);
    let pd = d.pd();
    let cqn = d.cq();
    let xrcdn = exec(&mut d, AllocXrcd).unwrap();
    let s = srq_shape(15, 1, &LIM).unwrap();
    let (pas, db) = kernel_mem(&mut d, &s);
    let x = Some((xrcdn, cqn, DEFAULT_UIDX));
    let ctx = SrqCtx::new(SrqType::Xrc, &s, pd, db, 0, 0, false, x, 1);
    let srqn = exec(&mut d, CreateXrcSrq { ctx, pas: &pas }).unwrap();
    assert_eq!(d.live("xrc_srq"), 1);
    {
        use mlx5_emu::ifc::srq::xrc_srqc;
        let fw = d.h.dev.fw();
        let q = &fw.objs.srqs[&srqn];
        assert_eq!(q.xrcd, Some(xrcdn));
        assert_eq!(q.cqn, Some(cqn));
        let dbr = (xrc_srqc::DB_RECORD_ADDR_H.raw().get(&q.ctx).unwrap() << 32)
            | (xrc_srqc::DB_RECORD_ADDR_L.raw().get(&q.ctx).unwrap() << 2);
        assert_eq!(dbr, db);
        assert_eq!(
            xrc_srqc::USER_INDEX.raw().get(&q.ctx),
            Some(u64::from(DEFAULT_UIDX))
        );
        assert_eq!(xrc_srqc::LOG_XRC_SRQ_SIZE.raw().get(&q.ctx), Some(4));
    }
    exec(&mut d, ArmXrcSrq { srqn, lwm: 3 }).unwrap();
    assert_eq!(
        exec(&mut d, QueryXrcSrq { srqn }).unwrap(),
        SrqState {
            lwm: 3,
            error: false
        }
    );
    // The XRC SRQ and the RMP command sets do not mix.
    assert_ne!(status(&mut d, QueryRmp { rmpn: srqn }), 0);
    exec(&mut d, DestroyXrcSrq { srqn }).unwrap();
    exec(&mut d, DeallocXrcd { xrcdn }).unwrap();
    assert_eq!((d.live("xrc_srq"), d.live("xrcd")), (0, 0));
    assert_eq!(violations(&d), v0);
}

#[test]
fn bad_references_and_sizes_refused_by_the_device() {
    let mut d = Dev::new();
    let pd = d.pd();
    let cqn = d.cq();
    let s = srq_shape(15, 1, &LIM).unwrap();
    let (pas, db) = kernel_mem(&mut d, &s);
    // An XRC SRQ of a domain that does not exist.
    let ctx = SrqCtx::new(SrqType::Xrc, &s, pd, db, 0, 0, false, Some((77, cqn, 0)), 1);
    assert_ne!(status(&mut d, CreateXrcSrq { ctx, pas: &pas }), 0);
    // An RMP of a PD that does not exist.
    let ctx = SrqCtx::new(SrqType::Basic, &s, pd + 100, db, 0, 0, false, None, 1);
    assert_ne!(status(&mut d, CreateRmp { ctx, pas: &pas }), 0);
    // Larger than log_max_srq_sz (the pure plan refuses it first; the device too).
    let mut ctx = SrqCtx::new(SrqType::Basic, &s, pd, db, 0, 0, false, None, 1);
    ctx.log_size = 16;
    assert_ne!(status(&mut d, CreateRmp { ctx, pas: &pas }), 0);
    assert_eq!(d.h.dev.fw().objs.srqs.len(), 0);
}

#[test]
fn encoder_rejects_values_wider_than_fields() {
    let s = srq_shape(15, 1, &LIM).unwrap();
    let mut ctx = SrqCtx::new(SrqType::Basic, &s, 1 << 24, 0, 0, 0, false, None, 1);
    let cmd = CreateRmp { ctx, pas: &[] };
    let mut i = vec![0u8; command::in_len(&cmd)];
    assert!(matches!(
        command::encode(&cmd, &mut i),
        Err(CodecError::Overflow(_))
    ));
    ctx.pd = 1;
    ctx.log_size = 32;
    let cmd = CreateXrcSrq { ctx, pas: &[] };
    let mut i = vec![0u8; command::in_len(&cmd)];
    assert!(command::encode(&cmd, &mut i).is_err());
}
