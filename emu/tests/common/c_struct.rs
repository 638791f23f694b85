//! A reader of the plain C structures and values of the kernel's mlx5 headers, shared
//! by the layout tests (`srq_ah_layouts.rs`, `umr_layouts.rs`, `cqe_layouts.rs`,
//! `send_wqe_layouts.rs`, each including this file with `#[path]`): the top-level
//! members of `struct name { ... }` in declaration order, each member's size from its
//! declaration (`u8 x[N]`, `__be16`, `__be32`, `__be64`, a flexible array `x[]` of no
//! bytes, a nested union or struct as one member, a member of a named struct type of
//! the size the caller gives, a run of bitfields as the bytes it fills, the members of
//! a `struct_group` inline as in C), so a reordered or resized member fails; and the
//! value of an enumerator or macro.
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
    let close = closing(rest, open).unwrap_or_else(|| panic!("struct {name} not closed"));
    &rest[open + 1..close]
}

/// The index in `s` of the bracket closing the one at `open` (`{` or `(`).
fn closing(s: &str, open: usize) -> Option<usize> {
    let (o, c) = match s[open..].chars().next()? {
        '(' => ('(', ')'),
        _ => ('{', '}'),
    };
    let mut depth = 0;
    for (i, ch) in s[open..].char_indices() {
        if ch == o {
            depth += 1;
        } else if ch == c {
            depth -= 1;
            if depth == 0 {
                return Some(open + i);
            }
        }
    }
    None
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

/// Drops the `struct_group(name,` ... `);` wrappers of a struct body, leaving their
/// members inline (the macro's members are the struct's own in C's layout).
fn flatten_struct_groups(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some(i) = rest.find("struct_group(") {
        out.push_str(&rest[..i]);
        let open = i + "struct_group".len();
        let close = closing(rest, open).expect("struct_group not closed");
        let (_, members) = rest[open + 1..close]
            .split_once(',')
            .expect("struct_group name");
        out.push_str(members);
        rest = rest[close + 1..]
            .trim_start()
            .strip_prefix(';')
            .expect("struct_group(...);");
    }
    out.push_str(rest);
    out
}

/// (member name, bytes) of the top-level members of a struct body; a nested union or
/// struct counts as one member named after its declarator (empty when anonymous).
pub fn members(body: &str) -> Vec<(String, usize)> {
    members_with(body, &[])
}

/// [`members`], a member of a named type (`struct mlx5_av av`) of the size `types`
/// gives for it (`("struct mlx5_av", 48)`).
pub fn members_with(body: &str, types: &[(&str, usize)]) -> Vec<(String, usize)> {
    members_of(&flatten_struct_groups(&strip_comments(body)), types)
}

fn members_of(body: &str, types: &[(&str, usize)]) -> Vec<(String, usize)> {
    let size_of_decl = |ty: &str, decl: &str| -> (String, usize) {
        let unit = match ty {
            "u8" => 1,
            "__be16" | "u16" => 2,
            "__be32" | "u32" => 4,
            "__be64" | "u64" => 8,
            t => {
                types
                    .iter()
                    .find(|(n, _)| *n == t)
                    .unwrap_or_else(|| panic!("type {t}"))
                    .1
            }
        };
        match decl.split_once('[') {
            Some((n, len)) => {
                let len = len.trim_end_matches(']');
                // A flexible array member (`x[]`) takes no bytes.
                let len: usize = if len.is_empty() {
                    0
                } else {
                    len.parse().unwrap()
                };
                (n.to_string(), unit * len)
            }
            None => (decl.to_string(), unit),
        }
    };
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
        // A block opens its braces before its first member's `;`; `struct name x`
        // without one is a member of a named type.
        let block = (stmt.starts_with("union") || stmt.starts_with("struct")) && stmt.contains('{');
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
            let close = closing(rest, open).expect("block not closed");
            let after = rest[close + 1..].find(';').unwrap() + close + 1;
            let inner = members_of(&rest[open + 1..close], types)
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
        // The declarator is the last word, the type the words before it.
        let (ty, decl) = stmt
            .rsplit_once(char::is_whitespace)
            .unwrap_or_else(|| panic!("member {stmt}"));
        let ty = ty.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push(size_of_decl(&ty, decl.trim()));
        rest = &rest[stmt_end + 1..];
    }
    flush(&mut out, &mut bits);
    out
}

/// Checks `ours` — (member name, Rust offset, bytes) in declaration order — against
/// the header's members of `struct name`: same names, sizes and order, each Rust
/// offset the running sum of the header's sizes; returns the total size.
pub fn check(text: &str, name: &str, ours: &[(&str, usize, usize)]) -> usize {
    check_with(text, name, ours, &[])
}

/// [`check`] with the sizes of named member types as [`members_with`] takes them.
pub fn check_with(
    text: &str,
    name: &str,
    ours: &[(&str, usize, usize)],
    types: &[(&str, usize)],
) -> usize {
    let m = members_with(body(text, name), types);
    assert_eq!(m.len(), ours.len(), "{name}: {m:?}");
    let mut off = 0;
    for ((hn, hsz), (n, o, sz)) in m.iter().zip(ours) {
        assert_eq!((hn.as_str(), *hsz), (*n, *sz), "{name}: member at {off}");
        assert_eq!(*o, off, "{name}.{n}");
        off += hsz;
    }
    off
}

/// The value of enumerator or macro `name` in `text` (`NAME = 0x0a,`, `NAME = 2 << 2,`,
/// `#define NAME 0x3f`), for the expressions these headers use: a number, `a << b`,
/// parentheses, `ull`, `cpu_to_be32(x)`; a trailing comment is no part of it.
pub fn value(text: &str, name: &str) -> u64 {
    let num = |s: &str| -> u64 {
        let s = s.trim();
        match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).unwrap_or_else(|_| panic!("{name}: {s}")),
            None => s.parse().unwrap_or_else(|_| panic!("{name}: {s}")),
        }
    };
    for line in text.lines() {
        let l = line.trim();
        let rest = if let Some(r) = l.strip_prefix("#define") {
            match r.trim_start().strip_prefix(name) {
                Some(r) if r.starts_with([' ', '\t']) => r,
                _ => continue,
            }
        } else if let Some(r) = l.strip_prefix(name) {
            match r.trim_start().strip_prefix('=') {
                Some(r) if !r.starts_with('=') => r,
                _ => continue,
            }
        } else {
            continue;
        };
        let expr = rest
            .split("/*")
            .next()
            .unwrap()
            .trim()
            .trim_end_matches(',')
            .replace("cpu_to_be32", "")
            .replace(['(', ')'], "")
            .replace("ull", "");
        return match expr.split_once("<<") {
            Some((a, b)) => num(a) << num(b),
            None => num(&expr),
        };
    }
    panic!("{name} not found")
}
