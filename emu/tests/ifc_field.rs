//! The `ifc` bit-field accessors: PRM bit numbering, widths up to 64, short buffers
//! and out-of-range values never panic.

use mlx5_emu::ifc::field::Field;
use mlx5_emu::ifc::opcodes::{opcode_name, Opcode};
use mlx5_emu::ifc::status::{CmdStatus, DeliveryStatus};

#[test]
fn prm_bit_numbering() {
    let mut b = [0u8; 16];
    // eqc.log_eq_size: bit 0x63, 5 bits = dword 3 bits 28:24.
    let f = Field::new("eqc", "log_eq_size", 0x63, 5);
    f.set(&mut b, 0x1f).unwrap();
    assert_eq!(
        u32::from_be_bytes([b[12], b[13], b[14], b[15]]),
        0x1f00_0000
    );
    assert_eq!(f.get(&b), Some(0x1f));
    // A field straddling bytes, neighbours untouched.
    let g = Field::new("x", "y", 0x0c, 8);
    b[1] = 0xff;
    g.set(&mut b, 0xa5).unwrap();
    assert_eq!((b[0], b[1], b[2]), (0x00, 0xfa, 0x50));
    assert_eq!(g.get(&b), Some(0xa5));
    // 64-bit fields.
    let q = Field::new("x", "q", 0x40, 64);
    q.set(&mut b, 0x0123_4567_89ab_cdef).unwrap();
    assert_eq!(&b[8..16], &0x0123_4567_89ab_cdefu64.to_be_bytes());
    assert_eq!(q.get(&b), Some(0x0123_4567_89ab_cdef));
    // Unaligned 64-bit field spans 9 bytes.
    let mut c = [0u8; 10];
    let u = Field::new("x", "u", 4, 64);
    u.set(&mut c, u64::MAX).unwrap();
    assert_eq!(c[0], 0x0f);
    assert_eq!(c[8], 0xf0);
    assert_eq!(u.get(&c), Some(u64::MAX));
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let mut short = [0u8; 2];
    let f = Field::new("x", "y", 0x20, 32);
    assert_eq!(f.get(&short), None);
    assert_eq!(f.set(&mut short, 1), None);
    let narrow = Field::new("x", "n", 0, 3);
    let mut b = [0u8; 4];
    assert_eq!(narrow.set(&mut b, 8), None, "value does not fit");
    assert_eq!(Field::new("x", "wide", 0, 128).get(&b), None);
    assert_eq!(Field::new("x", "flex", 0x80, 0).get(&b), None);
    assert_eq!(Field::new("x", "odd", 3, 16).bytes(&b), None);
}

#[test]
fn names_and_decoding() {
    assert_eq!(Opcode::from_raw(0x104), Some(Opcode::ENABLE_HCA));
    assert_eq!(opcode_name(0x80d), "NOP");
    assert_eq!(opcode_name(0x7777), "UNKNOWN");
    assert_eq!(
        DeliveryStatus::from_raw(0x09).map(|s| s.name()),
        Some("RES_FLD_NOT_CLR_ERR")
    );
    assert_eq!(DeliveryStatus::from_raw(0x0b), None);
    assert_eq!(CmdStatus::from_raw(0x51), Some(CmdStatus::BAD_OUTP_LEN_ERR));
    for op in Opcode::ALL {
        assert_eq!(Opcode::from_raw(*op as u16), Some(*op));
    }
}
