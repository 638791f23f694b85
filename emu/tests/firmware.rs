//! Firmware model: full bring-up and teardown, the per-function state machine and
//! capability answers, driven over the in-process fake host.

mod common;

use common::{give_pages, input, take_pages, Host};
use mlx5_emu::fw::syndrome;
use mlx5_emu::ifc::caps::{cmd_hca_cap as g, query_hca_cap_in, CAP_OFFSET};
use mlx5_emu::ifc::cmds::*;
use mlx5_emu::ifc::eq::{
    create_eq_in, create_eq_out, eqc, EVENT_BITMASK_OFFSET, PAS_OFFSET as EQ_PAS,
};
use mlx5_emu::ifc::eqe::event_type;
use mlx5_emu::ifc::init_seg as is;
use mlx5_emu::ifc::opcodes::{cap_type, query_pages_op_mod as qp, teardown_profile, Opcode};
use mlx5_emu::ifc::pages::{query_pages_in, query_pages_out};
use mlx5_emu::ifc::regs::{access_register_in, dtor_reg, reg_id, REG_DATA_OFFSET};
use mlx5_emu::ifc::status::CmdStatus;
use mlx5_emu::mem::GuestMemory;

const OP: fn(Opcode) -> u16 = |o| o as u16;

fn query_pages(h: &mut Host, op_mod: u16) -> i32 {
    let out = h.ok(
        &input(
            16,
            OP(Opcode::QUERY_PAGES),
            op_mod,
            &[(query_pages_in::FUNCTION_ID.raw(), 0)],
        ),
        16,
    );
    query_pages_out::NUM_PAGES.raw().get(&out).unwrap() as u32 as i32
}

fn query_cap(h: &mut Host, ty: u16, cur: bool) -> (u8, Vec<u8>) {
    let (st, _, out) = h.run(
        &input(
            16,
            OP(Opcode::QUERY_HCA_CAP),
            (ty << 1) | u16::from(cur),
            &[],
        ),
        16 + 4096,
    );
    (st, out[CAP_OFFSET..CAP_OFFSET + 256].to_vec())
}

/// Creates an EQ of 2^log entries subscribed to `mask` word 0; returns (eqn, buffer).
pub fn create_eq(h: &mut Host, log: u8, mask: u64, uar: u32, intr: u16) -> (u8, u64) {
    let bytes = (1u64 << log) * 64;
    let npages = bytes.div_ceil(4096) as usize;
    let buf = h.alloc(npages as u64 * 4096, 4096);
    h.mem.write(buf, &vec![1u8; bytes as usize]).unwrap();
    let mut inp = input(EQ_PAS + 8 * npages, OP(Opcode::CREATE_EQ), 0, &[]);
    {
        let ctx = &mut inp[0x10..0x50];
        eqc::LOG_EQ_SIZE.raw().set(ctx, u64::from(log)).unwrap();
        eqc::UAR_PAGE.raw().set(ctx, u64::from(uar)).unwrap();
        eqc::INTR.raw().set(ctx, u64::from(intr)).unwrap();
    }
    inp[EVENT_BITMASK_OFFSET..EVENT_BITMASK_OFFSET + 8].copy_from_slice(&mask.to_be_bytes());
    for i in 0..npages {
        let a = buf + 4096 * i as u64;
        inp[EQ_PAS + 8 * i..EQ_PAS + 8 * i + 8].copy_from_slice(&a.to_be_bytes());
    }
    let _ = create_eq_in::OPCODE;
    let out = h.ok(&inp, 16);
    (create_eq_out::EQ_NUMBER.raw().get(&out).unwrap() as u8, buf)
}

fn alloc_uar(h: &mut Host) -> u32 {
    let out = h.ok(&input(16, OP(Opcode::ALLOC_UAR), 0, &[]), 16);
    alloc_uar_out::UAR.raw().get(&out).unwrap() as u32
}

/// The upstream mlx5_core probe sequence up to INIT_HCA and SET_DRIVER_VERSION.
pub fn bring_up(h: &mut Host) {
    assert_eq!(h.read32(is::INITIALIZING) >> 31, 0);
    assert_eq!(h.read32(is::CMDIF_REV_FW_SUB) >> 16, 5);
    h.ok(&input(16, OP(Opcode::ENABLE_HCA), 0, &[]), 16);
    let out = h.ok(&input(16, OP(Opcode::QUERY_ISSI), 0, &[]), 0x70);
    assert_eq!(
        query_issi_out::SUPPORTED_ISSI_DW0.raw().get(&out),
        Some(0b11)
    );
    h.ok(
        &input(
            16,
            OP(Opcode::SET_ISSI),
            0,
            &[(set_issi_in::CURRENT_ISSI.raw(), 1)],
        ),
        16,
    );
    let boot = query_pages(h, qp::BOOT);
    assert_eq!(boot, 16);
    give_pages(h, boot as usize);
    let out = h.ok(
        &input(
            16 + 64,
            OP(Opcode::ACCESS_REG),
            1,
            &[(
                access_register_in::REGISTER_ID.raw(),
                u64::from(reg_id::DTOR),
            )],
        ),
        16 + 64,
    );
    let dtor = &out[REG_DATA_OFFSET..];
    assert_eq!(
        is::decode_timeout_ms(dtor_reg::TEAR_DOWN_TO.raw().get32(dtor).unwrap()),
        Some(3000)
    );
    h.ok(
        &input(
            32,
            OP(Opcode::ACCESS_REG),
            0,
            &[(
                access_register_in::REGISTER_ID.raw(),
                u64::from(reg_id::HOST_ENDIANNESS),
            )],
        ),
        32,
    );
    let (st, cur) = query_cap(h, cap_type::GENERAL, true);
    assert_eq!(st, 0);
    let (_, max) = query_cap(h, cap_type::GENERAL, false);
    assert_eq!(g::LOG_MAX_QP.raw().get(&max), Some(18));
    let mut set = input(16 + 4096, OP(Opcode::SET_HCA_CAP), 0, &[]);
    set[CAP_OFFSET..CAP_OFFSET + 256].copy_from_slice(&cur);
    g::LOG_MAX_QP.raw().set(&mut set[CAP_OFFSET..], 18).unwrap();
    g::CMDIF_CHECKSUM
        .raw()
        .set(&mut set[CAP_OFFSET..], 0)
        .unwrap();
    h.ok(&set, 16);
    let (_, cur) = query_cap(h, cap_type::GENERAL, true);
    assert_eq!(g::LOG_MAX_QP.raw().get(&cur), Some(18));
    let init = query_pages(h, qp::INIT);
    assert_eq!(init, 32);
    give_pages(h, init as usize);
    h.ok(&input(32, OP(Opcode::INIT_HCA), 0, &[]), 16);
    let mut v = input(80, OP(Opcode::SET_DRIVER_VERSION), 0, &[]);
    v[16..16 + 21].copy_from_slice(b"Linux,mlx5_core,7.3.4");
    h.ok(&v, 16);
    let out = h.ok(&input(16, OP(Opcode::QUERY_ADAPTER), 0, &[]), 16 + 256);
    assert_eq!(&out[16 + 0xf0..16 + 0xf0 + 13], b"MT_0000000008");
}

#[test]
fn full_bring_up_and_teardown_returns_every_page() {
    let mut h = Host::new();
    bring_up(&mut h);
    assert_eq!(h.dev.fw().func.driver_version, "Linux,mlx5_core,7.3.4");
    let uar = alloc_uar(&mut h);
    let (cmd_eqn, cmd_buf) = create_eq(&mut h, 8, 1 << event_type::CMD, uar, 0);
    let (pg_eqn, pg_buf) = create_eq(&mut h, 8, 1 << event_type::PAGE_REQUEST, uar, 0);
    // Arm both (consumer index 0).
    for eqn in [cmd_eqn, pg_eqn] {
        h.dev.bar0_write(
            u64::from(uar) * 4096 + 0x40,
            &(u32::from(eqn) << 24).to_be_bytes(),
        );
    }
    h.dev.step();
    // A command now completes with an EQE carrying its slot, owner bit 0, and an IRQ.
    h.ok(&input(16, OP(Opcode::NOP), 0, &[]), 16);
    let mut eqe = [0u8; 64];
    h.mem.read(cmd_buf, &mut eqe).unwrap();
    assert_eq!((eqe[1], eqe[0x3f]), (event_type::CMD, 0));
    assert_eq!(
        u32::from_be_bytes([eqe[0x20], eqe[0x21], eqe[0x22], eqe[0x23]]),
        1
    );
    assert_eq!(*h.irq.fired.lock().unwrap(), vec![0]);
    // Runtime page requests: several outstanding at once, answered by gives in order.
    h.dev.page_request(5, false).unwrap();
    h.dev.page_request(1, false).unwrap();
    h.mem.read(pg_buf, &mut eqe).unwrap();
    assert_eq!(eqe[1], event_type::PAGE_REQUEST);
    assert_eq!(
        i32::from_be_bytes([eqe[0x24], eqe[0x25], eqe[0x26], eqe[0x27]]),
        5
    );
    assert_eq!(h.dev.fw().ledger.requests.outstanding.len(), 2);
    give_pages(&mut h, 5);
    give_pages(&mut h, 1);
    assert!(h.dev.fw().ledger.requests.outstanding.is_empty());
    assert_eq!(h.dev.fw().ledger.requests.answered, 2);
    // Unload: EQs, UAR, teardown, reclaim, disable.
    for eqn in [pg_eqn, cmd_eqn] {
        h.ok(
            &input(
                16,
                OP(Opcode::DESTROY_EQ),
                0,
                &[(
                    mlx5_emu::ifc::eq::destroy_eq_in::EQ_NUMBER.raw(),
                    u64::from(eqn),
                )],
            ),
            16,
        );
    }
    h.ok(
        &input(
            16,
            OP(Opcode::DEALLOC_UAR),
            0,
            &[(dealloc_uar_in::UAR.raw(), u64::from(uar))],
        ),
        16,
    );
    // Pages still needed are not returned before teardown.
    assert!(take_pages(&mut h, 768).is_empty());
    h.ok(
        &input(
            16,
            OP(Opcode::TEARDOWN_HCA),
            0,
            &[(
                teardown_hca_in::PROFILE.raw(),
                u64::from(teardown_profile::GRACEFUL_CLOSE),
            )],
        ),
        16,
    );
    let mut returned = 0;
    loop {
        let got = take_pages(&mut h, 768);
        if got.is_empty() {
            break;
        }
        returned += got.len();
    }
    assert_eq!(returned, 16 + 32 + 5 + 1);
    h.ok(&input(16, OP(Opcode::DISABLE_HCA), 0, &[]), 16);
    let s = mlx5_emu::control::stats(&h.dev);
    assert_eq!(s["pages"]["held"], 0);
    assert_eq!(s["violations"], 0, "{}", s["recent_violations"]);
    assert_eq!(
        s["commands"]["MANAGE_PAGES"]["OK"].as_u64().unwrap(),
        3 + 2 + 2
    );
}

#[test]
fn state_machine_rejects_out_of_order_commands() {
    let mut h = Host::new();
    let bad_state = CmdStatus::BAD_SYS_STATE_ERR as u8;
    let (st, synd, _) = h.run(&input(32, OP(Opcode::INIT_HCA), 0, &[]), 16);
    assert_eq!((st, synd), (bad_state, syndrome::BAD_STATE));
    assert_eq!(
        h.run(&input(16, OP(Opcode::QUERY_PAGES), 1, &[]), 16).0,
        bad_state
    );
    h.ok(&input(16, OP(Opcode::NOP), 0, &[]), 16);
    h.ok(&input(16, OP(Opcode::ENABLE_HCA), 0, &[]), 16);
    assert_eq!(
        h.run(&input(16, OP(Opcode::ENABLE_HCA), 0, &[]), 16).0,
        bad_state
    );
    // INIT_HCA before the boot + init pages were given.
    let (st, synd, _) = h.run(&input(32, OP(Opcode::INIT_HCA), 0, &[]), 16);
    assert_eq!((st, synd), (bad_state, syndrome::PAGES_MISSING));
    // Commands that need INIT_HCA.
    assert_eq!(
        h.run(&input(16, OP(Opcode::ALLOC_UAR), 0, &[]), 16).0,
        bad_state
    );
    give_pages(&mut h, 4);
    let (st, synd, _) = h.run(&input(16, OP(Opcode::DISABLE_HCA), 0, &[]), 16);
    assert_eq!((st, synd), (bad_state, syndrome::PAGES_HELD));
    give_pages(&mut h, 44);
    h.ok(&input(32, OP(Opcode::INIT_HCA), 0, &[]), 16);
    let (st, _, _) = h.run(&input(16 + 4096, OP(Opcode::SET_HCA_CAP), 0, &[]), 16);
    assert_eq!(st, bad_state);
    assert_eq!(
        h.run(&input(16, OP(Opcode::DISABLE_HCA), 0, &[]), 16).0,
        bad_state
    );
    // Unknown and unmodelled opcodes.
    let (st, synd, _) = h.run(&input(16, 0x0999, 0, &[]), 16);
    assert_eq!(
        (st, synd),
        (CmdStatus::BAD_OP_ERR as u8, syndrome::BAD_OPCODE)
    );
    assert_eq!(
        h.run(&input(16, OP(Opcode::ALLOC_MEMIC), 0, &[]), 16).0,
        CmdStatus::BAD_OP_ERR as u8
    );
    // Teardown profiles: prepare-fast needs the cap (present), bad profile rejected.
    assert_eq!(
        h.run(
            &input(
                16,
                OP(Opcode::TEARDOWN_HCA),
                0,
                &[(teardown_hca_in::PROFILE.raw(), 7)]
            ),
            16
        )
        .0,
        CmdStatus::BAD_PARAM_ERR as u8
    );
    h.ok(
        &input(
            16,
            OP(Opcode::TEARDOWN_HCA),
            0,
            &[(teardown_hca_in::PROFILE.raw(), 1)],
        ),
        16,
    );
    assert_eq!(
        h.run(&input(16, OP(Opcode::TEARDOWN_HCA), 0, &[]), 16).0,
        bad_state
    );
    let s = mlx5_emu::control::stats(&h.dev);
    assert_eq!(s["commands"]["INIT_HCA"]["BAD_SYS_STATE_ERR"], 2);
    assert_eq!(s["commands"]["0x999"]["BAD_OP_ERR"], 1);
}

#[test]
fn capabilities_say_absent_for_unmodelled_features() {
    let mut h = Host::new();
    h.ok(&input(16, OP(Opcode::ENABLE_HCA), 0, &[]), 16);
    let (_, cur) = query_cap(&mut h, cap_type::GENERAL, true);
    for f in [
        g::NIC_FLOW_TABLE,
        g::ESWITCH_MANAGER,
        g::VPORT_GROUP_MANAGER,
        g::ROCE,
        g::PG,
        g::ETH_NET_OFFLOADS,
        g::HCA_CAP_2,
        g::IB_VIRT,
    ] {
        assert_eq!(
            f.raw().get(&cur),
            Some(0),
            "{} must be absent",
            f.raw().name
        );
    }
    assert_eq!(g::FAST_TEARDOWN.raw().get(&cur), Some(1));
    assert_eq!(g::DRIVER_VERSION.raw().get(&cur), Some(1));
    for ty in [
        cap_type::ROCE,
        cap_type::ODP,
        cap_type::GENERAL_2,
        cap_type::FLOW_TABLE,
    ] {
        let (st, cap) = query_cap(&mut h, ty, true);
        assert_eq!(st, 0);
        assert!(cap.iter().all(|&b| b == 0));
    }
    let (st, synd, _) = h.run(
        &input(16, OP(Opcode::QUERY_HCA_CAP), 0x3f << 1, &[]),
        16 + 4096,
    );
    assert_eq!(
        (st, synd),
        (CmdStatus::BAD_PARAM_ERR as u8, syndrome::BAD_CAP_TYPE)
    );
    // A value beyond the maximum is refused.
    let mut set = input(16 + 4096, OP(Opcode::SET_HCA_CAP), 0, &[]);
    set[CAP_OFFSET..CAP_OFFSET + 256].copy_from_slice(&cur);
    g::LOG_MAX_QP.raw().set(&mut set[CAP_OFFSET..], 19).unwrap();
    assert_eq!(h.run(&set, 16).0, CmdStatus::BAD_PARAM_ERR as u8);
    let _ = query_hca_cap_in::OP_MOD;
}

/// The ATOMIC page of a ConnectX-5 as upstream reads it: cap `atomic`, 8-byte
/// compare-swap and fetch-add (mlx5_ib `get_atomic_caps`), requester endianness big
/// until SET_HCA_CAP(ATOMIC) asks for the host's (mlx5_core `handle_hca_cap_atomic`);
/// a mode the device does not offer is refused.
#[test]
fn atomic_caps_as_upstream_reads_and_sets_them() {
    use mlx5_emu::ifc::caps::atomic_caps as at;
    let mut h = Host::new();
    h.ok(&input(16, OP(Opcode::ENABLE_HCA), 0, &[]), 16);
    let (_, gen) = query_cap(&mut h, cap_type::GENERAL, true);
    assert_eq!(g::ATOMIC.raw().get(&gen), Some(1));
    let (st, cap) = query_cap(&mut h, cap_type::ATOMIC, true);
    assert_eq!(st, 0);
    assert_eq!(
        at::ATOMIC_OPERATIONS.raw().get(&cap).map(|v| v & 3),
        Some(3)
    );
    assert_eq!(at::ATOMIC_SIZE_QP.raw().get(&cap).map(|v| v & 8), Some(8));
    assert_eq!(
        at::SUPPORTED_ATOMIC_REQ_8B_ENDIANNESS_MODE_1
            .raw()
            .get(&cap),
        Some(1)
    );
    assert_eq!(at::ATOMIC_REQ_8B_ENDIANNESS_MODE.raw().get(&cap), Some(0));
    let op_mod = cap_type::ATOMIC << 1;
    for (mode, ok) in [(2u64, false), (1, true)] {
        let mut set = input(16 + 4096, OP(Opcode::SET_HCA_CAP), op_mod, &[]);
        set[CAP_OFFSET..CAP_OFFSET + 256].copy_from_slice(&cap);
        at::ATOMIC_REQ_8B_ENDIANNESS_MODE
            .raw()
            .set(&mut set[CAP_OFFSET..], mode)
            .unwrap();
        let st = h.run(&set, 16).0;
        assert_eq!(st == 0, ok, "mode {mode}: status {st:#x}");
    }
    let (_, cap) = query_cap(&mut h, cap_type::ATOMIC, true);
    assert_eq!(at::ATOMIC_REQ_8B_ENDIANNESS_MODE.raw().get(&cap), Some(1));
}

#[test]
fn fast_teardown_disables_nic_interface_and_stops_dma() {
    let mut h = Host::new();
    bring_up(&mut h);
    // Without prepare the write of DISABLED does not take effect.
    let l = h.read32(is::CMDQ_ADDR_L_SZ);
    h.write32(is::CMDQ_ADDR_L_SZ, (l & 0xffff_f000) | (1 << 8));
    h.dev.step();
    assert_eq!((h.read32(is::CMDQ_ADDR_L_SZ) >> 8) & 7, 0);
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
    h.write32(is::CMDQ_ADDR_L_SZ, (l & 0xffff_f000) | (1 << 8));
    h.dev.step();
    assert_eq!((h.read32(is::CMDQ_ADDR_L_SZ) >> 8) & 7, 1);
    // No DMA afterwards: a rung command stays owned by hardware.
    let p = h.prepare(0, &input(16, OP(Opcode::NOP), 0, &[]), 16);
    h.ring(0);
    h.dev.step();
    assert_eq!(h.status_own(&p) & 1, 1);
    let s = mlx5_emu::control::stats(&h.dev);
    assert_eq!(s["function"]["quiesced"], true);
    assert_eq!(s["pages"]["held"], 48);
}

#[test]
fn init_segment_fields() {
    let h = Host::with(mlx5_emu::config::EmuConfig {
        boot_delay_ms: 150,
        ..Default::default()
    });
    assert_eq!(h.read32(is::INITIALIZING) >> 31, 1);
    assert_eq!(h.read32(is::FW_REV), (35 << 16) | 16);
    assert_eq!(h.read32(is::CMDIF_REV_FW_SUB), (5 << 16) | 1012);
    assert_eq!(h.read32(is::CMDQ_ADDR_L_SZ) & 0xff, 0x56);
    assert_eq!(
        is::decode_timeout_ms(h.read32(is::CMD_EXEC_TO)),
        Some(60_000)
    );
    assert_ne!(h.read32(is::CMD_Q_INIT_TO), 0);
    let c0 = h.read32(is::HEALTH_COUNTER);
    let t0 = (u64::from(h.read32(is::INTERNAL_TIMER_H)) << 32)
        | u64::from(h.read32(is::INTERNAL_TIMER_L));
    std::thread::sleep(std::time::Duration::from_millis(220));
    assert_eq!(h.read32(is::INITIALIZING) >> 31, 0);
    assert_ne!(h.read32(is::HEALTH_COUNTER), c0);
    let t1 = (u64::from(h.read32(is::INTERNAL_TIMER_H)) << 32)
        | u64::from(h.read32(is::INTERNAL_TIMER_L));
    assert!(t1 > t0);
    // Fatal syndrome: counter stops, syndrome visible in the health buffer.
    h.dev.regs().set_fatal(0x8, 0x1234, true, 2);
    let c1 = h.read32(is::HEALTH_COUNTER);
    std::thread::sleep(std::time::Duration::from_millis(120));
    assert_eq!(h.read32(is::HEALTH_COUNTER), c1);
    assert_eq!(
        h.read32(is::HEALTH_BUFFER_OFF + 0x3c) & 0xffffff,
        (0x8 << 16) | 0x1234
    );
    h.dev.regs().all_ones = true;
    assert_eq!(h.read32(is::FW_REV), u32::MAX);
}

#[test]
fn knobs_force_and_prepare_state_fail_and_cap_tail() {
    use mlx5_emu::control::handle;
    use serde_json::json;
    let mut h = Host::new();
    assert_eq!(
        handle(&h.dev, &json!({"cmd":"caps","reserved_tail_fill":0xa5}))["ok"],
        true
    );
    // The reserved tail of hca_cap_union reads as the fill byte; cmd_hca_cap does not.
    h.ok(&input(16, OP(Opcode::ENABLE_HCA), 0, &[]), 16);
    let out = h.ok(&input(16, OP(Opcode::QUERY_HCA_CAP), 1, &[]), 16 + 4096);
    assert!(out[CAP_OFFSET + 256..].iter().all(|b| *b == 0xa5));
    let mut h = Host::new();
    bring_up(&mut h);
    // bring_up sends a zero tail: observed, not counted as non-zero.
    let s = mlx5_emu::control::stats(&h.dev);
    assert_eq!(s["observed"]["set_general_caps"], 1);
    assert_eq!(s["observed"]["set_cap_nonzero_tail"], 0);
    assert_eq!(
        s["observed"]["last_sw_owner_id"],
        "00000000000000000000000000000000"
    );
    let fail = json!({"cmd":"teardown_state","force":"fail","prepare_fast":"fail"});
    assert_eq!(handle(&h.dev, &fail)["ok"], true);
    let prep = input(
        16,
        OP(Opcode::TEARDOWN_HCA),
        0,
        &[(
            teardown_hca_in::PROFILE.raw(),
            u64::from(teardown_profile::PREPARE_FAST_TEARDOWN),
        )],
    );
    assert_eq!(teardown_hca_out::STATE.raw().get(&h.ok(&prep, 16)), Some(1));
    let force = input(
        16,
        OP(Opcode::TEARDOWN_HCA),
        0,
        &[(
            teardown_hca_in::PROFILE.raw(),
            u64::from(teardown_profile::FORCE_CLOSE),
        )],
    );
    assert_eq!(
        teardown_hca_out::STATE.raw().get(&h.ok(&force, 16)),
        Some(1)
    );
    let s = mlx5_emu::control::stats(&h.dev);
    assert_eq!(
        s["function"]["initialized"], true,
        "FORCE_STATE_FAIL leaves the HCA open"
    );
    assert_eq!(s["function"]["fast_prepared"], false);
    assert_eq!(
        handle(&h.dev, &json!({"cmd":"teardown_state","force":"maybe"}))["ok"],
        false
    );
    assert_eq!(
        handle(&h.dev, &json!({"cmd":"teardown_state","force":"success"}))["ok"],
        true
    );
    assert_eq!(
        teardown_hca_out::STATE.raw().get(&h.ok(&force, 16)),
        Some(0)
    );
    assert_eq!(
        mlx5_emu::control::stats(&h.dev)["function"]["initialized"],
        false
    );
    // The control reset clears every knob.
    handle(&h.dev, &json!({"cmd":"reset"}));
    assert_eq!(
        mlx5_emu::control::stats(&h.dev)["knobs"]["prepare_fast_state_fail"],
        false
    );
}

#[test]
fn knobs_init_segment_overrides() {
    use mlx5_emu::control::handle;
    use serde_json::json;
    let h = Host::new();
    let r = handle(
        &h.dev,
        &json!({"cmd":"init_seg","initializing_ms":150,"while_initializing":{"cmd_interface_rev":0,"log_cmdq_size":9},"cmd_q_init_to":0}),
    );
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(h.read32(is::INITIALIZING) >> 31, 1);
    assert_eq!(h.read32(is::CMDIF_REV_FW_SUB) >> 16, 0);
    assert_eq!((h.read32(is::CMDQ_ADDR_L_SZ) >> 4) & 0xf, 9);
    assert_eq!(h.read32(is::CMD_Q_INIT_TO), 0);
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert_eq!(h.read32(is::INITIALIZING) >> 31, 0);
    assert_eq!(h.read32(is::CMDIF_REV_FW_SUB) >> 16, 5);
    assert_eq!((h.read32(is::CMDQ_ADDR_L_SZ) >> 4) & 0xf, 5);
    assert_eq!(h.read32(is::CMD_Q_INIT_TO), 0, "always-on override stays");
    let s = mlx5_emu::control::stats(&h.dev);
    assert_eq!(
        s["init_seg"]["reads_while_initializing"]["cmdif_rev_fw_sub"],
        1
    );
    assert_eq!(s["init_seg"]["reads_while_initializing"]["initializing"], 1);
    // initializing again after the queue address is written, until cleared.
    let r = handle(
        &h.dev,
        &json!({"cmd":"init_seg","initializing_after_cmdq_ms":"forever","fw_rev":"1.2.3"}),
    );
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(h.read32(is::FW_REV), (2 << 16) | 1);
    let l = h.read32(is::CMDQ_ADDR_L_SZ) & 0xffff_f000;
    h.write32(is::CMDQ_ADDR_L_SZ, l | 0x1000);
    assert_eq!(h.read32(is::INITIALIZING) >> 31, 1);
    assert_eq!(
        handle(&h.dev, &json!({"cmd":"init_seg","initializing_ms":0}))["ok"],
        true
    );
    assert_eq!(h.read32(is::INITIALIZING) >> 31, 0);
    assert_eq!(
        handle(&h.dev, &json!({"cmd":"init_seg","log_cmdq_size":99}))["ok"],
        false
    );
    assert_eq!(
        handle(&h.dev, &json!({"cmd":"init_seg","fw_rev":"x"}))["ok"],
        false
    );
    handle(&h.dev, &json!({"cmd":"reset"}));
    assert!(h.read32(is::CMD_Q_INIT_TO) != 0);
    assert_eq!(h.read32(is::FW_REV), (35 << 16) | 16);
}
