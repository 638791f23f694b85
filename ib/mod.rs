// SPDX-License-Identifier: GPL-2.0

//! The InfiniBand provider: the function's `mlx5_N` device on the RDMA core.
//!
//! The provider reaches the core through a narrow interface only: [`IbCore`] (the
//! command path [`Hw`], the current caps, what bring-up already read), the async EQ's
//! port-change subscription ([`PortEvents`]) and the fatal-error consumers of the
//! function's [`Lifecycle`]. It never touches `cmd/` or `eq/` internals, and the core
//! never names the provider: `device.rs` creates [`IbStage`] as the last bring-up
//! stage and drops it first at unbind. The C that touches `struct ib_device` is the
//! shim (`ffi/ib.c`, wrapped by [`crate::ffi::ib`]).
//!
//! Files: [`provider`] (the verbs, kernel shell), and pure `core` code shared with the
//! host tests: [`port`] (port attributes both ways: MAD PortInfo, or the HCA vport
//! context with PTYS, PMTU and PVLC), [`device_attr`] (`query_device`, `fw_ver`, `hca_type`,
//! `board_id`), [`events`] (port-change sub-type → IB events), [`commands`] (MAD_IFC,
//! HCA vport queries, port registers).
//!
//! User contexts and PDs: [`context`] (kernel shell: alloc_ucontext, mmap, PDs),
//! over the pure [`abi`] (the mlx5 uverbs ABI, as libmlx5 speaks it), [`uctx`] (what
//! a context is offered, which BAR page an mmap maps) and [`res_commands`]
//! (ALLOC_PD, ALLOC_TRANSPORT_DOMAIN and their deallocs).
//!
//! CQs: [`cq`] (kernel shell: kernel CQs in coherent DMA memory, user CQs on pinned
//! memory, resize, moderation, completion and CQ error events through the EQ stage's
//! [`CqAccess`]), over the pure [`cq_commands`] (CREATE_CQ, DESTROY_CQ, MODIFY_CQ) and
//! [`cq_plan`] (ring sizes, EQ and UAR choice, page offset).
//!
//! Not there yet: the rest of the data path (QP, MR, post/poll); without it the RDMA
//! core treats the device as no kverbs provider and attaches no MAD/SA/CM client.

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod abi;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod commands;
mod context;
mod cq;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod cq_commands;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod cq_plan;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod device_attr;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod events;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod port;
// QP / SRQ async events.
mod obj_events;
mod provider;
// QP verbs (issue 11, i11-qp).
mod qp;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod qp_commands;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod qp_create;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod qp_modify;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod qp_size;
pub(crate) mod qp_uar;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod res_commands;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod uctx;
// SRQ / XRC domain / AH (issue 11): the kernel shell, and its pure parts.
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod ah_av;
mod srq;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod srq_commands;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod srq_plan;
// Pinned user memory and doorbell records (issue 11, i11-umem).
pub(crate) mod db_user;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod umem_calc;
// Memory regions (issue 11, i11-mr).
pub(crate) mod mr;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod mr_commands;

use core::sync::atomic::{AtomicU64, Ordering};

use kernel::{
    device, page, pci,
    prelude::*,
    sync::{aref::ARef, new_mutex, Arc, Mutex},
};

use crate::{
    cmd::commands::{gen_cap, GeneralCaps},
    eq::{
        port::{PortEventHandler, PortEvents, PortSubscription},
        rsc::RscTable,
        CqAccess,
    },
    ffi::ib::{IbEvent, IbInit, IbRegistration},
    hw::Hw,
    ifc::mad::smp_attr,
    init_seg::FwVersion,
    lifecycle::{FatalCause, FatalConsumer, FatalHandler, Lifecycle},
};
use abi::cq::CqCaps;
use commands::{node_info_of, MadIfcGet, QueryHcaVportContext, QueryVendorId, ReadNodeDesc};
use cq::CqVerbs;
use device_attr::{board_id_text, fw_ver_text, hca_type_text, DeviceIds};
use port::{gid_table_len, pkey_table_len, PortCaps};
use provider::{PortAccess, Provider};

/// Name of the provider's fatal-error consumer (log and removal key).
const FATAL_CONSUMER: &str = "ib (IB_EVENT_DEVICE_FATAL)";

/// What the core hands the provider.
pub(crate) struct IbCore<'a> {
    /// The command path.
    pub(crate) hw: &'a Arc<Hw>,
    /// The current general caps (after SET_HCA_CAP).
    pub(crate) caps: &'a GeneralCaps,
    /// Firmware version from the init segment.
    pub(crate) fw: FwVersion,
    /// PSID from QUERY_ADAPTER (printable ASCII, NUL-padded).
    pub(crate) board_id: &'a [u8; 16],
    /// Completion EQs (one completion vector each).
    pub(crate) comp_vectors: u32,
    /// A virtual function.
    pub(crate) is_vf: bool,
    /// Port-change events of the async EQ.
    pub(crate) port_events: &'a Arc<PortEvents>,
    /// Fatal-error consumers.
    pub(crate) life: &'a Arc<Lifecycle>,
    /// Completion EQs, the core's UAR and the CQ handler table (CQ verbs).
    pub(crate) cq: CqAccess,
    /// The QP / SRQ event handler table of the async EQ.
    pub(crate) rscs: &'a Arc<RscTable>,
}

/// Events logged in full before the log thins out (then every 1000th), as the EQ layer
/// logs async events: a port that flaps must not flood the kernel log.
const LOG_FIRST: u64 = 16;

/// Where the device's async events go: the registration, while it exists.
#[pin_data]
struct EventSink {
    dev: ARef<device::Device>,
    /// Events dispatched (for the log's thinning).
    dispatched: AtomicU64,
    /// Lock order: a leaf; taken under the async EQ's `Eq::state` and the port
    /// subscription lock (port events), and by the health work (fatal). Never held
    /// while the device is unregistered.
    #[pin]
    reg: Mutex<Option<IbRegistration>>,
}

impl EventSink {
    fn dispatch(&self, what: &str, events: &[IbEvent], port: u8) {
        let g = self.reg.lock();
        let Some(r) = g.as_ref() else {
            return;
        };
        for e in events {
            let n = self.dispatched.fetch_add(1, Ordering::Relaxed) + 1;
            if n <= LOG_FIRST || n % 1000 == 0 {
                dev_info!(
                    self.dev,
                    "{}: {} on port {} -> {} ({} IB events)\n",
                    r.name().to_str().unwrap_or("?"),
                    what,
                    port,
                    events::event_name(*e),
                    n
                );
            }
            r.dispatch(*e, u32::from(port));
        }
    }
}

impl PortEventHandler for EventSink {
    fn port_change(&self, port: u8, sub_type: u8) {
        self.dispatch("PORT_CHANGE", events::port_change_events(sub_type), port);
    }
}

impl FatalHandler for EventSink {
    fn fatal(&self, dev: &device::Device, cause: FatalCause) {
        if self.reg.lock().is_none() {
            dev_err!(
                dev,
                "IB_EVENT_DEVICE_FATAL (sensor {}) not raised: no IB device registered\n",
                cause.code
            );
            return;
        }
        // Device events name port 1 (upstream mlx5_ib does the same).
        self.dispatch("fatal error", &[IbEvent::DeviceFatal], 1);
    }
}

/// The last bring-up stage: the IB device registered with the RDMA core, port and
/// fatal events subscribed. Dropping it unsubscribes and unregisters the device.
pub(crate) struct IbStage {
    sink: Arc<EventSink>,
    life: Arc<Lifecycle>,
    _ports: PortSubscription,
}

impl IbStage {
    /// Registers `mlx5_N` for the function: reads what the device shows (node GUID,
    /// system image GUID, node description, vendor id) the way the port is accessed,
    /// then registers (the core queries the device and every port), then subscribes
    /// to port and fatal events.
    pub(crate) fn new(pdev: &pci::Device<device::Bound>, core: IbCore<'_>) -> Result<Self> {
        let dev: &device::Device<device::Bound> = pdev.as_ref();
        let caps = core.caps;
        if caps.get(gen_cap::PORT_TYPE) != 0 {
            dev_info!(
                dev,
                "port type Ethernet: RoCE is not supported yet; no IB device\n"
            );
            return Err(EOPNOTSUPP);
        }
        let num_ports = caps.get(gen_cap::NUM_PORTS);
        if num_ports == 0 {
            dev_err!(dev, "device reports 0 ports; no IB device\n");
            return Err(EPROTO);
        }
        let pkey_tbl_len = pkey_table_len(caps.get(gen_cap::PKEY_TABLE_SIZE)).ok_or_else(|| {
            dev_err!(
                dev,
                "pkey_table_size {} out of range; no IB device\n",
                caps.get(gen_cap::PKEY_TABLE_SIZE)
            );
            EPROTO
        })?;
        let gid_tbl_len = gid_table_len(caps.get(gen_cap::GID_TABLE_SIZE)).ok_or_else(|| {
            dev_err!(
                dev,
                "gid_table_size {} out of range; no IB device\n",
                caps.get(gen_cap::GID_TABLE_SIZE)
            );
            EPROTO
        })?;
        let port_caps = PortCaps {
            max_msg_sz: 1u32
                .checked_shl(u32::from(caps.get(gen_cap::LOG_MAX_MSG)))
                .unwrap_or(u32::MAX),
            pkey_tbl_len,
            gid_tbl_len,
        };
        let access = if caps.get(gen_cap::IB_VIRT) {
            PortAccess::Hca
        } else {
            PortAccess::Mad
        };
        let hw = core.hw;
        // Node data, as upstream `init_node_data` and `mlx5_query_system_image_guid`.
        let (node_guid, sys_image_guid, vendor_id, node_desc) = match access {
            PortAccess::Mad => {
                let ni = node_info_of(&hw.run(MadIfcGet {
                    port: 1,
                    attr_id: smp_attr::NODE_INFO,
                    attr_mod: 0,
                })?);
                let nd = hw.run(MadIfcGet {
                    port: 1,
                    attr_id: smp_attr::NODE_DESC,
                    attr_mod: 0,
                })?;
                (ni.node_guid, ni.sys_image_guid, ni.vendor_id, nd)
            }
            PortAccess::Hca => {
                let v = hw.run(QueryHcaVportContext {
                    port: (num_ports == 2).then_some(1),
                })?;
                let vendor = hw.run(QueryVendorId)?;
                (v.node_guid, v.sys_image_guid, vendor, hw.run(ReadNodeDesc)?)
            }
        };
        let fw = (core.fw.major, core.fw.minor, core.fw.subminor);
        let init = IbInit {
            node_guid,
            phys_port_cnt: u32::from(num_ports),
            num_comp_vectors: core.comp_vectors.max(1),
            // Upstream mlx5_ib: "not supported for now".
            local_dma_lkey: 0,
            hw_rev: u32::from(pdev.revision_id()),
            node_desc,
            fw_ver: fw_ver_text(fw).bytes(),
            board_id: board_id_text(core.board_id).bytes(),
            hca_type: hca_type_text(pdev.device_id()).bytes(),
        };
        let ids = DeviceIds {
            fw,
            sys_image_guid,
            vendor_id,
            device_id: pdev.device_id(),
            revision: pdev.revision_id(),
            is_vf: core.is_vf,
        };
        // Kernel QPs ring on the core's UAR too (QP verbs).
        let core_uar = core.cq.uar;
        let cqs = CqVerbs::new(
            dev,
            hw.clone(),
            CqCaps::from_caps(caps, page::PAGE_SHIFT as u32),
            caps.get(gen_cap::CQ_MODERATION),
            core.cq,
        );
        let provider = Arc::new(
            Provider::new(
                dev,
                hw.clone(),
                caps.clone(),
                ids,
                access,
                num_ports,
                port_caps,
                cqs,
                core_uar,
                core.rscs.clone(),
            ),
            GFP_KERNEL,
        )?;
        let reg = IbRegistration::register(dev, &init, provider)?;
        dev_info!(
            dev,
            "{}: InfiniBand device registered: {} port(s), port access {}, {} completion vector(s), node GUID {:016x}\n",
            reg.name().to_str().unwrap_or("?"),
            num_ports,
            access.name(),
            init.num_comp_vectors,
            node_guid
        );
        let plain: &device::Device = dev;
        let sink = Arc::pin_init(
            try_pin_init!(EventSink {
                dev: plain.into(),
                dispatched: AtomicU64::new(0),
                reg <- new_mutex!(Some(reg)),
            }),
            GFP_KERNEL,
        )?;
        let ports = core.port_events.subscribe(sink.clone())?;
        core.life.add_consumer(FatalConsumer {
            name: FATAL_CONSUMER,
            handler: sink.clone(),
        })?;
        Ok(Self {
            sink,
            life: core.life.clone(),
            _ports: ports,
        })
    }
}

impl Drop for IbStage {
    fn drop(&mut self) {
        self.life.remove_consumer(FATAL_CONSUMER);
        // Later events find no registration; the device is unregistered outside the
        // lock (the core may still call the provider's ops until it returns).
        let reg = self.sink.reg.lock().take();
        drop(reg);
        // `_ports` unsubscribes after this.
    }
}
