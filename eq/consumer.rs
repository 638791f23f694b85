// SPDX-License-Identifier: GPL-2.0

//! EQ consumer index and owner-bit logic.
//!
//! An EQ of `2^log_size` 64-byte entries is a ring the device produces
//! into. Software keeps a free-running 32-bit consumer counter `cc` (never
//! masked); the current entry is `cc & (nent - 1)`. Entries start with
//! owner = 1; the device writes owner = `(producer >> log_size) & 1`, so an
//! entry is ready for software when its owner bit equals
//! `(cc >> log_size) & 1` — 0 on the first pass, 1 on the second, and so on
//! across wrap-around.
//!
//! Software publishes `cc` through the EQ doorbell (UAR + 0x40 to update
//! and arm, + 0x48 to update only) as `eqn << 24 | (cc & 0xffffff)`: after
//! each interrupt's batch (at most [`POLL_BUDGET`] entries), and at least
//! every [`SPARE_EQES`] entries, which is why the ring is created with that
//! many spare entries.
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use crate::ifc::eq::eq_doorbell;

/// Owner value software writes into every entry when creating the EQ.
pub const INIT_OWNER: u8 = 1;
/// Entries handled per interrupt before updating and re-arming.
pub const POLL_BUDGET: u32 = 128;
/// Spare entries added to every EQ; the consumer index must be published
/// at least this often.
pub const SPARE_EQES: u32 = 0x80;
/// Largest supported log2 EQ size (the doorbell carries 24 bits of `cc`).
pub const MAX_LOG_SIZE: u8 = 24;

/// EQ geometry problems.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EqError {
    /// Size not representable.
    BadSize,
}

/// log2 of the ring size for an EQ that must hold `nent` events: `nent`
/// plus the spare entries, rounded up to a power of two.
pub fn log_size_for(nent: u32) -> Result<u8, EqError> {
    let n = nent
        .checked_add(SPARE_EQES)
        .and_then(u32::checked_next_power_of_two)
        .ok_or(EqError::BadSize)?;
    let log = u8::try_from(n.trailing_zeros()).map_err(|_| EqError::BadSize)?;
    if log > MAX_LOG_SIZE {
        return Err(EqError::BadSize);
    }
    Ok(log)
}

/// Owner bit the device writes into the entry it produces at producer
/// count `pi` (for the emulator and tests).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(dead_code, reason = "host-tested, not used by the driver yet")
)]
pub fn producer_owner(pi: u32, log_size: u8) -> u8 {
    u8::from(pi.checked_shr(u32::from(log_size)).unwrap_or(0) & 1 == 1)
}

/// Consumer side of one EQ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EqConsumer {
    cc: u32,
    log_size: u8,
    eqn: u8,
    since_publish: u32,
}

impl EqConsumer {
    /// A consumer for EQ number `eqn` with `2^log_size` entries, all of
    /// which the caller initialised with owner [`INIT_OWNER`].
    pub fn new(eqn: u8, log_size: u8) -> Result<Self, EqError> {
        if log_size > MAX_LOG_SIZE {
            return Err(EqError::BadSize);
        }
        Ok(Self {
            cc: 0,
            log_size,
            eqn,
            since_publish: 0,
        })
    }

    /// Number of entries.
    pub fn nent(&self) -> u32 {
        1u32 << self.log_size
    }

    /// Consumer counter (free running).
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn cc(&self) -> u32 {
        self.cc
    }

    /// Ring index of the next entry to look at.
    pub fn index(&self) -> usize {
        // < 2^24, lossless on every supported target.
        (self.cc & (self.nent() - 1)) as usize
    }

    /// Whether the entry at [`EqConsumer::index`], whose last byte (owner)
    /// reads `owner`, has been written by the device for this pass. Read
    /// the rest of the entry only after this returns true and a DMA read
    /// barrier.
    pub fn ready(&self, owner: u8) -> bool {
        (owner & 1) == u8::from((self.cc >> self.log_size) & 1 == 1)
    }

    /// Consumes the current entry.
    pub fn advance(&mut self) {
        self.cc = self.cc.wrapping_add(1);
        self.since_publish = self.since_publish.saturating_add(1);
    }

    /// Whether the consumer index must be published now, in the middle of a
    /// batch, so the device never overruns the spare entries.
    pub fn must_publish(&self) -> bool {
        self.since_publish >= SPARE_EQES
    }

    /// The doorbell value (`eqn << 24 | cc & 0xffffff`) and marks the index
    /// as published. Write it big-endian to UAR + 0x40 (arm) or + 0x48.
    pub fn publish(&mut self) -> u32 {
        self.since_publish = 0;
        self.doorbell_value()
    }

    /// The doorbell value without marking it published.
    pub fn doorbell_value(&self) -> u32 {
        eq_doorbell::value(self.eqn, self.cc)
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_eq_consumer))]
mod tests {
    use super::*;
    use crate::testing::ArrayVec;

    #[test]
    fn sizes() {
        assert_eq!(log_size_for(0), Ok(7)); // 128 spare
        assert_eq!(log_size_for(1), Ok(8));
        assert_eq!(log_size_for(128), Ok(8));
        assert_eq!(log_size_for(129), Ok(9));
        assert_eq!(log_size_for(u32::MAX), Err(EqError::BadSize));
        assert_eq!(log_size_for(1 << 24), Err(EqError::BadSize));
        assert!(EqConsumer::new(0, 25).is_err());
    }

    #[test]
    fn fresh_ring_is_empty() {
        let c = EqConsumer::new(3, 2).unwrap();
        assert!(!c.ready(INIT_OWNER));
        assert_eq!(c.index(), 0);
    }

    /// Device and consumer running through several wrap-arounds.
    #[test]
    fn owner_bit_across_wraps() {
        let log = 2u8;
        let n = 1usize << log;
        let mut ring = [INIT_OWNER; 4];
        let mut c = EqConsumer::new(5, log).unwrap();
        let mut pi = 0u32;
        let mut seen: ArrayVec<u32, 32> = ArrayVec::new();
        for round in 0..10u32 {
            // device produces up to 3 entries (never more than the ring)
            let k = 1 + round % 3;
            for _ in 0..k {
                ring[(pi as usize) & (n - 1)] = producer_owner(pi, log);
                pi += 1;
            }
            // consumer drains exactly what was produced
            while c.ready(ring[c.index()]) {
                seen.push(c.cc());
                c.advance();
            }
            assert_eq!(c.cc(), pi);
        }
        assert_eq!(seen, (0..pi).collect::<ArrayVec<_, 32>>());
    }

    #[test]
    fn stale_entry_not_ready_after_wrap() {
        let mut c = EqConsumer::new(0, 1).unwrap(); // 2 entries
                                                    // first pass: device writes owner 0
        assert!(c.ready(0));
        c.advance();
        assert!(c.ready(0));
        c.advance();
        // second pass: the old owner 0 is stale, 1 is new
        assert_eq!(c.index(), 0);
        assert!(!c.ready(0));
        assert!(c.ready(1));
    }

    #[test]
    fn counter_wraps_u32() {
        let mut c = EqConsumer::new(1, 4).unwrap();
        c.cc = u32::MAX;
        let owner = producer_owner(u32::MAX, 4);
        assert!(c.ready(owner));
        c.advance();
        assert_eq!(c.cc(), 0);
        assert_eq!(c.index(), 0);
        assert!(c.ready(producer_owner(0, 4)));
    }

    #[test]
    fn doorbell_and_publish_cadence() {
        let mut c = EqConsumer::new(0xab, 10).unwrap();
        for _ in 0..(SPARE_EQES - 1) {
            c.advance();
        }
        assert!(!c.must_publish());
        c.advance();
        assert!(c.must_publish());
        assert_eq!(c.publish(), 0xab00_0080);
        assert!(!c.must_publish());
        c.cc = 0x0123_4567;
        assert_eq!(c.doorbell_value(), 0xab23_4567);
    }
}
