//! Event queue entry (64 bytes, `struct mlx5_eqe` in `device.h`) and event types.
//!
//! `mlx5_ifc.h` does not declare the EQE: it is a plain C structure, here a `zerocopy`
//! struct with big-endian fields and one struct per event-data variant we read
//! (`union ev_data`), converted without copies of offsets ([`Eqe::from_array`],
//! [`Eqe::cmd`], ...). Layouts are checked against `device.h` by the emulator's
//! `ifc_vs_header` test.

use zerocopy::byteorder::big_endian::{I32, U16, U32};
use zerocopy::FromZeros;
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
    pub num_pages: I32,
    /// Reserved.
    pub rsvd: [u8; 20],
}

/// Completion event data (`struct mlx5_eqe_comp`).
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct EqeComp {
    /// Reserved.
    pub rsvd: [u8; 24],
    /// CQ number (24 bits; the top byte is reserved).
    pub cqn: U32,
}

/// CQ error event data (`struct mlx5_eqe_cq_err`).
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct EqeCqErr {
    /// CQ number (24 bits; the top byte is reserved).
    pub cqn: U32,
    /// Reserved.
    pub rsvd1: [u8; 7],
    /// Syndrome (1: CQ overrun, 2: CQ access violation).
    pub syndrome: u8,
    /// Reserved (rest of the event data).
    pub rsvd2: [u8; 16],
}

/// Port change event data (`struct mlx5_eqe_port_state`).
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct EqePort {
    /// Reserved.
    pub rsvd0: [u8; 8],
    /// Port number in bits 7:4.
    pub port: u8,
    /// Reserved.
    pub rsvd1: [u8; 19],
}

/// QP / SRQ event data (`struct mlx5_eqe_qp_srq` of `device.h`; `qp_events` of
/// `mlx5_ifc.h`): the resource type (`MLX5_EVENT_QUEUE_TYPE_*`, [`rsc_type`]) at byte
/// 20, the QP / RQ / SQ / SRQ number in the low 24 bits of bytes 24..28.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct EqeQpSrq {
    /// Reserved.
    pub rsvd0: [u8; 20],
    /// Resource type (QP events; SRQ events leave it to the SRQ number alone).
    pub type_: u8,
    /// Reserved.
    pub rsvd1: [u8; 3],
    /// Resource number (24 bits; the top byte is reserved).
    pub qp_srq_n: U32,
}

impl EqePort {
    /// The port number (bits 7:4 of `port`).
    pub fn port_num(&self) -> u8 {
        self.port >> 4
    }
}

impl Eqe {
    /// An all-zero entry (to be filled, e.g. for GEN_EQE).
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_TEST_HOOKS)),
        expect(dead_code, reason = "only the gen_comp test hook builds EQEs")
    )]
    pub fn zeroed() -> Self {
        Self::new_zeroed()
    }

    /// The entry as 64 bytes the device wrote.
    pub fn from_array(b: &[u8; 64]) -> Self {
        zerocopy::transmute!(*b)
    }

    /// The entry's 64 bytes.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_TEST_HOOKS)),
        expect(dead_code, reason = "only the gen_comp test hook builds EQEs")
    )]
    pub fn to_array(self) -> [u8; 64] {
        zerocopy::transmute!(self)
    }

    /// Sets the event data of a command completion.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "used by the emulator and the host tests")
    )]
    pub fn set_cmd(&mut self, d: EqeCmd) {
        self.data = zerocopy::transmute!(d);
    }

    /// Sets the event data of a page request.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "used by the emulator and the host tests")
    )]
    pub fn set_page_req(&mut self, d: EqePageReq) {
        self.data = zerocopy::transmute!(d);
    }

    /// Sets the event data of a completion.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_TEST_HOOKS)),
        expect(dead_code, reason = "only the gen_comp test hook builds EQEs")
    )]
    pub fn set_comp(&mut self, d: EqeComp) {
        self.data = zerocopy::transmute!(d);
    }

    /// Sets the event data of a port change.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "used by the emulator and the host tests")
    )]
    pub fn set_port(&mut self, d: EqePort) {
        self.data = zerocopy::transmute!(d);
    }

    /// Event data as a command completion.
    pub fn cmd(&self) -> EqeCmd {
        zerocopy::transmute!(self.data)
    }

    /// Event data as a page request.
    pub fn page_req(&self) -> EqePageReq {
        zerocopy::transmute!(self.data)
    }

    /// Event data as a completion.
    pub fn comp(&self) -> EqeComp {
        zerocopy::transmute!(self.data)
    }

    /// Event data as a port change.
    pub fn port(&self) -> EqePort {
        zerocopy::transmute!(self.data)
    }

    /// Event data as a QP / SRQ event.
    pub fn qp_srq(&self) -> EqeQpSrq {
        zerocopy::transmute!(self.data)
    }

    /// Sets the event data of a QP / SRQ event.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "used by the emulator and the unit tests")
    )]
    pub fn set_qp_srq(&mut self, d: EqeQpSrq) {
        self.data = zerocopy::transmute!(d);
    }

    /// Event data as a CQ error.
    pub fn cq_err(&self) -> EqeCqErr {
        zerocopy::transmute!(self.data)
    }

    /// Sets the event data of a CQ error.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "used by the emulator and the host tests")
    )]
    pub fn set_cq_err(&mut self, d: EqeCqErr) {
        self.data = zerocopy::transmute!(d);
    }
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
    /// WQ invalid request error.
    pub const WQ_INVAL_REQ_ERROR: u8 = 0x10;
    /// WQ access error.
    pub const WQ_ACCESS_ERROR: u8 = 0x11;
    /// SRQ catastrophic error.
    pub const SRQ_CATAS_ERROR: u8 = 0x12;
    /// Last WQE reached on a QP attached to an SRQ.
    pub const SRQ_LAST_WQE: u8 = 0x13;
    /// SRQ limit reached.
    pub const SRQ_RQ_LIMIT: u8 = 0x14;
    /// General event.
    pub const GENERAL_EVENT: u8 = 0x22;
}

/// Resource types of QP events (`MLX5_EVENT_QUEUE_TYPE_*`, device.h; the same values
/// as `enum mlx5_res_type`, driver.h, which adds SRQ 3 and XRC SRQ 4).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(
        dead_code,
        reason = "some are used by the emulator and the unit tests only"
    )
)]
pub mod rsc_type {
    /// A QP.
    pub const QP: u8 = 0;
    /// An RQ object.
    pub const RQ: u8 = 1;
    /// An SQ object.
    pub const SQ: u8 = 2;
    /// An SRQ (`MLX5_RES_SRQ`: the key SRQ events are looked up with).
    pub const SRQ: u8 = 3;
    /// A DCT.
    pub const DCT: u8 = 6;
}

/// General event sub-types (`MLX5_GENERAL_SUBTYPE_*`, device.h) and the sync-reset
/// states a PCI_SYNC_FOR_FW_UPDATE event carries in data byte 3 (`struct
/// mlx5_eqe_sync_fw_update` `sync_rst_state`, `enum sync_rst_state_type`).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(
        dead_code,
        reason = "the live-patch sub-type is the emulator's and the unit tests'"
    )
)]
pub mod general_sub {
    /// Firmware live patch done.
    pub const FW_LIVE_PATCH: u8 = 0x7;
    /// PCI sync for firmware update (sync reset).
    pub const PCI_SYNC_FOR_FW_UPDATE: u8 = 0x8;
    /// Byte of the EQE's data holding `sync_rst_state` (low 4 bits).
    pub const SYNC_RST_STATE_BYTE: usize = 3;
    /// Sync reset requested: each function answers through MFRL.
    pub const RST_REQUEST: u8 = 0x0;
    /// Reset now: every function acknowledged.
    pub const RST_NOW: u8 = 0x1;
    /// The sync reset was aborted.
    pub const RST_ABORT: u8 = 0x2;
    /// Unload the function (sync reset with driver unload).
    pub const RST_UNLOAD: u8 = 0x3;
}

/// Port change event sub-types (`MLX5_PORT_CHANGE_SUBTYPE_*`, device.h).
pub mod port_change_sub {
    /// The port went down.
    pub const DOWN: u8 = 1;
    /// The port became active.
    pub const ACTIVE: u8 = 4;
    /// The port was initialized.
    pub const INITIALIZED: u8 = 5;
    /// LID (or SM LID, LMC) changed.
    pub const LID: u8 = 6;
    /// P_Key table changed.
    pub const PKEY: u8 = 7;
    /// GUID table changed.
    pub const GUID: u8 = 8;
    /// The SM asked clients to reregister.
    pub const CLIENT_REREG: u8 = 9;
}

const _: () = assert!(core::mem::size_of::<Eqe>() == 64);
const _: () = assert!(core::mem::size_of::<EqeCmd>() == 28);
const _: () = assert!(core::mem::size_of::<EqePageReq>() == 28);
const _: () = assert!(core::mem::size_of::<EqeComp>() == 28);
const _: () = assert!(core::mem::size_of::<EqePort>() == 28);
const _: () = assert!(core::mem::size_of::<EqeQpSrq>() == 28);
