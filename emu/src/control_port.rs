//! Control requests of the InfiniBand port: `ib_port` (what a subnet manager would
//! change) and `link` (the cable), both raising the port-change events of the change.
//!
//! - `{"cmd":"ib_port"}`: the port as it is now (`"port"`), nothing changed.
//! - `{"cmd":"ib_port", ...}` with any of: `"state"`: `"down"|"init"|"armed"|"active"`
//!   (the SM's PortState), `"lid"`, `"sm_lid"`, `"sm_sl"`, `"lmc"`,
//!   `"subnet_timeout"`, `"subnet_prefix"`, `"node_guid"`, `"port_guid"`,
//!   `"sys_guid"`, `"guid":{"index":I,"value":G}`, `"pkey":{"index":I,"value":K}`,
//!   `"pkeys":[K,...]` (the table from index 0, the rest cleared), `"node_desc":S`,
//!   `"cap_mask":N`, `"pkey_violations":N`, `"qkey_violations":N`, `"speed":"sdr"|"ddr"|"qdr"|"fdr"|"edr"`, `"ib_virt":B` (cap
//!   `ib_virt`; upstream reads caps at probe, so it matters from the next probe),
//!   `"mad_agents_in_device":B` (opt-in, not what a ConnectX does: the device's SMA /
//!   PMA answer MADs on QP0 / QP1 instead of the host; fw/dp/mad.rs),
//!   `"client_rereg":true`, `"defaults":true` (back to the power-on port first).
//!   Numbers may be JSON numbers or "0x.." strings. The reply lists the port-change
//!   EQEs raised (`"events"`: sub-type and where it went).
//! - `{"cmd":"link","up":B}`: physical link of port 1.

use crate::device::Device;
use crate::fw::port::{IbPort, Speed};
use crate::fw::{eq, Env};
use crate::ifc::smp_attrs::port_state;
use serde_json::{json, Value};

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

/// Field `key` of `req` as a number at most `max`; `Ok(None)` when absent.
fn field(req: &Value, key: &str, max: u64) -> Result<Option<u64>, String> {
    match req.get(key) {
        None => Ok(None),
        Some(v) => num(v)
            .filter(|n| *n <= max)
            .map(Some)
            .ok_or_else(|| format!("{key}: {v} is not a number up to {max:#x}")),
    }
}

/// `{"index":I,"value":V}` of a table of `len` entries.
fn entry(req: &Value, key: &str, len: usize, max: u64) -> Result<Option<(usize, u64)>, String> {
    let Some(e) = req.get(key) else {
        return Ok(None);
    };
    let i = e
        .get("index")
        .and_then(num)
        .and_then(|i| usize::try_from(i).ok())
        .filter(|i| *i < len)
        .ok_or_else(|| format!("{key}: index must be below {len}"))?;
    let v = e
        .get("value")
        .and_then(num)
        .filter(|v| *v <= max)
        .ok_or_else(|| format!("{key}: value must be a number up to {max:#x}"))?;
    Ok(Some((i, v)))
}

fn state_of(s: &str) -> Option<u8> {
    match s {
        "down" => Some(port_state::DOWN),
        "init" => Some(port_state::INIT),
        "armed" => Some(port_state::ARMED),
        "active" => Some(port_state::ACTIVE),
        _ => None,
    }
}

fn state_name(s: u8) -> &'static str {
    match s {
        port_state::DOWN => "down",
        port_state::INIT => "init",
        port_state::ARMED => "armed",
        port_state::ACTIVE => "active",
        _ => "?",
    }
}

/// The port after applying the request to `p`.
fn apply(mut p: IbPort, req: &Value) -> Result<IbPort, String> {
    if let Some(s) = req.get("state") {
        p.sm_state = s
            .as_str()
            .and_then(state_of)
            .ok_or_else(|| format!("state: {s} is not down, init, armed or active"))?;
    }
    if let Some(l) = field(req, "lid", 0xbfff)? {
        // Unicast LIDs are 1..0xbfff (IBTA 4.1.3); 0 is "not assigned".
        p.lid = l as u16;
    }
    if let Some(l) = field(req, "sm_lid", 0xbfff)? {
        p.sm_lid = l as u16;
    }
    if let Some(v) = field(req, "sm_sl", 15)? {
        p.sm_sl = v as u8;
    }
    if let Some(v) = field(req, "lmc", 7)? {
        p.lmc = v as u8;
    }
    if let Some(v) = field(req, "subnet_timeout", 31)? {
        p.subnet_timeout = v as u8;
    }
    if let Some(v) = field(req, "subnet_prefix", u64::MAX)? {
        p.subnet_prefix = v;
    }
    if let Some(v) = field(req, "node_guid", u64::MAX)? {
        p.node_guid = v;
    }
    if let Some(v) = field(req, "sys_guid", u64::MAX)? {
        p.sys_guid = v;
    }
    if let Some(v) = field(req, "port_guid", u64::MAX)? {
        let g = p.guids.first_mut().ok_or("the GUID table is empty")?;
        *g = v;
    }
    if let Some((i, v)) = entry(req, "guid", p.guids.len(), u64::MAX)? {
        p.guids[i] = v;
    }
    if let Some(list) = req.get("pkeys") {
        let list = list.as_array().ok_or("pkeys: a list of P_Keys")?;
        if list.len() > p.pkeys.len() {
            return Err(format!("pkeys: at most {} entries", p.pkeys.len()));
        }
        let mut t = vec![0u16; p.pkeys.len()];
        for (d, v) in t.iter_mut().zip(list) {
            *d = num(v)
                .and_then(|k| u16::try_from(k).ok())
                .ok_or_else(|| format!("pkeys: {v} is not a P_Key"))?;
        }
        p.pkeys = t;
    }
    if let Some((i, v)) = entry(req, "pkey", p.pkeys.len(), 0xffff)? {
        p.pkeys[i] = v as u16;
    }
    if let Some(d) = req.get("node_desc") {
        let d = d.as_str().ok_or("node_desc: a string")?;
        if d.len() > p.node_desc.len() {
            return Err(format!("node_desc: at most {} bytes", p.node_desc.len()));
        }
        p.node_desc = [0; 64];
        p.node_desc[..d.len()].copy_from_slice(d.as_bytes());
    }
    if let Some(v) = field(req, "pkey_violations", 0xffff)? {
        p.pkey_violations = v as u16;
    }
    if let Some(v) = field(req, "qkey_violations", 0xffff)? {
        p.qkey_violations = v as u16;
    }
    if let Some(v) = field(req, "cap_mask", u64::from(u32::MAX))? {
        p.cap_mask = v as u32;
    }
    if let Some(s) = req.get("speed") {
        p.speed = Speed::ALL
            .iter()
            .find(|(n, _)| Some(*n) == s.as_str())
            .map(|(_, sp)| *sp)
            .ok_or_else(|| format!("speed: {s} is not sdr, ddr, qdr, fdr or edr"))?;
    }
    if let Some(v) = req.get("ib_virt") {
        p.ib_virt = v.as_bool().ok_or("ib_virt: true or false")?;
    }
    if let Some(v) = req.get("mad_agents_in_device") {
        p.mad_agents_in_device = v.as_bool().ok_or("mad_agents_in_device: true or false")?;
    }
    Ok(p)
}

fn describe(fw: &crate::fw::Firmware) -> Value {
    let p = &fw.ib_port;
    let (state, phys) = fw.ib_port_state();
    let nd_end = p.node_desc.iter().position(|b| *b == 0).unwrap_or(64);
    json!({
        "state": state_name(state),
        "sm_state": state_name(p.sm_state),
        "phys_state": phys,
        "lid": p.lid,
        "sm_lid": p.sm_lid,
        "sm_sl": p.sm_sl,
        "lmc": p.lmc,
        "subnet_timeout": p.subnet_timeout,
        "subnet_prefix": format!("{:#018x}", p.subnet_prefix),
        "node_guid": format!("{:#018x}", p.node_guid),
        "port_guid": format!("{:#018x}", p.port_guid()),
        "sys_guid": format!("{:#018x}", p.sys_guid),
        "gid_table_len": p.guids.len(),
        "pkey_table_len": p.pkeys.len(),
        "pkeys": p.pkeys.iter().take_while(|k| **k != 0).map(|k| format!("{k:#06x}")).collect::<Vec<_>>(),
        "node_desc": String::from_utf8_lossy(&p.node_desc[..nd_end]),
        "cap_mask": format!("{:#010x}", p.cap_mask),
        "pkey_violations": p.pkey_violations,
        "qkey_violations": p.qkey_violations,
        "speed": Speed::ALL.iter().find(|(_, s)| *s == p.speed).map_or("?", |(n, _)| n),
        "ib_virt": p.ib_virt,
        "mad_agents_in_device": p.mad_agents_in_device,
    })
}

fn events(raised: &[(u8, eq::Posted)]) -> Value {
    Value::Array(
        raised
            .iter()
            .map(|(s, p)| json!({"sub_type": s, "posted": format!("{p:?}")}))
            .collect(),
    )
}

fn change(
    dev: &Device,
    f: impl FnOnce(&crate::fw::Firmware) -> Result<(IbPort, Option<bool>, bool), String>,
) -> Value {
    let msix_ok = dev
        .pci
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .msix_deliverable();
    let mut fw = dev.fw();
    let (port, link, rereg) = match f(&fw) {
        Ok(x) => x,
        Err(e) => return err(e),
    };
    let env = Env {
        mem: &*dev.mem,
        irq: &*dev.irq,
        msix_ok,
    };
    let raised = fw.set_ib_port(&env, port, link, rereg);
    let first = raised
        .first()
        .map_or("NoChange".to_string(), |(_, p)| format!("{p:?}"));
    json!({"ok": true, "events": events(&raised), "event": first, "port": describe(&fw)})
}

/// `ib_port`.
pub fn ib_port(dev: &Device, req: &Value) -> Value {
    change(dev, |fw| {
        let base = if req.get("defaults").and_then(Value::as_bool) == Some(true) {
            fw.default_ib_port()
        } else {
            fw.ib_port.clone()
        };
        let rereg = match req.get("client_rereg") {
            None => false,
            Some(v) => v.as_bool().ok_or("client_rereg: true or false")?,
        };
        Ok((apply(base, req)?, None, rereg))
    })
}

/// `link`.
pub fn link(dev: &Device, req: &Value) -> Value {
    let up = req.get("up").and_then(Value::as_bool).unwrap_or(true);
    change(dev, |fw| Ok((fw.ib_port.clone(), Some(up), false)))
}

/// The control `reset`: the port back to its power-on configuration, no events.
pub fn reset(dev: &Device) {
    let mut fw = dev.fw();
    fw.ib_port = fw.default_ib_port();
    let v = fw.ib_port.ib_virt;
    fw.caps.set_ib_virt(v);
}

/// `wire`: the link to the peer device (`fw/dp/wire.rs`). `{"cmd":"wire"}` reports it;
/// `"connected": false` ends the connection and makes no other (the peer's link goes
/// down too, as when a cable is pulled), `true` lets it come back; `"send": "hex"`
/// queues that frame for the peer (`sent`: true or why it was dropped).
pub fn wire(dev: &Device, req: &Value) -> Value {
    let link = dev.fw().dp.wire.link.clone();
    let Some(link) = link else {
        return err("no wire (start-up option --wire-listen or --wire-connect)");
    };
    match req.get("connected") {
        None => {}
        Some(Value::Bool(on)) => link.set_connectable(*on),
        Some(_) => return err("connected: true or false"),
    }
    // A raw frame for the peer, as the packet layer would send one (tests, debugging).
    let sent = match req.get("send") {
        None => Value::Null,
        Some(Value::String(h)) if h.len() <= 2 * MAX_SEND_HEX_BYTES => {
            let Some(frame) = unhex(h) else {
                return err("send: an even number of hex digits");
            };
            match dev.fw().wire_send(frame) {
                Ok(()) => json!(true),
                Err(e) => json!(format!("{e:?}")),
            }
        }
        Some(_) => return err(format!("send: at most {MAX_SEND_HEX_BYTES} bytes in hex")),
    };
    json!({"ok": true, "sent": sent, "wire": dev.fw().dp.wire.report()})
}

/// Largest raw frame the control `wire` `send` takes (ours; the wire carries more).
const MAX_SEND_HEX_BYTES: usize = 4096;

fn unhex(h: &str) -> Option<Vec<u8>> {
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}
