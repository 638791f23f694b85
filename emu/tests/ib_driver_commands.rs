//! The InfiniBand provider's typed commands (`ib/port/commands.rs`, through the host crate)
//! against the emulated port: each input is built by the driver's encoder, executed
//! by the firmware model, parsed by the driver's decoder and turned into port
//! attributes by the driver's pure decoders (`ib/port/attr.rs`), for both access methods
//! (cap `ib_virt` 0: MAD_IFC, 1: HCA vport commands), which must agree.

mod common;

use common::{give_pages, input, Host};
use mlx5_emu::config::EmuConfig;
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_rs_pure::cmd::command::{self, CodecError, Command};
use mlx5_rs_pure::ib::port::attr::{
    from_hca_vport, from_port_info, gid_table_len, pkey_table_len, speed, state, width, PortCaps,
    PortRegs,
};
use mlx5_rs_pure::ib::port::commands::*;
use mlx5_rs_pure::ifc::caps::cmd_hca_cap;
use mlx5_rs_pure::ifc::mad::smp_attr;
use serde_json::json;

fn initialized(ib_virt: bool) -> Host {
    let mut h = Host::with(EmuConfig {
        boot_pages: 16,
        init_pages: 32,
        ib_virt,
        ..EmuConfig::default()
    });
    h.ok(&input(16, Opcode::ENABLE_HCA as u16, 0, &[]), 16);
    give_pages(&mut h, 48);
    h.ok(&input(32, Opcode::INIT_HCA as u16, 0, &[]), 16);
    h
}

fn exec<C: Command>(h: &mut Host, cmd: C) -> Result<C::Reply, CodecError> {
    let mut i = vec![0u8; command::in_len(&cmd)];
    command::encode(&cmd, &mut i).unwrap();
    let out = h.ok(&i, command::out_len(&cmd));
    command::decode(cmd, &out)
}

/// The caps the provider reads, as the driver gets them (QUERY_HCA_CAP current).
fn port_caps(h: &mut Host) -> (PortCaps, bool) {
    let c = exec(
        h,
        mlx5_rs_pure::cmd::commands::QueryGeneralCaps { current: true },
    )
    .unwrap();
    (
        PortCaps {
            max_msg_sz: 1 << c.get(cmd_hca_cap::LOG_MAX_MSG),
            pkey_tbl_len: pkey_table_len(c.get(cmd_hca_cap::PKEY_TABLE_SIZE)).unwrap(),
            gid_tbl_len: gid_table_len(c.get(cmd_hca_cap::GID_TABLE_SIZE)).unwrap(),
        },
        c.get(cmd_hca_cap::IB_VIRT),
    )
}

fn mad(h: &mut Host, attr_id: u16, attr_mod: u32) -> [u8; SMP_DATA_BYTES] {
    exec(
        h,
        MadIfcGet {
            port: 1,
            attr_id,
            attr_mod,
        },
    )
    .unwrap()
}

fn hca_port(h: &mut Host, caps: &PortCaps) -> mlx5_rs_pure::ffi::rdma::ib_abi::PortAttr {
    let v = exec(h, QueryHcaVportContext { port: None }).unwrap();
    let (width_oper, proto_oper) = exec(h, ReadPtys { local_port: 1 }).unwrap();
    let (max_mtu, oper_mtu) = exec(h, ReadPmtu { local_port: 1 }).unwrap();
    let vl_hw_cap = exec(h, ReadPvlc { local_port: 1 }).unwrap();
    let regs = PortRegs {
        width_oper,
        proto_oper,
        max_mtu,
        oper_mtu,
        vl_hw_cap,
    };
    from_hca_vport(&v, &regs, caps).unwrap()
}

#[test]
fn mad_path_reads_the_emulated_port() {
    let mut h = initialized(false);
    let (caps, ib_virt) = port_caps(&mut h);
    assert!(!ib_virt);
    let pi = mad(&mut h, smp_attr::PORT_INFO, 1);
    let a = from_port_info(&port_info_of(&pi), &caps).unwrap();
    assert_eq!(a.state, u32::from(state::ACTIVE));
    assert_eq!((a.lid, a.sm_lid, a.lmc), (2, 1, 0));
    assert_eq!((a.active_width, a.active_speed), (width::W4X, speed::EDR));
    assert_eq!((a.max_mtu, a.active_mtu), (5, 5));
    assert_eq!(a.pkey_tbl_len, 128);
    assert_eq!(gid_prefix_of(&pi), 0xfe80_0000_0000_0000);
    let ni = node_info_of(&mad(&mut h, smp_attr::NODE_INFO, 0));
    assert_eq!(ni.node_guid, 0x0002_c903_00a5_0000);
    assert_eq!(ni.vendor_id, 0x02c9);
    let gi = mad(&mut h, smp_attr::GUID_INFO, 0);
    assert_eq!(
        u64::from_be_bytes(guid_of_block(&gi, 0)),
        ni.node_guid + 1,
        "port GUID"
    );
    let pk = mad(&mut h, smp_attr::PKEY_TABLE, 0);
    assert_eq!(pkey_of_block(&pk, 0), 0xffff);
    let nd = mad(&mut h, smp_attr::NODE_DESC, 0);
    assert!(nd.starts_with(b"MT4119"));
}

#[test]
fn both_access_methods_agree() {
    let mut h = initialized(true);
    let (caps, ib_virt) = port_caps(&mut h);
    assert!(ib_virt);
    let hca = hca_port(&mut h, &caps);
    let pi = mad(&mut h, smp_attr::PORT_INFO, 1);
    let m = from_port_info(&port_info_of(&pi), &caps).unwrap();
    for (what, a, b) in [
        ("state", hca.state, m.state),
        ("lid", hca.lid, m.lid),
        ("sm_lid", hca.sm_lid, m.sm_lid),
        ("max_mtu", hca.max_mtu, m.max_mtu),
        ("active_mtu", hca.active_mtu, m.active_mtu),
        ("cap_mask", hca.port_cap_flags, m.port_cap_flags),
        ("gid_tbl_len", hca.gid_tbl_len, m.gid_tbl_len),
        (
            "speed",
            u32::from(hca.active_speed),
            u32::from(m.active_speed),
        ),
        (
            "width",
            u32::from(hca.active_width),
            u32::from(m.active_width),
        ),
        (
            "phys_state",
            u32::from(hca.phys_state),
            u32::from(m.phys_state),
        ),
        (
            "max_vl_num",
            u32::from(hca.max_vl_num),
            u32::from(m.max_vl_num),
        ),
        (
            "subnet_timeout",
            u32::from(hca.subnet_timeout),
            u32::from(m.subnet_timeout),
        ),
    ] {
        assert_eq!(a, b, "{what}: HCA vport vs MAD");
    }
    let v = exec(&mut h, QueryHcaVportContext { port: None }).unwrap();
    let ni = node_info_of(&mad(&mut h, smp_attr::NODE_INFO, 0));
    assert_eq!(
        (v.node_guid, v.sys_image_guid),
        (ni.node_guid, ni.sys_image_guid)
    );
    let gid = exec(
        &mut h,
        QueryHcaVportGid {
            port: None,
            index: 0,
        },
    )
    .unwrap();
    assert_eq!(
        u64::from_be_bytes(gid[..8].try_into().unwrap()),
        gid_prefix_of(&pi)
    );
    assert_eq!(
        u64::from_be_bytes(gid[8..].try_into().unwrap()),
        ni.node_guid + 1
    );
    assert_eq!(
        exec(
            &mut h,
            QueryHcaVportPkey {
                port: None,
                index: 0
            }
        ),
        Ok(0xffff)
    );
    assert_eq!(exec(&mut h, QueryVendorId), Ok(ni.vendor_id));
    let nd = exec(&mut h, ReadNodeDesc).unwrap();
    assert_eq!(
        nd,
        mad(&mut h, smp_attr::NODE_DESC, 0),
        "NODE_DESC register = NodeDescription"
    );
}

#[test]
fn port_changes_are_read_back_both_ways() {
    let mut h = initialized(true);
    let (caps, _) = port_caps(&mut h);
    let r = mlx5_emu::control::handle(&h.dev, &json!({"cmd": "link", "up": false}));
    assert_eq!(r["ok"], true);
    let down = hca_port(&mut h, &caps);
    assert_eq!(down.state, u32::from(state::DOWN));
    let m = from_port_info(&port_info_of(&mad(&mut h, smp_attr::PORT_INFO, 1)), &caps).unwrap();
    assert_eq!(m.state, u32::from(state::DOWN));
    mlx5_emu::control::handle(&h.dev, &json!({"cmd": "link", "up": true}));
    let r = mlx5_emu::control::handle(
        &h.dev,
        &json!({"cmd": "ib_port", "lid": "0x1234", "pkey": {"index": 1, "value": "0x8001"}}),
    );
    assert_eq!(r["ok"], true, "{r}");
    let up = hca_port(&mut h, &caps);
    assert_eq!((up.state, up.lid), (u32::from(state::ACTIVE), 0x1234));
    assert_eq!(
        exec(
            &mut h,
            QueryHcaVportPkey {
                port: None,
                index: 1
            }
        ),
        Ok(0x8001)
    );
    let pk = mad(&mut h, smp_attr::PKEY_TABLE, 0);
    assert_eq!(pkey_of_block(&pk, 1), 0x8001);
}

#[test]
fn refusals_are_rejected_not_trusted() {
    let mut h = initialized(false);
    // An attribute the SMA does not answer comes back with a MAD status: rejected.
    let c = MadIfcGet {
        port: 1,
        attr_id: smp_attr::SM_INFO,
        attr_mod: 0,
    };
    assert_eq!(exec(&mut h, c), Err(CodecError::BadOutput));
    // A P_KeyTable block beyond the table: INVALID_ATTRIB_VALUE, rejected.
    let c = MadIfcGet {
        port: 1,
        attr_id: smp_attr::PKEY_TABLE,
        attr_mod: 4,
    };
    assert_eq!(exec(&mut h, c), Err(CodecError::BadOutput));
}

/// A user context's and a PD's commands (`ib/pd/commands.rs`, the core's UAR
/// commands) against the firmware model: distinct numbers, counted as live objects,
/// and every one released again by its dealloc.
#[test]
fn user_context_resources_allocated_and_released() {
    use mlx5_rs_pure::eq::commands::{AllocUar, DeallocUar};
    use mlx5_rs_pure::ib::pd::commands::{
        AllocPd, AllocTransportDomain, DeallocPd, DeallocTransportDomain,
    };
    let mut h = initialized(false);
    let live = |h: &Host, k: &str| {
        h.dev
            .fw()
            .objs
            .counts()
            .into_iter()
            .find(|(n, _)| *n == k)
            .map(|(_, c)| c)
            .unwrap()
    };
    let pds = [
        exec(&mut h, AllocPd).unwrap(),
        exec(&mut h, AllocPd).unwrap(),
    ];
    assert_ne!(pds[0], pds[1]);
    assert!(pds.iter().all(|&p| p < 1 << 24));
    let tdn = exec(&mut h, AllocTransportDomain).unwrap();
    let uars = [
        exec(&mut h, AllocUar).unwrap(),
        exec(&mut h, AllocUar).unwrap(),
    ];
    assert_ne!(uars[0], uars[1]);
    assert_eq!(live(&h, "pd"), 2);
    assert_eq!(live(&h, "transport_domain"), 1);
    for pdn in pds {
        exec(&mut h, DeallocPd { pdn }).unwrap();
    }
    exec(&mut h, DeallocTransportDomain { tdn }).unwrap();
    for uar in uars {
        exec(&mut h, DeallocUar { uar }).unwrap();
    }
    assert_eq!(h.dev.fw().objs.total(), 0);
    // A second dealloc of the same PD is refused by the device (bad resource).
    let (status, _, _) = {
        let cmd = DeallocPd { pdn: pds[0] };
        let mut i = vec![0u8; command::in_len(&cmd)];
        command::encode(&cmd, &mut i).unwrap();
        h.run(&i, command::out_len(&cmd))
    };
    assert_ne!(status, 0);
}

#[test]
fn mr_mkeys_carry_the_translation_table() {
    use mlx5_rs_pure::ib::mr::commands::*;
    use mlx5_rs_pure::ib::pd::commands::{AllocPd, DeallocPd};
    use mlx5_rs_pure::ib::umem::plan::{access, num_dma_blocks};
    use mlx5_rs_pure::ifc::mkey::mkc;
    use std::cell::RefCell;
    let mut h = initialized(false);
    let pdn = exec(&mut h, AllocPd).unwrap();
    let caps = MrCaps::default();
    // A DMA MR: PA mode, unbounded length.
    let key = 0x11;
    let dma = exec(
        &mut h,
        CreateDmaMkey {
            pdn,
            access: mkey_access(access::LOCAL_WRITE | access::RELAXED_ORDERING, &caps),
            key,
            ats: false,
        },
    )
    .unwrap();
    // A user MR of 1,000 4 KiB blocks from an IOVA inside a page: its table spans
    // 16 mailbox blocks.
    let (iova, len) = (0x7f12_3456_7800u64, 999 * 4096u64);
    let n = num_dma_blocks(iova, len, 4096).unwrap();
    assert_eq!(n, 1000);
    let addrs: Vec<u64> = (0..n).map(|k| 0x2_0000_0000 + (n - k) * 0x1000).collect();
    let mut src = SliceBlocks(&addrs);
    let mtt = exec(
        &mut h,
        CreateMttMkey {
            pdn,
            access: mkey_access(access::LOCAL_WRITE | access::REMOTE_READ, &caps),
            key: 0x12,
            iova,
            len,
            page_shift: 12,
            nblocks: n,
            pg: false,
            blocks: RefCell::new(&mut src),
        },
    )
    .unwrap();
    assert_ne!(mkey_of(dma, key), mkey_of(mtt, 0x12));
    {
        let fw = h.dev.fw();
        let d = &fw.objs.mkeys[&dma];
        assert_eq!(mkc::LENGTH64.raw().get(&d.ctx), Some(1));
        assert_eq!(mkc::MKEY_7_0.raw().get(&d.ctx), Some(0x11));
        let m = &fw.objs.mkeys[&mtt];
        assert_eq!(m.pd, pdn);
        assert_eq!(mkc::START_ADDR.raw().get(&m.ctx), Some(iova));
        assert_eq!(mkc::LEN.raw().get(&m.ctx), Some(len));
        assert_eq!(mkc::TRANSLATIONS_OCTWORD_SIZE.raw().get(&m.ctx), Some(500));
        assert_eq!(mkc::RR.raw().get(&m.ctx), Some(1));
        assert_eq!(mkc::RW.raw().get(&m.ctx), Some(0));
        // The device got every entry, in order, big-endian.
        assert_eq!(m.translations.len(), 8000);
        for (k, a) in addrs.iter().enumerate() {
            let e = u64::from_be_bytes(m.translations[k * 8..k * 8 + 8].try_into().unwrap());
            assert_eq!(e, *a, "entry {k}");
        }
    }
    exec(&mut h, DestroyMkey { index: mtt }).unwrap();
    exec(&mut h, DestroyMkey { index: dma }).unwrap();
    exec(&mut h, DeallocPd { pdn }).unwrap();
    assert_eq!(h.dev.fw().objs.total(), 0);
    // A second destroy is refused by the device (bad resource).
    let cmd = DestroyMkey { index: mtt };
    let mut i = vec![0u8; command::in_len(&cmd)];
    command::encode(&cmd, &mut i).unwrap();
    assert_ne!(h.run(&i, command::out_len(&cmd)).0, 0);
}
