//! Command queue transport: fetch an entry and its mailbox chains, validate them,
//! and write the output and delivery status back.
//!
//! Validation follows the PRM delivery statuses: a violation is reported in the
//! entry's `status_own` instead of executing the command.

use crate::ifc::cmd_layout::{self as cl, block_off, entry_off};
use crate::ifc::status::DeliveryStatus;
use crate::mem::{DmaError, GuestMemory};

/// Largest message (input or output) the device accepts.
pub const MAX_MSG_LEN: usize = cl::INLINE_LEN + 32768 * cl::BLOCK_DATA_LEN;

/// A fetched and validated command.
#[derive(Clone, Debug)]
pub struct Fetched {
    /// Slot index.
    pub slot: usize,
    /// Address of the entry.
    pub entry_addr: u64,
    /// The entry as read.
    pub entry: [u8; cl::ENTRY_SIZE],
    /// Input message (`inlen` bytes).
    pub input: Vec<u8>,
    /// Output block addresses.
    pub out_blocks: Vec<u64>,
    /// Output length.
    pub outlen: usize,
    /// Token of the command.
    pub token: u8,
}

/// Why a slot could not be executed.
#[derive(Clone, Debug)]
pub enum FetchError {
    /// The entry itself is unreachable (no status can be written).
    EntryDma(DmaError),
    /// The doorbell named a slot that software still owns.
    NotOwned,
    /// A transport violation: report this delivery status.
    Delivery {
        /// Status to report.
        status: DeliveryStatus,
        /// A DMA error encountered while following a chain, if any.
        dma: Option<DmaError>,
        /// Human-readable reason.
        why: String,
    },
}

fn be32(b: &[u8], off: usize) -> u32 {
    u32::from_be_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}

fn be64(b: &[u8], off: usize) -> u64 {
    (u64::from(be32(b, off)) << 32) | u64::from(be32(b, off + 4))
}

fn delivery(status: DeliveryStatus, why: impl Into<String>) -> FetchError {
    FetchError::Delivery { status, dma: None, why: why.into() }
}

/// Walks a mailbox chain of `n` blocks starting at `first`, checking alignment,
/// block numbers, tokens and (if `sigs`) signatures. Returns the block addresses and
/// the data of each block.
fn walk_chain(
    mem: &dyn GuestMemory,
    first: u64,
    n: usize,
    token: u8,
    sigs: bool,
    bad_ptr: DeliveryStatus,
    want_data: bool,
) -> Result<(Vec<u64>, Vec<u8>), FetchError> {
    let mut addrs = Vec::with_capacity(n);
    let mut data = Vec::with_capacity(if want_data { n * cl::BLOCK_DATA_LEN } else { 0 });
    let mut addr = first;
    let mut block = [0u8; cl::BLOCK_SIZE];
    for i in 0..n {
        if addr == 0 || !addr.is_multiple_of(cl::BLOCK_ALIGN) {
            return Err(delivery(bad_ptr, format!("block {i} pointer {addr:#x} null or not 1 KiB aligned")));
        }
        if let Err(e) = mem.read(addr, &mut block) {
            return Err(FetchError::Delivery { status: bad_ptr, dma: Some(e), why: format!("block {i}: {e}") });
        }
        let num = be32(&block, block_off::BLOCK_NUM);
        if num as usize != i {
            return Err(delivery(DeliveryStatus::BAD_BLK_NUM_ERR, format!("block {i} carries block_num {num}")));
        }
        if block[block_off::TOKEN] != token {
            return Err(delivery(
                DeliveryStatus::TOKEN_ERR,
                format!("block {i} token {:#x} != entry token {token:#x}", block[block_off::TOKEN]),
            ));
        }
        if block[block_off::RSVD0..block_off::NEXT].iter().any(|&b| b != 0) || block[block_off::RSVD1] != 0 {
            return Err(delivery(DeliveryStatus::RES_FLD_NOT_CLR_ERR, format!("block {i} reserved bytes not zero")));
        }
        if sigs && !cl::block_signatures_ok(&block) {
            return Err(delivery(DeliveryStatus::SIGNATURE_ERR, format!("block {i} signature")));
        }
        addrs.push(addr);
        if want_data {
            data.extend_from_slice(&block[..cl::BLOCK_DATA_LEN]);
        }
        addr = be64(&block, block_off::NEXT);
    }
    Ok((addrs, data))
}

/// Reads slot `slot` of the queue at `queue` and validates it.
pub fn fetch(mem: &dyn GuestMemory, queue: u64, slot: usize, sigs: bool) -> Result<Fetched, FetchError> {
    let entry_addr = queue + (slot as u64) * (1u64 << crate::regs::LOG_CMDQ_STRIDE);
    let mut entry = [0u8; cl::ENTRY_SIZE];
    mem.read(entry_addr, &mut entry).map_err(FetchError::EntryDma)?;
    if entry[entry_off::STATUS_OWN] & cl::OWN_HW == 0 {
        return Err(FetchError::NotOwned);
    }
    if entry[entry_off::TYPE] != cl::CMD_TYPE_PCI {
        return Err(delivery(DeliveryStatus::CMD_DATA_ERR, format!("entry type {}", entry[entry_off::TYPE])));
    }
    if sigs && !cl::entry_signature_ok(&entry) {
        return Err(delivery(DeliveryStatus::SIGNATURE_ERR, "entry signature"));
    }
    if entry[1..4] != [0, 0, 0] || entry[0x3e] != 0 {
        return Err(delivery(DeliveryStatus::RES_FLD_NOT_CLR_ERR, "entry reserved bytes not zero"));
    }
    let inlen = be32(&entry, entry_off::INLEN) as usize;
    let outlen = be32(&entry, entry_off::OUTLEN) as usize;
    if !(8..=MAX_MSG_LEN).contains(&inlen) {
        return Err(delivery(DeliveryStatus::INPUT_LEN_ERR, format!("inlen {inlen}")));
    }
    if !(8..=MAX_MSG_LEN).contains(&outlen) {
        return Err(delivery(DeliveryStatus::OUTPUT_LEN_ERR, format!("outlen {outlen}")));
    }
    let token = entry[entry_off::TOKEN];
    let in_ptr = be64(&entry, entry_off::IN_PTR);
    let out_ptr = be64(&entry, entry_off::OUT_PTR);
    let nin = cl::blocks_for(inlen);
    let nout = cl::blocks_for(outlen);
    let (_, in_data) =
        walk_chain(mem, in_ptr, nin, token, sigs, DeliveryStatus::BAD_INPUT_PTR_ERR, true)?;
    let (out_blocks, _) =
        walk_chain(mem, out_ptr, nout, token, sigs, DeliveryStatus::BAD_OUTPUT_PTR_ERR, false)?;
    let mut input = Vec::with_capacity(inlen);
    input.extend_from_slice(&entry[entry_off::IN..entry_off::IN + cl::INLINE_LEN.min(inlen)]);
    if inlen > cl::INLINE_LEN {
        input.extend_from_slice(&in_data[..inlen - cl::INLINE_LEN]);
    }
    Ok(Fetched { slot, entry_addr, entry, input, out_blocks, outlen, token })
}

/// Writes only a delivery status (ownership cleared) into the entry at `entry_addr`.
pub fn complete_status(mem: &dyn GuestMemory, entry_addr: u64, status: DeliveryStatus) -> Result<(), DmaError> {
    mem.write(entry_addr + entry_off::STATUS_OWN as u64, &[(status as u8) << 1])
}

/// Writes `output` (exactly `outlen` bytes) back and clears ownership.
///
/// With `sigs` the block and entry signatures are computed; `corrupt_sig` makes the
/// output block signatures wrong on purpose (fault injection).
pub fn complete(
    mem: &dyn GuestMemory,
    f: &Fetched,
    output: &[u8],
    status: DeliveryStatus,
    sigs: bool,
    corrupt_sig: bool,
) -> Result<(), DmaError> {
    let inline = output.len().min(cl::INLINE_LEN);
    let mut rest = output.get(cl::INLINE_LEN..).unwrap_or(&[]);
    for &addr in &f.out_blocks {
        let n = rest.len().min(cl::BLOCK_DATA_LEN);
        if sigs || corrupt_sig {
            let mut block = [0u8; cl::BLOCK_SIZE];
            mem.read(addr, &mut block)?;
            block[..n].copy_from_slice(&rest[..n]);
            block[n..cl::BLOCK_DATA_LEN].fill(0);
            block[block_off::CTRL_SIG] = 0;
            block[block_off::SIG] = 0;
            block[block_off::CTRL_SIG] = cl::block_ctrl_signature(&block);
            block[block_off::SIG] = cl::block_signature(&block);
            if corrupt_sig {
                block[block_off::SIG] ^= 0x5a;
            }
            mem.write(addr, &block)?;
        } else {
            mem.write(addr, &rest[..n])?;
        }
        rest = &rest[n..];
    }
    let mut entry = f.entry;
    entry[entry_off::OUT..entry_off::OUT + cl::INLINE_LEN].fill(0);
    entry[entry_off::OUT..entry_off::OUT + inline].copy_from_slice(&output[..inline]);
    mem.write(f.entry_addr + entry_off::OUT as u64, &entry[entry_off::OUT..entry_off::OUT + cl::INLINE_LEN])?;
    let status_own = (status as u8) << 1;
    if sigs {
        entry[entry_off::SIG] = 0;
        entry[entry_off::STATUS_OWN] = status_own;
        entry[entry_off::SIG] = cl::entry_signature(&entry);
        mem.write(f.entry_addr + entry_off::SIG as u64, &[entry[entry_off::SIG]])?;
    }
    // Ownership goes back last.
    mem.write(f.entry_addr + entry_off::STATUS_OWN as u64, &[status_own])
}
