// SPDX-License-Identifier: GPL-2.0

//! Printing the pure protocol types with the kernel's log macros.
//!
//! The pure files (shared with the host crate) implement `core::fmt::Display`; the
//! kernel's `dev_*!` macros require `kernel::fmt::Display`. [`Show`] bridges the two.

/// Wraps a `core::fmt::Display` value for `dev_err!("{}", Show(&e))`.
pub(crate) struct Show<T>(pub(crate) T);

impl<T: core::fmt::Display> kernel::fmt::Display for Show<T> {
    fn fmt(&self, f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
        core::fmt::Display::fmt(&self.0, f)
    }
}
