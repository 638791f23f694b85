// SPDX-License-Identifier: GPL-2.0

//! MSI-X vectors and their threaded handlers.
//!
//! Vector 0 is the control vector shared by the command, async and pages EQs;
//! completion EQ *k* uses vector `k + 1` (vector 0 when only one vector exists).
//! The hard-IRQ handler only notes the time of the interrupt for each EQ on the
//! vector and wakes the IRQ thread; the thread drains the EQs ([`Eq::drain`]), which
//! may sleep on locks and hand work on (page requests go to a work item).
//!
//! INVARIANT (teardown order by field order): [`Irqs::regs`] is declared before
//! [`Irqs::vectors`], so every `free_irq` (which waits for a running handler thread)
//! happens before `pci_free_irq_vectors`. The registrations borrow the vector
//! registration, which lives in its own heap allocation that is neither moved nor
//! freed before them. The owner ([`super::Events`]) destroys the EQs before dropping
//! this, so no EQ still points at a freed vector.

use kernel::{
    device::Bound,
    irq::{self, IrqReturn, ThreadedHandler, ThreadedIrqReturn, ThreadedRegistration},
    pci::{self, IrqVectorRegistration},
    prelude::*,
    sync::Arc,
};

use super::{ring::Eq, Dispatch};

/// The handler of one vector: the EQs it serves.
pub(crate) struct EqIrq {
    pub(crate) eqs: KVec<Arc<Eq>>,
    pub(crate) d: Arc<Dispatch>,
}

impl ThreadedHandler for EqIrq {
    fn handle(&self) -> ThreadedIrqReturn {
        for eq in self.eqs.iter() {
            eq.note_irq();
        }
        ThreadedIrqReturn::WakeThread
    }

    fn handle_threaded(&self) -> IrqReturn {
        for eq in self.eqs.iter() {
            eq.drain(&self.d);
        }
        IrqReturn::Handled
    }
}

/// MSI-X vectors and the handlers registered on them.
pub(crate) struct Irqs<'bound> {
    /// Dropped first: `free_irq` for each.
    regs: KVec<Pin<KBox<ThreadedRegistration<'bound, EqIrq>>>>,
    /// Dropped last: `pci_free_irq_vectors`.
    vectors: KBox<IrqVectorRegistration<'bound>>,
}

impl<'bound> Irqs<'bound> {
    /// Allocates between 1 and `max` MSI-X vectors.
    pub(crate) fn alloc(pdev: &'bound pci::Device<Bound>, max: u32) -> Result<Self> {
        let v = pdev.alloc_irq_vectors(1, max.max(1), pci::IrqTypes::default().with(pci::IrqType::MsiX))?;
        Ok(Self { regs: KVec::new(), vectors: KBox::new(v, GFP_KERNEL)? })
    }

    /// Number of vectors allocated.
    pub(crate) fn len(&self) -> u32 {
        u32::try_from(self.vectors.len()).unwrap_or(u32::MAX)
    }

    /// Requests a threaded handler for vector `index`.
    pub(crate) fn request(&mut self, index: u32, name: &'static CStr, eqs: KVec<Arc<Eq>>, d: Arc<Dispatch>) -> Result {
        // SAFETY: the vector registration is in its own heap allocation, which is neither
        // moved nor freed while `self.regs` holds registrations borrowing it (see the
        // INVARIANT of the module: `regs` drops before `vectors`), so extending the
        // borrow to `'bound` never lets it dangle while used.
        let vectors: &'bound IrqVectorRegistration<'bound> =
            unsafe { &*core::ptr::from_ref::<IrqVectorRegistration<'bound>>(&self.vectors) };
        let req: irq::IrqRequest<'bound> = vectors.index(index as usize)?.into();
        // SAFETY: the registration is boxed and kept in `self.regs` until `Irqs` is
        // dropped; it is never forgotten.
        let reg = KBox::pin_init(
            unsafe { ThreadedRegistration::new(req, irq::Flags::TRIGGER_NONE, name, try_init!(EqIrq { eqs, d })) },
            GFP_KERNEL,
        )?;
        self.regs.push(reg, GFP_KERNEL)?;
        Ok(())
    }
}
