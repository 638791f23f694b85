// SPDX-License-Identifier: GPL-2.0

//! The CQ commands of the verbs, one type each (see [`crate::cmd::command::Command`]):
//! CREATE_CQ with its CQ context and page list, DESTROY_CQ, and MODIFY_CQ in its two
//! forms (moderation, op_mod 0; resize, op_mod 1), all with `uid` 0 (no DEVX). The
//! contexts carry what upstream mlx5_ib sets (`cq.c` `mlx5_ib_create_cq`,
//! `mlx5_core_modify_cq_moderation`, `mlx5_ib_resize_cq`); the field selects are
//! upstream's `MLX5_MODIFY_CQ_MASK_*` (`include/linux/mlx5/cq.h`).
//!
//! Also the moderation check of `modify_cq` ([`check_moderation`]) and the CQ
//! moderation limits query_device reports ([`MAX_CQ_COUNT`], [`MAX_CQ_PERIOD`]).
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::{
    cmd::command::{CodecError, Command},
    errno::Errno,
    ifc::{
        cmds::mbox_out,
        cq::{cqc, create_cq_in, create_cq_out, destroy_cq_in, modify_cq_in},
        field::{put_be64s, Msg, MsgMut},
        opcodes::Opcode,
    },
};

/// Largest `cq_max_count` (16 bits; upstream `MLX5_MAX_CQ_COUNT`).
pub const MAX_CQ_COUNT: u16 = u16::MAX;
/// Largest `cq_period` (12 bits; upstream `MLX5_MAX_CQ_PERIOD`).
pub const MAX_CQ_PERIOD: u16 = (1 << 12) - 1;

/// MODIFY_CQ `op_mod`: modify the moderation (`MLX5_CQ_OPMOD_MODIFY`, 0).
pub const OPMOD_MODIFY: u16 = 0;
/// MODIFY_CQ `op_mod`: resize (`MLX5_CQ_OPMOD_RESIZE`).
pub const OPMOD_RESIZE: u16 = 1;
/// Modify select: `cq_period` (`MLX5_CQ_MODIFY_PERIOD`).
pub const MODIFY_PERIOD: u32 = 1 << 0;
/// Modify select: `cq_max_count` (`MLX5_CQ_MODIFY_COUNT`).
pub const MODIFY_COUNT: u32 = 1 << 1;
/// Resize select: `log_cq_size` (`MLX5_MODIFY_CQ_MASK_LOG_SIZE`).
pub const RESIZE_LOG_SIZE: u32 = 1 << 0;
/// Resize select: `page_offset` (`MLX5_MODIFY_CQ_MASK_PG_OFFSET`).
pub const RESIZE_PG_OFFSET: u32 = 1 << 1;
/// Resize select: `log_page_size` (`MLX5_MODIFY_CQ_MASK_PG_SIZE`).
pub const RESIZE_PG_SIZE: u32 = 1 << 2;

/// Why a `modify_cq` is refused before any command (upstream `mlx5_ib_modify_cq`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModerationError {
    /// Cap `cq_moderation` is 0: `EOPNOTSUPP`.
    NotSupported,
    /// `cq_period` above [`MAX_CQ_PERIOD`]: `EINVAL`.
    PeriodTooLarge,
}

impl ModerationError {
    /// The errno the verb returns.
    pub const fn errno(self) -> Errno {
        match self {
            Self::NotSupported => Errno::EOPNOTSUPP,
            Self::PeriodTooLarge => Errno::EINVAL,
        }
    }
}

/// Checks a `modify_cq(count, period)` against cap `cq_moderation`.
pub fn check_moderation(cap: bool, period: u16) -> Result<(), ModerationError> {
    if !cap {
        return Err(ModerationError::NotSupported);
    }
    if period > MAX_CQ_PERIOD {
        return Err(ModerationError::PeriodTooLarge);
    }
    Ok(())
}

/// How a CQ's buffer is laid out for the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CqBuf {
    /// log2 of the ring entries.
    pub log_size: u8,
    /// `log_page_size`: log2 of the page size minus 12.
    pub log_page_size: u8,
    /// `page_offset`: the first CQE's offset in the first page, 64-byte units.
    pub page_offset: u8,
}

/// CREATE_CQ: replies the CQ number.
#[derive(Clone, Copy, Debug)]
pub struct CreateCq<'a> {
    /// Ring and pages.
    pub buf: CqBuf,
    /// `cqe_sz`: 0 (64 bytes), 1 (128), 2 (128, padded).
    pub cqe_sz: u8,
    /// UAR page of the CQ's doorbells.
    pub uar: u32,
    /// Completion EQ.
    pub eqn: u32,
    /// Doorbell record's DMA address.
    pub dbr: u64,
    /// `oi`: ignore overrun.
    pub ignore_overrun: bool,
    /// CQE compression with this `mini_cqe_res_format`.
    pub cqe_comp: Option<u8>,
    /// DMA address of each page of the buffer.
    pub pas: &'a [u64],
}

impl Command for CreateCq<'_> {
    const OPCODE: Opcode = Opcode::CREATE_CQ;
    type In = create_cq_in::Layout;
    type Out = create_cq_out::Layout;
    type Reply = u32;

    fn in_len(&self) -> usize {
        create_cq_in::BYTES.saturating_add(self.pas.len().saturating_mul(8))
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        {
            let mut c = i
                .nested::<cqc::Layout>(create_cq_in::CQ_CONTEXT)
                .ok_or(CodecError::Short)?;
            c.set(cqc::CQE_SZ, self.cqe_sz)?;
            c.set(cqc::LOG_CQ_SIZE, self.buf.log_size)?;
            c.set(cqc::LOG_PAGE_SIZE, self.buf.log_page_size)?;
            c.set(cqc::PAGE_OFFSET, self.buf.page_offset)?;
            c.set(cqc::UAR_PAGE, self.uar)?;
            c.set(cqc::C_EQN_OR_APU_ELEMENT, self.eqn)?;
            c.set(cqc::DBR_ADDR, self.dbr)?;
            c.set(cqc::OI, self.ignore_overrun)?;
            if let Some(f) = self.cqe_comp {
                c.set(cqc::CQE_COMP_EN, true)?;
                c.set(cqc::MINI_CQE_RES_FORMAT, f)?;
            }
        }
        put_be64s(i.bytes_mut(create_cq_in::PAS), self.pas.iter().copied()).ok_or(CodecError::Short)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u32, CodecError> {
        Ok(o.get(create_cq_out::CQN))
    }
}

/// DESTROY_CQ of CQ `cqn`.
#[derive(Clone, Copy, Debug)]
pub struct DestroyCq {
    /// The CQ number.
    pub cqn: u32,
}

impl Command for DestroyCq {
    const OPCODE: Opcode = Opcode::DESTROY_CQ;
    type In = destroy_cq_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(destroy_cq_in::CQN, self.cqn)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// Writes the 32-bit field select of MODIFY_CQ.
fn set_select(i: &mut MsgMut<'_, modify_cq_in::Layout>, sel: u32) -> Result<(), CodecError> {
    i.bytes_mut(modify_cq_in::MODIFY_FIELD_SELECT_RESIZE_FIELD_SELECT)
        .get_mut(..4)
        .ok_or(CodecError::Short)?
        .copy_from_slice(&sel.to_be_bytes());
    Ok(())
}

/// MODIFY_CQ (op_mod 0) of the moderation: `cq_period` and `cq_max_count`, as
/// upstream `mlx5_core_modify_cq_moderation`.
#[derive(Clone, Copy, Debug)]
pub struct ModifyCqModeration {
    /// The CQ number.
    pub cqn: u32,
    /// `cq_period` (µs units of the device; at most [`MAX_CQ_PERIOD`]).
    pub period: u16,
    /// `cq_max_count`.
    pub count: u16,
}

impl Command for ModifyCqModeration {
    const OPCODE: Opcode = Opcode::MODIFY_CQ;
    type In = modify_cq_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.set(modify_cq_in::OP_MOD, OPMOD_MODIFY)?;
        i.set(modify_cq_in::CQN, self.cqn)?;
        set_select(i, MODIFY_PERIOD | MODIFY_COUNT)?;
        let mut c = i
            .nested::<cqc::Layout>(modify_cq_in::CQ_CONTEXT)
            .ok_or(CodecError::Short)?;
        c.set(cqc::CQ_PERIOD, self.period)?;
        c.set(cqc::CQ_MAX_COUNT, self.count)?;
        Ok(())
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// MODIFY_CQ (op_mod resize): the new ring, as upstream `mlx5_ib_resize_cq`.
#[derive(Clone, Copy, Debug)]
pub struct ResizeCq<'a> {
    /// The CQ number.
    pub cqn: u32,
    /// New ring and pages.
    pub buf: CqBuf,
    /// `cqe_sz` of the new ring.
    pub cqe_sz: u8,
    /// DMA address of each page of the new buffer.
    pub pas: &'a [u64],
}

impl Command for ResizeCq<'_> {
    const OPCODE: Opcode = Opcode::MODIFY_CQ;
    type In = modify_cq_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn in_len(&self) -> usize {
        modify_cq_in::BYTES.saturating_add(self.pas.len().saturating_mul(8))
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.set(modify_cq_in::OP_MOD, OPMOD_RESIZE)?;
        i.set(modify_cq_in::CQN, self.cqn)?;
        set_select(i, RESIZE_LOG_SIZE | RESIZE_PG_OFFSET | RESIZE_PG_SIZE)?;
        {
            let mut c = i
                .nested::<cqc::Layout>(modify_cq_in::CQ_CONTEXT)
                .ok_or(CodecError::Short)?;
            c.set(cqc::LOG_PAGE_SIZE, self.buf.log_page_size)?;
            c.set(cqc::PAGE_OFFSET, self.buf.page_offset)?;
            c.set(cqc::CQE_SZ, self.cqe_sz)?;
            c.set(cqc::LOG_CQ_SIZE, self.buf.log_size)?;
        }
        put_be64s(i.bytes_mut(modify_cq_in::PAS), self.pas.iter().copied()).ok_or(CodecError::Short)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}
