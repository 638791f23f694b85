//! Event queue entry (64 bytes, `struct mlx5_eqe` in `device.h`) and event types.

use zerocopy::byteorder::big_endian::{U16, U32};
use zerocopy_derive::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// One EQE.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct Eqe {
    /// Reserved.
    pub rsvd00: u8,
    /// Event type.
    pub type_: u8,
    /// Reserved.
    pub rsvd02: u8,
    /// Event sub type.
    pub sub_type: u8,
    /// Reserved.
    pub rsvd04: [u8; 28],
    /// Event data.
    pub data: [u8; 28],
    /// Reserved.
    pub rsvd3c: [u8; 2],
    /// Signature.
    pub signature: u8,
    /// Owner bit (bit 0).
    pub owner: u8,
}

/// Byte offsets inside an EQE.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod eqe_off {
    /// type.
    pub const TYPE: usize = 0x01;
    /// sub_type.
    pub const SUB_TYPE: usize = 0x03;
    /// Start of event data.
    pub const DATA: usize = 0x20;
    /// Command completion: slot bitmask (be32).
    pub const CMD_VECTOR: usize = 0x20;
    /// Page request: ec_function (be16).
    pub const PAGE_EC_FUNCTION: usize = 0x20;
    /// Page request: func_id (be16).
    pub const PAGE_FUNC_ID: usize = 0x22;
    /// Page request: num_pages (be32, signed).
    pub const PAGE_NUM_PAGES: usize = 0x24;
    /// Completion: cqn (be32, low 24 bits).
    pub const COMP_CQN: usize = 0x38;
    /// signature.
    pub const SIGNATURE: usize = 0x3e;
    /// owner.
    pub const OWNER: usize = 0x3f;
}

/// Command-completion event data.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct EqeCmd {
    /// Bitmask of completed slots.
    pub vector: U32,
    /// Reserved.
    pub rsvd: [u8; 24],
}

/// Page-request event data.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct EqePageReq {
    /// Bit 15 embedded-CPU function, bit 14 release all pages.
    pub ec_function: U16,
    /// Function id.
    pub func_id: U16,
    /// Signed page count.
    pub num_pages: U32,
    /// Reserved.
    pub rsvd: [u8; 20],
}

/// Page request `ec_function` flag: embedded-CPU function.
pub const PAGE_REQ_EC_FUNCTION: u16 = 0x8000;
/// Page request `ec_function` flag: release all pages.
pub const PAGE_REQ_RELEASE_ALL: u16 = 0x4000;

/// Event types (`enum mlx5_event`).
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod event_type {
    /// Completion.
    pub const COMP: u8 = 0x00;
    /// Path migrated.
    pub const PATH_MIG: u8 = 0x01;
    /// Communication established.
    pub const COMM_EST: u8 = 0x02;
    /// SQ drained.
    pub const SQ_DRAINED: u8 = 0x03;
    /// CQ error.
    pub const CQ_ERROR: u8 = 0x04;
    /// WQ catastrophic error.
    pub const WQ_CATAS_ERROR: u8 = 0x05;
    /// Path migration failed.
    pub const PATH_MIG_FAILED: u8 = 0x07;
    /// Internal error.
    pub const INTERNAL_ERROR: u8 = 0x08;
    /// Port change.
    pub const PORT_CHANGE: u8 = 0x09;
    /// Command completion.
    pub const CMD: u8 = 0x0a;
    /// Page request.
    pub const PAGE_REQUEST: u8 = 0x0b;
    /// Page fault.
    pub const PAGE_FAULT: u8 = 0x0c;
    /// NIC vport change.
    pub const NIC_VPORT_CHANGE: u8 = 0x0d;
    /// General event.
    pub const GENERAL_EVENT: u8 = 0x22;
}

const _: () = assert!(core::mem::size_of::<Eqe>() == 64);
const _: () = assert!(core::mem::size_of::<EqeCmd>() == 28);
const _: () = assert!(core::mem::size_of::<EqePageReq>() == 28);
