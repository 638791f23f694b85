//! Page requests as firmware may send them: several outstanding, back to back, more
//! than the EQ holds, gives and takes above 50,000 pages (takes asked again), what
//! counts as answered, requests left unanswered, and the take-answer faults.

mod common;

use common::{create_eq, give_pages, input, take_pages, Host};
use mlx5_emu::config::EmuConfig;
use mlx5_emu::control::handle;
use mlx5_emu::ifc::eqe::event_type;
use mlx5_emu::ifc::opcodes::{teardown_profile, Opcode};
use mlx5_emu::mem::GuestMemory;
use serde_json::{json, Value};

struct Ring {
    eqn: u8,
    buf: u64,
    uar: u32,
    log: u8,
    ci: u32,
}

fn initialized(mem: usize) -> (Host, Ring) {
    let mut h = Host::with_mem(
        EmuConfig {
            boot_pages: 16,
            init_pages: 32,
            ..Default::default()
        },
        mem,
    );
    h.init_hca();
    let uar = h.alloc_uar();
    let log = 3u8;
    let (eqn, buf) = create_eq(&mut h, uar, log, 1u64 << event_type::PAGE_REQUEST, 0);
    (
        h,
        Ring {
            eqn,
            buf,
            uar,
            log,
            ci: 0,
        },
    )
}

/// Reads every new EQE (page requests: signed num_pages) and publishes the
/// consumer index, as a driver's EQ handler does.
fn drain(h: &Host, r: &mut Ring) -> Vec<i32> {
    let mut got = Vec::new();
    loop {
        let mut e = [0u8; 64];
        let i = r.ci & ((1 << r.log) - 1);
        h.mem.read(r.buf + 64 * u64::from(i), &mut e).unwrap();
        let owner = ((r.ci >> r.log) & 1) as u8;
        if e[0x3f] & 1 != owner {
            break;
        }
        assert_eq!(e[1], event_type::PAGE_REQUEST);
        got.push(i32::from_be_bytes([e[0x24], e[0x25], e[0x26], e[0x27]]));
        r.ci += 1;
    }
    let off = u64::from(r.uar) * 4096 + 0x48;
    h.dev.bar0_write(
        off,
        &((u32::from(r.eqn) << 24) | (r.ci & 0xff_ffff)).to_be_bytes(),
    );
    h.dev.step();
    got
}

fn pages(h: &Host) -> Value {
    mlx5_emu::control::stats(&h.dev)["pages"].clone()
}

#[test]
fn many_requests_back_to_back_wait_for_eq_room_and_are_answered_in_order() {
    let (mut h, mut r) = initialized(96 << 20);
    // 20 requests at once into an 8-entry EQ, without waiting for any answer.
    let list: Vec<i32> = (1..=10).flat_map(|k| [k, -k]).collect();
    let rep = handle(&h.dev, &json!({"cmd":"page_requests","num_pages":list}));
    assert_eq!(rep["ok"], true, "{rep}");
    let p = pages(&h);
    assert_eq!(
        (p["requests_sent"].as_u64(), p["requests_queued"].as_u64()),
        (Some(8), Some(12))
    );
    assert_eq!(p["requests_outstanding"], 8);
    let mut seen = Vec::new();
    while seen.len() < list.len() {
        let got = drain(&h, &mut r);
        assert!(!got.is_empty(), "requests stuck: {}", pages(&h));
        seen.extend(got);
    }
    assert_eq!(seen, list, "sent in order");
    assert_eq!(pages(&h)["requests_outstanding"], 20);
    // Answered in order, one MANAGE_PAGES each.
    for n in &list {
        if *n > 0 {
            give_pages(&mut h, *n as usize);
        } else {
            assert_eq!(
                take_pages(&mut h, n.unsigned_abs() as usize).len(),
                n.unsigned_abs() as usize
            );
        }
    }
    let p = pages(&h);
    assert_eq!(p["requests_answered"], 20, "{p}");
    assert_eq!(p["requests_outstanding"], 0);
    assert_eq!(p["requests_out_of_order"], 0);
    assert_eq!(p["held"], 48);
    assert_eq!(p["outstanding_requests"], json!({}));
    // A pattern repeated: count requests.
    let rep = handle(
        &h.dev,
        &json!({"cmd":"page_requests","pattern":[3,-3],"count":5}),
    );
    assert_eq!(
        (
            rep["ok"].clone(),
            rep["requests"].clone(),
            rep["net_pages"].clone()
        ),
        (json!(true), json!(5), json!(3))
    );
    assert_eq!(
        handle(&h.dev, &json!({"cmd":"page_requests","num_pages":[0]}))["ok"],
        false
    );
}

#[test]
fn gives_and_takes_above_50000_pages() {
    let (mut h, mut r) = initialized(768 << 20);
    h.dev.page_request(60_000, false).unwrap();
    assert_eq!(drain(&h, &mut r), [60_000]);
    // Given in two commands: answered after the second.
    give_pages(&mut h, 40_000);
    assert_eq!(pages(&h)["requests_answered"], 0);
    give_pages(&mut h, 20_000);
    assert_eq!(pages(&h)["requests_answered"], 1);
    h.dev.page_request(-60_000, false).unwrap();
    assert_eq!(drain(&h, &mut r), [-60_000]);
    // The driver caps a take at 50,000; the firmware asks again for the rest.
    assert_eq!(take_pages(&mut h, 50_000).len(), 50_000);
    let p = pages(&h);
    assert_eq!(
        (
            p["requests_answered"].as_u64(),
            p["requests_reasked"].as_u64()
        ),
        (Some(2), Some(1))
    );
    assert_eq!(drain(&h, &mut r), [-10_000]);
    assert_eq!(take_pages(&mut h, 10_000).len(), 10_000);
    let p = pages(&h);
    assert_eq!(
        (p["requests_sent"].as_u64(), p["requests_answered"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(p["held"], 48);
    // A take never returns more than 50,000, whatever is asked.
    h.dev.page_request(55_000, false).unwrap();
    drain(&h, &mut r);
    give_pages(&mut h, 55_000);
    h.dev.page_request(-55_000, false).unwrap();
    drain(&h, &mut r);
    assert_eq!(take_pages(&mut h, 55_000).len(), 50_000);
    // Asked for all of it in one take: answered, nothing asked again.
    assert_eq!(pages(&h)["requests_reasked"], 1);
}

#[test]
fn unanswered_requests_are_counted_when_the_function_goes_away() {
    let (mut h, mut r) = initialized(96 << 20);
    h.dev.page_requests(&[5, 7, -2], false).unwrap();
    drain(&h, &mut r);
    give_pages(&mut h, 5);
    let p = pages(&h);
    assert_eq!(
        (
            p["requests_answered"].as_u64(),
            p["requests_outstanding"].as_u64()
        ),
        (Some(1), Some(2))
    );
    // Teardown and reclaim without answering the other two.
    h.ok(
        &input(
            16,
            Opcode::TEARDOWN_HCA as u16,
            0,
            &[(
                mlx5_emu::ifc::cmds::teardown_hca_in::PROFILE.raw(),
                u64::from(teardown_profile::GRACEFUL_CLOSE),
            )],
        ),
        16,
    );
    // The reclaim's takes ask for pages: the take request counts as answered.
    while !take_pages(&mut h, 64).is_empty() {}
    h.ok(&input(16, Opcode::DISABLE_HCA as u16, 0, &[]), 16);
    let p = pages(&h);
    assert_eq!(
        (
            p["requests_answered"].as_u64(),
            p["requests_unanswered"].as_u64()
        ),
        (Some(2), Some(1)),
        "{p}"
    );
    assert_eq!(p["requests_outstanding"], 0);
}

#[test]
fn take_fault_from_the_control_socket() {
    let (mut h, _r) = initialized(96 << 20);
    let extra = give_pages(&mut h, 10);
    h.ok(
        &input(
            16,
            Opcode::TEARDOWN_HCA as u16,
            0,
            &[(
                mlx5_emu::ifc::cmds::teardown_hca_in::PROFILE.raw(),
                u64::from(teardown_profile::GRACEFUL_CLOSE),
            )],
        ),
        16,
    );
    assert_eq!(
        handle(
            &h.dev,
            &json!({"cmd":"take_fault","mode":"never_given","count":2})
        )["ok"],
        true
    );
    for _ in 0..2 {
        let got = take_pages(&mut h, 4);
        assert_eq!(got.len(), 4);
        assert!(got
            .iter()
            .all(|a| !extra.contains(a) && *a >= mlx5_emu::fw::pages::NEVER_GIVEN_BASE));
    }
    assert_eq!(pages(&h)["held"], 58, "nothing left the ledger");
    assert_eq!(pages(&h)["take_faults"], 2);
    // Count used up: normal again.
    assert_eq!(take_pages(&mut h, 4).len(), 4);
    assert_eq!(
        handle(&h.dev, &json!({"cmd":"take_fault","mode":"duplicate"}))["ok"],
        true
    );
    let got = take_pages(&mut h, 4);
    assert_eq!(got.len(), 4);
    assert!(got.iter().all(|a| *a == got[0]));
    assert_eq!(pages(&h)["held"], 53);
    let a = extra[0];
    assert_eq!(
        handle(
            &h.dev,
            &json!({"cmd":"take_fault","addrs":[a, 0x7000],"count":1})
        )["ok"],
        true
    );
    let got = take_pages(&mut h, 4);
    assert_eq!(got, vec![a, 0x7000]);
    assert_eq!(
        handle(&h.dev, &json!({"cmd":"take_fault","mode":"off"}))["ok"],
        true
    );
    assert_eq!(
        handle(&h.dev, &json!({"cmd":"take_fault","mode":"bogus"}))["ok"],
        false
    );
    assert!(pages(&h)["take_fault"].is_null());
}

#[test]
fn take_answers_count_pages_not_yet_given_as_not_held() {
    let (mut h, mut r) = initialized(96 << 20);
    // +4 answered, then -4 and +7 outstanding: the 4 are returnable although the 7
    // are still demanded (they are not held yet, so they pin nothing).
    h.dev.page_request(4, false).unwrap();
    drain(&h, &mut r);
    give_pages(&mut h, 4);
    h.dev.page_requests(&[-4, 7], false).unwrap();
    drain(&h, &mut r);
    assert_eq!(take_pages(&mut h, 4).len(), 4);
    give_pages(&mut h, 7);
    let p = pages(&h);
    assert_eq!(
        (p["requests_answered"].as_u64(), p["held"].as_u64()),
        (Some(3), Some(55))
    );
    // Now the 7 are pinned.
    assert!(take_pages(&mut h, 7).is_empty());
}
