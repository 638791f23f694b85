// SPDX-License-Identifier: GPL-2.0

//! User contexts on top of the uverbs ABI logic ([`crate::ib::abi`]): what the device
//! and the host offer a context, and which page of BAR 0 an mmap of it maps.
//!
//! Write combining, as upstream `mlx5_ib` decides and maps it:
//! - whether the device is *known* to write-combine ([`WC_SUPPORT`], upstream
//!   `mlx5_wc_support_get`, `core/wc.c`) gates `bf_reg_size` in the alloc_ucontext
//!   response (libmlx5 copies WQEs into BlueFlame registers only when it is not 0), the
//!   WC_PAGE and ALLOC_WC mmaps (`EPERM` without) and UAR objects of type BF
//!   (`EOPNOTSUPP` without: libmlx5 then rings on its NC UAR). Upstream answers no
//!   without cap `bf` or cap `log_max_sq` (its test posts a NOP on an Ethernet SQ
//!   through the BlueFlame register and waits for the CQE), and runs that test only
//!   otherwise. The emulated ConnectX has no SQ (`log_max_sq` 0, an InfiniBand-only
//!   function): upstream answers no there, with `bf_reg_size` 0, and so do we. We run
//!   no such test, so we answer no on every device;
//! - a REGULAR_PAGE mmap is mapped write-combining whatever that answer ("best effort
//!   WC", upstream `uar_mmap`: `pgprot_writecombine`), as is a WC_PAGE or ALLOC_WC one
//!   when it is allowed; NC_PAGE and UAR objects of type NC are mapped uncached.
//!   On x86 PAT grants it because the kernel maps none of those pages itself: only
//!   the init segment and the kernel's own UAR page are ioremapped (`hw.rs`,
//!   `ffi/core/bar.rs`), as upstream (scenario 71 checks what each mapping got).
//!
//! The clock info page (MLX5_IB_MMAP_CLOCK_INFO) is the core's ([`crate::clock`], as
//! upstream maps mlx5_core's `clock_info`, `mlx5_ib_mmap_clock_info_page`): advertised
//! (`clock_info_versions` bit `MLX5_IB_CLOCK_INFO_V1`) and mapped read-only when the
//! core keeps a clock (cap `device_frequency_khz` not 0); otherwise neither, and the
//! mmap is `EOPNOTSUPP`. libmlx5 converts completion timestamps and
//! `ibv_query_rt_values_ex`'s raw clock with it (`mlx5dv_get_clock_info`).
//! DEVX is not served: a DEVX context is refused with `EINVAL` (upstream with
//! `log_max_uctx` 0), and libmlx5 retries without.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::ib::abi::{
    caps::{HostInfo, UctxExtra},
    mmap::{uar_alloc_type, Caching, MmapCaps, MmapTarget, Vma},
    ucontext::{UctxDevCaps, UctxRespCaps},
    Reason, UabiError,
};
use crate::{
    cmd::commands::{gen_cap, GeneralCaps},
    eq::uar::UarGeom,
    ffi::rdma::ib_abi::{MmapMap, MmapReq, UarObj},
    ifc::init_seg::INTERNAL_TIMER_H,
};

/// The device is known to write-combine (upstream `mlx5_wc_support_get`; see the
/// module doc): never, as upstream on a device without an SQ, since we do not run
/// upstream's test.
pub const WC_SUPPORT: bool = false;

/// What the host contributes to a context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UctxHost {
    /// log2 of the host page size.
    pub page_shift: u32,
    /// `cache_line_size()`.
    pub cache_line_size: u32,
    /// Ports of the device.
    pub num_ports: u16,
    /// The core keeps a clock info page.
    pub clock_info: bool,
}

impl UctxHost {
    fn host_info(&self) -> HostInfo {
        HostInfo {
            page_shift: self.page_shift,
            cache_line_size: self.cache_line_size,
            wc: WC_SUPPORT,
            devx: false,
        }
    }

    /// The device side of the request checks (no DEVX).
    pub fn dev_caps(&self, caps: &GeneralCaps) -> UctxDevCaps {
        UctxDevCaps::from_caps(caps, &self.host_info())
    }

    /// The values the response reports. No dump-fill mkey (QUERY_SPECIAL_CONTEXTS is
    /// not read), the clock info page when the core keeps one, no real-time timestamps,
    /// InfiniBand (no minimum inline mode).
    pub fn resp_caps(&self, caps: &GeneralCaps) -> UctxRespCaps {
        let extra = UctxExtra {
            num_ports: self.num_ports,
            clock_info: self.clock_info,
            ..UctxExtra::default()
        };
        UctxRespCaps {
            dump_fill_mkey: None,
            ..UctxRespCaps::from_caps(caps, &self.host_info(), &extra)
        }
    }

    /// What an mmap may map.
    pub fn mmap_caps(&self) -> MmapCaps {
        MmapCaps {
            page_shift: self.page_shift,
            wc: WC_SUPPORT,
            clock_info: self.clock_info,
        }
    }
}

/// A context gets a transport domain when the device has them (cap
/// `log_max_transport_domain`, as upstream).
pub fn wants_transport_domain(caps: &GeneralCaps) -> bool {
    caps.get(gen_cap::LOG_MAX_TRANSPORT_DOMAIN) != 0
}

/// The mapping the shim's VMA asks for.
pub fn vma_of(req: &MmapReq) -> Vma {
    Vma {
        pgoff: req.pgoff,
        len: req.len,
        shared: req.shared != 0,
        write: req.write != 0,
        exec: req.exec != 0,
    }
}

/// The page of BAR 0 that `target` (decoded by [`crate::ib::abi::mmap::decode`]) maps,
/// for a context whose static UAR pages are `uars` (UAR index per page).
///
/// An mmap entry (a UAR object's page) is passed on by its key: the shim looks it up
/// among the context's entries (a key never handed out is `EINVAL` there).
///
/// The clock info page (which `decode` lets through only when the core keeps one) is
/// passed on as `clock_info`: the shim inserts the core's page.
///
/// Errors: a static page the context does not have or a dynamic page (only with write
/// combining, which is absent) → `EINVAL`.
pub fn map_target(target: MmapTarget, uars: &[u32], geom: &UarGeom) -> Result<MmapMap, UabiError> {
    match target {
        MmapTarget::Uar {
            sys_page,
            dynamic: false,
            caching,
            ..
        } => {
            let uar = uars
                .get(sys_page as usize)
                .copied()
                .ok_or(UabiError::inval(Reason::OutOfRange("UAR page index")))?;
            // `decode` lets WC_PAGE through only with WC_SUPPORT; REGULAR_PAGE is
            // write-combining regardless, as upstream's "best effort WC".
            Ok(MmapMap {
                bar_offset: geom.sys_page_offset(uar),
                write_combining: u32::from(caching == Caching::WriteCombining),
                ..Default::default()
            })
        }
        MmapTarget::Uar { dynamic: true, .. } => {
            Err(UabiError::inval(Reason::Unsupported("dynamic UAR pages")))
        }
        MmapTarget::CoreClock => {
            let page = 1u64.checked_shl(geom.page_shift()).unwrap_or(0);
            Ok(MmapMap {
                bar_offset: (INTERNAL_TIMER_H as u64) & !page.wrapping_sub(1),
                read_only: 1,
                ..Default::default()
            })
        }
        MmapTarget::ClockInfo => Ok(MmapMap {
            clock_info: 1,
            read_only: 1,
            ..Default::default()
        }),
        // The shim looks the key up: one never inserted is `EINVAL` there.
        MmapTarget::Entry { key } => Ok(MmapMap {
            entry: 1,
            entry_key: key,
            ..Default::default()
        }),
    }
}

/// A UAR object of `alloc_type` (UAR_OBJ_ALLOC's TYPE) over UAR `uar`: its page in BAR
/// 0 and caching. Blue flame needs write combining, which is absent
/// ([`WC_SUPPORT`]): `EOPNOTSUPP` as upstream without it, and libmlx5 then uses
/// its non-cached UAR; unknown types are `EOPNOTSUPP` too.
pub fn uar_obj(alloc_type: u32, uar: u32, geom: &UarGeom) -> Result<UarObj, UabiError> {
    let caching = uar_alloc_type(alloc_type, WC_SUPPORT)?;
    Ok(UarObj {
        bar_offset: geom.sys_page_offset(uar),
        uar_index: uar,
        write_combining: u32::from(caching == Caching::WriteCombining),
    })
}

/// The UAR objects' checks of the allocation type, before any command: as
/// [`uar_obj`], for a caller that has no UAR yet.
pub fn check_uar_alloc_type(alloc_type: u32) -> Result<(), UabiError> {
    uar_alloc_type(alloc_type, WC_SUPPORT).map(|_| ())
}

/// A UAR object's UAR as the context keeps it: the CQs and QPs that name it (their
/// `uar_page`) and whether the object is gone. The UAR goes back to the device
/// (DEALLOC_UAR) only when both are over: the object destroyed (its last mapping
/// too) and no CQ or QP naming it left, so that a UAR index a queue still names is
/// never handed to another context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UarUse {
    /// UAR index.
    pub uar: u32,
    /// CQs and QPs naming it.
    pub users: u32,
    /// The object (and its mmap entry) is gone.
    pub freed: bool,
}

impl UarUse {
    /// A new object's UAR: no user, not freed.
    pub fn new(uar: u32) -> Self {
        Self {
            uar,
            users: 0,
            freed: false,
        }
    }
}

/// A CQ or QP names `uar`: whether it may (a live object's UAR; one more user).
pub fn uar_hold(list: &mut [UarUse], uar: u32) -> bool {
    match list.iter_mut().find(|e| e.uar == uar && !e.freed) {
        Some(e) => match e.users.checked_add(1) {
            Some(n) => {
                e.users = n;
                true
            }
            None => false,
        },
        None => false,
    }
}

/// A CQ or QP naming `uar` is gone: the index of the entry to remove (and its UAR to
/// deallocate) when that was the last user of a freed object.
pub fn uar_release(list: &mut [UarUse], uar: u32) -> Option<usize> {
    let i = list.iter().position(|e| e.uar == uar && e.users != 0)?;
    let e = list.get_mut(i)?;
    e.users -= 1;
    (e.users == 0 && e.freed).then_some(i)
}

/// What [`uar_free`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UarFreed {
    /// No live object over the UAR.
    Unknown,
    /// A CQ or QP still names it: kept until the last goes.
    Kept,
    /// Remove entry `.0` and deallocate its UAR now.
    Dealloc(usize),
}

/// The object over `uar` is gone.
pub fn uar_free(list: &mut [UarUse], uar: u32) -> UarFreed {
    let Some(e) = list.iter_mut().find(|e| e.uar == uar && !e.freed) else {
        return UarFreed::Unknown;
    };
    e.freed = true;
    if e.users != 0 {
        return UarFreed::Kept;
    }
    match list.iter().position(|e| e.uar == uar) {
        Some(i) => UarFreed::Dealloc(i),
        None => UarFreed::Unknown,
    }
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_uctx))]
mod tests {
    use super::*;
    use crate::errno::Errno;
    use crate::ib::abi::{
        bfreg::BfregInfo,
        consts::{
            CLOCK_INFO_V1, MMAP_ALLOC_WC, MMAP_CLOCK_INFO, MMAP_CORE_CLOCK, MMAP_NC_PAGE,
            MMAP_REGULAR_PAGE, MMAP_WC_PAGE,
        },
        mmap::{decode, pgoff},
    };

    fn req(pgoff: u64, write: bool) -> MmapReq {
        MmapReq {
            pgoff,
            len: 4096,
            shared: 1,
            write: u32::from(write),
            ..MmapReq::default()
        }
    }

    const HOST: UctxHost = UctxHost {
        page_shift: 12,
        cache_line_size: 64,
        num_ports: 1,
        clock_info: false,
    };

    fn map(pgoff: u64, write: bool, b: &BfregInfo, uars: &[u32]) -> Result<MmapMap, UabiError> {
        let t = decode(&vma_of(&req(pgoff, write)), &HOST.mmap_caps(), b)?;
        map_target(t, uars, &geom(12, false))
    }

    /// The geometry of a device that took upstream's choice for pages of
    /// `1 << page_shift` bytes (`uar_4k` when it can and pages are larger).
    fn geom(page_shift: u32, can_uar_4k: bool) -> UarGeom {
        let c = crate::eq::uar::choose(page_shift, can_uar_4k).unwrap();
        let per = if c.uar_4k { 1 << c.log_uar_page_sz } else { 1 };
        UarGeom::new(c.uar_4k, c.log_uar_page_sz, per, page_shift).unwrap()
    }

    #[test]
    fn a_uar_object_stays_allocated_while_a_queue_names_it() {
        let mut l = [UarUse::new(7), UarUse::new(9)];
        // Two CQs on UAR 7, then the object destroyed: kept until both are gone.
        assert!(uar_hold(&mut l, 7) && uar_hold(&mut l, 7));
        assert_eq!(uar_free(&mut l, 7), UarFreed::Kept);
        // A destroyed object's UAR can no longer be named, nor freed again.
        assert!(!uar_hold(&mut l, 7));
        assert_eq!(uar_free(&mut l, 7), UarFreed::Unknown);
        assert_eq!(uar_release(&mut l, 7), None);
        // last user: deallocate
        assert_eq!(uar_release(&mut l, 7), Some(0));
        // No user: the object's free deallocates at once; a release without a hold
        // changes nothing.
        assert_eq!(uar_release(&mut l, 9), None);
        assert_eq!(uar_free(&mut l, 9), UarFreed::Dealloc(1));
        // A UAR that is not an object's.
        assert!(!uar_hold(&mut l, 3));
        assert_eq!(uar_free(&mut l, 3), UarFreed::Unknown);
        // Released while the object lives: the object's free deallocates.
        let mut l = [UarUse::new(4)];
        assert!(uar_hold(&mut l, 4));
        assert_eq!(uar_release(&mut l, 4), None);
        assert_eq!(uar_free(&mut l, 4), UarFreed::Dealloc(0));
    }

    #[test]
    fn uar_pages_map_their_uar_regular_best_effort_wc() {
        let b = BfregInfo::plan_static(2, true, true, 12, 4, 0).unwrap();
        assert_eq!(b.num_static_sys_pages, 2);
        let uars = [5u32, 9];
        // REGULAR: write-combining though WC is not known to work (upstream's "best
        // effort WC"); NC: uncached.
        for (cmd, wc) in [(MMAP_REGULAR_PAGE, 1), (MMAP_NC_PAGE, 0)] {
            let m = map(pgoff(cmd, 1).unwrap(), true, &b, &uars).unwrap();
            assert_eq!(
                m,
                MmapMap {
                    bar_offset: 9 << 12,
                    write_combining: wc,
                    ..Default::default()
                }
            );
        }
        // Past the static pages, or the page table shorter than the plan: EINVAL.
        let e = map(pgoff(MMAP_NC_PAGE, 2).unwrap(), false, &b, &uars).unwrap_err();
        assert_eq!(e.errno, Errno::EINVAL);
        let e = map(pgoff(MMAP_NC_PAGE, 1).unwrap(), false, &b, &uars[..1]).unwrap_err();
        assert_eq!(e.errno, Errno::EINVAL);
        // No write combining: WC pages and dynamic pages are EPERM.
        for cmd in [MMAP_WC_PAGE, MMAP_ALLOC_WC] {
            let e = map(pgoff(cmd, 0).unwrap(), false, &b, &uars).unwrap_err();
            assert_eq!(e.errno, Errno::EPERM);
        }
        // A dynamic-UAR context has no static page.
        let d = BfregInfo::dynamic(2, 0);
        assert_eq!(map(0, false, &d, &[]).unwrap_err().errno, Errno::EINVAL);
    }

    #[test]
    fn core_clock_read_only_others_refused() {
        let d = BfregInfo::dynamic(2, 0);
        let clock = pgoff(MMAP_CORE_CLOCK, 0).unwrap();
        let m = map(clock, false, &d, &[]).unwrap();
        assert_eq!(
            m,
            MmapMap {
                bar_offset: 0x1000,
                read_only: 1,
                ..Default::default()
            }
        );
        assert_eq!(map(clock, true, &d, &[]).unwrap_err().errno, Errno::EPERM);
        // An entry key goes to the shim's lookup (EINVAL there when never inserted);
        // an unknown command is refused here.
        assert_eq!(
            map(pgoff(9, 0x1234 & 0xff).unwrap(), false, &d, &[]).unwrap(),
            MmapMap {
                entry: 1,
                entry_key: 9 << 16 | 0x34,
                ..Default::default()
            }
        );
        assert_eq!(
            map(pgoff(4, 0).unwrap(), false, &d, &[]).unwrap_err().errno,
            Errno::EINVAL
        );
        // No clock kept: the clock info page is refused as upstream without
        // `mdev->clock_info`.
        assert_eq!(
            map(pgoff(7, 0).unwrap(), false, &d, &[]).unwrap_err().errno,
            Errno::EOPNOTSUPP
        );
        let t = MmapTarget::Uar {
            sys_page: 0,
            dynamic: true,
            bfreg: 0,
            caching: Caching::WriteCombining,
        };
        assert_eq!(
            map_target(t, &[1], &geom(12, true)).unwrap_err().errno,
            Errno::EINVAL
        );
    }

    #[test]
    fn the_clock_info_page_maps_read_only_when_the_core_keeps_one() {
        let host = UctxHost {
            clock_info: true,
            ..HOST
        };
        let d = BfregInfo::dynamic(2, 0);
        let ci = pgoff(MMAP_CLOCK_INFO, CLOCK_INFO_V1).unwrap();
        let m = map_target(
            decode(&vma_of(&req(ci, false)), &host.mmap_caps(), &d).unwrap(),
            &[],
            &geom(12, false),
        )
        .unwrap();
        assert_eq!(
            m,
            MmapMap {
                clock_info: 1,
                read_only: 1,
                ..Default::default()
            }
        );
        // upstream `mlx5_ib_mmap_clock_info_page`: writable → EPERM, another version
        // → EOPNOTSUPP.
        let e = decode(&vma_of(&req(ci, true)), &host.mmap_caps(), &d).unwrap_err();
        assert_eq!(e.errno, Errno::EPERM);
        let v2 = pgoff(MMAP_CLOCK_INFO, CLOCK_INFO_V1 + 1).unwrap();
        let e = decode(&vma_of(&req(v2, false)), &host.mmap_caps(), &d).unwrap_err();
        assert_eq!(e.errno, Errno::EOPNOTSUPP);
        // The response advertises version 1 only with the page.
        let caps = GeneralCaps::from_bytes(&[0; crate::ifc::caps::cmd_hca_cap::BYTES]).unwrap();
        assert!(host.resp_caps(&caps).clock_info);
        assert!(!HOST.resp_caps(&caps).clock_info);
    }

    #[test]
    fn uar_pages_map_the_system_page_of_their_uar() {
        let t = |sys_page| MmapTarget::Uar {
            sys_page,
            dynamic: false,
            bfreg: 0,
            caching: Caching::Uncached,
        };
        let uars = [8u32, 17, 48];
        let at = |g: &UarGeom, i| map_target(t(i), &uars, g).unwrap().bar_offset;
        // 4 KiB pages: the UAR's own page.
        assert_eq!(at(&geom(12, true), 1), 17 << 12);
        // 16 KiB pages with 4 KiB UARs: UAR 17 lies in the fifth page (bytes 64..80 KiB).
        assert_eq!(at(&geom(14, true), 1), 4 << 14);
        // 16 KiB UAR pages (no uar_4k): the index counts them.
        assert_eq!(at(&geom(14, false), 1), 17 << 14);
        // 64 KiB pages with 4 KiB UARs: UAR 48 is the first of the fourth page.
        assert_eq!(at(&geom(16, true), 2), 3 << 16);
        assert_eq!(at(&geom(16, false), 2), 48 << 16);
    }

    #[test]
    fn uar_objects_are_non_cached_without_write_combining() {
        use crate::ib::abi::consts::{IB_UAPI_UAR_ALLOC_TYPE_BF, IB_UAPI_UAR_ALLOC_TYPE_NC};
        assert_eq!(
            uar_obj(IB_UAPI_UAR_ALLOC_TYPE_NC, 7, &geom(12, true)).unwrap(),
            UarObj {
                bar_offset: 7 << 12,
                uar_index: 7,
                write_combining: 0
            }
        );
        // 64 KiB host pages, 4 KiB UARs: the object maps the host page holding it.
        let obj = |uar, g: &UarGeom| uar_obj(IB_UAPI_UAR_ALLOC_TYPE_NC, uar, g).unwrap();
        assert_eq!(obj(32, &geom(16, true)).bar_offset, 2 << 16);
        assert_eq!(obj(32, &geom(14, true)).bar_offset, 8 << 14);
        // UAR pages of the system page size: the index counts them.
        assert_eq!(obj(2, &geom(16, false)).bar_offset, 2 << 16);
        // Blue flame needs write combining; unknown types are refused too.
        for t in [IB_UAPI_UAR_ALLOC_TYPE_BF, 2, u32::MAX] {
            assert_eq!(
                uar_obj(t, 7, &geom(12, true)).unwrap_err().errno,
                Errno::EOPNOTSUPP
            );
            assert_eq!(
                check_uar_alloc_type(t).unwrap_err().errno,
                Errno::EOPNOTSUPP
            );
        }
        assert!(check_uar_alloc_type(IB_UAPI_UAR_ALLOC_TYPE_NC).is_ok());
    }

    #[test]
    fn caps_without_wc_devx_or_dump_fill() {
        let mut g = GeneralCaps::from_bytes(&[0u8; 256]).unwrap();
        g.set(gen_cap::LOG_MAX_UCTX, 4).unwrap();
        g.set(gen_cap::DUMP_FILL_MKEY, true).unwrap();
        g.set(gen_cap::LOG_BF_REG_SIZE, 9).unwrap();
        assert!(!HOST.dev_caps(&g).devx);
        let r = HOST.resp_caps(&g);
        assert_eq!((r.wc, r.dump_fill_mkey, r.num_ports), (false, None, 1));
        assert!(!wants_transport_domain(&g));
        g.set(gen_cap::LOG_MAX_TRANSPORT_DOMAIN, 12).unwrap();
        assert!(wants_transport_domain(&g));
    }
}
