//! Control socket: one JSON object per line in, one JSON object per line out.
//!
//! Requests (`"cmd"` selects):
//! - `{"cmd":"stats"}`: ledger, commands per opcode and status, EQs, interrupts,
//!   DMA errors, protocol violations.
//! - `{"cmd":"ledger"}`: `{"enabled":B,"held":N,"ok":true,"violations":N}` (cheap to poll).
//! - `{"cmd":"get","path":["pages","held"]}`: one value of the `stats` reply, as
//!   `{"ok":true,"value":V,"text":"..."}`; `text` is the value as a guest shell compares
//!   it (numbers in decimal, booleans `True`/`False`, strings bare, other values JSON).
//!   Array elements are addressed by index (`["eqs",0,"eqn"]`). With
//!   `"paths":[path, ...]` instead (each an array, or `{"path":[...],"default":V}` for a
//!   counter that may not exist yet): several values of one `stats` snapshot, as
//!   `{"ok":true,"values":[...],"text":"t1 t2 ..."}`.
//! - `{"cmd":"inject","opcode":"INIT_HCA"|"0x102"|258|"all","action":A,"count":N}`
//!   with A one of `"delay"` (+`"ms"`), `"never"`, `"status"` (+`"status"`,
//!   `"syndrome"`), `"delivery"` (+`"status"`), `"bad_output_signature"`, `"corrupt"`
//!   (+`"field"`: see [`crate::fw::inject::CorruptField::ALL`], optional `"block"`,
//!   `"value"`); `count` omitted = every time.
//! - `{"cmd":"strict","rule":NAME,"on":B}`: a strict check without PRM source
//!   ([`crate::fw::strict::Strict`]), until the next reset.
//! - `{"cmd":"dp_fault","fault":F,"qpn":N|"cqn":N,"count":C,"syndrome":S,"vendor":V}`:
//!   the data path fails as hardware can, C times (default 1), on QP N, CQ N or (no
//!   target) any: F one of `"cqe_error"` (+`syndrome`, default 0x02 local QP
//!   operation, `vendor`), `"lost_cqe"`, `"cq_overrun"`, `"wqe_dma"`, `"rkey"`, or
//!   the test faults `"bad_cqe_opcode"`, `"bad_cqe_wqe_counter"`, `"bad_cqe_qpn"` (a
//!   CQE written with that field malformed; see [`crate::fw::dp::fault`]).
//! - `{"cmd":"clear_injections"}`: command and data-path fault rules dropped.
//! - `{"cmd":"health","syndrome":N,"ext_syndrome":N,"rfr":B,"severity":N}`: FW fatal
//!   error (health counter stops).
//! - `{"cmd":"stop_health_counter"}`, `{"cmd":"clear_health"}`
//! - `{"cmd":"fw_reset"}`: the firmware restarts as after a software reset another
//!   function asked for: health cleared, every function's state and pages gone,
//!   nic_interface reading DISABLED (`init_seg` `sw_reset_ms` after SW_RESET).
//! - `{"cmd":"sync_reset","action":"request"|"abort"|"status","method":M,"timeout_ms":N}`:
//!   a firmware-initiated reset as another function's tool (`mlxfwreset`) starts it:
//!   RESET_REQUEST to the function (default action); `abort` ends the one in progress
//!   (RESET_ABORT to the function if it acked); `method` (`"hot_reset"`,
//!   `"link_toggle"`) and `timeout_ms` (negotiation) set before acting, until `reset`.
//! - `{"cmd":"vsc","sw_reset_holder":N}`: the VSC software-reset semaphore held with
//!   value N as another function would hold it (0 frees it); replies with the holders.
//! - `{"cmd":"surprise_removal","enable":B}`: BAR reads return all ones, BAR writes
//!   (doorbells included) are dropped.
//! - `{"cmd":"page_request","num_pages":N,"release_all":B}`
//! - `{"cmd":"page_requests","num_pages":[N,...]}` or
//!   `{"cmd":"page_requests","pattern":[N,...],"count":C}` (the pattern repeated up
//!   to C requests): sent back to back without waiting for answers.
//! - `{"cmd":"take_fault","mode":"never_given"|"duplicate"|"off","addrs":[A,...],"count":N}`:
//!   MANAGE_PAGES take answers return addresses never given, one page repeated, or
//!   the listed addresses; `count` omitted = every take.
//! - `{"cmd":"set_pages","boot":N,"init":N,"regular":N}`
//! - `{"cmd":"eqe","eqn":N,"type":T,"sub_type":S,"data":"<hex, up to 28 bytes>","count":N}`:
//!   writes raw (possibly malformed) EQEs into an EQ, e.g. to force an overrun.
//! - `{"cmd":"qp_event","qpn":N,"event":E,"count":C}`, `{"cmd":"srq_event","srqn":N,
//!   "event":E,"count":C}`: the device raises async event E (a name of
//!   [`crate::fw::rsc_events::QP_EVENTS`] / `SRQ_EVENTS`, or its type number) on an
//!   existing QP / SRQ, C times (default 1), to the EQ subscribed to it.
//! - `{"cmd":"object_pages","objects_per_page":N}`: verbs objects per firmware page
//!   (0 = objects cost no pages); `{"cmd":"qp_state","qpn":N,"state":S}`: the device
//!   moves a QP to SQER / SQD (from RTS) or ERR.
//! - `{"cmd":"jitter","max_us":N}`: every command completes after a random delay
//!   below N µs, so independent commands complete out of order (0 = off).
//! - `{"cmd":"link","up":B}`: physical link of port 1; posts the port-change event of
//!   the change (see [`crate::control_port`]).
//! - `{"cmd":"ib_port", ...}`: the InfiniBand port as a subnet manager configures it
//!   (state, LIDs, GUIDs, P_Keys, node description, cap `ib_virt`), posting the
//!   port-change events of the change (see [`crate::control_port`]).
//! - `{"cmd":"wire","connected":B,"send":"hex"}`: the link to the wired peer device
//!   held down (false) or allowed up (true), a raw frame sent to the peer; without
//!   fields: its state (`stats` `dp` `wire`).
//! - `{"cmd":"set_cmd_timeout","ms":N}`: command timeout advertised at 0xFF8 (0 = default).
//! - `{"cmd":"init_seg", ...}`: init-segment overrides (see [`init_seg`]).
//! - `{"cmd":"caps","reserved_tail_fill":N}`: QUERY_HCA_CAP(GENERAL) output fills the
//!   reserved tail of the capability union with byte N (0 = zero).
//! - `{"cmd":"teardown_state","force":"fail"|"success","prepare_fast":"fail"|"success"}`:
//!   TEARDOWN_HCA answers `state` FAIL for that profile.
//! - `{"cmd":"reset"}`: function-level reset, and every knob of `init_seg`, `caps` and
//!   `teardown_state` back to its default, the `dp_fault` rules dropped (the observations too), and the IB port to
//!   its power-on configuration.

use crate::device::Device;
use crate::fw::inject::{Action, CorruptField, Corruption};
use crate::ifc::opcodes::Opcode;
use crate::ifc::status::{CmdStatus, DeliveryStatus};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::sync::Arc;

/// Control `sync_reset` (module doc).
fn sync_reset(dev: &Device, req: &Value) -> Value {
    use crate::ifc::regs::mfrl;
    let method = match req.get("method").map(|m| m.as_str()) {
        None => None,
        Some(Some("hot_reset")) => Some(mfrl::METHOD_HOT_RESET),
        Some(Some("link_toggle")) => Some(mfrl::METHOD_LINK_TOGGLE),
        Some(_) => return err("method: \"hot_reset\" or \"link_toggle\""),
    };
    let timeout = match req.get("timeout_ms") {
        None => None,
        Some(v) => match v.as_u64().filter(|&ms| (1..=600_000).contains(&ms)) {
            Some(ms) => Some(ms),
            None => return err("timeout_ms: 1 to 600000"),
        },
    };
    {
        let mut fw = dev.fw();
        if let Some(m) = method {
            fw.sync.method = m;
        }
        if let Some(ms) = timeout {
            fw.sync.negotiation = std::time::Duration::from_millis(ms);
        }
    }
    let reply = |dev: &Device, extra: Value| {
        let fw = dev.fw();
        let mut v = json!({
            "ok": true,
            "phase": fw.sync.phase_name(),
            "reset_state": fw.sync.reset_state,
        });
        if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
            o.extend(e);
        }
        v
    };
    match req
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("request")
    {
        "request" => match dev.sync_reset_request() {
            Ok(()) => reply(dev, json!({})),
            Err(e) => err(e.as_str()),
        },
        "abort" => {
            let aborted = dev.sync_reset_abort();
            reply(dev, json!({"aborted": aborted}))
        }
        "status" => reply(dev, json!({})),
        a => err(format!("action {a}: request, abort or status")),
    }
}

fn err(msg: impl Into<String>) -> Value {
    json!({"ok": false, "error": msg.into()})
}

fn num(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => {
            let s = s.trim();
            match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => s.parse().ok(),
            }
        }
        _ => None,
    }
}

fn opcode_of(v: &Value) -> Result<Option<u16>, String> {
    if let Some(s) = v.as_str() {
        if s.eq_ignore_ascii_case("all") {
            return Ok(None);
        }
        if let Some(op) = Opcode::ALL
            .iter()
            .find(|o| o.name().eq_ignore_ascii_case(s))
        {
            return Ok(Some(*op as u16));
        }
    }
    num(v)
        .and_then(|n| u16::try_from(n).ok())
        .map(Some)
        .ok_or_else(|| format!("bad opcode {v}"))
}

fn status_of<T>(
    v: &Value,
    from_raw: fn(u8) -> Option<T>,
    names: &[T],
    name: fn(&T) -> &'static str,
) -> Option<u8>
where
    T: Copy + Into<u8>,
{
    if let Some(s) = v.as_str() {
        if let Some(t) = names.iter().find(|t| name(t).eq_ignore_ascii_case(s)) {
            return Some((*t).into());
        }
    }
    num(v)
        .and_then(|n| u8::try_from(n).ok())
        .filter(|n| from_raw(*n).is_some())
}

impl From<CmdStatus> for u8 {
    fn from(s: CmdStatus) -> u8 {
        s as u8
    }
}

impl From<DeliveryStatus> for u8 {
    fn from(s: DeliveryStatus) -> u8 {
        s as u8
    }
}

/// The `stats` reply (see [`crate::report`]).
pub use crate::report::stats;

fn inject(dev: &Device, req: &Value) -> Value {
    let opcode = match opcode_of(req.get("opcode").unwrap_or(&json!("all"))) {
        Ok(o) => o,
        Err(e) => return err(e),
    };
    let count = req
        .get("count")
        .and_then(num)
        .map(|n| n.min(u64::from(u32::MAX)) as u32);
    let action = match req.get("action").and_then(Value::as_str).unwrap_or("") {
        "delay" => match req.get("ms").and_then(num) {
            Some(ms) => Action::Delay(ms),
            None => return err("delay needs \"ms\""),
        },
        "never" => Action::Never,
        "bad_output_signature" => Action::BadOutputSignature,
        "corrupt" => {
            let name = req.get("field").and_then(Value::as_str).unwrap_or("");
            let Some(&(_, field)) = CorruptField::ALL.iter().find(|(n, _)| *n == name) else {
                let names: Vec<_> = CorruptField::ALL.iter().map(|(n, _)| n).collect();
                return err(format!("corrupt needs \"field\": one of {names:?}"));
            };
            let block = req.get("block").and_then(num).map(|b| b as usize);
            Action::Corrupt(Corruption {
                field,
                block,
                value: req.get("value").and_then(num),
            })
        }
        "status" => {
            let st = req
                .get("status")
                .and_then(|v| status_of(v, CmdStatus::from_raw, CmdStatus::ALL, |s| s.name()));
            let Some(st) = st else {
                return err("status needs a valid \"status\"");
            };
            let synd = req
                .get("syndrome")
                .and_then(num)
                .unwrap_or(u64::from(crate::fw::syndrome::INJECTED));
            Action::Status(st, synd as u32)
        }
        "delivery" => {
            let st = req.get("status").and_then(|v| {
                status_of(v, DeliveryStatus::from_raw, DeliveryStatus::ALL, |s| {
                    s.name()
                })
            });
            match st.and_then(DeliveryStatus::from_raw) {
                Some(s) => Action::Delivery(s),
                None => return err("delivery needs a valid \"status\""),
            }
        }
        other => return err(format!("unknown action {other:?}")),
    };
    dev.fw().inject.add(opcode, action, count);
    json!({"ok": true})
}

fn raw_eqe(dev: &Device, req: &Value) -> Value {
    let Some(eqn) = req
        .get("eqn")
        .and_then(num)
        .and_then(|n| u8::try_from(n).ok())
    else {
        return err("eqe needs \"eqn\"");
    };
    let t = req.get("type").and_then(num).unwrap_or(0xff) as u8;
    let sub = req.get("sub_type").and_then(num).unwrap_or(0) as u8;
    let hex = req.get("data").and_then(Value::as_str).unwrap_or("");
    let mut data = [0u8; 28];
    for (i, b) in data.iter_mut().enumerate() {
        match hex.get(2 * i..2 * i + 2) {
            Some(h) => match u8::from_str_radix(h, 16) {
                Ok(v) => *b = v,
                Err(_) => return err("data must be hex"),
            },
            None => break,
        }
    }
    let count = req.get("count").and_then(num).unwrap_or(1);
    let msix_ok = dev
        .pci
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .msix_deliverable();
    let mut fw = dev.fw();
    let mut results = Vec::new();
    for _ in 0..count {
        let p = fw
            .eqs
            .post_to(eqn, t, sub, &data, &*dev.mem, &*dev.irq, msix_ok);
        results.push(format!("{p:?}"));
    }
    json!({"ok": true, "results": results})
}

/// Most requests one `page_requests` sends.
const MAX_BATCH: u64 = 100_000;

fn page_requests(dev: &Device, req: &Value) -> Value {
    let as_i32 = |v: &Value| v.as_i64().and_then(|n| i32::try_from(n).ok());
    let list: Vec<i32> = if let Some(a) = req.get("num_pages").and_then(Value::as_array) {
        match a.iter().map(as_i32).collect::<Option<Vec<_>>>() {
            Some(l) => l,
            None => return err("num_pages must be 32-bit signed integers"),
        }
    } else if let Some(p) = req.get("pattern").and_then(Value::as_array) {
        let Some(p) = p.iter().map(as_i32).collect::<Option<Vec<_>>>() else {
            return err("pattern must be 32-bit signed integers");
        };
        let count = req.get("count").and_then(num).unwrap_or(p.len() as u64);
        if p.is_empty() || count > MAX_BATCH {
            return err(format!(
                "pattern must not be empty and count at most {MAX_BATCH}"
            ));
        }
        p.iter().copied().cycle().take(count as usize).collect()
    } else {
        return err("page_requests needs \"num_pages\": [..] or \"pattern\": [..] with \"count\"");
    };
    if list.len() as u64 > MAX_BATCH {
        return err(format!("at most {MAX_BATCH} requests at once"));
    }
    let sum: i64 = list.iter().map(|&n| i64::from(n)).sum();
    match dev.page_requests(&list, false) {
        Ok(()) => json!({"ok": true, "requests": list.len(), "net_pages": sum}),
        Err(e) => err(e),
    }
}

fn take_fault(dev: &Device, req: &Value) -> Value {
    use crate::fw::pages::TakeFault;
    let count = req
        .get("count")
        .and_then(num)
        .map(|n| n.min(u64::from(u32::MAX)) as u32);
    let fault = if let Some(a) = req.get("addrs").and_then(Value::as_array) {
        match a.iter().map(num).collect::<Option<Vec<_>>>() {
            Some(l) => Some(TakeFault::Addrs(l)),
            None => return err("addrs must be numbers"),
        }
    } else {
        match req.get("mode").and_then(Value::as_str).unwrap_or("") {
            "never_given" => Some(TakeFault::NeverGiven),
            "duplicate" => Some(TakeFault::Duplicate),
            "off" => None,
            other => {
                return err(format!(
                "take_fault needs \"mode\" never_given|duplicate|off or \"addrs\", not {other:?}"
            ))
            }
        }
    };
    dev.fw().ledger.take_fault = fault.map(|f| (f, count));
    json!({"ok": true})
}

fn seg_fields(v: &Value) -> Result<crate::regs::SegFields, String> {
    let mut f = crate::regs::SegFields::default();
    let small = |k: &str, max: u64| -> Result<Option<u64>, String> {
        match v.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(x) => num(x)
                .filter(|n| *n <= max)
                .map(Some)
                .ok_or_else(|| format!("bad {k}: {x}")),
        }
    };
    f.cmd_interface_rev = small("cmd_interface_rev", 0xffff)?.map(|n| n as u16);
    f.log_cmdq_size = small("log_cmdq_size", 0xf)?.map(|n| n as u32);
    f.log_cmdq_stride = small("log_cmdq_stride", 0xf)?.map(|n| n as u32);
    f.cmd_exec_to = small("cmd_exec_to", 0xffff_ffff)?.map(|n| n as u32);
    f.cmd_q_init_to = small("cmd_q_init_to", 0xffff_ffff)?.map(|n| n as u32);
    if let Some(x) = v.get("fw_rev").filter(|x| !x.is_null()) {
        let parts: Vec<u16> = x
            .as_str()
            .unwrap_or("")
            .split('.')
            .filter_map(|p| p.parse().ok())
            .collect();
        match parts[..] {
            [a, b, c] => f.fw_rev = Some((a, b, c)),
            _ => return Err(format!("bad fw_rev {x} (want \"A.B.C\")")),
        }
    }
    Ok(f)
}

fn init_hold(v: &Value) -> Result<crate::regs::InitHold, String> {
    use crate::regs::InitHold;
    match v {
        Value::String(s) if s == "forever" => Ok(InitHold::Forever),
        other => num(other)
            .map(InitHold::Ms)
            .ok_or_else(|| format!("bad duration {other} (ms or \"forever\")")),
    }
}

/// `init_seg`: overrides of init-segment fields, each optional:
/// `cmd_interface_rev`, `fw_rev` ("A.B.C"), `log_cmdq_size`, `log_cmdq_stride`,
/// `cmd_exec_to`, `cmd_q_init_to` (raw register values, `default_timeout` encoding),
/// all in effect from now on; `while_initializing: {same keys}` in effect only while
/// `initializing` is set; `initializing_ms: N|"forever"` sets `initializing` from now
/// (0 clears it); `initializing_after_cmdq_ms: N|"forever"` sets it again whenever the
/// driver writes the command queue address; `fw_reset_supported: B` sets or clears
/// `initializing` bit 30; `sw_reset_ms: N` how long a firmware restart lasts;
/// `clear: true` first removes every override. Replies with the knobs in effect.
fn init_seg(dev: &Device, req: &Value) -> Value {
    let mut r = dev.regs();
    if req.get("clear").and_then(Value::as_bool).unwrap_or(false) {
        r.clear_knobs();
    }
    let fields = match seg_fields(req) {
        Ok(f) => f,
        Err(e) => return err(e),
    };
    let during = match req.get("while_initializing").map(seg_fields).transpose() {
        Ok(f) => f,
        Err(e) => return err(e),
    };
    let hold = match req.get("initializing_ms").map(init_hold).transpose() {
        Ok(h) => h,
        Err(e) => return err(e),
    };
    let after = match req
        .get("initializing_after_cmdq_ms")
        .map(init_hold)
        .transpose()
    {
        Ok(h) => h,
        Err(e) => return err(e),
    };
    r.knobs.fields = r.knobs.fields.clone().overlay(&fields);
    if let Some(d) = during {
        r.knobs.while_initializing = r.knobs.while_initializing.clone().overlay(&d);
    }
    if let Some(a) = after {
        r.knobs.initializing_after_cmdq = match a {
            crate::regs::InitHold::Ms(0) => None,
            a => Some(a),
        };
    }
    if let Some(v) = req.get("fw_reset_supported") {
        let Some(v) = v.as_bool() else {
            return err("fw_reset_supported: true or false");
        };
        r.knobs.fw_reset_unsupported = !v;
    }
    if let Some(v) = req.get("sw_reset_ms") {
        let Some(v) = num(v) else {
            return err("sw_reset_ms: milliseconds");
        };
        r.knobs.sw_reset_ms = v;
    }
    if let Some(h) = hold {
        r.hold_initializing(h);
    }
    json!({"ok": true, "knobs": format!("{:?}", r.knobs), "initializing": r.initializing()})
}

fn state_fail(v: Option<&Value>) -> Result<Option<bool>, String> {
    match v.and_then(Value::as_str) {
        None => Ok(None),
        Some("fail") => Ok(Some(true)),
        Some("success") => Ok(Some(false)),
        Some(o) => Err(format!("bad state {o:?} (\"fail\" or \"success\")")),
    }
}

/// `get`: one value of the stats tree, found by a path of keys and array indices.
fn get(dev: &Device, req: &Value) -> Value {
    let root = stats(dev);
    if let Some(paths) = req.get("paths").and_then(Value::as_array) {
        return get_many(&root, paths);
    }
    let Some(path) = req.get("path").and_then(Value::as_array) else {
        return err("get needs \"path\": [key or index, ...] or \"paths\": [path, ...]");
    };
    match lookup(&root, path) {
        Ok(v) => json!({"ok": true, "value": v, "text": shell_text(v)}),
        Err(e) => err(e),
    }
}

/// `get` with `"paths"`: several values of one `stats` reply (one snapshot, built
/// once), each path an array as `path` or `{"path":[...],"default":V}` (V when the
/// path's last key is absent from an object that exists: a counter never counted). The
/// reply's `text` is the values' texts separated by single spaces.
fn get_many(root: &Value, paths: &[Value]) -> Value {
    let mut values = Vec::with_capacity(paths.len());
    for (n, p) in paths.iter().enumerate() {
        let (path, default) = match p {
            Value::Array(a) => (a.as_slice(), None),
            Value::Object(o) => match o.get("path").and_then(Value::as_array) {
                Some(a) => (a.as_slice(), o.get("default")),
                None => return err(format!("get: paths[{n}] has no \"path\" array")),
            },
            _ => return err(format!("get: paths[{n}] is neither an array nor an object")),
        };
        let v = match (lookup(root, path), default) {
            (Ok(v), _) => v.clone(),
            (Err(_), Some(d)) if path_parent_exists(root, path) => d.clone(),
            (Err(e), _) => return err(format!("get: paths[{n}]: {e}")),
        };
        values.push(v);
    }
    let text = values.iter().map(shell_text).collect::<Vec<_>>().join(" ");
    json!({"ok": true, "values": values, "text": text})
}

/// The value at `path` (keys and array indices) in `root`.
fn lookup<'a>(root: &'a Value, path: &[Value]) -> Result<&'a Value, String> {
    let mut v = root;
    for (i, step) in path.iter().enumerate() {
        let next = match step {
            Value::String(k) => v.get(k.as_str()),
            Value::Number(n) => n
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .and_then(|n| v.get(n)),
            _ => None,
        };
        match next {
            Some(n) => v = n,
            None => return Err(format!("get: no {step} at path position {i}")),
        }
    }
    Ok(v)
}

/// Whether all of `path` but its last step leads to an object (so only the last key
/// is absent).
fn path_parent_exists(root: &Value, path: &[Value]) -> bool {
    match path.split_last() {
        Some((Value::String(_), parent)) => lookup(root, parent).is_ok_and(Value::is_object),
        _ => false,
    }
}

/// A value as a guest shell compares it (the same text as Python's `print`, which
/// the guest's `emu_stat` used before, for numbers, booleans and strings).
fn shell_text(v: &Value) -> String {
    match v {
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// Handles one request.
pub fn handle(dev: &Device, req: &Value) -> Value {
    let cmd = req.get("cmd").and_then(Value::as_str).unwrap_or("");
    match cmd {
        "stats" => stats(dev),
        "ledger" => crate::report::ledger(dev),
        "get" => get(dev, req),
        "inject" => inject(dev, req),
        "dp_fault" => dp_fault(dev, req),
        "clear_injections" => {
            let mut fw = dev.fw();
            fw.inject.clear();
            fw.dp.faults.clear();
            json!({"ok": true})
        }
        "health" => {
            let synd = req.get("syndrome").and_then(num).unwrap_or(1) as u8;
            let ext = req.get("ext_syndrome").and_then(num).unwrap_or(0) as u16;
            let rfr = req.get("rfr").and_then(Value::as_bool).unwrap_or(false);
            let sev = req.get("severity").and_then(num).unwrap_or(2) as u8;
            dev.regs().set_fatal(synd, ext, rfr, sev);
            json!({"ok": true})
        }
        "clear_health" => {
            dev.regs().clear_health();
            json!({"ok": true})
        }
        "fw_reset" => {
            let mut fw = dev.fw();
            dev.restart_firmware(&mut fw);
            json!({"ok": true})
        }
        "sync_reset" => sync_reset(dev, req),
        "vsc" => {
            let mut pci = dev.pci.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(h) = req.get("sw_reset_holder") {
                let Some(h) = h.as_u64().and_then(|h| u32::try_from(h).ok()) else {
                    return err("sw_reset_holder: a number below 2^32 (0 = free)");
                };
                pci.vsc.set_sw_reset_holder(h);
            }
            json!({"ok": true, "sw_reset_holder": pci.vsc.sw_reset_holder(), "gw_holder": pci.vsc.gw_holder()})
        }
        "stop_health_counter" => {
            dev.regs().stop_health_counter();
            json!({"ok": true})
        }
        "surprise_removal" => {
            let on = req.get("enable").and_then(Value::as_bool).unwrap_or(true);
            dev.regs().all_ones = on;
            json!({"ok": true})
        }
        "page_request" => {
            let Some(n) = req.get("num_pages").and_then(Value::as_i64) else {
                return err("page_request needs \"num_pages\"");
            };
            let Ok(n) = i32::try_from(n) else {
                return err("num_pages out of range");
            };
            let all = req
                .get("release_all")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            match dev.page_request(n, all) {
                Ok(()) => json!({"ok": true}),
                Err(e) => err(e),
            }
        }
        "page_requests" => page_requests(dev, req),
        "take_fault" => take_fault(dev, req),
        "set_pages" => {
            let mut fw = dev.fw();
            let l = &mut fw.ledger;
            if let Some(n) = req.get("boot").and_then(num) {
                l.boot_demand = n as u32;
            }
            if let Some(n) = req.get("init").and_then(num) {
                l.init_demand = n as u32;
            }
            if let Some(n) = req.get("regular").and_then(num) {
                l.regular_demand = n as u32;
            }
            json!({"ok": true})
        }
        "set_cmd_timeout" => {
            // The command execution timeout the device advertises at init segment 0xFF8.
            let ms = req.get("ms").and_then(num).unwrap_or(0).min(0xf_ffff) as u32;
            let default = crate::config::EmuConfig::default().cmd_exec_to;
            dev.regs().set_cmd_exec_timeout_ms(ms, default);
            json!({"ok": true})
        }
        "reset" => {
            dev.reset();
            dev.regs().clear_knobs();
            dev.pci.lock().unwrap_or_else(|e| e.into_inner()).vsc = crate::vsc::Vsc::new();
            let mut fw = dev.fw();
            fw.objs.cost.objects_per_page = crate::fw::rsc::DEFAULT_OBJECTS_PER_PAGE;
            fw.knobs = crate::fw::FwKnobs::default();
            fw.observed = crate::fw::Observed::default();
            fw.dp.faults.clear();
            fw.sync = crate::fw::sync_reset::SyncReset::default();
            drop(fw);
            crate::control_port::reset(dev);
            json!({"ok": true})
        }
        "init_seg" => init_seg(dev, req),
        // Verbs objects (issue 11, emulator objects slice).
        "object_pages" => {
            let Some(n) = req
                .get("objects_per_page")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
            else {
                return json!({"ok": false, "error": "objects_per_page: a number below 2^32 (0 = off)"});
            };
            dev.fw().objs.cost.objects_per_page = n;
            json!({"ok": true})
        }
        "qp_state" => qp_state(dev, req),
        "caps" => {
            let Some(n) = req
                .get("reserved_tail_fill")
                .and_then(num)
                .filter(|n| *n <= 0xff)
            else {
                return err("caps needs \"reserved_tail_fill\": 0..255");
            };
            dev.fw().knobs.cap_tail_fill = n as u8;
            json!({"ok": true})
        }
        "teardown_state" => {
            let (force, prep) = match (
                state_fail(req.get("force")),
                state_fail(req.get("prepare_fast")),
            ) {
                (Ok(f), Ok(p)) => (f, p),
                (Err(e), _) | (_, Err(e)) => return err(e),
            };
            let mut fw = dev.fw();
            if let Some(f) = force {
                fw.knobs.force_state_fail = f;
            }
            if let Some(p) = prep {
                fw.knobs.prepare_fast_state_fail = p;
            }
            json!({"ok": true, "force_state_fail": fw.knobs.force_state_fail, "prepare_fast_state_fail": fw.knobs.prepare_fast_state_fail})
        }
        "eqe" => raw_eqe(dev, req),
        "qp_event" => rsc_event(dev, req, true),
        "srq_event" => rsc_event(dev, req, false),
        "strict" => {
            let on = req.get("on").and_then(Value::as_bool).unwrap_or(true);
            match dev
                .fw()
                .strict
                .set(req.get("rule").and_then(Value::as_str).unwrap_or(""), on)
            {
                Ok(()) => json!({"ok": true}),
                Err(e) => err(e),
            }
        }
        "jitter" => {
            dev.fw().jitter_us = req.get("max_us").and_then(num).unwrap_or(0);
            json!({"ok": true})
        }
        // IB port (i11-emu-port): control_port.rs.
        "link" => crate::control_port::link(dev, req),
        "ib_port" => crate::control_port::ib_port(dev, req),
        // The wire to a peer device (issue 22): control_port.rs.
        "wire" => crate::control_port::wire(dev, req),
        _ => err(format!("unknown cmd {cmd:?}")),
    }
}

/// Serves the control socket at `path` (one thread per connection).
pub fn serve(dev: Arc<Device>, listener: UnixListener) {
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let dev = Arc::clone(&dev);
        std::thread::spawn(move || {
            let Ok(mut w) = conn.try_clone() else { return };
            for line in BufReader::new(conn).lines() {
                let Ok(line) = line else { return };
                if line.trim().is_empty() {
                    continue;
                }
                let reply = match serde_json::from_str::<Value>(&line) {
                    Ok(req) => handle(&dev, &req),
                    Err(e) => err(format!("bad JSON: {e}")),
                };
                if writeln!(w, "{reply}").is_err() {
                    return;
                }
            }
        });
    }
}

/// Sends one request to a control socket and returns the reply line.
pub fn client(path: &std::path::Path, request: &str) -> std::io::Result<String> {
    let mut s = std::os::unix::net::UnixStream::connect(path)?;
    writeln!(s, "{}", request.trim())?;
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line)?;
    Ok(line.trim_end().to_string())
}

/// `{"cmd":"qp_state","qpn":N,"state":S}`: moves a QP to `state` as the device does on
/// its own (a send error: SQER 4 or ERR 6; a drained send queue: SQD 5).
fn qp_state(dev: &Device, req: &Value) -> Value {
    let qpn = req
        .get("qpn")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    let state = req
        .get("state")
        .and_then(Value::as_u64)
        .and_then(|n| u8::try_from(n).ok());
    let (Some(qpn), Some(state)) = (qpn, state) else {
        return json!({"ok": false, "error": "qpn and state (numbers) needed"});
    };
    match dev.fw().device_qp_state(qpn, state) {
        Ok(()) => json!({"ok": true}),
        Err(e) => json!({"ok": false, "error": e}),
    }
}

/// `qp_event` / `srq_event`: see the module doc.
fn rsc_event(dev: &Device, req: &Value, qp: bool) -> Value {
    use crate::fw::rsc_events::{event_of, QP_EVENTS, SRQ_EVENTS};
    let key = if qp { "qpn" } else { "srqn" };
    let n = req
        .get(key)
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    let ev = match req.get("event") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => v.as_u64().map(|n| n.to_string()),
        None => None,
    };
    let (Some(n), Some(ev)) = (n, ev) else {
        return err(format!("{key} (number) and event needed"));
    };
    let Some(t) = event_of(if qp { &QP_EVENTS } else { &SRQ_EVENTS }, &ev) else {
        return err(format!("unknown event {ev}"));
    };
    let count = req
        .get("count")
        .and_then(num)
        .and_then(|c| u32::try_from(c).ok())
        .unwrap_or(1);
    let msix_ok = dev
        .pci
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .msix_deliverable();
    let mut fw = dev.fw();
    let env = crate::fw::Env {
        mem: &*dev.mem,
        irq: &*dev.irq,
        msix_ok,
    };
    let r = if qp {
        fw.raise_qp_event(&env, n, t, count)
    } else {
        fw.raise_srq_event(&env, n, t, count)
    };
    match r {
        Ok(posted) => {
            let written = posted
                .iter()
                .filter(|p| matches!(p, crate::fw::eq::Posted::Written(_)))
                .count();
            let results: Vec<String> = posted.iter().map(|p| format!("{p:?}")).collect();
            json!({"ok": true, "type": t, "written": written, "results": results})
        }
        Err(e) => err(e),
    }
}

/// `dp_fault`: see the module doc.
fn dp_fault(dev: &Device, req: &Value) -> Value {
    use crate::fw::dp::fault::{DpFaultKind, FaultTarget};
    let byte = |k: &str| -> Result<Option<u8>, String> {
        match req.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => num(v)
                .and_then(|n| u8::try_from(n).ok())
                .map(Some)
                .ok_or_else(|| format!("bad {k}: {v} (0..255)")),
        }
    };
    let (syndrome, vendor) = match (byte("syndrome"), byte("vendor")) {
        (Ok(s), Ok(v)) => (s, v),
        (Err(e), _) | (_, Err(e)) => return err(e),
    };
    let name = req.get("fault").and_then(Value::as_str).unwrap_or("");
    let Some(kind) = DpFaultKind::from_name(name, syndrome, vendor) else {
        return err(format!(
            "dp_fault needs \"fault\": one of {:?}",
            DpFaultKind::NAMES
        ));
    };
    let n = |k: &str| req.get(k).and_then(num).and_then(|n| u32::try_from(n).ok());
    let target = match (n("qpn"), n("cqn")) {
        (Some(_), Some(_)) => return err("dp_fault takes \"qpn\" or \"cqn\", not both"),
        (Some(q), None) => FaultTarget::Qp(q),
        (None, Some(c)) => FaultTarget::Cq(c),
        (None, None) => FaultTarget::Any,
    };
    // A QP's WQE fetch and responder have no CQ to match (a CQ fault may name the QP
    // whose CQE it hits).
    if matches!(kind, DpFaultKind::WqeDma | DpFaultKind::RkeyViolation)
        && matches!(target, FaultTarget::Cq(_))
    {
        return err(format!("{name} applies to a QP (\"qpn\")"));
    }
    let count = n("count").unwrap_or(1);
    dev.fw().dp.faults.add(kind, target, count);
    json!({"ok": true})
}
