// SPDX-License-Identifier: GPL-2.0

//! The InfiniBand provider: the function's `mlx5_N` device on the RDMA core.
//!
//! The provider reaches the core through a narrow interface only: [`IbCore`] (the
//! command path [`Hw`], the current caps, what bring-up already read), the async EQ's
//! port-change subscription ([`PortEvents`]) and the fatal-error consumers of the
//! function's [`Lifecycle`]. It never touches `cmd/` or `eq/` internals, and the core
//! never names the provider: `device.rs` creates [`IbStage`] as the last bring-up
//! stage and drops it first at unbind. The C that touches `struct ib_device` is the
//! shim (`ffi/rdma/ib*.c`, wrapped by [`crate::ffi::rdma`]).
//!
//! One folder per verb family, as the core is one folder per subsystem. In each,
//! `mod.rs` is the kernel shell (locks, DMA memory, the shim's objects, and the
//! family's verbs object, which implements the shim's `Ib<Family>Ops`) and the other
//! files are pure `core` code, compiled into the host test crate too: `commands.rs`
//! (the family's commands, one type each), `plan.rs` (decisions that depend on
//! numbers only) and files named for what they hold.
//! - [`device`]: the provider ([`device::Provider`], the shim's `IbOps`): it holds
//!   one verbs object per family and serves query_device over `device/attr.rs`
//!   (`query_device`, `fw_ver`, `hca_type`, `board_id`); no family imports it;
//! - [`port`]: the port verbs (query_port, query_pkey, query_gid) over port
//!   attributes both ways (`attr.rs`: MAD PortInfo, or the HCA vport context with
//!   PTYS, PMTU and PVLC), MAD_IFC, vport queries and port registers (`commands.rs`),
//!   port-change sub-types as IB events (`events.rs`);
//! - [`uctx`]: user contexts (alloc_ucontext, mmap, UAR objects) over the uverbs ABI
//!   ([`abi`], as libmlx5 speaks it) and `uctx/plan.rs` (what a context is offered,
//!   which BAR page an mmap maps); `uctx/uar.rs` holds the bfregs a context's QPs
//!   ring (kernel code under a lock: the one such file outside a `mod.rs`);
//! - [`pd`]: alloc_pd / dealloc_pd, and the transport domain of a context;
//! - [`ah`]: address handles (the address vector, `ah/av.rs`);
//! - [`cq`]: kernel and user CQs, resize, moderation, completion and CQ error events
//!   through the EQ stage's [`CqAccess`];
//! - [`qp`]: user and kernel QPs (create, modify, query, destroy) over
//!   `qp/{create,modify,size}.rs`; kernel QPs' post_send / post_recv over
//!   `qp/{send_wqe,recv_wqe}.rs`, their completions' bookkeeping in `qp/kdp.rs`;
//! - [`mr`]: DMA and user MRs (CREATE_MKEY with the translation inline, rereg, dereg);
//! - [`srq`]: SRQs and XRC domains;
//! - [`umem`]: doorbell records of user objects, and the arithmetic of pinned user
//!   memory (`umem/plan.rs`; the pinning itself is `crate::ffi::rdma::umem`).
//!
//! Layering: `device` above `srq`, `qp` and `cq`, which use `uctx`, which uses
//! `pd`; `abi`, `port` and `umem` at the bottom. `uctx` does not import `qp`.
//!
//! The kernel verbs data path (post_send, post_recv, poll_cq, req_notify_cq) and
//! process_mad make the device a kverbs provider: the RDMA core attaches its MAD, SA,
//! CM and multicast clients, and the MAD layer runs QP0 and QP1 through our queues.
//! Fast registration: alloc_mr (`IB_MR_TYPE_MEM_REG`), map_mr_sg and IB_WR_REG_MR /
//! IB_WR_LOCAL_INV. Not there yet: post_srq_recv (EOPNOTSUPP), drain_sq / drain_rq of
//! our own (the core's generic drain serves; upstream's own adds software flushes
//! after a fatal error).

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod abi;
mod ah;
mod cq;
mod device;
// QP / SRQ async events, shared by the QP and SRQ families.
pub(crate) mod mr;
mod obj_events;
mod pd;
mod port;
pub(crate) mod qp;
mod srq;
pub(crate) mod uctx;
pub(crate) mod umem;

use core::sync::atomic::{AtomicU64, Ordering};

use kernel::{
    device::{Bound, Device},
    page, pci,
    prelude::*,
    sync::{aref::ARef, new_mutex, Arc, Mutex},
};

use crate::{
    cmd::commands::{gen_cap, AtomicCaps, GeneralCaps},
    eq::{
        port::{PortEventHandler, PortEvents, PortSubscription},
        rsc::RscTable,
        CqAccess,
    },
    ffi::rdma::ib::{IbEvent, IbInit, IbRegistration},
    hw::Hw,
    ifc::mad::smp_attr,
    init_seg_io::FwVersion,
    lifecycle::{FatalCause, FatalConsumer, FatalHandler, Lifecycle},
};
use abi::cq::CqCaps;
use cq::kclean::KcqTable;
use cq::CqVerbs;
use device::attr::{board_id_text, fw_ver_text, hca_type_text, DeviceIds};
use device::Provider;
use mr::MrCache;
use port::attr::{gid_table_len, pkey_table_len, PortCaps};
use port::commands::{node_info_of, MadIfcGet, QueryHcaVportContext, QueryVendorId, ReadNodeDesc};
use port::PortAccess;
use qp::{kdp::KqpTable, KernelObjs};
use srq::kdp::KsrqTable;

/// Name of the provider's fatal-error consumer (log and removal key).
const FATAL_CONSUMER: &str = "ib (IB_EVENT_DEVICE_FATAL)";

/// What the core hands the provider.
pub(crate) struct IbCore<'a> {
    /// The command path.
    pub(crate) hw: &'a Arc<Hw>,
    /// The current general caps (after SET_HCA_CAP).
    pub(crate) caps: &'a GeneralCaps,
    /// The atomic caps (after SET_HCA_CAP), `None` without cap `atomic`.
    pub(crate) atomic: Option<AtomicCaps>,
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
    /// The core's clock info page (`None`: no clock), which outlives this stage.
    pub(crate) clock: Option<&'a crate::ffi::ClockPage>,
}

/// Events logged in full before the log thins out (then every 1000th), as the EQ layer
/// logs async events: a port that flaps must not flood the kernel log.
const LOG_FIRST: u64 = 16;

/// Where the device's async events go: the registration, while it exists.
#[pin_data]
struct EventSink {
    dev: ARef<Device>,
    /// Events dispatched (for the log's thinning).
    dispatched: AtomicU64,
    /// Lock order: a leaf; taken under the async EQ's `Eq::state` and the port
    /// subscription lock (port events), and by the health work (fatal). Never held
    /// while the device is unregistered.
    #[pin]
    reg: Mutex<Option<IbRegistration>>,
    /// The kernel CQs, told of a fatal error before the core is.
    kcqs: Arc<KcqTable>,
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
                    port::events::event_name(*e),
                    n
                );
            }
            r.dispatch(*e, u32::from(port));
        }
    }
}

impl PortEventHandler for EventSink {
    fn port_change(&self, port: u8, sub_type: u8) {
        self.dispatch(
            "PORT_CHANGE",
            port::events::port_change_events(sub_type),
            port,
        );
    }
}

impl FatalHandler for EventSink {
    fn fatal(&self, dev: &Device, cause: FatalCause) {
        if self.reg.lock().is_none() {
            dev_err!(
                dev,
                "IB_EVENT_DEVICE_FATAL (sensor {}) not raised: no IB device registered\n",
                cause.code
            );
            return;
        }
        // As upstream's `mlx5_ib_handle_sys_error_event` runs
        // `mlx5_ib_handle_internal_error` before dispatching: kernel posts fail from
        // now on, kernel CQs flush in software, and the handlers of the CQs with
        // outstanding work run.
        self.kcqs.internal_error();
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
    pub(crate) fn new(pdev: &pci::Device<Bound>, core: IbCore<'_>) -> Result<Self> {
        let dev: &Device<Bound> = pdev.as_ref();
        // The provider is built out of line: registration runs the core's clients on
        // this stack (the MAD layer creates its QPs through the provider, down to a
        // command), so it is called from a frame without the build's temporaries.
        let (port_events, life) = (core.port_events, core.life);
        let built = Self::build(pdev, core)?;
        let reg = IbRegistration::register(dev, &built.init, built.provider.clone())?;
        Self::attach(dev, reg, &built, port_events, life)
    }

    /// After registration: the log line, then the event sink subscribed to port and
    /// fatal events. Out of line, as [`Self::build`] is: this frame is not on the stack
    /// while registration runs.
    #[inline(never)]
    fn attach(
        dev: &Device<Bound>,
        reg: IbRegistration,
        built: &Built,
        port_events: &Arc<PortEvents>,
        life: &Arc<Lifecycle>,
    ) -> Result<Self> {
        let init = &built.init;
        dev_info!(
            dev,
            "{}: InfiniBand device registered: {} port(s), port access {}, {} completion vector(s), node GUID {:016x}\n",
            reg.name().to_str().unwrap_or("?"),
            init.phys_port_cnt,
            built.access.name(),
            init.num_comp_vectors,
            init.node_guid
        );
        let plain: &Device = dev;
        let sink = Arc::pin_init(
            try_pin_init!(EventSink {
                dev: plain.into(),
                dispatched: AtomicU64::new(0),
                reg <- new_mutex!(Some(reg)),
                kcqs: built.kcqs.clone(),
            }),
            GFP_KERNEL,
        )?;
        let ports = port_events.subscribe(sink.clone())?;
        life.add_consumer(FatalConsumer {
            name: FATAL_CONSUMER,
            handler: sink.clone(),
        })?;
        Ok(Self {
            sink,
            life: life.clone(),
            _ports: ports,
        })
    }

    /// What registration needs: reads what the device shows (node GUID, system image
    /// GUID, node description, vendor id) the way the port is accessed, and builds the
    /// provider with one verbs object per family.
    #[inline(never)]
    fn build(pdev: &pci::Device<Bound>, core: IbCore<'_>) -> Result<KBox<Built>> {
        let dev: &Device<Bound> = pdev.as_ref();
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
            clock_info: core
                .clock
                .map_or(core::ptr::null_mut(), crate::ffi::ClockPage::addr),
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
        let core_uar = (core.cq.uar, core.cq.uar_bar_off);
        // Kernel QPs by number, for their CQs' pollers.
        let kqps = KqpTable::new()?;
        // Kernel SRQs and CQs by number, for the kernel QPs on them.
        let kobjs = KernelObjs {
            srqs: KsrqTable::new()?,
            cqs: KcqTable::new()?,
        };
        let cqs = CqVerbs::new(
            dev,
            hw.clone(),
            CqCaps::from_caps(caps, page::PAGE_SHIFT as u32),
            caps.get(gen_cap::CQ_MODERATION),
            core.cq,
            kqps.clone(),
            kobjs.cqs.clone(),
        );
        let provider = Provider::new(
            dev,
            hw.clone(),
            caps.clone(),
            core.atomic,
            ids,
            access,
            num_ports,
            port_caps,
            cqs,
            core_uar,
            core.rscs.clone(),
            kqps,
            core.clock.is_some(),
            MrCache::new()?,
            kobjs.clone(),
        )?;
        // Boxed: the caller keeps it across registration in a small frame.
        Ok(KBox::new(
            Built {
                init,
                provider,
                access,
                kcqs: kobjs.cqs,
            },
            GFP_KERNEL,
        )?)
    }
}

/// What [`IbStage::build`] gives registration.
struct Built {
    /// The device's fixed attributes, for the shim's `ib_device`.
    init: IbInit,
    /// The provider the core calls.
    provider: Arc<Provider>,
    /// How the port is accessed (for the log line).
    access: PortAccess,
    /// Kernel CQs by number, for the fatal-error handler.
    kcqs: Arc<KcqTable>,
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
