//! Checks the uverbs ABI of `ib/abi/` against the test kernel's headers: every
//! structure of `layout::ALL_ABI_STRUCTS` against `include/uapi/rdma/mlx5-abi.h` (and
//! `mlx5_user_ioctl_verbs.h`), every constant of `consts::ALL_ABI_CONSTS` against the
//! header it names.
//!
//! The C layout is computed here with the x86_64 rules (each member at its natural
//! alignment, `__aligned_u64` and `__u64` 8-byte aligned, a structure padded to its
//! largest alignment, an anonymous union as wide as its widest member); implicit
//! padding in a checked structure is an error, since our `IntoBytes` structures have
//! none. Every field we declare must be in the header at the same offset and width,
//! every header member must be declared (for an anonymous union: one of its names),
//! and `sizeof` must agree.
//!
//! `mlx5-abi.h` is found through `MLX5_ABI_H`, else under
//! `~/.cache/mlx5-rs/kernel/src-*/include/uapi/rdma/mlx5-abi.h`; its siblings and the
//! kernel tree around it (`include/linux/mlx5/device.h`,
//! `drivers/infiniband/hw/mlx5/mlx5_ib.h`) are found from there. A missing header
//! is a failure, not a skip.

use mlx5_rs_pure::ib::abi::{consts::ALL_ABI_CONSTS, layout::ALL_ABI_STRUCTS};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[path = "../../tests/support/kernel_src.rs"]
mod kernel_src;

fn abi_h_path() -> PathBuf {
    kernel_src::kernel_file("MLX5_ABI_H", "include/uapi/rdma/mlx5-abi.h")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{} not found ({e}); set MLX5_ABI_H to the test kernel's \
             include/uapi/rdma/mlx5-abi.h (its siblings and the kernel tree around it \
             are read too)",
            path.display()
        )
    })
}

/// The headers, by the keys `ALL_ABI_CONSTS` uses, in evaluation order.
fn headers() -> Vec<(&'static str, String)> {
    let abi = abi_h_path();
    let dir = abi
        .parent()
        .expect("mlx5-abi.h has a directory")
        .to_path_buf();
    let root = dir.join("../../..");
    vec![
        ("core", read(&dir.join("ib_user_ioctl_cmds.h"))),
        ("ioverbs", read(&dir.join("ib_user_ioctl_verbs.h"))),
        ("uverbs", read(&dir.join("ib_user_verbs.h"))),
        ("verbs", read(&dir.join("mlx5_user_ioctl_verbs.h"))),
        ("cmds", read(&dir.join("mlx5_user_ioctl_cmds.h"))),
        ("abi", read(&abi)),
        ("device", read(&root.join("include/linux/mlx5/device.h"))),
        (
            "ib",
            read(&root.join("drivers/infiniband/hw/mlx5/mlx5_ib.h")),
        ),
    ]
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
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Structures

/// One laid-out member: names (several for an anonymous union), offset, size, and
/// the C structure type when it is one.
#[derive(Debug)]
struct CMember {
    names: Vec<String>,
    offset: usize,
    size: usize,
    nested: Option<String>,
}

#[derive(Debug)]
struct CLayout {
    size: usize,
    align: usize,
    members: Vec<CMember>,
    /// Byte ranges no member covers (implicit padding).
    holes: Vec<(usize, usize)>,
}

/// Bodies of `struct NAME { ... };` by name.
fn struct_bodies(text: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut rest = text;
    while let Some(i) = rest.find("struct ") {
        let after = &rest[i + 7..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let tail = after[name.len()..].trim_start();
        if !name.is_empty() && tail.starts_with('{') {
            let open = after.len() - tail.len();
            let mut depth = 0;
            let mut end = None;
            for (j, c) in after[open..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(open + j);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let end = end.expect("unbalanced braces");
            out.insert(name.clone(), after[open + 1..end].to_string());
            rest = &after[end..];
        } else {
            rest = after;
        }
    }
    out
}

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

fn base_type(t: &str) -> Option<(usize, usize)> {
    Some(match t {
        "__u8" | "__s8" | "char" => (1, 1),
        "__u16" | "__s16" => (2, 2),
        "__u32" | "__s32" | "int" => (4, 4),
        "__u64" | "__s64" | "__aligned_u64" => (8, 8),
        _ => return None,
    })
}

fn array_len(dims: &str) -> usize {
    let mut n = 1;
    for d in dims.split('[').skip(1) {
        let d = d.trim_end_matches(']').trim();
        let v = match d {
            "" => 0,
            "ETH_ALEN" => 6,
            _ => match d.strip_prefix("0x") {
                Some(h) => usize::from_str_radix(h, 16).expect("array size"),
                None => d.parse().expect("array size"),
            },
        };
        n *= v;
    }
    n
}

/// Size, alignment and name of one declaration `type name[dims]`.
fn declaration(
    stmt: &str,
    structs: &HashMap<String, String>,
) -> (String, usize, usize, Option<String>) {
    let stmt = stmt.split_whitespace().collect::<Vec<_>>().join(" ");
    let (ty, decl) = stmt.rsplit_once(' ').expect("declaration");
    let (name, dims) = match decl.find('[') {
        Some(i) => (&decl[..i], &decl[i..]),
        None => (decl, ""),
    };
    let n = array_len(dims);
    if let Some(sname) = ty.strip_prefix("struct ") {
        let l = layout(sname.trim(), structs);
        (
            name.to_string(),
            l.size * n,
            l.align,
            Some(sname.trim().into()),
        )
    } else {
        let (s, a) = base_type(ty).unwrap_or_else(|| panic!("unknown type {ty:?} in {stmt:?}"));
        (name.to_string(), s * n, a, None)
    }
}

fn align_up(v: usize, a: usize) -> usize {
    v.div_ceil(a) * a
}

fn layout(name: &str, structs: &HashMap<String, String>) -> CLayout {
    let body = structs
        .get(name)
        .unwrap_or_else(|| panic!("struct {name} not in the headers"));
    let mut off = 0;
    let mut align = 1;
    let mut members = vec![];
    let mut holes = vec![];
    for stmt in statements(body) {
        let (names, size, a, nested) = if let Some(u) = stmt.strip_prefix("union") {
            let inner = u.trim();
            let inner = inner
                .strip_prefix('{')
                .and_then(|s| s.strip_suffix('}'))
                .unwrap_or_else(|| panic!("named unions are not handled: {stmt}"));
            let mut names = vec![];
            let (mut size, mut a) = (0, 1);
            for m in statements(inner) {
                let (n, s, al, _) = declaration(&m, structs);
                names.push(n);
                size = size.max(s);
                a = a.max(al);
            }
            (names, align_up(size, a), a, None)
        } else {
            let (n, s, a, nested) = declaration(&stmt, structs);
            (vec![n], s, a, nested)
        };
        let start = align_up(off, a);
        if start > off {
            holes.push((off, start));
        }
        members.push(CMember {
            names,
            offset: start,
            size,
            nested,
        });
        off = start + size;
        align = align.max(a);
    }
    let size = align_up(off, align);
    if size > off {
        holes.push((off, size));
    }
    CLayout {
        size,
        align,
        members,
        holes,
    }
}

#[test]
fn structures_match_mlx5_abi_h() {
    let mut text = String::new();
    for (_, h) in headers() {
        text.push_str(&strip_comments(&h));
        text.push('\n');
    }
    let structs = struct_bodies(&text);
    let ours: Vec<&str> = ALL_ABI_STRUCTS.iter().map(|s| s.c_name).collect();
    let mut errors = vec![];
    let mut fields_checked = 0;
    for s in ALL_ABI_STRUCTS {
        let c = layout(s.c_name, &structs);
        if c.size != s.size {
            errors.push(format!(
                "{}: sizeof {} in the header, {} here",
                s.c_name, c.size, s.size
            ));
        }
        for h in &c.holes {
            errors.push(format!("{}: implicit padding at {:?}", s.c_name, h));
        }
        for f in s.fields {
            match c
                .members
                .iter()
                .find(|m| m.names.iter().any(|n| n == f.name))
            {
                None => errors.push(format!("{}.{}: not in the header", s.c_name, f.name)),
                Some(m) => {
                    fields_checked += 1;
                    if (m.offset, m.size) != (f.offset, f.size) {
                        errors.push(format!(
                            "{}.{}: offset {} width {} in the header, offset {} width {} here",
                            s.c_name, f.name, m.offset, m.size, f.offset, f.size
                        ));
                    }
                }
            }
        }
        for m in &c.members {
            if !s.fields.iter().any(|f| m.names.iter().any(|n| n == f.name)) {
                errors.push(format!("{}.{:?}: not declared here", s.c_name, m.names));
            }
            if let Some(n) = &m.nested {
                if !ours.contains(&n.as_str()) {
                    errors.push(format!("{}: nested struct {n} is not checked", s.c_name));
                }
            }
        }
    }
    assert!(
        errors.is_empty(),
        "mlx5-abi.h mismatches:\n{}",
        errors.join("\n")
    );
    // Every structure and at least all their fields were looked at.
    assert_eq!(ALL_ABI_STRUCTS.len(), 26);
    assert!(
        fields_checked
            >= ALL_ABI_STRUCTS
                .iter()
                .map(|s| s.fields.len())
                .sum::<usize>()
    );
}

// ---------------------------------------------------------------------------
// Constants

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(u64),
    Id(String),
    Op(String),
}

fn tokens(s: &str) -> Option<Vec<Tok>> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = vec![];
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let st = i;
            while i < b.len() && (b[i] as char).is_ascii_alphanumeric() {
                i += 1;
            }
            let lit = s[st..i].trim_end_matches(['u', 'U', 'l', 'L']);
            let v = match lit.strip_prefix("0x").or_else(|| lit.strip_prefix("0X")) {
                Some(h) => u64::from_str_radix(h, 16).ok()?,
                None => lit.parse().ok()?,
            };
            out.push(Tok::Num(v));
        } else if c.is_alphabetic() || c == '_' {
            let st = i;
            while i < b.len() && ((b[i] as char).is_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Id(s[st..i].to_string()));
        } else if s[i..].starts_with("<<") || s[i..].starts_with(">>") {
            out.push(Tok::Op(s[i..i + 2].to_string()));
            i += 2;
        } else if "()|&+-*/~".contains(c) {
            out.push(Tok::Op(c.to_string()));
            i += 1;
        } else {
            return None;
        }
    }
    Some(out)
}

/// Recursive-descent evaluation with C precedence: `|` < `&` < shifts < `+ -` <
/// `* /` < unary / casts / `BIT(n)`.
struct Eval<'a> {
    t: &'a [Tok],
    i: usize,
    syms: &'a HashMap<String, u64>,
}

impl Eval<'_> {
    fn peek_op(&self, op: &str) -> bool {
        matches!(self.t.get(self.i), Some(Tok::Op(o)) if o == op)
    }
    fn bin(&mut self, ops: &[&str], next: fn(&mut Self) -> Option<u64>) -> Option<u64> {
        let mut v = next(self)?;
        while let Some(op) = ops.iter().find(|o| self.peek_op(o)) {
            self.i += 1;
            let r = next(self)?;
            v = match *op {
                "|" => v | r,
                "&" => v & r,
                "<<" => v.checked_shl(r as u32)?,
                ">>" => v.checked_shr(r as u32)?,
                "+" => v.wrapping_add(r),
                "-" => v.wrapping_sub(r),
                "*" => v.wrapping_mul(r),
                "/" => v.checked_div(r)?,
                _ => unreachable!(),
            };
        }
        Some(v)
    }
    fn or(&mut self) -> Option<u64> {
        self.bin(&["|"], Self::and)
    }
    fn and(&mut self) -> Option<u64> {
        self.bin(&["&"], Self::shift)
    }
    fn shift(&mut self) -> Option<u64> {
        self.bin(&["<<", ">>"], Self::add)
    }
    fn add(&mut self) -> Option<u64> {
        self.bin(&["+", "-"], Self::mul)
    }
    fn mul(&mut self) -> Option<u64> {
        self.bin(&["*", "/"], Self::unary)
    }
    fn unary(&mut self) -> Option<u64> {
        match self.t.get(self.i)?.clone() {
            Tok::Num(v) => {
                self.i += 1;
                Some(v)
            }
            Tok::Id(id) if id == "BIT" => {
                self.i += 1;
                let n = self.unary()?;
                1u64.checked_shl(n as u32)
            }
            Tok::Id(id) => {
                self.i += 1;
                self.syms.get(&id).copied()
            }
            Tok::Op(o) if o == "~" => {
                self.i += 1;
                Some(!self.unary()?)
            }
            Tok::Op(o) if o == "(" => {
                // A cast `(type)` or a parenthesized expression.
                if let (Some(Tok::Id(ty)), Some(Tok::Op(c))) =
                    (self.t.get(self.i + 1), self.t.get(self.i + 2))
                {
                    if c == ")" && (ty.starts_with("__u") || ty == "u64" || ty == "u32") {
                        self.i += 3;
                        return self.unary();
                    }
                }
                self.i += 1;
                let v = self.or()?;
                if !self.peek_op(")") {
                    return None;
                }
                self.i += 1;
                Some(v)
            }
            Tok::Op(_) => None,
        }
    }
}

fn eval(expr: &str, syms: &HashMap<String, u64>) -> Option<u64> {
    let t = tokens(expr)?;
    let mut e = Eval { t: &t, i: 0, syms };
    let v = e.or()?;
    (e.i == t.len()).then_some(v)
}

/// Every enumerator and object-like `#define` of `text` that evaluates, into `syms`
/// (with `origin` = `key`).
fn collect_consts(
    key: &str,
    text: &str,
    syms: &mut HashMap<String, u64>,
    origin: &mut HashMap<String, String>,
) {
    let text = strip_comments(text);
    for line in text.lines() {
        let l = line.trim();
        if let Some(d) = l.strip_prefix("#define") {
            let d = d.trim();
            let name: String = d
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let rest = &d[name.len()..];
            if name.is_empty() || rest.starts_with('(') {
                continue;
            }
            if let Some(v) = eval(rest.trim(), syms) {
                syms.insert(name.clone(), v);
                origin.insert(name, key.into());
            }
        }
    }
    let mut rest = text.as_str();
    while let Some(i) = rest.find("enum") {
        let after = &rest[i + 4..];
        let Some(open) = after.find('{') else { break };
        let head = after[..open].trim();
        if !head.chars().all(|c| c.is_alphanumeric() || c == '_') {
            rest = after;
            continue;
        }
        let close = after[open..].find('}').expect("enum body") + open;
        let mut prev: Option<u64> = None;
        for item in after[open + 1..close].split(',') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (name, v) = match item.split_once('=') {
                Some((n, e)) => (n.trim(), eval(e.trim(), syms)),
                None => (item, prev.map(|p| p + 1)),
            };
            if let Some(v) = v {
                syms.insert(name.to_string(), v);
                origin.insert(name.to_string(), key.into());
            }
            prev = v;
        }
        rest = &after[close..];
    }
}

#[test]
fn constants_match_the_headers() {
    let mut syms = HashMap::new();
    let mut origin = HashMap::new();
    for (key, text) in headers() {
        collect_consts(key, &text, &mut syms, &mut origin);
    }
    let mut errors = vec![];
    for &(key, name, value) in ALL_ABI_CONSTS {
        match (syms.get(name), origin.get(name)) {
            (Some(&v), Some(o)) => {
                if v != value {
                    errors.push(format!("{name}: {v:#x} in the header, {value:#x} here"));
                }
                if o != key {
                    errors.push(format!("{name}: defined in `{o}`, listed under `{key}`"));
                }
            }
            _ => errors.push(format!("{name}: not found (or not evaluable) in `{key}`")),
        }
    }
    assert!(
        errors.is_empty(),
        "constant mismatches:\n{}",
        errors.join("\n")
    );
    assert_eq!(ALL_ABI_CONSTS.len(), 90);
}

#[test]
fn the_evaluator_evaluates() {
    let mut syms = HashMap::new();
    syms.insert("S".to_string(), 12);
    assert_eq!(eval("(1U << S)", &syms), Some(4096));
    assert_eq!(eval("(__u64)1 << 1", &syms), Some(2));
    assert_eq!(eval("1UL << 31", &syms), Some(1 << 31));
    assert_eq!(eval("BIT(31)", &syms), Some(1 << 31));
    assert_eq!(eval("4 - 2", &syms), Some(2));
    assert_eq!(eval("1 << 8 * 2", &syms), Some(1 << 16));
    assert_eq!(eval("PAGE_SIZE / 4096", &syms), None);
    let mut origin = HashMap::new();
    collect_consts(
        "t",
        "enum x { A = S + 1, B, C = (1 << 2), D };\n#define E 0xff\n#define F(x) x",
        &mut syms,
        &mut origin,
    );
    assert_eq!(
        ["A", "B", "C", "D", "E"].map(|n| syms[n]),
        [13, 14, 4, 5, 0xff]
    );
    assert!(!syms.contains_key("F"));
}
