// SPDX-License-Identifier: GPL-2.0

//! The function's hardware access shared by every bring-up stage: BAR0 (init segment,
//! doorbells) and the command queue.
//!
//! Stages that must issue commands when they are undone (DISABLE_HCA, TEARDOWN_HCA,
//! page reclaim) hold an `Arc<Hw>`, so each one owns what it needs to undo itself and
//! no stage refers to a sibling field.

use kernel::{device, device::Bound, prelude::*, sync::Arc};

use crate::{
    cmd::{queue::CmdQueue, status::CmdError, timeout::Timeouts},
    init_seg::{Bar0, InitSeg},
};

/// BAR0 plus the command queue of one function.
#[pin_data]
pub(crate) struct Hw<'bound> {
    bar: Bar0<'bound>,
    #[pin]
    cmd: CmdQueue,
}

impl<'bound> Hw<'bound> {
    /// Brings the command interface up on an already mapped BAR0.
    pub(crate) fn new(dev: &device::Device<Bound>, bar: Bar0<'bound>, timeouts: Timeouts) -> Result<Arc<Self>> {
        let cmd = CmdQueue::new(dev, &InitSeg::new(&bar), timeouts)?;
        Arc::pin_init(try_pin_init!(Self { bar, cmd <- cmd }), GFP_KERNEL)
    }

    /// The initialization segment.
    pub(crate) fn init_seg(&self) -> InitSeg<'_, 'bound> {
        InitSeg::new(&self.bar)
    }

    /// Executes one command (see [`CmdQueue::exec`]).
    pub(crate) fn exec(&self, input: &[u8], output: &mut [u8]) -> Result<(), CmdError> {
        self.cmd.exec(&self.init_seg(), input, output)
    }

    /// The command queue.
    #[allow(dead_code)]
    pub(crate) fn cmd(&self) -> &CmdQueue {
        &self.cmd
    }
}

/// Converts a command error into the kernel error callers return.
pub(crate) fn to_kernel(e: CmdError) -> Error {
    // `errno()` is a positive errno from the fixed table in `cmd::status`.
    Error::from_errno(-e.errno())
}
