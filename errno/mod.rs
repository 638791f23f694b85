// SPDX-License-Identifier: GPL-2.0

//! The driver's one error vocabulary and its one conversion to the kernel's error.
//!
//! The pure files (commands, plans, uverbs checks) return [`Errno`] (`code.rs`,
//! host-tested): directly, inside `UabiError`, or from `CmdError::errno` for a failed
//! command. A kernel function returning `kernel::error::Result` turns it into the
//! kernel's [`Error`] with `?` or `.into()`, through the one `From` below; nothing else
//! builds a kernel error from a number. The C shim's verbs hand the kernel error's
//! negative number to the RDMA core (`ffi/rdma/ib.rs`, `errno`).

mod code;

pub(crate) use code::Errno;

use kernel::error::Error;

impl From<Errno> for Error {
    fn from(e: Errno) -> Self {
        // Every `Errno` is an entry of `code.rs`'s table, all in 1..=MAX_ERRNO (checked
        // there), so `from_errno` never falls back to EINVAL.
        Error::from_errno(-e.get())
    }
}
