// SPDX-License-Identifier: GPL-2.0

//! The blue-flame registers (bfregs) of a user context that its QPs ring, as
//! upstream's `mlx5_bfreg_info` (kernel shell over [`crate::ib::abi::bfreg`]): the
//! context's bfreg plan, the UAR index of each of its static system pages, and one
//! use count per bfreg under a mutex (`alloc_bfreg` / `mlx5_ib_free_bfreg`).
//! A QP holds its context's table (an `Arc`) for as long as it holds a bfreg.

use kernel::{
    new_mutex,
    prelude::*,
    sync::{Arc, Mutex},
};

use crate::ib::abi::{
    bfreg::{user_bfreg_index, BfregInfo},
    consts::IB_INVALID_BFREG,
    qp::QpUar,
};

/// The bfregs of one user context.
#[pin_data]
pub(crate) struct BfregTable {
    info: BfregInfo,
    /// UAR index of each static system page.
    sys_pages: KVec<u32>,
    /// Lock order: a leaf (taken by create_qp and a QP's drop, nothing under it).
    #[pin]
    counts: Mutex<KVec<u32>>,
}

/// A bfreg a QP took from its context's table; given back on drop.
pub(crate) struct BfregRef {
    table: Arc<BfregTable>,
    n: u32,
}

impl Drop for BfregRef {
    fn drop(&mut self) {
        let mut c = self.table.counts.lock();
        self.table.info.free(&mut c, self.n);
    }
}

/// Where a new QP rings: the UAR index for `qpc.uar_page`, the bfreg it took (if
/// any) and the `bfreg_index` of the create_qp response.
pub(crate) struct QpDoorbell {
    /// `qpc.uar_page`.
    pub(crate) uar_index: u32,
    /// The static bfreg taken.
    pub(crate) bfreg: Option<BfregRef>,
    /// `bfreg_index` of the response (`MLX5_IB_INVALID_BFREG` without a bfreg).
    pub(crate) resp_index: u32,
}

impl BfregTable {
    /// The table of a context with plan `info` and static pages `sys_pages`.
    pub(crate) fn new(info: BfregInfo, sys_pages: &[u32]) -> Result<Arc<Self>> {
        let mut pages = KVec::with_capacity(sys_pages.len(), GFP_KERNEL)?;
        pages.extend_from_slice(sys_pages, GFP_KERNEL)?;
        let mut counts = KVec::with_capacity(info.max_bfregs() as usize, GFP_KERNEL)?;
        for _ in 0..info.max_bfregs() {
            counts.push(0u32, GFP_KERNEL)?;
        }
        Arc::pin_init(
            pin_init!(Self {
                info,
                sys_pages: pages,
                counts <- new_mutex!(counts),
            }),
            GFP_KERNEL,
        )
    }

    /// The doorbell of a new QP (`_create_user_qp`'s UAR choice): the UAR page the
    /// request names, a dynamic bfreg, or a static bfreg picked and counted here.
    pub(crate) fn qp_doorbell(self: &Arc<Self>, uar: QpUar) -> Result<QpDoorbell> {
        match uar {
            QpUar::UarPage(i) => Ok(QpDoorbell {
                uar_index: i,
                bfreg: None,
                resp_index: IB_INVALID_BFREG,
            }),
            QpUar::DynamicBfreg(n) => Ok(QpDoorbell {
                uar_index: self
                    .info
                    .uar_index(n, &self.sys_pages, true)
                    .map_err(|e| Error::from(e.errno))?,
                bfreg: None,
                resp_index: IB_INVALID_BFREG,
            }),
            QpUar::AllocStatic => {
                let n = {
                    let mut c = self.counts.lock();
                    self.info.alloc(&mut c).map_err(|e| Error::from(e.errno))?
                };
                let r = BfregRef {
                    table: self.clone(),
                    n,
                };
                let uar_index = self
                    .info
                    .uar_index(n, &self.sys_pages, false)
                    .map_err(|_| EINVAL)?;
                Ok(QpDoorbell {
                    uar_index,
                    bfreg: Some(r),
                    resp_index: user_bfreg_index(n),
                })
            }
        }
    }
}
