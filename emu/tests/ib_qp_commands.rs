//! The QP verbs' commands (`ib/qp/commands.rs`) and contexts (`ib/qp/create.rs`,
//! `ib/qp/modify.rs`), through the host crate, against the firmware model: RC, UC
//! and UD QPs created with the driver's CREATE_QP context, walked RESET → INIT → RTR
//! → RTS with the driver's transition plans (loopback to their own QPN), queried
//! back into the attributes that were set, refused where the PRM's state table has
//! no transition, moved to ERR and RESET and destroyed, leaving no QP.

mod common;
#[path = "common/verbs.rs"]
mod verbs;

use mlx5_emu::ifc::status::CmdStatus;
use mlx5_rs_pure::cmd::command::{self, CodecError, Command};
use mlx5_rs_pure::ffi::rdma::{ib_ah_abi::AhAttr, ib_qp_abi::QpAttr};
use mlx5_rs_pure::ib::qp::commands::*;
use mlx5_rs_pure::ib::qp::create::{create_qpc, rx_type, CreateQpc, WqSizes};
use mlx5_rs_pure::ib::qp::modify::{
    access, after_modify, ib_state, mask, plan_modify, query_attr, ModifyCaps, ModifyPlan,
    QpShadow, QpType,
};
use mlx5_rs_pure::ifc::opcodes::Opcode;
use verbs::Dev;

/// Runs `cmd`; its reply, or the (status, syndrome) the device answered.
fn exec<C: Command>(d: &mut Dev, cmd: C) -> Result<C::Reply, (u8, u32)> {
    let mut i = vec![0u8; command::in_len(&cmd)];
    command::encode(&cmd, &mut i).unwrap();
    let (st, synd, out) = d.h.run(&i, command::out_len(&cmd));
    if st != 0 {
        return Err((st, synd));
    }
    command::decode(cmd, &out).map_err(|e: CodecError| panic!("decode: {e:?}"))
}

/// The transition command a plan names.
fn run_plan(d: &mut Dev, qpn: u32, p: &ModifyPlan) -> Result<(), (u8, u32)> {
    let (opt_mask, qpc) = (p.opt_mask, &p.qpc);
    match p.op {
        Opcode::RST2INIT_QP => exec(d, Rst2InitQp { qpn, opt_mask, qpc }),
        Opcode::INIT2INIT_QP => exec(d, Init2InitQp { qpn, opt_mask, qpc }),
        Opcode::INIT2RTR_QP => exec(d, Init2RtrQp { qpn, opt_mask, qpc }),
        Opcode::RTR2RTS_QP => exec(d, Rtr2RtsQp { qpn, opt_mask, qpc }),
        Opcode::RTS2RTS_QP => exec(d, Rts2RtsQp { qpn, opt_mask, qpc }),
        Opcode::SQERR2RTS_QP => exec(d, SqErr2RtsQp { qpn, opt_mask, qpc }),
        Opcode::SQD_RTS_QP => exec(d, Sqd2RtsQp { qpn, opt_mask, qpc }),
        Opcode::_2ERR_QP => exec(d, QpToErr { qpn }),
        Opcode::_2RST_QP => exec(d, QpToRst { qpn }),
        op => panic!("not a transition: {op:?}"),
    }
}

fn caps() -> ModifyCaps {
    ModifyCaps {
        num_ports: 1,
        pkey_tbl_len: 64,
        gid_tbl_len: 8,
        log_max_ra_res_qp: 4,
        log_max_ra_req_qp: 4,
        log_max_msg: 30,
        stat_rate_support: 0,
        atomic_mode: None,
    }
}

/// A QP of `ty` with a 16-entry RQ of 64-byte WQEs and a 16-block SQ (8 KiB).
fn create(d: &mut Dev, ty: QpType, pd: u32, cq: u32) -> (u32, QpShadow) {
    let buf = d.h.alloc(8192, 4096);
    let dbr = d.h.alloc(64, 64);
    let wq = WqSizes {
        rq_wqe_cnt: 16,
        rq_wqe_shift: 6,
        sq_wqe_cnt: 16,
        ..WqSizes::default()
    };
    let ctx = create_qpc(&CreateQpc {
        st: ty.st(),
        pdn: pd,
        wq,
        rq_type: rx_type(ty, false, true),
        cqn_snd: Some(cq),
        cqn_rcv: Some(cq),
        dbr_addr: dbr,
        uar_page: d.uar,
        ..CreateQpc::default()
    })
    .unwrap();
    let qpn = exec(
        d,
        CreateQp {
            qpc: &ctx,
            pas: &[buf, buf + 4096],
        },
    )
    .unwrap();
    let sh = QpShadow {
        ty,
        user: true,
        port: 0,
        atomic_rd_en: 0,
        resp_depth: 0,
        alt_port: 0,
        pdn: pd,
        cqn_snd: Some(cq),
        cqn_rcv: Some(cq),
        rq_wqe_cnt: 16,
        db_dma: dbr,
    };
    (qpn, sh)
}

fn step(d: &mut Dev, qpn: u32, sh: &mut QpShadow, a: &QpAttr) -> Result<(), (u8, u32)> {
    let p = plan_modify(sh, a, &caps()).unwrap().unwrap();
    run_plan(d, qpn, &p)?;
    after_modify(sh, a);
    Ok(())
}

fn walk(d: &mut Dev, qpn: u32, sh: &mut QpShadow, lid: u16) -> [QpAttr; 3] {
    let ty = sh.ty;
    let connected = ty.connected();
    let mut m1 = mask::STATE | mask::PKEY_INDEX | mask::PORT;
    m1 |= if connected {
        mask::ACCESS_FLAGS
    } else {
        mask::QKEY
    };
    let a1 = QpAttr {
        attr_mask: m1,
        cur_qp_state: ib_state::RESET,
        qp_state: ib_state::INIT,
        pkey_index: 0,
        port_num: 1,
        qkey: 0x1234_5678,
        qp_access_flags: access::REMOTE_WRITE,
        ..QpAttr::default()
    };
    step(d, qpn, sh, &a1).unwrap();
    let m2 = if connected {
        let mut m = mask::STATE | mask::AV | mask::PATH_MTU | mask::DEST_QPN | mask::RQ_PSN;
        if ty == QpType::Rc {
            m |= mask::MAX_DEST_RD_ATOMIC | mask::MIN_RNR_TIMER;
        }
        m
    } else {
        mask::STATE
    };
    let a2 = QpAttr {
        attr_mask: m2,
        cur_qp_state: ib_state::INIT,
        qp_state: ib_state::RTR,
        path_mtu: 5,
        dest_qp_num: qpn,
        rq_psn: 0x42,
        max_dest_rd_atomic: 1,
        min_rnr_timer: 12,
        ah_attr: AhAttr {
            dlid: lid,
            port_num: 1,
            sl: 0,
            ..AhAttr::default()
        },
        ..QpAttr::default()
    };
    step(d, qpn, sh, &a2).unwrap();
    let mut m3 = mask::STATE | mask::SQ_PSN;
    if ty == QpType::Rc {
        m3 |= mask::TIMEOUT | mask::RETRY_CNT | mask::RNR_RETRY | mask::MAX_QP_RD_ATOMIC;
    }
    let a3 = QpAttr {
        attr_mask: m3,
        cur_qp_state: ib_state::RTR,
        qp_state: ib_state::RTS,
        sq_psn: 0x77,
        timeout: 14,
        retry_cnt: 7,
        rnr_retry: 7,
        max_rd_atomic: 1,
        ..QpAttr::default()
    };
    step(d, qpn, sh, &a3).unwrap();
    [a1, a2, a3]
}

#[test]
fn rc_uc_ud_walk_to_rts_query_back_and_go() {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    for ty in [QpType::Rc, QpType::Uc, QpType::Ud] {
        let (qpn, mut sh) = create(&mut d, ty, pd, cq);
        let q = query_attr(ty, &exec(&mut d, QueryQp { qpn }).unwrap(), 1).unwrap();
        assert_eq!(q.qp_state, ib_state::RESET, "{ty:?}");
        let [a1, a2, a3] = walk(&mut d, qpn, &mut sh, 1);
        let q = query_attr(ty, &exec(&mut d, QueryQp { qpn }).unwrap(), 1).unwrap();
        assert_eq!(q.qp_state, ib_state::RTS, "{ty:?}");
        assert_eq!(q.port_num, 1);
        assert_eq!(q.pkey_index, a1.pkey_index);
        assert_eq!(q.sq_psn, a3.sq_psn, "{ty:?}");
        if ty.connected() {
            assert_eq!(q.dest_qp_num, qpn, "loopback to itself");
            assert_eq!(q.rq_psn, a2.rq_psn);
            assert_eq!(q.path_mtu, a2.path_mtu);
            assert_eq!(q.ah_attr.dlid, 1);
            assert_eq!(q.ah_attr.port_num, 1);
            assert_eq!(q.qp_access_flags, a1.qp_access_flags);
        } else {
            assert_eq!(q.qkey, a1.qkey);
        }
        if ty == QpType::Rc {
            assert_eq!((q.timeout, q.retry_cnt, q.rnr_retry), (14, 7, 7));
            assert_eq!(q.min_rnr_timer, a2.min_rnr_timer);
            assert_eq!((q.max_rd_atomic, q.max_dest_rd_atomic), (1, 1));
        }
        // RTS → RTR has no command; a command from the wrong state fails with
        // BAD_QP_STATE (0x10).
        let p = plan_modify(
            &sh,
            &QpAttr {
                attr_mask: mask::STATE,
                cur_qp_state: ib_state::INIT,
                qp_state: ib_state::RTR,
                ..QpAttr::default()
            },
            &caps(),
        )
        .unwrap()
        .unwrap();
        let e = run_plan(&mut d, qpn, &p).unwrap_err();
        assert_eq!(e.0, CmdStatus::BAD_QP_STATE_ERR as u8, "{ty:?}");
        for to in [ib_state::ERR, ib_state::RESET] {
            let cur = query_attr(ty, &exec(&mut d, QueryQp { qpn }).unwrap(), 1)
                .unwrap()
                .qp_state;
            let a = QpAttr {
                attr_mask: mask::STATE,
                cur_qp_state: cur,
                qp_state: to,
                ..QpAttr::default()
            };
            step(&mut d, qpn, &mut sh, &a).unwrap();
            let q = query_attr(ty, &exec(&mut d, QueryQp { qpn }).unwrap(), 1).unwrap();
            assert_eq!(q.qp_state, to);
        }
        exec(&mut d, DestroyQp { qpn }).unwrap();
        assert!(exec(&mut d, QueryQp { qpn }).is_err(), "destroyed");
    }
    assert_eq!(d.live("qp"), 0);
}

#[test]
fn create_refused_for_unknown_objects() {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    let (qpn, _) = create(&mut d, QpType::Rc, pd, cq);
    // Unknown CQ and PD: the device refuses, no QP is made.
    let before = d.live("qp");
    let ctx = create_qpc(&CreateQpc {
        st: QpType::Rc.st(),
        pdn: pd,
        rq_type: rx_type(QpType::Rc, false, false),
        cqn_snd: Some(cq + 100),
        cqn_rcv: Some(cq),
        uar_page: d.uar,
        ..CreateQpc::default()
    })
    .unwrap();
    assert!(exec(
        &mut d,
        CreateQp {
            qpc: &ctx,
            pas: &[]
        }
    )
    .is_err());
    let ctx = create_qpc(&CreateQpc {
        st: QpType::Rc.st(),
        pdn: pd + 100,
        rq_type: rx_type(QpType::Rc, false, false),
        cqn_snd: Some(cq),
        cqn_rcv: Some(cq),
        uar_page: d.uar,
        ..CreateQpc::default()
    })
    .unwrap();
    assert!(exec(
        &mut d,
        CreateQp {
            qpc: &ctx,
            pas: &[]
        }
    )
    .is_err());
    assert_eq!(d.live("qp"), before);
    exec(&mut d, DestroyQp { qpn }).unwrap();
    assert!(exec(&mut d, DestroyQp { qpn }).is_err(), "twice");
    assert_eq!(d.live("qp"), 0);
}
