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
        let n = bytes.len();
        if n <= 8 {
            // Within 8 bytes (every field but an unaligned one of 58 bits or more).
            let mut w = [0u8; 8];
            w[8 - n..].copy_from_slice(bytes);
            return Some((u64::from_be_bytes(w) >> tail) & self.max());
        }
        let mut acc: u128 = 0;
        for b in bytes {
            acc = (acc << 8) | u128::from(*b);
        }
        Some(((acc >> tail) as u64) & self.max())
    }

    /// Reads the field as `u32`, `None` if it is wider than 32 bits.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "used by the emulator's tests")
    )]
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
        let n = bytes.len();
        if tail == 0 && self.bits & 7 == 0 {
            // Whole bytes (byte-aligned at both ends): the value's last `n` bytes.
            bytes.copy_from_slice(&val.to_be_bytes()[8 - n..]);
            return Some(());
        }
        if n <= 8 {
            let mut w = [0u8; 8];
            w[8 - n..].copy_from_slice(bytes);
            let mask = self.max() << tail;
            let acc = (u64::from_be_bytes(w) & !mask) | (val << tail);
            bytes.copy_from_slice(&acc.to_be_bytes()[8 - n..]);
            return Some(());
        }
        let mut acc: u128 = 0;
        for b in bytes.iter() {
            acc = (acc << 8) | u128::from(*b);
        }
        let mask = u128::from(self.max()) << tail;
        acc = (acc & !mask) | (u128::from(val) << tail);
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (acc >> (8 * (n - 1 - i))) as u8;
        }
        Some(())
    }

    /// The bytes of a byte-aligned field (e.g. a nested structure or an array).
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "used by the emulator and the host tests")
    )]
    pub fn bytes<'a>(&self, buf: &'a [u8]) -> Option<&'a [u8]> {
        if self.bit_off & 7 != 0 || self.bits & 7 != 0 {
            return None;
        }
        buf.get(self.byte_off()..self.byte_off() + self.byte_len())
    }

    /// Mutable bytes of a byte-aligned field.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "used by the emulator and the host tests")
    )]
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

/// The Rust type a field is read and written as: its width must fit, which
/// [`F::new`] checks at compile time (every field is a `const`).
pub trait Kind {
    /// Whether the field is a scalar (read and written as a value) rather than bytes.
    const SCALAR: bool;
    /// Fewest bits a field of this type may have.
    const MIN_BITS: u32;
    /// Most bits a field of this type may have.
    const MAX_BITS: u32;
}

/// A scalar field type: `bool`, `u8`, `u16`, `u32`, `u64` or `i32` (a signed 32-bit
/// count such as `num_pages`).
pub trait Value: Kind + Copy {
    /// The value as the raw bits written to the field.
    fn to_raw(self) -> u64;
    /// The value of raw bits read from a field (at most [`Kind::MAX_BITS`] wide).
    fn from_raw(raw: u64) -> Self;
}

macro_rules! unsigned_value {
    ($($t:ty),*) => {$(
        impl Kind for $t {
            const SCALAR: bool = true;
            const MIN_BITS: u32 = 1;
            const MAX_BITS: u32 = <$t>::BITS;
        }
        impl Value for $t {
            fn to_raw(self) -> u64 {
                u64::from(self)
            }
            fn from_raw(raw: u64) -> Self {
                // CAST: `F::new` checked that the field is at most `<$t>::BITS` wide, so
                // a value read from it fits; a wider `raw` is truncated, never a panic.
                raw as $t
            }
        }
    )*};
}
unsigned_value!(u8, u16, u32, u64);

impl Kind for bool {
    const SCALAR: bool = true;
    const MIN_BITS: u32 = 1;
    const MAX_BITS: u32 = 1;
}

impl Value for bool {
    fn to_raw(self) -> u64 {
        u64::from(self)
    }
    fn from_raw(raw: u64) -> Self {
        raw != 0
    }
}

impl Kind for i32 {
    const SCALAR: bool = true;
    // Exactly 32 bits: the sign is the field's top bit.
    const MIN_BITS: u32 = 32;
    const MAX_BITS: u32 = 32;
}

impl Value for i32 {
    fn to_raw(self) -> u64 {
        u64::from(u32::from_ne_bytes(self.to_ne_bytes()))
    }
    fn from_raw(raw: u64) -> Self {
        // The field is exactly 32 bits (checked by `F::new`): the low 32 bits of `raw`.
        let low = raw.to_be_bytes();
        i32::from_be_bytes([low[4], low[5], low[6], low[7]])
    }
}

/// A byte-aligned field read and written as bytes: a nested structure, an array, or a
/// flexible array (width 0: everything from its offset to the end of the buffer).
#[derive(Clone, Copy, Debug)]
pub struct Bytes;

impl Kind for Bytes {
    const SCALAR: bool = false;
    const MIN_BITS: u32 = 0;
    const MAX_BITS: u32 = u32::MAX;
}

/// A PRM structure as a type, so that a field of one structure cannot be used on a
/// buffer of another (each `prm_struct!` module declares its `Layout`).
pub trait Layout {
    /// PRM structure name.
    const PRM: &'static str;
    /// Size in bits.
    const BITS: u32;
    /// Size in bytes.
    const BYTES: usize = (Self::BITS / 8) as usize;
}

/// A field of structure `S` read and written as `T`.
pub struct F<T, S> {
    field: Field,
    _p: core::marker::PhantomData<fn() -> (T, S)>,
}

impl<T, S> Clone for F<T, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, S> Copy for F<T, S> {}

impl<T: Kind, S: Layout> F<T, S> {
    /// Declares a field; fails to compile (const evaluation) when the width does not
    /// fit `T`, a byte field is not byte aligned, or the field overruns `S`.
    pub const fn new(prm: &'static str, name: &'static str, bit_off: u32, bits: u32) -> Self {
        if T::SCALAR {
            assert!(
                bits >= T::MIN_BITS && bits <= T::MAX_BITS,
                "field width does not fit its type"
            );
        } else {
            assert!(
                bit_off & 7 == 0 && bits & 7 == 0,
                "byte field not byte aligned"
            );
        }
        assert!(bit_off + bits <= S::BITS, "field overruns its structure");
        F {
            field: Field::new(prm, name, bit_off, bits),
            _p: core::marker::PhantomData,
        }
    }
}

impl<T: Kind, N: Layout> F<T, N> {
    /// This field of structure `N` where `N` is embedded in structure `S` as byte field
    /// `outer` (e.g. an `ads` field inside `qpc.primary_address_path`). Fails to
    /// compile (const evaluation) when `outer` is not exactly an `N`: use it in a
    /// `const`.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "used by the emulator and the header test")
    )]
    pub const fn within<S: Layout>(self, outer: F<Bytes, S>) -> F<T, S> {
        assert!(
            outer.field.bits == N::BITS,
            "the byte field does not hold the nested structure"
        );
        F {
            field: Field::new(
                S::PRM,
                self.field.name,
                outer.field.bit_off + self.field.bit_off,
                self.field.bits,
            ),
            _p: core::marker::PhantomData,
        }
    }
}

impl<T, S> F<T, S> {
    /// The untyped descriptor (tables, header checks, the emulator).
    pub const fn raw(&self) -> Field {
        self.field
    }
}

impl<T, S> From<F<T, S>> for Field {
    fn from(f: F<T, S>) -> Field {
        f.field
    }
}

/// A field of a structure the device exposes as big-endian 32-bit registers (the
/// initialization segment), placed in the register that holds it: the register's byte
/// offset, and the field's bits in the register's value as read (CPU order, after the
/// big-endian swap).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegField<T> {
    /// Byte offset of the register from the start of the structure.
    pub off: usize,
    shift: u32,
    mask: u32,
    _t: core::marker::PhantomData<fn() -> T>,
}

impl<T: Kind> RegField<T> {
    /// A field of `bits` bits whose least significant bit is bit `shift` of the register
    /// at byte offset `off`. Fails to compile (const evaluation) when the field leaves
    /// the register or does not fit `T`. Use [`F::reg`] for a field of a table; this is
    /// for the few fields upstream reads wider than `mlx5_ifc.h` declares them.
    pub const fn at(off: usize, shift: u32, bits: u32) -> Self {
        assert!(off & 3 == 0, "register not 32-bit aligned");
        assert!(bits >= 1 && shift + bits <= 32, "field leaves its register");
        assert!(
            T::SCALAR && bits >= T::MIN_BITS && bits <= T::MAX_BITS,
            "field width does not fit its type"
        );
        RegField {
            off,
            shift,
            mask: if bits == 32 {
                u32::MAX
            } else {
                (1 << bits) - 1
            },
            _t: core::marker::PhantomData,
        }
    }

    /// Bit position of the field's least significant bit in the register.
    pub const fn shift(&self) -> u32 {
        self.shift
    }

    /// The field's bits in the register.
    pub const fn bits_mask(&self) -> u32 {
        self.mask << self.shift
    }
}

impl<T: Value> RegField<T> {
    /// The field's value in the register value `reg`.
    pub fn get(&self, reg: u32) -> T {
        T::from_raw(u64::from((reg >> self.shift) & self.mask))
    }

    /// `reg` with the field set to `v`, the other bits kept; `None` if `v` does not fit.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
        expect(dead_code, reason = "used by the emulator and the host tests")
    )]
    pub fn put(&self, reg: u32, v: T) -> Option<u32> {
        let raw = u32::try_from(v.to_raw()).ok().filter(|r| *r <= self.mask)?;
        Some((reg & !self.bits_mask()) | (raw << self.shift))
    }
}

impl<T: Kind, S: Layout> F<T, S> {
    /// The field as a register field. Fails to compile (const evaluation) when the
    /// field spans two 32-bit registers; use it in a `const`.
    pub const fn reg(&self) -> RegField<T> {
        let f = self.field;
        assert!(f.bit_off % 32 + f.bits <= 32, "field spans two registers");
        RegField::at(
            (f.bit_off / 32 * 4) as usize,
            32 - f.bit_off % 32 - f.bits,
            f.bits,
        )
    }
}

/// A value does not fit the field it is written to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow(pub Field);

/// A read-only view of a buffer holding structure `S`: at least `S::BYTES` long, so
/// reading a scalar field of `S` cannot fail.
pub struct Msg<'a, S> {
    buf: &'a [u8],
    _s: core::marker::PhantomData<S>,
}

impl<'a, S: Layout> Msg<'a, S> {
    /// `None` when `buf` is shorter than `S`.
    pub fn new(buf: &'a [u8]) -> Option<Self> {
        (buf.len() >= S::BYTES).then_some(Msg {
            buf,
            _s: core::marker::PhantomData,
        })
    }

    /// A view of an array that holds `S` (checked at compile time).
    pub fn of_array<const N: usize>(buf: &'a [u8; N]) -> Self {
        const { assert!(N >= S::BYTES, "array shorter than the structure") };
        Msg {
            buf,
            _s: core::marker::PhantomData,
        }
    }

    /// Reads a scalar field.
    pub fn get<T: Value>(&self, f: F<T, S>) -> T {
        // `F::new` checked 1 ≤ width ≤ 64 and that the field lies inside `S`, `new`
        // that the buffer holds `S`: the read cannot fail, 0 is never substituted.
        T::from_raw(f.field.get(self.buf).unwrap_or(0))
    }

    /// The bytes of a byte field (for a flexible array: up to the end of the buffer).
    pub fn bytes(&self, f: F<Bytes, S>) -> &'a [u8] {
        let at = f.field.byte_off();
        let end = if f.field.bits == 0 {
            self.buf.len()
        } else {
            at + f.field.byte_len()
        };
        // Inside the buffer by construction (see `get`).
        self.buf.get(at..end).unwrap_or(&[])
    }

    /// A nested structure `N` held by byte field `f`; `None` when `f` is shorter.
    pub fn nested<N: Layout>(&self, f: F<Bytes, S>) -> Option<Msg<'a, N>> {
        Msg::new(self.bytes(f))
    }

    /// The whole buffer.
    #[cfg_attr(
        CONFIG_RUST,
        expect(dead_code, reason = "used by the host and emulator tests")
    )]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.buf
    }
}

/// A writable view of a buffer holding structure `S` (at least `S::BYTES` long).
pub struct MsgMut<'a, S> {
    buf: &'a mut [u8],
    _s: core::marker::PhantomData<S>,
}

impl<'a, S: Layout> MsgMut<'a, S> {
    /// `None` when `buf` is shorter than `S`.
    pub fn new(buf: &'a mut [u8]) -> Option<Self> {
        if buf.len() < S::BYTES {
            return None;
        }
        Some(MsgMut {
            buf,
            _s: core::marker::PhantomData,
        })
    }

    /// A view of an array that holds `S` (checked at compile time).
    pub fn of_array<const N: usize>(buf: &'a mut [u8; N]) -> Self {
        const { assert!(N >= S::BYTES, "array shorter than the structure") };
        MsgMut {
            buf,
            _s: core::marker::PhantomData,
        }
    }

    /// Writes a scalar field; [`Overflow`] when `v` does not fit its width.
    pub fn set<T: Value>(&mut self, f: F<T, S>, v: T) -> Result<(), Overflow> {
        // The only failure left is a value wider than the field (see `Msg::get`).
        f.field.set(self.buf, v.to_raw()).ok_or(Overflow(f.field))
    }

    /// Writes a scalar field from any unsigned value: [`Overflow`] when `v` is wider
    /// than the field (never masked). For values whose type is wider than the field's
    /// (a 24-bit number held in a `u32`), which [`Self::set`] takes only as `T`.
    #[cfg_attr(
        all(CONFIG_RUST, not(CONFIG_MLX5_RS_INFINIBAND)),
        expect(dead_code, reason = "used by the InfiniBand provider only")
    )]
    pub fn put<T: Value>(&mut self, f: F<T, S>, v: impl Into<u64>) -> Result<(), Overflow> {
        f.field.set(self.buf, v.into()).ok_or(Overflow(f.field))
    }

    /// Reads a scalar field.
    #[cfg_attr(CONFIG_RUST, expect(dead_code, reason = "API of the host crates"))]
    pub fn get<T: Value>(&self, f: F<T, S>) -> T {
        Msg::<S> {
            buf: self.buf,
            _s: core::marker::PhantomData,
        }
        .get(f)
    }

    /// The bytes of a byte field (for a flexible array: up to the end of the buffer).
    pub fn bytes_mut(&mut self, f: F<Bytes, S>) -> &mut [u8] {
        let at = f.field.byte_off();
        let end = if f.field.bits == 0 {
            self.buf.len()
        } else {
            at + f.field.byte_len()
        };
        self.buf.get_mut(at..end).unwrap_or(&mut [])
    }

    /// A nested structure `N` held by byte field `f`; `None` when `f` is shorter.
    pub fn nested<N: Layout>(&mut self, f: F<Bytes, S>) -> Option<MsgMut<'_, N>> {
        MsgMut::new(self.bytes_mut(f))
    }
}

/// Writes big-endian 64-bit words (`pas[]`, event masks) into a byte field; `None`
/// when they do not fit.
pub fn put_be64s(dst: &mut [u8], words: impl IntoIterator<Item = u64>) -> Option<()> {
    let mut chunks = dst.chunks_exact_mut(8);
    for w in words {
        chunks.next()?.copy_from_slice(&w.to_be_bytes());
    }
    Some(())
}

/// Reads big-endian 64-bit word `i` of a byte field.
pub fn be64_at(src: &[u8], i: usize) -> Option<u64> {
    let at = i.checked_mul(8)?;
    let b: [u8; 8] = src.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_be_bytes(b))
}

/// Declares a PRM structure: a module with a [`Layout`] type and one typed field
/// constant ([`F`]) per field, plus a [`PrmStruct`] table.
///
/// ```ignore
/// prm_struct! {
///     /// ENABLE_HCA input.
///     pub mod enable_hca_in / ENABLE_HCA_IN = "enable_hca_in", 0x80 {
///         OPCODE: "opcode" @ 0x0, 0x10 => u16;
///     }
/// }
/// ```
/// A field's type is `bool`, `u8`, `u16`, `u32`, `u64`, `i32` or `Bytes`; a width that
/// does not fit it fails to compile. Must be invoked in a direct child module of `ifc`
/// (paths are `super::`-relative).
macro_rules! prm_struct {
    ($(#[$m:meta])* pub mod $modname:ident / $table:ident = $prm:literal, $bits:literal {
        $( $(#[$fm:meta])* $fname:ident : $hname:literal @ $off:literal , $w:literal => $t:ty ; )*
    }) => {
        $(#[$m])*
        // The whole PRM structure, as the emulator and the header check use it; the
        // driver reads or writes only some of its fields.
        #[cfg_attr(CONFIG_RUST, expect(dead_code, reason = "emulator uses every field"))]
        pub mod $modname {
            // A structure without byte fields does not name `Bytes` (nor one without
            // fields `F`): which import is unused depends on the invocation.
            #[allow(unused_imports, reason = "depends on the macro invocation's fields")]
            use super::super::field::{Bytes, F};
            /// PRM structure name.
            pub const PRM: &str = $prm;
            /// Size in bits.
            pub const BITS: u32 = $bits;
            /// Size in bytes.
            pub const BYTES: usize = ($bits / 8) as usize;
            /// The structure as a type.
            #[derive(Clone, Copy, Debug)]
            pub struct Layout;
            impl super::super::field::Layout for Layout {
                const PRM: &'static str = $prm;
                const BITS: u32 = $bits;
            }
            $( $(#[$fm])* pub const $fname: F<$t, Layout> = F::new($prm, $hname, $off, $w); )*
        }
        $(#[$m])*
        #[cfg(not(CONFIG_RUST))]
        pub const $table: super::field::PrmStruct = super::field::PrmStruct {
            name: $prm,
            bits: $bits,
            fields: &[ $( $modname::$fname.raw(), )* ],
        };
    };
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ifc_field))]
mod tests {
    use super::*;

    // The PRM's numbering (`mlx5_ifc.h`): bit `i` of a structure is bit `7 - i % 8` of
    // byte `i / 8`, a field's first bit its most significant. One bit at a time.
    fn bit(buf: &[u8], i: u32) -> u64 {
        u64::from(buf[(i / 8) as usize] >> (7 - i % 8) & 1)
    }

    fn put_bit(buf: &mut [u8], i: u32, v: u64) {
        let m = 1u8 << (7 - i % 8);
        let b = &mut buf[(i / 8) as usize];
        *b = if v & 1 != 0 { *b | m } else { *b & !m };
    }

    // Every offset in two bytes and every width, with values of alternating bits over
    // a background of alternating bytes: what set writes and get reads is, bit by bit,
    // the field and nothing else.
    #[test]
    fn set_get_bit_by_bit() {
        for off in 0..16u32 {
            for bits in 1..=64u32 {
                let f = Field::new("t", "t", off, bits);
                for &v in &[0x5555_5555_5555_5555u64, 0xaaaa_aaaa_aaaa_aaaa, u64::MAX] {
                    let v = v & f.max();
                    let mut buf = [0u8; 12];
                    for (i, b) in buf.iter_mut().enumerate() {
                        *b = if i % 2 == 0 { 0xc3 } else { 0x3c };
                    }
                    let mut want = buf;
                    for k in 0..bits {
                        put_bit(&mut want, off + k, v >> (bits - 1 - k));
                    }
                    assert!(f.set(&mut buf, v).is_some());
                    assert!(buf == want);
                    assert!(f.get(&buf) == Some(v));
                    let mut read = 0u64;
                    for k in 0..bits {
                        read = (read << 1) | bit(&buf, off + k);
                    }
                    assert!(read == v);
                }
            }
        }
    }

    // A value wider than the field, or a buffer that ends inside it, writes nothing.
    #[test]
    fn refused_writes_nothing() {
        let f = Field::new("t", "t", 4, 12);
        let mut buf = [0x11u8; 2];
        assert!(f.set(&mut buf, 0x1000).is_none());
        assert!(buf == [0x11, 0x11]);
        let g = Field::new("t", "t", 8, 16);
        assert!(g.set(&mut buf, 1).is_none());
        assert!(g.get(&buf).is_none());
        assert!(buf == [0x11, 0x11]);
    }
}
