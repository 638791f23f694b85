// SPDX-License-Identifier: GPL-2.0

//! The driver's error numbers: one type, [`Errno`], for every errno the pure files
//! return.
//!
//! An `Errno` is a positive Linux error number as `include/uapi/asm-generic/errno-base.h`
//! and `errno.h` define it (the numbers every architecture but alpha, mips, parisc and
//! sparc uses; the test kernel is x86_64). Only the numbers this table names exist, so
//! every `Errno` is a valid kernel error. The kernel shell turns one into the kernel's
//! `Error` in exactly one place (`errno/mod.rs`); the values are what upstream
//! `mlx5_core`/`mlx5_ib` return for the same input, which the VM scenarios compare.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate;
//! `host/tests/errno_vs_header.rs` checks every entry against the kernel's headers.

use core::fmt;

/// A positive Linux error number of the table below.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Errno(i32);

/// Declares the table: one associated constant per errno, [`Errno::ALL`] and
/// [`Errno::name`].
macro_rules! errnos {
    ($($(#[$doc:meta])* $name:ident = $value:literal;)*) => {
        impl Errno {
            $(
                $(#[$doc])*
                pub const $name: Errno = Errno($value);
            )*

            /// Every errno of the table, in increasing order.
            pub const ALL: &'static [Errno] = &[$(Errno::$name),*];

            /// The errno's symbolic name (`"EINVAL"`).
            pub const fn name(self) -> &'static str {
                match self.0 {
                    $($value => stringify!($name),)*
                    // Unreachable: the field is private and only the table builds one.
                    _ => "E?",
                }
            }
        }
    };
}

errnos! {
    /// Operation not permitted.
    EPERM = 1;
    /// I/O error.
    EIO = 5;
    /// No such device or address.
    ENXIO = 6;
    /// Try again.
    EAGAIN = 11;
    /// Out of memory.
    ENOMEM = 12;
    /// Permission denied.
    EACCES = 13;
    /// Bad address.
    EFAULT = 14;
    /// Device or resource busy.
    EBUSY = 16;
    /// Invalid argument.
    EINVAL = 22;
    /// Function not implemented.
    ENOSYS = 38;
    /// No message of desired type.
    ENOMSG = 42;
    /// Invalid request descriptor.
    EBADR = 53;
    /// Protocol error (the device answered a value outside its range).
    EPROTO = 71;
    /// Operation not supported.
    EOPNOTSUPP = 95;
    /// Connection timed out.
    ETIMEDOUT = 110;
}

impl Errno {
    /// The positive number (`22` for [`Errno::EINVAL`]).
    pub const fn get(self) -> i32 {
        self.0
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.name(), self.0)
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_errno_code))]
mod tests {
    use super::*;
    use crate::testing::text;

    /// The numbers of `include/uapi/asm-generic/errno-base.h` and `errno.h`, written
    /// out: a changed entry of the table fails here (and in the header test).
    #[test]
    fn numbers_are_the_uapi_ones() {
        let want: [(Errno, i32); 15] = [
            (Errno::EPERM, 1),
            (Errno::EIO, 5),
            (Errno::ENXIO, 6),
            (Errno::EAGAIN, 11),
            (Errno::ENOMEM, 12),
            (Errno::EACCES, 13),
            (Errno::EFAULT, 14),
            (Errno::EBUSY, 16),
            (Errno::EINVAL, 22),
            (Errno::ENOSYS, 38),
            (Errno::ENOMSG, 42),
            (Errno::EBADR, 53),
            (Errno::EPROTO, 71),
            (Errno::EOPNOTSUPP, 95),
            (Errno::ETIMEDOUT, 110),
        ];
        assert_eq!(Errno::ALL.len(), want.len());
        for (i, (e, n)) in want.iter().enumerate() {
            assert_eq!(e.get(), *n);
            assert_eq!(Errno::ALL[i], *e);
        }
    }

    #[test]
    fn table_is_sorted_and_named() {
        for w in Errno::ALL.windows(2) {
            assert!(w[0].get() < w[1].get());
        }
        for e in Errno::ALL {
            // Kernel errors are 1..=4095 (`MAX_ERRNO`).
            assert!(e.get() > 0 && e.get() < 4096);
            assert!(e.name().starts_with('E') && e.name() != "E?");
        }
        assert_eq!(text(Errno::EOPNOTSUPP).as_str(), "EOPNOTSUPP(95)");
    }
}
