// SPDX-License-Identifier: GPL-2.0

//! modify_qp and query_qp of RC, UC, UD, XRC and the special QPs, as upstream
//! `mlx5_ib_modify_qp` / `__mlx5_ib_modify_qp` / `mlx5_set_path` and
//! `query_qp_attr` / `to_rdma_ah_attr` (`qp.c`) do them:
//!
//! - [`plan_modify`]: the driver's checks after the core's `ib_modify_qp_is_ok()`
//!   (which the shim calls): attribute bits outside the standard ones and
//!   `IB_QP_RATE_LIMIT` (no packet pacing here) → `EOPNOTSUPP`; port 0 or above the
//!   device's, P_Key index past the table, `max_rd_atomic` / `max_dest_rd_atomic`
//!   above `1 << log_max_ra_res_qp` / `1 << log_max_ra_req_qp` → `EINVAL`; RESET to
//!   RESET does nothing. Then the transition command (upstream's `optab`), the QP
//!   context it carries and its `opt_param_mask` (upstream's attribute-to-parameter
//!   map, masked by the parameters the transition takes for the service type,
//!   `opt_mask`);
//! - [`query_attr`]: a QUERY_QP context back into the core's attributes.
//!
//! No LAG (`lag_tx_port_affinity` 0), no Q counters (`counter_set_id` 0: this
//! provider allocates none, upstream's `mlx5_ib_get_counters_id`), InfiniBand paths
//! only (a RoCE address is refused, `EINVAL`, as upstream for RoCE without a GRH).
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::{
    errno::Errno,
    ffi::rdma::{ib_ah_abi::AhAttr, ib_qp_abi::QpAttr},
    ifc::{
        field::{Msg, MsgMut, Overflow},
        opcodes::Opcode,
        qp::{ads, qpc},
        qp_state::{optpar, pm_state as pm, st, state as hw_state, transition_op},
    },
};

/// `enum ib_qp_attr_mask` (`rdma/ib_verbs.h`).
pub mod mask {
    /// `IB_QP_STATE`.
    pub const STATE: u32 = 1 << 0;
    /// `IB_QP_CUR_STATE`.
    pub const CUR_STATE: u32 = 1 << 1;
    /// `IB_QP_ACCESS_FLAGS`.
    pub const ACCESS_FLAGS: u32 = 1 << 3;
    /// `IB_QP_PKEY_INDEX`.
    pub const PKEY_INDEX: u32 = 1 << 4;
    /// `IB_QP_PORT`.
    pub const PORT: u32 = 1 << 5;
    /// `IB_QP_QKEY`.
    pub const QKEY: u32 = 1 << 6;
    /// `IB_QP_AV`.
    pub const AV: u32 = 1 << 7;
    /// `IB_QP_PATH_MTU`.
    pub const PATH_MTU: u32 = 1 << 8;
    /// `IB_QP_TIMEOUT`.
    pub const TIMEOUT: u32 = 1 << 9;
    /// `IB_QP_RETRY_CNT`.
    pub const RETRY_CNT: u32 = 1 << 10;
    /// `IB_QP_RNR_RETRY`.
    pub const RNR_RETRY: u32 = 1 << 11;
    /// `IB_QP_RQ_PSN`.
    pub const RQ_PSN: u32 = 1 << 12;
    /// `IB_QP_MAX_QP_RD_ATOMIC`.
    pub const MAX_QP_RD_ATOMIC: u32 = 1 << 13;
    /// `IB_QP_ALT_PATH`.
    pub const ALT_PATH: u32 = 1 << 14;
    /// `IB_QP_MIN_RNR_TIMER`.
    pub const MIN_RNR_TIMER: u32 = 1 << 15;
    /// `IB_QP_SQ_PSN`.
    pub const SQ_PSN: u32 = 1 << 16;
    /// `IB_QP_MAX_DEST_RD_ATOMIC`.
    pub const MAX_DEST_RD_ATOMIC: u32 = 1 << 17;
    /// `IB_QP_PATH_MIG_STATE`.
    pub const PATH_MIG_STATE: u32 = 1 << 18;
    /// `IB_QP_DEST_QPN`.
    pub const DEST_QPN: u32 = 1 << 20;
    /// `IB_QP_RATE_LIMIT`.
    pub const RATE_LIMIT: u32 = 1 << 25;
    /// `IB_QP_ATTR_STANDARD_BITS`.
    pub const STANDARD: u32 = (1 << 21) - 1;
}

/// `enum ib_qp_state`.
pub mod ib_state {
    /// `IB_QPS_RESET`.
    pub const RESET: u32 = 0;
    /// `IB_QPS_INIT`.
    pub const INIT: u32 = 1;
    /// `IB_QPS_RTR`.
    pub const RTR: u32 = 2;
    /// `IB_QPS_RTS`.
    pub const RTS: u32 = 3;
    /// `IB_QPS_SQD`.
    pub const SQD: u32 = 4;
    /// `IB_QPS_SQE`.
    pub const SQE: u32 = 5;
    /// `IB_QPS_ERR`.
    pub const ERR: u32 = 6;
}

/// `enum ib_access_flags`: the provider's one definition (a QP takes the remote
/// bits).
pub use crate::ib::umem::plan::access;

/// `enum ib_qp_type` values the provider serves.
pub mod ib_qpt {
    /// `IB_QPT_SMI` (QP0).
    pub const SMI: u32 = 0;
    /// `IB_QPT_GSI` (QP1).
    pub const GSI: u32 = 1;
    /// `IB_QPT_RC`.
    pub const RC: u32 = 2;
    /// `IB_QPT_UC`.
    pub const UC: u32 = 3;
    /// `IB_QPT_UD`.
    pub const UD: u32 = 4;
    /// `IB_QPT_XRC_INI`.
    pub const XRC_INI: u32 = 9;
    /// `IB_QPT_XRC_TGT`.
    pub const XRC_TGT: u32 = 10;
}

/// `MLX5_IB_ACK_REQ_FREQ`.
const ACK_REQ_FREQ: u8 = 8;
/// `MLX5_STAT_RATE_OFFSET`.
const STAT_RATE_OFFSET: u8 = 5;
/// Bytes of a QP context.
pub const QPC_BYTES: usize = qpc::BYTES;

/// A QP's transport as the provider knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpType {
    /// Reliable connected.
    Rc,
    /// Unreliable connected.
    Uc,
    /// Unreliable datagram.
    Ud,
    /// QP0 (`IB_QPT_SMI`).
    Smi,
    /// Hardware QP1 (`IB_QPT_GSI`, upstream's `MLX5_IB_QPT_HW_GSI`).
    Gsi,
    /// XRC initiator.
    XrcIni,
    /// XRC target.
    XrcTgt,
}

impl QpType {
    /// From `enum ib_qp_type`; `None` for types this provider does not create.
    pub fn from_ib(t: u32) -> Option<Self> {
        Some(match t {
            ib_qpt::SMI => Self::Smi,
            ib_qpt::GSI => Self::Gsi,
            ib_qpt::RC => Self::Rc,
            ib_qpt::UC => Self::Uc,
            ib_qpt::UD => Self::Ud,
            ib_qpt::XRC_INI => Self::XrcIni,
            ib_qpt::XRC_TGT => Self::XrcTgt,
            _ => return None,
        })
    }

    /// `qpc.st` (`to_mlx5_st`).
    pub fn st(self) -> u8 {
        match self {
            Self::Rc => st::RC,
            Self::Uc => st::UC,
            Self::Ud => st::UD,
            Self::XrcIni | Self::XrcTgt => st::XRC,
            Self::Smi => st::QP0,
            Self::Gsi => st::QP1,
        }
    }

    /// QP0 or QP1 (`is_sqp`).
    pub fn is_sqp(self) -> bool {
        matches!(self, Self::Smi | Self::Gsi)
    }

    /// Connected (the address path and access flags are read back by query_qp).
    pub fn connected(self) -> bool {
        matches!(self, Self::Rc | Self::Uc | Self::XrcIni | Self::XrcTgt)
    }

    /// The CQs the QP context names (`get_cqs`): (send, receive).
    pub fn has_cqs(self) -> (bool, bool) {
        match self {
            Self::XrcTgt => (false, false),
            Self::XrcIni => (true, false),
            _ => (true, true),
        }
    }
}

/// What the driver keeps of a QP between verbs (upstream `mlx5_ib_qp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QpShadow {
    /// Transport.
    pub ty: QpType,
    /// A user QP (`ibqp->uobject`).
    pub user: bool,
    /// Port (QP0 / QP1: from create; others: the last `IB_QP_PORT`).
    pub port: u8,
    /// Access flags last set (`trans_qp.atomic_rd_en`).
    pub atomic_rd_en: u32,
    /// `max_dest_rd_atomic` last set (`trans_qp.resp_depth`).
    pub resp_depth: u8,
    /// Alternate port last set.
    pub alt_port: u8,
    /// PD number.
    pub pdn: u32,
    /// Send CQ.
    pub cqn_snd: Option<u32>,
    /// Receive CQ.
    pub cqn_rcv: Option<u32>,
    /// RQ WQEs (0: no RQ).
    pub rq_wqe_cnt: u32,
    /// Doorbell record bus address.
    pub db_dma: u64,
}

/// Device values modify_qp checks against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModifyCaps {
    /// Ports.
    pub num_ports: u8,
    /// P_Key table length.
    pub pkey_tbl_len: u16,
    /// GID table length.
    pub gid_tbl_len: u32,
    /// Cap `log_max_ra_res_qp`.
    pub log_max_ra_res_qp: u8,
    /// Cap `log_max_ra_req_qp`.
    pub log_max_ra_req_qp: u8,
    /// Cap `log_max_msg`.
    pub log_max_msg: u8,
    /// Cap `stat_rate_support`.
    pub stat_rate_support: u16,
    /// `qpc.atomic_mode` for remote atomics (`get_atomic_mode`); `None`: no atomics.
    pub atomic_mode: Option<u8>,
}

/// A transition to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModifyPlan {
    /// The transition command.
    pub op: Opcode,
    /// Its `opt_param_mask`.
    pub opt_mask: u32,
    /// Its QP context.
    pub qpc: [u8; QPC_BYTES],
}

/// `to_mlx5_state`.
pub fn to_hw_state(s: u32) -> Option<u8> {
    Some(match s {
        ib_state::RESET => hw_state::RST,
        ib_state::INIT => hw_state::INIT,
        ib_state::RTR => hw_state::RTR,
        ib_state::RTS => hw_state::RTS,
        ib_state::SQD => hw_state::SQD,
        ib_state::SQE => hw_state::SQER,
        ib_state::ERR => hw_state::ERR,
        _ => return None,
    })
}

/// `to_ib_qp_state` (SQ draining reads as SQD).
pub fn to_ib_state(s: u8) -> Option<u32> {
    Some(match s {
        hw_state::RST => ib_state::RESET,
        hw_state::INIT => ib_state::INIT,
        hw_state::RTR => ib_state::RTR,
        hw_state::RTS => ib_state::RTS,
        hw_state::SQD | hw_state::SQ_DRAINING => ib_state::SQD,
        hw_state::SQER => ib_state::SQE,
        hw_state::ERR => ib_state::ERR,
        _ => return None,
    })
}

/// Upstream's `opt_mask`: the parameters transition (`cur`, `new`) takes for `ty`
/// (QP0 and QP1 use the MLX column).
pub fn allowed_optpar(cur: u8, new: u8, ty: QpType) -> u32 {
    use hw_state as s;
    use optpar::*;
    use QpType::*;
    let rc = matches!(ty, Rc | XrcIni | XrcTgt);
    let xrc = matches!(ty, XrcIni | XrcTgt);
    match (cur, new) {
        (s::INIT, s::INIT) => match ty {
            _ if rc => RRE | RAE | RWE | PKEY_INDEX | PRI_PORT | LAG_TX_AFF,
            Uc => RWE | PKEY_INDEX | PRI_PORT | LAG_TX_AFF,
            Ud => PKEY_INDEX | Q_KEY | PRI_PORT,
            _ => 0,
        },
        (s::INIT, s::RTR) => match ty {
            _ if rc => ALT_ADDR_PATH | RRE | RAE | RWE | PKEY_INDEX | LAG_TX_AFF,
            Uc => ALT_ADDR_PATH | RWE | PKEY_INDEX | LAG_TX_AFF,
            Ud | Smi | Gsi => PKEY_INDEX | Q_KEY,
            _ => 0,
        },
        (s::RTR, s::RTS) => match ty {
            _ if rc => ALT_ADDR_PATH | RRE | RAE | RWE | PM_STATE | RNR_TIMEOUT,
            Uc => ALT_ADDR_PATH | RWE | PM_STATE | PP_INDEX,
            Ud => Q_KEY | PP_INDEX,
            _ => 0,
        },
        (s::RTS, s::RTS) => match ty {
            _ if rc => RRE | RAE | RWE | RNR_TIMEOUT | PM_STATE | ALT_ADDR_PATH,
            Uc => RWE | PM_STATE | ALT_ADDR_PATH | PP_INDEX,
            Ud => Q_KEY | SRQN | CQN_RCV | PP_INDEX,
            _ => 0,
        },
        (s::SQER, s::RTS) => match ty {
            _ if rc => RNR_TIMEOUT | RWE | RAE | RRE,
            Ud | Smi | Gsi => Q_KEY,
            Uc => RWE,
            _ => 0,
        },
        // Upstream's SQD→RTS row has no XRC entry.
        (s::SQD, s::RTS) => match ty {
            _ if xrc => 0,
            Rc => RNR_TIMEOUT | RWE | RAE | RRE,
            Ud | Smi | Gsi => Q_KEY,
            Uc => RWE,
            _ => 0,
        },
        _ => 0,
    }
}

/// `ib_mask_to_mlx5_opt`: the parameters an attribute mask names.
pub fn mask_to_optpar(m: u32) -> u32 {
    use optpar::*;
    let map: [(u32, u32); 14] = [
        (mask::ACCESS_FLAGS, RWE | RRE | RAE),
        (mask::PKEY_INDEX, PKEY_INDEX),
        (mask::PORT, PRI_PORT),
        (mask::QKEY, Q_KEY),
        (mask::AV, PRIMARY_ADDR_PATH | PRI_PORT),
        (mask::TIMEOUT, ACK_TIMEOUT),
        (mask::RETRY_CNT, RETRY_COUNT),
        (mask::RNR_RETRY, RNR_RETRY),
        (mask::MAX_QP_RD_ATOMIC, SRA_MAX),
        (mask::ALT_PATH, ALT_ADDR_PATH),
        (mask::MIN_RNR_TIMER, RNR_TIMEOUT),
        (mask::MAX_DEST_RD_ATOMIC, RRA_MAX | RWE | RRE | RAE),
        (mask::PATH_MIG_STATE, PM_STATE),
        (mask::STATE, 0),
    ];
    map.iter()
        .filter(|(b, _)| m & b != 0)
        .fold(0, |acc, (_, o)| acc | o)
}

/// `ib_to_mlx5_rate_map`.
fn rate_map(rate: u8) -> u8 {
    match rate {
        0 => 0,
        12 => 1, // 56 Gb/s
        15 => 2, // 25 Gb/s
        16 => 3, // 100 Gb/s
        17 => 4, // 200 Gb/s
        20 => 5, // 50 Gb/s
        21 => 6, // 400 Gb/s
        r => r.wrapping_add(STAT_RATE_OFFSET),
    }
}

/// `mlx5_to_ib_rate_map`.
fn rate_unmap(v: u8) -> u8 {
    const R: [u8; 7] = [0, 12, 15, 16, 17, 20, 21];
    match R.get(usize::from(v)) {
        Some(&r) => r,
        None => v.wrapping_sub(STAT_RATE_OFFSET),
    }
}

/// `mlx5r_ib_rate`: `qpc` value of an `enum ib_rate`, stepping down to a rate the
/// device supports; `EINVAL` outside the enum.
pub fn stat_rate(rate: u8, support: u16) -> Result<u8, Errno> {
    // IB_RATE_PORT_CURRENT, IB_RATE_800_GBPS, IB_RATE_1600_GBPS.
    if rate == 0 || rate == 23 || rate == 25 {
        return Ok(0);
    }
    if !(2..=25).contains(&rate) {
        return Err(Errno::EINVAL);
    }
    let mut r = rate;
    while r != 0 && (1u32 << rate_map(r).min(31)) & u32::from(support) == 0 {
        r -= 1;
    }
    Ok(rate_map(r))
}

/// `fls(n - 1)` of a non-zero count: log2 rounded up.
fn log_ceil(n: u8) -> u8 {
    (u8::BITS - (n - 1).leading_zeros()) as u8
}

/// The address path of `qpc` (`pri`: primary, else secondary).
fn path_field(pri: bool) -> crate::ifc::field::F<crate::ifc::field::Bytes, qpc::Layout> {
    if pri {
        qpc::PRIMARY_ADDRESS_PATH
    } else {
        qpc::SECONDARY_ADDRESS_PATH
    }
}

/// A value that does not fit its context field: `EINVAL` (the caller's value was out of
/// the PRM's range; upstream's `MLX5_SET` would have kept only its low bits).
fn too_wide(_: Overflow) -> Errno {
    Errno::EINVAL
}

/// The address path `pri` of a QP context being written.
fn path_mut<'a>(
    c: &'a mut MsgMut<'_, qpc::Layout>,
    pri: bool,
) -> Result<MsgMut<'a, ads::Layout>, Errno> {
    // `qpc`'s paths are `ads` (checked against the header by emu/tests/ifc_vs_header.rs).
    c.nested::<ads::Layout>(path_field(pri))
        .ok_or(Errno::EINVAL)
}

/// `mlx5_set_path` for an InfiniBand address.
fn set_path(
    p: &mut MsgMut<'_, ads::Layout>,
    ah: &AhAttr,
    port: u8,
    m: u32,
    pkey_index: u16,
    timeout: u8,
    caps: &ModifyCaps,
) -> Result<(), Errno> {
    if m & mask::PKEY_INDEX != 0 {
        p.set(ads::PKEY_INDEX, pkey_index).map_err(too_wide)?;
    }
    let grh = ah.is_global != 0;
    if grh && u32::from(ah.sgid_index) >= caps.gid_tbl_len {
        return Err(Errno::EINVAL);
    }
    p.set(ads::FL, false).map_err(too_wide)?;
    p.set(ads::FREE_AR, false).map_err(too_wide)?;
    p.set(ads::RLID, ah.dlid).map_err(too_wide)?;
    p.set(ads::MLID, ah.src_path_bits).map_err(too_wide)?;
    p.set(ads::GRH, grh).map_err(too_wide)?;
    p.set(ads::SL, ah.sl).map_err(too_wide)?;
    if grh {
        p.set(ads::SRC_ADDR_INDEX, ah.sgid_index)
            .map_err(too_wide)?;
        p.set(ads::HOP_LIMIT, ah.hop_limit).map_err(too_wide)?;
        p.set(ads::TCLASS, ah.traffic_class).map_err(too_wide)?;
        p.set(ads::FLOW_LABEL, ah.flow_label).map_err(too_wide)?;
        // 16 bytes each (the field is 0x80 bits).
        for (d, g) in p.bytes_mut(ads::RGID_RIP).iter_mut().zip(ah.dgid) {
            *d = g;
        }
    }
    let rate = stat_rate(ah.static_rate, caps.stat_rate_support)?;
    p.set(ads::STAT_RATE, rate).map_err(too_wide)?;
    p.set(ads::VHCA_PORT_NUM, port).map_err(too_wide)?;
    if m & mask::TIMEOUT != 0 {
        p.set(ads::ACK_TIMEOUT, timeout).map_err(too_wide)?;
    }
    Ok(())
}

/// The driver part of modify_qp (see the module doc): `a` with `cur_qp_state` and
/// `qp_state` resolved by the shim, which has checked them with
/// `ib_modify_qp_is_ok()`. `Ok(None)`: nothing to send (RESET to RESET).
///
/// # Errors
///
/// `EOPNOTSUPP` for attribute bits beyond the standard ones, RATE_LIMIT, or atomic
/// access the device has no atomic mode for; `EINVAL` for a port, P_Key index,
/// RDMA-read depth, state, path MTU, rate or address out of range, or a value wider
/// than its QP context field.
pub fn plan_modify(
    qp: &QpShadow,
    a: &QpAttr,
    caps: &ModifyCaps,
) -> Result<Option<ModifyPlan>, Errno> {
    let m = a.attr_mask;
    if m & !(mask::STANDARD | mask::RATE_LIMIT) != 0 || m & mask::RATE_LIMIT != 0 {
        return Err(Errno::EOPNOTSUPP);
    }
    if m & mask::PORT != 0 && (a.port_num == 0 || a.port_num > caps.num_ports) {
        return Err(Errno::EINVAL);
    }
    if m & mask::PKEY_INDEX != 0 && a.pkey_index >= caps.pkey_tbl_len {
        return Err(Errno::EINVAL);
    }
    let res = 1u32 << caps.log_max_ra_res_qp.min(31);
    let req = 1u32 << caps.log_max_ra_req_qp.min(31);
    if m & mask::MAX_QP_RD_ATOMIC != 0 && u32::from(a.max_rd_atomic) > res {
        return Err(Errno::EINVAL);
    }
    if m & mask::MAX_DEST_RD_ATOMIC != 0 && u32::from(a.max_dest_rd_atomic) > req {
        return Err(Errno::EINVAL);
    }
    let cur = to_hw_state(a.cur_qp_state).ok_or(Errno::EINVAL)?;
    let new = to_hw_state(a.qp_state).ok_or(Errno::EINVAL)?;
    if cur == hw_state::RST && new == hw_state::RST {
        return Ok(None);
    }
    let mut ctx = [0u8; QPC_BYTES];
    let mut c = MsgMut::<qpc::Layout>::of_array(&mut ctx);
    c.set(qpc::ST, qp.ty.st()).map_err(too_wide)?;
    let pm = if m & mask::PATH_MIG_STATE != 0 {
        match a.path_mig_state {
            1 => pm::REARM,
            2 => pm::ARMED,
            _ => pm::MIGRATED,
        }
    } else {
        pm::MIGRATED
    };
    c.set(qpc::PM_STATE, pm).map_err(too_wide)?;
    if qp.ty.is_sqp() {
        c.set(qpc::MTU, 1).map_err(too_wide)?;
        c.set(qpc::LOG_MSG_MAX, 8).map_err(too_wide)?;
    } else if qp.ty == QpType::Ud {
        c.set(qpc::MTU, 5).map_err(too_wide)?;
        c.set(qpc::LOG_MSG_MAX, 12).map_err(too_wide)?;
    } else if m & mask::PATH_MTU != 0 {
        if !(1..=5).contains(&a.path_mtu) {
            return Err(Errno::EINVAL);
        }
        c.put(qpc::MTU, a.path_mtu).map_err(too_wide)?;
        c.set(qpc::LOG_MSG_MAX, caps.log_max_msg)
            .map_err(too_wide)?;
    }
    if m & mask::DEST_QPN != 0 {
        c.set(qpc::REMOTE_QPN, a.dest_qp_num).map_err(too_wide)?;
    }
    {
        let mut p = path_mut(&mut c, true)?;
        if m & mask::PKEY_INDEX != 0 {
            p.set(ads::PKEY_INDEX, a.pkey_index).map_err(too_wide)?;
        }
        if qp.ty.is_sqp() {
            p.set(ads::VHCA_PORT_NUM, qp.port).map_err(too_wide)?;
        }
        if m & mask::PORT != 0 {
            p.set(ads::VHCA_PORT_NUM, a.port_num).map_err(too_wide)?;
        }
        if m & mask::AV != 0 {
            let port = if m & mask::PORT != 0 {
                a.port_num
            } else {
                qp.port
            };
            set_path(&mut p, &a.ah_attr, port, m, a.pkey_index, a.timeout, caps)?;
        }
        if m & mask::TIMEOUT != 0 {
            p.set(ads::ACK_TIMEOUT, a.timeout).map_err(too_wide)?;
        }
    }
    if m & mask::ALT_PATH != 0 {
        let am = m | mask::PKEY_INDEX | mask::TIMEOUT;
        set_path(
            &mut path_mut(&mut c, false)?,
            &a.alt_ah_attr,
            a.alt_port_num,
            am,
            a.alt_pkey_index,
            a.alt_timeout,
            caps,
        )?;
    }
    c.set(qpc::PD, qp.pdn).map_err(too_wide)?;
    if let Some(n) = qp.cqn_snd {
        c.set(qpc::CQN_SND, n).map_err(too_wide)?;
    }
    if let Some(n) = qp.cqn_rcv {
        c.set(qpc::CQN_RCV, n).map_err(too_wide)?;
    }
    c.set(qpc::LOG_ACK_REQ_FREQ, ACK_REQ_FREQ)
        .map_err(too_wide)?;
    if m & mask::RNR_RETRY != 0 {
        c.set(qpc::RNR_RETRY, a.rnr_retry).map_err(too_wide)?;
    }
    if m & mask::RETRY_CNT != 0 {
        c.set(qpc::RETRY_COUNT, a.retry_cnt).map_err(too_wide)?;
    }
    if m & mask::MAX_QP_RD_ATOMIC != 0 && a.max_rd_atomic != 0 {
        c.set(qpc::LOG_SRA_MAX, log_ceil(a.max_rd_atomic))
            .map_err(too_wide)?;
    }
    if m & mask::SQ_PSN != 0 {
        c.set(qpc::NEXT_SEND_PSN, a.sq_psn).map_err(too_wide)?;
    }
    if m & mask::MAX_DEST_RD_ATOMIC != 0 && a.max_dest_rd_atomic != 0 {
        c.set(qpc::LOG_RRA_MAX, log_ceil(a.max_dest_rd_atomic))
            .map_err(too_wide)?;
    }
    if m & (mask::ACCESS_FLAGS | mask::MAX_DEST_RD_ATOMIC) != 0 {
        let depth = if m & mask::MAX_DEST_RD_ATOMIC != 0 {
            a.max_dest_rd_atomic
        } else {
            qp.resp_depth
        };
        let mut flags = if m & mask::ACCESS_FLAGS != 0 {
            a.qp_access_flags
        } else {
            qp.atomic_rd_en
        };
        if depth == 0 {
            flags &= access::REMOTE_WRITE;
        }
        c.set(qpc::RRE, flags & access::REMOTE_READ != 0)
            .map_err(too_wide)?;
        if flags & access::REMOTE_ATOMIC != 0 {
            let mode = caps.atomic_mode.ok_or(Errno::EOPNOTSUPP)?;
            c.set(qpc::RAE, true).map_err(too_wide)?;
            c.set(qpc::ATOMIC_MODE, mode).map_err(too_wide)?;
        }
        c.set(qpc::RWE, flags & access::REMOTE_WRITE != 0)
            .map_err(too_wide)?;
    }
    if m & mask::MIN_RNR_TIMER != 0 {
        c.set(qpc::MIN_RNR_NAK, a.min_rnr_timer).map_err(too_wide)?;
    }
    if m & mask::RQ_PSN != 0 {
        c.set(qpc::NEXT_RCV_PSN, a.rq_psn).map_err(too_wide)?;
    }
    if m & mask::QKEY != 0 {
        c.set(qpc::Q_KEY, a.qkey).map_err(too_wide)?;
    }
    let rst2init = cur == hw_state::RST && new == hw_state::INIT;
    if qp.rq_wqe_cnt != 0 && rst2init {
        c.set(qpc::DBR_ADDR, qp.db_dma).map_err(too_wide)?;
    }
    if rst2init {
        c.set(qpc::COUNTER_SET_ID, 0).map_err(too_wide)?;
        if !qp.user {
            c.set(qpc::RLKY, true).map_err(too_wide)?;
        }
    }
    let op = transition_op(cur, new).ok_or(Errno::EINVAL)?;
    let opt_mask = mask_to_optpar(m) & allowed_optpar(cur, new, qp.ty);
    Ok(Some(ModifyPlan {
        op,
        opt_mask,
        qpc: ctx,
    }))
}

/// What a successful transition changes in the shadow (upstream after the command).
pub fn after_modify(qp: &mut QpShadow, a: &QpAttr) {
    let m = a.attr_mask;
    if m & mask::ACCESS_FLAGS != 0 {
        qp.atomic_rd_en = a.qp_access_flags;
    }
    if m & mask::MAX_DEST_RD_ATOMIC != 0 {
        qp.resp_depth = a.max_dest_rd_atomic;
    }
    if m & mask::PORT != 0 {
        qp.port = a.port_num;
    }
    if m & mask::ALT_PATH != 0 {
        qp.alt_port = a.alt_port_num;
    }
}

/// `to_rdma_ah_attr` of an address path (zero when its port is 0 or past the
/// device's).
fn ah_of(p: &Msg<'_, ads::Layout>, num_ports: u8) -> AhAttr {
    let port = p.get(ads::VHCA_PORT_NUM);
    let mut ah = AhAttr::default();
    if port == 0 || port > num_ports {
        return ah;
    }
    ah.port_num = port;
    ah.sl = p.get(ads::SL);
    ah.dlid = p.get(ads::RLID);
    ah.src_path_bits = p.get(ads::MLID);
    ah.static_rate = rate_unmap(p.get(ads::STAT_RATE));
    if p.get(ads::GRH) {
        ah.is_global = 1;
        ah.flow_label = p.get(ads::FLOW_LABEL);
        ah.sgid_index = p.get(ads::SRC_ADDR_INDEX);
        ah.hop_limit = p.get(ads::HOP_LIMIT);
        ah.traffic_class = p.get(ads::TCLASS);
        for (d, g) in ah.dgid.iter_mut().zip(p.bytes(ads::RGID_RIP)) {
            *d = *g;
        }
    }
    ah
}

/// `query_qp_attr`: the attributes of a QUERY_QP context `ctx` (the `cap` fields are
/// the caller's). `EPROTO` for a state outside the PRM's or a short context.
pub fn query_attr(ty: QpType, ctx: &[u8], num_ports: u8) -> Result<QpAttr, Errno> {
    let c = Msg::<qpc::Layout>::new(ctx).ok_or(Errno::EPROTO)?;
    let pri = c
        .nested::<ads::Layout>(path_field(true))
        .ok_or(Errno::EPROTO)?;
    let alt = c
        .nested::<ads::Layout>(path_field(false))
        .ok_or(Errno::EPROTO)?;
    let hw = c.get(qpc::STATE);
    let st = to_ib_state(hw).ok_or(Errno::EPROTO)?;
    let mut a = QpAttr {
        qp_state: st,
        cur_qp_state: st,
        sq_draining: u8::from(hw == hw_state::SQ_DRAINING),
        path_mtu: c.get(qpc::MTU).into(),
        path_mig_state: match c.get(qpc::PM_STATE) {
            pm::ARMED => 2,
            pm::REARM => 1,
            _ => 0,
        },
        qkey: c.get(qpc::Q_KEY),
        rq_psn: c.get(qpc::NEXT_RCV_PSN),
        sq_psn: c.get(qpc::NEXT_SEND_PSN),
        dest_qp_num: c.get(qpc::REMOTE_QPN),
        ..QpAttr::default()
    };
    if c.get(qpc::RRE) {
        a.qp_access_flags |= access::REMOTE_READ;
    }
    if c.get(qpc::RWE) {
        a.qp_access_flags |= access::REMOTE_WRITE;
    }
    if c.get(qpc::RAE) {
        a.qp_access_flags |= access::REMOTE_ATOMIC;
    }
    a.max_rd_atomic = 1u8 << c.get(qpc::LOG_SRA_MAX).min(7);
    a.max_dest_rd_atomic = 1u8 << c.get(qpc::LOG_RRA_MAX).min(7);
    a.min_rnr_timer = c.get(qpc::MIN_RNR_NAK);
    a.retry_cnt = c.get(qpc::RETRY_COUNT);
    a.rnr_retry = c.get(qpc::RNR_RETRY);
    if ty.connected() {
        a.ah_attr = ah_of(&pri, num_ports);
        a.alt_ah_attr = ah_of(&alt, num_ports);
        a.alt_pkey_index = alt.get(ads::PKEY_INDEX);
        a.alt_port_num = alt.get(ads::VHCA_PORT_NUM);
    }
    a.pkey_index = pri.get(ads::PKEY_INDEX);
    a.port_num = pri.get(ads::VHCA_PORT_NUM);
    a.timeout = pri.get(ads::ACK_TIMEOUT);
    a.alt_timeout = alt.get(ads::ACK_TIMEOUT);
    Ok(a)
}

/// `get_atomic_mode` from cap `atomic` and the atomic caps' `atomic_operations` and
/// `atomic_size_qp`.
pub fn atomic_mode(atomic: bool, operations: u16, size_qp: u16) -> Option<u8> {
    if !atomic {
        return None;
    }
    let mut mode: i32 = -1;
    // Extended compare-swap or fetch-add (bits 2 and 3).
    if operations & 0b1100 != 0 {
        let sizes = size_qp & 0x1ff;
        if sizes != 0 {
            let log = 15 - sizes.leading_zeros() as i32;
            mode = if log > 3 { log } else { 3 };
        }
    }
    if mode <= 0 && operations & 0b11 == 0b11 {
        mode = 1;
    }
    u8::try_from(mode).ok().filter(|&m| m != 0)
}
