// SPDX-License-Identifier: GPL-2.0

//! Memory-region commands and their pure logic (upstream `mlx5_ib` `mr.c`): the IB
//! access flags as mkey context bits (`set_mkc_access_pd_addr_fields`), the checks of
//! reg_user_mr / rereg_user_mr that are the driver's (the RDMA core already refused
//! unknown access bits and a start/IOVA page-offset mismatch), the translation size
//! (`get_octo_len`), lkey/rkey (`mkey_index << 8 | variant`), and CREATE_MKEY for a
//! DMA MR (PA, `length64`) and for a user MR (MTT, translation table inline in the
//! command: `reg_create` with `populate`), DESTROY_MKEY.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use core::cell::RefCell;

use crate::ib::abi::{
    error::{Reason, UabiError},
    layout::AllocMw,
    udata,
};
use crate::ib::umem::plan::access;
use crate::{
    cmd::command::{CodecError, Command},
    errno::Errno,
    ifc::{
        cmds::mbox_out,
        field::{Msg, MsgMut, Overflow},
        mkey::{create_mkey_in, create_mkey_out, destroy_mkey_in, mkc},
        opcodes::Opcode,
    },
};

/// `MLX5_MKC_ACCESS_MODE_PA`.
pub const ACCESS_MODE_PA: u8 = 0;
/// `MLX5_MKC_ACCESS_MODE_MTT`.
pub const ACCESS_MODE_MTT: u8 = 1;
/// `MLX5_MKC_ACCESS_MODE_KLMS`.
pub const ACCESS_MODE_KLM: u8 = 2;
/// `IB_MW_TYPE_1` (`enum ib_mw_type`).
pub const MW_TYPE_1: u32 = 1;
/// `IB_MW_TYPE_2`.
pub const MW_TYPE_2: u32 = 2;
/// MTT entry bits with cap `pg` (`MLX5_IB_MTT_PRESENT` = read | write).
pub const MTT_PRESENT: u64 = 3;
/// `qpn` of an mkey usable by any QP.
pub const ANY_QPN: u32 = 0xff_ffff;

/// `IB_MR_REREG_TRANS`.
pub const REREG_TRANS: u32 = 1 << 0;
/// `IB_MR_REREG_PD`.
pub const REREG_PD: u32 = 1 << 1;
/// `IB_MR_REREG_ACCESS`.
pub const REREG_ACCESS: u32 = 1 << 2;

/// What the mkey context's access part depends on in the caps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MrCaps {
    /// Cap `relaxed_ordering_write`.
    pub relaxed_write: bool,
    /// Cap `relaxed_ordering_read` (upstream also accepts
    /// `relaxed_ordering_read_pci_enabled` when the PCIe path allows it; we do not
    /// read the PCIe setting and leave that case out).
    pub relaxed_read: bool,
    /// Cap `ats` (`ma_translation_mode` of a DMA MR).
    pub ats: bool,
    /// Cap `pg`: the MTT entries carry access bits (`pg_access`).
    pub pg: bool,
}

/// The access bits of an mkey context.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MkeyAccess {
    /// `a`: remote atomic.
    pub a: bool,
    /// `rw`: remote write.
    pub rw: bool,
    /// `rr`: remote read.
    pub rr: bool,
    /// `lw`: local write (`lr` is always set).
    pub lw: bool,
    /// `relaxed_ordering_write`.
    pub ro_write: bool,
    /// `relaxed_ordering_read`.
    pub ro_read: bool,
}

/// The mkey access bits of IB access flags `acc` (upstream
/// `set_mkc_access_pd_addr_fields`): relaxed ordering only where the caps have it.
pub fn mkey_access(acc: u32, caps: &MrCaps) -> MkeyAccess {
    let ro = acc & access::RELAXED_ORDERING != 0;
    MkeyAccess {
        a: acc & access::REMOTE_ATOMIC != 0,
        rw: acc & access::REMOTE_WRITE != 0,
        rr: acc & access::REMOTE_READ != 0,
        lw: acc & access::LOCAL_WRITE != 0,
        ro_write: ro && caps.relaxed_write,
        ro_read: ro && caps.relaxed_read,
    }
}

/// Why the driver refuses a memory-region request (its errno as upstream's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MrError {
    /// ON_DEMAND (no ODP here), a DMA handle, or rereg flags beyond TRANS/PD/ACCESS:
    /// `EOPNOTSUPP`.
    NotSupported,
    /// Zero length, a range that wraps, or a translation too large: `EINVAL`.
    Invalid,
    /// rereg of access to a writable one without new translation over pages pinned
    /// read-only (`ib_umem_check_rereg`): `EACCES`.
    NotWritable,
}

impl MrError {
    /// The errno the verb returns.
    pub const fn errno(self) -> Errno {
        match self {
            Self::NotSupported => Errno::EOPNOTSUPP,
            Self::Invalid => Errno::EINVAL,
            Self::NotWritable => Errno::EACCES,
        }
    }
}

/// reg_user_mr's own checks (upstream `mlx5_ib_reg_user_mr`; the pinning checks the
/// range again).
pub fn check_reg(start: u64, len: u64, acc: u32) -> Result<(), MrError> {
    if acc & access::ON_DEMAND != 0 {
        // Upstream: create_user_odp_mr fails without ODP caps.
        return Err(MrError::NotSupported);
    }
    if len == 0 || start.checked_add(len).is_none() {
        return Err(MrError::Invalid);
    }
    Ok(())
}

/// The whole of a rereg_user_mr request, after the flags' defaults were applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rereg {
    /// Register a new range (`IB_MR_REREG_TRANS`).
    pub trans: bool,
    /// The access flags the new MR gets.
    pub access: u32,
}

/// rereg_user_mr's checks (upstream `mlx5_ib_rereg_user_mr`, `ib_umem_check_rereg`):
/// `old_access` of the MR, `writable` whether its pages are pinned writable.
pub fn check_rereg(
    flags: u32,
    new_access: u32,
    old_access: u32,
    writable: bool,
) -> Result<Rereg, MrError> {
    if flags & !(REREG_TRANS | REREG_PD | REREG_ACCESS) != 0 {
        return Err(MrError::NotSupported);
    }
    let trans = flags & REREG_TRANS != 0;
    if flags & REREG_ACCESS != 0 && !trans && access_writable(new_access) && !writable {
        return Err(MrError::NotWritable);
    }
    let access = if flags & REREG_ACCESS != 0 {
        new_access
    } else {
        old_access
    };
    if access & access::ON_DEMAND != 0 {
        return Err(MrError::NotSupported);
    }
    Ok(Rereg { trans, access })
}

/// Whether access flags pin writable (`ib_access_writable`).
pub fn access_writable(acc: u32) -> bool {
    acc & (access::LOCAL_WRITE | access::REMOTE_WRITE | access::REMOTE_ATOMIC | access::MW_BIND)
        != 0
}

/// Translation octwords (two 8-byte entries each) of `[iova, iova + len)` in pages
/// of `2^page_shift` (upstream `get_octo_len`); `None` when it does not fit 32 bits.
pub fn octo_len(iova: u64, len: u64, page_shift: u32) -> Option<u32> {
    if page_shift >= 64 {
        return None;
    }
    let ps = 1u64 << page_shift;
    let off = iova & (ps - 1);
    let pages = len.checked_add(off)?.checked_add(ps - 1)? >> page_shift;
    u32::try_from(pages.div_ceil(2)).ok()
}

/// lkey / rkey of mkey `index` with variant `key` (upstream `mlx5_idx_to_mkey` |
/// `mkey_7_0`).
pub fn mkey_of(index: u32, key: u8) -> u32 {
    ((index & 0xff_ffff) << 8) | u32::from(key)
}

/// A source of translation entries: DMA addresses of the blocks, in order.
pub trait BlockSource {
    /// Writes the next addresses into `out`; how many (fewer only at the end).
    fn fill(&mut self, out: &mut [u64]) -> usize;
}

/// Addresses from a slice (tests, small tables).
pub struct SliceBlocks<'a>(pub &'a [u64]);

impl BlockSource for SliceBlocks<'_> {
    fn fill(&mut self, out: &mut [u64]) -> usize {
        let n = out.len().min(self.0.len());
        let (head, tail) = self.0.split_at(n);
        out[..n].copy_from_slice(head);
        self.0 = tail;
        n
    }
}

/// The access bits `a` into an mkey context, `lr` always set (upstream
/// `set_mkc_access_pd_addr_fields`; `mlx5r_umr_set_access_flags` for a UMR's mkey
/// segment, which has the context's layout).
pub(crate) fn set_access(c: &mut MsgMut<'_, mkc::Layout>, a: &MkeyAccess) -> Result<(), Overflow> {
    c.set(mkc::A, a.a)?;
    c.set(mkc::RW, a.rw)?;
    c.set(mkc::RR, a.rr)?;
    c.set(mkc::LW, a.lw)?;
    c.set(mkc::LR, true)?;
    c.set(mkc::RELAXED_ORDERING_WRITE, a.ro_write)?;
    c.set(mkc::RELAXED_ORDERING_READ, a.ro_read)
}

/// The mkey context of CREATE_MKEY `i` with what every mkey here has: access bits `a`,
/// PD `pdn`, any QP, key variant `key` (upstream `set_mkc_access_pd_addr_fields`,
/// `assign_mkey_variant`).
fn mkc_of<'b>(
    i: &'b mut MsgMut<'_, create_mkey_in::Layout>,
    a: &MkeyAccess,
    pdn: u32,
    key: u8,
) -> Result<MsgMut<'b, mkc::Layout>, CodecError> {
    let mut c = i
        .nested::<mkc::Layout>(create_mkey_in::MEMORY_KEY_MKEY_ENTRY)
        .ok_or(CodecError::Short)?;
    set_access(&mut c, a)?;
    c.set(mkc::PD, pdn)?;
    c.set(mkc::QPN, ANY_QPN)?;
    c.set(mkc::MKEY_7_0, key)?;
    Ok(c)
}

/// CREATE_MKEY of a DMA MR (upstream `mlx5_ib_get_dma_mr`): PA mode, `length64`,
/// start 0, relaxed ordering where the caps allow. Replies the mkey index.
#[derive(Clone, Copy, Debug)]
pub struct CreateDmaMkey {
    /// The PD.
    pub pdn: u32,
    /// Access bits (from the flags with RELAXED_ORDERING added, as upstream).
    pub access: MkeyAccess,
    /// `mkey_7_0`.
    pub key: u8,
    /// Cap `ats`.
    pub ats: bool,
}

impl Command for CreateDmaMkey {
    const OPCODE: Opcode = Opcode::CREATE_MKEY;
    type In = create_mkey_in::Layout;
    type Out = create_mkey_out::Layout;
    type Reply = u32;

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        let mut c = mkc_of(i, &self.access, self.pdn, self.key)?;
        c.set(mkc::ACCESS_MODE_1_0, ACCESS_MODE_PA)?;
        c.set(mkc::LENGTH64, true)?;
        c.set(mkc::MA_TRANSLATION_MODE, u8::from(self.ats))?;
        Ok(())
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u32, CodecError> {
        Ok(o.get(create_mkey_out::MKEY_INDEX))
    }
}

/// The translation a free mkey ([`CreateFreeMkey`]) is made for: what a UMR WQE
/// fills in later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreeXlt {
    /// MTT entries (`MLX5_MKC_ACCESS_MODE_MTT`) of pages of `1 << page_shift`;
    /// `ats`: cap `ats` (`ma_translation_mode`, which upstream sets for PA and MTT
    /// modes only).
    Mtt {
        /// log2 of the page size.
        page_shift: u8,
        /// Cap `ats`.
        ats: bool,
    },
    /// KLM entries of a memory window (`MLX5_MKC_ACCESS_MODE_KLMS`); `en_rinval` for
    /// a type 2 window (a send with invalidate may free it).
    Klm {
        /// A type 2 window.
        en_rinval: bool,
    },
}

/// CREATE_MKEY of a free mkey with `umr_en` and room for `ndescs` translation entries
/// (`translations_octword_size`), in PD `pdn`, usable by any QP:
/// - [`FreeXlt::Mtt`]: a fast-registration MR or an MR-cache mkey (upstream
///   `mlx5_set_umr_free_mkey`, `mlx5r_create_mkeys`), with the access bits upstream
///   gives it; an `IB_WR_REG_MR` or the cache's UMR later gives it a translation and
///   its access;
/// - [`FreeXlt::Klm`]: a memory window (upstream `mlx5_ib_alloc_mw`), local read only
///   (`access` all clear); a bind (a UMR WQE libmlx5 posts) gives it a range, rights
///   and one KLM entry.
///
/// Replies the mkey index.
#[derive(Clone, Copy, Debug)]
pub struct CreateFreeMkey {
    /// The PD.
    pub pdn: u32,
    /// Access bits (`lr` is always set).
    pub access: MkeyAccess,
    /// `mkey_7_0`.
    pub key: u8,
    /// Translation entries (upstream writes the count as `translations_octword_size`).
    pub ndescs: u32,
    /// The translation's kind.
    pub xlt: FreeXlt,
}

impl Command for CreateFreeMkey {
    const OPCODE: Opcode = Opcode::CREATE_MKEY;
    type In = create_mkey_in::Layout;
    type Out = create_mkey_out::Layout;
    type Reply = u32;

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        let mut c = mkc_of(i, &self.access, self.pdn, self.key)?;
        c.set(mkc::FREE, true)?;
        c.set(mkc::TRANSLATIONS_OCTWORD_SIZE, self.ndescs)?;
        c.set(mkc::UMR_EN, true)?;
        match self.xlt {
            FreeXlt::Mtt { page_shift, ats } => {
                c.set(mkc::ACCESS_MODE_1_0, ACCESS_MODE_MTT)?;
                c.set(mkc::LOG_PAGE_SIZE, page_shift)?;
                c.set(mkc::MA_TRANSLATION_MODE, u8::from(ats))?;
            }
            FreeXlt::Klm { en_rinval } => {
                c.set(mkc::ACCESS_MODE_1_0, ACCESS_MODE_KLM)?;
                c.set(mkc::EN_RINVAL, en_rinval)?;
            }
        }
        Ok(())
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u32, CodecError> {
        Ok(o.get(create_mkey_out::MKEY_INDEX))
    }
}

/// CREATE_MKEY of a user MR with its translation table inline (upstream
/// `reg_create` with `populate`): MTT mode, `umr_en`, start = IOVA, the length,
/// `log_page_size`, `nblocks` entries (rounded up to octwords), with the present
/// bits when cap `pg`. Replies the mkey index.
pub struct CreateMttMkey<'a, B: BlockSource> {
    /// The PD.
    pub pdn: u32,
    /// Access bits.
    pub access: MkeyAccess,
    /// `mkey_7_0`.
    pub key: u8,
    /// IOVA of the first byte.
    pub iova: u64,
    /// Bytes.
    pub len: u64,
    /// log2 of the block size.
    pub page_shift: u8,
    /// Blocks in the table (`ib_umem_num_dma_blocks`, = 2 × octwords or one less).
    pub nblocks: u64,
    /// Cap `pg`.
    pub pg: bool,
    /// The blocks' DMA addresses.
    pub blocks: RefCell<&'a mut B>,
}

impl<B: BlockSource> CreateMttMkey<'_, B> {
    fn octwords(&self) -> Result<u32, CodecError> {
        let o = octo_len(self.iova, self.len, u32::from(self.page_shift))
            .ok_or(CodecError::Overflow(mkc::TRANSLATIONS_OCTWORD_SIZE.raw()))?;
        // The table holds exactly the blocks the range spans.
        if u64::from(o) != self.nblocks.div_ceil(2) {
            return Err(CodecError::Short);
        }
        Ok(o)
    }
}

impl<B: BlockSource> Command for CreateMttMkey<'_, B> {
    const OPCODE: Opcode = Opcode::CREATE_MKEY;
    type In = create_mkey_in::Layout;
    type Out = create_mkey_out::Layout;
    type Reply = u32;

    fn in_len(&self) -> usize {
        let entries =
            usize::try_from(self.nblocks.div_ceil(2).saturating_mul(2)).unwrap_or(usize::MAX);
        create_mkey_in::BYTES.saturating_add(entries.saturating_mul(8))
    }

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        let octwords = self.octwords()?;
        i.set(create_mkey_in::PG_ACCESS, self.pg)?;
        i.set(create_mkey_in::TRANSLATIONS_OCTWORD_ACTUAL_SIZE, octwords)?;
        {
            let mut c = mkc_of(i, &self.access, self.pdn, self.key)?;
            c.set(mkc::ACCESS_MODE_1_0, ACCESS_MODE_MTT)?;
            c.set(mkc::UMR_EN, true)?;
            c.set(mkc::START_ADDR, self.iova)?;
            c.set(mkc::LEN, self.len)?;
            c.set(mkc::TRANSLATIONS_OCTWORD_SIZE, octwords)?;
            c.set(mkc::LOG_PAGE_SIZE, self.page_shift)?;
        }
        let bits = if self.pg { MTT_PRESENT } else { 0 };
        let n = usize::try_from(self.nblocks).map_err(|_| CodecError::Short)?;
        let dst = i.bytes_mut(create_mkey_in::KLM_PAS_MTT);
        let dst = dst
            .get_mut(..n.checked_mul(8).ok_or(CodecError::Short)?)
            .ok_or(CodecError::Short)?;
        let mut src = self
            .blocks
            .try_borrow_mut()
            .map_err(|_| CodecError::Short)?;
        let mut chunk = [0u64; 64];
        for out in dst.chunks_mut(chunk.len() * 8) {
            let want = out.len() / 8;
            let got = src.fill(&mut chunk[..want]);
            if got != want {
                return Err(CodecError::Short);
            }
            for (d, a) in out.chunks_exact_mut(8).zip(chunk.iter()) {
                d.copy_from_slice(&(a | bits).to_be_bytes());
            }
        }
        Ok(())
    }

    fn parse(self, o: Msg<'_, Self::Out>) -> Result<u32, CodecError> {
        Ok(o.get(create_mkey_out::MKEY_INDEX))
    }
}

/// DESTROY_MKEY of mkey `index`.
#[derive(Clone, Copy, Debug)]
pub struct DestroyMkey {
    /// The mkey index (the key >> 8).
    pub index: u32,
}

impl Command for DestroyMkey {
    const OPCODE: Opcode = Opcode::DESTROY_MKEY;
    type In = destroy_mkey_in::Layout;
    type Out = mbox_out::Layout;
    type Reply = ();

    fn build(&self, i: &mut MsgMut<'_, Self::In>) -> Result<(), CodecError> {
        Ok(i.set(destroy_mkey_in::MKEY_INDEX, self.index)?)
    }

    fn parse(self, _: Msg<'_, Self::Out>) -> Result<(), CodecError> {
        Ok(())
    }
}

/// The window's translation table size of an alloc_mw request (upstream
/// `mlx5_ib_alloc_mw`): `num_klms` rounded up to 4 entries, 4 when it is 0. An empty
/// request (libmlx5's) asks for nothing; a non-empty one is at least the whole
/// structure (`EINVAL`), with no `comp_mask` bit, reserved fields zero and bytes past
/// it zero (`EOPNOTSUPP`: `ib_copy_validate_udata_in_cm(udata, req, reserved2, 0)`).
pub fn parse_alloc_mw(inbuf: &[u8]) -> Result<u32, UabiError> {
    if inbuf.is_empty() {
        return Ok(4);
    }
    let req: AllocMw = udata::copy_validate_in(inbuf, core::mem::size_of::<AllocMw>())?;
    if req.comp_mask != 0 {
        return Err(UabiError::notsupp(Reason::UnknownCompMask {
            bits: req.comp_mask.into(),
        }));
    }
    if req.reserved1 != 0 || req.reserved2 != 0 {
        return Err(UabiError::notsupp(Reason::ReservedNotZero));
    }
    Ok(u32::from(req.num_klms.max(1)).next_multiple_of(4))
}

/// The alloc_mw response upstream writes when user space gave room for any of it
/// (`comp_mask` 0, `response_length` = the bytes of it user space reads): its bytes
/// in `out`, their count (0: no response).
pub fn alloc_mw_response(outlen: usize, out: &mut [u8]) -> usize {
    let len = outlen.min(8);
    if len == 0 {
        return 0;
    }
    let mut b = [0u8; 8];
    b[4..].copy_from_slice(&(len as u32).to_ne_bytes());
    udata::put(out, &b)
}
