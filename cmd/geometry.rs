// SPDX-License-Identifier: GPL-2.0

//! Command queue geometry and the queue address registers.
//!
//! The device reports the queue geometry in the low address register
//! (`cmdq_addr_l_sz`, init segment 0x14): bits 7:4 `log_cmdq_size`, bits
//! 3:0 `log_cmdq_stride`. The driver accepts it only if the entries fit in
//! the one 4 KiB queue page, each stride holds a 64-byte entry, and there
//! are 2 to 32 slots (one regular plus the page slot at least).
//!
//! The driver then writes the queue's DMA address high word first (0x10),
//! then the low word (0x14): address bits 31:12, `nic_interface` (bits
//! 10:8) = 0 for "full driver", and the read-only size/stride bits as 0.
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use crate::ifc::cmd_layout::{ENTRY_SIZE, MAX_SLOTS};
use crate::ifc::init_seg::reg;

/// Size and alignment of the queue page.
pub const QUEUE_BYTES: usize = 4096;

/// Why the geometry or the address cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeometryError {
    /// Fewer than 2 or more than 32 slots.
    SlotCount {
        /// `log_cmdq_size` read.
        log_size: u8,
    },
    /// Stride smaller than an entry.
    Stride {
        /// `log_cmdq_stride` read.
        log_stride: u8,
    },
    /// Entries do not fit in the queue page.
    TooBig {
        /// `log_cmdq_size` read.
        log_size: u8,
        /// `log_cmdq_stride` read.
        log_stride: u8,
    },
    /// Queue address not 4 KiB aligned.
    Misaligned(u64),
}

impl core::fmt::Display for GeometryError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::SlotCount { log_size } => write!(
                f,
                "command queue of 2^{log_size} slots unsupported (need 2..=32)"
            ),
            Self::Stride { log_stride } => write!(
                f,
                "command queue stride 2^{log_stride} smaller than a 64-byte entry"
            ),
            Self::TooBig {
                log_size,
                log_stride,
            } => write!(
                f,
                "command queue 2^{log_size} x 2^{log_stride} bytes exceeds 4 KiB"
            ),
            Self::Misaligned(a) => write!(f, "command queue at {a:#x} not 4 KiB aligned"),
        }
    }
}

/// A validated queue geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// log2 of the number of slots.
    pub log_size: u8,
    /// log2 of the entry stride in bytes.
    pub log_stride: u8,
}

impl Geometry {
    /// Decodes and validates the `cmdq_addr_l_sz` register value.
    pub fn from_reg(v: u32) -> Result<Self, GeometryError> {
        let log_size = reg::LOG_CMDQ_SIZE.get(v);
        let log_stride = reg::LOG_CMDQ_STRIDE.get(v);
        let nslots = 1usize << log_size;
        let stride = 1usize << log_stride;
        if !(2..=MAX_SLOTS).contains(&nslots) {
            return Err(GeometryError::SlotCount { log_size });
        }
        if stride < ENTRY_SIZE {
            return Err(GeometryError::Stride { log_stride });
        }
        if nslots * stride > QUEUE_BYTES {
            return Err(GeometryError::TooBig {
                log_size,
                log_stride,
            });
        }
        Ok(Self {
            log_size,
            log_stride,
        })
    }

    /// Number of slots.
    pub fn nslots(&self) -> u8 {
        1u8 << self.log_size
    }

    /// Entry stride in bytes.
    pub fn stride(&self) -> usize {
        1usize << self.log_stride
    }

    /// Byte offset of `slot`'s entry in the queue page (`None` beyond the
    /// queue).
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "host-tested, not used by the driver yet")
    )]
    pub fn entry_offset(&self, slot: u8) -> Option<usize> {
        (slot < self.nslots()).then(|| usize::from(slot) << self.log_stride)
    }
}

/// The values to write to `cmdq_addr_h` (first) and `cmdq_addr_l_sz`
/// (second) for a queue at DMA address `addr`, selecting the full-driver
/// NIC interface.
pub fn addr_words(addr: u64) -> Result<(u32, u32), GeometryError> {
    if addr % 4096 != 0 {
        return Err(GeometryError::Misaligned(addr));
    }
    let hi = (addr >> 32) as u32; // high half: lossless after the shift
                                  // Masked to the address bits 31:12: fits 32 bits.
    let lo = (addr & u64::from(reg::CMDQ_PHY_ADDR_31_12.bits_mask())) as u32;
    Ok((hi, lo))
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_cmd_geometry))]
mod tests {
    use super::*;

    #[test]
    fn common_geometries() {
        // 32 x 64 B (ConnectX default)
        let g = Geometry::from_reg(0x56).unwrap();
        assert_eq!((g.nslots(), g.stride()), (32, 64));
        assert_eq!(g.entry_offset(31), Some(31 * 64));
        assert_eq!(g.entry_offset(32), None);
        // address bits are ignored
        assert_eq!(Geometry::from_reg(0xabcd_e056), Ok(g));
        // 16 x 256 B = 4 KiB exactly
        let g = Geometry::from_reg(0x48).unwrap();
        assert_eq!((g.nslots(), g.stride()), (16, 256));
        // 2 x 64 B; 32 x 128 B = 4 KiB exactly
        assert!(Geometry::from_reg(0x16).is_ok());
        assert!(Geometry::from_reg(0x57).is_ok());
    }

    #[test]
    fn rejected_geometries() {
        assert_eq!(
            Geometry::from_reg(0x06),
            Err(GeometryError::SlotCount { log_size: 0 })
        );
        assert_eq!(
            Geometry::from_reg(0x66),
            Err(GeometryError::SlotCount { log_size: 6 })
        );
        assert_eq!(
            Geometry::from_reg(0x55),
            Err(GeometryError::Stride { log_stride: 5 })
        );
        assert_eq!(
            Geometry::from_reg(0x58),
            Err(GeometryError::TooBig {
                log_size: 5,
                log_stride: 8
            })
        );
        assert_eq!(
            Geometry::from_reg(0x1f),
            Err(GeometryError::TooBig {
                log_size: 1,
                log_stride: 15
            })
        );
    }

    #[test]
    fn address_words() {
        assert_eq!(addr_words(0x0000_0012_3456_7000), Ok((0x12, 0x3456_7000)));
        assert_eq!(
            addr_words(0xffff_ffff_ffff_f000),
            Ok((0xffff_ffff, 0xffff_f000))
        );
        assert_eq!(
            addr_words(0x1000_0800),
            Err(GeometryError::Misaligned(0x1000_0800))
        );
        // nic_interface bits (10:8) and size/stride bits are written as 0
        let (_, lo) = addr_words(0x7000).unwrap();
        assert_eq!(lo & 0xfff, 0);
    }
}
