//! The uverbs request/response logic of `ib/abi/` as libmlx5 56.1 drives it, every
//! rejection with upstream's errno, and every parser fed every length 0..=64 of
//! random bytes (no panic, and what is accepted satisfies the invariants the verbs
//! rely on).

use mlx5_rs_pure::errno::Errno;
use mlx5_rs_pure::ib::abi::bfreg::BfregInfo;
use mlx5_rs_pure::ib::abi::consts::*;
use mlx5_rs_pure::ib::abi::cq::{parse_create_cq, parse_resize_cq, CqCaps, CqUar, ResizePlan};
use mlx5_rs_pure::ib::abi::device::{query_device_response, QueryDeviceCaps};

const EINVAL: Errno = Errno::EINVAL;
const ENOMEM: Errno = Errno::ENOMEM;
const ENOSYS: Errno = Errno::ENOSYS;
const EOPNOTSUPP: Errno = Errno::EOPNOTSUPP;
const EPERM: Errno = Errno::EPERM;
use mlx5_rs_pure::ib::abi::layout::{
    AllocUcontextReqV2, AllocUcontextResp, CreateCq, CreateQp, CreateSrq, ResizeCq,
};
use mlx5_rs_pure::ib::abi::mmap::{self, Caching, MmapCaps, MmapTarget, Vma};
use mlx5_rs_pure::ib::abi::qp::{parse_create_qp, parse_modify_qp, QpAttr, QpCaps, QpKind, QpUar};
use mlx5_rs_pure::ib::abi::srq::{parse_create_srq, SrqCaps, SrqKind};
use mlx5_rs_pure::ib::abi::ucontext::{
    build_response, is_devx_refusal, parse_request, UctxDevCaps, UctxRespCaps,
};
use mlx5_rs_pure::ib::abi::{udata, Reason};
use zerocopy::{FromBytes, IntoBytes};

/// What libmlx5 56.1 sends on 4 KiB pages (`mlx5_alloc_context`): 16 bfregs, 4
/// low-latency, CQE version 1, 4K_UAR | DYN_UAR, DEVX.
fn libmlx5_req() -> AllocUcontextReqV2 {
    AllocUcontextReqV2 {
        total_num_bfregs: 16,
        num_low_latency_bfregs: 4,
        flags: ALLOC_UCTX_DEVX,
        max_cqe_version: 1,
        lib_caps: LIB_CAP_4K_UAR | LIB_CAP_DYN_UAR,
        ..Default::default()
    }
}

const DEV: UctxDevCaps = UctxDevCaps {
    devx: false,
    uar_4k: true,
    page_shift: 12,
    cqe_version: 1,
};

fn resp_caps() -> UctxRespCaps {
    UctxRespCaps {
        log_max_qp: 18,
        wc: true,
        log_bf_reg_size: 9,
        cache_line_size: 64,
        max_wqe_sz_sq: 1024,
        max_wqe_sz_rq: 512,
        log_max_qp_sz: 15,
        log_max_srq_sz: 15,
        uar_4k: true,
        num_of_uars_per_page: 1,
        num_ports: 1,
        page_shift: 12,
        ..Default::default()
    }
}

#[test]
fn libmlx5_context_flow() {
    let req = libmlx5_req();
    // The library tries 32, then 24, then 16 bytes; each parses the same head.
    for len in [32, 24, 16] {
        let r = parse_request(&req.as_bytes()[..len]).unwrap();
        assert_eq!(
            (r.ver, r.total_num_bfregs, r.num_low_latency_bfregs),
            (2, 16, 4)
        );
        assert!(r.devx);
        assert_eq!(r.max_cqe_version, if len > 16 { 1 } else { 0 });
        assert_eq!(r.lib_caps, if len == 32 { req.lib_caps } else { 0 });
        // No DEVX here: EINVAL, recognisably, so the library retries without it.
        let e = r.plan(&DEV).unwrap_err();
        assert!(is_devx_refusal(&e), "{e}");
    }
    let mut no_devx = req;
    no_devx.flags = 0;
    let r = parse_request(no_devx.as_bytes()).unwrap();
    let plan = r.plan(&DEV).unwrap();
    assert!(plan.bfregs.lib_uar_dyn);
    assert_eq!(plan.cqe_version, 1);
    let resp = build_response(&resp_caps(), &plan, 72);
    assert_eq!(resp.qp_tab_size, 1 << 18);
    assert_eq!(resp.bf_reg_size, 512);
    assert_eq!(resp.tot_bfregs, 0);
    assert_eq!(resp.num_dyn_bfregs, 0);
    assert_eq!((resp.max_send_wqebb, resp.max_recv_wr), (1 << 15, 1 << 15));
    assert_eq!((resp.max_sq_desc_sz, resp.max_rq_desc_sz), (1024, 512));
    assert_eq!((resp.log_uar_size, resp.num_uars_per_page), (12, 1));
    assert_eq!(
        resp.cmds_supp_uhw,
        USER_CMDS_SUPP_UHW_QUERY_DEVICE | USER_CMDS_SUPP_UHW_CREATE_AH
    );
    assert_eq!(
        resp.comp_mask,
        UCTX_RESP_MASK_CORE_CLOCK_OFFSET | UCTX_RESP_MASK_MKEY_UPDATE_TAG
    );
    assert_eq!(resp.hca_core_clock_offset, 0);
    assert_eq!(resp.response_length, 72);
    assert_eq!((resp.eth_min_inline, resp.clock_info_versions), (0, 0));
    // The library reads the response through its own copy of the struct.
    let back = AllocUcontextResp::read_from_bytes(resp.as_bytes()).unwrap();
    assert_eq!(back, resp);
}

#[test]
fn response_follows_caps_and_length() {
    let plan = parse_request(&libmlx5_req().as_bytes()[..16])
        .unwrap()
        .plan(&UctxDevCaps { devx: true, ..DEV })
        .unwrap();
    // 16-byte request: no lib_caps → static bfregs, CQE version min(1, 0).
    assert!(!plan.bfregs.lib_uar_dyn);
    assert_eq!(plan.cqe_version, 0);
    let caps = UctxRespCaps {
        wc: false,
        uar_4k: false,
        dump_fill_mkey: Some(0x1234),
        eth_min_inline: Some(2),
        clock_info: true,
        ece: true,
        real_time_ts: true,
        drain_sigerr: true,
        ..resp_caps()
    };
    let r = build_response(&caps, &plan, 40);
    assert_eq!(r.bf_reg_size, 0);
    assert_eq!(r.tot_bfregs, 16);
    assert_eq!(r.num_dyn_bfregs, 1024);
    assert_eq!((r.log_uar_size, r.num_uars_per_page), (12, 1));
    assert_eq!(r.dump_fill_mkey, 0x1234);
    assert_eq!((r.eth_min_inline, r.clock_info_versions), (3, 1));
    assert_eq!(r.comp_mask, 0x3f);
    assert_eq!(r.response_length, 40);
    assert_eq!(udata::response(&r, 40), &r.as_bytes()[..40]);
    assert_eq!(build_response(&caps, &plan, 1000).response_length, 72);
    // 64 KiB pages: no core clock page, UAR size from the page.
    let big = UctxRespCaps {
        page_shift: 16,
        ..caps
    };
    let r = build_response(&big, &plan, 72);
    assert_eq!(r.comp_mask & UCTX_RESP_MASK_CORE_CLOCK_OFFSET, 0);
    assert_eq!(r.log_uar_size, 16);
}

#[test]
fn ucontext_rejects_as_upstream() {
    let ok = libmlx5_req();
    for len in (0..8).chain(9..16) {
        let e = parse_request(&ok.as_bytes()[..len]).unwrap_err();
        assert_eq!((e.errno, len), (EINVAL, len), "{e}");
    }
    // v0: exactly 8 bytes.
    let v0 = parse_request(&ok.as_bytes()[..8]).unwrap();
    assert_eq!((v0.ver, v0.devx, v0.lib_caps), (0, false, 0));
    let p = v0.plan(&DEV).unwrap();
    assert_eq!((p.bfregs.ver, p.bfregs.num_static_sys_pages), (0, 8));
    // Longer than 32: upstream copies min(inlen, sizeof(req)) and never looks at the
    // bytes after it (no ib_is_udata_cleared), so they are ignored, zero or not.
    let mut long = [0u8; 64];
    long[..32].copy_from_slice(ok.as_bytes());
    let want = parse_request(ok.as_bytes()).unwrap();
    assert_eq!(parse_request(&long).unwrap(), want);
    for i in 32..64 {
        let mut b = long;
        b[i] = 0xff;
        assert_eq!(parse_request(&b).unwrap(), want, "byte {i} ignored");
    }
    let with = |f: &dyn Fn(&mut AllocUcontextReqV2)| {
        let mut r = ok;
        f(&mut r);
        parse_request(r.as_bytes()).map_err(|e| e.errno)
    };
    for bit in 1..32 {
        assert_eq!(with(&|r| r.flags |= 1 << bit), Err(EOPNOTSUPP));
        assert_eq!(with(&|r| r.comp_mask = 1 << bit), Err(EOPNOTSUPP));
    }
    assert_eq!(with(&|r| r.reserved0 = 1), Err(EOPNOTSUPP));
    assert_eq!(with(&|r| r.reserved1 = 1), Err(EOPNOTSUPP));
    assert_eq!(with(&|r| r.reserved2 = 1), Err(EOPNOTSUPP));
    assert_eq!(with(&|r| r.num_low_latency_bfregs = 16), Err(EINVAL));
    assert!(with(&|r| r.num_low_latency_bfregs = 15).is_ok());
    // 15 is rounded up to 16 before the low-latency check.
    assert!(with(&|r| {
        r.total_num_bfregs = 15;
        r.num_low_latency_bfregs = 15
    })
    .is_ok());
    // Unknown lib_caps bits are ignored, as upstream.
    assert!(with(&|r| r.lib_caps |= 1 << 40).is_ok());
    // The static plan: calc_total_bfregs.
    let plan = |total, low| {
        let mut r = ok;
        r.flags = 0;
        r.lib_caps = LIB_CAP_4K_UAR;
        r.total_num_bfregs = total;
        r.num_low_latency_bfregs = low;
        parse_request(r.as_bytes())
            .and_then(|q| q.plan(&DEV))
            .map_err(|e| e.errno)
    };
    assert_eq!(plan(0, 0), Err(EINVAL));
    assert_eq!(plan(513, 0), Err(ENOMEM));
    assert_eq!(plan(u32::MAX, 0), Err(EINVAL), "wraps to 0 when rounded");
    assert_eq!(plan(512, 4).unwrap().bfregs.num_static_sys_pages, 256);
}

#[test]
fn bfregs_of_a_static_context() {
    let b = BfregInfo::plan_static(2, true, true, 12, 16, 4).unwrap();
    let mut counts = vec![0u32; b.total_num_bfregs as usize];
    let pages: Vec<u32> = (10..10 + b.num_sys_pages).collect();
    let n = b.alloc(&mut counts).unwrap();
    assert_eq!(n, 12, "first QP gets the first low-latency bfreg");
    assert_eq!(b.uar_index(n, &pages, false).unwrap(), 16);
    assert_eq!(mlx5_rs_pure::ib::abi::bfreg::user_bfreg_index(n), 24);
}

fn mmap_caps() -> MmapCaps {
    MmapCaps {
        page_shift: 12,
        wc: true,
        clock_info: true,
    }
}

#[test]
fn mmap_of_libmlx5() {
    // libmlx5 maps the core clock (command 5) and the clock info page (7, index V1).
    let d = BfregInfo::dynamic(2, 0);
    let v = |pgoff| Vma {
        pgoff,
        len: 4096,
        shared: true,
        write: false,
        exec: false,
    };
    let core = mmap::pgoff(MMAP_CORE_CLOCK, 0).unwrap();
    assert_eq!(
        mmap::decode(&v(core), &mmap_caps(), &d),
        Ok(MmapTarget::CoreClock)
    );
    let ci = mmap::pgoff(MMAP_CLOCK_INFO, CLOCK_INFO_V1).unwrap();
    assert_eq!(
        mmap::decode(&v(ci), &mmap_caps(), &d),
        Ok(MmapTarget::ClockInfo)
    );
    // UAR object offsets (UAR_OBJ_ALLOC) come back as entries.
    let key = mmap::entry_key(MMAP_OFFSET_START, 3);
    let off = mmap::entry_offset(key, 12);
    assert_eq!(
        mmap::decode(&v(off >> 12), &mmap_caps(), &d),
        Ok(MmapTarget::Entry { key })
    );
    let s = BfregInfo::plan_static(2, true, true, 12, 16, 4).unwrap();
    let nc = mmap::pgoff(MMAP_NC_PAGE, 2).unwrap();
    assert_eq!(
        mmap::decode(&v(nc), &mmap_caps(), &s),
        Ok(MmapTarget::Uar {
            sys_page: 2,
            dynamic: false,
            bfreg: 4,
            caching: Caching::Uncached
        })
    );
    let wc = mmap::pgoff(MMAP_WC_PAGE, 2).unwrap();
    let nowc = MmapCaps {
        wc: false,
        ..mmap_caps()
    };
    assert_eq!(mmap::decode(&v(wc), &nowc, &s).unwrap_err().errno, EPERM);
    // Command 4 was never defined; 8 (device memory) names an entry.
    let p = mmap::pgoff(4, 0).unwrap();
    assert_eq!(
        mmap::decode(&v(p), &mmap_caps(), &s).unwrap_err().errno,
        EINVAL
    );
    let p = mmap::pgoff(MMAP_DEVICE_MEM, 0x101).unwrap();
    assert_eq!(
        mmap::decode(&v(p), &mmap_caps(), &s),
        Ok(MmapTarget::Entry {
            key: mmap::entry_key(MMAP_DEVICE_MEM, 0x101)
        })
    );
    let g = mmap::pgoff(MMAP_GET_CONTIGUOUS_PAGES, 0).unwrap();
    assert_eq!(
        mmap::decode(&v(g), &mmap_caps(), &s).unwrap_err().errno,
        ENOSYS
    );
}

// ---------------------------------------------------------------------------
// CQ

fn cq_caps() -> CqCaps {
    CqCaps {
        log_max_cq_sz: 22,
        cqe_compression: true,
        cqe_compression_128: false,
        mini_cqe_resp_stride_index: false,
        cqe_128_always: true,
        cq_resize: true,
        page_shift: 12,
    }
}

fn cq_req() -> CreateCq {
    CreateCq {
        buf_addr: 0x7f00_0000_1000,
        db_addr: 0x7f00_0000_2040,
        cqe_size: 64,
        ..Default::default()
    }
}

fn cq(cqe: u32, flags: u32, f: impl Fn(&mut CreateCq), dynuar: bool) -> Result<u32, Errno> {
    let mut r = cq_req();
    f(&mut r);
    parse_create_cq(cqe, flags, r.as_bytes(), &cq_caps(), None, dynuar)
        .map(|p| p.entries)
        .map_err(|e| e.errno)
}

#[test]
fn create_cq_accepts_libmlx5() {
    let p = parse_create_cq(255, 0, cq_req().as_bytes(), &cq_caps(), None, false).unwrap();
    assert_eq!(
        (p.entries, p.log_size, p.cqe_size, p.cqe_sz),
        (256, 8, 64, 0)
    );
    assert_eq!(p.buf_len, 256 * 64);
    assert_eq!(p.uar, CqUar::FirstStaticPage);
    // A dynamic-UAR library names the UAR (flag or ioctl attribute, which wins).
    let mut r = cq_req();
    r.flags = CREATE_CQ_FLAGS_UAR_PAGE_INDEX;
    r.uar_page_index = 77;
    let p = parse_create_cq(1, 0, r.as_bytes(), &cq_caps(), None, true).unwrap();
    assert_eq!((p.entries, p.uar), (2, CqUar::Index(77)));
    let p = parse_create_cq(1, 0, r.as_bytes(), &cq_caps(), Some(9), true).unwrap();
    assert_eq!(p.uar, CqUar::Index(9));
    // 22 bytes (up to cqe_comp_res_format) are enough.
    assert!(parse_create_cq(1, 0, &cq_req().as_bytes()[..22], &cq_caps(), None, false).is_ok());
    // Padded 128-byte CQEs, compression with a known format.
    let mut r = cq_req();
    r.cqe_size = 128;
    r.flags = CREATE_CQ_FLAGS_CQE_128B_PAD;
    let p = parse_create_cq(1, 0, r.as_bytes(), &cq_caps(), None, false).unwrap();
    assert_eq!(p.cqe_sz, 2);
    let mut r = cq_req();
    r.cqe_comp_en = 1;
    r.cqe_comp_res_format = CQE_RES_FORMAT_CSUM;
    let p = parse_create_cq(1, 0, r.as_bytes(), &cq_caps(), None, false).unwrap();
    assert_eq!(p.mini_cqe_format, Some(1));
}

#[test]
fn create_cq_rejects_as_upstream() {
    let max = 1u32 << 22;
    assert_eq!(cq(max - 1, 0, |_| {}, false), Ok(max));
    assert_eq!(cq(max, 0, |_| {}, false), Err(EINVAL));
    assert_eq!(cq(max + 1, 0, |_| {}, false), Err(EINVAL));
    assert_eq!(cq(1, 4, |_| {}, false), Err(EOPNOTSUPP));
    assert!(cq(1, 3, |_| {}, false).is_ok());
    let short = parse_create_cq(1, 0, &cq_req().as_bytes()[..21], &cq_caps(), None, false);
    assert_eq!(short.unwrap_err().errno, EINVAL);
    let mut long = [0u8; 40];
    long[..32].copy_from_slice(cq_req().as_bytes());
    long[39] = 1;
    let e = parse_create_cq(1, 0, &long, &cq_caps(), None, false).unwrap_err();
    assert_eq!(e.errno, EOPNOTSUPP);
    assert_eq!(cq(1, 0, |r| r.flags = 1 << 3, false), Err(EINVAL));
    for size in [0, 32, 63, 65, 256] {
        assert_eq!(cq(1, 0, |r| r.cqe_size = size, false), Err(EINVAL));
    }
    assert_eq!(cq(1, 0, |r| r.reserved0 = 1, false), Err(EINVAL));
    assert_eq!(cq(1, 0, |r| r.reserved1 = 1, false), Err(EINVAL));
    assert_eq!(cq(1, 0, |r| r.buf_addr += 32, false), Err(EINVAL));
    assert_eq!(cq(1, 0, |r| r.db_addr = 0x1000 + 4092, false), Err(EINVAL));
    assert!(cq(1, 0, |r| r.db_addr = 0x1000 + 4088, false).is_ok());
    assert_eq!(
        cq(1, 0, |_| {}, true),
        Err(EINVAL),
        "dynamic UARs must name one"
    );
    // Compression needs a format: 0 is none of them.
    assert_eq!(cq(1, 0, |r| r.cqe_comp_en = 1, false), Err(EINVAL));
    let comp128 = |r: &mut CreateCq| {
        r.cqe_comp_en = 1;
        r.cqe_size = 128;
    };
    assert_eq!(cq(1, 0, comp128, false), Err(EOPNOTSUPP));
    let fmt = |f: u8| {
        move |r: &mut CreateCq| {
            r.cqe_comp_en = 1;
            r.cqe_comp_res_format = f;
        }
    };
    assert_eq!(cq(1, 0, fmt(CQE_RES_FORMAT_HASH), false), Ok(2));
    assert_eq!(
        cq(1, 0, fmt(CQE_RES_FORMAT_CSUM_STRIDX), false),
        Err(EOPNOTSUPP)
    );
    // cqe_comp_en other than 1 leaves compression off, as upstream.
    assert_eq!(cq(1, 0, |r| r.cqe_comp_en = 2, false), Ok(2));
    assert_eq!(cq(1, 0, fmt(8), false), Err(EINVAL));
    assert_eq!(cq(1, 0, fmt(3), false), Err(EINVAL));
    assert_eq!(
        cq(1, 0, |r| r.flags = CREATE_CQ_FLAGS_CQE_128B_PAD, false),
        Err(EOPNOTSUPP)
    );
}

#[test]
fn resize_cq_as_upstream() {
    let r = ResizeCq {
        buf_addr: 0x10000,
        cqe_size: 64,
        ..Default::default()
    };
    let caps = cq_caps();
    assert_eq!(
        parse_resize_cq(511, 255, r.as_bytes(), &caps),
        Ok(ResizePlan::Resize {
            entries: 512,
            buf_addr: 0x10000,
            buf_len: 512 * 64,
            cqe_size: 64
        })
    );
    assert_eq!(
        parse_resize_cq(200, 255, r.as_bytes(), &caps),
        Ok(ResizePlan::Unchanged)
    );
    // resize allows one more than create: (1 << 22) + 1 would still be refused,
    // since cqe itself is checked first.
    assert_eq!(
        parse_resize_cq(1 << 22, 0, r.as_bytes(), &caps)
            .unwrap_err()
            .errno,
        EINVAL
    );
    let nocap = CqCaps {
        cq_resize: false,
        ..caps
    };
    assert_eq!(
        parse_resize_cq(1, 0, r.as_bytes(), &nocap)
            .unwrap_err()
            .errno,
        ENOSYS
    );
    assert_eq!(
        parse_resize_cq(1023, 0, &r.as_bytes()[..15], &caps)
            .unwrap_err()
            .errno,
        EINVAL
    );
    let bad = ResizeCq { reserved1: 1, ..r };
    assert_eq!(
        parse_resize_cq(1023, 0, bad.as_bytes(), &caps)
            .unwrap_err()
            .errno,
        EINVAL
    );
    let bad = ResizeCq { cqe_size: 100, ..r };
    assert_eq!(
        parse_resize_cq(1023, 0, bad.as_bytes(), &caps)
            .unwrap_err()
            .errno,
        EINVAL
    );
}

// ---------------------------------------------------------------------------
// QP and SRQ

fn qp_caps() -> QpCaps {
    QpCaps {
        log_max_qp_sz: 15,
        max_wqe_sz_sq: 1024,
        max_wqe_sz_rq: 512,
        sctr_data_cqe: false,
        qp_packet_based: false,
        page_shift: 12,
    }
}

/// An RC QP as libmlx5 sends it: 64-byte RQ WQEs × 256, 512 SQ basic blocks.
fn qp_req() -> CreateQp {
    CreateQp {
        buf_addr: 0x7f00_0001_0000,
        db_addr: 0x7f00_0002_0000,
        sq_wqe_count: 512,
        rq_wqe_count: 256,
        rq_wqe_shift: 6,
        uidx: 5,
        ..Default::default()
    }
}

const RC: QpAttr = QpAttr {
    kind: QpKind::Rc,
    max_recv_wr: 256,
    srq: false,
};

fn qp(attr: QpAttr, f: impl Fn(&mut CreateQp), cqe_version: u8) -> Result<QpUar, Errno> {
    let mut r = qp_req();
    f(&mut r);
    parse_create_qp(&attr, r.as_bytes(), &qp_caps(), cqe_version)
        .map(|p| p.uar)
        .map_err(|e| e.errno)
}

#[test]
fn create_qp_accepts_libmlx5() {
    let p = parse_create_qp(&RC, qp_req().as_bytes(), &qp_caps(), 1).unwrap();
    assert!(p.has_rq);
    assert_eq!((p.rq_wqe_cnt, p.rq_wqe_shift, p.rq_max_gs), (256, 6, 4));
    assert_eq!((p.sq_wqe_cnt, p.sq_offset), (512, 256 * 64));
    assert_eq!(p.buf_size, 256 * 64 + 512 * 64);
    assert_eq!((p.uidx, p.uar, p.flags), (5, QpUar::AllocStatic, 0));
    // A library without ECE sends 48 bytes.
    assert!(parse_create_qp(&RC, &qp_req().as_bytes()[..48], &qp_caps(), 1).is_ok());
    // CQE version 0: the default user index.
    assert!(qp(RC, |r| r.uidx = IB_DEFAULT_UIDX, 0).is_ok());
    // With an SRQ: no RQ, rq fields 0.
    let srq = QpAttr { srq: true, ..RC };
    let zero_rq = |r: &mut CreateQp| {
        r.rq_wqe_count = 0;
        r.rq_wqe_shift = 0;
    };
    assert!(qp(srq, zero_rq, 1).is_ok());
    // An XRC initiator (libmlx5's XRC_SEND): a send queue only, no RQ whatever the
    // receive capacity says (upstream qp_has_rq).
    let ini = QpAttr {
        kind: QpKind::XrcIni,
        ..RC
    };
    let mut r = qp_req();
    zero_rq(&mut r);
    let p = parse_create_qp(&ini, r.as_bytes(), &qp_caps(), 1).unwrap();
    assert!(!p.has_rq);
    assert_eq!((p.rq_wqe_cnt, p.sq_wqe_cnt, p.sq_offset), (0, 512, 0));
    assert_eq!(p.buf_size, 512 * 64);
    assert!(
        qp(ini, |_| {}, 1).is_err(),
        "RQ fields of a QP without an RQ"
    );
    // UAR choice.
    let dynb = |r: &mut CreateQp| {
        r.flags = QP_FLAG_BFREG_INDEX;
        r.bfreg_index = 3;
    };
    assert_eq!(qp(RC, dynb, 1), Ok(QpUar::DynamicBfreg(3)));
    let page = |r: &mut CreateQp| {
        r.flags = QP_FLAG_UAR_PAGE_INDEX;
        r.bfreg_index = 40;
    };
    assert_eq!(qp(RC, page, 1), Ok(QpUar::UarPage(40)));
    // Scatter-to-CQE without the cap is dropped silently; signature kept.
    let mut r = qp_req();
    r.flags = QP_FLAG_SCATTER_CQE | QP_FLAG_SIGNATURE;
    let p = parse_create_qp(&RC, r.as_bytes(), &qp_caps(), 1).unwrap();
    assert_eq!(p.flags, QP_FLAG_SIGNATURE);
    assert_eq!(p.rq_max_gs, 3);
}

#[test]
fn create_qp_rejects_as_upstream() {
    let b = qp_req();
    let e = parse_create_qp(&RC, &b.as_bytes()[..47], &qp_caps(), 1).unwrap_err();
    assert_eq!(e.errno, EINVAL);
    // From `reserved` (54) on, only zeros, EINVAL otherwise (ib_is_udata_cleared).
    let mut long = [0u8; 64];
    long[..56].copy_from_slice(b.as_bytes());
    assert!(parse_create_qp(&RC, &long, &qp_caps(), 1).is_ok());
    for i in 54..64 {
        let mut l = long;
        l[i] = 1;
        let e = parse_create_qp(&RC, &l, &qp_caps(), 1).unwrap_err();
        assert_eq!(
            (e.errno, e.reason),
            (EINVAL, Reason::TrailingNotZero { offset: i })
        );
    }
    assert_eq!(qp(RC, |r| r.flags = QP_FLAG_TYPE_DCI, 1), Err(EOPNOTSUPP));
    assert_eq!(qp(RC, |r| r.flags = QP_FLAG_TYPE_DCT, 1), Err(EOPNOTSUPP));
    for f in [
        QP_FLAG_TUNNEL_OFFLOADS,
        QP_FLAG_TIR_ALLOW_SELF_LB_UC,
        QP_FLAG_TIR_ALLOW_SELF_LB_MC,
        QP_FLAG_DCI_STREAM,
        QP_FLAG_PACKET_BASED_CREDIT_MODE,
        1 << 12,
        1 << 31,
    ] {
        assert_eq!(qp(RC, |r| r.flags = f, 1), Err(EINVAL), "flag {f:#x}");
    }
    let ud = QpAttr {
        kind: QpKind::Ud,
        ..RC
    };
    let pb = |r: &mut CreateQp| r.flags = QP_FLAG_PACKET_BASED_CREDIT_MODE;
    assert_eq!(qp(ud, pb, 1), Err(EINVAL));
    let mut caps = qp_caps();
    caps.qp_packet_based = true;
    let mut r = qp_req();
    r.flags = QP_FLAG_PACKET_BASED_CREDIT_MODE;
    assert!(parse_create_qp(&RC, r.as_bytes(), &caps, 1).is_ok());
    assert!(parse_create_qp(&ud, r.as_bytes(), &caps, 1).is_err());
    // User index.
    assert_eq!(qp(RC, |r| r.uidx = 5, 0), Err(EINVAL));
    assert_eq!(qp(RC, |r| r.uidx = IB_DEFAULT_UIDX, 1), Err(EINVAL));
    assert_eq!(qp(RC, |r| r.uidx = 1 << 24, 1), Err(EINVAL));
    // Sizes.
    let many = QpAttr {
        max_recv_wr: (1 << 15) + 1,
        ..RC
    };
    assert_eq!(qp(many, |_| {}, 1), Err(EINVAL));
    assert_eq!(qp(RC, |r| r.rq_wqe_shift = 31, 1), Err(EINVAL));
    assert_eq!(qp(RC, |r| r.rq_wqe_shift = 3, 1), Err(EINVAL));
    let sig_small = |r: &mut CreateQp| {
        r.flags = QP_FLAG_SIGNATURE;
        r.rq_wqe_shift = 3;
    };
    assert_eq!(qp(RC, sig_small, 1), Err(EINVAL));
    let srq = QpAttr { srq: true, ..RC };
    assert_eq!(qp(srq, |_| {}, 1), Err(EINVAL), "no RQ but RQ sizes");
    assert_eq!(qp(RC, |r| r.sq_wqe_count = (1 << 15) * 2, 1), Err(EINVAL));
    assert_eq!(qp(RC, |r| r.sq_wqe_count = 3, 1), Err(EINVAL));
    assert!(qp(RC, |r| r.sq_wqe_count = 0, 1).is_ok());
    let both = |r: &mut CreateQp| r.flags = QP_FLAG_UAR_PAGE_INDEX | QP_FLAG_BFREG_INDEX;
    assert_eq!(qp(RC, both, 1), Err(EINVAL));
    let huge_rq = |r: &mut CreateQp| {
        r.rq_wqe_count = 1 << 20;
        r.rq_wqe_shift = 11;
    };
    assert_eq!(qp(RC, huge_rq, 1), Err(EINVAL), "RQ bytes overflow an int");
    let tiny = QpCaps {
        max_wqe_sz_sq: 32,
        ..qp_caps()
    };
    let e = parse_create_qp(&RC, qp_req().as_bytes(), &tiny, 1).unwrap_err();
    assert_eq!(e.errno, EINVAL);
    // Addresses.
    assert_eq!(qp(RC, |r| r.buf_addr += 8, 1), Err(EINVAL));
    assert_eq!(qp(RC, |r| r.db_addr += 4090, 1), Err(EINVAL));
    let nobuf = |r: &mut CreateQp| {
        r.buf_addr = 3;
        r.sq_wqe_count = 0;
        r.rq_wqe_count = 0;
    };
    let norq = QpAttr {
        max_recv_wr: 0,
        ..RC
    };
    let nobuf_norq = |r: &mut CreateQp| {
        nobuf(r);
        r.rq_wqe_shift = 0;
    };
    assert!(qp(norq, nobuf_norq, 1).is_ok(), "no buffer, no alignment");
}

#[test]
fn create_qp_refuses_an_rq_geometry_the_context_cannot_hold() {
    // Strides: 16 bytes (shift 4) up to max_wqe_sz_rq (512, shift 9).
    for shift in 0..4 {
        assert_eq!(
            qp(RC, |r| r.rq_wqe_shift = shift, 1),
            Err(EINVAL),
            "{shift}"
        );
    }
    assert!(qp(RC, |r| r.rq_wqe_shift = 4, 1).is_ok());
    assert!(qp(RC, |r| r.rq_wqe_shift = 9, 1).is_ok());
    assert_eq!(qp(RC, |r| r.rq_wqe_shift = 10, 1), Err(EINVAL));
    // Counts: a power of two from 1 to 1 << log_max_qp_sz.
    assert_eq!(qp(RC, |r| r.rq_wqe_count = 0, 1), Err(EINVAL), "RQ of 0");
    for n in [3, 12, 255, 257, 1000] {
        assert_eq!(qp(RC, |r| r.rq_wqe_count = n, 1), Err(EINVAL), "{n}");
    }
    assert!(qp(RC, |r| r.rq_wqe_count = 1, 1).is_ok());
    let shift4 = |n| {
        move |r: &mut CreateQp| {
            r.rq_wqe_count = n;
            r.rq_wqe_shift = 4;
        }
    };
    assert!(qp(RC, shift4(1 << 15), 1).is_ok());
    assert_eq!(qp(RC, shift4(1 << 16), 1), Err(EINVAL), "above the device");
    // An SRQ or no receive WRs: no RQ, and then no geometry to give.
    let norq = QpAttr {
        max_recv_wr: 0,
        ..RC
    };
    let none = |r: &mut CreateQp| {
        r.rq_wqe_count = 0;
        r.rq_wqe_shift = 0;
    };
    assert!(qp(norq, none, 1).is_ok());
    assert_eq!(qp(norq, |r| r.rq_wqe_count = 0, 1), Err(EINVAL));
}

fn srq_caps() -> SrqCaps {
    SrqCaps {
        log_max_srq_sz: 15,
        max_wqe_sz_rq: 512,
        page_shift: 12,
    }
}

fn srq_req() -> CreateSrq {
    CreateSrq {
        buf_addr: 0x40_0000,
        db_addr: 0x50_0000,
        uidx: 9,
        ..Default::default()
    }
}

#[test]
fn create_srq_as_upstream() {
    let c = srq_caps();
    let p = parse_create_srq(SrqKind::Basic, 100, 1, srq_req().as_bytes(), &c, 1).unwrap();
    assert_eq!((p.max, p.wqe_shift, p.max_avail_gather), (128, 5, 1));
    assert_eq!(
        (p.buf_size, p.uidx, p.wq_sig),
        (128 * 32, IB_DEFAULT_UIDX, false)
    );
    let p = parse_create_srq(SrqKind::Basic, 1, 3, srq_req().as_bytes(), &c, 1).unwrap();
    assert_eq!((p.wqe_shift, p.max_avail_gather), (6, 3));
    let err = |kind, wr, sge, b: &[u8], v| {
        parse_create_srq(kind, wr, sge, b, &c, v)
            .map(|p| p.uidx)
            .map_err(|e| e.errno)
    };
    let b = srq_req();
    assert_eq!(
        err(SrqKind::Basic, 1 << 15, 1, b.as_bytes(), 1),
        Err(EINVAL)
    );
    assert!(err(SrqKind::Basic, (1 << 15) - 1, 1, b.as_bytes(), 1).is_ok());
    assert_eq!(err(SrqKind::Basic, 1, 33, b.as_bytes(), 1), Err(EINVAL));
    assert_eq!(
        err(SrqKind::Basic, 1, 1, &b.as_bytes()[..19], 1),
        Err(EINVAL)
    );
    assert!(err(SrqKind::Basic, 1, 1, &b.as_bytes()[..20], 1).is_ok());
    let mut long = [0u8; 33];
    long[..32].copy_from_slice(b.as_bytes());
    long[32] = 1;
    assert_eq!(err(SrqKind::Basic, 1, 1, &long, 1), Err(EOPNOTSUPP));
    let r = CreateSrq { reserved0: 1, ..b };
    assert_eq!(err(SrqKind::Basic, 1, 1, r.as_bytes(), 1), Err(EINVAL));
    let r = CreateSrq { reserved1: 1, ..b };
    assert_eq!(err(SrqKind::Basic, 1, 1, r.as_bytes(), 1), Err(EINVAL));
    // XRC: user index present (28 bytes) and valid with CQE version 1.
    assert_eq!(err(SrqKind::Xrc, 1, 1, b.as_bytes(), 1), Ok(9));
    assert_eq!(err(SrqKind::Xrc, 1, 1, &b.as_bytes()[..24], 1), Err(EINVAL));
    assert_eq!(
        err(SrqKind::Xrc, 1, 1, &b.as_bytes()[..24], 0),
        Ok(IB_DEFAULT_UIDX)
    );
    assert_eq!(err(SrqKind::Xrc, 1, 1, b.as_bytes(), 0), Err(EINVAL));
    let d = CreateSrq {
        uidx: IB_DEFAULT_UIDX,
        ..b
    };
    assert_eq!(
        err(SrqKind::Xrc, 1, 1, d.as_bytes(), 0),
        Ok(IB_DEFAULT_UIDX)
    );
    let r = CreateSrq {
        buf_addr: 0x40_0010,
        ..b
    };
    assert_eq!(err(SrqKind::Basic, 1, 1, r.as_bytes(), 1), Err(EINVAL));
    let r = CreateSrq {
        flags: SRQ_FLAG_SIGNATURE | 0x80,
        ..b
    };
    let p = parse_create_srq(SrqKind::Basic, 1, 1, r.as_bytes(), &c, 1).unwrap();
    assert!(p.wq_sig, "other flag bits ignored, as upstream");
}

// ---------------------------------------------------------------------------
// Every length, random bytes

/// xorshift64*: deterministic, no crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn bytes(&mut self, n: usize, sparse: bool) -> Vec<u8> {
        (0..n)
            .map(|_| {
                let v = self.next();
                // Half the inputs are mostly zero, so that the checks past the
                // first rejection are reached too.
                if sparse && v % 8 != 0 {
                    0
                } else {
                    (v >> 8) as u8
                }
            })
            .collect()
    }
}

const ERRNOS: [Errno; 5] = [EINVAL, EOPNOTSUPP, ENOMEM, ENOSYS, EPERM];

#[test]
fn every_length_random_bytes() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut accepted = [0usize; 6];
    for len in 0..=64 {
        for round in 0..4000 {
            let b = rng.bytes(len, round % 2 == 0);
            let word = rng.next();
            let small = (word % 4096) as u32;
            let bits = word as u32;
            match parse_request(&b) {
                Ok(r) => {
                    accepted[0] += 1;
                    assert!(len == 8 || len >= 16);
                    for dev in [DEV, UctxDevCaps { devx: true, ..DEV }] {
                        match r.plan(&dev) {
                            Ok(p) => {
                                let bf = p.bfregs;
                                assert!(p.cqe_version <= 1);
                                if !bf.lib_uar_dyn {
                                    assert!(bf.max_bfregs() <= MAX_BFREGS);
                                    assert!(bf.num_low_latency_bfregs < bf.max_bfregs());
                                    let mut counts = vec![0u32; bf.total_num_bfregs as usize];
                                    let n = bf.alloc(&mut counts).unwrap();
                                    assert!(n < bf.max_bfregs());
                                }
                                let resp = build_response(&resp_caps(), &p, small as usize);
                                assert!(resp.response_length <= 72);
                            }
                            Err(e) => assert!(ERRNOS.contains(&e.errno)),
                        }
                    }
                }
                Err(e) => assert!(ERRNOS.contains(&e.errno), "{e}"),
            }
            match parse_create_cq(small, bits & 7, &b, &cq_caps(), None, word & 1 == 0) {
                Ok(p) => {
                    accepted[1] += 1;
                    assert!(p.entries.is_power_of_two() && p.entries <= 1 << 22);
                    assert!(p.entries > small);
                    assert!(p.cqe_size == 64 || p.cqe_size == 128);
                    assert_eq!(p.buf_addr % 64, 0);
                    assert!(p.db_addr % 4096 <= 4088);
                }
                Err(e) => assert!(ERRNOS.contains(&e.errno), "{e}"),
            }
            if let Ok(ResizePlan::Resize { cqe_size, .. }) =
                parse_resize_cq(small, bits % 64, &b, &cq_caps())
            {
                accepted[2] += 1;
                assert!(cqe_size == 64 || cqe_size == 128);
            }
            let attr = QpAttr {
                kind: [QpKind::Rc, QpKind::Uc, QpKind::Ud, QpKind::XrcIni][(word % 4) as usize],
                max_recv_wr: small,
                srq: word & 8 != 0,
            };
            match parse_create_qp(&attr, &b, &qp_caps(), (word >> 4 & 1) as u8) {
                Ok(p) => {
                    accepted[3] += 1;
                    assert!(p.sq_wqe_cnt == 0 || p.sq_wqe_cnt.is_power_of_two());
                    assert!(p.sq_wqe_cnt <= 1 << 15);
                    assert!(p.buf_size <= i32::MAX as u32);
                    assert_eq!(p.sq_offset as u64, (p.rq_wqe_cnt as u64) << p.rq_wqe_shift);
                    assert!(p.buf_size == 0 || p.buf_addr % 64 == 0);
                    assert_eq!(p.flags & (QP_FLAG_TYPE_DCI | QP_FLAG_TYPE_DCT), 0);
                }
                Err(e) => assert!(ERRNOS.contains(&e.errno), "{e}"),
            }
            match parse_modify_qp(&b, word & 4 != 0) {
                Ok(Some(m)) => {
                    accepted[5] += 1;
                    assert!(len >= 16);
                    assert!(!m.ooo_dp || word & 4 != 0);
                }
                Ok(None) => assert_eq!(len, 0),
                Err(e) => assert!(ERRNOS.contains(&e.errno), "{e}"),
            }
            let kind = if word & 2 == 0 {
                SrqKind::Basic
            } else {
                SrqKind::Xrc
            };
            match parse_create_srq(kind, small, bits % 40, &b, &srq_caps(), 1) {
                Ok(p) => {
                    accepted[4] += 1;
                    assert!(p.max.is_power_of_two() && p.max > small);
                    assert!(p.wqe_shift >= 5);
                }
                Err(e) => assert!(ERRNOS.contains(&e.errno), "{e}"),
            }
            let vma = Vma {
                pgoff: word >> (word % 48),
                len: [4096, 8192, 0][(bits % 3) as usize],
                shared: bits & 8 != 0,
                write: bits & 16 != 0,
                exec: bits & 32 != 0,
            };
            let outlen = (word % 200) as usize;
            match query_device_response(&QueryDeviceCaps::default(), &b, outlen) {
                Ok(Some(r)) => {
                    assert!(r.response_length as usize <= outlen.min(112));
                    assert!(r.response_length >= 8);
                }
                Ok(None) => assert_eq!(outlen, 0),
                Err(e) => assert!(ERRNOS.contains(&e.errno), "{e}"),
            }
            let plan = BfregInfo::plan_static(2, true, true, 12, 2 + small % 500, small % 2)
                .unwrap_or_else(|_| BfregInfo::dynamic(2, 0));
            match mmap::decode(&vma, &mmap_caps(), &plan) {
                Ok(MmapTarget::Uar {
                    sys_page, dynamic, ..
                }) => {
                    assert!(sys_page < plan.num_sys_pages);
                    assert!(dynamic || sys_page < plan.num_static_sys_pages);
                }
                Ok(_) => {}
                Err(e) => assert!(ERRNOS.contains(&e.errno), "{e}"),
            }
        }
    }
    // The random inputs reached acceptance for every parser, not only rejections.
    assert!(accepted.iter().all(|&n| n > 0), "{accepted:?}");
}
