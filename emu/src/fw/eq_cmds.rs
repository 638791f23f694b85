//! CREATE_EQ, DESTROY_EQ, QUERY_EQ and GEN_EQE.

use super::eq::{Eq, Posted};
use super::util::{bad_param, get, need_in, need_out, put, CmdResult};
use super::{syndrome, Env, Firmware};
use crate::ifc::caps::cmd_hca_cap as g;
use crate::ifc::eq::{
    self as e, create_eq_in, create_eq_out, destroy_eq_in, eq_state, eqc, gen_eqe_in, query_eq_in,
    query_eq_out,
};
use crate::ifc::status::CmdStatus;
use zerocopy::FromBytes;

fn be64(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_be_bytes(a)
}

impl Firmware {
    pub(super) fn create_eq(&mut self, env: &Env<'_>, input: &[u8], out: &mut [u8]) -> CmdResult {
        need_in(input, e::PAS_OFFSET)?;
        let ctx = &input[e::EQC_OFFSET..e::EQC_OFFSET + eqc::BYTES];
        let log_size = get(ctx, eqc::LOG_EQ_SIZE)? as u8;
        let uar = get(ctx, eqc::UAR_PAGE)? as u32;
        let intr = get(ctx, eqc::INTR)? as u16;
        let log_page_size = get(ctx, eqc::LOG_PAGE_SIZE)? as u8;
        // Sources: page_offset non-zero is not modelled (upstream writes 0); log_eq_size
        // up to cap log_max_eq_sz, intr below the MSI-X table size (PCIe MSI-X
        // capability, `--msix-vectors`), uar_page an allocated UAR (`mlx5_ifc_eqc_bits`,
        // PRM CREATE_EQ); log_page_size is bounded by its 5-bit field only.
        let bad = get(ctx, eqc::PAGE_OFFSET)? != 0
            || u64::from(log_size) > self.caps.cur(g::LOG_MAX_EQ_SZ.raw())
            || intr
                >= self
                    .cfg
                    .msix_vectors
                    .clamp(1, crate::config::MAX_MSIX_VECTORS)
            || !self.uar_owned(uar);
        if bad {
            self.stats.violation(format!(
                "CREATE_EQ rejected: log_size {log_size} uar {uar} intr {intr} log_page_size {log_page_size}"
            ));
            return Err(bad_param());
        }
        // status / consumer_counter / producer_counter are device-owned (QUERY_EQ reports
        // them) and upstream writes 0: non-zero is a violation; refusing it is strict rule
        // eq_ctx_device_fields (no PRM source says firmware checks them).
        let device_fields = [
            eqc::STATUS.raw(),
            eqc::CONSUMER_COUNTER.raw(),
            eqc::PRODUCER_COUNTER.raw(),
        ];
        if let Some(f) = device_fields
            .iter()
            .find(|f| f.get(ctx).is_some_and(|v| v != 0))
        {
            self.stats.violation(format!(
                "CREATE_EQ: device-owned EQ context field {} not zero",
                f.name
            ));
            if self.strict.eq_ctx_device_fields {
                return Err(bad_param());
            }
        }
        // EQ count: cap log_max_eq (`mlx5_ifc_cmd_hca_cap_bits`; max_num_eqs is 0 here).
        if self.eqs.eqs.len() >= 1usize << self.caps.cur(g::LOG_MAX_EQ.raw()) {
            return Err((CmdStatus::LIM_ERR, syndrome::LIMIT));
        }
        let bytes = (1u64 << log_size) * e::EQE_SIZE as u64;
        let page = 4096u64 << log_page_size;
        let npas = bytes.div_ceil(page) as usize;
        need_in(input, e::PAS_OFFSET + 8 * npas)?;
        let pas: Vec<u64> = (0..npas)
            .map(|i| be64(input, e::PAS_OFFSET + 8 * i))
            .collect();
        // Buffer pages: 4 KiB aligned (pas entries carry address bits 63:12) and in guest
        // memory (a DMA target). Address 0 is not special.
        if let Some(a) = pas
            .iter()
            .find(|&&a| a % 4096 != 0 || !env.mem.is_mapped(a, page.min(bytes)))
        {
            self.stats
                .violation(format!("CREATE_EQ: bad buffer page {a:#x}"));
            return Err(bad_param());
        }
        let mut mask = [0u64; 4];
        for (i, m) in mask.iter_mut().enumerate() {
            *m = be64(input, e::EVENT_BITMASK_OFFSET + 8 * i);
        }
        let eqn = self
            .eqs
            .free_eqn()
            .ok_or((CmdStatus::LIM_ERR, syndrome::LIMIT))?;
        put(out, create_eq_out::EQ_NUMBER, u64::from(eqn))?;
        let _ = get(input, create_eq_in::OPCODE)?;
        self.eqs.eqs.insert(
            eqn,
            Eq::new(eqn, log_size, uar, intr, log_page_size, pas, mask),
        );
        Ok(())
    }

    pub(super) fn destroy_eq(&mut self, input: &[u8]) -> CmdResult {
        let eqn = get(input, destroy_eq_in::EQ_NUMBER)? as u8;
        // An EQ CQs still report to: as for other referenced objects (strict
        // destroy_in_use, see fw/rsc.rs).
        if self.eqs.eqs.contains_key(&eqn) {
            self.in_use(&format!("EQ {eqn}"), self.objs.eq_users(eqn))?;
        }
        // Unknown EQ: status 0x5 BAD_RES (PRM status list, upstream `cmd_status_str`).
        if self.eqs.eqs.remove(&eqn).is_none() {
            return Err((CmdStatus::BAD_RES_ERR, syndrome::BAD_RESOURCE));
        }
        self.eqs.waiting.retain(|(n, _)| *n != eqn);
        Ok(())
    }

    pub(super) fn query_eq(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        let eqn = get(input, query_eq_in::EQ_NUMBER)? as u8;
        let eq = self
            .eqs
            .eqs
            .get(&eqn)
            .ok_or((CmdStatus::BAD_RES_ERR, syndrome::BAD_RESOURCE))?;
        need_out(out, e::EQC_OFFSET + eqc::BYTES)?;
        let pas = eq.pas.clone();
        {
            let ctx = &mut out[e::EQC_OFFSET..e::EQC_OFFSET + eqc::BYTES];
            put(ctx, eqc::LOG_EQ_SIZE, u64::from(eq.log_size))?;
            put(ctx, eqc::UAR_PAGE, u64::from(eq.uar_page))?;
            put(ctx, eqc::INTR, u64::from(eq.intr))?;
            put(ctx, eqc::LOG_PAGE_SIZE, u64::from(eq.log_page_size))?;
            put(
                ctx,
                eqc::ST,
                u64::from(if eq.armed {
                    eq_state::ARMED
                } else {
                    eq_state::FIRED
                }),
            )?;
            put(ctx, eqc::CONSUMER_COUNTER, u64::from(eq.ci & 0xff_ffff))?;
            put(ctx, eqc::PRODUCER_COUNTER, u64::from(eq.pi & 0xff_ffff))?;
        }
        if let Some(b) = query_eq_out::EVENT_BITMASK.raw().bytes_mut(out) {
            b.copy_from_slice(&eq.mask[0].to_be_bytes());
        }
        for (i, a) in pas.iter().enumerate() {
            let off = e::PAS_OFFSET + 8 * i;
            if let Some(b) = out.get_mut(off..off + 8) {
                b.copy_from_slice(&a.to_be_bytes());
            }
        }
        Ok(())
    }

    pub(super) fn gen_eqe(&mut self, env: &Env<'_>, input: &[u8]) -> CmdResult {
        let eqn = get(input, gen_eqe_in::EQ_NUMBER)? as u8;
        let eqe = gen_eqe_in::EQE
            .raw()
            .bytes(input)
            .ok_or((CmdStatus::BAD_INP_LEN_ERR, syndrome::BAD_INPUT_LEN))?;
        if !self.eqs.eqs.contains_key(&eqn) {
            return Err((CmdStatus::BAD_RES_ERR, syndrome::BAD_RESOURCE));
        }
        let Ok(e) = crate::ifc::eqe::Eqe::read_from_bytes(eqe) else {
            return Err((CmdStatus::BAD_INP_LEN_ERR, syndrome::BAD_INPUT_LEN));
        };
        let (t, sub, data) = (e.type_, e.sub_type, e.data);
        match self
            .eqs
            .post_to(eqn, t, sub, &data, env.mem, env.irq, env.msix_ok)
        {
            Posted::Dma(err) => {
                self.stats.dma_error(format!("GEN_EQE: {err}"));
                Err((CmdStatus::INT_ERR, syndrome::BAD_RESOURCE))
            }
            Posted::Lost(_) => Err((CmdStatus::LIM_ERR, syndrome::LIMIT)),
            _ => Ok(()),
        }
    }
}
