//! Checks every field declared in `ifc/` against `mlx5_ifc.h` of the test kernel,
//! and the plain C layouts (`device.h`) against the offsets of the facts sheet.
//!
//! The header is found through `MLX5_IFC_H`, else under
//! `~/.cache/mlx5-rs/kernel/src-*/include/linux/mlx5/mlx5_ifc.h`. A missing header is
//! a failure, not a skip.

use mlx5_emu::ifc;
use std::collections::HashMap;
use std::path::PathBuf;

/// One member of a header structure.
#[derive(Clone, Debug)]
enum Kind {
    /// `u8 name[a][b]...`: total bits.
    Bits(u64),
    /// `struct|union mlx5_ifc_X_bits name[n]`.
    Named(String, u64),
    /// Anonymous inline aggregate.
    Inline(Box<Aggregate>),
}

#[derive(Clone, Debug)]
struct Member {
    name: String,
    kind: Kind,
}

#[derive(Clone, Debug)]
struct Aggregate {
    is_union: bool,
    members: Vec<Member>,
}

fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            i += s[i..].find("*/").map_or(b.len() - i, |e| e + 2);
        } else if b[i..].starts_with(b"//") {
            i += s[i..].find('\n').unwrap_or(b.len() - i);
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// Array dimension; empty (flexible array) and macro-sized dimensions count as 0.
fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    let v = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    };
    Some(v.unwrap_or(0))
}

/// Splits `body` into top-level statements (handling nested braces).
fn statements(body: &str) -> Vec<String> {
    let mut out = vec![];
    let mut depth = 0;
    let mut cur = String::new();
    for c in body.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ';' && depth == 0 {
            out.push(std::mem::take(&mut cur).trim().to_string());
        } else {
            cur.push(c);
        }
    }
    out.into_iter().filter(|s| !s.is_empty()).collect()
}

fn dims(s: &str) -> Option<(String, Vec<u64>)> {
    let name_end = s.find('[').unwrap_or(s.len());
    let name = s[..name_end].trim().to_string();
    let mut v = vec![];
    let mut rest = &s[name_end..];
    while let Some(st) = rest.find('[') {
        let en = rest.find(']')?;
        v.push(parse_num(&rest[st + 1..en])?);
        rest = &rest[en + 1..];
    }
    Some((name, v))
}

fn parse_aggregate(is_union: bool, body: &str) -> Aggregate {
    let mut members = vec![];
    for st in statements(body) {
        let st = st.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(brace) = st.find('{') {
            // Anonymous inline union/struct: "union { ... } name" or without a name.
            let close = st.rfind('}').unwrap_or(st.len());
            let inner = parse_aggregate(st.starts_with("union"), &st[brace + 1..close]);
            let name = st[close + 1..].trim().to_string();
            members.push(Member {
                name,
                kind: Kind::Inline(Box::new(inner)),
            });
        } else if let Some(rest) = st.strip_prefix("u8 ") {
            let Some((name, d)) = dims(rest) else {
                continue;
            };
            members.push(Member {
                name,
                kind: Kind::Bits(d.iter().product()),
            });
        } else if st.starts_with("struct mlx5_ifc_") || st.starts_with("union mlx5_ifc_") {
            let mut parts = st.splitn(3, ' ');
            let _ = parts.next();
            let ty = parts.next().unwrap_or("");
            let ty = ty
                .trim_start_matches("mlx5_ifc_")
                .trim_end_matches("_bits")
                .to_string();
            let rest = parts.next().unwrap_or("");
            // Arrays sized by a macro count as unknown (0) — never used by our tables.
            let (name, d) =
                dims(rest).unwrap_or((rest.split('[').next().unwrap_or("").to_string(), vec![0]));
            members.push(Member {
                name,
                kind: Kind::Named(
                    ty,
                    d.iter()
                        .product::<u64>()
                        .max(if d.is_empty() { 1 } else { 0 }),
                ),
            });
        }
    }
    Aggregate { is_union, members }
}

struct Header {
    types: HashMap<String, Aggregate>,
}

impl Header {
    fn parse(text: &str) -> Self {
        let text = strip_comments(text);
        let mut types = HashMap::new();
        let mut i = 0;
        while let Some(p) = text[i..].find("mlx5_ifc_") {
            let at = i + p;
            i = at + 9;
            let before = text[..at].trim_end();
            let is_union = before.ends_with("union");
            if !(before.ends_with("struct") || is_union) {
                continue;
            }
            let after = &text[at..];
            let Some(name_end) = after.find(|c: char| !(c.is_alphanumeric() || c == '_')) else {
                continue;
            };
            let full = &after[..name_end];
            let rest = after[name_end..].trim_start();
            if !rest.starts_with('{') || !full.ends_with("_bits") {
                continue;
            }
            let body_start = at + name_end + (after[name_end..].len() - rest.len()) + 1;
            let mut depth = 1;
            let mut end = body_start;
            for (k, c) in text[body_start..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = body_start + k;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let name = full
                .trim_start_matches("mlx5_ifc_")
                .trim_end_matches("_bits")
                .to_string();
            types.insert(name, parse_aggregate(is_union, &text[body_start..end]));
            i = end;
        }
        Header { types }
    }

    fn size_of_kind(&self, k: &Kind) -> Option<u64> {
        match k {
            Kind::Bits(b) => Some(*b),
            Kind::Named(t, n) => Some(self.size(t)? * n),
            Kind::Inline(a) => self.size_agg(a),
        }
    }

    fn size_agg(&self, a: &Aggregate) -> Option<u64> {
        let mut total = 0;
        for m in &a.members {
            let s = self.size_of_kind(&m.kind)?;
            total = if a.is_union { total.max(s) } else { total + s };
        }
        Some(total)
    }

    fn size(&self, name: &str) -> Option<u64> {
        self.size_agg(self.types.get(name)?)
    }

    /// (bit offset, bit width) of a dotted member path in aggregate `a`.
    fn find_in(&self, a: &Aggregate, path: &[&str]) -> Option<(u64, u64)> {
        let mut off = 0;
        for m in &a.members {
            let sz = self.size_of_kind(&m.kind)?;
            if m.name.is_empty() {
                // Anonymous inline aggregate: its members are visible directly.
                if let Kind::Inline(inner) = &m.kind {
                    if let Some((o, w)) = self.find_in(inner, path) {
                        return Some((off + o, w));
                    }
                }
            } else if m.name == path[0] {
                if path.len() == 1 {
                    return Some((off, sz));
                }
                let inner = match &m.kind {
                    Kind::Named(t, _) => self.types.get(t)?.clone(),
                    Kind::Inline(a) => (**a).clone(),
                    Kind::Bits(_) => return None,
                };
                let (o, w) = self.find_in(&inner, &path[1..])?;
                return Some((off + o, w));
            }
            if !a.is_union {
                off += sz;
            }
        }
        None
    }
}

#[path = "../../tests/support/kernel_src.rs"]
mod kernel_src;

fn header_path() -> PathBuf {
    kernel_src::kernel_file("MLX5_IFC_H", "include/linux/mlx5/mlx5_ifc.h")
}

#[test]
fn ifc_tables_match_mlx5_ifc_h() {
    let path = header_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "mlx5_ifc.h not found at {} ({e}); set MLX5_IFC_H to the test kernel's \
             include/linux/mlx5/mlx5_ifc.h",
            path.display()
        )
    });
    // Some nested types (e.g. fpga_cap) live in sibling mlx5_ifc_*.h headers.
    let mut all = text.clone();
    if let Some(dir) = path.parent() {
        let mut extra: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        extra.sort();
        for p in extra {
            let n = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if n.starts_with("mlx5_ifc_") && n.ends_with(".h") {
                all.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    let h = Header::parse(&all);
    assert!(
        h.types.len() > 500,
        "parsed only {} structures from {}",
        h.types.len(),
        path.display()
    );
    let mut errors = vec![];
    let mut checked = 0;
    for s in ifc::ALL_STRUCTS {
        let Some(agg) = h.types.get(s.name) else {
            errors.push(format!("{}: no struct mlx5_ifc_{}_bits", s.name, s.name));
            continue;
        };
        match h.size_agg(agg) {
            Some(b) if b == u64::from(s.bits) => {}
            other => errors.push(format!(
                "{}: size {:?} bits in header, {:#x} in ifc",
                s.name, other, s.bits
            )),
        }
        for f in s.fields {
            if ifc::DEVICE_H_ONLY.contains(&(s.name, f.name)) {
                // Reserved in mlx5_ifc.h; checked against device.h's layout below.
                continue;
            }
            checked += 1;
            let path: Vec<&str> = f.name.split('.').collect();
            match h.find_in(agg, &path) {
                Some((o, w)) if o == u64::from(f.bit_off) && w == u64::from(f.bits) => {}
                Some((o, w)) => errors.push(format!(
                    "{}.{}: header offset {o:#x} width {w:#x}, ifc offset {:#x} width {:#x}",
                    s.name, f.name, f.bit_off, f.bits
                )),
                None => errors.push(format!("{}.{}: not in header", s.name, f.name)),
            }
        }
    }
    assert!(
        errors.is_empty(),
        "{} of {checked} fields disagree with {}:\n{}",
        errors.len(),
        path.display(),
        errors.join("\n")
    );
    assert!(checked > 400, "only {checked} fields checked");
}

#[test]
fn device_h_layouts_match_facts() {
    use ifc::cmd_layout::{block_off, entry_off, CmdBlock, CmdLayout};
    use ifc::eqe::{Eqe, EqeCmd, EqeComp, EqeCqErr, EqePageReq, EqePort, EqeQpSrq};
    use std::mem::{offset_of, size_of};
    assert_eq!(size_of::<CmdLayout>(), 64);
    assert_eq!(offset_of!(CmdLayout, type_), entry_off::TYPE);
    assert_eq!(offset_of!(CmdLayout, inlen), entry_off::INLEN);
    assert_eq!(offset_of!(CmdLayout, in_ptr), entry_off::IN_PTR);
    assert_eq!(offset_of!(CmdLayout, in_), entry_off::IN);
    assert_eq!(offset_of!(CmdLayout, out), entry_off::OUT);
    assert_eq!(offset_of!(CmdLayout, out_ptr), entry_off::OUT_PTR);
    assert_eq!(offset_of!(CmdLayout, outlen), entry_off::OUTLEN);
    assert_eq!(offset_of!(CmdLayout, token), entry_off::TOKEN);
    assert_eq!(offset_of!(CmdLayout, sig), entry_off::SIG);
    assert_eq!(offset_of!(CmdLayout, status_own), entry_off::STATUS_OWN);
    // Facts sheet §2.2 / §2.3 / §4.2.
    assert_eq!(
        (
            entry_off::INLEN,
            entry_off::IN_PTR,
            entry_off::IN,
            entry_off::OUT
        ),
        (0x04, 0x08, 0x10, 0x20)
    );
    assert_eq!(
        (
            entry_off::OUT_PTR,
            entry_off::OUTLEN,
            entry_off::TOKEN,
            entry_off::SIG,
            entry_off::STATUS_OWN
        ),
        (0x30, 0x38, 0x3c, 0x3d, 0x3f)
    );
    assert_eq!(size_of::<CmdBlock>(), 576);
    assert_eq!(offset_of!(CmdBlock, next), block_off::NEXT);
    assert_eq!(offset_of!(CmdBlock, block_num), block_off::BLOCK_NUM);
    assert_eq!(offset_of!(CmdBlock, token), block_off::TOKEN);
    assert_eq!(offset_of!(CmdBlock, ctrl_sig), block_off::CTRL_SIG);
    assert_eq!(offset_of!(CmdBlock, sig), block_off::SIG);
    assert_eq!(
        (
            block_off::NEXT,
            block_off::BLOCK_NUM,
            block_off::TOKEN,
            block_off::CTRL_SIG,
            block_off::SIG
        ),
        (0x230, 0x238, 0x23d, 0x23e, 0x23f)
    );
    assert_eq!(size_of::<Eqe>(), 64);
    // device.h `struct mlx5_eqe` and the `union ev_data` members we read.
    assert_eq!(
        (
            offset_of!(Eqe, type_),
            offset_of!(Eqe, sub_type),
            offset_of!(Eqe, data),
            offset_of!(Eqe, signature),
            offset_of!(Eqe, owner)
        ),
        (0x01, 0x03, 0x20, 0x3e, 0x3f)
    );
    assert_eq!(offset_of!(EqeCmd, vector), 0);
    assert_eq!(
        (
            offset_of!(EqePageReq, ec_function),
            offset_of!(EqePageReq, func_id),
            offset_of!(EqePageReq, num_pages)
        ),
        (0, 2, 4)
    );
    assert_eq!(offset_of!(EqeComp, cqn), 0x18);
    assert_eq!(offset_of!(EqePort, port), 8);
    // `struct mlx5_eqe_cq_err`: cqn, reserved1[7], syndrome.
    assert_eq!(
        (offset_of!(EqeCqErr, cqn), offset_of!(EqeCqErr, syndrome)),
        (0, 11)
    );
    assert_eq!(size_of::<EqeCqErr>(), 28);
    // `struct mlx5_eqe_qp_srq`: reserved1[5] (dwords), type, reserved2[3], qp_srq_n;
    // `mlx5_ifc_qp_events_bits`: type at bit 0xa0, qpn_rqn_sqn at 0xc0 (+8 reserved).
    assert_eq!(
        (offset_of!(EqeQpSrq, type_), offset_of!(EqeQpSrq, qp_srq_n)),
        (0xa0 / 8, 0xc0 / 8)
    );
    assert_eq!(size_of::<EqeQpSrq>(), 28);
    // Init segment register offsets (facts §1.1) against the ifc table.
    use ifc::init_seg::{self as is, initial_seg as t};
    assert_eq!(t::CMDQ_PHY_ADDR_63_32.raw().byte_off(), is::CMDQ_ADDR_H);
    assert_eq!(t::CMDQ_PHY_ADDR_31_12.raw().byte_off(), is::CMDQ_ADDR_L_SZ);
    assert_eq!(t::COMMAND_DOORBELL_VECTOR.raw().byte_off(), is::CMD_DBELL);
    assert_eq!(t::INITIALIZING.raw().byte_off(), is::INITIALIZING);
    assert_eq!(t::HEALTH_BUFFER.raw().byte_off(), is::HEALTH_BUFFER_OFF);
    assert_eq!(t::HEALTH_COUNTER.raw().byte_off() & !3, is::HEALTH_COUNTER);
    // device.h `struct health_buffer`: assert_var[6] at 0, assert_exit_ptr 0x20,
    // assert_callra 0x24, time 0x2c, fw_ver 0x30, hw_id 0x34, rfr_severity 0x38
    // (rfr bit 7, crr bit 6: upstream MLX5_RFR_BIT_OFFSET / MLX5_CRR_BIT_OFFSET),
    // irisc_index 0x3c, synd 0x3d, ext_synd 0x3e.
    use ifc::init_seg::health_buffer as hb;
    let at = |f: ifc::field::Field| (f.byte_off(), f.bit_off % 8, f.bits);
    assert_eq!(at(hb::ASSERT_VAR.raw()), (0x00, 0, 6 * 32));
    assert_eq!(at(hb::ASSERT_EXISTPTR.raw()), (0x20, 0, 32));
    assert_eq!(at(hb::ASSERT_CALLRA.raw()), (0x24, 0, 32));
    assert_eq!(at(hb::TIME.raw()), (0x2c, 0, 32));
    assert_eq!(at(hb::FW_VERSION.raw()), (0x30, 0, 32));
    assert_eq!(at(hb::HW_ID.raw()), (0x34, 0, 32));
    assert_eq!(at(hb::RFR.raw()), (0x38, 0, 1));
    assert_eq!(at(hb::CRR.raw()), (0x38, 1, 1));
    assert_eq!(at(hb::IRISC_INDEX.raw()), (0x3c, 0, 8));
    assert_eq!(at(hb::SYND.raw()), (0x3d, 0, 8));
    assert_eq!(at(hb::EXT_SYND.raw()), (0x3e, 0, 16));
    for (s, f) in ifc::DEVICE_H_ONLY {
        assert!(
            ifc::ALL_STRUCTS
                .iter()
                .any(|t| t.name == *s && t.fields.iter().any(|x| x.name == *f)),
            "{s}.{f} listed but not declared"
        );
    }
}

/// `NAME = 0xVAL` pairs of an enum family (`prefix`) in a header text.
fn enum_values(text: &str, prefix: &str) -> HashMap<String, u64> {
    let mut m = HashMap::new();
    for line in text.lines() {
        let l = line.trim();
        let Some(rest) = l.strip_prefix(prefix) else {
            continue;
        };
        let mut it = rest.splitn(2, '=');
        let (Some(name), Some(val)) = (it.next(), it.next()) else {
            continue;
        };
        let val = val.trim().trim_end_matches(',');
        if let Some(v) = parse_num_strict(val) {
            m.insert(name.trim().to_string(), v);
        }
    }
    m
}

fn parse_num_strict(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

#[test]
fn opcodes_and_statuses_match_headers() {
    use ifc::opcodes::Opcode;
    use ifc::status::CmdStatus;
    let path = header_path();
    let ifc_h =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let dev_h = std::fs::read_to_string(path.with_file_name("device.h"))
        .expect("device.h next to mlx5_ifc.h");
    let ops = enum_values(&ifc_h, "MLX5_CMD_OP_");
    assert!(ops.len() > 100);
    for op in Opcode::ALL {
        let name = op.name().trim_start_matches('_');
        assert_eq!(
            ops.get(name),
            Some(&u64::from(*op as u16)),
            "MLX5_CMD_OP_{name}"
        );
    }
    let st = enum_values(&dev_h, "MLX5_CMD_STAT_");
    for s in CmdStatus::ALL {
        assert_eq!(
            st.get(s.name()),
            Some(&u64::from(*s as u8)),
            "MLX5_CMD_STAT_{}",
            s.name()
        );
    }
    let ev = enum_values(&dev_h, "MLX5_EVENT_TYPE_");
    use ifc::eqe::event_type as e;
    for (name, v) in [
        ("COMP", e::COMP),
        ("CMD", e::CMD),
        ("PAGE_REQUEST", e::PAGE_REQUEST),
        ("PORT_CHANGE", e::PORT_CHANGE),
        ("CQ_ERROR", e::CQ_ERROR),
        ("INTERNAL_ERROR", e::INTERNAL_ERROR),
        ("PAGE_FAULT", e::PAGE_FAULT),
        ("NIC_VPORT_CHANGE", e::NIC_VPORT_CHANGE),
        ("GENERAL_EVENT", e::GENERAL_EVENT),
        ("WQ_CATAS_ERROR", e::WQ_CATAS_ERROR),
    ] {
        assert_eq!(ev.get(name), Some(&u64::from(v)), "MLX5_EVENT_TYPE_{name}");
    }
}

/// CQE and send WQE control segment (`device.h` `mlx5_cqe64`, `mlx5_err_cqe`, `qp.h`
/// `mlx5_wqe_ctrl_seg`) against the facts sheet §9.7 / §9.8.
#[test]
fn cqe_and_wqe_layouts_match_facts() {
    use ifc::wqe::{Cqe64, ErrCqe, WqeCtrlSeg};
    use std::mem::{offset_of, size_of};
    assert_eq!(size_of::<Cqe64>(), 64);
    assert_eq!(
        (
            offset_of!(Cqe64, flags_rqpn),
            offset_of!(Cqe64, srqn),
            offset_of!(Cqe64, byte_cnt),
            offset_of!(Cqe64, timestamp_h),
            offset_of!(Cqe64, sop_drop_qpn),
            offset_of!(Cqe64, wqe_counter),
            offset_of!(Cqe64, signature),
            offset_of!(Cqe64, op_own)
        ),
        (0x18, 0x20, 0x2c, 0x30, 0x38, 0x3c, 0x3e, 0x3f)
    );
    assert_eq!(size_of::<ErrCqe>(), 64);
    assert_eq!(
        (
            offset_of!(ErrCqe, srqn),
            offset_of!(ErrCqe, vendor_err_synd),
            offset_of!(ErrCqe, syndrome),
            offset_of!(ErrCqe, s_wqe_opcode_qpn),
            offset_of!(ErrCqe, wqe_counter),
            offset_of!(ErrCqe, op_own)
        ),
        (0x20, 0x36, 0x37, 0x38, 0x3c, 0x3f)
    );
    assert_eq!(size_of::<WqeCtrlSeg>(), 16);
    assert_eq!(
        (
            offset_of!(WqeCtrlSeg, qpn_ds),
            offset_of!(WqeCtrlSeg, signature),
            offset_of!(WqeCtrlSeg, fm_ce_se),
            offset_of!(WqeCtrlSeg, imm)
        ),
        (0x4, 0x8, 0xb, 0xc)
    );
}

/// `1 << n` or a plain number (the forms of `qp.h`'s enums).
fn parse_enum_value(s: &str) -> Option<u64> {
    match s.split_once("<<") {
        Some((a, b)) => Some(parse_num_strict(a.trim())? << parse_num_strict(b.trim())?),
        None => parse_num_strict(s),
    }
}

/// `NAME = value` pairs of an enum family, values as [`parse_enum_value`] reads them.
fn enum_exprs(text: &str, prefix: &str) -> HashMap<String, u64> {
    let mut m = HashMap::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix(prefix) else {
            continue;
        };
        if let Some((name, val)) = rest.split_once('=') {
            if let Some(v) = parse_enum_value(val.trim().trim_end_matches(',')) {
                m.insert(name.trim().to_string(), v);
            }
        }
    }
    m
}

/// The QP states, service types, PM states and `opt_param_mask` bits of
/// `ifc/qp_state.rs` against `qp.h` / `mlx5_ifc.h`, and the address-path fields the
/// driver and the emulator place inside `qpc` (`F::within`) against the header's
/// `qpc.primary_address_path` / `secondary_address_path` (of type `ads`).
#[test]
fn qp_state_constants_and_nested_paths_match_headers() {
    use ifc::qp::{ads, qpc, ADS};
    use ifc::qp_state::{optpar, pm_state, st, state};
    let path = header_path();
    let ifc_h =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let qp_h =
        std::fs::read_to_string(path.with_file_name("qp.h")).expect("qp.h next to mlx5_ifc.h");
    let check = |m: &HashMap<String, u64>, fam: &str, pairs: &[(&str, u64)]| {
        assert!(!m.is_empty(), "no {fam}* in the headers");
        for (name, v) in pairs {
            assert_eq!(m.get(*name), Some(v), "{fam}{name}");
        }
    };
    let s = enum_exprs(&qp_h, "MLX5_QP_STATE_");
    check(
        &s,
        "MLX5_QP_STATE_",
        &[
            ("RST", state::RST.into()),
            ("INIT", state::INIT.into()),
            ("RTR", state::RTR.into()),
            ("RTS", state::RTS.into()),
            ("SQER", state::SQER.into()),
            ("SQD", state::SQD.into()),
            ("ERR", state::ERR.into()),
            ("SQ_DRAINING", state::SQ_DRAINING.into()),
        ],
    );
    let sts = [
        ("RC", st::RC),
        ("UC", st::UC),
        ("UD", st::UD),
        ("XRC", st::XRC),
        ("QP0", st::QP0),
        ("QP1", st::QP1),
        ("REG_UMR", st::REG_UMR),
    ]
    .map(|(n, v)| (n, u64::from(v)));
    check(&enum_exprs(&qp_h, "MLX5_QP_ST_"), "MLX5_QP_ST_", &sts);
    check(&enum_exprs(&ifc_h, "MLX5_QPC_ST_"), "MLX5_QPC_ST_", &sts);
    check(
        &enum_exprs(&qp_h, "MLX5_QP_PM_"),
        "MLX5_QP_PM_",
        &[
            ("ARMED", pm_state::ARMED.into()),
            ("REARM", pm_state::REARM.into()),
            ("MIGRATED", pm_state::MIGRATED.into()),
        ],
    );
    let o = [
        ("ALT_ADDR_PATH", optpar::ALT_ADDR_PATH),
        ("RRE", optpar::RRE),
        ("RAE", optpar::RAE),
        ("RWE", optpar::RWE),
        ("PKEY_INDEX", optpar::PKEY_INDEX),
        ("Q_KEY", optpar::Q_KEY),
        ("RNR_TIMEOUT", optpar::RNR_TIMEOUT),
        ("PRIMARY_ADDR_PATH", optpar::PRIMARY_ADDR_PATH),
        ("SRA_MAX", optpar::SRA_MAX),
        ("RRA_MAX", optpar::RRA_MAX),
        ("PM_STATE", optpar::PM_STATE),
        ("RETRY_COUNT", optpar::RETRY_COUNT),
        ("RNR_RETRY", optpar::RNR_RETRY),
        ("ACK_TIMEOUT", optpar::ACK_TIMEOUT),
        ("LAG_TX_AFF", optpar::LAG_TX_AFF),
        ("PRI_PORT", optpar::PRI_PORT),
        ("SRQN", optpar::SRQN),
        ("CQN_RCV", optpar::CQN_RCV),
        ("PP_INDEX", optpar::PP_INDEX),
        ("COUNTER_SET_ID", optpar::COUNTER_SET_ID),
    ]
    .map(|(n, v)| (n, u64::from(v)));
    check(&enum_exprs(&qp_h, "MLX5_QP_OPTPAR_"), "MLX5_QP_OPTPAR_", &o);

    // Every ads field, placed in each address path of qpc.
    let h = Header::parse(&ifc_h);
    let q = h.types.get("qpc").expect("struct mlx5_ifc_qpc_bits");
    let mut n = 0;
    for outer in [
        qpc::PRIMARY_ADDRESS_PATH.raw(),
        qpc::SECONDARY_ADDRESS_PATH.raw(),
    ] {
        assert_eq!(
            h.find_in(q, &[outer.name]).map(|x| x.1),
            Some(u64::from(ADS.bits))
        );
        for f in ADS.fields {
            let want = h.find_in(q, &[outer.name, f.name]);
            let ours = (u64::from(outer.bit_off + f.bit_off), u64::from(f.bits));
            assert_eq!(want, Some(ours), "qpc.{}.{}", outer.name, f.name);
            n += 1;
        }
    }
    assert!(n >= 50, "only {n} address-path fields checked");
    // `within` composes them the same way (the typed accessors the driver writes with).
    for (f, name, outer) in [
        (
            ads::PKEY_INDEX.within(qpc::PRIMARY_ADDRESS_PATH).raw(),
            "pkey_index",
            "primary_address_path",
        ),
        (
            ads::VHCA_PORT_NUM.within(qpc::SECONDARY_ADDRESS_PATH).raw(),
            "vhca_port_num",
            "secondary_address_path",
        ),
        (
            ads::SL.within(qpc::PRIMARY_ADDRESS_PATH).raw(),
            "sl",
            "primary_address_path",
        ),
    ] {
        let (o, w) = h.find_in(q, &[outer, name]).unwrap();
        assert_eq!(
            (u64::from(f.bit_off), u64::from(f.bits)),
            (o, w),
            "qpc.{outer}.{name}"
        );
        assert_eq!(f.prm, "qpc");
    }
}
