//! Event queues: owner bit across wrap-around, update vs arm doorbells, interrupts
//! only when armed, overrun (completions wait, other events are lost), page requests.

mod common;

use common::{create_eq, give_pages, input, Host};
use mlx5_emu::ifc::eq::{eqc, gen_eqe_in, query_eq_in, PAS_OFFSET};
use mlx5_emu::ifc::eqe::event_type;
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::status::CmdStatus;
use mlx5_emu::mem::GuestMemory;

struct Ring {
    eqn: u8,
    buf: u64,
    uar: u32,
}

fn initialized() -> (Host, u32) {
    let mut h = Host::new();
    h.init_hca();
    let uar = h.alloc_uar();
    (h, uar)
}

fn create(h: &mut Host, uar: u32, log: u8, mask: u64, intr: u16) -> Ring {
    let (eqn, buf) = create_eq(h, uar, log, mask, intr);
    Ring { eqn, buf, uar }
}

fn doorbell(h: &Host, r: &Ring, ci: u32, arm: bool) {
    let off = u64::from(r.uar) * 4096 + if arm { 0x40 } else { 0x48 };
    h.dev.bar0_write(
        off,
        &((u32::from(r.eqn) << 24) | (ci & 0xff_ffff)).to_be_bytes(),
    );
    h.dev.step();
}

fn gen(h: &mut Host, r: &Ring, t: u8) -> u8 {
    let mut inp = input(
        80,
        Opcode::GEN_EQE as u16,
        0,
        &[(gen_eqe_in::EQ_NUMBER.raw(), u64::from(r.eqn))],
    );
    inp[16 + 1] = t;
    h.run(&inp, 16).0
}

fn eqe(h: &Host, r: &Ring, i: u32, log: u8) -> [u8; 64] {
    let mut e = [0u8; 64];
    h.mem
        .read(r.buf + 64 * u64::from(i & ((1 << log) - 1)), &mut e)
        .unwrap();
    e
}

/// A DESTROY_EQ input for `eqn`.
fn destroy_eq_input(eqn: u8) -> Vec<u8> {
    input(
        16,
        Opcode::DESTROY_EQ as u16,
        0,
        &[(
            mlx5_emu::ifc::eq::destroy_eq_in::EQ_NUMBER.raw(),
            u64::from(eqn),
        )],
    )
}

fn irqs(h: &Host) -> usize {
    h.irq.fired.lock().unwrap().len()
}

#[test]
fn owner_bit_flips_on_wrap_and_interrupts_follow_arming() {
    let (mut h, uar) = initialized();
    let r = create(&mut h, uar, 2, 0, 3);
    // Not armed: EQE written, no interrupt.
    assert_eq!(gen(&mut h, &r, 0x13), 0);
    assert_eq!(eqe(&h, &r, 0, 2)[0x3f], 0);
    assert_eq!(irqs(&h), 0);
    // Arming with an unconsumed EQE interrupts at once.
    doorbell(&h, &r, 0, true);
    assert_eq!(*h.irq.fired.lock().unwrap(), vec![3]);
    // Consume it, update without arming: no interrupt for the next EQE.
    doorbell(&h, &r, 1, false);
    gen(&mut h, &r, 0x13);
    assert_eq!(irqs(&h), 1);
    doorbell(&h, &r, 2, true);
    for _ in 0..2 {
        gen(&mut h, &r, 0x13);
    }
    assert_eq!(irqs(&h), 2, "one interrupt per arm");
    doorbell(&h, &r, 4, true);
    // Second pass over the ring: owner bit 1.
    for i in 4..8 {
        assert_eq!(gen(&mut h, &r, 0x13), 0);
        assert_eq!(eqe(&h, &r, i, 2)[0x3f], 1, "entry {i}");
    }
    doorbell(&h, &r, 8, false);
    gen(&mut h, &r, 0x13);
    assert_eq!(eqe(&h, &r, 8, 2)[0x3f], 0, "third pass");
    // QUERY_EQ reports the counters.
    let out = h.ok(
        &input(
            16,
            Opcode::QUERY_EQ as u16,
            0,
            &[(query_eq_in::EQ_NUMBER.raw(), u64::from(r.eqn))],
        ),
        0x110 + 8,
    );
    assert_eq!(eqc::PRODUCER_COUNTER.raw().get(&out[0x10..]), Some(9));
    assert_eq!(eqc::CONSUMER_COUNTER.raw().get(&out[0x10..]), Some(8));
}

#[test]
fn overrun_loses_events_but_command_completions_wait() {
    let (mut h, uar) = initialized();
    let cmd = create(&mut h, uar, 2, 1 << event_type::CMD, 0);
    let pages = create(&mut h, uar, 2, 1 << event_type::PAGE_REQUEST, 0);
    // Fill the pages EQ, then a page request is lost.
    for _ in 0..4 {
        assert_eq!(gen(&mut h, &pages, event_type::PAGE_REQUEST), 0);
    }
    assert_eq!(
        gen(&mut h, &pages, event_type::PAGE_REQUEST),
        CmdStatus::LIM_ERR as u8
    );
    // Firmware does not overrun the EQ with a page request: it waits for room.
    h.dev.page_request(3, false).unwrap();
    let s = mlx5_emu::control::stats(&h.dev);
    let lost: u64 = s["eqs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["lost"].as_u64().unwrap())
        .sum();
    assert_eq!(lost, 1, "the fifth GEN_EQE");
    assert_eq!(s["pages"]["requests_queued"], 1);
    assert_eq!(s["pages"]["requests_sent"], 0);
    // The GEN_EQE commands above already put 4+ completions on the cmd EQ: they wait.
    let waiting = s["eqe_waiting"].as_u64().unwrap();
    assert!(waiting >= 1, "{s}");
    // Commands still complete (ownership) while their EQEs wait for room.
    h.ok(&input(16, Opcode::NOP as u16, 0, &[]), 16);
    let before = h.dev.fw().eqs.waiting.len();
    assert_eq!(before as u64, waiting + 1);
    doorbell(&h, &cmd, 4, true);
    let after = h.dev.fw().eqs.waiting.len();
    assert_eq!(after, before.saturating_sub(4));
    for i in 4..4 + before.min(4) as u32 {
        let e = eqe(&h, &cmd, i, 2);
        assert_eq!((e[1], e[0x3f]), (event_type::CMD, 1));
    }
}

#[test]
fn page_requests_positive_negative_and_release_all() {
    let (mut h, uar) = initialized();
    let r = create(&mut h, uar, 4, 1 << event_type::PAGE_REQUEST, 0);
    h.dev.page_request(10, false).unwrap();
    h.dev.page_request(10, false).unwrap();
    let e = eqe(&h, &r, 0, 4);
    assert_eq!(u16::from_be_bytes([e[0x22], e[0x23]]), 0);
    assert_eq!(i32::from_be_bytes([e[0x24], e[0x25], e[0x26], e[0x27]]), 10);
    // The driver cannot supply: MANAGE_PAGES(allocation fail) answers the first.
    h.ok(&input(16, Opcode::MANAGE_PAGES as u16, 0, &[]), 16);
    give_pages(&mut h, 10);
    assert_eq!(h.dev.fw().ledger.held(0), 58);
    h.dev.page_request(-10, false).unwrap();
    let e = eqe(&h, &r, 2, 4);
    assert_eq!(
        i32::from_be_bytes([e[0x24], e[0x25], e[0x26], e[0x27]]),
        -10
    );
    let got = common::take_pages(&mut h, 10);
    assert_eq!(got.len(), 10);
    assert!(h.dev.fw().ledger.requests.outstanding.is_empty());
    let (answered, cant_give) = {
        let fw = h.dev.fw();
        (fw.ledger.requests.answered, fw.ledger.requests.cant_give)
    };
    assert_eq!((answered, cant_give), (3, 1));
    assert!(
        h.dev.page_request(0, true).is_err(),
        "release_all_pages not enabled"
    );
    {
        let mut fw = h.dev.fw();
        mlx5_emu::ifc::caps::cmd_hca_cap::RELEASE_ALL_PAGES
            .raw()
            .set(&mut fw.caps.gen_cur, 1)
            .unwrap();
    }
    h.dev.page_request(0, true).unwrap();
    assert_eq!(h.dev.fw().ledger.held(0), 0);
    let e = eqe(&h, &r, 3, 4);
    assert_eq!(u16::from_be_bytes([e[0x20], e[0x21]]), 0x4000);
}

#[test]
fn create_eq_validation() {
    let (mut h, uar) = initialized();
    let mut inp = input(PAS_OFFSET + 8, Opcode::CREATE_EQ as u16, 0, &[]);
    eqc::LOG_EQ_SIZE.raw().set(&mut inp[0x10..], 2).unwrap();
    eqc::UAR_PAGE
        .raw()
        .set(&mut inp[0x10..], u64::from(uar + 1))
        .unwrap();
    inp[PAS_OFFSET..PAS_OFFSET + 8].copy_from_slice(&0x1000_0000u64.to_be_bytes());
    assert_eq!(
        h.run(&inp, 16).0,
        CmdStatus::BAD_PARAM_ERR as u8,
        "unallocated UAR"
    );
    eqc::UAR_PAGE
        .raw()
        .set(&mut inp[0x10..], u64::from(uar))
        .unwrap();
    inp[PAS_OFFSET..PAS_OFFSET + 8].copy_from_slice(&0x7000_0000u64.to_be_bytes());
    assert_eq!(
        h.run(&inp, 16).0,
        CmdStatus::BAD_PARAM_ERR as u8,
        "unmapped buffer"
    );
    inp[PAS_OFFSET..PAS_OFFSET + 8].copy_from_slice(&0x1000_0000u64.to_be_bytes());
    eqc::INTR.raw().set(&mut inp[0x10..], 200).unwrap();
    assert_eq!(
        h.run(&inp, 16).0,
        CmdStatus::BAD_PARAM_ERR as u8,
        "vector beyond MSI-X table"
    );
    eqc::INTR.raw().set(&mut inp[0x10..], 1).unwrap();
    h.ok(&inp, 16);
    assert_eq!(
        h.run(&destroy_eq_input(9), 16).0,
        CmdStatus::BAD_RES_ERR as u8
    );
    let s = mlx5_emu::control::stats(&h.dev);
    assert_eq!(s["violations"], 3, "{}", s["recent_violations"]);
}

/// Strict rules without a PRM source are off by default: the emulator answers as the
/// most permissive firmware and counts a violation; switched on, it refuses.
#[test]
fn strict_rules_off_by_default_refuse_when_on() {
    let (mut h, uar) = initialized();
    let req = |h: &Host, v| mlx5_emu::control::handle(&h.dev, &v);
    let dealloc = input(
        16,
        Opcode::DEALLOC_UAR as u16,
        0,
        &[(
            mlx5_emu::ifc::cmds::dealloc_uar_in::UAR.raw(),
            u64::from(uar),
        )],
    );
    let mut eq_in = input(PAS_OFFSET + 8, Opcode::CREATE_EQ as u16, 0, &[]);
    eqc::LOG_EQ_SIZE.raw().set(&mut eq_in[0x10..], 2).unwrap();
    eqc::UAR_PAGE
        .raw()
        .set(&mut eq_in[0x10..], u64::from(uar))
        .unwrap();
    eqc::CONSUMER_COUNTER
        .raw()
        .set(&mut eq_in[0x10..], 5)
        .unwrap();
    let buf = h.alloc(4096, 4096);
    eq_in[PAS_OFFSET..PAS_OFFSET + 8].copy_from_slice(&buf.to_be_bytes());
    // Strict: refused.
    assert_eq!(
        req(
            &h,
            serde_json::json!({"cmd":"strict","rule":"eq_ctx_device_fields","on":true})
        )["ok"],
        true
    );
    assert_eq!(
        req(
            &h,
            serde_json::json!({"cmd":"strict","rule":"dealloc_uar_in_use"})
        )["ok"],
        true
    );
    assert_eq!(
        req(&h, serde_json::json!({"cmd":"strict","rule":"bogus"}))["ok"],
        false
    );
    assert_eq!(h.run(&eq_in, 16).0, CmdStatus::BAD_PARAM_ERR as u8);
    eqc::CONSUMER_COUNTER
        .raw()
        .set(&mut eq_in[0x10..], 0)
        .unwrap();
    h.ok(&eq_in, 16);
    assert_eq!(h.run(&dealloc, 16).0, CmdStatus::BAD_RES_STATE_ERR as u8);
    let s = mlx5_emu::control::stats(&h.dev);
    assert_eq!(
        (
            s["strict"]["dealloc_uar_in_use"].clone(),
            s["violations"].clone()
        ),
        (serde_json::json!(true), serde_json::json!(2))
    );
    // Default (also after a reset): accepted, counted as violations.
    assert_eq!(req(&h, serde_json::json!({"cmd":"reset"}))["ok"], true);
    let (mut h2, uar2) = initialized();
    drop(h);
    eqc::UAR_PAGE
        .raw()
        .set(&mut eq_in[0x10..], u64::from(uar2))
        .unwrap();
    eqc::PRODUCER_COUNTER
        .raw()
        .set(&mut eq_in[0x10..], 3)
        .unwrap();
    let buf = h2.alloc(4096, 4096);
    eq_in[PAS_OFFSET..PAS_OFFSET + 8].copy_from_slice(&buf.to_be_bytes());
    h2.ok(&eq_in, 16);
    let dealloc = input(
        16,
        Opcode::DEALLOC_UAR as u16,
        0,
        &[(
            mlx5_emu::ifc::cmds::dealloc_uar_in::UAR.raw(),
            u64::from(uar2),
        )],
    );
    h2.ok(&dealloc, 16);
    let s = mlx5_emu::control::stats(&h2.dev);
    assert_eq!(s["strict"]["eq_ctx_device_fields"], false);
    assert_eq!(s["violations"], 2, "{}", s["recent_violations"]);
}

/// `msix_vectors` sets the config-space MSI-X table size; CREATE_EQ accepts only
/// vectors inside that table.
#[test]
fn msix_vector_count_bounds_eq_vectors() {
    let cfg = mlx5_emu::config::EmuConfig {
        boot_pages: 16,
        init_pages: 32,
        msix_vectors: 2,
        ..Default::default()
    };
    let mut h = Host::with(cfg);
    let mut b = [0u8; 2];
    h.dev.config_read(0x9c + 2, &mut b);
    assert_eq!(
        u16::from_le_bytes(b) & 0x7ff,
        1,
        "table size field = vectors - 1"
    );
    assert_eq!(mlx5_emu::control::stats(&h.dev)["msix_vectors"], 2);
    h.init_hca();
    let uar = h.alloc_uar();
    let buf = h.alloc(4096, 4096);
    let mut inp = input(PAS_OFFSET + 8, Opcode::CREATE_EQ as u16, 0, &[]);
    eqc::LOG_EQ_SIZE.raw().set(&mut inp[0x10..], 2).unwrap();
    eqc::UAR_PAGE
        .raw()
        .set(&mut inp[0x10..], u64::from(uar))
        .unwrap();
    eqc::INTR.raw().set(&mut inp[0x10..], 2).unwrap();
    inp[PAS_OFFSET..PAS_OFFSET + 8].copy_from_slice(&buf.to_be_bytes());
    assert_eq!(
        h.run(&inp, 16).0,
        CmdStatus::BAD_PARAM_ERR as u8,
        "vector 2 of 2"
    );
    eqc::INTR.raw().set(&mut inp[0x10..], 1).unwrap();
    h.ok(&inp, 16);
}

/// Interrupt → next consumer-index doorbell latency, per EQ, in the `stats` reply: one
/// sample per delivered interrupt, closed by the next update or arm doorbell of that EQ
/// only (not another EQ's), nothing for a doorbell without a pending interrupt.
#[test]
fn irq_to_doorbell_latency_per_eq() {
    let (mut h, uar) = initialized();
    let a = create(&mut h, uar, 2, 0, 3);
    let b = create(&mut h, uar, 2, 0, 4);
    let lat = |h: &Host, eqn: u8| {
        let s = mlx5_emu::control::stats(&h.dev);
        let e = s["eqs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["eqn"] == u64::from(eqn))
            .unwrap()
            .clone();
        e["irq_to_doorbell"].clone()
    };
    // A doorbell with no interrupt pending records nothing.
    doorbell(&h, &a, 0, true);
    doorbell(&h, &b, 0, true);
    assert_eq!(lat(&h, a.eqn)["count"], 0);
    assert_eq!(lat(&h, a.eqn)["pending"], false);
    // Interrupt on A; B's doorbell does not close it; A's update doorbell does.
    gen(&mut h, &a, 0x13);
    assert_eq!(irqs(&h), 1);
    assert_eq!(lat(&h, a.eqn)["pending"], true);
    std::thread::sleep(std::time::Duration::from_millis(20));
    doorbell(&h, &b, 0, true);
    assert_eq!(lat(&h, a.eqn)["count"], 0);
    doorbell(&h, &a, 1, false);
    let l = lat(&h, a.eqn);
    assert_eq!(
        (l["count"].as_u64(), l["pending"].as_bool()),
        (Some(1), Some(false))
    );
    let (p50, max) = (l["p50_ns"].as_u64().unwrap(), l["max_ns"].as_u64().unwrap());
    assert!((20_000_000..10_000_000_000).contains(&max), "max {max}");
    assert!(
        p50 <= max && p50 as f64 >= max as f64 * 0.9,
        "p50 {p50} max {max}"
    );
    assert_eq!(l["mean_ns"].as_u64(), Some(max));
    assert_eq!(lat(&h, b.eqn)["count"], 0);
    // Not armed after the update: the next EQE raises nothing, so nothing to time.
    gen(&mut h, &a, 0x13);
    doorbell(&h, &a, 2, false);
    assert_eq!(lat(&h, a.eqn)["count"], 1);
    // Arming with an unconsumed EQE interrupts at once; the next doorbell closes it fast.
    gen(&mut h, &a, 0x13);
    doorbell(&h, &a, 2, true);
    assert_eq!(irqs(&h), 2);
    doorbell(&h, &a, 3, true);
    let l = lat(&h, a.eqn);
    assert_eq!(l["count"], 2);
    assert!(l["min_ns"].as_u64().unwrap() < 20_000_000, "{l}");
    assert_eq!(l["max_ns"].as_u64(), Some(max));
}

/// Strict eq_overrun_fatal: an event lost to a full EQ raises health syndrome 0x0c
/// (async EQ buffer overrun) as real firmware does; by default it is only counted.
#[test]
fn eq_overrun_is_fatal_only_when_strict() {
    let (mut h, uar) = initialized();
    let pages = create(&mut h, uar, 1, 1 << event_type::PAGE_REQUEST, 0);
    for _ in 0..2 {
        assert_eq!(gen(&mut h, &pages, event_type::PAGE_REQUEST), 0);
    }
    assert_eq!(
        gen(&mut h, &pages, event_type::PAGE_REQUEST),
        CmdStatus::LIM_ERR as u8
    );
    h.dev.step();
    assert_eq!(
        h.read32(mlx5_emu::ifc::init_seg::HEALTH_COUNTER) >> 24,
        0,
        "default: counted, not fatal"
    );
    h.dev.fw().strict.eq_overrun_fatal = true;
    assert_eq!(
        gen(&mut h, &pages, event_type::PAGE_REQUEST),
        CmdStatus::LIM_ERR as u8
    );
    h.dev.step();
    assert_eq!(
        h.read32(mlx5_emu::ifc::init_seg::HEALTH_COUNTER) >> 24,
        0x0c
    );
}

/// An EQ doorbell on a UAR page a teardown dropped (an interrupt handler's last arm
/// racing the stop) is counted, not a violation; the strict rule makes it one. A
/// doorbell on a page that never existed stays a violation.
#[test]
fn eq_doorbell_after_stop_is_counted_and_strict_only_when_asked() {
    use mlx5_emu::ifc::cmds::teardown_hca_in;
    use mlx5_emu::ifc::opcodes::teardown_profile;
    let (mut h, uar) = initialized();
    let r = create(&mut h, uar, 2, 0, 0);
    let destroy = destroy_eq_input(r.eqn);
    h.ok(&destroy, 16);
    let dealloc = input(
        16,
        Opcode::DEALLOC_UAR as u16,
        0,
        &[(
            mlx5_emu::ifc::cmds::dealloc_uar_in::UAR.raw(),
            u64::from(uar),
        )],
    );
    h.ok(&dealloc, 16);
    // A fresh UAR for the stop: the teardown drops it with the function.
    let uar2 = h.alloc_uar();
    let late = Ring {
        eqn: r.eqn,
        buf: r.buf,
        uar: uar2,
    };
    let stats = |h: &Host| mlx5_emu::control::stats(&h.dev);
    let v0 = stats(&h)["violations"].as_u64().unwrap();
    h.ok(
        &input(
            16,
            Opcode::TEARDOWN_HCA as u16,
            0,
            &[(
                teardown_hca_in::PROFILE.raw(),
                u64::from(teardown_profile::GRACEFUL_CLOSE),
            )],
        ),
        16,
    );
    let v1 = stats(&h)["violations"].as_u64().unwrap();
    assert_eq!(
        v1,
        v0 + 1,
        "TEARDOWN_HCA with a UAR still allocated is itself a violation"
    );
    doorbell(&h, &late, 0, true);
    let s = stats(&h);
    assert_eq!(
        (
            s["eq_doorbells_after_stop"].as_u64(),
            s["violations"].as_u64()
        ),
        (Some(1), Some(v1)),
        "{}",
        s["recent_violations"]
    );
    // Strict: the same late doorbell is a violation.
    assert_eq!(
        mlx5_emu::control::handle(
            &h.dev,
            &serde_json::json!({"cmd":"strict","rule":"eq_doorbell_after_stop","on":true})
        )["ok"],
        true
    );
    doorbell(&h, &late, 0, true);
    let s = stats(&h);
    assert_eq!(
        (
            s["eq_doorbells_after_stop"].as_u64(),
            s["violations"].as_u64()
        ),
        (Some(2), Some(v1 + 1))
    );
    // A page no teardown dropped: a violation whatever the rule.
    assert_eq!(
        mlx5_emu::control::handle(
            &h.dev,
            &serde_json::json!({"cmd":"strict","rule":"eq_doorbell_after_stop","on":false})
        )["ok"],
        true
    );
    doorbell(
        &h,
        &Ring {
            eqn: r.eqn,
            buf: r.buf,
            uar: uar2 + 100,
        },
        0,
        true,
    );
    assert_eq!(stats(&h)["violations"].as_u64(), Some(v1 + 2));
}

/// The driver's last arm of an EQ, posted just before the DESTROY_EQ doorbell, reaches
/// the EQ before it is destroyed: posted writes are handled in arrival order (PCIe
/// orders posted writes), so the driver needs nothing between the two.
#[test]
fn arm_posted_before_destroy_eq_doorbell_reaches_the_eq() {
    let (mut h, uar) = initialized();
    let r = create(&mut h, uar, 2, 0, 0);
    let violations = |h: &Host| mlx5_emu::control::stats(&h.dev)["violations"].as_u64();
    let v0 = violations(&h);
    // Arm, then the DESTROY_EQ doorbell, with no device step in between.
    let off = u64::from(r.uar) * 4096 + 0x40;
    h.dev
        .bar0_write(off, &(u32::from(r.eqn) << 24).to_be_bytes());
    let destroy = destroy_eq_input(r.eqn);
    let p = h.prepare(0, &destroy, 16);
    h.ring(0);
    h.dev.step();
    assert_eq!(h.status_own(&p), 0, "DESTROY_EQ delivered");
    assert_eq!(h.output(&p)[0], 0, "DESTROY_EQ succeeded");
    assert_eq!(
        violations(&h),
        v0,
        "the arm reached the EQ before DESTROY_EQ"
    );
    let fw = h.dev.fw();
    assert_eq!(fw.eqs.bad_doorbells, 0, "the arm named a live EQ");
    assert!(!fw.eqs.eqs.contains_key(&r.eqn), "EQ destroyed");
}
