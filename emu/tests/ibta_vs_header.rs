//! Checks the IBTA tables of `ifc/mad.rs` and `ifc/smp_attrs.rs` against the kernel's
//! `include/rdma/ib_mad.h` and `ib_smi.h`, and the IB register ids and port-change
//! sub-types against `driver.h` / `device.h`, in the spirit of `ifc_vs_header.rs`.
//!
//! A table named after a kernel struct (`ib_smp`, ...) is checked member by member: a
//! field named `member` must be exactly that C member, a field `member:part` must lie
//! inside C member `member`, a field `ibta:...` must lie after the C struct's end (the
//! kernel's struct is shorter than IBTA's attribute). A table named `ibta:...` has no
//! kernel struct: it must be exactly the SMP data (`IB_SMP_DATA_SIZE`) and its
//! attribute id must be the one the header names. No two fields of a table overlap.
//!
//! The headers are found through `MLX5_IFC_H` (its `../../rdma/`), else under
//! `~/.cache/mlx5-rs/kernel/src-*/include/`. A missing header is a failure.

use mlx5_emu::ifc;
use std::collections::HashMap;
use std::path::PathBuf;

#[path = "../../tests/support/kernel_src.rs"]
mod kernel_src;

/// The test kernel's `include/`: found through `mlx5_ifc.h` (`MLX5_IFC_H` overrides it,
/// as for `ifc_vs_header`), whose directory is `include/linux/mlx5/`.
fn include_dir() -> PathBuf {
    let ifc = kernel_src::kernel_file("MLX5_IFC_H", "include/linux/mlx5/mlx5_ifc.h");
    ifc.ancestors()
        .nth(3)
        .map_or_else(|| PathBuf::from("include"), |p| p.to_path_buf())
}

fn read(rel: &str) -> String {
    let p = include_dir().join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| {
        panic!(
            "{} not found ({e}); set MLX5_IFC_H to the test kernel's mlx5_ifc.h",
            p.display()
        )
    })
}

fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |e| &r[e + 2..]);
        } else if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |e| &r[e..]);
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Members of `struct name { ... }` as (name, byte offset, byte size); every member
/// of these structs is naturally aligned, so the offsets are the packed sums (the
/// test also checks the total against IBTA's size).
fn c_struct(text: &str, name: &str) -> Vec<(String, usize, usize)> {
    let text = strip_comments(text);
    let key = format!("struct {name} {{");
    let at = text
        .find(&key)
        .unwrap_or_else(|| panic!("struct {name} not in header"));
    let body = &text[at + key.len()..];
    let body = &body[..body.find('}').expect("struct end")];
    let mut off = 0;
    let mut out = vec![];
    for st in body.split(';') {
        let st = st.split_whitespace().collect::<Vec<_>>().join(" ");
        if st.is_empty() {
            continue;
        }
        let (ty, decl) = st.split_once(' ').expect("type and name");
        let (unit, decl) = match ty {
            "u8" => (1, decl),
            "__be16" => (2, decl),
            "__be32" => (4, decl),
            "__be64" => (8, decl),
            // `struct ib_mad_hdr mad_hdr`: a nested struct of this header set.
            "struct" => {
                let (inner, decl) = decl.split_once(' ').expect("struct type and name");
                let m = c_struct(text.as_str(), inner);
                (m.last().map_or(0, |l| l.1 + l.2), decl)
            }
            other => panic!("{name}: unexpected member type {other}"),
        };
        let (mname, count) = match decl.split_once('[') {
            Some((n, d)) => {
                let d = d.trim_end_matches(']');
                let n_el = d.parse::<usize>().unwrap_or_else(|_| {
                    defines(&text)
                        .get(d)
                        .copied()
                        .unwrap_or_else(|| panic!("{name}: array size {d}"))
                        as usize
                });
                (n.to_string(), n_el)
            }
            None => (decl.to_string(), 1),
        };
        out.push((mname, off, unit * count));
        off += unit * count;
    }
    out
}

/// `#define NAME value` (plain or `cpu_to_be16(value)`).
fn defines(text: &str) -> HashMap<String, u64> {
    let mut m = HashMap::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("#define ") else {
            continue;
        };
        let Some((name, val)) = rest.split_once(char::is_whitespace) else {
            continue;
        };
        let val = val
            .trim()
            .trim_start_matches("cpu_to_be16(")
            .trim_start_matches("cpu_to_be32(")
            .trim_end_matches(')');
        let one = |s: &str| {
            let s = s.trim();
            match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => s.parse::<u64>().ok(),
            }
        };
        // Plain numbers and `a << b`.
        let v = match val.split_once("<<") {
            Some((a, b)) => one(a)
                .zip(one(b))
                .and_then(|(a, b)| a.checked_shl(b as u32)),
            None => one(val),
        };
        if let Some(v) = v {
            m.insert(name.to_string(), v);
        }
    }
    m
}

/// `NAME = value,` enumerators with `prefix`.
fn enum_values(text: &str, prefix: &str) -> HashMap<String, u64> {
    let mut m = HashMap::new();
    for line in strip_comments(text).lines() {
        let Some(rest) = line.trim().strip_prefix(prefix) else {
            continue;
        };
        let Some((name, val)) = rest.split_once('=') else {
            continue;
        };
        let val = val.trim().trim_end_matches(',').trim();
        let v = match val.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => val.parse().ok(),
        };
        if let Some(v) = v {
            m.insert(name.trim().to_string(), v);
        }
    }
    m
}

fn headers() -> String {
    let mut t = read("rdma/ib_mad.h");
    t.push_str(&read("rdma/ib_smi.h"));
    t.push_str(&read("rdma/ib_pma.h"));
    t
}

#[test]
fn ibta_tables_match_ib_headers() {
    let text = headers();
    let defs = defines(&text);
    let data_bytes = *defs.get("IB_SMP_DATA_SIZE").expect("IB_SMP_DATA_SIZE") as usize;
    assert_eq!(data_bytes, 64);
    let mut errors = vec![];
    let mut checked = 0;
    for s in ifc::mad::IBTA_STRUCTS {
        // No two fields overlap.
        let mut spans: Vec<(u32, u32, &str)> = s
            .fields
            .iter()
            .map(|f| (f.bit_off, f.bit_off + f.bits, f.name))
            .collect();
        spans.sort();
        for w in spans.windows(2) {
            if w[0].1 > w[1].0 {
                errors.push(format!("{}: {} overlaps {}", s.name, w[0].2, w[1].2));
            }
        }
        if s.name.starts_with("ibta:") {
            if s.bytes() != data_bytes {
                errors.push(format!(
                    "{}: {} bytes, SMP data is {data_bytes}",
                    s.name,
                    s.bytes()
                ));
            }
            checked += s.fields.len();
            continue;
        }
        let members = c_struct(&text, s.name);
        let c_size = members.last().map_or(0, |m| m.1 + m.2);
        if s.name == "ib_port_info" {
            // IBTA PortInfo is 64 bytes; the kernel's struct stops at byte 60.
            if c_size != 60 || s.bytes() != data_bytes {
                errors.push(format!("ib_port_info: C {c_size} bytes, ifc {}", s.bytes()));
            }
        } else if c_size != s.bytes() {
            errors.push(format!(
                "{}: {c_size} bytes in header, {} in ifc",
                s.name,
                s.bytes()
            ));
        }
        for f in s.fields {
            checked += 1;
            let (lo, hi) = (f.bit_off as usize, (f.bit_off + f.bits) as usize);
            if f.name.starts_with("ibta:") {
                if lo < c_size * 8 {
                    errors.push(format!("{}.{}: inside the C struct", s.name, f.name));
                }
                continue;
            }
            let (member, part) = match f.name.split_once(':') {
                Some((m, p)) => (m, Some(p)),
                None => (f.name, None),
            };
            let Some((_, off, size)) = members.iter().find(|m| m.0 == member) else {
                errors.push(format!("{}.{}: no member {member}", s.name, f.name));
                continue;
            };
            let (m_lo, m_hi) = (off * 8, (off + size) * 8);
            let ok = match part {
                None => lo == m_lo && hi == m_hi,
                Some(_) => lo >= m_lo && hi <= m_hi && hi - lo < m_hi - m_lo,
            };
            if !ok {
                errors.push(format!(
                    "{}.{}: ifc bits {lo:#x}..{hi:#x}, header member bits {m_lo:#x}..{m_hi:#x}",
                    s.name, f.name
                ));
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(checked > 80, "only {checked} fields checked");
}

#[test]
fn smp_constants_match_ib_headers() {
    use ifc::mad::{mad_status, method, mgmt_class, smp_attr};
    use ifc::pma::{pma_attr, pma_cap};
    let text = headers();
    let d = defines(&text);
    let get = |n: &str| *d.get(n).unwrap_or_else(|| panic!("{n} not in header"));
    for (n, v) in [
        ("IB_SMP_ATTR_NODE_DESC", smp_attr::NODE_DESC),
        ("IB_SMP_ATTR_NODE_INFO", smp_attr::NODE_INFO),
        ("IB_SMP_ATTR_GUID_INFO", smp_attr::GUID_INFO),
        ("IB_SMP_ATTR_PORT_INFO", smp_attr::PORT_INFO),
        ("IB_SMP_ATTR_PKEY_TABLE", smp_attr::PKEY_TABLE),
        ("IB_SMP_ATTR_SL_TO_VL_TABLE", smp_attr::SL_TO_VL_TABLE),
        ("IB_SMP_ATTR_VL_ARB_TABLE", smp_attr::VL_ARB_TABLE),
        ("IB_SMP_ATTR_SM_INFO", smp_attr::SM_INFO),
        ("IB_SMP_DIRECTION", mad_status::SMP_DIRECTION),
        ("IB_MGMT_MAD_STATUS_SUCCESS", mad_status::SUCCESS),
        ("IB_MGMT_MAD_STATUS_BAD_VERSION", mad_status::BAD_VERSION),
        (
            "IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD",
            mad_status::UNSUPPORTED_METHOD,
        ),
        (
            "IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB",
            mad_status::UNSUPPORTED_METHOD_ATTRIB,
        ),
        (
            "IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE",
            mad_status::INVALID_ATTRIB_VALUE,
        ),
    ] {
        assert_eq!(get(n), u64::from(v), "{n}");
    }
    for (n, v) in [
        ("IB_MGMT_BASE_VERSION", ifc::mad::BASE_VERSION),
        ("IB_MGMT_CLASS_SUBN_LID_ROUTED", mgmt_class::SUBN_LID_ROUTED),
        (
            "IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE",
            mgmt_class::SUBN_DIRECTED_ROUTE,
        ),
        ("IB_MGMT_CLASS_PERF_MGMT", mgmt_class::PERF_MGMT),
        ("IB_MGMT_CLASS_CONG_MGMT", mgmt_class::CONG_MGMT),
        ("IB_MGMT_METHOD_GET", method::GET),
        ("IB_MGMT_METHOD_SET", method::SET),
        ("IB_MGMT_METHOD_TRAP", method::TRAP),
        ("IB_MGMT_METHOD_TRAP_REPRESS", method::TRAP_REPRESS),
        ("IB_MGMT_METHOD_RESP", method::RESP),
        ("IB_MGMT_METHOD_GET_RESP", method::GET_RESP),
    ] {
        assert_eq!(get(n), u64::from(v), "{n}");
    }
    for (n, v) in [
        ("IB_PMA_CLASS_PORT_INFO", pma_attr::CLASS_PORT_INFO),
        ("IB_PMA_PORT_COUNTERS", pma_attr::PORT_COUNTERS),
        ("IB_PMA_PORT_COUNTERS_EXT", pma_attr::PORT_COUNTERS_EXT),
        ("IB_PMA_CLASS_CAP_EXT_WIDTH", pma_cap::EXT_WIDTH),
    ] {
        assert_eq!(get(n), u64::from(v), "{n}");
    }
    // `struct ib_smp` (checked member by member above) is one whole MAD.
    assert_eq!(ifc::mad::SMP.bytes(), ifc::mad::MAD_BYTES);
    let dev_h = read("linux/mlx5/device.h");
    let dd = defines(&dev_h);
    assert_eq!(
        dd.get("MLX5_ATTR_EXTENDED_PORT_INFO"),
        Some(&u64::from(smp_attr::EXTENDED_PORT_INFO))
    );
}

#[test]
fn sync_reset_values_match_mlx5_headers() {
    use ifc::eqe::general_sub as g;
    use ifc::regs::{mfrl, reg_id};
    let drv = enum_values(&read("linux/mlx5/driver.h"), "MLX5_REG_");
    assert_eq!(drv.get("MFRL"), Some(&u64::from(reg_id::MFRL)));
    assert_eq!(drv.get("MCAM"), Some(&u64::from(reg_id::MCAM)));
    let dev_h = read("linux/mlx5/device.h");
    let sub = enum_values(&dev_h, "MLX5_GENERAL_SUBTYPE_");
    assert_eq!(
        sub.get("FW_LIVE_PATCH_EVENT"),
        Some(&u64::from(g::FW_LIVE_PATCH))
    );
    assert_eq!(
        sub.get("PCI_SYNC_FOR_FW_UPDATE_EVENT"),
        Some(&u64::from(g::PCI_SYNC_FOR_FW_UPDATE))
    );
    let st = enum_values(&dev_h, "MLX5_SYNC_RST_STATE_");
    for (n, v) in [
        ("RESET_REQUEST", g::RST_REQUEST),
        ("RESET_NOW", g::RST_NOW),
        ("RESET_ABORT", g::RST_ABORT),
        ("RESET_UNLOAD", g::RST_UNLOAD),
    ] {
        assert_eq!(st.get(n), Some(&u64::from(v)), "MLX5_SYNC_RST_STATE_{n}");
    }
    let ifc_h = read("linux/mlx5/mlx5_ifc.h");
    let m = enum_values(&ifc_h, "MLX5_MFRL_REG_");
    for (n, v) in [
        ("PCI_RESET_METHOD_LINK_TOGGLE", mfrl::METHOD_LINK_TOGGLE),
        ("PCI_RESET_METHOD_HOT_RESET", mfrl::METHOD_HOT_RESET),
        ("RESET_STATE_IDLE", mfrl::STATE_IDLE),
        ("RESET_STATE_IN_NEGOTIATION", mfrl::STATE_IN_NEGOTIATION),
        (
            "RESET_STATE_RESET_IN_PROGRESS",
            mfrl::STATE_RESET_IN_PROGRESS,
        ),
        ("RESET_STATE_NEG_TIMEOUT", mfrl::STATE_NEG_TIMEOUT),
        ("RESET_STATE_NACK", mfrl::STATE_NACK),
        ("RESET_STATE_UNLOAD_TIMEOUT", mfrl::STATE_UNLOAD_TIMEOUT),
    ] {
        assert_eq!(m.get(n), Some(&u64::from(v)), "MLX5_MFRL_REG_{n}");
    }
}

#[test]
fn port_registers_and_events_match_mlx5_headers() {
    use ifc::eqe::port_change_sub as sub;
    use ifc::regs::reg_id;
    let drv = enum_values(&read("linux/mlx5/driver.h"), "MLX5_REG_");
    for (n, v) in [
        ("PCAP", reg_id::PCAP),
        ("PMTU", reg_id::PMTU),
        ("PTYS", reg_id::PTYS),
        ("PAOS", reg_id::PAOS),
        ("PVLC", reg_id::PVLC),
        ("NODE_DESC", reg_id::NODE_DESC),
    ] {
        assert_eq!(drv.get(n), Some(&u64::from(v)), "MLX5_REG_{n}");
    }
    let dev = enum_values(&read("linux/mlx5/device.h"), "MLX5_PORT_CHANGE_SUBTYPE_");
    for (n, v) in [
        ("DOWN", sub::DOWN),
        ("ACTIVE", sub::ACTIVE),
        ("INITIALIZED", sub::INITIALIZED),
        ("LID", sub::LID),
        ("PKEY", sub::PKEY),
        ("GUID", sub::GUID),
        ("CLIENT_REREG", sub::CLIENT_REREG),
    ] {
        assert_eq!(
            dev.get(n),
            Some(&u64::from(v)),
            "MLX5_PORT_CHANGE_SUBTYPE_{n}"
        );
    }
    let ifc_h = read("linux/mlx5/mlx5_ifc.h");
    use ifc::vport::vport_sel;
    for (n, v) in [
        ("PORT_GUID", vport_sel::PORT_GUID),
        ("NODE_GUID", vport_sel::NODE_GUID),
        ("STATE_POLICY", vport_sel::STATE_POLICY),
    ] {
        // The enumerators are written `1 << n`.
        let line = ifc_h
            .lines()
            .find(|l| l.trim().starts_with(&format!("MLX5_HCA_VPORT_SEL_{n}")))
            .expect("enumerator line");
        let shift: u32 = line
            .split("<<")
            .nth(1)
            .and_then(|x| x.trim().trim_end_matches(',').parse().ok())
            .expect("1 << n");
        assert_eq!(1u32 << shift, v, "MLX5_HCA_VPORT_SEL_{n}");
    }
}
