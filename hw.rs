// SPDX-License-Identifier: GPL-2.0

//! The function's hardware access shared by every bring-up stage: BAR0 (init segment,
//! doorbells) and the command queue.
//!
//! BAR0 is held as device-managed resources: the init segment
//! ([`ffi::DevresRequestedBar`]) and the UAR page the kernel rings
//! ([`Hw::map_kernel_uar`], [`ffi::DevresBarRange`]); nothing else of the BAR is mapped
//! in the kernel, so that a user mapping of a UAR page gets the write-combining memory
//! type it asks for (`ffi/core/bar.rs`). Every access goes through a revocable guard
//! taken for that access only (never across a sleep), and fails with `ENODEV` once the
//! device is unbound. That makes [`Hw`] `'static`, so
//! stages that issue commands when they are undone (DISABLE_HCA, TEARDOWN_HCA, page
//! reclaim), debugfs files and work items can each hold an `Arc<Hw>` instead of
//! borrowing a sibling field.

use kernel::{
    device,
    device::Bound,
    io::Io,
    page::PAGE_SIZE,
    pci,
    prelude::*,
    sync::{new_mutex, Arc, Mutex, SetOnce},
};

use crate::{
    cmd::{
        command::{self, Command},
        commands::PageSink,
        queue::CmdQueue,
        status::{CmdError, ErrorKind},
        timeout::Timeouts,
    },
    ffi::{self, StopDmaOnDrop},
    ifc::init_seg as seg,
    init_seg_io::{Bar0, InitSeg, Regs},
    kfmt::Show,
};

/// BAR0 plus the command queue of one function.
///
/// INVARIANT: field order is drop order: DMA is stopped before the command queue (and
/// any mailboxes parked by a command that never completed) is freed.
#[pin_data]
pub(crate) struct Hw {
    _stop_dma: StopDmaOnDrop,
    /// Memory a device object may still reach (an EQ ring whose DESTROY_EQ failed, a
    /// timed-out CREATE_MKEY's pinned pages, ...: [`Hw::bury`]), freed only after
    /// `_stop_dma` turned bus mastering off. Lock order: a leaf, held only to push;
    /// the contents are dropped with `Hw`, under no lock.
    #[pin]
    graveyard: Mutex<KVec<KBox<dyn Send>>>,
    /// The UAR system page the kernel rings (EQ, kernel CQ and QP doorbells), mapped
    /// once the EQ stage has its UAR: its byte offset in BAR 0 and the mapping.
    /// Registered after `bar`, so revoked (unmapped) before it at unbind.
    uar: SetOnce<(usize, ffi::DevresBarRange<PAGE_SIZE>)>,
    bar: ffi::DevresRequestedBar<{ seg::MAPPED_SIZE }>,
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
            try_pin_init!(Self {
                _stop_dma: stop,
                graveyard <- new_mutex!(KVec::new()),
                uar: SetOnce::new(),
                bar,
                cmd <- cmd
            }),
            GFP_KERNEL,
        )
    }

    /// Executes one command (see [`CmdQueue::exec`]); callers use [`Hw::exec_cmd`].
    ///
    /// # Errors
    ///
    /// As [`CmdQueue::exec`].
    fn exec(&self, input: &[u8], output: &mut [u8]) -> Result<(), CmdError> {
        self.cmd.exec(self, input, output)
    }

    /// Executes one typed command: builds its input, runs it, validates its output
    /// and returns the typed reply. Inputs and outputs up to [`SMALL_MSG`] bytes live on
    /// the stack, longer ones are `kvmalloc`ed (up to 400 KB for MANAGE_PAGES take).
    ///
    /// # Errors
    ///
    /// A [`CmdError`] naming the command; [`CmdError::errno`] says which errno it is
    /// (the table is pinned in `cmd/status.rs`):
    /// - `NoMemory` (`ENOMEM`): the message buffers could not be allocated;
    /// - `BadInput` (`EINVAL`): a value of `cmd` does not fit its field
    ///   ([`command::encode`]); not sent;
    /// - any error of [`CmdQueue::exec`] (delivery or command status, timeout, dead
    ///   device, no slot, corrupt output chain);
    /// - after a successful command, [`command::decode`]'s: `Rejected` (`EPROTO`) for
    ///   an output value out of range (logged here), `NoMemory` (`ENOMEM`) for a
    ///   reply that could not be stored.
    // Out of line: the message buffers on the stack are this call's, not its caller's
    // (a caller running several commands would otherwise hold a pair for each, under
    // whatever it calls next).
    #[inline(never)]
    pub(crate) fn exec_cmd<C: Command>(&self, cmd: C) -> Result<C::Reply, CmdError> {
        let fail = |kind| CmdError::new(command::opcode::<C>(), cmd.op_mod(), kind);
        let (in_len, out_len) = (command::in_len(&cmd), command::out_len(&cmd));
        let mut small_in = [0u8; SMALL_MSG];
        let mut small_out = [0u8; SMALL_MSG];
        let mut big_in = KVVec::new();
        let mut big_out = KVVec::new();
        let input = msg_buf(&mut small_in, &mut big_in, in_len).ok_or(fail(ErrorKind::NoMemory))?;
        let output =
            msg_buf(&mut small_out, &mut big_out, out_len).ok_or(fail(ErrorKind::NoMemory))?;
        command::encode(&cmd, input).map_err(|e| fail(e.kind()))?;
        self.exec(input, output)?;
        let op_mod = cmd.op_mod();
        command::decode(cmd, output).map_err(|e| {
            let e = CmdError::new(command::opcode::<C>(), op_mod, e.kind());
            self.cmd.report_rejected(&e);
            e
        })
    }

    /// Whether the device was declared dead: commands fail at once, and nothing the
    /// device was asked to do will complete.
    #[cfg_attr(
        not(CONFIG_MLX5_RS_INFINIBAND),
        expect(dead_code, reason = "only the IB provider's MR cache asks")
    )]
    pub(crate) fn is_dead(&self) -> bool {
        self.cmd.is_dead()
    }

    /// [`Hw::exec_cmd`] for callers that only propagate the error: the command error
    /// (already logged by the command layer) as its kernel error.
    ///
    /// # Errors
    ///
    /// The kernel error of [`CmdError::errno`] for any error of [`Hw::exec_cmd`].
    pub(crate) fn run<C: Command>(&self, cmd: C) -> Result<C::Reply> {
        self.exec_cmd(cmd).map_err(|e| e.errno().into())
    }

    /// Keeps `mem`, which the device may still reach, until bus mastering is off
    /// (when `Hw` is dropped, in the unbinding process's context: pinned user pages
    /// are unpinned and DMA-unmapped there). If even that bookkeeping fails, `mem` is
    /// leaked.
    ///
    /// `mem` must not hold this `Hw` alive (an `Arc<Hw>`, or a user context, a UAR
    /// hold or a verbs object that holds one): the graveyard is emptied only when `Hw`
    /// is dropped, so such a value would keep it, bus mastering on and every buried
    /// page pinned, for good. For the same reason nothing that holds an `Arc<Hw>` may
    /// be `mem::forget`-ed.
    pub(crate) fn bury<T: Send + 'static>(&self, mem: T) {
        // The box first (`KBox::new` would drop `mem` on failure).
        let b: KBox<T> = match KBox::<T>::new_uninit(GFP_KERNEL) {
            Ok(b) => KBox::write(b, mem),
            Err(_) => {
                core::mem::forget(mem);
                return;
            }
        };
        let b: KBox<dyn Send> = b;
        let mut g = self.graveyard.lock();
        if g.reserve(1, GFP_KERNEL).is_err() {
            core::mem::forget(b);
            return;
        }
        if let Err(e) = g.push_within_capacity(b) {
            // Cannot happen after the reserve; never free memory the device may reach.
            core::mem::forget(e);
        }
    }

    /// [`Hw::bury`] after a command whose outcome is unknown (`err`: a timed-out or
    /// unreadable CREATE, any failed DESTROY), logging the opcode, the error and its
    /// syndrome, and how many pages are kept.
    #[cfg_attr(
        not(CONFIG_MLX5_RS_INFINIBAND),
        expect(dead_code, reason = "the IB provider keeps its objects' memory")
    )]
    pub(crate) fn keep<T: Send + 'static>(
        &self,
        dev: &device::Device,
        err: &CmdError,
        pages: usize,
        mem: T,
    ) {
        dev_warn!(
            dev,
            "{}: the object may exist, its {} pages are kept until the function stops DMA\n",
            Show(err),
            pages
        );
        self.bury(mem);
    }

    /// The command queue.
    pub(crate) fn cmd(&self) -> &CmdQueue {
        &self.cmd
    }

    /// Writes the 8 bytes `bytes`, in memory order, to BAR 0 at `off` with one 64-bit
    /// access (upstream `mlx5_write64`: a UAR doorbell, the CQ arm word and CQN or a
    /// send WQE's first 8 bytes, reaches the device as one write). A failure means the
    /// BAR is gone (unbind or surprise removal).
    ///
    /// `dev` is the function, bound: the mapping is reached through it without the
    /// revocable's RCU read section (a kernel verb rings once per call, and under
    /// lockdep that section cost ~1.6 µs of a 4-request post_send call under TCG, 2026-12-06).
    ///
    /// # Errors
    ///
    /// `EINVAL` for no kernel UAR mapped, an offset outside it, or `dev` not this
    /// function; the write's error.
    #[cfg_attr(
        not(CONFIG_MLX5_RS_INFINIBAND),
        expect(dead_code, reason = "the InfiniBand provider's kernel queues ring")
    )]
    pub(crate) fn doorbell64(
        &self,
        dev: &device::Device<Bound>,
        off: usize,
        bytes: [u8; 8],
    ) -> Result {
        // `writeq` stores the value little-endian: its memory bytes are `bytes`.
        let v = u64::from_le_bytes(bytes);
        let (base, uar) = self.uar.as_ref().ok_or(EINVAL)?;
        let rel = off.checked_sub(*base).ok_or(EINVAL)?;
        uar.access(dev)?.try_write64(v, rel)
    }

    /// Maps the system page of BAR 0 holding the UAR at byte offset `uar_off`, the one
    /// the kernel rings (upstream `mlx5_get_uars_page`: `ioremap` of that page, never
    /// write-combining for the kernel's own doorbells). Once per function.
    ///
    /// # Errors
    ///
    /// `EBUSY` when a page is already mapped; as [`ffi::BarRange::new`].
    pub(crate) fn map_kernel_uar(&self, pdev: &pci::Device<Bound>, uar_off: usize) -> Result {
        let base = uar_off & !(PAGE_SIZE - 1);
        let range = ffi::BarRange::<PAGE_SIZE>::new(pdev, 0, u64::try_from(base)?, PAGE_SIZE)?;
        if self.uar.populate((base, range.into_devres()?)) {
            Ok(())
        } else {
            Err(EBUSY)
        }
    }
}

/// The init segment, and (writes at or above [`seg::MAPPED_SIZE`]) the kernel's UAR
/// page: its EQ doorbells are big-endian 32-bit words too.
impl Regs for Hw {
    fn read(&self, off: usize) -> Result<u32> {
        self.bar
            .try_access_with(|bar| InitSeg::new(bar).read(off))
            .unwrap_or(Err(ENODEV))
    }

    fn batch(&self, f: &mut dyn FnMut(&dyn Regs) -> Result) -> Result {
        self.bar
            .try_access_with(|bar| f(&InitSeg::new(bar)))
            .unwrap_or(Err(ENODEV))
    }

    fn write(&self, off: usize, val: u32) -> Result {
        if off < seg::MAPPED_SIZE {
            return self
                .bar
                .try_access_with(|bar| InitSeg::new(bar).write(off, val))
                .unwrap_or(Err(ENODEV));
        }
        let (base, uar) = self.uar.as_ref().ok_or(EINVAL)?;
        let rel = off.checked_sub(*base).ok_or(EINVAL)?;
        uar.try_access_with(|p| p.try_write32(val.swap_bytes(), rel))
            .unwrap_or(Err(ENODEV))
    }
}

/// Largest command input or output kept on the stack by [`Hw::exec_cmd`].
const SMALL_MSG: usize = 128;

/// A zeroed buffer of `len` bytes: `small` when it fits, else `big` grown to `len`.
fn msg_buf<'a>(
    small: &'a mut [u8; SMALL_MSG],
    big: &'a mut KVVec<u8>,
    len: usize,
) -> Option<&'a mut [u8]> {
    if len <= SMALL_MSG {
        return small.get_mut(..len);
    }
    *big = KVVec::from_elem(0u8, len, GFP_KERNEL).ok()?;
    Some(&mut big[..])
}

/// MANAGE_PAGES take stores the returned addresses in a `KVVec`.
impl PageSink for KVVec<u64> {
    fn reserve(&mut self, n: usize) -> Result<(), command::CodecError> {
        KVVec::reserve(self, n, GFP_KERNEL).map_err(|_| command::CodecError::NoMemory)
    }

    fn push(&mut self, addr: u64) -> Result<(), command::CodecError> {
        KVVec::push(self, addr, GFP_KERNEL).map_err(|_| command::CodecError::NoMemory)
    }
}
