// SPDX-License-Identifier: GPL-2.0

//! IRQ affinity hints (`irq_set_affinity_and_hint` / `irq_update_affinity_hint`), which
//! the kernel crate lacks: an [`AffinityHint`] steers an IRQ to one CPU, publishes
//! that CPU in `/proc/irq/<n>/affinity_hint`, and clears the hint on drop.
//!
//! `free_irq` warns about a hint still set, so the hint must be dropped before the
//! registration of its IRQ; the owner enforces that with its types (`eq/irq.rs`).

use kernel::{error::to_result, prelude::*};

extern "C" {
    fn mlx5rs_nth_online_cpu(n: u32) -> i32;
    fn mlx5rs_irq_set_cpu_hint(irq: u32, cpu: u32) -> i32;
    fn mlx5rs_irq_clear_hint(irq: u32);
}

/// The `n`-th online CPU (from 0), or `None` when fewer are online.
pub(crate) fn nth_online_cpu(n: u32) -> Option<u32> {
    // SAFETY: only reads the online mask; any `n` is valid (too large is `-ENOENT`).
    u32::try_from(unsafe { mlx5rs_nth_online_cpu(n) }).ok()
}

/// The affinity hint of one IRQ of ours, pointing at one CPU; cleared on drop.
///
/// INVARIANT: `irq` had its hint set to `cpu` by [`AffinityHint::set`].
pub(crate) struct AffinityHint {
    irq: u32,
    cpu: u32,
}

impl AffinityHint {
    /// Steers `irq` to `cpu` and sets its hint. `irq` must be an IRQ this driver has
    /// a handler registered on, and the result must be dropped before that handler is
    /// freed (a hint left set makes `free_irq` warn). `EINVAL` if `cpu` is not online.
    pub(crate) fn set(irq: u32, cpu: u32) -> Result<Self> {
        // SAFETY: the C side looks `irq` up (an unknown number is `-EINVAL`) and checks
        // that `cpu` is online; the hint points at `cpumask_of(cpu)`, a constant mask
        // that outlives every IRQ.
        to_result(unsafe { mlx5rs_irq_set_cpu_hint(irq, cpu) })?;
        // INVARIANT: set just above.
        Ok(Self { irq, cpu })
    }

    /// The CPU of the hint.
    pub(crate) fn cpu(&self) -> u32 {
        self.cpu
    }
}

impl Drop for AffinityHint {
    fn drop(&mut self) {
        // SAFETY: `irq_update_affinity_hint` looks `irq` up under its descriptor's lock
        // (a number without a descriptor is `-EINVAL`) and only stores NULL as its
        // hint, which is sound for any number. (That it is the IRQ we set, and that this
        // runs before its `free_irq`, is the type invariant and the owner's drop order:
        // what keeps `free_irq` from warning, not what makes the call sound.)
        unsafe { mlx5rs_irq_clear_hint(self.irq) };
    }
}
