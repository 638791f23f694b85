//! Guest memory as the device sees it: DMA reads and writes by guest-physical address.
//!
//! The vfio-user transport gives no DMA messages; guest RAM is shared memory mapped
//! into this process ([`crate::dma_map::MappedMemory`]). Tests use [`VecMemory`].
//! An access to an unmapped address is a [`DmaError`], never a crash.

use std::sync::Mutex;

/// A DMA access outside mapped guest memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaError {
    /// Guest-physical address of the access.
    pub addr: u64,
    /// Length of the access.
    pub len: usize,
}

impl std::fmt::Display for DmaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DMA to unmapped guest memory {:#x}+{:#x}",
            self.addr, self.len
        )
    }
}

/// Device access to guest memory.
pub trait GuestMemory: Send + Sync {
    /// Copies guest memory at `addr` into `buf`.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaError>;
    /// Copies `buf` into guest memory at `addr`.
    fn write(&self, addr: u64, buf: &[u8]) -> Result<(), DmaError>;
    /// True if `addr..addr+len` is entirely mapped.
    fn is_mapped(&self, addr: u64, len: u64) -> bool;
    /// Number of mapped regions (for statistics).
    fn regions(&self) -> usize {
        1
    }
}

/// A flat in-process guest memory for tests: `size` bytes starting at `base`, less
/// the ranges [`VecMemory::unmap`] took away.
pub struct VecMemory {
    base: u64,
    bytes: Mutex<Vec<u8>>,
    holes: Mutex<Vec<std::ops::Range<u64>>>,
}

impl VecMemory {
    /// Creates zeroed memory at `base`.
    pub fn new(base: u64, size: usize) -> Self {
        VecMemory {
            base,
            bytes: Mutex::new(vec![0; size]),
            holes: Mutex::new(Vec::new()),
        }
    }

    /// Takes `addr..addr+len` out of the device's reach, as a host unmapping a DMA
    /// region does (vfio-user DMA unmap): every later access touching it fails.
    pub fn unmap(&self, addr: u64, len: u64) {
        self.holes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(addr..addr.saturating_add(len));
    }

    fn range(&self, addr: u64, len: usize, size: usize) -> Option<std::ops::Range<usize>> {
        let end_addr = addr.checked_add(len as u64)?;
        let holes = self.holes.lock().unwrap_or_else(|e| e.into_inner());
        if holes.iter().any(|h| addr < h.end && h.start < end_addr) {
            return None;
        }
        let start = usize::try_from(addr.checked_sub(self.base)?).ok()?;
        let end = start.checked_add(len)?;
        (end <= size).then_some(start..end)
    }
}

impl GuestMemory for VecMemory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaError> {
        let bytes = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        let r = self.range(addr, buf.len(), bytes.len()).ok_or(DmaError {
            addr,
            len: buf.len(),
        })?;
        buf.copy_from_slice(&bytes[r]);
        Ok(())
    }

    fn write(&self, addr: u64, buf: &[u8]) -> Result<(), DmaError> {
        let mut bytes = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        let size = bytes.len();
        let r = self.range(addr, buf.len(), size).ok_or(DmaError {
            addr,
            len: buf.len(),
        })?;
        bytes[r].copy_from_slice(buf);
        Ok(())
    }

    fn is_mapped(&self, addr: u64, len: u64) -> bool {
        let size = self.bytes.lock().unwrap_or_else(|e| e.into_inner()).len();
        usize::try_from(len)
            .ok()
            .and_then(|l| self.range(addr, l, size))
            .is_some()
    }
}
