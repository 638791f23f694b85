//! The CQE structures of `ifc/wqe.rs` against the kernel's `include/linux/mlx5/device.h`
//! (`struct mlx5_cqe64`, `struct mlx5_err_cqe`) member by member in declaration order,
//! each member's size from its declaration (arrays, `__be16`/`__be32`, bitfields packed
//! into their unit, a union as large as its largest member), so a reordered or resized
//! member fails; and the CQE opcodes and syndromes against `cq.h` / `mlx5_ifc.h`.

use mlx5_emu::ifc::wqe::{vals, Cqe64, ErrCqe};
use std::collections::HashMap;
use std::mem::{offset_of, size_of};
use std::path::PathBuf;

#[path = "../../tests/support/kernel_src.rs"]
mod kernel_src;

fn header(env: &str, rel: &str) -> String {
    let p: PathBuf = kernel_src::kernel_file(env, rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Index of the brace closing the one at `open`.
fn closing(text: &str, open: usize) -> usize {
    let mut depth = 0;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return open + i;
                }
            }
            _ => {}
        }
    }
    panic!("unclosed brace at {open}")
}

/// The body of `struct name { ... };`, comments removed.
fn body(text: &str, name: &str) -> String {
    let start = text
        .find(&format!("struct {name} {{"))
        .unwrap_or_else(|| panic!("struct {name} not found"));
    let open = start + text[start..].find('{').unwrap();
    let mut b = &text[open + 1..closing(text, open)];
    let mut out = String::new();
    while let Some(c) = b.find("/*") {
        out.push_str(&b[..c]);
        let end = b[c..].find("*/").expect("unclosed comment");
        b = &b[c + end + 2..];
    }
    out.push_str(b);
    out
}

fn unit(ty: &str) -> usize {
    match ty {
        "u8" => 1,
        "__be16" | "u16" => 2,
        "__be32" | "u32" => 4,
        "__be64" | "u64" => 8,
        t => panic!("type {t}"),
    }
}

/// (name, bytes) of the top-level members of a struct body. A nested union or struct
/// is one member named after its declarator (empty when anonymous); consecutive
/// bitfields share their unit.
fn members(body: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut rest = body;
    let mut bits = 0usize;
    let flush = |out: &mut Vec<(String, usize)>, bits: &mut usize| {
        if *bits > 0 {
            out.push(("<bitfields>".to_string(), bits.div_ceil(8)));
            *bits = 0;
        }
    };
    while let Some(stmt_end) = rest.find(';') {
        let stmt = rest[..stmt_end].trim();
        if stmt.starts_with("union") || stmt.starts_with("struct") {
            flush(&mut out, &mut bits);
            let open = rest.find('{').unwrap();
            let close = closing(rest, open);
            let after = close + rest[close..].find(';').unwrap();
            let inner = members(&rest[open + 1..close]).into_iter().map(|(_, n)| n);
            let size = if stmt.starts_with("union") {
                inner.max().unwrap_or(0)
            } else {
                inner.sum()
            };
            out.push((rest[close + 1..after].trim().to_string(), size));
            rest = &rest[after + 1..];
            continue;
        }
        let mut parts = stmt.split_whitespace();
        let ty = parts.next().unwrap();
        let decl = parts.next().unwrap();
        if let Some((_, w)) = decl.split_once(':') {
            bits += w.parse::<usize>().unwrap();
        } else {
            flush(&mut out, &mut bits);
            match decl.split_once('[') {
                Some((n, len)) => {
                    let len: usize = len.trim_end_matches(']').parse().unwrap();
                    out.push((n.to_string(), unit(ty) * len));
                }
                None => out.push((decl.to_string(), unit(ty))),
            }
        }
        rest = &rest[stmt_end + 1..];
    }
    flush(&mut out, &mut bits);
    out
}

fn check(header_members: &[(String, usize)], ours: &[(&str, usize, usize)], total: usize) {
    assert_eq!(header_members.len(), ours.len(), "{header_members:?}");
    let mut off = 0;
    for ((hn, hsz), (n, o, sz)) in header_members.iter().zip(ours) {
        assert_eq!((hn.as_str(), *hsz), (*n, *sz), "member at {off}");
        assert_eq!(*o, off, "{n}");
        off += hsz;
    }
    assert_eq!(off, total);
}

#[test]
fn cqe64_matches_device_h() {
    let text = header("MLX5_DEVICE_H", "include/linux/mlx5/device.h");
    let m = members(&body(&text, "mlx5_cqe64"));
    let ours = [
        (
            "tls_outer_l3_tunneled",
            offset_of!(Cqe64, tls_outer_l3_tunneled),
            1,
        ),
        ("rsvd0", offset_of!(Cqe64, rsvd0), 1),
        ("wqe_id", offset_of!(Cqe64, wqe_id), 2),
        ("", offset_of!(Cqe64, lro_shampo), 8),
        ("rss_hash_result", offset_of!(Cqe64, rss_hash_result), 4),
        ("rss_hash_type", offset_of!(Cqe64, rss_hash_type), 1),
        ("ml_path", offset_of!(Cqe64, ml_path), 1),
        ("rsvd20", offset_of!(Cqe64, rsvd20), 2),
        ("check_sum", offset_of!(Cqe64, check_sum), 2),
        ("slid", offset_of!(Cqe64, slid), 2),
        ("flags_rqpn", offset_of!(Cqe64, flags_rqpn), 4),
        ("hds_ip_ext", offset_of!(Cqe64, hds_ip_ext), 1),
        ("l4_l3_hdr_type", offset_of!(Cqe64, l4_l3_hdr_type), 1),
        ("vlan_info", offset_of!(Cqe64, vlan_info), 2),
        ("srqn", offset_of!(Cqe64, srqn), 4),
        ("", offset_of!(Cqe64, imm_inval_pkey), 4),
        ("rsvd40", offset_of!(Cqe64, rsvd40), 4),
        ("byte_cnt", offset_of!(Cqe64, byte_cnt), 4),
        ("timestamp_h", offset_of!(Cqe64, timestamp_h), 4),
        ("timestamp_l", offset_of!(Cqe64, timestamp_l), 4),
        ("sop_drop_qpn", offset_of!(Cqe64, sop_drop_qpn), 4),
        ("wqe_counter", offset_of!(Cqe64, wqe_counter), 2),
        ("", offset_of!(Cqe64, signature), 1),
        ("op_own", offset_of!(Cqe64, op_own), 1),
    ];
    check(&m, &ours, 64);
    assert_eq!(size_of::<Cqe64>(), 64);
}

#[test]
fn err_cqe_matches_device_h() {
    let text = header("MLX5_DEVICE_H", "include/linux/mlx5/device.h");
    let m = members(&body(&text, "mlx5_err_cqe"));
    let ours = [
        ("rsvd0", offset_of!(ErrCqe, rsvd0), 32),
        ("srqn", offset_of!(ErrCqe, srqn), 4),
        ("rsvd1", offset_of!(ErrCqe, rsvd1), 18),
        ("vendor_err_synd", offset_of!(ErrCqe, vendor_err_synd), 1),
        ("syndrome", offset_of!(ErrCqe, syndrome), 1),
        ("s_wqe_opcode_qpn", offset_of!(ErrCqe, s_wqe_opcode_qpn), 4),
        ("wqe_counter", offset_of!(ErrCqe, wqe_counter), 2),
        ("signature", offset_of!(ErrCqe, signature), 1),
        ("op_own", offset_of!(ErrCqe, op_own), 1),
    ];
    check(&m, &ours, 64);
}

/// `NAME = value,` entries of every enum in `text`.
fn enum_values(text: &str) -> HashMap<String, u64> {
    let mut out = HashMap::new();
    for line in text.lines() {
        let line = line.trim().trim_end_matches(',');
        let Some((name, val)) = line.split_once('=') else {
            continue;
        };
        let val = val.trim();
        let parsed = if let Some(h) = val.strip_prefix("0x") {
            u64::from_str_radix(h, 16).ok()
        } else {
            val.parse().ok()
        };
        if let Some(v) = parsed {
            out.insert(name.trim().to_string(), v);
        }
    }
    out
}

#[test]
fn cqe_opcodes_and_syndromes_match_cq_h() {
    let cq = enum_values(&header("MLX5_CQ_H", "include/linux/mlx5/cq.h"));
    let ifc = enum_values(&header("MLX5_IFC_H", "include/linux/mlx5/mlx5_ifc.h"));
    for (name, v) in [
        ("MLX5_CQE_OWNER_MASK", vals::CQE_OWNER_MASK),
        ("MLX5_CQE_REQ", vals::CQE_REQ),
        ("MLX5_CQE_RESP_WR_IMM", vals::CQE_RESP_WR_IMM),
        ("MLX5_CQE_RESP_SEND", vals::CQE_RESP_SEND),
        ("MLX5_CQE_RESP_SEND_IMM", vals::CQE_RESP_SEND_IMM),
        ("MLX5_CQE_RESP_SEND_INV", vals::CQE_RESP_SEND_INV),
        ("MLX5_CQE_RESIZE_CQ", vals::CQE_RESIZE_CQ),
        ("MLX5_CQE_SIG_ERR", vals::CQE_SIG_ERR),
        ("MLX5_CQE_REQ_ERR", vals::CQE_REQ_ERR),
        ("MLX5_CQE_RESP_ERR", vals::CQE_RESP_ERR),
        ("MLX5_CQE_INVALID", vals::CQE_INVALID),
        (
            "MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR",
            vals::SYNDROME_LOCAL_LENGTH_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR",
            vals::SYNDROME_LOCAL_QP_OP_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_LOCAL_PROT_ERR",
            vals::SYNDROME_LOCAL_PROT_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_WR_FLUSH_ERR",
            vals::SYNDROME_WR_FLUSH_ERR,
        ),
        ("MLX5_CQE_SYNDROME_MW_BIND_ERR", vals::SYNDROME_MW_BIND_ERR),
        (
            "MLX5_CQE_SYNDROME_BAD_RESP_ERR",
            vals::SYNDROME_BAD_RESP_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR",
            vals::SYNDROME_LOCAL_ACCESS_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR",
            vals::SYNDROME_REMOTE_INVAL_REQ_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR",
            vals::SYNDROME_REMOTE_ACCESS_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_REMOTE_OP_ERR",
            vals::SYNDROME_REMOTE_OP_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR",
            vals::SYNDROME_TRANSPORT_RETRY_EXC_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR",
            vals::SYNDROME_RNR_RETRY_EXC_ERR,
        ),
        (
            "MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR",
            vals::SYNDROME_REMOTE_ABORTED_ERR,
        ),
    ] {
        assert_eq!(cq.get(name), Some(&u64::from(v)), "{name}");
    }
    for (name, v) in [
        (
            "MLX5_CQ_ERROR_SYNDROME_CQ_OVERRUN",
            vals::CQ_ERROR_SYNDROME_CQ_OVERRUN,
        ),
        (
            "MLX5_CQ_ERROR_SYNDROME_CQ_ACCESS_VIOLATION_ERROR",
            vals::CQ_ERROR_SYNDROME_CQ_ACCESS_VIOLATION,
        ),
    ] {
        assert_eq!(ifc.get(name), Some(&u64::from(v)), "{name}");
    }
}
