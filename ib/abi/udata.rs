// SPDX-License-Identifier: GPL-2.0

//! Reading a request of the length user space gave, writing a response of the
//! length it asked for: the rules of the RDMA core's `ib_copy_validate_udata_in` and
//! `ib_respond_udata` (`drivers/infiniband/core/ib_core_uverbs.c`).
//!
//! A request shorter than the structure is zero-padded (older libraries send less);
//! one shorter than the verb's minimum is `EINVAL`; one longer than the structure is
//! accepted only when every extra byte is zero (`EOPNOTSUPP` otherwise, the
//! `copy_struct_from_user` rule: user space asked for something we do not know). A
//! response is truncated to the length user space gave; the shell zero-fills the
//! rest of a longer buffer.

use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes};

use super::error::{Reason, UabiError};
use crate::errno::Errno;

/// Offset of the first non-zero byte of `buf` at or after `from`, if any.
pub fn first_nonzero_from(buf: &[u8], from: usize) -> Option<usize> {
    let tail = buf.get(from..)?;
    tail.iter().position(|&b| b != 0).map(|p| from + p)
}

/// Copies `inbuf` into a zeroed `T`: at least `min` bytes, bytes past `T` zero.
///
/// Errors: shorter than `min` → `EINVAL`; a non-zero byte past `T` →
/// `trailing_errno` (`EOPNOTSUPP` for `ib_copy_validate_udata_in`, `EINVAL` where
/// upstream checks with `ib_is_udata_cleared`).
pub fn copy_in<T: FromBytes + FromZeros + IntoBytes>(
    inbuf: &[u8],
    min: usize,
    trailing_errno: Errno,
) -> Result<T, UabiError> {
    if inbuf.len() < min {
        return Err(UabiError::inval(Reason::BadLength {
            len: inbuf.len(),
            min,
        }));
    }
    let size = core::mem::size_of::<T>();
    if let Some(offset) = first_nonzero_from(inbuf, size) {
        return Err(UabiError::new(
            Reason::TrailingNotZero { offset },
            trailing_errno,
        ));
    }
    let mut req = T::new_zeroed();
    let n = inbuf.len().min(size);
    // `n` is at most both lengths, so neither index can fail; `get` keeps it
    // panic-free anyway.
    if let (Some(dst), Some(src)) = (req.as_mut_bytes().get_mut(..n), inbuf.get(..n)) {
        dst.copy_from_slice(src);
    }
    Ok(req)
}

/// [`copy_in`] with the trailing-byte errno of `ib_copy_validate_udata_in`
/// (`EOPNOTSUPP`); `min` is `offsetofend` of the structure's first version.
pub fn copy_validate_in<T: FromBytes + FromZeros + IntoBytes>(
    inbuf: &[u8],
    min: usize,
) -> Result<T, UabiError> {
    copy_in(inbuf, min, Errno::EOPNOTSUPP)
}

/// `ib_is_udata_in_empty`: a verb without a driver request accepts only zeros
/// (`EOPNOTSUPP` otherwise).
pub fn check_in_empty(inbuf: &[u8]) -> Result<(), UabiError> {
    match first_nonzero_from(inbuf, 0) {
        Some(offset) => Err(UabiError::notsupp(Reason::TrailingNotZero { offset })),
        None => Ok(()),
    }
}

/// The bytes of `resp` to copy to a user buffer of `outlen` bytes (the first
/// `min(outlen, size)`); the shell zero-fills `outlen` beyond them.
pub fn response<T: IntoBytes + Immutable>(resp: &T, outlen: usize) -> &[u8] {
    let b = resp.as_bytes();
    b.get(..outlen.min(b.len())).unwrap_or(b)
}

/// Writes `resp` into `out` (the user's whole buffer, staged in the kernel) as
/// `ib_respond_udata` does: the first `min(out.len(), size)` bytes of `resp`, zeros
/// after them.
pub fn write_response<T: IntoBytes + Immutable>(resp: &T, out: &mut [u8]) {
    let src = response(resp, out.len());
    let (head, tail) = out.split_at_mut(src.len());
    head.copy_from_slice(src);
    tail.fill(0);
}

/// Copies `bytes` to the start of `out` (a verb's staged response buffer); their
/// length, which the verb responds with (0 if `out` is too short, which the shim's
/// buffer never is).
pub fn put(out: &mut [u8], bytes: &[u8]) -> usize {
    match out.get_mut(..bytes.len()) {
        Some(d) => {
            d.copy_from_slice(bytes);
            bytes.len()
        }
        None => 0,
    }
}

/// `response_length` of responses that carry one: `min(outlen, size)`, as a `u32`
/// (a structure is far smaller than `u32::MAX`).
pub fn response_length<T>(outlen: usize) -> u32 {
    let n = outlen.min(core::mem::size_of::<T>());
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_abi_udata))]
mod tests {
    use super::*;
    use crate::ib::abi::layout::CreateCqResp;

    #[test]
    fn short_padded_long_checked() {
        // Request of 8 bytes (a CreateCqResp) from 4..=8 given bytes, min 4.
        let r: CreateCqResp = copy_validate_in(&7u32.to_ne_bytes(), 4).unwrap();
        assert_eq!((r.cqn, r.reserved), (7, 0));
        let e = copy_validate_in::<CreateCqResp>(&[1, 0, 0], 4).unwrap_err();
        assert_eq!(e.errno, Errno::EINVAL);
        let mut b = [0u8; 10];
        b[..4].copy_from_slice(&2u32.to_ne_bytes());
        b[4..8].copy_from_slice(&3u32.to_ne_bytes());
        let ok: CreateCqResp = copy_validate_in(&b, 4).unwrap();
        assert_eq!((ok.cqn, ok.reserved), (2, 3));
        let e = copy_validate_in::<CreateCqResp>(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 7], 4).unwrap_err();
        assert_eq!(e.reason, Reason::TrailingNotZero { offset: 9 });
        assert_eq!(e.errno, Errno::EOPNOTSUPP);
        let e = copy_in::<CreateCqResp>(&[0; 9].map(|_| 1), 4, Errno::EINVAL).unwrap_err();
        assert_eq!(e.errno, Errno::EINVAL);
    }

    #[test]
    fn response_truncates() {
        let r = CreateCqResp {
            cqn: 0x0403_0201,
            reserved: 0,
        };
        assert_eq!(response(&r, 2), &0x0403_0201u32.to_ne_bytes()[..2]);
        assert_eq!(response(&r, 100).len(), 8);
        assert_eq!(response(&r, 0).len(), 0);
        assert_eq!(response_length::<CreateCqResp>(3), 3);
        let mut out = [0xaau8; 12];
        write_response(&r, &mut out);
        assert_eq!(&out[..8], r.as_bytes());
        assert_eq!(&out[8..], &[0; 4]);
        let mut short = [0xaau8; 3];
        write_response(&r, &mut short);
        assert_eq!(&short, &r.as_bytes()[..3]);
        assert_eq!(response_length::<CreateCqResp>(300), 8);
    }

    #[test]
    fn put_copies_whole_or_nothing() {
        let mut out = [0xaau8; 6];
        assert_eq!(put(&mut out, &[1, 2, 3]), 3);
        assert_eq!(out, [1, 2, 3, 0xaa, 0xaa, 0xaa]);
        let mut short = [0xaau8; 2];
        assert_eq!(put(&mut short, &[1, 2, 3]), 0);
        assert_eq!(short, [0xaa, 0xaa]);
        assert_eq!(put(&mut out, &[]), 0);
    }
}
