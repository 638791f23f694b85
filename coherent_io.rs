// SPDX-License-Identifier: GPL-2.0

//! Bounds-checked CPU access to coherent DMA buffers the device shares with us.
//!
//! The command queue page, the mailbox blocks and the EQ rings are `Coherent<[u8]>`
//! allocations that the device reads and writes concurrently. Every CPU access to them
//! goes through these functions, which use the kernel crate's I/O projection of a
//! `Coherent` (`io_project!`; for the kernel CQ's poll, of its CPU side, a `SysMem`
//! view of the whole allocation: [`cpu_view`]): the range is checked against the
//! allocation at run time (out of range is `ERANGE`, never a pointer outside the
//! buffer), single bytes are read and written volatile, byte ranges are copied with
//! `memcpy`. No raw pointer is formed here; the memory-safety argument is the kernel
//! crate's, once.
//!
//! What stays the caller's business is *when* a range may be accessed: the protocol
//! (ownership bits, the doorbell, a DMA read barrier) decides that, and each caller
//! documents it.

use kernel::{
    dma::Coherent,
    io::{io_project, io_read, io_write, Io, IoBase, SysMem},
    prelude::*,
};

/// Reads byte `off` of `buf` (volatile: the device may write it concurrently).
pub(crate) fn read_u8(buf: &Coherent<[u8]>, off: usize) -> Result<u8> {
    Ok(io_read!(buf, [try: off]))
}

/// Writes byte `off` of `buf` (volatile).
pub(crate) fn write_u8(buf: &Coherent<[u8]>, off: usize, v: u8) -> Result {
    io_write!(buf, [try: off], v);
    Ok(())
}

/// Copies `out.len()` bytes of `buf` from offset `off` into `out`.
pub(crate) fn read_bytes(buf: &Coherent<[u8]>, off: usize, out: &mut [u8]) -> Result {
    let end = off.checked_add(out.len()).ok_or(ERANGE)?;
    io_project!(buf, [try: off..end]).copy_to_slice(out);
    Ok(())
}

/// Copies `data` into `buf` at offset `off`.
pub(crate) fn write_bytes(buf: &Coherent<[u8]>, off: usize, data: &[u8]) -> Result {
    let end = off.checked_add(data.len()).ok_or(ERANGE)?;
    io_project!(buf, [try: off..end]).copy_from_slice(data);
    Ok(())
}

/// The CPU side of `buf` whole, for a reader that takes many entries of one buffer
/// (the kernel CQ's poll, a page of its ring at a time): the ranges it projects from
/// this ([`view`]) are checked against the buffer as every access here is, without
/// carrying the DMA address along (its arithmetic and overflow checks on each
/// projection of a `Coherent`).
#[cfg_attr(
    not(CONFIG_MLX5_RS_INFINIBAND),
    expect(dead_code, reason = "the kernel CQ's poll reads its entries so")
)]
#[inline(always)]
pub(crate) fn cpu_view(buf: &Coherent<[u8]>) -> SysMem<'_, [u8]> {
    buf.as_view().as_sys_mem()
}

/// The `len` bytes of `buf` (a [`cpu_view`]) from offset `off`, range-checked once:
/// the view's own reads ([`view_read_u8`], [`view_read_bytes`]) are then checked
/// against `len` only, which the compiler folds when `len` is a constant (a ring entry
/// read on every completion).
#[cfg_attr(
    not(CONFIG_MLX5_RS_INFINIBAND),
    expect(dead_code, reason = "the kernel CQ's poll reads its entries so")
)]
#[inline(always)]
pub(crate) fn view(buf: SysMem<'_, [u8]>, off: usize, len: usize) -> Result<SysMem<'_, [u8]>> {
    let end = off.checked_add(len).ok_or(ERANGE)?;
    Ok(io_project!(buf, [try: off..end]))
}

/// Reads byte `off` of `view` (volatile).
#[cfg_attr(
    not(CONFIG_MLX5_RS_INFINIBAND),
    expect(dead_code, reason = "the kernel CQ's poll reads its entries so")
)]
#[inline(always)]
pub(crate) fn view_read_u8(view: SysMem<'_, [u8]>, off: usize) -> Result<u8> {
    Ok(io_read!(view, [try: off]))
}

/// Copies `view` whole into `out`; `ERANGE` unless the lengths are equal.
#[cfg_attr(
    not(CONFIG_MLX5_RS_INFINIBAND),
    expect(dead_code, reason = "the kernel CQ's poll reads its entries so")
)]
#[inline(always)]
pub(crate) fn view_read_bytes(view: SysMem<'_, [u8]>, out: &mut [u8]) -> Result {
    if view.len() != out.len() {
        return Err(ERANGE);
    }
    view.copy_to_slice(out);
    Ok(())
}
