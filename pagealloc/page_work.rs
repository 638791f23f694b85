// SPDX-License-Identifier: GPL-2.0

//! Runtime page requests (EQE 0x0B): from the pages EQ to a work item that gives or
//! takes the requested number of pages for our function, or frees every page of it
//! when the device released them all.
//!
//! [`PageWork`] is the [`PageRequestHandler`] the page allocator gives the EQ stage
//! (`eq/` knows only that interface). The handler only records the event and queues
//! [`PageWork`] on the default unbound system workqueue (`system_dfl_wq`): the
//! give/take sends MANAGE_PAGES, whose completion arrives on the command EQ, which the
//! same interrupt thread drains, so it must not wait there (nor for the ledger lock,
//! which a give holds across its command).
//!
//! Every well-formed request is answered, in arrival order, however many are
//! outstanding: the pure [`RequestQueue`] (host-tested) keeps each one as its own item
//! in a ring of [`QUEUE_CAPACITY`], as upstream queues one work item per event on an
//! ordered workqueue. A give supplies exactly the pages asked for (in several
//! MANAGE_PAGES when the mailbox chain is full); a take asks for at most
//! [`MAX_RECLAIM_NPAGES`] per request, as upstream's `req_pages_handler` clamps it, and
//! the device asks again for the rest. A release-all runs before queued give/take
//! requests and after one being answered. A release-all sends no command:
//! [`FwPages`] forgets and frees every page of the function (DMA unmap + free), so its
//! ledger is exact (0) and teardown later reclaims only pages given after it. The
//! ledger stays exact in every order because every give, take and release goes through
//! [`FwPages`] under its lock.
//!
//! Answers carry the request's `function_id` and `ec_function`: the decoder admits
//! only requests naming our function and embedded-CPU bit, which [`FwPages`] sends.
//!
//! Teardown: the EQ stage calls [`PageRequestHandler::stop`] after the pages EQ was
//! destroyed: it stops the queue (later events are ignored) and flushes the work item;
//! requests admitted before are still answered in that flush, as upstream's
//! `mlx5_pagealloc_stop` flushes its workqueue
//! before TEARDOWN_HCA (on a dead device their commands fail at once). A release-all
//! admitted before also runs: without it reclaim would ask the device for pages it no
//! longer has.

use kernel::{
    device, fmt,
    prelude::*,
    sync::{aref::ARef, new_mutex, Arc, Mutex},
    workqueue::{impl_has_work, new_work, Work, WorkItem},
};

use super::{
    batch::PageRequest,
    fw_pages::{FwPages, Supply},
    request::{Job, Refused, RequestQueue, QUEUE_CAPACITY},
};
use crate::{eq::pages::PageRequestHandler, ffi, ifc::pages::MAX_RECLAIM_NPAGES};

/// Page-request counters (debugfs `eqs`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PageReqStats {
    /// Give/take requests received.
    pub(crate) requests: u64,
    /// Requests refused because the queue was full (logged; never silently dropped).
    pub(crate) refused: u64,
    /// Requests queued and not yet started.
    pub(crate) queued: u64,
    /// Gives done, pages given.
    pub(crate) gives: u64,
    pub(crate) pages_given: u64,
    /// Takes done, pages taken back.
    pub(crate) takes: u64,
    pub(crate) pages_taken: u64,
    /// Gives or takes that failed (allocation failures are reported to the device).
    pub(crate) failures: u64,
    /// Release-all requests received.
    pub(crate) release_all: u64,
    /// Pages freed by release-all requests, without MANAGE_PAGES.
    pub(crate) pages_released: u64,
}

struct ReqState {
    queue: RequestQueue<KVVec<i32>>,
    stats: PageReqStats,
}

/// The runtime page-request worker of one function.
#[pin_data]
pub(crate) struct PageWork {
    dev: ARef<device::Device>,
    pages: Arc<FwPages>,
    /// Lock order: a leaf, taken under the pages EQ's `Eq::state` (events); no other
    /// lock is taken while it is held, and it is never held across a command.
    #[pin]
    st: Mutex<ReqState>,
    #[pin]
    work: Work<PageWork>,
}

impl_has_work! {
    impl HasWork<Self> for PageWork { self.work }
}

impl PageWork {
    /// An idle worker for `pages`.
    pub(crate) fn new(dev: &device::Device, pages: Arc<FwPages>) -> Result<Arc<Self>> {
        // 32 KiB: kvmalloc'ed (vmalloc when no order-3 block is free), so that a
        // fragmented system does not fail the probe here.
        let ring = KVVec::from_elem(0i32, QUEUE_CAPACITY, GFP_KERNEL).inspect_err(|_| {
            dev_err!(dev, "out of memory for the page-request queue\n");
        })?;
        Arc::pin_init(
            pin_init!(Self {
                dev: dev.into(),
                pages,
                st <- new_mutex!(ReqState { queue: RequestQueue::new(ring), stats: PageReqStats::default() }),
                work <- new_work!("mlx5_rs::page_request"),
            }),
            GFP_KERNEL,
        )
    }

    /// Counters.
    pub(crate) fn stats(&self) -> PageReqStats {
        let st = self.st.lock();
        PageReqStats {
            queued: st.queue.queued() as u64,
            ..st.stats
        }
    }

    fn release(&self, events: u32) {
        let n = self.pages.released_by_device();
        self.st.lock().stats.pages_released += n;
        let c = self.pages.counts();
        dev_info!(
            self.dev,
            "PAGE_REQUEST release-all ({} event(s)): device dropped all pages of function 0; freed {} firmware pages without MANAGE_PAGES ({} since bring-up), {} held\n",
            events,
            n,
            c.released_by_device,
            c.held
        );
    }

    fn serve(&self, n: i32) {
        // A take asks for at most MAX_RECLAIM_NPAGES (upstream `req_pages_handler`);
        // the device asks again for the rest.
        let r = match PageRequest::from_num_pages(n) {
            PageRequest::Give(k) => self
                .pages
                .give(u64::from(k), Supply::Event)
                .map(|()| (true, u64::from(k))),
            PageRequest::Take(k) => {
                if n.unsigned_abs() > MAX_RECLAIM_NPAGES {
                    dev_info!(
                        self.dev,
                        "PAGE_REQUEST take of {} pages: asking for {} (per-request cap); the device asks again for the rest\n",
                        n.unsigned_abs(),
                        k
                    );
                }
                self.pages.take(k).map(|got| (false, u64::from(got)))
            }
            // Never queued (the decoder rejects 0) and release-all is its own job.
            PageRequest::None | PageRequest::ReleaseAll => Ok((n > 0, 0)),
        };
        let mut st = self.st.lock();
        // Answered (or failed): the device may send the next request now.
        st.queue.done();
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
        loop {
            // Taken under the lock, run without it: a give or take sleeps on commands.
            let job = this.st.lock().queue.next_job();
            match job {
                None => return,
                Some(Job::ReleaseAll { events }) => this.release(events),
                Some(Job::Serve(n)) => this.serve(n),
            }
        }
    }
}

impl PageRequestHandler for PageWork {
    fn function(&self) -> (u16, bool) {
        self.pages.function()
    }

    /// A validated request from EQ `eqn`: positive = give, negative = take.
    fn request(self: Arc<Self>, eqn: u8, num_pages: i32) {
        let mut st = self.st.lock();
        let r = st.queue.on_request(num_pages);
        match r {
            Err(Refused::Stopped) => return,
            Ok(()) => st.stats.requests += 1,
            Err(Refused::Full { queued }) => {
                st.stats.requests += 1;
                st.stats.refused += 1;
                let refused = st.stats.refused;
                drop(st);
                if refused <= 16 || refused % 1000 == 0 {
                    dev_err!(
                        self.dev,
                        "EQ {}: PAGE_REQUEST for {} pages not queued: {} requests already wait for an answer ({} refused so far)\n",
                        eqn,
                        num_pages,
                        queued,
                        refused
                    );
                }
                return;
            }
        }
        drop(st);
        // Already queued means the queued run will see it.
        let _ = crate::ffi::system_dfl().enqueue(self);
    }

    /// A validated release-all request from EQ `eqn`: the device dropped every page of
    /// our function. Freed by the work item (the ledger lock may be held by a give
    /// waiting for its command completion, which this thread delivers).
    fn release_all(self: Arc<Self>, eqn: u8) {
        let mut st = self.st.lock();
        if st.queue.on_release_all().is_err() {
            return;
        }
        st.stats.release_all += 1;
        let serving = st.queue.serving();
        drop(st);
        if let Some(n) = serving {
            dev_info!(
                self.dev,
                "EQ {}: PAGE_REQUEST release-all while the request for {} pages is being answered; freeing after it\n",
                eqn,
                n
            );
        }
        let _ = crate::ffi::system_dfl().enqueue(self);
    }

    /// Stops the worker: later events are ignored; queued give/take requests are
    /// answered and a pending release-all run in the flush (upstream flushes its page
    /// workqueue the same way).
    fn stop(&self) {
        self.st.lock().queue.stop();
        // Nothing queues the work after the stop: both entry points refuse.
        ffi::flush_work(&self.work);
    }

    fn show(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.stats();
        writeln!(
            f,
            "page_requests {} refused {} queued {} gives {} pages_given {} takes {} pages_taken {} failures {} release_all {} pages_released {}",
            p.requests, p.refused, p.queued, p.gives, p.pages_given, p.takes, p.pages_taken, p.failures, p.release_all, p.pages_released
        )
    }
}
