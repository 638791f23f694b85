//! UMR work requests (send opcode `MLX5_OPCODE_UMR`): fast registration, local
//! invalidate, memory-window bind and upstream's MR-cache updates. See [`super`].
//!
//! Every one is the same WQE (upstream `mlx5r_umr_wqe`, `wr.c` `set_reg_wr` /
//! `set_linv_wr`, rdma-core `set_bind_wr`): the control segment's `imm` names the
//! mkey; the UMR control segment ([`UmrCtrlSeg`]) says which checks to make, which
//! fields of the mkey segment to apply (`mkey_mask`) and how many translation
//! octowords follow, inline or behind a data segment, to be written at `xlt_offset`
//! of the mkey's table. What each kind of request amounts to:
//! - fast registration (`IB_WR_REG_MR`): "must be free", new key byte, rights,
//!   address and length, not free, the MTT / KLM list;
//! - local invalidate: `free` only;
//! - memory-window bind (libmlx5): "must be free" for type 2, new key byte, rights,
//!   address, length, QPN for type 2, one inline KLM; unbind: `free`, "QPN must match";
//! - MR cache (`umr.c`): enable (translation, PD, rights, key byte, not free, the MTT
//!   list through a data segment with the UMR PD's DMA lkey), revoke (`free`, PD),
//!   rereg of PD / rights ("must not be free"), translation updates at an offset.
//!
//! Rules and sources: emu/README.md, "Data path", "Memory keys".

use super::xlate::{Access, ANY_PD, MAX_TOTAL_XLT_BYTES, MAX_XLT_BYTES};
use crate::fw::{Env, Firmware};
use crate::ifc::field::{Field, Msg, MsgMut};
use crate::ifc::mkey::mkc;
use crate::ifc::qp_state::st;
use crate::ifc::umr::{vals as v, MkeySeg, UmrCtrlSeg};
use crate::ifc::wqe::{WqeCtrlSeg, WqeDataSeg};
use zerocopy::FromBytes;

/// CQE syndrome: a malformed or impossible work request
/// (`MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR`, `cq.h`).
pub const SYNDROME_LOCAL_QP_OP_ERR: u8 = 0x02;
/// CQE syndrome: a memory-key check failed (`MLX5_CQE_SYNDROME_LOCAL_PROT_ERR`).
pub const SYNDROME_LOCAL_PROT_ERR: u8 = 0x04;
/// CQE syndrome: a memory-window bind or invalidate failed
/// (`MLX5_CQE_SYNDROME_MW_BIND_ERR`, `IB_WC_MW_BIND_ERR`).
pub const SYNDROME_MW_BIND_ERR: u8 = crate::ifc::wqe::vals::SYNDROME_MW_BIND_ERR;

/// Bytes of the UMR control and mkey segments.
const SEGS: usize = std::mem::size_of::<UmrCtrlSeg>() + std::mem::size_of::<MkeySeg>();

/// The mkey fields a mask bit selects (upstream `MLX5_MKEY_MASK_*` and the `mkc`
/// fields `umr.c` / `wr.c` set under them). `log_page_size` is split: bits 4:0 and
/// bit 5 (`MLX5_MKEY_MASK_PAGE_SIZE_5`), handled apart.
fn masked_fields() -> [(u64, Field); 17] {
    [
        (v::MKEY_MASK_LEN, mkc::LEN.raw()),
        (v::MKEY_MASK_LEN, mkc::LENGTH64.raw()),
        (v::MKEY_MASK_START_ADDR, mkc::START_ADDR.raw()),
        (v::MKEY_MASK_PD, mkc::PD.raw()),
        (v::MKEY_MASK_EN_RINVAL, mkc::EN_RINVAL.raw()),
        (v::MKEY_MASK_BSF_EN, mkc::BSF_EN.raw()),
        (v::MKEY_MASK_KEY, mkc::MKEY_7_0.raw()),
        (v::MKEY_MASK_QPN, mkc::QPN.raw()),
        (v::MKEY_MASK_LR, mkc::LR.raw()),
        (v::MKEY_MASK_LW, mkc::LW.raw()),
        (v::MKEY_MASK_RR, mkc::RR.raw()),
        (v::MKEY_MASK_RW, mkc::RW.raw()),
        (v::MKEY_MASK_A, mkc::A.raw()),
        (
            v::MKEY_MASK_SMALL_FENCE,
            mkc::SMALL_FENCE_ON_RDMA_READ_RESPONSE.raw(),
        ),
        (
            v::MKEY_MASK_RELAXED_ORDERING_WRITE,
            mkc::RELAXED_ORDERING_WRITE.raw(),
        ),
        (
            v::MKEY_MASK_RELAXED_ORDERING_READ,
            mkc::RELAXED_ORDERING_READ.raw(),
        ),
        (v::MKEY_MASK_FREE, mkc::FREE.raw()),
    ]
}

/// A failed UMR: its syndrome and why.
type Fail = (u8, String);

fn prot(why: impl Into<String>) -> Fail {
    (SYNDROME_LOCAL_PROT_ERR, why.into())
}

fn qp_op(why: impl Into<String>) -> Fail {
    (SYNDROME_LOCAL_QP_OP_ERR, why.into())
}

/// What a checked UMR will do to its mkey.
struct Plan {
    idx: u32,
    ctx: Vec<u8>,
    xlt: Option<(usize, Vec<u8>)>,
}

impl Firmware {
    /// Executes a UMR WQE of QP `qpn`: `ctrl` is its control segment, `body` the WQE
    /// bytes after it (unwrapped from the ring). Either the whole request applies or
    /// nothing does; `Err` is the error CQE's syndrome.
    pub fn exec_umr(
        &mut self,
        env: &Env<'_>,
        qpn: u32,
        ctrl: &WqeCtrlSeg,
        body: &[u8],
    ) -> Result<(), u8> {
        match self.plan_umr(env, qpn, ctrl, body) {
            Ok(p) => {
                if let Some(m) = self.objs.mkeys.get_mut(&p.idx) {
                    m.ctx = p.ctx;
                    if let Some((at, bytes)) = p.xlt {
                        let end = at + bytes.len();
                        if m.dp.xlt.len() < end {
                            m.dp.xlt.resize(end, 0);
                        }
                        m.dp.xlt[at..end].copy_from_slice(&bytes);
                    }
                    m.dp.umrs += 1;
                }
                self.dp.xlate.umr_ok += 1;
                Ok(())
            }
            Err((synd, why)) => {
                let wqe = (ctrl.opmod_idx_opcode.get() >> 8) & 0xffff;
                let msg = format!(
                    "UMR QP {qpn:#x} WQE {wqe} mkey {:#x}: {why} (syndrome {synd:#x})",
                    ctrl.imm.get()
                );
                log::warn!("{msg}");
                self.dp.xlate.umr_failed += 1;
                self.dp.xlate.note(msg);
                Err(synd)
            }
        }
    }

    /// Checks a UMR and computes the mkey's new context and table entries.
    fn plan_umr(
        &mut self,
        env: &Env<'_>,
        qpn: u32,
        ctrl: &WqeCtrlSeg,
        body: &[u8],
    ) -> Result<Plan, Fail> {
        let (Some(umr), Some(seg)) = (
            body.get(..std::mem::size_of::<UmrCtrlSeg>())
                .and_then(|b| UmrCtrlSeg::read_from_bytes(b).ok()),
            body.get(std::mem::size_of::<UmrCtrlSeg>()..SEGS)
                .and_then(Msg::<mkc::Layout>::new),
        ) else {
            return Err(qp_op(format!(
                "{} bytes after the control segment, the UMR and mkey segments take {SEGS}",
                body.len()
            )));
        };
        let (qp_pd, qp_st) = match self.objs.qps.get(&qpn) {
            Some(q) => (q.pd, q.st),
            None => return Err(qp_op("no such QP")),
        };
        let mask = umr.mkey_mask.get();
        // A memory-window operation: a UMR that sets the mkey's QPN. rdma-core's
        // `set_umr_control_seg` sets `MLX5_WQE_UMR_CTRL_MKEY_MASK_QPN` on every type 2
        // window bind, unbind and local invalidate; upstream's kernel UMRs never do
        // (`umr.c`, `wr.c`). Its refusals are memory window bind errors (IBTA 11.6.2
        // "Memory Window Bind Error"; `MLX5_CQE_SYNDROME_MW_BIND_ERR`), the other
        // UMRs' local protection errors. A type 1 bind sets no QPN and is not told
        // apart from a fast registration.
        let window = mask & v::MKEY_MASK_QPN != 0;
        let deny = |why: String| {
            if window {
                (SYNDROME_MW_BIND_ERR, why)
            } else {
                prot(why)
            }
        };
        // The mkey is named by `imm` (upstream `mlx5r_begin_wqe` general_id,
        // `handle_reg_mr` / `handle_local_inv` imm): its index; a fast registration
        // names the key it is about to give the mkey, so the key byte is not checked.
        let key = ctrl.imm.get();
        let idx = key >> 8;
        let Some(m) = self.objs.mkeys.get(&idx) else {
            return Err(deny(format!("no mkey index {idx:#x}")));
        };
        let mut ctx = m.ctx.clone();
        let cur = Msg::<mkc::Layout>::new(&m.ctx).ok_or_else(|| prot("mkey context missing"))?;
        // PRM `mkc.umr_en`: only such mkeys may be changed by UMR (upstream sets it on
        // every mkey it posts UMRs for: the MR cache, `alloc_mr`, `alloc_mw`).
        if !cur.get(mkc::UMR_EN) {
            return Err(deny("mkey without umr_en".into()));
        }
        let flags = umr.flags;
        let free = cur.get(mkc::FREE);
        match flags & v::UMR_CHECK_MASK {
            0 => {}
            v::UMR_CHECK_NOT_FREE if !free => {
                return Err(deny("check (must be free): mkey valid".into()))
            }
            v::UMR_CHECK_FREE if free => {
                return Err(deny("check (must not be free): mkey free".into()))
            }
            v::UMR_CHECK_NOT_FREE | v::UMR_CHECK_FREE => {}
            _ => return Err(qp_op("reserved check_free value 3")),
        }
        // rdma-core `MLX5_WQE_UMR_CTRL_FLAG_CHECK_QPN` (type 2 window unbind): the
        // mkey's QPN must be the posting QP's.
        if flags & v::UMR_CHECK_QPN != 0 && cur.get(mkc::QPN) != qpn {
            return Err(deny(format!(
                "check: mkey bound to QP {:#x}",
                cur.get(mkc::QPN)
            )));
        }
        // A type 2 bind (a QPN other than 0xffffff) binds the window to the posting
        // QP, which must be in the window's PD (IBTA 10.6.7.2: a type 2 window is
        // bound to one QP of its PD; libmlx5 `set_umr_mkey_seg` writes its own QPN).
        if window {
            let new_qpn = mkc::QPN.raw().get(seg.as_bytes()).unwrap_or(0) as u32;
            let window_pd = if mask & v::MKEY_MASK_PD != 0 {
                mkc::PD.raw().get(seg.as_bytes()).unwrap_or(0) as u32
            } else {
                cur.get(mkc::PD)
            };
            if new_qpn != 0xff_ffff && new_qpn != qpn {
                return Err(deny(format!(
                    "type 2 bind to QP {new_qpn:#x} posted on QP {qpn:#x}"
                )));
            }
            if new_qpn != 0xff_ffff && qp_st != st::REG_UMR && window_pd != qp_pd {
                return Err(deny(format!(
                    "type 2 bind: window PD {window_pd}, QP PD {qp_pd}"
                )));
            }
        }
        for (bit, f) in masked_fields() {
            if mask & bit != 0 {
                let val = f.get(seg.as_bytes()).unwrap_or(0);
                f.set(&mut ctx, val)
                    .ok_or_else(|| prot("mkey context short"))?;
            }
        }
        let mut w =
            MsgMut::<mkc::Layout>::new(&mut ctx).ok_or_else(|| prot("mkey context short"))?;
        let old_ps = w.get(mkc::LOG_PAGE_SIZE);
        let new_ps = seg.get(mkc::LOG_PAGE_SIZE);
        let mut ps = old_ps;
        if mask & v::MKEY_MASK_PAGE_SIZE != 0 {
            ps = (ps & 0x20) | (new_ps & 0x1f);
        }
        if mask & v::MKEY_MASK_PAGE_SIZE_5 != 0 {
            ps = (ps & 0x1f) | (new_ps & 0x20);
        }
        w.set(mkc::LOG_PAGE_SIZE, ps)
            .map_err(|_| prot("page size"))?;

        let octs = usize::from(umr.xlt_octowords.get());
        let xlt = if octs == 0 {
            None
        } else {
            let bytes = octs * v::UMR_OCTOWORD;
            let off_octs = if flags & v::UMR_TRANSLATION_OFFSET_EN != 0 {
                (u64::from(umr.xlt_offset_47_16.get()) << 16) | u64::from(umr.xlt_offset.get())
            } else {
                0
            };
            // The entries must fit the table the mkey was created with
            // (`translations_octword_size`, PRM CREATE_MKEY) and ours. The device
            // keeps tables in units of `MLX5_UMR_FLEX_ALIGNMENT` (64 bytes): upstream
            // writes a 1-octoword table of a one-page MR with a 4-octoword UMR
            // (umr.c `sg.length = ALIGN(size_to_map, MLX5_UMR_FLEX_ALIGNMENT)`), which
            // a ConnectX accepts.
            let unit = (v::UMR_FLEX_ALIGNMENT / v::UMR_OCTOWORD) as u64;
            let size = u64::from(cur.get(mkc::TRANSLATIONS_OCTWORD_SIZE)).div_ceil(unit) * unit;
            let end = off_octs + octs as u64;
            if end > size || end * v::UMR_OCTOWORD as u64 > MAX_XLT_BYTES as u64 {
                return Err(qp_op(format!(
                    "entries {off_octs}..{end} (octowords) outside a table of {size}"
                )));
            }
            let at = off_octs as usize * v::UMR_OCTOWORD;
            let grow = (at + bytes).saturating_sub(m.dp.xlt.len());
            if grow > 0 {
                let total: usize = self.objs.mkeys.values().map(|m| m.dp.xlt.len()).sum();
                if total + grow > MAX_TOTAL_XLT_BYTES {
                    return Err(qp_op(format!(
                        "translation tables would hold {} bytes, more than {MAX_TOTAL_XLT_BYTES}",
                        total + grow
                    )));
                }
            }
            let data = if flags & v::UMR_INLINE != 0 {
                body.get(SEGS..SEGS + bytes)
                    .ok_or_else(|| {
                        qp_op(format!(
                            "{bytes} inline entry bytes, the WQE has {}",
                            body.len().saturating_sub(SEGS)
                        ))
                    })?
                    .to_vec()
            } else {
                let d = body
                    .get(SEGS..SEGS + std::mem::size_of::<WqeDataSeg>())
                    .and_then(|b| WqeDataSeg::read_from_bytes(b).ok())
                    .ok_or_else(|| qp_op("no data segment for the entries"))?;
                if (d.byte_count.get() as usize) < bytes {
                    return Err(qp_op(format!(
                        "data segment of {} bytes for {bytes} entry bytes",
                        d.byte_count.get()
                    )));
                }
                // The entries are read through the data segment's lkey (upstream: the
                // UMR PD's or the QP PD's `local_dma_lkey`). Upstream's UMR QP has no
                // PD (`create_kernel_qp`), so its reads are not PD-checked.
                let pd = if qp_st == st::REG_UMR { ANY_PD } else { qp_pd };
                let mut buf = vec![0u8; bytes];
                self.read_virt(
                    env,
                    d.lkey.get(),
                    d.addr.get(),
                    &mut buf,
                    Access::LOCAL_READ,
                    pd,
                )
                .map_err(|e| prot(format!("reading the entries: {e:?}")))?;
                buf
            };
            Some((at, data))
        };
        Ok(Plan { idx, ctx, xlt })
    }
}
