// SPDX-License-Identifier: GPL-2.0

//! The function's hardware access shared by every bring-up stage: BAR0 (init segment,
//! doorbells) and the command queue.
//!
//! BAR0 is held as a device-managed resource ([`pci::DevresBar`]): every access goes
//! through a revocable guard taken for that access only (never across a sleep), and
//! fails with `ENODEV` once the device is unbound. That makes [`Hw`] `'static`, so
//! stages that issue commands when they are undone (DISABLE_HCA, TEARDOWN_HCA, page
//! reclaim), debugfs files and work items can each hold an `Arc<Hw>` instead of
//! borrowing a sibling field.

use kernel::{
    device,
    device::Bound,
    dma::Coherent,
    pci,
    prelude::*,
    sync::{new_mutex, Arc, Mutex},
};

use crate::{
    cmd::{queue::CmdQueue, status::CmdError, timeout::Timeouts},
    ffi::StopDmaOnDrop,
    ifc::init_seg as seg,
    init_seg::{Bar0, InitSeg, Regs},
};

/// BAR0 plus the command queue of one function.
///
/// INVARIANT: field order is drop order: DMA is stopped before the command queue (and
/// any mailboxes parked by a command that never completed) is freed.
#[pin_data]
pub(crate) struct Hw {
    _stop_dma: StopDmaOnDrop,
    /// DMA memory the device may still write (an EQ ring whose DESTROY_EQ failed),
    /// freed only after `_stop_dma` turned bus mastering off.
    #[pin]
    graveyard: Mutex<KVec<Coherent<[u8]>>>,
    bar: pci::DevresBar<{ seg::MAPPED_SIZE }>,
    #[pin]
    cmd: CmdQueue,
}

impl Hw {
    /// Brings the command interface up on an already mapped BAR0, which it takes over.
    pub(crate) fn new(
        pdev: &pci::Device<Bound>,
        bar: Bar0<'_>,
        timeouts: Timeouts,
    ) -> Result<Arc<Self>> {
        let dev: &device::Device<Bound> = pdev.as_ref();
        let cmd = CmdQueue::new(dev, &InitSeg::new(&bar), timeouts)?;
        let bar = bar.into_devres()?;
        let stop = StopDmaOnDrop::new(pdev);
        Arc::pin_init(
            try_pin_init!(Self { _stop_dma: stop, graveyard <- new_mutex!(KVec::new()), bar, cmd <- cmd }),
            GFP_KERNEL,
        )
    }

    /// Executes one command (see [`CmdQueue::exec`]).
    pub(crate) fn exec(&self, input: &[u8], output: &mut [u8]) -> Result<(), CmdError> {
        self.cmd.exec(self, input, output)
    }

    /// Keeps `mem`, which the device may still write, until bus mastering is off
    /// (when `Hw` is dropped). If even that bookkeeping fails, `mem` is leaked.
    pub(crate) fn bury(&self, mem: Coherent<[u8]>) {
        let mut g = self.graveyard.lock();
        if g.reserve(1, GFP_KERNEL).is_err() {
            core::mem::forget(mem);
            return;
        }
        if let Err(e) = g.push_within_capacity(mem) {
            // Cannot happen after the reserve; never free memory the device may write.
            core::mem::forget(e);
        }
    }

    /// The command queue.
    pub(crate) fn cmd(&self) -> &CmdQueue {
        &self.cmd
    }
}

impl Regs for Hw {
    fn read(&self, off: usize) -> Result<u32> {
        self.bar
            .try_access_with(|bar| InitSeg::new(bar).read(off))
            .unwrap_or(Err(ENODEV))
    }

    fn write(&self, off: usize, val: u32) -> Result {
        self.bar
            .try_access_with(|bar| InitSeg::new(bar).write(off, val))
            .unwrap_or(Err(ENODEV))
    }
}

/// Converts a command error into the kernel error callers return.
pub(crate) fn to_kernel(e: CmdError) -> Error {
    // `errno()` is a positive errno from the fixed table in `cmd::status`.
    Error::from_errno(-e.errno())
}
