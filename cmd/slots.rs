// SPDX-License-Identifier: GPL-2.0

//! Command slot bookkeeping.
//!
//! The command queue has `1 << log_cmdq_size` entries (at most 32). The last
//! one is reserved for page commands (MANAGE_PAGES and QUERY_PAGES) so that
//! supplying pages to the firmware never waits behind regular commands that
//! are themselves waiting for pages; the others are regular slots, taken
//! lowest free index first.
//!
//! A slot is `Free`, `Busy` (a command is being built or is in flight) or
//! `TimedOut`: its command got no completion in time, so the device may
//! still write its entry and mailboxes. A timed-out slot is not reused —
//! and the shell must not free its mailboxes — until the device completes
//! it late or is declared dead. When every regular slot is timed out, new
//! regular commands fail at once instead of waiting forever.
//!
//! [`Slots`] is plain data: the kernel shell keeps it under its queue lock
//! and sleeps on a condition variable while [`Slots::alloc`] returns
//! [`SlotError::Busy`].
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use crate::ifc::cmd_layout::MAX_SLOTS;
use crate::ifc::opcodes::Opcode;

/// Which slots a command may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotClass {
    /// Any regular slot.
    Regular,
    /// The reserved page slot (MANAGE_PAGES, QUERY_PAGES).
    Pages,
}

impl SlotClass {
    /// The class of a command by opcode.
    pub fn for_opcode(opcode: u16) -> Self {
        match Opcode::from_raw(opcode) {
            Some(Opcode::MANAGE_PAGES | Opcode::QUERY_PAGES) => Self::Pages,
            _ => Self::Regular,
        }
    }
}

/// State of one slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotState {
    /// Available.
    Free,
    /// Owned by a caller, command in preparation or in flight.
    Busy,
    /// Command timed out; the device may still own entry and mailboxes.
    TimedOut,
}

/// Slot bookkeeping errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotError {
    /// `log_cmdq_size` gives fewer than 2 or more than 32 slots.
    BadQueueSize {
        /// The log2 size read from the device.
        log_size: u8,
    },
    /// No slot of the class is free now; wait and retry.
    Busy,
    /// Every slot of the class is stuck after a timeout; do not wait.
    AllStalled,
    /// Slot index outside the queue.
    BadSlot(u8),
    /// Operation not valid in the slot's current state.
    WrongState {
        /// The slot.
        slot: u8,
        /// Its state.
        state: SlotState,
    },
}

/// Slots of one command queue.
#[derive(Clone, Debug)]
pub struct Slots {
    nslots: u8,
    /// Bit i set: slot i free.
    free: u32,
    /// Bit i set: slot i timed out (device-owned).
    timed_out: u32,
    /// Opcode of the command in each busy or timed-out slot.
    opcode: [u16; MAX_SLOTS],
}

fn bit(slot: u8) -> u32 {
    1u32.checked_shl(u32::from(slot)).unwrap_or(0)
}

impl Slots {
    /// Slots for a queue of `1 << log_cmdq_size` entries; all free.
    pub fn new(log_cmdq_size: u8) -> Result<Self, SlotError> {
        let bad = SlotError::BadQueueSize {
            log_size: log_cmdq_size,
        };
        let n = 1usize.checked_shl(u32::from(log_cmdq_size)).ok_or(bad)?;
        if !(2..=MAX_SLOTS).contains(&n) {
            return Err(bad);
        }
        let nslots = u8::try_from(n).map_err(|_| bad)?;
        let all = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
        Ok(Self {
            nslots,
            free: all,
            timed_out: 0,
            opcode: [0; MAX_SLOTS],
        })
    }

    /// Total number of slots.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn len(&self) -> u8 {
        self.nslots
    }

    /// Always false (a queue has at least 2 slots); for API symmetry.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn is_empty(&self) -> bool {
        self.nslots == 0
    }

    /// Index of the reserved page slot (the last one).
    pub fn page_slot(&self) -> u8 {
        self.nslots - 1
    }

    /// Number of regular slots.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn regular_slots(&self) -> u8 {
        self.nslots - 1
    }

    fn all_mask(&self) -> u32 {
        if self.nslots >= 32 {
            u32::MAX
        } else {
            (1u32 << self.nslots) - 1
        }
    }

    fn class_mask(&self, class: SlotClass) -> u32 {
        let page = bit(self.page_slot());
        match class {
            SlotClass::Pages => page,
            SlotClass::Regular => self.all_mask() & !page,
        }
    }

    /// State of `slot`.
    pub fn state(&self, slot: u8) -> Result<SlotState, SlotError> {
        if slot >= self.nslots {
            return Err(SlotError::BadSlot(slot));
        }
        let b = bit(slot);
        Ok(if self.free & b != 0 {
            SlotState::Free
        } else if self.timed_out & b != 0 {
            SlotState::TimedOut
        } else {
            SlotState::Busy
        })
    }

    /// Opcode of the command in a busy or timed-out slot.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn opcode(&self, slot: u8) -> Option<u16> {
        match self.state(slot) {
            Ok(SlotState::Busy | SlotState::TimedOut) => {
                self.opcode.get(usize::from(slot)).copied()
            }
            _ => None,
        }
    }

    /// Takes a slot for a command of `opcode`: the page slot for page
    /// commands, else the lowest free regular slot. [`SlotError::Busy`]
    /// means wait for a [`Slots::free`]; [`SlotError::AllStalled`] means
    /// every candidate slot is stuck after a timeout.
    pub fn alloc(&mut self, opcode: u16) -> Result<u8, SlotError> {
        let mask = self.class_mask(SlotClass::for_opcode(opcode));
        let avail = self.free & mask;
        if avail == 0 {
            return Err(if self.timed_out & mask == mask {
                SlotError::AllStalled
            } else {
                SlotError::Busy
            });
        }
        // trailing_zeros of a non-zero u32 is < 32, fits u8.
        let slot = u8::try_from(avail.trailing_zeros()).map_err(|_| SlotError::Busy)?;
        self.free &= !bit(slot);
        if let Some(o) = self.opcode.get_mut(usize::from(slot)) {
            *o = opcode;
        }
        Ok(slot)
    }

    /// Returns a busy slot after its command completed (or was never sent).
    pub fn free(&mut self, slot: u8) -> Result<(), SlotError> {
        match self.state(slot)? {
            SlotState::Busy => {
                self.free |= bit(slot);
                Ok(())
            }
            state => Err(SlotError::WrongState { slot, state }),
        }
    }

    /// Marks a busy slot whose command timed out: it stays device-owned.
    pub fn mark_timed_out(&mut self, slot: u8) -> Result<(), SlotError> {
        match self.state(slot)? {
            SlotState::Busy => {
                self.timed_out |= bit(slot);
                Ok(())
            }
            state => Err(SlotError::WrongState { slot, state }),
        }
    }

    /// The device returned ownership of a timed-out slot (late completion):
    /// the slot becomes free and its mailboxes may be released.
    pub fn late_completion(&mut self, slot: u8) -> Result<(), SlotError> {
        match self.state(slot)? {
            SlotState::TimedOut => {
                self.timed_out &= !bit(slot);
                self.free |= bit(slot);
                Ok(())
            }
            state => Err(SlotError::WrongState { slot, state }),
        }
    }

    /// The device is confirmed dead (no more DMA): every timed-out slot is
    /// freed. Returns the mask of slots released, whose mailboxes the shell
    /// may now free. Busy slots stay with their callers.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn device_dead(&mut self) -> u32 {
        let released = self.timed_out;
        self.free |= released;
        self.timed_out = 0;
        released
    }

    /// Mask of busy slots (commands in flight), e.g. to force-complete them
    /// when the device dies.
    pub fn busy_mask(&self) -> u32 {
        self.all_mask() & !self.free & !self.timed_out
    }

    /// Mask of timed-out slots.
    pub fn timed_out_mask(&self) -> u32 {
        self.timed_out
    }

    /// Whether no slot is busy or timed out.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn idle(&self) -> bool {
        self.free == self.all_mask()
    }

    /// Filters the slot vector of a command-completion event: only slots
    /// with a command in flight or timed out can complete; other bits
    /// (spurious, or beyond the queue) are dropped.
    pub fn completed(&self, vector: u32) -> u32 {
        vector & self.all_mask() & !self.free
    }
}

/// Iterates over the set bits of a slot mask, lowest first.
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(dead_code, reason = "host-tested, not used by the driver yet")
)]
pub fn mask_slots(mut mask: u32) -> impl Iterator<Item = u8> {
    core::iter::from_fn(move || {
        if mask == 0 {
            return None;
        }
        let s = mask.trailing_zeros();
        mask &= mask - 1;
        u8::try_from(s).ok()
    })
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_cmd_slots))]
mod tests {
    use super::*;
    use crate::testing::ArrayVec;

    const NOP: u16 = 0x80d;
    const MANAGE_PAGES: u16 = 0x108;
    const QUERY_PAGES: u16 = 0x107;

    #[test]
    fn sizes() {
        assert!(matches!(
            Slots::new(0),
            Err(SlotError::BadQueueSize { log_size: 0 })
        ));
        assert!(Slots::new(6).is_err());
        assert!(Slots::new(200).is_err());
        let s = Slots::new(1).unwrap();
        assert_eq!((s.len(), s.page_slot(), s.regular_slots()), (2, 1, 1));
        let s = Slots::new(5).unwrap();
        assert_eq!((s.len(), s.page_slot(), s.regular_slots()), (32, 31, 31));
        assert!(s.idle());
    }

    #[test]
    fn regular_lowest_first_and_page_slot_reserved() {
        let mut s = Slots::new(2).unwrap(); // 4 slots: 0..2 regular, 3 pages
        assert_eq!(s.alloc(NOP), Ok(0));
        assert_eq!(s.alloc(NOP), Ok(1));
        assert_eq!(s.alloc(NOP), Ok(2));
        // regular exhausted: the page slot is not handed out
        assert_eq!(s.alloc(NOP), Err(SlotError::Busy));
        // page commands still get their slot
        assert_eq!(s.alloc(MANAGE_PAGES), Ok(3));
        assert_eq!(s.alloc(QUERY_PAGES), Err(SlotError::Busy));
        assert_eq!(s.opcode(3), Some(MANAGE_PAGES));
        assert_eq!(s.opcode(1), Some(NOP));
        s.free(1).unwrap();
        assert_eq!(s.opcode(1), None);
        assert_eq!(s.alloc(NOP), Ok(1));
        s.free(3).unwrap();
        assert_eq!(s.alloc(QUERY_PAGES), Ok(3));
    }

    #[test]
    fn full_32_slot_queue() {
        let mut s = Slots::new(5).unwrap();
        let got: ArrayVec<u8, 32> = (0..31).map(|_| s.alloc(NOP).unwrap()).collect();
        assert_eq!(got, (0..31).collect::<ArrayVec<u8, 32>>());
        assert_eq!(s.alloc(NOP), Err(SlotError::Busy));
        assert_eq!(s.alloc(MANAGE_PAGES), Ok(31));
        assert_eq!(s.busy_mask(), u32::MAX);
        for i in 0..32 {
            s.free(i).unwrap();
        }
        assert!(s.idle());
    }

    #[test]
    fn double_free_and_bad_slot() {
        let mut s = Slots::new(2).unwrap();
        assert_eq!(
            s.free(0),
            Err(SlotError::WrongState {
                slot: 0,
                state: SlotState::Free
            })
        );
        assert_eq!(s.free(4), Err(SlotError::BadSlot(4)));
        assert_eq!(s.state(200), Err(SlotError::BadSlot(200)));
        let a = s.alloc(NOP).unwrap();
        s.free(a).unwrap();
        assert!(s.free(a).is_err());
    }

    #[test]
    fn timed_out_slot_is_not_reused_until_returned() {
        let mut s = Slots::new(1).unwrap(); // 1 regular + page slot
        let a = s.alloc(NOP).unwrap();
        s.mark_timed_out(a).unwrap();
        assert_eq!(s.state(a), Ok(SlotState::TimedOut));
        // cannot be freed by the caller
        assert!(matches!(s.free(a), Err(SlotError::WrongState { .. })));
        // the only regular slot is stuck: fail fast
        assert_eq!(s.alloc(NOP), Err(SlotError::AllStalled));
        // page commands still go through
        let p = s.alloc(MANAGE_PAGES).unwrap();
        s.free(p).unwrap();
        // late completion frees it
        assert_eq!(s.completed(0b11), 0b01);
        s.late_completion(a).unwrap();
        assert_eq!(s.state(a), Ok(SlotState::Free));
        assert_eq!(s.alloc(NOP), Ok(a));
        // late completion of a busy slot is a state error
        assert!(s.late_completion(a).is_err());
    }

    #[test]
    fn some_timed_out_others_busy_means_wait() {
        let mut s = Slots::new(2).unwrap();
        let a = s.alloc(NOP).unwrap();
        let _b = s.alloc(NOP).unwrap();
        let _c = s.alloc(NOP).unwrap();
        s.mark_timed_out(a).unwrap();
        assert_eq!(s.alloc(NOP), Err(SlotError::Busy));
        // later commands still go through once a busy one frees
        s.free(1).unwrap();
        assert_eq!(s.alloc(NOP), Ok(1));
    }

    #[test]
    fn device_dead_releases_timed_out_only() {
        let mut s = Slots::new(2).unwrap();
        let a = s.alloc(NOP).unwrap();
        let b = s.alloc(NOP).unwrap();
        s.mark_timed_out(b).unwrap();
        assert_eq!(s.busy_mask(), 1 << a);
        assert_eq!(s.timed_out_mask(), 1 << b);
        assert_eq!(s.device_dead(), 1 << b);
        assert_eq!(s.state(b), Ok(SlotState::Free));
        assert_eq!(s.state(a), Ok(SlotState::Busy));
        assert_eq!(s.device_dead(), 0);
    }

    #[test]
    fn completion_vector_filter() {
        let mut s = Slots::new(3).unwrap(); // 8 slots
        let a = s.alloc(NOP).unwrap();
        let p = s.alloc(MANAGE_PAGES).unwrap();
        assert_eq!(p, 7);
        // bits for free slots and beyond the queue are dropped
        assert_eq!(s.completed(u32::MAX), (1 << a) | (1 << p));
        assert_eq!(s.completed(0), 0);
        let v: ArrayVec<u8, 32> = mask_slots(s.completed(u32::MAX)).collect();
        assert_eq!(v, [0, 7]);
        let all: ArrayVec<u8, 32> = mask_slots(u32::MAX).collect();
        assert_eq!(all.len(), 32);
        assert_eq!(all[31], 31);
    }

    #[test]
    fn classes() {
        assert_eq!(SlotClass::for_opcode(MANAGE_PAGES), SlotClass::Pages);
        assert_eq!(SlotClass::for_opcode(QUERY_PAGES), SlotClass::Pages);
        assert_eq!(SlotClass::for_opcode(NOP), SlotClass::Regular);
        assert_eq!(SlotClass::for_opcode(0xffff), SlotClass::Regular);
    }
}
