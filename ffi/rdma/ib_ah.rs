// SPDX-License-Identifier: GPL-2.0

//! The address-handle verbs through the C shim `ffi/rdma/ib_ah.c`: `create_ah`,
//! `create_user_ah` and `query_ah` ask the provider's [`IbAhOps`] (through
//! [`IbOps::ah_ops`]) with the plain [`AhAttr`]; the address vector is built into the
//! handle's own structure (`struct mlx5rs_ib_ah`), and destroying a handle needs no
//! Rust.

use kernel::{
    ffi::{c_int, c_void},
    prelude::*,
};
use zerocopy::{FromBytes, IntoBytes};

use super::ib::{errno, IbOps};
use super::ib_abi::Udata;
pub(crate) use super::ib_ah_abi::AhAttr;
use super::udata::{set_resp_len, user_data, UserData};
use crate::ifc::av::{Av, AV_BYTES};

/// The address-handle verbs. [`IbAhOps::create_ah`] and [`IbAhOps::query_ah`] may be
/// called in atomic context and neither sleep nor allocate.
pub(crate) trait IbAhOps: Send + Sync {
    /// `create_ah` / `create_user_ah`: the address vector and, for a user handle
    /// (`user`: the response buffer), the response length.
    fn create_ah(&self, attr: &AhAttr, user: Option<UserData<'_>>) -> Result<(Av, usize)>;
    /// `query_ah` of an address vector of a handle of type `ah_type`.
    fn query_ah(&self, av: &Av, ah_type: u32) -> AhAttr;
}

/// The address-handle verbs behind the shim's `rust` pointer.
///
/// # Safety
///
/// As [`super::ib::ops`].
unsafe fn ah_ops<'a>(rust: *const c_void) -> &'a dyn IbAhOps {
    // SAFETY: our contract is `ops`' own (a registered device's `rust` pointer, the
    // device registered for `'a`).
    let o: &'a dyn IbOps = unsafe { super::ib::ops(rust) };
    o.ah_ops()
}

/// `create_ah` / `create_user_ah` trampoline target: the address vector into `av`;
/// `resp` is NULL for a kernel handle. Neither sleeps nor allocates.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_create_ah(
    rust: *const c_void,
    attr: *const AhAttr,
    av: *mut u8,
    resp: *mut Udata,
) -> c_int {
    // SAFETY: the shim passes a valid request of its stack frame.
    let attr = unsafe { &*attr };
    // SAFETY: the shim passes NULL or its response buffer (no request bytes, valid
    // and exclusive for the call).
    let user = unsafe { user_data(resp) };
    // SAFETY: the trampoline contract: `rust` is a registered device's.
    match unsafe { ah_ops(rust) }.create_ah(attr, user) {
        Ok((v, n)) => {
            // SAFETY: the shim passes its handle's `av` array of `AV_BYTES` bytes.
            let dst = unsafe { core::slice::from_raw_parts_mut(av, AV_BYTES) };
            dst.copy_from_slice(v.as_bytes());
            // SAFETY: `resp` is NULL or the shim's staging area (trampoline contract).
            unsafe { set_resp_len(resp, n) };
            0
        }
        Err(e) => errno(e),
    }
}

/// `query_ah` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_query_ah(
    rust: *const c_void,
    av: *const u8,
    ah_type: u32,
    out: *mut AhAttr,
) {
    // SAFETY: the shim passes its handle's `av` array of `AV_BYTES` bytes.
    let src = unsafe { core::slice::from_raw_parts(av, AV_BYTES) };
    let v = Av::read_from_bytes(src).unwrap_or_default();
    // SAFETY: the trampoline contract: `rust` is a registered device's.
    let a = unsafe { ah_ops(rust) }.query_ah(&v, ah_type);
    // SAFETY: the shim passes a valid, writable answer of its stack frame.
    unsafe { out.write(a) };
}
