// SPDX-License-Identifier: GPL-2.0

//! Firmware page supply and reclaim: the ledger of pages given to each function,
//! boot/init/runtime supply through MANAGE_PAGES, and reclaim at teardown.
//!
//! Pure `core` logic, host-tested through the `host/` crate: [`ledger`] (which 4 KiB
//! firmware pages of which host pages the device holds), [`batch`] (MANAGE_PAGES sizing,
//! page requests, supply limit), [`reclaim`] (progress-based reclaim decisions),
//! [`request`] (order of runtime page requests and release-all events).
//! Kernel shell: [`store`] (the ledger's RBTree storage, owning the host pages' memory),
//! [`fw_pages`] (allocation, give, reclaim) and [`page_work`] (runtime page requests:
//! the handler the pages EQ is given, `eq::pages::PageRequestHandler`).

// The pure files are shared with the host crate; the driver uses part of their API.
#[allow(dead_code, unreachable_pub)]
pub(crate) mod batch;
#[allow(dead_code, unreachable_pub)]
pub(crate) mod ledger;
#[allow(dead_code, unreachable_pub)]
pub(crate) mod reclaim;
#[allow(dead_code, unreachable_pub)]
pub(crate) mod request;

pub(crate) mod fw_pages;
pub(crate) mod page_work;
pub(crate) mod store;
