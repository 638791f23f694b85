// SPDX-License-Identifier: GPL-2.0

//! Command interface: the queue in DMA memory, slots and tokens, mailbox chains,
//! signatures, doorbell, polling and event completion, timeouts and statistics.
//!
//! Pure `core` protocol logic, host-tested through the `host/` crate: [`mailbox`],
//! [`signature`], [`token`], [`slots`], [`status`], [`timeout`], [`stats`],
//! [`command`] (the typed-command trait) and [`commands`] (the commands).
//! Kernel shell: [`dma_blocks`] (mailboxes in DMA memory), [`queue`] (posting and
//! completion; `Hw::exec_cmd` carries typed commands).

// The pure files are shared with the host crate (`host/`), where their items are `pub`.
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod command;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod entry;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod geometry;
// Latency figures of the `nop_storm` test hook.
#[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod latency;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod mailbox;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod signature;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod slots;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod stats;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod status;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod timeout;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod token;

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod commands;
pub(crate) mod dma_blocks;
pub(crate) mod queue;
// Only the debugfs `nop_storm` test hook runs storms.
#[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
pub(crate) mod storm;
