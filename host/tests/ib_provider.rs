//! The InfiniBand provider's pure parts: its typed commands (`ib/port/commands.rs`), the
//! port attribute decoders of both access methods (`ib/port/attr.rs`), the device
//! attributes and strings (`ib/device/attr.rs`) and the event mapping (`ib/port/events.rs`).

use mlx5_rs_pure::cmd::command::{self, CodecError, Command};
use mlx5_rs_pure::cmd::commands::GeneralCaps;
use mlx5_rs_pure::errno::Errno;
use mlx5_rs_pure::ffi::rdma::ib_abi::{IbEvent, PortAttr};
use mlx5_rs_pure::ib::device::attr::*;
use mlx5_rs_pure::ib::port::attr::*;
use mlx5_rs_pure::ib::port::commands::*;
use mlx5_rs_pure::ib::port::events::port_change_events;
use mlx5_rs_pure::ifc::caps::cmd_hca_cap;
use mlx5_rs_pure::ifc::eqe::port_change_sub as port_sub;
use mlx5_rs_pure::ifc::field::{Msg, MsgMut};
use mlx5_rs_pure::ifc::mad::{mad_ifc_out, smp, smp_attr};
use mlx5_rs_pure::ifc::regs::{access_register_out, ptys_reg, REG_DATA_OFFSET};
use mlx5_rs_pure::ifc::smp_attrs::port_info;
use mlx5_rs_pure::ifc::vport::{hca_vport_context, query_hca_vport_context_out};

fn input<C: Command>(cmd: &C) -> Vec<u8> {
    let mut b = vec![0u8; command::in_len(cmd)];
    command::encode(cmd, &mut b).unwrap();
    b
}

fn decode<C: Command>(cmd: C, out: &[u8]) -> Result<C::Reply, CodecError> {
    command::decode(cmd, out)
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

/// PortInfo data of an active 4x EDR port (LID 1, SM LID 1, MTU 4096, 1 GUID).
fn port_info_data() -> [u8; 64] {
    let mut d = [0u8; 64];
    let mut p = MsgMut::<port_info::Layout>::of_array(&mut d);
    p.set(port_info::GID_PREFIX, 0xfe80_0000_0000_0000u64)
        .unwrap();
    p.set(port_info::LID, 1u16).unwrap();
    p.set(port_info::MASTER_SM_LID, 1u16).unwrap();
    // IsSM-disabled etc. don't matter; extended speeds supported.
    p.set(
        port_info::CAPABILITY_MASK,
        0x0251_0868u32 | cap::EXTENDED_SPEEDS_SUP,
    )
    .unwrap();
    p.set(port_info::LINK_WIDTH_ACTIVE, width::W4X).unwrap();
    p.set(port_info::PORT_STATE, state::ACTIVE).unwrap();
    p.set(port_info::PORT_PHYS_STATE, 5u8).unwrap();
    p.set(port_info::LMC, 0u8).unwrap();
    p.set(port_info::LINK_SPEED_ACTIVE, 1u8).unwrap();
    p.set(port_info::NEIGHBOR_MTU, 5u8).unwrap();
    p.set(port_info::MASTER_SM_SL, 0u8).unwrap();
    p.set(port_info::VL_CAP, 4u8).unwrap();
    p.set(port_info::MTU_CAP, 5u8).unwrap();
    p.set(port_info::GUID_CAP, 1u8).unwrap();
    p.set(port_info::SUBNET_TIMEOUT, 18u8).unwrap();
    p.set(port_info::PKEY_VIOLATIONS, 3u16).unwrap();
    p.set(port_info::LINK_SPEED_EXT_ACTIVE, 2u8).unwrap();
    d
}

const CAPS: PortCaps = PortCaps {
    max_msg_sz: 1 << 30,
    pkey_tbl_len: 128,
    gid_tbl_len: 8,
};

#[test]
fn mad_ifc_get_encodes_a_subn_get() {
    let c = MadIfcGet {
        port: 1,
        attr_id: smp_attr::PORT_INFO,
        attr_mod: 1,
    };
    let i = input(&c);
    assert_eq!(i.len(), 16 + 256);
    assert_eq!(be16(&i, 0), 0x50d, "MAD_IFC");
    assert_eq!(be16(&i, 6), 3, "M_Key and B_Key checks off");
    assert_eq!(i[0xb], 1, "port");
    let mad = &i[16..];
    assert_eq!(
        &mad[..4],
        &[1, 0x01, 1, 0x01],
        "base version, LID-routed SM class, class version, Get"
    );
    assert_eq!(be16(mad, 16), 0x15, "attribute PortInfo");
    assert_eq!(be32(mad, 20), 1, "attribute modifier");
}

/// A MAD_IFC output whose response is `method`/`attr`/`status` with `data`.
fn mad_out(method: u8, attr: u16, status: u16, data: &[u8; 64]) -> Vec<u8> {
    let mut o = vec![0u8; mad_ifc_out::BYTES];
    let mut m = MsgMut::<mad_ifc_out::Layout>::new(&mut o).unwrap();
    let mut s = m
        .nested::<smp::Layout>(mad_ifc_out::RESPONSE_MAD_PACKET)
        .unwrap();
    s.set(smp::METHOD, method).unwrap();
    s.set(smp::ATTR_ID, attr).unwrap();
    s.set(smp::STATUS, status).unwrap();
    s.bytes_mut(smp::DATA).copy_from_slice(data);
    o
}

#[test]
fn mad_ifc_get_checks_the_response() {
    let c = MadIfcGet {
        port: 1,
        attr_id: smp_attr::PORT_INFO,
        attr_mod: 1,
    };
    let d = port_info_data();
    assert_eq!(decode(c, &mad_out(0x81, 0x15, 0, &d)).unwrap(), d);
    // Directed-route direction bit is no error.
    assert_eq!(decode(c, &mad_out(0x81, 0x15, 0x8000, &d)).unwrap(), d);
    assert_eq!(
        decode(c, &mad_out(0x01, 0x15, 0, &d)),
        Err(CodecError::BadOutput),
        "not a GetResp"
    );
    assert_eq!(
        decode(c, &mad_out(0x81, 0x11, 0, &d)),
        Err(CodecError::BadOutput),
        "another attribute"
    );
    assert_eq!(
        decode(c, &mad_out(0x81, 0x15, 0x1c, &d)),
        Err(CodecError::BadOutput),
        "error status"
    );
}

#[test]
fn port_info_decodes_to_port_attributes() {
    let pi = port_info_of(&port_info_data());
    let a = from_port_info(&pi, &CAPS).unwrap();
    assert_eq!(
        a,
        PortAttr {
            state: 4,
            max_mtu: 5,
            active_mtu: 5,
            gid_tbl_len: 1,
            port_cap_flags: 0x0251_0868 | cap::EXTENDED_SPEEDS_SUP,
            max_msg_sz: 1 << 30,
            bad_pkey_cntr: 3,
            qkey_viol_cntr: 0,
            sm_lid: 1,
            lid: 1,
            pkey_tbl_len: 128,
            active_speed: speed::EDR,
            port_cap_flags2: 0,
            lmc: 0,
            max_vl_num: 4,
            sm_sl: 0,
            subnet_timeout: 18,
            init_type_reply: 0,
            active_width: width::W4X,
            phys_state: 5,
            rsvd: [0; 3],
        }
    );
    assert_eq!(gid_prefix_of(&port_info_data()), 0xfe80_0000_0000_0000);
}

#[test]
fn port_info_speeds() {
    let mut pi = port_info_of(&port_info_data());
    pi.cap_mask &= !cap::EXTENDED_SPEEDS_SUP;
    assert_eq!(
        from_port_info(&pi, &CAPS).unwrap().active_speed,
        speed::SDR,
        "extended speeds ignored"
    );
    pi.link_speed_active = 4;
    assert_eq!(from_port_info(&pi, &CAPS).unwrap().active_speed, speed::QDR);
    pi.cap_mask |= cap::EXTENDED_SPEEDS_SUP;
    pi.link_speed_ext_active = 4;
    assert_eq!(
        from_port_info(&pi, &CAPS).unwrap().active_speed,
        speed::QDR,
        "HDR needs CapabilityMask2"
    );
    pi.cap_mask |= cap::CAP_MASK2_SUP;
    pi.cap_mask2 = cap2::LINK_SPEED_HDR_SUP;
    assert_eq!(from_port_info(&pi, &CAPS).unwrap().active_speed, speed::HDR);
    pi.link_speed_active = 3;
    assert_eq!(from_port_info(&pi, &CAPS), Err(BadPort::Speed(3)));
}

#[test]
fn port_info_rejects_what_is_not_ibta() {
    let ok = port_info_of(&port_info_data());
    let mut pi = ok;
    pi.port_state = 0;
    assert_eq!(from_port_info(&pi, &CAPS), Err(BadPort::State(0)));
    pi = ok;
    pi.port_state = 6;
    assert_eq!(from_port_info(&pi, &CAPS), Err(BadPort::State(6)));
    assert_eq!(BadPort::State(6).errno(), Errno::EPROTO);
    pi = ok;
    pi.neighbor_mtu = 6;
    assert_eq!(from_port_info(&pi, &CAPS), Err(BadPort::Mtu(6)));
    pi = ok;
    pi.mtu_cap = 0;
    assert_eq!(from_port_info(&pi, &CAPS), Err(BadPort::Mtu(0)));
    pi = ok;
    pi.link_width_active = 3;
    assert_eq!(from_port_info(&pi, &CAPS), Err(BadPort::Width(3)));
    pi = ok;
    pi.link_width_active = width::W2X | width::W8X;
    assert_eq!(
        from_port_info(&pi, &CAPS).unwrap().active_width,
        width::W8X,
        "2x needs CapabilityMask2 (4 bits read)"
    );
    pi.link_width_active = width::W2X;
    assert_eq!(
        from_port_info(&pi, &CAPS).unwrap().active_width,
        0,
        "bit 4 not read: no width"
    );
    pi.cap_mask |= cap::CAP_MASK2_SUP;
    pi.cap_mask2 = cap2::LINK_WIDTH_2X_SUP;
    assert_eq!(from_port_info(&pi, &CAPS).unwrap().active_width, width::W2X);
    pi = ok;
    pi.phys_state = 0;
    assert_eq!(from_port_info(&pi, &CAPS), Err(BadPort::PhysState(0)));
    pi = ok;
    pi.vl_cap = 6;
    assert_eq!(from_port_info(&pi, &CAPS), Err(BadPort::VlCap(6)));
}

#[test]
fn ptys_width_and_speed_map_to_ib_enums() {
    assert_eq!(width_from_ptys(1 << 0), Ok(width::W1X));
    assert_eq!(width_from_ptys(1 << 1), Ok(width::W2X));
    assert_eq!(width_from_ptys(1 << 2), Ok(width::W4X));
    assert_eq!(width_from_ptys(1 << 3), Ok(width::W8X));
    assert_eq!(width_from_ptys(1 << 4), Ok(width::W12X));
    assert_eq!(
        width_from_ptys((1 << 2) | (1 << 4)),
        Ok(width::W4X),
        "lowest bit, as upstream"
    );
    assert_eq!(
        width_from_ptys(0),
        Ok(width::W4X),
        "link down: upstream's default"
    );
    assert_eq!(width_from_ptys(1 << 5), Err(BadPort::Width(32)));
    for (bit, s) in [
        (0, speed::SDR),
        (1, speed::DDR),
        (2, speed::QDR),
        (3, speed::FDR10),
        (4, speed::FDR),
        (5, speed::EDR),
        (6, speed::HDR),
        (7, speed::NDR),
        (8, speed::XDR),
    ] {
        assert_eq!(speed_from_ptys(1 << bit), Ok(s));
    }
    assert_eq!(speed_from_ptys(0), Ok(0), "link down: no speed");
    assert_eq!(
        speed_from_ptys(0x30),
        Err(BadPort::Speed(0x30)),
        "two protocols"
    );
    assert_eq!(speed_from_ptys(1 << 9), Err(BadPort::Speed(512)));
}

#[test]
fn mtu_and_vl_codes() {
    for (b, c) in [(256, 1), (512, 2), (1024, 3), (2048, 4), (4096, 5)] {
        assert_eq!(mtu_code(b), Ok(c));
    }
    assert_eq!(mtu_code(1500), Err(BadPort::Mtu(1500)));
    assert_eq!(mtu_code(8192), Err(BadPort::Mtu(8192)));
    assert_eq!(vl_cap_from_pvlc(1), Ok(1));
    assert_eq!(vl_cap_from_pvlc(4), Ok(3));
    assert_eq!(vl_cap_from_pvlc(8), Ok(4));
    assert_eq!(vl_cap_from_pvlc(15), Ok(5));
    assert_eq!(vl_cap_from_pvlc(3), Err(BadPort::VlCap(3)));
    assert_eq!(pkey_table_len(0), Some(128));
    assert_eq!(pkey_table_len(5), Some(4096));
    assert_eq!(pkey_table_len(6), None);
    assert_eq!(gid_table_len(0), Some(8));
    assert_eq!(gid_table_len(4), Some(128));
    assert_eq!(gid_table_len(5), None);
    assert_eq!(check_port(1, 1), Some(1));
    assert_eq!(check_port(0, 1), None);
    assert_eq!(check_port(2, 1), None);
    assert_eq!(check_port(257, 2), None);
}

#[test]
fn hca_vport_context_and_registers_decode() {
    let mut o = vec![0u8; query_hca_vport_context_out::BYTES];
    {
        let mut m = MsgMut::<query_hca_vport_context_out::Layout>::new(&mut o).unwrap();
        let mut c = m
            .nested::<hca_vport_context::Layout>(query_hca_vport_context_out::HCA_VPORT_CONTEXT)
            .unwrap();
        c.set(hca_vport_context::PORT_PHYSICAL_STATE, 5u8).unwrap();
        c.set(hca_vport_context::VPORT_STATE, 4u8).unwrap();
        c.set(hca_vport_context::NODE_GUID, 0x0002_c903_0000_1234u64)
            .unwrap();
        c.set(
            hca_vport_context::SYSTEM_IMAGE_GUID,
            0x0002_c903_0000_1235u64,
        )
        .unwrap();
        c.set(hca_vport_context::CAP_MASK1, 0x0251_0868u32).unwrap();
        c.set(hca_vport_context::LID, 7u16).unwrap();
        c.set(hca_vport_context::SM_LID, 2u16).unwrap();
        c.set(hca_vport_context::LMC, 1u8).unwrap();
        c.set(hca_vport_context::SUBNET_TIMEOUT, 18u8).unwrap();
        c.set(hca_vport_context::QKEY_VIOLATION_COUNTER, 9u16)
            .unwrap();
    }
    let v = decode(QueryHcaVportContext { port: None }, &o).unwrap();
    assert_eq!(
        (v.vport_state, v.phys_state, v.lid, v.sm_lid, v.lmc),
        (4, 5, 7, 2, 1)
    );
    assert_eq!(v.node_guid, 0x0002_c903_0000_1234);
    assert_eq!(v.sys_image_guid, 0x0002_c903_0000_1235);
    let regs = PortRegs {
        width_oper: 1 << 2,
        proto_oper: 1 << 5,
        max_mtu: 4096,
        oper_mtu: 2048,
        vl_hw_cap: 8,
    };
    let a = from_hca_vport(&v, &regs, &CAPS).unwrap();
    assert_eq!(
        (a.state, a.lid, a.sm_lid, a.lmc, a.qkey_viol_cntr),
        (4, 7, 2, 1, 9)
    );
    assert_eq!((a.active_width, a.active_speed), (width::W4X, speed::EDR));
    assert_eq!((a.max_mtu, a.active_mtu, a.max_vl_num), (5, 4, 4));
    assert_eq!(
        (a.gid_tbl_len, a.pkey_tbl_len),
        (8, 128),
        "table lengths from the caps"
    );
    let mut bad = regs;
    bad.oper_mtu = 1500;
    assert_eq!(from_hca_vport(&v, &bad, &CAPS), Err(BadPort::Mtu(1500)));
    let mut bad = v;
    bad.vport_state = 0;
    assert_eq!(from_hca_vport(&bad, &regs, &CAPS), Err(BadPort::State(0)));
    // The port number is sent only for a dual-port device.
    let i = input(&QueryHcaVportContext { port: Some(2) });
    assert_eq!((be16(&i, 0), i[9] & 0xf), (0x762, 2));
    assert_eq!(input(&QueryHcaVportContext { port: None })[9], 0);
}

#[test]
fn vport_gid_and_pkey_queries() {
    let c = QueryHcaVportGid {
        port: None,
        index: 3,
    };
    let i = input(&c);
    assert_eq!((be16(&i, 0), be16(&i, 0xe)), (0x764, 3));
    assert_eq!(command::out_len(&c), 32, "header and one GID");
    let mut o = vec![0u8; 32];
    assert_eq!(decode(c, &o), Err(CodecError::BadOutput), "gids_num 0");
    o[0xc..0xe].copy_from_slice(&1u16.to_be_bytes());
    o[16..32].copy_from_slice(&[
        0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 2, 0xc9, 3, 0, 0, 0x12, 0x34,
    ]);
    assert_eq!(decode(c, &o).unwrap()[..2], [0xfe, 0x80]);
    let p = QueryHcaVportPkey {
        port: None,
        index: 0,
    };
    assert_eq!(be16(&input(&p), 0), 0x765);
    let mut o = vec![0u8; command::out_len(&p)];
    o[16..20].copy_from_slice(&[0, 0, 0xff, 0xff]);
    assert_eq!(decode(p, &o), Ok(0xffff));
}

#[test]
fn mad_table_blocks() {
    let mut d = [0u8; 64];
    d[8..16].copy_from_slice(&0x0002_c903_0000_1234u64.to_be_bytes());
    assert_eq!(
        guid_of_block(&d, 9),
        0x0002_c903_0000_1234u64.to_be_bytes(),
        "index 9 is entry 1 of block 1"
    );
    d[62..64].copy_from_slice(&0x8001u16.to_be_bytes());
    assert_eq!(pkey_of_block(&d, 31), 0x8001);
    assert_eq!(pkey_of_block(&d, 63), 0x8001, "entry 31 of block 1");
    let mut n = [0u8; 64];
    n[4..12].copy_from_slice(&0x1111u64.to_be_bytes());
    n[12..20].copy_from_slice(&0x2222u64.to_be_bytes());
    n[37..40].copy_from_slice(&[0x00, 0x02, 0xc9]);
    let ni = node_info_of(&n);
    assert_eq!(
        (ni.sys_image_guid, ni.node_guid, ni.vendor_id),
        (0x1111, 0x2222, 0x02c9)
    );
}

#[test]
fn port_registers_are_read_with_the_port_and_protocol() {
    let i = input(&ReadPtys { local_port: 1 });
    assert_eq!(be16(&i, 0), 0x805, "ACCESS_REG");
    assert_eq!(be16(&i, 6), 1, "read");
    assert_eq!(be16(&i, 0xa), 0x5004, "PTYS");
    assert_eq!(i[REG_DATA_OFFSET + 1], 1, "local_port");
    assert_eq!(i[REG_DATA_OFFSET + 3] & 0x7, 1, "proto_mask IB");
    let mut o = vec![0u8; command::out_len(&ReadPtys { local_port: 1 })];
    {
        let mut m = MsgMut::<access_register_out::Layout>::new(&mut o).unwrap();
        let mut r = m
            .nested::<ptys_reg::Layout>(access_register_out::REGISTER_DATA)
            .unwrap();
        r.set(ptys_reg::IB_LINK_WIDTH_OPER, 4u16).unwrap();
        r.set(ptys_reg::IB_PROTO_OPER, 32u16).unwrap();
    }
    assert_eq!(decode(ReadPtys { local_port: 1 }, &o), Ok((4, 32)));
    assert_eq!(be16(&input(&ReadPmtu { local_port: 1 }), 0xa), 0x5003);
    assert_eq!(be16(&input(&ReadPvlc { local_port: 1 }), 0xa), 0x500f);
    assert_eq!(be16(&input(&ReadNodeDesc), 0xa), 0x6001);
    assert_eq!(command::out_len(&ReadNodeDesc), REG_DATA_OFFSET + 64);
}

#[test]
fn fw_ver_hca_type_and_board_id_text() {
    assert_eq!(fw_ver_text((16, 35, 1012)).as_str(), "16.35.1012");
    assert_eq!(fw_ver_text((1, 2, 3)).as_str(), "1.2.0003");
    assert_eq!(
        fw_ver_text((65535, 65535, 65535)).as_str(),
        "65535.65535.65535"
    );
    assert_eq!(fw_ver_u64((16, 35, 1012)), (16 << 32) | (35 << 16) | 1012);
    assert_eq!(hca_type_text(0x1017).as_str(), "MT4119", "ConnectX-5");
    assert_eq!(hca_type_text(0x101b).as_str(), "MT4123", "ConnectX-6");
    let t = board_id_text(b"MT_0000000008\0\0\0");
    assert_eq!(t.as_str(), "MT_0000000008");
    assert_eq!(t.bytes()[13], 0, "NUL-terminated");
    assert_eq!(
        board_id_text(b"ABCDEFGHIJKLMNOP").as_str(),
        "ABCDEFGHIJKLMNOP",
        "all 16 bytes"
    );
}

#[test]
fn device_attributes_follow_the_caps() {
    let mut raw = [0u8; cmd_hca_cap::BYTES];
    {
        let mut m = MsgMut::<cmd_hca_cap::Layout>::of_array(&mut raw);
        m.set(cmd_hca_cap::LOG_MAX_QP, 18u8).unwrap();
        m.set(cmd_hca_cap::LOG_MAX_QP_SZ, 15u8).unwrap();
        m.set(cmd_hca_cap::LOG_MAX_CQ, 24u8).unwrap();
        m.set(cmd_hca_cap::LOG_MAX_CQ_SZ, 22u8).unwrap();
        m.set(cmd_hca_cap::MAX_WQE_SZ_RQ, 512u16).unwrap();
        m.set(cmd_hca_cap::MAX_WQE_SZ_SQ, 896u16).unwrap();
        m.set(cmd_hca_cap::LOG_MAX_RA_REQ_QP, 4u8).unwrap();
        m.set(cmd_hca_cap::LOG_PG_SZ, 12u8).unwrap();
        m.set(cmd_hca_cap::PKV, true).unwrap();
        m.set(cmd_hca_cap::UMR_MODIFY_ENTITY_SIZE_DISABLED, true)
            .unwrap();
        m.set(cmd_hca_cap::LOCAL_CA_ACK_DELAY, 16u8).unwrap();
        m.set(cmd_hca_cap::DEVICE_FREQUENCY_KHZ, 156_250u32)
            .unwrap();
    }
    let caps = GeneralCaps::from_bytes(&raw).unwrap();
    let ids = DeviceIds {
        fw: (16, 35, 1012),
        sys_image_guid: 0x1234,
        vendor_id: 0x02c9,
        device_id: 0x1017,
        revision: 0,
        is_vf: false,
    };
    let a = device_attr(&caps, None, &ids, 128);
    assert_eq!(a.max_qp, 1 << 18);
    assert_eq!(a.max_qp_wr, (1 << 15) / 4, "256-byte kernel send WQEs");
    assert_eq!(a.max_cq, 1 << 24);
    assert_eq!(a.max_cqe, (1 << 22) - 1);
    assert_eq!(a.max_recv_sge, 32);
    assert_eq!(
        a.max_send_sge,
        (512 - 32) / 16,
        "send descriptor capped at 512 bytes"
    );
    assert_eq!(a.max_sge_rd, 30);
    assert_eq!(a.max_qp_rd_atom, 16);
    assert_eq!(a.max_res_rd_atom, 16 << 18);
    assert_eq!(a.page_size_cap, !0xfff);
    assert_eq!(a.max_pkeys, 128);
    assert_eq!(a.local_ca_ack_delay, 16);
    assert_eq!(a.hca_core_clock, 156_250, "kHz, from device_frequency_khz");
    assert_eq!(
        (a.vendor_id, a.vendor_part_id, a.sys_image_guid),
        (0x02c9, 0x1017, 0x1234)
    );
    assert_eq!(a.fw_ver, fw_ver_u64((16, 35, 1012)));
    assert_ne!(a.device_cap_flags & dev_cap::BAD_PKEY_CNTR, 0);
    assert_eq!(a.device_cap_flags & dev_cap::BAD_QKEY_CNTR, 0);
    assert_eq!(
        a.device_cap_flags & dev_cap::MEM_MGT_EXTENSIONS,
        0,
        "UMR entity size change disabled"
    );
    assert_ne!(a.device_cap_flags & dev_cap::SYS_IMAGE_GUID, 0);
    assert_eq!(a.kernel_cap_flags & kernel_cap::VIRTUAL_FUNCTION, 0);
    let vf = device_attr(&caps, None, &DeviceIds { is_vf: true, ..ids }, 128);
    assert_ne!(vf.kernel_cap_flags & kernel_cap::VIRTUAL_FUNCTION, 0);
    // A device log beyond 31 saturates instead of overflowing.
    let mut m = MsgMut::<cmd_hca_cap::Layout>::of_array(&mut raw);
    m.set(cmd_hca_cap::LOG_MAX_CQ, 31u8).unwrap();
    m.set(cmd_hca_cap::LOG_PG_SZ, 255u8).unwrap();
    let a = device_attr(&GeneralCaps::from_bytes(&raw).unwrap(), None, &ids, 128);
    assert_eq!(a.max_cq, 1 << 31);
    assert_eq!(a.page_size_cap, 0, "no page size");
    let _ = Msg::<cmd_hca_cap::Layout>::of_array(&raw);
}

#[test]
fn device_attributes_advertise_only_what_the_provider_serves() {
    // A ConnectX-5's caps: XRC, memory windows, UMR, multicast loopback blocking,
    // IPoIB offloads and end padding. Upstream advertises each; the provider serves XRC,
    // memory windows, fast registration and multicast loopback blocking.
    let mut g = GeneralCaps::from_bytes(&[0u8; cmd_hca_cap::BYTES]).unwrap();
    for f in [
        cmd_hca_cap::XRC,
        cmd_hca_cap::IMAICL,
        cmd_hca_cap::BLOCK_LB_MC,
        cmd_hca_cap::IPOIB_BASIC_OFFLOADS,
        cmd_hca_cap::END_PAD,
        cmd_hca_cap::PKV,
        cmd_hca_cap::APM,
    ] {
        g.set(f, true).unwrap();
    }
    g.set(cmd_hca_cap::LOG_MAX_MKEY, 24u8).unwrap();
    g.set(cmd_hca_cap::LOG_MAX_KLM_LIST_SIZE, 16u8).unwrap();
    g.set(cmd_hca_cap::LOG_MAX_MCG, 21u8).unwrap();
    g.set(cmd_hca_cap::MAX_QP_MCG, 240_481u32).unwrap();
    let ids = DeviceIds {
        fw: (16, 35, 1012),
        sys_image_guid: 1,
        vendor_id: 0x02c9,
        device_id: 0x1017,
        revision: 0,
        is_vf: false,
    };
    let a = device_attr(&g, None, &ids, 128);
    for (bit, what) in [
        (dev_cap::UD_IP_CSUM, "UD checksum offload: no send path"),
        (
            dev_cap::PCI_WRITE_END_PADDING,
            "end padding: the create flag is refused",
        ),
    ] {
        assert_eq!(a.device_cap_flags & bit, 0, "{what}");
    }
    for (bit, what) in [
        (
            kernel_cap::SG_GAPS_REG,
            "gappy registration: no SG_GAPS alloc_mr",
        ),
        (kernel_cap::UD_TSO, "UD TSO: no send path"),
    ] {
        assert_eq!(a.kernel_cap_flags & bit, 0, "{what}");
    }
    // Memory windows (alloc_mw) as upstream reports them with `imaicl`.
    assert_eq!(a.max_mw, 1 << 24, "max_mw = 1 << log_max_mkey");
    // Fast registration as upstream reports it: 1 << log_max_klm_list_size, but no
    // more than alloc_mr takes.
    assert_eq!(a.max_fast_reg_page_list_len, 1 << 16);
    let mut big = g.clone();
    big.set(cmd_hca_cap::LOG_MAX_KLM_LIST_SIZE, 24u8).unwrap();
    let b = device_attr(&big, None, &ids, 128);
    assert_eq!(b.max_fast_reg_page_list_len, ALLOC_MR_MAX_SG);
    assert_ne!(
        a.kernel_cap_flags & kernel_cap::BLOCK_MULTICAST_LOOPBACK,
        0,
        "the create flag is taken with block_lb_mc"
    );
    // Limits of verbs the provider lacks: none (upstream reports them from the caps).
    assert_eq!(a.max_pi_fast_reg_page_list_len, 0, "no alloc_mr_integrity");
    assert_eq!(a.max_mcast_grp, 0, "no attach_mcast");
    assert_eq!(a.max_mcast_qp_attach, 0, "no attach_mcast");
    assert_eq!(a.max_total_mcast_qp_attach, 0, "no attach_mcast");
    // What is served stays advertised (XRC: domains, XRC SRQs and XRC QPs; memory
    // windows of type 1 and 2B).
    for bit in [
        dev_cap::XRC,
        dev_cap::MEM_MGT_EXTENSIONS,
        dev_cap::MEM_WINDOW,
        dev_cap::MEM_WINDOW_TYPE_2B,
        dev_cap::BAD_PKEY_CNTR,
        dev_cap::AUTO_PATH_MIG,
        dev_cap::CHANGE_PHY_PORT,
        dev_cap::PORT_ACTIVE_EVENT,
        dev_cap::SYS_IMAGE_GUID,
        dev_cap::RC_RNR_NAK_GEN,
    ] {
        assert_ne!(a.device_cap_flags & bit, 0, "{bit:#x}");
    }
}

#[test]
fn port_change_sub_types_raise_upstreams_events() {
    use IbEvent::*;
    assert_eq!(
        port_change_events(port_sub::ACTIVE),
        &[DeviceSpeedChange, PortActive]
    );
    assert_eq!(
        port_change_events(port_sub::DOWN),
        &[DeviceSpeedChange, PortErr]
    );
    assert_eq!(
        port_change_events(port_sub::INITIALIZED),
        &[DeviceSpeedChange, PortErr]
    );
    assert_eq!(port_change_events(port_sub::LID), &[LidChange]);
    assert_eq!(port_change_events(port_sub::PKEY), &[PkeyChange]);
    assert_eq!(port_change_events(port_sub::GUID), &[GidChange]);
    assert_eq!(
        port_change_events(port_sub::CLIENT_REREG),
        &[ClientReregister]
    );
    assert!(port_change_events(2).is_empty());
    assert!(port_change_events(0).is_empty());
    // The enum values the shim checks against `enum ib_event_type`.
    assert_eq!(
        [
            DeviceFatal,
            PortActive,
            PortErr,
            LidChange,
            PkeyChange,
            ClientReregister,
            GidChange,
            DeviceSpeedChange
        ]
        .map(|e| e as u32),
        [8, 9, 10, 11, 12, 17, 18, 20]
    );
}

#[test]
fn qp_and_srq_events_raise_upstreams_events() {
    use mlx5_rs_pure::ib::port::events::{event_name, qp_event, srq_event};
    use mlx5_rs_pure::ifc::eqe::event_type as et;
    use IbEvent::*;
    // mlx5_ib qp.c `mlx5_ib_handle_qp_event`, srq.c `mlx5_ib_srq_event`; the values
    // are `enum ib_event_type`'s (checked by the shim against ib_verbs.h).
    let qp = [
        (et::PATH_MIG, PathMig, 6),
        (et::COMM_EST, CommEst, 4),
        (et::SQ_DRAINED, SqDrained, 5),
        (et::SRQ_LAST_WQE, QpLastWqeReached, 16),
        (et::WQ_CATAS_ERROR, QpFatal, 1),
        (et::PATH_MIG_FAILED, PathMigErr, 7),
        (et::WQ_INVAL_REQ_ERROR, QpReqErr, 2),
        (et::WQ_ACCESS_ERROR, QpAccessErr, 3),
    ];
    for (t, e, v) in qp {
        assert_eq!(qp_event(t), Some(e), "{}", event_name(e));
        assert_eq!(e as u32, v);
        assert_eq!(srq_event(t), None);
    }
    assert_eq!(srq_event(et::SRQ_RQ_LIMIT), Some(SrqLimitReached));
    assert_eq!(srq_event(et::SRQ_CATAS_ERROR), Some(SrqErr));
    assert_eq!((SrqLimitReached as u32, SrqErr as u32), (15, 14));
    for t in [
        et::SRQ_RQ_LIMIT,
        et::SRQ_CATAS_ERROR,
        et::CQ_ERROR,
        et::PORT_CHANGE,
        0x99,
    ] {
        assert_eq!(qp_event(t), None);
    }
    assert_eq!(srq_event(et::COMM_EST), None);
    assert_eq!(event_name(QpLastWqeReached), "IB_EVENT_QP_LAST_WQE_REACHED");
}

#[test]
fn atomic_cap_as_upstream_get_atomic_caps_qp() {
    use mlx5_rs_pure::cmd::commands::AtomicCaps;
    let cx5 = AtomicCaps {
        operations: 0xf,
        size_qp: 1 << 3,
        req_8b_endianness_mode: 1,
        host_endianness_supported: true,
    };
    assert_eq!(atomic_cap(Some(&cx5)), ib_atomic::HCA);
    assert_eq!(atomic_cap(None), ib_atomic::NONE, "no cap atomic");
    for (c, why) in [
        (
            AtomicCaps {
                req_8b_endianness_mode: 0,
                ..cx5
            },
            "big-endian responder",
        ),
        (
            AtomicCaps {
                operations: 0b01,
                ..cx5
            },
            "compare-swap without fetch-add",
        ),
        (
            AtomicCaps {
                operations: 0b1100,
                ..cx5
            },
            "only the extended operations",
        ),
        (
            AtomicCaps {
                size_qp: 1 << 2,
                ..cx5
            },
            "no 8-byte operands",
        ),
    ] {
        assert_eq!(atomic_cap(Some(&c)), ib_atomic::NONE, "{why}");
    }
    let g = GeneralCaps::from_bytes(&[0u8; cmd_hca_cap::BYTES]).unwrap();
    let ids = DeviceIds {
        fw: (16, 35, 1012),
        sys_image_guid: 1,
        vendor_id: 0x02c9,
        device_id: 0x1017,
        revision: 0,
        is_vf: false,
    };
    assert_eq!(
        device_attr(&g, Some(&cx5), &ids, 128).atomic_cap,
        ib_atomic::HCA
    );
    assert_eq!(device_attr(&g, None, &ids, 128).atomic_cap, ib_atomic::NONE);
}

#[test]
fn memory_windows_only_with_imaicl() {
    // Upstream main.c: MEM_WINDOW, MEM_WINDOW_TYPE_2B and max_mw only with `imaicl`.
    let ids = DeviceIds {
        fw: (16, 35, 1012),
        sys_image_guid: 1,
        vendor_id: 0x02c9,
        device_id: 0x1017,
        revision: 0,
        is_vf: false,
    };
    let mut g = GeneralCaps::from_bytes(&[0u8; cmd_hca_cap::BYTES]).unwrap();
    g.set(cmd_hca_cap::LOG_MAX_MKEY, 20u8).unwrap();
    let a = device_attr(&g, None, &ids, 128);
    let mw = dev_cap::MEM_WINDOW | dev_cap::MEM_WINDOW_TYPE_2B;
    assert_eq!(a.device_cap_flags & mw, 0);
    assert_eq!(a.max_mw, 0);
    g.set(cmd_hca_cap::IMAICL, true).unwrap();
    let a = device_attr(&g, None, &ids, 128);
    assert_eq!(a.device_cap_flags & mw, mw);
    assert_eq!(a.max_mw, 1 << 20);
}
