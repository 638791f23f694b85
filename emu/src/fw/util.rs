//! Helpers for handlers: field access mapped to command statuses.

use super::syndrome;
use crate::ifc::field::Field;
use crate::ifc::status::CmdStatus;

/// A failing command: status and syndrome.
pub type CmdErr = (CmdStatus, u32);

/// Result of a command handler.
pub type CmdResult = Result<(), CmdErr>;

/// Reads an input field; a short input is a bad-input-length error.
pub fn get(input: &[u8], f: impl Into<Field>) -> Result<u64, CmdErr> {
    let f: Field = f.into();
    f.get(input)
        .ok_or((CmdStatus::BAD_INP_LEN_ERR, syndrome::BAD_INPUT_LEN))
}

/// Writes an output field; a short output is a bad-output-length error.
pub fn put(out: &mut [u8], f: impl Into<Field>, v: u64) -> CmdResult {
    let f: Field = f.into();
    f.set(out, v)
        .ok_or((CmdStatus::BAD_OUTP_LEN_ERR, syndrome::BAD_OUTPUT_LEN))
}

/// Requires `out` to hold at least `n` bytes.
pub fn need_out(out: &[u8], n: usize) -> CmdResult {
    if out.len() < n {
        Err((CmdStatus::BAD_OUTP_LEN_ERR, syndrome::BAD_OUTPUT_LEN))
    } else {
        Ok(())
    }
}

/// Requires `input` to hold at least `n` bytes.
pub fn need_in(input: &[u8], n: usize) -> CmdResult {
    if input.len() < n {
        Err((CmdStatus::BAD_INP_LEN_ERR, syndrome::BAD_INPUT_LEN))
    } else {
        Ok(())
    }
}

/// Bad system state.
pub fn bad_state() -> CmdErr {
    (CmdStatus::BAD_SYS_STATE_ERR, syndrome::BAD_STATE)
}

/// Bad parameter.
pub fn bad_param() -> CmdErr {
    (CmdStatus::BAD_PARAM_ERR, syndrome::BAD_PARAM)
}
