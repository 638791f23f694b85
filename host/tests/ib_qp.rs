//! The QP verbs' pure logic (`ib/qp/create.rs`, `ib/qp/size.rs`, `ib/qp/modify.rs`): kernel queue
//! sizes against upstream's arithmetic, the CREATE_QP context, the transition plans
//! (command, context fields, `opt_param_mask`) and the driver's attribute checks,
//! and a query of a planned context back into attributes; a QP path and an address
//! handle built from the one plain address vector (`ffi/rdma/ib_ah_abi.rs`) agree.

use mlx5_rs_pure::errno::Errno;
use mlx5_rs_pure::ffi::rdma::{ib_ah_abi::AhAttr, ib_qp_abi::QpAttr};
use mlx5_rs_pure::ib::ah::av::{self, AH_TYPE_IB};
use mlx5_rs_pure::ib::qp::create::{
    create_flags, create_qpc, kernel_xrc_ini_srq, rq_type, rx_type, scat, scatter_to_cqe,
    xrc_tgt_qpc, CreateQpc, WqSizes, XrcDevRes,
};
use mlx5_rs_pure::ib::qp::modify::{
    access, after_modify, allowed_optpar, atomic_mode, ib_state, mask, mask_to_optpar, plan_modify,
    query_attr, stat_rate, ModifyCaps, QpShadow, QpType,
};
use mlx5_rs_pure::ib::qp::size::{kernel_rq_size, kernel_sq_size, QpCap, SizeCaps};
use mlx5_rs_pure::ifc::field::{Field, Kind, F};
use mlx5_rs_pure::ifc::opcodes::Opcode;
use mlx5_rs_pure::ifc::qp::{ads, qpc};
use mlx5_rs_pure::ifc::qp_state::{optpar, state as hw_state, transition_op};

const EINVAL: Errno = Errno::EINVAL;
const ENOMEM: Errno = Errno::ENOMEM;

fn caps() -> SizeCaps {
    SizeCaps {
        log_max_qp_sz: 15,
        max_wqe_sz_sq: 1024,
        max_wqe_sz_rq: 512,
    }
}

fn get(ctx: &[u8], f: impl Into<Field>) -> u64 {
    f.into().get(ctx).unwrap()
}

/// An address-path field of the primary path, placed in `qpc`.
fn pri<T: Kind>(f: F<T, ads::Layout>) -> Field {
    f.within(qpc::PRIMARY_ADDRESS_PATH).raw()
}

/// Upstream's `calc_sq_size` restated step by step for RC (overhead: control 16 +
/// max(atomic 16 + raddr 16, UMR control 48 + mkey 64 + 64/16) = 132), UC (16 +
/// max(16, 112) = 128) and UD (control 16 + datagram 48 = 64).
#[test]
fn kernel_sq_sizes_follow_upstream_arithmetic() {
    let table: [(QpType, u32, u32, u32, u32); 6] = [
        // type, overhead, max_send_wr, max_send_sge, max_inline_data
        (QpType::Rc, 132, 64, 2, 0),
        (QpType::Rc, 132, 1, 1, 256),
        (QpType::Uc, 128, 100, 4, 0),
        (QpType::Ud, 64, 128, 1, 0),
        (QpType::Gsi, 64, 256, 3, 0),
        (QpType::Smi, 64, 3, 0, 64),
    ];
    for (ty, ovh, wr, sge, inl) in table {
        let cap = QpCap {
            max_send_wr: wr,
            max_send_sge: sge,
            max_inline_data: inl,
            ..QpCap::default()
        };
        let s = kernel_sq_size(ty, &cap, &caps()).unwrap();
        let with_inl = if inl != 0 { ovh + 4 + inl } else { 0 };
        let wqe = (with_inl.max(ovh + 16 * sge)).div_ceil(64) * 64;
        let wq = (wr * wqe).next_power_of_two();
        assert_eq!(s.sq_wqe_cnt, wq / 64, "{ty:?} {wr} {sge} {inl}");
        assert_eq!(s.sq_max_post, wq / wqe);
        assert_eq!(s.max_inline, wqe - ovh - 4);
        assert!(s.sq_max_gs >= sge);
        assert!(s.sq_wqe_cnt.is_power_of_two());
    }
    // RC, 64 WRs of 2 SGEs: 164 → 192-byte WQEs, 12288 → 16384 bytes.
    let s = kernel_sq_size(
        QpType::Rc,
        &QpCap {
            max_send_wr: 64,
            max_send_sge: 2,
            ..QpCap::default()
        },
        &caps(),
    )
    .unwrap();
    assert_eq!(
        (s.sq_wqe_cnt, s.sq_max_post, s.sq_max_gs, s.max_inline),
        (256, 85, 10, 56)
    );
    // No send WRs: no SQ.
    assert_eq!(
        kernel_sq_size(QpType::Rc, &QpCap::default(), &caps()),
        Ok(WqSizes::default())
    );
    // A WQE above max_wqe_sz_sq: EINVAL; a queue above log_max_qp_sz: ENOMEM.
    let big_inline = QpCap {
        max_send_wr: 1,
        max_inline_data: 2000,
        ..QpCap::default()
    };
    assert_eq!(
        kernel_sq_size(QpType::Rc, &big_inline, &caps()),
        Err(EINVAL)
    );
    let long = QpCap {
        max_send_wr: 1 << 15,
        max_send_sge: 1,
        ..QpCap::default()
    };
    assert_eq!(kernel_sq_size(QpType::Ud, &long, &caps()), Err(ENOMEM));
    // More SGEs than a 512-byte RC WQE holds past control and raddr: ENOMEM.
    let many = QpCap {
        max_send_wr: 1,
        max_send_sge: 40,
        ..QpCap::default()
    };
    assert_eq!(
        kernel_sq_size(
            QpType::Rc,
            &many,
            &SizeCaps {
                max_wqe_sz_sq: 2048,
                ..caps()
            }
        ),
        Err(ENOMEM)
    );
}

#[test]
fn kernel_rq_sizes_follow_upstream_arithmetic() {
    let c = caps();
    let cap = |wr, sge| QpCap {
        max_recv_wr: wr,
        max_recv_sge: sge,
        ..QpCap::default()
    };
    // 3 SGEs: 48 → 64-byte WQEs; 100 → 128 WQEs.
    assert_eq!(
        kernel_rq_size(&cap(100, 3), true, false, &c),
        Ok((128, 6, 4))
    );
    // With the signature segment: 16 + 48 → 64, one entry fewer.
    assert_eq!(
        kernel_rq_size(&cap(100, 3), true, true, &c),
        Ok((128, 6, 3))
    );
    // At least one basic block of queue: 1 WR of 16 bytes → 4 WQEs.
    assert_eq!(kernel_rq_size(&cap(1, 1), true, false, &c), Ok((4, 4, 1)));
    // No RQ (SRQ, or no receive WRs).
    assert_eq!(
        kernel_rq_size(&cap(100, 3), false, false, &c),
        Ok((0, 0, 0))
    );
    // Above log_max_qp_sz, or a WQE above max_wqe_sz_rq: EINVAL.
    assert_eq!(
        kernel_rq_size(&cap((1 << 15) + 1, 1), true, false, &c),
        Err(EINVAL)
    );
    assert_eq!(kernel_rq_size(&cap(4, 33), true, false, &c), Err(EINVAL));
}

#[test]
fn create_context_names_every_object() {
    let wq = WqSizes {
        rq_wqe_cnt: 64,
        rq_wqe_shift: 6,
        sq_wqe_cnt: 128,
        ..WqSizes::default()
    };
    let p = CreateQpc {
        st: QpType::Rc.st(),
        pdn: 5,
        wq,
        rq_type: rx_type(QpType::Rc, false, true),
        cqn_snd: Some(7),
        cqn_rcv: Some(8),
        srqn: None,
        xrcd: None,
        dbr_addr: 0x1234_5000,
        user_index: Some(9),
        uar_page: 3,
        log_page_size: 0,
        page_offset: 2,
        wq_signature: true,
        block_lb_mc: false,
        packet_based_credit: false,
        cs_req: 0,
        cs_res: 0,
    };
    let c = create_qpc(&p).unwrap();
    assert_eq!(get(&c, qpc::ST), 0);
    assert_eq!(get(&c, qpc::PM_STATE), 3);
    assert_eq!(get(&c, qpc::PD), 5);
    assert_eq!(get(&c, qpc::LOG_RQ_SIZE), 6);
    assert_eq!(get(&c, qpc::LOG_RQ_STRIDE), 2);
    assert_eq!(get(&c, qpc::LOG_SQ_SIZE), 7);
    assert_eq!(get(&c, qpc::NO_SQ), 0);
    assert_eq!(get(&c, qpc::RQ_TYPE), u64::from(rq_type::REGULAR));
    assert_eq!((get(&c, qpc::CQN_SND), get(&c, qpc::CQN_RCV)), (7, 8));
    assert_eq!(get(&c, qpc::DBR_ADDR), 0x1234_5000);
    assert_eq!(get(&c, qpc::USER_INDEX), 9);
    assert_eq!(get(&c, qpc::UAR_PAGE), 3);
    assert_eq!(get(&c, qpc::PAGE_OFFSET), 2);
    assert_eq!(get(&c, qpc::WQ_SIGNATURE), 1);
    assert_eq!(get(&c, qpc::REQ_E2E_CREDIT_MODE), 0);
    // An accepted MLX5_QP_FLAG_PACKET_BASED_CREDIT_MODE reaches the context (upstream
    // create_user_qp sets req_e2e_credit_mode).
    let pb = create_qpc(&CreateQpc {
        packet_based_credit: true,
        ..p
    })
    .unwrap();
    assert_eq!(get(&pb, qpc::REQ_E2E_CREDIT_MODE), 1);
    assert_eq!((get(&c, qpc::CS_REQ), get(&c, qpc::CS_RES)), (0, 0));
    let sc = create_qpc(&CreateQpc {
        cs_req: scat::REQ_DATA64,
        cs_res: scat::RES_DATA32,
        ..p
    })
    .unwrap();
    assert_eq!((get(&sc, qpc::CS_REQ), get(&sc, qpc::CS_RES)), (0x22, 0x1));
    // No SQ, SRQ receive queue.
    let c = create_qpc(&CreateQpc {
        wq: WqSizes::default(),
        rq_type: rx_type(QpType::Ud, true, false),
        srqn: Some(11),
        ..p
    })
    .unwrap();
    assert_eq!(get(&c, qpc::NO_SQ), 1);
    assert_eq!(get(&c, qpc::RQ_TYPE), u64::from(rq_type::SRQ));
    assert_eq!(get(&c, qpc::SRQN_RMPN_XRQN), 11);
    assert_eq!(get(&c, qpc::LOG_RQ_SIZE), 0);
    assert_eq!(rx_type(QpType::Rc, false, false), rq_type::ZERO_LEN);
    assert_eq!(rx_type(QpType::XrcTgt, false, false), rq_type::SRQ);
    assert_eq!(get(&c, qpc::XRCD), 0, "no domain named without XRC");
    // An XRC initiator's context: upstream create_user_qp names c0 as its receive CQ,
    // xrcdn1 and s0, receive type SRQ whatever the request.
    assert_eq!(rx_type(QpType::XrcIni, false, true), rq_type::SRQ);
    let ini = create_qpc(&CreateQpc {
        st: QpType::XrcIni.st(),
        rq_type: rx_type(QpType::XrcIni, false, false),
        cqn_rcv: Some(21),
        srqn: Some(22),
        xrcd: Some(23),
        ..p
    })
    .unwrap();
    assert_eq!(get(&ini, qpc::ST), 3, "MLX5_QP_ST_XRC");
    assert_eq!(
        (
            get(&ini, qpc::CQN_RCV),
            get(&ini, qpc::SRQN_RMPN_XRQN),
            get(&ini, qpc::XRCD)
        ),
        (21, 22, 23)
    );
    assert_eq!(get(&ini, qpc::RQ_TYPE), u64::from(rq_type::SRQ));
    assert!(create_qpc(&CreateQpc {
        xrcd: Some(1 << 24),
        ..p
    })
    .is_err());
}

#[test]
fn create_flags_as_upstream_process_create_flags() {
    // ib_qp_create_flags: IPOIB_UD_LSO 1 << 0, BLOCK_MULTICAST_LOOPBACK 1 << 1,
    // CROSS_CHANNEL 1 << 2, INTEGRITY_EN 1 << 4, PCI_WRITE_END_PADDING 1 << 11.
    assert_eq!(create_flags(0, false), Ok(false));
    assert_eq!(create_flags(0, true), Ok(false));
    assert_eq!(create_flags(1 << 1, true), Ok(true), "with cap block_lb_mc");
    let eopnotsupp = Err(Errno::EOPNOTSUPP);
    assert_eq!(create_flags(1 << 1, false), eopnotsupp, "without the cap");
    for other in [1 << 0, 1 << 2, 1 << 4, 1 << 11, 1 << 31] {
        assert_eq!(create_flags(other, true), eopnotsupp, "{other:#x}");
        assert_eq!(create_flags(other | 1 << 1, true), eopnotsupp, "{other:#x}");
    }
}

#[test]
fn kernel_xrc_initiator_names_upstream_create_kernel_qp_srq() {
    // Upstream `create_kernel_qp`: `attr->srq` ? (xrcdn0, its SRQ) : (xrcdn1, s1).
    let d = XrcDevRes {
        pdn: 3,
        cqn: 4,
        srqn: 5,
        xrcdn: 6,
        srqn1: 7,
        xrcdn0: 8,
    };
    assert_eq!(kernel_xrc_ini_srq(&d, None), (7, 6), "s1 in xrcdn1");
    assert_eq!(
        kernel_xrc_ini_srq(&d, Some(11)),
        (11, 8),
        "the SRQ in xrcdn0"
    );
}

#[test]
fn xrc_target_context_as_upstream_create_xrc_tgt_qp() {
    let d = XrcDevRes {
        pdn: 3,
        cqn: 4,
        srqn: 5,
        xrcdn: 6,
        srqn1: 7,
        xrcdn0: 8,
    };
    let c = xrc_tgt_qpc(&d, 9, Some(0xff_ffff), false).unwrap();
    assert_eq!(get(&c, qpc::ST), 3, "MLX5_QP_ST_XRC");
    assert_eq!(get(&c, qpc::PM_STATE), 3, "migrated");
    assert_eq!(get(&c, qpc::PD), 3, "devr->p0");
    assert_eq!(get(&c, qpc::RQ_TYPE), u64::from(rq_type::SRQ));
    assert_eq!(get(&c, qpc::NO_SQ), 1);
    assert_eq!(
        (get(&c, qpc::CQN_SND), get(&c, qpc::CQN_RCV)),
        (4, 4),
        "devr->c0 both"
    );
    assert_eq!(get(&c, qpc::SRQN_RMPN_XRQN), 5, "devr->s0");
    assert_eq!(get(&c, qpc::XRCD), 9, "the target's own domain, not xrcdn1");
    assert_eq!(get(&c, qpc::USER_INDEX), 0xff_ffff);
    assert_eq!(
        (
            get(&c, qpc::DBR_ADDR),
            get(&c, qpc::UAR_PAGE),
            get(&c, qpc::LOG_RQ_SIZE),
            get(&c, qpc::LOG_SQ_SIZE)
        ),
        (0, 0, 0, 0),
        "no queue, no doorbell"
    );
    assert_eq!(get(&c, qpc::BLOCK_LB_MC), 0);
    let c = xrc_tgt_qpc(&d, 9, None, true).unwrap();
    assert_eq!(get(&c, qpc::USER_INDEX), 0, "CQE version 0");
    assert_eq!(get(&c, qpc::BLOCK_LB_MC), 1, "the create flag");
    assert!(
        xrc_tgt_qpc(&d, 1 << 24, None, false).is_err(),
        "domain wider than 24 bits"
    );
}

#[test]
fn scatter_to_cqe_follows_upstream() {
    use QpType::*;
    // Without the accepted flag: none, whatever the QP.
    assert_eq!(scatter_to_cqe(Rc, false, true, true, true, true), (0, 0));
    // Responder of RC and UC: the receive CQ's CQE size.
    assert_eq!(
        scatter_to_cqe(Uc, true, false, false, false, false),
        (0, scat::RES_DATA32)
    );
    assert_eq!(
        scatter_to_cqe(Uc, true, true, true, true, true),
        (0, scat::RES_DATA64)
    );
    // Requester of RC only, with every WR signalled or ALLOW_SCATTER_CQE.
    assert_eq!(
        scatter_to_cqe(Rc, true, false, false, true, false),
        (0, scat::RES_DATA32)
    );
    assert_eq!(
        scatter_to_cqe(Rc, true, false, true, true, false),
        (scat::REQ_DATA64, scat::RES_DATA32)
    );
    assert_eq!(
        scatter_to_cqe(Rc, true, true, false, false, true),
        (scat::REQ_DATA32, scat::RES_DATA64)
    );
    // UD: none.
    assert_eq!(scatter_to_cqe(Ud, true, true, true, true, true), (0, 0));
}

fn mcaps() -> ModifyCaps {
    ModifyCaps {
        num_ports: 1,
        pkey_tbl_len: 128,
        gid_tbl_len: 8,
        log_max_ra_res_qp: 4,
        log_max_ra_req_qp: 4,
        log_max_msg: 30,
        stat_rate_support: 0x7fff,
        atomic_mode: Some(1),
    }
}

fn shadow(ty: QpType) -> QpShadow {
    QpShadow {
        ty,
        user: true,
        port: 0,
        atomic_rd_en: 0,
        resp_depth: 0,
        alt_port: 0,
        pdn: 3,
        cqn_snd: Some(4),
        cqn_rcv: Some(5),
        rq_wqe_cnt: 16,
        db_dma: 0xabc0,
    }
}

fn attr(m: u32, cur: u32, new: u32) -> QpAttr {
    QpAttr {
        attr_mask: m | mask::STATE,
        cur_qp_state: cur,
        qp_state: new,
        ..QpAttr::default()
    }
}

fn rst2init() -> QpAttr {
    let m = mask::PKEY_INDEX | mask::PORT | mask::ACCESS_FLAGS | mask::QKEY;
    QpAttr {
        pkey_index: 2,
        port_num: 1,
        qp_access_flags: access::REMOTE_WRITE | access::REMOTE_READ,
        qkey: 0x1111_2222,
        ..attr(m, ib_state::RESET, ib_state::INIT)
    }
}

fn init2rtr(dest: u32, lid: u16) -> QpAttr {
    let m = mask::AV
        | mask::PATH_MTU
        | mask::DEST_QPN
        | mask::RQ_PSN
        | mask::MAX_DEST_RD_ATOMIC
        | mask::MIN_RNR_TIMER;
    QpAttr {
        path_mtu: 3,
        dest_qp_num: dest,
        rq_psn: 0x123,
        max_dest_rd_atomic: 4,
        min_rnr_timer: 12,
        ah_attr: AhAttr {
            dlid: lid,
            sl: 2,
            src_path_bits: 1,
            static_rate: 0,
            port_num: 1,
            is_global: 1,
            sgid_index: 0,
            hop_limit: 64,
            traffic_class: 3,
            flow_label: 0x12345,
            dgid: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8],
            ..AhAttr::default()
        },
        ..attr(m, ib_state::INIT, ib_state::RTR)
    }
}

fn rtr2rts() -> QpAttr {
    let m =
        mask::TIMEOUT | mask::RETRY_CNT | mask::RNR_RETRY | mask::SQ_PSN | mask::MAX_QP_RD_ATOMIC;
    QpAttr {
        timeout: 14,
        retry_cnt: 7,
        rnr_retry: 6,
        sq_psn: 0x456,
        max_rd_atomic: 3,
        ..attr(m, ib_state::RTR, ib_state::RTS)
    }
}

#[test]
fn rc_walk_plans_the_commands_and_contexts() {
    let mut qp = shadow(QpType::Rc);
    let c = mcaps();
    let a = rst2init();
    let p = plan_modify(&qp, &a, &c).unwrap().unwrap();
    assert_eq!(p.op, Opcode::RST2INIT_QP);
    assert_eq!(p.opt_mask, 0, "RST2INIT takes no optional parameters");
    assert_eq!(get(&p.qpc, pri(ads::VHCA_PORT_NUM)), 1);
    assert_eq!(get(&p.qpc, pri(ads::PKEY_INDEX)), 2);
    assert_eq!(
        (
            get(&p.qpc, qpc::RWE),
            get(&p.qpc, qpc::RRE),
            get(&p.qpc, qpc::RAE)
        ),
        (1, 0, 0),
        "without a responder depth only remote write stays (set_qpc_atomic_flags)"
    );
    assert_eq!(get(&p.qpc, qpc::DBR_ADDR), 0xabc0);
    assert_eq!(get(&p.qpc, qpc::RLKY), 0, "user QP");
    assert_eq!((get(&p.qpc, qpc::PD), get(&p.qpc, qpc::CQN_SND)), (3, 4));
    after_modify(&mut qp, &a);
    assert_eq!(qp.port, 1);

    let a = init2rtr(0x99, 7);
    let p = plan_modify(&qp, &a, &c).unwrap().unwrap();
    assert_eq!(p.op, Opcode::INIT2RTR_QP);
    assert_eq!(p.opt_mask, optpar::RRE | optpar::RAE | optpar::RWE);
    assert_eq!(get(&p.qpc, qpc::MTU), 3);
    assert_eq!(get(&p.qpc, qpc::LOG_MSG_MAX), 30);
    assert_eq!(get(&p.qpc, qpc::REMOTE_QPN), 0x99);
    assert_eq!(get(&p.qpc, qpc::NEXT_RCV_PSN), 0x123);
    assert_eq!(get(&p.qpc, qpc::LOG_RRA_MAX), 2);
    assert_eq!(get(&p.qpc, qpc::MIN_RNR_NAK), 12);
    assert_eq!(get(&p.qpc, pri(ads::RLID)), 7);
    assert_eq!(get(&p.qpc, pri(ads::SL)), 2);
    assert_eq!(get(&p.qpc, pri(ads::MLID)), 1);
    assert_eq!(get(&p.qpc, pri(ads::GRH)), 1);
    assert_eq!(get(&p.qpc, pri(ads::HOP_LIMIT)), 64);
    assert_eq!(get(&p.qpc, pri(ads::FLOW_LABEL)), 0x12345);
    assert_eq!(
        get(&p.qpc, pri(ads::VHCA_PORT_NUM)),
        1,
        "the port of the QP"
    );
    // Now with a responder depth: the access flags saved at RST2INIT apply.
    assert_eq!((get(&p.qpc, qpc::RRE), get(&p.qpc, qpc::RWE)), (1, 1));
    assert_eq!(get(&p.qpc, qpc::LOG_ACK_REQ_FREQ), 8);
    after_modify(&mut qp, &a);

    let a = rtr2rts();
    let p = plan_modify(&qp, &a, &c).unwrap().unwrap();
    assert_eq!(p.op, Opcode::RTR2RTS_QP);
    assert_eq!(p.opt_mask, 0);
    assert_eq!(get(&p.qpc, pri(ads::ACK_TIMEOUT)), 14);
    assert_eq!(get(&p.qpc, qpc::RETRY_COUNT), 7);
    assert_eq!(get(&p.qpc, qpc::RNR_RETRY), 6);
    assert_eq!(get(&p.qpc, qpc::NEXT_SEND_PSN), 0x456);
    assert_eq!(get(&p.qpc, qpc::LOG_SRA_MAX), 2, "fls(3 - 1)");

    // RTS→RTS with a new RNR timer: an optional parameter.
    let a = QpAttr {
        min_rnr_timer: 3,
        ..attr(mask::MIN_RNR_TIMER, ib_state::RTS, ib_state::RTS)
    };
    let p = plan_modify(&qp, &a, &c).unwrap().unwrap();
    assert_eq!(
        (p.op, p.opt_mask),
        (Opcode::RTS2RTS_QP, optpar::RNR_TIMEOUT)
    );
    // To ERR and back to RESET: header-only commands.
    let p = plan_modify(&qp, &attr(0, ib_state::RTS, ib_state::ERR), &c)
        .unwrap()
        .unwrap();
    assert_eq!(p.op, Opcode::_2ERR_QP);
    let p = plan_modify(&qp, &attr(0, ib_state::ERR, ib_state::RESET), &c)
        .unwrap()
        .unwrap();
    assert_eq!(p.op, Opcode::_2RST_QP);
    // RESET to RESET: nothing to send.
    assert_eq!(
        plan_modify(&qp, &attr(0, ib_state::RESET, ib_state::RESET), &c),
        Ok(None)
    );
}

#[test]
fn ud_and_special_qps_fix_the_mtu_and_take_the_qkey() {
    let qp = shadow(QpType::Ud);
    let p = plan_modify(&qp, &rst2init(), &mcaps()).unwrap().unwrap();
    assert_eq!(get(&p.qpc, qpc::Q_KEY), 0x1111_2222);
    assert_eq!(
        (get(&p.qpc, qpc::MTU), get(&p.qpc, qpc::LOG_MSG_MAX)),
        (5, 12)
    );
    let a = QpAttr {
        qkey: 5,
        ..attr(mask::QKEY, ib_state::INIT, ib_state::RTR)
    };
    let p = plan_modify(&qp, &a, &mcaps()).unwrap().unwrap();
    assert_eq!((p.op, p.opt_mask), (Opcode::INIT2RTR_QP, optpar::Q_KEY));
    // QP1 of port 1, a kernel QP: port from create, MTU 256, rlky.
    let gsi = QpShadow {
        user: false,
        port: 1,
        ..shadow(QpType::Gsi)
    };
    let a = QpAttr {
        pkey_index: 0,
        qkey: 0x8001_0000,
        ..attr(
            mask::PKEY_INDEX | mask::QKEY,
            ib_state::RESET,
            ib_state::INIT,
        )
    };
    let p = plan_modify(&gsi, &a, &mcaps()).unwrap().unwrap();
    assert_eq!(get(&p.qpc, qpc::ST), 0x8);
    assert_eq!(get(&p.qpc, pri(ads::VHCA_PORT_NUM)), 1);
    assert_eq!(
        (get(&p.qpc, qpc::MTU), get(&p.qpc, qpc::LOG_MSG_MAX)),
        (1, 8)
    );
    assert_eq!(get(&p.qpc, qpc::RLKY), 1);
}

#[test]
fn driver_checks_refuse_as_upstream() {
    let qp = shadow(QpType::Rc);
    let c = mcaps();
    let bad = |a: QpAttr| plan_modify(&qp, &a, &c).unwrap_err();
    let mut a = rst2init();
    a.port_num = 2;
    assert_eq!(bad(a), EINVAL, "port above the device's");
    a.port_num = 0;
    assert_eq!(bad(a), EINVAL, "port 0");
    let mut a = rst2init();
    a.pkey_index = 128;
    assert_eq!(bad(a), EINVAL, "P_Key index past the table");
    let mut a = rtr2rts();
    a.max_rd_atomic = 17;
    assert_eq!(bad(a), EINVAL, "max_rd_atomic above 1 << log_max_ra_res_qp");
    let mut a = init2rtr(1, 1);
    a.max_dest_rd_atomic = 17;
    assert_eq!(bad(a), EINVAL);
    let mut a = init2rtr(1, 1);
    a.path_mtu = 0;
    assert_eq!(bad(a), EINVAL, "MTU outside 256..4096");
    a.path_mtu = 6;
    assert_eq!(bad(a), EINVAL);
    let mut a = init2rtr(1, 1);
    a.ah_attr.sgid_index = 8;
    assert_eq!(bad(a), EINVAL, "GID index past the table");
    let mut a = init2rtr(1, 1);
    a.ah_attr.static_rate = 30;
    assert_eq!(bad(a), EINVAL, "rate outside enum ib_rate");
    let a = QpAttr {
        attr_mask: mask::STATE | mask::RATE_LIMIT,
        ..rtr2rts()
    };
    assert_eq!(bad(a), Errno::EOPNOTSUPP, "no packet pacing");
    let a = QpAttr {
        attr_mask: mask::STATE | (1 << 22),
        ..rtr2rts()
    };
    assert_eq!(bad(a), Errno::EOPNOTSUPP, "reserved attribute bit");
    // Remote atomics without an atomic mode.
    let mut a = rst2init();
    a.attr_mask |= mask::MAX_DEST_RD_ATOMIC;
    a.max_dest_rd_atomic = 1;
    a.qp_access_flags |= access::REMOTE_ATOMIC;
    let p = plan_modify(&qp, &a, &c).unwrap().unwrap();
    assert_eq!(
        (get(&p.qpc, qpc::RAE), get(&p.qpc, qpc::ATOMIC_MODE)),
        (1, 1)
    );
    let none = ModifyCaps {
        atomic_mode: None,
        ..c
    };
    assert_eq!(plan_modify(&qp, &a, &none), Err(Errno::EOPNOTSUPP));
    // A transition without a command (RTR back to INIT).
    assert_eq!(bad(attr(0, ib_state::RTR, ib_state::INIT)), EINVAL);
}

#[test]
fn tables_match_upstream() {
    use hw_state::*;
    for s in [RST, INIT, RTR, RTS, SQER, SQD, ERR] {
        assert_eq!(transition_op(s, RST), Some(Opcode::_2RST_QP));
        assert_eq!(transition_op(s, ERR), Some(Opcode::_2ERR_QP));
    }
    assert_eq!(transition_op(RTS, RTR), None);
    assert_eq!(transition_op(RST, RTR), None);
    assert_eq!(transition_op(SQER, RTS), Some(Opcode::SQERR2RTS_QP));
    assert_eq!(transition_op(SQD, RTS), Some(Opcode::SQD_RTS_QP));
    // AV names the primary path and the port; access flags the three enables.
    assert_eq!(
        mask_to_optpar(mask::AV),
        optpar::PRIMARY_ADDR_PATH | optpar::PRI_PORT
    );
    assert_eq!(
        mask_to_optpar(mask::ACCESS_FLAGS),
        optpar::RWE | optpar::RRE | optpar::RAE
    );
    assert_eq!(
        mask_to_optpar(mask::STATE | mask::PATH_MTU | mask::DEST_QPN),
        0
    );
    assert_eq!(allowed_optpar(RST, INIT, QpType::Rc), 0);
    assert_eq!(
        allowed_optpar(RTS, RTS, QpType::Ud),
        optpar::Q_KEY | optpar::SRQN | optpar::CQN_RCV | optpar::PP_INDEX
    );
    assert_eq!(allowed_optpar(SQD, RTS, QpType::XrcIni), 0);
    assert_eq!(
        allowed_optpar(INIT, RTR, QpType::Gsi),
        optpar::PKEY_INDEX | optpar::Q_KEY
    );
    // Rates: current port rate, a supported rate, stepping down to one.
    assert_eq!(stat_rate(0, 0), Ok(0));
    assert_eq!(stat_rate(3, 1 << 8), Ok(8), "10 Gb/s: 3 + 5");
    assert_eq!(stat_rate(16, 0x7fff), Ok(3), "100 Gb/s");
    assert_eq!(
        stat_rate(7, 1 << 8),
        Ok(8),
        "40 Gb/s unsupported: down to 10"
    );
    assert_eq!(stat_rate(1, 0), Err(EINVAL));
    // Atomic modes.
    assert_eq!(atomic_mode(false, 3, 8), None);
    assert_eq!(atomic_mode(true, 3, 0), Some(1), "IB compatible");
    assert_eq!(atomic_mode(true, 0xc, 0x8), Some(3), "8 bytes");
    assert_eq!(atomic_mode(true, 0xc, 0x108), Some(8), "256 bytes");
    assert_eq!(atomic_mode(true, 0, 0), None);
}

#[test]
fn query_reads_back_what_was_set() {
    let mut qp = shadow(QpType::Rc);
    let c = mcaps();
    let a1 = rst2init();
    let p1 = plan_modify(&qp, &a1, &c).unwrap().unwrap();
    after_modify(&mut qp, &a1);
    let a2 = init2rtr(0x99, 7);
    let p2 = plan_modify(&qp, &a2, &c).unwrap().unwrap();
    let a3 = rtr2rts();
    let p3 = plan_modify(&qp, &a3, &c).unwrap().unwrap();
    // The device keeps what each command carried; merge as it would.
    let mut ctx = p1.qpc;
    for p in [&p2, &p3] {
        for (d, s) in ctx.iter_mut().zip(p.qpc.iter()) {
            *d |= *s;
        }
    }
    qpc::STATE
        .raw()
        .set(&mut ctx, u64::from(hw_state::RTS))
        .unwrap();
    let q = query_attr(QpType::Rc, &ctx, 1).unwrap();
    assert_eq!((q.qp_state, q.cur_qp_state), (ib_state::RTS, ib_state::RTS));
    assert_eq!(q.path_mtu, a2.path_mtu);
    assert_eq!(q.dest_qp_num, a2.dest_qp_num);
    assert_eq!((q.rq_psn, q.sq_psn), (a2.rq_psn, a3.sq_psn));
    assert_eq!(q.qp_access_flags, a1.qp_access_flags);
    assert_eq!(q.max_dest_rd_atomic, 4);
    assert_eq!(q.max_rd_atomic, 4, "3 rounded up to a power of two");
    assert_eq!(q.min_rnr_timer, a2.min_rnr_timer);
    assert_eq!((q.timeout, q.retry_cnt, q.rnr_retry), (14, 7, 6));
    assert_eq!((q.pkey_index, q.port_num), (2, 1));
    assert_eq!(q.ah_attr.dlid, 7);
    assert_eq!(q.ah_attr.sl, 2);
    assert_eq!(q.ah_attr.is_global, 1);
    assert_eq!(q.ah_attr.dgid, a2.ah_attr.dgid);
    assert_eq!(q.ah_attr.flow_label, a2.ah_attr.flow_label);
    assert_eq!(q.ah_attr.port_num, 1);
    assert_eq!(
        q.alt_ah_attr,
        AhAttr::default(),
        "no alternate path: port 0"
    );
    assert_eq!(q.path_mig_state, 0, "migrated");
    // A state the PRM does not have.
    qpc::STATE.raw().set(&mut ctx, 9).unwrap();
    assert_eq!(query_attr(QpType::Rc, &ctx, 1), Err(Errno::EPROTO));
    // SQ draining reads as SQD with sq_draining.
    qpc::STATE.raw().set(&mut ctx, 7).unwrap();
    let q = query_attr(QpType::Rc, &ctx, 1).unwrap();
    assert_eq!((q.qp_state, q.sq_draining), (ib_state::SQD, 1));
}

/// A value wider than its QP-context field is refused (EINVAL), never masked into the
/// field (upstream's `MLX5_SET` keeps the low bits: a PSN of 2^24 would become 0).
#[test]
fn values_wider_than_their_qpc_field_are_refused() {
    let qp = shadow(QpType::Rc);
    let c = mcaps();
    let bad = |a: QpAttr| plan_modify(&qp, &a, &c);
    // Each at the largest value that fits: accepted, and written whole.
    let mut a = rtr2rts();
    a.sq_psn = 0xff_ffff;
    a.timeout = 31;
    let p = plan_modify(&qp, &a, &c).unwrap().unwrap();
    assert_eq!(get(&p.qpc, qpc::NEXT_SEND_PSN), 0xff_ffff);
    assert_eq!(get(&p.qpc, pri(ads::ACK_TIMEOUT)), 31);
    let mut a = rtr2rts();
    a.sq_psn = 1 << 24;
    assert_eq!(bad(a), Err(EINVAL), "SQ PSN of 25 bits");
    let mut a = rtr2rts();
    a.timeout = 32;
    assert_eq!(bad(a), Err(EINVAL), "ACK timeout of 6 bits");
    let mut a = rtr2rts();
    a.retry_cnt = 8;
    assert_eq!(bad(a), Err(EINVAL), "retry count of 4 bits");
    let mut a = rtr2rts();
    a.rnr_retry = 8;
    assert_eq!(bad(a), Err(EINVAL), "RNR retry of 4 bits");
    let mut a = init2rtr(1 << 24, 1);
    assert_eq!(bad(a), Err(EINVAL), "remote QPN of 25 bits");
    a = init2rtr(1, 1);
    a.rq_psn = u32::MAX;
    assert_eq!(bad(a), Err(EINVAL), "RQ PSN");
    let mut a = init2rtr(1, 1);
    a.min_rnr_timer = 32;
    assert_eq!(bad(a), Err(EINVAL), "RNR NAK timer of 6 bits");
    let mut a = init2rtr(1, 1);
    a.ah_attr.sl = 16;
    assert_eq!(bad(a), Err(EINVAL), "SL of 5 bits");
    let mut a = init2rtr(1, 1);
    a.ah_attr.src_path_bits = 0x80;
    assert_eq!(bad(a), Err(EINVAL), "path bits of 8 bits into mlid (7)");
    let mut a = init2rtr(1, 1);
    a.ah_attr.flow_label = 1 << 20;
    assert_eq!(bad(a), Err(EINVAL), "flow label of 21 bits");
    // A shadow value the device gave too wide (a CQ number of 25 bits).
    let wide = QpShadow {
        cqn_snd: Some(1 << 24),
        ..qp
    };
    assert_eq!(plan_modify(&wide, &rst2init(), &c), Err(EINVAL));
}

/// CREATE_QP's context refuses what does not fit too: a UAR index, PD or CQ number of
/// 25 bits, an RQ stride below 16 bytes, more than 2^15 WQEs.
#[test]
fn create_qpc_refuses_values_wider_than_their_field() {
    let p = CreateQpc {
        st: QpType::Rc.st(),
        pdn: 5,
        wq: WqSizes {
            rq_wqe_cnt: 64,
            rq_wqe_shift: 6,
            sq_wqe_cnt: 128,
            ..WqSizes::default()
        },
        uar_page: 0xff_ffff,
        ..CreateQpc::default()
    };
    assert_eq!(get(&create_qpc(&p).unwrap(), qpc::UAR_PAGE), 0xff_ffff);
    let e = |q: CreateQpc| create_qpc(&q).unwrap_err();
    assert_eq!(
        e(CreateQpc {
            uar_page: 1 << 24,
            ..p
        }),
        EINVAL
    );
    assert_eq!(e(CreateQpc { pdn: 1 << 24, ..p }), EINVAL);
    assert_eq!(
        e(CreateQpc {
            cqn_rcv: Some(1 << 24),
            ..p
        }),
        EINVAL
    );
    assert_eq!(
        e(CreateQpc {
            user_index: Some(1 << 24),
            ..p
        }),
        EINVAL
    );
    assert_eq!(
        e(CreateQpc {
            log_page_size: 32,
            ..p
        }),
        EINVAL
    );
    assert_eq!(
        e(CreateQpc {
            page_offset: 64,
            ..p
        }),
        EINVAL
    );
    let wq = |w: WqSizes| CreateQpc { wq: w, ..p };
    assert_eq!(
        e(wq(WqSizes {
            rq_wqe_shift: 3,
            ..p.wq
        })),
        EINVAL
    );
    assert_eq!(
        e(wq(WqSizes {
            rq_wqe_shift: 12,
            ..p.wq
        })),
        EINVAL
    );
    assert_eq!(
        e(wq(WqSizes {
            sq_wqe_cnt: 1 << 16,
            ..p.wq
        })),
        EINVAL
    );
}

/// The QP path (`ads`, modify_qp) and the address handle (`mlx5_av`, create_ah) are
/// built from the same plain `AhAttr` the shim fills for both, and encode it alike
/// (upstream's `mlx5_set_path` and `create_ib_ah`); query_qp and query_ah read it back
/// alike, but for the static rate, which query_ah reports as the device's code
/// (upstream) and query_qp as the `enum ib_rate`.
#[test]
fn path_and_address_handle_read_one_address_vector_alike() {
    let mut qp = shadow(QpType::Rc);
    let c = mcaps();
    let a1 = rst2init();
    plan_modify(&qp, &a1, &c).unwrap().unwrap();
    after_modify(&mut qp, &a1);
    let mut a2 = init2rtr(0x99, 0x1234);
    a2.ah_attr.ah_type = AH_TYPE_IB;
    a2.ah_attr.static_rate = 7; // IB_RATE_40_GBPS
    a2.ah_attr.sgid_index = 5;
    a2.ah_attr.src_path_bits = 0x35;
    let ah = a2.ah_attr;
    let p2 = plan_modify(&qp, &a2, &c).unwrap().unwrap();
    let av = av::encode(&ah, c.stat_rate_support).unwrap();
    let ctx = &p2.qpc;
    let g = av.grh_gid_fl.get();
    assert_eq!(get(ctx, pri(ads::RLID)), u64::from(av.rlid.get()));
    assert_eq!(get(ctx, pri(ads::MLID)), u64::from(av.fl_mlid & 0x7f));
    assert_eq!(get(ctx, pri(ads::SL)), u64::from(av.stat_rate_sl & 0xf));
    assert_eq!(
        get(ctx, pri(ads::STAT_RATE)),
        u64::from(av.stat_rate_sl >> 4)
    );
    assert_ne!(av.stat_rate_sl >> 4, 0, "a rate code, not the default");
    assert_eq!(get(ctx, pri(ads::GRH)), u64::from(g >> 30 & 1));
    assert_eq!(
        get(ctx, pri(ads::SRC_ADDR_INDEX)),
        u64::from(g >> 20 & 0xff)
    );
    assert_eq!(get(ctx, pri(ads::FLOW_LABEL)), u64::from(g & 0xf_ffff));
    assert_eq!(get(ctx, pri(ads::HOP_LIMIT)), u64::from(av.hop_limit));
    assert_eq!(get(ctx, pri(ads::TCLASS)), u64::from(av.tclass));
    let rgid = pri(ads::RGID_RIP).bytes(ctx).unwrap();
    assert_eq!(rgid, &av.rgid[..]);

    let mut rtr = *ctx;
    qpc::STATE
        .raw()
        .set(&mut rtr, u64::from(hw_state::RTR))
        .unwrap();
    let from_qp = query_attr(QpType::Rc, &rtr, 1).unwrap().ah_attr;
    let from_ah = av::decode(&av, AH_TYPE_IB);
    assert_eq!(from_qp.static_rate, ah.static_rate);
    assert_eq!(from_ah.static_rate, av.stat_rate_sl >> 4);
    assert_eq!(
        (from_qp.port_num, from_qp.src_path_bits),
        (1, ah.src_path_bits)
    );
    let same = |a: AhAttr| AhAttr {
        ah_type: AH_TYPE_IB,
        static_rate: 0,
        port_num: 0,
        src_path_bits: 0,
        ..a
    };
    assert_eq!(same(from_qp), same(from_ah));
    assert_eq!(same(from_ah), same(ah));
}
