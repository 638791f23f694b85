//! Guest RAM shared by QEMU (DMA_MAP with a memfd): mmap and address translation.
//!
//! QEMU maps and unmaps sections many times during boot, so every access resolves
//! the address against the current table. Sections without an fd cannot be reached
//! (the transport has no DMA read/write messages) and are recorded as unreachable.

use crate::mem::{DmaError, GuestMemory};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::RwLock;

struct Region {
    gpa: u64,
    size: u64,
    ptr: *mut u8,
    map_len: usize,
    /// Offset of `gpa` inside the mapping (the mmap offset is page aligned).
    delta: usize,
}

// SAFETY: `ptr` points into a MAP_SHARED mapping owned by the region; it is only
// used for bounds-checked copies, and the mapping is removed only under the table's
// write lock.
unsafe impl Send for Region {}
// SAFETY: see above; concurrent copies into shared guest memory are the nature of DMA.
unsafe impl Sync for Region {}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`map_len` are exactly what mmap returned for this region.
        unsafe {
            libc::munmap(self.ptr.cast(), self.map_len);
        }
    }
}

/// Guest memory made of mmapped DMA regions.
#[derive(Default)]
pub struct MappedMemory {
    regions: RwLock<Vec<Region>>,
}

impl MappedMemory {
    /// Creates an empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Maps `size` bytes of `fd` at file offset `offset` as guest address `gpa`.
    pub fn map(&self, gpa: u64, size: u64, offset: u64, fd: &File) -> std::io::Result<()> {
        // SAFETY: sysconf has no memory-safety preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
        let aligned = offset & !(page - 1);
        let delta = (offset - aligned) as usize;
        let map_len = usize::try_from(size)
            .ok()
            .and_then(|s| s.checked_add(delta))
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        // SAFETY: a fresh shared mapping of a file descriptor we were given; the
        // result is checked for MAP_FAILED and owned by the Region that unmaps it.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                aligned as libc::off_t,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let region = Region {
            gpa,
            size,
            ptr: ptr.cast(),
            map_len,
            delta,
        };
        let mut regions = self.regions.write().unwrap_or_else(|e| e.into_inner());
        regions.retain(|r| r.gpa + r.size <= gpa || gpa + size <= r.gpa);
        regions.push(region);
        Ok(())
    }

    /// Unmaps every region overlapping `gpa..gpa+size`.
    pub fn unmap(&self, gpa: u64, size: u64) {
        let mut regions = self.regions.write().unwrap_or_else(|e| e.into_inner());
        regions.retain(|r| r.gpa + r.size <= gpa || gpa.saturating_add(size) <= r.gpa);
    }

    /// Unmaps everything.
    pub fn unmap_all(&self) {
        self.regions
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Number of mapped regions.
    pub fn region_count(&self) -> usize {
        self.regions.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    fn with_ptr<R>(
        &self,
        addr: u64,
        len: usize,
        f: impl FnOnce(*mut u8) -> R,
    ) -> Result<R, DmaError> {
        let err = DmaError { addr, len };
        let regions = self.regions.read().unwrap_or_else(|e| e.into_inner());
        let end = addr.checked_add(len as u64).ok_or(err)?;
        let r = regions
            .iter()
            .find(|r| r.gpa <= addr && end <= r.gpa + r.size)
            .ok_or(err)?;
        let off = usize::try_from(addr - r.gpa).map_err(|_| err)? + r.delta;
        // SAFETY: `off + len <= delta + size == map_len` was checked above, so the
        // pointer stays inside the mapping, which lives while the read lock is held.
        let p = unsafe { r.ptr.add(off) };
        Ok(f(p))
    }
}

impl GuestMemory for MappedMemory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaError> {
        self.with_ptr(addr, buf.len(), |p| {
            // SAFETY: `p..p+len` is inside a live mapping (see `with_ptr`) and cannot
            // overlap `buf`, which is process-private memory.
            unsafe { std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), buf.len()) }
        })
    }

    fn write(&self, addr: u64, buf: &[u8]) -> Result<(), DmaError> {
        // Earlier DMA writes (e.g. an EQE body) become visible before this one
        // (e.g. its owner byte).
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        self.with_ptr(addr, buf.len(), |p| {
            // SAFETY: as in `read`, with the copy direction reversed.
            unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), p, buf.len()) }
        })
    }

    fn is_mapped(&self, addr: u64, len: u64) -> bool {
        usize::try_from(len)
            .map(|l| self.with_ptr(addr, l, |_| ()).is_ok())
            .unwrap_or(false)
    }

    fn regions(&self) -> usize {
        self.region_count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::FromRawFd;
    use std::os::unix::fs::FileExt;

    fn memfd(size: u64) -> File {
        // SAFETY: memfd_create with a valid NUL-terminated name; the fd is checked and owned.
        let fd = unsafe { libc::memfd_create(c"t".as_ptr(), 0) };
        assert!(fd >= 0);
        // SAFETY: `fd` is a fresh descriptor we own.
        let f = unsafe { File::from_raw_fd(fd) };
        f.set_len(size).unwrap();
        f
    }

    #[test]
    fn translate_offsets_and_unmap() {
        let f = memfd(0x10000);
        let m = MappedMemory::new();
        // Guest 0x100000.. maps file offset 0x3000 (unaligned offsets are handled too).
        m.map(0x10_0000, 0x4000, 0x3000, &f).unwrap();
        m.write(0x10_0010, b"abc").unwrap();
        let mut b = [0u8; 3];
        f.read_exact_at(&mut b, 0x3010).unwrap();
        assert_eq!(&b, b"abc");
        m.map(0x20_0000, 0x1000, 0x2800, &f).unwrap();
        m.read(0x20_0000, &mut b).unwrap();
        f.write_all_at(b"xyz", 0x2800).unwrap();
        m.read(0x20_0000, &mut b).unwrap();
        assert_eq!(&b, b"xyz");
        assert!(
            m.read(0x10_3fff, &mut b).is_err(),
            "crosses the end of a region"
        );
        assert!(m.is_mapped(0x10_0000, 0x4000));
        m.unmap(0x10_0000, 0x4000);
        assert!(m.write(0x10_0010, b"a").is_err());
        assert_eq!(m.region_count(), 1);
        m.unmap_all();
        assert_eq!(m.region_count(), 0);
    }
}
