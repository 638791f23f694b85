//! Checks the driver's errno table (`errno/code.rs`) against the test kernel's
//! `include/uapi/asm-generic/errno-base.h` and `errno.h`: every [`Errno`] is defined
//! there under its name with its number, and no two of ours share a number.
//!
//! The headers are found through `ERRNO_BASE_H` (its sibling `errno.h` is read too),
//! else under `~/.cache/mlx5-rs/kernel/src-*/include/uapi/asm-generic/`. A missing
//! header is a failure, not a skip.

use mlx5_rs_pure::errno::Errno;
use std::collections::HashMap;

#[path = "../../tests/support/kernel_src.rs"]
mod kernel_src;

/// `#define NAME number` lines of the two headers (aliases such as
/// `EWOULDBLOCK EAGAIN` are not numbers and are left out).
fn uapi_errnos() -> HashMap<String, i32> {
    let base = kernel_src::kernel_file("ERRNO_BASE_H", "include/uapi/asm-generic/errno-base.h");
    let more = base.with_file_name("errno.h");
    let mut defs = HashMap::new();
    for path in [&base, &more] {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
            panic!(
                "{} not found ({e}); set ERRNO_BASE_H to the test kernel's \
                 include/uapi/asm-generic/errno-base.h",
                path.display()
            )
        });
        for line in text.lines() {
            let mut w = line.split_whitespace();
            if w.next() != Some("#define") {
                continue;
            }
            let (Some(name), Some(value)) = (w.next(), w.next()) else {
                continue;
            };
            if let Ok(n) = value.parse::<i32>() {
                defs.insert(name.to_string(), n);
            }
        }
    }
    defs
}

#[test]
fn every_errno_is_the_uapi_number() {
    let defs = uapi_errnos();
    // The two headers define 133 numbered errnos; a parser that found few read the
    // wrong files.
    assert!(defs.len() > 100, "only {} errnos parsed", defs.len());
    assert_eq!(defs.get("EINVAL"), Some(&22), "the parser reads EINVAL");
    for e in Errno::ALL {
        assert_eq!(
            defs.get(e.name()),
            Some(&e.get()),
            "{} is {} here",
            e.name(),
            e.get()
        );
    }
}

#[test]
fn no_two_errnos_share_a_number() {
    let mut seen = HashMap::new();
    for e in Errno::ALL {
        if let Some(other) = seen.insert(e.get(), e.name()) {
            panic!("{} and {} are both {}", other, e.name(), e.get());
        }
    }
}
