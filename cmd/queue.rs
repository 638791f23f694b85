// SPDX-License-Identifier: GPL-2.0

//! The command queue: entries in one coherent page, slots, posting and completion.
//!
//! [`CmdQueue::exec`] runs one command end to end: it allocates the mailbox chains,
//! takes a slot (sleeping while every slot of its class is busy), writes the entry and
//! chains, rings the doorbell, waits for the device to return ownership, decodes the
//! delivery and command status into a [`CmdError`] that names opcode, op_mod, status
//! and syndrome, and copies the output back.
//!
//! Completion is detected in one of two modes. *Polling* (from bring-up until the
//! command EQ exists, and again before it is destroyed): the caller polls the ownership
//! bit with growing sleeps. *Events* ([`CmdQueue::set_event_mode`]): the command EQ's
//! handler reports the slot bitmap of each command-completion EQE through
//! [`CmdQueue::complete_slots`], which wakes the waiter of each slot named. The
//! ownership bit stays the only proof of completion in both modes: an event for a slot
//! whose bit is still set (a stale event of an earlier command in that slot) is
//! counted and ignored, and a waiter re-checks the bit at least every
//! [`EVENT_RECHECK_MS`] so a lost event costs latency, never a hang. Timeouts and
//! parking are the same in both modes. The switch is exclusive: it waits, under the
//! queue lock, until no command is in flight, so every command runs entirely in one
//! mode.
//!
//! Ownership discipline: a slot and its mailboxes belong to the device from the
//! doorbell until the ownership bit clears. When a command times out they stay parked
//! in [`QueueState::parked`], never reused or freed, until the device returns the slot
//! ([`CmdQueue::reap_parked`]) or the queue is dropped after the device was stopped.

use kernel::{
    device::{self, Bound},
    dma::Coherent,
    prelude::*,
    sync::aref::ARef,
    sync::{new_condvar, new_mutex, CondVar, CondVarTimeoutResult, Mutex, MutexGuard},
    time::{delay::fsleep, Delta, Instant, Monotonic},
};

use super::{
    dma_blocks::DmaBlocks,
    entry,
    geometry::{addr_words, Geometry, QUEUE_BYTES},
    mailbox::{self, blocks_needed},
    slots::{SlotError, Slots},
    stats::{CmdStats, Outcome},
    status::{self, CmdError, ErrorKind},
    timeout::Timeouts,
    token::TokenGen,
};
use crate::{
    coherent_io,
    ffi::{dma_rmb, wmb},
    ifc::{
        cmd_layout::{entry_off, ENTRY_SIZE, INLINE_LEN, MAX_SLOTS, OWN_HW},
        init_seg as seg,
    },
    init_seg_io::Regs,
    kfmt::Show,
};

/// Mailboxes of a command whose slot the device still owns.
struct Parked {
    _input: DmaBlocks,
    _output: DmaBlocks,
}

/// How often a waiter in event mode re-checks the ownership bit without an event.
const EVENT_RECHECK_MS: u32 = 10;

/// How long a caller with a pending signal sleeps (uninterruptibly) instead of a
/// condition-variable wait that would return at once (see [`wait_or_nap`]).
const SIGNAL_NAP_MS: i64 = 10;

/// Waits on `cv` for at most `jiffies`, releasing `g` meanwhile, and returns the
/// re-taken guard. A command wait is not interruptible: upstream sleeps in `down()`
/// for a slot and in `wait_for_completion_timeout` for the completion (cmd.c), both
/// uninterruptible. The kernel crate offers only an interruptible timed wait, which
/// returns at once while a signal is pending (a killed caller, e.g. a debugfs writer):
/// looping on it would spin until the command ends. So on a pending signal the caller
/// sleeps [`SIGNAL_NAP_MS`] uninterruptibly instead and re-checks, which costs a woken
/// caller at most that much latency and never busy-waits. Nothing is abandoned: a
/// command already posted is still waited for (its slot freed or parked as usual).
fn wait_or_nap<'a>(
    cv: &CondVar,
    lock: &'a Mutex<QueueState>,
    mut g: MutexGuard<'a, QueueState>,
    jiffies: kernel::time::Jiffies,
) -> MutexGuard<'a, QueueState> {
    if let CondVarTimeoutResult::Signal { .. } = cv.wait_interruptible_timeout(&mut g, jiffies) {
        drop(g);
        fsleep(Delta::from_millis(SIGNAL_NAP_MS));
        g = lock.lock();
    }
    g
}

/// Event-mode counters (debugfs `eqs`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct EventCounters {
    /// Command-completion EQEs handled.
    pub(crate) eqes: u64,
    /// Slots those events named.
    pub(crate) slots: u64,
    /// Slots named while the device still owned them, or not in flight.
    pub(crate) stale: u64,
    /// Commands that completed in event mode.
    pub(crate) commands: u64,
    /// Of those, completions noticed by the re-check rather than an event.
    pub(crate) rechecks: u64,
}

/// Mutable state of the queue, under [`CmdQueue::state`].
struct QueueState {
    /// Completion by events (command EQ) rather than polling.
    events: bool,
    /// Slots reported complete by events and not yet consumed by their waiter.
    signalled: u32,
    ev: EventCounters,
    slots: Slots,
    tokens: TokenGen,
    parked: [Option<Parked>; MAX_SLOTS],
    stats: CmdStats,
    /// Set when the device is declared dead: every command fails at once.
    dead: bool,
}

/// The command queue of one function.
#[pin_data]
pub(crate) struct CmdQueue {
    dev: ARef<device::Device>,
    entries: Coherent<[u8]>,
    stride: usize,
    nslots: u8,
    checksums: bool,
    timeouts: Timeouts,
    /// Lock order: the innermost driver lock. It is taken while holding an EQ's
    /// `Eq::state` (a command-completion EQE), `FwPages::state` (a give or take holds
    /// it across MANAGE_PAGES) or `Lifecycle::state` (`mark_dead`); while it is held no
    /// other lock of the driver is taken. See Documentation/architecture.md, "Lock
    /// order".
    #[pin]
    state: Mutex<QueueState>,
    #[pin]
    slot_freed: CondVar,
    /// Per slot: signalled by [`CmdQueue::complete_slots`] in event mode (one waiter
    /// per slot, so completions wake exactly their waiter).
    #[pin]
    cmd_done: [CondVar; MAX_SLOTS],
}

impl CmdQueue {
    /// Allocates the queue page and tells the device where it is: address high, then
    /// low with `nic_interface` = full driver (other bits as the PRM says: the low
    /// register's size/stride bits are read-only, bits 11:10 reserved).
    ///
    /// # Errors
    ///
    /// `EINVAL` for a queue geometry the device reports out of range or a queue
    /// address the registers cannot hold (logged); `ENOMEM` when the queue page
    /// cannot be allocated; `ENODEV` when BAR0 is gone.
    pub(crate) fn new(
        dev: &device::Device<Bound>,
        is: &dyn Regs,
        timeouts: Timeouts,
    ) -> Result<impl PinInit<Self, Error>> {
        let g = Geometry::from_reg(is.read(seg::CMDQ_ADDR_L_SZ)?).map_err(|e| {
            dev_err!(dev, "{}\n", Show(e));
            EINVAL
        })?;
        let slots = Slots::new(g.log_size).map_err(|_| EINVAL)?;
        let entries = Coherent::<u8>::zeroed_slice(dev, QUEUE_BYTES, GFP_KERNEL)?;
        let (hi, lo) = addr_words(entries.dma_address()).map_err(|e| {
            dev_err!(dev, "{}\n", Show(e));
            EINVAL
        })?;
        // High word first, then low: address bits 31:12, nic_interface (bits 10:8) = 0
        // (full driver); size/stride (bits 7:0) are read-only and written as zero.
        is.write(seg::CMDQ_ADDR_H, hi)?;
        is.write(seg::CMDQ_ADDR_L_SZ, lo)?;
        let dev: ARef<device::Device> = dev.into();
        Ok(try_pin_init!(Self {
            dev,
            entries,
            stride: g.stride(),
            nslots: g.nslots(),
            checksums: false,
            timeouts,
            state <- new_mutex!(QueueState {
                events: false,
                signalled: 0,
                ev: EventCounters::default(),
                slots,
                tokens: TokenGen::new(),
                parked: [const { None }; MAX_SLOTS],
                stats: CmdStats::new(),
                dead: false,
            }),
            slot_freed <- new_condvar!(),
            cmd_done <- pin_init::pin_init_array_from_fn(|_| new_condvar!("CmdQueue::cmd_done")),
        }))
    }

    /// Number of slots.
    pub(crate) fn nslots(&self) -> u8 {
        self.nslots
    }

    /// Offset of byte `off` of the entry of `slot` in the queue page. `slot < nslots`
    /// and `nslots * stride <= QUEUE_BYTES` (checked in `Geometry::read`), so with
    /// `off < ENTRY_SIZE <= stride` it is inside the page; [`coherent_io`] checks it again.
    fn entry_at(&self, slot: u8, off: usize) -> usize {
        usize::from(slot) * self.stride + off
    }

    /// Reads the `status_own` byte of `slot` (the device writes it concurrently: a
    /// volatile read). Outside the page (impossible, see `entry_at`) it reads as owned
    /// by the device, so nothing is taken from it.
    fn status_own(&self, slot: u8) -> u8 {
        coherent_io::read_u8(&self.entries, self.entry_at(slot, entry_off::STATUS_OWN))
            .unwrap_or(OWN_HW)
    }

    fn write_entry(&self, slot: u8, entry: &[u8; ENTRY_SIZE]) {
        // The slot is ours (not owned by the device) until the doorbell, so nobody else
        // accesses these bytes. In bounds (see `entry_at`).
        let _ = coherent_io::write_bytes(&self.entries, self.entry_at(slot, 0), entry);
    }

    fn read_entry(&self, slot: u8) -> [u8; ENTRY_SIZE] {
        let mut e = [0u8; ENTRY_SIZE];
        // Called after the device returned ownership of the slot. In bounds (see
        // `entry_at`).
        let _ = coherent_io::read_bytes(&self.entries, self.entry_at(slot, 0), &mut e);
        e
    }

    /// Releases the mailboxes of timed-out slots the device has since returned.
    fn reap_parked(&self, st: &mut QueueState) {
        let mut mask = st.slots.timed_out_mask();
        while mask != 0 {
            let slot = mask.trailing_zeros() as u8;
            mask &= mask - 1;
            if self.status_own(slot) & OWN_HW == 0 && st.slots.late_completion(slot).is_ok() {
                dev_info!(
                    self.dev,
                    "command slot {} completed late; its mailboxes are released\n",
                    slot
                );
                st.parked[usize::from(slot)] = None;
                self.slot_freed.notify_all();
            }
        }
    }

    /// Whether the device was marked dead ([`CmdQueue::mark_dead`]).
    pub(crate) fn is_dead(&self) -> bool {
        self.state.lock().dead
    }

    /// Marks the device dead: every waiting and future command fails at once.
    pub(crate) fn mark_dead(&self) {
        self.state.lock().dead = true;
        self.slot_freed.notify_all();
    }

    /// Switches completion to events (`true`) or back to polling. Exclusive: waits,
    /// holding the queue lock between checks, until no command is in flight, so no
    /// command ever straddles the switch.
    ///
    /// # Errors
    ///
    /// `EBUSY` if the queue does not drain within twice the default command timeout;
    /// `ENODEV` when switching a dead device's queue to events.
    pub(crate) fn set_event_mode(&self, on: bool) -> Result {
        let start = Instant::<Monotonic>::now();
        let budget = Delta::from_millis(
            i64::try_from(self.timeouts.cmd_ms(0))
                .unwrap_or(i64::MAX)
                .saturating_mul(2),
        );
        let mut st = self.state.lock();
        loop {
            if st.slots.busy_mask() == 0 {
                st.events = on;
                st.signalled = 0;
                return Ok(());
            }
            if st.dead {
                // Every command fails at once anyway; polling needs no EQ.
                st.events = false;
                return if on { Err(ENODEV) } else { Ok(()) };
            }
            if start.elapsed() > budget {
                return Err(EBUSY);
            }
            st = wait_or_nap(&self.slot_freed, &self.state, st, 10);
        }
    }

    /// Whether completion is by events.
    pub(crate) fn event_mode(&self) -> bool {
        self.state.lock().events
    }

    /// Event-mode counters.
    pub(crate) fn event_counters(&self) -> EventCounters {
        self.state.lock().ev
    }

    /// Command-completion event for the slots in `vector` (already checked against
    /// the number of slots): wakes their waiters. Slots without a command in flight are
    /// counted as stale and ignored.
    pub(crate) fn complete_slots(&self, vector: u32) {
        let mut st = self.state.lock();
        let live = st.slots.completed(vector) & !st.slots.timed_out_mask();
        st.ev.eqes += 1;
        st.ev.slots += u64::from(vector.count_ones());
        st.ev.stale += u64::from((vector & !live).count_ones());
        st.signalled |= live;
        drop(st);
        let mut m = live;
        while m != 0 {
            let slot = m.trailing_zeros() as usize;
            m &= m - 1;
            self.cmd_done[slot].notify_one();
        }
        if vector & !live != 0 {
            // A late completion of a parked slot: let a waiter for a slot reap it.
            self.slot_freed.notify_all();
        }
    }

    /// Waits in event mode until the device returns `slot` or `budget` passes.
    /// Returns true when the slot completed.
    fn wait_event(&self, slot: u8, start: Instant<Monotonic>, budget: Delta) -> bool {
        let bit = 1u32 << slot;
        let mut st = self.state.lock();
        loop {
            let signalled = st.signalled & bit != 0;
            if signalled {
                st.signalled &= !bit;
            }
            if self.status_own(slot) & OWN_HW == 0 {
                st.ev.commands += 1;
                if !signalled {
                    st.ev.rechecks += 1;
                }
                return true;
            }
            if signalled {
                // An event for this slot while the device still owns it: stale.
                st.ev.stale += 1;
            }
            if st.dead || start.elapsed() > budget {
                return false;
            }
            let wait = kernel::time::msecs_to_jiffies(EVENT_RECHECK_MS);
            st = wait_or_nap(&self.cmd_done[usize::from(slot)], &self.state, st, wait);
        }
    }

    /// Takes a slot for `opcode`, sleeping while every slot of its class is busy.
    /// Also returns whether the command completes by events.
    fn take_slot(&self, opcode: u16, op_mod: u16) -> Result<(u8, u8, bool), CmdError> {
        let mut st = self.state.lock();
        loop {
            if st.dead {
                return Err(CmdError::new(opcode, op_mod, ErrorKind::DeviceDead));
            }
            self.reap_parked(&mut st);
            match st.slots.alloc(opcode) {
                Ok(slot) => {
                    let token = st.tokens.next_token().get();
                    st.signalled &= !(1u32 << slot);
                    return Ok((slot, token, st.events));
                }
                Err(SlotError::Busy) => {
                    // Re-check parked slots now and then: a late completion frees a slot
                    // without anyone calling notify.
                    st = wait_or_nap(&self.slot_freed, &self.state, st, 10);
                }
                Err(_) => return Err(CmdError::new(opcode, op_mod, ErrorKind::NoSlot)),
            }
        }
    }

    /// Executes one command: `input` is the whole input message (header first),
    /// `output` receives the whole output message. Blocks (sleeping) until completion
    /// or timeout. Logs failures by opcode, op_mod, status and syndrome.
    ///
    /// # Errors
    ///
    /// A [`CmdError`] naming the command, whose [`CmdError::errno`] is:
    /// - the delivery or command status's errno when the device refused or failed
    ///   the command (`EBADR`, `EFAULT`, `ENOMSG`, `EIO`, `EINVAL`, `EBUSY`, `EAGAIN`,
    ///   `ENOMEM`: `status::delivery_errno`, `status::status_errno`), with the
    ///   syndrome and the output header copied to `output`;
    /// - `ETIMEDOUT` when no completion came within the opcode's timeout (the slot
    ///   and its mailboxes stay the device's);
    /// - `ENXIO` when the device is dead (before a slot was taken, at the doorbell, or
    ///   while waiting);
    /// - `EBUSY` when no slot could be taken for the opcode;
    /// - `ENOMEM` when the mailbox blocks could not be allocated;
    /// - `EIO` for a message shorter than its 8-byte header, a mailbox chain that
    ///   could not be built, or an output chain whose signatures or contents are bad.
    pub(crate) fn exec(
        &self,
        is: &dyn Regs,
        input: &[u8],
        output: &mut [u8],
    ) -> Result<(), CmdError> {
        let mut hdr = [0u8; INLINE_LEN];
        let n = input.len().min(INLINE_LEN);
        hdr[..n].copy_from_slice(&input[..n]);
        let (opcode, op_mod) = status::input_header(&hdr);
        let r = self.exec_inner(is, opcode, op_mod, input, output);
        if let Err(e) = &r {
            // On a dead or quiesced device, commands that only release resources fail
            // by design (upstream counts them as done); the death was logged once.
            if e.kind != ErrorKind::DeviceDead || !status::releases_resources(opcode) {
                dev_err!(self.dev, "command {}\n", Show(e));
            }
        }
        r
    }

    /// Logs a command whose output its parser rejected (device data out of range).
    pub(crate) fn report_rejected(&self, e: &CmdError) {
        dev_err!(self.dev, "command {}\n", Show(e));
    }

    fn exec_inner(
        &self,
        is: &dyn Regs,
        opcode: u16,
        op_mod: u16,
        input: &[u8],
        output: &mut [u8],
    ) -> Result<(), CmdError> {
        let fail = |kind| CmdError::new(opcode, op_mod, kind);
        if input.len() < 8 || output.len() < 8 {
            return Err(fail(ErrorKind::BadOutput));
        }
        let mut inb = DmaBlocks::new(self.dev_bound(), blocks_needed(input.len()))
            .map_err(|_| fail(ErrorKind::NoMemory))?;
        let mut outb = DmaBlocks::new(self.dev_bound(), blocks_needed(output.len()))
            .map_err(|_| fail(ErrorKind::NoMemory))?;

        let (slot, token, events) = self.take_slot(opcode, op_mod)?;
        let start = Instant::<Monotonic>::now();
        // From here every exit frees the slot or parks it: none leaks it.
        let Some(token) = super::token::Token::new(token) else {
            self.release(slot, opcode, start, Outcome::Error, None);
            return Err(fail(ErrorKind::NoSlot));
        };

        let mut inline_in = [0u8; INLINE_LEN];
        let prep = (|| {
            let ih = mailbox::write_input(&mut inline_in, &mut inb, input, token, self.checksums)?;
            let oh = mailbox::link_chain(&mut outb, output.len(), token)?;
            if self.checksums {
                mailbox::seal_chain(&mut outb, oh.nblocks);
            }
            Ok::<_, mailbox::MailboxError>((ih, oh))
        })();
        let (ih, oh) = match prep {
            Ok(h) => h,
            Err(m) => {
                self.release(slot, opcode, start, Outcome::Error, None);
                return Err(fail(ErrorKind::Mailbox(m)));
            }
        };
        // Type 7, lengths, pointers, token, ownership to the device, signed.
        self.write_entry(slot, &entry::build(token, &inline_in, &ih, &oh));

        // Entry and mailboxes must be visible to the device before the doorbell.
        wmb();
        let Some(bell) = entry::doorbell(slot) else {
            self.release(slot, opcode, start, Outcome::Error, None);
            return Err(fail(ErrorKind::NoSlot));
        };
        if is.write(seg::CMD_DBELL, bell).is_err() {
            self.release(slot, opcode, start, Outcome::Error, None);
            return Err(fail(ErrorKind::DeviceDead));
        }

        // Wait for the event or poll the ownership bit (spin briefly, then sleep in
        // growing steps).
        let budget =
            Delta::from_millis(i64::try_from(self.timeouts.cmd_ms(opcode)).unwrap_or(i64::MAX));
        let mut nap = 2i64;
        let by_event = events && self.wait_event(slot, start, budget);
        loop {
            if by_event || self.status_own(slot) & OWN_HW == 0 {
                break;
            }
            if start.elapsed() > budget {
                let mut st = self.state.lock();
                // The device may still DMA into the entry and the mailboxes: park them.
                let _ = st.slots.mark_timed_out(slot);
                st.parked[usize::from(slot)] = Some(Parked {
                    _input: inb,
                    _output: outb,
                });
                st.stats.record(opcode, elapsed_ns(start), Outcome::Timeout);
                return Err(fail(ErrorKind::Timeout));
            }
            if self.state.lock().dead {
                // The device is gone: its slot stays parked until the queue is dropped.
                let mut st = self.state.lock();
                let _ = st.slots.mark_timed_out(slot);
                st.parked[usize::from(slot)] = Some(Parked {
                    _input: inb,
                    _output: outb,
                });
                return Err(fail(ErrorKind::DeviceDead));
            }
            fsleep(Delta::from_micros(nap));
            nap = (nap * 2).min(1000);
        }
        // Read the output only after ownership returned.
        dma_rmb();
        let raw = self.read_entry(slot);
        let done = entry::completion(&raw);
        let out_inline = done.out;
        // What the device guarantees, nothing more (see `mailbox::read_output`): delivery
        // status, command status and syndrome, the output data, and with checksums on
        // the signatures (checked first, as upstream `verify_signature` does).
        let sigs = if self.checksums {
            mailbox::verify_signatures(&raw, &outb, output.len())
        } else {
            Ok(())
        };
        let mut r = match sigs {
            Ok(()) => status::decode(opcode, op_mod, done.status_own, &out_inline),
            Err(m) => Err(fail(ErrorKind::Mailbox(m))),
        };
        if r.is_ok() {
            if let Err(m) = mailbox::read_output(&out_inline, &outb, output.len(), output) {
                r = Err(fail(ErrorKind::Mailbox(m)));
            }
        } else {
            // Hand back the header so callers can see status and syndrome.
            let n = output.len().min(INLINE_LEN);
            output[..n].copy_from_slice(&out_inline[..n]);
        }
        let outcome = if r.is_ok() {
            Outcome::Ok
        } else {
            Outcome::Error
        };
        self.release(slot, opcode, start, outcome, Some((inb, outb)));
        r
    }

    fn release(
        &self,
        slot: u8,
        opcode: u16,
        start: Instant<Monotonic>,
        outcome: Outcome,
        bufs: Option<(DmaBlocks, DmaBlocks)>,
    ) {
        let mut st = self.state.lock();
        let _ = st.slots.free(slot);
        st.stats.record(opcode, elapsed_ns(start), outcome);
        drop(st);
        drop(bufs);
        self.slot_freed.notify_one();
    }

    fn dev_bound(&self) -> &device::Device<Bound> {
        // SAFETY: the queue lives inside the driver data of a bound device and is dropped
        // before unbind completes, so the device is bound whenever `self` is reachable.
        unsafe { self.dev.as_bound() }
    }

    /// Slots with a command in flight and slots parked after a timeout (debugfs
    /// `cmd_stats`).
    pub(crate) fn slot_usage(&self) -> (u32, u32) {
        let st = self.state.lock();
        (
            st.slots.busy_mask().count_ones(),
            st.slots.timed_out_mask().count_ones(),
        )
    }

    /// Runs `f` on the per-opcode statistics, under the queue's lock (a copy of the
    /// table would take ~3.7 KiB of the caller's stack). `f` must not run a command.
    pub(crate) fn with_stats<R>(&self, f: impl FnOnce(&CmdStats) -> R) -> R {
        f(&self.state.lock().stats)
    }
}

fn elapsed_ns(start: Instant<Monotonic>) -> u64 {
    u64::try_from(start.elapsed().as_nanos()).unwrap_or(0)
}
