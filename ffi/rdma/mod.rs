// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's shim (only with `CONFIG_MLX5_RS_INFINIBAND`): the IB device and
//! its verbs families, one C file and one Rust file a family (`ib_<family>.c`,
//! wrapped by `ib_<family>.rs`; the device family is `ib.c` / [`ib`], which also
//! registers the device and applies every family's ops table), the one view of a
//! verb's driver data ([`udata`]), the `#[repr(C)]` structures shared with the C
//! (`*_abi.rs`, also compiled into the host crate) and pinned user memory
//! (`ib_umem.c`, [`umem`]).

pub(crate) mod ib;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod ib_abi;
pub(crate) mod ib_ah;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod ib_ah_abi;
pub(crate) mod ib_cq;
pub(crate) mod ib_dp_abi;
pub(crate) mod ib_mr;
pub(crate) mod ib_mw;
pub(crate) mod ib_pd;
pub(crate) mod ib_port;
pub(crate) mod ib_qp;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod ib_qp_abi;
pub(crate) mod ib_srq;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod ib_srq_abi;
pub(crate) mod ib_uctx;
pub(crate) mod udata;
pub(crate) mod umem;
