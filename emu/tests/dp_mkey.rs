//! Memory keys on the data path (`fw/dp/xlate.rs`, `fw/dp/umr.rs`): mkeys made through
//! CREATE_MKEY as upstream makes them (`mr.c`: `mlx5_ib_get_dma_mr`, the MR cache's
//! free `umr_en` mkeys, `alloc_mr`, `alloc_mw`), translated in every access mode with
//! each failure kind, and UMR WQEs built as upstream's `umr.c` / `wr.c` and rdma-core's
//! `set_bind_wr` build them, from the `ifc::umr` layouts.

mod common;
#[path = "common/verbs.rs"]
mod verbs;

use common::input;
use mlx5_emu::fw::dp::umr::{
    SYNDROME_LOCAL_PROT_ERR, SYNDROME_LOCAL_QP_OP_ERR, SYNDROME_MW_BIND_ERR,
};
use mlx5_emu::fw::dp::xlate::{Access, XlateError, ANY_PD};
use mlx5_emu::fw::Env;
use mlx5_emu::ifc::field::MsgMut;
use mlx5_emu::ifc::mkey::{create_mkey_in as c, create_mkey_out, mkc};
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::qp_state::st;
use mlx5_emu::ifc::umr::{vals as v, Klm, Ksm, MkeySeg, Mtt, UmrCtrlSeg};
use mlx5_emu::ifc::wqe::{WqeCtrlSeg, WqeDataSeg};
use mlx5_emu::mem::GuestMemory;
use verbs::{set_at, Dev};
use zerocopy::IntoBytes;

const PA: u8 = 0;
const MTT: u8 = 1;
const KLM: u8 = 2;
const KSM: u8 = 3;

/// An mkey as CREATE_MKEY gets it.
#[derive(Clone)]
struct Spec {
    mode: u8,
    pd: u32,
    start: u64,
    len: u64,
    length64: bool,
    lw: bool,
    rr: bool,
    rw: bool,
    a: bool,
    free: bool,
    umr_en: bool,
    qpn: u32,
    log_page: u8,
    key_byte: u8,
    /// Table size, octowords (0: as many as `xlt` fills).
    oct_size: u32,
    /// Inline translation entries.
    xlt: Vec<u8>,
    /// CREATE_MKEY `pg_access`.
    pg_access: bool,
}

impl Spec {
    fn new(mode: u8, pd: u32) -> Self {
        Spec {
            mode,
            pd,
            start: 0,
            len: 0,
            length64: false,
            lw: true,
            rr: false,
            rw: false,
            a: false,
            free: false,
            umr_en: false,
            qpn: 0xff_ffff,
            log_page: 12,
            key_byte: 0x42,
            oct_size: 0,
            xlt: Vec::new(),
            pg_access: false,
        }
    }
}

/// Runs CREATE_MKEY; returns the key (`mkey_index << 8 | mkey_7_0`).
fn mkey(d: &mut Dev, s: &Spec) -> u32 {
    let x = c::KLM_PAS_MTT.raw().byte_off();
    let octs = s.xlt.len().div_ceil(16);
    let mut inp = input(
        x + 16 * octs,
        Opcode::CREATE_MKEY as u16,
        0,
        &[(c::TRANSLATIONS_OCTWORD_ACTUAL_SIZE.raw(), octs as u64)],
    );
    let m = c::MEMORY_KEY_MKEY_ENTRY.raw().byte_off();
    set_at(&mut inp, m, mkc::ACCESS_MODE_1_0, u64::from(s.mode));
    set_at(&mut inp, m, mkc::LR, 1);
    set_at(&mut inp, m, mkc::LW, s.lw.into());
    set_at(&mut inp, m, mkc::RR, s.rr.into());
    set_at(&mut inp, m, mkc::RW, s.rw.into());
    set_at(&mut inp, m, mkc::A, s.a.into());
    set_at(&mut inp, m, mkc::FREE, s.free.into());
    set_at(&mut inp, m, mkc::UMR_EN, s.umr_en.into());
    set_at(&mut inp, m, mkc::PD, u64::from(s.pd));
    set_at(&mut inp, m, mkc::QPN, u64::from(s.qpn));
    set_at(&mut inp, m, mkc::MKEY_7_0, u64::from(s.key_byte));
    set_at(&mut inp, m, mkc::LOG_PAGE_SIZE, u64::from(s.log_page));
    set_at(&mut inp, m, mkc::START_ADDR, s.start);
    set_at(&mut inp, m, mkc::LEN, s.len);
    set_at(&mut inp, m, mkc::LENGTH64, s.length64.into());
    let size = if s.oct_size == 0 {
        octs as u64
    } else {
        u64::from(s.oct_size)
    };
    set_at(&mut inp, m, mkc::TRANSLATIONS_OCTWORD_SIZE, size);
    set_at(&mut inp, 0, c::PG_ACCESS, s.pg_access.into());
    inp[x..x + s.xlt.len()].copy_from_slice(&s.xlt);
    let out = d.h.ok(&inp, 16);
    let idx = create_mkey_out::MKEY_INDEX.raw().get(&out).unwrap() as u32;
    idx << 8 | u32::from(s.key_byte)
}

/// `mlx5_ib_get_dma_mr`: PA, `length64`, local write (a PD's `local_dma_lkey`).
fn dma_mr(d: &mut Dev, pd: u32) -> u32 {
    mkey(
        d,
        &Spec {
            length64: true,
            ..Spec::new(PA, pd)
        },
    )
}

fn mtts(pages: &[u64], flags: u64) -> Vec<u8> {
    pages
        .iter()
        .flat_map(|p| {
            let mut m = Mtt::default();
            m.ptag.set(p | flags);
            m.as_bytes().to_vec()
        })
        .collect()
}

fn klms(e: &[(u32, u32, u64)]) -> Vec<u8> {
    e.iter()
        .flat_map(|&(bcount, key, va)| {
            let mut k = Klm::default();
            k.bcount.set(bcount);
            k.key.set(key);
            k.va.set(va);
            k.as_bytes().to_vec()
        })
        .collect()
}

fn ksms(e: &[(u32, u64)]) -> Vec<u8> {
    e.iter()
        .flat_map(|&(key, va)| {
            let mut k = Ksm::default();
            k.key.set(key);
            k.va.set(va);
            k.as_bytes().to_vec()
        })
        .collect()
}

fn xl(
    d: &Dev,
    key: u32,
    va: u64,
    len: u64,
    need: Access,
    pd: u32,
) -> Result<Vec<(u64, u32)>, XlateError> {
    let env = Env {
        mem: &*d.h.dev.mem,
        irq: &*d.h.dev.irq,
        msix_ok: true,
    };
    d.h.dev.fw().translate(&env, key, va, len, need, pd)
}

fn umr(d: &Dev, qpn: u32, key: u32, body: &[u8]) -> Result<(), u8> {
    let env = Env {
        mem: &*d.h.dev.mem,
        irq: &*d.h.dev.irq,
        msix_ok: true,
    };
    let mut ctrl = WqeCtrlSeg {
        opmod_idx_opcode: 0.into(),
        qpn_ds: 0.into(),
        signature: 0,
        rsvd: [0; 2],
        fm_ce_se: 0,
        imm: key.into(),
    };
    ctrl.opmod_idx_opcode.set(u32::from(v::OPCODE_UMR));
    ctrl.qpn_ds
        .set(qpn << 8 | (16 + body.len() as u32).div_ceil(16));
    d.h.dev.fw().exec_umr(&env, qpn, &ctrl, body)
}

/// `n` pages of guest memory, none next to another (so no two pieces merge).
fn spaced_pages(d: &mut Dev, n: usize) -> Vec<u64> {
    (0..n).map(|_| d.h.alloc(8192, 4096)).collect()
}

const RL: Access = Access::LOCAL_READ;
const WL: Access = Access::LOCAL_WRITE;

#[test]
fn pa_mode_translates_to_itself_and_checks_key_pd_and_rights() {
    let mut d = Dev::new();
    let pd = d.pd();
    let other = d.pd();
    let buf = d.h.alloc(8192, 4096);
    let k = dma_mr(&mut d, pd);
    assert_eq!(xl(&d, k, buf + 5, 100, WL, pd), Ok(vec![(buf + 5, 100)]));
    assert_eq!(xl(&d, k, buf, 0, RL, pd), Ok(vec![]));
    assert_eq!(xl(&d, k, buf, 8, RL, ANY_PD), Ok(vec![(buf, 8)]));
    // Key byte, PD, rights.
    assert_eq!(xl(&d, k ^ 1, buf, 8, RL, pd), Err(XlateError::Key));
    assert_eq!(xl(&d, k + 0x100, buf, 8, RL, pd), Err(XlateError::Key));
    assert_eq!(xl(&d, k, buf, 8, RL, other), Err(XlateError::Pd));
    for need in [
        Access::REMOTE_READ,
        Access::REMOTE_WRITE,
        Access::REMOTE_ATOMIC,
    ] {
        assert_eq!(xl(&d, k, buf, 8, need, pd), Err(XlateError::Access));
    }
    let ro = mkey(
        &mut d,
        &Spec {
            length64: true,
            lw: false,
            rr: true,
            ..Spec::new(PA, pd)
        },
    );
    assert_eq!(xl(&d, ro, buf, 8, WL, pd), Err(XlateError::Access));
    assert!(xl(&d, ro, buf, 8, RL | Access::REMOTE_READ, pd).is_ok());
    // Outside guest memory: a DMA error, counted.
    let dma0 = d.h.dev.fw().stats.dma_errors;
    assert_eq!(xl(&d, k, 0x10, 8, RL, pd), Err(XlateError::Dma));
    assert_eq!(d.h.dev.fw().stats.dma_errors, dma0 + 1);
    // Gather / scatter through it.
    let env = Env {
        mem: &*d.h.dev.mem,
        irq: &*d.h.dev.irq,
        msix_ok: true,
    };
    d.h.dev
        .fw()
        .write_virt(&env, k, buf + 4090, b"0123456789", WL, pd)
        .unwrap();
    let mut back = [0u8; 10];
    d.h.mem.read(buf + 4090, &mut back).unwrap();
    assert_eq!(&back, b"0123456789");
    let mut got = [0u8; 4];
    d.h.dev
        .fw()
        .read_virt(&env, k, buf + 4093, &mut got, RL, pd)
        .unwrap();
    assert_eq!(&got, b"3456");
    // A destroyed key is gone; the errors are counted by kind in `stats`.
    let idx = k >> 8;
    let st0 = d.on(
        Opcode::DESTROY_MKEY,
        mlx5_emu::ifc::mkey::destroy_mkey_in::MKEY_INDEX,
        idx,
    );
    assert_eq!(st0, 0);
    assert_eq!(xl(&d, k, buf, 8, RL, pd), Err(XlateError::Key));
    let rep = d.h.dev.fw().dp.xlate.report();
    assert_eq!(rep["errors"]["key"], 3, "{rep}");
    assert_eq!(rep["errors"]["pd"], 1);
    assert_eq!(rep["errors"]["access"], 4);
    assert_eq!(rep["errors"]["dma"], 1);
    let stats = mlx5_emu::report::stats(&d.h.dev);
    assert_eq!(stats["dp"]["mkeys"]["errors"]["key"], 3);
}

#[test]
fn pa_mode_bounds_at_the_edges() {
    let mut d = Dev::new();
    let pd = d.pd();
    let buf = d.h.alloc(4096, 4096);
    let k = mkey(
        &mut d,
        &Spec {
            start: buf + 16,
            len: 64,
            ..Spec::new(PA, pd)
        },
    );
    assert_eq!(xl(&d, k, buf + 16, 64, RL, pd), Ok(vec![(buf + 16, 64)]));
    assert_eq!(xl(&d, k, buf + 79, 1, RL, pd), Ok(vec![(buf + 79, 1)]));
    assert_eq!(xl(&d, k, buf + 15, 1, RL, pd), Err(XlateError::Bounds));
    assert_eq!(xl(&d, k, buf + 16, 65, RL, pd), Err(XlateError::Bounds));
    assert_eq!(xl(&d, k, buf + 80, 1, RL, pd), Err(XlateError::Bounds));
    assert_eq!(xl(&d, k, u64::MAX, 2, RL, pd), Err(XlateError::Bounds));
    assert_eq!(d.h.dev.fw().dp.xlate.errors[3], 4);
}

#[test]
fn mtt_mode_maps_pages_in_table_order_with_the_offset_from_the_address() {
    let mut d = Dev::new();
    let pd = d.pd();
    let pages: Vec<u64> = (0..4).map(|_| d.h.alloc(4096, 4096)).collect();
    // Table order differs from memory order.
    let order = [pages[2], pages[0], pages[3], pages[1]];
    let iova = 0x7f00_0000_0800u64;
    let k = mkey(
        &mut d,
        &Spec {
            start: iova,
            len: 3 * 4096 + 0x800,
            rr: true,
            xlt: mtts(&order, 0),
            ..Spec::new(MTT, pd)
        },
    );
    // Within page 0, across pages 0..2, the last byte.
    assert_eq!(
        xl(&d, k, iova, 16, RL, pd),
        Ok(vec![(order[0] + 0x800, 16)])
    );
    assert_eq!(
        xl(&d, k, iova + 0x700, 0x1200, WL, pd),
        Ok(vec![
            (order[0] + 0xf00, 0x100),
            (order[1], 0x1000),
            (order[2], 0x100)
        ])
    );
    let last = iova + 3 * 4096 + 0x7ff;
    assert_eq!(xl(&d, k, last, 1, RL, pd), Ok(vec![(order[3] + 0xfff, 1)]));
    assert_eq!(xl(&d, k, last + 1, 1, RL, pd), Err(XlateError::Bounds));
    assert_eq!(xl(&d, k, iova - 1, 2, RL, pd), Err(XlateError::Bounds));
    // Contiguous pages come back as one piece.
    let pair = [pages[0], pages[1]];
    let k2 = mkey(
        &mut d,
        &Spec {
            start: 0,
            len: 8192,
            xlt: mtts(&pair, 0),
            ..Spec::new(MTT, pd)
        },
    );
    assert_eq!(xl(&d, k2, 0, 8192, RL, pd), Ok(vec![(pages[0], 8192)]));
    // A length beyond the entries the table holds: no translation.
    let k3 = mkey(
        &mut d,
        &Spec {
            start: 0,
            len: 1 << 40,
            xlt: mtts(&pair, 0),
            ..Spec::new(MTT, pd)
        },
    );
    assert_eq!(xl(&d, k3, 4096, 8192, RL, pd), Err(XlateError::Bounds));
    assert_eq!(xl(&d, k3, 0, 1 << 39, RL, pd), Err(XlateError::Bounds));
    // 2 MiB pages: one entry covers them.
    let k4 = mkey(
        &mut d,
        &Spec {
            start: 0x20_0000,
            len: 0x20_0000,
            log_page: 21,
            xlt: mtts(&[pages[0] & !0x1f_ffff], 0),
            ..Spec::new(MTT, pd)
        },
    );
    let off = pages[0] & 0x1f_ffff;
    assert_eq!(
        xl(&d, k4, 0x20_0000 + off, 64, RL, pd),
        Ok(vec![(pages[0], 64)])
    );
}

#[test]
fn mtt_enable_bits_count_only_with_pg_access() {
    let mut d = Dev::new();
    let pd = d.pd();
    let p = d.h.alloc(4096, 4096);
    // Without pg_access the low bits are ignored (upstream's non-ODP tables carry
    // none, `mlx5_ib_populate_pas(..., 0)`).
    let k = mkey(
        &mut d,
        &Spec {
            len: 4096,
            xlt: mtts(&[p], v::MTT_READ),
            ..Spec::new(MTT, pd)
        },
    );
    assert_eq!(xl(&d, k, 0, 8, WL, pd), Ok(vec![(p, 8)]));
    // With pg_access (upstream `MLX5_IB_MTT_PRESENT` under `pg_cap`): a read-only
    // entry is not present for a write, an entry without bits for anything.
    let k = mkey(
        &mut d,
        &Spec {
            len: 8192,
            pg_access: true,
            xlt: [mtts(&[p], v::MTT_READ), mtts(&[p], 0)].concat(),
            ..Spec::new(MTT, pd)
        },
    );
    assert_eq!(xl(&d, k, 0, 8, RL, pd), Ok(vec![(p, 8)]));
    assert_eq!(xl(&d, k, 0, 8, WL, pd), Err(XlateError::Access));
    assert_eq!(xl(&d, k, 4096, 8, RL, pd), Err(XlateError::Access));
}

#[test]
fn klm_mode_concatenates_entries_and_nests_with_a_bound() {
    let mut d = Dev::new();
    let pd = d.pd();
    let a = d.h.alloc(4096, 4096);
    let b = d.h.alloc(4096, 4096);
    let lkey = dma_mr(&mut d, pd);
    // mlx5_ib_sg_to_klms: iova 0x1000, 100 bytes at a+8, 300 at b.
    let k = mkey(
        &mut d,
        &Spec {
            start: 0x1000,
            len: 400,
            rw: true,
            xlt: klms(&[(100, lkey, a + 8), (300, lkey, b)]),
            ..Spec::new(KLM, pd)
        },
    );
    // The indirect key's rights decide (the DMA lkey has no `rw`).
    assert_eq!(
        xl(&d, k, 0x1000 + 90, 20, Access::REMOTE_WRITE, pd),
        Ok(vec![(a + 98, 10), (b, 10)])
    );
    assert_eq!(xl(&d, k, 0x1000 + 399, 1, RL, pd), Ok(vec![(b + 299, 1)]));
    assert_eq!(xl(&d, k, 0x1000 + 399, 2, RL, pd), Err(XlateError::Bounds));
    assert_eq!(
        xl(&d, k, 0x1000, 8, Access::REMOTE_READ, pd),
        Err(XlateError::Access)
    );
    // KLM over KLM.
    let outer = mkey(
        &mut d,
        &Spec {
            start: 0,
            len: 400,
            xlt: klms(&[(400, k, 0x1000)]),
            ..Spec::new(KLM, pd)
        },
    );
    assert_eq!(xl(&d, outer, 96, 8, RL, pd), Ok(vec![(a + 104, 4), (b, 4)]));
    // An entry whose key is gone or free.
    let dead = mkey(
        &mut d,
        &Spec {
            start: 0,
            len: 64,
            xlt: klms(&[(64, 0xdead_0042, 0)]),
            ..Spec::new(KLM, pd)
        },
    );
    assert_eq!(xl(&d, dead, 0, 8, RL, pd), Err(XlateError::Key));
    // An mkey whose entry names itself: refused at the nesting bound, no recursion
    // without end. The key is the next index with the default byte.
    let next = (outer >> 8) + 2;
    let selfref = mkey(
        &mut d,
        &Spec {
            start: 0,
            len: 64,
            xlt: klms(&[(64, next << 8 | 0x42, 0)]),
            ..Spec::new(KLM, pd)
        },
    );
    assert_eq!(selfref >> 8, next);
    assert_eq!(xl(&d, selfref, 0, 8, RL, pd), Err(XlateError::Key));
    let why = d.h.dev.fw().dp.xlate.recent.back().cloned().unwrap();
    assert!(why.contains("nested"), "{why}");
}

#[test]
fn ksm_mode_maps_fixed_entities() {
    let mut d = Dev::new();
    let pd = d.pd();
    let a = d.h.alloc(8192, 4096);
    let lkey = dma_mr(&mut d, pd);
    let k = mkey(
        &mut d,
        &Spec {
            start: 0x10_0000,
            len: 3 * 4096,
            xlt: ksms(&[(lkey, a + 4096), (lkey, a), (lkey, a + 4096)]),
            ..Spec::new(KSM, pd)
        },
    );
    assert_eq!(
        xl(&d, k, 0x10_0ff0, 0x20, RL, pd),
        Ok(vec![(a + 8192 - 0x10, 0x10), (a, 0x10)])
    );
    assert_eq!(xl(&d, k, 0x10_2000, 4097, RL, pd), Err(XlateError::Bounds));
}

#[test]
fn free_mkeys_and_special_keys() {
    let mut d = Dev::new();
    let pd = d.pd();
    let buf = d.h.alloc(4096, 4096);
    let k = mkey(
        &mut d,
        &Spec {
            free: true,
            umr_en: true,
            length64: true,
            ..Spec::new(PA, pd)
        },
    );
    assert_eq!(xl(&d, k, buf, 8, RL, pd), Err(XlateError::Key));
    // The reserved lkey (= terminate-scatter-list key here): physical, local only.
    let resd = v::TERMINATE_SCATTER_LIST_LKEY;
    assert_eq!(xl(&d, resd, buf, 8, WL, pd), Ok(vec![(buf, 8)]));
    assert_eq!(
        xl(&d, resd, buf, 8, Access::REMOTE_READ, pd),
        Err(XlateError::Key)
    );
    // The null mkey and an unused low index.
    assert_eq!(xl(&d, 0x200, buf, 8, RL, pd), Err(XlateError::Key));
    assert_eq!(xl(&d, 0x0, buf, 8, RL, pd), Err(XlateError::Key));
}

// --- UMR -----------------------------------------------------------------------

/// The mkey segment as upstream `umr.c` writes it (`MLX5_SET(mkc, seg, ...)`).
fn mkey_seg(f: impl FnOnce(&mut MsgMut<'_, mkc::Layout>)) -> MkeySeg {
    let mut b = [0u8; 64];
    f(&mut MsgMut::<mkc::Layout>::of_array(&mut b));
    zerocopy::transmute!(b)
}

fn umr_ctrl(flags: u8, mask: u64, octs: u16, offset_octs: u64) -> UmrCtrlSeg {
    let mut u = UmrCtrlSeg {
        flags,
        ..Default::default()
    };
    u.mkey_mask.set(mask);
    u.xlt_octowords.set(octs);
    if flags & v::UMR_TRANSLATION_OFFSET_EN != 0 {
        u.xlt_offset.set(offset_octs as u16);
        u.xlt_offset_47_16.set((offset_octs >> 16) as u32);
    }
    u
}

fn data_seg(bytes: u32, lkey: u32, addr: u64) -> WqeDataSeg {
    let mut s = WqeDataSeg::default();
    s.byte_count.set(bytes);
    s.lkey.set(lkey);
    s.addr.set(addr);
    s
}

fn wqe(u: &UmrCtrlSeg, m: &MkeySeg, tail: &[u8]) -> Vec<u8> {
    let mut b = u.as_bytes().to_vec();
    b.extend_from_slice(m.as_bytes());
    b.extend_from_slice(tail);
    b
}

/// upstream `get_umr_update_access_mask` (atomic cap set) and the PD, translation
/// and enable masks of `umr.c`.
const ACCESS_MASK: u64 =
    v::MKEY_MASK_LR | v::MKEY_MASK_LW | v::MKEY_MASK_RR | v::MKEY_MASK_RW | v::MKEY_MASK_A;
const XLT_MASK: u64 = v::MKEY_MASK_LEN | v::MKEY_MASK_PAGE_SIZE | v::MKEY_MASK_START_ADDR;
const ENABLE_MASK: u64 = v::MKEY_MASK_KEY | v::MKEY_MASK_FREE;

/// The MR-cache world of upstream: a UMR PD with its DMA lkey, a REG_UMR QP without
/// a PD, a cache mkey (free, `umr_en`, MTT, in the UMR PD).
struct Cache {
    umr_pd: u32,
    umr_lkey: u32,
    umr_qp: u32,
    key: u32,
}

fn cache(d: &mut Dev, octs: u32) -> Cache {
    let umr_pd = d.pd();
    let umr_lkey = dma_mr(d, umr_pd);
    let cq = d.cq();
    let umr_qp = d.qp(st::REG_UMR, 0, cq);
    let key = mkey(
        d,
        &Spec {
            free: true,
            umr_en: true,
            oct_size: octs,
            key_byte: 0x17,
            ..Spec::new(MTT, umr_pd)
        },
    );
    Cache {
        umr_pd,
        umr_lkey,
        umr_qp,
        key,
    }
}

/// `mlx5r_umr_update_mr_pas(mr, MLX5_IB_UPD_XLT_ENABLE, pdn)` for `pages` at `iova`:
/// the MTTs (with `MLX5_IB_MTT_PRESENT`) in a guest buffer, read through the UMR PD's
/// lkey.
fn enable_wqe(
    d: &mut Dev,
    c: &Cache,
    pd: u32,
    iova: u64,
    len: u64,
    pages: &[u64],
    access_rw: bool,
) -> Vec<u8> {
    let table = mtts(pages, v::MTT_READ | v::MTT_WRITE);
    let sg_len = table.len().div_ceil(v::UMR_FLEX_ALIGNMENT) * v::UMR_FLEX_ALIGNMENT;
    let buf = d.h.alloc(sg_len as u64, 64);
    d.h.mem.write(buf, &table).unwrap();
    let u = umr_ctrl(
        v::UMR_CHECK_NOT_FREE | v::UMR_TRANSLATION_OFFSET_EN,
        ENABLE_MASK | ACCESS_MASK | v::MKEY_MASK_PD | XLT_MASK,
        (sg_len / v::UMR_OCTOWORD) as u16,
        0,
    );
    let key = c.key;
    let m = mkey_seg(|s| {
        s.set(mkc::A, false).unwrap();
        s.set(mkc::RW, access_rw).unwrap();
        s.set(mkc::RR, false).unwrap();
        s.set(mkc::LW, true).unwrap();
        s.set(mkc::LR, true).unwrap();
        s.put(mkc::PD, pd).unwrap();
        s.put(mkc::START_ADDR, iova).unwrap();
        s.put(mkc::LEN, len).unwrap();
        s.put(mkc::LOG_PAGE_SIZE, 12u8).unwrap();
        s.put(mkc::QPN, 0xff_ffffu32).unwrap();
        s.put(mkc::MKEY_7_0, (key & 0xff) as u8).unwrap();
    });
    wqe(&u, &m, data_seg(sg_len as u32, c.umr_lkey, buf).as_bytes())
}

#[test]
fn mr_cache_enable_then_revoke_then_rereg_refused() {
    let mut d = Dev::new();
    let user_pd = d.pd();
    let c = cache(&mut d, 8);
    let pages = spaced_pages(&mut d, 3);
    let iova = 0x5555_0000_0100u64;
    // Before: the cache mkey is free.
    assert_eq!(xl(&d, c.key, iova, 8, RL, user_pd), Err(XlateError::Key));
    let body = enable_wqe(&mut d, &c, user_pd, iova, 3 * 4096 - 0x100, &pages, true);
    assert_eq!(umr(&d, c.umr_qp, c.key, &body), Ok(()));
    assert_eq!(
        xl(
            &d,
            c.key,
            iova + 0xe00,
            0x200,
            Access::REMOTE_WRITE,
            user_pd
        ),
        Ok(vec![(pages[0] + 0xf00, 0x100), (pages[1], 0x100)])
    );
    assert_eq!(xl(&d, c.key, iova, 8, RL, c.umr_pd), Err(XlateError::Pd));
    assert_eq!(
        xl(&d, c.key, iova, 8, Access::REMOTE_READ, user_pd),
        Err(XlateError::Access)
    );
    // Enabling again: "fail if not free" refuses, nothing changes.
    assert_eq!(
        umr(&d, c.umr_qp, c.key, &body),
        Err(SYNDROME_LOCAL_PROT_ERR)
    );
    // QUERY_MKEY shows the context and entries UMR wrote.
    {
        let fw = d.h.dev.fw();
        let m = &fw.objs.mkeys[&(c.key >> 8)];
        assert_eq!(m.dp.umrs, 1);
        assert_eq!(&m.dp.xlt[..8], &(pages[0] | 3).to_be_bytes());
    }
    // mlx5r_umr_revoke_mr: free, back to the UMR PD.
    let u = umr_ctrl(v::UMR_INLINE, v::MKEY_MASK_PD | v::MKEY_MASK_FREE, 0, 0);
    let m = mkey_seg(|s| {
        s.set(mkc::FREE, true).unwrap();
        s.put(mkc::PD, c.umr_pd).unwrap();
        s.put(mkc::QPN, 0xff_ffffu32).unwrap();
        s.put(mkc::MKEY_7_0, (c.key & 0xff) as u8).unwrap();
    });
    assert_eq!(umr(&d, c.umr_qp, c.key, &wqe(&u, &m, &[])), Ok(()));
    assert_eq!(xl(&d, c.key, iova, 8, RL, user_pd), Err(XlateError::Key));
    // mlx5r_umr_rereg_pd_access on a free mkey: "fail if free".
    let u = umr_ctrl(
        v::UMR_CHECK_FREE | v::UMR_INLINE,
        ACCESS_MASK | v::MKEY_MASK_PD,
        0,
        0,
    );
    let m = mkey_seg(|s| {
        s.set(mkc::LR, true).unwrap();
        s.put(mkc::PD, user_pd).unwrap();
    });
    assert_eq!(
        umr(&d, c.umr_qp, c.key, &wqe(&u, &m, &[])),
        Err(SYNDROME_LOCAL_PROT_ERR)
    );
    let x = &d.h.dev.fw().dp.xlate;
    assert_eq!((x.umr_ok, x.umr_failed), (2, 2));
    assert!(x
        .recent
        .back()
        .unwrap()
        .contains("check (must not be free): mkey free"));
}

#[test]
fn mr_cache_rereg_changes_pd_and_rights_and_xlt_updates_at_an_offset() {
    let mut d = Dev::new();
    let pd1 = d.pd();
    let pd2 = d.pd();
    let c = cache(&mut d, 8);
    let pages = spaced_pages(&mut d, 10);
    let body = enable_wqe(&mut d, &c, pd1, 0, 10 * 4096, &pages[..8], false);
    // Ten pages do not fit a table of 8 octowords (16 MTTs fit): fine; the first 8.
    assert_eq!(umr(&d, c.umr_qp, c.key, &body), Ok(()));
    assert_eq!(xl(&d, c.key, 8 * 4096, 8, RL, pd1), Err(XlateError::Bounds));
    // mlx5r_umr_update_mr_pas_range(start_block 8): entries 8..9 at offset 8 * 8
    // bytes = 4 octowords, "fail if free", no mkey fields.
    let table = mtts(&pages[8..], v::MTT_READ | v::MTT_WRITE);
    let buf = d.h.alloc(64, 64);
    d.h.mem.write(buf, &table).unwrap();
    let u = umr_ctrl(v::UMR_CHECK_FREE | v::UMR_TRANSLATION_OFFSET_EN, 0, 4, 4);
    let body = wqe(
        &u,
        &MkeySeg::default(),
        data_seg(64, c.umr_lkey, buf).as_bytes(),
    );
    assert_eq!(umr(&d, c.umr_qp, c.key, &body), Ok(()));
    assert_eq!(
        xl(&d, c.key, 9 * 4096 + 4, 4, RL, pd1),
        Ok(vec![(pages[9] + 4, 4)])
    );
    // An update past the table: refused, nothing written.
    let u = umr_ctrl(v::UMR_CHECK_FREE | v::UMR_TRANSLATION_OFFSET_EN, 0, 4, 6);
    let body = wqe(
        &u,
        &MkeySeg::default(),
        data_seg(64, c.umr_lkey, buf).as_bytes(),
    );
    assert_eq!(
        umr(&d, c.umr_qp, c.key, &body),
        Err(SYNDROME_LOCAL_QP_OP_ERR)
    );
    // An absurd offset: refused without allocating.
    let u = umr_ctrl(
        v::UMR_CHECK_FREE | v::UMR_TRANSLATION_OFFSET_EN,
        0,
        4,
        0xffff_ffff_fff0,
    );
    let body = wqe(
        &u,
        &MkeySeg::default(),
        data_seg(64, c.umr_lkey, buf).as_bytes(),
    );
    assert_eq!(
        umr(&d, c.umr_qp, c.key, &body),
        Err(SYNDROME_LOCAL_QP_OP_ERR)
    );
    // mlx5r_umr_rereg_pd_access: PD 2, remote write.
    let u = umr_ctrl(
        v::UMR_CHECK_FREE | v::UMR_INLINE,
        ACCESS_MASK | v::MKEY_MASK_PD,
        0,
        0,
    );
    let m = mkey_seg(|s| {
        s.set(mkc::LR, true).unwrap();
        s.set(mkc::LW, true).unwrap();
        s.set(mkc::RW, true).unwrap();
        s.put(mkc::PD, pd2).unwrap();
        s.put(mkc::QPN, 0xff_ffffu32).unwrap();
        s.put(mkc::MKEY_7_0, (c.key & 0xff) as u8).unwrap();
    });
    assert_eq!(
        xl(&d, c.key, 0, 8, Access::REMOTE_WRITE, pd1),
        Err(XlateError::Access)
    );
    assert_eq!(umr(&d, c.umr_qp, c.key, &wqe(&u, &m, &[])), Ok(()));
    assert_eq!(xl(&d, c.key, 0, 8, RL, pd1), Err(XlateError::Pd));
    assert_eq!(
        xl(&d, c.key, 4096, 8, Access::REMOTE_WRITE, pd2),
        Ok(vec![(pages[1], 8)])
    );
    // The translation is untouched by a rereg without XLT bits.
    assert_eq!(xl(&d, c.key, 9 * 4096, 8, RL, pd2), Ok(vec![(pages[9], 8)]));
}

/// `alloc_mr` (MTT or KLM): a free `umr_en` mkey of `ndescs` in `pd`.
fn fast_reg_mkey(d: &mut Dev, mode: u8, pd: u32, octs: u32) -> u32 {
    mkey(
        d,
        &Spec {
            free: true,
            umr_en: true,
            oct_size: octs,
            key_byte: 0,
            ..Spec::new(mode, pd)
        },
    )
}

/// `set_reg_wr` inline (a list of ≤ 64 bytes): the mkey segment as `set_reg_mkey_seg`
/// fills `struct mlx5_mkey_seg`.
fn reg_wqe(mode: u8, key: u32, iova: u64, len: u64, list: &[u8], access: u8) -> Vec<u8> {
    let octs = list.len().div_ceil(64) * 4;
    let mask = XLT_MASK
        | v::MKEY_MASK_EN_RINVAL
        | v::MKEY_MASK_KEY
        | ACCESS_MASK
        | v::MKEY_MASK_SMALL_FENCE
        | v::MKEY_MASK_FREE;
    let u = umr_ctrl(v::UMR_CHECK_NOT_FREE | v::UMR_INLINE, mask, octs as u16, 0);
    let mut m = MkeySeg {
        flags: access | v::PERM_LOCAL_READ | v::PERM_UMR_EN | mode,
        log2_page_size: if mode == MTT { 12 } else { 0 },
        ..Default::default()
    };
    m.qpn_mkey7_0.set((key & 0xff) | 0xffff_ff00);
    m.flags_pd.set(v::MKEY_REMOTE_INVAL);
    m.start_addr.set(iova);
    m.len.set(len);
    m.xlt_oct_size.set(octs as u32);
    let mut tail = list.to_vec();
    tail.resize(octs * 16, 0);
    wqe(&u, &m, &tail)
}

/// `set_linv_wr`: `free` only.
fn linv_wqe() -> Vec<u8> {
    let u = umr_ctrl(v::UMR_INLINE, v::MKEY_MASK_FREE, 0, 0);
    let m = MkeySeg {
        status: v::MKEY_STATUS_FREE,
        ..Default::default()
    };
    wqe(&u, &m, &[])
}

#[test]
fn fast_registration_local_invalidate_and_reregistration() {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    let qp = d.qp(st::RC, pd, cq);
    let pages = spaced_pages(&mut d, 2);
    let k0 = fast_reg_mkey(&mut d, MTT, pd, 4);
    // ib_update_fast_reg_key: a new key byte.
    let k1 = (k0 & !0xff) | 0x01;
    let body = reg_wqe(
        MTT,
        k1,
        0x9000,
        8192,
        &mtts(&pages, 0),
        v::PERM_REMOTE_WRITE | v::PERM_LOCAL_WRITE,
    );
    assert_eq!(umr(&d, qp, k1, &body), Ok(()));
    assert_eq!(
        xl(&d, k1, 0x9ffc, 8, Access::REMOTE_WRITE, pd),
        Ok(vec![(pages[0] + 0xffc, 4), (pages[1], 4)])
    );
    assert_eq!(xl(&d, k0, 0x9000, 8, RL, pd), Err(XlateError::Key));
    assert_eq!(
        xl(&d, k1, 0x9000, 8, Access::REMOTE_READ, pd),
        Err(XlateError::Access)
    );
    // Registering a valid mkey again: "fail if not free".
    assert_eq!(umr(&d, qp, k1, &body), Err(SYNDROME_LOCAL_PROT_ERR));
    // Local invalidate, then the key is gone.
    assert_eq!(umr(&d, qp, k1, &linv_wqe()), Ok(()));
    assert_eq!(xl(&d, k1, 0x9000, 8, RL, pd), Err(XlateError::Key));
    // And registers again with the next key byte, other pages.
    let k2 = (k0 & !0xff) | 0x02;
    let body = reg_wqe(MTT, k2, 0, 4096, &mtts(&pages[1..], 0), 0);
    assert_eq!(umr(&d, qp, k2, &body), Ok(()));
    assert_eq!(xl(&d, k2, 8, 8, RL, pd), Ok(vec![(pages[1] + 8, 8)]));
    assert_eq!(xl(&d, k2, 8, 8, WL, pd), Err(XlateError::Access));
}

#[test]
fn fast_registration_of_a_klm_list() {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    let qp = d.qp(st::RC, pd, cq);
    let lkey = dma_mr(&mut d, pd);
    let a = d.h.alloc(4096, 4096);
    let b = d.h.alloc(4096, 4096);
    let k0 = fast_reg_mkey(&mut d, KLM, pd, 8);
    let k1 = (k0 & !0xff) | 0x07;
    // mlx5_ib_sg_to_klms: two SG entries with a gap.
    let list = klms(&[(10, lkey, a + 3), (20, lkey, b + 7)]);
    let body = reg_wqe(KLM, k1, 0x4000, 30, &list, v::PERM_REMOTE_READ);
    assert_eq!(umr(&d, qp, k1, &body), Ok(()));
    assert_eq!(
        xl(&d, k1, 0x4008, 4, Access::REMOTE_READ, pd),
        Ok(vec![(a + 11, 2), (b + 7, 2)])
    );
}

/// rdma-core `set_bind_wr`: the window's mkey segment (`mlx5_wqe_mkey_context_seg`,
/// the same bytes as `struct mlx5_mkey_seg`) and one inline KLM padded to 64 bytes.
fn bind_wqe(type2: bool, qpn: u32, rkey: u32, mr_lkey: u32, addr: u64, len: u64) -> Vec<u8> {
    let mut mask = v::MKEY_MASK_FREE | v::MKEY_MASK_KEY;
    if type2 {
        mask |= v::MKEY_MASK_QPN;
    }
    let mut flags = v::UMR_TRANSLATION_OFFSET_EN | v::UMR_INLINE;
    let mut m = MkeySeg::default();
    let q = if type2 && len != 0 {
        qpn << 8
    } else {
        0xffff_ff00
    };
    m.qpn_mkey7_0.set((rkey & 0xff) | q);
    let (octs, tail) = if len != 0 {
        if type2 {
            flags |= v::UMR_CHECK_NOT_FREE;
        }
        mask |= v::MKEY_MASK_LEN
            | v::MKEY_MASK_START_ADDR
            | v::MKEY_MASK_LW
            | v::MKEY_MASK_RR
            | v::MKEY_MASK_RW
            | v::MKEY_MASK_A;
        m.flags = v::PERM_REMOTE_WRITE | v::PERM_LOCAL_WRITE;
        m.start_addr.set(addr);
        m.len.set(len);
        let mut t = klms(&[(len as u32, mr_lkey, addr)]);
        t.resize(64, 0);
        (4, t)
    } else {
        if type2 {
            flags |= v::UMR_CHECK_QPN;
        }
        m.status = v::MKEY_STATUS_FREE;
        (0, Vec::new())
    };
    let u = umr_ctrl(flags, mask, octs, 0);
    wqe(&u, &m, &tail)
}

#[test]
fn memory_window_bind_and_unbind() {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    let qp = d.qp(st::RC, pd, cq);
    let other_qp = d.qp(st::RC, pd, cq);
    let a = d.h.alloc(8192, 4096);
    // The MR: local and remote write.
    let mr = mkey(
        &mut d,
        &Spec {
            start: a,
            len: 8192,
            rw: true,
            ..Spec::new(PA, pd)
        },
    );
    // mlx5_ib_alloc_mw (type 2): free, KLM, umr_en, lr, en_rinval, 4 octowords.
    let mw = mkey(
        &mut d,
        &Spec {
            free: true,
            umr_en: true,
            lw: false,
            oct_size: 4,
            key_byte: 0x30,
            ..Spec::new(KLM, pd)
        },
    );
    let rkey = (mw & !0xff) | 0x31;
    let body = bind_wqe(true, qp, rkey, mr, a + 4096, 256);
    assert_eq!(umr(&d, qp, mw, &body), Ok(()));
    assert_eq!(
        xl(&d, rkey, a + 4096 + 16, 16, Access::REMOTE_WRITE, pd),
        Ok(vec![(a + 4096 + 16, 16)])
    );
    assert_eq!(
        xl(&d, rkey, a + 4096 + 250, 16, Access::REMOTE_WRITE, pd),
        Err(XlateError::Bounds)
    );
    assert_eq!(
        xl(&d, rkey, a + 4096, 16, Access::REMOTE_READ, pd),
        Err(XlateError::Access)
    );
    // Type 2 binding again: "must be free", a memory window bind error.
    assert_eq!(umr(&d, qp, rkey, &body), Err(SYNDROME_MW_BIND_ERR));
    // Unbind from another QP: the QPN check refuses; from the bound QP it frees.
    let unbind = bind_wqe(true, qp, rkey, 0, 0, 0);
    assert_eq!(umr(&d, other_qp, rkey, &unbind), Err(SYNDROME_MW_BIND_ERR));
    assert_eq!(umr(&d, qp, rkey, &unbind), Ok(()));
    assert_eq!(
        xl(&d, rkey, a + 4096, 16, Access::REMOTE_WRITE, pd),
        Err(XlateError::Key)
    );
}

#[test]
fn malformed_and_refused_umrs() {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    let qp = d.qp(st::RC, pd, cq);
    let plain = dma_mr(&mut d, pd);
    let k = fast_reg_mkey(&mut d, MTT, pd, 4);
    // Shorter than the UMR and mkey segments.
    assert_eq!(umr(&d, qp, k, &[0u8; 100]), Err(SYNDROME_LOCAL_QP_OP_ERR));
    // No such QP, no such mkey.
    assert_eq!(
        umr(&d, 0xfff, k, &linv_wqe()),
        Err(SYNDROME_LOCAL_QP_OP_ERR)
    );
    assert_eq!(
        umr(&d, qp, 0x00ab_cd00, &linv_wqe()),
        Err(SYNDROME_LOCAL_PROT_ERR)
    );
    // An mkey created without umr_en.
    assert_eq!(
        umr(&d, qp, plain, &linv_wqe()),
        Err(SYNDROME_LOCAL_PROT_ERR)
    );
    // Inline entries announced but missing from the WQE.
    let mut body = reg_wqe(MTT, k, 0, 4096, &mtts(&[0x1000], 0), 0);
    body.truncate(body.len() - 16);
    assert_eq!(umr(&d, qp, k, &body), Err(SYNDROME_LOCAL_QP_OP_ERR));
    // Entries behind an lkey of another PD (a regular QP's reads are PD-checked).
    let other = d.pd();
    let foreign = dma_mr(&mut d, other);
    let buf = d.h.alloc(64, 64);
    let u = umr_ctrl(v::UMR_CHECK_NOT_FREE, XLT_MASK | v::MKEY_MASK_FREE, 4, 0);
    let body = wqe(
        &u,
        &MkeySeg::default(),
        data_seg(64, foreign, buf).as_bytes(),
    );
    assert_eq!(umr(&d, qp, k, &body), Err(SYNDROME_LOCAL_PROT_ERR));
    // Nothing of it applied: the mkey is still free.
    assert_eq!(xl(&d, k, 0, 8, RL, pd), Err(XlateError::Key));
    assert_eq!(d.h.dev.fw().dp.xlate.umr_ok, 0);
}

#[test]
fn a_type_2_window_serves_its_qp_only() {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    let qp = d.qp(st::RC, pd, cq);
    let other_qp = d.qp(st::RC, pd, cq);
    let a = d.h.alloc(4096, 4096);
    let mr = mkey(
        &mut d,
        &Spec {
            start: a,
            len: 4096,
            rw: true,
            ..Spec::new(PA, pd)
        },
    );
    let mw = mkey(
        &mut d,
        &Spec {
            free: true,
            umr_en: true,
            oct_size: 4,
            ..Spec::new(KLM, pd)
        },
    );
    let rkey = (mw & !0xff) | 0x43;
    assert_eq!(
        umr(&d, qp, mw, &bind_wqe(true, qp, rkey, mr, a, 64)),
        Ok(())
    );
    let env = Env {
        mem: &*d.h.dev.mem,
        irq: &*d.h.dev.irq,
        msix_ok: true,
    };
    let w = Access::REMOTE_WRITE;
    let mut fw = d.h.dev.fw();
    assert_eq!(
        fw.translate_for(&env, rkey, a, 8, w, pd, Some(qp)),
        Ok(vec![(a, 8)])
    );
    assert_eq!(
        fw.translate_for(&env, rkey, a, 8, w, pd, Some(other_qp)),
        Err(XlateError::Key)
    );
    // The MR itself (qpn 0xffffff) serves any QP.
    assert_eq!(
        fw.translate_for(&env, mr, a, 8, w, pd, Some(other_qp)),
        Ok(vec![(a, 8)])
    );
}

#[test]
fn remote_invalidation_needs_en_rinval_and_the_pd() {
    let mut d = Dev::new();
    let pd = d.pd();
    let other = d.pd();
    let cq = d.cq();
    let qp = d.qp(st::RC, pd, cq);
    let p = spaced_pages(&mut d, 1);
    let plain = dma_mr(&mut d, pd);
    let k0 = fast_reg_mkey(&mut d, MTT, pd, 4);
    let k1 = (k0 & !0xff) | 0x09;
    // set_reg_mkey_seg sets MLX5_MKEY_REMOTE_INVAL.
    let body = reg_wqe(MTT, k1, 0, 4096, &mtts(&p, 0), v::PERM_REMOTE_WRITE);
    assert_eq!(umr(&d, qp, k1, &body), Ok(()));
    let mut fw = d.h.dev.fw();
    assert_eq!(fw.remote_invalidate(plain, pd), Err(XlateError::Access));
    assert_eq!(fw.remote_invalidate(k1, other), Err(XlateError::Pd));
    assert_eq!(fw.remote_invalidate(k0, pd), Err(XlateError::Key));
    assert_eq!(fw.remote_invalidate(k1, pd), Ok(()));
    assert_eq!(fw.remote_invalidate(k1, pd), Err(XlateError::Key));
    drop(fw);
    assert_eq!(xl(&d, k1, 0, 8, RL, pd), Err(XlateError::Key));
}

/// DESTROY_MKEY of `key`'s index.
fn destroy_mkey(d: &mut Dev, key: u32) {
    let inp = input(
        16,
        Opcode::DESTROY_MKEY as u16,
        0,
        &[(
            mlx5_emu::ifc::mkey::destroy_mkey_in::MKEY_INDEX.raw(),
            u64::from(key >> 8),
        )],
    );
    d.h.ok(&inp, 16);
}

/// A PD with an RC QP, an MR with local and remote write over 8 KiB, and a window of
/// `mlx5_ib_alloc_mw` (free, KLM, `umr_en`, 4 octowords; `en_rinval` is not read by
/// a bind).
struct MwWorld {
    d: Dev,
    pd: u32,
    qp: u32,
    mem: u64,
    mr: u32,
    mw: u32,
}

fn mw_world() -> MwWorld {
    let mut d = Dev::new();
    let pd = d.pd();
    let cq = d.cq();
    let qp = d.qp(st::RC, pd, cq);
    let mem = d.h.alloc(8192, 4096);
    let mr = mkey(
        &mut d,
        &Spec {
            start: mem,
            len: 8192,
            rw: true,
            ..Spec::new(PA, pd)
        },
    );
    let mw = mkey(
        &mut d,
        &Spec {
            free: true,
            umr_en: true,
            lw: false,
            oct_size: 4,
            key_byte: 0x10,
            ..Spec::new(KLM, pd)
        },
    );
    MwWorld {
        d,
        pd,
        qp,
        mem,
        mr,
        mw,
    }
}

#[test]
fn type_2_bind_names_the_posting_qp_of_the_windows_pd() {
    // IBTA 10.6.7.2: a type 2 window is bound to one QP of its PD; libmlx5 writes
    // the posting QP's number. Refusals are memory window bind errors (IBTA 11.6.2).
    let mut w = mw_world();
    let cq = w.d.cq();
    let other_pd = w.d.pd();
    let foreign_qp = w.d.qp(st::RC, other_pd, cq);
    let same_pd_qp = w.d.qp(st::RC, w.pd, cq);
    let rkey = (w.mw & !0xff) | 0x11;
    // Naming another QP than the one posting.
    let body = bind_wqe(true, same_pd_qp, rkey, w.mr, w.mem, 64);
    assert_eq!(umr(&w.d, w.qp, w.mw, &body), Err(SYNDROME_MW_BIND_ERR));
    // Posted (and named) by a QP of another PD.
    let body = bind_wqe(true, foreign_qp, rkey, w.mr, w.mem, 64);
    assert_eq!(
        umr(&w.d, foreign_qp, w.mw, &body),
        Err(SYNDROME_MW_BIND_ERR)
    );
    // Nothing applied: the window is still free.
    assert_eq!(
        xl(&w.d, rkey, w.mem, 8, Access::REMOTE_WRITE, w.pd),
        Err(XlateError::Key)
    );
    assert_eq!(w.d.h.dev.fw().dp.xlate.umr_failed, 2);
    // The right QP binds it.
    let body = bind_wqe(true, w.qp, rkey, w.mr, w.mem, 64);
    assert_eq!(umr(&w.d, w.qp, w.mw, &body), Ok(()));
    assert_eq!(
        xl(&w.d, rkey, w.mem, 8, Access::REMOTE_WRITE, w.pd),
        Ok(vec![(w.mem, 8)])
    );
}

#[test]
fn type_1_window_rebinds_and_a_zero_length_bind_invalidates() {
    // libmlx5 `mlx5_bind_mw` (type 1): no free check, qpn 0xffffff, a new key byte
    // each bind (`ibv_inc_rkey`); a bind of length 0 frees the window
    // (pyverbs `invalidate_mw_type1`). Failures of a type 1 bind stay local
    // protection errors: it is not told apart from a fast registration.
    let w = mw_world();
    let k1 = (w.mw & !0xff) | 0x11;
    let k2 = (w.mw & !0xff) | 0x12;
    assert_eq!(
        umr(&w.d, w.qp, w.mw, &bind_wqe(false, 0, k1, w.mr, w.mem, 4096)),
        Ok(())
    );
    assert_eq!(
        xl(&w.d, k1, w.mem + 4000, 96, Access::REMOTE_WRITE, w.pd),
        Ok(vec![(w.mem + 4000, 96)])
    );
    // Rebound (no check) to the second page under a new key: the old key is gone.
    assert_eq!(
        umr(
            &w.d,
            w.qp,
            k1,
            &bind_wqe(false, 0, k2, w.mr, w.mem + 4096, 4096)
        ),
        Ok(())
    );
    assert_eq!(
        xl(&w.d, k1, w.mem + 4096, 8, Access::REMOTE_WRITE, w.pd),
        Err(XlateError::Key)
    );
    assert_eq!(
        xl(&w.d, k2, w.mem + 4096, 8, Access::REMOTE_WRITE, w.pd),
        Ok(vec![(w.mem + 4096, 8)])
    );
    // Before the window: outside its range.
    assert_eq!(
        xl(&w.d, k2, w.mem + 4000, 8, Access::REMOTE_WRITE, w.pd),
        Err(XlateError::Bounds)
    );
    // Any QP may use a type 1 window.
    let env = Env {
        mem: &*w.d.h.dev.mem,
        irq: &*w.d.h.dev.irq,
        msix_ok: true,
    };
    assert!(w
        .d
        .h
        .dev
        .fw()
        .translate_for(
            &env,
            k2,
            w.mem + 4096,
            8,
            Access::REMOTE_WRITE,
            w.pd,
            Some(0x7777)
        )
        .is_ok());
    // Zero-length bind: free.
    assert_eq!(
        umr(&w.d, w.qp, k2, &bind_wqe(false, 0, k2, 0, 0, 0)),
        Ok(())
    );
    assert_eq!(
        xl(&w.d, k2, w.mem + 4096, 8, Access::REMOTE_WRITE, w.pd),
        Err(XlateError::Key)
    );
    // A window without umr_en (not an alloc_mw mkey) refuses the bind.
    let mut w2 = mw_world();
    let plain = dma_mr(&mut w2.d, w2.pd);
    assert_eq!(
        umr(
            &w2.d,
            w2.qp,
            plain,
            &bind_wqe(false, 0, plain, w2.mr, w2.mem, 64)
        ),
        Err(SYNDROME_LOCAL_PROT_ERR)
    );
}

#[test]
fn a_bound_window_goes_with_its_mkey_and_with_its_mr() {
    // Dealloc of a bound window (DESTROY_MKEY): its key reaches nothing
    // (pyverbs `test_mw_type2_invalidate_dealloc` expects a remote access error).
    let mut w = mw_world();
    let rkey = (w.mw & !0xff) | 0x11;
    let body = bind_wqe(true, w.qp, rkey, w.mr, w.mem, 256);
    assert_eq!(umr(&w.d, w.qp, w.mw, &body), Ok(()));
    destroy_mkey(&mut w.d, rkey);
    assert_eq!(
        xl(&w.d, rkey, w.mem, 8, Access::REMOTE_WRITE, w.pd),
        Err(XlateError::Key)
    );
    // A window whose MR is deregistered: the access fails on the MR's key (PRM
    // indirect mkeys: each KLM entry's key is translated at the access).
    let mut w = mw_world();
    let rkey = (w.mw & !0xff) | 0x11;
    let body = bind_wqe(true, w.qp, rkey, w.mr, w.mem, 256);
    assert_eq!(umr(&w.d, w.qp, w.mw, &body), Ok(()));
    destroy_mkey(&mut w.d, w.mr);
    assert_eq!(
        xl(&w.d, rkey, w.mem, 8, Access::REMOTE_WRITE, w.pd),
        Err(XlateError::Key)
    );
}

#[test]
fn window_rights_are_the_binds_and_need_the_mrs_local_write() {
    // The window grants what its bind gave (pyverbs `test_qp_ex_rc_bind_mw` binds
    // local write only and expects a remote write through it to fail); a window
    // granting remote write over an MR without local write fails at the access
    // (IBTA 10.6.7.2: remote write through a window needs local write on the MR).
    let mut w = mw_world();
    let rkey = (w.mw & !0xff) | 0x11;
    let mut body = bind_wqe(true, w.qp, rkey, w.mr, w.mem, 256);
    // Rights byte of the mkey segment (`MkeySeg::flags`): local write only.
    let at = std::mem::size_of::<UmrCtrlSeg>() + std::mem::offset_of!(MkeySeg, flags);
    body[at] = v::PERM_LOCAL_WRITE;
    assert_eq!(umr(&w.d, w.qp, w.mw, &body), Ok(()));
    assert_eq!(
        xl(&w.d, rkey, w.mem, 8, Access::REMOTE_WRITE, w.pd),
        Err(XlateError::Access)
    );
    let ro = mkey(
        &mut w.d,
        &Spec {
            start: w.mem,
            len: 8192,
            lw: false,
            rr: true,
            ..Spec::new(PA, w.pd)
        },
    );
    let mw2 = mkey(
        &mut w.d,
        &Spec {
            free: true,
            umr_en: true,
            lw: false,
            oct_size: 4,
            key_byte: 0x20,
            ..Spec::new(KLM, w.pd)
        },
    );
    let body = bind_wqe(true, w.qp, mw2, ro, w.mem, 256);
    assert_eq!(umr(&w.d, w.qp, mw2, &body), Ok(()));
    assert_eq!(
        xl(&w.d, mw2, w.mem, 8, Access::REMOTE_WRITE, w.pd),
        Err(XlateError::Access)
    );
}

/// The driver's MR-cache WQEs (`ib/mr/umr.rs`) executed by the emulator: a cache mkey
/// of the driver's bucket size enabled as a user MR, its PD and rights changed in
/// place with the key kept, revoked, and enabled again from the cache.
#[test]
fn driver_mr_cache_wqes_enable_rereg_in_place_revoke_and_reuse() {
    use mlx5_rs_pure::ib::mr::commands::MkeyAccess;
    use mlx5_rs_pure::ib::mr::umr as drv;
    let caps = drv::UmrCaps {
        atomic: true,
        ..Default::default()
    };
    let mut d = Dev::new();
    let pd1 = d.pd();
    let pd2 = d.pd();
    let pages = spaced_pages(&mut d, 3);
    let entries = drv::bucket(pages.len() as u64, 16).unwrap();
    let c = cache(&mut d, drv::mkc_octo_size(entries));
    let body = |w: &drv::UmrWqe| {
        let mut b = vec![0u8; w.size()];
        w.write(&mut b).unwrap();
        b
    };
    // The MTTs in a buffer of the 64-byte units the WQE names (tail zeroed).
    let table = mtts(&pages, v::MTT_READ | v::MTT_WRITE);
    let xlt = drv::Xlt {
        addr: d.h.alloc(64, 64),
        lkey: c.umr_lkey,
        entries: pages.len() as u32,
        page_shift: 12,
    };
    d.h.mem.write(xlt.addr, &table).unwrap();
    let rw = MkeyAccess {
        lw: true,
        rw: true,
        ..Default::default()
    };
    let iova = 0x7f00_0000_0000u64;
    let len = 3 * 4096;
    let w = drv::enable(c.key, pd1, &rw, iova, len, &xlt, &caps).unwrap();
    assert_eq!(umr(&d, c.umr_qp, c.key, &body(&w)), Ok(()));
    assert_eq!(
        xl(&d, c.key, iova + 4096, 8, Access::REMOTE_WRITE, pd1),
        Ok(vec![(pages[1], 8)])
    );
    assert_eq!(
        xl(&d, c.key, iova, 8, Access::REMOTE_READ, pd1),
        Err(XlateError::Access)
    );
    assert_eq!(
        xl(&d, c.key, iova + len, 1, RL, pd1),
        Err(XlateError::Bounds)
    );
    // rereg of PD and access: same key, read-only in PD 2.
    let ro = MkeyAccess {
        rr: true,
        ..Default::default()
    };
    let w = drv::rereg_pd_access(c.key, pd2, &ro, &caps).unwrap();
    assert_eq!(umr(&d, c.umr_qp, c.key, &body(&w)), Ok(()));
    assert_eq!(
        xl(&d, c.key, iova + 2 * 4096, 8, Access::REMOTE_READ, pd2),
        Ok(vec![(pages[2], 8)])
    );
    assert_eq!(
        xl(&d, c.key, iova, 8, Access::REMOTE_WRITE, pd2),
        Err(XlateError::Access)
    );
    assert_eq!(xl(&d, c.key, iova, 8, RL, pd1), Err(XlateError::Pd));
    // Revoke: the key reaches nothing; a second enable must find it free.
    let w = drv::revoke(c.key, c.umr_pd).unwrap();
    assert_eq!(umr(&d, c.umr_qp, c.key, &body(&w)), Ok(()));
    assert_eq!(xl(&d, c.key, iova, 8, RL, pd2), Err(XlateError::Key));
    // rereg of a revoked (free) mkey: "fail if free".
    let w = drv::rereg_pd_access(c.key, pd2, &ro, &caps).unwrap();
    assert_eq!(
        umr(&d, c.umr_qp, c.key, &body(&w)),
        Err(SYNDROME_LOCAL_PROT_ERR)
    );
    // Reuse from the cache with the next key byte, one page at a new address.
    let key2 = (c.key & !0xff) | ((c.key + 1) & 0xff);
    let one = drv::Xlt { entries: 1, ..xlt };
    let w = drv::enable(key2, pd1, &ro, 0x1000, 4096, &one, &caps).unwrap();
    assert_eq!(umr(&d, c.umr_qp, key2, &body(&w)), Ok(()));
    assert_eq!(
        xl(&d, key2, 0x1000, 8, Access::REMOTE_READ, pd1),
        Ok(vec![(pages[0], 8)])
    );
    assert_eq!(xl(&d, c.key, 0x1000, 8, RL, pd1), Err(XlateError::Key));
    let x = &d.h.dev.fw().dp.xlate;
    assert_eq!((x.umr_ok, x.umr_failed), (4, 1));
}
