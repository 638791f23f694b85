// SPDX-License-Identifier: GPL-2.0

//! The mlx5 uverbs ABI: what user space (rdma-core's libmlx5, 56.1) sends with the
//! driver-specific part of a verb (`udata`) and what it reads back.
//!
//! The structures are those of `include/uapi/rdma/mlx5-abi.h` (ABI version
//! `MLX5_IB_UVERBS_ABI_VERSION` = 1) and the ioctl ids of
//! `include/uapi/rdma/mlx5_user_ioctl_cmds.h` / `mlx5_user_ioctl_verbs.h` of the
//! target kernel (7.3). libmlx5 compiles the same header (its `kernel-headers/`
//! copy), so a byte off here is a broken `ibv_open_device`. Fields are `__u32` /
//! `__u64` in the CPU's own byte order (not big-endian like the PRM), so the Rust
//! structures use plain `u16`/`u32`/`u64` with C layout (`#[repr(C)]`, `zerocopy`);
//! `__aligned_u64` is an 8-byte aligned `u64`, which `u64` already is on every
//! 64-bit target. `host/tests/uabi_vs_header.rs` parses the kernel's headers and checks
//! every structure's size, every field's offset and width, and every constant;
//! `host/tests/uabi.rs` tests the logic as libmlx5 drives it.
//!
//! Besides the layouts ([`layout`], [`consts`]) this module holds the pure logic the
//! verbs run on those bytes, each step as upstream `mlx5_ib` does it and returning
//! the errno upstream returns ([`UabiError`]):
//! - [`udata`]: copy a request of the length user space gave (too short, non-zero
//!   trailing bytes) and truncate a response to the length it asked for;
//! - [`ucontext`]: alloc_ucontext request (v0 / v2), its bfreg plan, the response;
//! - [`bfreg`]: blue-flame register (bfreg) and UAR index arithmetic of a context;
//! - [`mmap`]: the mmap offset encoding (command, index) and UAR objects;
//! - [`cq`], [`qp`], [`srq`]: create_cq / resize_cq, create_qp, create_srq requests;
//! - [`device`]: the query_device response; [`ah`]: alloc_pd and create_ah responses;
//! - [`caps`]: the device side of each check, from the general HCA caps.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate;
//! nothing here panics on any input.

pub mod ah;
pub mod bfreg;
pub mod caps;
pub mod consts;
pub mod cq;
pub mod device;
pub mod error;
pub mod layout;
pub mod mmap;
pub mod qp;
// The checks create_cq, create_qp and create_srq share, and the create_srq request.
pub mod queue_checks;
pub mod srq;
pub mod ucontext;
pub mod udata;

pub use error::{Reason, UabiError};
