//! Queue pair commands: CREATE_QP, DESTROY_QP, QUERY_QP and the state transitions
//! (the state machine itself is in `qp_state`).
//!
//! Rules and sources: emu/README.md, "Verbs objects".

use super::qp_state::{self, opt, st, state};
use super::rsc::{bad_res, check_dbr, pages_for, read_pas, Qp};
use super::util::{bad_param, get, need_out, put, CmdErr, CmdResult};
use super::{syndrome, Env, Firmware};
use crate::ifc::caps::cmd_hca_cap as g;
use crate::ifc::field::Field;
use crate::ifc::opcodes::Opcode;
use crate::ifc::qp::{self as q, qpc};
use crate::ifc::status::CmdStatus;

/// Byte offset of the QP context in CREATE_QP / transition inputs and QUERY_QP output.
const QPC_OFF: usize = q::create_qp_in::QPC.raw().byte_off();
/// Byte offset of `pas[]` in CREATE_QP input and QUERY_QP output.
const PAS_OFF: usize = q::create_qp_in::PAS.raw().byte_off();

/// `qpc.rq_type` values (upstream `MLX5_NON_ZERO_RQ`, `MLX5_SRQ_RQ`, `MLX5_CRQ_RQ`,
/// `MLX5_ZERO_LEN_RQ`).
mod rq_type {
    pub const REGULAR: u8 = 0;
    pub const SRQ: u8 = 1;
    pub const ZERO_LEN: u8 = 3;
}

/// `qpc.ulp_stateless_offload_mode` of an IPoIB underlay QP (upstream
/// `MLX5_QP_ENHANCED_ULP_STATELESS_MODE`).
const ULP_MODE_ENHANCED: u64 = 2;

/// A send WQE basic block (upstream `MLX5_SEND_WQE_BB`).
pub const SEND_WQE_BB: u64 = 64;

fn cx(ctx: &[u8], f: impl Into<Field>) -> u64 {
    f.into().get(ctx).unwrap_or(0)
}

/// The primary address path's fields the transitions name, placed in `qpc` (its
/// `primary_address_path` is an `ads`: checked when the constants are evaluated).
mod pri {
    use crate::ifc::field::Field;
    use crate::ifc::qp::{ads, qpc};
    pub(super) const PKEY_INDEX: Field = ads::PKEY_INDEX.within(qpc::PRIMARY_ADDRESS_PATH).raw();
    pub(super) const ACK_TIMEOUT: Field = ads::ACK_TIMEOUT.within(qpc::PRIMARY_ADDRESS_PATH).raw();
    pub(super) const VHCA_PORT_NUM: Field =
        ads::VHCA_PORT_NUM.within(qpc::PRIMARY_ADDRESS_PATH).raw();
}

/// Copies field `f` from `src` to `dst` (both `qpc`).
fn copy(dst: &mut [u8], src: &[u8], f: Field) {
    if f.bits <= 64 && f.bits != 0 {
        let _ = f.set(dst, f.get(src).unwrap_or(0));
    } else if let (Some(s), Some(d)) = (f.bytes(src), f.bytes_mut(dst)) {
        d.copy_from_slice(s);
    }
}

/// The context fields each optional parameter carries (PRM `opt_param_mask` table).
fn opt_fields(bit: u32) -> Vec<Field> {
    fn r<T, S>(f: crate::ifc::field::F<T, S>) -> Field {
        f.raw()
    }
    match bit {
        opt::ALT_ADDR_PATH => vec![r(qpc::SECONDARY_ADDRESS_PATH)],
        opt::RRE => vec![r(qpc::RRE)],
        opt::RAE => vec![r(qpc::RAE), r(qpc::ATOMIC_MODE)],
        opt::RWE => vec![r(qpc::RWE)],
        opt::PKEY_INDEX => vec![pri::PKEY_INDEX],
        opt::Q_KEY => vec![r(qpc::Q_KEY)],
        opt::RNR_TIMEOUT => vec![r(qpc::MIN_RNR_NAK)],
        opt::PRIMARY_ADDR_PATH => vec![r(qpc::PRIMARY_ADDRESS_PATH)],
        opt::SRA_MAX => vec![r(qpc::LOG_SRA_MAX)],
        opt::RRA_MAX => vec![r(qpc::LOG_RRA_MAX)],
        opt::PM_STATE => vec![r(qpc::PM_STATE)],
        opt::RETRY_COUNT => vec![r(qpc::RETRY_COUNT)],
        opt::RNR_RETRY => vec![r(qpc::RNR_RETRY)],
        opt::ACK_TIMEOUT => vec![pri::ACK_TIMEOUT],
        opt::LAG_TX_AFF => vec![r(qpc::LAG_TX_PORT_AFFINITY)],
        opt::PRI_PORT => vec![pri::VHCA_PORT_NUM],
        opt::SRQN => vec![r(qpc::SRQN_RMPN_XRQN)],
        opt::CQN_RCV => vec![r(qpc::CQN_RCV)],
        opt::PP_INDEX => vec![r(qpc::PACKET_PACING_RATE_LIMIT_INDEX)],
        opt::COUNTER_SET_ID => vec![r(qpc::COUNTER_SET_ID)],
        _ => vec![],
    }
}

/// Connected service types (RC, UC, XRC): the ones INIT→RTR and RTR→RTS connect.
fn connected(st: u8) -> bool {
    matches!(st, st::RC | st::UC | st::XRC)
}

/// The context fields a transition always takes (the PRM's required parameters).
fn required_fields(op: Opcode, st: u8) -> Vec<Field> {
    let mut v = Vec::new();
    match op {
        Opcode::RST2INIT_QP => {
            v.extend([
                pri::VHCA_PORT_NUM,
                pri::PKEY_INDEX,
                qpc::PM_STATE.raw(),
                qpc::COUNTER_SET_ID.raw(),
                qpc::LAG_TX_PORT_AFFINITY.raw(),
            ]);
            if connected(st) {
                v.extend([qpc::RRE.raw(), qpc::RWE.raw(), qpc::RAE.raw()]);
                v.push(qpc::ATOMIC_MODE.raw());
            } else {
                v.push(qpc::Q_KEY.raw());
            }
        }
        Opcode::INIT2RTR_QP if connected(st) => v.extend([
            qpc::MTU.raw(),
            qpc::LOG_MSG_MAX.raw(),
            qpc::REMOTE_QPN.raw(),
            qpc::PRIMARY_ADDRESS_PATH.raw(),
            qpc::NEXT_RCV_PSN.raw(),
            qpc::LOG_RRA_MAX.raw(),
            qpc::MIN_RNR_NAK.raw(),
            qpc::LOG_ACK_REQ_FREQ.raw(),
        ]),
        Opcode::RTR2RTS_QP => {
            v.push(qpc::NEXT_SEND_PSN.raw());
            if connected(st) {
                v.extend([
                    qpc::LOG_SRA_MAX.raw(),
                    qpc::RETRY_COUNT.raw(),
                    qpc::RNR_RETRY.raw(),
                    pri::ACK_TIMEOUT,
                ]);
            }
        }
        _ => {}
    }
    v
}

/// (qpn, opt_param_mask, qpc) of a transition command's input; the last two `None`
/// for 2ERR / 2RST (header only).
fn modify_fields(op: Opcode) -> Option<(Field, Option<(Field, Field)>)> {
    macro_rules! m {
        ($s:ident) => {
            (
                q::$s::QPN.raw(),
                Some((q::$s::OPT_PARAM_MASK.raw(), q::$s::QPC.raw())),
            )
        };
    }
    Some(match op {
        Opcode::RST2INIT_QP => m!(rst2init_qp_in),
        Opcode::INIT2INIT_QP => m!(init2init_qp_in),
        Opcode::INIT2RTR_QP => m!(init2rtr_qp_in),
        Opcode::RTR2RTS_QP => m!(rtr2rts_qp_in),
        Opcode::RTS2RTS_QP => m!(rts2rts_qp_in),
        Opcode::SQERR2RTS_QP => m!(sqerr2rts_qp_in),
        Opcode::SQD_RTS_QP => m!(sqd2rts_qp_in),
        Opcode::_2ERR_QP => (q::qp_2err_in::QPN.raw(), None),
        Opcode::_2RST_QP => (q::qp_2rst_in::QPN.raw(), None),
        _ => return None,
    })
}

fn bad_qp_state() -> CmdErr {
    (CmdStatus::BAD_QP_STATE_ERR, syndrome::BAD_STATE)
}

impl Firmware {
    /// A referenced CQ must exist; `required` = the QP has that queue.
    fn qp_cq(&mut self, what: &str, cqn: u32, required: bool) -> Result<Option<u32>, CmdErr> {
        if cqn == 0 && !required {
            return Ok(None);
        }
        if !self.objs.cqs.contains_key(&cqn) {
            self.stats
                .violation(format!("CREATE_QP: unknown {what} CQ {cqn}"));
            return Err(bad_res());
        }
        Ok(Some(cqn))
    }

    pub(super) fn create_qp(&mut self, env: &Env<'_>, input: &[u8], out: &mut [u8]) -> CmdResult {
        use q::create_qp_in as c;
        self.check_uid(input)?;
        let ctx = c::QPC
            .raw()
            .bytes(input)
            .ok_or((CmdStatus::BAD_INP_LEN_ERR, syndrome::BAD_INPUT_LEN))?
            .to_vec();
        // Requested QPNs, qpc extensions and umem-backed queues need caps this device
        // does not advertise (`mlx5_ifc.h` create_qp_in; DEVX not modelled).
        if get(input, c::INPUT_QPN)? != 0
            || get(input, c::QPC_EXT)? != 0
            || get(input, c::WQ_UMEM_VALID)? != 0
            || cx(&ctx, qpc::DBR_UMEM_VALID) != 0
        {
            return Err(bad_param());
        }
        let st = cx(&ctx, qpc::ST) as u8;
        // Service types: the ones this model runs, each needing its cap where one
        // exists (`mlx5_ifc.h` cmd_hca_cap rc/uc/ud/xrc).
        let cap = match st {
            st::RC => self.caps.cur(g::RC.raw()),
            st::UC => self.caps.cur(g::UC.raw()),
            st::UD => self.caps.cur(g::UD.raw()),
            st::XRC => self.caps.cur(g::XRC.raw()),
            _ if st::MODELLED.contains(&st) => 1,
            _ => 0,
        };
        if cap == 0 {
            self.stats
                .violation(format!("CREATE_QP: service type {st:#x} not supported"));
            return Err(bad_param());
        }
        // An IPoIB underlay QP (UD, enhanced ULP stateless offload mode) has no queues
        // of its own: upstream `mlx5i_create_underlay_qp` names no PD, CQ or buffer.
        let underlay =
            st == st::UD && cx(&ctx, qpc::ULP_STATELESS_OFFLOAD_MODE) == ULP_MODE_ENHANCED;
        let pd = cx(&ctx, qpc::PD) as u32;
        // The UMR QP works on behalf of the mkeys it updates: upstream leaves its `pd`
        // 0 (`create_kernel_qp` sets `pd` for every other type), so it needs none.
        let pd_optional = st == st::REG_UMR || underlay;
        let pd_ok = self.objs.pds.contains(pd) || (pd_optional && pd == 0);
        if !pd_ok {
            self.stats.violation(format!("CREATE_QP: unknown PD {pd}"));
            return Err(bad_res());
        }
        let no_sq = cx(&ctx, qpc::NO_SQ) != 0 || underlay;
        let rqt = cx(&ctx, qpc::RQ_TYPE) as u8;
        if ![rq_type::REGULAR, rq_type::SRQ, rq_type::ZERO_LEN].contains(&rqt) {
            return Err(bad_param());
        }
        let rqt = if underlay { rq_type::ZERO_LEN } else { rqt };
        let max_sz = self.caps.cur(g::LOG_MAX_QP_SZ.raw());
        let log_rq = cx(&ctx, qpc::LOG_RQ_SIZE);
        let log_sq = cx(&ctx, qpc::LOG_SQ_SIZE);
        if log_rq > max_sz || log_sq > max_sz {
            self.stats.violation(format!(
                "CREATE_QP: queue size above log_max_qp_sz {max_sz}"
            ));
            return Err(bad_param());
        }
        let cqn_snd = self.qp_cq("send", cx(&ctx, qpc::CQN_SND) as u32, !no_sq)?;
        let cqn_rcv = self.qp_cq(
            "receive",
            cx(&ctx, qpc::CQN_RCV) as u32,
            rqt == rq_type::REGULAR,
        )?;
        let srqn = if rqt == rq_type::SRQ {
            let n = cx(&ctx, qpc::SRQN_RMPN_XRQN) as u32;
            if !self.objs.srqs.contains_key(&n) {
                self.stats.violation(format!("CREATE_QP: unknown SRQ {n}"));
                return Err(bad_res());
            }
            Some(n)
        } else {
            None
        };
        let x = cx(&ctx, qpc::XRCD) as u32;
        let xrcd = if x != 0 || st == st::XRC {
            if !self.objs.xrcds.contains(x) {
                self.stats.violation(format!("CREATE_QP: unknown XRCD {x}"));
                return Err(bad_res());
            }
            Some(x)
        } else {
            None
        };
        let rq_bytes = if rqt == rq_type::REGULAR {
            (1u64 << log_rq) << (cx(&ctx, qpc::LOG_RQ_STRIDE) + 4)
        } else {
            0
        };
        let sq_bytes = if no_sq {
            0
        } else {
            (1u64 << log_sq) * SEND_WQE_BB
        };
        let bytes = rq_bytes + sq_bytes;
        let page = 4096u64 << cx(&ctx, qpc::LOG_PAGE_SIZE);
        let pas = if bytes == 0 {
            Vec::new()
        } else {
            // page_offset counts page_size / 64 units (upstream
            // `mlx5_umem_find_best_quantized_pgoff`, scale 64).
            let offset = cx(&ctx, qpc::PAGE_OFFSET) * (page / 64);
            let n = pages_for(bytes, offset, page).ok_or_else(bad_param)?;
            let pas = read_pas(self, env, "CREATE_QP", input, PAS_OFF, n, page.min(bytes))?;
            check_dbr(self, env, "CREATE_QP", cx(&ctx, qpc::DBR_ADDR))?;
            pas
        };
        if !no_sq {
            let uar = cx(&ctx, qpc::UAR_PAGE) as u32;
            if !self.uar_owned(uar) {
                self.stats
                    .violation(format!("CREATE_QP with unallocated UAR {uar}"));
                return Err(bad_param());
            }
        }
        let lim = self.cap_limit(g::LOG_MAX_QP);
        let qpn = self.objs.qpns.alloc(lim)?;
        put(out, q::create_qp_out::QPN, u64::from(qpn))?;
        let mut ctx = ctx;
        let _ = qpc::STATE.raw().set(&mut ctx, u64::from(state::RST));
        self.objs.destroyed_qp_uar.remove(&qpn);
        self.objs.qps.insert(
            qpn,
            Qp {
                st,
                state: state::RST,
                ctx,
                pas,
                pd,
                cqn_snd,
                cqn_rcv,
                srqn,
                xrcd,
                sq_consumed: 0,
                dp_send: Default::default(),
                dp_recv: Default::default(),
            },
        );
        self.created(env, "qp");
        Ok(())
    }

    pub(super) fn destroy_qp(&mut self, env: &Env<'_>, input: &[u8]) -> CmdResult {
        let qpn = get(input, q::destroy_qp_in::QPN)? as u32;
        // A QP may be destroyed in any state (PRM DESTROY_QP; upstream moves it to RST
        // first only for its own bookkeeping).
        let Some(qp) = self.objs.qps.remove(&qpn) else {
            return Err(bad_res());
        };
        let uar = qpc::UAR_PAGE.raw().get(&qp.ctx).unwrap_or(0) as u32;
        self.objs.destroyed_qp_uar.insert(qpn, uar);
        self.objs.qpns.free(qpn);
        self.destroyed(env, "qp");
        Ok(())
    }

    pub(super) fn query_qp(&mut self, input: &[u8], out: &mut [u8]) -> CmdResult {
        let qpn = get(input, q::query_qp_in::QPN)? as u32;
        let qp = self.objs.qps.get(&qpn).ok_or_else(bad_res)?;
        need_out(out, PAS_OFF)?;
        let mut ctx = qp.ctx.clone();
        let _ = qpc::STATE.raw().set(&mut ctx, u64::from(qp.state));
        let _ = qpc::HW_SQ_WQEBB_COUNTER
            .raw()
            .set(&mut ctx, u64::from(qp.sq_consumed));
        // The PSNs the data path has reached (`dp/send/`, `dp/transport/`).
        if qp.dp_send.started {
            let _ = qpc::NEXT_SEND_PSN
                .raw()
                .set(&mut ctx, u64::from(qp.dp_send.next_psn));
        }
        if qp.dp_send.resp.started {
            let _ = qpc::NEXT_RCV_PSN
                .raw()
                .set(&mut ctx, u64::from(qp.dp_send.resp.epsn));
        }
        out[QPC_OFF..QPC_OFF + ctx.len()].copy_from_slice(&ctx);
        for (i, a) in qp.pas.iter().enumerate() {
            let off = PAS_OFF + 8 * i;
            match out.get_mut(off..off + 8) {
                Some(b) => b.copy_from_slice(&a.to_be_bytes()),
                None => break,
            }
        }
        Ok(())
    }

    /// One of the state-transition commands.
    pub(super) fn modify_qp(&mut self, op: Opcode, input: &[u8]) -> CmdResult {
        let (qpn_f, rest) = modify_fields(op).ok_or_else(bad_param)?;
        let qpn = get(input, qpn_f)? as u32;
        let (qp_st, cur) = match self.objs.qps.get(&qpn) {
            Some(qp) => (qp.st, qp.state),
            None => return Err(bad_res()),
        };
        // The PRM state table: a command from a state it does not leave fails with
        // BAD_QP_STATE (0x10).
        let Some(to) = qp_state::next_state(op, cur) else {
            log::debug!("{} on QP {qpn} in state {}", op.name(), state::name(cur));
            return Err(bad_qp_state());
        };
        if let Some((mask_f, qpc_f)) = rest {
            let mask = get(input, mask_f)? as u32;
            let ctx = qpc_f
                .bytes(input)
                .ok_or((CmdStatus::BAD_INP_LEN_ERR, syndrome::BAD_INPUT_LEN))?;
            let allowed = qp_state::allowed_opt(op, qp_st);
            if mask & !allowed != 0 {
                self.stats.violation(format!(
                    "{} QP {qpn} st {qp_st:#x}: opt_param_mask {mask:#x} has bits {:#x} the transition does not take",
                    op.name(),
                    mask & !allowed
                ));
                if self.strict.qp_opt_param {
                    return Err(bad_param());
                }
            }
            // Required parameters with a value domain: the port (RST→INIT) and the
            // path MTU of a connected QP (INIT→RTR, `qpc.mtu` 1..5 = 256..4096).
            let num_ports = self.caps.cur(g::NUM_PORTS.raw());
            if op == Opcode::RST2INIT_QP {
                let port = cx(ctx, pri::VHCA_PORT_NUM);
                if port > num_ports {
                    return Err(bad_param());
                }
            }
            if op == Opcode::INIT2RTR_QP && connected(qp_st) {
                let mtu = cx(ctx, qpc::MTU);
                if !(1..=5).contains(&mtu) {
                    self.stats
                        .violation(format!("INIT2RTR QP {qpn}: mtu {mtu}"));
                    return Err(bad_param());
                }
            }
            let mut taken = required_fields(op, qp_st);
            let mut bit = 1u32;
            while bit != 0 {
                if mask & allowed & bit != 0 {
                    taken.extend(opt_fields(bit));
                }
                bit <<= 1;
            }
            let ctx = ctx.to_vec();
            let qp = self.objs.qps.get_mut(&qpn).ok_or_else(bad_res)?;
            for f in &taken {
                copy(&mut qp.ctx, &ctx, *f);
            }
        }
        let qp = self.objs.qps.get_mut(&qpn).ok_or_else(bad_res)?;
        // The receive side follows the state (`dp/recv.rs`).
        qp.dp_recv.on_state(qp.state, to);
        qp.state = to;
        if to == state::RST {
            qp.sq_consumed = 0;
            // The requester and responder start again from the context's PSNs
            // (`dp/send/`, `dp/transport/`).
            qp.dp_send = Default::default();
        }
        Ok(())
    }

    /// The device moves a QP on its own (a send error, a drained send queue): SQER or
    /// SQD from RTS, ERR from any state (control socket `qp_state`).
    pub fn device_qp_state(&mut self, qpn: u32, to: u8) -> Result<(), String> {
        let qp = self
            .objs
            .qps
            .get_mut(&qpn)
            .ok_or_else(|| format!("no QP {qpn}"))?;
        let ok = match to {
            state::SQER | state::SQD => qp.state == state::RTS,
            state::ERR => true,
            _ => false,
        };
        if !ok {
            return Err(format!(
                "the device does not move a QP from {} to {}",
                state::name(qp.state),
                state::name(to)
            ));
        }
        qp.dp_recv.on_state(qp.state, to);
        qp.state = to;
        Ok(())
    }
}
