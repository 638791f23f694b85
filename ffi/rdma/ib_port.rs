// SPDX-License-Identifier: GPL-2.0

//! The port verbs through the C shim `ffi/rdma/ib_port.c`: `query_port`,
//! `query_pkey` and `query_gid` ask the provider's [`IbPortOps`] (through
//! [`IbOps::port_ops`]); the answer ([`PortAttr`], plain values) is copied into the
//! core's structures by the C side.

use kernel::{
    ffi::{c_int, c_void},
    prelude::*,
};

use super::ib::{errno, IbOps};
pub(crate) use super::ib_abi::PortAttr;

/// The port verbs of the provider. Port numbers and indices are as the core passes
/// them: not checked yet.
pub(crate) trait IbPortOps: Send + Sync {
    /// `query_port` of port `port`.
    fn query_port(&self, port: u32) -> Result<PortAttr>;
    /// `query_pkey`: entry `index` of the P_Key table of `port`.
    fn query_pkey(&self, port: u32, index: u16) -> Result<u16>;
    /// `query_gid`: entry `index` of the GID table of `port`.
    fn query_gid(&self, port: u32, index: u32) -> Result<[u8; 16]>;
    /// `process_mad` of `mad` on `port` (`flags` the MAD layer's `IB_MAD_IGNORE_*`,
    /// `slid` the source LID, `has_wc` whether a work completion brought it): the
    /// `IB_MAD_RESULT_*` bits, `out` the response when they say REPLY.
    fn process_mad(
        &self,
        port: u32,
        flags: u32,
        has_wc: bool,
        slid: u16,
        mad: &[u8; 256],
        out: &mut [u8; 256],
    ) -> u32;
}

/// The port verbs behind the shim's `rust` pointer.
///
/// # Safety
///
/// As [`super::ib::ops`].
unsafe fn port_ops<'a>(rust: *const c_void) -> &'a dyn IbPortOps {
    // SAFETY: our contract is `ops`' own (a registered device's `rust` pointer, the
    // device registered for `'a`).
    let o: &'a dyn IbOps = unsafe { super::ib::ops(rust) };
    o.port_ops()
}

/// `query_port` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_query_port(
    rust: *const c_void,
    port: u32,
    out: *mut PortAttr,
) -> c_int {
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    match unsafe { port_ops(rust) }.query_port(port) {
        Ok(a) => {
            // SAFETY: the shim passes a valid, writable `struct mlx5rs_ib_port_attr`.
            unsafe { out.write(a) };
            0
        }
        Err(e) => errno(e),
    }
}

/// `query_pkey` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_query_pkey(
    rust: *const c_void,
    port: u32,
    index: u16,
    out: *mut u16,
) -> c_int {
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    match unsafe { port_ops(rust) }.query_pkey(port, index) {
        Ok(p) => {
            // SAFETY: the shim passes the core's valid, writable `u16 *pkey`.
            unsafe { out.write(p) };
            0
        }
        Err(e) => errno(e),
    }
}

/// `query_gid` trampoline target (`index` checked non-negative by the shim).
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_query_gid(
    rust: *const c_void,
    port: u32,
    index: c_int,
    out: *mut [u8; 16],
) -> c_int {
    let Ok(index) = u32::try_from(index) else {
        return errno(EINVAL);
    };
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    match unsafe { port_ops(rust) }.query_gid(port, index) {
        Ok(g) => {
            // SAFETY: the shim passes a valid, writable 16-byte buffer of its stack.
            unsafe { out.write(g) };
            0
        }
        Err(e) => errno(e),
    }
}

/// `process_mad` trampoline target.
///
/// # Safety
///
/// The shim's trampoline contract (*Trampolines* in [`super::ib`]); `inp` and `out` are
/// the core's 256-byte MADs (readable, and writable and not aliased, for the call).
#[no_mangle]
unsafe extern "C" fn mlx5rs_ib_rs_process_mad(
    rust: *const c_void,
    port: u32,
    flags: c_int,
    has_wc: u8,
    slid: u16,
    inp: *const c_void,
    out: *mut c_void,
) -> c_int {
    if inp.is_null() || out.is_null() {
        return 0;
    }
    // SAFETY: by the function's contract, 256 readable bytes.
    let mad = unsafe { &*inp.cast::<[u8; 256]>() };
    // SAFETY: by the function's contract, 256 writable bytes no one else accesses.
    let resp = unsafe { &mut *out.cast::<[u8; 256]>() };
    // SAFETY: the shim passes the `rust` pointer of a registered device.
    let r = unsafe { port_ops(rust) }.process_mad(
        port,
        u32::try_from(flags).unwrap_or(0),
        has_wc != 0,
        slid,
        mad,
        resp,
    );
    c_int::try_from(r).unwrap_or(0)
}
