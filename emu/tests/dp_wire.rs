//! The wire between two emulated devices (emu/src/fw/dp/wire.rs, README "Two devices"):
//! two devices in one process joined by a real UNIX socket carry frames both ways in
//! order; the bounded send queue drops and counts; the peer going takes the port's link
//! down with the port-change EQE (the control `link` request's semantics) and its coming
//! back brings it up; the start-up options (`--lid`, `--sm-lid`, `--device-index`,
//! `--wire-listen`, `--wire-connect`) parse and give each device its own LID and GUIDs.

mod common;
#[path = "common/port_events.rs"]
mod port_events;

use common::{initialized_with, Host};
use mlx5_emu::config::{parse_port_option, EmuConfig};
use mlx5_emu::fw::dp::wire::{
    WireDrop, WireEndpoint, HELLO, MAX_FRAME_BYTES, RX_INBOX_FRAMES, TX_QUEUE_FRAMES,
};
use mlx5_emu::fw::port::GUID_STEP_PER_DEVICE;
use mlx5_emu::ifc::eqe::port_change_sub as sub;
use port_events::{async_eq, drain};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

fn initialized() -> Host {
    initialized_with(EmuConfig::default())
}

fn ctl(h: &Host, v: Value) -> Value {
    mlx5_emu::control::handle(&h.dev, &v)
}

fn wire_stats(h: &Host) -> Value {
    ctl(h, json!({"cmd":"stats"}))["dp"]["wire"].clone()
}

fn port(h: &Host) -> Value {
    ctl(h, json!({"cmd":"ib_port"}))["port"].clone()
}

/// Steps every device until `done` holds (10 s at most).
fn step_until(hosts: &[&Host], what: &str, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        for h in hosts {
            h.dev.step();
        }
        if done() {
            return;
        }
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn link_up(h: &Host) -> bool {
    h.dev.fw().dp.wire.link_up
}

/// Two initialized devices wired by a socket pair, both links up.
fn wired_pair() -> (Host, Host) {
    let a = initialized();
    let b = initialized_with(EmuConfig {
        lid: 3,
        device_index: 1,
        ..Default::default()
    });
    let (sa, sb) = UnixStream::pair().unwrap();
    a.dev.attach_wire(sa).unwrap();
    b.dev.attach_wire(sb).unwrap();
    step_until(&[&a, &b], "both links up", || link_up(&a) && link_up(&b));
    (a, b)
}

/// Frame `i` of a test stream: its index, then `len` bytes derived from it.
fn frame(i: u32, len: usize) -> Vec<u8> {
    let mut f = i.to_be_bytes().to_vec();
    f.extend((0..len).map(|k| (k as u32).wrapping_mul(31).wrapping_add(i) as u8));
    f
}

#[test]
fn frames_cross_both_ways_in_order() {
    let (a, b) = wired_pair();
    a.dev.fw().wire_tap(1000);
    b.dev.fw().wire_tap(1000);
    // Sizes from empty to 1 MiB, interleaved both ways.
    let sizes = [0usize, 1, 60, 4096, 65_536, 1 << 20, 7, 300];
    let mut sent_ab = vec![];
    let mut sent_ba = vec![];
    for i in 0..200u32 {
        let len = sizes[i as usize % sizes.len()];
        let (fa, fb) = (frame(i, len), frame(i + 10_000, len / 2));
        assert_eq!(a.dev.fw().wire_send(fa.clone()), Ok(()));
        assert_eq!(b.dev.fw().wire_send(fb.clone()), Ok(()));
        sent_ab.push(fa);
        sent_ba.push(fb);
        if i % 50 == 49 {
            // Let the queues drain (each holds TX_QUEUE_FRAMES).
            let n = i as u64 + 1;
            step_until(&[&a, &b], "delivery", || {
                a.dev.fw().dp.wire.frames_in == n && b.dev.fw().dp.wire.frames_in == n
            });
        }
    }
    assert_eq!(b.dev.fw().wire_tapped(), sent_ab, "a → b, in order");
    assert_eq!(a.dev.fw().wire_tapped(), sent_ba, "b → a, in order");
    let bytes_ab: u64 = sent_ab.iter().map(|f| f.len() as u64).sum();
    let (sa, sb) = (wire_stats(&a), wire_stats(&b));
    assert_eq!(sa["frames_out"], 200);
    assert_eq!(sa["bytes_out"], bytes_ab);
    assert_eq!(sb["frames_in"], 200);
    assert_eq!(sb["bytes_in"], bytes_ab);
    assert_eq!(sa["frames_written"], 200);
    assert_eq!(sa["link_up"], true);
    assert_eq!(sa["dropped"]["full"], 0);
    assert_eq!(sa["connects"], 1);
    // Longer than the bound: refused at the sender, counted.
    assert_eq!(
        a.dev.fw().wire_send(vec![0; MAX_FRAME_BYTES + 1]),
        Err(WireDrop::Oversize)
    );
    assert_eq!(wire_stats(&a)["dropped"]["oversize"], 1);
    a.dev.shutdown();
    b.dev.shutdown();
}

#[test]
fn a_full_send_queue_drops_and_counts() {
    let (a, b) = wired_pair();
    b.dev.fw().wire_tap(100_000);
    // B's firmware stops taking frames: its inbox fills (RX_INBOX_FRAMES), its reader
    // stops, the socket fills, then A's queue (TX_QUEUE_FRAMES): the rest is dropped.
    let total = 4 * (TX_QUEUE_FRAMES + RX_INBOX_FRAMES) as u32;
    let mut accepted = 0u32;
    let mut full = 0u32;
    for i in 0..total {
        match a.dev.fw().wire_send(frame(accepted, 32 << 10)) {
            Ok(()) => accepted += 1,
            Err(WireDrop::Full) => full += 1,
            Err(e) => panic!("frame {i}: {e:?}"),
        }
        if i == total / 2 {
            // Give the writer time to fill everything it can.
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    assert!(full > 0, "nothing dropped ({accepted} accepted)");
    assert_eq!(accepted + full, total);
    let s = wire_stats(&a);
    assert_eq!(s["dropped"]["full"], full);
    assert_eq!(s["frames_out"], accepted);
    // B takes frames again: everything A queued arrives, in order, nothing more.
    step_until(&[&a, &b], "the queue to drain", || {
        b.dev.fw().dp.wire.frames_in == u64::from(accepted)
    });
    let got = b.dev.fw().wire_tapped();
    assert_eq!(got.len(), accepted as usize);
    for (i, f) in got.iter().enumerate() {
        assert_eq!(f, &frame(i as u32, 32 << 10), "frame {i}");
    }
    assert_eq!(wire_stats(&a)["frames_written"], accepted);
    a.dev.shutdown();
    b.dev.shutdown();
}

#[test]
fn the_link_follows_the_peer() {
    let dir = std::env::temp_dir().join(format!("mlx5-emu-wire-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("wire.sock");
    let mut a = initialized();
    let mut q = async_eq(&mut a);
    a.dev
        .start_wire(&WireEndpoint::Listen(path.clone()))
        .unwrap();
    // No peer yet: the port is down. No event: the wire is a start-up option, so the
    // port is down before any EQ exists; this test adds the wire after its EQ only to
    // watch the events that follow.
    a.dev.step();
    assert_eq!(port(&a)["state"], "down");
    assert_eq!(a.dev.fw().wire_send(vec![1]), Err(WireDrop::Down));
    assert_eq!(wire_stats(&a)["dropped"]["down"], 1);
    assert_eq!(drain(&a, &mut q), Vec::<u8>::new());

    let b = initialized_with(EmuConfig {
        lid: 3,
        device_index: 1,
        ..Default::default()
    });
    b.dev
        .start_wire(&WireEndpoint::Connect(path.clone()))
        .unwrap();
    step_until(&[&a, &b], "the peer", || link_up(&a) && link_up(&b));
    assert_eq!(port(&a)["state"], "active");
    assert_eq!(port(&b)["state"], "active");
    assert_eq!(drain(&a, &mut q), vec![sub::ACTIVE]);

    // The peer goes: Down with the DOWN event, frames to it dropped and counted.
    b.dev.shutdown();
    step_until(&[&a], "the link to go down", || !link_up(&a));
    assert_eq!(port(&a)["state"], "down");
    assert_eq!(port(&a)["phys_state"], 2, "Polling: no peer");
    assert_eq!(drain(&a, &mut q), vec![sub::DOWN]);
    assert_eq!(a.dev.fw().wire_send(vec![2]), Err(WireDrop::Down));

    // Another peer connects to the same path: Active again.
    let c = initialized_with(EmuConfig {
        lid: 3,
        device_index: 1,
        ..Default::default()
    });
    c.dev.start_wire(&WireEndpoint::Connect(path)).unwrap();
    step_until(&[&a, &c], "the new peer", || link_up(&a) && link_up(&c));
    assert_eq!(port(&a)["state"], "active");
    assert_eq!(drain(&a, &mut q), vec![sub::ACTIVE]);
    c.dev.fw().wire_tap(10);
    assert_eq!(a.dev.fw().wire_send(vec![3, 4]), Ok(()));
    step_until(&[&a, &c], "a frame", || c.dev.fw().dp.wire.frames_in == 1);
    assert_eq!(c.dev.fw().wire_tapped(), vec![vec![3u8, 4]]);
    let s = wire_stats(&a);
    assert_eq!(
        (s["link_ups"].clone(), s["link_downs"].clone()),
        (json!(2), json!(1))
    );
    assert_eq!(s["connects"], 2);
    assert_eq!(s["dropped"]["down"], 2);

    // The connection dropped from this side (e.g. the control socket): the connector
    // comes back by itself.
    a.dev.drop_wire_connection();
    step_until(&[&a, &c], "the reconnection", || {
        a.dev.fw().dp.wire.link_ups == 3 && link_up(&a) && link_up(&c)
    });
    assert_eq!(drain(&a, &mut q), vec![sub::DOWN, sub::ACTIVE]);

    // The control `wire` request holds the link down (either side; the other sees the
    // cable go) until it lets it up again.
    let r = ctl(&c, json!({"cmd":"wire","connected":false}));
    assert_eq!(r["ok"], true, "{r}");
    step_until(&[&a, &c], "the held link to go down", || {
        !link_up(&a) && !link_up(&c)
    });
    for _ in 0..30 {
        a.dev.step();
        c.dev.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(port(&a)["state"], "down", "stays down while held");
    assert_eq!(ctl(&c, json!({"cmd":"wire"}))["wire"]["held"], true);
    assert_eq!(drain(&a, &mut q), vec![sub::DOWN]);
    ctl(&c, json!({"cmd":"wire","connected":true}));
    step_until(&[&a, &c], "the link back", || link_up(&a) && link_up(&c));
    assert_eq!(drain(&a, &mut q), vec![sub::ACTIVE]);
    assert_eq!(ctl(&c, json!({"cmd":"wire","connected":"no"}))["ok"], false);
    assert_eq!(
        ctl(&b, json!({"cmd":"wire"}))["ok"],
        true,
        "b still has its wire"
    );
    assert_eq!(
        ctl(&initialized(), json!({"cmd":"wire"}))["ok"],
        false,
        "no wire configured"
    );
    a.dev.shutdown();
    c.dev.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_peer_that_does_not_greet_is_no_link() {
    let dir = std::env::temp_dir().join(format!("mlx5-emu-hello-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("wire.sock");
    let a = initialized();
    a.dev
        .start_wire(&WireEndpoint::Listen(path.clone()))
        .unwrap();
    let mut s = UnixStream::connect(&path).unwrap();
    s.write_all(b"GARBAGE!\0\0\0\x01x").unwrap();
    step_until(&[&a], "the greeting refused", || {
        wire_stats(&a)["bad_hellos"] == 1
    });
    assert!(!link_up(&a));
    assert_eq!(port(&a)["state"], "down");
    // A peer that greets and then sends a length beyond the bound loses the connection.
    let mut s = UnixStream::connect(&path).unwrap();
    s.write_all(&HELLO).unwrap();
    let mut hello = [0u8; 8];
    s.read_exact(&mut hello).unwrap();
    assert_eq!(hello, HELLO);
    step_until(&[&a], "the link", || link_up(&a));
    s.write_all(&((MAX_FRAME_BYTES + 1) as u32).to_be_bytes())
        .unwrap();
    step_until(&[&a], "the connection dropped", || {
        wire_stats(&a)["bad_lengths"] == 1 && !link_up(&a)
    });
    assert_eq!(s.read(&mut hello).unwrap(), 0, "closed by the device");
    // A real peer still connects afterwards.
    let b = initialized();
    b.dev.start_wire(&WireEndpoint::Connect(path)).unwrap();
    step_until(&[&a, &b], "the link", || link_up(&a) && link_up(&b));
    a.dev.shutdown();
    b.dev.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn startup_options_parse() {
    let parse = |args: &[&str]| -> Result<EmuConfig, String> {
        let mut cfg = EmuConfig::default();
        let mut it = args.iter().map(|s| s.to_string());
        while let Some(a) = it.next() {
            let mut val = || it.next();
            match parse_port_option(&mut cfg, &a, &mut val) {
                Some(r) => r?,
                None => return Err(format!("not a port option: {a}")),
            }
        }
        Ok(cfg)
    };
    let c = parse(&[
        "--lid",
        "3",
        "--sm-lid",
        "1",
        "--device-index",
        "1",
        "--wire-connect",
        "/tmp/w.sock",
    ])
    .unwrap();
    assert_eq!((c.lid, c.sm_lid, c.device_index), (3, 1, 1));
    assert_eq!(c.wire, Some(WireEndpoint::Connect("/tmp/w.sock".into())));
    let c = parse(&["--wire-listen", "/tmp/w.sock"]).unwrap();
    assert_eq!(c.wire, Some(WireEndpoint::Listen("/tmp/w.sock".into())));
    // Defaults: the README's port table (LID 2, SM LID 1, index 0, no wire).
    let d = EmuConfig::default();
    assert_eq!((d.lid, d.sm_lid, d.device_index, d.wire), (2, 1, 0, None));
    for bad in [
        &["--lid", "0"][..],
        &["--lid", "49152"],
        &["--lid", "x"],
        &["--lid"],
        &["--sm-lid", "0xc000"],
        &["--device-index", "256"],
        &["--wire-listen", "a", "--wire-connect", "b"],
        &["--wire-listen", ""],
        &["--wire-connect"],
    ] {
        assert!(parse(bad).is_err(), "{bad:?} accepted");
    }
    assert!(parse(&["--socket", "x"]).is_err(), "not ours");
}

#[test]
fn each_device_its_own_lid_and_guids() {
    let a = initialized();
    let b = initialized_with(EmuConfig {
        lid: 3,
        device_index: 1,
        ..Default::default()
    });
    let (pa, pb) = (port(&a), port(&b));
    assert_eq!((pa["lid"].clone(), pb["lid"].clone()), (json!(2), json!(3)));
    assert_eq!(pb["sm_lid"], 1);
    let g = |p: &Value, k: &str| u64::from_str_radix(&p[k].as_str().unwrap()[2..], 16).unwrap();
    assert_eq!(g(&pa, "node_guid"), 0x0002_c903_00a5_0000);
    assert_eq!(
        g(&pb, "node_guid"),
        0x0002_c903_00a5_0000 + GUID_STEP_PER_DEVICE
    );
    assert_eq!(g(&pb, "port_guid"), g(&pb, "node_guid") + 1);
    assert_eq!(g(&pb, "sys_guid"), g(&pb, "node_guid"));
    let all = [
        g(&pa, "node_guid"),
        g(&pa, "port_guid"),
        g(&pb, "node_guid"),
        g(&pb, "port_guid"),
    ];
    for (i, x) in all.iter().enumerate() {
        assert!(!all[i + 1..].contains(x), "GUID {x:#x} twice");
    }
    // The control `reset` and `ib_port defaults` go back to the start-up port, not LID 2.
    ctl(&b, json!({"cmd":"ib_port","lid":9}));
    ctl(&b, json!({"cmd":"reset"}));
    assert_eq!(port(&b)["lid"], 3);
    ctl(&b, json!({"cmd":"ib_port","lid":9}));
    assert_eq!(
        ctl(&b, json!({"cmd":"ib_port","defaults":true}))["port"]["lid"],
        3
    );
}

/// A `mlx5-emu` process (killed when dropped).
struct Emu(std::process::Child);

impl Drop for Emu {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn emu_process(dir: &std::path::Path, name: &str, args: &[&str]) -> (Emu, std::path::PathBuf) {
    let ctl = dir.join(format!("{name}.ctl"));
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_mlx5-emu"))
        .arg("--socket")
        .arg(dir.join(format!("{name}.sock")))
        .arg("--control")
        .arg(&ctl)
        .args(args)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    (Emu(child), ctl)
}

/// Asks `ctl` until `done` holds for the reply (10 s at most).
fn ask_until(
    ctl: &std::path::Path,
    req: Value,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(r) = mlx5_emu::control::client(ctl, &req.to_string()) {
            let v: Value = serde_json::from_str(&r).unwrap();
            if done(&v) {
                return v;
            }
        }
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The binary end to end: two emulator processes started with the wire options connect,
/// carry a frame, and the survivor's port goes down when the other process ends.
#[test]
fn two_emulator_processes_wired() {
    let dir = std::env::temp_dir().join(format!("mlx5-emu-procs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let wire = dir.join("wire.sock");
    let w = wire.to_str().unwrap();
    let (_a, ctl_a) = emu_process(&dir, "a", &["--wire-listen", w, "--lid", "2"]);
    let (b, ctl_b) = emu_process(
        &dir,
        "b",
        &["--wire-connect", w, "--lid", "3", "--device-index", "1"],
    );
    let up = |v: &Value| v["wire"]["link_up"] == true;
    ask_until(&ctl_a, json!({"cmd":"wire"}), "a's link", up);
    ask_until(&ctl_b, json!({"cmd":"wire"}), "b's link", up);
    let port_b = ask_until(&ctl_b, json!({"cmd":"ib_port"}), "b's port", |v| {
        v["ok"] == true
    });
    assert_eq!(port_b["port"]["lid"], 3);
    assert_eq!(port_b["port"]["state"], "active");
    assert_eq!(port_b["port"]["node_guid"], "0x0002c90300a50100");
    let sent = ask_until(
        &ctl_b,
        json!({"cmd":"wire","send":"00112233"}),
        "the send",
        |v| v["ok"] == true,
    );
    assert_eq!(sent["sent"], true);
    let a = ask_until(&ctl_a, json!({"cmd":"wire"}), "the frame", |v| {
        v["wire"]["frames_in"] == 1
    });
    assert_eq!(a["wire"]["bytes_in"], 4);
    let bad = ask_until(
        &ctl_b,
        json!({"cmd":"wire","send":"0"}),
        "a refusal",
        |_| true,
    );
    assert_eq!(bad["ok"], false);
    drop(b);
    ask_until(&ctl_a, json!({"cmd":"wire"}), "a's link down", |v| {
        v["wire"]["link_up"] == false
    });
    let port_a = ask_until(&ctl_a, json!({"cmd":"ib_port"}), "a's port", |v| {
        v["ok"] == true
    });
    assert_eq!(port_a["port"]["state"], "down");
    assert_eq!(port_a["port"]["lid"], 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_binary_refuses_bad_port_options() {
    for args in [
        &["--lid", "0"][..],
        &["--device-index", "-1"],
        &["--wire-listen", "a", "--wire-connect", "b"],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mlx5-emu"))
            .args(["--socket", "/nonexistent/x.sock"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: usage expected");
    }
}
