//! Typed commands: input encoding, output decoding and the rejects of device data
//! (`cmd/command.rs`, `cmd/commands.rs`, `eq/commands.rs`).

use mlx5_rs_pure::cmd::command::{self, CodecError, Command};
use mlx5_rs_pure::cmd::commands::*;
use mlx5_rs_pure::cmd::status::CmdError;
use mlx5_rs_pure::eq::commands::*;
use mlx5_rs_pure::errno::Errno;
use mlx5_rs_pure::ifc::caps::cmd_hca_cap;
use mlx5_rs_pure::ifc::field::{Msg, MsgMut};
use mlx5_rs_pure::ifc::pages::query_pages_out;

/// The input bytes of `cmd` as the exec path builds them.
fn input<C: Command>(cmd: &C) -> Vec<u8> {
    let mut b = vec![0u8; command::in_len(cmd)];
    command::encode(cmd, &mut b).unwrap();
    b
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

/// The errno a decode failure is reported with.
fn errno_of(e: CodecError) -> Errno {
    CmdError::new(0, 0, e.kind()).errno()
}

#[test]
fn header_carries_opcode_and_op_mod() {
    let i = input(&Nop);
    assert_eq!(i.len(), 16);
    assert_eq!(be16(&i, 0), 0x80d);
    assert_eq!(be16(&i, 6), 0);
    let q = QueryPages {
        op_mod: 2,
        embedded_cpu: true,
    };
    let i = input(&q);
    assert_eq!(be16(&i, 0), 0x107);
    assert_eq!(be16(&i, 6), 2);
    assert_eq!(i[8], 0x80, "embedded_cpu_function is bit 0x40");
    assert_eq!(command::out_len(&Nop), 16, "at least the inline output");
}

#[test]
fn hca_commands_encode() {
    let i = input(&EnableHca { embedded_cpu: true });
    assert_eq!((be16(&i, 0), i[8]), (0x104, 0x80));
    let i = input(&DisableHca {
        embedded_cpu: false,
    });
    assert_eq!((be16(&i, 0), i[8]), (0x105, 0));
    let i = input(&SetIssi { issi: 1 });
    assert_eq!((be16(&i, 0), be16(&i, 10)), (0x10b, 1));
    let id = [0x11u8; 16];
    let i = input(&InitHca {
        sw_owner_id: Some(&id),
    });
    assert_eq!(be16(&i, 0), 0x102);
    assert_eq!(&i[0x10..0x20], &id);
    let i = input(&InitHca { sw_owner_id: None });
    assert!(i[0x10..0x20].iter().all(|b| *b == 0));
    for profile in [0u16, 1, 2] {
        let i = input(&TeardownHca { profile });
        assert_eq!((be16(&i, 0), be16(&i, 10)), (0x103, profile));
    }
}

#[test]
fn teardown_state_and_query_pages_decode() {
    let mut o = [0u8; 16];
    o[15] = 1;
    assert_eq!(command::decode(TeardownHca { profile: 1 }, &o), Ok(1));
    o[15] = 0;
    assert_eq!(command::decode(TeardownHca { profile: 1 }, &o), Ok(0));
    let mut o = [0u8; query_pages_out::BYTES];
    o[12..16].copy_from_slice(&(-16i32).to_be_bytes());
    let q = || QueryPages {
        op_mod: 1,
        embedded_cpu: false,
    };
    assert_eq!(command::decode(q(), &o), Ok(-16), "num_pages is signed");
    o[12..16].copy_from_slice(&1088i32.to_be_bytes());
    assert_eq!(command::decode(q(), &o), Ok(1088));
    assert_eq!(
        command::decode(q(), &o[..8]),
        Err(CodecError::BadOutput),
        "short output"
    );
}

#[test]
fn query_issi_reads_supported_bitmap() {
    let mut o = [0u8; 0x70];
    o[0x6c..0x70].copy_from_slice(&3u32.to_be_bytes());
    assert_eq!(command::decode(QueryIssi, &o), Ok(3));
    assert_eq!(input(&QueryIssi).len(), 16);
}

#[test]
fn give_pages_layout() {
    let addrs = [0x1000u64, 0x2000, 0xdead_b000];
    let g = GivePages {
        function_id: 0,
        embedded_cpu: true,
        addrs: &addrs,
    };
    let i = input(&g);
    assert_eq!(i.len(), 16 + 8 * 3);
    assert_eq!((be16(&i, 0), be16(&i, 6)), (0x108, 1));
    assert_eq!(i[8], 0x80);
    assert_eq!(be32(&i, 12), 3);
    for (k, a) in addrs.iter().enumerate() {
        assert_eq!(be64(&i, 16 + 8 * k), *a);
    }
    let f = input(&PagesAllocFailed {
        function_id: 5,
        embedded_cpu: false,
    });
    assert_eq!((be16(&f, 6), be16(&f, 10), be32(&f, 12)), (0, 5, 0));
}

impl PageSinkVec {
    fn new() -> Self {
        PageSinkVec(Vec::new())
    }
}

struct PageSinkVec(Vec<u64>);

impl PageSink for PageSinkVec {
    fn reserve(&mut self, n: usize) -> Result<(), CodecError> {
        self.0.reserve(n);
        Ok(())
    }
    fn push(&mut self, a: u64) -> Result<(), CodecError> {
        self.0.push(a);
        Ok(())
    }
}

fn take_output(n: u32, addrs: &[u64], cap: usize) -> Vec<u8> {
    let mut o = vec![0u8; 16 + 8 * cap];
    o[8..12].copy_from_slice(&n.to_be_bytes());
    for (k, a) in addrs.iter().enumerate() {
        o[16 + 8 * k..24 + 8 * k].copy_from_slice(&a.to_be_bytes());
    }
    o
}

#[test]
fn take_pages_decodes_and_rejects() {
    let mut sink = PageSinkVec::new();
    let t = TakePages {
        function_id: 0,
        embedded_cpu: false,
        max: 4,
        sink: &mut sink,
    };
    assert_eq!(t.out_len(), 16 + 32);
    let i = input(&t);
    assert_eq!((be16(&i, 6), be32(&i, 12)), (2, 4));
    let o = take_output(2, &[0x5000, 0x6000], 4);
    assert_eq!(command::decode(t, &o), Ok(2));
    assert_eq!(sink.0, [0x5000, 0x6000]);

    // More than asked for: EPROTO, nothing stored.
    let mut sink = PageSinkVec::new();
    let t = TakePages {
        function_id: 0,
        embedded_cpu: false,
        max: 4,
        sink: &mut sink,
    };
    let o = take_output(5, &[1, 2, 3, 4, 5], 5);
    let e = command::decode(t, &o).unwrap_err();
    assert_eq!(e, CodecError::BadOutput);
    assert_eq!(errno_of(e), Errno::EPROTO);
    assert!(sink.0.is_empty());

    // A count the output cannot hold (short buffer): rejected, not a panic.
    let mut sink = PageSinkVec::new();
    let t = TakePages {
        function_id: 0,
        embedded_cpu: false,
        max: 4,
        sink: &mut sink,
    };
    let o = take_output(3, &[1], 1);
    assert_eq!(command::decode(t, &o), Err(CodecError::BadOutput));
}

#[test]
fn general_caps_query_set_roundtrip() {
    assert_eq!(QueryGeneralCaps { current: true }.op_mod(), 1);
    assert_eq!(QueryGeneralCaps { current: false }.op_mod(), 0);
    // A QUERY_HCA_CAP output: header, cmd_hca_cap, then a non-zero reserved tail.
    let mut o = vec![0u8; 0x10 + 4096];
    for (k, b) in o[0x10..].iter_mut().enumerate() {
        *b = (k % 251) as u8 | 1;
    }
    let mut caps = command::decode(QueryGeneralCaps { current: true }, &o).unwrap();
    assert_eq!(&caps.as_bytes()[..], &o[0x10..0x10 + 256]);
    caps.set(cmd_hca_cap::LOG_MAX_QP, 18).unwrap();
    assert_eq!(caps.get(cmd_hca_cap::LOG_MAX_QP), 18);
    // 5-bit field: 32 does not fit, and the old value stays.
    assert!(caps.set(cmd_hca_cap::LOG_MAX_QP, 32).is_err());
    assert_eq!(caps.get(cmd_hca_cap::LOG_MAX_QP), 18);
    caps.set(cmd_hca_cap::RELEASE_ALL_PAGES, true).unwrap();
    assert!(caps.get(cmd_hca_cap::RELEASE_ALL_PAGES));

    let i = input(&SetGeneralCaps(&caps));
    assert_eq!(i.len(), 0x10 + 4096);
    assert_eq!((be16(&i, 0), be16(&i, 6)), (0x109, 0));
    assert_eq!(&i[0x10..0x110], &caps.as_bytes()[..]);
    assert!(
        i[0x110..].iter().all(|b| *b == 0),
        "only cmd_hca_cap is sent, the rest of the area is zero"
    );
    assert!(command::decode(QueryGeneralCaps { current: true }, &o[..0x10 + 100]).is_err());
}

#[test]
fn driver_version_is_truncated_and_terminated() {
    let i = input(&SetDriverVersion { version: "0.1.0" });
    let s = b"Linux,mlx5_rs,0.1.0";
    assert_eq!(&i[0x10..0x10 + s.len()], s);
    assert_eq!(i[0x10 + s.len()], 0);
    let long = "x".repeat(200);
    let i = input(&SetDriverVersion { version: &long });
    assert_eq!(i.len(), 0x50);
    assert_eq!(i[0x4f], 0, "last byte stays NUL");
    assert_eq!(i[0x4e], b'x');
}

#[test]
fn board_id_keeps_printable_ascii() {
    let mut o = vec![0u8; 0x110];
    let psid_at = 0x10 + 0xf0;
    o[psid_at..psid_at + 4].copy_from_slice(b"MT_\x01");
    let id = command::decode(QueryBoardId, &o).unwrap();
    assert_eq!(&id[..4], b"MT_\0");
    assert!(command::decode(QueryBoardId, &o[..0x20]).is_err());
}

#[test]
fn uar_commands() {
    let mut o = [0u8; 16];
    o[9..12].copy_from_slice(&[0, 0, 7]);
    assert_eq!(command::decode(AllocUar, &o), Ok(7));
    o[9..12].copy_from_slice(&[1, 0, 0]);
    let e = command::decode(AllocUar, &o).unwrap_err();
    assert_eq!(errno_of(e), Errno::EPROTO, "index beyond MAX_UAR");
    let i = input(&DeallocUar { uar: 0x12_3456 });
    assert_eq!(be16(&i, 0), 0x803);
    assert_eq!(&i[9..12], &[0x12, 0x34, 0x56]);
    // A 25-bit value does not fit the 24-bit field: not sent.
    let mut b = [0u8; 16];
    let e = command::encode(&DeallocUar { uar: 1 << 24 }, &mut b).unwrap_err();
    assert!(matches!(e, CodecError::Overflow(_)));
    assert_eq!(errno_of(e), Errno::EINVAL);
}

#[test]
fn eq_commands() {
    let pages = [0x10_0000u64, 0x20_0000];
    let c = CreateEq {
        log_size: 8,
        uar: 3,
        vector: 2,
        mask: [0x400, 0, 0, 1],
        pages: &pages,
    };
    let i = input(&c);
    assert_eq!(i.len(), 0x110 + 16);
    assert_eq!(be16(&i, 0), 0x301);
    // eqc at 0x10: log_eq_size bits 0x63 (dword 3 bits 28:24), uar_page 0x68,
    // intr 0xb4 (dword 5 bits 11:0).
    assert_eq!(be32(&i, 0x10 + 12), (8 << 24) | 3);
    assert_eq!(be32(&i, 0x10 + 20) & 0xfff, 2);
    assert_eq!(be64(&i, 0x58), 0x400);
    assert_eq!(be64(&i, 0x70), 1);
    assert_eq!((be64(&i, 0x110), be64(&i, 0x118)), (0x10_0000, 0x20_0000));
    let mut o = [0u8; 16];
    o[11] = 9;
    assert_eq!(command::decode(c, &o), Ok(9));
    let mut bad = [0u8; 0x120];
    let e = command::encode(
        &CreateEq {
            log_size: 32,
            uar: 0,
            vector: 0,
            mask: [0; 4],
            pages: &[],
        },
        &mut bad,
    )
    .unwrap_err();
    assert!(matches!(e, CodecError::Overflow(f) if f.name == "log_eq_size"));

    let i = input(&DestroyEq { eqn: 7 });
    assert_eq!((be16(&i, 0), i[11]), (0x302, 7));
    let mut eqe = [0u8; 64];
    eqe[1] = 0x0a;
    eqe[63] = 1;
    let i = input(&GenEqe { eqn: 4, eqe: &eqe });
    assert_eq!((be16(&i, 0), i[11]), (0x304, 4));
    assert_eq!(&i[0x10..0x50], &eqe);
}

#[test]
fn typed_views_refuse_short_buffers() {
    let b = [0u8; 4];
    assert!(Msg::<query_pages_out::Layout>::new(&b).is_none());
    let mut b = [0u8; 4];
    assert!(MsgMut::<query_pages_out::Layout>::new(&mut b).is_none());
    let mut b = [0u8; 8];
    assert_eq!(
        command::encode(&Nop, &mut b[..4]),
        Err(CodecError::Short),
        "not even the header fits"
    );
}

#[test]
fn offsets_derived_from_tables() {
    use mlx5_rs_pure::ifc::{caps, eq, pages};
    assert_eq!(
        (eq::EQC_OFFSET, eq::EVENT_BITMASK_OFFSET, eq::PAS_OFFSET),
        (0x10, 0x58, 0x110)
    );
    assert_eq!((pages::PAS_OFFSET, caps::CAP_OFFSET), (0x10, 0x10));
}

#[test]
fn atomic_caps_query_and_set() {
    use mlx5_rs_pure::ifc::caps::atomic_caps;
    // op_mod: the ATOMIC page (3), current in bit 0 (mlx5_ifc.h MLX5_CAP_ATOMIC).
    assert_eq!(QueryAtomicCaps { current: true }.op_mod(), (3 << 1) | 1);
    assert_eq!(QueryAtomicCaps { current: false }.op_mod(), 3 << 1);
    let mut o = vec![0u8; 0x10 + 4096];
    {
        let mut c = MsgMut::<atomic_caps::Layout>::new(&mut o[0x10..]).unwrap();
        c.set(atomic_caps::ATOMIC_OPERATIONS, 0x000fu16).unwrap();
        c.set(atomic_caps::ATOMIC_SIZE_QP, 0x0008u16).unwrap();
        c.set(atomic_caps::ATOMIC_SIZE_DC, 0x0030u16).unwrap();
        c.set(atomic_caps::SUPPORTED_ATOMIC_REQ_8B_ENDIANNESS_MODE_1, true)
            .unwrap();
    }
    let a = command::decode(QueryAtomicCaps { current: true }, &o).unwrap();
    assert_eq!(
        a,
        AtomicCaps {
            operations: 0xf,
            size_qp: 8,
            req_8b_endianness_mode: 0,
            host_endianness_supported: true,
        }
    );
    // Byte offsets of the PRM (mlx5_ifc.h atomic_caps): mode at bit 0x40, operations
    // at 0x90, size_qp at 0xb0.
    o[0x10 + 0x8] = 0x40;
    let a = command::decode(QueryAtomicCaps { current: true }, &o).unwrap();
    assert_eq!(a.req_8b_endianness_mode, 1);
    assert_eq!(be16(&o, 0x10 + 0x12), 0xf);
    assert_eq!(be16(&o, 0x10 + 0x16), 8);
    assert!(command::decode(QueryAtomicCaps { current: true }, &o[..0x10 + 100]).is_err());

    let i = input(&SetAtomicCaps {
        req_8b_endianness_mode: ATOMIC_REQ_MODE_HOST_ENDIANNESS,
    });
    assert_eq!(i.len(), 0x10 + 4096);
    // SET_HCA_CAP (0x109), op_mod ATOMIC << 1 (upstream MLX5_SET_HCA_CAP_OP_MOD_ATOMIC).
    assert_eq!((be16(&i, 0), be16(&i, 6)), (0x109, 3 << 1));
    assert_eq!(i[0x10 + 0x8], 0x40, "mode 1 in the top two bits of byte 8");
    let mut rest = i[0x10..].to_vec();
    rest[0x8] = 0;
    assert!(rest.iter().all(|b| *b == 0), "every other byte zero");
    assert!(SetAtomicCaps {
        req_8b_endianness_mode: 4
    }
    .build(&mut MsgMut::new(&mut vec![0u8; 0x10 + 4096]).unwrap())
    .is_err());
}

/// MFRL and MCAM through ACCESS_REG, at the offsets of `mlx5_ifc.h` (register data at
/// byte 0x10; `mlx5_ifc_mfrl_reg_bits`: start bit 0x22, resp 0x23-0x24, method
/// 0x28-0x2a, reset_state 0x2c-0x2f, reset_type byte 6, reset_level byte 7;
/// `mlx5_ifc_mcam_reg_bits`: the access-register mask at bit 0x40, its `mfrl` bit 0x57).
#[test]
fn sync_reset_registers() {
    use mlx5_rs_pure::health::sync_reset::MfrlState;
    for (ack, resp) in [(true, 1u8), (false, 2u8)] {
        let i = input(&AnswerMfrl { ack });
        assert_eq!(be16(&i, 0), 0x805, "ACCESS_REG");
        assert_eq!(be16(&i, 6), 0, "op_mod write");
        assert_eq!(be16(&i, 10), 0x9028, "register MFRL");
        assert_eq!(i[0x10 + 4], resp << 3, "response, no start");
        assert_eq!(i[0x10 + 7], 0x08, "reset level 3");
        assert_eq!(i.len(), 0x10 + 0x8);
    }
    let i = input(&QueryMfrl);
    assert_eq!((be16(&i, 6), be16(&i, 10)), (1, 0x9028));
    let mut o = vec![0u8; 0x10 + 8];
    o[0x15] = (1 << 5) | 4;
    o[0x16] = 0x01;
    o[0x17] = 0x08;
    assert_eq!(
        command::decode(QueryMfrl, &o),
        Ok(MfrlState {
            reset_level: 0x08,
            reset_type: 0x01,
            reset_state: 4,
            method: 1
        })
    );
    assert_eq!(
        command::decode(QueryMfrl, &o[..0x12]),
        Err(CodecError::BadOutput),
        "short output"
    );
    let i = input(&QueryMcamMfrl);
    assert_eq!((be16(&i, 6), be16(&i, 10)), (1, 0x907f));
    let mut o = vec![0u8; 0x10 + 72];
    assert_eq!(command::decode(QueryMcamMfrl, &o), Ok(false));
    o[0x10 + 8 + 0x57 / 8] = 1 << (7 - 0x57 % 8);
    assert_eq!(command::decode(QueryMcamMfrl, &o), Ok(true));
    assert_eq!(
        command::decode(QueryMcamMfrl, &o[..0x10 + 8]),
        Err(CodecError::BadOutput),
        "short output"
    );
}
