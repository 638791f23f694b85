//! Firmware-initiated reset (sync reset) as upstream mlx5_core drives it
//! (`fw_reset.c`, `devlink.c` `mlx5_devlink_reload_fw_activate`): the capability bits it
//! checks (MCAM `mfrl` and `reset_state`, caps `general_notification_event`,
//! `pci_sync_for_fw_update_event`, `pcie_reset_using_hotreset_method`), MFRL queries and
//! writes, the PCI_SYNC_FOR_FW_UPDATE events, the fast teardown and the PCI reset that
//! brings the firmware to its power-on state. Each sequence is upstream's, step for step.

mod common;

use common::{create_eq, give_pages, input, Host};
use mlx5_emu::ifc::caps::{cmd_hca_cap as g, CAP_OFFSET};
use mlx5_emu::ifc::cmds::{teardown_hca_in, teardown_hca_out};
use mlx5_emu::ifc::eqe::{event_type, general_sub, Eqe};
use mlx5_emu::ifc::init_seg as is;
use mlx5_emu::ifc::opcodes::{cap_type, teardown_profile, Opcode};
use mlx5_emu::ifc::regs::{
    access_register_in, mcam_access_reg, mcam_features, mcam_off, mcam_reg, mfrl, mfrl_reg, reg_id,
    REG_DATA_OFFSET,
};
use mlx5_emu::ifc::status::CmdStatus;
use mlx5_emu::mem::GuestMemory;
use mlx5_emu::report::stats;
use serde_json::{json, Value};
use zerocopy::FromBytes;

const OP: fn(Opcode) -> u16 = |o| o as u16;
const BAD_SYS_STATE: u8 = CmdStatus::BAD_SYS_STATE_ERR as u8;

/// The async EQ upstream creates (GENERAL_EVENT in its mask with
/// `general_notification_event`) and the next entry to read.
struct Async {
    buf: u64,
    next: u32,
    uar: u32,
}

fn stat(h: &Host, path: &[&str]) -> Value {
    let mut v = stats(&h.dev);
    for k in path {
        v = v[*k].clone();
    }
    v
}

fn sync(h: &Host, k: &str) -> Value {
    stat(h, &["sync_reset", k])
}

fn query_cap(h: &mut Host, cur: bool) -> Vec<u8> {
    let op_mod = (cap_type::GENERAL << 1) | u16::from(cur);
    let out = h.ok(
        &input(16, OP(Opcode::QUERY_HCA_CAP), op_mod, &[]),
        16 + 4096,
    );
    out[CAP_OFFSET..CAP_OFFSET + 256].to_vec()
}

/// ACCESS_REG of `id` with `data` (register bytes); (status, register bytes out).
fn access_reg(h: &mut Host, id: u16, write: bool, data: &[u8]) -> (u8, Vec<u8>) {
    let mut inp = input(
        REG_DATA_OFFSET + data.len(),
        OP(Opcode::ACCESS_REG),
        u16::from(!write),
        &[(access_register_in::REGISTER_ID.raw(), u64::from(id))],
    );
    inp[REG_DATA_OFFSET..].copy_from_slice(data);
    let (st, _, out) = h.run(&inp, REG_DATA_OFFSET + data.len());
    (st, out[REG_DATA_OFFSET..].to_vec())
}

/// `mlx5_reg_mfrl_query`: (reset_level, reset_type, reset_state, pci_reset_req_method).
fn mfrl_query(h: &mut Host) -> (u8, u8, u8, u8) {
    let (st, out) = access_reg(h, reg_id::MFRL, false, &[0; mfrl_reg::BYTES]);
    assert_eq!(st, 0);
    let f = |f: mlx5_emu::ifc::field::Field| f.get(&out).unwrap() as u8;
    (
        f(mfrl_reg::RESET_LEVEL.raw()),
        f(mfrl_reg::RESET_TYPE.raw()),
        f(mfrl_reg::RESET_STATE.raw()),
        f(mfrl_reg::PCI_RESET_REQ_METHOD.raw()),
    )
}

/// `mlx5_reg_mfrl_set` / `mlx5_fw_reset_set_reset_sync`: the command's status.
fn mfrl_set(h: &mut Host, level: u8, type_sel: u8, resp: u8, start: bool) -> u8 {
    let mut d = [0u8; mfrl_reg::BYTES];
    for (f, v) in [
        (mfrl_reg::RESET_LEVEL.raw(), u64::from(level)),
        (mfrl_reg::RST_TYPE_SEL.raw(), u64::from(type_sel)),
        (mfrl_reg::PCI_SYNC_FOR_FW_UPDATE_RESP.raw(), u64::from(resp)),
        (
            mfrl_reg::PCI_SYNC_FOR_FW_UPDATE_START.raw(),
            u64::from(start),
        ),
    ] {
        f.set(&mut d, v).unwrap();
    }
    access_reg(h, reg_id::MFRL, true, &d).0
}

/// Upstream's bring-up as far as sync reset needs it: ENABLE_HCA, SET_HCA_CAP with the
/// bits `handle_hca_cap` sets when the maximum offers them (`sync` false: a driver that
/// does not, as ours), pages, INIT_HCA, the async EQ with GENERAL_EVENT.
fn bring_up(h: &mut Host, sync: bool) -> Async {
    h.ok(&input(16, OP(Opcode::ENABLE_HCA), 0, &[]), 16);
    let max = query_cap(h, false);
    let cur = query_cap(h, true);
    let mut set = input(16 + 4096, OP(Opcode::SET_HCA_CAP), 0, &[]);
    set[CAP_OFFSET..CAP_OFFSET + 256].copy_from_slice(&cur);
    if sync {
        for f in [
            g::PCI_SYNC_FOR_FW_UPDATE_EVENT.raw(),
            g::PCIE_RESET_USING_HOTRESET_METHOD.raw(),
        ] {
            assert_eq!(f.get(&max), Some(1), "{f:?} offered");
            f.set(&mut set[CAP_OFFSET..], 1).unwrap();
        }
    }
    h.ok(&set, 16);
    give_pages(h, 48);
    h.ok(&input(32, OP(Opcode::INIT_HCA), 0, &[]), 16);
    let cur = query_cap(h, true);
    assert_eq!(g::GENERAL_NOTIFICATION_EVENT.raw().get(&cur), Some(1));
    assert_eq!(
        g::PCI_SYNC_FOR_FW_UPDATE_EVENT.raw().get(&cur),
        Some(u64::from(sync))
    );
    let uar = h.alloc_uar();
    let mask = 1u64 << event_type::GENERAL_EVENT | 1u64 << event_type::PORT_CHANGE;
    let (eqn, buf) = create_eq(h, uar, 6, mask, 0);
    assert_ne!(eqn, 0xff);
    Async { buf, next: 0, uar }
}

/// The sync-reset states of the PCI_SYNC_FOR_FW_UPDATE events written since the last
/// call (`mlx5_sync_reset_events_handle`).
fn events(h: &Host, q: &mut Async) -> Vec<u8> {
    h.dev.step();
    let mut out = vec![];
    loop {
        let mut e = [0u8; 64];
        h.mem.read(q.buf + 64 * u64::from(q.next), &mut e).unwrap();
        let eqe = Eqe::read_from_bytes(&e).unwrap();
        if eqe.owner & 1 != 0 {
            return out;
        }
        q.next += 1;
        if eqe.type_ != event_type::GENERAL_EVENT {
            continue;
        }
        assert_eq!(eqe.sub_type, general_sub::PCI_SYNC_FOR_FW_UPDATE);
        out.push(eqe.data[general_sub::SYNC_RST_STATE_BYTE] & 0xf);
    }
}

fn nic_state(h: &Host) -> u32 {
    (h.read32(is::CMDQ_ADDR_L_SZ) >> 8) & 7
}

/// `mlx5_cmd_fast_teardown_hca`: TEARDOWN_HCA prepare-fast, nic_interface DISABLED,
/// read back until it shows.
fn fast_teardown(h: &mut Host) {
    let out = h.ok(
        &input(
            16,
            OP(Opcode::TEARDOWN_HCA),
            0,
            &[(
                teardown_hca_in::PROFILE.raw(),
                u64::from(teardown_profile::PREPARE_FAST_TEARDOWN),
            )],
        ),
        16,
    );
    assert_eq!(teardown_hca_out::STATE.raw().get(&out), Some(0));
    let l = h.read32(is::CMDQ_ADDR_L_SZ);
    h.write32(is::CMDQ_ADDR_L_SZ, (l & 0xffff_f000) | (1 << 8));
    h.dev.step();
    assert_eq!(nic_state(h), 1, "DISABLED");
}

/// `mlx5_load_one` after the reset: the queue address, ENABLE_HCA, pages, INIT_HCA.
fn load_again(h: &mut Host) {
    h.write32(is::CMDQ_ADDR_H, (h.queue >> 32) as u32);
    h.write32(is::CMDQ_ADDR_L_SZ, h.queue as u32);
    assert_eq!(
        h.run(&input(16, OP(Opcode::ENABLE_HCA), 0, &[]), 16).0,
        0,
        "the function comes up again"
    );
    give_pages(h, 48);
    h.ok(&input(32, OP(Opcode::INIT_HCA), 0, &[]), 16);
}

fn no_violations(h: &Host) {
    assert_eq!(
        stat(h, &["violations"]),
        0,
        "{}",
        stat(h, &["recent_violations"])
    );
}

#[test]
fn mcam_offers_mfrl_and_its_reset_state() {
    let mut h = Host::new();
    h.ok(&input(16, OP(Opcode::ENABLE_HCA), 0, &[]), 16);
    let max = query_cap(&mut h, false);
    assert_eq!(g::MCAM_REG.raw().get(&max), Some(1));
    // `mlx5_get_mcam_access_reg_group(dev, MLX5_MCAM_REGS_FIRST_128)` and feature group 0.
    let (st, out) = access_reg(&mut h, reg_id::MCAM, false, &[0; mcam_reg::BYTES]);
    assert_eq!(st, 0);
    let bit = |out: &[u8]| {
        (
            mcam_access_reg::MFRL
                .raw()
                .get(&out[mcam_off::ACCESS_REG_CAP_MASK..]),
            mcam_features::RESET_STATE
                .raw()
                .get(&out[mcam_off::FEATURE_CAP_MASK..]),
        )
    };
    assert_eq!(bit(&out), (Some(1), Some(1)));
    // Another group: the bits are not MFRL's.
    let mut other = [0u8; mcam_reg::BYTES];
    mcam_reg::ACCESS_REG_GROUP.raw().set(&mut other, 1).unwrap();
    mcam_reg::FEATURE_GROUP.raw().set(&mut other, 1).unwrap();
    let (_, out) = access_reg(&mut h, reg_id::MCAM, false, &other);
    assert_eq!(bit(&out), (Some(0), Some(0)));
}

#[test]
fn fw_activate_as_upstream_does_it() {
    let mut h = Host::new();
    let mut q = bring_up(&mut h, true);
    let held = stat(&h, &["pages", "held"]);
    assert_ne!(held, 0);
    // mlx5_devlink_reload_fw_activate: level 3 offered, full chip (no net-port-alive).
    let (level, rtype, state, method) = mfrl_query(&mut h);
    assert_ne!(level & mfrl::LEVEL3, 0);
    assert_eq!(level & mfrl::LEVEL0, 0, "no live patch");
    assert_eq!(rtype & mfrl::TYPE_NET_PORT_ALIVE, 0);
    assert_eq!(state, mfrl::STATE_IDLE);
    assert_eq!(method, mfrl::METHOD_HOT_RESET);
    // mlx5_fw_reset_set_reset_sync.
    assert_eq!(mfrl_set(&mut h, mfrl::LEVEL3, 0, 0, true), 0);
    assert_eq!(events(&h, &mut q), [general_sub::RST_REQUEST]);
    // A second start while this one negotiates: refused, and reset_state says why
    // (`mlx5_fw_reset_get_reset_state_err`: "Sync reset still in progress").
    assert_eq!(mfrl_set(&mut h, mfrl::LEVEL3, 0, 0, true), BAD_SYS_STATE);
    assert_eq!(mfrl_query(&mut h).2, mfrl::STATE_IN_NEGOTIATION);
    // mlx5_sync_reset_request_event: the method (hot-reset cap set), then the ack.
    assert_eq!(mfrl_query(&mut h).3, mfrl::METHOD_HOT_RESET);
    assert_eq!(mfrl_set(&mut h, mfrl::LEVEL3, 0, mfrl::RESP_ACK, false), 0);
    assert_eq!(events(&h, &mut q), [general_sub::RST_NOW]);
    assert_eq!(mfrl_query(&mut h).2, mfrl::STATE_RESET_IN_PROGRESS);
    assert_eq!(sync(&h, "phase"), "await_pci_reset");
    // mlx5_sync_reset_now_event: fast teardown, then the PCI reset (pci_reset_bus: QEMU
    // resets the device below the root port, vfio-user DEVICE_RESET).
    fast_teardown(&mut h);
    assert!(h.dev.reset(), "the PCI reset activates the firmware");
    assert_eq!(sync(&h, "activations"), 1);
    assert_eq!(sync(&h, "phase"), "idle");
    assert_eq!(
        stat(&h, &["fw_reset", "restarts"]),
        1,
        "the new firmware boots"
    );
    // Upstream mlx5_ib's kernel CQ consumers re-arm on the old UAR once the error state
    // runs their handlers (mlx5_ib_handle_internal_error): counted, not a violation.
    let db = u64::from(q.uar) * 4096 + 0x20;
    h.dev.bar0_write(db, &[0, 0, 0, 0, 0, 0, 0, 1]);
    h.dev.step();
    assert_eq!(stat(&h, &["uar_doorbells_after_stop"]), 1);
    // The firmware at its power-on state: nothing held, the function to enable again.
    assert_eq!(stat(&h, &["pages", "held"]), 0);
    assert_eq!(stat(&h, &["function", "enabled"]), false);
    assert_eq!(nic_state(&h), 0);
    // mlx5_load_one, then mlx5_fw_reset_verify_fw_complete: MFRL reset_state and the
    // init segment's rst_state (initializing bits 15:12) both 0.
    load_again(&mut h);
    assert_eq!(mfrl_query(&mut h).2, mfrl::STATE_IDLE);
    assert_eq!((h.read32(is::INITIALIZING) >> 12) & 0xf, 0);
    for (k, v) in [
        ("requests_function", 1),
        ("requests_refused", 1),
        ("request_events", 1),
        ("acks", 1),
        ("reset_now_events", 1),
        ("abort_events", 0),
        ("events_lost", 0),
    ] {
        assert_eq!(sync(&h, k), v, "{k}");
    }
    no_violations(&h);
}

#[test]
fn request_from_another_host_as_mlxfwreset() {
    let mut h = Host::new();
    let mut q = bring_up(&mut h, true);
    let r = mlx5_emu::control::handle(&h.dev, &json!({"cmd": "sync_reset"}));
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["phase"], "negotiation");
    assert_eq!(events(&h, &mut q), [general_sub::RST_REQUEST]);
    assert_eq!(mfrl_set(&mut h, mfrl::LEVEL3, 0, mfrl::RESP_ACK, false), 0);
    assert_eq!(events(&h, &mut q), [general_sub::RST_NOW]);
    fast_teardown(&mut h);
    assert!(h.dev.reset());
    load_again(&mut h);
    assert_eq!(sync(&h, "requests_other"), 1);
    assert_eq!(sync(&h, "activations"), 1);
    no_violations(&h);
}

#[test]
fn nack_abort_and_timeout() {
    let mut h = Host::new();
    let mut q = bring_up(&mut h, true);
    // A refusal ("PCI Sync FW Update Reset Nack"): no reset, nothing to abort (the
    // function never acked), reset_state NACK ("One of the hosts disabled reset").
    assert_eq!(mfrl_set(&mut h, mfrl::LEVEL3, 0, 0, true), 0);
    assert_eq!(events(&h, &mut q), [general_sub::RST_REQUEST]);
    assert_eq!(mfrl_set(&mut h, mfrl::LEVEL3, 0, mfrl::RESP_NACK, false), 0);
    assert_eq!(events(&h, &mut q), Vec::<u8>::new());
    assert_eq!(mfrl_query(&mut h).2, mfrl::STATE_NACK);
    // An answer outside a negotiation is refused.
    assert_eq!(
        mfrl_set(&mut h, mfrl::LEVEL3, 0, mfrl::RESP_ACK, false),
        BAD_SYS_STATE
    );
    // Acked, then the firmware gives up (control abort): RESET_ABORT.
    assert_eq!(mfrl_set(&mut h, mfrl::LEVEL3, 0, 0, true), 0);
    assert_eq!(mfrl_set(&mut h, mfrl::LEVEL3, 0, mfrl::RESP_ACK, false), 0);
    assert_eq!(
        events(&h, &mut q),
        [general_sub::RST_REQUEST, general_sub::RST_NOW]
    );
    let r = mlx5_emu::control::handle(&h.dev, &json!({"cmd": "sync_reset", "action": "abort"}));
    assert_eq!(r["aborted"], true, "{r}");
    assert_eq!(events(&h, &mut q), [general_sub::RST_ABORT]);
    // A PCI reset now is an ordinary function-level reset.
    assert!(!h.dev.reset());
    assert_eq!(sync(&h, "activations"), 0);
    h.write32(is::CMDQ_ADDR_H, (h.queue >> 32) as u32);
    h.write32(is::CMDQ_ADDR_L_SZ, h.queue as u32);
    let mut q = bring_up(&mut h, true);
    // No answer within the negotiation time: NEG_TIMEOUT, nothing acked, no abort.
    let r = mlx5_emu::control::handle(
        &h.dev,
        &json!({"cmd": "sync_reset", "timeout_ms": 20, "method": "link_toggle"}),
    );
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(events(&h, &mut q), [general_sub::RST_REQUEST]);
    assert_eq!(mfrl_query(&mut h).3, mfrl::METHOD_LINK_TOGGLE);
    std::thread::sleep(std::time::Duration::from_millis(30));
    assert_eq!(events(&h, &mut q), Vec::<u8>::new());
    assert_eq!(mfrl_query(&mut h).2, mfrl::STATE_NEG_TIMEOUT);
    assert_eq!(sync(&h, "timeouts"), 1);
    assert_eq!(
        mfrl_set(&mut h, mfrl::LEVEL3, 0, mfrl::RESP_ACK, false),
        BAD_SYS_STATE,
        "too late"
    );
    assert_eq!(sync(&h, "late_responses"), 2);
    assert_eq!(sync(&h, "nacks"), 1);
    assert_eq!(sync(&h, "abort_events"), 1);
    no_violations(&h);
}

#[test]
fn a_function_that_does_not_take_part() {
    let mut h = Host::new();
    let mut q = bring_up(&mut h, false);
    // Not enabled with SET_HCA_CAP (our driver's case): no event reaches it, a start
    // is refused, and a PCI reset stays a function-level reset.
    assert_eq!(mfrl_set(&mut h, mfrl::LEVEL3, 0, 0, true), BAD_SYS_STATE);
    let r = mlx5_emu::control::handle(&h.dev, &json!({"cmd": "sync_reset"}));
    assert_eq!(r["ok"], false, "{r}");
    assert_eq!(events(&h, &mut q), Vec::<u8>::new());
    assert_eq!(mfrl_query(&mut h).2, mfrl::STATE_IDLE);
    // Level 0 (live patch) is not offered; other levels and a start with an answer
    // are bad parameters.
    assert_eq!(
        mfrl_set(&mut h, mfrl::LEVEL0, 0, 0, true),
        CmdStatus::BAD_PARAM_ERR as u8
    );
    assert_eq!(
        mfrl_set(&mut h, mfrl::LEVEL3, 0, mfrl::RESP_ACK, true),
        CmdStatus::BAD_PARAM_ERR as u8
    );
    assert_eq!(sync(&h, "requests_refused"), 2);
    no_violations(&h);
}
