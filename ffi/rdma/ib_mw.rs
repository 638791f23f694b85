// SPDX-License-Identifier: GPL-2.0

//! The memory-window verbs through the C shim `ffi/rdma/ib_mw.c`: the trampoline
//! targets of alloc_mw and dealloc_mw, and the [`IbMwOps`] trait the provider
//! implements for them ([`super::ib::IbOps::mw_ops`]).
//!
//! A window's Rust state is a [`Mw`] in a box whose pointer is the `rust` field of
//! `struct mlx5rs_ib_mw`; its rkey goes back into the core's `ib_mw.rkey`. dealloc_mw
//! drops the box only when the device destroyed the mkey (upstream keeps the window
//! when DESTROY_MKEY fails).

use kernel::{
    ffi::{c_int, c_void},
    prelude::*,
};

use super::ib::{errno, IbOps};
use super::ib_abi::Udata;
use super::udata::{set_resp_len, user_data, UserData};
pub(crate) use crate::ib::mr::mw::Mw;

/// What the core asks of the provider for memory windows (process context).
pub(crate) trait IbMwOps: Send + Sync {
    /// alloc_mw of `mw_type` (`enum ib_mw_type`) on PD `pdn`; `u` the driver data of a
    /// user verb: the window and the length of the response written into `u.out`.
    fn alloc_mw(
        &self,
        pdn: u32,
        mw_type: u32,
        u: Option<UserData<'_>>,
    ) -> Result<(KBox<Mw>, usize)>;
    /// dealloc_mw: destroys the mkey; the caller frees `mw` on success.
    fn dealloc_mw(&self, mw: &mut Mw) -> Result;
}

/// The window verbs behind the shim's `rust` pointer.
///
/// # Safety
///
/// As [`super::ib::ops`].
unsafe fn mw_ops<'a>(rust: *const c_void) -> &'a dyn IbMwOps {
    // SAFETY: our contract is `ops`' own (a registered device's `rust` pointer, the
    // device registered for `'a`).
    let o: &'a dyn IbOps = unsafe { super::ib::ops(rust) };
    o.mw_ops()
}

/// `alloc_mw` trampoline target; `udata` is NULL for a kernel window.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_alloc_mw(
    rust: *const c_void,
    pdn: u32,
    mw_type: u32,
    udata: *mut Udata,
    rkey: *mut u32,
    mw: *mut *mut c_void,
) -> c_int {
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    let o = unsafe { mw_ops(rust) };
    // SAFETY: the shim passes NULL or its staging area, valid and exclusive for the
    // call.
    let u = unsafe { user_data(udata) };
    match o.alloc_mw(pdn, mw_type, u) {
        Ok((m, len)) => {
            // SAFETY: `udata` is NULL or the shim's staging area (trampoline
            // contract); the slices `user_data` made of it are gone.
            unsafe { set_resp_len(udata, len) };
            // SAFETY: the shim passes the address of its window's `ibmw.rkey` and
            // `rust` fields, valid for writing; the box leaves our ownership here and
            // comes back once, to `mlx5rs_ib_rs_dealloc_mw`.
            unsafe {
                rkey.write(m.rkey());
                mw.write(KBox::into_raw(m).cast::<c_void>());
            }
            0
        }
        Err(e) => errno(e),
    }
}

/// `dealloc_mw` trampoline target: on success the window's state is freed.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_dealloc_mw(rust: *const c_void, mw: *mut c_void) -> c_int {
    if mw.is_null() {
        return 0;
    }
    // SAFETY: `mw` came from `KBox::into_raw` in `mlx5rs_ib_rs_alloc_mw`; the core
    // deallocates a window once, with no other verb on it running.
    let mut m = unsafe { KBox::from_raw(mw.cast::<Mw>()) };
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    let o = unsafe { mw_ops(rust) };
    match o.dealloc_mw(&mut m) {
        Ok(()) => {
            drop(m);
            0
        }
        Err(e) => {
            // The window stays with the core and this state with the shim.
            let _ = KBox::into_raw(m);
            errno(e)
        }
    }
}
