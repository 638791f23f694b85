//! Big-endian bit fields as the PRM defines them, and the table generator.
//!
//! `mlx5_ifc.h` describes a structure as an array of bits: bit 0 is the most
//! significant bit of byte 0. A [`Field`] is one named entry of such a structure
//! (PRM struct name, field name, bit offset, bit width). Accessors work on byte
//! slices and return `None` instead of panicking when the slice is too short or the
//! value does not fit, so they are safe to use on device- and guest-supplied data.

/// One bit field of a PRM structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// PRM structure name as in `mlx5_ifc.h` without `mlx5_ifc_` / `_bits`.
    pub prm: &'static str,
    /// Field name in the header; nested members are joined with `.`.
    pub name: &'static str,
    /// Offset in bits from the start of the structure.
    pub bit_off: u32,
    /// Width in bits (for arrays, the whole array; 0 for flexible arrays).
    pub bits: u32,
}

impl Field {
    /// Declares a field.
    pub const fn new(prm: &'static str, name: &'static str, bit_off: u32, bits: u32) -> Self {
        Field {
            prm,
            name,
            bit_off,
            bits,
        }
    }

    /// Byte offset of the first byte holding this field.
    pub const fn byte_off(&self) -> usize {
        (self.bit_off / 8) as usize
    }

    /// Size in bytes when the field is byte aligned and a whole number of bytes.
    pub const fn byte_len(&self) -> usize {
        (self.bits / 8) as usize
    }

    /// Mask of the value (all ones over `bits`, for widths up to 64).
    pub const fn max(&self) -> u64 {
        if self.bits >= 64 {
            u64::MAX
        } else {
            (1u64 << self.bits) - 1
        }
    }

    fn window(&self) -> Option<(usize, usize, u32)> {
        if self.bits == 0 || self.bits > 64 {
            return None;
        }
        let first = (self.bit_off / 8) as usize;
        let last = ((self.bit_off + self.bits - 1) / 8) as usize;
        // Bits after the field inside the last byte.
        let tail = 7 - ((self.bit_off + self.bits - 1) % 8);
        Some((first, last, tail))
    }

    /// Reads the field (widths 1..=64).
    pub fn get(&self, buf: &[u8]) -> Option<u64> {
        let (first, last, tail) = self.window()?;
        let bytes = buf.get(first..=last)?;
        let mut acc: u128 = 0;
        for b in bytes {
            acc = (acc << 8) | u128::from(*b);
        }
        Some(((acc >> tail) as u64) & self.max())
    }

    /// Reads the field as `u32`, `None` if it is wider than 32 bits.
    pub fn get32(&self, buf: &[u8]) -> Option<u32> {
        if self.bits > 32 {
            return None;
        }
        self.get(buf).map(|v| v as u32)
    }

    /// Writes the field; `None` if the slice is too short or `val` does not fit.
    pub fn set(&self, buf: &mut [u8], val: u64) -> Option<()> {
        let (first, last, tail) = self.window()?;
        if val > self.max() {
            return None;
        }
        let bytes = buf.get_mut(first..=last)?;
        let mut acc: u128 = 0;
        for b in bytes.iter() {
            acc = (acc << 8) | u128::from(*b);
        }
        let mask = u128::from(self.max()) << tail;
        acc = (acc & !mask) | (u128::from(val) << tail);
        let n = bytes.len();
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (acc >> (8 * (n - 1 - i))) as u8;
        }
        Some(())
    }

    /// The bytes of a byte-aligned field (e.g. a nested structure or an array).
    pub fn bytes<'a>(&self, buf: &'a [u8]) -> Option<&'a [u8]> {
        if self.bit_off & 7 != 0 || self.bits & 7 != 0 {
            return None;
        }
        buf.get(self.byte_off()..self.byte_off() + self.byte_len())
    }

    /// Mutable bytes of a byte-aligned field.
    pub fn bytes_mut<'a>(&self, buf: &'a mut [u8]) -> Option<&'a mut [u8]> {
        if self.bit_off & 7 != 0 || self.bits & 7 != 0 {
            return None;
        }
        buf.get_mut(self.byte_off()..self.byte_off() + self.byte_len())
    }
}

/// A PRM structure: its name, total size and the fields we use. Host crates only: the
/// header conformance test (`emu/tests/ifc_vs_header.rs`) reads the tables.
#[cfg(not(CONFIG_RUST))]
#[derive(Clone, Copy, Debug)]
pub struct PrmStruct {
    /// PRM structure name as in `mlx5_ifc.h` without `mlx5_ifc_` / `_bits`.
    pub name: &'static str,
    /// Total size in bits.
    pub bits: u32,
    /// The fields we define.
    pub fields: &'static [Field],
}

#[cfg(not(CONFIG_RUST))]
impl PrmStruct {
    /// Size in bytes.
    pub const fn bytes(&self) -> usize {
        (self.bits / 8) as usize
    }
}

/// Declares a PRM structure: a module of [`Field`] constants plus a [`PrmStruct`] table.
///
/// ```ignore
/// prm_struct! {
///     /// ENABLE_HCA input.
///     pub mod enable_hca_in / ENABLE_HCA_IN = "enable_hca_in", 0x80 {
///         OPCODE: "opcode" @ 0x0, 0x10;
///     }
/// }
/// ```
/// Must be invoked in a direct child module of `ifc` (paths are `super::`-relative).
macro_rules! prm_struct {
    ($(#[$m:meta])* pub mod $modname:ident / $table:ident = $prm:literal, $bits:literal {
        $( $(#[$fm:meta])* $fname:ident : $hname:literal @ $off:literal , $w:literal ; )*
    }) => {
        $(#[$m])*
        // The whole PRM structure, as the emulator and the header check use it; the
        // driver reads or writes only some of its fields.
        #[cfg_attr(CONFIG_RUST, expect(dead_code, reason = "emulator uses every field"))]
        pub mod $modname {
            use super::super::field::Field;
            /// PRM structure name.
            pub const PRM: &str = $prm;
            /// Size in bits.
            pub const BITS: u32 = $bits;
            /// Size in bytes.
            pub const BYTES: usize = ($bits / 8) as usize;
            $( $(#[$fm])* pub const $fname: Field = Field::new($prm, $hname, $off, $w); )*
        }
        $(#[$m])*
        #[cfg(not(CONFIG_RUST))]
        pub const $table: super::field::PrmStruct = super::field::PrmStruct {
            name: $prm,
            bits: $bits,
            fields: &[ $( $modname::$fname, )* ],
        };
    };
}
