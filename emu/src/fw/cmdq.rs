//! Command queue transport: fetch an entry and its mailbox chains, validate them,
//! and write the output and delivery status back.
//!
//! Validation follows the PRM delivery statuses: a violation is reported in the
//! entry's `status_own` instead of executing the command.

use super::inject::{CorruptField, Corruption};
use crate::ifc::cmd_layout::{self as cl, block_off, entry_off};
use crate::ifc::status::DeliveryStatus;
use crate::mem::{DmaError, GuestMemory};

/// Largest message (input or output) the device accepts. Our choice: a bound on what
/// an untrusted guest can make the emulator allocate, 64 times the largest message
/// upstream sends (its biggest input cache holds 262,160-byte messages).
pub const MAX_MSG_LEN: usize = cl::INLINE_LEN + 32768 * cl::BLOCK_DATA_LEN;

/// Alignment of the entry's mailbox pointers: bits 8:0 are reserved in
/// `mlx5_ifc_cmd_queue_entry_bits` (`*_mailbox_pointer_31_9`).
pub const ENTRY_PTR_ALIGN: u64 = 512;

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
    FetchError::Delivery {
        status,
        dma: None,
        why: why.into(),
    }
}

/// Walks a mailbox chain of `n` blocks starting at `first`, checking alignment,
/// block numbers, tokens, reserved bytes and (if `sigs`) signatures. Returns the block
/// addresses and the data of each block.
///
/// Sources (see emu/README.md, "Rules and their sources"):
/// - Only the `n` blocks the length needs are followed: upstream reuses cached input
///   chains longer than the message (cmd.c `alloc_msg`), with `inlen` the real length.
/// - Alignment: the entry's pointers have bits 8:0 reserved
///   (`mlx5_ifc_cmd_queue_entry_bits.input/output_mailbox_pointer_31_9`), a block's
///   `next_pointer_31_10` has bits 9:0 reserved (`mlx5_ifc_cmd_if_box_bits`); a pointer
///   with reserved bits set is delivery status 0x5 / 0x4 ("pointer not aligned",
///   upstream cmd.c `MLX5_CMD_DELIVERY_STAT_*_PTR_ALIGN_ERR`). Address 0 is not
///   special (the PRM does not forbid it): a chain there fails the checks below.
/// - `block_number` = position from 0 (delivery status 0x3), `token` = the entry's
///   token (0x2): `mlx5_ifc_cmd_if_box_bits`; upstream `mlx5_alloc_cmd_msg` numbers
///   blocks from 0 and stamps the token in input and output blocks alike.
/// - Reserved bytes not zero: delivery status 0x9 (`RES_FLD_NOT_CLR_ERR`).
/// - Signatures only with cap `cmdif_checksum` set (delivery status 0x1; upstream
///   `calc_block_sig` / `verify_block_sig`).
/// - A DMA fault while reading a block is reported as the pointer error (our choice:
///   on hardware it is an IOMMU/PCIe error) and counted as a DMA error.
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
        // The first pointer comes from the entry (bits 8:0 reserved), later ones from a
        // block's next_pointer (bits 9:0 reserved).
        let align = if i == 0 {
            ENTRY_PTR_ALIGN
        } else {
            cl::BLOCK_ALIGN
        };
        if !addr.is_multiple_of(align) {
            return Err(delivery(
                bad_ptr,
                format!("block {i} pointer {addr:#x} not {align}-byte aligned"),
            ));
        }
        if let Err(e) = mem.read(addr, &mut block) {
            return Err(FetchError::Delivery {
                status: bad_ptr,
                dma: Some(e),
                why: format!("block {i}: {e}"),
            });
        }
        let num = be32(&block, block_off::BLOCK_NUM);
        if num as usize != i {
            return Err(delivery(
                DeliveryStatus::BAD_BLK_NUM_ERR,
                format!("block {i} carries block_num {num}"),
            ));
        }
        if block[block_off::TOKEN] != token {
            return Err(delivery(
                DeliveryStatus::TOKEN_ERR,
                format!(
                    "block {i} token {:#x} != entry token {token:#x}",
                    block[block_off::TOKEN]
                ),
            ));
        }
        if block[block_off::RSVD0..block_off::NEXT]
            .iter()
            .any(|&b| b != 0)
            || block[block_off::RSVD1] != 0
        {
            return Err(delivery(
                DeliveryStatus::RES_FLD_NOT_CLR_ERR,
                format!("block {i} reserved bytes not zero"),
            ));
        }
        if sigs && !cl::block_signatures_ok(&block) {
            return Err(delivery(
                DeliveryStatus::SIGNATURE_ERR,
                format!("block {i} signature"),
            ));
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
pub fn fetch(
    mem: &dyn GuestMemory,
    queue: u64,
    slot: usize,
    sigs: bool,
) -> Result<Fetched, FetchError> {
    let entry_addr = queue + (slot as u64) * (1u64 << crate::regs::LOG_CMDQ_STRIDE);
    let mut entry = [0u8; cl::ENTRY_SIZE];
    mem.read(entry_addr, &mut entry)
        .map_err(FetchError::EntryDma)?;
    // Hardware executes only entries it owns (`mlx5_ifc_cmd_queue_entry_bits.ownership`,
    // set by software before the doorbell: upstream `cmd_work_handler`).
    if entry[entry_off::STATUS_OWN] & cl::OWN_HW == 0 {
        return Err(FetchError::NotOwned);
    }
    // type 7 = PCI command transport (upstream `MLX5_PCI_CMD_XPORT`); anything else is
    // delivery status 0x10 "bad command descriptor type" (upstream cmd.c).
    if entry[entry_off::TYPE] != cl::CMD_TYPE_PCI {
        return Err(delivery(
            DeliveryStatus::CMD_DATA_ERR,
            format!("entry type {}", entry[entry_off::TYPE]),
        ));
    }
    // Entry signature: checked only with cap cmdif_checksum set (upstream signs every
    // entry, `set_signature`, but keeps checksums off; what firmware does then is not
    // documented, so the permissive reading).
    if sigs && !cl::entry_signature_ok(&entry) {
        return Err(delivery(DeliveryStatus::SIGNATURE_ERR, "entry signature"));
    }
    // reserved_at_8 (bytes 1..4) and reserved_at_1f0 (byte 0x3e) of
    // `mlx5_ifc_cmd_queue_entry_bits`: delivery status 0x9 (upstream zeroes the entry).
    if entry[1..4] != [0, 0, 0] || entry[0x3e] != 0 {
        return Err(delivery(
            DeliveryStatus::RES_FLD_NOT_CLR_ERR,
            "entry reserved bytes not zero",
        ));
    }
    let inlen = be32(&entry, entry_off::INLEN) as usize;
    let outlen = be32(&entry, entry_off::OUTLEN) as usize;
    // Lengths: at least the 8-byte header (`mlx5_ifc_cmd_in_bits` opcode/op_mod,
    // `mlx5_ifc_cmd_out_bits` status/syndrome), at most MAX_MSG_LEN (our bound); else
    // delivery status 0x7 / 0x8 (upstream cmd.c `*_LENGTH_ERR`).
    if !(8..=MAX_MSG_LEN).contains(&inlen) {
        return Err(delivery(
            DeliveryStatus::INPUT_LEN_ERR,
            format!("inlen {inlen}"),
        ));
    }
    if !(8..=MAX_MSG_LEN).contains(&outlen) {
        return Err(delivery(
            DeliveryStatus::OUTPUT_LEN_ERR,
            format!("outlen {outlen}"),
        ));
    }
    let token = entry[entry_off::TOKEN];
    let in_ptr = be64(&entry, entry_off::IN_PTR);
    let out_ptr = be64(&entry, entry_off::OUT_PTR);
    let nin = cl::blocks_for(inlen);
    let nout = cl::blocks_for(outlen);
    let (_, in_data) = walk_chain(
        mem,
        in_ptr,
        nin,
        token,
        sigs,
        DeliveryStatus::BAD_INPUT_PTR_ERR,
        true,
    )?;
    let (out_blocks, _) = walk_chain(
        mem,
        out_ptr,
        nout,
        token,
        sigs,
        DeliveryStatus::BAD_OUTPUT_PTR_ERR,
        false,
    )?;
    let mut input = Vec::with_capacity(inlen);
    input.extend_from_slice(&entry[entry_off::IN..entry_off::IN + cl::INLINE_LEN.min(inlen)]);
    if inlen > cl::INLINE_LEN {
        input.extend_from_slice(&in_data[..inlen - cl::INLINE_LEN]);
    }
    Ok(Fetched {
        slot,
        entry_addr,
        entry,
        input,
        out_blocks,
        outlen,
        token,
    })
}

/// Writes only a delivery status (ownership cleared) into the entry at `entry_addr`.
pub fn complete_status(
    mem: &dyn GuestMemory,
    entry_addr: u64,
    status: DeliveryStatus,
) -> Result<(), DmaError> {
    mem.write(
        entry_addr + entry_off::STATUS_OWN as u64,
        &[(status as u8) << 1],
    )
}

/// Writes `output` (exactly `outlen` bytes) back and clears ownership.
///
/// Order (PRM ownership rule, upstream `poll_timeout` + `rmb()` before reading): output
/// mailboxes, then the entry's inline output, then the signature, then `status_own`
/// last. With `sigs` the block and entry signatures are computed (upstream
/// `verify_signature` checks the entry XOR and every output block on completion).
/// `corrupt` writes one field wrong on purpose (fault injection); returns whether it
/// applied (a mailbox field needs an output mailbox).
pub fn complete(
    mem: &dyn GuestMemory,
    f: &Fetched,
    output: &[u8],
    status: DeliveryStatus,
    sigs: bool,
    corrupt: Option<&Corruption>,
) -> Result<bool, DmaError> {
    let mut applied = false;
    let block_hit = |i: usize, field: CorruptField| {
        corrupt
            .filter(|c| c.field == field && c.block.is_none_or(|b| b == i))
            .map(|c| c.value)
    };
    let inline = output.len().min(cl::INLINE_LEN);
    let mut rest = output.get(cl::INLINE_LEN..).unwrap_or(&[]);
    for (i, &addr) in f.out_blocks.iter().enumerate() {
        let n = rest.len().min(cl::BLOCK_DATA_LEN);
        let mut block = [0u8; cl::BLOCK_SIZE];
        mem.read(addr, &mut block)?;
        let mut touched = false;
        block[..n].copy_from_slice(&rest[..n]);
        block[n..cl::BLOCK_DATA_LEN].fill(0);
        // Control fields the device writes wrong, before signing (a device that writes
        // a wrong field signs what it wrote).
        if let Some(v) = block_hit(i, CorruptField::BlockNum) {
            let num = u32::from_be_bytes([block[0x238], block[0x239], block[0x23a], block[0x23b]]);
            let v = v.map_or(num ^ 0x80, |v| v as u32);
            block[block_off::BLOCK_NUM..block_off::BLOCK_NUM + 4].copy_from_slice(&v.to_be_bytes());
            touched = true;
        }
        if let Some(v) = block_hit(i, CorruptField::BlockToken) {
            block[block_off::TOKEN] = v.map_or(block[block_off::TOKEN] ^ 0xff, |v| v as u8);
            touched = true;
        }
        if let Some(v) = block_hit(i, CorruptField::BlockNext) {
            let mut nb = [0u8; 8];
            nb.copy_from_slice(&block[block_off::NEXT..block_off::NEXT + 8]);
            let v = v.unwrap_or(u64::from_be_bytes(nb) ^ 0xdead_0000_0000_0400);
            block[block_off::NEXT..block_off::NEXT + 8].copy_from_slice(&v.to_be_bytes());
            touched = true;
        }
        if sigs {
            block[block_off::CTRL_SIG] = 0;
            block[block_off::SIG] = 0;
            block[block_off::CTRL_SIG] = cl::block_ctrl_signature(&block);
            block[block_off::SIG] = cl::block_signature(&block);
        }
        if let Some(v) = block_hit(i, CorruptField::BlockSig) {
            block[block_off::SIG] = v.map_or(block[block_off::SIG] ^ 0x5a, |v| v as u8);
            touched = true;
        }
        applied |= touched;
        if sigs || touched {
            mem.write(addr, &block)?;
        } else {
            mem.write(addr, &rest[..n])?;
        }
        rest = &rest[n..];
    }
    let mut entry = f.entry;
    entry[entry_off::OUT..entry_off::OUT + cl::INLINE_LEN].fill(0);
    entry[entry_off::OUT..entry_off::OUT + inline].copy_from_slice(&output[..inline]);
    mem.write(
        f.entry_addr + entry_off::OUT as u64,
        &entry[entry_off::OUT..entry_off::OUT + cl::INLINE_LEN],
    )?;
    let mut status_own = (status as u8) << 1;
    let mut extra: Vec<(usize, Vec<u8>)> = Vec::new();
    if let Some(c) = corrupt.filter(|c| !c.field.in_block()) {
        applied = true;
        match c.field {
            CorruptField::OutLen => {
                let v = c.value.map_or(f.outlen as u32 ^ 0x1000, |v| v as u32);
                entry[entry_off::OUTLEN..entry_off::OUTLEN + 4].copy_from_slice(&v.to_be_bytes());
                extra.push((entry_off::OUTLEN, v.to_be_bytes().to_vec()));
            }
            CorruptField::EntryToken => {
                let v = c.value.map_or(f.token ^ 0xff, |v| v as u8);
                entry[entry_off::TOKEN] = v;
                extra.push((entry_off::TOKEN, vec![v]));
            }
            CorruptField::Own => status_own |= cl::OWN_HW,
            CorruptField::Status => status_own = ((c.value.unwrap_or(0x7f) as u8) & 0x7f) << 1,
            _ => {}
        }
    }
    for (off, bytes) in &extra {
        mem.write(f.entry_addr + *off as u64, bytes)?;
    }
    let entry_sig_bad = corrupt.filter(|c| c.field == CorruptField::EntrySig);
    if sigs || entry_sig_bad.is_some() {
        entry[entry_off::SIG] = 0;
        entry[entry_off::STATUS_OWN] = status_own;
        entry[entry_off::SIG] = cl::entry_signature(&entry);
        if let Some(c) = entry_sig_bad {
            entry[entry_off::SIG] = c.value.map_or(entry[entry_off::SIG] ^ 0x5a, |v| v as u8);
        }
        mem.write(
            f.entry_addr + entry_off::SIG as u64,
            &[entry[entry_off::SIG]],
        )?;
    }
    // Ownership goes back last.
    mem.write(f.entry_addr + entry_off::STATUS_OWN as u64, &[status_own])?;
    Ok(applied)
}
