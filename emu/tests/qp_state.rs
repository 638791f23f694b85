//! The QP state machine: every (state, transition) pair for each service type,
//! accepted or refused with BAD_QP_STATE; opt_param_mask per transition; the context
//! fields a transition takes.

mod common;
#[path = "common/verbs.rs"]
mod verbs;

use mlx5_emu::fw::qp_state::{opt, st, state};
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::qp::{create_qp_in, qpc};
use mlx5_emu::ifc::status::CmdStatus;
use verbs::{set_at, Dev, SrqCmd};

const OK: u8 = CmdStatus::OK as u8;
const BAD_QP_STATE: u8 = CmdStatus::BAD_QP_STATE_ERR as u8;

/// The PRM table, written out here independently of the model: (command, from, to).
const TABLE: &[(Opcode, &[u8], u8)] = &[
    (Opcode::RST2INIT_QP, &[state::RST], state::INIT),
    (Opcode::INIT2INIT_QP, &[state::INIT], state::INIT),
    (Opcode::INIT2RTR_QP, &[state::INIT], state::RTR),
    (Opcode::RTR2RTS_QP, &[state::RTR], state::RTS),
    (Opcode::RTS2RTS_QP, &[state::RTS], state::RTS),
    (Opcode::SQERR2RTS_QP, &[state::SQER], state::RTS),
    (Opcode::SQD_RTS_QP, &[state::SQD], state::RTS),
    (Opcode::_2ERR_QP, &[0, 1, 2, 3, 4, 5, 6], state::ERR),
    (Opcode::_2RST_QP, &[0, 1, 2, 3, 4, 5, 6], state::RST),
];

const STATES: [u8; 7] = [
    state::RST,
    state::INIT,
    state::RTR,
    state::RTS,
    state::SQER,
    state::SQD,
    state::ERR,
];

/// The service types, with XRC as initiator and as target.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Plain(u8),
    XrcIni,
    XrcTgt,
}

struct Objs {
    pd: u32,
    cq: u32,
    xrcd: u32,
    xsrq: u32,
}

fn setup() -> (Dev, Objs) {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    let xrcd = d.xrcd();
    let xsrq = d.srq(SrqCmd::Xrc, pd, cq, xrcd);
    (d, Objs { pd, cq, xrcd, xsrq })
}

fn create(d: &mut Dev, o: &Objs, k: Kind) -> u32 {
    let c = create_qp_in::QPC.raw().byte_off();
    let mut inp = match k {
        Kind::Plain(s) => d.qp_input(s, o.pd, o.cq),
        Kind::XrcIni | Kind::XrcTgt => d.qp_input(st::XRC, o.pd, o.cq),
    };
    match k {
        Kind::XrcIni => {
            set_at(&mut inp, c, qpc::XRCD, u64::from(o.xrcd));
            set_at(&mut inp, c, qpc::RQ_TYPE, 3);
            set_at(&mut inp, c, qpc::CQN_RCV, 0);
        }
        Kind::XrcTgt => {
            set_at(&mut inp, c, qpc::XRCD, u64::from(o.xrcd));
            set_at(&mut inp, c, qpc::NO_SQ, 1);
            set_at(&mut inp, c, qpc::LOG_SQ_SIZE, 0);
            set_at(&mut inp, c, qpc::RQ_TYPE, 1);
            set_at(&mut inp, c, qpc::SRQN_RMPN_XRQN, u64::from(o.xsrq));
            set_at(&mut inp, c, qpc::CQN_SND, 0);
            set_at(&mut inp, c, qpc::CQN_RCV, 0);
        }
        Kind::Plain(_) => {}
    }
    if matches!(k, Kind::Plain(st::REG_UMR)) {
        // Upstream's UMR QP names no PD.
        set_at(&mut inp, c, qpc::PD, 0);
    }
    let out = d.h.ok(&inp, 16);
    mlx5_emu::ifc::qp::create_qp_out::QPN
        .raw()
        .get(&out)
        .unwrap() as u32
}

/// Drives a QP from RST to `s` through commands (and the device for SQER / SQD).
fn drive(d: &mut Dev, qpn: u32, s: u8) {
    let path: &[Opcode] = match s {
        state::RST => &[],
        state::INIT => &[Opcode::RST2INIT_QP],
        state::RTR => &[Opcode::RST2INIT_QP, Opcode::INIT2RTR_QP],
        _ => &[Opcode::RST2INIT_QP, Opcode::INIT2RTR_QP, Opcode::RTR2RTS_QP],
    };
    for op in path {
        assert_eq!(d.transition(*op, qpn, 0), OK, "{op:?} on the way to {s}");
    }
    match s {
        state::SQER | state::SQD => d.h.dev.fw().device_qp_state(qpn, s).unwrap(),
        state::ERR => assert_eq!(d.transition(Opcode::_2ERR_QP, qpn, 0), OK),
        _ => {}
    }
    assert_eq!(d.query_qp(qpn).0, s);
}

#[test]
fn every_state_and_transition_for_every_service_type() {
    let kinds = [
        Kind::Plain(st::RC),
        Kind::Plain(st::UC),
        Kind::Plain(st::UD),
        Kind::XrcIni,
        Kind::XrcTgt,
        Kind::Plain(st::QP0),
        Kind::Plain(st::QP1),
        Kind::Plain(st::REG_UMR),
    ];
    let (mut d, o) = setup();
    let mut accepted = 0;
    let mut refused = 0;
    for k in kinds {
        let qpn = create(&mut d, &o, k);
        for from in STATES {
            for (op, froms, to) in TABLE {
                assert_eq!(d.transition(Opcode::_2RST_QP, qpn, 0), OK);
                drive(&mut d, qpn, from);
                let got = d.transition(*op, qpn, 0);
                if froms.contains(&from) {
                    assert_eq!(got, OK, "{k:?} {op:?} from {from}");
                    assert_eq!(d.query_qp(qpn).0, *to, "{k:?} {op:?} from {from}");
                    accepted += 1;
                } else {
                    assert_eq!(got, BAD_QP_STATE, "{k:?} {op:?} from {from}");
                    assert_eq!(d.query_qp(qpn).0, from, "refused: state kept");
                    refused += 1;
                }
            }
        }
    }
    // 7 + 7 (2ERR, 2RST) + 7 single-source commands per service type.
    assert_eq!(accepted, 8 * 21);
    assert_eq!(refused, 8 * (9 * 7 - 21));
    assert_eq!(d.h.dev.fw().stats.violations, 0);
}

#[test]
fn unknown_qp_is_bad_res() {
    let (mut d, _) = setup();
    assert_eq!(
        d.transition(Opcode::RST2INIT_QP, 0x777, 0),
        CmdStatus::BAD_RES_ERR as u8
    );
}

#[test]
fn opt_param_mask_permissive_then_strict() {
    let (mut d, o) = setup();
    let qpn = create(&mut d, &o, Kind::Plain(st::RC));
    drive(&mut d, qpn, state::INIT);
    // Q_KEY is not an RC INIT→RTR optional parameter.
    let v0 = d.h.dev.fw().stats.violations;
    assert_eq!(d.transition(Opcode::INIT2RTR_QP, qpn, opt::Q_KEY), OK);
    assert_eq!(d.h.dev.fw().stats.violations, v0 + 1);
    d.h.dev.fw().strict.qp_opt_param = true;
    assert_eq!(
        d.transition(Opcode::RTR2RTS_QP, qpn, opt::Q_KEY),
        CmdStatus::BAD_PARAM_ERR as u8
    );
    assert_eq!(d.query_qp(qpn).0, state::RTR);
    // An allowed one passes under the strict rule.
    assert_eq!(d.transition(Opcode::RTR2RTS_QP, qpn, opt::RNR_TIMEOUT), OK);
    // UD takes Q_KEY on RTS→RTS.
    let ud = create(&mut d, &o, Kind::Plain(st::UD));
    drive(&mut d, ud, state::RTS);
    assert_eq!(d.transition(Opcode::RTS2RTS_QP, ud, opt::Q_KEY), OK);
    assert_eq!(
        d.transition(Opcode::RTS2RTS_QP, ud, opt::RRE),
        CmdStatus::BAD_PARAM_ERR as u8
    );
}

#[test]
fn transitions_take_their_fields() {
    let (mut d, o) = setup();
    let qpn = create(&mut d, &o, Kind::Plain(st::RC));
    drive(&mut d, qpn, state::RTR);
    let (_, ctx) = d.query_qp(qpn);
    assert_eq!(qpc::MTU.raw().get(&ctx).unwrap(), 3);
    assert_eq!(qpc::REMOTE_QPN.raw().get(&ctx).unwrap(), 0x1234);
    // An RTS→RTS without Q_KEY in the mask leaves the stored Q_Key (UD) alone.
    let ud = create(&mut d, &o, Kind::Plain(st::UD));
    drive(&mut d, ud, state::RTS);
    let mut inp = d.transition_input(Opcode::RTS2RTS_QP, ud, 0);
    let c = mlx5_emu::ifc::qp::rts2rts_qp_in::QPC.raw().byte_off();
    set_at(&mut inp, c, qpc::Q_KEY, 5);
    d.h.ok(&inp, 16);
    assert_eq!(
        qpc::Q_KEY.raw().get(&d.query_qp(ud).1).unwrap(),
        0x8001_0000
    );
    let mut inp = d.transition_input(Opcode::RTS2RTS_QP, ud, opt::Q_KEY);
    set_at(&mut inp, c, qpc::Q_KEY, 5);
    d.h.ok(&inp, 16);
    assert_eq!(qpc::Q_KEY.raw().get(&d.query_qp(ud).1).unwrap(), 5);
    // A connected QP needs a valid path MTU at INIT→RTR.
    let rc = create(&mut d, &o, Kind::Plain(st::RC));
    drive(&mut d, rc, state::INIT);
    let mut inp = d.transition_input(Opcode::INIT2RTR_QP, rc, 0);
    let c = mlx5_emu::ifc::qp::init2rtr_qp_in::QPC.raw().byte_off();
    set_at(&mut inp, c, qpc::MTU, 0);
    assert_eq!(d.h.run(&inp, 16).0, CmdStatus::BAD_PARAM_ERR as u8);
    // RST→INIT on a port that does not exist.
    let rc2 = create(&mut d, &o, Kind::Plain(st::RC));
    let mut inp = d.transition_input(Opcode::RST2INIT_QP, rc2, 0);
    let p = mlx5_emu::ifc::qp::rst2init_qp_in::QPC.raw().byte_off()
        + qpc::PRIMARY_ADDRESS_PATH.raw().byte_off();
    set_at(&mut inp, p, mlx5_emu::ifc::qp::ads::VHCA_PORT_NUM, 2);
    assert_eq!(d.h.run(&inp, 16).0, CmdStatus::BAD_PARAM_ERR as u8);
}

#[test]
fn device_moves_only_from_rts() {
    let (mut d, o) = setup();
    let qpn = create(&mut d, &o, Kind::Plain(st::UD));
    assert!(d.h.dev.fw().device_qp_state(qpn, state::SQD).is_err());
    assert!(d.h.dev.fw().device_qp_state(qpn, state::RTR).is_err());
    drive(&mut d, qpn, state::RTS);
    d.h.dev.fw().device_qp_state(qpn, state::SQD).unwrap();
    assert_eq!(d.query_qp(qpn).0, state::SQD);
}
