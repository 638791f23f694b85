// SPDX-License-Identifier: GPL-2.0
//! Where the host tests find the test kernel's headers: shared by the header
//! conformance tests of the emulator crate (`mlx5_ifc.h`, the IBTA headers) and of the
//! host crate (`mlx5-abi.h`), each of which includes this file with `#[path]`.

use std::path::PathBuf;

/// `rel` (e.g. `include/linux/mlx5/mlx5_ifc.h`) in the newest unpacked test-kernel
/// source below the cache (`$MLX5RS_CACHE`, default `~/.cache/mlx5-rs`, as
/// `tests/vm/lib.sh`), or the file the environment variable `env` names. When none
/// exists, the pattern that was searched, so the caller's error message shows it.
pub fn kernel_file(env: &str, rel: &str) -> PathBuf {
    if let Ok(p) = std::env::var(env) {
        return PathBuf::from(p);
    }
    let cache = std::env::var("MLX5RS_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
            PathBuf::from(home).join(".cache/mlx5-rs")
        });
    let base = cache.join("kernel");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&base)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("src-"))
                })
                .map(|p| p.join(rel))
                .filter(|p| p.exists())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found.pop().unwrap_or_else(|| base.join("src-*").join(rel))
}
