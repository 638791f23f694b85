//! Command transport: every delivery-status error, mailbox chains of 1…N blocks,
//! signatures when enabled, doorbells on software-owned slots, and out-of-order
//! completion with an injected delay.

mod common;

use common::{input, Host};
use mlx5_emu::fw::inject::{Action, CorruptField, Corruption};
use mlx5_emu::ifc::cmd_layout::{self as cl, block_off, entry_off};
use mlx5_emu::ifc::init_seg as is;
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::regs::{access_register_in, reg_id};
use mlx5_emu::ifc::status::DeliveryStatus as D;
use mlx5_emu::mem::GuestMemory;

fn nop() -> Vec<u8> {
    input(16, Opcode::NOP as u16, 0, &[])
}

/// A command with `n` input and output blocks whose data comes back verbatim
/// (ACCESS_REG read of PCAM echoes the register data: no feature bits are set).
fn echo_cmd(n: usize) -> Vec<u8> {
    let len = 16 + n * cl::BLOCK_DATA_LEN;
    let mut inp = input(
        len,
        Opcode::ACCESS_REG as u16,
        1,
        &[(
            access_register_in::REGISTER_ID.raw(),
            u64::from(reg_id::PCAM),
        )],
    );
    for (i, b) in inp.iter_mut().enumerate().skip(16) {
        *b = (i * 7 + 3) as u8;
    }
    inp
}

fn enabled() -> Host {
    let mut h = Host::new();
    h.ok(&input(16, Opcode::ENABLE_HCA as u16, 0, &[]), 16);
    h
}

fn corrupt_and_run(
    h: &mut Host,
    inp: &[u8],
    outlen: usize,
    f: impl FnOnce(&mut Host, &common::Prepared),
) -> u8 {
    let p = h.prepare(0, inp, outlen);
    f(h, &p);
    h.ring(0);
    h.dev.step();
    let so = h.status_own(&p);
    assert_eq!(so & 1, 0, "ownership must return to software");
    so >> 1
}

fn poke(h: &Host, addr: u64, bytes: &[u8]) {
    h.mem.write(addr, bytes).unwrap();
}

#[test]
fn mailbox_chains_of_1_to_n_blocks_round_trip() {
    let mut h = enabled();
    for n in [1usize, 2, 3, 7, 16, 33] {
        let inp = echo_cmd(n);
        let out = h.ok(&inp, inp.len());
        assert_eq!(&out[16..], &inp[16..], "{n} blocks");
    }
    // Input chains longer than needed (message caches) are fine.
    let inp = echo_cmd(1);
    let p = h.prepare(0, &echo_cmd(4), inp.len());
    let e = p.entry_addr;
    poke(
        &h,
        e + entry_off::INLEN as u64,
        &(inp.len() as u32).to_be_bytes(),
    );
    let mut ent = [0u8; 64];
    h.mem.read(e, &mut ent).unwrap();
    ent[entry_off::SIG] = 0;
    ent[entry_off::SIG] = cl::entry_signature(&ent);
    poke(&h, e, &ent);
    h.ring(0);
    h.dev.step();
    assert_eq!(h.status_own(&p), 0);
}

#[test]
fn every_delivery_error_is_reported_instead_of_executing() {
    let mut h = enabled();
    let two = echo_cmd(2);
    type Corrupt = Box<dyn Fn(&mut Host, &common::Prepared)>;
    let cases: Vec<(D, Corrupt)> = vec![
        (
            D::CMD_DATA_ERR,
            Box::new(|h, p| poke(h, p.entry_addr, &[3])),
        ),
        (
            D::RES_FLD_NOT_CLR_ERR,
            Box::new(|h, p| poke(h, p.entry_addr + 1, &[1])),
        ),
        (
            D::RES_FLD_NOT_CLR_ERR,
            Box::new(|h, p| poke(h, p.entry_addr + 0x3e, &[1])),
        ),
        (
            D::RES_FLD_NOT_CLR_ERR,
            Box::new(|h, p| poke(h, p.in_blocks[1] + 0x210, &[1])),
        ),
        (
            D::RES_FLD_NOT_CLR_ERR,
            Box::new(|h, p| poke(h, p.out_blocks[0] + block_off::RSVD1 as u64, &[1])),
        ),
        (
            D::INPUT_LEN_ERR,
            Box::new(|h, p| poke(h, p.entry_addr + 4, &4u32.to_be_bytes())),
        ),
        (
            D::INPUT_LEN_ERR,
            Box::new(|h, p| poke(h, p.entry_addr + 4, &u32::MAX.to_be_bytes())),
        ),
        (
            D::OUTPUT_LEN_ERR,
            Box::new(|h, p| poke(h, p.entry_addr + 0x38, &2u32.to_be_bytes())),
        ),
        (
            D::BAD_INPUT_PTR_ERR,
            Box::new(|h, p| poke(h, p.entry_addr + 8, &(p.in_blocks[0] + 0x100).to_be_bytes())),
        ),
        (
            D::BAD_INPUT_PTR_ERR,
            Box::new(|h, p| {
                poke(
                    h,
                    p.in_blocks[0] + block_off::NEXT as u64,
                    &(p.in_blocks[1] + 0x200).to_be_bytes(),
                )
            }),
        ),
        (
            D::BAD_INPUT_PTR_ERR,
            Box::new(|h, p| poke(h, p.entry_addr + 8, &0u64.to_be_bytes())),
        ),
        (
            D::BAD_INPUT_PTR_ERR,
            Box::new(|h, p| poke(h, p.entry_addr + 8, &0xdead_0000u64.to_be_bytes())),
        ),
        (
            D::BAD_INPUT_PTR_ERR,
            Box::new(|h, p| {
                poke(
                    h,
                    p.in_blocks[0] + block_off::NEXT as u64,
                    &0x400u64.to_be_bytes(),
                )
            }),
        ),
        (
            D::BAD_OUTPUT_PTR_ERR,
            Box::new(|h, p| {
                poke(
                    h,
                    p.entry_addr + 0x30,
                    &(p.out_blocks[0] | 0x40).to_be_bytes(),
                )
            }),
        ),
        (
            D::BAD_BLK_NUM_ERR,
            Box::new(|h, p| {
                poke(
                    h,
                    p.in_blocks[1] + block_off::BLOCK_NUM as u64,
                    &5u32.to_be_bytes(),
                )
            }),
        ),
        (
            D::BAD_BLK_NUM_ERR,
            Box::new(|h, p| {
                poke(
                    h,
                    p.out_blocks[0] + block_off::BLOCK_NUM as u64,
                    &1u32.to_be_bytes(),
                )
            }),
        ),
        (
            D::TOKEN_ERR,
            Box::new(|h, p| poke(h, p.in_blocks[1] + block_off::TOKEN as u64, &[0xee])),
        ),
        (
            D::TOKEN_ERR,
            Box::new(|h, p| poke(h, p.out_blocks[1] + block_off::TOKEN as u64, &[0xee])),
        ),
    ];
    for (want, f) in cases {
        let got = corrupt_and_run(&mut h, &two, two.len(), f);
        assert_eq!(got, want as u8, "expected {}", want.name());
    }
    // Nothing executed: only the initial ENABLE_HCA is counted.
    let s = mlx5_emu::control::stats(&h.dev);
    assert_eq!(s["commands_total"], 1);
    assert_eq!(s["delivery_errors"]["TOKEN_ERR"], 2);
    assert!(s["dma_errors"].as_u64().unwrap() >= 1);
}

#[test]
fn signatures_are_checked_only_when_enabled() {
    let mut h = enabled();
    // Disabled (default): a wrong entry signature is ignored.
    let st = corrupt_and_run(&mut h, &nop(), 16, |h, p| {
        poke(h, p.entry_addr + entry_off::SIG as u64, &[0x00])
    });
    assert_eq!(st, 0);
    h.dev.fw().caps.gen_cur[0x42] |= 0xc0; // cmdif_checksum = 3
    let st = corrupt_and_run(&mut h, &nop(), 16, |h, p| {
        poke(h, p.entry_addr + entry_off::SIG as u64, &[0x00])
    });
    assert_eq!(st, D::SIGNATURE_ERR as u8);
    let two = echo_cmd(2);
    let st = corrupt_and_run(&mut h, &two, two.len(), |h, p| {
        poke(h, p.in_blocks[1] + 5, &[0x77])
    });
    assert_eq!(st, D::SIGNATURE_ERR as u8);
    // Good signatures pass, and the output blocks carry valid signatures.
    let p = h.prepare(0, &two, two.len());
    h.ring(0);
    h.dev.step();
    assert_eq!(h.status_own(&p), 0);
    for &b in &p.out_blocks {
        let mut blk = [0u8; cl::BLOCK_SIZE];
        h.mem.read(b, &mut blk).unwrap();
        assert!(cl::block_signatures_ok(&blk));
    }
    let mut e = [0u8; 64];
    h.mem.read(p.entry_addr, &mut e).unwrap();
    assert!(cl::entry_signature_ok(&e));
}

#[test]
fn doorbell_on_software_owned_slot_is_a_violation() {
    let mut h = enabled();
    let p = h.prepare(3, &nop(), 16);
    poke(&h, p.entry_addr + entry_off::STATUS_OWN as u64, &[0]);
    h.ring(3);
    h.dev.step();
    let s = mlx5_emu::control::stats(&h.dev);
    assert_eq!(s["violations"], 1);
    assert_eq!(s["commands_total"], 1);
}

#[test]
fn delayed_command_completes_after_a_later_one() {
    let mut h = enabled();
    h.dev
        .fw()
        .inject
        .add(Some(Opcode::QUERY_ISSI as u16), Action::Delay(60), Some(1));
    let a = h.prepare(0, &input(16, Opcode::QUERY_ISSI as u16, 0, &[]), 0x70);
    let b = h.prepare(1, &nop(), 16);
    h.ring(0);
    h.ring(1);
    h.dev.step();
    assert_eq!(h.status_own(&b), 0, "NOP completes first");
    assert_eq!(h.status_own(&a), 1, "QUERY_ISSI still owned by hardware");
    // The busy slot cannot be re-rung meanwhile.
    h.ring(0);
    h.dev.step();
    std::thread::sleep(std::time::Duration::from_millis(70));
    h.dev.step();
    assert_eq!(h.status_own(&a), 0);
    assert_eq!(h.output(&a)[0x6c..0x70], [0, 0, 0, 3]);
    let s = mlx5_emu::control::stats(&h.dev);
    assert_eq!(s["violations"], 1);
}

/// A driver instance that sets its queue up again (a reload after a command never
/// completed) finds every slot idle, even with its queue at the same DMA address as
/// the previous instance's (emu/README.md, "queue address written").
#[test]
fn queue_set_up_at_the_same_address_frees_a_never_completed_slot() {
    let mut h = enabled();
    h.dev
        .fw()
        .inject
        .add(Some(Opcode::NOP as u16), Action::Never, Some(1));
    let a = h.prepare(0, &nop(), 16);
    h.ring(0);
    h.dev.step();
    assert_eq!(h.status_own(&a), 1, "never completes");
    // Re-ringing it before a set-up is a violation (the slot is hardware's).
    h.ring(0);
    h.dev.step();
    assert_eq!(mlx5_emu::control::stats(&h.dev)["violations"], 1);
    // The new instance writes the same address (nic_interface FULL_DRIVER).
    h.write32(is::CMDQ_ADDR_H, (h.queue >> 32) as u32);
    h.write32(is::CMDQ_ADDR_L_SZ, h.queue as u32);
    h.dev.step();
    let (st, _, _) = h.run(&nop(), 16);
    assert_eq!(st, 0, "slot 0 runs the new instance's command");
    assert_eq!(
        mlx5_emu::control::stats(&h.dev)["violations"],
        1,
        "no new violation"
    );
}

#[test]
fn firmware_thread_completes_commands_on_its_own() {
    let mut h = enabled();
    let t = h.dev.spawn_firmware();
    for i in 0..20 {
        let p = h.prepare(i % 31, &nop(), 16);
        h.ring(i % 31);
        let start = std::time::Instant::now();
        while h.status_own(&p) & 1 == 1 {
            assert!(
                start.elapsed().as_secs() < 2,
                "firmware thread did not complete slot"
            );
            std::thread::yield_now();
        }
    }
    h.dev.shutdown();
    t.join().unwrap();
}

#[test]
fn injected_statuses() {
    let mut h = enabled();
    h.dev.fw().inject.add(
        Some(Opcode::NOP as u16),
        Action::Status(0x03, 0xabcd),
        Some(1),
    );
    let (st, synd, _) = h.run(&nop(), 16);
    assert_eq!((st, synd), (3, 0xabcd));
    h.dev.fw().inject.add(
        Some(Opcode::NOP as u16),
        Action::Delivery(D::INTERNAL_ERR),
        Some(1),
    );
    assert_eq!(h.cmd(&nop(), 16), Err(D::INTERNAL_ERR as u8));
    h.dev
        .fw()
        .inject
        .add(None, Action::BadOutputSignature, Some(1));
    let two = echo_cmd(2);
    let p = h.prepare(0, &two, two.len());
    h.ring(0);
    h.dev.step();
    let mut blk = [0u8; cl::BLOCK_SIZE];
    h.mem.read(p.out_blocks[0], &mut blk).unwrap();
    assert!(!cl::block_signatures_ok(&blk));
    h.dev
        .fw()
        .inject
        .add(Some(Opcode::NOP as u16), Action::Never, None);
    let p = h.prepare(0, &nop(), 16);
    h.ring(0);
    h.dev.step();
    assert_eq!(h.status_own(&p), 1);
}

#[test]
fn jitter_makes_independent_commands_complete_out_of_order() {
    let mut h = enabled();
    assert_eq!(
        mlx5_emu::control::handle(&h.dev, &serde_json::json!({"cmd":"jitter","max_us":20000}))
            ["ok"],
        true
    );
    let ps: Vec<_> = (0..8).map(|s| h.prepare(s, &nop(), 16)).collect();
    for s in 0..8 {
        h.ring(s);
    }
    let mut order = vec![];
    let start = std::time::Instant::now();
    while order.len() < 8 {
        assert!(start.elapsed().as_secs() < 2);
        h.dev.step();
        for p in &ps {
            if h.status_own(p) & 1 == 0 && !order.contains(&p.slot) {
                order.push(p.slot);
            }
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    let sorted: Vec<usize> = (0..8).collect();
    assert_ne!(order, sorted, "completions came in doorbell order");
}

/// mlx5_ifc.h gives the entry's mailbox pointers bits 31:9 (512-byte alignment) and a
/// block's next pointer bits 31:10 (1 KiB): a first block at a 512-byte boundary is
/// fine, a next pointer there is an alignment error. Address 0 is not special.
#[test]
fn pointer_alignment_follows_mlx5_ifc() {
    let mut h = enabled();
    let two = echo_cmd(2);
    // Move input block 0 to an address that is 512- but not 1024-byte aligned.
    let moved = h.alloc(2048, 1024) + 512;
    let p = h.prepare(0, &two, two.len());
    let mut blk = [0u8; cl::BLOCK_SIZE];
    h.mem.read(p.in_blocks[0], &mut blk).unwrap();
    poke(&h, moved, &blk);
    poke(
        &h,
        p.entry_addr + entry_off::IN_PTR as u64,
        &moved.to_be_bytes(),
    );
    h.ring(0);
    h.dev.step();
    assert_eq!(
        h.status_own(&p),
        0,
        "512-byte aligned first input block accepted"
    );
    assert_eq!(&h.output(&p)[16..], &two[16..]);
    // The same for the output chain's first block.
    let moved = h.alloc(2048, 1024) + 512;
    let p = h.prepare(0, &two, two.len());
    h.mem.read(p.out_blocks[0], &mut blk).unwrap();
    poke(&h, moved, &blk);
    poke(
        &h,
        p.entry_addr + entry_off::OUT_PTR as u64,
        &moved.to_be_bytes(),
    );
    h.ring(0);
    h.dev.step();
    assert_eq!(
        h.status_own(&p),
        0,
        "512-byte aligned first output block accepted"
    );
    let mut out = [0u8; 512];
    h.mem.read(moved, &mut out).unwrap();
    assert_eq!(&out[..], &two[16..528]);
    let s = mlx5_emu::control::stats(&h.dev);
    assert_eq!(s["violations"], 0, "{}", s["recent_violations"]);
}

fn corrupt_run(h: &mut Host, inp: &[u8], c: Corruption) -> common::Prepared {
    h.dev.fw().inject.add(None, Action::Corrupt(c), Some(1));
    let p = h.prepare(0, inp, inp.len());
    h.ring(0);
    h.dev.step();
    p
}

fn entry(h: &Host, p: &common::Prepared) -> [u8; 64] {
    let mut e = [0u8; 64];
    h.mem.read(p.entry_addr, &mut e).unwrap();
    e
}

fn block(h: &Host, p: &common::Prepared, i: usize) -> [u8; cl::BLOCK_SIZE] {
    let mut b = [0u8; cl::BLOCK_SIZE];
    h.mem.read(p.out_blocks[i], &mut b).unwrap();
    b
}

/// Each corruptible completion field is written wrong, and only that field: the output
/// data stays right, and the rule is used once.
#[test]
fn corrupt_completion_fields_one_at_a_time() {
    let mut h = enabled();
    let two = echo_cmd(2);
    let c = |field, block, value| Corruption {
        field,
        block,
        value,
    };
    // Entry fields.
    let p = corrupt_run(&mut h, &two, c(CorruptField::OutLen, None, None));
    let e = entry(&h, &p);
    assert_eq!(
        u32::from_be_bytes(e[0x38..0x3c].try_into().unwrap()),
        two.len() as u32 ^ 0x1000
    );
    assert_eq!(
        (e[entry_off::STATUS_OWN], &h.output(&p)[16..]),
        (0, &two[16..])
    );
    let p = corrupt_run(&mut h, &two, c(CorruptField::OutLen, None, Some(8)));
    assert_eq!(
        u32::from_be_bytes(entry(&h, &p)[0x38..0x3c].try_into().unwrap()),
        8
    );
    let p = corrupt_run(&mut h, &two, c(CorruptField::EntryToken, None, None));
    let e = entry(&h, &p);
    assert_eq!(e[entry_off::TOKEN], h.token ^ 0xff);
    assert_eq!(e[entry_off::STATUS_OWN], 0);
    let p = corrupt_run(&mut h, &two, c(CorruptField::EntrySig, None, None));
    assert!(!cl::entry_signature_ok(&entry(&h, &p)));
    let p = corrupt_run(&mut h, &nop(), c(CorruptField::Own, None, None));
    assert_eq!(h.status_own(&p), 1, "ownership left with hardware");
    assert_eq!(h.output(&p)[0], 0, "output written all the same");
    let p = corrupt_run(&mut h, &nop(), c(CorruptField::Status, None, Some(0x0b)));
    assert_eq!(h.status_own(&p), 0x0b << 1);
    // Mailbox fields, in block 1 only, or every block.
    let p = corrupt_run(&mut h, &two, c(CorruptField::BlockNum, Some(1), None));
    assert_eq!(
        u32::from_be_bytes(block(&h, &p, 0)[0x238..0x23c].try_into().unwrap()),
        0
    );
    assert_eq!(
        u32::from_be_bytes(block(&h, &p, 1)[0x238..0x23c].try_into().unwrap()),
        0x81
    );
    assert_eq!(&h.output(&p)[16..], &two[16..]);
    let p = corrupt_run(&mut h, &two, c(CorruptField::BlockToken, None, Some(0x42)));
    assert_eq!(
        (
            block(&h, &p, 0)[block_off::TOKEN],
            block(&h, &p, 1)[block_off::TOKEN]
        ),
        (0x42, 0x42)
    );
    let p = corrupt_run(
        &mut h,
        &two,
        c(CorruptField::BlockNext, Some(0), Some(0x1234_5000)),
    );
    assert_eq!(
        u64::from_be_bytes(block(&h, &p, 0)[0x230..0x238].try_into().unwrap()),
        0x1234_5000
    );
    assert_eq!(
        u64::from_be_bytes(block(&h, &p, 1)[0x230..0x238].try_into().unwrap()),
        0
    );
    let p = corrupt_run(&mut h, &two, c(CorruptField::BlockSig, Some(0), None));
    let b0 = block(&h, &p, 0);
    assert_ne!(cl::xor8(&b0), 0xff, "block signature wrong");
    // A mailbox field asked of a command without output mailbox does not apply.
    let p = corrupt_run(&mut h, &nop(), c(CorruptField::BlockNum, None, None));
    assert_eq!(h.status_own(&p), 0);
    let s = mlx5_emu::control::stats(&h.dev);
    for (n, want) in [
        ("out_len", 2),
        ("entry_token", 1),
        ("own", 1),
        ("status", 1),
        ("block_num", 1),
        ("block_next", 1),
        ("block_sig", 1),
        ("not_applicable", 1),
    ] {
        assert_eq!(s["corruptions"][n], want, "{n}: {}", s["corruptions"]);
    }
    assert_eq!(s["violations"], 0, "{}", s["recent_violations"]);
    assert!(h
        .dev
        .fw()
        .inject
        .rules
        .iter()
        .all(|r| r.remaining == Some(0)));
}

/// With checksums on, a corrupted control field is signed as written (the device
/// signs what it writes), so only the field is wrong, not the signatures.
#[test]
fn corrupt_fields_are_signed_when_checksums_are_on() {
    let mut h = enabled();
    h.dev.fw().caps.gen_cur[0x42] |= 0xc0; // cmdif_checksum = 3
    let two = echo_cmd(2);
    let p = corrupt_run(
        &mut h,
        &two,
        Corruption {
            field: CorruptField::BlockNum,
            block: Some(0),
            value: Some(9),
        },
    );
    let b = block(&h, &p, 0);
    assert!(cl::block_signatures_ok(&b));
    assert_eq!(u32::from_be_bytes(b[0x238..0x23c].try_into().unwrap()), 9);
    let p = corrupt_run(
        &mut h,
        &two,
        Corruption {
            field: CorruptField::OutLen,
            block: None,
            value: Some(4),
        },
    );
    assert!(cl::entry_signature_ok(&entry(&h, &p)));
    let p = corrupt_run(
        &mut h,
        &two,
        Corruption {
            field: CorruptField::EntrySig,
            block: None,
            value: None,
        },
    );
    assert!(!cl::entry_signature_ok(&entry(&h, &p)));
}
