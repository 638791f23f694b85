// SPDX-License-Identifier: GPL-2.0

//! The EQ and UAR commands: ALLOC_UAR / DEALLOC_UAR, CREATE_EQ / DESTROY_EQ, GEN_EQE,
//! one type each (see [`crate::cmd::command::Command`]).
//!
//! Outputs are device data and are range-checked in `parse`.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::{
    cmd::command::{CodecError, Command},
    ifc::{
        cmds::{alloc_uar_in, alloc_uar_out, dealloc_uar_in, mbox_out},
        eq::{create_eq_in, create_eq_out, destroy_eq_in, eqc},
        field::{put_be64s, Msg, MsgMut},
        opcodes::Opcode,
    },
};

#[cfg(any(CONFIG_MLX5_RS_TEST_HOOKS, not(CONFIG_RUST)))]
use crate::ifc::eq::gen_eqe_in;

/// Largest UAR index the driver accepts from ALLOC_UAR (the BAR holds far fewer).
pub const MAX_UAR: u32 = 1 << 16;

/// ALLOC_UAR: replies the UAR page index (below [`MAX_UAR`], else EPROTO).
pub struct AllocUar;

impl Command for AllocUar {
    const OPCODE: Opcode = Opcode::ALLOC_UAR;
    type In = alloc_uar_in::Layout;
    type Out = alloc_uar_out::Layout;
    type Reply = u32;

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u32, CodecError> {
        let uar = o.get(alloc_uar_out::UAR);
        if uar < MAX_UAR {
            Ok(uar)
        } else {
            Err(CodecError::BadOutput)
        }
    }
}

/// DEALLOC_UAR.
pub struct DeallocUar {
    /// The UAR page index.
    pub uar: u32,
}

impl Command for DeallocUar {
    const OPCODE: Opcode = Opcode::DEALLOC_UAR;
    type In = dealloc_uar_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(dealloc_uar_in::UAR, self.uar)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// CREATE_EQ: replies the EQ number.
pub struct CreateEq<'a> {
    /// log2 of the number of entries.
    pub log_size: u8,
    /// UAR page of the doorbells.
    pub uar: u32,
    /// MSI-X vector.
    pub vector: u16,
    /// Event types (`event_bitmask`, four 64-bit words).
    pub mask: [u64; 4],
    /// DMA address of each 4 KiB page of the ring.
    pub pages: &'a [u64],
}

impl Command for CreateEq<'_> {
    const OPCODE: Opcode = Opcode::CREATE_EQ;
    type In = create_eq_in::Layout;
    type Out = create_eq_out::Layout;
    type Reply = u8;

    fn in_len(&self) -> usize {
        create_eq_in::BYTES.saturating_add(self.pages.len().saturating_mul(8))
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        {
            let mut ctx = i
                .nested::<eqc::Layout>(create_eq_in::EQ_CONTEXT_ENTRY)
                .ok_or(CodecError::Short)?;
            ctx.set(eqc::LOG_EQ_SIZE, self.log_size)?;
            ctx.set(eqc::UAR_PAGE, self.uar)?;
            ctx.set(eqc::INTR, self.vector)?;
            // Ring pages are 4 KiB: log_page_size = 12 - 12, page_offset 0.
            ctx.set(eqc::LOG_PAGE_SIZE, 0)?;
        }
        put_be64s(
            i.bytes_mut(create_eq_in::EVENT_BITMASK),
            self.mask.iter().copied(),
        )
        .ok_or(CodecError::Short)?;
        put_be64s(i.bytes_mut(create_eq_in::PAS), self.pages.iter().copied())
            .ok_or(CodecError::Short)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u8, CodecError> {
        Ok(o.get(create_eq_out::EQ_NUMBER))
    }
}

/// DESTROY_EQ.
pub struct DestroyEq {
    /// The EQ number.
    pub eqn: u8,
}

impl Command for DestroyEq {
    const OPCODE: Opcode = Opcode::DESTROY_EQ;
    type In = destroy_eq_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(destroy_eq_in::EQ_NUMBER, self.eqn)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// GEN_EQE: asks the device to write `eqe` (64 bytes; owner byte ignored) into EQ `eqn`.
// Only the debugfs `gen_comp` test hook generates EQEs (the host crates always have it).
#[cfg(any(CONFIG_MLX5_RS_TEST_HOOKS, not(CONFIG_RUST)))]
pub struct GenEqe<'a> {
    /// The EQ number.
    pub eqn: u8,
    /// The entry.
    pub eqe: &'a [u8; 64],
}

#[cfg(any(CONFIG_MLX5_RS_TEST_HOOKS, not(CONFIG_RUST)))]
impl Command for GenEqe<'_> {
    const OPCODE: Opcode = Opcode::GEN_EQE;
    type In = gen_eqe_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.set(gen_eqe_in::EQ_NUMBER, self.eqn)?;
        i.bytes_mut(gen_eqe_in::EQE)
            .get_mut(..self.eqe.len())
            .ok_or(CodecError::Short)?
            .copy_from_slice(self.eqe);
        Ok(())
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}
