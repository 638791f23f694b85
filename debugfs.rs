// SPDX-License-Identifier: GPL-2.0

//! debugfs files of one function, under `/sys/kernel/debug/mlx5_rs/<pci address>/`:
//!
//! | file | what |
//! |---|---|
//! | `cmd_stats` | per opcode: count, errors, timeouts, mean and max latency |
//! | `pages` | firmware pages held, given, reclaimed; unknown returns; host memory blocks mapped and block allocations that fell back to a smaller size |
//! | `eqs` | per EQ: number, vector, EQEs, malformed, drains, arms, IRQ latency; command events; page requests; CQ dispatch; CQEs the kernel CQ pollers skipped (`cqe_malformed`, `cqe_stale`) |
//!
//! Test hooks, built only with `CONFIG_MLX5_RS_TEST_HOOKS` (the test and benchmark
//! build; see `Kconfig`):
//!
//! | file | what |
//! |---|---|
//! | `nop_storm` | write `<nops> <callers> [inline]` to run a NOP storm (`inline`: one caller, the writing process itself, which stops at a pending signal); read the last result |
//! | `cmd_mode` | write `events` or `polling`: how commands complete (benchmark hook) |
//! | `gen_comp` | write `<comp EQ index> <cqn> [noreg]`: GEN_EQE of a completion for `cqn` |
//!
//! The root `mlx5_rs/` is module-wide, as upstream's `mlx5/` (`mlx5_register_debugfs`
//! at module init): the module creates it before the PCI driver is registered and
//! removes it after every function is gone ([`RootStorage`]). Each function adds and
//! removes only its own subdirectory, so the functions' directories are independent
//! (a root per function would fail with `EEXIST` for the second one).

use kernel::{
    debugfs::{Dir, Scope},
    fmt,
    prelude::*,
    str::CString,
    sync::Arc,
};
#[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
use kernel::{
    sync::{new_mutex, Mutex},
    uaccess::UserSliceReader,
};

#[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
use crate::cmd::storm::{self, StormResult};
use crate::{eq::EqInfo, hw::Hw, pagealloc::fw_pages::FwPages};

/// What the files read and drive.
#[pin_data]
pub(crate) struct DebugData {
    hw: Arc<Hw>,
    pages: Arc<FwPages>,
    events: Arc<EqInfo>,
    /// The last `nop_storm` result. Lock order: a leaf, never held across the storm's
    /// commands (the result is stored after they completed).
    #[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
    #[pin]
    storm: Mutex<Option<Result<StormResult>>>,
}

kernel::sync::global_lock! {
    // Lock order: a leaf, taken at module init and exit and when a function adds its
    // directory; no other lock under it.
    // SAFETY: `root_init` initializes it in module init, before the driver is
    // registered (no probe can run before).
    unsafe(uninit) static ROOT: Mutex<Option<Dir>> = None;
}

/// Initializes the lock of the module-wide root (still empty).
///
/// # Safety
///
/// Call exactly once, from module init, before the PCI driver is registered.
pub(crate) unsafe fn root_init() {
    // SAFETY: `init` may run once, before any use of the lock: the caller calls this
    // once, from module init, before the PCI driver (the only user, from probe on) is
    // registered.
    unsafe { ROOT.init() };
}

/// The module-wide `mlx5_rs/` root: created by [`RootStorage::create`], removed on drop
/// once no function's directory is left in it (each one holds a reference to it).
///
/// The module initializes it before the driver registration and declares it after, so
/// it exists before the first probe and is dropped after the last remove.
pub(crate) struct RootStorage;

impl RootStorage {
    /// Creates the root. A debugfs failure is not a module failure: the functions then
    /// have no files, as with upstream.
    pub(crate) fn create() -> Self {
        *ROOT.lock() = Some(Dir::new(c"mlx5_rs"));
        Self
    }
}

impl Drop for RootStorage {
    fn drop(&mut self) {
        let root = ROOT.lock().take();
        drop(root);
    }
}

/// The debugfs directory of one function; removed on drop (the root stays).
pub(crate) struct DebugFs {
    _scope: Pin<KBox<Scope<DebugData>>>,
}

impl DebugFs {
    /// Creates `mlx5_rs/<name>/` with the files above.
    pub(crate) fn new(
        name: &CStr,
        hw: Arc<Hw>,
        pages: Arc<FwPages>,
        events: Arc<EqInfo>,
    ) -> Result<Self> {
        // A clone of the root handle: the function's directory keeps the root alive.
        // The root exists from module init until after the last remove, so a probe
        // never finds none.
        let root = ROOT.lock().clone().ok_or(ENOENT)?;
        let dirname = CString::try_from_fmt(fmt!("{}", name))?;
        #[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
        let data = pin_init!(DebugData { hw, pages, events, storm <- new_mutex!(None) });
        #[cfg(not(CONFIG_MLX5_RS_TEST_HOOKS))]
        let data = pin_init!(DebugData { hw, pages, events });
        let scope = KBox::pin_init(
            root.scope(data, &dirname, |d, dir| {
                dir.read_callback_file(c"cmd_stats", &d.hw, &show_cmd_stats);
                dir.read_callback_file(c"pages", &d.pages, &show_pages);
                dir.read_callback_file(c"eqs", &d.events, &show_eqs);
                #[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
                {
                    dir.read_write_callback_file(c"nop_storm", d, &show_storm, &run_storm);
                    dir.write_only_callback_file(c"gen_comp", &d.events, &gen_comp);
                    dir.write_only_callback_file(c"cmd_mode", &d.events, &set_cmd_mode);
                }
            }),
            GFP_KERNEL,
        )?;
        Ok(Self { _scope: scope })
    }
}

/// For scripts: one line of `key=value` pairs per opcode used, then the slots as
/// `key value`.
fn show_cmd_stats(hw: &Arc<Hw>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    hw.cmd().with_stats(|stats| {
        stats.used().try_for_each(|(op, s)| {
            writeln!(
                f,
                "opcode={} count={} errors={} timeouts={} mean_ns={} max_ns={}",
                op.name(),
                s.count,
                s.errors,
                s.timeouts,
                s.mean_ns(),
                s.max_ns
            )
        })
    })?;
    let (busy, parked) = hw.cmd().slot_usage();
    writeln!(
        f,
        "slots_busy {} slots_parked {} slots_total {}",
        busy,
        parked,
        hw.cmd().nslots()
    )
}

fn show_pages(p: &Arc<FwPages>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let c = p.counts();
    writeln!(
        f,
        "held {}\ngiven {}\nreclaimed {}\nunknown_returns {}\nblocks {}\nblock_fallbacks {}",
        c.held, c.given, c.reclaimed, c.unknown_returns, c.blocks, c.block_fallbacks
    )
}

#[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
fn show_storm(d: &DebugData, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match &*d.storm.lock() {
        None => writeln!(f, "idle"),
        Some(Err(e)) => writeln!(f, "error {:?}", e),
        Some(Ok(r)) => writeln!(
            f,
            "nops {} callers {} errors {} elapsed_ns {} ops_per_sec {} p50_ns {} p99_ns {} max_ns {} mean_ns {}",
            r.latency.count,
            r.callers,
            r.errors,
            r.elapsed_ns,
            r.ops_per_sec(),
            r.latency.p50_ns,
            r.latency.p99_ns,
            r.latency.max_ns,
            r.latency.mean_ns
        ),
    }
}

#[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
/// Parses `<nops> <callers> [inline]` (user input: anything else is `EINVAL`);
/// `inline` (one caller only) makes the writing process send the NOPs itself.
fn parse_storm(text: &[u8]) -> Result<(u32, u32, bool)> {
    let s = core::str::from_utf8(text).map_err(|_| EINVAL)?;
    let mut it = s.split_ascii_whitespace();
    let nops = it
        .next()
        .ok_or(EINVAL)?
        .parse::<u32>()
        .map_err(|_| EINVAL)?;
    let callers = it
        .next()
        .unwrap_or("1")
        .parse::<u32>()
        .map_err(|_| EINVAL)?;
    let inline = match it.next() {
        None => false,
        Some("inline") if callers == 1 => true,
        Some(_) => return Err(EINVAL),
    };
    if it.next().is_some() {
        return Err(EINVAL);
    }
    Ok((nops, callers, inline))
}

#[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
fn run_storm(d: &DebugData, r: &mut UserSliceReader) -> Result {
    let mut buf = [0u8; 64];
    let n = r.len().min(buf.len());
    r.read_slice(&mut buf[..n])?;
    let (nops, callers, inline) = parse_storm(&buf[..n])?;
    let res = if inline {
        storm::run_inline(&d.hw, nops)
    } else {
        storm::run(&d.hw, nops, callers)
    };
    let ret = res.as_ref().map(|_| ()).map_err(|e| *e);
    *d.storm.lock() = Some(res);
    ret
}

fn show_eqs(e: &Arc<EqInfo>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    e.show(f)
}

#[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
/// Parses `<comp EQ index> <cqn> [noreg]` (user input: anything else is `EINVAL`) and
/// generates the completion EQE.
fn gen_comp(e: &Arc<EqInfo>, r: &mut UserSliceReader) -> Result {
    let mut buf = [0u8; 64];
    let n = r.len().min(buf.len());
    r.read_slice(&mut buf[..n])?;
    let s = core::str::from_utf8(&buf[..n]).map_err(|_| EINVAL)?;
    let mut it = s.split_ascii_whitespace();
    let k = it
        .next()
        .ok_or(EINVAL)?
        .parse::<u32>()
        .map_err(|_| EINVAL)?;
    let cqn = it
        .next()
        .ok_or(EINVAL)?
        .parse::<u32>()
        .map_err(|_| EINVAL)?;
    let register = match it.next() {
        None => true,
        Some("noreg") => false,
        Some(_) => return Err(EINVAL),
    };
    if it.next().is_some() || cqn > 0x00ff_ffff {
        return Err(EINVAL);
    }
    e.gen_comp(k, cqn, register)
}

#[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
/// Parses `events` or `polling` and switches the command interface.
fn set_cmd_mode(e: &Arc<EqInfo>, r: &mut UserSliceReader) -> Result {
    let mut buf = [0u8; 16];
    let n = r.len().min(buf.len());
    r.read_slice(&mut buf[..n])?;
    match core::str::from_utf8(&buf[..n]).map_err(|_| EINVAL)?.trim() {
        "events" => e.set_cmd_mode(true),
        "polling" => e.set_cmd_mode(false),
        _ => Err(EINVAL),
    }
}
