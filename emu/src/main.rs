//! `mlx5-emu`: the emulated ConnectX served over vfio-user.
//!
//! ```text
//! mlx5-emu --socket PATH [--control PATH] [--boot-delay-ms N]
//!          [--boot-pages N] [--init-pages N] [--regular-pages N] [--fw-rev A.B.C]
//!          [--jitter-us N] [--msix-vectors N] [--strict RULE]... [--ib-virt]
//!          [--lid N] [--sm-lid N] [--device-index N]
//!          [--wire-listen PATH | --wire-connect PATH]
//! mlx5-emu ctl --control PATH '<json request>'
//! ```
//! Prints `mlx5-emu: listening on PATH` to stderr when ready and exits 0 when the
//! client disconnects. `MLX5_EMU_LOG=debug|info|warn` selects the log level.

use mlx5_emu::config::EmuConfig;
use mlx5_emu::device::Device;
use mlx5_emu::dma_map::MappedMemory;
use mlx5_emu::irq::EventFdIrqs;
use mlx5_emu::{control, relay, vfio};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

struct StderrLog(log::LevelFilter);

impl log::Log for StderrLog {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= self.0
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            eprintln!("mlx5-emu: {}: {}", r.level(), r.args());
        }
    }
    fn flush(&self) {}
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: mlx5-emu --socket PATH [--control PATH] [--boot-delay-ms N] [--boot-pages N] \
         [--init-pages N] [--regular-pages N] [--fw-rev A.B.C] [--jitter-us N] [--msix-vectors N] [--strict RULE]... [--ib-virt] \
         [--lid N] [--sm-lid N] [--device-index N] [--wire-listen PATH | --wire-connect PATH]\n       mlx5-emu ctl --control PATH '<json>'"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let level = match std::env::var("MLX5_EMU_LOG").as_deref() {
        Ok("debug") => log::LevelFilter::Debug,
        Ok("info") => log::LevelFilter::Info,
        Ok("error") => log::LevelFilter::Error,
        _ => log::LevelFilter::Warn,
    };
    let logger: &'static StderrLog = Box::leak(Box::new(StderrLog(level)));
    let _ = log::set_logger(logger).map(|()| log::set_max_level(level));

    if args.first().map(String::as_str) == Some("ctl") {
        return ctl(&args[1..]);
    }
    let mut socket = None;
    let mut control_path = None;
    let mut cfg = EmuConfig::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned();
        if let Some(r) = mlx5_emu::config::parse_port_option(&mut cfg, a, &mut val) {
            if r.is_err() {
                return usage();
            }
            continue;
        }
        match a.as_str() {
            "--socket" => socket = val().map(PathBuf::from),
            "--control" => control_path = val().map(PathBuf::from),
            "--boot-delay-ms" | "--boot-pages" | "--init-pages" | "--regular-pages"
            | "--jitter-us" | "--msix-vectors" => {
                let Some(n) = val().and_then(|v| v.parse::<u64>().ok()) else {
                    return usage();
                };
                match a.as_str() {
                    "--boot-delay-ms" => cfg.boot_delay_ms = n,
                    "--boot-pages" => cfg.boot_pages = n as u32,
                    "--init-pages" => cfg.init_pages = n as u32,
                    "--jitter-us" => cfg.jitter_us = n,
                    "--msix-vectors" => match u16::try_from(n) {
                        Ok(v) if (1..=mlx5_emu::config::MAX_MSIX_VECTORS).contains(&v) => {
                            cfg.msix_vectors = v
                        }
                        _ => return usage(),
                    },
                    _ => cfg.regular_pages = n as u32,
                }
            }
            "--ib-virt" => cfg.ib_virt = true,
            "--strict" => {
                if cfg.strict.set(&val().unwrap_or_default(), true).is_err() {
                    return usage();
                }
            }
            "--fw-rev" => {
                let v = val().unwrap_or_default();
                let p: Vec<Option<u16>> = v.split('.').map(|x| x.parse().ok()).collect();
                match p.as_slice() {
                    [Some(a), Some(b), Some(c)] => cfg.fw_rev = (*a, *b, *c),
                    _ => return usage(),
                }
            }
            "-h" | "--help" => return usage(),
            _ => return usage(),
        }
    }
    let Some(socket) = socket else { return usage() };
    let _ = std::fs::remove_file(&socket);

    let mem = Arc::new(MappedMemory::new());
    let irqs = Arc::new(EventFdIrqs::new(usize::from(cfg.msix_vectors)));
    let cfg_msix = cfg.msix_vectors;
    let wire = cfg.wire.clone();
    let dev = Device::new(cfg, mem.clone(), irqs.clone());
    let fw_thread = dev.spawn_firmware();
    if let Some(ep) = &wire {
        if let Err(e) = dev.start_wire(ep) {
            eprintln!("mlx5-emu: cannot start the wire at {ep:?}: {e}");
            return ExitCode::FAILURE;
        }
    }

    if let Some(cp) = &control_path {
        let _ = std::fs::remove_file(cp);
        match std::os::unix::net::UnixListener::bind(cp) {
            Ok(l) => {
                let d = Arc::clone(&dev);
                std::thread::spawn(move || control::serve(d, l));
            }
            Err(e) => {
                eprintln!("mlx5-emu: cannot bind control socket {}: {e}", cp.display());
                return ExitCode::FAILURE;
            }
        }
    }

    // QEMU connects to `socket`, served by the fast path (`relay`); the `vfio_user`
    // crate's server gets the other messages over a private socket next to it.
    let inner_path = {
        let mut p = socket.clone().into_os_string();
        p.push(".crate");
        PathBuf::from(p)
    };
    let _ = std::fs::remove_file(&inner_path);
    let inner_listener = match std::os::unix::net::UnixListener::bind(&inner_path) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mlx5-emu: cannot listen on {}: {e}", inner_path.display());
            return ExitCode::FAILURE;
        }
    };
    let server = vfio_user::Server::from_owned_fd(
        inner_listener.into(),
        true,
        vfio::irqs(cfg_msix),
        vfio::regions(),
    );
    let listener = match std::os::unix::net::UnixListener::bind(&socket) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mlx5-emu: cannot listen on {}: {e}", socket.display());
            let _ = std::fs::remove_file(&inner_path);
            return ExitCode::FAILURE;
        }
    };
    eprintln!("mlx5-emu: listening on {}", socket.display());
    let mut backend = vfio::Backend {
        dev: Arc::clone(&dev),
        mem,
        irqs,
        unreachable_maps: 0,
    };
    let crate_thread = std::thread::Builder::new()
        .name("mlx5-emu-vfio".into())
        .spawn(move || server.run(&mut backend));
    let crate_thread = match crate_thread {
        Ok(t) => t,
        Err(e) => {
            eprintln!("mlx5-emu: cannot start the vfio-user server thread: {e}");
            return ExitCode::FAILURE;
        }
    };
    let inner = std::os::unix::net::UnixStream::connect(&inner_path);
    let _ = std::fs::remove_file(&inner_path);
    let inner = match inner {
        Ok(i) => i,
        Err(e) => {
            // The crate's server still waits for a connection: exit without it.
            eprintln!("mlx5-emu: cannot connect to {}: {e}", inner_path.display());
            let _ = std::fs::remove_file(&socket);
            return ExitCode::FAILURE;
        }
    };
    let relayed = listener
        .accept()
        .and_then(|(client, _)| relay::serve(Arc::clone(&dev), client, inner));
    let _ = std::fs::remove_file(&socket);
    // The crate's server sees its connection close once the relay's end is dropped.
    let served = match crate_thread.join() {
        Ok(r) => r.map_err(|e| format!("{e:?}")),
        Err(_) => Err("the vfio-user server thread panicked".to_string()),
    };
    let res = match (relayed, served) {
        (Err(e), _) => Err(format!("{e}")),
        (Ok(()), Err(e)) => Err(e),
        (Ok(()), Ok(())) => Ok(()),
    };
    dev.shutdown();
    eprintln!("mlx5-emu: final stats: {}", control::stats(&dev));
    let _ = fw_thread.join();
    if let Some(cp) = &control_path {
        let _ = std::fs::remove_file(cp);
    }
    match res {
        Ok(()) => {
            eprintln!("mlx5-emu: client disconnected, exiting");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mlx5-emu: vfio-user server error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn ctl(args: &[String]) -> ExitCode {
    let mut path = None;
    let mut req = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--control" => path = it.next().map(PathBuf::from),
            _ => req = Some(a.clone()),
        }
    }
    let (Some(path), Some(req)) = (path, req) else {
        return usage();
    };
    match control::client(&path, &req) {
        Ok(reply) => {
            println!("{reply}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mlx5-emu ctl: {}: {e}", path.display());
            ExitCode::FAILURE
        }
    }
}
