// SPDX-License-Identifier: GPL-2.0

//! The protection-domain verbs through the C shim `ffi/rdma/ib_pd.c`: `alloc_pd` and
//! `dealloc_pd` ask the provider's [`IbPdOps`] (through [`IbOps::pd_ops`]); the shim
//! keeps the PD number in `struct mlx5rs_ib_pd`, where the other families read it.

use kernel::{
    ffi::{c_int, c_void},
    prelude::*,
};

use super::ib::{errno, IbOps};
use super::ib_abi::Udata;
use super::udata::{set_resp_len, user_data, UserData};

/// The PD verbs of the provider.
pub(crate) trait IbPdOps: Send + Sync {
    /// `alloc_pd`: the new PD's number.
    fn alloc_pd(&self) -> Result<u32>;
    /// The response of a user `alloc_pd` of PD `pdn` into `u.out` (the request is not
    /// read, as upstream); its length.
    fn alloc_pd_response(&self, pdn: u32, u: UserData<'_>) -> usize;
    /// `dealloc_pd` of PD `pdn`.
    fn dealloc_pd(&self, pdn: u32) -> Result;
}

/// The PD verbs behind the shim's `rust` pointer.
///
/// # Safety
///
/// As [`super::ib::ops`].
unsafe fn pd_ops<'a>(rust: *const c_void) -> &'a dyn IbPdOps {
    // SAFETY: our contract is `ops`' own (a registered device's `rust` pointer, the
    // device registered for `'a`).
    let o: &'a dyn IbOps = unsafe { super::ib::ops(rust) };
    o.pd_ops()
}

/// `alloc_pd` trampoline target; `resp` is NULL for a kernel PD.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_alloc_pd(
    rust: *const c_void,
    pdn: *mut u32,
    resp: *mut Udata,
) -> c_int {
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    let o = unsafe { pd_ops(rust) };
    let n = match o.alloc_pd() {
        Ok(n) => n,
        Err(e) => return errno(e),
    };
    // SAFETY: the shim passes the address of its PD's `pdn` field.
    unsafe { pdn.write(n) };
    // SAFETY: the shim passes NULL or its response buffer (no request bytes, valid
    // and exclusive for the call).
    if let Some(u) = unsafe { user_data(resp) } {
        let len = o.alloc_pd_response(n, u);
        // SAFETY: `resp` is NULL or the shim's staging area (trampoline contract).
        unsafe { set_resp_len(resp, len) };
    }
    0
}

/// `dealloc_pd` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_dealloc_pd(rust: *const c_void, pdn: u32) -> c_int {
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    match unsafe { pd_ops(rust) }.dealloc_pd(pdn) {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}
