// SPDX-License-Identifier: GPL-2.0

//! A verb's driver data (`udata`) as every verbs family sees it: [`UserData`], the
//! one Rust view of the shim's staged `struct mlx5rs_ib_udata` ([`Udata`]).
//!
//! The C side stages the request in a kernel buffer (`mlx5rs_ib_stage()`) and
//! responds with the first `resp_len` bytes of its response buffer, truncated to what
//! user space asked for; a trampoline turns that area into a [`UserData`] with
//! [`user_data`], passes it to its family's ops, and stores the length the ops
//! return with [`set_resp_len`]. A verb without a request (`alloc_pd`, `create_ah`)
//! gets an empty `req`.

use super::ib_abi::Udata;

/// The driver part of a user verb: the request, the length of the response user
/// space asked for, and the buffer to write the response into.
pub(crate) struct UserData<'a> {
    /// The staged request (its first bytes; see `mlx5rs_ib_stage_tail()`).
    pub(crate) req: &'a [u8],
    /// Response length user space asked for.
    pub(crate) outlen: usize,
    /// The response buffer.
    pub(crate) out: &'a mut [u8],
}

/// The staged request and response buffer of `u`.
///
/// # Safety
///
/// `u` must be a `struct mlx5rs_ib_udata` of the shim: `inp` valid for `inlen` bytes
/// of reading, `out` for `outcap` bytes of writing, both for the call, not aliased.
unsafe fn staged<'a>(u: &Udata) -> (&'a [u8], &'a mut [u8], usize) {
    let inlen = usize::try_from(u.inlen).unwrap_or(0);
    let outcap = usize::try_from(u.outcap).unwrap_or(0);
    let inp = if u.inp.is_null() || inlen == 0 {
        &[][..]
    } else {
        // SAFETY: `inp` is not NULL (checked above) and, by the function's contract,
        // valid for reading `inlen` bytes for the call and not written through `out`
        // (not aliased); a `u8` slice needs no alignment.
        unsafe { core::slice::from_raw_parts(u.inp, inlen) }
    };
    let out = if u.out.is_null() || outcap == 0 {
        &mut [][..]
    } else {
        // SAFETY: `out` is not NULL (checked above) and, by the function's contract,
        // valid for writing `outcap` bytes for the call and aliased by nothing else
        // (not by `inp`), so this exclusive slice is its only access.
        unsafe { core::slice::from_raw_parts_mut(u.out, outcap) }
    };
    (inp, out, usize::try_from(u.outlen).unwrap_or(usize::MAX))
}

/// The driver part of a staged verb; `None` for NULL (a kernel verb).
///
/// # Safety
///
/// `u` must be NULL or the shim's staging area (as [`staged`] requires), valid and
/// not otherwise accessed for `'a` except through [`set_resp_len`].
pub(super) unsafe fn user_data<'a>(u: *mut Udata) -> Option<UserData<'a>> {
    if u.is_null() {
        return None;
    }
    // SAFETY: `u` is not NULL (checked above); by the function's contract it is the
    // shim's staging area, valid for the call, whose buffers meet `staged`'s contract.
    let (req, out, outlen) = unsafe { staged(&*u) };
    Some(UserData { req, outlen, out })
}

/// Stores the response length in the staging area `u` (if any).
///
/// # Safety
///
/// As [`user_data`].
pub(super) unsafe fn set_resp_len(u: *mut Udata, n: usize) {
    if !u.is_null() {
        // SAFETY: `u` is not NULL (checked above) and by the function's contract the
        // shim's staging area, valid for writing for the call; `resp_len` is not part
        // of any slice `user_data` made, so no reference to it is live.
        unsafe { (*u).resp_len = n as u64 };
    }
}
