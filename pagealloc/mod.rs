// SPDX-License-Identifier: GPL-2.0

//! Firmware page supply and reclaim: the ledger of pages given to each function,
//! boot/init/runtime supply through MANAGE_PAGES, and reclaim at teardown.
//!
//! Pure `core` logic, host-tested through the `host/` crate: [`ledger`] (which 4 KiB
//! firmware pages of which host memory blocks the device holds), [`block_size`] (the
//! size of the next block: 2 MiB down to one host page), [`batch`] (MANAGE_PAGES sizing,
//! page requests, supply limit), [`reclaim`] (progress-based reclaim decisions),
//! [`request`] (order of runtime page requests and release-all events).
//! Kernel shell: [`store`] (the ledger's RBTree storage, owning the host pages' memory),
//! [`fw_pages`] (allocation, give, reclaim) and [`page_work`] (runtime page requests:
//! the handler the pages EQ is given, `eq::pages::PageRequestHandler`).

// The pure files are shared with the host crate (`host/`), where their items are `pub`.
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod batch;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod block_size;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod ledger;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod reclaim;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod request;

pub(crate) mod fw_pages;
pub(crate) mod page_work;
pub(crate) mod store;
