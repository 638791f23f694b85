//! End-to-end check of the pure command path against a toy device that,
//! like the real one, only sees DMA addresses: it follows the entry's
//! `in_ptr`/`out_ptr` and each block's `next` pointer, checks block
//! numbers, tokens and signatures, and answers through the output chain.

use std::collections::BTreeMap;

use mlx5_rs_pure::cmd::mailbox::{self, BlockMemory, MAILBOX_BLOCK_SIZE};
use mlx5_rs_pure::cmd::signature;
use mlx5_rs_pure::cmd::slots::Slots;
use mlx5_rs_pure::cmd::status::{self, ErrorKind};
use mlx5_rs_pure::cmd::token::{Token, TokenGen};
use mlx5_rs_pure::ifc::cmd_layout::{entry_off, ENTRY_SIZE};

/// Simulated DMA memory: blocks keyed by bus address.
#[derive(Default)]
struct Bus {
    blocks: BTreeMap<u64, [u8; MAILBOX_BLOCK_SIZE]>,
    next_addr: u64,
}

impl Bus {
    fn alloc(&mut self) -> u64 {
        // scattered, 1 KiB aligned
        self.next_addr += 0x1_0400;
        let a = self.next_addr;
        self.blocks.insert(a, [0x5a; MAILBOX_BLOCK_SIZE]);
        a
    }
}

/// A chain: the addresses of its blocks in order, over the shared bus.
struct Chain<'a> {
    bus: &'a mut Bus,
    addrs: Vec<u64>,
}

impl BlockMemory for Chain<'_> {
    fn block_count(&self) -> usize {
        self.addrs.len()
    }
    fn dma_addr(&self, index: usize) -> u64 {
        self.addrs[index]
    }
    fn write(&mut self, index: usize, offset: usize, data: &[u8]) {
        let b = self.bus.blocks.get_mut(&self.addrs[index]).unwrap();
        b[offset..offset + data.len()].copy_from_slice(data);
    }
    fn read(&self, index: usize, offset: usize, out: &mut [u8]) {
        let b = &self.bus.blocks[&self.addrs[index]];
        out.copy_from_slice(&b[offset..offset + out.len()]);
    }
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().unwrap())
}
fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[..8].try_into().unwrap())
}

/// The toy device: executes an "echo" command whose output is the input
/// bytes reversed; returns the delivery status it would report.
fn device_execute(bus: &mut Bus, entry: &mut [u8; ENTRY_SIZE], check_block_sigs: bool) -> u8 {
    if !signature::entry_signature_ok(entry) {
        return 0x01;
    }
    let token = entry[entry_off::TOKEN];
    let inlen = be32(&entry[entry_off::INLEN..]) as usize;
    let outlen = be32(&entry[entry_off::OUTLEN..]) as usize;
    // gather input by walking pointers
    let mut input = entry[entry_off::IN..entry_off::IN + 16].to_vec();
    let mut p = be64(&entry[entry_off::IN_PTR..]);
    let mut n = 0u32;
    while input.len() < inlen {
        if p % 1024 != 0 {
            return 0x05;
        }
        let Some(b) = bus.blocks.get(&p) else {
            return 0x05;
        };
        if be32(&b[0x238..]) != n {
            return 0x03;
        }
        if b[0x23d] != token {
            return 0x02;
        }
        if check_block_sigs && !signature::block_signature_ok(b) {
            return 0x01;
        }
        input.extend_from_slice(&b[..512]);
        p = be64(&b[0x230..]);
        n += 1;
    }
    input.truncate(inlen);
    // output: header with status 0, then reversed payload
    let mut output = vec![0u8; outlen];
    let payload: Vec<u8> = input[16..].iter().rev().copied().collect();
    let m = payload.len().min(outlen.saturating_sub(16));
    output[16..16 + m].copy_from_slice(&payload[..m]);
    entry[entry_off::OUT..entry_off::OUT + 16].copy_from_slice(&output[..16]);
    let mut p = be64(&entry[entry_off::OUT_PTR..]);
    let mut off = 16;
    let mut n = 0u32;
    while off < outlen {
        let Some(b) = bus.blocks.get_mut(&p) else {
            return 0x04;
        };
        if be32(&b[0x238..]) != n || b[0x23d] != token {
            return 0x03;
        }
        let k = (outlen - off).min(512);
        b[..k].copy_from_slice(&output[off..off + k]);
        off += k;
        p = be64(&b[0x230..]);
        n += 1;
    }
    0
}

fn run(len_in: usize, len_out: usize, checksums: bool, tokens: &mut TokenGen) {
    let mut bus = Bus::default();
    let nin = mailbox::blocks_needed(len_in);
    let nout = mailbox::blocks_needed(len_out);
    let in_addrs: Vec<u64> = (0..nin).map(|_| bus.alloc()).collect();
    let out_addrs: Vec<u64> = (0..nout).map(|_| bus.alloc()).collect();
    let token = tokens.next_token();

    let mut input: Vec<u8> = (0..len_in).map(|i| (i * 13 + 1) as u8).collect();
    input[0..2].copy_from_slice(&0x080du16.to_be_bytes()); // NOP
    let mut entry = [0u8; ENTRY_SIZE];
    let mut inline_in = [0u8; 16];
    let ih = {
        let mut c = Chain {
            bus: &mut bus,
            addrs: in_addrs,
        };
        mailbox::write_input(&mut inline_in, &mut c, &input, token, checksums).unwrap()
    };
    let oh = {
        let mut c = Chain {
            bus: &mut bus,
            addrs: out_addrs.clone(),
        };
        let h = mailbox::link_chain(&mut c, len_out, token).unwrap();
        if checksums {
            mailbox::seal_chain(&mut c, h.nblocks);
        }
        h
    };
    entry[0] = 7;
    entry[entry_off::INLEN..entry_off::INLEN + 4].copy_from_slice(&ih.len.to_be_bytes());
    entry[entry_off::IN_PTR..entry_off::IN_PTR + 8].copy_from_slice(&ih.ptr.to_be_bytes());
    entry[entry_off::IN..entry_off::IN + 16].copy_from_slice(&inline_in);
    entry[entry_off::OUT_PTR..entry_off::OUT_PTR + 8].copy_from_slice(&oh.ptr.to_be_bytes());
    entry[entry_off::OUTLEN..entry_off::OUTLEN + 4].copy_from_slice(&oh.len.to_be_bytes());
    entry[entry_off::TOKEN] = token.get();
    entry[entry_off::STATUS_OWN] = 1;
    signature::seal_entry(&mut entry);

    let ds = device_execute(&mut bus, &mut entry, checksums);
    assert_eq!(ds, 0, "delivery status for in {len_in} out {len_out}");
    entry[entry_off::STATUS_OWN] = ds << 1; // ownership back to SW

    let out_inline: [u8; 16] = entry[entry_off::OUT..entry_off::OUT + 16]
        .try_into()
        .unwrap();
    let (opcode, op_mod) = status::input_header(&inline_in);
    status::decode(opcode, op_mod, entry[entry_off::STATUS_OWN], &out_inline).unwrap();
    let mut output = vec![0u8; len_out];
    let c = Chain {
        bus: &mut bus,
        addrs: out_addrs,
    };
    mailbox::read_output(&out_inline, &c, len_out, &mut output).unwrap();
    let expect: Vec<u8> = input[16..].iter().rev().copied().collect();
    let m = expect.len().min(len_out.saturating_sub(16));
    assert_eq!(
        &output[16..16 + m],
        &expect[..m],
        "in {len_in} out {len_out}"
    );
}

#[test]
fn round_trips_across_block_boundaries() {
    let mut t = TokenGen::new();
    for &li in &[16usize, 17, 528, 529, 16 + 512 * 4, 16 + 512 * 4 + 1, 8208] {
        for &lo in &[16usize, 17, 528, 529, 1040, 16 + 512 * 5] {
            run(li, lo, false, &mut t);
        }
    }
}

#[test]
fn round_trips_with_block_checksums() {
    let mut t = TokenGen::new();
    for &li in &[17usize, 600, 2000] {
        run(li, 1040, true, &mut t);
    }
}

#[test]
fn wrong_token_is_a_token_error() {
    let mut bus = Bus::default();
    let addrs = vec![bus.alloc()];
    let mut c = Chain {
        bus: &mut bus,
        addrs,
    };
    let mut inline = [0u8; 16];
    let h = mailbox::write_input(
        &mut inline,
        &mut c,
        &[1u8; 100],
        Token::new(5).unwrap(),
        false,
    )
    .unwrap();
    let mut entry = [0u8; ENTRY_SIZE];
    entry[entry_off::INLEN..entry_off::INLEN + 4].copy_from_slice(&h.len.to_be_bytes());
    entry[entry_off::IN_PTR..entry_off::IN_PTR + 8].copy_from_slice(&h.ptr.to_be_bytes());
    entry[entry_off::TOKEN] = 6; // mismatch with the blocks
    entry[entry_off::STATUS_OWN] = 1;
    signature::seal_entry(&mut entry);
    let ds = device_execute(&mut bus, &mut entry, false);
    assert_eq!(ds, 2);
    let e = status::decode(0x80d, 0, ds << 1, &[0; 16]).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Delivery(_)));
    assert_eq!(
        e.to_string(),
        "NOP(0x80d) op_mod(0x0) failed, delivery status TOKEN_ERR(0x2), syndrome (0x0)"
    );
}

#[test]
fn tokens_and_slots_for_many_commands() {
    // 600 commands through a 4-slot queue, two in flight at a time:
    // tokens never 0, slots reused, page slot untouched by regular ones.
    let mut slots = Slots::new(2).unwrap();
    let mut t = TokenGen::new();
    let mut inflight = Vec::new();
    for i in 0..600 {
        let s = slots.alloc(0x80d).unwrap();
        assert!(s < 3);
        let tok = t.next_token();
        assert_ne!(tok.get(), 0);
        inflight.push(s);
        if inflight.len() == 2 || i == 599 {
            for s in inflight.drain(..) {
                slots.free(s).unwrap();
            }
        }
    }
    assert!(slots.idle());
}
