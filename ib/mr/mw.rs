// SPDX-License-Identifier: GPL-2.0

//! Memory windows (kernel shell) over the pure [`super::commands`]: alloc_mw (a free
//! KLM mkey with `umr_en`, upstream `mlx5_ib_alloc_mw`) and dealloc_mw
//! (DESTROY_MKEY). Only with cap `imaicl`, as upstream registers its window verbs
//! only then; without it alloc_mw is `EOPNOTSUPP`, what the RDMA core answers when
//! a provider has no `alloc_mw`.
//!
//! A window has no memory of its own: user space binds it to a range of one of its
//! MRs with a UMR WQE (libmlx5 `mlx5_bind_mw` / `ibv_wr_bind_mw`), invalidates it
//! with another (local invalidate) or a peer's send with invalidate (type 2,
//! `en_rinval`). The device does all of that; the driver only creates and destroys
//! the mkey, so nothing is pinned and a failed DESTROY_MKEY leaves nothing behind
//! but the key.

use kernel::prelude::*;

use super::{
    commands::{
        alloc_mw_response, mkey_of, parse_alloc_mw, CreateFreeMkey, FreeXlt, MkeyAccess, MW_TYPE_1,
        MW_TYPE_2,
    },
    Mkey, MrVerbs,
};
use crate::ffi::rdma::{ib_mw::IbMwOps, udata::UserData};

/// One memory window: its mkey, destroyed when dropped.
pub(crate) struct Mw {
    mkey: Mkey,
    /// The rkey (`mkey_index << 8 | mkey_7_0`).
    key: u32,
}

impl Mw {
    /// The window's rkey as created (a bind gives it a new key byte).
    pub(crate) fn rkey(&self) -> u32 {
        self.key
    }
}

impl Drop for Mw {
    fn drop(&mut self) {
        // Failures are logged by the command layer.
        let _ = self.mkey.destroy();
    }
}

impl IbMwOps for MrVerbs {
    /// alloc_mw (upstream `mlx5_ib_alloc_mw`): the driver request's table size, a
    /// free KLM mkey with `umr_en` in the PD, `en_rinval` for type 2; the response
    /// when user space has room for it.
    ///
    /// # Errors
    ///
    /// `EOPNOTSUPP` without cap `imaicl`; `EINVAL` for a type the core should have
    /// refused; the request's errno ([`parse_alloc_mw`]); CREATE_MKEY's errno.
    fn alloc_mw(
        &self,
        pdn: u32,
        mw_type: u32,
        u: Option<UserData<'_>>,
    ) -> Result<(KBox<Mw>, usize)> {
        if !self.mw {
            return Err(EOPNOTSUPP);
        }
        if mw_type != MW_TYPE_1 && mw_type != MW_TYPE_2 {
            return Err(EINVAL);
        }
        let req: &[u8] = u.as_ref().map_or(&[], |u| u.req);
        let ndescs = parse_alloc_mw(req).map_err(|e| Error::from(e.errno))?;
        let key = self.next_variant();
        let index = self.hw.run(CreateFreeMkey {
            pdn,
            access: MkeyAccess::default(),
            key,
            ndescs,
            xlt: FreeXlt::Klm {
                en_rinval: mw_type == MW_TYPE_2,
            },
        })?;
        let mw = KBox::new(
            Mw {
                mkey: Mkey {
                    hw: self.hw.clone(),
                    index: Some(index),
                },
                key: mkey_of(index, key),
            },
            GFP_KERNEL,
        )?;
        let len = u.map_or(0, |u| alloc_mw_response(u.outlen, u.out));
        Ok((mw, len))
    }

    /// dealloc_mw: DESTROY_MKEY.
    ///
    /// # Errors
    ///
    /// DESTROY_MKEY's errno (0 when the device is dead, as upstream).
    fn dealloc_mw(&self, mw: &mut Mw) -> Result {
        match mw.mkey.destroy() {
            Err(e) if !e.gone_with_dead_device() => Err(e.errno().into()),
            _ => Ok(()),
        }
    }
}
