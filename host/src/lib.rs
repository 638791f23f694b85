//! Host build of the driver's pure protocol logic.
//!
//! The files under `cmd/`, `pagealloc/`, `eq/` and `ib/abi/` at the repository root
//! are compiled both into the kernel module (declared by the kernel shell's
//! `cmd/mod.rs`, `pagealloc/mod.rs`, ...) and into this crate, with the same
//! module paths (`crate::cmd::mailbox`, ...), so that `cargo test -p
//! mlx5-rs-pure` runs their unit tests on the host. The crate is `no_std`
//! outside of tests so that a file using anything beyond `core` fails to
//! build here as it would in the kernel.
//!
//! A `#[path]` on an inline module in `lib.rs` names the directory its
//! nested file modules are read from (relative to `host/src/`). A `#[path]`
//! on a file module *inside* an inline module would instead resolve through
//! `host/src/cmd/`, which does not exist, and fail.

#![cfg_attr(not(test), no_std)]

/// Helpers of the unit tests shared with the module's KUnit suites (`testing.rs`).
#[cfg(test)]
#[path = "../../testing.rs"]
pub(crate) mod testing;

/// The driver's error numbers (`errno/code.rs`; `errno/mod.rs` is the kernel shell).
#[path = "../../errno"]
pub mod errno {
    mod code;
    pub use code::Errno;
}

/// PRM layouts, shared with the kernel module and the emulator.
#[path = "../../ifc/mod.rs"]
pub mod ifc;

/// Command interface logic (`cmd/`).
#[path = "../../cmd"]
pub mod cmd {
    pub mod command;
    pub mod commands;
    pub mod entry;
    pub mod geometry;
    pub mod latency;
    pub mod mailbox;
    pub mod signature;
    pub mod slots;
    pub mod stats;
    pub mod status;
    pub mod timeout;
    pub mod token;
}

/// Firmware page ledger and reclaim logic (`pagealloc/`).
#[path = "../../pagealloc"]
pub mod pagealloc {
    pub mod batch;
    pub mod block_size;
    pub mod ledger;
    pub mod reclaim;
    pub mod request;
}

/// Event queue logic (`eq/`).
#[path = "../../eq"]
pub mod eq {
    pub mod commands;
    pub mod consumer;
    pub mod event;
    pub mod uar;
}

/// Health poll logic (`health/`).
#[path = "../../health"]
pub mod health {
    pub mod buffer;
    pub mod monitor;
    pub mod recover;
    pub mod report;
    pub mod sync_reset;
}

/// Structures shared with the C shim (`ffi/rdma/*_abi.rs`).
#[path = "../../ffi"]
pub mod ffi {
    /// The RDMA core's shim.
    pub mod rdma {
        pub mod ib_abi;
        pub mod ib_ah_abi;
        pub mod ib_qp_abi;
        pub mod ib_srq_abi;
    }
}

/// InfiniBand provider logic (`ib/`): the pure files of each verb family (the
/// family's `mod.rs` is its kernel shell, not built here).
#[path = "../../ib"]
pub mod ib {
    pub mod abi;
    /// Address handles.
    pub mod ah {
        pub mod av;
    }
    /// Completion queues.
    pub mod cq {
        pub mod clean;
        pub mod commands;
        pub mod cqe;
        pub mod plan;
        pub mod wc_status;
    }
    /// The device.
    pub mod device {
        pub mod attr;
    }
    /// Memory regions.
    pub mod mr {
        pub mod commands;
        pub mod umr;
    }
    /// Protection and transport domains.
    pub mod pd {
        pub mod commands;
    }
    /// Ports.
    pub mod port {
        pub mod attr;
        pub mod commands;
        pub mod events;
    }
    /// Queue pairs.
    pub mod qp {
        pub mod commands;
        pub mod create;
        pub mod flush;
        pub mod modify;
        pub mod recv_wqe;
        pub mod send_wqe;
        pub mod size;
    }
    /// Shared receive queues and XRC domains.
    pub mod srq {
        pub mod commands;
        pub mod kwqe;
        pub mod plan;
    }
    /// User contexts.
    pub mod uctx {
        pub mod plan;
    }
    /// Pinned user memory and doorbell records.
    pub mod umem {
        pub mod plan;
    }
}

/// The device clock's arithmetic (`clock/`).
#[path = "../../clock"]
pub mod clock {
    pub mod calc;
}

/// Teardown sequencing decisions (`teardown/`).
#[path = "../../teardown"]
pub mod teardown {
    pub mod plan;
}

/// Compile-time guarantees of the typed PRM fields, checked as doc tests.
///
/// Writing a field of the structure the buffer holds, with a value of the field's
/// type, compiles:
/// ```
/// use mlx5_rs_pure::ifc::cmds::set_issi_in;
/// use mlx5_rs_pure::ifc::field::{MsgMut, F};
/// let mut b = [0u8; 16];
/// let mut m = MsgMut::<set_issi_in::Layout>::of_array(&mut b);
/// m.set(set_issi_in::CURRENT_ISSI, 1u16).unwrap();
/// const OK: F<u16, set_issi_in::Layout> = F::new("set_issi_in", "current_issi", 0x50, 0x10);
/// assert_eq!(OK.raw(), set_issi_in::CURRENT_ISSI.raw());
/// ```
/// A field of another structure does not:
/// ```compile_fail
/// use mlx5_rs_pure::ifc::cmds::{enable_hca_in, set_issi_in};
/// use mlx5_rs_pure::ifc::field::MsgMut;
/// let mut b = [0u8; 16];
/// let mut m = MsgMut::<set_issi_in::Layout>::of_array(&mut b);
/// m.set(enable_hca_in::EMBEDDED_CPU_FUNCTION, true).unwrap();
/// ```
/// Nor a value of another width:
/// ```compile_fail
/// use mlx5_rs_pure::ifc::cmds::set_issi_in;
/// use mlx5_rs_pure::ifc::field::MsgMut;
/// let mut b = [0u8; 16];
/// let mut m = MsgMut::<set_issi_in::Layout>::of_array(&mut b);
/// m.set(set_issi_in::CURRENT_ISSI, 1u32).unwrap();
/// ```
/// Nor a field declared wider than its type:
/// ```compile_fail
/// use mlx5_rs_pure::ifc::cmds::set_issi_in;
/// use mlx5_rs_pure::ifc::field::F;
/// const BAD: F<u8, set_issi_in::Layout> = F::new("set_issi_in", "current_issi", 0x50, 0x10);
/// let _ = BAD;
/// ```
/// Nor a view of an array shorter than the structure:
/// ```compile_fail
/// use mlx5_rs_pure::ifc::cmds::set_issi_in;
/// use mlx5_rs_pure::ifc::field::Msg;
/// let b = [0u8; 8];
/// let _ = Msg::<set_issi_in::Layout>::of_array(&b);
/// ```
/// A register field is a field of one 32-bit register:
/// ```
/// use mlx5_rs_pure::ifc::field::RegField;
/// use mlx5_rs_pure::ifc::init_seg::initial_seg;
/// const R: RegField<u16> = initial_seg::CMD_INTERFACE_REV.reg();
/// assert_eq!((R.off, R.get(0x0005_0c1c)), (4, 5));
/// ```
/// A field spanning two registers is not:
/// ```compile_fail
/// use mlx5_rs_pure::ifc::field::{RegField, F};
/// use mlx5_rs_pure::ifc::init_seg::initial_seg;
/// const SPAN: F<u32, initial_seg::Layout> = F::new("initial_seg", "x", 0x10, 0x20);
/// const R: RegField<u32> = SPAN.reg();
/// let _ = R;
/// ```
/// Nor one wider than its type, or outside its register:
/// ```compile_fail
/// use mlx5_rs_pure::ifc::field::RegField;
/// const R: RegField<u8> = RegField::at(0, 24, 9);
/// let _ = R;
/// ```
/// ```compile_fail
/// use mlx5_rs_pure::ifc::field::RegField;
/// const R: RegField<u8> = RegField::at(0, 28, 8);
/// let _ = R;
/// ```
pub mod typed_field_guarantees {}
