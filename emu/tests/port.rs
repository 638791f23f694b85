//! The InfiniBand port: the SMA behind MAD_IFC (every answered attribute, refusals
//! as MAD statuses), the HCA/NIC vport commands, the port registers, cap `ib_virt`,
//! and the control requests `ib_port` / `link` with the port-change EQEs they raise.

mod common;
#[path = "common/port_events.rs"]
mod port_events;

use common::{initialized_with, input, Host};
use mlx5_emu::config::EmuConfig;
use mlx5_emu::ifc::caps::{cmd_hca_cap as g, query_hca_cap_in};
use mlx5_emu::ifc::eqe::port_change_sub as sub;
use mlx5_emu::ifc::field::{Field, Msg};
use mlx5_emu::ifc::mad::{mad_ifc_in, mad_ifc_out, mad_status, method, mgmt_class, smp, smp_attr};
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::regs::{
    access_register_in, node_desc_reg, pcap_reg, pvlc_reg, reg_id, REG_DATA_OFFSET,
};
use mlx5_emu::ifc::smp_attrs::{node_info, port_info, port_state};
use mlx5_emu::ifc::status::CmdStatus;
use mlx5_emu::ifc::vport as v;
use port_events::{async_eq, drain};
use serde_json::{json, Value};

/// Our syndrome for a port the device does not have (emu/src/fw/syndrome.rs).
const BAD_PORT: u32 = mlx5_emu::fw::syndrome::BAD_PORT;

fn initialized() -> Host {
    initialized_with(EmuConfig::default())
}

fn ctl(h: &Host, v: Value) -> Value {
    mlx5_emu::control::handle(&h.dev, &v)
}

/// A SubnGet MAD as `ib_init_query_mad` builds it (ib_smi.h), with `tid`.
fn smp_get(attr: u16, attr_mod: u32) -> Vec<u8> {
    let mut m = vec![0u8; smp::BYTES];
    let f: [(Field, u64); 6] = [
        (smp::BASE_VERSION.raw(), 1),
        (
            smp::MGMT_CLASS.raw(),
            u64::from(mgmt_class::SUBN_LID_ROUTED),
        ),
        (smp::CLASS_VERSION.raw(), 1),
        (smp::METHOD.raw(), u64::from(method::GET)),
        (smp::ATTR_ID.raw(), u64::from(attr)),
        (smp::ATTR_MOD.raw(), u64::from(attr_mod)),
    ];
    for (f, v) in f {
        f.set(&mut m, v).unwrap();
    }
    smp::TID.raw().set(&mut m, 0x1122_3344_5566_7788).unwrap();
    m
}

/// MAD_IFC on `port` (status, syndrome, response MAD).
fn mad_on(h: &mut Host, port: u8, mad: &[u8]) -> (u8, u32, Vec<u8>) {
    let mut inp = input(
        mad_ifc_in::BYTES,
        Opcode::MAD_IFC as u16,
        0x3,
        &[(mad_ifc_in::PORT.raw(), u64::from(port))],
    );
    mad_ifc_in::MAD.raw().bytes_mut(&mut inp).unwrap()[..mad.len()].copy_from_slice(mad);
    let (st, synd, out) = h.run(&inp, mad_ifc_out::BYTES);
    let resp = mad_ifc_out::RESPONSE_MAD_PACKET
        .raw()
        .bytes(&out)
        .unwrap()
        .to_vec();
    (st, synd, resp)
}

/// A MAD_IFC that must succeed as a command: (MAD status, response).
fn mad(h: &mut Host, m: &[u8]) -> (u16, Vec<u8>) {
    let (st, synd, resp) = mad_on(h, 1, m);
    assert_eq!((st, synd), (0, 0), "MAD_IFC failed as a command");
    (smp::STATUS.raw().get(&resp).unwrap() as u16, resp)
}

fn data(resp: &[u8]) -> &[u8] {
    smp::DATA.raw().bytes(resp).unwrap()
}

fn get(f: impl Into<Field>, buf: &[u8]) -> u64 {
    f.into().get(buf).unwrap()
}

fn guid(s: &Value) -> u64 {
    u64::from_str_radix(s.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

#[test]
fn node_info_and_description() {
    let mut h = initialized();
    let port = ctl(&h, json!({"cmd":"ib_port"}))["port"].clone();
    let (st, r) = mad(&mut h, &smp_get(smp_attr::NODE_INFO, 0));
    assert_eq!(st, mad_status::SUCCESS);
    assert_eq!(get(smp::METHOD, &r), u64::from(method::GET_RESP));
    assert_eq!(get(smp::TID, &r), 0x1122_3344_5566_7788, "TID echoed");
    let d = data(&r);
    assert_eq!(get(node_info::NODE_TYPE, d), 1, "channel adapter");
    assert_eq!(get(node_info::NUM_PORTS, d), 1);
    assert_eq!(get(node_info::NODE_GUID, d), guid(&port["node_guid"]));
    assert_eq!(get(node_info::PORT_GUID, d), guid(&port["port_guid"]));
    assert_eq!(
        get(node_info::SYSTEM_IMAGE_GUID, d),
        guid(&port["sys_guid"])
    );
    assert_ne!(get(node_info::NODE_GUID, d), 0);
    assert_eq!(get(node_info::PARTITION_CAP, d), 128, "pkey_table_size 0");
    assert_eq!(get(node_info::DEVICE_ID, d), 0x1017);
    assert_eq!(get(node_info::LOCAL_PORT_NUM, d), 1);
    assert_eq!(get(node_info::VENDOR_ID, d), 0x02c9);
    // Where upstream mlx5_ib mad.c reads them: sys GUID at data+4, node GUID at
    // data+12, max P_Keys at data+28, vendor id at data+36 (low 16 bits).
    assert_eq!(
        u64::from_be_bytes(d[12..20].try_into().unwrap()),
        guid(&port["node_guid"])
    );
    assert_eq!(
        u64::from_be_bytes(d[4..12].try_into().unwrap()),
        guid(&port["sys_guid"])
    );
    assert_eq!(u16::from_be_bytes([d[28], d[29]]), 128);
    assert_eq!(
        u32::from_be_bytes(d[36..40].try_into().unwrap()) & 0xffff,
        0x02c9
    );

    let (st, r) = mad(&mut h, &smp_get(smp_attr::NODE_DESC, 0));
    assert_eq!(st, 0);
    assert!(data(&r).starts_with(b"MT4119 ConnectX5   Mellanox Technologies\0"));
    let c = ctl(&h, json!({"cmd":"ib_port","node_desc":"host1 mlx5_0"}));
    assert_eq!(c["ok"], true);
    assert_eq!(c["events"], json!([]), "a node description raises no event");
    let (_, r) = mad(&mut h, &smp_get(smp_attr::NODE_DESC, 0));
    assert_eq!(&data(&r)[..13], b"host1 mlx5_0\0");
}

#[test]
fn port_info_values() {
    let mut h = initialized();
    let (st, r) = mad(&mut h, &smp_get(smp_attr::PORT_INFO, 1));
    assert_eq!(st, 0);
    let d = data(&r);
    use port_info as pi;
    assert_eq!(get(pi::LID, d), 2);
    assert_eq!(get(pi::MASTER_SM_LID, d), 1);
    assert_eq!(get(pi::PORT_STATE, d), u64::from(port_state::ACTIVE));
    assert_eq!(get(pi::PORT_PHYS_STATE, d), 5, "LinkUp");
    assert_eq!(get(pi::GID_PREFIX, d), 0xfe80_0000_0000_0000);
    assert_eq!(get(pi::LMC, d), 0);
    assert_eq!(get(pi::MASTER_SM_SL, d), 0);
    assert_eq!(get(pi::LINK_WIDTH_ACTIVE, d), 2, "4x");
    assert_eq!(get(pi::NEIGHBOR_MTU, d), 5, "4096");
    assert_eq!(get(pi::MTU_CAP, d), 5);
    assert_eq!(get(pi::VL_CAP, d), 4, "VL0-7");
    assert_eq!(get(pi::GUID_CAP, d), 128, "gid_table_size 4");
    assert_eq!(get(pi::SUBNET_TIMEOUT, d), 18);
    let capm = get(pi::CAPABILITY_MASK, d) as u32;
    assert_ne!(capm & (1 << 15), 0, "CapabilityMask2 supported");
    assert_ne!(capm & (1 << 14), 0, "extended speeds supported");
    assert_eq!(capm & (1 << 16), 0, "CM_SUP is the host's to set");
    assert_eq!(get(pi::CAPABILITY_MASK2, d), 1, "SetNodeDescription");
    assert_eq!(get(pi::LINK_SPEED_EXT_ACTIVE, d), 2, "EDR");
    assert_eq!(get(pi::LINK_SPEED_ACTIVE, d), 4);
    // Where upstream's mlx5_query_mad_ifc_port reads them (mad.c).
    assert_eq!(u16::from_be_bytes([d[16], d[17]]), 2, "lid at data+16");
    assert_eq!(u16::from_be_bytes([d[18], d[19]]), 1, "sm_lid at data+18");
    assert_eq!(d[32] & 0xf, 4, "state");
    assert_eq!(d[33] >> 4, 5, "phys_state");
    assert_eq!(d[31] & 0xf, 2, "active_width");
    assert_eq!(d[41] & 0xf, 5, "max_mtu");
    assert_eq!(d[36] >> 4, 5, "active_mtu");
    assert_eq!(d[37] >> 4, 4, "max_vl_num");
    assert_eq!(d[50], 128, "gid_tbl_len");
    assert_eq!(d[51] & 0x1f, 18, "subnet_timeout");
    assert_eq!(
        u16::from_be_bytes([d[60], d[61]]),
        1,
        "cap_mask2 at data+60"
    );
    assert_eq!(d[62] >> 4, 2, "ext_active_speed: EDR");
    // Modifier 0 = the port the MAD came in on.
    let (st, r0) = mad(&mut h, &smp_get(smp_attr::PORT_INFO, 0));
    assert_eq!(st, 0);
    assert_eq!(data(&r0), d);
    // A port the CA does not have.
    let (st, r2) = mad(&mut h, &smp_get(smp_attr::PORT_INFO, 2));
    assert_eq!(st, mad_status::INVALID_ATTRIB_VALUE);
    assert!(data(&r2).iter().all(|b| *b == 0));
}

#[test]
fn guid_info_and_pkey_table_blocks() {
    let mut h = initialized();
    let port = ctl(&h, json!({"cmd":"ib_port"}))["port"].clone();
    let (st, r) = mad(&mut h, &smp_get(smp_attr::GUID_INFO, 0));
    assert_eq!(st, 0);
    let d = data(&r);
    assert_eq!(
        u64::from_be_bytes(d[0..8].try_into().unwrap()),
        guid(&port["port_guid"])
    );
    assert!(d[8..].iter().all(|b| *b == 0), "GUIDs 1..7 unset");
    // 128 GUIDs = 16 blocks: 15 is the last.
    assert_eq!(mad(&mut h, &smp_get(smp_attr::GUID_INFO, 15)).0, 0);
    assert_eq!(
        mad(&mut h, &smp_get(smp_attr::GUID_INFO, 16)).0,
        mad_status::INVALID_ATTRIB_VALUE
    );
    let c = ctl(
        &h,
        json!({"cmd":"ib_port","guid":{"index":9,"value":"0x0002c903deadbeef"}}),
    );
    assert_eq!(c["ok"], true, "{c}");
    let (_, r) = mad(&mut h, &smp_get(smp_attr::GUID_INFO, 1));
    assert_eq!(
        u64::from_be_bytes(data(&r)[8..16].try_into().unwrap()),
        0x0002_c903_dead_beef
    );

    let (st, r) = mad(&mut h, &smp_get(smp_attr::PKEY_TABLE, 0));
    assert_eq!(st, 0);
    assert_eq!(&data(&r)[..4], &[0xff, 0xff, 0, 0], "index 0 = 0xffff");
    // 128 P_Keys = 4 blocks of 32.
    assert_eq!(mad(&mut h, &smp_get(smp_attr::PKEY_TABLE, 3)).0, 0);
    assert_eq!(
        mad(&mut h, &smp_get(smp_attr::PKEY_TABLE, 4)).0,
        mad_status::INVALID_ATTRIB_VALUE
    );
    // Bits 31:16 (a switch's port) are ignored by a CA.
    assert_eq!(
        mad(&mut h, &smp_get(smp_attr::PKEY_TABLE, 0x0001_0000)).0,
        0
    );
    ctl(
        &h,
        json!({"cmd":"ib_port","pkey":{"index":33,"value":"0x8001"}}),
    );
    let (_, r) = mad(&mut h, &smp_get(smp_attr::PKEY_TABLE, 1));
    assert_eq!(&data(&r)[2..4], &[0x80, 0x01]);
}

#[test]
fn other_mads_are_refused_with_a_mad_status() {
    let mut h = initialized();
    let with = |f: Field, v: u64, m: &mut Vec<u8>| f.set(m, v).unwrap();
    // SubnSet: answered GetResp with "method/attribute not supported".
    let mut m = smp_get(smp_attr::PORT_INFO, 1);
    with(smp::METHOD.raw(), u64::from(method::SET), &mut m);
    let (st, r) = mad(&mut h, &m);
    assert_eq!(st, mad_status::UNSUPPORTED_METHOD_ATTRIB);
    assert_eq!(get(smp::METHOD, &r), u64::from(method::GET_RESP));
    // An unknown method.
    let mut m = smp_get(smp_attr::NODE_INFO, 0);
    with(smp::METHOD.raw(), 0x03, &mut m);
    let (st, r) = mad(&mut h, &m);
    assert_eq!(st, mad_status::UNSUPPORTED_METHOD);
    assert_eq!(get(smp::METHOD, &r), 0x83);
    // Attributes outside the model: SMInfo, SLtoVL, Mellanox ExtendedPortInfo.
    for a in [
        smp_attr::SM_INFO,
        smp_attr::SL_TO_VL_TABLE,
        smp_attr::EXTENDED_PORT_INFO,
    ] {
        assert_eq!(
            mad(&mut h, &smp_get(a, 1)).0,
            mad_status::UNSUPPORTED_METHOD_ATTRIB,
            "attr {a:#x}"
        );
    }
    // Congestion management is not modelled.
    let mut m = smp_get(0x0012, 0);
    with(
        smp::MGMT_CLASS.raw(),
        u64::from(mgmt_class::CONG_MGMT),
        &mut m,
    );
    assert_eq!(mad(&mut h, &m).0, mad_status::UNSUPPORTED_METHOD_ATTRIB);
    // Bad base and class versions.
    let mut m = smp_get(smp_attr::NODE_INFO, 0);
    with(smp::BASE_VERSION.raw(), 2, &mut m);
    assert_eq!(mad(&mut h, &m).0, mad_status::BAD_VERSION);
    let mut m = smp_get(smp_attr::NODE_INFO, 0);
    with(smp::CLASS_VERSION.raw(), 2, &mut m);
    assert_eq!(mad(&mut h, &m).0, mad_status::BAD_VERSION);
    // Directed route is answered too; the direction bit is kept.
    let mut m = smp_get(smp_attr::NODE_INFO, 0);
    with(
        smp::MGMT_CLASS.raw(),
        u64::from(mgmt_class::SUBN_DIRECTED_ROUTE),
        &mut m,
    );
    with(smp::STATUS.raw(), 0x8000, &mut m);
    let (st, r) = mad(&mut h, &m);
    assert_eq!(st, 0x8000);
    assert_eq!(get(node_info::NODE_TYPE, data(&r)), 1);
}

#[test]
fn malformed_mad_ifc_commands_fail() {
    let mut h = initialized();
    for port in [0u8, 2, 0xff] {
        let (st, synd, _) = mad_on(&mut h, port, &smp_get(smp_attr::NODE_INFO, 0));
        assert_eq!(
            (st, synd),
            (CmdStatus::BAD_PARAM_ERR as u8, BAD_PORT),
            "port {port}"
        );
    }
    // Short input.
    let inp = input(
        0x20,
        Opcode::MAD_IFC as u16,
        0,
        &[(mad_ifc_in::PORT.raw(), 1)],
    );
    let (st, _, _) = h.run(&inp, mad_ifc_out::BYTES);
    assert_eq!(st, CmdStatus::BAD_INP_LEN_ERR as u8);
    // Short output.
    let mut inp = input(
        mad_ifc_in::BYTES,
        Opcode::MAD_IFC as u16,
        0,
        &[(mad_ifc_in::PORT.raw(), 1)],
    );
    mad_ifc_in::MAD.raw().bytes_mut(&mut inp).unwrap()[..256]
        .copy_from_slice(&smp_get(smp_attr::NODE_INFO, 0));
    let (st, _, _) = h.run(&inp, 0x40);
    assert_eq!(st, CmdStatus::BAD_OUTP_LEN_ERR as u8);
    // Before INIT_HCA: bad state.
    let mut h = Host::new();
    h.ok(&input(16, Opcode::ENABLE_HCA as u16, 0, &[]), 16);
    let (st, _, _) = mad_on(&mut h, 1, &smp_get(smp_attr::NODE_INFO, 0));
    assert_eq!(st, CmdStatus::BAD_SYS_STATE_ERR as u8);
}

fn vport_ctx(h: &mut Host, fields: &[(Field, u64)]) -> (u8, u32, Vec<u8>) {
    let inp = input(
        v::query_hca_vport_context_in::BYTES,
        Opcode::QUERY_HCA_VPORT_CONTEXT as u16,
        0,
        fields,
    );
    let (st, synd, out) = h.run(&inp, v::query_hca_vport_context_out::BYTES);
    let ctx = v::query_hca_vport_context_out::HCA_VPORT_CONTEXT
        .raw()
        .bytes(&out)
        .unwrap()
        .to_vec();
    (st, synd, ctx)
}

#[test]
fn hca_vport_context_matches_port_info() {
    let mut h = initialized();
    let (st, _, c) = vport_ctx(&mut h, &[]);
    assert_eq!(st, 0);
    let (_, r) = mad(&mut h, &smp_get(smp_attr::PORT_INFO, 1));
    let d = data(&r).to_vec();
    let (_, n) = mad(&mut h, &smp_get(smp_attr::NODE_INFO, 0));
    let n = data(&n).to_vec();
    use port_info as pi;
    use v::hca_vport_context as hv;
    for (a, b) in [
        (get(hv::LID, &c), get(pi::LID, &d)),
        (get(hv::SM_LID, &c), get(pi::MASTER_SM_LID, &d)),
        (get(hv::SM_SL, &c), get(pi::MASTER_SM_SL, &d)),
        (get(hv::LMC, &c), get(pi::LMC, &d)),
        (get(hv::VPORT_STATE, &c), get(pi::PORT_STATE, &d)),
        (
            get(hv::PORT_PHYSICAL_STATE, &c),
            get(pi::PORT_PHYS_STATE, &d),
        ),
        (get(hv::CAP_MASK1, &c), get(pi::CAPABILITY_MASK, &d)),
        (get(hv::CAP_MASK2, &c), get(pi::CAPABILITY_MASK2, &d)),
        (get(hv::SUBNET_TIMEOUT, &c), get(pi::SUBNET_TIMEOUT, &d)),
        (get(hv::PORT_GUID, &c), get(node_info::PORT_GUID, &n)),
        (get(hv::NODE_GUID, &c), get(node_info::NODE_GUID, &n)),
        (
            get(hv::SYSTEM_IMAGE_GUID, &c),
            get(node_info::SYSTEM_IMAGE_GUID, &n),
        ),
    ] {
        assert_eq!(a, b);
    }
    assert_eq!(get(hv::HAS_SMI, &c), 1);
    assert_eq!(get(hv::LID, &c), 2);
    assert_ne!(
        get(hv::CAP_MASK1_FIELD_SELECT, &c) & (1 << 16),
        0,
        "CM_SUP settable"
    );
    // The violation counters, both ways.
    ctl(
        &h,
        json!({"cmd":"ib_port","pkey_violations":3,"qkey_violations":4}),
    );
    let (_, _, c) = vport_ctx(&mut h, &[]);
    assert_eq!(get(hv::PKEY_VIOLATION_COUNTER, &c), 3);
    assert_eq!(get(hv::QKEY_VIOLATION_COUNTER, &c), 4);
    let (_, r) = mad(&mut h, &smp_get(smp_attr::PORT_INFO, 1));
    // Upstream reads bad_pkey_cntr at data+46, qkey_viol_cntr at data+48 (mad.c).
    assert_eq!(&data(&r)[46..50], &[0, 3, 0, 4]);
    // port_num 1 is the port, 2 is not; other_vport needs a group manager.
    let pn = v::query_hca_vport_context_in::PORT_NUM.raw();
    assert_eq!(vport_ctx(&mut h, &[(pn, 1)]).0, 0);
    let (st, synd, _) = vport_ctx(&mut h, &[(pn, 2)]);
    assert_eq!((st, synd), (CmdStatus::BAD_PARAM_ERR as u8, BAD_PORT));
    let ov = v::query_hca_vport_context_in::OTHER_VPORT.raw();
    assert_eq!(
        vport_ctx(&mut h, &[(ov, 1)]).0,
        CmdStatus::BAD_PARAM_ERR as u8
    );
}

#[test]
fn modify_hca_vport_context_sets_capability_bits() {
    let mut h = initialized();
    let modify = |h: &mut Host, cap: u32, sel: u32| {
        let mut inp = input(
            v::modify_hca_vport_context_in::BYTES,
            Opcode::MODIFY_HCA_VPORT_CONTEXT as u16,
            0,
            &[],
        );
        let c = v::modify_hca_vport_context_in::HCA_VPORT_CONTEXT
            .raw()
            .bytes_mut(&mut inp)
            .unwrap();
        v::hca_vport_context::CAP_MASK1
            .raw()
            .set(c, u64::from(cap))
            .unwrap();
        v::hca_vport_context::CAP_MASK1_FIELD_SELECT
            .raw()
            .set(c, u64::from(sel))
            .unwrap();
        h.run(&inp, v::modify_hca_vport_context_out::BYTES).0
    };
    let cm = 1u32 << 16;
    // What upstream's set_port_caps_atomic sends for ib_cm's IB_PORT_CM_SUP.
    assert_eq!(modify(&mut h, !0, cm), 0);
    let (_, r) = mad(&mut h, &smp_get(smp_attr::PORT_INFO, 1));
    let capm = get(port_info::CAPABILITY_MASK, data(&r)) as u32;
    assert_ne!(capm & cm, 0);
    assert_ne!(capm & (1 << 15), 0, "unselected bits kept");
    assert_eq!(modify(&mut h, 0, cm), 0);
    let (_, _, c) = vport_ctx(&mut h, &[]);
    assert_eq!(get(v::hca_vport_context::CAP_MASK1, &c) as u32 & cm, 0);
    // A bit the host may not change.
    assert_eq!(modify(&mut h, 0, 1 << 15), CmdStatus::BAD_PARAM_ERR as u8);
}

#[test]
fn vport_gid_pkey_state_and_nic_context() {
    let mut h = initialized();
    let port = ctl(&h, json!({"cmd":"ib_port"}))["port"].clone();
    let gid = |h: &mut Host, index: u16, n: usize| {
        h.run(
            &input(
                v::query_hca_vport_gid_in::BYTES,
                Opcode::QUERY_HCA_VPORT_GID as u16,
                0,
                &[(v::query_hca_vport_gid_in::GID_INDEX.raw(), u64::from(index))],
            ),
            v::query_hca_vport_gid_out::BYTES + 16 * n,
        )
    };
    let (st, _, out) = gid(&mut h, 0, 1);
    assert_eq!(st, 0);
    assert_eq!(get(v::query_hca_vport_gid_out::GIDS_NUM, &out), 1);
    let g = Msg::<v::query_hca_vport_gid_out::Layout>::new(&out)
        .unwrap()
        .bytes(v::query_hca_vport_gid_out::GID);
    assert_eq!(&g[..8], &0xfe80_0000_0000_0000u64.to_be_bytes());
    assert_eq!(&g[8..16], &guid(&port["port_guid"]).to_be_bytes());
    let (st, _, out) = gid(&mut h, 0xffff, 128);
    assert_eq!(st, 0);
    assert_eq!(get(v::query_hca_vport_gid_out::GIDS_NUM, &out), 128);
    assert_eq!(gid(&mut h, 0xffff, 1).0, CmdStatus::BAD_OUTP_LEN_ERR as u8);
    assert_eq!(gid(&mut h, 128, 1).0, CmdStatus::BAD_PARAM_ERR as u8);

    let pkey = |h: &mut Host, index: u16, n: usize| {
        h.run(
            &input(
                v::query_hca_vport_pkey_in::BYTES,
                Opcode::QUERY_HCA_VPORT_PKEY as u16,
                0,
                &[(
                    v::query_hca_vport_pkey_in::PKEY_INDEX.raw(),
                    u64::from(index),
                )],
            ),
            v::query_hca_vport_pkey_out::BYTES + 4 * n,
        )
    };
    let (st, _, out) = pkey(&mut h, 0, 1);
    assert_eq!(st, 0);
    let p = Msg::<v::query_hca_vport_pkey_out::Layout>::new(&out)
        .unwrap()
        .bytes(v::query_hca_vport_pkey_out::PKEY);
    assert_eq!(get(v::pkey_entry::PKEY, p), 0xffff);
    ctl(&h, json!({"cmd":"ib_port","pkeys":["0xffff","0x7fff"]}));
    let (st, _, out) = pkey(&mut h, 0xffff, 128);
    assert_eq!(st, 0);
    let p = Msg::<v::query_hca_vport_pkey_out::Layout>::new(&out)
        .unwrap()
        .bytes(v::query_hca_vport_pkey_out::PKEY);
    assert_eq!(get(v::pkey_entry::PKEY, &p[4..]), 0x7fff);
    assert_eq!(pkey(&mut h, 200, 1).0, CmdStatus::BAD_PARAM_ERR as u8);

    let state = |h: &mut Host| {
        let out = h.ok(
            &input(16, Opcode::QUERY_VPORT_STATE as u16, 0, &[]),
            v::query_vport_state_out::BYTES,
        );
        (
            get(v::query_vport_state_out::STATE, &out),
            get(v::query_vport_state_out::ADMIN_STATE, &out),
        )
    };
    assert_eq!(state(&mut h), (1, 1));
    ctl(&h, json!({"cmd":"link","up":false}));
    assert_eq!(state(&mut h), (0, 1));

    let out = h.ok(
        &input(
            v::query_nic_vport_context_in::BYTES,
            Opcode::QUERY_NIC_VPORT_CONTEXT as u16,
            0,
            &[],
        ),
        v::query_nic_vport_context_out::BYTES,
    );
    let c = v::query_nic_vport_context_out::NIC_VPORT_CONTEXT
        .raw()
        .bytes(&out)
        .unwrap();
    assert_eq!(
        get(v::nic_vport_context::NODE_GUID, c),
        guid(&port["node_guid"])
    );
    assert_eq!(
        get(v::nic_vport_context::SYSTEM_IMAGE_GUID, c),
        guid(&port["sys_guid"])
    );
    assert_eq!(
        get(v::nic_vport_context::PORT_GUID, c),
        guid(&port["port_guid"])
    );
}

fn reg(h: &mut Host, id: u16, op_mod: u16, data: &[u8], len: usize) -> (u8, u32, Vec<u8>) {
    let mut inp = input(
        REG_DATA_OFFSET + len,
        Opcode::ACCESS_REG as u16,
        op_mod,
        &[(access_register_in::REGISTER_ID.raw(), u64::from(id))],
    );
    inp[REG_DATA_OFFSET..REG_DATA_OFFSET + data.len()].copy_from_slice(data);
    let (st, synd, out) = h.run(&inp, REG_DATA_OFFSET + len);
    (st, synd, out[REG_DATA_OFFSET..].to_vec())
}

#[test]
fn port_registers() {
    let mut h = initialized();
    // PVLC: VL0-7.
    let mut d = vec![0u8; pvlc_reg::BYTES];
    pvlc_reg::LOCAL_PORT.raw().set(&mut d, 1).unwrap();
    let (st, _, out) = reg(&mut h, reg_id::PVLC, 1, &d, pvlc_reg::BYTES);
    assert_eq!(st, 0);
    assert_eq!(
        get(pvlc_reg::VL_HW_CAP, &out),
        8,
        "VL0-7 in PVLC's encoding (mlx5_vl_hw_cap)"
    );
    pvlc_reg::LOCAL_PORT.raw().set(&mut d, 2).unwrap();
    let (st, synd, _) = reg(&mut h, reg_id::PVLC, 1, &d, pvlc_reg::BYTES);
    assert_eq!((st, synd), (CmdStatus::BAD_PARAM_ERR as u8, BAD_PORT));
    // PCAP write, as upstream's mlx5_set_port_caps: the CapabilityMask in dword 0.
    let mut d = vec![0u8; pcap_reg::BYTES];
    pcap_reg::LOCAL_PORT.raw().set(&mut d, 1).unwrap();
    let caps: u32 = 0x0251_e84a;
    pcap_reg::PORT_CAPABILITY_MASK
        .raw()
        .bytes_mut(&mut d)
        .unwrap()[..4]
        .copy_from_slice(&caps.to_be_bytes());
    let (st, _, out) = reg(&mut h, reg_id::PCAP, 0, &d, pcap_reg::BYTES);
    assert_eq!(st, 0);
    assert_eq!(&out[4..8], &caps.to_be_bytes());
    let (_, r) = mad(&mut h, &smp_get(smp_attr::PORT_INFO, 1));
    assert_eq!(get(port_info::CAPABILITY_MASK, data(&r)), u64::from(caps));
    pcap_reg::LOCAL_PORT.raw().set(&mut d, 0).unwrap();
    assert_eq!(
        reg(&mut h, reg_id::PCAP, 0, &d, pcap_reg::BYTES).1,
        BAD_PORT
    );
    // NODE_DESC: read, write (upstream's ib_modify_device), read back through the SMA.
    let (st, _, out) = reg(&mut h, reg_id::NODE_DESC, 1, &[], node_desc_reg::BYTES);
    assert_eq!(st, 0);
    assert!(out.starts_with(b"MT4119 ConnectX5"));
    let mut nd = vec![0u8; 64];
    nd[..8].copy_from_slice(b"nodeA 0\0");
    let (st, _, out) = reg(&mut h, reg_id::NODE_DESC, 0, &nd, node_desc_reg::BYTES);
    assert_eq!(st, 0);
    assert_eq!(&out[..8], b"nodeA 0\0");
    let (_, r) = mad(&mut h, &smp_get(smp_attr::NODE_DESC, 0));
    assert_eq!(&data(&r)[..8], b"nodeA 0\0");
    let (st, _, _) = reg(&mut h, reg_id::NODE_DESC, 1, &[], 16);
    assert_eq!(st, CmdStatus::BAD_OUTP_LEN_ERR as u8);
}

fn ib_virt_cap(h: &mut Host) -> u64 {
    let out = h.ok(
        &input(
            16,
            Opcode::QUERY_HCA_CAP as u16,
            0,
            &[(query_hca_cap_in::OP_MOD.raw(), 1)],
        ),
        0x1010,
    );
    get(g::IB_VIRT, &out[0x10..])
}

#[test]
fn ib_virt_knob() {
    let mut h = initialized();
    assert_eq!(ib_virt_cap(&mut h), 0, "default: upstream uses MAD_IFC");
    let c = ctl(&h, json!({"cmd":"ib_port","ib_virt":true}));
    assert_eq!(c["ok"], true);
    assert_eq!(c["events"], json!([]));
    assert_eq!(ib_virt_cap(&mut h), 1);
    // Kept across a function-level reset (a firmware setting), dropped by `reset`.
    h.dev.fw().reset();
    h.ok(&input(16, Opcode::ENABLE_HCA as u16, 0, &[]), 16);
    assert_eq!(ib_virt_cap(&mut h), 1);
    mlx5_emu::control_port::reset(&h.dev);
    assert_eq!(ib_virt_cap(&mut h), 0);
    ctl(&h, json!({"cmd":"ib_port","ib_virt":true}));
    h.dev.fw().reset();
    mlx5_emu::control_port::reset(&h.dev);
    h.ok(&input(16, Opcode::ENABLE_HCA as u16, 0, &[]), 16);
    assert_eq!(ib_virt_cap(&mut h), 0);
    // Start-up setting.
    let mut h = initialized_with(EmuConfig {
        ib_virt: true,
        ..Default::default()
    });
    assert_eq!(ib_virt_cap(&mut h), 1);
    // Both ways read the same port.
    let (_, _, c) = vport_ctx(&mut h, &[]);
    let (_, r) = mad(&mut h, &smp_get(smp_attr::PORT_INFO, 1));
    assert_eq!(
        get(v::hca_vport_context::LID, &c),
        get(port_info::LID, data(&r))
    );
}

#[test]
fn control_changes_raise_port_change_events() {
    let mut h = initialized();
    let mut q = async_eq(&mut h);
    assert_eq!(drain(&h, &mut q), Vec::<u8>::new());
    let c = ctl(&h, json!({"cmd":"ib_port","lid":7}));
    assert_eq!(c["ok"], true, "{c}");
    assert_eq!(c["events"][0]["sub_type"], sub::LID);
    assert_eq!(drain(&h, &mut q), vec![sub::LID]);
    let (_, r) = mad(&mut h, &smp_get(smp_attr::PORT_INFO, 1));
    assert_eq!(get(port_info::LID, data(&r)), 7);
    for (req, want) in [
        (json!({"sm_lid": 3}), vec![sub::LID]),
        (json!({"sm_sl": 2}), vec![sub::LID]),
        (json!({"lmc": 1}), vec![sub::LID]),
        (
            json!({"pkey": {"index": 1, "value": "0x8002"}}),
            vec![sub::PKEY],
        ),
        (json!({"port_guid": "0x0002c90300000042"}), vec![sub::GUID]),
        (
            json!({"subnet_prefix": "0xfe80000000000001"}),
            vec![sub::GUID],
        ),
        (json!({"client_rereg": true}), vec![sub::CLIENT_REREG]),
        (json!({"state": "armed"}), vec![sub::DOWN]),
        (json!({"state": "active"}), vec![sub::ACTIVE]),
        (json!({"state": "down"}), vec![sub::DOWN]),
        (json!({"state": "init"}), vec![sub::INITIALIZED]),
        (
            json!({"state": "active", "lid": 9}),
            vec![sub::ACTIVE, sub::LID],
        ),
        (json!({"lid": 9}), vec![]),
        (
            json!({"node_desc": "x", "sys_guid": 5, "node_guid": 6}),
            vec![],
        ),
    ] {
        let mut r = req.clone();
        r["cmd"] = json!("ib_port");
        let c = ctl(&h, r);
        assert_eq!(c["ok"], true, "{req}: {c}");
        assert_eq!(drain(&h, &mut q), want, "{req}");
    }
    // The link: down raises DOWN, a repeat nothing, up ACTIVE (the SM state).
    assert_eq!(
        ctl(&h, json!({"cmd":"link","up":false}))["port"]["state"],
        "down"
    );
    assert_eq!(drain(&h, &mut q), vec![sub::DOWN]);
    ctl(&h, json!({"cmd":"link","up":false}));
    assert_eq!(drain(&h, &mut q), Vec::<u8>::new());
    let (_, r) = mad(&mut h, &smp_get(smp_attr::PORT_INFO, 1));
    assert_eq!(get(port_info::PORT_STATE, data(&r)), 1);
    assert_eq!(get(port_info::PORT_PHYS_STATE, data(&r)), 2, "Polling");
    // An SM change while the link is down takes effect (and is announced) when it
    // comes up.
    ctl(&h, json!({"cmd":"ib_port","state":"init"}));
    assert_eq!(drain(&h, &mut q), Vec::<u8>::new());
    ctl(&h, json!({"cmd":"link","up":true}));
    assert_eq!(drain(&h, &mut q), vec![sub::INITIALIZED]);
    ctl(&h, json!({"cmd":"ib_port","state":"active"}));
    assert_eq!(drain(&h, &mut q), vec![sub::ACTIVE]);
    // Back to the power-on port.
    let c = ctl(&h, json!({"cmd":"ib_port","defaults":true}));
    assert_eq!(c["port"]["lid"], 2);
    assert_eq!(drain(&h, &mut q), vec![sub::LID, sub::PKEY, sub::GUID]);
}

#[test]
fn control_rejects_bad_values() {
    let h = initialized();
    for r in [
        json!({"lid": "0xc000"}),
        json!({"lmc": 8}),
        json!({"sm_sl": 16}),
        json!({"state": "polling"}),
        json!({"pkey": {"index": 128, "value": 1}}),
        json!({"pkey": {"index": 0, "value": "0x10000"}}),
        json!({"guid": {"index": 128, "value": 1}}),
        json!({"node_desc": "x".repeat(65)}),
        json!({"speed": "hdr"}),
        json!({"ib_virt": 1}),
        json!({"pkeys": vec![1; 129]}),
    ] {
        let mut q = r.clone();
        q["cmd"] = json!("ib_port");
        let c = ctl(&h, q);
        assert_eq!(c["ok"], false, "{r} accepted");
    }
    // Nothing changed.
    assert_eq!(ctl(&h, json!({"cmd":"ib_port"}))["port"]["lid"], 2);
}

#[test]
fn speed_follows_to_ptys_and_port_info() {
    use mlx5_emu::ifc::regs::ptys_reg;
    let mut h = initialized();
    for (name, proto, ext, base) in [
        ("edr", 32, 2, 4),
        ("fdr", 16, 1, 4),
        ("qdr", 4, 0, 4),
        ("sdr", 1, 0, 1),
    ] {
        ctl(&h, json!({"cmd":"ib_port","speed":name}));
        let (st, _, out) = reg(&mut h, reg_id::PTYS, 1, &[], ptys_reg::BYTES);
        assert_eq!(st, 0);
        assert_eq!(get(ptys_reg::IB_PROTO_OPER, &out), proto, "{name}");
        assert_eq!(get(ptys_reg::IB_LINK_WIDTH_OPER, &out), 4, "4x");
        let (_, r) = mad(&mut h, &smp_get(smp_attr::PORT_INFO, 1));
        assert_eq!(
            get(port_info::LINK_SPEED_EXT_ACTIVE, data(&r)),
            ext,
            "{name}"
        );
        assert_eq!(get(port_info::LINK_SPEED_ACTIVE, data(&r)), base, "{name}");
    }
}

/// A PerfMgmt MAD as the RDMA core's sysfs `get_perf_mad` builds it.
fn pma_req(meth: u8, attr: u16, port_select: u8) -> Vec<u8> {
    use mlx5_emu::ifc::pma::{pma_mad, port_counters as pc};
    let mut m = smp_get(attr, 0);
    smp::MGMT_CLASS
        .raw()
        .set(&mut m, u64::from(mgmt_class::PERF_MGMT))
        .unwrap();
    smp::METHOD.raw().set(&mut m, u64::from(meth)).unwrap();
    let d = pma_mad::DATA.raw().bytes_mut(&mut m).unwrap();
    pc::PORT_SELECT
        .raw()
        .set(d, u64::from(port_select))
        .unwrap();
    pc::COUNTER_SELECT.raw().set(d, 0xffff).unwrap();
    m
}

#[test]
fn pma_answers_class_port_info_and_counters() {
    use mlx5_emu::ifc::pma::port_counters_ext as pcx;
    use mlx5_emu::ifc::pma::{class_port_info as cpi, pma_attr, pma_mad, port_counters as pc};
    let mut h = initialized();
    let pdata = |r: &[u8]| pma_mad::DATA.raw().bytes(r).unwrap().to_vec();
    let (st, r) = mad(&mut h, &pma_req(method::GET, pma_attr::CLASS_PORT_INFO, 1));
    assert_eq!(st, 0);
    let d = pdata(&r);
    assert_eq!(get(cpi::BASE_VERSION, &d), 1);
    assert_eq!(get(cpi::CLASS_VERSION, &d), 1);
    // Extended width: the RDMA core then shows the 64-bit counters (sysfs.c).
    assert_eq!(get(cpi::CAPABILITY_MASK, &d), 1 << 9);
    for attr in [pma_attr::PORT_COUNTERS, pma_attr::PORT_COUNTERS_EXT] {
        for meth in [method::GET, method::SET] {
            let (st, r) = mad(&mut h, &pma_req(meth, attr, 1));
            assert_eq!(st, 0, "attr {attr:#x} method {meth}");
            assert_eq!(get(smp::METHOD, &r), u64::from(method::GET_RESP));
            let d = pdata(&r);
            assert_eq!(get(pc::PORT_SELECT, &d), 1);
            assert_eq!(get(pc::COUNTER_SELECT, &d), 0xffff);
            assert_eq!(get(pc::PORT_XMIT_DATA, &d), 0);
            assert_eq!(get(pcx::PORT_RCV_DATA, &d), 0);
        }
        let (st, r) = mad(&mut h, &pma_req(method::GET, attr, 2));
        assert_eq!(st, mad_status::INVALID_ATTRIB_VALUE, "port_select 2");
        assert!(pdata(&r).iter().all(|b| *b == 0));
    }
    assert_eq!(
        mad(&mut h, &pma_req(method::SET, pma_attr::CLASS_PORT_INFO, 1)).0,
        mad_status::UNSUPPORTED_METHOD_ATTRIB
    );
    assert_eq!(
        mad(&mut h, &pma_req(method::GET, 0x0010, 1)).0,
        mad_status::UNSUPPORTED_METHOD_ATTRIB,
        "PortSamplesControl"
    );
    assert_eq!(
        mad(&mut h, &pma_req(0x06, pma_attr::PORT_COUNTERS, 1)).0,
        mad_status::UNSUPPORTED_METHOD
    );
    let mut m = pma_req(method::GET, pma_attr::PORT_COUNTERS, 1);
    smp::CLASS_VERSION.raw().set(&mut m, 2).unwrap();
    assert_eq!(mad(&mut h, &m).0, mad_status::BAD_VERSION);
}
