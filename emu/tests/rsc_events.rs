//! QP and SRQ async events raised through the control socket: the EQE layout of
//! `struct mlx5_eqe_qp_srq`, delivery only to an EQ subscribed to the type, refusal
//! for objects that do not exist and for types of the other kind.

mod common;
#[path = "common/verbs.rs"]
mod verbs;

use common::input;
use mlx5_emu::control::handle;
use mlx5_emu::ifc::eq::{create_eq_out, eqc, EVENT_BITMASK_OFFSET, PAS_OFFSET};
use mlx5_emu::ifc::eqe::{event_type as et, rsc_type, Eqe};
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::mem::GuestMemory;
use serde_json::{json, Value};
use verbs::{set_at, Dev, SrqCmd};
use zerocopy::FromBytes;

/// An EQ subscribed to `mask` (first word of the bitmask); its number and buffer.
fn eq(d: &mut Dev, mask: u64) -> (u8, u64) {
    let buf = d.h.alloc(4096, 4096);
    d.h.mem.write(buf, &[1u8; 4096]).unwrap();
    let mut inp = input(PAS_OFFSET + 8, Opcode::CREATE_EQ as u16, 0, &[]);
    set_at(&mut inp, 0x10, eqc::LOG_EQ_SIZE, 6);
    set_at(&mut inp, 0x10, eqc::UAR_PAGE, u64::from(d.uar));
    inp[EVENT_BITMASK_OFFSET..EVENT_BITMASK_OFFSET + 8].copy_from_slice(&mask.to_be_bytes());
    inp[PAS_OFFSET..PAS_OFFSET + 8].copy_from_slice(&buf.to_be_bytes());
    let out = d.h.ok(&inp, 16);
    (create_eq_out::EQ_NUMBER.raw().get(&out).unwrap() as u8, buf)
}

fn entry(d: &Dev, buf: u64, i: u64) -> Eqe {
    let mut e = [0u8; 64];
    d.h.mem.read(buf + 64 * i, &mut e).unwrap();
    Eqe::read_from_bytes(&e).unwrap()
}

fn req(d: &Dev, v: Value) -> Value {
    handle(&d.h.dev, &v)
}

#[test]
fn qp_events_reach_only_a_subscribed_eq() {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    let qpn = d.qp(0, pd, cq);
    // The only EQ takes completions and page requests: nothing is written.
    let r = req(&d, json!({"cmd":"qp_event","qpn":qpn,"event":"COMM_EST"}));
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["written"], 0, "{r}");
    assert_eq!(r["results"][0], "NoEq");
    // An EQ subscribed as upstream's async EQ gets each event once, as the PRM lays
    // it out: resource type QP at byte 20 of the data, the number in bytes 24..28.
    let (eqn, buf) = eq(&mut d, 0x1F_02BE);
    let names = [
        ("PATH_MIG", et::PATH_MIG),
        ("COMM_EST", et::COMM_EST),
        ("SQ_DRAINED", et::SQ_DRAINED),
        ("SRQ_LAST_WQE", et::SRQ_LAST_WQE),
        ("WQ_CATAS_ERROR", et::WQ_CATAS_ERROR),
        ("PATH_MIG_FAILED", et::PATH_MIG_FAILED),
        ("WQ_INVAL_REQ_ERROR", et::WQ_INVAL_REQ_ERROR),
        ("WQ_ACCESS_ERROR", et::WQ_ACCESS_ERROR),
    ];
    for (i, (name, t)) in names.iter().enumerate() {
        let r = req(&d, json!({"cmd":"qp_event","qpn":qpn,"event":name}));
        assert_eq!(r["results"][0], format!("Written({eqn})"), "{r}");
        let e = entry(&d, buf, i as u64);
        assert_eq!(e.type_, *t, "{name}");
        assert_eq!(e.owner & 1, 0, "written for the first pass");
        assert_eq!(e.data[20], rsc_type::QP);
        assert_eq!(u32::from_be_bytes(e.data[24..28].try_into().unwrap()), qpn);
        assert_eq!(e.qp_srq().qp_srq_n.get(), qpn);
    }
    // By number too, several at once.
    let r = req(&d, json!({"cmd":"qp_event","qpn":qpn,"event":2,"count":3}));
    assert_eq!(r["written"], 3, "{r}");
}

#[test]
fn srq_events_name_the_srq() {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    let srqn = d.srq(SrqCmd::Rmp, pd, cq, 0);
    let (_, buf) = eq(&mut d, 0x1F_02BE);
    for (i, (name, t)) in [
        ("SRQ_RQ_LIMIT", et::SRQ_RQ_LIMIT),
        ("SRQ_CATAS_ERROR", et::SRQ_CATAS_ERROR),
    ]
    .iter()
    .enumerate()
    {
        let r = req(&d, json!({"cmd":"srq_event","srqn":srqn,"event":name}));
        assert_eq!(r["written"], 1, "{r}");
        let e = entry(&d, buf, i as u64);
        assert_eq!(e.type_, *t);
        assert_eq!(e.qp_srq().qp_srq_n.get(), srqn);
    }
}

#[test]
fn events_of_missing_objects_or_the_wrong_kind_are_refused() {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    let qpn = d.qp(0, pd, cq);
    let srqn = d.srq(SrqCmd::Rmp, pd, cq, 0);
    for r in [
        req(
            &d,
            json!({"cmd":"qp_event","qpn":qpn + 1,"event":"COMM_EST"}),
        ),
        req(
            &d,
            json!({"cmd":"srq_event","srqn":srqn + 1,"event":"SRQ_RQ_LIMIT"}),
        ),
        req(
            &d,
            json!({"cmd":"qp_event","qpn":qpn,"event":"SRQ_RQ_LIMIT"}),
        ),
        req(
            &d,
            json!({"cmd":"srq_event","srqn":srqn,"event":"COMM_EST"}),
        ),
        req(&d, json!({"cmd":"qp_event","qpn":qpn,"event":4})),
        req(&d, json!({"cmd":"qp_event","event":"COMM_EST"})),
    ] {
        assert_eq!(r["ok"], false, "{r}");
    }
}
