//! PCI configuration space of the emulated ConnectX-5 (4 KiB, PCIe).
//!
//! Capabilities: power management (0x40), PCI Express v2 endpoint (0x60), MSI-X
//! (0x9c, table and PBA in BAR0) and a vendor-specific capability (0xc0, the gateway of
//! [`crate::vsc`]); one extended capability, Advanced Error Reporting (0x100), which a
//! ConnectX-5 has and Linux's AER service (and its `aer_inject`) needs on the function
//! to report an error of it. Writes are filtered through a per-byte writable mask; BAR0 is a
//! 64-bit prefetchable memory BAR whose size-probe reads back the size mask.

/// Mellanox vendor id.
pub const VENDOR_ID: u16 = 0x15b3;
/// ConnectX-5 device id.
pub const DEVICE_ID: u16 = 0x1017;
/// Subsystem vendor id.
pub const SUBSYS_VENDOR_ID: u16 = 0x15b3;
/// Subsystem id.
pub const SUBSYS_ID: u16 = 0x0007;
/// Class code: network controller / InfiniBand (0x0207), prog-if 0.
pub const CLASS_CODE: u32 = 0x020700;
/// BAR0 size (32 MiB).
pub const BAR0_SIZE: u64 = 32 << 20;
/// MSI-X vectors offered by default (a ConnectX-5 PF offers more; 64 is enough for
/// any guest here). `--msix-vectors` changes it ([`PciConfig::with_msix`]).
pub const MSIX_VECTORS: u16 = 64;
/// MSI-X table offset in BAR0.
pub const MSIX_TABLE_OFF: u32 = 0x2000;
/// MSI-X PBA offset in BAR0.
pub const MSIX_PBA_OFF: u32 = 0x3000;
/// Config space size.
pub const CONFIG_SIZE: usize = 4096;

const CAP_PM: usize = 0x40;
const CAP_EXP: usize = 0x60;
const CAP_MSIX: usize = 0x9c;
/// Offset of the vendor-specific capability (the VSC gateway).
pub const CAP_VNDR: usize = 0xc0;
const VNDR_LEN: usize = crate::vsc::CAP_LEN;
/// Offset of the Advanced Error Reporting extended capability (PCIe Base Spec r5.0
/// §7.8.4; the first extended capability sits at 0x100).
pub const CAP_AER: usize = 0x100;
/// Uncorrectable errors a PCIe endpoint implements (status / mask / severity bits 4, 5,
/// 12..=21: Data Link Protocol, Surprise Down, Poisoned TLP, Flow Control Protocol,
/// Completion Timeout, Completer Abort, Unexpected Completion, Receiver Overflow,
/// Malformed TLP, ECRC, Unsupported Request, ACS Violation).
const AER_UNCOR_BITS: u32 = 0x003f_f030;
/// Uncorrectable Error Severity's default (spec: DLP, SDES, FCP, RxOF, MalfTLP and
/// Uncorrectable Internal Error are fatal).
const AER_UNCOR_SEVER_DEFAULT: u32 = 0x0046_2030;
/// Correctable errors (bits 0, 6..=8, 12..=15: Receiver Error, Bad TLP, Bad DLLP,
/// REPLAY_NUM Rollover, Replay Timer Timeout, Advisory Non-Fatal, Corrected Internal,
/// Header Log Overflow).
const AER_COR_BITS: u32 = 0x0000_f1c1;
/// Correctable Error Mask's default (spec: Advisory Non-Fatal masked).
const AER_COR_MASK_DEFAULT: u32 = 0x0000_2000;

/// The configuration space.
pub struct PciConfig {
    bytes: [u8; CONFIG_SIZE],
    wmask: [u8; CONFIG_SIZE],
    /// Bits that are write-1-to-clear (status registers).
    w1c: [u8; CONFIG_SIZE],
    /// Last time a config write turned the MSI-X enable bit off / bus mastering off
    /// (observations: PCI shutdown frees the vectors and disables the device, as
    /// upstream's `shutdown` does for kexec). QEMU forwards every config write to the
    /// device before emulating MSI-X itself, so the bits are the guest's.
    pub msix_disabled_at: Option<std::time::Instant>,
    /// See [`PciConfig::msix_disabled_at`].
    pub master_cleared_at: Option<std::time::Instant>,
    /// The vendor-specific capability's registers (after its 4-byte header).
    pub vsc: crate::vsc::Vsc,
}

impl Default for PciConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl PciConfig {
    /// Builds the config space with [`MSIX_VECTORS`] vectors.
    pub fn new() -> Self {
        Self::with_msix(MSIX_VECTORS)
    }

    /// Builds the config space with an MSI-X table of `vectors` entries (clamped to
    /// 1..=[`crate::config::MAX_MSIX_VECTORS`]).
    pub fn with_msix(vectors: u16) -> Self {
        let vectors = vectors.clamp(1, crate::config::MAX_MSIX_VECTORS);
        let mut c = PciConfig {
            bytes: [0; CONFIG_SIZE],
            wmask: [0; CONFIG_SIZE],
            w1c: [0; CONFIG_SIZE],
            msix_disabled_at: None,
            master_cleared_at: None,
            vsc: crate::vsc::Vsc::new(),
        };
        c.put16(0x00, VENDOR_ID);
        c.put16(0x02, DEVICE_ID);
        // Command: I/O, memory, bus master, parity, SERR, INTx disable are writable.
        c.mask16(0x04, 0x0547);
        // Status: capability list.
        c.put16(0x06, 0x0010);
        c.w1c16(0x06, 0xf900);
        c.put32(0x08, CLASS_CODE << 8); // revision 0
        c.bytes[0x0c] = 0x10; // cache line size (writable)
        c.wmask[0x0c] = 0xff;
        c.wmask[0x0d] = 0xff; // latency timer
        c.bytes[0x0e] = 0x00; // header type 0
                              // BAR0: 64-bit, prefetchable memory.
        c.put32(0x10, 0x0000_000c);
        let size_mask = !(BAR0_SIZE - 1);
        c.mask32(0x10, (size_mask as u32) & 0xffff_fff0);
        c.mask32(0x14, (size_mask >> 32) as u32);
        c.put16(0x2c, SUBSYS_VENDOR_ID);
        c.put16(0x2e, SUBSYS_ID);
        c.bytes[0x34] = CAP_PM as u8;
        c.wmask[0x3c] = 0xff; // interrupt line
        c.bytes[0x3d] = 0x00; // no INTx pin: MSI-X only

        // Power management capability v3.
        c.bytes[CAP_PM] = 0x01;
        c.bytes[CAP_PM + 1] = CAP_EXP as u8;
        c.put16(CAP_PM + 2, 0x0003);
        c.put16(CAP_PM + 4, 0x0008); // D0, no soft reset
        c.mask16(CAP_PM + 4, 0x0103);

        // PCI Express capability v2, endpoint.
        c.bytes[CAP_EXP] = 0x10;
        c.bytes[CAP_EXP + 1] = CAP_MSIX as u8;
        c.put16(CAP_EXP + 2, 0x0002); // version 2, type 0 = endpoint
        c.put32(CAP_EXP + 4, 0x0000_8002 | (1 << 28)); // devcap: MPS 512, role-based err, FLR
        c.put16(CAP_EXP + 8, 0x2810); // devctl: MPS 128, MRRS 512, relaxed ordering
        c.mask16(CAP_EXP + 8, 0xffff);
        c.w1c16(CAP_EXP + 0x0a, 0x000f); // devsta
        c.put32(CAP_EXP + 0x0c, 3 | (16 << 4)); // linkcap: 8 GT/s, x16, port 0
        c.mask16(CAP_EXP + 0x10, 0x01c3); // linkctl
        c.put16(CAP_EXP + 0x12, 0x1000 | 3 | (16 << 4)); // linksta: slot clock, 8 GT/s, x16
        c.put32(CAP_EXP + 0x24, 0x0000_001f); // devcap2: completion timeout ranges, disable
        c.mask16(CAP_EXP + 0x28, 0x061f); // devctl2
        c.put32(CAP_EXP + 0x2c, 0x0000_000e); // linkcap2: 2.5/5/8 GT/s
        c.put16(CAP_EXP + 0x30, 0x0003); // linkctl2: target 8 GT/s
        c.mask16(CAP_EXP + 0x30, 0x000f);

        // MSI-X capability.
        c.bytes[CAP_MSIX] = 0x11;
        c.bytes[CAP_MSIX + 1] = CAP_VNDR as u8;
        // Message control bits 10:0: table size - 1 (PCIe base spec, MSI-X capability).
        c.put16(CAP_MSIX + 2, vectors - 1);
        c.mask16(CAP_MSIX + 2, 0xc000); // enable, function mask
        c.put32(CAP_MSIX + 4, MSIX_TABLE_OFF); // BIR 0
        c.put32(CAP_MSIX + 8, MSIX_PBA_OFF); // BIR 0

        // Vendor-specific capability (the gateway upstream's `mlx5_pci_vsc_init` looks
        // for): its registers are those of `crate::vsc`, not bytes of this array.
        c.bytes[CAP_VNDR] = 0x09;
        c.bytes[CAP_VNDR + 1] = 0x00;
        c.bytes[CAP_VNDR + 2] = VNDR_LEN as u8;

        // Advanced Error Reporting, version 1, last extended capability. Status
        // registers are RW1CS, mask and severity RWS; no ECRC, no header-log contents
        // (no error is ever detected by the device model itself: an error is injected
        // by the host's aer_inject, which answers these reads itself).
        c.put32(CAP_AER, 0x0001 | (1 << 16));
        c.w1c32(CAP_AER + 0x04, AER_UNCOR_BITS);
        c.mask32(CAP_AER + 0x08, AER_UNCOR_BITS);
        c.put32(CAP_AER + 0x0c, AER_UNCOR_SEVER_DEFAULT);
        c.mask32(CAP_AER + 0x0c, AER_UNCOR_BITS);
        c.w1c32(CAP_AER + 0x10, AER_COR_BITS);
        c.put32(CAP_AER + 0x14, AER_COR_MASK_DEFAULT);
        c.mask32(CAP_AER + 0x14, AER_COR_BITS);
        c
    }

    fn put16(&mut self, off: usize, v: u16) {
        self.bytes[off..off + 2].copy_from_slice(&v.to_le_bytes());
    }
    fn put32(&mut self, off: usize, v: u32) {
        self.bytes[off..off + 4].copy_from_slice(&v.to_le_bytes());
    }
    fn mask16(&mut self, off: usize, v: u16) {
        self.wmask[off..off + 2].copy_from_slice(&v.to_le_bytes());
    }
    fn mask32(&mut self, off: usize, v: u32) {
        self.wmask[off..off + 4].copy_from_slice(&v.to_le_bytes());
    }
    fn w1c16(&mut self, off: usize, v: u16) {
        self.w1c[off..off + 2].copy_from_slice(&v.to_le_bytes());
    }
    fn w1c32(&mut self, off: usize, v: u32) {
        self.w1c[off..off + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// The VSC register (offset from the capability) holding config byte `o`, if any.
    fn vsc_reg(o: usize) -> Option<usize> {
        (CAP_VNDR + 4..CAP_VNDR + VNDR_LEN)
            .contains(&o)
            .then(|| (o - CAP_VNDR) & !3)
    }

    /// Reads `buf.len()` bytes at `off` (out-of-range bytes read as 0xff). A VSC
    /// register is read once per access (its counter moves on at each read).
    pub fn read(&mut self, off: u64, buf: &mut [u8]) {
        let mut vsc_read: Option<(usize, [u8; 4])> = None;
        for (i, b) in buf.iter_mut().enumerate() {
            let Some(o) = usize::try_from(off).ok().and_then(|o| o.checked_add(i)) else {
                *b = 0xff;
                continue;
            };
            *b = match Self::vsc_reg(o) {
                Some(r) => {
                    let dw = match vsc_read {
                        Some((rr, dw)) if rr == r => dw,
                        _ => {
                            let dw = self.vsc.read32(r).to_le_bytes();
                            vsc_read = Some((r, dw));
                            dw
                        }
                    };
                    dw[(o - CAP_VNDR) & 3]
                }
                None => self.bytes.get(o).copied().unwrap_or(0xff),
            };
        }
    }

    /// Writes through the writable / write-1-to-clear masks; bytes of a VSC register
    /// are merged into it (one register write per register touched).
    pub fn write(&mut self, off: u64, data: &[u8]) {
        let Ok(start) = usize::try_from(off) else {
            return;
        };
        let mut i = 0;
        while i < data.len() {
            let Some(o) = start.checked_add(i) else {
                return;
            };
            let Some(r) = Self::vsc_reg(o) else {
                // A run of ordinary bytes up to the next VSC register.
                let mut j = i + 1;
                while j < data.len() && Self::vsc_reg(start + j).is_none() {
                    j += 1;
                }
                self.write_plain(o as u64, &data[i..j]);
                i = j;
                continue;
            };
            let mut dw = self.vsc.peek32(r).to_le_bytes();
            while i < data.len() && Self::vsc_reg(start + i) == Some(r) {
                dw[(start + i - CAP_VNDR) & 3] = data[i];
                i += 1;
            }
            self.vsc.write32(r, u32::from_le_bytes(dw));
        }
    }

    fn write_plain(&mut self, off: u64, data: &[u8]) {
        let (msix, master) = (self.msix_enabled(), self.bus_master());
        self.write_masked(off, data);
        let now = std::time::Instant::now();
        if msix && !self.msix_enabled() {
            self.msix_disabled_at = Some(now);
        }
        if master && !self.bus_master() {
            self.master_cleared_at = Some(now);
        }
    }

    fn write_masked(&mut self, off: u64, data: &[u8]) {
        for (i, v) in data.iter().enumerate() {
            let Some(o) = usize::try_from(off).ok().and_then(|o| o.checked_add(i)) else {
                return;
            };
            if o >= CONFIG_SIZE {
                return;
            }
            let m = self.wmask[o];
            self.bytes[o] = (self.bytes[o] & !m) | (v & m);
            self.bytes[o] &= !(self.w1c[o] & v);
        }
    }

    /// MSI-X not function-masked. Whether a vector is enabled is decided by the
    /// client assigning or removing its eventfd (QEMU emulates the table and the
    /// enable bit itself), so only an explicit function mask blocks delivery here.
    pub fn msix_deliverable(&self) -> bool {
        let ctl = u16::from_le_bytes([self.bytes[CAP_MSIX + 2], self.bytes[CAP_MSIX + 3]]);
        ctl & 0x4000 == 0
    }

    /// MSI-X enable bit.
    pub fn msix_enabled(&self) -> bool {
        self.bytes[CAP_MSIX + 3] & 0x80 != 0
    }

    /// Number of MSI-X table entries (message control bits 10:0, plus one).
    pub fn msix_table_size(&self) -> u16 {
        (u16::from_le_bytes([self.bytes[CAP_MSIX + 2], self.bytes[CAP_MSIX + 3]]) & 0x7ff) + 1
    }

    /// Bus-master enable bit.
    pub fn bus_master(&self) -> bool {
        self.bytes[0x04] & 0x04 != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_bar_sizing() {
        let mut c = PciConfig::new();
        let mut b = [0u8; 4];
        c.read(0, &mut b);
        assert_eq!(u32::from_le_bytes(b), 0x1017_15b3);
        c.write(0x10, &[0xff; 4]);
        c.write(0x14, &[0xff; 4]);
        c.read(0x10, &mut b);
        assert_eq!(u32::from_le_bytes(b), 0xfe00_000c);
        c.read(0x14, &mut b);
        assert_eq!(u32::from_le_bytes(b), 0xffff_ffff);
        c.read(0x08, &mut b);
        assert_eq!(u32::from_le_bytes(b) >> 8, 0x020700);
    }

    #[test]
    fn msix_and_master_changes_recorded() {
        let mut c = PciConfig::new();
        assert!(c.msix_disabled_at.is_none() && c.master_cleared_at.is_none());
        c.write(0x04, &[0x06, 0x00]);
        c.write((CAP_MSIX + 3) as u64, &[0x80]);
        assert!(c.msix_enabled() && c.bus_master());
        assert!(c.msix_disabled_at.is_none());
        c.write((CAP_MSIX + 3) as u64, &[0x00]);
        c.write(0x04, &[0x02, 0x00]);
        assert!(!c.msix_enabled() && !c.bus_master());
        assert!(c.msix_disabled_at.is_some() && c.master_cleared_at.is_some());
    }

    #[test]
    fn capability_chain() {
        let mut c = PciConfig::new();
        let mut ids = vec![];
        let mut p = [0u8; 1];
        c.read(0x34, &mut p);
        let mut ptr = p[0] as u64;
        while ptr != 0 {
            let mut h = [0u8; 2];
            c.read(ptr, &mut h);
            ids.push(h[0]);
            ptr = h[1] as u64;
        }
        assert_eq!(ids, vec![0x01, 0x10, 0x11, 0x09]);
    }

    #[test]
    fn aer_extended_capability() {
        let mut c = PciConfig::new();
        let rd = |c: &mut PciConfig, o: usize| {
            let mut b = [0u8; 4];
            c.read(o as u64, &mut b);
            u32::from_le_bytes(b)
        };
        // Header: id 1 (AER), version 1, no next capability.
        assert_eq!(rd(&mut c, CAP_AER), 0x0001_0001);
        assert_eq!(rd(&mut c, CAP_AER + 0x0c), 0x0046_2030);
        assert_eq!(rd(&mut c, CAP_AER + 0x14), 0x0000_2000);
        // Masks take the implemented bits only; the header is read-only.
        c.write(CAP_AER as u64 + 0x08, &[0xff; 4]);
        assert_eq!(rd(&mut c, CAP_AER + 0x08), 0x003f_f030);
        c.write(CAP_AER as u64, &[0; 4]);
        assert_eq!(rd(&mut c, CAP_AER), 0x0001_0001);
        // Status bits are write-1-to-clear: a write of ones to a clear status stays 0.
        c.write(CAP_AER as u64 + 0x04, &[0xff; 4]);
        c.write(CAP_AER as u64 + 0x10, &[0xff; 4]);
        assert_eq!(rd(&mut c, CAP_AER + 0x04), 0);
        assert_eq!(rd(&mut c, CAP_AER + 0x10), 0);
    }

    #[test]
    fn msix_table_size_follows_the_setting() {
        assert_eq!(PciConfig::new().msix_table_size(), MSIX_VECTORS);
        let mut c = PciConfig::with_msix(2);
        let mut b = [0u8; 2];
        c.read(CAP_MSIX as u64 + 2, &mut b);
        assert_eq!(u16::from_le_bytes(b) & 0x7ff, 1);
        // Enable / function mask stay writable, the size does not.
        c.write(CAP_MSIX as u64 + 2, &0xffffu16.to_le_bytes());
        assert_eq!(c.msix_table_size(), 2);
        assert!(c.msix_enabled());
        assert_eq!(PciConfig::with_msix(0).msix_table_size(), 1);
        assert_eq!(
            PciConfig::with_msix(5000).msix_table_size(),
            crate::config::MAX_MSIX_VECTORS
        );
    }
}
