// SPDX-License-Identifier: GPL-2.0

//! The InfiniBand provider: `ib_device_ops` registered with the RDMA core (through
//! the C shim in `ffi/`), user contexts, PDs, CQs, QPs, MRs and mmap.
