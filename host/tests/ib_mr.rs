//! Memory regions (`ib/mr/commands.rs`): access-flag mapping, the driver's checks of
//! reg_user_mr / rereg_user_mr with upstream's errno, translation sizes, keys, and
//! CREATE_MKEY / DESTROY_MKEY encoding, including a translation table spread over
//! several mailbox blocks.

use std::cell::RefCell;

use mlx5_rs_pure::cmd::command::{self, CodecError, Command};
use mlx5_rs_pure::cmd::mailbox::{blocks_needed, locate, Location};
use mlx5_rs_pure::ib::mr::commands::*;
use mlx5_rs_pure::ib::umem::plan::{access, mkey_page_sizes, num_dma_blocks};
use mlx5_rs_pure::ifc::field::{Msg, MsgMut};
use mlx5_rs_pure::ifc::mkey::{create_mkey_in as ci, create_mkey_out, destroy_mkey_in, mkc};

fn input<C: Command>(cmd: &C) -> Vec<u8> {
    let mut b = vec![0u8; command::in_len(cmd)];
    command::encode(cmd, &mut b).unwrap();
    b
}

fn mkc_of(b: &[u8]) -> Msg<'_, mkc::Layout> {
    Msg::<ci::Layout>::new(b)
        .unwrap()
        .nested::<mkc::Layout>(ci::MEMORY_KEY_MKEY_ENTRY)
        .unwrap()
}

fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

const XLT: usize = 0x110;

#[test]
fn access_flags_map_as_upstream() {
    let no_ro = MrCaps::default();
    let a = mkey_access(access::LOCAL_WRITE | access::REMOTE_READ, &no_ro);
    assert_eq!(
        a,
        MkeyAccess {
            lw: true,
            rr: true,
            ..Default::default()
        }
    );
    let all = access::LOCAL_WRITE
        | access::REMOTE_WRITE
        | access::REMOTE_READ
        | access::REMOTE_ATOMIC
        | access::RELAXED_ORDERING;
    let a = mkey_access(all, &no_ro);
    assert!(a.a && a.rw && a.rr && a.lw);
    // Relaxed ordering only where the caps have it.
    assert!(!a.ro_write && !a.ro_read);
    let ro = MrCaps {
        relaxed_write: true,
        relaxed_read: false,
        ..Default::default()
    };
    let a = mkey_access(all, &ro);
    assert!(a.ro_write && !a.ro_read);
    assert!(!mkey_access(access::LOCAL_WRITE, &ro).ro_write);
    // MW_BIND, ZERO_BASED, HUGETLB change no mkey bit.
    assert_eq!(
        mkey_access(access::MW_BIND | access::ZERO_BASED | access::HUGETLB, &ro),
        MkeyAccess::default()
    );
}

#[test]
fn reg_checks_and_errno() {
    assert_eq!(check_reg(0x1000, 4096, access::LOCAL_WRITE), Ok(()));
    assert_eq!(check_reg(0x1000, 0, 0), Err(MrError::Invalid));
    assert_eq!(check_reg(u64::MAX - 4095, 8192, 0), Err(MrError::Invalid));
    assert_eq!(
        check_reg(0x1000, 4096, access::ON_DEMAND),
        Err(MrError::NotSupported)
    );
    assert_eq!(MrError::Invalid.errno().get(), 22);
    assert_eq!(MrError::NotSupported.errno().get(), 95);
    assert_eq!(MrError::NotWritable.errno().get(), 13);
}

#[test]
fn rereg_checks() {
    let lw = access::LOCAL_WRITE;
    // Unknown flag bits.
    assert_eq!(check_rereg(1 << 3, 0, 0, true), Err(MrError::NotSupported));
    // Access only, to writable, over read-only pins: EACCES (ib_umem_check_rereg).
    assert_eq!(
        check_rereg(REREG_ACCESS, lw, 0, false),
        Err(MrError::NotWritable)
    );
    // With a new translation the pages are pinned again: allowed.
    assert_eq!(
        check_rereg(REREG_ACCESS | REREG_TRANS, lw, 0, false),
        Ok(Rereg {
            trans: true,
            access: lw
        })
    );
    // PD only keeps the old access.
    assert_eq!(
        check_rereg(REREG_PD, 0, lw | access::REMOTE_READ, true),
        Ok(Rereg {
            trans: false,
            access: lw | access::REMOTE_READ
        })
    );
    assert_eq!(
        check_rereg(REREG_ACCESS, access::ON_DEMAND, 0, true),
        Err(MrError::NotSupported)
    );
    assert!(access_writable(access::MW_BIND));
    assert!(!access_writable(access::REMOTE_READ));
}

#[test]
fn octwords_and_keys() {
    assert_eq!(octo_len(0, 4096, 12), Some(1));
    assert_eq!(octo_len(0, 8192, 12), Some(1));
    assert_eq!(octo_len(0, 3 * 4096, 12), Some(2));
    // An IOVA inside a page spans one more page.
    assert_eq!(octo_len(0x800, 8192, 12), Some(2));
    assert_eq!(octo_len(0, 1 << 30, 12), Some(131_072));
    assert_eq!(octo_len(0, 1 << 30, 21), Some(256));
    assert_eq!(octo_len(0, u64::MAX, 12), None);
    assert_eq!(octo_len(0, 1 << 50, 12), None);
    assert_eq!(octo_len(0, 1, 64), None);
    // Octwords agree with the block count of the same range.
    for (iova, len, s) in [(0x1234u64, 100_000u64, 12u32), (0x20_0000, 1 << 30, 21)] {
        let blocks = num_dma_blocks(iova, len, 1 << s).unwrap();
        assert_eq!(
            u64::from(octo_len(iova, len, s).unwrap()),
            blocks.div_ceil(2)
        );
    }
    assert_eq!(mkey_of(8, 0x5a), 0x85a);
    assert_eq!(mkey_of(0xff_ffff, 0xff), 0xffff_ffff);
    assert_eq!(mkey_of(0x100_0001, 1), 0x101);
}

#[test]
fn dma_mkey_encoding() {
    let c = CreateDmaMkey {
        pdn: 5,
        access: MkeyAccess {
            lw: true,
            rr: true,
            ..Default::default()
        },
        key: 0x33,
        ats: false,
    };
    let b = input(&c);
    assert_eq!(b.len(), ci::BYTES);
    assert_eq!(u16::from_be_bytes([b[0], b[1]]), 0x200);
    let m = mkc_of(&b);
    assert_eq!(m.get(mkc::ACCESS_MODE_1_0), ACCESS_MODE_PA);
    assert!(m.get(mkc::LENGTH64));
    assert!(m.get(mkc::LR) && m.get(mkc::LW) && m.get(mkc::RR));
    assert!(!m.get(mkc::RW) && !m.get(mkc::A) && !m.get(mkc::UMR_EN));
    assert_eq!(m.get(mkc::PD), 5);
    assert_eq!(m.get(mkc::QPN), 0xff_ffff);
    assert_eq!(m.get(mkc::MKEY_7_0), 0x33);
    assert_eq!(m.get(mkc::START_ADDR), 0);
    // A PD wider than 24 bits is refused before sending.
    let bad = CreateDmaMkey { pdn: 1 << 24, ..c };
    let mut buf = vec![0u8; command::in_len(&bad)];
    assert!(matches!(
        command::encode(&bad, &mut buf),
        Err(CodecError::Overflow(_))
    ));
}

#[test]
fn mtt_mkey_spans_mailbox_blocks() {
    // 301 blocks of 4 KiB from an IOVA 0x800 into its page: 300 pages + 1.
    let (iova, len) = (0x7f00_0000_0800u64, 300 * 4096u64);
    let n = num_dma_blocks(iova, len, 4096).unwrap();
    assert_eq!(n, 301);
    let addrs: Vec<u64> = (0..n).map(|k| 0x1_0000_0000 + k * 0x3000).collect();
    let mut src = SliceBlocks(&addrs);
    let c = CreateMttMkey {
        pdn: 3,
        access: mkey_access(
            access::LOCAL_WRITE | access::REMOTE_WRITE,
            &MrCaps::default(),
        ),
        key: 7,
        iova,
        len,
        page_shift: 12,
        nblocks: n,
        pg: true,
        blocks: RefCell::new(&mut src),
    };
    let b = input(&c);
    // 151 octwords = 302 entries after the 272-byte header.
    assert_eq!(b.len(), XLT + 302 * 8);
    assert!(
        blocks_needed(b.len()) >= 5,
        "the table spans several blocks"
    );
    let m = mkc_of(&b);
    assert_eq!(m.get(mkc::ACCESS_MODE_1_0), ACCESS_MODE_MTT);
    assert!(m.get(mkc::UMR_EN) && m.get(mkc::LW) && m.get(mkc::RW) && m.get(mkc::LR));
    assert!(!m.get(mkc::LENGTH64));
    assert_eq!(m.get(mkc::START_ADDR), iova);
    assert_eq!(m.get(mkc::LEN), len);
    assert_eq!(m.get(mkc::LOG_PAGE_SIZE), 12);
    assert_eq!(m.get(mkc::TRANSLATIONS_OCTWORD_SIZE), 151);
    assert_eq!(m.get(mkc::MKEY_7_0), 7);
    let i = Msg::<ci::Layout>::new(&b).unwrap();
    assert_eq!(i.get(ci::TRANSLATIONS_OCTWORD_ACTUAL_SIZE), 151);
    assert!(i.get(ci::PG_ACCESS));
    // Every entry in place, big-endian, with the present bits; the pad entry zero.
    for (k, a) in addrs.iter().enumerate() {
        assert_eq!(be64(&b, XLT + k * 8), a | MTT_PRESENT, "entry {k}");
    }
    assert_eq!(be64(&b, XLT + 301 * 8), 0);
    // Entries land in different mailbox blocks (the chain the queue builds).
    let first = locate(XLT);
    let last = locate(XLT + 300 * 8);
    match (first, last) {
        (Location::Block { index: a, .. }, Location::Block { index: z, .. }) => assert!(z > a),
        other => panic!("unexpected locations {other:?}"),
    }
    let out = [0u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x2a, 0, 0, 0, 0];
    let idx = command::decode(c, &out).unwrap();
    assert_eq!(idx, 0x2a);
    assert_eq!(create_mkey_out::BYTES, 16);
}

#[test]
fn mtt_mkey_rejects_short_or_mismatched_tables() {
    let addrs = [0x1000u64; 3];
    // The source holds fewer blocks than the range needs.
    let mut src = SliceBlocks(&addrs);
    let c = CreateMttMkey {
        pdn: 1,
        access: MkeyAccess::default(),
        key: 0,
        iova: 0,
        len: 4 * 4096,
        page_shift: 12,
        nblocks: 4,
        pg: false,
        blocks: RefCell::new(&mut src),
    };
    let mut b = vec![0u8; command::in_len(&c)];
    assert_eq!(command::encode(&c, &mut b), Err(CodecError::Short));
    // A block count that does not match the range.
    let mut src = SliceBlocks(&addrs);
    let c = CreateMttMkey {
        nblocks: 3,
        len: 8 * 4096,
        blocks: RefCell::new(&mut src),
        ..c
    };
    let mut b = vec![0u8; command::in_len(&c)];
    assert_eq!(command::encode(&c, &mut b), Err(CodecError::Short));
    // Without cap pg the entries carry no bits, PG_ACCESS clear.
    let addrs = [0x2000u64, 0x5000];
    let mut src = SliceBlocks(&addrs);
    let c = CreateMttMkey {
        pdn: 1,
        access: MkeyAccess::default(),
        key: 0,
        iova: 0,
        len: 8192,
        page_shift: 12,
        nblocks: 2,
        pg: false,
        blocks: RefCell::new(&mut src),
    };
    let b = input(&c);
    assert_eq!(be64(&b, XLT), 0x2000);
    assert_eq!(be64(&b, XLT + 8), 0x5000);
    assert!(!Msg::<ci::Layout>::new(&b).unwrap().get(ci::PG_ACCESS));
    // 2 MiB blocks within the default mkey page sizes.
    assert_ne!(mkey_page_sizes(0, 0, false) & (1 << 21), 0);
}

#[test]
fn destroy_mkey_encoding() {
    let b = input(&DestroyMkey { index: 0x12 });
    assert_eq!(u16::from_be_bytes([b[0], b[1]]), 0x202);
    assert_eq!(
        Msg::<destroy_mkey_in::Layout>::new(&b)
            .unwrap()
            .get(destroy_mkey_in::MKEY_INDEX),
        0x12
    );
    let mut x = vec![0u8; 16];
    let mut m = MsgMut::<destroy_mkey_in::Layout>::new(&mut x).unwrap();
    assert!(m.set(destroy_mkey_in::MKEY_INDEX, 1 << 24).is_err());
}

#[test]
fn memory_window_mkey_as_upstream_alloc_mw() {
    // mlx5_ib_alloc_mw: free, 4-entry KLM table, the PD, umr_en, lr only, en_rinval
    // for type 2 only, qpn 0xffffff, the key variant.
    for (type2, rinval) in [(false, false), (true, true)] {
        let b = input(&CreateFreeMkey {
            pdn: 0x12,
            access: MkeyAccess::default(),
            key: 0x5a,
            ndescs: 4,
            xlt: FreeXlt::Klm { en_rinval: type2 },
        });
        let c = mkc_of(&b);
        assert!(c.get(mkc::FREE));
        assert_eq!(c.get(mkc::TRANSLATIONS_OCTWORD_SIZE), 4);
        assert_eq!(c.get(mkc::PD), 0x12);
        assert!(c.get(mkc::UMR_EN));
        assert!(c.get(mkc::LR));
        assert!(!c.get(mkc::LW) && !c.get(mkc::RR) && !c.get(mkc::RW) && !c.get(mkc::A));
        assert_eq!(c.get(mkc::ACCESS_MODE_1_0), ACCESS_MODE_KLM);
        assert_eq!(c.get(mkc::ACCESS_MODE_4_2), 0);
        assert_eq!(c.get(mkc::EN_RINVAL), rinval);
        // No page size or ATS translation mode (upstream sets neither for a window).
        assert_eq!(c.get(mkc::LOG_PAGE_SIZE), 0);
        assert_eq!(c.get(mkc::MA_TRANSLATION_MODE), 0);
        assert!(!c.get(mkc::RELAXED_ORDERING_WRITE) && !c.get(mkc::RELAXED_ORDERING_READ));
        assert_eq!(c.get(mkc::QPN), 0xff_ffff);
        assert_eq!(c.get(mkc::MKEY_7_0), 0x5a);
        assert_eq!(c.get(mkc::START_ADDR), 0);
        assert_eq!(c.get(mkc::LEN), 0);
        // No translation entries in the command.
        assert_eq!(b.len(), XLT);
    }
}

#[test]
fn free_mtt_mkey_as_upstream_set_umr_free_mkey() {
    // mlx5_set_umr_free_mkey (alloc_mr's IB_MR_TYPE_MEM_REG, MTT): the access of
    // set_mkc_access_pd_addr_fields (lr, relaxed ordering as given), free, the entries
    // as translations_octword_size, MTT mode, umr_en, log_page_size, the PD, qpn
    // 0xffffff, ma_translation_mode = cap ats (MTT and PA modes only), the key variant.
    for (ats, shift) in [(false, 12u8), (true, 21)] {
        let b = input(&CreateFreeMkey {
            pdn: 0x34,
            access: MkeyAccess {
                ro_write: true,
                ..Default::default()
            },
            key: 0xa5,
            ndescs: 64,
            xlt: FreeXlt::Mtt {
                page_shift: shift,
                ats,
            },
        });
        let c = mkc_of(&b);
        assert!(c.get(mkc::FREE));
        assert!(c.get(mkc::UMR_EN));
        assert_eq!(c.get(mkc::TRANSLATIONS_OCTWORD_SIZE), 64);
        assert_eq!(c.get(mkc::ACCESS_MODE_1_0), ACCESS_MODE_MTT);
        assert_eq!(c.get(mkc::ACCESS_MODE_4_2), 0);
        assert_eq!(c.get(mkc::LOG_PAGE_SIZE), shift);
        assert_eq!(c.get(mkc::MA_TRANSLATION_MODE), u8::from(ats));
        assert_eq!(c.get(mkc::PD), 0x34);
        assert_eq!(c.get(mkc::QPN), 0xff_ffff);
        assert_eq!(c.get(mkc::MKEY_7_0), 0xa5);
        assert!(c.get(mkc::LR) && c.get(mkc::RELAXED_ORDERING_WRITE));
        assert!(!c.get(mkc::LW) && !c.get(mkc::RR) && !c.get(mkc::RW) && !c.get(mkc::A));
        assert!(!c.get(mkc::RELAXED_ORDERING_READ));
        // Not a window: no remote invalidation.
        assert!(!c.get(mkc::EN_RINVAL));
        assert_eq!(b.len(), XLT);
    }
}

#[test]
fn alloc_mw_request_and_response_as_upstream() {
    use mlx5_rs_pure::errno::Errno;
    // libmlx5 sends no driver data: 4 entries.
    assert_eq!(parse_alloc_mw(&[]), Ok(4));
    // num_klms rounded up to 4; 0 means one.
    let req = |cm: u32, n: u8, r1: u8, r2: u16| {
        let mut b = cm.to_ne_bytes().to_vec();
        b.extend([n, r1]);
        b.extend(r2.to_ne_bytes());
        b
    };
    assert_eq!(parse_alloc_mw(&req(0, 0, 0, 0)), Ok(4));
    assert_eq!(parse_alloc_mw(&req(0, 5, 0, 0)), Ok(8));
    assert_eq!(parse_alloc_mw(&req(0, 255, 0, 0)), Ok(256));
    let errno = |b: &[u8]| parse_alloc_mw(b).map_err(|e| e.errno);
    // Shorter than the structure (minimum offsetofend(reserved2)): EINVAL.
    assert_eq!(errno(&req(0, 1, 0, 0)[..5]), Err(Errno::EINVAL));
    // comp_mask bits, reserved fields, non-zero bytes past it: EOPNOTSUPP.
    assert_eq!(errno(&req(1, 1, 0, 0)), Err(Errno::EOPNOTSUPP));
    assert_eq!(errno(&req(0, 1, 1, 0)), Err(Errno::EOPNOTSUPP));
    assert_eq!(errno(&req(0, 1, 0, 1)), Err(Errno::EOPNOTSUPP));
    let mut long = req(0, 1, 0, 0);
    long.extend([0, 0, 0, 0]);
    assert_eq!(parse_alloc_mw(&long), Ok(4));
    long.push(7);
    assert_eq!(errno(&long), Err(Errno::EOPNOTSUPP));
    // Response: comp_mask 0, response_length min(outlen, 8); none without room.
    let mut out = [0xffu8; 16];
    assert_eq!(alloc_mw_response(0, &mut out), 0);
    assert_eq!(alloc_mw_response(64, &mut out), 8);
    assert_eq!(out[..4], [0, 0, 0, 0]);
    assert_eq!(u32::from_ne_bytes(out[4..8].try_into().unwrap()), 8);
    assert_eq!(alloc_mw_response(6, &mut out), 8);
    assert_eq!(u32::from_ne_bytes(out[4..8].try_into().unwrap()), 6);
}
