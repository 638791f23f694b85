//! Throughput figures (run with `cargo test -p mlx5-emu --release --test bench -- --ignored --nocapture`):
//! NOP commands per second through the in-process command path, and the ledger's
//! memory with 1 GiB of pages held.

mod common;

use common::{input, Host};
use mlx5_emu::ifc::opcodes::Opcode;

#[test]
#[ignore]
fn nop_commands_per_second() {
    let mut h = Host::new();
    let nop = input(16, Opcode::NOP as u16, 0, &[]);
    let p = h.prepare(0, &nop, 16);
    let n = 200_000;
    let t = std::time::Instant::now();
    for _ in 0..n {
        h.mem_set_own(&p);
        h.ring(0);
        h.dev.step();
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "mlx5-emu: {n} NOP commands in {secs:.3} s = {:.0} commands/s (in-process, one slot)",
        n as f64 / secs
    );
}

#[test]
#[ignore]
fn ledger_memory_for_1gib_of_pages() {
    use mlx5_emu::fw::pages::Ledger;
    /// Guest memory where every page counts as mapped.
    struct All;
    impl mlx5_emu::mem::GuestMemory for All {
        fn read(&self, _: u64, _: &mut [u8]) -> Result<(), mlx5_emu::mem::DmaError> {
            Ok(())
        }
        fn write(&self, _: u64, _: &[u8]) -> Result<(), mlx5_emu::mem::DmaError> {
            Ok(())
        }
        fn is_mapped(&self, _: u64, _: u64) -> bool {
            true
        }
    }
    let rss = || -> u64 {
        std::fs::read_to_string("/proc/self/statm")
            .ok()
            .and_then(|s| s.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or(0)
            * 4096
    };
    let before = rss();
    let mut l = Ledger::new(0, 0, 0);
    let pages: Vec<u64> = (1..=262_144u64).map(|i| i << 12).collect();
    for chunk in pages.chunks(50_000) {
        l.give(0, chunk, &All).unwrap();
    }
    drop(pages);
    let after = rss();
    println!(
        "mlx5-emu: ledger holding {} pages (1 GiB): {:.1} MiB resident growth",
        l.held(0),
        (after.saturating_sub(before)) as f64 / (1 << 20) as f64
    );
}
