// SPDX-License-Identifier: GPL-2.0

//! The QP commands, one type each (see [`crate::cmd::command::Command`]): CREATE_QP
//! (context and page list), DESTROY_QP, QUERY_QP (the context back), and the
//! state transitions RST2INIT, INIT2INIT, INIT2RTR, RTR2RTS, RTS2RTS, SQERR2RTS,
//! SQD_RTS (context and `opt_param_mask`), 2ERR and 2RST (QP number only), all with
//! `uid` 0 (no DEVX).
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::ib::qp::modify::QPC_BYTES;
use crate::{
    cmd::command::{CodecError, Command},
    ifc::{
        cmds::mbox_out,
        field::{put_be64s, Msg, MsgMut},
        opcodes::Opcode,
        qp::{
            create_qp_in, create_qp_out, destroy_qp_in, init2init_qp_in, init2rtr_qp_in,
            qp_2err_in, qp_2rst_in, query_qp_in, query_qp_out, rst2init_qp_in, rtr2rts_qp_in,
            rts2rts_qp_in, sqd2rts_qp_in, sqerr2rts_qp_in,
        },
    },
};

/// CREATE_QP: replies the QP number.
#[derive(Clone, Copy, Debug)]
pub struct CreateQp<'a> {
    /// The QP context.
    pub qpc: &'a [u8; QPC_BYTES],
    /// Bus address of each page of the work queue buffer.
    pub pas: &'a [u64],
}

impl Command for CreateQp<'_> {
    const OPCODE: Opcode = Opcode::CREATE_QP;
    type In = create_qp_in::Layout;
    type Out = create_qp_out::Layout;
    type Reply = u32;

    fn in_len(&self) -> usize {
        create_qp_in::BYTES.saturating_add(self.pas.len().saturating_mul(8))
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        i.bytes_mut(create_qp_in::QPC).copy_from_slice(self.qpc);
        put_be64s(i.bytes_mut(create_qp_in::PAS), self.pas.iter().copied()).ok_or(CodecError::Short)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u32, CodecError> {
        Ok(o.get(create_qp_out::QPN))
    }
}

/// DESTROY_QP of QP `qpn`.
#[derive(Clone, Copy, Debug)]
pub struct DestroyQp {
    /// The QP number.
    pub qpn: u32,
}

impl Command for DestroyQp {
    const OPCODE: Opcode = Opcode::DESTROY_QP;
    type In = destroy_qp_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(destroy_qp_in::QPN, self.qpn)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// QUERY_QP of QP `qpn`: replies its context (the page list is not read).
#[derive(Clone, Copy, Debug)]
pub struct QueryQp {
    /// The QP number.
    pub qpn: u32,
}

impl Command for QueryQp {
    const OPCODE: Opcode = Opcode::QUERY_QP;
    type In = query_qp_in::Layout;
    type Out = query_qp_out::Layout;
    type Reply = [u8; QPC_BYTES];

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(query_qp_in::QPN, self.qpn)?)
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<Self::Reply, CodecError> {
        o.bytes(query_qp_out::QPC)
            .try_into()
            .map_err(|_| CodecError::BadOutput)
    }
}

/// Declares a transition command with a context and an `opt_param_mask`.
macro_rules! transition {
    ($(#[$m:meta])* $name:ident, $op:ident, $l:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug)]
        pub struct $name<'a> {
            /// The QP number.
            pub qpn: u32,
            /// `opt_param_mask`.
            pub opt_mask: u32,
            /// The QP context.
            pub qpc: &'a [u8; QPC_BYTES],
        }

        impl Command for $name<'_> {
            const OPCODE: Opcode = Opcode::$op;
            type In = $l::Layout;
            type Out = mbox_out::Layout;
            type Reply = ();

            fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
                i.set($l::QPN, self.qpn)?;
                i.set($l::OPT_PARAM_MASK, self.opt_mask)?;
                i.bytes_mut($l::QPC).copy_from_slice(self.qpc);
                Ok(())
            }

            fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
                Ok(())
            }
        }
    };
}

transition!(
    /// RST2INIT_QP.
    Rst2InitQp, RST2INIT_QP, rst2init_qp_in
);
transition!(
    /// INIT2INIT_QP.
    Init2InitQp, INIT2INIT_QP, init2init_qp_in
);
transition!(
    /// INIT2RTR_QP.
    Init2RtrQp, INIT2RTR_QP, init2rtr_qp_in
);
transition!(
    /// RTR2RTS_QP.
    Rtr2RtsQp, RTR2RTS_QP, rtr2rts_qp_in
);
transition!(
    /// RTS2RTS_QP.
    Rts2RtsQp, RTS2RTS_QP, rts2rts_qp_in
);
transition!(
    /// SQERR2RTS_QP.
    SqErr2RtsQp, SQERR2RTS_QP, sqerr2rts_qp_in
);
transition!(
    /// SQD_RTS_QP.
    Sqd2RtsQp, SQD_RTS_QP, sqd2rts_qp_in
);

/// 2ERR_QP of QP `qpn`.
#[derive(Clone, Copy, Debug)]
pub struct QpToErr {
    /// The QP number.
    pub qpn: u32,
}

impl Command for QpToErr {
    const OPCODE: Opcode = Opcode::_2ERR_QP;
    type In = qp_2err_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(qp_2err_in::QPN, self.qpn)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// 2RST_QP of QP `qpn`.
#[derive(Clone, Copy, Debug)]
pub struct QpToRst {
    /// The QP number.
    pub qpn: u32,
}

impl Command for QpToRst {
    const OPCODE: Opcode = Opcode::_2RST_QP;
    type In = qp_2rst_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(qp_2rst_in::QPN, self.qpn)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}
