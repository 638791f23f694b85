//! What a UAR write costs the emulator (emu/README.md "Doorbells"; `stats` → `dp` →
//! `doorbells`): every BAR0 write message that reaches a UAR page is counted with the
//! dwords it carries and the server thread's time on it; the firmware thread's time on
//! each is counted when it handles them; the firmware thread is woken only when the
//! inbox was empty (it takes all of it). Figures: `cargo test -p mlx5-emu --release
//! --test doorbell_cost -- --ignored --nocapture`.

mod common;

use common::Host;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// A UAR page's BlueFlame body (page 16, offset 0x808): past the control segment's
/// first 8 bytes, so the write rings nothing (fw/sq.rs acts on dword 4 of a BF half).
const BF_BODY: u64 = 16 * 4096 + 0x808;

fn doorbells(h: &Host) -> serde_json::Value {
    mlx5_emu::control::handle(&h.dev, &json!({"cmd":"stats"}))["dp"]["doorbells"].clone()
}

#[test]
fn uar_writes_are_counted_and_wake_the_firmware_once() {
    let h = Host::new();
    let d = &h.dev.doorbells;
    // The host's queue set-up (its address written) is in the inbox: handled first.
    h.dev.step();
    // Init-segment writes are not UAR writes.
    h.dev.bar0_write(0x10, &0u32.to_be_bytes());
    assert_eq!(d.uar_messages.load(Ordering::Relaxed), 0);
    // Two 64-bit writes before the firmware runs: 2 messages, 4 dwords, one wake-up.
    h.dev.bar0_write(BF_BODY, &[0u8; 8]);
    h.dev.bar0_write(BF_BODY, &[1u8; 8]);
    let s = doorbells(&h);
    assert_eq!(s["uar_messages"], 2);
    assert_eq!(s["uar_writes"], 4);
    assert_eq!(
        s["wakeups"], 1,
        "the second write found the inbox non-empty"
    );
    assert!(s["mmio_ns"].as_u64().unwrap() > 0);
    assert_eq!(s["fw_ns"], 0, "not handled yet");
    h.dev.step();
    let s = doorbells(&h);
    assert!(s["fw_ns"].as_u64().unwrap() > 0, "{s}");
    assert_eq!(
        s["fw_ns_per_write"].as_u64().unwrap(),
        s["fw_ns"].as_u64().unwrap() / 4
    );
    // The inbox is empty again: the next write wakes the firmware.
    h.dev.bar0_write(BF_BODY, &[2u8; 4]);
    assert_eq!(doorbells(&h)["wakeups"], 2);
    h.dev.step();
    let v = mlx5_emu::control::handle(&h.dev, &json!({"cmd":"stats"}))["violations"].clone();
    assert_eq!(v, 0, "a BlueFlame body write rings nothing");
}

#[test]
#[ignore]
fn uar_write_cost() {
    let h = Host::new();
    let fw = h.dev.spawn_firmware();
    let n = 200_000u64;
    let t = Instant::now();
    for i in 0..n {
        h.dev.bar0_write(BF_BODY, &i.to_be_bytes());
    }
    let secs = t.elapsed().as_secs_f64();
    // Let the firmware thread finish what is queued.
    while h.dev.doorbells.fw_ns.load(Ordering::Relaxed) == 0 {
        std::thread::yield_now();
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    h.dev.shutdown();
    let _ = fw.join();
    let s = doorbells(&h);
    println!(
        "mlx5-emu: {n} 64-bit UAR writes in {secs:.3} s = {:.0} ns per bar0_write call; \
         stats: {s}",
        secs * 1e9 / n as f64
    );
}
