//! A member parser for the plain C structures of the kernel's mlx5 headers, shared by
//! the layout tests (`srq_ah_layouts.rs`, `umr_layouts.rs`, `cqe_layouts.rs`, each including this file
//! with `#[path]`): the top-level members of `struct name { ... }` in declaration order,
//! each member's size from its declaration (`u8 x[N]`, `__be16`, `__be32`, `__be64`, a
//! nested union or struct as one member, a run of bitfields as the bytes it fills), so a reordered or resized member fails.
#![allow(dead_code)]

use std::path::PathBuf;

#[path = "../../../tests/support/kernel_src.rs"]
mod kernel_src;

/// The text of the test kernel's header `rel` (or the file the variable `env` names).
pub fn header(env: &str, rel: &str) -> String {
    let p: PathBuf = kernel_src::kernel_file(env, rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The body of `struct name { ... };` in `text`.
pub fn body<'a>(text: &'a str, name: &str) -> &'a str {
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

/// Drops `/* ... */` comments (a header may comment inside a struct body).
fn strip_comments(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    out.push_str(rest);
    out
}

/// (member name, bytes) of the top-level members of a struct body; a nested union or
/// struct counts as one member named after its declarator (empty when anonymous).
pub fn members(body: &str) -> Vec<(String, usize)> {
    members_of(&strip_comments(body))
}

fn members_of(body: &str) -> Vec<(String, usize)> {
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
                let len: usize = len.trim_end_matches(']').parse().unwrap();
                (n.to_string(), unit * len)
            }
            None => (decl.to_string(), unit),
        }
    }
    let mut out = Vec::new();
    let mut rest = body;
    // Consecutive bitfields (`u8 x:1;`) share their storage: one member of the bytes
    // their widths fill (`mlx5_cqe64`'s SHAMPO struct has such a run).
    let mut bits = 0usize;
    let flush = |out: &mut Vec<(String, usize)>, bits: &mut usize| {
        if *bits > 0 {
            out.push(("<bitfields>".to_string(), bits.div_ceil(8)));
            *bits = 0;
        }
    };
    while let Some(stmt_end) = rest.find(';') {
        let stmt = rest[..stmt_end].trim();
        let block = stmt.starts_with("union") || stmt.starts_with("struct");
        if let Some((_, width)) = stmt.split_once(':').filter(|_| !block) {
            bits += width.trim().parse::<usize>().unwrap();
            rest = &rest[stmt_end + 1..];
            continue;
        }
        flush(&mut out, &mut bits);
        if block {
            // A block: its members end at the matching brace; a union is as large
            // as its largest member, a struct the sum of its members.
            let open = rest.find('{').unwrap();
            let mut depth = 0;
            let mut close = open;
            for (i, c) in rest[open..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            close = open + i;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let after = rest[close + 1..].find(';').unwrap() + close + 1;
            let inner = members_of(&rest[open + 1..close])
                .into_iter()
                .map(|(_, n)| n);
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
        out.push(size_of_decl(ty, decl));
        rest = &rest[stmt_end + 1..];
    }
    flush(&mut out, &mut bits);
    out
}

/// Checks `ours` — (member name, Rust offset, bytes) in declaration order — against
/// the header's members of `struct name`: same names, sizes and order, each Rust
/// offset the running sum of the header's sizes; returns the total size.
pub fn check(text: &str, name: &str, ours: &[(&str, usize, usize)]) -> usize {
    let m = members(body(text, name));
    assert_eq!(m.len(), ours.len(), "{name}: {m:?}");
    let mut off = 0;
    for ((hn, hsz), (n, o, sz)) in m.iter().zip(ours) {
        assert_eq!((hn.as_str(), *hsz), (*n, *sz), "{name}: member at {off}");
        assert_eq!(*o, off, "{name}.{n}");
        off += hsz;
    }
    off
}
