// SPDX-License-Identifier: GPL-2.0

//! Receive WQE building for kernel `post_recv`, as upstream `mlx5_ib_post_recv`
//! (`qp.c`) builds one: the scatter list as data segments (`ifc::wqe::WqeDataSeg`)
//! and, when it is shorter than the queue's `max_gs`, a terminating segment of 0
//! bytes with the terminating mkey (`MLX5_INVALID_LKEY`, or the device's
//! `terminate_scatter_list_mkey` where the cap says it has one).
//!
//! The doorbell record after a batch is `head & 0xffff` (upstream writes
//! `cpu_to_be32(qp->rq.head & 0xffff)`); that is the caller's.
//!
//! Pure `core` code, host-tested; not yet part of the kernel module's tree.

use crate::errno::Errno;
use crate::ib::qp::send_wqe::Sge;
use crate::ifc::wqe::WqeDataSeg;
use zerocopy::byteorder::big_endian::{U32, U64};
use zerocopy::IntoBytes;

/// `MLX5_INVALID_LKEY` (`device.h`): the key that ends a scatter list.
pub const INVALID_LKEY: u32 = 0x100;

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
    /// The key of the terminating segment ([`INVALID_LKEY`] unless the device has
    /// its own).
    pub terminate_lkey: u32,
}

/// Writes one receive WQE for the work request `head` (slot `head & (wqe_cnt - 1)`)
/// into `ring`, with `tail` the work requests completed; returns the slot (where the
/// caller records `wr_id`). The caller advances `head`.
///
/// Errors, in upstream's order: queue full (`mlx5r_wq_overflow`) `-ENOMEM`; more
/// scatter entries than `max_gs` `-EINVAL`; a geometry the ring does not match
/// (size, a stride too small for `max_gs` segments) `-EINVAL`.
pub fn build_recv(
    geo: &RqGeometry,
    head: u32,
    tail: u32,
    sg: &[Sge],
    ring: &mut [u8],
) -> Result<u32, Errno> {
    let stride = 1usize.checked_shl(geo.wqe_shift).ok_or(Errno::EINVAL)?;
    let cnt = geo.wqe_cnt as usize;
    if !geo.wqe_cnt.is_power_of_two() || Some(ring.len()) != cnt.checked_mul(stride) {
        return Err(Errno::EINVAL);
    }
    match (geo.max_gs as usize).checked_mul(DATA_SEG) {
        Some(b) if b <= stride => {}
        _ => return Err(Errno::EINVAL),
    }
    if head.wrapping_sub(tail) >= geo.max_post {
        return Err(Errno::ENOMEM);
    }
    if sg.len() > geo.max_gs as usize {
        return Err(Errno::EINVAL);
    }
    let ind = head as usize & (cnt - 1);
    let wqe = &mut ring[ind * stride..(ind + 1) * stride];
    for (i, e) in sg.iter().enumerate() {
        let seg = WqeDataSeg {
            byte_count: U32::new(e.length),
            lkey: U32::new(e.lkey),
            addr: U64::new(e.addr),
        };
        wqe[i * DATA_SEG..(i + 1) * DATA_SEG].copy_from_slice(seg.as_bytes());
    }
    if sg.len() < geo.max_gs as usize {
        let term = WqeDataSeg {
            byte_count: U32::new(0),
            lkey: U32::new(geo.terminate_lkey),
            addr: U64::new(0),
        };
        let i = sg.len();
        wqe[i * DATA_SEG..(i + 1) * DATA_SEG].copy_from_slice(term.as_bytes());
    }
    Ok(ind as u32)
}

/// The receive doorbell record's value after `head` work requests
/// (`cpu_to_be32(qp->rq.head & 0xffff)`).
pub fn rq_doorbell_record(head: u32) -> [u8; 4] {
    (head & 0xffff).to_be_bytes()
}
