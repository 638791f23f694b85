// SPDX-License-Identifier: GPL-2.0

//! MSI-X vectors and their handlers.
//!
//! Vector 0 is the control vector shared by the command, async and pages EQs;
//! completion EQ *k* uses vector `k + 1` (vector 0 when only one vector exists).
//! The control vector's handler is threaded ([`EqIrq`]): the hard-IRQ part only notes
//! the time of the interrupt for each EQ on the vector and wakes the IRQ thread; the
//! thread drains the EQs ([`Eq::drain`]), which may sleep on locks and hand work on
//! (page requests go to a work item). A completion vector's handler ([`CompIrq`])
//! drains its completion EQs in the hard IRQ, as upstream's `mlx5_eq_comp_int`: each
//! CQ's completion handler runs there, in the context the RDMA core's consumers
//! expect.
//!
//! A completion vector may carry an affinity hint ([`ffi::AffinityHint`]: vector
//! *i* → the *i − 1*-th online CPU, set by the owner). [`Vector`]'s drop clears the
//! hint in its own body, before any field is dropped, so the hint is always gone when
//! its registration calls `free_irq` (which warns about a hint left set).
//!
//! INVARIANT (teardown order by field order): [`Irqs::regs`] is declared before
//! [`Irqs::vectors`], so every `free_irq` (which waits for a running handler thread)
//! happens before `pci_free_irq_vectors`. The registrations borrow the vector
//! registration, which lives in its own heap allocation that is neither moved nor
//! freed before them. The owner ([`super::Events`]) destroys the EQs before dropping
//! this, so no EQ still points at a freed vector.

use kernel::{
    device::{self, Bound},
    irq::{
        self, Handler, IrqReturn, Registration, ThreadedHandler, ThreadedIrqReturn,
        ThreadedRegistration,
    },
    pci::{self, IrqVectorRegistration},
    prelude::*,
    str::CString,
    sync::Arc,
};

use super::{
    ring::{CompEq, CtlEq},
    Dispatch,
};
use crate::ffi;

/// The threaded handler of the control vector: the control EQs, and the completion
/// EQs when the control vector is the only one.
pub(crate) struct EqIrq {
    pub(crate) eqs: KVec<Arc<CtlEq>>,
    pub(crate) comp: KVec<Arc<CompEq>>,
    pub(crate) d: Arc<Dispatch>,
}

impl ThreadedHandler for EqIrq {
    fn handle(&self) -> ThreadedIrqReturn {
        for eq in self.eqs.iter() {
            eq.note_irq();
        }
        for eq in self.comp.iter() {
            eq.note_irq();
        }
        ThreadedIrqReturn::WakeThread
    }

    fn handle_threaded(&self) -> IrqReturn {
        for eq in self.eqs.iter() {
            eq.drain(&self.d);
        }
        for eq in self.comp.iter() {
            eq.drain(&self.d);
        }
        IrqReturn::Handled
    }
}

/// The hard-IRQ handler of a completion vector: its completion EQs.
pub(crate) struct CompIrq {
    pub(crate) comp: KVec<Arc<CompEq>>,
    pub(crate) d: Arc<Dispatch>,
}

impl Handler for CompIrq {
    fn handle(&self) -> IrqReturn {
        // No interrupt time is noted: the drain follows at once, in this handler, so
        // the interrupt-to-EQE latency ([`Eq::note_irq`]) would measure nothing but
        // its own two clock reads, on every completion interrupt.
        for eq in self.comp.iter() {
            eq.drain(&self.d);
        }
        IrqReturn::Handled
    }
}

/// A vector's handler registration, held for its drop (`free_irq`).
enum VectorReg<'bound> {
    /// The control vector.
    Threaded {
        _reg: Pin<KBox<ThreadedRegistration<'bound, EqIrq>>>,
    },
    /// A completion vector.
    Hard {
        _reg: Pin<KBox<Registration<'bound, CompIrq>>>,
    },
}

/// One vector with a handler, and maybe an affinity hint.
struct Vector<'bound> {
    index: u32,
    irq: u32,
    /// Cleared by [`Vector`]'s drop, before `_reg` frees the IRQ.
    hint: Option<ffi::AffinityHint>,
    _reg: VectorReg<'bound>,
    /// The IRQ's name, which the IRQ core keeps a pointer to until `free_irq`: declared
    /// after `_reg`, so it is freed after the IRQ.
    _name: CString,
}

impl Drop for Vector<'_> {
    fn drop(&mut self) {
        // Runs before any field is dropped: the hint goes before `_reg`'s `free_irq`.
        drop(self.hint.take());
    }
}

/// What debugfs shows of one vector.
#[derive(Clone, Copy, Debug)]
pub(crate) struct VectorInfo {
    /// MSI-X index.
    pub(crate) index: u32,
    /// Linux IRQ number.
    pub(crate) irq: u32,
    /// CPU of the affinity hint, if one is set.
    pub(crate) hint_cpu: Option<u32>,
}

/// MSI-X vectors and the handlers registered on them.
pub(crate) struct Irqs<'bound> {
    /// Dropped first: hint cleared, then `free_irq`, for each.
    regs: KVec<Vector<'bound>>,
    /// Dropped last: `pci_free_irq_vectors`.
    vectors: KBox<IrqVectorRegistration<'bound>>,
}

impl<'bound> Irqs<'bound> {
    /// Allocates between 1 and `max` MSI-X vectors.
    pub(crate) fn alloc(pdev: &'bound pci::Device<Bound>, max: u32) -> Result<Self> {
        let v = pdev.alloc_irq_vectors(
            1,
            max.max(1),
            pci::IrqTypes::default().with(pci::IrqType::MsiX),
        )?;
        Ok(Self {
            regs: KVec::new(),
            vectors: KBox::new(v, GFP_KERNEL)?,
        })
    }

    /// Number of vectors allocated.
    pub(crate) fn len(&self) -> u32 {
        u32::try_from(self.vectors.len()).unwrap_or(u32::MAX)
    }

    /// Requests the handler of vector `index`, named `name` (kept until the IRQ is
    /// freed): threaded when it serves control EQs (`eqs` not empty), else a hard-IRQ
    /// handler for the completion EQs `comp`. With `hint_cpu`, steers the vector to
    /// the `hint_cpu`-th online CPU and sets that as its affinity hint (a failure to do
    /// so is logged and leaves the vector without a hint).
    #[expect(
        clippy::too_many_arguments,
        reason = "one vector's parameters, named at the call"
    )]
    pub(crate) fn request(
        &mut self,
        dev: &device::Device,
        index: u32,
        name: CString,
        eqs: KVec<Arc<CtlEq>>,
        comp: KVec<Arc<CompEq>>,
        d: Arc<Dispatch>,
        hint_cpu: Option<u32>,
    ) -> Result {
        // SAFETY: the vector registration is in its own heap allocation, which is neither
        // moved nor freed while `self.regs` holds registrations borrowing it (see the
        // INVARIANT of the module: `regs` drops before `vectors`), so extending the
        // borrow to `'bound` never lets it dangle while used.
        let vectors: &'bound IrqVectorRegistration<'bound> =
            unsafe { &*core::ptr::from_ref::<IrqVectorRegistration<'bound>>(&self.vectors) };
        let req: irq::IrqRequest<'bound> = vectors.index(index as usize)?.into();
        let irq = req.irq();
        // SAFETY: the string is in `name`'s heap buffer, which moving the `CString` does
        // not move and which is freed only when the `Vector` built below drops its
        // `_name`, after its `_reg` (field order), i.e. after `free_irq`; on the error
        // paths before that, the registration is gone (or never made) before `name`
        // drops. So the IRQ core never holds a dangling name.
        let name_ref: &'static CStr = unsafe { &*core::ptr::from_ref::<CStr>(&name) };
        let reg = if eqs.is_empty() {
            VectorReg::Hard {
                _reg: KBox::pin_init(
                    // SAFETY: the registration is boxed and kept in `self.regs` until `Irqs`
                    // is dropped; it is never forgotten.
                    unsafe {
                        Registration::new(
                            req,
                            irq::Flags::TRIGGER_NONE,
                            name_ref,
                            try_init!(CompIrq { comp, d }),
                        )
                    },
                    GFP_KERNEL,
                )?,
            }
        } else {
            VectorReg::Threaded {
                _reg: KBox::pin_init(
                    // SAFETY: as above.
                    unsafe {
                        ThreadedRegistration::new(
                            req,
                            irq::Flags::TRIGGER_NONE,
                            name_ref,
                            try_init!(EqIrq { eqs, comp, d }),
                        )
                    },
                    GFP_KERNEL,
                )?,
            }
        };
        // Set after the handler is registered, as upstream does; a failure here is not
        // worth failing the probe for.
        let hint = hint_cpu.and_then(|n| {
            let r = ffi::nth_online_cpu(n)
                .ok_or(ENOENT)
                .and_then(|cpu| ffi::AffinityHint::set(irq, cpu));
            match r {
                Ok(h) => Some(h),
                Err(e) => {
                    dev_warn!(
                        dev,
                        "vector {} (IRQ {}): no affinity hint for online CPU #{} ({:?})\n",
                        index,
                        irq,
                        n,
                        e
                    );
                    None
                }
            }
        });
        // On failure `Vector` drops here: hint cleared, then the IRQ freed.
        self.regs.push(
            Vector {
                index,
                irq,
                hint,
                _reg: reg,
                _name: name,
            },
            GFP_KERNEL,
        )?;
        Ok(())
    }

    /// The vectors with a handler, for debugfs.
    pub(crate) fn info(&self) -> Result<KVec<VectorInfo>> {
        let mut v = KVec::with_capacity(self.regs.len(), GFP_KERNEL)?;
        for r in self.regs.iter() {
            v.push(
                VectorInfo {
                    index: r.index,
                    irq: r.irq,
                    hint_cpu: r.hint.as_ref().map(ffi::AffinityHint::cpu),
                },
                GFP_KERNEL,
            )?;
        }
        Ok(v)
    }
}
