//! Control socket: JSON requests for injection, health, surprise removal, page
//! requests and statistics, in process and over a real socket with the CLI client.

mod common;

use common::{input, Host};
use mlx5_emu::control::{client, handle, serve};
use mlx5_emu::ifc::init_seg as is;
use mlx5_emu::ifc::opcodes::Opcode;
use serde_json::{json, Value};

fn req(h: &Host, v: Value) -> Value {
    handle(&h.dev, &v)
}

#[test]
fn injections_by_name_and_number() {
    let mut h = Host::new();
    assert_eq!(
        req(
            &h,
            json!({"cmd":"inject","opcode":"ENABLE_HCA","action":"status","status":"BAD_SYS_STATE_ERR","syndrome":"0x1234","count":1})
        )["ok"],
        true
    );
    let (st, synd, _) = h.run(&input(16, Opcode::ENABLE_HCA as u16, 0, &[]), 16);
    assert_eq!((st, synd), (4, 0x1234));
    h.ok(&input(16, Opcode::ENABLE_HCA as u16, 0, &[]), 16);
    assert_eq!(
        req(
            &h,
            json!({"cmd":"inject","opcode":"0x80d","action":"delivery","status":"TOKEN_ERR"})
        )["ok"],
        true
    );
    assert_eq!(h.cmd(&input(16, Opcode::NOP as u16, 0, &[]), 16), Err(2));
    assert_eq!(req(&h, json!({"cmd":"clear_injections"}))["ok"], true);
    h.ok(&input(16, Opcode::NOP as u16, 0, &[]), 16);
    assert_eq!(
        req(
            &h,
            json!({"cmd":"inject","opcode":2061,"action":"delay","ms":5})
        )["ok"],
        true
    );
    assert_eq!(
        req(&h, json!({"cmd":"inject","opcode":"NOPE","action":"never"}))["ok"],
        false
    );
    assert_eq!(
        req(
            &h,
            json!({"cmd":"inject","opcode":"NOP","action":"explode"})
        )["ok"],
        false
    );
    assert_eq!(
        req(&h, json!({"cmd":"inject","opcode":"NOP","action":"delay"}))["ok"],
        false
    );
    // Completion-field corruption by name; unknown field names are refused.
    assert_eq!(
        req(
            &h,
            json!({"cmd":"inject","opcode":"NOP","action":"corrupt","field":"tokn"})
        )["ok"],
        false
    );
    assert_eq!(req(&h, json!({"cmd":"clear_injections"}))["ok"], true);
    assert_eq!(
        req(
            &h,
            json!({"cmd":"inject","opcode":"NOP","action":"corrupt","field":"status","value":"0x0b","count":1})
        )["ok"],
        true
    );
    assert_eq!(h.cmd(&input(16, Opcode::NOP as u16, 0, &[]), 16), Err(0x0b));
    assert_eq!(
        req(&h, json!({"cmd":"get","path":["corruptions","status"]}))["value"],
        1
    );
    let s = req(&h, json!({"cmd":"stats"}));
    assert_eq!(s["commands"]["ENABLE_HCA"]["BAD_SYS_STATE_ERR"], 1);
    assert_eq!(s["commands"]["ENABLE_HCA"]["OK"], 1);
    assert_eq!(s["delivery_errors"]["TOKEN_ERR"], 1);
    assert_eq!(s["function"]["enabled"], true);
}

#[test]
fn health_surprise_removal_and_pages() {
    let h = Host::new();
    assert_eq!(
        req(
            &h,
            json!({"cmd":"health","syndrome":8,"ext_syndrome":7,"rfr":true})
        )["ok"],
        true
    );
    assert_eq!(h.read32(is::HEALTH_COUNTER) >> 24, 8);
    assert_eq!(
        req(&h, json!({"cmd":"surprise_removal","enable":true}))["ok"],
        true
    );
    assert_eq!(h.read32(is::FW_REV), u32::MAX);
    h.write32(is::CMD_DBELL, 1);
    h.dev.step();
    assert_eq!(
        h.dev.fw().stats.doorbells,
        0,
        "doorbell dropped while removed"
    );
    assert_eq!(
        req(&h, json!({"cmd":"surprise_removal","enable":false}))["ok"],
        true
    );
    assert_ne!(h.read32(is::FW_REV), u32::MAX);
    // No EQ yet: a page request cannot be delivered.
    let r = req(&h, json!({"cmd":"page_request","num_pages":4}));
    assert_eq!(r["ok"], false);
    assert_eq!(
        req(&h, json!({"cmd":"set_pages","boot":3,"init":5}))["ok"],
        true
    );
    let s = req(&h, json!({"cmd":"stats"}));
    assert_eq!(s["pages"]["demand"]["boot"], 3);
    assert_eq!(req(&h, json!({"cmd":"bogus"}))["ok"], false);
    assert_eq!(req(&h, json!({"cmd":"stop_health_counter"}))["ok"], true);
    assert_eq!(req(&h, json!({"cmd":"clear_health"}))["ok"], true);
    assert_eq!(h.read32(is::HEALTH_COUNTER) >> 24, 0);
}

#[test]
fn socket_round_trip() {
    let h = Host::new();
    let dir = std::env::temp_dir().join(format!("mlx5-emu-ctl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ctl.sock");
    let _ = std::fs::remove_file(&path);
    let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let dev = h.dev.clone();
    std::thread::spawn(move || serve(dev, l));
    let reply: Value = serde_json::from_str(&client(&path, r#"{"cmd":"stats"}"#).unwrap()).unwrap();
    assert_eq!(reply["ok"], true);
    assert_eq!(reply["pages"]["held"], 0);
    let reply: Value = serde_json::from_str(&client(&path, "not json").unwrap()).unwrap();
    assert_eq!(reply["ok"], false);
    // The CLI client mode of the binary.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mlx5-emu"))
        .args([
            "ctl",
            "--control",
            path.to_str().unwrap(),
            r#"{"cmd":"stats"}"#,
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reply["commands_total"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn port_registers_follow_link_state() {
    use mlx5_emu::ifc::regs::{access_register_in, paos_reg, ptys_reg, reg_id};
    let mut h = Host::new();
    h.ok(&input(16, Opcode::ENABLE_HCA as u16, 0, &[]), 16);
    let paos = |h: &mut Host| {
        let out = h.ok(
            &input(
                32,
                Opcode::ACCESS_REG as u16,
                1,
                &[(
                    access_register_in::REGISTER_ID.raw(),
                    u64::from(reg_id::PAOS),
                )],
            ),
            32,
        );
        paos_reg::OPER_STATUS.raw().get(&out[16..]).unwrap()
    };
    assert_eq!(paos(&mut h), 1);
    assert_eq!(req(&h, json!({"cmd":"link","up":false}))["ok"], true);
    assert_eq!(paos(&mut h), 2);
    let ptys_oper = |h: &mut Host| {
        let out = h.ok(
            &input(
                16 + 64,
                Opcode::ACCESS_REG as u16,
                1,
                &[(
                    access_register_in::REGISTER_ID.raw(),
                    u64::from(reg_id::PTYS),
                )],
            ),
            16 + 64,
        );
        ptys_reg::IB_LINK_WIDTH_OPER.raw().get(&out[16..])
    };
    // Link down: no operational width; up: 4x (`MLX5_PTYS_WIDTH_4X` = 1 << 2, port.h).
    assert_eq!(ptys_oper(&mut h), Some(0));
    assert_eq!(req(&h, json!({"cmd":"link","up":true}))["ok"], true);
    assert_eq!(paos(&mut h), 1);
    assert_eq!(ptys_oper(&mut h), Some(4));
    // Unknown register ids are refused.
    let (st, _, _) = h.run(
        &input(
            32,
            Opcode::ACCESS_REG as u16,
            1,
            &[(access_register_in::REGISTER_ID.raw(), 0x1234)],
        ),
        32,
    );
    assert_eq!(st, 3);
}

#[test]
fn get_returns_one_stats_value_as_shell_text() {
    let mut h = Host::new();
    h.ok(&input(16, Opcode::ENABLE_HCA as u16, 0, &[]), 16);
    let s = req(&h, json!({"cmd":"stats"}));
    let held = req(&h, json!({"cmd":"get","path":["pages","held"]}));
    assert_eq!(held["ok"], true);
    assert_eq!(held["value"], s["pages"]["held"]);
    assert_eq!(held["text"], s["pages"]["held"].to_string());
    let en = req(&h, json!({"cmd":"get","path":["function","enabled"]}));
    assert_eq!(
        (en["value"].clone(), en["text"].clone()),
        (json!(true), json!("True"))
    );
    let qu = req(&h, json!({"cmd":"get","path":["function","quiesced"]}));
    assert_eq!(qu["text"], "False");
    // An object comes back as JSON text.
    let td = req(&h, json!({"cmd":"get","path":["function","teardowns"]}));
    assert_eq!(
        serde_json::from_str::<Value>(td["text"].as_str().unwrap()).unwrap(),
        s["function"]["teardowns"]
    );
    // Missing keys, bad indices and a missing path are errors, not panics.
    assert_eq!(
        req(&h, json!({"cmd":"get","path":["pages","nope"]}))["ok"],
        false
    );
    assert_eq!(
        req(&h, json!({"cmd":"get","path":["eqs",99999]}))["ok"],
        false
    );
    assert_eq!(
        req(&h, json!({"cmd":"get","path":["pages",-1]}))["ok"],
        false
    );
    assert_eq!(req(&h, json!({"cmd":"get","path":[["x"]]}))["ok"], false);
    assert_eq!(req(&h, json!({"cmd":"get"}))["ok"], false);
}

#[test]
fn get_paths_returns_several_values_of_one_snapshot() {
    let mut h = Host::new();
    h.ok(&input(16, Opcode::ENABLE_HCA as u16, 0, &[]), 16);
    let s = req(&h, json!({"cmd":"stats"}));
    let r = req(
        &h,
        json!({"cmd":"get","paths":[["pages","held"],["function","enabled"],
            {"path":["dp","send","per_opcode","0x7f"],"default":0}]}),
    );
    assert_eq!(r["ok"], true);
    assert_eq!(r["values"], json!([s["pages"]["held"], true, 0]));
    assert_eq!(r["text"], format!("{} True 0", s["pages"]["held"]));
    // A default covers only a last key absent from an object that exists.
    assert_eq!(
        req(
            &h,
            json!({"cmd":"get","paths":[{"path":["nope","held"],"default":0}]})
        )["ok"],
        false
    );
    // Without a default a missing key is an error; a malformed entry too.
    assert_eq!(
        req(&h, json!({"cmd":"get","paths":[["pages","nope"]]}))["ok"],
        false
    );
    assert_eq!(req(&h, json!({"cmd":"get","paths":[7]}))["ok"], false);
    assert_eq!(
        req(&h, json!({"cmd":"get","paths":[{"default":0}]}))["ok"],
        false
    );
}
