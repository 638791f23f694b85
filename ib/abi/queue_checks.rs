// SPDX-License-Identifier: GPL-2.0

//! The checks user queue requests share (create_cq, create_qp, create_srq): where the
//! buffer may start and the doorbell record lie, and the user index of a request, as
//! upstream `mlx5_ib` checks them. Re-exported by [`super::cq`] and [`super::qp`];
//! compiled into the module for the SRQ verbs ([`super::srq`]).

use super::consts::IB_DEFAULT_UIDX;
use super::error::{Reason, UabiError};

/// Doorbell record size (`MLX5_IB_DBR_SIZE`: two big-endian dwords).
pub const DBR_SIZE: u64 = 8;
/// Alignment of a CQ/QP/SRQ buffer start: the context's page offset counts 64-byte
/// units of a 4 KiB page.
pub const BUF_ALIGN: u64 = 64;
/// Bits of a user index (`qpc.user_index`).
const UIDX_MASK: u32 = 0xff_ffff;

/// Buffer alignment and doorbell placement (a step of create_cq, create_qp and
/// create_srq).
///
/// The buffer rule is the part of upstream's `mlx5_umem_find_best_quantized_pgoff`
/// that depends on the address alone: at every page size it tries (4 KiB and up)
/// the start's offset in the page must be a multiple of page size / 64, so a start
/// not 64-byte aligned never fits. Whether it fits the pinned pages (their DMA
/// layout, and for an RMP's 5-bit `page_offset` the lower half of a 4 KiB page) is
/// decided by the shell on the umem, with the same `EINVAL`.
pub fn check_addrs(buf_addr: u64, db_addr: Option<u64>, page_shift: u32) -> Result<(), UabiError> {
    if buf_addr % BUF_ALIGN != 0 {
        return Err(UabiError::inval(Reason::OutOfRange("buf_addr alignment")));
    }
    if let Some(db) = db_addr {
        let page = 1u64.checked_shl(page_shift).unwrap_or(0);
        if page < DBR_SIZE || db & (page - 1) > page - DBR_SIZE {
            return Err(UabiError::inval(Reason::OutOfRange("db_addr")));
        }
    }
    Ok(())
}

/// `get_qp_user_index` / `get_srq_user_index`: the user index of a request, `present`
/// when the request covers `uidx` (always for create_qp, whose request is zero-padded
/// to its full size).
pub fn user_index(present: bool, cqe_version: u8, uidx: u32) -> Result<u32, UabiError> {
    let bad = UabiError::inval(Reason::OutOfRange("uidx"));
    if present && cqe_version == 0 && uidx == IB_DEFAULT_UIDX {
        return Ok(IB_DEFAULT_UIDX);
    }
    if present != (cqe_version != 0) {
        return Err(bad);
    }
    if cqe_version == 0 {
        Ok(IB_DEFAULT_UIDX)
    } else if uidx == IB_DEFAULT_UIDX || uidx & !UIDX_MASK != 0 {
        Err(bad)
    } else {
        Ok(uidx)
    }
}
