// SPDX-License-Identifier: GPL-2.0

//! The EQ and UAR commands: ALLOC_UAR / DEALLOC_UAR, CREATE_EQ / DESTROY_EQ, GEN_EQE.
//!
//! Inputs are built with the PRM field tables of [`crate::ifc`]; outputs are device
//! data and are range-checked before use.

use kernel::prelude::*;

use crate::{
    hw::{to_kernel, Hw},
    ifc::{
        cmds::{alloc_uar_out, dealloc_uar_in, mbox_in},
        eq::{
            create_eq_in, create_eq_out, destroy_eq_in, eqc, EQC_OFFSET, EVENT_BITMASK_OFFSET,
            PAS_OFFSET,
        },
        field::Field,
        opcodes::Opcode,
    },
};

/// Bytes of a command header.
const HDR: usize = 16;
/// Largest UAR index the driver accepts from ALLOC_UAR (the BAR holds far fewer).
const MAX_UAR: u32 = 1 << 16;

fn put(buf: &mut [u8], f: Field, v: u64) -> Result {
    f.set(buf, v).ok_or(EINVAL)
}

fn header(buf: &mut [u8], op: Opcode) -> Result {
    put(buf, mbox_in::OPCODE, op as u64)?;
    put(buf, mbox_in::OP_MOD, 0)
}

/// ALLOC_UAR: returns the UAR page index.
pub(crate) fn alloc_uar(hw: &Hw) -> Result<u32> {
    let mut i = [0u8; HDR];
    header(&mut i, Opcode::ALLOC_UAR)?;
    let mut o = [0u8; alloc_uar_out::BYTES];
    hw.exec(&i, &mut o).map_err(to_kernel)?;
    let uar = alloc_uar_out::UAR.get(&o).ok_or(EIO)?;
    u32::try_from(uar)
        .ok()
        .filter(|u| *u < MAX_UAR)
        .ok_or(EPROTO)
}

/// DEALLOC_UAR.
pub(crate) fn dealloc_uar(hw: &Hw, uar: u32) -> Result {
    let mut i = [0u8; dealloc_uar_in::BYTES];
    header(&mut i, Opcode::DEALLOC_UAR)?;
    put(&mut i, dealloc_uar_in::UAR, u64::from(uar))?;
    hw.exec(&i, &mut [0u8; HDR]).map_err(to_kernel)
}

/// What CREATE_EQ needs.
pub(crate) struct EqParams<'a> {
    pub(crate) log_size: u8,
    pub(crate) uar: u32,
    pub(crate) vector: u16,
    pub(crate) mask: [u64; 4],
    /// DMA address of each 4 KiB page of the ring.
    pub(crate) pages: &'a [u64],
}

/// CREATE_EQ: returns the EQ number.
pub(crate) fn create_eq(hw: &Hw, p: &EqParams<'_>) -> Result<u8> {
    let len = PAS_OFFSET + 8 * p.pages.len();
    let mut i = KVec::from_elem(0u8, len, GFP_KERNEL)?;
    header(&mut i, Opcode::CREATE_EQ)?;
    {
        let ctx = i
            .get_mut(EQC_OFFSET..EQC_OFFSET + eqc::BYTES)
            .ok_or(EINVAL)?;
        put(ctx, eqc::LOG_EQ_SIZE, u64::from(p.log_size))?;
        put(ctx, eqc::UAR_PAGE, u64::from(p.uar))?;
        put(ctx, eqc::INTR, u64::from(p.vector))?;
        // Ring pages are 4 KiB: log_page_size = 12 - 12, page_offset 0.
        put(ctx, eqc::LOG_PAGE_SIZE, 0)?;
    }
    for (k, w) in p.mask.iter().enumerate() {
        let at = EVENT_BITMASK_OFFSET + 8 * k;
        i.get_mut(at..at + 8)
            .ok_or(EINVAL)?
            .copy_from_slice(&w.to_be_bytes());
    }
    for (k, a) in p.pages.iter().enumerate() {
        let at = PAS_OFFSET + 8 * k;
        i.get_mut(at..at + 8)
            .ok_or(EINVAL)?
            .copy_from_slice(&a.to_be_bytes());
    }
    let _ = create_eq_in::OPCODE;
    let mut o = [0u8; create_eq_out::BYTES];
    hw.exec(&i, &mut o).map_err(to_kernel)?;
    let eqn = create_eq_out::EQ_NUMBER.get(&o).ok_or(EIO)?;
    u8::try_from(eqn).map_err(|_| EPROTO)
}

/// DESTROY_EQ.
pub(crate) fn destroy_eq(hw: &Hw, eqn: u8) -> Result {
    let mut i = [0u8; destroy_eq_in::BYTES];
    header(&mut i, Opcode::DESTROY_EQ)?;
    put(&mut i, destroy_eq_in::EQ_NUMBER, u64::from(eqn))?;
    hw.exec(&i, &mut [0u8; HDR]).map_err(to_kernel)
}

// Only the debugfs `gen_comp` test hook generates EQEs.
#[cfg(CONFIG_MLX5_RS_TEST_HOOKS)]
/// GEN_EQE: asks the device to write `eqe` (64 bytes; owner byte ignored) into EQ `eqn`.
pub(crate) fn gen_eqe(hw: &Hw, eqn: u8, eqe: &[u8; 64]) -> Result {
    use crate::ifc::eq::gen_eqe_in;

    let mut i = [0u8; gen_eqe_in::BYTES];
    header(&mut i, Opcode::GEN_EQE)?;
    put(&mut i, gen_eqe_in::EQ_NUMBER, u64::from(eqn))?;
    gen_eqe_in::EQE
        .bytes_mut(&mut i)
        .ok_or(EINVAL)?
        .copy_from_slice(eqe);
    hw.exec(&i, &mut [0u8; HDR]).map_err(to_kernel)
}
