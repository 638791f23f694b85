// SPDX-License-Identifier: GPL-2.0

//! Mailbox blocks in coherent DMA memory.
//!
//! A mailbox chain is a list of 576-byte blocks, each 1 KiB aligned. They are carved
//! from 4 KiB coherent allocations (page-aligned, so every 1 KiB slot is aligned),
//! four blocks to a page, so a long chain (MANAGE_PAGES with thousands of addresses)
//! never needs physically contiguous memory beyond one page.

use kernel::{device, device::Bound, dma::Coherent, prelude::*};

use super::mailbox::{BlockMemory, MAILBOX_BLOCK_SIZE};
use crate::{dma_buf, ifc::cmd_layout::BLOCK_ALIGN};

const PAGE: usize = 4096;
const SLOT: usize = BLOCK_ALIGN as usize;
const BLOCKS_PER_PAGE: usize = PAGE / SLOT;

/// `count` mailbox blocks in DMA memory.
///
/// INVARIANT: `pages.len() * BLOCKS_PER_PAGE >= count`, every page is `PAGE` bytes.
pub(crate) struct DmaBlocks {
    pages: KVec<Coherent<[u8]>>,
    count: usize,
}

impl DmaBlocks {
    /// Allocates `count` zeroed blocks for `dev`.
    pub(crate) fn new(dev: &device::Device<Bound>, count: usize) -> Result<Self> {
        let npages = count.div_ceil(BLOCKS_PER_PAGE);
        let mut pages = KVec::with_capacity(npages, GFP_KERNEL)?;
        for _ in 0..npages {
            pages.push(
                Coherent::<u8>::zeroed_slice(dev, PAGE, GFP_KERNEL)?,
                GFP_KERNEL,
            )?;
        }
        // INVARIANT: `npages * BLOCKS_PER_PAGE >= count` by `div_ceil`.
        Ok(Self { pages, count })
    }

    /// The page holding block `index` and the offset of its byte `offset` in that
    /// page, if `[offset, offset + len)` stays inside the block.
    fn locate(&self, index: usize, offset: usize, len: usize) -> Option<(&Coherent<[u8]>, usize)> {
        if index >= self.count || offset.checked_add(len)? > MAILBOX_BLOCK_SIZE {
            return None;
        }
        let page = self.pages.get(index / BLOCKS_PER_PAGE)?;
        Some((page, (index % BLOCKS_PER_PAGE) * SLOT + offset))
    }
}

impl BlockMemory for DmaBlocks {
    fn block_count(&self) -> usize {
        self.count
    }

    fn dma_addr(&self, index: usize) -> u64 {
        match self.pages.get(index / BLOCKS_PER_PAGE) {
            // CAST: `(index % 4) * 1024 < 4096`, lossless.
            Some(p) => p.dma_address() + ((index % BLOCKS_PER_PAGE) * SLOT) as u64,
            None => 0,
        }
    }

    fn write(&mut self, index: usize, offset: usize, data: &[u8]) {
        // The device does not access a chain before the command owning it is posted:
        // blocks are written only while the slot is not owned by the device. Out of the
        // block (a caller bug) writes nothing.
        if let Some((page, at)) = self.locate(index, offset, data.len()) {
            let _ = dma_buf::write_bytes(page, at, data);
        }
    }

    fn read(&self, index: usize, offset: usize, out: &mut [u8]) {
        // Outputs are read only after the device returned ownership of the command.
        // Out of the block (a caller bug) leaves `out` as it is.
        if let Some((page, at)) = self.locate(index, offset, out.len()) {
            let _ = dma_buf::read_bytes(page, at, out);
        }
    }
}
