// SPDX-License-Identifier: GPL-2.0

//! Mailbox chains: how command input and output beyond the 16 inline bytes
//! of the command entry are spread over linked 576-byte mailbox blocks.
//!
//! A message of `len` bytes keeps bytes `0..16` inline in the entry
//! (`in[]` / `out[]`) and bytes `16..len` in a chain of blocks carrying 512
//! data bytes each, so it needs `ceil((len - 16) / 512)` blocks (none for
//! `len <= 16`). Each block carries, after its data, the DMA address of the
//! next block (0 in the last one), its 0-based position in the chain
//! (`block_num`), the command token and, when checksums are on, two
//! signatures (see [`super::signature`]). Blocks must be 1024-byte aligned.
//!
//! The memory behind the blocks is abstract ([`BlockMemory`]): the kernel
//! backs it with coherent DMA blocks, the host tests with plain arrays. All
//! fields are big-endian.
//!
//! Pure `core` code, compiled into the kernel module and into the host test
//! crate.

use super::signature::{self, BLOCK_SIZE};
use super::token::Token;

use crate::ifc::cmd_layout::block_off;
pub use crate::ifc::cmd_layout::{BLOCK_ALIGN, BLOCK_DATA_LEN, INLINE_LEN};

/// Size of one mailbox block in bytes (data + control).
pub const MAILBOX_BLOCK_SIZE: usize = BLOCK_SIZE;
/// Offset of the big-endian 64-bit `next` pointer in a block.
pub const NEXT_OFFSET: usize = block_off::NEXT;
/// Offset of the big-endian 32-bit `block_num` in a block.
pub const BLOCK_NUM_OFFSET: usize = block_off::BLOCK_NUM;
/// Offset of the token byte in a block.
pub const TOKEN_OFFSET: usize = block_off::TOKEN;
/// Largest message length the command entry can describe (32-bit length).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(dead_code, reason = "host-tested, not used by the driver yet")
)]
pub const MAX_MSG_LEN: usize = u32::MAX as usize;

/// Number of mailbox blocks a message of `len` bytes needs (see
/// [`crate::ifc::cmd_layout::blocks_for`]).
pub use crate::ifc::cmd_layout::blocks_for as blocks_needed;

/// Largest message that fits inline plus `nblocks` blocks.
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(dead_code, reason = "host-tested, not used by the driver yet")
)]
pub const fn chain_capacity(nblocks: usize) -> usize {
    INLINE_LEN.saturating_add(nblocks.saturating_mul(BLOCK_DATA_LEN))
}

/// Where one byte of a message lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// At this offset of the entry's inline area.
    Inline(usize),
    /// In block `index` of the chain, at data offset `offset`.
    Block {
        /// 0-based position of the block in the chain.
        index: usize,
        /// Offset inside the block's 512 data bytes.
        offset: usize,
    },
}

/// Where byte `offset` of a message lives.
pub const fn locate(offset: usize) -> Location {
    if offset < INLINE_LEN {
        Location::Inline(offset)
    } else {
        let d = offset - INLINE_LEN;
        Location::Block {
            index: d / BLOCK_DATA_LEN,
            offset: d % BLOCK_DATA_LEN,
        }
    }
}

/// Memory holding the blocks of one chain, in chain order.
///
/// Implemented by the kernel shell over DMA-coherent 1024-byte-aligned
/// blocks of [`MAILBOX_BLOCK_SIZE`] bytes, and by tests over arrays. This
/// module only calls `read`/`write` with `index < block_count()` and
/// `offset + len <= MAILBOX_BLOCK_SIZE`. The shell must only let this module
/// touch a chain while the device does not own it (before the doorbell,
/// after ownership returned).
pub trait BlockMemory {
    /// Number of blocks available (may exceed what a message needs).
    fn block_count(&self) -> usize;
    /// DMA address of block `index`.
    fn dma_addr(&self, index: usize) -> u64;
    /// Copies `data` into block `index` at byte `offset`.
    fn write(&mut self, index: usize, offset: usize, data: &[u8]);
    /// Copies bytes of block `index` starting at `offset` into `out`.
    fn read(&self, index: usize, offset: usize, out: &mut [u8]);
}

/// A mailbox chain problem: bad geometry from the caller or a corrupt
/// chain read back from the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MailboxError {
    /// The message does not fit the 32-bit length field.
    MessageTooLong {
        /// Requested length.
        len: usize,
    },
    /// The chain has fewer blocks than the message needs.
    ChainTooShort {
        /// Blocks needed.
        needed: usize,
        /// Blocks available.
        have: usize,
    },
    /// A block's DMA address is 0 or not 1024-byte aligned.
    BadBlockAddress {
        /// Position in the chain.
        index: usize,
        /// The address.
        addr: u64,
    },
    /// An access beyond the message length.
    OutOfBounds {
        /// Start of the access.
        offset: usize,
        /// Length of the access.
        len: usize,
        /// Message length.
        msg_len: usize,
    },
    /// With checksums on: an output block read back has an inconsistent signature.
    BadSignature {
        /// Position in the chain.
        index: usize,
    },
    /// With checksums on: the completed entry's XOR is not 0xff.
    BadEntrySignature,
}

impl core::fmt::Display for MailboxError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::MessageTooLong { len } => write!(f, "message of {len} bytes too long"),
            Self::ChainTooShort { needed, have } => {
                write!(f, "mailbox chain has {have} blocks, {needed} needed")
            }
            Self::BadBlockAddress { index, addr } => {
                write!(f, "mailbox block {index} at bad DMA address {addr:#x}")
            }
            Self::OutOfBounds {
                offset,
                len,
                msg_len,
            } => write!(f, "access {offset}+{len} beyond message of {msg_len} bytes"),
            Self::BadSignature { index } => write!(f, "mailbox block {index} bad signature"),
            Self::BadEntrySignature => f.write_str("command entry bad signature"),
        }
    }
}

/// Where the chain of a message starts, for the command entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainHead {
    /// DMA address of the first block, 0 when the message is inline only.
    pub ptr: u64,
    /// Number of blocks used.
    pub nblocks: usize,
    /// Message length, for the entry's `inlen`/`outlen`.
    pub len: u32,
}

fn check_len(len: usize) -> Result<u32, MailboxError> {
    u32::try_from(len).map_err(|_| MailboxError::MessageTooLong { len })
}

fn check_geometry<M: BlockMemory + ?Sized>(
    mem: &M,
    len: usize,
) -> Result<(u32, usize), MailboxError> {
    let len32 = check_len(len)?;
    let needed = blocks_needed(len);
    let have = mem.block_count();
    if have < needed {
        return Err(MailboxError::ChainTooShort { needed, have });
    }
    for index in 0..needed {
        let addr = mem.dma_addr(index);
        if addr == 0 || addr % BLOCK_ALIGN != 0 {
            return Err(MailboxError::BadBlockAddress { index, addr });
        }
    }
    Ok((len32, needed))
}

/// Zeroes and links the blocks a message of `len` bytes needs: block
/// numbers from 0, `next` pointing at the following block (0 in the last),
/// `token` in every block. Used for input chains (before writing the data)
/// and for output chains (before handing them to the device).
pub fn link_chain<M: BlockMemory + ?Sized>(
    mem: &mut M,
    len: usize,
    token: Token,
) -> Result<ChainHead, MailboxError> {
    let (len32, nblocks) = check_geometry(mem, len)?;
    // A constant, so a static (not a 576-byte array on the stack of every command).
    const ZERO: &[u8; MAILBOX_BLOCK_SIZE] = &[0; MAILBOX_BLOCK_SIZE];
    for index in 0..nblocks {
        let next = if index + 1 < nblocks {
            mem.dma_addr(index + 1)
        } else {
            0
        };
        // nblocks <= len / 512 < 2^23, so the index fits u32.
        let num = u32::try_from(index).map_err(|_| MailboxError::MessageTooLong { len })?;
        mem.write(index, 0, ZERO);
        mem.write(index, NEXT_OFFSET, &next.to_be_bytes());
        mem.write(index, BLOCK_NUM_OFFSET, &num.to_be_bytes());
        mem.write(index, TOKEN_OFFSET, &[token.get()]);
    }
    let ptr = if nblocks > 0 { mem.dma_addr(0) } else { 0 };
    Ok(ChainHead {
        ptr,
        nblocks,
        len: len32,
    })
}

fn check_range(offset: usize, n: usize, msg_len: usize) -> Result<(), MailboxError> {
    match offset.checked_add(n) {
        Some(end) if end <= msg_len => Ok(()),
        _ => Err(MailboxError::OutOfBounds {
            offset,
            len: n,
            msg_len,
        }),
    }
}

/// Writes `data` at byte `offset` of a message of `msg_len` bytes whose
/// first 16 bytes are `inline` and the rest the blocks of `mem`.
pub fn write_at<M: BlockMemory + ?Sized>(
    inline: &mut [u8; INLINE_LEN],
    mem: &mut M,
    msg_len: usize,
    offset: usize,
    data: &[u8],
) -> Result<(), MailboxError> {
    check_range(offset, data.len(), msg_len)?;
    let needed = blocks_needed(msg_len);
    if mem.block_count() < needed {
        return Err(MailboxError::ChainTooShort {
            needed,
            have: mem.block_count(),
        });
    }
    let mut done = 0;
    while done < data.len() {
        let rest = &data[done..];
        let n = match locate(offset + done) {
            Location::Inline(o) => {
                let n = rest.len().min(INLINE_LEN - o);
                inline[o..o + n].copy_from_slice(&rest[..n]);
                n
            }
            Location::Block { index, offset: o } => {
                let n = rest.len().min(BLOCK_DATA_LEN - o);
                mem.write(index, o, &rest[..n]);
                n
            }
        };
        done += n;
    }
    Ok(())
}

/// Reads bytes at `offset` of a message of `msg_len` bytes into `out`
/// (counterpart of [`write_at`]).
pub fn read_at<M: BlockMemory + ?Sized>(
    inline: &[u8; INLINE_LEN],
    mem: &M,
    msg_len: usize,
    offset: usize,
    out: &mut [u8],
) -> Result<(), MailboxError> {
    check_range(offset, out.len(), msg_len)?;
    let needed = blocks_needed(msg_len);
    if mem.block_count() < needed {
        return Err(MailboxError::ChainTooShort {
            needed,
            have: mem.block_count(),
        });
    }
    let mut done = 0;
    let total = out.len();
    while done < total {
        let rest = &mut out[done..];
        let n = match locate(offset + done) {
            Location::Inline(o) => {
                let n = rest.len().min(INLINE_LEN - o);
                rest[..n].copy_from_slice(&inline[o..o + n]);
                n
            }
            Location::Block { index, offset: o } => {
                let n = rest.len().min(BLOCK_DATA_LEN - o);
                mem.read(index, o, &mut rest[..n]);
                n
            }
        };
        done += n;
    }
    Ok(())
}

/// Writes both signatures of the first `nblocks` blocks (only when
/// checksums are enabled). Call after data and links are final. Out of line: its
/// block buffer is on the stack only when checksums are on (upstream's default and
/// ours are off), not in every command's frame.
#[inline(never)]
pub fn seal_chain<M: BlockMemory + ?Sized>(mem: &mut M, nblocks: usize) {
    let mut buf = [0u8; MAILBOX_BLOCK_SIZE];
    for index in 0..nblocks.min(mem.block_count()) {
        mem.read(index, 0, &mut buf);
        signature::seal_block(&mut buf);
        mem.write(index, block_off::CTRL_SIG, &buf[block_off::CTRL_SIG..]);
    }
}

/// Builds a complete input message: links the chain, writes `data` (its
/// length is the message length) across `inline` and the blocks, and seals
/// the blocks when `checksums` is set. Returns what the entry needs.
pub fn write_input<M: BlockMemory + ?Sized>(
    inline: &mut [u8; INLINE_LEN],
    mem: &mut M,
    data: &[u8],
    token: Token,
    checksums: bool,
) -> Result<ChainHead, MailboxError> {
    let head = link_chain(mem, data.len(), token)?;
    *inline = [0; INLINE_LEN];
    write_at(inline, mem, data.len(), 0, data)?;
    if checksums {
        seal_chain(mem, head.nblocks);
    }
    Ok(head)
}

/// What the driver checks of a completed command's output, and why (issue 9: check
/// what the PRM says the device guarantees, nothing it leaves to firmware):
///
/// * The device returns the entry by clearing `ownership` and reports delivery in
///   `status` (`mlx5_ifc_cmd_queue_entry_bits`); the command status and syndrome are
///   the first output bytes (`mlx5_ifc_cmd_out_bits`). Checked by the caller
///   ([`super::status::decode`]).
/// * With checksums on (cap `cmdif_checksum`), the device signs the completed entry
///   and every output block: upstream `verify_signature` (cmd.c) fails the command
///   when the entry XOR or a block's signatures are not 0xff ([`verify_signatures`]).
///   Upstream keeps checksums off, and so do we.
/// * Nothing else. The output chain's `next_pointer`, `block_number` and `token` and
///   the entry's `output_length` and `token` are written by software
///   (`mlx5_alloc_cmd_msg`, `cmd_work_handler`) and checked by the device on delivery
///   (delivery statuses 0x2, 0x3, 0x4); the PRM does not say the device writes them
///   back, and upstream never reads them on completion: `mlx5_copy_from_msg` copies
///   the data following its own list of blocks, never a pointer read from the device.
///   [`read_output`] does the same.
///
/// Copies output bytes `0..out.len()` of a message of `msg_len` bytes from `inline`
/// and the driver's own blocks, in chain order. Fails only for the driver's own
/// geometry (chain shorter than the message, a block at a bad address).
pub fn read_output<M: BlockMemory + ?Sized>(
    inline: &[u8; INLINE_LEN],
    mem: &M,
    msg_len: usize,
    out: &mut [u8],
) -> Result<(), MailboxError> {
    check_geometry(mem, msg_len)?;
    read_at(inline, mem, msg_len, 0, out)
}

/// With checksums on: the completed `entry` and the output blocks a message of
/// `msg_len` bytes uses must carry consistent signatures (upstream `verify_signature`:
/// entry XOR 0xff, then each block's `ctrl_sig` and `sig`).
pub fn verify_signatures<M: BlockMemory + ?Sized>(
    entry: &[u8; signature::ENTRY_SIZE],
    mem: &M,
    msg_len: usize,
) -> Result<(), MailboxError> {
    if !signature::entry_signature_ok(entry) {
        return Err(MailboxError::BadEntrySignature);
    }
    let (_, nblocks) = check_geometry(mem, msg_len)?;
    let mut buf = [0u8; MAILBOX_BLOCK_SIZE];
    for index in 0..nblocks {
        mem.read(index, 0, &mut buf);
        if !signature::block_signature_ok(&buf) {
            return Err(MailboxError::BadSignature { index });
        }
    }
    Ok(())
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_cmd_mailbox))]
mod tests {
    use super::*;
    use crate::testing::ArrayVec;
    // The kernel's KUnit `assert!` declares a `Location` of its own.
    use super::Location as Loc;

    /// The longest message of these tests (a pattern and its read-back on the stack of
    /// a KUnit case).
    const MAX_LEN: usize = 2048;

    /// Up to 5 blocks in an array, at fake DMA addresses 1024-aligned.
    struct VecMem {
        blocks: [[u8; MAILBOX_BLOCK_SIZE]; 5],
        n: usize,
        base: u64,
    }

    impl VecMem {
        fn new(n: usize) -> Self {
            assert!(n <= 5);
            Self {
                blocks: [[0xee; MAILBOX_BLOCK_SIZE]; 5],
                n,
                base: 0x10_0000,
            }
        }
        fn u32_at(&self, i: usize, off: usize) -> u32 {
            u32::from_be_bytes(self.blocks[i][off..off + 4].try_into().unwrap())
        }
        fn u64_at(&self, i: usize, off: usize) -> u64 {
            u64::from_be_bytes(self.blocks[i][off..off + 8].try_into().unwrap())
        }
    }

    impl BlockMemory for VecMem {
        fn block_count(&self) -> usize {
            self.n
        }
        fn dma_addr(&self, index: usize) -> u64 {
            // deliberately not in order
            self.base + (self.n - index) as u64 * 0x800
        }
        fn write(&mut self, index: usize, offset: usize, data: &[u8]) {
            self.blocks[index][offset..offset + data.len()].copy_from_slice(data);
        }
        fn read(&self, index: usize, offset: usize, out: &mut [u8]) {
            out.copy_from_slice(&self.blocks[index][offset..offset + out.len()]);
        }
    }

    fn tok(v: u8) -> Token {
        Token::new(v).unwrap()
    }

    #[test]
    fn agrees_with_ifc() {
        for len in 0..3000 {
            assert_eq!(blocks_needed(len), crate::ifc::cmd_layout::blocks_for(len));
        }
    }

    #[test]
    fn block_count_boundaries() {
        assert_eq!(blocks_needed(0), 0);
        assert_eq!(blocks_needed(16), 0);
        assert_eq!(blocks_needed(17), 1);
        assert_eq!(blocks_needed(16 + 512), 1);
        assert_eq!(blocks_needed(16 + 512 + 1), 2);
        for k in 1..40 {
            assert_eq!(blocks_needed(16 + 512 * k), k);
            assert_eq!(blocks_needed(16 + 512 * k + 1), k + 1);
            assert_eq!(chain_capacity(k), 16 + 512 * k);
        }
    }

    #[test]
    fn locate_bytes() {
        assert_eq!(locate(0), Loc::Inline(0));
        assert_eq!(locate(15), Loc::Inline(15));
        assert_eq!(
            locate(16),
            Loc::Block {
                index: 0,
                offset: 0
            }
        );
        assert_eq!(
            locate(527),
            Loc::Block {
                index: 0,
                offset: 511
            }
        );
        assert_eq!(
            locate(528),
            Loc::Block {
                index: 1,
                offset: 0
            }
        );
    }

    fn pattern(len: usize) -> ArrayVec<u8, MAX_LEN> {
        (0..len).map(|i| (i * 31 + 7) as u8).collect()
    }

    #[test]
    fn inline_only_message_uses_no_block() {
        let mut mem = VecMem::new(2);
        let mut inline = [0xffu8; 16];
        let data = pattern(16);
        let head = write_input(&mut inline, &mut mem, &data, tok(3), false).unwrap();
        assert_eq!(
            head,
            ChainHead {
                ptr: 0,
                nblocks: 0,
                len: 16
            }
        );
        assert_eq!(&inline[..], &data[..]);
        // blocks untouched
        assert!(mem.blocks[0].iter().all(|&b| b == 0xee));
        // a short message leaves the rest of inline zeroed
        let head = write_input(&mut inline, &mut mem, &[1, 2, 3], tok(3), false).unwrap();
        assert_eq!(head.len, 3);
        assert_eq!(inline, [1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn input_spread_and_linked() {
        for &len in &[17usize, 528, 529, 16 + 512 * 3, 16 + 512 * 3 + 100] {
            let n = blocks_needed(len);
            let mut mem = VecMem::new(n + 1); // one spare block
            let mut inline = [0u8; 16];
            let data = pattern(len);
            let head = write_input(&mut inline, &mut mem, &data, tok(0x42), false).unwrap();
            assert_eq!(head.nblocks, n);
            assert_eq!(head.ptr, mem.dma_addr(0));
            assert_eq!(head.len as usize, len);
            assert_eq!(&inline[..], &data[..16]);
            for i in 0..n {
                let start = 16 + 512 * i;
                let end = (start + 512).min(len);
                assert_eq!(&mem.blocks[i][..end - start], &data[start..end]);
                // tail of the last block is zero
                assert!(mem.blocks[i][end - start..512].iter().all(|&b| b == 0));
                assert_eq!(mem.u32_at(i, BLOCK_NUM_OFFSET), i as u32);
                assert_eq!(mem.blocks[i][TOKEN_OFFSET], 0x42);
                let next = if i + 1 < n { mem.dma_addr(i + 1) } else { 0 };
                assert_eq!(mem.u64_at(i, NEXT_OFFSET), next);
                // reserved bytes zero
                assert!(mem.blocks[i][0x200..0x230].iter().all(|&b| b == 0));
            }
            // spare block untouched
            assert!(mem.blocks[n].iter().all(|&b| b == 0xee));
            // round trip
            let mut buf = [0u8; MAX_LEN];
            let back = &mut buf[..len];
            read_output(&inline, &mem, len, back).unwrap();
            assert_eq!(data, back);
        }
    }

    #[test]
    fn checksums_seal_every_block() {
        let len = 16 + 512 * 2 + 1;
        let mut mem = VecMem::new(3);
        let mut inline = [0u8; 16];
        write_input(&mut inline, &mut mem, &pattern(len), tok(9), true).unwrap();
        for b in &mem.blocks[..mem.n] {
            assert!(signature::block_signature_ok(b));
        }
        let mut entry = [0u8; signature::ENTRY_SIZE];
        entry[0] = 7;
        signature::seal_entry(&mut entry);
        verify_signatures(&entry, &mem, len).unwrap();
        mem.blocks[1][5] ^= 0x80;
        assert_eq!(
            verify_signatures(&entry, &mem, len),
            Err(MailboxError::BadSignature { index: 1 })
        );
        mem.blocks[1][5] ^= 0x80;
        entry[0x20] ^= 1;
        assert_eq!(
            verify_signatures(&entry, &mem, len),
            Err(MailboxError::BadEntrySignature)
        );
    }

    #[test]
    fn geometry_errors() {
        let mut mem = VecMem::new(1);
        let mut inline = [0u8; 16];
        assert_eq!(
            write_input(&mut inline, &mut mem, &pattern(529), tok(1), false),
            Err(MailboxError::ChainTooShort { needed: 2, have: 1 })
        );
        mem.base = 0x10_0200; // not 1 KiB aligned
        assert!(matches!(
            write_input(&mut inline, &mut mem, &pattern(100), tok(1), false),
            Err(MailboxError::BadBlockAddress { index: 0, .. })
        ));
        mem.base = 0x10_0000;
        assert!(matches!(
            write_at(&mut inline, &mut mem, 100, 90, &[0; 11]),
            Err(MailboxError::OutOfBounds {
                offset: 90,
                len: 11,
                msg_len: 100
            })
        ));
        assert!(matches!(
            write_at(&mut inline, &mut mem, 100, usize::MAX, &[0; 2]),
            Err(MailboxError::OutOfBounds { .. })
        ));
        let mut out = [0u8; 4];
        assert!(read_at(&inline, &mem, 16, 14, &mut out).is_err());
    }

    #[test]
    fn write_at_crosses_boundaries() {
        let len = 16 + 512 * 2;
        let mut mem = VecMem::new(2);
        let mut inline = [0u8; 16];
        link_chain(&mut mem, len, tok(5)).unwrap();
        // 8-byte value straddling inline/block 0 and block 0/block 1
        write_at(&mut inline, &mut mem, len, 12, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        assert_eq!(&inline[12..], &[1, 2, 3, 4]);
        assert_eq!(&mem.blocks[0][..4], &[5, 6, 7, 8]);
        write_at(&mut inline, &mut mem, len, 16 + 510, &[9, 10, 11, 12]).unwrap();
        assert_eq!(&mem.blocks[0][510..512], &[9, 10]);
        assert_eq!(&mem.blocks[1][..2], &[11, 12]);
        let mut v = [0u8; 4];
        read_at(&inline, &mem, len, 16 + 510, &mut v).unwrap();
        assert_eq!(v, [9, 10, 11, 12]);
    }

    /// The device's copy of the control fields is not checked (upstream
    /// `mlx5_copy_from_msg` never reads them): whatever it left in `block_number`,
    /// `token` or `next`, the data comes back from the driver's own blocks in order.
    #[test]
    fn output_read_ignores_device_written_control_fields() {
        let len = 16 + 512 * 3;
        let mut mem = VecMem::new(3);
        link_chain(&mut mem, len, tok(0x77)).unwrap();
        let data = pattern(len);
        let mut inline = [0u8; 16];
        write_at(&mut inline, &mut mem, len, 0, &data).unwrap();
        // A device that scribbles over every control field of every block.
        for b in mem.blocks[..mem.n].iter_mut() {
            b[BLOCK_NUM_OFFSET..BLOCK_NUM_OFFSET + 4]
                .copy_from_slice(&0xdead_beefu32.to_be_bytes());
            b[TOKEN_OFFSET] = 0x01;
            b[NEXT_OFFSET..NEXT_OFFSET + 8].copy_from_slice(&0x4000u64.to_be_bytes());
        }
        let mut buf = [0u8; MAX_LEN];
        let back = &mut buf[..len];
        read_output(&inline, &mem, len, back).unwrap();
        assert_eq!(data, back);
        // A shorter read of the same message.
        let mut head = [0u8; 600];
        read_output(&inline, &mem, len, &mut head).unwrap();
        assert_eq!(head[..], data[..600]);
        // The driver's own geometry still counts: message longer than the chain.
        assert_eq!(
            read_output(&inline, &mem, len + 1, back),
            Err(MailboxError::ChainTooShort { needed: 4, have: 3 })
        );
    }

    #[test]
    fn shorter_message_in_longer_chain() {
        // a cached 3-block chain used for a 1-block message: only block 0
        // is linked to "end"; reading the short message uses block 0 only.
        let mut mem = VecMem::new(3);
        let data = pattern(100);
        let mut inline = [0u8; 16];
        let head = write_input(&mut inline, &mut mem, &data, tok(2), false).unwrap();
        assert_eq!(head.nblocks, 1);
        assert_eq!(mem.u64_at(0, NEXT_OFFSET), 0);
        let mut back = [0u8; 100];
        read_output(&inline, &mem, 100, &mut back).unwrap();
        assert_eq!(data, back);
    }

    #[test]
    fn too_long_message_rejected() {
        struct Huge;
        impl BlockMemory for Huge {
            fn block_count(&self) -> usize {
                usize::MAX
            }
            fn dma_addr(&self, _: usize) -> u64 {
                0x400
            }
            fn write(&mut self, _: usize, _: usize, _: &[u8]) {}
            fn read(&self, _: usize, _: usize, _: &mut [u8]) {}
        }
        if usize::BITS > 32 {
            assert_eq!(
                link_chain(&mut Huge, MAX_MSG_LEN + 1, tok(1)),
                Err(MailboxError::MessageTooLong {
                    len: MAX_MSG_LEN + 1
                })
            );
        }
    }
}
