// SPDX-License-Identifier: GPL-2.0

//! Event queues on MSI-X: EQ rings in DMA memory, arming, draining by owner bit,
//! and dispatch of command-completion, page-request, async and completion events.
//!
//! Pure `core` logic, host-tested: [`consumer`] (owner bit, consumer index, doorbell
//! cadence), [`event`] (EQE decoding and validation, names, vector assignment).
//! Kernel shell: [`ring`] (one EQ), [`irq`] (vectors and their handlers: threaded for
//! the control vector, hard-IRQ for the completion vectors), [`pages`]
//! (the handler interface page requests go to; the page allocator implements it),
//! [`port`] (the subscriber slot port-change events go to; the IB provider
//! subscribes), [`cq`] (CQ handler table), [`rsc`] (QP / SRQ event handler table),
//! [`commands`] (EQ/UAR commands).
//!
//! [`Events`] is one bring-up stage (after INIT_HCA, before TEARDOWN_HCA). It creates,
//! in order: MSI-X vectors; a UAR (ALLOC_UAR) whose page carries the EQ doorbells; the
//! IRQ handlers; the command EQ, then switches the command interface to events; the
//! async EQ; the pages EQ, whose requests go to the given handler; one completion EQ
//! per online CPU (capped by the vectors and the device's EQ limit). Teardown is the reverse, by field order:
//! completion EQs destroyed, pages EQ destroyed and its handler stopped, async EQ
//! destroyed, commands back to polling, command EQ destroyed (polled), IRQs freed,
//! vectors freed, UAR released.

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod commands;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod consumer;
pub(crate) mod cq;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod event;
pub(crate) mod irq;
pub(crate) mod pages;
pub(crate) mod port;
pub(crate) mod ring;
pub(crate) mod rsc;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod uar;

use core::sync::atomic::{AtomicU64, Ordering};

use kernel::{
    device::{self, Bound},
    fmt, pci,
    prelude::*,
    str::CString,
    sync::{
        aref::ARef,
        lock::{spinlock::SpinLockIrqBackend, Backend},
        Arc,
    },
};

use self::{
    cq::CqTable,
    event::{comp_eq_count, comp_vector, hint_cpu, Limits, ASYNC_MASK, CMD_MASK, PAGES_MASK},
    irq::{Irqs, VectorInfo},
    pages::{PageRequestHandler, PageRequestStop},
    port::PortEvents,
    ring::{CompEq, CtlEq, Eq, EqSpec, LiveEq},
    rsc::{Rsc, RscTable},
};
use crate::{ffi, hw::Hw};
use commands::{AllocUar, DeallocUar};

/// Command EQ entries (upstream `MLX5_NUM_CMD_EQE`).
const CMD_EQ_NENT: u32 = 32;
/// Pages EQ entries.
const PAGES_EQ_NENT: u32 = 1;

/// What the EQ stage needs: device capabilities and the EQ depths.
pub(crate) struct EqCaps {
    /// Async EQ entries: devlink's driverinit `event_eq_size`, by default upstream's
    /// `MLX5_NUM_ASYNC_EQE` (0x1000, include/linux/mlx5/eq.h, as eq.c
    /// `create_async_eqs` reads the parameter). With the 128 spare entries the default
    /// ring is 2^13 entries (512 KiB in 4 KiB pages), as upstream's `create_map_eq`
    /// sizes it; an overrun of the async EQ is fatal on real firmware (health syndrome
    /// 0xc).
    pub(crate) async_nent: u32,
    /// Entries of each completion EQ: devlink's driverinit `io_eq_size`, by default
    /// upstream's `MLX5_COMP_EQ_SIZE` (1024).
    pub(crate) comp_nent: u32,
    pub(crate) num_ports: u8,
    pub(crate) log_max_cq: u8,
    /// EQs the device allows.
    pub(crate) max_eqs: u32,
    /// Where a UAR's doorbells are in BAR 0.
    pub(crate) uar_geom: uar::UarGeom,
}

/// Receives the sync-reset events of the async EQ (GENERAL_EVENT, sub-type
/// PCI_SYNC_FOR_FW_UPDATE), validated. Runs in the async EQ's interrupt thread, which
/// also delivers command completions: it must not send a command or wait for one
/// (it queues work, as upstream's `fw_reset_event_notifier` queues its work items).
pub(crate) trait SyncResetHandler: Send + Sync {
    /// A sync-reset event in state `state`.
    fn sync_reset(&self, state: event::SyncRst);
}

/// What the EQ handlers dispatch to.
pub(crate) struct Dispatch {
    dev: ARef<device::Device>,
    pages: Arc<dyn PageRequestHandler>,
    cqs: Arc<CqTable>,
    ports: Arc<PortEvents>,
    rscs: Arc<RscTable>,
    /// Sync-reset events; `None`: GENERAL_EVENT is not subscribed.
    sync: Option<Arc<dyn SyncResetHandler>>,
    lim: Limits,
    unknown_logged: AtomicU64,
}

impl Dispatch {
    fn limits(&self) -> Limits {
        self.lim
    }

    fn page_request(&self, eqn: u8, _func_id: u16, num_pages: i32) {
        self.pages.clone().request(eqn, num_pages);
    }

    fn page_release_all(&self, eqn: u8, _func_id: u16) {
        self.pages.clone().release_all(eqn);
    }

    fn port_change(&self, port: u8, sub_type: u8) {
        self.ports.deliver(port, sub_type);
    }

    fn sync_reset(&self, state: event::SyncRst) {
        if let Some(h) = self.sync.as_ref() {
            h.sync_reset(state);
        }
    }

    fn cq_error(&self, eqn: u8, cqn: u32, syndrome: u8) {
        if !self.cqs.dispatch_error(cqn, syndrome) {
            dev_warn!(
                self.dev,
                "EQ {}: CQ_ERROR (syndrome {}) for CQ {} with no handler registered; dropped\n",
                eqn,
                syndrome,
                cqn
            );
        }
    }

    fn qp_event(&self, eqn: u8, type_: u8, rsc_type: u8, rsn: u32) {
        if !self.rscs.dispatch(Rsc::of_qp_event(rsc_type, rsn), type_) {
            self.unknown_rsc(eqn, type_, "resource", rsn);
        }
    }

    fn srq_event(&self, eqn: u8, type_: u8, srqn: u32) {
        if !self.rscs.dispatch_srq(srqn, type_) {
            self.unknown_rsc(eqn, type_, "SRQ", srqn);
        }
    }

    fn unknown_rsc(&self, eqn: u8, type_: u8, what: &str, n: u32) {
        let c = self.unknown_logged.fetch_add(1, Ordering::Relaxed);
        if c < 16 || c % 1000 == 0 {
            // Not a device fault: an event may race the resource's destroy.
            dev_info!(
                self.dev,
                "EQ {}: {} event for {} {:#x} with no handler registered; dropped\n",
                eqn,
                event::event_name(type_),
                what,
                n
            );
        }
    }

    fn completion(&self, eqn: u8, cqn: u32) {
        if !self.cqs.dispatch(cqn) {
            let n = self.unknown_logged.fetch_add(1, Ordering::Relaxed);
            if n < 16 || n % 1000 == 0 {
                dev_warn!(
                    self.dev,
                    "EQ {}: COMP event for CQ {} with no handler registered; dropped\n",
                    eqn,
                    cqn
                );
            }
        }
    }
}

/// A CQ handler that only counts (debugfs `gen_comp` test hook).
#[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
struct CountingCq(AtomicU64);

#[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
impl cq::CqHandler for CountingCq {
    fn completion(&self, _cqn: u32) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// Read side of the EQ stage for debugfs: the EQs, counters, and the GEN_EQE hook.
pub(crate) struct EqInfo {
    hw: Arc<Hw>,
    /// The control EQs: command, async, pages.
    eqs: KVec<Arc<CtlEq>>,
    /// The completion EQs, by index.
    comp: KVec<Arc<CompEq>>,
    pages: Arc<dyn PageRequestHandler>,
    cqs: Arc<CqTable>,
    rscs: Arc<RscTable>,
    #[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
    test_cq: Arc<CountingCq>,
    vectors: u32,
    irqs: KVec<VectorInfo>,
}

impl EqInfo {
    /// Writes the `eqs` debugfs file, for scripts: one line per EQ and per vector of
    /// `key=value` pairs, then counters as `key value`.
    pub(crate) fn show(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for eq in self.eqs.iter() {
            show_eq(f, eq)?;
        }
        for eq in self.comp.iter() {
            show_eq(f, eq)?;
        }
        let c = self.hw.cmd().event_counters();
        writeln!(
            f,
            "vectors {}\ncmd_mode {}\ncmd_events {} cmd_event_slots {} cmd_stale {} cmd_event_commands {} cmd_rechecks {}",
            self.vectors,
            if self.hw.cmd().event_mode() { "events" } else { "polling" },
            c.eqes,
            c.slots,
            c.stale,
            c.commands,
            c.rechecks
        )?;
        self.pages.show(f)?;
        for v in self.irqs.iter() {
            match v.hint_cpu {
                Some(cpu) => writeln!(f, "vector={} irq={} hint_cpu={}", v.index, v.irq, cpu)?,
                None => writeln!(f, "vector={} irq={} hint_cpu=none", v.index, v.irq)?,
            }
        }
        let (hit, unknown) = self.rscs.counts();
        writeln!(f, "rsc_dispatched {} rsc_unknown {}", hit, unknown)?;
        let (malformed, stale) = self.cqs.skipped_cqes();
        writeln!(f, "cqe_malformed {} cqe_stale {}", malformed, stale)?;
        let (hit, unknown) = self.cqs.counts();
        write!(f, "cq_dispatched {} cq_unknown {}", hit, unknown)?;
        #[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
        write!(
            f,
            " test_cq_hits {}",
            self.test_cq.0.load(Ordering::Relaxed)
        )?;
        writeln!(f)
    }

    /// Benchmark hook (`cmd_mode`): completion of commands by events (`true`) or polling. Events
    /// only while the command EQ exists. Exclusive, like the switch at bring-up.
    #[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
    pub(crate) fn set_cmd_mode(&self, events: bool) -> Result {
        if events && !self.eqs.iter().any(|e| e.name == "cmd" && e.live()) {
            return Err(ENODEV);
        }
        self.hw.cmd().set_event_mode(events)
    }

    /// Test hook: GEN_EQE of a completion event for `cqn` into completion EQ `k`;
    /// with `register`, the counting test handler is registered for `cqn` first.
    #[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
    pub(crate) fn gen_comp(&self, k: u32, cqn: u32, register: bool) -> Result {
        use crate::ifc::eqe::{event_type, Eqe, EqeComp};
        use commands::GenEqe;
        use zerocopy::byteorder::big_endian::U32;

        let eq = self.comp.iter().find(|e| e.index == k).ok_or(EINVAL)?;
        if !eq.live() {
            return Err(ENODEV);
        }
        if register {
            let h: Arc<dyn cq::CqHandler> = self.test_cq.clone();
            match self.cqs.register(cqn, h) {
                Ok(()) | Err(EEXIST) => {}
                Err(e) => return Err(e),
            }
        } else {
            drop(self.cqs.unregister(cqn));
        }
        let mut e = Eqe::zeroed();
        e.type_ = event_type::COMP;
        e.set_comp(EqeComp {
            rsvd: [0; 24],
            cqn: U32::new(cqn),
        });
        let eqe = e.to_array();
        self.hw.run(GenEqe {
            eqn: eq.eqn(),
            eqe: &eqe,
        })
    }
}

/// One EQ's line of the `eqs` debugfs file.
fn show_eq<B: Backend>(f: &mut fmt::Formatter<'_>, eq: &Eq<B>) -> fmt::Result {
    let s = eq.stats();
    let mean = if s.lat_count > 0 {
        s.lat_sum_ns / s.lat_count
    } else {
        0
    };
    writeln!(
        f,
        "eq={} idx={} eqn={} vec={} log={} eqes={} malformed={} drains={} budget={} batch={} updates={} arms={} irq_mean_ns={} irq_max_ns={}",
        eq.name,
        eq.index,
        eq.eqn(),
        eq.vector,
        eq.log_size(),
        s.eqes,
        s.malformed,
        s.drains,
        s.budget_hit,
        s.max_batch,
        s.updates,
        s.arms,
        mean,
        s.lat_max_ns
    )
}

/// Switches the command interface to events; back to polling on drop.
struct EventMode(Arc<Hw>, ARef<device::Device>);

impl EventMode {
    fn enable(hw: Arc<Hw>, dev: &device::Device) -> Result<Self> {
        hw.cmd().set_event_mode(true)?;
        Ok(Self(hw, dev.into()))
    }
}

impl Drop for EventMode {
    fn drop(&mut self) {
        if let Err(e) = self.0.cmd().set_event_mode(false) {
            dev_err!(self.1, "switching commands back to polling failed ({:?}); waiters fall back to re-checks\n", e);
        }
    }
}

/// The UAR of the core: DEALLOC_UAR on drop.
struct Uar {
    hw: Arc<Hw>,
    index: u32,
    /// Byte offset of the UAR in BAR 0 (set once the geometry placed it).
    bar_off: usize,
}

impl Drop for Uar {
    fn drop(&mut self) {
        // Logged by the command layer on failure; nothing else to undo.
        let _ = self.hw.exec_cmd(DeallocUar { uar: self.index });
    }
}

/// The EQ stage of one function.
///
/// INVARIANT: field order is teardown order (see the module doc): every EQ is
/// destroyed, and the page-request handler stopped, before the IRQs are freed; the IRQs are
/// freed before the vectors (inside [`Irqs`]); the UAR goes last.
pub(crate) struct Events<'bound> {
    comp: KVec<LiveEq<SpinLockIrqBackend>>,
    _pages_eq: LiveEq,
    _page_stop: PageRequestStop,
    _async_eq: LiveEq,
    _event_mode: EventMode,
    _cmd_eq: LiveEq,
    /// `None` once [`Events::free_irqs`] ran (PCI shutdown).
    irqs: Option<Irqs<'bound>>,
    uar: Uar,
    info: Arc<EqInfo>,
    ports: Arc<PortEvents>,
    cqs: Arc<CqTable>,
    rscs: Arc<RscTable>,
}

/// What a CQ owner (the IB provider) needs of the EQ stage: the completion EQs by
/// vector, the UAR page the core rings doorbells on (kernel CQs arm there, as
/// upstream's kernel CQs use the core's UAR), and the CQN → handler table the
/// completion EQs dispatch through.
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_INFINIBAND)),
    expect(dead_code, reason = "used by the InfiniBand provider only")
)]
pub(crate) struct CqAccess {
    /// EQ number of completion vector k at index k.
    pub(crate) comp_eqns: KVec<u8>,
    /// The core's UAR page index.
    pub(crate) uar: u32,
    /// Byte offset of that UAR in BAR 0 (kernel CQ arm and kernel QP send doorbells).
    pub(crate) uar_bar_off: usize,
    /// The completion handler table.
    pub(crate) table: Arc<CqTable>,
}

impl<'bound> Events<'bound> {
    /// Brings the EQs up (see the module doc); page requests go to `pages`, and, with
    /// `sync`, sync-reset events to it (the async EQ then subscribes GENERAL_EVENT, as
    /// upstream's `gather_async_events_mask` does with cap `general_notification_event`).
    pub(crate) fn new(
        pdev: &'bound pci::Device<Bound>,
        hw: Arc<Hw>,
        pages: Arc<dyn PageRequestHandler>,
        caps: &EqCaps,
        sync: Option<Arc<dyn SyncResetHandler>>,
    ) -> Result<Self> {
        let dev: &device::Device<Bound> = pdev.as_ref();
        let cpus = ffi::num_online_cpus();
        let mut irqs = Irqs::alloc(pdev, cpus.saturating_add(1))?;
        let vectors = irqs.len();
        let ncomp = comp_eq_count(cpus, vectors, caps.max_eqs);
        let mut uar = Uar {
            index: hw.run(AllocUar)?,
            hw: hw.clone(),
            bar_off: 0,
        };
        uar.bar_off = usize::try_from(caps.uar_geom.uar_offset(uar.index)).map_err(|_| EINVAL)?;
        // The kernel's doorbells go to this UAR's page only: map it (the rest of BAR 0
        // stays unmapped in the kernel, `hw.rs`).
        hw.map_kernel_uar(pdev, uar.bar_off)?;
        let eq_uar = ring::EqUar {
            index: uar.index,
            bar_off: uar.bar_off,
        };

        let cmd = CtlEq::new(
            dev,
            hw.clone(),
            EqSpec {
                name: "cmd",
                index: 0,
                nent: CMD_EQ_NENT,
                uar: eq_uar,
                vector: 0,
                mask: [CMD_MASK, 0, 0, 0],
            },
        )?;
        let async_mask = if sync.is_some() {
            ASYNC_MASK | event::GENERAL_EVENT_BIT
        } else {
            ASYNC_MASK
        };
        let asy = CtlEq::new(
            dev,
            hw.clone(),
            EqSpec {
                name: "async",
                index: 0,
                nent: caps.async_nent,
                uar: eq_uar,
                vector: 0,
                mask: [async_mask, 0, 0, 0],
            },
        )?;
        let pg = CtlEq::new(
            dev,
            hw.clone(),
            EqSpec {
                name: "pages",
                index: 0,
                nent: PAGES_EQ_NENT,
                uar: eq_uar,
                vector: 0,
                mask: [PAGES_MASK, 0, 0, 0],
            },
        )?;
        let mut comps = KVec::new();
        for k in 0..ncomp {
            let v = u16::try_from(comp_vector(k, vectors)).map_err(|_| EINVAL)?;
            comps.push(
                CompEq::new_comp(dev, hw.clone(), k, caps.comp_nent, eq_uar, v)?,
                GFP_KERNEL,
            )?;
        }

        let func = pages.function();
        let cqs = CqTable::new()?;
        let ports = PortEvents::new()?;
        let rscs = RscTable::new()?;
        let lim = ring::limits(hw.cmd().nslots(), caps.num_ports, caps.log_max_cq, func);
        let d = Arc::new(
            Dispatch {
                dev: dev.into(),
                pages: pages.clone(),
                cqs: cqs.clone(),
                ports: ports.clone(),
                rscs: rscs.clone(),
                sync,
                lim,
                unknown_logged: AtomicU64::new(0),
            },
            GFP_KERNEL,
        )?;

        // Handlers before the EQs exist: a drain of an EQ not yet created does nothing,
        // and the device interrupts only after the first arm.
        for v in 0..vectors {
            let mut eqs = KVec::new();
            if v == 0 {
                eqs.push(cmd.clone(), GFP_KERNEL)?;
                eqs.push(asy.clone(), GFP_KERNEL)?;
                eqs.push(pg.clone(), GFP_KERNEL)?;
            }
            let mut on_v = KVec::new();
            for c in comps.iter().filter(|c| u32::from(c.vector) == v) {
                on_v.push(c.clone(), GFP_KERNEL)?;
            }
            if eqs.is_empty() && on_v.is_empty() {
                continue;
            }
            // Named after the function, as upstream's `mlx5_comp<n>@pci:<address>`, so
            // the vectors of several functions are told apart (/proc/interrupts).
            let name = if v == 0 {
                CString::try_from_fmt(fmt!("mlx5_rs_ctrl@pci:{}", dev.name()))?
            } else {
                CString::try_from_fmt(fmt!("mlx5_rs_comp{}@pci:{}", v - 1, dev.name()))?
            };
            irqs.request(dev, v, name, eqs, on_v, d.clone(), hint_cpu(v, vectors))?;
        }

        let cmd_eq = LiveEq::create(cmd.clone())?;
        let event_mode = EventMode::enable(hw.clone(), dev)?;
        let async_eq = LiveEq::create(asy.clone())?;
        let page_stop = PageRequestStop(pages.clone());
        let pages_eq = LiveEq::create(pg.clone())?;
        let mut comp = KVec::with_capacity(comps.len(), GFP_KERNEL)?;
        for c in comps.iter() {
            comp.push(LiveEq::create(c.clone())?, GFP_KERNEL)?;
        }

        let mut ctl = KVec::with_capacity(3, GFP_KERNEL)?;
        ctl.push(cmd, GFP_KERNEL)?;
        ctl.push(asy, GFP_KERNEL)?;
        ctl.push(pg, GFP_KERNEL)?;
        let info = Arc::new(
            EqInfo {
                hw: hw.clone(),
                eqs: ctl,
                comp: comps,
                pages,
                cqs: cqs.clone(),
                rscs: rscs.clone(),
                #[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
                test_cq: Arc::new(CountingCq(AtomicU64::new(0)), GFP_KERNEL)?,
                vectors,
                irqs: irqs.info()?,
            },
            GFP_KERNEL,
        )?;
        dev_info!(
            pdev,
            "EQs up: {} MSI-X vector(s), command EQ {} (commands now by event), async EQ {}, pages EQ {}, {} completion EQ(s)\n",
            vectors,
            cmd_eq.eq().eqn(),
            async_eq.eq().eqn(),
            pages_eq.eq().eqn(),
            comp.len()
        );
        Ok(Self {
            comp,
            _pages_eq: pages_eq,
            _page_stop: page_stop,
            _async_eq: async_eq,
            _event_mode: event_mode,
            _cmd_eq: cmd_eq,
            irqs: Some(irqs),
            uar,
            info,
            ports,
            cqs,
            rscs,
        })
    }

    /// Frees every IRQ and the MSI-X vectors (`pci_free_irq_vectors`, which disables
    /// MSI-X), leaving the EQs as they are: PCI shutdown after fast or force teardown,
    /// as upstream's `mlx5_core_eq_free_irqs` (eq.c → `mlx5_irq_table_free_irqs`), so the
    /// vectors can be allocated again after kexec. Returns how many vectors were
    /// allocated (0 when already freed). The EQs get no interrupt and no drain after
    /// this; the device was stopped or its HCA closed before.
    pub(crate) fn free_irqs(&mut self) -> u32 {
        // Dropping `Irqs` clears the hints, frees each IRQ (waiting for a running
        // handler thread), then the vectors.
        self.irqs.take().map_or(0, |i| i.len())
    }

    /// The read side, for debugfs.
    pub(crate) fn info(&self) -> Arc<EqInfo> {
        self.info.clone()
    }

    /// Where port-change events of the async EQ go (see [`port`]).
    #[cfg_attr(
        not(CONFIG_MLX5_RS_INFINIBAND),
        expect(dead_code, reason = "the IB provider subscribes")
    )]
    pub(crate) fn port_events(&self) -> &Arc<PortEvents> {
        &self.ports
    }

    /// Where QP and SRQ events of the async EQ go (see [`rsc`]).
    #[cfg_attr(
        not(CONFIG_MLX5_RS_INFINIBAND),
        expect(dead_code, reason = "the IB provider registers QPs and SRQs")
    )]
    pub(crate) fn rsc_table(&self) -> &Arc<RscTable> {
        &self.rscs
    }

    /// Number of completion EQs (one completion vector each for the IB provider).
    #[cfg_attr(
        not(CONFIG_MLX5_RS_INFINIBAND),
        expect(dead_code, reason = "the IB provider subscribes")
    )]
    pub(crate) fn comp_eqs(&self) -> u32 {
        // A KVec of at most the vector count (u32): lossless.
        self.comp.len() as u32
    }

    /// The completion EQs, the core's UAR and the CQ handler table (see [`CqAccess`]).
    #[cfg_attr(
        not(CONFIG_MLX5_RS_INFINIBAND),
        expect(dead_code, reason = "the IB provider creates CQs")
    )]
    pub(crate) fn cq_access(&self) -> Result<CqAccess> {
        let mut comp_eqns = KVec::with_capacity(self.comp.len(), GFP_KERNEL)?;
        for c in self.comp.iter() {
            comp_eqns.push(c.eq().eqn(), GFP_KERNEL)?;
        }
        Ok(CqAccess {
            comp_eqns,
            uar: self.uar.index,
            uar_bar_off: self.uar.bar_off,
            table: self.cqs.clone(),
        })
    }
}
