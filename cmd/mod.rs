// SPDX-License-Identifier: GPL-2.0

//! Command interface: the queue in DMA memory, slots and tokens, mailbox chains,
//! signatures, doorbell, polling and event completion, timeouts and statistics.
//!
//! Pure `core` protocol logic, host-tested through the `host/` crate: [`mailbox`],
//! [`signature`], [`token`], [`slots`], [`status`], [`timeout`], [`stats`],
//! [`command`] (the typed-command trait) and [`commands`] (the commands).
//! Kernel shell: [`dma_blocks`] (mailboxes in DMA memory), [`queue`] (posting and
//! completion; `Hw::exec_cmd` carries typed commands).

// The pure files are shared with the host crate; the driver uses part of their API.
#[allow(dead_code, unreachable_pub)]
pub(crate) mod command;
#[allow(dead_code, unreachable_pub)]
pub(crate) mod entry;
#[allow(dead_code, unreachable_pub)]
pub(crate) mod geometry;
#[allow(dead_code, unreachable_pub)]
pub(crate) mod latency;
#[allow(dead_code, unreachable_pub)]
pub(crate) mod mailbox;
#[allow(dead_code, unreachable_pub)]
pub(crate) mod signature;
#[allow(dead_code, unreachable_pub)]
pub(crate) mod slots;
#[allow(dead_code, unreachable_pub)]
pub(crate) mod stats;
#[allow(dead_code, unreachable_pub)]
pub(crate) mod status;
#[allow(dead_code, unreachable_pub)]
pub(crate) mod timeout;
#[allow(dead_code, unreachable_pub)]
pub(crate) mod token;

#[allow(dead_code, unreachable_pub)]
pub(crate) mod commands;
pub(crate) mod dma_blocks;
pub(crate) mod queue;
pub(crate) mod storm;
