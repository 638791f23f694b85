//! Memory keys: translation and access checks. See [`super`].
//!
//! Every local and remote access of the data path names a memory key and a range in
//! that key's address space; [`Firmware::translate`] checks the key and returns the
//! guest-physical pieces behind the range (the PRM's memory-key rules as the mkey
//! context `mkc` of `mlx5_ifc.h` states them; rules and sources in emu/README.md,
//! "Data path", "Memory keys"). The translation table of an mkey (MTT, KLM or KSM
//! entries, `ifc::umr`) comes from CREATE_MKEY's inline entries and from later UMR
//! work requests ([`super::umr`]), and lives in [`MkeyState`].

use crate::fw::rsc::special_mkeys;
use crate::fw::{Env, Firmware};
use crate::ifc::field::{Msg, MsgMut};
use crate::ifc::mkey::mkc;
use crate::ifc::umr::{vals as uv, Klm, Ksm, Mtt};
use std::collections::VecDeque;
use zerocopy::FromBytes;

/// What an access needs of a key (a small bit set).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Access(u8);

impl Access {
    /// The device reads local memory (a gather list, an RDMA write's source).
    pub const LOCAL_READ: Access = Access(1 << 0);
    /// The device writes local memory (a scatter list, an RDMA read's target).
    pub const LOCAL_WRITE: Access = Access(1 << 1);
    /// A remote peer reads (RDMA read responder).
    pub const REMOTE_READ: Access = Access(1 << 2);
    /// A remote peer writes (RDMA write responder).
    pub const REMOTE_WRITE: Access = Access(1 << 3);
    /// A remote peer's atomic operation.
    pub const REMOTE_ATOMIC: Access = Access(1 << 4);

    /// True if every bit of `other` is in `self`.
    pub const fn contains(self, other: Access) -> bool {
        self.0 & other.0 == other.0
    }

    /// True if any remote right is asked.
    pub const fn remote(self) -> bool {
        self.0 & (Self::REMOTE_READ.0 | Self::REMOTE_WRITE.0 | Self::REMOTE_ATOMIC.0) != 0
    }

    /// What an indirect mkey's entry needs of its own key: local read, or local write
    /// when the access writes (IBTA: a window or region granting remote write sits on
    /// memory registered for local write). The indirect key's rights stand for the
    /// rest.
    pub const fn inner(self) -> Access {
        if self.writes() {
            Self::LOCAL_WRITE
        } else {
            Self::LOCAL_READ
        }
    }

    /// True if the device writes memory through the key.
    pub const fn writes(self) -> bool {
        self.0 & (Self::LOCAL_WRITE.0 | Self::REMOTE_WRITE.0 | Self::REMOTE_ATOMIC.0) != 0
    }
}

impl std::ops::BitOr for Access {
    type Output = Access;
    fn bitor(self, rhs: Access) -> Access {
        Access(self.0 | rhs.0)
    }
}

/// Why a translation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XlateError {
    /// No such mkey, a free one, or a key byte (`mkey_7_0`) that does not match.
    Key,
    /// The mkey belongs to another protection domain.
    Pd,
    /// The mkey does not grant the access.
    Access,
    /// The range is outside the mkey, or no translation entry covers it.
    Bounds,
    /// A translated piece is not in guest memory, or guest memory failed.
    Dma,
}

impl XlateError {
    /// Index in [`XlatePath::errors`].
    const fn index(self) -> usize {
        match self {
            XlateError::Key => 0,
            XlateError::Pd => 1,
            XlateError::Access => 2,
            XlateError::Bounds => 3,
            XlateError::Dma => 4,
        }
    }

    /// Name in `stats`.
    pub const NAMES: [&'static str; 5] = ["key", "pd", "access", "bounds", "dma"];
}

/// The PD argument that skips the PD check: a privileged access (the UMR QP, which
/// upstream creates without a PD, reading its translation entries; the entries of an
/// indirect mkey). PD numbers are 24 bits, so no PD is this.
pub const ANY_PD: u32 = u32::MAX;

/// Nesting limit of indirect mkeys (KLM / KSM entries naming indirect mkeys). Upstream
/// nests at most two levels (an implicit ODP KSM over MTT children, `odp.c`; a memory
/// window over a KLM fast-registration mkey over MTTs is three): ours.
pub const MAX_INDIRECTION: u32 = 8;

/// Most pieces one translation returns (an access of 2 GiB over 4 KiB pages that are
/// not contiguous is 512 Ki pieces): ours, so a guest table cannot make the emulator
/// allocate without bound.
pub const MAX_PIECES: usize = 1 << 20;

/// Largest translation table of one mkey, bytes (1 Mi MTT entries: 4 GiB of 4 KiB
/// pages; upstream loads at most `MLX5_MAX_UMR_PAGES` = 64 Ki entries through UMR
/// without `umr_extended_translation_offset`, which we do not advertise): ours.
pub const MAX_XLT_BYTES: usize = 8 << 20;

/// Most bytes all live mkeys' tables hold together: a UMR that would grow the tables
/// beyond it is refused (real firmware holds tables in ICM the driver gave it; a
/// guest writing the last entry of many huge tables must not make the emulator
/// allocate without bound): ours.
pub const MAX_TOTAL_XLT_BYTES: usize = 512 << 20;

/// Violation messages kept for `stats`.
const KEEP_RECENT: usize = 16;

/// An mkey's translation and state as the data path sees them. The mkey context
/// itself (`Mkey::ctx`, `mkc`) is the one source of the key's fields: UMR updates it
/// in place, so QUERY_MKEY reports what the data path uses.
#[derive(Clone, Debug, Default)]
pub struct MkeyState {
    /// The translation table (MTT, KLM or KSM entries, big-endian as the guest wrote
    /// them): CREATE_MKEY's inline entries, then what UMRs wrote at their offsets.
    /// Never longer than `translations_octword_size` octwords nor [`MAX_XLT_BYTES`].
    pub xlt: Vec<u8>,
    /// CREATE_MKEY `pg_access`: MTT entries carry read / write enable bits
    /// (`MLX5_IB_MTT_READ` / `MLX5_IB_MTT_WRITE`); an entry without the bit the access
    /// needs is not present.
    pub pg_access: bool,
    /// UMRs applied to this mkey.
    pub umrs: u64,
}

/// Function-wide translation statistics (`stats` → `dp` → `mkeys`).
#[derive(Clone, Debug, Default)]
pub struct XlatePath {
    /// Translations that succeeded.
    pub translated: u64,
    /// Bytes they covered.
    pub bytes: u64,
    /// Failures by kind ([`XlateError::NAMES`] order).
    pub errors: [u64; 5],
    /// UMR work requests executed.
    pub umr_ok: u64,
    /// UMR work requests that failed.
    pub umr_failed: u64,
    /// The last failures, with what failed and why.
    pub recent: VecDeque<String>,
}

impl XlatePath {
    /// Counts a failure with its reason.
    pub fn failed(&mut self, e: XlateError, why: String) {
        self.errors[e.index()] += 1;
        log::debug!("mkey: {e:?}: {why}");
        self.note(format!("{e:?}: {why}"));
    }

    /// Keeps `msg` among the last reasons.
    pub fn note(&mut self, msg: String) {
        if self.recent.len() == KEEP_RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back(msg);
    }

    /// The `stats` → `dp` → `mkeys` object.
    pub fn report(&self) -> serde_json::Value {
        let errors: serde_json::Map<String, serde_json::Value> = XlateError::NAMES
            .iter()
            .zip(self.errors)
            .map(|(n, c)| ((*n).to_string(), c.into()))
            .collect();
        serde_json::json!({
            "translated": self.translated,
            "bytes": self.bytes,
            "errors": errors,
            "umr_ok": self.umr_ok,
            "umr_failed": self.umr_failed,
            "recent": self.recent.iter().collect::<Vec<_>>(),
        })
    }
}

/// A failure and its reason (counted once, at the top).
type Fail = (XlateError, String);

/// Pieces being gathered: merged when contiguous, bounded by [`MAX_PIECES`].
struct Pieces(Vec<(u64, u32)>);

impl Pieces {
    fn push(&mut self, mut pa: u64, mut len: u64) -> Result<(), Fail> {
        while len > 0 {
            if let Some(last) = self.0.last_mut() {
                let room = u64::from(u32::MAX - last.1);
                if last.0.checked_add(u64::from(last.1)) == Some(pa) && room > 0 {
                    let n = room.min(len);
                    last.1 += n as u32;
                    pa += n;
                    len -= n;
                    continue;
                }
            }
            if self.0.len() == MAX_PIECES {
                return Err((XlateError::Bounds, format!("more than {MAX_PIECES} pieces")));
            }
            let n = len.min(u64::from(u32::MAX));
            self.0.push((pa, n as u32));
            pa = pa.wrapping_add(n);
            len -= n;
        }
        Ok(())
    }
}

/// The entry `i` of `size` bytes in a translation table, if the table holds it.
fn entry<T: FromBytes>(xlt: &[u8], i: u64) -> Option<T> {
    let size = std::mem::size_of::<T>() as u64;
    let at = usize::try_from(i.checked_mul(size)?).ok()?;
    T::read_from_bytes(xlt.get(at..at.checked_add(size as usize)?)?).ok()
}

impl Firmware {
    /// Translates `[va, va + len)` of memory key `key` for an access that needs
    /// `need`, on behalf of protection domain `pd` ([`ANY_PD`]: no PD check), into
    /// guest-physical (address, length) pieces, contiguous pieces merged. Failures are
    /// counted in [`XlatePath`] with their reason.
    pub fn translate(
        &mut self,
        env: &Env<'_>,
        key: u32,
        va: u64,
        len: u64,
        need: Access,
        pd: u32,
    ) -> Result<Vec<(u64, u32)>, XlateError> {
        self.translate_for(env, key, va, len, need, pd, None)
    }

    /// [`Firmware::translate`] for a remote access arriving at QP `qpn`: an mkey bound
    /// to one QP (`mkc.qpn` other than 0xffffff: a type 2 memory window, libmlx5
    /// `set_umr_mkey_seg`) serves remote accesses of that QP only (else `Key`).
    #[allow(clippy::too_many_arguments)]
    pub fn translate_for(
        &mut self,
        env: &Env<'_>,
        key: u32,
        va: u64,
        len: u64,
        need: Access,
        pd: u32,
        qpn: Option<u32>,
    ) -> Result<Vec<(u64, u32)>, XlateError> {
        let mut out = Pieces(Vec::new());
        let bound = match qpn {
            Some(q) if need.remote() => self.bound_qpn(key).filter(|&b| b != q),
            _ => None,
        };
        let r = match bound {
            Some(b) => Err((
                XlateError::Key,
                format!("window bound to QP {b:#x}, not this QP"),
            )),
            None => self.walk(env, key, va, len, need, pd, 0, &mut out),
        };
        match r {
            Ok(()) => {
                self.dp.xlate.translated += 1;
                self.dp.xlate.bytes += len;
                Ok(out.0)
            }
            Err((e, why)) => {
                let at = qpn.map_or(String::new(), |q| format!("QP {q:#x} "));
                let msg = format!("{at}key {key:#x} va {va:#x} len {len:#x} need {need:?}: {why}");
                if e == XlateError::Dma {
                    self.stats.dma_error(format!("mkey translation: {msg}"));
                }
                self.dp.xlate.failed(e, msg);
                Err(e)
            }
        }
    }

    /// The QP an mkey is bound to (`mkc.qpn`, 0xffffff = any QP), if any.
    fn bound_qpn(&self, key: u32) -> Option<u32> {
        let m = self.objs.mkeys.get(&(key >> 8))?;
        let q = Msg::<mkc::Layout>::new(&m.ctx)?.get(mkc::QPN);
        (q != 0xff_ffff).then_some(q)
    }

    /// Remote invalidation (the responder of a send with invalidate): `key` must be a
    /// valid mkey of `pd` with `en_rinval`; it becomes free. Failures are counted.
    /// Sources: ifc `mkc.en_rinval`; upstream sets it for fast-registered MRs
    /// (`set_reg_mkey_seg`, `MLX5_MKEY_REMOTE_INVAL`) and type 2 windows
    /// (`mlx5_ib_alloc_mw`).
    pub fn remote_invalidate(&mut self, key: u32, pd: u32) -> Result<(), XlateError> {
        use XlateError as E;
        let idx = key >> 8;
        let r = match self.objs.mkeys.get_mut(&idx) {
            None => Err((E::Key, "no such mkey".to_string())),
            Some(m) => match MsgMut::<mkc::Layout>::new(&mut m.ctx) {
                None => Err((E::Key, "mkey context missing".into())),
                Some(mut c) => {
                    if c.get(mkc::MKEY_7_0) != (key & 0xff) as u8 || c.get(mkc::FREE) {
                        Err((E::Key, "not a valid key".into()))
                    } else if c.get(mkc::PD) != pd {
                        Err((E::Pd, format!("mkey PD {}, QP PD {pd}", c.get(mkc::PD))))
                    } else if !c.get(mkc::EN_RINVAL) {
                        Err((E::Access, "mkey without en_rinval".into()))
                    } else {
                        c.set(mkc::FREE, true)
                            .map_err(|_| (E::Key, "context".into()))
                    }
                }
            },
        };
        r.map_err(|(e, why)| {
            self.dp
                .xlate
                .failed(e, format!("remote invalidate of key {key:#x}: {why}"));
            e
        })
    }

    /// Reads `buf.len()` bytes at `va` of `key` (an access needing `need`) from guest
    /// memory.
    pub fn read_virt(
        &mut self,
        env: &Env<'_>,
        key: u32,
        va: u64,
        buf: &mut [u8],
        need: Access,
        pd: u32,
    ) -> Result<(), XlateError> {
        let pieces = self.translate(env, key, va, buf.len() as u64, need, pd)?;
        let mut at = 0usize;
        for (pa, n) in pieces {
            let n = n as usize;
            if env.mem.read(pa, &mut buf[at..at + n]).is_err() {
                return Err(self.dma_failed(key, pa, n));
            }
            at += n;
        }
        Ok(())
    }

    /// Writes `data` at `va` of `key` (an access needing `need`) to guest memory.
    pub fn write_virt(
        &mut self,
        env: &Env<'_>,
        key: u32,
        va: u64,
        data: &[u8],
        need: Access,
        pd: u32,
    ) -> Result<(), XlateError> {
        let pieces = self.translate(env, key, va, data.len() as u64, need, pd)?;
        let mut at = 0usize;
        for (pa, n) in pieces {
            let n = n as usize;
            if env.mem.write(pa, &data[at..at + n]).is_err() {
                return Err(self.dma_failed(key, pa, n));
            }
            at += n;
        }
        Ok(())
    }

    fn dma_failed(&mut self, key: u32, pa: u64, n: usize) -> XlateError {
        let msg = format!("key {key:#x}: guest memory {pa:#x}+{n:#x} failed");
        self.stats.dma_error(format!("mkey access: {msg}"));
        self.dp.xlate.failed(XlateError::Dma, msg);
        XlateError::Dma
    }

    /// One level of translation: checks `key` and appends the pieces of
    /// `[va, va + len)`.
    #[allow(clippy::too_many_arguments)]
    fn walk(
        &self,
        env: &Env<'_>,
        key: u32,
        va: u64,
        len: u64,
        need: Access,
        pd: u32,
        depth: u32,
        out: &mut Pieces,
    ) -> Result<(), Fail> {
        use XlateError as E;
        if key == special_mkeys::RESD_LKEY {
            // The reserved lkey: physical addresses for privileged local access (PRM
            // QUERY_SPECIAL_CONTEXTS `resd_lkey`); no PD, not an rkey. Ours reports
            // it equal to the terminate-scatter-list key, whose entry has no bytes.
            if need.remote() {
                return Err((E::Key, "the reserved lkey is not an rkey".into()));
            }
            return self.physical(env, va, len, out);
        }
        let idx = key >> 8;
        if idx < crate::fw::rsc::FIRST_MKEY_INDEX {
            // null / dump-fill / repeated mkeys: not advertised (caps
            // `null_mkey`, `dump_fill_mkey` 0), so no memory behind them.
            return Err((E::Key, "a special mkey with no memory behind it".into()));
        }
        let Some(m) = self.objs.mkeys.get(&idx) else {
            return Err((E::Key, "no such mkey".into()));
        };
        let Some(c) = Msg::<mkc::Layout>::new(&m.ctx) else {
            return Err((E::Key, "mkey context missing".into()));
        };
        if c.get(mkc::MKEY_7_0) != (key & 0xff) as u8 {
            return Err((
                E::Key,
                format!("key byte {:#x} is not the mkey's", key & 0xff),
            ));
        }
        if c.get(mkc::FREE) {
            return Err((E::Key, "the mkey is free".into()));
        }
        let key_pd = c.get(mkc::PD);
        if pd != ANY_PD && key_pd != pd {
            return Err((E::Pd, format!("mkey PD {key_pd}, access PD {pd}")));
        }
        // Local read is always allowed (upstream sets `lr` on every mkey); the other
        // rights are the mkey's `lw`, `rr`, `rw`, `a` bits.
        for (right, bit, name) in [
            (Access::LOCAL_WRITE, mkc::LW, "lw"),
            (Access::REMOTE_READ, mkc::RR, "rr"),
            (Access::REMOTE_WRITE, mkc::RW, "rw"),
            (Access::REMOTE_ATOMIC, mkc::A, "a"),
        ] {
            if need.contains(right) && !c.get(bit) {
                return Err((E::Access, format!("mkey without `{name}`")));
            }
        }
        let start = c.get(mkc::START_ADDR);
        let end = if c.get(mkc::LENGTH64) {
            1u128 << 64
        } else {
            u128::from(start) + u128::from(c.get(mkc::LEN))
        };
        if va < start || u128::from(va) + u128::from(len) > end {
            return Err((
                E::Bounds,
                format!("outside the mkey ({start:#x}, {end:#x} end)"),
            ));
        }
        if len == 0 {
            return Ok(());
        }
        let mode = (c.get(mkc::ACCESS_MODE_4_2) << 2) | c.get(mkc::ACCESS_MODE_1_0);
        let shift = u32::from(c.get(mkc::LOG_PAGE_SIZE));
        let xlt = &m.dp.xlt;
        use crate::fw::mkey::access_mode as am;
        match mode {
            am::PA => self.physical(env, va, len, out),
            am::MTT => self.mtt(env, xlt, m.dp.pg_access, start, shift, va, len, need, out),
            am::KLM | am::KSM if depth + 1 >= MAX_INDIRECTION => Err((
                E::Key,
                format!("indirect mkeys nested deeper than {MAX_INDIRECTION}"),
            )),
            am::KLM => self.klm(env, xlt, start, va, len, need, depth, out),
            am::KSM => self.ksm(env, xlt, start, shift, va, len, need, depth, out),
            _ => Err((E::Key, format!("access mode {mode} not modelled"))),
        }
    }

    /// PA mode: the address is the guest-physical address.
    fn physical(&self, env: &Env<'_>, pa: u64, len: u64, out: &mut Pieces) -> Result<(), Fail> {
        if len > 0 && !env.mem.is_mapped(pa, len) {
            return Err((
                XlateError::Dma,
                format!("{pa:#x}+{len:#x} is not guest memory"),
            ));
        }
        out.push(pa, len)
    }

    /// MTT mode: entry `i` maps page `i` of the mkey, pages of `1 << shift` bytes
    /// counted from `start_addr` rounded down to a page (upstream `get_octo_len`,
    /// `mlx5_ib_populate_pas`); the offset in the page comes from the address.
    #[allow(clippy::too_many_arguments)]
    fn mtt(
        &self,
        env: &Env<'_>,
        xlt: &[u8],
        pg_access: bool,
        start: u64,
        shift: u32,
        va: u64,
        len: u64,
        need: Access,
        out: &mut Pieces,
    ) -> Result<(), Fail> {
        use XlateError as E;
        if shift > 63 {
            return Err((E::Bounds, format!("page size 2^{shift}")));
        }
        let page = 1u64 << shift;
        let base = start & !(page - 1);
        let (mut cur, end) = (va, u128::from(va) + u128::from(len));
        while u128::from(cur) < end {
            let i = (cur - base) >> shift;
            let Some(e) = entry::<Mtt>(xlt, i) else {
                return Err((E::Bounds, format!("no MTT entry {i}")));
            };
            let ptag = e.ptag.get();
            if pg_access {
                let bit = if need.writes() {
                    uv::MTT_WRITE
                } else {
                    uv::MTT_READ
                };
                if ptag & bit == 0 {
                    return Err((E::Access, format!("MTT entry {i} not present")));
                }
            }
            // The low bits carry the enable bits; a page is at least 8 bytes aligned.
            let addr = ptag & !(page - 1) & !7;
            let off = cur & (page - 1);
            let n = (u128::from(page - off)).min(end - u128::from(cur)) as u64;
            self.physical(env, addr + off, n, out)?;
            cur = cur.wrapping_add(n);
            if cur == 0 {
                break;
            }
        }
        Ok(())
    }

    /// KLM mode: the entries, in order from `start_addr`, each cover `bcount` bytes at
    /// `va` of their own key (PRM indirect mkeys; upstream `mlx5_ib_sg_to_klms`). The
    /// indirect mkey's rights and PD decide; an entry's key is checked for existence,
    /// state, bounds and [`Access::inner`], not for the PD.
    #[allow(clippy::too_many_arguments)]
    fn klm(
        &self,
        env: &Env<'_>,
        xlt: &[u8],
        start: u64,
        va: u64,
        len: u64,
        need: Access,
        depth: u32,
        out: &mut Pieces,
    ) -> Result<(), Fail> {
        let (want, end) = (u128::from(va), u128::from(va) + u128::from(len));
        let mut at = u128::from(start);
        let mut covered = want;
        for i in 0.. {
            let Some(k) = entry::<Klm>(xlt, i) else {
                break;
            };
            let n = u128::from(k.bcount.get());
            let (lo, hi) = (at.max(want), (at + n).min(end));
            if lo < hi {
                if lo != covered {
                    break;
                }
                let inner = k.va.get().wrapping_add((lo - at) as u64);
                self.walk(
                    env,
                    k.key.get(),
                    inner,
                    (hi - lo) as u64,
                    need.inner(),
                    ANY_PD,
                    depth + 1,
                    out,
                )?;
                covered = hi;
            }
            at += n;
            if at >= end {
                break;
            }
        }
        if covered < end {
            return Err((
                XlateError::Bounds,
                format!("no KLM entry covers {covered:#x}"),
            ));
        }
        Ok(())
    }

    /// KSM mode: entry `i` covers `1 << shift` bytes at `start_addr + i << shift`,
    /// translated at `va` of the entry's key (PRM fixed-size KLM; upstream `odp.c`
    /// implicit MRs, `mlx5r_umr_update_data_direct_ksm_pas`).
    #[allow(clippy::too_many_arguments)]
    fn ksm(
        &self,
        env: &Env<'_>,
        xlt: &[u8],
        start: u64,
        shift: u32,
        va: u64,
        len: u64,
        need: Access,
        depth: u32,
        out: &mut Pieces,
    ) -> Result<(), Fail> {
        use XlateError as E;
        if shift > 63 {
            return Err((E::Bounds, format!("entity size 2^{shift}")));
        }
        let size = 1u128 << shift;
        let (mut cur, end) = (u128::from(va), u128::from(va) + u128::from(len));
        while cur < end {
            let rel = cur - u128::from(start);
            let i = (rel >> shift) as u64;
            let Some(k) = entry::<Ksm>(xlt, i) else {
                return Err((E::Bounds, format!("no KSM entry {i}")));
            };
            let off = rel & (size - 1);
            let n = (size - off).min(end - cur);
            self.walk(
                env,
                k.key.get(),
                k.va.get().wrapping_add(off as u64),
                n as u64,
                need.inner(),
                ANY_PD,
                depth + 1,
                out,
            )?;
            cur += n;
        }
        Ok(())
    }
}
