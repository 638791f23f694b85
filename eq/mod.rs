// SPDX-License-Identifier: GPL-2.0

//! Event queues on MSI-X: EQ rings in DMA memory, arming, draining by owner bit,
//! and dispatch of command-completion, page-request, async and completion events.
