// SPDX-License-Identifier: GPL-2.0

//! Removing a QP's CQEs from a kernel CQ, as upstream `__mlx5_ib_cq_clean` (`cq.c`)
//! does when a kernel QP moves to RESET or is destroyed, so that a later poll never
//! sees them (nor gives them to a QP that reuses the number, or to the same QP's
//! new work requests after RESET).
//!
//! From the consumer counter the software-owned CQEs are counted (at most the ring
//! less one entry); then the ring is swept backwards: a CQE of the QP is removed
//! (the caller frees its SRQ WQE, `mlx5_ib_free_srq_wqe`), any other is moved up
//! over the removed ones, keeping the owner bit of the entry it lands on. The
//! consumer counter then goes up by the number removed (the caller writes it to
//! the doorbell record after a write barrier).
//!
//! Pure `core` code over [`CleanRing`], host-tested and run as a KUnit suite.

use crate::ifc::wqe::vals::CQE_OWNER_MASK;

/// A kernel CQ's ring as the cleaning sees it, by consumer counter.
pub trait CleanRing {
    /// Whether software owns the CQE at counter `n` (upstream `get_sw_cqe`).
    fn sw_owned(&self, n: u32) -> bool;
    /// The QP number the CQE at `n` names (`sop_drop_qpn` 23:0); `None` when it
    /// cannot be read.
    fn qpn(&self, n: u32) -> Option<u32>;
    /// The CQE at `n` is removed (before anything is moved over it).
    fn removed(&mut self, n: u32);
    /// Copies the entry at `from` over the one at `to`, keeping `to`'s owner bit
    /// ([`moved_op_own`]).
    fn copy(&mut self, from: u32, to: u32);
}

/// The `op_own` byte of an entry moved over one whose `op_own` was `dest`: the
/// moved entry's opcode with the destination's owner bit.
pub fn moved_op_own(src: u8, dest: u8) -> u8 {
    (src & !CQE_OWNER_MASK) | (dest & CQE_OWNER_MASK)
}

/// Removes the CQEs of QP `qpn` from the software-owned ones from counter `ci` on
/// in a ring of `ncqe + 1` entries; returns how many were removed (the consumer
/// counter's advance).
pub fn clean<R: CleanRing>(r: &mut R, ci: u32, ncqe: u32, qpn: u32) -> u32 {
    let mut prod = ci;
    while r.sw_owned(prod) {
        if prod == ci.wrapping_add(ncqe) {
            break;
        }
        prod = prod.wrapping_add(1);
    }
    let mut nfreed = 0u32;
    while prod != ci {
        prod = prod.wrapping_sub(1);
        if r.qpn(prod) == Some(qpn) {
            r.removed(prod);
            nfreed += 1;
        } else if nfreed != 0 {
            r.copy(prod, prod.wrapping_add(nfreed));
        }
    }
    nfreed
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_cq_clean))]
mod tests {
    use super::*;

    const N: u32 = 8;

    /// A ring of `N` entries: (QP number, a tag, `op_own`), as the device left it.
    struct Ring {
        e: [(u32, u32, u8); N as usize],
        removed: [u32; N as usize],
        nremoved: usize,
    }

    impl Ring {
        /// Entries from counter `ci` on: `qpns` software-owned (owner bit of their
        /// pass), the rest still the device's (the previous pass's owner bit).
        fn new(ci: u32, qpns: &[u32]) -> Self {
            let mut r = Ring {
                e: [(0, 0, 0); N as usize],
                removed: [0; N as usize],
                nremoved: 0,
            };
            for k in 0..N {
                let n = ci.wrapping_add(k);
                let pass = u8::from(n & N != 0);
                let (q, own) = match qpns.get(k as usize) {
                    Some(&q) => (q, pass),
                    None => (0, pass ^ 1),
                };
                // Opcode 2 (a receive) in the high nibble.
                r.e[(n % N) as usize] = (q, n, 0x20 | own);
            }
            r
        }
        fn at(&self, n: u32) -> (u32, u32, u8) {
            self.e[(n % N) as usize]
        }
    }

    impl CleanRing for Ring {
        fn sw_owned(&self, n: u32) -> bool {
            (self.at(n).2 & 1 != 0) == (n & N != 0)
        }
        fn qpn(&self, n: u32) -> Option<u32> {
            Some(self.at(n).0)
        }
        fn removed(&mut self, n: u32) {
            self.removed[self.nremoved] = self.at(n).1;
            self.nremoved += 1;
        }
        fn copy(&mut self, from: u32, to: u32) {
            let (q, tag, own) = self.at(from);
            let dest = self.at(to).2;
            self.e[(to % N) as usize] = (q, tag, moved_op_own(own, dest));
        }
    }

    #[test]
    fn removes_the_qps_and_keeps_order() {
        // From counter 2: QPs 5, 7, 5, 9, 7 owned by software, the rest not.
        let mut r = Ring::new(2, &[5, 7, 5, 9, 7]);
        let n = clean(&mut r, 2, N - 1, 5);
        assert_eq!(n, 2);
        // Removed from the back: the CQEs at counters 4 and 2.
        assert_eq!(&r.removed[..2], &[4, 2]);
        // The consumer counter moves to 4: 7 (tag 3), 9 (tag 5), 7 (tag 6) in order.
        let left: [(u32, u32); 3] = core::array::from_fn(|k| {
            let (q, t, _) = r.at(4 + k as u32);
            (q, t)
        });
        assert_eq!(left, [(7, 3), (9, 5), (7, 6)]);
        // Each still owned by software at its new counter; the entry after them not.
        assert!((4..7).all(|c| r.sw_owned(c)));
        assert!(!r.sw_owned(7));
    }

    #[test]
    fn across_the_wrap() {
        // From counter 6 (pass 0): counters 6, 7 then 8, 9 of pass 1.
        let mut r = Ring::new(6, &[1, 2, 1, 3]);
        assert_eq!(clean(&mut r, 6, N - 1, 1), 2);
        assert_eq!(&r.removed[..2], &[8, 6]);
        let (q8, t8, o8) = r.at(8);
        let (q9, t9, o9) = r.at(9);
        // QP 2's CQE of counter 7 moved to counter 8 takes pass 1's owner bit.
        assert_eq!((q8, t8, o8 & 1), (2, 7, 1));
        assert_eq!((q9, t9, o9 & 1), (3, 9, 1));
        assert!(r.sw_owned(8) && r.sw_owned(9));
        assert_eq!(o8 >> 4, 2);
    }

    #[test]
    fn nothing_to_remove_moves_nothing() {
        let mut r = Ring::new(0, &[4, 4]);
        let before = r.e;
        assert_eq!(clean(&mut r, 0, N - 1, 5), 0);
        assert_eq!(r.e, before);
        // No software-owned CQE at all.
        let mut e = Ring::new(3, &[]);
        assert_eq!(clean(&mut e, 3, N - 1, 0), 0);
        assert_eq!(e.nremoved, 0);
    }

    #[test]
    fn at_most_the_ring_less_one() {
        // Every entry software-owned (a device that overran the ring): only `ncqe`
        // entries from the counter are swept, the last one is left alone.
        let mut r = Ring::new(0, &[5; N as usize]);
        assert_eq!(clean(&mut r, 0, N - 1, 5), N - 1);
        assert_eq!(r.at(N - 1).1, N - 1);
    }

    #[test]
    fn owner_bit_of_the_destination() {
        assert_eq!(moved_op_own(0x21, 0x00), 0x20);
        assert_eq!(moved_op_own(0xd0, 0x01), 0xd1);
        assert_eq!(moved_op_own(0x31, 0xf1), 0x31);
    }
}
