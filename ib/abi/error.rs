// SPDX-License-Identifier: GPL-2.0

//! The error of a rejected uverbs request: why, and the errno the verb returns.
//!
//! Every check of this module returns the errno upstream `mlx5_ib` returns for the
//! same input, so libmlx5's fallbacks (shorter request lengths, a retry without
//! DEVX) behave as against the upstream driver. The errno is the driver's one
//! [`Errno`] type; the kernel shell converts it (`errno/mod.rs`).

use core::fmt;

use crate::errno::Errno;

/// Why a request was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The request is shorter than the verb's minimum (or of a length it does not
    /// accept).
    BadLength {
        /// Length user space gave.
        len: usize,
        /// Smallest length accepted.
        min: usize,
    },
    /// A byte past the structure we know is not zero (a feature we do not have).
    TrailingNotZero {
        /// Offset of the first non-zero byte.
        offset: usize,
    },
    /// Flag bits we do not know or do not support.
    UnknownFlags {
        /// The offending bits.
        bits: u64,
    },
    /// A `comp_mask` bit we do not know.
    UnknownCompMask {
        /// The offending bits.
        bits: u64,
    },
    /// A reserved field is not zero.
    ReservedNotZero,
    /// The context asks for DEVX, which this device does not offer.
    Devx,
    /// A blue-flame register count out of range.
    BfregCount,
    /// A value out of range (name of the field).
    OutOfRange(&'static str),
    /// A feature the device capabilities do not offer (name of the feature).
    Unsupported(&'static str),
    /// An mmap command we do not serve.
    MmapCommand(u8),
}

/// A rejected request: the reason (for the log) and the errno of the verb.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UabiError {
    /// Why.
    pub reason: Reason,
    /// The errno the verb returns.
    pub errno: Errno,
}

impl UabiError {
    /// `EINVAL` for `reason`.
    pub const fn inval(reason: Reason) -> Self {
        Self {
            reason,
            errno: Errno::EINVAL,
        }
    }

    /// `EOPNOTSUPP` for `reason`.
    pub const fn notsupp(reason: Reason) -> Self {
        Self {
            reason,
            errno: Errno::EOPNOTSUPP,
        }
    }

    /// `errno` for `reason`.
    pub const fn new(reason: Reason, errno: Errno) -> Self {
        Self { reason, errno }
    }
}

impl fmt::Display for UabiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason {
            Reason::BadLength { len, min } => {
                write!(f, "request of {len} bytes (at least {min} needed)")?
            }
            Reason::TrailingNotZero { offset } => {
                write!(f, "unknown request bytes not zero from offset {offset}")?
            }
            Reason::UnknownFlags { bits } => write!(f, "unsupported flags {bits:#x}")?,
            Reason::UnknownCompMask { bits } => write!(f, "unknown comp_mask bits {bits:#x}")?,
            Reason::ReservedNotZero => write!(f, "reserved field not zero")?,
            Reason::Devx => write!(f, "DEVX not supported")?,
            Reason::BfregCount => write!(f, "bfreg count out of range")?,
            Reason::OutOfRange(what) => write!(f, "{what} out of range")?,
            Reason::Unsupported(what) => write!(f, "{what} not supported by the device")?,
            Reason::MmapCommand(c) => write!(f, "mmap command {c} not served")?,
        }
        write!(f, " ({})", self.errno)
    }
}
