//! A minimal in-process "driver" for host tests: builds command entries and mailbox
//! chains in fake guest memory, rings the doorbell and runs the firmware step; brings
//! the function up (ENABLE_HCA, pages, INIT_HCA) and creates UARs and EQs as a driver
//! does.
#![allow(dead_code)]

use mlx5_emu::config::EmuConfig;
use mlx5_emu::device::Device;
use mlx5_emu::ifc::cmd_layout::{self as cl, block_off, entry_off};
use mlx5_emu::ifc::field::Field;
use mlx5_emu::ifc::init_seg as is;
use mlx5_emu::irq::RecordingIrqs;
use mlx5_emu::mem::{GuestMemory, VecMemory};
use std::sync::Arc;

/// Guest memory base address.
pub const MEM_BASE: u64 = 0x1000_0000;
/// Guest memory size.
pub const MEM_SIZE: usize = 96 << 20;

/// A prepared command.
pub struct Prepared {
    pub slot: usize,
    pub entry_addr: u64,
    pub in_blocks: Vec<u64>,
    pub out_blocks: Vec<u64>,
    pub outlen: usize,
}

/// The fake host.
pub struct Host {
    pub dev: Arc<Device>,
    pub mem: Arc<VecMemory>,
    pub irq: Arc<RecordingIrqs>,
    pub queue: u64,
    next: u64,
    end: u64,
    pub token: u8,
}

impl Host {
    pub fn new() -> Self {
        Self::with(EmuConfig {
            boot_pages: 16,
            init_pages: 32,
            ..Default::default()
        })
    }

    pub fn with(cfg: EmuConfig) -> Self {
        Self::with_mem(cfg, MEM_SIZE)
    }

    /// A host with `size` bytes of guest memory.
    pub fn with_mem(cfg: EmuConfig, size: usize) -> Self {
        let mem = Arc::new(VecMemory::new(MEM_BASE, size));
        let irq = Arc::new(RecordingIrqs::default());
        let dev = Device::new(cfg, mem.clone(), irq.clone());
        // Enable MSI-X (message control at cap 0x9c + 2).
        dev.config_write(0x9c + 2, &0x803fu16.to_le_bytes());
        dev.config_write(0x04, &0x0006u16.to_le_bytes());
        let mut h = Host {
            dev,
            mem,
            irq,
            queue: 0,
            next: MEM_BASE,
            end: MEM_BASE + size as u64,
            token: 0,
        };
        h.queue = h.alloc(4096, 4096);
        h.write32(is::CMDQ_ADDR_H, (h.queue >> 32) as u32);
        h.write32(is::CMDQ_ADDR_L_SZ, h.queue as u32);
        h
    }

    pub fn alloc(&mut self, size: u64, align: u64) -> u64 {
        let a = self.next.div_ceil(align) * align;
        self.next = a + size;
        assert!(self.next <= self.end, "fake guest memory exhausted");
        a
    }

    pub fn write32(&self, off: usize, v: u32) {
        self.dev.bar0_write(off as u64, &v.to_be_bytes());
    }

    pub fn read32(&self, off: usize) -> u32 {
        let mut b = [0u8; 4];
        self.dev.bar0_read(off as u64, &mut b);
        u32::from_be_bytes(b)
    }

    pub fn next_token(&mut self) -> u8 {
        self.token = self.token.wrapping_add(1);
        if self.token == 0 {
            self.token = 1;
        }
        self.token
    }

    fn chain(&mut self, data: &[u8], nblocks: usize, token: u8) -> Vec<u64> {
        let addrs: Vec<u64> = (0..nblocks).map(|_| self.alloc(1024, 1024)).collect();
        for (i, &a) in addrs.iter().enumerate() {
            let mut b = [0u8; cl::BLOCK_SIZE];
            let start = i * cl::BLOCK_DATA_LEN;
            if start < data.len() {
                let end = (start + cl::BLOCK_DATA_LEN).min(data.len());
                b[..end - start].copy_from_slice(&data[start..end]);
            }
            let next = addrs.get(i + 1).copied().unwrap_or(0);
            b[block_off::NEXT..block_off::NEXT + 8].copy_from_slice(&next.to_be_bytes());
            b[block_off::BLOCK_NUM..block_off::BLOCK_NUM + 4]
                .copy_from_slice(&(i as u32).to_be_bytes());
            b[block_off::TOKEN] = token;
            b[block_off::CTRL_SIG] = cl::block_ctrl_signature(&b);
            b[block_off::SIG] = cl::block_signature(&b);
            self.mem.write(a, &b).unwrap();
        }
        addrs
    }

    /// Writes entry + chains for `input` into `slot` (ownership set, not rung).
    pub fn prepare(&mut self, slot: usize, input: &[u8], outlen: usize) -> Prepared {
        let token = self.next_token();
        let in_blocks = self.chain(
            input.get(16..).unwrap_or(&[]),
            cl::blocks_for(input.len()),
            token,
        );
        let out_blocks = self.chain(&[], cl::blocks_for(outlen), token);
        let mut e = [0u8; 64];
        e[entry_off::TYPE] = cl::CMD_TYPE_PCI;
        e[entry_off::INLEN..entry_off::INLEN + 4]
            .copy_from_slice(&(input.len() as u32).to_be_bytes());
        let ip = in_blocks.first().copied().unwrap_or(0);
        e[entry_off::IN_PTR..entry_off::IN_PTR + 8].copy_from_slice(&ip.to_be_bytes());
        let n = input.len().min(16);
        e[entry_off::IN..entry_off::IN + n].copy_from_slice(&input[..n]);
        let op = out_blocks.first().copied().unwrap_or(0);
        e[entry_off::OUT_PTR..entry_off::OUT_PTR + 8].copy_from_slice(&op.to_be_bytes());
        e[entry_off::OUTLEN..entry_off::OUTLEN + 4].copy_from_slice(&(outlen as u32).to_be_bytes());
        e[entry_off::TOKEN] = token;
        e[entry_off::STATUS_OWN] = cl::OWN_HW;
        e[entry_off::SIG] = cl::entry_signature(&e);
        let entry_addr = self.queue + 64 * slot as u64;
        self.mem.write(entry_addr, &e).unwrap();
        Prepared {
            slot,
            entry_addr,
            in_blocks,
            out_blocks,
            outlen,
        }
    }

    /// Hands a prepared entry back to hardware (status_own = 1) for reuse.
    pub fn mem_set_own(&self, p: &Prepared) {
        self.mem
            .write(p.entry_addr + entry_off::STATUS_OWN as u64, &[cl::OWN_HW])
            .unwrap();
    }

    pub fn ring(&self, slot: usize) {
        self.write32(is::CMD_DBELL, 1 << slot);
    }

    pub fn status_own(&self, p: &Prepared) -> u8 {
        let mut b = [0u8; 1];
        self.mem
            .read(p.entry_addr + entry_off::STATUS_OWN as u64, &mut b)
            .unwrap();
        b[0]
    }

    pub fn output(&self, p: &Prepared) -> Vec<u8> {
        let mut out = vec![0u8; 16];
        self.mem
            .read(p.entry_addr + entry_off::OUT as u64, &mut out)
            .unwrap();
        for &a in &p.out_blocks {
            let mut d = vec![0u8; cl::BLOCK_DATA_LEN];
            self.mem.read(a, &mut d).unwrap();
            out.extend_from_slice(&d);
        }
        out.truncate(p.outlen);
        out
    }

    /// Runs one command on slot 0: Ok(output) or Err(delivery status).
    pub fn cmd(&mut self, input: &[u8], outlen: usize) -> Result<Vec<u8>, u8> {
        let p = self.prepare(0, input, outlen);
        self.ring(0);
        self.dev.step();
        let so = self.status_own(&p);
        assert_eq!(so & 1, 0, "slot still owned by hardware");
        if so >> 1 != 0 {
            return Err(so >> 1);
        }
        Ok(self.output(&p))
    }

    /// Runs a command and returns (status, syndrome, output).
    pub fn run(&mut self, input: &[u8], outlen: usize) -> (u8, u32, Vec<u8>) {
        let out = self
            .cmd(input, outlen)
            .unwrap_or_else(|d| panic!("delivery status {d:#x}"));
        (
            out[0],
            u32::from_be_bytes([out[4], out[5], out[6], out[7]]),
            out,
        )
    }

    /// Runs a command that must succeed.
    pub fn ok(&mut self, input: &[u8], outlen: usize) -> Vec<u8> {
        let (st, synd, out) = self.run(input, outlen);
        let op = u16::from_be_bytes([input[0], input[1]]);
        assert_eq!(
            st,
            0,
            "{}: status {st:#x} syndrome {synd:#x}",
            mlx5_emu::ifc::opcodes::opcode_name(op)
        );
        out
    }
}

impl Host {
    /// ENABLE_HCA, 48 pages given, INIT_HCA: the function as a driver has it after
    /// its init sequence.
    pub fn init_hca(&mut self) {
        use mlx5_emu::ifc::opcodes::Opcode;
        self.ok(&input(16, Opcode::ENABLE_HCA as u16, 0, &[]), 16);
        give_pages(self, 48);
        self.ok(&input(32, Opcode::INIT_HCA as u16, 0, &[]), 16);
    }

    /// ALLOC_UAR; returns the UAR's index.
    pub fn alloc_uar(&mut self) -> u32 {
        use mlx5_emu::ifc::cmds::alloc_uar_out;
        use mlx5_emu::ifc::opcodes::Opcode;
        let out = self.ok(&input(16, Opcode::ALLOC_UAR as u16, 0, &[]), 16);
        alloc_uar_out::UAR.raw().get(&out).unwrap() as u32
    }
}

/// A host of `cfg` (16 boot and 32 init pages) with its function initialized
/// ([`Host::init_hca`]).
pub fn initialized_with(cfg: EmuConfig) -> Host {
    let mut h = Host::with(EmuConfig {
        boot_pages: 16,
        init_pages: 32,
        ..cfg
    });
    h.init_hca();
    h
}

/// CREATE_EQ of 2^`log` entries (at most a page) on UAR `uar` and interrupt vector
/// `intr`, taking the event types of `mask` (bit n: event type n), its entries' owner
/// bits set first as upstream's `init_eq_buf` sets them; returns (EQ number, buffer).
pub fn create_eq(h: &mut Host, uar: u32, log: u8, mask: u64, intr: u16) -> (u8, u64) {
    use mlx5_emu::ifc::eq::{create_eq_out, eqc, EVENT_BITMASK_OFFSET, PAS_OFFSET};
    use mlx5_emu::ifc::opcodes::Opcode;
    let buf = h.alloc(4096, 4096);
    h.mem.write(buf, &vec![1u8; 64 << log]).unwrap();
    let mut inp = input(PAS_OFFSET + 8, Opcode::CREATE_EQ as u16, 0, &[]);
    for (f, v) in [
        (eqc::LOG_EQ_SIZE.raw(), u64::from(log)),
        (eqc::UAR_PAGE.raw(), u64::from(uar)),
        (eqc::INTR.raw(), u64::from(intr)),
    ] {
        f.set(&mut inp[0x10..], v).unwrap();
    }
    inp[EVENT_BITMASK_OFFSET..EVENT_BITMASK_OFFSET + 8].copy_from_slice(&mask.to_be_bytes());
    inp[PAS_OFFSET..PAS_OFFSET + 8].copy_from_slice(&buf.to_be_bytes());
    let out = h.ok(&inp, 16);
    let eqn = create_eq_out::EQ_NUMBER.raw().get(&out).unwrap() as u8;
    (eqn, buf)
}

/// Builds an input of `len` bytes with opcode, op_mod and the given fields.
pub fn input(len: usize, opcode: u16, op_mod: u16, fields: &[(Field, u64)]) -> Vec<u8> {
    let mut b = vec![0u8; len];
    b[0..2].copy_from_slice(&opcode.to_be_bytes());
    b[6..8].copy_from_slice(&op_mod.to_be_bytes());
    for (f, v) in fields {
        f.set(&mut b, *v).unwrap();
    }
    b
}

/// Gives `n` fresh pages; returns their addresses.
pub fn give_pages(h: &mut Host, n: usize) -> Vec<u64> {
    use mlx5_emu::ifc::opcodes::{manage_pages_op_mod as mp, Opcode};
    use mlx5_emu::ifc::pages::{manage_pages_in, pas_set, PAS_OFFSET};
    let pages: Vec<u64> = (0..n).map(|_| h.alloc(4096, 4096)).collect();
    let mut inp = input(
        PAS_OFFSET + 8 * n,
        Opcode::MANAGE_PAGES as u16,
        mp::ALLOCATION_SUCCESS,
        &[(manage_pages_in::INPUT_NUM_ENTRIES.raw(), n as u64)],
    );
    for (i, a) in pages.iter().enumerate() {
        pas_set(&mut inp, PAS_OFFSET, i, *a).unwrap();
    }
    h.ok(&inp, 16);
    pages
}

/// Takes up to `n` pages back; returns the addresses returned.
pub fn take_pages(h: &mut Host, n: usize) -> Vec<u64> {
    use mlx5_emu::ifc::opcodes::{manage_pages_op_mod as mp, Opcode};
    use mlx5_emu::ifc::pages::{manage_pages_in, manage_pages_out, pas_get, PAS_OFFSET};
    let inp = input(
        16,
        Opcode::MANAGE_PAGES as u16,
        mp::HCA_RETURN_PAGES,
        &[(manage_pages_in::INPUT_NUM_ENTRIES.raw(), n as u64)],
    );
    let out = h.ok(&inp, PAS_OFFSET + 8 * n);
    let got = manage_pages_out::OUTPUT_NUM_ENTRIES
        .raw()
        .get(&out)
        .unwrap() as usize;
    (0..got)
        .map(|i| pas_get(&out, PAS_OFFSET, i).unwrap())
        .collect()
}
