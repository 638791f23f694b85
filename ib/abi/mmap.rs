// SPDX-License-Identifier: GPL-2.0

//! The mmap offset of a user context: which page user space maps, as upstream
//! `mlx5_ib_mmap` (`main.c`) decodes it.
//!
//! The page offset (`vm_pgoff` = offset / `PAGE_SIZE`) carries a command in bits
//! 15:8 and an index: bits 7:0, plus bits 23:16 as the index's high byte for the
//! commands that take an extended index (ALLOC_WC and the `rdma_user_mmap_entry`
//! range). Commands: 0 REGULAR_PAGE / 2 WC_PAGE / 3 NC_PAGE map static UAR page
//! `index` (low byte only); 6 ALLOC_WC a dynamic UAR page; 5 the core clock page;
//! 7 the clock info page; 1 is `ENOSYS`; 8 (device memory) and 9..=255 name an mmap
//! entry by key `command << 16 | index` (UAR objects of UAR_OBJ_ALLOC are inserted in
//! `9 << 16 ..= 255 << 16 | 0xffff`). Command 4 and page offsets with bits above 23
//! are refused (`EINVAL`): upstream ignores those bits, which only aliases another
//! offset; libmlx5 never sets them.

use super::bfreg::BfregInfo;
use super::consts::{
    ADAPTER_PAGE_SHIFT, IB_UAPI_UAR_ALLOC_TYPE_BF, IB_UAPI_UAR_ALLOC_TYPE_NC, MMAP_ALLOC_WC,
    MMAP_CLOCK_INFO, MMAP_CMD_MASK, MMAP_CMD_SHIFT, MMAP_CORE_CLOCK, MMAP_DEVICE_MEM,
    MMAP_GET_CONTIGUOUS_PAGES, MMAP_NC_PAGE, MMAP_OFFSET_END, MMAP_OFFSET_START, MMAP_REGULAR_PAGE,
    MMAP_WC_PAGE,
};
use super::error::{Reason, UabiError};
use crate::errno::Errno;

/// The command of a page offset.
pub fn command(pgoff: u64) -> u8 {
    // Masked to 8 bits, so the conversion cannot fail.
    u8::try_from((pgoff >> MMAP_CMD_SHIFT) & MMAP_CMD_MASK).unwrap_or(u8::MAX)
}

/// The index of a page offset (bits 7:0).
pub fn index(pgoff: u64) -> u32 {
    (pgoff & 0xff) as u32
}

/// The extended index of a page offset (bits 23:16 above bits 7:0).
pub fn extended_index(pgoff: u64) -> u32 {
    index(pgoff) | ((((pgoff >> 16) & 0xff) as u32) << 8)
}

/// The page offset of `command` with extended `index` (< 65536), as libmlx5
/// computes it (`None` for a larger index).
#[cfg_attr(
    all(CONFIG_RUST, not(CONFIG_MLX5_RS_KUNIT_TEST)),
    expect(
        dead_code,
        reason = "libmlx5's side of the encoding, for the host tests"
    )
)]
pub fn pgoff(command: u8, index: u32) -> Option<u64> {
    if index > 0xffff {
        return None;
    }
    let i = u64::from(index);
    Some(((i >> 8) << 16) | (u64::from(command) << MMAP_CMD_SHIFT) | (i & 0xff))
}

/// The key of an mmap entry (`rdma_user_mmap_entry` `start_pgoff`) for `command`
/// and `index`.
pub fn entry_key(command: u8, index: u16) -> u64 {
    (u64::from(command) << 16) | u64::from(index)
}

/// Keys UAR objects (UAR_OBJ_ALLOC) are inserted in, inclusive.
pub const UAR_OBJ_KEYS: (u64, u64) = (
    (MMAP_OFFSET_START as u64) << 16,
    ((MMAP_OFFSET_END as u64) << 16) + 0xffff,
);

/// The mmap offset (bytes) user space passes for the entry of key `key`
/// (`mlx5_entry_to_mmap_offset`; returned in MMAP_OFFSET of UAR_OBJ_ALLOC).
pub fn entry_offset(key: u64, page_shift: u32) -> u64 {
    let cmd = (key >> 16) & 0xffff;
    let index = key & 0xffff;
    let pgoff = ((index >> 8) << 16) | (cmd << MMAP_CMD_SHIFT) | (index & 0xff);
    // A page offset has at most 24 bits: no page shift of a real host loses any.
    pgoff.checked_shl(page_shift).unwrap_or(0)
}

/// Caching of a UAR mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caching {
    /// Write-combining.
    WriteCombining,
    /// Uncached.
    Uncached,
}

/// The TYPE attribute of UAR_OBJ_ALLOC (`MLX5_IB_UAPI_UAR_ALLOC_TYPE_*`): the caching
/// of the new UAR page. Unknown types, and blue flame without write combining, are
/// `EOPNOTSUPP`, as upstream. The object's mmap entry then gets a key in
/// [`UAR_OBJ_KEYS`]; MMAP_OFFSET is its [`entry_offset`], MMAP_LENGTH one page,
/// PAGE_ID the UAR index.
pub fn uar_alloc_type(alloc_type: u32, wc: bool) -> Result<Caching, UabiError> {
    match alloc_type {
        IB_UAPI_UAR_ALLOC_TYPE_BF if wc => Ok(Caching::WriteCombining),
        IB_UAPI_UAR_ALLOC_TYPE_BF => {
            Err(UabiError::notsupp(Reason::Unsupported("write combining")))
        }
        IB_UAPI_UAR_ALLOC_TYPE_NC => Ok(Caching::Uncached),
        _ => Err(UabiError::notsupp(Reason::OutOfRange("UAR alloc type"))),
    }
}

/// What a page offset maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmapTarget {
    /// A UAR page of the context.
    Uar {
        /// Index in the context's UAR page table (`sys_pages`).
        sys_page: u32,
        /// A dynamic page (ALLOC_WC): the shell allocates its UAR now; its first
        /// bfreg number is `bfreg`, whose counter must be 0 (else `EINVAL`, busy).
        dynamic: bool,
        /// First bfreg number of the page.
        bfreg: u32,
        /// Caching.
        caching: Caching,
    },
    /// The page of the core clock (read-only, uncached; BAR0 + 0x1000).
    CoreClock,
    /// The clock info page (read-only).
    ClockInfo,
    /// The mmap entry of key `key`; absent → `EINVAL`.
    Entry {
        /// `command << 16 | extended index`.
        key: u64,
    },
}

/// The mapping user space asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vma {
    /// Page offset.
    pub pgoff: u64,
    /// Length in bytes.
    pub len: u64,
    /// `VM_SHARED`.
    pub shared: bool,
    /// `VM_WRITE`.
    pub write: bool,
    /// `VM_EXEC`.
    pub exec: bool,
}

/// What the device and host offer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmapCaps {
    /// log2 of the host page size.
    pub page_shift: u32,
    /// Write combining works.
    pub wc: bool,
    /// A clock info page exists.
    pub clock_info: bool,
}

/// Decides what `vma` maps for a context whose bfreg plan is `bfregs`, with the
/// checks and errnos of upstream `mlx5_ib_mmap`, in its order.
pub fn decode(vma: &Vma, caps: &MmapCaps, bfregs: &BfregInfo) -> Result<MmapTarget, UabiError> {
    let inval = |r| UabiError::inval(r);
    if vma.pgoff >> 24 != 0 {
        return Err(inval(Reason::OutOfRange("mmap offset")));
    }
    let page = 1u64.checked_shl(caps.page_shift).unwrap_or(0);
    let cmd = command(vma.pgoff);
    match cmd {
        MMAP_WC_PAGE | MMAP_ALLOC_WC | MMAP_NC_PAGE | MMAP_REGULAR_PAGE => {
            if (cmd == MMAP_WC_PAGE || cmd == MMAP_ALLOC_WC) && !caps.wc {
                return Err(UabiError::new(
                    Reason::Unsupported("write combining"),
                    Errno::EPERM,
                ));
            }
            uar(vma, page, cmd, bfregs)
        }
        MMAP_GET_CONTIGUOUS_PAGES => Err(UabiError::new(Reason::MmapCommand(cmd), Errno::ENOSYS)),
        MMAP_CORE_CLOCK => {
            if vma.len != page {
                return Err(inval(Reason::OutOfRange("mmap length")));
            }
            if vma.write {
                return Err(UabiError::new(
                    Reason::OutOfRange("mmap write"),
                    Errno::EPERM,
                ));
            }
            if caps.page_shift > ADAPTER_PAGE_SHIFT {
                return Err(UabiError::notsupp(Reason::Unsupported("core clock page")));
            }
            Ok(MmapTarget::CoreClock)
        }
        MMAP_CLOCK_INFO => {
            if vma.len != page || !vma.shared {
                return Err(inval(Reason::OutOfRange("mmap length")));
            }
            if index(vma.pgoff) != super::consts::CLOCK_INFO_V1 {
                return Err(UabiError::notsupp(Reason::OutOfRange("clock info version")));
            }
            if vma.write || vma.exec {
                return Err(UabiError::new(
                    Reason::OutOfRange("mmap write"),
                    Errno::EPERM,
                ));
            }
            if !caps.clock_info {
                return Err(UabiError::notsupp(Reason::Unsupported("clock info page")));
            }
            Ok(MmapTarget::ClockInfo)
        }
        MMAP_DEVICE_MEM | MMAP_OFFSET_START..=MMAP_OFFSET_END => {
            // `extended_index` is 16 bits wide by construction.
            let i = u16::try_from(extended_index(vma.pgoff)).unwrap_or(u16::MAX);
            Ok(MmapTarget::Entry {
                key: entry_key(cmd, i),
            })
        }
        _ => Err(inval(Reason::MmapCommand(cmd))),
    }
}

/// `uar_mmap`: a static or dynamic UAR page.
fn uar(vma: &Vma, page: u64, cmd: u8, b: &BfregInfo) -> Result<MmapTarget, UabiError> {
    let bad = |what| UabiError::inval(Reason::OutOfRange(what));
    if b.lib_uar_dyn {
        return Err(bad("static UAR page"));
    }
    if vma.len != page {
        return Err(bad("mmap length"));
    }
    let dynamic = cmd == MMAP_ALLOC_WC;
    let (idx, max) = if dynamic {
        (
            extended_index(vma.pgoff).saturating_add(b.num_static_sys_pages),
            b.num_sys_pages,
        )
    } else {
        (index(vma.pgoff), b.num_static_sys_pages)
    };
    if idx >= max {
        return Err(bad("UAR page index"));
    }
    let bfreg = idx.saturating_mul(b.bfregs_per_sys_page());
    if dynamic && bfreg >= b.total_num_bfregs {
        return Err(bad("dynamic bfreg"));
    }
    let caching = if cmd == MMAP_NC_PAGE {
        Caching::Uncached
    } else {
        Caching::WriteCombining
    };
    Ok(MmapTarget::Uar {
        sys_page: idx,
        dynamic,
        bfreg,
        caching,
    })
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_abi_mmap))]
mod tests {
    use super::*;

    const CAPS: MmapCaps = MmapCaps {
        page_shift: 12,
        wc: true,
        clock_info: false,
    };

    fn vma(pgoff: u64) -> Vma {
        Vma {
            pgoff,
            len: 4096,
            shared: true,
            write: false,
            exec: false,
        }
    }

    fn static_plan() -> BfregInfo {
        BfregInfo::plan_static(2, true, true, 12, 16, 4).unwrap()
    }

    #[test]
    fn encode_decode_round_trip() {
        for cmd in [0u8, 2, 3, 6, 9, 200, 255] {
            for idx in [0u32, 1, 0xff, 0x100, 0x1234, 0xffff] {
                let p = pgoff(cmd, idx).unwrap();
                assert_eq!(command(p), cmd);
                assert_eq!(extended_index(p), idx);
                assert_eq!(index(p), idx & 0xff);
            }
        }
        assert_eq!(pgoff(0, 0x1_0000), None);
        // The entry offset is the page offset of the same command and index.
        let key = entry_key(9, 0x0203);
        assert_eq!(entry_offset(key, 12), pgoff(9, 0x0203).unwrap() << 12);
        assert!(UAR_OBJ_KEYS.0 <= key && key <= UAR_OBJ_KEYS.1);
    }

    #[test]
    fn static_and_dynamic_uar_pages() {
        let b = static_plan();
        let t = decode(&vma(pgoff(MMAP_WC_PAGE, 7).unwrap()), &CAPS, &b).unwrap();
        assert_eq!(
            t,
            MmapTarget::Uar {
                sys_page: 7,
                dynamic: false,
                bfreg: 14,
                caching: Caching::WriteCombining
            }
        );
        // Page 8 is past the 8 static pages.
        let e = decode(&vma(pgoff(MMAP_NC_PAGE, 8).unwrap()), &CAPS, &b).unwrap_err();
        assert_eq!(e.errno, Errno::EINVAL);
        // Static commands read only the low byte: 0x108 is page 8 too.
        assert!(decode(&vma(pgoff(MMAP_NC_PAGE, 0x108).unwrap()), &CAPS, &b).is_err());
        let t = decode(&vma(pgoff(MMAP_ALLOC_WC, 0x100).unwrap()), &CAPS, &b).unwrap();
        assert_eq!(
            t,
            MmapTarget::Uar {
                sys_page: 264,
                dynamic: true,
                bfreg: 528,
                caching: Caching::WriteCombining
            }
        );
        assert!(decode(&vma(pgoff(MMAP_ALLOC_WC, 511).unwrap()), &CAPS, &b).is_ok());
        assert!(decode(&vma(pgoff(MMAP_ALLOC_WC, 512).unwrap()), &CAPS, &b).is_err());
        // No write combining: WC commands are EPERM, regular pages still map.
        let nowc = MmapCaps { wc: false, ..CAPS };
        let e = decode(&vma(pgoff(MMAP_WC_PAGE, 0).unwrap()), &nowc, &b).unwrap_err();
        assert_eq!(e.errno, Errno::EPERM);
        assert!(decode(&vma(pgoff(MMAP_REGULAR_PAGE, 0).unwrap()), &nowc, &b).is_ok());
        // Two pages, or a dynamic-UAR library: EINVAL.
        let mut two = vma(0);
        two.len = 8192;
        assert_eq!(decode(&two, &CAPS, &b).unwrap_err().errno, Errno::EINVAL);
        let d = BfregInfo::dynamic(2, 0);
        assert_eq!(decode(&vma(0), &CAPS, &d).unwrap_err().errno, Errno::EINVAL);
    }

    #[test]
    fn uar_object_types() {
        assert_eq!(uar_alloc_type(0, true), Ok(Caching::WriteCombining));
        assert_eq!(uar_alloc_type(1, false), Ok(Caching::Uncached));
        assert_eq!(
            uar_alloc_type(0, false).unwrap_err().errno,
            Errno::EOPNOTSUPP
        );
        assert_eq!(
            uar_alloc_type(2, true).unwrap_err().errno,
            Errno::EOPNOTSUPP
        );
    }

    #[test]
    fn other_commands() {
        let d = BfregInfo::dynamic(2, 0);
        let core = pgoff(MMAP_CORE_CLOCK, 0).unwrap();
        assert_eq!(
            decode(&vma(core), &CAPS, &d).unwrap(),
            MmapTarget::CoreClock
        );
        let mut w = vma(core);
        w.write = true;
        assert_eq!(decode(&w, &CAPS, &d).unwrap_err().errno, Errno::EPERM);
        let big = MmapCaps {
            page_shift: 16,
            ..CAPS
        };
        let mut v = vma(core);
        v.len = 1 << 16;
        assert_eq!(decode(&v, &big, &d).unwrap_err().errno, Errno::EOPNOTSUPP);
        let ci = pgoff(MMAP_CLOCK_INFO, 0).unwrap();
        assert_eq!(
            decode(&vma(ci), &CAPS, &d).unwrap_err().errno,
            Errno::EOPNOTSUPP
        );
        let with_ci = MmapCaps {
            clock_info: true,
            ..CAPS
        };
        assert_eq!(
            decode(&vma(ci), &with_ci, &d).unwrap(),
            MmapTarget::ClockInfo
        );
        let ci1 = pgoff(MMAP_CLOCK_INFO, 1).unwrap();
        assert_eq!(
            decode(&vma(ci1), &with_ci, &d).unwrap_err().errno,
            Errno::EOPNOTSUPP
        );
        let g = pgoff(MMAP_GET_CONTIGUOUS_PAGES, 0).unwrap();
        assert_eq!(decode(&vma(g), &CAPS, &d).unwrap_err().errno, Errno::ENOSYS);
        assert_eq!(
            decode(&vma(pgoff(4, 0).unwrap()), &CAPS, &d)
                .unwrap_err()
                .errno,
            Errno::EINVAL
        );
        let e = pgoff(9, 0x1ff).unwrap();
        assert_eq!(
            decode(&vma(e), &CAPS, &d).unwrap(),
            MmapTarget::Entry {
                key: entry_key(9, 0x1ff)
            }
        );
        assert_eq!(
            decode(&vma(1 << 24), &CAPS, &d).unwrap_err().errno,
            Errno::EINVAL
        );
    }
}
