//! Event queues: ring geometry from the EQ context, EQE writing with the owner bit,
//! consumer index and arming from UAR doorbells, interrupts and overrun.
//!
//! Overrun: a command-completion event waits (queued) until the EQ has room; any other
//! event is lost and counted when the EQ is full.

use crate::ifc::eq::EQE_SIZE;
use crate::ifc::eqe::{eqe_off, event_type};
use crate::irq::IrqSink;
use crate::mem::{DmaError, GuestMemory};
use std::collections::{BTreeMap, VecDeque};

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
}

impl Eq {
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
        self.mask.get(w).is_some_and(|m| m & (1u64 << (t % 64)) != 0)
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
            return Posted::Dma(DmaError { addr: 0, len: EQE_SIZE });
        };
        let mut eqe = [0u8; EQE_SIZE];
        eqe[eqe_off::TYPE] = t;
        eqe[eqe_off::SUB_TYPE] = sub;
        eqe[eqe_off::DATA..eqe_off::DATA + 28].copy_from_slice(data);
        let owner = ((eq.pi >> eq.log_size) & 1) as u8;
        // Body first, owner byte last, so the driver never sees a half-written EQE.
        if let Err(e) = mem.write(addr, &eqe[..eqe_off::OWNER]) {
            return Posted::Dma(e);
        }
        if let Err(e) = mem.write(addr + eqe_off::OWNER as u64, &[owner]) {
            return Posted::Dma(e);
        }
        eq.pi = eq.pi.wrapping_add(1);
        eq.eqes += 1;
        if eq.armed && msix_ok {
            eq.armed = false;
            eq.interrupts += 1;
            let v = eq.intr;
            irq.fire(v);
            *self.irqs_per_vector.entry(v).or_default() += 1;
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
                Posted::Lost(n)
            }
            p => p,
        }
    }

    /// Handles an EQ doorbell written at offset `arm ? 0x40 : 0x48` of UAR page `uar`.
    /// Returns false for a doorbell naming an unknown EQ or the wrong UAR page.
    pub fn doorbell(
        &mut self,
        uar: u32,
        val: u32,
        arm: bool,
        mem: &dyn GuestMemory,
        irq: &dyn IrqSink,
        msix_ok: bool,
    ) -> bool {
        let eqn = (val >> 24) as u8;
        let ci = val & 0xff_ffff;
        let Some(eq) = self.eqs.get_mut(&eqn) else {
            self.bad_doorbells += 1;
            return false;
        };
        if eq.uar_page != uar {
            self.bad_doorbells += 1;
            return false;
        }
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
                if let Posted::Lost(_) = self.write_eqe(n, event_type::CMD, 0, &data, mem, irq, msix_ok) {
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
                eq.interrupts += 1;
                let v = eq.intr;
                irq.fire(v);
                *self.irqs_per_vector.entry(v).or_default() += 1;
            } else {
                eq.armed = true;
            }
        }
        true
    }
}
