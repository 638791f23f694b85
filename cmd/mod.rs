// SPDX-License-Identifier: GPL-2.0

//! Command interface: the queue in DMA memory, slots and tokens, mailbox chains,
//! signatures, doorbell, polling and event completion, timeouts and statistics.
//!
//! The protocol logic (mailbox chaining, signatures, tokens, slot bookkeeping, status
//! decoding) is pure `core` code in this folder, host-tested through the `host/`
//! crate; the kernel shell that owns the DMA memory and the doorbell lives here too.
