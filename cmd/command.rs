// SPDX-License-Identifier: GPL-2.0

//! Typed commands: one type per command knows its opcode, op_mod, input and output
//! layouts, how to write its input from typed values and how to parse its output into
//! a typed reply.
//!
//! A command is a struct holding the values its caller states and implementing
//! [`Command`]; [`encode`] writes the header and the input, [`decode`] validates the
//! output (device data) and builds the reply. The kernel shell's
//! `Hw::exec_cmd` carries every command through the queue with these two functions, so
//! a call site is one line: `hw.exec_cmd(SetIssi { issi: 1 })`.
//!
//! Fields are typed ([`crate::ifc::field::F`]): a field of another structure, or a
//! value of the wrong width, does not compile.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use super::status::ErrorKind;
use crate::ifc::{
    cmd_layout::INLINE_LEN,
    cmds::mbox_in,
    field::{Field, Layout, Msg, MsgMut, Overflow},
    opcodes::Opcode,
};

/// Why an input could not be built or an output was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CodecError {
    /// A value does not fit its field (the command is not sent).
    Overflow(Field),
    /// The buffer is shorter than the command's layout (a bug in the command's
    /// declared length; the command is not sent).
    Short,
    /// The output holds a value out of range (device data rejected).
    BadOutput,
    /// A reply could not be stored.
    NoMemory,
}

impl From<Overflow> for CodecError {
    fn from(o: Overflow) -> Self {
        CodecError::Overflow(o.0)
    }
}

impl CodecError {
    /// The command error kind this failure is reported as.
    pub fn kind(self) -> ErrorKind {
        match self {
            CodecError::Overflow(_) | CodecError::Short => ErrorKind::BadInput,
            CodecError::BadOutput => ErrorKind::Rejected,
            CodecError::NoMemory => ErrorKind::NoMemory,
        }
    }
}

/// One firmware command.
///
/// Adding a command: declare its `*_in` / `*_out` layouts in `ifc/` (with typed
/// fields), then a struct with the values the caller supplies and this impl. Only
/// [`Command::parse`] is required when the input has no field beyond the header.
pub trait Command {
    /// The opcode.
    const OPCODE: Opcode;
    /// Input layout (its fixed part; variable-length inputs say so in [`Self::in_len`]).
    type In: Layout;
    /// Output layout (its fixed part).
    type Out: Layout;
    /// What the caller gets back.
    type Reply;

    /// The op_mod (0 unless the command has variants).
    fn op_mod(&self) -> u16 {
        0
    }

    /// Input length in bytes (the layout's size unless the input carries an array).
    fn in_len(&self) -> usize {
        Self::In::BYTES
    }

    /// Output length in bytes (the layout's size unless the output carries an array).
    fn out_len(&self) -> usize {
        Self::Out::BYTES
    }

    /// Writes the input fields beyond the header into a zeroed buffer.
    fn build(&self, _input: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(())
    }

    /// Validates the output (device data) and builds the reply.
    fn parse(self, output: Msg<'_, Self::Out>) -> Result<Self::Reply, CodecError>;
}

/// The opcode as the 16-bit value of the input header.
pub fn opcode<C: Command>() -> u16 {
    // CAST: `Opcode` is a `u16`-valued fieldless enum.
    C::OPCODE as u16
}

/// Bytes of the input buffer: at least the inline part of the queue entry.
pub fn in_len<C: Command>(cmd: &C) -> usize {
    cmd.in_len().max(INLINE_LEN)
}

/// Bytes of the output buffer: at least the inline part of the queue entry.
pub fn out_len<C: Command>(cmd: &C) -> usize {
    cmd.out_len().max(INLINE_LEN)
}

/// Writes the input of `cmd` (header and fields) into a zeroed buffer of
/// [`in_len`] bytes.
///
/// # Errors
///
/// [`CodecError::Overflow`] for a value wider than its field, [`CodecError::Short`]
/// for a buffer shorter than the input layout: both `ErrorKind::BadInput`, `EINVAL`.
pub fn encode<C: Command>(cmd: &C, buf: &mut [u8]) -> Result<(), CodecError> {
    let mut hdr = MsgMut::<mbox_in::Layout>::new(buf).ok_or(CodecError::Short)?;
    hdr.set(mbox_in::OPCODE, opcode::<C>())?;
    hdr.set(mbox_in::OP_MOD, cmd.op_mod())?;
    let mut input = MsgMut::<C::In>::new(buf).ok_or(CodecError::Short)?;
    cmd.build(&mut input)
}

/// Parses the output of a command that completed with status OK.
///
/// # Errors
///
/// [`CodecError::BadOutput`] (`ErrorKind::Rejected`, `EPROTO`) for a value of the
/// output out of range, [`CodecError::NoMemory`] (`ENOMEM`) for a reply that could
/// not be stored, [`CodecError::Short`] (`EINVAL`) for a buffer shorter than the
/// output layout.
pub fn decode<C: Command>(cmd: C, buf: &[u8]) -> Result<C::Reply, CodecError> {
    let out = Msg::<C::Out>::new(buf).ok_or(CodecError::BadOutput)?;
    cmd.parse(out)
}
