// SPDX-License-Identifier: GPL-2.0

//! Helpers of the unit tests that run both as `cargo test` on the host and as KUnit
//! suites in the module (Documentation/testing.md, "Unit tests").
//!
//! The shared test modules are compiled against `core` only: the kernel has no `Vec`,
//! `String` or `format!`. These fixed-capacity stand-ins live on the stack (a KUnit
//! case runs on a kernel thread's stack: keep capacities small) and refuse to grow
//! past their capacity with a failed assertion, never silently.
//!
//! Compiled only into test builds: `cfg(test)` on the host,
//! `cfg(CONFIG_MLX5_RS_KUNIT_TEST)` in the module.

use core::fmt;

/// A vector of at most `N` elements, on the stack.
pub(crate) struct ArrayVec<T: Copy + Default, const N: usize> {
    items: [T; N],
    len: usize,
}

impl<T: Copy + Default, const N: usize> ArrayVec<T, N> {
    /// An empty vector.
    pub(crate) fn new() -> Self {
        Self {
            items: [T::default(); N],
            len: 0,
        }
    }

    /// Appends `v`; false (and nothing appended) when the vector is full.
    #[must_use]
    pub(crate) fn try_push(&mut self, v: T) -> bool {
        if self.len == N {
            return false;
        }
        self.items[self.len] = v;
        self.len += 1;
        true
    }

    /// Appends `v`. A full vector is a bug of the test: it fails the assertion.
    pub(crate) fn push(&mut self, v: T) {
        let pushed = self.try_push(v);
        assert!(pushed);
    }
}

impl<T: Copy + Default, const N: usize> Default for ArrayVec<T, N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy + Default, const N: usize> core::ops::Deref for ArrayVec<T, N> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items[..self.len]
    }
}

impl<T: Copy + Default, const N: usize> core::ops::DerefMut for ArrayVec<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.items[..self.len]
    }
}

impl<T: Copy + Default, const N: usize> AsRef<[T]> for ArrayVec<T, N> {
    fn as_ref(&self) -> &[T] {
        self
    }
}

impl<T: Copy + Default, const N: usize> FromIterator<T> for ArrayVec<T, N> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v = Self::new();
        for x in iter {
            v.push(x);
        }
        v
    }
}

impl<T: Copy + Default + fmt::Debug, const N: usize> fmt::Debug for ArrayVec<T, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Copy + Default + PartialEq, const N: usize, U: AsRef<[T]>> PartialEq<U> for ArrayVec<T, N> {
    fn eq(&self, other: &U) -> bool {
        **self == *other.as_ref()
    }
}

/// The text of a `Display` value, formatted into a buffer of `N` bytes (what does not
/// fit is cut, and [`Text::overflowed`] says so).
pub(crate) struct Text<const N: usize> {
    buf: [u8; N],
    len: usize,
    overflowed: bool,
}

impl<const N: usize> Text<N> {
    /// Formats `args` (`format_args!(...)`).
    pub(crate) fn of(args: fmt::Arguments<'_>) -> Self {
        let mut t = Self {
            buf: [0; N],
            len: 0,
            overflowed: false,
        };
        if fmt::Write::write_fmt(&mut t, args).is_err() {
            t.overflowed = true;
        }
        t
    }

    /// The text written (up to the first byte that did not fit).
    pub(crate) fn as_str(&self) -> &str {
        // Only whole `&str`s are copied in, so the bytes are UTF-8.
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }

    /// Whether the text was longer than `N` bytes.
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }
}

impl<const N: usize> fmt::Write for Text<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = N - self.len;
        if s.len() > room {
            self.overflowed = true;
            return Err(fmt::Error);
        }
        self.buf[self.len..self.len + s.len()].copy_from_slice(s.as_bytes());
        self.len += s.len();
        Ok(())
    }
}

/// The `Display` text of `v` in a buffer of 256 bytes; asserts that it fits.
pub(crate) fn text<T: fmt::Display>(v: T) -> Text<256> {
    let t = Text::of(format_args!("{v}"));
    assert!(!t.overflowed());
    t
}
