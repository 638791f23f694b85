// SPDX-License-Identifier: GPL-2.0

//! The commands of XRC domains and shared receive queues, one type each (see
//! [`crate::cmd::command::Command`]): ALLOC_XRCD / DEALLOC_XRCD; CREATE_RMP,
//! MODIFY_RMP (the limit), QUERY_RMP, DESTROY_RMP for basic SRQs; CREATE_XRC_SRQ,
//! ARM_XRC_SRQ, QUERY_XRC_SRQ, DESTROY_XRC_SRQ for XRC SRQs. The contexts are written
//! from [`SrqCtx`] as upstream `srq_cmd.c` writes them (`set_wq`, `set_srqc`).
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::ib::srq::plan::SrqCtx;
use crate::{
    cmd::command::{CodecError, Command},
    ifc::{
        cmds::mbox_out,
        field::{put_be64s, Msg, MsgMut},
        ib_res::{alloc_xrcd_in, alloc_xrcd_out, dealloc_xrcd_in},
        opcodes::Opcode,
        srq::{
            arm_xrc_srq_in, create_rmp_in, create_rmp_out, create_xrc_srq_in, create_xrc_srq_out,
            destroy_rmp_in, destroy_xrc_srq_in, modify_rmp_in, query_rmp_in, query_rmp_out,
            query_xrc_srq_in, query_xrc_srq_out, rmp_bitmask, rmpc, wq, xrc_srqc,
            ARM_XRC_SRQ_OP_MOD_XRC_SRQ, RMPC_STATE_RDY, SRQC_STATE_GOOD,
        },
    },
};

/// ALLOC_XRCD: replies the XRC domain number.
#[derive(Clone, Copy, Debug)]
pub struct AllocXrcd;

impl Command for AllocXrcd {
    const OPCODE: Opcode = Opcode::ALLOC_XRCD;
    type In = alloc_xrcd_in::Layout;
    type Out = alloc_xrcd_out::Layout;
    type Reply = u32;

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u32, CodecError> {
        Ok(o.get(alloc_xrcd_out::XRCD))
    }
}

/// DEALLOC_XRCD of domain `xrcdn`.
#[derive(Clone, Copy, Debug)]
pub struct DeallocXrcd {
    /// The XRC domain number.
    pub xrcdn: u32,
}

impl Command for DeallocXrcd {
    const OPCODE: Opcode = Opcode::DEALLOC_XRCD;
    type In = dealloc_xrcd_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(dealloc_xrcd_in::XRCD, self.xrcdn)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// What QUERY_RMP / QUERY_XRC_SRQ report (upstream `get_wq` / `get_srqc`, of which
/// query_srq uses the limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SrqState {
    /// Limit watermark.
    pub lwm: u16,
    /// The queue is in error (RMP not ready, XRC SRQ not good).
    pub error: bool,
}

/// CREATE_RMP of a basic SRQ with context `ctx` and the buffer's page addresses:
/// replies the RMP number.
pub struct CreateRmp<'a> {
    /// The context.
    pub ctx: SrqCtx,
    /// DMA address of each page of the buffer.
    pub pas: &'a [u64],
}

impl Command for CreateRmp<'_> {
    const OPCODE: Opcode = Opcode::CREATE_RMP;
    type In = create_rmp_in::Layout;
    type Out = create_rmp_out::Layout;
    type Reply = u32;

    fn in_len(&self) -> usize {
        create_rmp_in::BYTES.saturating_add(self.pas.len().saturating_mul(8))
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        let c = &self.ctx;
        i.set(create_rmp_in::UID, c.uid)?;
        {
            let mut r = i
                .nested::<rmpc::Layout>(create_rmp_in::CTX)
                .ok_or(CodecError::Short)?;
            r.set(rmpc::STATE, RMPC_STATE_RDY)?;
            let mut w = r.nested::<wq::Layout>(rmpc::WQ).ok_or(CodecError::Short)?;
            w.set(wq::WQ_SIGNATURE, c.wq_sig)?;
            w.set(wq::LOG_WQ_PG_SZ, c.log_page_size)?;
            w.set(wq::LOG_WQ_STRIDE, c.wqe_shift.saturating_add(4))?;
            w.set(wq::LOG_WQ_SZ, c.log_size)?;
            w.set(wq::PAGE_OFFSET, c.page_offset)?;
            w.set(wq::LWM, c.lwm)?;
            w.set(wq::PD, c.pd)?;
            w.set(wq::DBR_ADDR, c.db_record)?;
        }
        put_be64s(i.bytes_mut(create_rmp_in::WQ_PAS), self.pas.iter().copied())
            .ok_or(CodecError::Short)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u32, CodecError> {
        Ok(o.get(create_rmp_out::RMPN))
    }
}

/// MODIFY_RMP of RMP `rmpn`: the limit watermark to `lwm` (state ready, bitmask
/// `lwm`), as upstream `arm_rmp_cmd`.
#[derive(Clone, Copy, Debug)]
pub struct ModifyRmpLwm {
    /// The RMP number.
    pub rmpn: u32,
    /// The new watermark.
    pub lwm: u16,
}

impl Command for ModifyRmpLwm {
    const OPCODE: Opcode = Opcode::MODIFY_RMP;
    type In = modify_rmp_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.set(modify_rmp_in::RMP_STATE, RMPC_STATE_RDY)?;
        i.set(modify_rmp_in::RMPN, self.rmpn)?;
        {
            let mut b = i
                .nested::<rmp_bitmask::Layout>(modify_rmp_in::BITMASK)
                .ok_or(CodecError::Short)?;
            b.set(rmp_bitmask::LWM, true)?;
        }
        let mut r = i
            .nested::<rmpc::Layout>(modify_rmp_in::CTX)
            .ok_or(CodecError::Short)?;
        r.set(rmpc::STATE, RMPC_STATE_RDY)?;
        let mut w = r.nested::<wq::Layout>(rmpc::WQ).ok_or(CodecError::Short)?;
        Ok(w.set(wq::LWM, self.lwm)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// QUERY_RMP of RMP `rmpn`.
#[derive(Clone, Copy, Debug)]
pub struct QueryRmp {
    /// The RMP number.
    pub rmpn: u32,
}

impl Command for QueryRmp {
    const OPCODE: Opcode = Opcode::QUERY_RMP;
    type In = query_rmp_in::Layout;
    type Out = query_rmp_out::Layout;
    type Reply = SrqState;

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(query_rmp_in::RMPN, self.rmpn)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<SrqState, CodecError> {
        let r = o
            .nested::<rmpc::Layout>(query_rmp_out::RMP_CONTEXT)
            .ok_or(CodecError::BadOutput)?;
        let w = r
            .nested::<wq::Layout>(rmpc::WQ)
            .ok_or(CodecError::BadOutput)?;
        Ok(SrqState {
            lwm: w.get(wq::LWM),
            error: r.get(rmpc::STATE) != RMPC_STATE_RDY,
        })
    }
}

/// DESTROY_RMP of RMP `rmpn`.
#[derive(Clone, Copy, Debug)]
pub struct DestroyRmp {
    /// The RMP number.
    pub rmpn: u32,
}

impl Command for DestroyRmp {
    const OPCODE: Opcode = Opcode::DESTROY_RMP;
    type In = destroy_rmp_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(destroy_rmp_in::RMPN, self.rmpn)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// CREATE_XRC_SRQ with context `ctx` and the buffer's page addresses: replies the XRC
/// SRQ number.
pub struct CreateXrcSrq<'a> {
    /// The context.
    pub ctx: SrqCtx,
    /// DMA address of each page of the buffer.
    pub pas: &'a [u64],
}

impl Command for CreateXrcSrq<'_> {
    const OPCODE: Opcode = Opcode::CREATE_XRC_SRQ;
    type In = create_xrc_srq_in::Layout;
    type Out = create_xrc_srq_out::Layout;
    type Reply = u32;

    fn in_len(&self) -> usize {
        create_xrc_srq_in::BYTES.saturating_add(self.pas.len().saturating_mul(8))
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        let c = &self.ctx;
        i.set(create_xrc_srq_in::UID, c.uid)?;
        {
            let mut x = i
                .nested::<xrc_srqc::Layout>(create_xrc_srq_in::XRC_SRQ_CONTEXT_ENTRY)
                .ok_or(CodecError::Short)?;
            x.set(xrc_srqc::WQ_SIGNATURE, c.wq_sig)?;
            x.set(xrc_srqc::LOG_PAGE_SIZE, c.log_page_size)?;
            x.set(xrc_srqc::LOG_RQ_STRIDE, c.wqe_shift)?;
            x.set(xrc_srqc::LOG_XRC_SRQ_SIZE, c.log_size)?;
            x.set(xrc_srqc::PAGE_OFFSET, c.page_offset)?;
            x.set(xrc_srqc::LWM, c.lwm)?;
            x.set(xrc_srqc::PD, c.pd)?;
            // The record is 4-byte aligned: bits 63:32 and 31:2.
            x.set(xrc_srqc::DB_RECORD_ADDR_H, (c.db_record >> 32) as u32)?;
            x.set(xrc_srqc::DB_RECORD_ADDR_L, (c.db_record as u32) >> 2)?;
            x.set(xrc_srqc::XRCD, c.xrcd)?;
            x.set(xrc_srqc::CQN, c.cqn)?;
            x.set(xrc_srqc::USER_INDEX, c.user_index)?;
        }
        put_be64s(
            i.bytes_mut(create_xrc_srq_in::PAS),
            self.pas.iter().copied(),
        )
        .ok_or(CodecError::Short)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u32, CodecError> {
        Ok(o.get(create_xrc_srq_out::XRC_SRQN))
    }
}

/// ARM_XRC_SRQ of XRC SRQ `srqn`: the limit watermark to `lwm`.
#[derive(Clone, Copy, Debug)]
pub struct ArmXrcSrq {
    /// The XRC SRQ number.
    pub srqn: u32,
    /// The new watermark.
    pub lwm: u16,
}

impl Command for ArmXrcSrq {
    const OPCODE: Opcode = Opcode::ARM_XRC_SRQ;
    type In = arm_xrc_srq_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn op_mod(&self) -> u16 {
        ARM_XRC_SRQ_OP_MOD_XRC_SRQ
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.set(arm_xrc_srq_in::XRC_SRQN, self.srqn)?;
        Ok(i.set(arm_xrc_srq_in::LWM, self.lwm)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// QUERY_XRC_SRQ of XRC SRQ `srqn`.
#[derive(Clone, Copy, Debug)]
pub struct QueryXrcSrq {
    /// The XRC SRQ number.
    pub srqn: u32,
}

impl Command for QueryXrcSrq {
    const OPCODE: Opcode = Opcode::QUERY_XRC_SRQ;
    type In = query_xrc_srq_in::Layout;
    type Out = query_xrc_srq_out::Layout;
    type Reply = SrqState;

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(query_xrc_srq_in::XRC_SRQN, self.srqn)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<SrqState, CodecError> {
        let x = o
            .nested::<xrc_srqc::Layout>(query_xrc_srq_out::XRC_SRQ_CONTEXT_ENTRY)
            .ok_or(CodecError::BadOutput)?;
        Ok(SrqState {
            lwm: x.get(xrc_srqc::LWM),
            error: x.get(xrc_srqc::STATE) != SRQC_STATE_GOOD,
        })
    }
}

/// DESTROY_XRC_SRQ of XRC SRQ `srqn`.
#[derive(Clone, Copy, Debug)]
pub struct DestroyXrcSrq {
    /// The XRC SRQ number.
    pub srqn: u32,
}

impl Command for DestroyXrcSrq {
    const OPCODE: Opcode = Opcode::DESTROY_XRC_SRQ;
    type In = destroy_xrc_srq_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(destroy_xrc_srq_in::XRC_SRQN, self.srqn)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}
