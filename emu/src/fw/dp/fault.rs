//! Data-path faults set through the control socket (`dp_fault`). See [`super`].
//!
//! Each rule makes the data path fail as real hardware can, at one point of the
//! engine, for its next `count` occasions on one QP or CQ (or any):
//! - [`DpFaultKind::CqeError`]: a completion comes out as an error CQE with the given
//!   syndrome and vendor syndrome, and its QP goes to ERR (hook: `cqe_post`);
//! - [`DpFaultKind::LostCqe`]: a CQE is not written at all (hook: `cqe_post`);
//! - [`DpFaultKind::CqOverrun`]: the CQ's consumer index is taken as not advanced, so
//!   the next CQE overruns the CQ (hook: `cqe_post`, the overrun check);
//! - [`DpFaultKind::WqeDma`]: the next send WQE fetch fails as a DMA (IOMMU / PCIe)
//!   error would (hook: `sq_execute`, dp/send/doorbell.rs);
//! - [`DpFaultKind::RkeyViolation`]: the next remote access a QP's responder checks
//!   is refused as a remote access error (hook: the responder's rkey checks);
//! - [`DpFaultKind::BadCqe`]: a test fault, not a failure of real hardware: a CQE is
//!   written with one field out of what the PRM allows ([`BadCqeField`]), to prove a
//!   driver's poll path treats CQEs as untrusted input (hook: `cqe_post`).
//!
//! What the device then does, with its sources: emu/README.md, "Data path" →
//! "Faults on demand". Rules are dropped by `clear_injections` and `reset`; the
//! counters stay (like the other statistics).

use super::super::{Env, Firmware};
use super::cqe::{CqeDesc, CqeOp};
use crate::ifc::eqe::event_type;
use crate::ifc::wqe::vals;

/// What a fault rule does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DpFaultKind {
    /// A successful completion becomes an error CQE (`syndrome`, `vendor`).
    CqeError {
        /// CQE syndrome (`MLX5_CQE_SYNDROME_*`).
        syndrome: u8,
        /// Vendor error syndrome.
        vendor: u8,
    },
    /// A CQE is not written.
    LostCqe,
    /// The CQ overruns at its next CQE.
    CqOverrun,
    /// The next send WQE fetch is a DMA error.
    WqeDma,
    /// The next remote access at the responder is refused (remote access error).
    RkeyViolation,
    /// A CQE is written with one field malformed (a test fault).
    BadCqe(BadCqeField),
}

/// The field a [`DpFaultKind::BadCqe`] fault writes out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadCqeField {
    /// `op_own` 7:4 = [`BAD_CQE_OPCODE`], an opcode `cq.h` does not define.
    Opcode,
    /// `wqe_counter` + 0x8000 (mod 2^16): the same slot of any queue of at most 32768
    /// entries, but a counter of no WQE in flight.
    WqeCounter,
    /// `sop_drop_qpn` 23:0 = [`BAD_CQE_QPN`], a QPN no QP has.
    Qpn,
}

/// The opcode of fault `bad_cqe_opcode`: none of `cq.h`'s `MLX5_CQE_*` (0-5, 12-15).
pub const BAD_CQE_OPCODE: u8 = 0x9;
/// The QPN of fault `bad_cqe_qpn`: above every QPN the emulator gives (`log_max_qp`
/// 18).
pub const BAD_CQE_QPN: u32 = 0x00ff_fffe;

/// Fault `bad_cqe_*`: the 64-byte CQE `cqe` (`struct mlx5_cqe64` or
/// `struct mlx5_err_cqe`: the same offsets for the QPN, the WQE counter and
/// `op_own`) with field `f` malformed, the owner bit and the rest kept.
pub fn mangle_cqe(mut cqe: [u8; 64], f: BadCqeField) -> [u8; 64] {
    match f {
        BadCqeField::Opcode => cqe[63] = (BAD_CQE_OPCODE << 4) | (cqe[63] & 0x0f),
        BadCqeField::WqeCounter => {
            let c = u16::from_be_bytes([cqe[60], cqe[61]]).wrapping_add(0x8000);
            cqe[60..62].copy_from_slice(&c.to_be_bytes());
        }
        BadCqeField::Qpn => {
            let w = u32::from_be_bytes([cqe[56], cqe[57], cqe[58], cqe[59]]);
            let w = (w & 0xff00_0000) | BAD_CQE_QPN;
            cqe[56..60].copy_from_slice(&w.to_be_bytes());
        }
    }
    cqe
}

impl DpFaultKind {
    /// Control-socket names.
    pub const NAMES: &'static [&'static str] = &[
        "cqe_error",
        "lost_cqe",
        "cq_overrun",
        "wqe_dma",
        "rkey",
        "bad_cqe_opcode",
        "bad_cqe_wqe_counter",
        "bad_cqe_qpn",
    ];

    /// The control-socket name.
    pub fn name(self) -> &'static str {
        match self {
            DpFaultKind::CqeError { .. } => "cqe_error",
            DpFaultKind::LostCqe => "lost_cqe",
            DpFaultKind::CqOverrun => "cq_overrun",
            DpFaultKind::WqeDma => "wqe_dma",
            DpFaultKind::RkeyViolation => "rkey",
            DpFaultKind::BadCqe(BadCqeField::Opcode) => "bad_cqe_opcode",
            DpFaultKind::BadCqe(BadCqeField::WqeCounter) => "bad_cqe_wqe_counter",
            DpFaultKind::BadCqe(BadCqeField::Qpn) => "bad_cqe_qpn",
        }
    }

    /// The kind named `name`; `syndrome` / `vendor` for `cqe_error` (default: local
    /// QP operation error, vendor syndrome 0).
    pub fn from_name(name: &str, syndrome: Option<u8>, vendor: Option<u8>) -> Option<Self> {
        Some(match name {
            "cqe_error" => DpFaultKind::CqeError {
                syndrome: syndrome.unwrap_or(vals::SYNDROME_LOCAL_QP_OP_ERR),
                vendor: vendor.unwrap_or(0),
            },
            "lost_cqe" => DpFaultKind::LostCqe,
            "cq_overrun" => DpFaultKind::CqOverrun,
            "wqe_dma" => DpFaultKind::WqeDma,
            "rkey" => DpFaultKind::RkeyViolation,
            "bad_cqe_opcode" => DpFaultKind::BadCqe(BadCqeField::Opcode),
            "bad_cqe_wqe_counter" => DpFaultKind::BadCqe(BadCqeField::WqeCounter),
            "bad_cqe_qpn" => DpFaultKind::BadCqe(BadCqeField::Qpn),
            _ => return None,
        })
    }

    /// Index into the per-kind counters.
    fn slot(self) -> usize {
        match self {
            DpFaultKind::CqeError { .. } => 0,
            DpFaultKind::LostCqe => 1,
            DpFaultKind::CqOverrun => 2,
            DpFaultKind::WqeDma => 3,
            DpFaultKind::RkeyViolation => 4,
            DpFaultKind::BadCqe(BadCqeField::Opcode) => 5,
            DpFaultKind::BadCqe(BadCqeField::WqeCounter) => 6,
            DpFaultKind::BadCqe(BadCqeField::Qpn) => 7,
        }
    }
}

/// What a rule applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultTarget {
    /// Every QP / CQ.
    Any,
    /// One QP (CQE faults: the CQEs of that QP, send and receive).
    Qp(u32),
    /// One CQ (CQE faults only).
    Cq(u32),
}

impl FaultTarget {
    fn matches(self, qpn: Option<u32>, cqn: Option<u32>) -> bool {
        match self {
            FaultTarget::Any => true,
            FaultTarget::Qp(n) => qpn == Some(n),
            FaultTarget::Cq(n) => cqn == Some(n),
        }
    }
}

/// One rule: `kind` on `target`, `remaining` more times.
#[derive(Clone, Debug)]
pub struct DpFaultRule {
    /// What it does.
    pub kind: DpFaultKind,
    /// Where.
    pub target: FaultTarget,
    /// Uses left (0: expired, kept for the report until cleared).
    pub remaining: u32,
    /// Times applied.
    pub hits: u64,
}

/// The rules and what they did (`stats` → `dp` → `faults`).
#[derive(Clone, Debug, Default)]
pub struct DpFaults {
    /// Rules in insertion order; the first live match wins.
    pub rules: Vec<DpFaultRule>,
    /// Faults applied, per kind (see [`DpFaultKind::NAMES`]).
    pub applied: [u64; 8],
}

impl DpFaults {
    /// Adds a rule.
    pub fn add(&mut self, kind: DpFaultKind, target: FaultTarget, count: u32) {
        self.rules.push(DpFaultRule {
            kind,
            target,
            remaining: count,
            hits: 0,
        });
    }

    /// Drops every rule (`clear_injections`, `reset`).
    pub fn clear(&mut self) {
        self.rules.clear();
    }

    /// A live rule of a kind `want` accepts, for QP `qpn` / CQ `cqn`, consuming one
    /// use of it. Cheap when no rule is set (the data path's common case).
    pub fn take(
        &mut self,
        want: impl Fn(DpFaultKind) -> bool,
        qpn: Option<u32>,
        cqn: Option<u32>,
    ) -> Option<DpFaultKind> {
        if self.rules.is_empty() {
            return None;
        }
        let r = self
            .rules
            .iter_mut()
            .find(|r| r.remaining > 0 && want(r.kind) && r.target.matches(qpn, cqn))?;
        r.remaining -= 1;
        r.hits += 1;
        let kind = r.kind;
        self.applied[kind.slot()] += 1;
        Some(kind)
    }

    /// The CQ overrun check's hook (`cqe_post`): fault `cq_overrun` takes CQ `cqn`'s
    /// consumer index as not advanced (the CQ full).
    pub fn cq_overrun(&mut self, qpn: u32, cqn: u32) -> bool {
        let hit = self
            .take(|k| k == DpFaultKind::CqOverrun, Some(qpn), Some(cqn))
            .is_some();
        if hit {
            log::warn!("fault cq_overrun: CQ {cqn:#x} taken as full");
        }
        hit
    }

    /// The `stats` → `dp` → `faults` object.
    pub fn report(&self) -> serde_json::Value {
        let rules: Vec<_> = self
            .rules
            .iter()
            .map(|r| {
                let (target, n) = match r.target {
                    FaultTarget::Any => ("any", 0),
                    FaultTarget::Qp(n) => ("qpn", n),
                    FaultTarget::Cq(n) => ("cqn", n),
                };
                let mut v = serde_json::json!({
                    "fault": r.kind.name(), "target": target, "n": n,
                    "remaining": r.remaining, "hits": r.hits,
                });
                if let DpFaultKind::CqeError { syndrome, vendor } = r.kind {
                    v["syndrome"] = syndrome.into();
                    v["vendor"] = vendor.into();
                }
                v
            })
            .collect();
        let mut o = serde_json::json!({ "rules": rules });
        for (name, n) in DpFaultKind::NAMES.iter().zip(self.applied) {
            o[*name] = n.into();
        }
        o["total"] = self.applied.iter().sum::<u64>().into();
        o
    }
}

/// What the `cqe_post` hook decided for one CQE.
pub(crate) enum CqeFault {
    /// No fault: write the CQE as it is.
    None,
    /// Fault `lost_cqe`: write nothing.
    Lost,
    /// Fault `cqe_error`: write this error CQE instead, then move the QP to ERR.
    Error(CqeDesc),
    /// Fault `bad_cqe_*`: write the CQE with this field malformed.
    Malformed(BadCqeField),
}

impl Firmware {
    /// The CQE hook (`cqe_post`): fault `lost_cqe` (any CQE, flushes included), else
    /// fault `cqe_error` (successful completions only: an error CQE already moves its
    /// QP to ERR).
    pub(crate) fn fault_cqe(&mut self, cqn: u32, d: &CqeDesc) -> CqeFault {
        let f = &mut self.dp.faults;
        if f.rules.is_empty() {
            return CqeFault::None;
        }
        if f.take(|k| k == DpFaultKind::LostCqe, Some(d.qpn), Some(cqn))
            .is_some()
        {
            log::warn!(
                "fault lost_cqe: CQE of QP {:#x} WQE {} not written to CQ {cqn:#x}",
                d.qpn,
                d.wqe_counter
            );
            return CqeFault::Lost;
        }
        let bad = |k| matches!(k, DpFaultKind::BadCqe(_));
        if let Some(DpFaultKind::BadCqe(field)) = f.take(bad, Some(d.qpn), Some(cqn)) {
            log::warn!(
                "fault {}: CQE of QP {:#x} WQE {} written malformed to CQ {cqn:#x}",
                DpFaultKind::BadCqe(field).name(),
                d.qpn,
                d.wqe_counter
            );
            return CqeFault::Malformed(field);
        }
        if d.op.is_error() {
            return CqeFault::None;
        }
        let want = |k| matches!(k, DpFaultKind::CqeError { .. });
        let Some(DpFaultKind::CqeError { syndrome, vendor }) = f.take(want, Some(d.qpn), Some(cqn))
        else {
            return CqeFault::None;
        };
        log::warn!(
            "fault cqe_error: QP {:#x} WQE {} completes with syndrome {syndrome:#x} vendor {vendor:#x}",
            d.qpn,
            d.wqe_counter
        );
        let op = match d.op {
            CqeOp::Req { .. } => CqeOp::ReqErr { syndrome, vendor },
            _ => CqeOp::RespErr { syndrome, vendor },
        };
        // An error CQE carries no byte count (mlx5_ib / libmlx5 read none from it).
        CqeDesc {
            op,
            byte_cnt: 0,
            ..*d
        }
        .into()
    }

    /// After an injected error CQE: its QP goes to ERR as for a real completion error
    /// (PRM completion errors: the QP enters ERR, its outstanding WQEs flush; as
    /// `sq_complete` does for a real one).
    pub(crate) fn fault_cqe_done(&mut self, env: &Env<'_>, qpn: u32) {
        let live = self
            .objs
            .qps
            .get(&qpn)
            .is_some_and(|q| q.state != super::super::qp_state::state::ERR);
        if live {
            self.qp_to_error(env, qpn);
        }
    }

    /// The send WQE fetch's hook: fault `wqe_dma` fails the fetch of QP `qpn`'s WQE.
    pub(crate) fn fault_wqe_dma(&mut self, qpn: u32, ctr: u16) -> bool {
        let hit = self
            .dp
            .faults
            .take(|k| k == DpFaultKind::WqeDma, Some(qpn), None)
            .is_some();
        if hit {
            log::warn!("fault wqe_dma: QP {qpn:#x} send WQE {ctr} fetch fails");
        }
        hit
    }

    /// After a WQE fetch error, injected or real (the WQE completed with a local QP
    /// operation error, the QP in ERR): the work-queue catastrophic error event
    /// (`MLX5_EVENT_TYPE_WQ_CATAS_ERROR`, IBTA 11.6.3.1 "Local Work Queue Catastrophic
    /// Error"; upstream mlx5_ib reports it as `IB_EVENT_QP_FATAL`).
    pub(crate) fn wq_catas_event(&mut self, env: &Env<'_>, qpn: u32) {
        let _ = self.raise_qp_event(env, qpn, event_type::WQ_CATAS_ERROR, 1);
    }

    /// The responder's rkey check hook: fault `rkey` refuses QP `qpn`'s next remote
    /// access as a key violation.
    pub(crate) fn fault_rkey(&mut self, qpn: u32, rkey: u32) -> bool {
        let hit = self
            .dp
            .faults
            .take(|k| k == DpFaultKind::RkeyViolation, Some(qpn), None)
            .is_some();
        if hit {
            log::warn!("fault rkey: QP {qpn:#x} refuses rkey {rkey:#x}");
        }
        hit
    }
}

impl From<CqeDesc> for CqeFault {
    fn from(d: CqeDesc) -> Self {
        CqeFault::Error(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_expire_and_match_their_target() {
        let mut f = DpFaults::default();
        f.add(DpFaultKind::LostCqe, FaultTarget::Cq(7), 2);
        let lost = |k| k == DpFaultKind::LostCqe;
        assert_eq!(f.take(lost, Some(1), Some(8)), None);
        assert_eq!(f.take(lost, Some(1), Some(7)), Some(DpFaultKind::LostCqe));
        assert_eq!(f.take(|_| false, Some(1), Some(7)), None);
        assert_eq!(f.take(lost, None, Some(7)), Some(DpFaultKind::LostCqe));
        assert_eq!(f.take(lost, None, Some(7)), None, "expired after 2");
        assert_eq!(f.applied[1], 2);
        assert_eq!(f.report()["lost_cqe"], 2);
        assert_eq!(f.report()["rules"][0]["remaining"], 0);
        f.clear();
        assert!(f.rules.is_empty());
        assert_eq!(
            DpFaultKind::from_name("cqe_error", Some(0x13), None),
            Some(DpFaultKind::CqeError {
                syndrome: 0x13,
                vendor: 0
            })
        );
        assert_eq!(DpFaultKind::from_name("nope", None, None), None);
    }

    #[test]
    fn every_name_round_trips_to_its_own_slot() {
        let mut slots = Vec::new();
        for n in DpFaultKind::NAMES {
            let k = DpFaultKind::from_name(n, None, None).unwrap();
            assert_eq!(k.name(), *n);
            slots.push(k.slot());
        }
        assert_eq!(slots, (0..DpFaultKind::NAMES.len()).collect::<Vec<_>>());
        assert_eq!(DpFaults::default().applied.len(), DpFaultKind::NAMES.len());
    }

    #[test]
    fn bad_cqe_fields_are_out_of_range_and_the_rest_kept() {
        let mut cqe = [0u8; 64];
        for (i, b) in cqe.iter_mut().enumerate() {
            *b = i as u8;
        }
        // A requester CQE: opcode REQ, owner 1, send opcode 0x0a, QPN 0x123, WQE 7.
        cqe[56..60].copy_from_slice(&0x0a00_0123u32.to_be_bytes());
        cqe[60..62].copy_from_slice(&7u16.to_be_bytes());
        cqe[63] = 0x01;
        let o = mangle_cqe(cqe, BadCqeField::Opcode);
        assert_eq!(o[63], 0x91);
        assert_eq!(o[..63], cqe[..63]);
        let w = mangle_cqe(cqe, BadCqeField::WqeCounter);
        assert_eq!(u16::from_be_bytes([w[60], w[61]]), 0x8007);
        assert_eq!((&w[..60], &w[62..]), (&cqe[..60], &cqe[62..]));
        let q = mangle_cqe(cqe, BadCqeField::Qpn);
        assert_eq!(q[56..60], 0x0aff_fffeu32.to_be_bytes());
        assert_eq!((&q[..56], &q[60..]), (&cqe[..56], &cqe[60..]));
        // The counter wraps.
        cqe[60..62].copy_from_slice(&0x9000u16.to_be_bytes());
        let w = mangle_cqe(cqe, BadCqeField::WqeCounter);
        assert_eq!(u16::from_be_bytes([w[60], w[61]]), 0x1000);
    }
}
