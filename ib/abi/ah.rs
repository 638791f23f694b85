// SPDX-License-Identifier: GPL-2.0

//! The small responses: alloc_pd (`pdn`) and create_ah (RoCE destination MAC), as
//! upstream `mlx5_ib_alloc_pd` (`main.c`) and `mlx5_ib_create_ah` (`ah.c`) fill them.

use super::error::{Reason, UabiError};
use super::layout::{AllocPdResp, CreateAhResp};
use core::mem::offset_of;

/// alloc_pd's response (truncated to the user's length by [`super::udata::response`]).
pub fn alloc_pd_response(pdn: u32) -> AllocPdResp {
    AllocPdResp { pdn }
}

/// create_ah's response for a user buffer of `outlen` bytes: only RoCE address
/// handles have one (`None` on InfiniBand); it needs room up to `dmac` (`EINVAL`
/// otherwise), and `response_length` says that much.
pub fn create_ah_response(
    roce_dmac: Option<[u8; 6]>,
    outlen: usize,
) -> Result<Option<CreateAhResp>, UabiError> {
    let Some(dmac) = roce_dmac else {
        return Ok(None);
    };
    let min = offset_of!(CreateAhResp, dmac) + 6;
    if outlen < min {
        return Err(UabiError::inval(Reason::BadLength { len: outlen, min }));
    }
    Ok(Some(CreateAhResp {
        response_length: u32::try_from(min).unwrap_or(u32::MAX),
        dmac,
        reserved: [0; 6],
    }))
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_abi_ah))]
mod tests {
    use super::*;
    use crate::errno::Errno;

    #[test]
    fn ah_response_on_roce_only() {
        assert_eq!(create_ah_response(None, 0), Ok(None));
        let mac = [2, 0, 0, 0, 0, 1];
        let r = create_ah_response(Some(mac), 16).unwrap().unwrap();
        assert_eq!((r.response_length, r.dmac), (10, mac));
        assert!(create_ah_response(Some(mac), 10).is_ok());
        let e = create_ah_response(Some(mac), 9).unwrap_err();
        assert_eq!(e.errno, Errno::EINVAL);
        assert_eq!(alloc_pd_response(5).pdn, 5);
    }
}
