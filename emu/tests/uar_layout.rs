//! UARs as caps `uar_4k` and `log_uar_page_sz` lay them out (emu/README.md, "UARs"):
//! which index ALLOC_UAR returns, which UARs it grants, and which BAR0 bytes ring an
//! EQ's doorbell, with 4 KiB UARs in 64 KiB system pages and with 64 KiB UAR pages.

mod common;

use common::{give_pages, input, Host};
use mlx5_emu::ifc::caps::{cmd_hca_cap as g, CAP_OFFSET};
use mlx5_emu::ifc::cmds::{alloc_uar_out, dealloc_uar_in};
use mlx5_emu::ifc::eq::{create_eq_out, eqc, gen_eqe_in, EVENT_BITMASK_OFFSET, PAS_OFFSET};
use mlx5_emu::ifc::opcodes::{cap_type, Opcode};
use mlx5_emu::ifc::status::CmdStatus;
use mlx5_emu::mem::GuestMemory;

const OP: fn(Opcode) -> u16 = |o| o as u16;

fn query_cur(h: &mut Host) -> Vec<u8> {
    let out = h.ok(
        &input(
            16,
            OP(Opcode::QUERY_HCA_CAP),
            (cap_type::GENERAL << 1) | 1,
            &[],
        ),
        16 + 4096,
    );
    out[CAP_OFFSET..CAP_OFFSET + 256].to_vec()
}

/// SET_HCA_CAP of `uar_4k` and `log_uar_page_sz` (the rest as read); its status.
fn set_uar_caps(h: &mut Host, uar_4k: bool, log: u64) -> u8 {
    let cur = query_cur(h);
    let mut set = input(
        16 + 4096,
        OP(Opcode::SET_HCA_CAP),
        cap_type::GENERAL << 1,
        &[],
    );
    set[CAP_OFFSET..CAP_OFFSET + 256].copy_from_slice(&cur);
    g::UAR_4K
        .raw()
        .set(&mut set[CAP_OFFSET..], u64::from(uar_4k))
        .unwrap();
    g::LOG_UAR_PAGE_SZ
        .raw()
        .set(&mut set[CAP_OFFSET..], log)
        .unwrap();
    h.run(&set, 16).0
}

/// An initialized function whose caps were set to (`uar_4k`, `log`).
fn initialized(uar_4k: bool, log: u64) -> Host {
    let mut h = Host::new();
    h.ok(&input(16, OP(Opcode::ENABLE_HCA), 0, &[]), 16);
    assert_eq!(set_uar_caps(&mut h, uar_4k, log), 0);
    give_pages(&mut h, 48);
    h.ok(&input(32, OP(Opcode::INIT_HCA), 0, &[]), 16);
    h
}

fn alloc_uar(h: &mut Host) -> u32 {
    let out = h.ok(&input(16, OP(Opcode::ALLOC_UAR), 0, &[]), 16);
    alloc_uar_out::UAR.raw().get(&out).unwrap() as u32
}

fn dealloc_uar(h: &mut Host, uar: u32) -> u8 {
    let inp = input(
        16,
        OP(Opcode::DEALLOC_UAR),
        0,
        &[(dealloc_uar_in::UAR.raw(), u64::from(uar))],
    );
    h.run(&inp, 16).0
}

/// CREATE_EQ of 4 entries on UAR `uar`, MSI-X vector 2, subscribed to event 0x13;
/// (status, eqn).
fn create_eq(h: &mut Host, uar: u32) -> (u8, u8) {
    let buf = h.alloc(4096, 4096);
    h.mem.write(buf, &[1u8; 256]).unwrap();
    let mut inp = input(PAS_OFFSET + 8, OP(Opcode::CREATE_EQ), 0, &[]);
    let c = &mut inp[0x10..];
    eqc::LOG_EQ_SIZE.raw().set(c, 2).unwrap();
    eqc::UAR_PAGE.raw().set(c, u64::from(uar)).unwrap();
    eqc::INTR.raw().set(c, 2).unwrap();
    inp[EVENT_BITMASK_OFFSET..EVENT_BITMASK_OFFSET + 8]
        .copy_from_slice(&(1u64 << 0x13).to_be_bytes());
    inp[PAS_OFFSET..PAS_OFFSET + 8].copy_from_slice(&buf.to_be_bytes());
    let (st, _, out) = h.run(&inp, 16);
    (
        st,
        create_eq_out::EQ_NUMBER.raw().get(&out).unwrap_or(0) as u8,
    )
}

/// One EQE on `eqn` (not armed yet: no interrupt), then the arm doorbell written at
/// BAR0 byte `uar_off` + 0x40; whether the EQ's interrupt fired.
fn arm_at(h: &mut Host, eqn: u8, uar_off: u64) -> bool {
    let mut inp = input(
        80,
        OP(Opcode::GEN_EQE),
        0,
        &[(gen_eqe_in::EQ_NUMBER.raw(), u64::from(eqn))],
    );
    inp[16 + 1] = 0x13;
    assert_eq!(h.run(&inp, 16).0, 0);
    let before = h.irq.fired.lock().unwrap().len();
    h.dev
        .bar0_write(uar_off + 0x40, &(u32::from(eqn) << 24).to_be_bytes());
    h.dev.step();
    h.irq.fired.lock().unwrap().len() > before
}

fn violations(h: &Host) -> u64 {
    h.dev.fw().stats.violations
}

#[test]
fn default_layout_is_one_4k_uar_per_index() {
    let mut h = initialized(false, 0);
    assert_eq!(
        g::NUM_OF_UARS_PER_PAGE.raw().get(&query_cur(&mut h)),
        Some(1)
    );
    let (a, b) = (alloc_uar(&mut h), alloc_uar(&mut h));
    // Pages 0…7 hold the init segment and MSI-X.
    assert_eq!((a, b), (8, 9));
    assert_eq!(create_eq(&mut h, a + 2).0, CmdStatus::BAD_PARAM_ERR as u8);
    let (st, eqn) = create_eq(&mut h, b);
    assert_eq!(st, 0);
    assert!(arm_at(&mut h, eqn, u64::from(b) << 12));
    assert_eq!(
        violations(&h),
        1,
        "only the CREATE_EQ on an unallocated UAR"
    );
}

#[test]
fn uar_4k_grants_a_whole_aligned_system_page_of_4k_uars() {
    // 64 KiB system pages: 16 UARs each.
    let mut h = initialized(true, 4);
    assert_eq!(
        g::NUM_OF_UARS_PER_PAGE.raw().get(&query_cur(&mut h)),
        Some(16)
    );
    // UARs 0…15 share a page with the init segment: the first page is 16…31.
    let (a, b) = (alloc_uar(&mut h), alloc_uar(&mut h));
    assert_eq!((a, b), (16, 32));
    // Every UAR of the page is the function's; the next page's are not.
    let (st, eqn) = create_eq(&mut h, a + 3);
    assert_eq!(st, 0);
    assert_eq!(create_eq(&mut h, b + 16).0, CmdStatus::BAD_PARAM_ERR as u8);
    let v = violations(&h);
    // The doorbell of UAR 19 is in 4 KiB page 19 of the BAR, at +0x40.
    assert!(arm_at(&mut h, eqn, 19 << 12));
    // Ringing the system page's first UAR is another UAR: not this EQ's.
    assert!(!arm_at(&mut h, eqn, u64::from(a) << 12));
    assert_eq!(violations(&h), v + 1, "the doorbell on the wrong UAR");
    // DEALLOC_UAR names what ALLOC_UAR returned, and frees the whole page.
    assert_eq!(dealloc_uar(&mut h, b + 1), CmdStatus::BAD_RES_ERR as u8);
    assert_eq!(dealloc_uar(&mut h, b), 0);
    assert_eq!(alloc_uar(&mut h), 32);
}

#[test]
fn without_uar_4k_the_index_counts_uar_pages_of_the_system_page_size() {
    // 64 KiB UAR pages: page 0 holds the init segment, UAR 1 is BAR0 64…128 KiB.
    let mut h = initialized(false, 4);
    assert_eq!(
        g::NUM_OF_UARS_PER_PAGE.raw().get(&query_cur(&mut h)),
        Some(1)
    );
    let (a, b) = (alloc_uar(&mut h), alloc_uar(&mut h));
    assert_eq!((a, b), (1, 2));
    let (st, eqn) = create_eq(&mut h, b);
    assert_eq!(st, 0);
    // UAR 2 at 128 KiB; at 4 KiB × 2 (the arithmetic of 4 KiB UARs) is no UAR of it.
    assert!(!arm_at(&mut h, eqn, u64::from(b) << 12));
    assert!(!arm_at(&mut h, eqn, 9 << 12));
    assert!(arm_at(&mut h, eqn, u64::from(b) << 16));
}

#[test]
fn uar_page_size_is_bounded_and_set_before_init_hca() {
    let mut h = Host::new();
    h.ok(&input(16, OP(Opcode::ENABLE_HCA), 0, &[]), 16);
    assert_eq!(
        set_uar_caps(&mut h, false, 9),
        CmdStatus::BAD_PARAM_ERR as u8
    );
    let cur = query_cur(&mut h);
    assert_eq!(g::LOG_UAR_PAGE_SZ.raw().get(&cur), Some(0));
    assert_eq!(set_uar_caps(&mut h, true, 2), 0);
    assert_eq!(
        g::NUM_OF_UARS_PER_PAGE.raw().get(&query_cur(&mut h)),
        Some(4)
    );
    give_pages(&mut h, 48);
    h.ok(&input(32, OP(Opcode::INIT_HCA), 0, &[]), 16);
    // 16 KiB pages of 4 UARs: 8…11 is the first page past the init segment.
    assert_eq!(alloc_uar(&mut h), 8);
    assert_eq!(alloc_uar(&mut h), 12);
    assert_eq!(
        set_uar_caps(&mut h, false, 0),
        CmdStatus::BAD_SYS_STATE_ERR as u8
    );
}
