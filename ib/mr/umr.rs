// SPDX-License-Identifier: GPL-2.0

//! The MR cache's UMR work requests (upstream `umr.c`), built from the `ifc::umr`
//! layouts: what follows the generic control segment of a WQE with opcode
//! `MLX5_OPCODE_UMR` whose `imm` is the mkey ([`UmrWqe`], upstream
//! `struct mlx5r_umr_wqe`: the UMR control segment, the mkey segment and, when the
//! translation entries come from host memory, a data segment).
//!
//! - [`enable`]: a free cache mkey becomes a user MR in one WQE
//!   (`mlx5r_umr_update_mr_pas(mr, MLX5_IB_UPD_XLT_ENABLE, pdn)`): "fail if not free",
//!   the whole MTT table at offset 0 through a data segment read with the UMR PD's
//!   lkey, then key byte, free = 0, rights, PD, address, length, page size.
//! - [`revoke`]: the MR goes back to the cache (`mlx5r_umr_revoke_mr`): free, the UMR
//!   PD, inline (no translation).
//! - [`rereg_pd_access`]: new PD and rights in place, the key kept
//!   (`mlx5r_umr_rereg_pd_access`): "fail if free", inline.
//!
//! The mkey segment is written through the `mkc` field definitions (upstream writes it
//! with `MLX5_SET(mkc, ...)`). Which optional mask bits a device accepts comes from
//! its caps ([`UmrCaps`], upstream `get_umr_update_access_mask`,
//! `get_umr_update_translation_mask`, `umr_check_mkey_mask`).
//!
//! Pure `core` code, compiled into the kernel module (the MR cache of `ib/mr/mod.rs`
//! posts these on the UMR QP of `ffi/rdma/ib_umr.c`) and into the host test crate.

use zerocopy::byteorder::big_endian::{U16, U32, U64};
use zerocopy::IntoBytes;

use crate::ib::mr::commands::{set_access, MkeyAccess, ANY_QPN};
use crate::{
    errno::Errno,
    ifc::{
        field::{MsgMut, Overflow},
        mkey::mkc,
        umr::{vals, MkeySeg, UmrCtrlSeg},
        wqe::WqeDataSeg,
    },
};

/// Translation-table bytes are sent in units of [`vals::UMR_FLEX_ALIGNMENT`]
/// (upstream `mlx5r_umr_get_xlt_octo`, `MLX5_IB_UMR_XLT_ALIGNMENT`): the octowords
/// that `bytes` occupies, rounded up to that unit.
pub fn xlt_octo(bytes: u64) -> u64 {
    bytes.next_multiple_of(vals::UMR_FLEX_ALIGNMENT as u64) / vals::UMR_OCTOWORD as u64
}

/// `translations_octword_size` of a cache mkey of `ndescs` MTT entries (upstream
/// `get_mkc_octo_size` for `MLX5_MKC_ACCESS_MODE_MTT`: two entries per octoword).
pub fn mkc_octo_size(ndescs: u32) -> u32 {
    ndescs.div_ceil((vals::UMR_OCTOWORD / core::mem::size_of::<u64>()) as u32)
}

/// What the device lets a UMR change, from its caps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UmrCaps {
    /// Cap `atomic` and not `umr_modify_atomic_disabled`: the `a` bit is in the access
    /// mask (upstream adds it on `atomic` and refuses the WQE with `EPERM` when
    /// `umr_modify_atomic_disabled` is set; here the bit is left out instead and the
    /// caller must not hand out remote atomics through UMR then).
    pub atomic: bool,
    /// Cap `relaxed_ordering_write_umr`.
    pub ro_write_umr: bool,
    /// Cap `relaxed_ordering_read_umr`.
    pub ro_read_umr: bool,
    /// Cap `umr_log_entity_size_5` (cmd_hca_cap_2): bit 5 of `log_page_size` is in the
    /// translation mask.
    pub log_entity_size_5: bool,
}

/// `get_umr_update_access_mask`.
pub fn access_mask(c: &UmrCaps) -> u64 {
    let mut m = vals::MKEY_MASK_LR | vals::MKEY_MASK_LW | vals::MKEY_MASK_RR | vals::MKEY_MASK_RW;
    if c.atomic {
        m |= vals::MKEY_MASK_A;
    }
    if c.ro_write_umr {
        m |= vals::MKEY_MASK_RELAXED_ORDERING_WRITE;
    }
    if c.ro_read_umr {
        m |= vals::MKEY_MASK_RELAXED_ORDERING_READ;
    }
    m
}

/// `get_umr_update_translation_mask`.
pub fn translation_mask(c: &UmrCaps) -> u64 {
    let mut m = vals::MKEY_MASK_LEN | vals::MKEY_MASK_PAGE_SIZE | vals::MKEY_MASK_START_ADDR;
    if c.log_entity_size_5 {
        m |= vals::MKEY_MASK_PAGE_SIZE_5;
    }
    m
}

/// Whether the rights `a` can be given by UMR on a device with caps `c`: a remote
/// atomic needs the `a` bit in the mask (upstream `mlx5r_umr_can_reconfig` /
/// `umr_check_mkey_mask`); relaxed ordering without its UMR cap is dropped as the
/// mask leaves it out (upstream `get_unchangeable_access_flags` keeps such MRs out of
/// the cache instead).
pub fn rights_fit(a: &MkeyAccess, c: &UmrCaps) -> bool {
    (!a.a || c.atomic) && (!a.ro_write || c.ro_write_umr) && (!a.ro_read || c.ro_read_umr)
}

/// One MR-cache UMR WQE after its generic control segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UmrWqe {
    /// The UMR control segment.
    pub ctrl: UmrCtrlSeg,
    /// The mkey segment.
    pub mkey: MkeySeg,
    /// The data segment pointing to the translation entries (`None`: inline WQE
    /// without entries).
    pub data: Option<WqeDataSeg>,
}

impl UmrWqe {
    /// Bytes after the generic control segment: 112, or 128 with the data segment.
    pub fn size(&self) -> usize {
        core::mem::size_of::<UmrCtrlSeg>()
            + core::mem::size_of::<MkeySeg>()
            + self.data.map_or(0, |_| core::mem::size_of::<WqeDataSeg>())
    }

    /// Writes the segments into `out` (at least [`UmrWqe::size`] bytes); `None` if it
    /// is too short.
    pub fn write(&self, out: &mut [u8]) -> Option<usize> {
        let n = self.size();
        let out = out.get_mut(..n)?;
        let (c, rest) = out.split_at_mut(core::mem::size_of::<UmrCtrlSeg>());
        c.copy_from_slice(self.ctrl.as_bytes());
        let (m, rest) = rest.split_at_mut(core::mem::size_of::<MkeySeg>());
        m.copy_from_slice(self.mkey.as_bytes());
        if let Some(d) = &self.data {
            rest.copy_from_slice(d.as_bytes());
        }
        Some(n)
    }
}

/// The mkey segment of `key` in PD `pdn`, usable by any QP, with the fields `f` sets.
fn mkey_seg(
    key: u32,
    pdn: u32,
    f: impl FnOnce(&mut MsgMut<'_, mkc::Layout>) -> Result<(), Overflow>,
) -> Result<MkeySeg, Errno> {
    let mut b = [0u8; 64];
    let mut s = MsgMut::<mkc::Layout>::of_array(&mut b);
    f(&mut s)
        .and_then(|()| s.put(mkc::PD, pdn))
        .and_then(|()| s.put(mkc::QPN, ANY_QPN))
        .and_then(|()| s.put(mkc::MKEY_7_0, variant(key)))
        .map_err(|_| Errno::EINVAL)?;
    Ok(zerocopy::transmute!(b))
}

/// An inline WQE (no translation entries): UMR control `flags` (with `UMR_INLINE`),
/// `mask` the mkey fields it applies from `mkey`.
fn inline(flags: u8, mask: u64, mkey: MkeySeg) -> UmrWqe {
    let ctrl = UmrCtrlSeg {
        flags: vals::UMR_INLINE | flags,
        mkey_mask: U64::new(mask),
        ..Default::default()
    };
    UmrWqe {
        ctrl,
        mkey,
        data: None,
    }
}

/// The translation of an [`enable`]: `entries` MTT entries of `page_shift` at DMA
/// address `addr` in a buffer of at least their bytes rounded up to
/// [`vals::UMR_FLEX_ALIGNMENT`] (the tail zeroed), read with `lkey`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Xlt {
    /// DMA address of the entries.
    pub addr: u64,
    /// The UMR PD's local DMA lkey.
    pub lkey: u32,
    /// Number of 8-byte MTT entries.
    pub entries: u32,
    /// Log2 of the bytes each entry maps.
    pub page_shift: u8,
}

impl Xlt {
    /// Bytes the device reads: the entries rounded up to 64 (upstream `sg.length`).
    pub fn bytes(&self) -> u64 {
        (u64::from(self.entries) * 8).next_multiple_of(vals::UMR_FLEX_ALIGNMENT as u64)
    }
}

/// The key byte of mkey `key` (upstream `mlx5_mkey_variant`).
fn variant(key: u32) -> u8 {
    (key & 0xff) as u8
}

/// Enables free cache mkey `key` as an MR of PD `pdn` with rights `a` over `len`
/// bytes at `iova`, its whole translation `xlt` in one WQE at offset 0 (upstream
/// `_mlx5r_umr_update_mr_pas` with `MLX5_IB_UPD_XLT_ENABLE` when the table fits one
/// buffer). A zero `len` sets `length64` as upstream does.
///
/// # Errors
///
/// `EINVAL` when the rights need a mask bit the device refuses ([`rights_fit`]), the
/// page shift does not fit the mask (bit 5 without `log_entity_size_5`), the table is
/// more octowords than a UMR carries (16 bits) or a value does not fit its field.
pub fn enable(
    key: u32,
    pdn: u32,
    a: &MkeyAccess,
    iova: u64,
    len: u64,
    xlt: &Xlt,
    c: &UmrCaps,
) -> Result<UmrWqe, Errno> {
    if !rights_fit(a, c) || (xlt.page_shift >= 32 && !c.log_entity_size_5) {
        return Err(Errno::EINVAL);
    }
    let bytes = xlt.bytes();
    let octs = u16::try_from(xlt_octo(bytes)).map_err(|_| Errno::EINVAL)?;
    let ctrl = UmrCtrlSeg {
        // "fail if not free"; the offset (0) is valid.
        flags: vals::UMR_CHECK_NOT_FREE | vals::UMR_TRANSLATION_OFFSET_EN,
        xlt_octowords: U16::new(octs),
        mkey_mask: U64::new(
            vals::MKEY_MASK_KEY
                | vals::MKEY_MASK_FREE
                | access_mask(c)
                | vals::MKEY_MASK_PD
                | translation_mask(c),
        ),
        ..Default::default()
    };
    let mkey = mkey_seg(key, pdn, |s| {
        set_access(s, a)?;
        s.put(mkc::START_ADDR, iova)?;
        s.put(mkc::LEN, len)?;
        if len == 0 {
            s.set(mkc::LENGTH64, true)?;
        }
        s.put(mkc::LOG_PAGE_SIZE, xlt.page_shift)
    })?;
    let data = WqeDataSeg {
        byte_count: U32::new(u32::try_from(bytes).map_err(|_| Errno::EINVAL)?),
        lkey: U32::new(xlt.lkey),
        addr: U64::new(xlt.addr),
    };
    Ok(UmrWqe {
        ctrl,
        mkey,
        data: Some(data),
    })
}

/// Revokes MR `key` back to the cache: free, in the UMR PD `umr_pdn` (upstream
/// `mlx5r_umr_revoke_mr`). Once it completed, no access through the key reaches the
/// MR's pages and DMA through it has finished.
pub fn revoke(key: u32, umr_pdn: u32) -> Result<UmrWqe, Errno> {
    let mkey = mkey_seg(key, umr_pdn, |s| s.set(mkc::FREE, true))?;
    Ok(inline(0, vals::MKEY_MASK_PD | vals::MKEY_MASK_FREE, mkey))
}

/// New PD `pdn` and rights `a` for live MR `key`, in place: the key stays (upstream
/// `mlx5r_umr_rereg_pd_access`, "fail if free").
///
/// # Errors
///
/// `EINVAL` when the rights need a mask bit the device refuses ([`rights_fit`]; upstream
/// then re-creates the MR) or a value does not fit its field.
pub fn rereg_pd_access(key: u32, pdn: u32, a: &MkeyAccess, c: &UmrCaps) -> Result<UmrWqe, Errno> {
    if !rights_fit(a, c) {
        return Err(Errno::EINVAL);
    }
    let mkey = mkey_seg(key, pdn, |s| set_access(s, a))?;
    Ok(inline(
        vals::UMR_CHECK_FREE,
        access_mask(c) | vals::MKEY_MASK_PD,
        mkey,
    ))
}

/// The cache bucket of an MR of `ndescs` translation entries: the entries of the cache
/// mkey it is served from, the next power of two of at least 8 (one 64-byte UMR
/// unit, which the device's table is kept in anyway). Upstream's pools
/// (`drivers/infiniband/core/frmr_pools.c`, `compare_keys`) serve an MR from a pool
/// whose entry count is at least the MR's and less than twice it; power-of-two
/// buckets (the classic `mkey_cache` orders) are within that bound from 8 entries up,
/// and below 8 share the one-unit bucket. `None` above `1 << max_order` entries
/// (upstream `mkey_max_umr_order`): such MRs are not cached.
pub fn bucket(ndescs: u64, max_order: u32) -> Option<u32> {
    let n = ndescs.max(8).checked_next_power_of_two()?;
    if n.trailing_zeros() > max_order {
        return None;
    }
    u32::try_from(n).ok()
}
