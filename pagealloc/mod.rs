// SPDX-License-Identifier: GPL-2.0

//! Firmware page supply and reclaim: the ledger of pages given to each function,
//! boot/init/runtime supply through MANAGE_PAGES, and reclaim at teardown.

pub(crate) mod fw_pages;
