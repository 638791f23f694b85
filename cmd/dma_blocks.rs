// SPDX-License-Identifier: GPL-2.0

//! Mailbox blocks in coherent DMA memory.
//!
//! A mailbox chain is a list of 576-byte blocks, each 1 KiB aligned. They are carved
//! from coherent allocations (page-aligned, so every 1 KiB slot is aligned), four
//! blocks to a 4 KiB page. A long chain (a 1 GiB MR's CREATE_MKEY carries 2 MiB of
//! MTT, 4,096 blocks) takes its pages in chunks of up to [`CHUNK_PAGES`], so it costs
//! a few allocations rather than one per page; when a chunk cannot be had (memory too
//! fragmented for 64 KiB runs) the chain falls back to single pages, so it never needs
//! physically contiguous memory beyond one page.

use kernel::{alloc::flags::__GFP_NOWARN, device, device::Bound, dma::Coherent, prelude::*};

use super::mailbox::{BlockMemory, MAILBOX_BLOCK_SIZE};
use crate::{coherent_io, ifc::cmd_layout::BLOCK_ALIGN};

const PAGE: usize = 4096;
const SLOT: usize = BLOCK_ALIGN as usize;
const BLOCKS_PER_PAGE: usize = PAGE / SLOT;
/// Pages of one coherent allocation of a long chain (64 KiB, 64 blocks).
pub(crate) const CHUNK_PAGES: usize = 16;

/// `count` mailbox blocks in DMA memory.
///
/// INVARIANT: `chunks.len() * per_chunk >= count`; every chunk but the last is
/// `per_chunk * SLOT` bytes, the last at least the rest of the `count` blocks; `per_chunk`
/// is a multiple of `BLOCKS_PER_PAGE` and at least one page's worth.
pub(crate) struct DmaBlocks {
    chunks: KVec<Coherent<[u8]>>,
    per_chunk: usize,
    count: usize,
}

impl DmaBlocks {
    /// Allocates `count` zeroed blocks for `dev`: in chunks of up to [`CHUNK_PAGES`]
    /// pages, or one page at a time if a chunk cannot be had.
    ///
    /// # Errors
    ///
    /// `ENOMEM` when even single pages cannot be allocated.
    pub(crate) fn new(dev: &device::Device<Bound>, count: usize) -> Result<Self> {
        let npages = count.div_ceil(BLOCKS_PER_PAGE);
        let chunk = npages.clamp(1, CHUNK_PAGES);
        match Self::with_chunks(dev, count, chunk) {
            Err(e) if e == ENOMEM && chunk > 1 => Self::with_chunks(dev, count, 1),
            r => r,
        }
    }

    fn with_chunks(dev: &device::Device<Bound>, count: usize, chunk_pages: usize) -> Result<Self> {
        let npages = count.div_ceil(BLOCKS_PER_PAGE);
        let nchunks = npages.div_ceil(chunk_pages);
        let mut chunks = KVec::with_capacity(nchunks, GFP_KERNEL)?;
        let mut left = npages;
        while left > 0 {
            let pages = left.min(chunk_pages);
            // __GFP_NOWARN: a failed multi-page chunk falls back to single pages.
            let flags = if pages > 1 {
                GFP_KERNEL | __GFP_NOWARN
            } else {
                GFP_KERNEL
            };
            chunks.push(
                Coherent::<u8>::zeroed_slice(dev, pages * PAGE, flags)?,
                GFP_KERNEL,
            )?;
            left -= pages;
        }
        // INVARIANT: `nchunks` chunks of `chunk_pages` pages (the last with the rest)
        // hold `npages * BLOCKS_PER_PAGE >= count` blocks.
        Ok(Self {
            chunks,
            per_chunk: chunk_pages * BLOCKS_PER_PAGE,
            count,
        })
    }

    /// The chunk holding block `index` and the offset of its byte `offset` in that
    /// chunk, if `[offset, offset + len)` stays inside the block.
    fn locate(&self, index: usize, offset: usize, len: usize) -> Option<(&Coherent<[u8]>, usize)> {
        if index >= self.count || offset.checked_add(len)? > MAILBOX_BLOCK_SIZE {
            return None;
        }
        let chunk = self.chunks.get(index / self.per_chunk)?;
        Some((chunk, (index % self.per_chunk) * SLOT + offset))
    }
}

impl BlockMemory for DmaBlocks {
    fn block_count(&self) -> usize {
        self.count
    }

    fn dma_addr(&self, index: usize) -> u64 {
        match self.chunks.get(index / self.per_chunk) {
            // CAST: `(index % per_chunk) * 1024` is below the chunk's size, lossless.
            Some(c) => c.dma_address() + ((index % self.per_chunk) * SLOT) as u64,
            None => 0,
        }
    }

    fn write(&mut self, index: usize, offset: usize, data: &[u8]) {
        // The device does not access a chain before the command owning it is posted:
        // blocks are written only while the slot is not owned by the device. Out of the
        // block (a caller bug) writes nothing.
        if let Some((page, at)) = self.locate(index, offset, data.len()) {
            let _ = coherent_io::write_bytes(page, at, data);
        }
    }

    fn read(&self, index: usize, offset: usize, out: &mut [u8]) {
        // Outputs are read only after the device returned ownership of the command.
        // Out of the block (a caller bug) leaves `out` as it is.
        if let Some((page, at)) = self.locate(index, offset, out.len()) {
            let _ = coherent_io::read_bytes(page, at, out);
        }
    }
}
