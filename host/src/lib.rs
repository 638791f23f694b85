//! Host build of the driver's pure protocol logic.
//!
//! The files under `cmd/`, `pagealloc/` and `eq/` at the repository root
//! are compiled both into the kernel module (declared by the kernel shell's
//! `cmd/mod.rs`, `pagealloc/mod.rs`, ...) and into this crate, with the same
//! module paths (`crate::cmd::mailbox`, ...), so that `cargo test -p
//! mlx5-rs-pure` runs their unit tests on the host. The crate is `no_std`
//! outside of tests so that a file using anything beyond `core` fails to
//! build here as it would in the kernel.
//!
//! A `#[path]` on an inline module in `lib.rs` names the directory its
//! nested file modules are read from (relative to `host/src/`). A `#[path]`
//! on a file module *inside* an inline module would instead resolve through
//! `host/src/cmd/`, which does not exist, and fail.

#![cfg_attr(not(test), no_std)]

/// PRM layouts, shared with the kernel module and the emulator.
#[path = "../../ifc/mod.rs"]
pub mod ifc;

/// Command interface logic (`cmd/`).
#[path = "../../cmd"]
pub mod cmd {
    pub mod command;
    pub mod commands;
    pub mod entry;
    pub mod geometry;
    pub mod latency;
    pub mod mailbox;
    pub mod signature;
    pub mod slots;
    pub mod stats;
    pub mod status;
    pub mod timeout;
    pub mod token;
}

/// Firmware page ledger and reclaim logic (`pagealloc/`).
#[path = "../../pagealloc"]
pub mod pagealloc {
    pub mod batch;
    pub mod ledger;
    pub mod reclaim;
    pub mod request;
}

/// Event queue logic (`eq/`).
#[path = "../../eq"]
pub mod eq {
    pub mod commands;
    pub mod consumer;
    pub mod event;
}

/// Health poll logic (`health/`).
#[path = "../../health"]
pub mod health {
    pub mod buffer;
    pub mod monitor;
}

/// Teardown sequencing decisions (`teardown/`).
#[path = "../../teardown"]
pub mod teardown {
    pub mod plan;
}
