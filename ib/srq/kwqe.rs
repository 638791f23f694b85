// SPDX-License-Identifier: GPL-2.0

//! A kernel SRQ's receive WQEs, as upstream `mlx5_ib` keeps them (`srq.c`): the free
//! WQEs form a list through each WQE's next segment (`mlx5_wqe_srq_next_seg`,
//! `next_wqe_index`), `head` the next to post and `tail` the last free one (a WQE
//! that always stays free: the queue holds `max - 1`); `create_srq_kernel` links
//! WQE `i` to `i + 1`, the last to the first, with `head` 0 and `tail` `max - 1`.
//!
//! - post ([`SrqQueue::post`], upstream `mlx5_ib_post_srq_recv`): more scatter
//!   entries than `max_gs` `-EINVAL`, then a full queue (`head == tail`) `-ENOMEM`;
//!   the `wr_id` recorded at `head`, `head` to the WQE's next, the scatter list as
//!   data segments after the next segment and, when it is shorter than the WQE holds
//!   (`max_avail_gather`), a terminating segment of 0 bytes with the terminating key.
//!   After a batch the WQE counter (16 bits) goes up by the batch and is the doorbell
//!   record ([`SrqQueue::ring`], `*srq->db.db = cpu_to_be32(srq->wqe_ctr)`).
//! - completion ([`SrqQueue::complete`], upstream `mlx5_ib_free_srq_wqe`): the CQE's
//!   WQE counter is the WQE's index; its `wr_id` comes back and the WQE goes on the
//!   list after `tail`. The CQE is untrusted input: an index past the queue or of a
//!   WQE not posted is refused (upstream indexes `wrid[]` with it unchecked), so a
//!   CQE can neither read past the bookkeeping nor put a WQE on the list twice.
//!
//! The WQE memory is the device's to read, so a next index read back from it is
//! checked too before it becomes `head`.
//!
//! Pure `core` code, host-tested and run as a KUnit suite.

use crate::errno::Errno;
use crate::ib::qp::send_wqe::Sge;
use crate::ifc::wqe::WqeDataSeg;
use zerocopy::byteorder::big_endian::{U32, U64};
use zerocopy::IntoBytes;

/// Bytes of the next segment at the start of every WQE.
pub const NEXT_SEG: usize = 16;
/// Offset of `next_wqe_index` (big-endian 16 bits) in the next segment.
const NEXT_INDEX_OFF: usize = 2;
/// Bytes of one data segment.
const DATA_SEG: usize = core::mem::size_of::<WqeDataSeg>();

/// The memory of an SRQ's WQEs: byte access inside WQE `i`. Each returns `false`
/// when the range is not inside the WQE (or the memory cannot be reached).
pub trait SrqWqes {
    /// Reads `out.len()` bytes at `off` of WQE `i`.
    fn read(&self, i: u32, off: usize, out: &mut [u8]) -> bool;
    /// Writes `bytes` at `off` of WQE `i`.
    fn write(&mut self, i: u32, off: usize, bytes: &[u8]) -> bool;
}

/// What one WQE holds for its completion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SrqSlot {
    /// The work request's `wr_id` (upstream `srq->wrid[]`).
    pub wr_id: u64,
    /// Posted and not completed yet.
    pub posted: bool,
}

/// A kernel SRQ's list and counters (upstream `mlx5_ib_srq`: `head`, `tail`,
/// `wqe_ctr`, `msrq.max`, `msrq.max_gs`, `msrq.max_avail_gather`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SrqQueue {
    /// WQEs (a power of two).
    pub max: u32,
    /// Scatter entries a request may have.
    pub max_gs: u32,
    /// Data segments a WQE holds.
    pub max_avail_gather: u32,
    /// The key of the terminating segment.
    pub terminate_lkey: u32,
    /// The next WQE to post.
    pub head: u32,
    /// The last free WQE.
    pub tail: u32,
    /// Work requests posted (the doorbell record's value).
    pub wqe_ctr: u16,
}

impl SrqQueue {
    /// The list of a new queue of `max` WQEs (linked by the creator, as
    /// [`crate::ib::srq::plan::SrqShape::next_wqe_index`]): `head` 0, `tail` `max - 1`.
    pub fn new(max: u32, max_gs: u32, max_avail_gather: u32, terminate_lkey: u32) -> Self {
        Self {
            max,
            max_gs,
            max_avail_gather,
            terminate_lkey,
            head: 0,
            tail: max.saturating_sub(1),
            wqe_ctr: 0,
        }
    }

    /// Posts one receive of `sg` with `wr_id` at `head` (module doc, upstream's
    /// order of errors). `slots` has one entry per WQE. `-EIO` when the WQE memory
    /// cannot be reached or names a next WQE past the queue (nothing is posted).
    pub fn post<W: SrqWqes>(
        &mut self,
        w: &mut W,
        slots: &mut [SrqSlot],
        wr_id: u64,
        sg: &[Sge],
    ) -> Result<(), Errno> {
        if sg.len() > self.max_gs as usize {
            return Err(Errno::EINVAL);
        }
        if self.head == self.tail {
            return Err(Errno::ENOMEM);
        }
        let head = self.head;
        if slots.len() != self.max as usize || head >= self.max {
            return Err(Errno::EIO);
        }
        let mut nb = [0u8; 2];
        if !w.read(head, NEXT_INDEX_OFF, &mut nb) {
            return Err(Errno::EIO);
        }
        let next = u32::from(u16::from_be_bytes(nb));
        if next >= self.max {
            return Err(Errno::EIO);
        }
        for (i, e) in sg.iter().enumerate() {
            let seg = WqeDataSeg {
                byte_count: U32::new(e.length),
                lkey: U32::new(e.lkey),
                addr: U64::new(e.addr),
            };
            if !w.write(head, NEXT_SEG + i * DATA_SEG, seg.as_bytes()) {
                return Err(Errno::EIO);
            }
        }
        if sg.len() < self.max_avail_gather as usize {
            let term = WqeDataSeg {
                byte_count: U32::new(0),
                lkey: U32::new(self.terminate_lkey),
                addr: U64::new(0),
            };
            if !w.write(head, NEXT_SEG + sg.len() * DATA_SEG, term.as_bytes()) {
                return Err(Errno::EIO);
            }
        }
        slots[head as usize] = SrqSlot {
            wr_id,
            posted: true,
        };
        self.head = next;
        Ok(())
    }

    /// The doorbell record's value after a batch of `n` posts (upstream: `wqe_ctr +=
    /// nreq`, then `cpu_to_be32(wqe_ctr)`).
    pub fn ring(&mut self, n: u32) -> [u8; 4] {
        self.wqe_ctr = self.wqe_ctr.wrapping_add(n as u16);
        u32::from(self.wqe_ctr).to_be_bytes()
    }

    /// The receive of WQE `idx` (a CQE's WQE counter) completed: its `wr_id`, the WQE
    /// back on the list after `tail`. `None` (nothing changed) for an index past the
    /// queue, a WQE not posted, or WQE memory that cannot be written.
    pub fn complete<W: SrqWqes>(
        &mut self,
        w: &mut W,
        slots: &mut [SrqSlot],
        idx: u16,
    ) -> Option<u64> {
        let i = u32::from(idx);
        if i >= self.max || slots.len() != self.max as usize || self.tail >= self.max {
            return None;
        }
        let s = slots[i as usize];
        if !s.posted {
            return None;
        }
        if !w.write(self.tail, NEXT_INDEX_OFF, &idx.to_be_bytes()) {
            return None;
        }
        slots[i as usize].posted = false;
        self.tail = i;
        Some(s.wr_id)
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_srq_kwqe))]
mod tests {
    use super::*;

    // `mlx5_wqe_srq_next_seg`: next_wqe_index (be16) @2, 16 bytes; data segments
    // (`mlx5_wqe_data_seg`: byte_count @0, lkey @4, addr @8) after it (`qp.h`).

    const MAX: usize = 4;
    const STRIDE: usize = 64;

    /// A ring of `MAX` WQEs of 64 bytes, linked as `create_srq_kernel` links them.
    struct Ring([u8; MAX * STRIDE]);

    impl Ring {
        fn new() -> Self {
            let mut r = Ring([0u8; MAX * STRIDE]);
            for i in 0..MAX {
                let next = ((i + 1) % MAX) as u16;
                r.0[i * STRIDE + 2..i * STRIDE + 4].copy_from_slice(&next.to_be_bytes());
            }
            r
        }
        fn next_of(&self, i: usize) -> u16 {
            u16::from_be_bytes([self.0[i * STRIDE + 2], self.0[i * STRIDE + 3]])
        }
        fn be32(&self, i: usize, off: usize) -> u32 {
            let at = i * STRIDE + off;
            u32::from_be_bytes(self.0[at..at + 4].try_into().unwrap())
        }
    }

    impl SrqWqes for Ring {
        fn read(&self, i: u32, off: usize, out: &mut [u8]) -> bool {
            let at = i as usize * STRIDE + off;
            if off + out.len() > STRIDE || i as usize >= MAX {
                return false;
            }
            out.copy_from_slice(&self.0[at..at + out.len()]);
            true
        }
        fn write(&mut self, i: u32, off: usize, b: &[u8]) -> bool {
            let at = i as usize * STRIDE + off;
            if off + b.len() > STRIDE || i as usize >= MAX {
                return false;
            }
            self.0[at..at + b.len()].copy_from_slice(b);
            true
        }
    }

    const SG: Sge = Sge {
        addr: 0x0102_0304_0506_0708,
        length: 4096,
        lkey: 0x55,
    };

    fn q() -> SrqQueue {
        // 64-byte WQEs: the next segment and 3 data segments.
        SrqQueue::new(MAX as u32, 2, 3, 0x100)
    }

    #[test]
    fn holds_max_minus_one() {
        let (mut r, mut q, mut s) = (Ring::new(), q(), [SrqSlot::default(); MAX]);
        for id in 0..3u64 {
            assert_eq!(q.post(&mut r, &mut s, 10 + id, &[SG]), Ok(()));
        }
        // The tail WQE (3) stays free: the fourth post finds the queue full.
        assert_eq!(q.post(&mut r, &mut s, 13, &[SG]), Err(Errno::ENOMEM));
        assert_eq!((q.head, q.tail), (3, 3));
        assert_eq!(s.iter().filter(|x| x.posted).count(), 3);
        assert_eq!(q.ring(3), [0, 0, 0, 3]);
    }

    #[test]
    fn scatter_and_terminator() {
        let (mut r, mut q, mut s) = (Ring::new(), q(), [SrqSlot::default(); MAX]);
        q.post(&mut r, &mut s, 7, &[SG]).unwrap();
        // WQE 0: one data segment, then the terminator (0 bytes, key 0x100, addr 0).
        assert_eq!((r.be32(0, 16), r.be32(0, 20)), (4096, 0x55));
        assert_eq!(&r.0[24..32], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!((r.be32(0, 32), r.be32(0, 36)), (0, 0x100));
        assert!(r.0[40..48].iter().all(|&b| b == 0));
        // The next segment is left as the list made it.
        assert_eq!(r.next_of(0), 1);
        assert_eq!(
            s[0],
            SrqSlot {
                wr_id: 7,
                posted: true
            }
        );
        // A request that fills the WQE (max_avail_gather entries, here max_gs too)
        // has no terminator: there is no room for one, and the post succeeds.
        let mut full = SrqQueue::new(MAX as u32, 3, 3, 0x100);
        let mut r2 = Ring::new();
        r2.0[64 + 48..64 + 64].fill(0xee);
        full.head = 1;
        full.post(&mut r2, &mut s, 8, &[SG; 3]).unwrap();
        assert_eq!(r2.be32(1, 48), 4096);
    }

    #[test]
    fn errors_in_upstreams_order() {
        let (mut r, mut q, mut s) = (Ring::new(), q(), [SrqSlot::default(); MAX]);
        q.head = q.tail;
        // More entries than max_gs first, then full.
        assert_eq!(q.post(&mut r, &mut s, 1, &[SG; 3]), Err(Errno::EINVAL));
        assert_eq!(q.post(&mut r, &mut s, 1, &[SG]), Err(Errno::ENOMEM));
        assert!(s.iter().all(|x| !x.posted));
    }

    #[test]
    fn completion_frees_after_tail_and_is_reused() {
        let (mut r, mut q, mut s) = (Ring::new(), q(), [SrqSlot::default(); MAX]);
        for id in 0..3u64 {
            q.post(&mut r, &mut s, 100 + id, &[SG]).unwrap();
        }
        // The device completes WQE 1 first (any order for an SRQ).
        assert_eq!(q.complete(&mut r, &mut s, 1), Some(101));
        // WQE 1 hangs after the old tail (3): 3 -> 1, tail 1.
        assert_eq!((r.next_of(3), q.tail), (1, 1));
        // head was 3: the next posts take 3, then 1; then the queue is full again.
        q.post(&mut r, &mut s, 200, &[SG]).unwrap();
        assert_eq!(q.head, 1);
        assert_eq!(q.post(&mut r, &mut s, 201, &[SG]), Err(Errno::ENOMEM));
        assert_eq!(
            s[3],
            SrqSlot {
                wr_id: 200,
                posted: true
            }
        );
        assert_eq!(q.complete(&mut r, &mut s, 3), Some(200));
        assert_eq!(q.complete(&mut r, &mut s, 0), Some(100));
        assert_eq!(q.complete(&mut r, &mut s, 2), Some(102));
        assert_eq!(s.iter().filter(|x| x.posted).count(), 0);
        // Three free WQEs after the sentinel: three posts fit.
        for id in 0..3u64 {
            assert_eq!(q.post(&mut r, &mut s, 300 + id, &[SG]), Ok(()));
        }
        assert_eq!(q.post(&mut r, &mut s, 303, &[SG]), Err(Errno::ENOMEM));
    }

    #[test]
    fn untrusted_counter_is_refused() {
        let (mut r, mut q, mut s) = (Ring::new(), q(), [SrqSlot::default(); MAX]);
        q.post(&mut r, &mut s, 5, &[SG]).unwrap();
        let before = (r.0, q);
        // Past the queue, a WQE never posted, one completed twice: nothing changes.
        assert_eq!(q.complete(&mut r, &mut s, 4), None);
        assert_eq!(q.complete(&mut r, &mut s, 0xffff), None);
        assert_eq!(q.complete(&mut r, &mut s, 2), None);
        assert_eq!((r.0, q), before);
        assert_eq!(q.complete(&mut r, &mut s, 0), Some(5));
        let after = (r.0, q);
        assert_eq!(q.complete(&mut r, &mut s, 0), None);
        assert_eq!((r.0, q), after);
    }

    #[test]
    fn next_index_read_back_is_checked() {
        let (mut r, mut q, mut s) = (Ring::new(), q(), [SrqSlot::default(); MAX]);
        // WQE 0's next segment overwritten with an index past the queue.
        r.0[2..4].copy_from_slice(&9u16.to_be_bytes());
        assert_eq!(q.post(&mut r, &mut s, 1, &[SG]), Err(Errno::EIO));
        assert_eq!((q.head, s[0].posted), (0, false));
        // Bookkeeping of the wrong size.
        let mut short = [SrqSlot::default(); 2];
        assert_eq!(
            q.post(&mut Ring::new(), &mut short, 1, &[SG]),
            Err(Errno::EIO)
        );
    }

    #[test]
    fn counter_wraps_at_16_bits() {
        let mut q = q();
        q.wqe_ctr = 0xfffe;
        assert_eq!(q.ring(3), [0, 0, 0, 1]);
    }
}
