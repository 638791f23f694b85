// SPDX-License-Identifier: GPL-2.0

//! One event queue: its ring in coherent DMA memory, CREATE_EQ / DESTROY_EQ, and
//! draining by owner bit.
//!
//! The ring is `2^log_size` 64-byte entries in 4 KiB coherent pages, each its own
//! allocation (upstream allocates EQ rings as a fragmented buffer,
//! `mlx5_frag_buf_alloc_node` in eq.c `create_map_eq`, so a 512 KiB async EQ needs no
//! high-order allocation), described to the device page by page (`pas[]`,
//! `log_page_size` 0). Every entry's owner byte is
//! set to 1 before CREATE_EQ, so the device's first pass (owner 0) is recognisable
//! ([`EqConsumer`]).
//!
//! [`Eq::drain`] runs in the IRQ thread of the EQ's vector for the control EQs
//! ([`CtlEq`]: command, async, pages, whose events go on to handlers that may sleep),
//! and in the hard IRQ for a completion EQ ([`CompEq`]) on a vector of its own, as
//! upstream's `mlx5_eq_comp_int` (eq.c) calls each CQ's completion handler in the
//! hard IRQ (the RDMA core's kernel consumers expect that context: IB_POLL_SOFTIRQ's
//! `irq_poll_sched` raises its softirq on that CPU's IRQ exit). The two differ only in
//! the state lock: a mutex for [`CtlEq`], an IRQ-disabling spinlock for [`CompEq`].
//! At most [`POLL_BUDGET`]
//! entries per call; for each, the owner byte is read, then `dma_rmb()`, then the
//! rest of the entry; the consumer index is published (UAR + 0x48, no arm) whenever
//! [`SPARE_EQES`](super::consumer::SPARE_EQES) entries were consumed without
//! publishing, and once at the end with an arm (UAR + 0x40). Entries are decoded and
//! validated by [`super::event::decode`]; malformed ones are counted and logged (rate
//! limited), never acted on.
//!
//! Teardown: [`LiveEq`]'s drop marks the EQ dead under its lock (no doorbell and no
//! ring access after that), then sends DESTROY_EQ. The ring itself is freed when the
//! last `Arc<Eq>` goes, which is after the IRQ registration that drains it was freed.
//! If CREATE_EQ or DESTROY_EQ fails the device may still write the ring (a timed-out
//! CREATE_EQ may have created the EQ), so it is handed to [`Hw::bury`] and freed only
//! after bus mastering is off.

use core::sync::atomic::{AtomicU64, Ordering};

use kernel::{
    device::{self, Bound},
    dma::Coherent,
    prelude::*,
    sync::{
        aref::ARef,
        lock::{mutex::MutexBackend, spinlock::SpinLockIrqBackend, Backend, Lock},
        new_mutex, new_spinlock_irq, Arc,
    },
    time::{Instant, Monotonic},
};

use super::{
    commands::{CreateEq, DestroyEq},
    consumer::{log_size_for, EqConsumer, INIT_OWNER, POLL_BUDGET},
    event::{self, decode, Event, Limits, Malformed, EQE_BYTES},
    Dispatch,
};
use crate::{
    coherent_io,
    ffi::dma_rmb,
    hw::Hw,
    ifc::{
        eq::{UAR_EQ_DB_ARM, UAR_EQ_DB_UPDATE},
        eqe::{event_type, Eqe},
    },
    init_seg_io::Regs,
};

/// Offset of the owner byte in an EQE.
const OWNER_OFF: usize = core::mem::offset_of!(Eqe, owner);

/// The UAR an EQ rings: its index (CREATE_EQ `uar_page`) and where it is in BAR 0
/// ([`super::uar::UarGeom::uar_offset`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct EqUar {
    /// UAR index.
    pub(crate) index: u32,
    /// Byte offset of the UAR in BAR 0.
    pub(crate) bar_off: usize,
}

/// Bytes of one `pas[]` page.
const RING_PAGE: usize = 4096;
/// Events of one EQ logged one by one before the log is thinned to every 1000th.
const LOG_FIRST: u64 = 16;

/// Per-EQ statistics (debugfs `eqs`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct EqStats {
    /// Valid EQEs handled.
    pub(crate) eqes: u64,
    /// Malformed EQEs (counted, not acted on).
    pub(crate) malformed: u64,
    /// Drain calls (one per run of the vector's handler).
    pub(crate) drains: u64,
    /// Drains that stopped at the budget with entries possibly left.
    pub(crate) budget_hit: u64,
    /// Largest batch of one drain.
    pub(crate) max_batch: u32,
    /// Consumer-index updates in the middle of a drain (no arm).
    pub(crate) updates: u64,
    /// Arms.
    pub(crate) arms: u64,
    /// Interrupt-to-first-EQE-handled latency: samples, sum and max (ns); for EQs
    /// drained in the IRQ thread (a completion EQ on a vector of its own is drained in
    /// the hard IRQ, which notes no time: none).
    pub(crate) lat_count: u64,
    pub(crate) lat_sum_ns: u64,
    pub(crate) lat_max_ns: u64,
    /// Last malformed reason.
    pub(crate) last_malformed: Option<Malformed>,
}

struct EqState {
    /// `Some` while the device has the EQ (between CREATE_EQ and DESTROY_EQ).
    cons: Option<EqConsumer>,
    eqn: u8,
    stats: EqStats,
}

/// One event queue; `B` is its state lock's kind (see the module doc).
#[pin_data(PinnedDrop)]
pub(crate) struct Eq<B: Backend = MutexBackend> {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    /// Name for logs and debugfs (`cmd`, `async`, `pages`, `comp`).
    pub(crate) name: &'static str,
    /// Index among EQs of the same name (completion EQ number k).
    pub(crate) index: u32,
    /// The ring's 4 KiB pages, in order (emptied by the drop when they are buried).
    ring: KVec<Coherent<[u8]>>,
    log_size: u8,
    uar: EqUar,
    pub(crate) vector: u16,
    /// Event mask given to CREATE_EQ (0 for completion EQs).
    mask: [u64; 4],
    /// Types the decoder accepts: the mask, or COMP for a completion EQ.
    accept: [u64; 4],
    born: Instant<Monotonic>,
    /// Set by the hard-IRQ handler: ns since `born` + 1 (0 = none pending).
    irq_at: AtomicU64,
    /// The device may still write the ring (DESTROY_EQ failed): bury it in [`Hw`].
    leak_ring: core::sync::atomic::AtomicBool,
    /// Lock order: held across a whole drain, so it is taken before every lock a
    /// dispatched event takes: the command queue's (`CmdQueue::state`, completions),
    /// the page-request handler's and the CQ table's (a completion EQ's: the CQ
    /// table's, then the CQ's `CqEvents::shim` and whatever the core's completion
    /// handler takes). Never taken while holding one of those.
    #[pin]
    state: Lock<EqState, B>,
}

/// A control EQ (command, async, pages): drained in its vector's IRQ thread.
pub(crate) type CtlEq = Eq<MutexBackend>;
/// A completion EQ: drained in the hard IRQ of its vector (in the IRQ thread when it
/// shares the control vector, the only vector).
pub(crate) type CompEq = Eq<SpinLockIrqBackend>;

/// The state before CREATE_EQ.
fn new_state() -> EqState {
    EqState {
        cons: None,
        eqn: 0,
        stats: EqStats::default(),
    }
}

/// What one EQ is, for [`Eq::build`].
pub(crate) struct EqSpec {
    /// Name for logs and debugfs (`cmd`, `async`, `pages`, `comp`).
    pub(crate) name: &'static str,
    /// Index among EQs of the same name.
    pub(crate) index: u32,
    /// Events the ring must hold (the spare entries are added).
    pub(crate) nent: u32,
    pub(crate) uar: EqUar,
    /// MSI-X vector.
    pub(crate) vector: u16,
    /// Event mask for CREATE_EQ (0 for a completion EQ).
    pub(crate) mask: [u64; 4],
}

impl CtlEq {
    /// A control EQ; see [`Eq::build`].
    pub(crate) fn new(dev: &device::Device<Bound>, hw: Arc<Hw>, spec: EqSpec) -> Result<Arc<Self>> {
        Self::build(dev, hw, spec, new_mutex!(new_state()))
    }
}

impl CompEq {
    /// Completion EQ `index` (event mask 0: completions only); see [`Eq::build`].
    pub(crate) fn new_comp(
        dev: &device::Device<Bound>,
        hw: Arc<Hw>,
        index: u32,
        nent: u32,
        uar: EqUar,
        vector: u16,
    ) -> Result<Arc<Self>> {
        let spec = EqSpec {
            name: "comp",
            index,
            nent,
            uar,
            vector,
            mask: [0; 4],
        };
        Self::build(dev, hw, spec, new_spinlock_irq!(new_state()))
    }
}

impl<B: Backend> Eq<B> {
    /// Allocates the ring for `spec.nent` events (plus the spare entries) and
    /// initialises every owner byte; the device does not know the EQ yet.
    fn build(
        dev: &device::Device<Bound>,
        hw: Arc<Hw>,
        spec: EqSpec,
        state: impl PinInit<Lock<EqState, B>>,
    ) -> Result<Arc<Self>> {
        let EqSpec {
            name,
            index,
            nent,
            uar,
            vector,
            mask,
        } = spec;
        let log_size = log_size_for(nent).map_err(|_| EINVAL)?;
        let bytes = (1usize << log_size) * EQE_BYTES;
        let npages = bytes.div_ceil(RING_PAGE);
        let mut ring = KVec::with_capacity(npages, GFP_KERNEL)?;
        for _ in 0..npages {
            let page = Coherent::<u8>::zeroed_slice(dev, RING_PAGE, GFP_KERNEL)?;
            // The device does not know the ring yet: nothing accesses it concurrently.
            for k in 0..RING_PAGE / EQE_BYTES {
                // `k * 64 + OWNER_OFF < RING_PAGE`: inside the page.
                coherent_io::write_u8(&page, k * EQE_BYTES + OWNER_OFF, INIT_OWNER)?;
            }
            ring.push(page, GFP_KERNEL)?;
        }
        let accept = if mask == [0; 4] {
            [1u64 << event_type::COMP, 0, 0, 0]
        } else {
            mask
        };
        Arc::pin_init(
            try_pin_init!(Self {
                dev: dev.into(),
                hw,
                name,
                index,
                ring,
                log_size,
                uar,
                vector,
                mask,
                accept,
                born: Instant::<Monotonic>::now(),
                irq_at: AtomicU64::new(0),
                leak_ring: core::sync::atomic::AtomicBool::new(false),
                state <- state,
            }),
            GFP_KERNEL,
        )
    }

    /// log2 of the ring size.
    pub(crate) fn log_size(&self) -> u8 {
        self.log_size
    }

    /// EQ number (valid once created).
    pub(crate) fn eqn(&self) -> u8 {
        self.state.lock().eqn
    }

    /// Whether the device has the EQ (for the test hooks).
    #[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
    pub(crate) fn live(&self) -> bool {
        self.state.lock().cons.is_some()
    }

    /// A copy of the statistics.
    pub(crate) fn stats(&self) -> EqStats {
        self.state.lock().stats
    }

    /// Called in hard-IRQ context before the IRQ thread drains the EQ: remembers when
    /// the interrupt came.
    pub(crate) fn note_irq(&self) {
        let ns = u64::try_from(self.born.elapsed().as_nanos()).unwrap_or(0);
        self.irq_at.store(ns.saturating_add(1), Ordering::Relaxed);
    }

    fn doorbell(&self, arm: bool, value: u32) {
        let off = self.uar.bar_off + if arm { UAR_EQ_DB_ARM } else { UAR_EQ_DB_UPDATE };
        // A failure means the BAR is gone (unbind or surprise removal): nothing to do.
        let _ = self.hw.write(off, value);
    }

    /// CREATE_EQ, then the first arm (consumer index 0).
    fn create(&self) -> Result {
        let mut pages = KVec::with_capacity(self.ring.len(), GFP_KERNEL)?;
        for page in self.ring.iter() {
            pages.push(page.dma_address(), GFP_KERNEL)?;
        }
        // Nothing may fail once the device knows the EQ: validate first.
        EqConsumer::new(0, self.log_size).map_err(|_| EINVAL)?;
        let eqn = match self.hw.exec_cmd(CreateEq {
            log_size: self.log_size,
            uar: self.uar.index,
            vector: self.vector,
            mask: self.mask,
            pages: &pages,
        }) {
            Ok(n) => n,
            Err(e) => {
                let e = Error::from(e.errno());
                // A timeout or an unreadable answer may hide an EQ the device created on
                // this ring (and writes events into): never free it while DMA is on.
                dev_err!(
                    self.dev,
                    "CREATE_EQ ({}) failed ({:?}); its ring is freed only after bus mastering is off\n",
                    self.name,
                    e
                );
                self.leak_ring.store(true, Ordering::Relaxed);
                return Err(e);
            }
        };
        let mut st = self.state.lock();
        // Validated above: the same size cannot fail now.
        let mut cons = EqConsumer::new(eqn, self.log_size).map_err(|_| EINVAL)?;
        st.eqn = eqn;
        self.doorbell(true, cons.publish());
        st.stats.arms += 1;
        st.cons = Some(cons);
        Ok(())
    }

    /// The page holding ring entry `index` and the entry's offset in it, or `None`
    /// outside the ring. Entries never straddle a page (4096 is a multiple of 64).
    fn locate(&self, index: usize) -> Option<(&Coherent<[u8]>, usize)> {
        let at = index.checked_mul(EQE_BYTES)?;
        let page = self.ring.get(at / RING_PAGE)?;
        Some((page, at % RING_PAGE))
    }

    /// Reads the owner byte of ring entry `index` (0 outside the ring, which the
    /// consumer never asks for). The device may write it concurrently: a volatile read.
    fn owner(&self, index: usize) -> u8 {
        self.locate(index)
            .and_then(|(page, at)| coherent_io::read_u8(page, at + OWNER_OFF).ok())
            .unwrap_or(0)
    }

    /// Copies ring entry `index` into `e` (zeroes outside the ring). Called after the
    /// owner byte showed the entry is software's and a DMA read barrier, so the device
    /// no longer writes it. Into the caller's buffer: an entry returned by value was
    /// zeroed, read and then copied once more on every EQE.
    fn read_entry(&self, index: usize, e: &mut [u8; EQE_BYTES]) {
        let read = self
            .locate(index)
            .is_some_and(|(page, at)| coherent_io::read_bytes(page, at, e).is_ok());
        if !read {
            *e = [0; EQE_BYTES];
        }
    }

    /// Drains up to [`POLL_BUDGET`] entries, dispatching each valid one, then arms.
    /// Runs in the IRQ thread ([`CtlEq`], and a [`CompEq`] on the control vector) or
    /// the hard IRQ (a [`CompEq`] on a vector of its own).
    pub(crate) fn drain(&self, d: &Dispatch) {
        let mut st = self.state.lock();
        let EqState { cons, eqn, stats } = &mut *st;
        let Some(cons) = cons.as_mut() else {
            // Not created yet, or being destroyed: the ring is not ours to read.
            return;
        };
        stats.drains += 1;
        let lim = d.limits();
        let mut batch = 0u32;
        let mut e = [0u8; EQE_BYTES];
        while batch < POLL_BUDGET {
            let idx = cons.index();
            if !cons.ready(self.owner(idx)) {
                break;
            }
            // The body must not be read before the owner byte said it is ours.
            dma_rmb();
            self.read_entry(idx, &mut e);
            cons.advance();
            batch += 1;
            if batch == 1 {
                let at = self.irq_at.swap(0, Ordering::Relaxed);
                if at != 0 {
                    let now = u64::try_from(self.born.elapsed().as_nanos()).unwrap_or(0);
                    let lat = now.saturating_sub(at - 1);
                    stats.lat_count += 1;
                    stats.lat_sum_ns = stats.lat_sum_ns.saturating_add(lat);
                    stats.lat_max_ns = stats.lat_max_ns.max(lat);
                }
            }
            match decode(&e, &self.accept, &lim) {
                Ok(ev) => {
                    stats.eqes += 1;
                    self.dispatch(d, *eqn, ev, stats.eqes);
                }
                Err(m) => {
                    stats.malformed += 1;
                    stats.last_malformed = Some(m);
                    if stats.malformed <= LOG_FIRST || stats.malformed % 1000 == 0 {
                        dev_warn!(
                            self.dev,
                            "EQ {} ({}): malformed EQE type {} (0x{:02x}) sub_type 0x{:02x} ignored: {:?} ({} so far)\n",
                            *eqn,
                            self.name,
                            event::event_name(Eqe::from_array(&e).type_),
                            Eqe::from_array(&e).type_,
                            Eqe::from_array(&e).sub_type,
                            m,
                            stats.malformed
                        );
                    }
                }
            }
            if cons.must_publish() {
                self.doorbell(false, cons.publish());
                stats.updates += 1;
            }
        }
        if batch == POLL_BUDGET {
            stats.budget_hit += 1;
        }
        stats.max_batch = stats.max_batch.max(batch);
        if batch == 0 {
            // Nothing new since the last arm: the device can only have disarmed this EQ
            // by writing an entry and interrupting, so it is still armed (this run was for
            // another EQ on the vector, or for entries an earlier run already took).
            return;
        }
        // One arm at the end: the device interrupts again at once if entries are left.
        self.doorbell(true, cons.publish());
        stats.arms += 1;
    }

    fn dispatch(&self, d: &Dispatch, eqn: u8, ev: Event, seen: u64) {
        let chatty = seen <= LOG_FIRST || seen % 1000 == 0;
        match ev {
            Event::Cmd { slots } => self.hw.cmd().complete_slots(slots),
            Event::PageRequest { func_id, num_pages } => d.page_request(eqn, func_id, num_pages),
            Event::PageReleaseAll { func_id } => d.page_release_all(eqn, func_id),
            Event::Comp { cqn } => d.completion(eqn, cqn),
            Event::CqError { cqn, syndrome } => {
                if chatty {
                    dev_warn!(
                        self.dev,
                        "EQ {}: CQ_ERROR on CQ {} syndrome 0x{:02x} ({} async events)\n",
                        eqn,
                        cqn,
                        syndrome,
                        seen
                    );
                }
                d.cq_error(eqn, cqn, syndrome);
            }
            Event::PortChange { port, sub_type } => {
                if chatty {
                    dev_info!(
                        self.dev,
                        "EQ {}: PORT_CHANGE port {} {} ({} async events)\n",
                        eqn,
                        port,
                        event::port_sub_name(sub_type),
                        seen
                    );
                }
                d.port_change(port, sub_type);
            }
            Event::Qp {
                type_,
                rsc_type,
                rsn,
            } => {
                if chatty {
                    dev_info!(
                        self.dev,
                        "EQ {}: {} on resource {:#x} (type {}) ({} async events)\n",
                        eqn,
                        event::event_name(type_),
                        rsn,
                        rsc_type,
                        seen
                    );
                }
                d.qp_event(eqn, type_, rsc_type, rsn);
            }
            Event::Srq { type_, srqn } => {
                if chatty {
                    dev_info!(
                        self.dev,
                        "EQ {}: {} on SRQ {:#x} ({} async events)\n",
                        eqn,
                        event::event_name(type_),
                        srqn,
                        seen
                    );
                }
                d.srq_event(eqn, type_, srqn);
            }
            Event::SyncReset(state) => {
                dev_info!(
                    self.dev,
                    "EQ {}: sync reset event {:?} ({} async events)\n",
                    eqn,
                    state,
                    seen
                );
                d.sync_reset(state);
            }
            Event::Async { type_, sub_type } => {
                if chatty {
                    dev_warn!(
                        self.dev,
                        "EQ {}: async event {} (0x{:02x}) sub_type 0x{:02x} ({} async events)\n",
                        eqn,
                        event::event_name(type_),
                        type_,
                        sub_type,
                        seen
                    );
                }
            }
        }
    }

    /// Stops draining and sends DESTROY_EQ. On failure the ring is kept until DMA stops.
    fn destroy(&self) {
        let eqn = {
            let mut st = self.state.lock();
            if st.cons.take().is_none() {
                return;
            }
            st.eqn
        };
        // No doorbell for this EQ follows (draining stopped above). Our last arm was
        // posted before the DESTROY_EQ doorbell, and PCIe orders posted writes (PCIe
        // base spec, transaction ordering rules), so the device sees it first.
        if let Err(e) = self.hw.exec_cmd(DestroyEq { eqn }) {
            dev_err!(
                self.dev,
                "DESTROY_EQ of EQ {} ({}) failed ({:?}); its ring is freed only after bus mastering is off\n",
                eqn,
                self.name,
                e
            );
            self.leak_ring.store(true, Ordering::Relaxed);
        }
    }
}

#[pinned_drop]
impl<B: Backend> PinnedDrop for Eq<B> {
    fn drop(self: Pin<&mut Self>) {
        // The ring is not structurally pinned: the projection hands it out by `&mut`.
        let this = self.project();
        if this.leak_ring.load(Ordering::Relaxed) {
            // The device may still write it: freed after bus mastering is off.
            for page in core::mem::take(this.ring) {
                this.hw.bury(page);
            }
        }
    }
}

/// An EQ the device knows: DESTROY_EQ on drop.
pub(crate) struct LiveEq<B: Backend = MutexBackend>(Arc<Eq<B>>);

impl<B: Backend> LiveEq<B> {
    /// CREATE_EQ for `eq` and the first arm.
    pub(crate) fn create(eq: Arc<Eq<B>>) -> Result<Self> {
        eq.create()?;
        Ok(Self(eq))
    }

    /// The EQ.
    pub(crate) fn eq(&self) -> &Arc<Eq<B>> {
        &self.0
    }
}

impl<B: Backend> Drop for LiveEq<B> {
    fn drop(&mut self) {
        self.0.destroy();
    }
}

/// Limits the decoder needs, by value.
/// `func`: our page function, `(function_id, embedded_cpu_function)`.
pub(crate) fn limits(nslots: u8, num_ports: u8, log_max_cq: u8, func: (u16, bool)) -> Limits {
    Limits {
        nslots,
        num_ports,
        cqn_limit: 1u32
            .checked_shl(u32::from(log_max_cq))
            .unwrap_or(1 << 24)
            .min(1 << 24),
        func_id: func.0,
        ec_function: func.1,
    }
}
