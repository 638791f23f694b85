//! Initialization segment (BAR0 offset 0): register offsets and fields.
//!
//! All registers are 32-bit big-endian. Offsets are byte offsets from the start of
//! BAR0; the `initial_seg` / `health_buffer` tables give the same fields as
//! `mlx5_ifc.h` declares them.

/// Size the driver maps (`sizeof(struct mlx5_init_seg)`).
pub const MAPPED_SIZE: usize = 0x2010;

/// fw_rev_minor, fw_rev_major.
pub const FW_REV: usize = reg::FW_REV_MINOR.off;
/// cmd_interface_rev, fw_rev_subminor.
pub const CMDIF_REV_FW_SUB: usize = reg::CMD_INTERFACE_REV.off;
/// Command queue DMA address bits 63:32.
pub const CMDQ_ADDR_H: usize = reg::CMDQ_PHY_ADDR_63_32.off;
/// Command queue address bits 31:12, nic_interface, log_cmdq_size, log_cmdq_stride.
pub const CMDQ_ADDR_L_SZ: usize = reg::CMDQ_PHY_ADDR_31_12.off;
/// Command doorbell vector (bit i = slot i).
pub const CMD_DBELL: usize = reg::COMMAND_DOORBELL_VECTOR.off;
/// initializing, nic_interface_supported, embedded_cpu (and, outside `mlx5_ifc.h`'s
/// table, fw reset supported (30), reset ack (22), sync reset state (15:12)).
pub const INITIALIZING: usize = reg::INITIALIZING.off;
/// Start of the 64-byte health buffer.
pub const HEALTH_BUFFER_OFF: usize = initial_seg::HEALTH_BUFFER.raw().byte_off();
/// FW-provided command execution timeout.
pub const CMD_EXEC_TO: usize = 0xff8;
/// FW-provided FW-init timeout; non-zero means timeouts are supported.
pub const CMD_Q_INIT_TO: usize = 0xffc;
/// Internal timer high 32 bits.
pub const INTERNAL_TIMER_H: usize = 0x1000;
/// Internal timer low 32 bits.
pub const INTERNAL_TIMER_L: usize = 0x1004;
/// health_syndrome, health_counter.
pub const HEALTH_COUNTER: usize = reg::HEALTH_COUNTER.off;
/// Real-time clock high / low.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub const REAL_TIME_H: usize = 0x1040;
/// Real-time clock low.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub const REAL_TIME_L: usize = 0x1044;

/// Required command interface revision.
pub const CMD_IF_REV: u16 = 5;

/// FW reset supported bit of the dword at [`INITIALIZING`] (reserved in `mlx5_ifc.h`'s
/// `initial_seg`; upstream's `MLX5_FW_RESET_SUPPORTED_OFFSET`).
pub const FW_RESET_SUPPORTED_BIT: u32 = 1 << 30;

/// The fields of [`initial_seg`] as 32-bit registers: each one's register offset and
/// bits, derived from the table at compile time.
pub mod reg {
    use super::initial_seg as s;
    use crate::ifc::field::RegField;

    /// fw_rev_minor.
    pub const FW_REV_MINOR: RegField<u16> = s::FW_REV_MINOR.reg();
    /// fw_rev_major.
    pub const FW_REV_MAJOR: RegField<u16> = s::FW_REV_MAJOR.reg();
    /// cmd_interface_rev.
    pub const CMD_INTERFACE_REV: RegField<u16> = s::CMD_INTERFACE_REV.reg();
    /// fw_rev_subminor.
    pub const FW_REV_SUBMINOR: RegField<u16> = s::FW_REV_SUBMINOR.reg();
    /// cmdq_phy_addr_63_32.
    pub const CMDQ_PHY_ADDR_63_32: RegField<u32> = s::CMDQ_PHY_ADDR_63_32.reg();
    /// cmdq_phy_addr_31_12 (the address bits 31:12 in place: mask the register with
    /// its [`RegField::bits_mask`]).
    pub const CMDQ_PHY_ADDR_31_12: RegField<u32> = s::CMDQ_PHY_ADDR_31_12.reg();
    /// nic_interface as upstream reads and writes it: 3 bits from bit 8. `mlx5_ifc.h`
    /// declares 2 bits with the bit above reserved, but upstream's `mlx5_get_nic_state`
    /// masks with 7 and its `MLX5_NIC_IFC_SW_RESET` is 7 ([`super::NicInterface`]).
    pub const NIC_INTERFACE: RegField<u8> = RegField::at(s::NIC_INTERFACE.reg().off, 8, 3);
    const _: () = assert!(NIC_INTERFACE.shift() == s::NIC_INTERFACE.reg().shift());
    /// log_cmdq_size.
    pub const LOG_CMDQ_SIZE: RegField<u8> = s::LOG_CMDQ_SIZE.reg();
    /// log_cmdq_stride.
    pub const LOG_CMDQ_STRIDE: RegField<u8> = s::LOG_CMDQ_STRIDE.reg();
    /// command_doorbell_vector.
    pub const COMMAND_DOORBELL_VECTOR: RegField<u32> = s::COMMAND_DOORBELL_VECTOR.reg();
    /// initializing.
    pub const INITIALIZING: RegField<bool> = s::INITIALIZING.reg();
    /// nic_interface_supported.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "used by the emulator, not the driver")
    )]
    pub const NIC_INTERFACE_SUPPORTED: RegField<u8> = s::NIC_INTERFACE_SUPPORTED.reg();
    /// embedded_cpu.
    pub const EMBEDDED_CPU: RegField<bool> = s::EMBEDDED_CPU.reg();
    /// health_syndrome.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "used by the emulator, not the driver")
    )]
    pub const HEALTH_SYNDROME: RegField<u8> = s::HEALTH_SYNDROME.reg();
    /// health_counter.
    pub const HEALTH_COUNTER: RegField<u32> = s::HEALTH_COUNTER.reg();
}

/// `nic_interface` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum NicInterface {
    /// Full driver.
    FullDriver = 0,
    /// Disabled (fast teardown).
    Disabled = 1,
    /// No-DRAM NIC.
    NoDramNic = 2,
    /// Software reset.
    SwReset = 7,
}

impl NicInterface {
    /// Decodes a raw value.
    pub const fn from_raw(v: u32) -> Option<Self> {
        match v {
            0 => Some(Self::FullDriver),
            1 => Some(Self::Disabled),
            2 => Some(Self::NoDramNic),
            7 => Some(Self::SwReset),
            _ => None,
        }
    }
}

/// Encodes a `default_timeout` dword (multiplier 31:29, value 19:0).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub const fn encode_timeout(mult: u32, value: u32) -> u32 {
    ((mult & 0x7) << 29) | (value & 0xf_ffff)
}

/// Decodes a `default_timeout` dword to milliseconds (`None` on overflow).
pub const fn decode_timeout_ms(raw: u32) -> Option<u64> {
    let value = (raw & 0xf_ffff) as u64;
    let mult: u64 = match (raw >> 29) & 0x3 {
        0 => 1,
        1 => 1000,
        2 => 60_000,
        _ => 3_600_000,
    };
    value.checked_mul(mult)
}

/// Health syndromes.
#[cfg_attr(
    CONFIG_RUST,
    expect(dead_code, reason = "used by the emulator, not the driver")
)]
pub mod health_synd {
    /// FW internal error.
    pub const FW_INTERNAL_ERR: u8 = 0x1;
    /// Dead IRISC.
    pub const DEAD_IRISC: u8 = 0x7;
    /// HW fatal error.
    pub const HW_FATAL_ERR: u8 = 0x8;
    /// FW CRC error.
    pub const FW_CRC_ERR: u8 = 0x9;
    /// ICM fetch PCI error.
    pub const ICM_FETCH_PCI_ERR: u8 = 0xa;
    /// ICM page error.
    pub const ICM_PAGE_ERR: u8 = 0xb;
    /// Async EQ buffer overrun.
    pub const ASYNC_EQ_OVERRUN_ERR: u8 = 0xc;
    /// EQ in error.
    pub const EQ_IN_ERR: u8 = 0xd;
    /// Invalid EQ referenced.
    pub const EQ_INV: u8 = 0xe;
    /// FFSER error.
    pub const FFSER_ERR: u8 = 0xf;
    /// High temperature.
    pub const HIGH_TEMP_ERR: u8 = 0x10;
}

prm_struct! {
    /// `initial_seg` as declared in `mlx5_ifc.h`.
    pub mod initial_seg / INITIAL_SEG = "initial_seg", 0x20060 {
        FW_REV_MINOR: "fw_rev_minor" @ 0x0, 0x10 => u16;
        FW_REV_MAJOR: "fw_rev_major" @ 0x10, 0x10 => u16;
        CMD_INTERFACE_REV: "cmd_interface_rev" @ 0x20, 0x10 => u16;
        FW_REV_SUBMINOR: "fw_rev_subminor" @ 0x30, 0x10 => u16;
        CMDQ_PHY_ADDR_63_32: "cmdq_phy_addr_63_32" @ 0x80, 0x20 => u32;
        CMDQ_PHY_ADDR_31_12: "cmdq_phy_addr_31_12" @ 0xa0, 0x14 => u32;
        NIC_INTERFACE: "nic_interface" @ 0xb6, 0x2 => u8;
        LOG_CMDQ_SIZE: "log_cmdq_size" @ 0xb8, 0x4 => u8;
        LOG_CMDQ_STRIDE: "log_cmdq_stride" @ 0xbc, 0x4 => u8;
        COMMAND_DOORBELL_VECTOR: "command_doorbell_vector" @ 0xc0, 0x20 => u32;
        INITIALIZING: "initializing" @ 0xfe0, 0x1 => bool;
        NIC_INTERFACE_SUPPORTED: "nic_interface_supported" @ 0xfe5, 0x3 => u8;
        EMBEDDED_CPU: "embedded_cpu" @ 0xfe8, 0x1 => bool;
        HEALTH_BUFFER: "health_buffer" @ 0x1000, 0x200 => Bytes;
        HEALTH_SYNDROME: "health_syndrome" @ 0x8080, 0x8 => u8;
        HEALTH_COUNTER: "health_counter" @ 0x8088, 0x18 => u32;
    }
}

prm_struct! {
    /// `health_buffer` as declared in `mlx5_ifc.h` (64 bytes at init segment 0x200).
    ///
    /// `assert_var` and `crr` are named by `device.h`'s `struct health_buffer` (and
    /// upstream's `MLX5_CRR_BIT_OFFSET`) inside what `mlx5_ifc.h` reserves; they are
    /// listed in [`crate::ifc::DEVICE_H_ONLY`].
    pub mod health_buffer / HEALTH_BUFFER = "health_buffer", 0x200 {
        ASSERT_VAR: "assert_var" @ 0x0, 0xc0 => Bytes;
        ASSERT_EXISTPTR: "assert_existptr" @ 0x100, 0x20 => u32;
        ASSERT_CALLRA: "assert_callra" @ 0x120, 0x20 => u32;
        TIME: "time" @ 0x160, 0x20 => u32;
        FW_VERSION: "fw_version" @ 0x180, 0x20 => u32;
        HW_ID: "hw_id" @ 0x1a0, 0x20 => u32;
        RFR: "rfr" @ 0x1c0, 0x1 => bool;
        CRR: "crr" @ 0x1c1, 0x1 => bool;
        VALID: "valid" @ 0x1c4, 0x1 => bool;
        SEVERITY: "severity" @ 0x1c5, 0x3 => u8;
        IRISC_INDEX: "irisc_index" @ 0x1e0, 0x8 => u8;
        SYND: "synd" @ 0x1e8, 0x8 => u8;
        EXT_SYND: "ext_synd" @ 0x1f0, 0x10 => u16;
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ifc_init_seg))]
mod tests {
    use super::*;

    #[test]
    fn registers_as_upstream_reads_them() {
        // Offsets and bits of upstream's `struct mlx5_init_seg` accessors (device.h,
        // main.c, health.c): the table gives the same places.
        assert_eq!(
            (FW_REV, CMDIF_REV_FW_SUB, CMDQ_ADDR_H, CMDQ_ADDR_L_SZ),
            (0, 4, 0x10, 0x14)
        );
        assert_eq!(
            (CMD_DBELL, INITIALIZING, HEALTH_COUNTER),
            (0x18, 0x1fc, 0x1010)
        );
        assert_eq!(HEALTH_BUFFER_OFF, 0x200);
        assert_eq!(reg::FW_REV_MINOR.bits_mask(), 0xffff_0000);
        assert_eq!(reg::FW_REV_MAJOR.bits_mask(), 0x0000_ffff);
        assert_eq!(reg::CMD_INTERFACE_REV.bits_mask(), 0xffff_0000);
        assert_eq!(reg::FW_REV_SUBMINOR.bits_mask(), 0x0000_ffff);
        assert_eq!(reg::CMDQ_PHY_ADDR_31_12.bits_mask(), 0xffff_f000);
        assert_eq!(reg::NIC_INTERFACE.bits_mask(), 0x0000_0700);
        assert_eq!(reg::LOG_CMDQ_SIZE.bits_mask(), 0xf0);
        assert_eq!(reg::LOG_CMDQ_STRIDE.bits_mask(), 0x0f);
        assert_eq!(reg::INITIALIZING.bits_mask(), 1 << 31);
        assert_eq!(reg::NIC_INTERFACE_SUPPORTED.bits_mask(), 0x0700_0000);
        assert_eq!(reg::EMBEDDED_CPU.bits_mask(), 1 << 23);
        assert_eq!(reg::HEALTH_SYNDROME.bits_mask(), 0xff00_0000);
        assert_eq!(reg::HEALTH_COUNTER.bits_mask(), 0x00ff_ffff);
    }

    #[test]
    fn register_fields_read_and_write() {
        // fw 16.35.1012: minor in 31:16, major in 15:0.
        assert_eq!(reg::FW_REV_MAJOR.get(0x0023_0010), 16);
        assert_eq!(reg::FW_REV_MINOR.get(0x0023_0010), 35);
        assert!(reg::INITIALIZING.get(0x8000_0000));
        assert!(!reg::INITIALIZING.get(0x7fff_ffff));
        assert_eq!(reg::NIC_INTERFACE.get(0x1234_5f7a), 7);
        // put keeps the other bits and refuses a value wider than the field.
        assert_eq!(reg::NIC_INTERFACE.put(0x1234_5f7a, 1), Some(0x1234_597a));
        assert_eq!(reg::NIC_INTERFACE.put(0, 8), None);
        assert_eq!(
            reg::HEALTH_SYNDROME.put(0x00ab_cdef, 0x10),
            Some(0x10ab_cdef)
        );
        assert_eq!(reg::CMDQ_PHY_ADDR_63_32.put(0, u32::MAX), Some(u32::MAX));
        assert_eq!(reg::EMBEDDED_CPU.put(0, true), Some(1 << 23));
    }
}
