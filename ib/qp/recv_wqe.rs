// SPDX-License-Identifier: GPL-2.0

//! Receive WQE building for kernel `post_recv`, as upstream `mlx5_ib_post_recv`
//! (`qp.c`) builds one: the scatter list as data segments (`ifc::wqe::WqeDataSeg`)
//! and, when it is shorter than the queue's `max_gs`, a terminating segment of 0
//! bytes with the terminating mkey (`MLX5_TERMINATE_SCATTER_LIST_LKEY`, or the
//! device's `terminate_scatter_list_mkey` where the cap says it has one).
//!
//! The doorbell record after a batch is `head & 0xffff` (upstream writes
//! `cpu_to_be32(qp->rq.head & 0xffff)`); that is the caller's.
//!
//! Pure `core` code, host-tested and run as a KUnit suite.

use crate::errno::Errno;
use crate::ib::qp::send_wqe::Sge;
use crate::ifc::wqe::WqeDataSeg;
use zerocopy::byteorder::big_endian::{U32, U64};
use zerocopy::FromBytes;

/// Bytes of one data segment.
const DATA_SEG: usize = core::mem::size_of::<WqeDataSeg>();

/// The receive queue as created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RqGeometry {
    /// WQEs in the ring (`rq.wqe_cnt`, a power of two).
    pub wqe_cnt: u32,
    /// log2 of the WQE stride in bytes (`rq.wqe_shift`).
    pub wqe_shift: u32,
    /// Scatter entries per WQE (`rq.max_gs`).
    pub max_gs: u32,
    /// Work requests the queue holds (`rq.max_post`).
    pub max_post: u32,
    /// The key of the terminating segment
    /// ([`crate::ifc::umr::vals::TERMINATE_SCATTER_LIST_LKEY`] unless the device has
    /// its own).
    pub terminate_lkey: u32,
}

/// A receive queue's geometry checked once, when the queue is created
/// ([`RqShape::new`]): a post call then checks only its ring's length
/// ([`RecvRing::new`]).
///
/// INVARIANT: `mask + 1` is a power of two, `seg_shift < usize::BITS`, the ring is
/// `bytes` = `(mask + 1) << seg_shift` segments of [`DATA_SEG`] bytes (no overflow),
/// and `max_gs <= 1 << seg_shift`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RqShape {
    /// Bytes of the ring.
    bytes: usize,
    /// `wqe_cnt - 1`.
    mask: u32,
    /// log2 of the segments in a WQE's stride.
    seg_shift: u32,
    /// [`RqGeometry::max_gs`].
    max_gs: usize,
    /// [`RqGeometry::max_post`].
    max_post: u32,
    /// [`RqGeometry::terminate_lkey`].
    terminate_lkey: u32,
}

impl RqShape {
    /// `geo` checked: `EINVAL` for a count not a power of two, a stride smaller than
    /// a segment or too small for `max_gs` segments, a ring whose size overflows.
    pub fn new(geo: &RqGeometry) -> Result<Self, Errno> {
        let seg_shift = geo
            .wqe_shift
            .checked_sub(DATA_SEG.trailing_zeros())
            .filter(|s| *s < usize::BITS)
            .ok_or(Errno::EINVAL)?;
        let per_wqe = 1usize << seg_shift;
        let bytes = (geo.wqe_cnt as usize)
            .checked_mul(per_wqe)
            .and_then(|n| n.checked_mul(DATA_SEG))
            .ok_or(Errno::EINVAL)?;
        let max_gs = geo.max_gs as usize;
        if !geo.wqe_cnt.is_power_of_two() || max_gs > per_wqe {
            return Err(Errno::EINVAL);
        }
        // INVARIANT: each part checked above.
        Ok(Self {
            bytes,
            mask: geo.wqe_cnt - 1,
            seg_shift,
            max_gs,
            max_post: geo.max_post,
            terminate_lkey: geo.terminate_lkey,
        })
    }
}

/// A receive queue's ring checked against its [`RqShape`] once for a post call
/// ([`RecvRing::new`]), and the call's producer counter: [`RecvRing::build`] writes
/// one request's WQE and advances it.
///
/// INVARIANT: `segs` is the ring `shape` describes (its length `shape.bytes`).
pub struct RecvRing<'a> {
    /// The ring as data segments.
    segs: &'a mut [WqeDataSeg],
    shape: RqShape,
    /// The work requests posted: the next request's counter.
    head: u32,
    /// Requests the queue takes before it is full (`max_post` less those in flight).
    room: u32,
}

impl<'a> RecvRing<'a> {
    /// `ring` as the queue `shape` describes it, `head` work requests posted and
    /// `tail` completed: `EINVAL` for a ring of another size.
    #[inline(always)]
    pub fn new(shape: &RqShape, ring: &'a mut [u8], head: u32, tail: u32) -> Result<Self, Errno> {
        if ring.len() != shape.bytes {
            return Err(Errno::EINVAL);
        }
        let segs = <[WqeDataSeg]>::mut_from_bytes(ring).map_err(|_| Errno::EINVAL)?;
        // INVARIANT: `ring` is `shape.bytes` long, checked above.
        Ok(Self {
            segs,
            shape: *shape,
            head,
            // As upstream's `mlx5r_wq_overflow`: full once `head - tail` reaches
            // `max_post`, in wrapping counters.
            room: shape.max_post.saturating_sub(head.wrapping_sub(tail)),
        })
    }

    /// The work requests posted, this call's included.
    pub fn head(&self) -> u32 {
        self.head
    }

    /// Writes the WQE of the next work request (slot `head & (wqe_cnt - 1)`) and
    /// advances the counter; returns the slot, where the caller records `wr_id`.
    ///
    /// Errors, in upstream's order: queue full (`mlx5r_wq_overflow`) `-ENOMEM`; more
    /// scatter entries than `max_gs` `-EINVAL`. Nothing is written then.
    ///
    /// Inlined into the post loop, the WQE addressed without a range check (the type
    /// invariant bounds it) and a one-entry list written without a loop: a call, a
    /// check or a loop's set-up is a measurable share of a request under TCG
    /// (tests/bench/insn-profile.sh).
    #[inline(always)]
    pub fn build(&mut self, sg: &[Sge]) -> Result<u32, Errno> {
        if self.room == 0 {
            return Err(Errno::ENOMEM);
        }
        let sh = &self.shape;
        if sg.len() > sh.max_gs {
            return Err(Errno::EINVAL);
        }
        let ind = self.head & sh.mask;
        // `ind <= mask` and `seg_shift < usize::BITS`: no bit lost (the shape's
        // invariant).
        let first = (ind as usize).wrapping_shl(sh.seg_shift);
        // SAFETY: by the type invariants `segs` is the ring `shape` describes:
        // `mask + 1` WQEs of `1 << seg_shift` segments, `max_gs <= 1 << seg_shift`.
        // WQE `ind` (at most `mask`) has its `max_gs` segments at
        // `first..first + max_gs`, inside `segs`.
        let wqe = unsafe {
            self.segs
                .get_unchecked_mut(first..first.wrapping_add(sh.max_gs))
        };
        let terminator = WqeDataSeg {
            byte_count: U32::new(0),
            lkey: U32::new(sh.terminate_lkey),
            addr: U64::new(0),
        };
        let data_seg = |e: &Sge| WqeDataSeg {
            byte_count: U32::new(e.length),
            lkey: U32::new(e.lkey),
            addr: U64::new(e.addr),
        };
        // A list shorter than `max_gs` ends with the terminating segment.
        if let [e] = sg {
            // The consumers' common request, one entry: no loop.
            if let Some((out, rest)) = wqe.split_first_mut() {
                *out = data_seg(e);
                if let Some(t) = rest.first_mut() {
                    *t = terminator;
                }
            }
        } else {
            for (out, e) in wqe.iter_mut().zip(sg) {
                *out = data_seg(e);
            }
            if let Some(t) = wqe.get_mut(sg.len()) {
                *t = terminator;
            }
        }
        self.head = self.head.wrapping_add(1);
        self.room -= 1;
        Ok(ind)
    }
}

/// The receive doorbell record's value after `head` work requests
/// (`cpu_to_be32(qp->rq.head & 0xffff)`).
pub fn rq_doorbell_record(head: u32) -> [u8; 4] {
    (head & 0xffff).to_be_bytes()
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_qp_recv_wqe))]
mod tests {
    use super::*;
    use crate::ifc::umr::vals::TERMINATE_SCATTER_LIST_LKEY;

    // `mlx5_wqe_data_seg`: byte_count @0, lkey @4, addr @8, big-endian (`qp.h`);
    // `MLX5_TERMINATE_SCATTER_LIST_LKEY` 0x100 (`qp.h`).

    fn be32(b: &[u8], off: usize) -> u32 {
        u32::from_be_bytes(b[off..off + 4].try_into().unwrap())
    }

    const G: RqGeometry = RqGeometry {
        wqe_cnt: 4,
        wqe_shift: 6,
        max_gs: 4,
        max_post: 4,
        terminate_lkey: TERMINATE_SCATTER_LIST_LKEY,
    };

    const SG: Sge = Sge {
        addr: 0x0102_0304_0506_0708,
        length: 4096,
        lkey: 0x55,
    };

    /// One request's WQE into `ring` through a [`RecvRing`] of `geo`.
    fn build_recv(
        geo: &RqGeometry,
        head: u32,
        tail: u32,
        sg: &[Sge],
        ring: &mut [u8],
    ) -> Result<u32, Errno> {
        RecvRing::new(&RqShape::new(geo)?, ring, head, tail)?.build(sg)
    }

    #[test]
    fn short_list_is_terminated() {
        let mut ring = [0xaau8; 4 * 64];
        let slot = build_recv(&G, 5, 2, &[SG, SG], &mut ring).unwrap();
        assert_eq!(slot, 1);
        let w = &ring[64..128];
        assert_eq!((be32(w, 0), be32(w, 4)), (4096, 0x55));
        assert_eq!(&w[8..16], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(be32(w, 16), 4096);
        // Terminator: 0 bytes, MLX5_TERMINATE_SCATTER_LIST_LKEY, address 0.
        assert_eq!((be32(w, 32), be32(w, 36)), (0, 0x100));
        assert!(w[40..48].iter().all(|&x| x == 0));
        // The fourth segment is left as it was; other slots untouched.
        assert!(w[48..].iter().all(|&x| x == 0xaa));
        assert!(ring[..64].iter().chain(&ring[128..]).all(|&x| x == 0xaa));
    }

    #[test]
    fn one_entry_list_is_terminated() {
        // The one-entry path, in the ring's last slot: the entry, the terminator, the
        // rest of the stride and the other slots as they were.
        let mut ring = [0xaau8; 4 * 64];
        assert_eq!(build_recv(&G, 3, 3, &[SG], &mut ring), Ok(3));
        let w = &ring[192..];
        assert_eq!((be32(w, 0), be32(w, 4)), (4096, 0x55));
        assert_eq!(&w[8..16], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!((be32(w, 16), be32(w, 20)), (0, 0x100));
        assert!(w[24..32].iter().all(|&x| x == 0));
        assert!(w[32..].iter().all(|&x| x == 0xaa));
        assert!(ring[..192].iter().all(|&x| x == 0xaa));
    }

    #[test]
    fn one_entry_of_one_has_no_terminator() {
        // max_gs 1 in 16-byte strides: the entry fills its WQE, the next slot (where a
        // terminator would land) is left as it was.
        let g = RqGeometry {
            wqe_shift: 4,
            max_gs: 1,
            ..G
        };
        let mut ring = [0xaau8; 4 * 16];
        assert_eq!(build_recv(&g, 1, 0, &[SG], &mut ring), Ok(1));
        assert_eq!((be32(&ring, 16), be32(&ring, 20)), (4096, 0x55));
        assert!(ring[..16].iter().chain(&ring[32..]).all(|&x| x == 0xaa));
        // Two entries do not fit.
        assert_eq!(
            build_recv(&g, 1, 0, &[SG; 2], &mut ring),
            Err(Errno::EINVAL)
        );
    }

    #[test]
    fn full_list_has_no_terminator() {
        let mut ring = [0u8; 4 * 64];
        build_recv(&G, 0, 0, &[SG; 4], &mut ring).unwrap();
        assert_eq!(be32(&ring, 48), 4096);
        assert_eq!(be32(&ring, 52), 0x55);
    }

    #[test]
    fn device_terminate_key_is_used() {
        let g = RqGeometry {
            terminate_lkey: 0x1234,
            ..G
        };
        let mut ring = [0u8; 4 * 64];
        build_recv(&g, 0, 0, &[], &mut ring).unwrap();
        assert_eq!(be32(&ring, 4), 0x1234);
    }

    #[test]
    fn full_before_too_many_sges() {
        // Upstream `mlx5_ib_post_recv`: overflow (-ENOMEM) first, then num_sge
        // (-EINVAL).
        let mut ring = [0u8; 4 * 64];
        assert_eq!(
            build_recv(&G, 4, 0, &[SG; 5], &mut ring),
            Err(Errno::ENOMEM)
        );
        assert_eq!(
            build_recv(&G, 3, 0, &[SG; 5], &mut ring),
            Err(Errno::EINVAL)
        );
        // Wrapped counters: 3 outstanding.
        assert_eq!(build_recv(&G, 1, u32::MAX - 1, &[SG], &mut ring), Ok(1));
        assert!(ring[..64].iter().all(|&x| x == 0));
    }

    #[test]
    fn one_ring_posts_until_full() {
        // Two in flight (head 6, tail 4) of max_post 4: two more, then -ENOMEM;
        // a refused request leaves the counter and the ring as they were.
        let mut ring = [0u8; 4 * 64];
        let mut r = RecvRing::new(&RqShape::new(&G).unwrap(), &mut ring, 6, 4).unwrap();
        assert_eq!(r.build(&[SG; 5]), Err(Errno::EINVAL));
        assert_eq!(r.head(), 6);
        // Nothing written for the refused request.
        assert!(r.segs.iter().all(|s| *s == WqeDataSeg::default()));
        assert_eq!(r.build(&[SG]), Ok(2));
        assert_eq!(r.build(&[]), Ok(3));
        assert_eq!(r.head(), 8);
        assert_eq!(r.build(&[SG]), Err(Errno::ENOMEM));
        assert_eq!(r.head(), 8);
        // Slot 2 holds the segment and the terminator, slot 3 the terminator only.
        assert_eq!((be32(&ring, 128), be32(&ring, 132)), (4096, 0x55));
        assert_eq!(be32(&ring, 148), TERMINATE_SCATTER_LIST_LKEY);
        assert_eq!(be32(&ring, 196), TERMINATE_SCATTER_LIST_LKEY);
        assert!(ring[..128].iter().all(|&x| x == 0));
    }

    #[test]
    fn more_in_flight_than_max_post_is_full() {
        // Counters the poller left further apart than max_post: no room, not a wrap.
        let mut ring = [0u8; 4 * 64];
        let mut r = RecvRing::new(&RqShape::new(&G).unwrap(), &mut ring, 9, 0).unwrap();
        assert_eq!(r.build(&[]), Err(Errno::ENOMEM));
    }

    #[test]
    fn bad_geometry() {
        let mut ring = [0u8; 4 * 64];
        let mut short = [0u8; 3 * 64];
        assert_eq!(build_recv(&G, 0, 0, &[], &mut short), Err(Errno::EINVAL));
        let wide = RqGeometry { max_gs: 5, ..G };
        assert_eq!(build_recv(&wide, 0, 0, &[], &mut ring), Err(Errno::EINVAL));
        let huge = RqGeometry { wqe_shift: 99, ..G };
        assert_eq!(build_recv(&huge, 0, 0, &[], &mut ring), Err(Errno::EINVAL));
        // A stride smaller than one segment.
        let tiny = RqGeometry {
            wqe_shift: 3,
            max_gs: 0,
            ..G
        };
        assert_eq!(
            build_recv(&tiny, 0, 0, &[], &mut [0u8; 4 * 8]),
            Err(Errno::EINVAL)
        );
        let odd = RqGeometry { wqe_cnt: 3, ..G };
        assert_eq!(build_recv(&odd, 0, 0, &[], &mut short), Err(Errno::EINVAL));
    }

    #[test]
    fn doorbell_record_is_head_low_16_bits() {
        assert_eq!(rq_doorbell_record(0x0001_2345), [0, 0, 0x23, 0x45]);
        assert_eq!(rq_doorbell_record(7), [0, 0, 0, 7]);
    }
}
