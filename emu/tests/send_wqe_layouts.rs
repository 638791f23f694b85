//! The send WQE segments of `ifc/wqe.rs` against the kernel's `include/linux/mlx5/qp.h`
//! (`struct mlx5_wqe_raddr_seg`, `mlx5_wqe_atomic_seg`, `mlx5_wqe_masked_atomic_seg`,
//! `mlx5_wqe_inline_seg`, `mlx5_wqe_datagram_seg`, `mlx5_wqe_xrc_seg`,
//! `mlx5_wqe_ctrl_seg`), member by member in declaration order, each member's size from
//! its declaration, and the send opcodes (`device.h`), fence, completion and solicited
//! values (`qp.h`) against the headers' enums by name (the CQE values are
//! emu/tests/cqe_layouts.rs's), so a reordered or resized member or a wrong value fails.

use mlx5_emu::ifc::av::Av;
use mlx5_emu::ifc::wqe::{
    opcode, vals, WqeAtomicSeg, WqeCtrlSeg, WqeDatagramSeg, WqeInlineSeg, WqeMaskedAtomicSeg,
    WqeRaddrSeg, WqeXrcSeg,
};
use std::mem::{offset_of, size_of};
use std::path::PathBuf;

#[path = "../../tests/support/kernel_src.rs"]
mod kernel_src;

fn header(env: &str, rel: &str) -> String {
    let p: PathBuf = kernel_src::kernel_file(env, rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn qp_h() -> String {
    header("MLX5_QP_H", "include/linux/mlx5/qp.h")
}

/// The body of `struct name { ... };` in `text`.
fn body<'a>(text: &'a str, name: &str) -> &'a str {
    let start = text
        .find(&format!("struct {name} {{"))
        .unwrap_or_else(|| panic!("struct {name} not found"));
    let rest = &text[start..];
    let open = rest.find('{').unwrap();
    let mut depth = 0;
    for (i, c) in rest[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &rest[open + 1..open + i];
                }
            }
            _ => {}
        }
    }
    panic!("struct {name} not closed")
}

/// (member name, bytes) of the top-level members of a struct body. A `struct_group`
/// is transparent (its members count inline, as in C); a union is one member as large
/// as its largest member, named after its declarator (empty when anonymous); a
/// flexible array (`x[]`) has no bytes; a member of type `struct mlx5_av` has the
/// size of [`Av`] (itself checked by srq_ah_layouts.rs).
fn members(body: &str) -> Vec<(String, usize)> {
    fn size_of_decl(ty: &str, decl: &str) -> (String, usize) {
        let unit = match ty {
            "u8" => 1,
            "__be16" | "u16" => 2,
            "__be32" | "u32" => 4,
            "__be64" | "u64" => 8,
            t => panic!("type {t}"),
        };
        match decl.split_once('[') {
            Some((n, len)) => {
                let len = len.trim_end_matches(']');
                let len: usize = if len.is_empty() {
                    0
                } else {
                    len.parse().unwrap()
                };
                (n.to_string(), unit * len)
            }
            None => (decl.to_string(), unit),
        }
    }
    let body = body
        .replace("struct_group(trailer,", "")
        .replace("); /* end of trailer group */", "");
    let mut out = Vec::new();
    let mut rest = body.as_str();
    while let Some(stmt_end) = rest.find(';') {
        let stmt = rest[..stmt_end].trim();
        if let Some(decl) = stmt.strip_prefix("struct mlx5_av") {
            out.push((decl.trim().to_string(), size_of::<Av>()));
            rest = &rest[stmt_end + 1..];
            continue;
        }
        if stmt.starts_with("union") {
            let open = rest.find('{').unwrap();
            let close = open + rest[open..].find('}').unwrap();
            let after = rest[close + 1..].find(';').unwrap() + close + 1;
            let size = members(&rest[open + 1..close])
                .into_iter()
                .map(|(_, n)| n)
                .max()
                .unwrap_or(0);
            out.push((rest[close + 1..after].trim().to_string(), size));
            rest = &rest[after + 1..];
            continue;
        }
        let mut parts = stmt.split_whitespace();
        let ty = parts.next().unwrap();
        let decl = parts.next().unwrap();
        out.push(size_of_decl(ty, decl));
        rest = &rest[stmt_end + 1..];
    }
    out
}

/// Compares a header struct with ours: (name, offset, size) in declaration order.
fn check(header_struct: &str, ours: &[(&str, usize, usize)], total: usize) {
    let text = qp_h();
    let m = members(body(&text, header_struct));
    assert_eq!(m.len(), ours.len(), "{header_struct}: {m:?}");
    let mut off = 0;
    for ((hn, hsz), (n, o, sz)) in m.iter().zip(ours) {
        assert_eq!(
            (hn.as_str(), *hsz),
            (*n, *sz),
            "{header_struct} member at {off}"
        );
        assert_eq!(*o, off, "{header_struct}.{n}");
        off += hsz;
    }
    assert_eq!(off, total, "{header_struct} size");
}

#[test]
fn ctrl_seg_matches_qp_h() {
    check(
        "mlx5_wqe_ctrl_seg",
        &[
            (
                "opmod_idx_opcode",
                offset_of!(WqeCtrlSeg, opmod_idx_opcode),
                4,
            ),
            ("qpn_ds", offset_of!(WqeCtrlSeg, qpn_ds), 4),
            ("signature", offset_of!(WqeCtrlSeg, signature), 1),
            ("rsvd", offset_of!(WqeCtrlSeg, rsvd), 2),
            ("fm_ce_se", offset_of!(WqeCtrlSeg, fm_ce_se), 1),
            ("", offset_of!(WqeCtrlSeg, imm), 4),
        ],
        size_of::<WqeCtrlSeg>(),
    );
}

#[test]
fn raddr_seg_matches_qp_h() {
    check(
        "mlx5_wqe_raddr_seg",
        &[
            ("raddr", offset_of!(WqeRaddrSeg, raddr), 8),
            ("rkey", offset_of!(WqeRaddrSeg, rkey), 4),
            ("reserved", offset_of!(WqeRaddrSeg, reserved), 4),
        ],
        size_of::<WqeRaddrSeg>(),
    );
}

#[test]
fn atomic_segs_match_qp_h() {
    check(
        "mlx5_wqe_atomic_seg",
        &[
            ("swap_add", offset_of!(WqeAtomicSeg, swap_add), 8),
            ("compare", offset_of!(WqeAtomicSeg, compare), 8),
        ],
        size_of::<WqeAtomicSeg>(),
    );
    check(
        "mlx5_wqe_masked_atomic_seg",
        &[
            ("swap_add", offset_of!(WqeMaskedAtomicSeg, swap_add), 8),
            ("compare", offset_of!(WqeMaskedAtomicSeg, compare), 8),
            (
                "swap_add_mask",
                offset_of!(WqeMaskedAtomicSeg, swap_add_mask),
                8,
            ),
            (
                "compare_mask",
                offset_of!(WqeMaskedAtomicSeg, compare_mask),
                8,
            ),
        ],
        size_of::<WqeMaskedAtomicSeg>(),
    );
}

#[test]
fn inline_datagram_xrc_segs_match_qp_h() {
    check(
        "mlx5_wqe_inline_seg",
        &[
            ("byte_count", offset_of!(WqeInlineSeg, byte_count), 4),
            ("data", size_of::<WqeInlineSeg>(), 0),
        ],
        size_of::<WqeInlineSeg>(),
    );
    check(
        "mlx5_wqe_datagram_seg",
        &[("av", offset_of!(WqeDatagramSeg, av), size_of::<Av>())],
        size_of::<WqeDatagramSeg>(),
    );
    check(
        "mlx5_wqe_xrc_seg",
        &[
            ("xrc_srqn", offset_of!(WqeXrcSeg, xrc_srqn), 4),
            ("rsvd", offset_of!(WqeXrcSeg, rsvd), 12),
        ],
        size_of::<WqeXrcSeg>(),
    );
}

/// The value of enumerator or macro `name` in `text` (`NAME = 0x0a,`, `NAME = 2 << 2,`,
/// `#define NAME 0x3f`).
fn value(text: &str, name: &str) -> u64 {
    let num = |s: &str| -> u64 {
        let s = s.trim();
        match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).unwrap(),
            None => s.parse().unwrap_or_else(|_| panic!("{name}: {s}")),
        }
    };
    for line in text.lines() {
        let l = line.trim();
        let rest = if let Some(r) = l.strip_prefix(&format!("#define {name} ")) {
            r
        } else if let Some(r) = l.strip_prefix(name) {
            match r.trim_start().strip_prefix('=') {
                Some(r) if r.starts_with(char::is_whitespace) => r,
                _ => continue,
            }
        } else {
            continue;
        };
        let rest = rest
            .split("/*")
            .next()
            .unwrap()
            .trim()
            .trim_end_matches(',');
        return match rest.split_once("<<") {
            Some((a, b)) => num(a) << num(b),
            None => num(rest),
        };
    }
    panic!("{name} not found")
}

#[test]
fn send_opcodes_match_device_h() {
    let d = header("MLX5_DEVICE_H", "include/linux/mlx5/device.h");
    for (n, v) in [
        ("MLX5_OPCODE_NOP", opcode::NOP),
        ("MLX5_OPCODE_SEND_INVAL", opcode::SEND_INVAL),
        ("MLX5_OPCODE_RDMA_WRITE", opcode::RDMA_WRITE),
        ("MLX5_OPCODE_RDMA_WRITE_IMM", opcode::RDMA_WRITE_IMM),
        ("MLX5_OPCODE_SEND", opcode::SEND),
        ("MLX5_OPCODE_SEND_IMM", opcode::SEND_IMM),
        ("MLX5_OPCODE_LSO", opcode::LSO),
        ("MLX5_OPCODE_RDMA_READ", opcode::RDMA_READ),
        ("MLX5_OPCODE_ATOMIC_CS", opcode::ATOMIC_CS),
        ("MLX5_OPCODE_ATOMIC_FA", opcode::ATOMIC_FA),
        ("MLX5_OPCODE_ATOMIC_MASKED_CS", opcode::ATOMIC_MASKED_CS),
        ("MLX5_OPCODE_ATOMIC_MASKED_FA", opcode::ATOMIC_MASKED_FA),
        ("MLX5_OPCODE_BIND_MW", opcode::BIND_MW),
        ("MLX5_OPCODE_UMR", opcode::UMR),
    ] {
        assert_eq!(value(&d, n), u64::from(v), "{n}");
    }
    assert_eq!(value(&d, "MLX5_INLINE_SEG"), u64::from(vals::INLINE_SEG));
    assert_eq!(
        value(&d, "MLX5_EXTENDED_UD_AV"),
        u64::from(vals::EXTENDED_UD_AV)
    );
}

#[test]
fn ctrl_flags_match_qp_h() {
    let q = qp_h();
    for (n, v) in [
        ("MLX5_WQE_CTRL_CQ_UPDATE", vals::CTRL_CQ_UPDATE),
        (
            "MLX5_WQE_CTRL_CQ_UPDATE_AND_EQE",
            vals::CTRL_CQ_UPDATE_AND_EQE,
        ),
        ("MLX5_WQE_CTRL_SOLICITED", vals::CTRL_SOLICITED),
        ("MLX5_FENCE_MODE_NONE", vals::FENCE_MODE_NONE),
        (
            "MLX5_FENCE_MODE_INITIATOR_SMALL",
            vals::FENCE_MODE_INITIATOR_SMALL,
        ),
        ("MLX5_FENCE_MODE_FENCE", vals::FENCE_MODE_FENCE),
        (
            "MLX5_FENCE_MODE_STRONG_ORDERING",
            vals::FENCE_MODE_STRONG_ORDERING,
        ),
        (
            "MLX5_FENCE_MODE_SMALL_AND_FENCE",
            vals::FENCE_MODE_SMALL_AND_FENCE,
        ),
    ] {
        assert_eq!(value(&q, n), u64::from(v), "{n}");
    }
    assert_eq!(
        value(&q, "MLX5_WQE_CTRL_DS_MASK"),
        u64::from(vals::CTRL_DS_MASK)
    );
    assert_eq!(
        value(&q, "MLX5_WQE_INLINE_SEG_BYTE_COUNT_MASK"),
        u64::from(vals::INLINE_SEG_BYTE_COUNT_MASK)
    );
    assert_eq!(
        value(&q, "MLX5_SEND_WQE_MAX_WQEBBS") as usize,
        vals::SEND_WQE_MAX_WQEBBS
    );
    assert_eq!(value(&q, "MLX5_SEND_WQE_DS") as usize, vals::SEND_WQE_DS);
    assert_eq!(value(&q, "MLX5_SEND_WQE_BB") as usize, vals::SEND_WQE_BB);
}
