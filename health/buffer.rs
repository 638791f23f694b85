// SPDX-License-Identifier: GPL-2.0

//! The health buffer (init segment 0x200–0x23f) decoded by field, and the names the
//! log uses for syndromes and sensors (pure `core` code, host-tested).

use super::monitor::FatalSensor;
use crate::ifc::{field::Msg, init_seg::health_buffer as hb};

/// Dwords of the health buffer.
pub const DWORDS: usize = 16;

/// The health buffer, every field by name (values as the device wrote them; the
/// device is untrusted, so nothing here is used for more than logging and the
/// decisions of [`super::monitor`]). Decoded with the `health_buffer` table of
/// [`crate::ifc::init_seg`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HealthBuffer {
    /// `assert_var[6]`.
    pub assert_var: [u32; 6],
    /// `assert_exit_ptr`.
    pub assert_exit_ptr: u32,
    /// `assert_callra`.
    pub assert_callra: u32,
    /// `time`.
    pub time: u32,
    /// `fw_ver` (all ones: the device is off the bus).
    pub fw_ver: u32,
    /// `hw_id`.
    pub hw_id: u32,
    /// Reset required.
    pub rfr: bool,
    /// Cold reset required.
    pub crr: bool,
    /// `severity` is valid.
    pub valid: bool,
    /// `severity` (a kernel log level).
    pub severity: u8,
    /// `irisc_index`.
    pub irisc_index: u8,
    /// `synd` (0 = healthy).
    pub synd: u8,
    /// `ext_synd`.
    pub ext_synd: u16,
}

impl HealthBuffer {
    /// Decodes the 16 dwords as read from the init segment (host order, i.e. after the
    /// byte swap of each big-endian register).
    pub fn from_dwords(d: &[u32; DWORDS]) -> Self {
        let mut bytes = [0u8; 4 * DWORDS];
        for (dst, w) in bytes.chunks_exact_mut(4).zip(d) {
            dst.copy_from_slice(&w.to_be_bytes());
        }
        Self::from_bytes(&bytes)
    }

    /// Decodes the buffer as the device lays it out (big endian).
    pub fn from_bytes(b: &[u8; 4 * DWORDS]) -> Self {
        let m = Msg::<hb::Layout>::of_array(b);
        let mut assert_var = [0u32; 6];
        for (v, k) in assert_var.iter_mut().zip(0..) {
            *v = be32_at(m.bytes(hb::ASSERT_VAR), k);
        }
        Self {
            assert_var,
            assert_exit_ptr: m.get(hb::ASSERT_EXISTPTR),
            assert_callra: m.get(hb::ASSERT_CALLRA),
            time: m.get(hb::TIME),
            fw_ver: m.get(hb::FW_VERSION),
            hw_id: m.get(hb::HW_ID),
            rfr: m.get(hb::RFR),
            crr: m.get(hb::CRR),
            valid: m.get(hb::VALID),
            severity: m.get(hb::SEVERITY),
            irisc_index: m.get(hb::IRISC_INDEX),
            synd: m.get(hb::SYND),
            ext_synd: m.get(hb::EXT_SYND),
        }
    }

    /// Reset-required bit.
    pub fn rfr(&self) -> bool {
        self.rfr
    }

    /// Cold-reset-required bit.
    pub fn crr(&self) -> bool {
        self.crr
    }

    /// Severity (kernel log level) when its valid bit is set.
    pub fn severity(&self) -> Option<u8> {
        self.valid.then_some(self.severity)
    }
}

/// Big-endian dword `k` of `b` (0 past its end: `assert_var` is 24 bytes, `k` < 6).
fn be32_at(b: &[u8], k: usize) -> u32 {
    b.get(4 * k..4 * k + 4)
        .and_then(|w| w.try_into().ok())
        .map_or(0, u32::from_be_bytes)
}

/// Upstream's description of health syndrome `synd`.
pub fn synd_name(synd: u8) -> &'static str {
    match synd {
        0x0 => "none",
        0x1 => "FW internal error",
        0x7 => "dead IRISC",
        0x8 => "HW fatal error",
        0x9 => "FW CRC error",
        0xa => "ICM fetch PCI error",
        0xb => "HW fatal error",
        0xc => "async EQ buffer overrun",
        0xd => "EQ error",
        0xe => "Invalid EQ referenced",
        0xf => "FFSER error",
        0x10 => "High temperature",
        0x12 => "ICM PCI poisoned error",
        0x13 => "Trust lockdown error",
        _ => "unrecognized error",
    }
}

/// Name of a fatal sensor, as the log prints it.
pub fn sensor_name(s: FatalSensor) -> &'static str {
    match s {
        FatalSensor::PciCommErr => "PCI_COMM_ERR (PCI reads all ones: surprise removal)",
        FatalSensor::PciErr => "PCI_ERR (PCI channel offline)",
        FatalSensor::NicDisabled => "NIC_DISABLED (nic_interface disabled by the device)",
        FatalSensor::NicSwReset => "NIC_SW_RESET (nic_interface in SW reset)",
        FatalSensor::FwSyndRfr => "FW_SYND_RFR (firmware syndrome, reset required)",
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_health_buffer))]
mod tests {
    use super::*;

    #[test]
    fn decodes_every_field() {
        let mut d = [0u32; DWORDS];
        for (i, v) in d.iter_mut().enumerate().take(6) {
            *v = 0x100 + i as u32;
        }
        d[8] = 0xaaaa_0001;
        d[9] = 0xbbbb_0002;
        d[11] = 1234;
        d[12] = 0x0010_0023;
        d[13] = 0x0000_00ee;
        d[14] = 0x8c00_0000; // rfr, valid, severity 4
        d[15] = 0x0307_1234; // irisc 3, synd 7, ext 0x1234
        let b = HealthBuffer::from_dwords(&d);
        assert_eq!(b.assert_var, [0x100, 0x101, 0x102, 0x103, 0x104, 0x105]);
        assert_eq!(b.assert_exit_ptr, 0xaaaa_0001);
        assert_eq!(b.assert_callra, 0xbbbb_0002);
        assert_eq!(b.time, 1234);
        assert_eq!(b.fw_ver, 0x0010_0023);
        assert_eq!(b.hw_id, 0xee);
        assert!(b.rfr());
        assert!(!b.crr());
        assert_eq!(b.severity(), Some(4));
        assert_eq!(b.irisc_index, 3);
        assert_eq!(b.synd, 7);
        assert_eq!(b.ext_synd, 0x1234);
        assert_eq!(synd_name(b.synd), "dead IRISC");
    }

    #[test]
    fn all_ones_is_pci_gone() {
        let b = HealthBuffer::from_dwords(&[u32::MAX; DWORDS]);
        assert_eq!(b.fw_ver, u32::MAX);
        assert_eq!(b.synd, 0xff);
        assert_eq!(synd_name(b.synd), "unrecognized error");
        assert_eq!(b.severity(), Some(7));
    }
}
