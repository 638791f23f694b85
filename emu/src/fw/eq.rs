//! Event queues: ring geometry from the EQ context, EQE writing with the owner bit,
//! consumer index and arming from UAR doorbells, interrupts and overrun.
//!
//! Overrun: a command-completion event waits (queued) until the EQ has room; any other
//! event is lost and counted when the EQ is full. Our choice, more permissive than real
//! firmware, which treats an overrun as an error (health syndrome 0x0c, mlx5_ifc.h
//! `MLX5_INITIAL_SEG_HEALTH_SYNDROME_ASYNCHRONOUS_EQ_BUF_OVERRUN`); see emu/README.md.
//!
//! Owner bit of EQE *i* = bit log_size of the producer index (upstream `next_eqe_sw`);
//! the body is written before the owner byte. An interrupt is raised only when armed
//! (arm doorbell, UAR offset 0x40; update-only doorbell at 0x48: upstream `eq_update_ci`),
//! at once if entries are outstanding when armed.
//!
//! Interrupt latency as the device sees it, for any driver: from raising an EQ's MSI-X
//! vector to the driver's next consumer-index doorbell (update or arm) of that EQ, per
//! EQ in a fixed-size histogram ([`LatencyHist`]).

use super::latency::LatencyHist;
use crate::ifc::eq::{eq_doorbell, EQE_SIZE};
use crate::ifc::eqe::{event_type, Eqe};
use crate::irq::IrqSink;
use crate::mem::{DmaError, GuestMemory};
use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

/// One event queue.
#[derive(Clone, Debug)]
pub struct Eq {
    /// EQ number.
    pub eqn: u8,
    /// log2 of the number of entries.
    pub log_size: u8,
    /// UAR page whose doorbells drive this EQ.
    pub uar_page: u32,
    /// MSI-X vector.
    pub intr: u16,
    /// Buffer page size is 4096 << log_page_size.
    pub log_page_size: u8,
    /// Buffer pages.
    pub pas: Vec<u64>,
    /// Subscribed event types (four 64-bit words).
    pub mask: [u64; 4],
    /// Producer index (entries written).
    pub pi: u32,
    /// Consumer index as last published (24 bits).
    pub ci: u32,
    /// An interrupt is raised for the next EQE.
    pub armed: bool,
    /// EQEs written.
    pub eqes: u64,
    /// Events lost to overrun.
    pub lost: u64,
    /// Interrupts raised.
    pub interrupts: u64,
    /// The oldest interrupt not yet followed by a doorbell of this EQ.
    pub irq_at: Option<Instant>,
    /// Interrupt → next consumer-index doorbell of this EQ.
    pub irq_to_doorbell: LatencyHist,
}

impl Eq {
    /// A fresh EQ (nothing written, not armed).
    pub fn new(
        eqn: u8,
        log_size: u8,
        uar_page: u32,
        intr: u16,
        log_page_size: u8,
        pas: Vec<u64>,
        mask: [u64; 4],
    ) -> Self {
        Eq {
            eqn,
            log_size,
            uar_page,
            intr,
            log_page_size,
            pas,
            mask,
            pi: 0,
            ci: 0,
            armed: false,
            eqes: 0,
            lost: 0,
            interrupts: 0,
            irq_at: None,
            irq_to_doorbell: LatencyHist::default(),
        }
    }

    /// Raises this EQ's vector; the time is kept (if delivered) for the latency figure.
    fn interrupt(&mut self, irq: &dyn IrqSink) {
        self.interrupts += 1;
        if irq.fire(self.intr) && self.irq_at.is_none() {
            self.irq_at = Some(Instant::now());
        }
    }

    /// A consumer-index doorbell arrived at `at`: closes the pending interrupt's interval.
    fn doorbell_seen(&mut self, at: Instant) {
        if let Some(t) = self.irq_at.take() {
            let ns = at.saturating_duration_since(t).as_nanos();
            self.irq_to_doorbell
                .record(u64::try_from(ns).unwrap_or(u64::MAX));
        }
    }

    /// Number of entries.
    pub fn nent(&self) -> u32 {
        1u32 << self.log_size
    }

    /// Entries written but not yet consumed.
    pub fn outstanding(&self) -> u32 {
        self.pi.wrapping_sub(self.ci) & 0xff_ffff
    }

    /// True if no entry is free.
    pub fn full(&self) -> bool {
        self.outstanding() >= self.nent()
    }

    /// True if event type `t` is routed to this EQ.
    pub fn subscribed(&self, t: u8) -> bool {
        let w = usize::from(t / 64);
        self.mask
            .get(w)
            .is_some_and(|m| m & (1u64 << (t % 64)) != 0)
    }

    fn entry_addr(&self, index: u32) -> Option<u64> {
        let off = u64::from(index & (self.nent() - 1)) * EQE_SIZE as u64;
        let page = 4096u64 << self.log_page_size;
        let base = self.pas.get(usize::try_from(off / page).ok()?)?;
        Some(base + off % page)
    }
}

/// Outcome of posting an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Posted {
    /// Written into this EQ.
    Written(u8),
    /// Queued until the EQ has room (command completions only).
    Queued(u8),
    /// Lost: EQ full.
    Lost(u8),
    /// No EQ subscribes to this event type.
    NoEq,
    /// Writing the EQE failed (unmapped buffer).
    Dma(DmaError),
}

/// All EQs of the function.
#[derive(Debug, Default)]
pub struct EqTable {
    /// EQs by number.
    pub eqs: BTreeMap<u8, Eq>,
    /// Command-completion EQEs waiting for room: (eqn, data).
    pub waiting: VecDeque<(u8, [u8; 28])>,
    /// Interrupts raised per vector.
    pub irqs_per_vector: BTreeMap<u16, u64>,
    /// Doorbells that named an unknown EQ or the wrong UAR page.
    pub bad_doorbells: u64,
    /// Events lost to a full EQ, all EQs, ever (survives DESTROY_EQ).
    pub lost_total: u64,
}

impl EqTable {
    /// Lowest free EQ number.
    pub fn free_eqn(&self) -> Option<u8> {
        (0..=u8::MAX).find(|n| !self.eqs.contains_key(n))
    }

    /// The EQ receiving events of type `t`.
    pub fn route(&self, t: u8) -> Option<u8> {
        self.eqs.values().find(|e| e.subscribed(t)).map(|e| e.eqn)
    }

    #[allow(clippy::too_many_arguments)]
    fn write_eqe(
        &mut self,
        eqn: u8,
        t: u8,
        sub: u8,
        data: &[u8; 28],
        mem: &dyn GuestMemory,
        irq: &dyn IrqSink,
        msix_ok: bool,
    ) -> Posted {
        let Some(eq) = self.eqs.get_mut(&eqn) else {
            return Posted::NoEq;
        };
        if eq.full() {
            return Posted::Lost(eqn);
        }
        let Some(addr) = eq.entry_addr(eq.pi) else {
            return Posted::Dma(DmaError {
                addr: 0,
                len: EQE_SIZE,
            });
        };
        let mut e = Eqe::zeroed();
        e.type_ = t;
        e.sub_type = sub;
        e.data = *data;
        let eqe = e.to_array();
        let owner_off = std::mem::offset_of!(Eqe, owner);
        let owner = ((eq.pi >> eq.log_size) & 1) as u8;
        // Body first, owner byte last, so the driver never sees a half-written EQE.
        if let Err(e) = mem.write(addr, &eqe[..owner_off]) {
            return Posted::Dma(e);
        }
        if let Err(e) = mem.write(addr + owner_off as u64, &[owner]) {
            return Posted::Dma(e);
        }
        eq.pi = eq.pi.wrapping_add(1);
        eq.eqes += 1;
        if eq.armed && msix_ok {
            eq.armed = false;
            eq.interrupt(irq);
            *self.irqs_per_vector.entry(eq.intr).or_default() += 1;
        }
        Posted::Written(eqn)
    }

    /// Posts an event to the EQ subscribed to `t`.
    pub fn post(
        &mut self,
        t: u8,
        sub: u8,
        data: &[u8; 28],
        mem: &dyn GuestMemory,
        irq: &dyn IrqSink,
        msix_ok: bool,
    ) -> Posted {
        let Some(eqn) = self.route(t) else {
            return Posted::NoEq;
        };
        self.post_to(eqn, t, sub, data, mem, irq, msix_ok)
    }

    /// Posts an event to a given EQ (GEN_EQE, routing already done).
    #[allow(clippy::too_many_arguments)]
    pub fn post_to(
        &mut self,
        eqn: u8,
        t: u8,
        sub: u8,
        data: &[u8; 28],
        mem: &dyn GuestMemory,
        irq: &dyn IrqSink,
        msix_ok: bool,
    ) -> Posted {
        let is_cmd = t == event_type::CMD;
        if is_cmd && self.waiting.iter().any(|(n, _)| *n == eqn) {
            self.waiting.push_back((eqn, *data));
            return Posted::Queued(eqn);
        }
        match self.write_eqe(eqn, t, sub, data, mem, irq, msix_ok) {
            Posted::Lost(n) if is_cmd => {
                self.waiting.push_back((n, *data));
                Posted::Queued(n)
            }
            Posted::Lost(n) => {
                if let Some(eq) = self.eqs.get_mut(&n) {
                    eq.lost += 1;
                }
                self.lost_total += 1;
                Posted::Lost(n)
            }
            p => p,
        }
    }

    /// Handles an EQ doorbell written at offset `arm ? 0x40 : 0x48` of UAR page `uar`,
    /// arrived now. Returns false for a doorbell naming an unknown EQ or the wrong UAR page.
    pub fn doorbell(
        &mut self,
        uar: u32,
        val: u32,
        arm: bool,
        mem: &dyn GuestMemory,
        irq: &dyn IrqSink,
        msix_ok: bool,
    ) -> bool {
        self.doorbell_at(uar, val, arm, Instant::now(), mem, irq, msix_ok)
    }

    /// [`EqTable::doorbell`] for a doorbell the driver wrote at `at` (the MMIO arrival,
    /// which may precede its handling by the firmware thread).
    #[allow(clippy::too_many_arguments)]
    pub fn doorbell_at(
        &mut self,
        uar: u32,
        val: u32,
        arm: bool,
        at: Instant,
        mem: &dyn GuestMemory,
        irq: &dyn IrqSink,
        msix_ok: bool,
    ) -> bool {
        let eqn = eq_doorbell::EQN.get(val);
        let ci = eq_doorbell::CONSUMER_COUNTER.get(val);
        let Some(eq) = self.eqs.get_mut(&eqn) else {
            self.bad_doorbells += 1;
            return false;
        };
        if eq.uar_page != uar {
            self.bad_doorbells += 1;
            return false;
        }
        eq.doorbell_seen(at);
        // A consumer index beyond the producer is a driver bug; clamp and count.
        let ahead = (eq.pi & 0xff_ffff).wrapping_sub(ci) & 0xff_ffff;
        if ahead > eq.nent() {
            self.bad_doorbells += 1;
        } else {
            eq.ci = ci;
        }
        // Room appeared: deliver waiting command completions for this EQ.
        let mut keep = VecDeque::new();
        while let Some((n, data)) = self.waiting.pop_front() {
            if n == eqn && keep.is_empty() {
                if let Posted::Lost(_) =
                    self.write_eqe(n, event_type::CMD, 0, &data, mem, irq, msix_ok)
                {
                    keep.push_back((n, data));
                }
            } else {
                keep.push_back((n, data));
            }
        }
        self.waiting = keep;
        let Some(eq) = self.eqs.get_mut(&eqn) else {
            return true;
        };
        if arm {
            if eq.outstanding() != 0 && msix_ok {
                eq.interrupt(irq);
                *self.irqs_per_vector.entry(eq.intr).or_default() += 1;
            } else {
                eq.armed = true;
            }
        }
        true
    }
}
