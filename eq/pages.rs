// SPDX-License-Identifier: GPL-2.0

//! Runtime page requests (EQE 0x0B): from the pages EQ to a work item that gives or
//! takes the requested number of pages for our function.
//!
//! The EQ handler only records the request and queues [`PageWork`] on the unbound
//! system workqueue: the give/take sends MANAGE_PAGES, whose completion arrives on the
//! command EQ, which the same interrupt thread drains, so it must not wait there.
//!
//! The device keeps at most one request outstanding per function until the driver
//! answers it (MANAGE_PAGES give/take or an allocation-failure report). A second
//! request while one is pending breaks that rule: it is logged, counted and ignored.
//! The ledger stays exact because every give and take goes through [`FwPages`], which
//! records each page by DMA address under its lock, whatever commands run meanwhile.
//!
//! Teardown: [`PageWorkStop`] marks the worker stopped (later requests are ignored)
//! and flushes the work item, after the pages EQ was destroyed.

use kernel::{
    device,
    prelude::*,
    sync::{aref::ARef, new_mutex, Arc, Mutex},
    workqueue::{self, impl_has_work, new_work, Work, WorkItem},
};

use crate::{ffi, pagealloc::fw_pages::FwPages};

/// Page-request counters (debugfs `eqs`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PageReqStats {
    /// Requests received.
    pub(crate) requests: u64,
    /// Requests while one was pending (device rule broken), ignored.
    pub(crate) overlapping: u64,
    /// Gives done, pages given.
    pub(crate) gives: u64,
    pub(crate) pages_given: u64,
    /// Takes done, pages taken back.
    pub(crate) takes: u64,
    pub(crate) pages_taken: u64,
    /// Gives or takes that failed (allocation failures are reported to the device).
    pub(crate) failures: u64,
    /// Release-all requests (not supported: logged).
    pub(crate) release_all: u64,
}

struct ReqState {
    pending: Option<i32>,
    stopped: bool,
    stats: PageReqStats,
}

/// The runtime page-request worker of one function.
#[pin_data]
pub(crate) struct PageWork {
    dev: ARef<device::Device>,
    pages: Arc<FwPages>,
    #[pin]
    st: Mutex<ReqState>,
    #[pin]
    work: Work<PageWork>,
}

impl_has_work! {
    impl HasWork<Self> for PageWork { self.work }
}

impl PageWork {
    /// A stopped-free worker for `pages`.
    pub(crate) fn new(dev: &device::Device, pages: Arc<FwPages>) -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                dev: dev.into(),
                pages,
                st <- new_mutex!(ReqState { pending: None, stopped: false, stats: PageReqStats::default() }),
                work <- new_work!("mlx5_rs::page_request"),
            }),
            GFP_KERNEL,
        )
    }

    /// A validated request from EQ `eqn`: positive = give, negative = take.
    pub(crate) fn request(self: &Arc<Self>, eqn: u8, num_pages: i32) {
        let mut st = self.st.lock();
        if st.stopped {
            return;
        }
        st.stats.requests += 1;
        if let Some(p) = st.pending {
            st.stats.overlapping += 1;
            drop(st);
            dev_warn!(
                self.dev,
                "EQ {}: PAGE_REQUEST for {} pages while one for {} is outstanding; ignored\n",
                eqn,
                num_pages,
                p
            );
            return;
        }
        st.pending = Some(num_pages);
        drop(st);
        // Already queued means the pending request will be seen by that run.
        let _ = workqueue::system_unbound().enqueue(self.clone());
    }

    /// Release-all request: not supported yet (the pages stay tracked and are
    /// reclaimed, or reported, at unload).
    pub(crate) fn release_all(&self, eqn: u8) {
        self.st.lock().stats.release_all += 1;
        dev_warn!(self.dev, "EQ {}: PAGE_REQUEST release-all not supported; pages stay tracked\n", eqn);
    }

    /// Counters.
    pub(crate) fn stats(&self) -> PageReqStats {
        self.st.lock().stats
    }

    fn serve(&self, n: i32) {
        let r = if n > 0 {
            let want = u64::from(n.unsigned_abs());
            self.pages.give(want).map(|()| (true, want))
        } else {
            self.pages.take(n.unsigned_abs()).map(|k| (false, u64::from(k)))
        };
        let mut st = self.st.lock();
        match r {
            Ok((true, k)) => {
                st.stats.gives += 1;
                st.stats.pages_given += k;
            }
            Ok((false, k)) => {
                st.stats.takes += 1;
                st.stats.pages_taken += k;
            }
            Err(e) => {
                st.stats.failures += 1;
                drop(st);
                if n > 0 && e == ENOMEM {
                    dev_err!(
                        self.dev,
                        "PAGE_REQUEST give of {} pages failed: out of memory (MANAGE_PAGES allocation failure reported)\n",
                        n
                    );
                } else {
                    dev_err!(
                        self.dev,
                        "PAGE_REQUEST {} of {} pages failed ({:?})\n",
                        if n > 0 { "give" } else { "take" },
                        n.unsigned_abs(),
                        e
                    );
                }
            }
        }
    }
}

impl WorkItem for PageWork {
    type Pointer = Arc<PageWork>;

    fn run(this: Arc<PageWork>) {
        let req = {
            let mut st = this.st.lock();
            if st.stopped {
                st.pending = None;
                return;
            }
            st.pending
        };
        if let Some(n) = req {
            this.serve(n);
            // Cleared after the answer: the device sends no new request before it.
            this.st.lock().pending = None;
        }
    }
}

/// Stops the worker on drop: later requests are ignored, a queued or running one
/// is waited for.
pub(crate) struct PageWorkStop(pub(crate) Arc<PageWork>);

impl Drop for PageWorkStop {
    fn drop(&mut self) {
        self.0.st.lock().stopped = true;
        ffi::flush_work(&self.0.work);
    }
}
