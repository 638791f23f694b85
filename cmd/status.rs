// SPDX-License-Identifier: GPL-2.0

//! Decoding of command completion: delivery status and command status.
//!
//! A completed command reports twice:
//! * the **delivery status** in bits 7:1 of the entry's `status_own` byte
//!   says whether the device could take the command at all (signature,
//!   token, block numbers, pointers, lengths);
//! * when delivery is OK, byte 0 of the output (the **command status**) and
//!   the 32-bit big-endian **syndrome** at output bytes 4..8 say whether
//!   the command itself succeeded.
//!
//! Both, plus driver-side outcomes (timeout, dead device, corrupt chain),
//! become one [`CmdError`] that names the opcode, the op_mod, the status and
//! the syndrome, both as a value and in its `Display` output (used in
//! `dev_err!`), and maps to a kernel errno.
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use core::fmt;

use super::mailbox::MailboxError;

/// Errno values used by [`CmdError::errno`] (positive; the kernel shell
/// negates them). Numbers are the Linux generic ones.
pub mod errno {
    /// I/O error.
    pub const EIO: i32 = 5;
    /// No such device or address.
    pub const ENXIO: i32 = 6;
    /// Try again.
    pub const EAGAIN: i32 = 11;
    /// Out of memory.
    pub const ENOMEM: i32 = 12;
    /// Bad address.
    pub const EFAULT: i32 = 14;
    /// Device or resource busy.
    pub const EBUSY: i32 = 16;
    /// Invalid argument.
    pub const EINVAL: i32 = 22;
    /// No message of desired type.
    pub const ENOMSG: i32 = 42;
    /// Invalid request descriptor.
    pub const EBADR: i32 = 53;
    /// Link has been severed.
    pub const ENOLINK: i32 = 67;
    /// Connection timed out.
    pub const ETIMEDOUT: i32 = 110;
    /// Remote I/O error.
    pub const EREMOTEIO: i32 = 121;
    /// Operation canceled.
    pub const ECANCELED: i32 = 125;
}

/// Delivery status (entry `status_own` bits 7:1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryStatus {
    /// Delivered; look at the command status.
    Ok,
    /// Entry or block signature error.
    SignatureErr,
    /// Token mismatch.
    TokenErr,
    /// Bad block number in a mailbox.
    BadBlockNumber,
    /// Output pointer not aligned to the block size.
    OutputPtrNotAligned,
    /// Input pointer not aligned to the block size.
    InputPtrNotAligned,
    /// Firmware internal error.
    FwInternalErr,
    /// Input length error.
    InputLenErr,
    /// Output length error.
    OutputLenErr,
    /// Reserved fields not cleared.
    ReservedNotCleared,
    /// Bad command descriptor type.
    BadCommandType,
    /// Any other value (kept raw).
    Unknown(u8),
}

impl DeliveryStatus {
    /// Decodes a delivery status value (already shifted: `status_own >> 1`).
    pub fn from_raw(v: u8) -> Self {
        match v {
            0x00 => Self::Ok,
            0x01 => Self::SignatureErr,
            0x02 => Self::TokenErr,
            0x03 => Self::BadBlockNumber,
            0x04 => Self::OutputPtrNotAligned,
            0x05 => Self::InputPtrNotAligned,
            0x06 => Self::FwInternalErr,
            0x07 => Self::InputLenErr,
            0x08 => Self::OutputLenErr,
            0x09 => Self::ReservedNotCleared,
            0x10 => Self::BadCommandType,
            v => Self::Unknown(v),
        }
    }

    /// Decodes the whole `status_own` byte (ignores the ownership bit).
    pub fn from_status_own(status_own: u8) -> Self {
        Self::from_raw(status_own >> 1)
    }

    /// Raw value.
    pub fn raw(self) -> u8 {
        match self {
            Self::Ok => 0x00,
            Self::SignatureErr => 0x01,
            Self::TokenErr => 0x02,
            Self::BadBlockNumber => 0x03,
            Self::OutputPtrNotAligned => 0x04,
            Self::InputPtrNotAligned => 0x05,
            Self::FwInternalErr => 0x06,
            Self::InputLenErr => 0x07,
            Self::OutputLenErr => 0x08,
            Self::ReservedNotCleared => 0x09,
            Self::BadCommandType => 0x10,
            Self::Unknown(v) => v,
        }
    }

    /// Short name for logs.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::SignatureErr => "signature error",
            Self::TokenErr => "token error",
            Self::BadBlockNumber => "bad block number",
            Self::OutputPtrNotAligned => "output pointer not aligned",
            Self::InputPtrNotAligned => "input pointer not aligned",
            Self::FwInternalErr => "firmware internal error",
            Self::InputLenErr => "input length error",
            Self::OutputLenErr => "output length error",
            Self::ReservedNotCleared => "reserved fields not cleared",
            Self::BadCommandType => "bad command descriptor type",
            Self::Unknown(_) => "unknown delivery status",
        }
    }

    /// Errno (positive) for a failed delivery.
    pub fn errno(self) -> i32 {
        match self {
            Self::Ok => 0,
            Self::SignatureErr | Self::TokenErr => errno::EBADR,
            Self::BadBlockNumber | Self::OutputPtrNotAligned | Self::InputPtrNotAligned => {
                errno::EFAULT
            }
            Self::FwInternalErr | Self::Unknown(_) => errno::EIO,
            Self::InputLenErr
            | Self::OutputLenErr
            | Self::ReservedNotCleared
            | Self::BadCommandType => errno::ENOMSG,
        }
    }
}

/// Command status (output byte 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmdStatus {
    /// Success.
    Ok,
    /// Internal error.
    InternalErr,
    /// Bad operation (unknown opcode).
    BadOp,
    /// Bad parameter.
    BadParam,
    /// Bad system state.
    BadSysState,
    /// Bad resource.
    BadResource,
    /// Resource busy.
    ResourceBusy,
    /// Firmware not ready.
    NotReady,
    /// Limits exceeded.
    LimitsExceeded,
    /// Bad resource state.
    BadResourceState,
    /// Bad index.
    BadIndex,
    /// No resources.
    NoResources,
    /// Bad QP state.
    BadQpState,
    /// Bad packet (discarded).
    BadPacket,
    /// Too many outstanding CQEs.
    BadSizeOutstandingCqes,
    /// Bad input length.
    BadInputLen,
    /// Bad output length.
    BadOutputLen,
    /// Any other value (kept raw).
    Unknown(u8),
}

impl CmdStatus {
    /// Decodes output byte 0.
    pub fn from_raw(v: u8) -> Self {
        match v {
            0x00 => Self::Ok,
            0x01 => Self::InternalErr,
            0x02 => Self::BadOp,
            0x03 => Self::BadParam,
            0x04 => Self::BadSysState,
            0x05 => Self::BadResource,
            0x06 => Self::ResourceBusy,
            0x07 => Self::NotReady,
            0x08 => Self::LimitsExceeded,
            0x09 => Self::BadResourceState,
            0x0a => Self::BadIndex,
            0x0f => Self::NoResources,
            0x10 => Self::BadQpState,
            0x30 => Self::BadPacket,
            0x40 => Self::BadSizeOutstandingCqes,
            0x50 => Self::BadInputLen,
            0x51 => Self::BadOutputLen,
            v => Self::Unknown(v),
        }
    }

    /// Raw value.
    pub fn raw(self) -> u8 {
        match self {
            Self::Ok => 0x00,
            Self::InternalErr => 0x01,
            Self::BadOp => 0x02,
            Self::BadParam => 0x03,
            Self::BadSysState => 0x04,
            Self::BadResource => 0x05,
            Self::ResourceBusy => 0x06,
            Self::NotReady => 0x07,
            Self::LimitsExceeded => 0x08,
            Self::BadResourceState => 0x09,
            Self::BadIndex => 0x0a,
            Self::NoResources => 0x0f,
            Self::BadQpState => 0x10,
            Self::BadPacket => 0x30,
            Self::BadSizeOutstandingCqes => 0x40,
            Self::BadInputLen => 0x50,
            Self::BadOutputLen => 0x51,
            Self::Unknown(v) => v,
        }
    }

    /// Short name for logs.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ok => "OK",
            Self::InternalErr => "internal error",
            Self::BadOp => "bad operation",
            Self::BadParam => "bad parameter",
            Self::BadSysState => "bad system state",
            Self::BadResource => "bad resource",
            Self::ResourceBusy => "resource busy",
            Self::NotReady => "FW not ready",
            Self::LimitsExceeded => "limits exceeded",
            Self::BadResourceState => "bad resource state",
            Self::BadIndex => "bad index",
            Self::NoResources => "no resources",
            Self::BadQpState => "bad QP state",
            Self::BadPacket => "bad packet",
            Self::BadSizeOutstandingCqes => "bad size, too many outstanding CQEs",
            Self::BadInputLen => "bad input length",
            Self::BadOutputLen => "bad output length",
            Self::Unknown(_) => "unknown status",
        }
    }

    /// Errno (positive) for a failed command.
    pub fn errno(self) -> i32 {
        match self {
            Self::Ok => 0,
            Self::InternalErr | Self::BadSysState | Self::BadInputLen | Self::BadOutputLen => {
                errno::EIO
            }
            Self::BadOp
            | Self::BadParam
            | Self::BadResource
            | Self::BadResourceState
            | Self::BadIndex
            | Self::BadQpState
            | Self::BadPacket
            | Self::BadSizeOutstandingCqes => errno::EINVAL,
            Self::ResourceBusy => errno::EBUSY,
            Self::NotReady | Self::NoResources => errno::EAGAIN,
            Self::LimitsExceeded => errno::ENOMEM,
            Self::Unknown(_) => errno::EIO,
        }
    }
}

/// What went wrong with a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The device refused delivery.
    Delivery(DeliveryStatus),
    /// The command executed and failed.
    Status(CmdStatus),
    /// No completion within the command's timeout; the slot stays owned by
    /// the device.
    Timeout,
    /// The device is dead (internal error / interface down); not sent.
    DeviceDead,
    /// No slot became free in time.
    NoSlot,
    /// The output mailbox chain read back is corrupt.
    Mailbox(MailboxError),
    /// The output is inconsistent with the request (e.g. more pages
    /// returned than asked for).
    BadOutput,
}

/// A failed command: which command, what went wrong, and the syndrome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmdError {
    /// Opcode of the command.
    pub opcode: u16,
    /// op_mod of the command.
    pub op_mod: u16,
    /// What went wrong.
    pub kind: ErrorKind,
    /// Syndrome from the output (0 when the device gave none).
    pub syndrome: u32,
}

/// Syndrome of outputs fabricated for a dead device.
pub const DEAD_DEVICE_SYNDROME: u32 = 0xbadd_00de;

impl CmdError {
    /// An error of `kind` for (`opcode`, `op_mod`) without syndrome.
    pub fn new(opcode: u16, op_mod: u16, kind: ErrorKind) -> Self {
        Self {
            opcode,
            op_mod,
            kind,
            syndrome: 0,
        }
    }

    /// Errno (positive) the kernel shell returns for this error.
    pub fn errno(&self) -> i32 {
        match self.kind {
            ErrorKind::Delivery(d) => d.errno(),
            ErrorKind::Status(s) => s.errno(),
            ErrorKind::Timeout => errno::ETIMEDOUT,
            ErrorKind::DeviceDead => errno::ENXIO,
            ErrorKind::NoSlot => errno::EBUSY,
            ErrorKind::Mailbox(_) | ErrorKind::BadOutput => errno::EIO,
        }
    }

    /// The command status when the command executed and failed.
    pub fn status(&self) -> Option<CmdStatus> {
        match self.kind {
            ErrorKind::Status(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for CmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match opcode_name(self.opcode) {
            Some(n) => write!(f, "{n}({:#x})", self.opcode)?,
            None => write!(f, "UNKNOWN_OPCODE({:#x})", self.opcode)?,
        }
        write!(f, " op_mod({:#x}) failed, ", self.op_mod)?;
        match self.kind {
            ErrorKind::Delivery(d) => {
                write!(f, "delivery status {}({:#x})", d.name(), d.raw())?
            }
            ErrorKind::Status(s) => write!(f, "status {}({:#x})", s.name(), s.raw())?,
            ErrorKind::Timeout => f.write_str("timeout")?,
            ErrorKind::DeviceDead => f.write_str("device is dead")?,
            ErrorKind::NoSlot => f.write_str("no free command slot")?,
            ErrorKind::Mailbox(m) => write!(f, "bad output mailbox: {m}")?,
            ErrorKind::BadOutput => f.write_str("inconsistent output")?,
        }
        write!(f, ", syndrome ({:#x})", self.syndrome)
    }
}

/// Offset of the command status byte in the output.
pub const OUT_STATUS_OFFSET: usize = 0;
/// Offset of the big-endian syndrome in the output.
pub const OUT_SYNDROME_OFFSET: usize = 4;

/// Opcode and op_mod from the first 8 bytes of a command input
/// (`opcode` bits 31:16 of DW0, `op_mod` bits 15:0 of DW1).
pub fn input_header(inline_in: &[u8; 16]) -> (u16, u16) {
    (
        u16::from_be_bytes([inline_in[0], inline_in[1]]),
        u16::from_be_bytes([inline_in[6], inline_in[7]]),
    )
}

/// Decodes a completed command: `status_own` from the entry and the first
/// 16 output bytes (`out[]` of the entry). `Ok(())` only when delivery and
/// command status are both OK.
pub fn decode(opcode: u16, op_mod: u16, status_own: u8, out: &[u8; 16]) -> Result<(), CmdError> {
    let d = DeliveryStatus::from_status_own(status_own);
    if d != DeliveryStatus::Ok {
        return Err(CmdError::new(opcode, op_mod, ErrorKind::Delivery(d)));
    }
    let s = CmdStatus::from_raw(out[OUT_STATUS_OFFSET]);
    if s == CmdStatus::Ok {
        return Ok(());
    }
    let syndrome = u32::from_be_bytes([
        out[OUT_SYNDROME_OFFSET],
        out[OUT_SYNDROME_OFFSET + 1],
        out[OUT_SYNDROME_OFFSET + 2],
        out[OUT_SYNDROME_OFFSET + 3],
    ]);
    Err(CmdError {
        opcode,
        op_mod,
        kind: ErrorKind::Status(s),
        syndrome,
    })
}

/// Whether a command only releases resources, so that with a dead device
/// it is reported as successful (the device will never use them again).
pub fn releases_resources(opcode: u16) -> bool {
    matches!(
        opcode,
        0x103 // TEARDOWN_HCA
            | 0x105 // DISABLE_HCA
            | 0x108 // MANAGE_PAGES
            | 0x202 // DESTROY_MKEY
            | 0x302 // DESTROY_EQ
            | 0x401 // DESTROY_CQ
            | 0x501 // DESTROY_QP
            | 0x507 // 2ERR_QP
            | 0x50a // 2RST_QP
            | 0x701 // DESTROY_SRQ
            | 0x706 // DESTROY_XRC_SRQ
            | 0x755 // MODIFY_NIC_VPORT_CONTEXT
            | 0x772 // DEALLOC_Q_COUNTER
            | 0x801 // DEALLOC_PD
            | 0x803 // DEALLOC_UAR
            | 0x80f // DEALLOC_XRCD
            | 0x817 // DEALLOC_TRANSPORT_DOMAIN
            | 0x90e // DESTROY_RMP
            | 0xa03 // DESTROY_GENERAL_OBJECT
            | 0xa06 // DESTROY_UCTX
            | 0xa0a // DESTROY_UMEM
    )
}

/// Outcome of a command that cannot be sent because the device is dead:
/// success for commands that only release resources, else a
/// [`ErrorKind::DeviceDead`] error carrying [`DEAD_DEVICE_SYNDROME`].
pub fn dead_device_outcome(opcode: u16, op_mod: u16) -> Result<(), CmdError> {
    if releases_resources(opcode) {
        Ok(())
    } else {
        Err(CmdError {
            opcode,
            op_mod,
            kind: ErrorKind::DeviceDead,
            syndrome: DEAD_DEVICE_SYNDROME,
        })
    }
}

/// Name of an opcode, for logs and debugfs.
pub fn opcode_name(opcode: u16) -> Option<&'static str> {
    Some(match opcode {
        0x100 => "QUERY_HCA_CAP",
        0x101 => "QUERY_ADAPTER",
        0x102 => "INIT_HCA",
        0x103 => "TEARDOWN_HCA",
        0x104 => "ENABLE_HCA",
        0x105 => "DISABLE_HCA",
        0x107 => "QUERY_PAGES",
        0x108 => "MANAGE_PAGES",
        0x109 => "SET_HCA_CAP",
        0x10a => "QUERY_ISSI",
        0x10b => "SET_ISSI",
        0x10d => "SET_DRIVER_VERSION",
        0x200 => "CREATE_MKEY",
        0x201 => "QUERY_MKEY",
        0x202 => "DESTROY_MKEY",
        0x203 => "QUERY_SPECIAL_CONTEXTS",
        0x204 => "PAGE_FAULT_RESUME",
        0x205 => "ALLOC_MEMIC",
        0x206 => "DEALLOC_MEMIC",
        0x207 => "MODIFY_MEMIC",
        0x301 => "CREATE_EQ",
        0x302 => "DESTROY_EQ",
        0x303 => "QUERY_EQ",
        0x304 => "GEN_EQE",
        0x400 => "CREATE_CQ",
        0x401 => "DESTROY_CQ",
        0x402 => "QUERY_CQ",
        0x403 => "MODIFY_CQ",
        0x500 => "CREATE_QP",
        0x501 => "DESTROY_QP",
        0x502 => "RST2INIT_QP",
        0x503 => "INIT2RTR_QP",
        0x504 => "RTR2RTS_QP",
        0x505 => "RTS2RTS_QP",
        0x506 => "SQERR2RTS_QP",
        0x507 => "2ERR_QP",
        0x50a => "2RST_QP",
        0x50b => "QUERY_QP",
        0x50c => "SQD_RTS_QP",
        0x50d => "MAD_IFC",
        0x50e => "INIT2INIT_QP",
        0x700 => "CREATE_SRQ",
        0x701 => "DESTROY_SRQ",
        0x702 => "QUERY_SRQ",
        0x703 => "ARM_RQ",
        0x705 => "CREATE_XRC_SRQ",
        0x706 => "DESTROY_XRC_SRQ",
        0x707 => "QUERY_XRC_SRQ",
        0x708 => "ARM_XRC_SRQ",
        0x750 => "QUERY_VPORT_STATE",
        0x754 => "QUERY_NIC_VPORT_CONTEXT",
        0x755 => "MODIFY_NIC_VPORT_CONTEXT",
        0x760 => "QUERY_ROCE_ADDRESS",
        0x761 => "SET_ROCE_ADDRESS",
        0x762 => "QUERY_HCA_VPORT_CONTEXT",
        0x764 => "QUERY_HCA_VPORT_GID",
        0x765 => "QUERY_HCA_VPORT_PKEY",
        0x771 => "ALLOC_Q_COUNTER",
        0x772 => "DEALLOC_Q_COUNTER",
        0x773 => "QUERY_Q_COUNTER",
        0x800 => "ALLOC_PD",
        0x801 => "DEALLOC_PD",
        0x802 => "ALLOC_UAR",
        0x803 => "DEALLOC_UAR",
        0x805 => "ACCESS_REG",
        0x806 => "ATTACH_TO_MCG",
        0x807 => "DETACH_FROM_MCG",
        0x80d => "NOP",
        0x80e => "ALLOC_XRCD",
        0x80f => "DEALLOC_XRCD",
        0x816 => "ALLOC_TRANSPORT_DOMAIN",
        0x817 => "DEALLOC_TRANSPORT_DOMAIN",
        0x90c => "CREATE_RMP",
        0x90d => "MODIFY_RMP",
        0x90e => "DESTROY_RMP",
        0x90f => "QUERY_RMP",
        0xa00 => "CREATE_GENERAL_OBJECT",
        0xa01 => "MODIFY_GENERAL_OBJECT",
        0xa02 => "QUERY_GENERAL_OBJECT",
        0xa03 => "DESTROY_GENERAL_OBJECT",
        0xa04 => "CREATE_UCTX",
        0xa06 => "DESTROY_UCTX",
        0xa08 => "CREATE_UMEM",
        0xa0a => "DESTROY_UMEM",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;
    use std::string::ToString;

    fn out(status: u8, syndrome: u32) -> [u8; 16] {
        let mut o = [0u8; 16];
        o[0] = status;
        o[4..8].copy_from_slice(&syndrome.to_be_bytes());
        o
    }

    #[test]
    fn success() {
        assert_eq!(decode(0x80d, 0, 0x00, &out(0, 0)), Ok(()));
        // syndrome is ignored on success
        assert_eq!(decode(0x80d, 0, 0x00, &out(0, 0x1234)), Ok(()));
    }

    #[test]
    fn delivery_status_wins_over_output() {
        let e = decode(0x104, 0, 0x02 << 1, &out(3, 0xdead)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Delivery(DeliveryStatus::TokenErr));
        assert_eq!(e.syndrome, 0);
        assert_eq!(e.errno(), errno::EBADR);
        // ownership bit is ignored
        let e = decode(0x104, 0, (0x07 << 1) | 1, &out(0, 0)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Delivery(DeliveryStatus::InputLenErr));
        assert_eq!(e.errno(), errno::ENOMSG);
    }

    #[test]
    fn command_status_with_syndrome() {
        let e = decode(0x109, 1, 0, &out(0x03, 0x0012_3abc)).unwrap_err();
        assert_eq!(e.opcode, 0x109);
        assert_eq!(e.op_mod, 1);
        assert_eq!(e.kind, ErrorKind::Status(CmdStatus::BadParam));
        assert_eq!(e.status(), Some(CmdStatus::BadParam));
        assert_eq!(e.syndrome, 0x0012_3abc);
        assert_eq!(e.errno(), errno::EINVAL);
        assert_eq!(
            e.to_string(),
            "SET_HCA_CAP(0x109) op_mod(0x1) failed, status bad parameter(0x3), syndrome (0x123abc)"
        );
    }

    #[test]
    fn all_delivery_values_round_trip() {
        for v in 0..=0x7fu8 {
            let d = DeliveryStatus::from_raw(v);
            assert_eq!(d.raw(), v);
            assert_eq!(DeliveryStatus::from_status_own(v << 1), d);
            assert_eq!(DeliveryStatus::from_status_own((v << 1) | 1), d);
            if v != 0 {
                assert_ne!(d.errno(), 0);
            }
        }
        assert_eq!(DeliveryStatus::from_raw(0x10), DeliveryStatus::BadCommandType);
        assert_eq!(DeliveryStatus::from_raw(0x0a), DeliveryStatus::Unknown(0x0a));
    }

    #[test]
    fn all_status_values_round_trip() {
        for v in 0..=0xffu8 {
            let s = CmdStatus::from_raw(v);
            assert_eq!(s.raw(), v);
            assert_eq!(s == CmdStatus::Ok, v == 0);
            if v != 0 {
                assert_ne!(s.errno(), 0);
            }
        }
        assert_eq!(CmdStatus::from_raw(0x06).errno(), errno::EBUSY);
        assert_eq!(CmdStatus::from_raw(0x07).errno(), errno::EAGAIN);
        assert_eq!(CmdStatus::from_raw(0x08).errno(), errno::ENOMEM);
        assert_eq!(CmdStatus::from_raw(0x51).errno(), errno::EIO);
        assert_eq!(CmdStatus::from_raw(0x99), CmdStatus::Unknown(0x99));
    }

    #[test]
    fn display_variants() {
        let e = CmdError::new(0x108, 2, ErrorKind::Timeout);
        assert_eq!(e.to_string(), "MANAGE_PAGES(0x108) op_mod(0x2) failed, timeout, syndrome (0x0)");
        assert_eq!(e.errno(), errno::ETIMEDOUT);
        let e = decode(0x0fff, 0, 0x06 << 1, &out(0, 0)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "UNKNOWN_OPCODE(0xfff) op_mod(0x0) failed, delivery status firmware internal error(0x6), syndrome (0x0)"
        );
        let e = CmdError::new(
            0x100,
            0,
            ErrorKind::Mailbox(MailboxError::BadBlockNumber { index: 1, found: 3 }),
        );
        let s = format!("{e}");
        assert!(s.contains("QUERY_HCA_CAP(0x100)"), "{s}");
        assert!(s.contains("block number 3"), "{s}");
    }

    #[test]
    fn dead_device() {
        assert_eq!(dead_device_outcome(0x103, 0), Ok(()));
        assert_eq!(dead_device_outcome(0x108, 2), Ok(()));
        let e = dead_device_outcome(0x100, 1).unwrap_err();
        assert_eq!(e.kind, ErrorKind::DeviceDead);
        assert_eq!(e.syndrome, DEAD_DEVICE_SYNDROME);
        assert_eq!(e.errno(), errno::ENXIO);
        assert!(e.to_string().ends_with("syndrome (0xbadd00de)"));
    }

    #[test]
    fn header_parse() {
        let mut i = [0u8; 16];
        i[0..2].copy_from_slice(&0x0108u16.to_be_bytes());
        i[6..8].copy_from_slice(&2u16.to_be_bytes());
        assert_eq!(input_header(&i), (0x108, 2));
    }

    #[test]
    fn names() {
        assert_eq!(opcode_name(0x80d), Some("NOP"));
        assert_eq!(opcode_name(0x107), Some("QUERY_PAGES"));
        assert_eq!(opcode_name(0x106), None);
    }
}
