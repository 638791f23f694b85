// SPDX-License-Identifier: GPL-2.0

//! The verbs the RDMA core calls ([`IbOps`]): device, port, P_Key and GID queries,
//! answered from the caps the core read and from typed commands run through
//! [`Hw::run`], the port read both ways upstream does (see [`PortAccess`]); user
//! contexts ([`crate::ib::uctx`]) and PDs; the driver part of query_device
//! ([`crate::ib::abi::device`]).
//!
//! Everything the device answers goes through the pure decoders (`crate::ib::port::attr`,
//! `crate::ib::port::commands`), which reject values outside their ranges; a rejected answer is
//! logged and the query fails with `EPROTO`. Port numbers and table indices from the
//! core are checked before any command is sent.

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod attr;

use kernel::{
    device, page,
    prelude::*,
    sync::{aref::ARef, Arc},
};
use zerocopy::IntoBytes;

use crate::ib::{
    abi::{ah::alloc_pd_response, device::query_device_response, device::QueryDeviceCaps, udata},
    cq::CqVerbs,
    device::attr::{device_attr, DeviceIds},
    mr::MrVerbs,
    obj_events::QpWithEvents,
    pd::commands::{AllocPd, DeallocPd},
    port::attr::{check_port, from_hca_vport, from_port_info, BadPort, PortCaps, PortRegs},
    port::commands::{
        gid_prefix_of, guid_of_block, pkey_of_block, port_info_of, MadIfcGet, QueryHcaVportContext,
        QueryHcaVportGid, QueryHcaVportPkey, ReadPmtu, ReadPtys, ReadPvlc,
    },
    qp::{create_kernel_qp, create_user_qp, QpEnv},
    uctx::plan::UctxHost,
    uctx::{put, uabi_err, UserContext},
};
use crate::{
    cmd::commands::GeneralCaps,
    eq::rsc::RscTable,
    ffi::rdma::{
        ib::{DeviceAttr, IbOps, IbUcontext, PortAttr},
        ib_cq::IbCqOps,
        ib_mr::IbMrOps,
        ib_qp::{IbQp, IbQpOps, QpInit, QpShim, UserData},
        ib_srq::IbSrqOps,
        umem::IbDev,
    },
    hw::Hw,
    ifc::mad::smp_attr,
};

/// How the port is read (upstream `mlx5_get_vport_access_method` for an IB port).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PortAccess {
    /// Cap `ib_virt` 0: MAD_IFC to the firmware's SMA (PortInfo, GUIDInfo, P_KeyTable).
    Mad,
    /// Cap `ib_virt` 1: QUERY_HCA_VPORT_CONTEXT / _GID / _PKEY and PTYS, PMTU, PVLC.
    Hca,
}

impl PortAccess {
    /// Name for logs.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Mad => "MAD_IFC",
            Self::Hca => "HCA vport",
        }
    }
}

/// The provider of one function: what the core knows, and the command path.
pub(crate) struct Provider {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    caps: GeneralCaps,
    ids: DeviceIds,
    access: PortAccess,
    num_ports: u8,
    port_caps: PortCaps,
    /// Memory regions.
    mr: MrVerbs,
    /// What QPs are offered (QP verbs).
    qp_env: QpEnv,
    cqs: CqVerbs,
    /// Where QPs and SRQs register for their async events.
    rscs: Arc<RscTable>,
}

impl Provider {
    /// A provider over `hw` with the device's current caps.
    #[expect(
        clippy::too_many_arguments,
        reason = "what bring-up read, named at the one call"
    )]
    pub(crate) fn new(
        dev: &device::Device,
        hw: Arc<Hw>,
        caps: GeneralCaps,
        ids: DeviceIds,
        access: PortAccess,
        num_ports: u8,
        port_caps: PortCaps,
        cqs: CqVerbs,
        core_uar: u32,
        rscs: Arc<RscTable>,
    ) -> Self {
        let qp_env = QpEnv::new(
            &caps,
            page::PAGE_SHIFT as u32,
            num_ports,
            port_caps.pkey_tbl_len,
            port_caps.gid_tbl_len,
            Some(core_uar),
        );
        Self {
            dev: dev.into(),
            mr: MrVerbs::new(dev, hw.clone(), &caps),
            hw,
            caps,
            ids,
            access,
            num_ports,
            port_caps,
            qp_env,
            cqs,
            rscs,
        }
    }

    /// The device (logs), for the verbs families' own files (SRQ / XRC / AH:
    /// `crate::ib::srq`).
    pub(super) fn dev(&self) -> &device::Device {
        &self.dev
    }

    /// The QP / SRQ event table.
    pub(super) fn rscs(&self) -> &Arc<RscTable> {
        &self.rscs
    }

    /// The command path.
    pub(super) fn hw(&self) -> &Arc<Hw> {
        &self.hw
    }

    /// The general caps.
    pub(super) fn caps(&self) -> &GeneralCaps {
        &self.caps
    }

    /// The port number of a dual-port device for the vport commands (upstream sets it
    /// only when `num_ports` is 2).
    fn vport_port(&self, port: u8) -> Option<u8> {
        (self.num_ports == 2).then_some(port)
    }

    fn port(&self, port: u32) -> Result<u8> {
        check_port(port, self.num_ports).ok_or(EINVAL)
    }

    fn rejected(&self, port: u8, what: &str, e: BadPort) -> Error {
        dev_warn!(
            self.dev,
            "port {}: {} answer rejected ({:?}); query failed\n",
            port,
            what,
            e
        );
        e.errno().into()
    }

    /// SubnGet of one SMP attribute of `port`.
    fn mad_get(&self, port: u8, attr_id: u16, attr_mod: u32) -> Result<[u8; 64]> {
        self.hw.run(MadIfcGet {
            port,
            attr_id,
            attr_mod,
        })
    }
}

impl IbOps for Provider {
    /// The device attributes, from the capabilities read at probe.
    ///
    /// # Errors
    ///
    /// None: always `Ok`.
    fn query_device(&self) -> Result<DeviceAttr> {
        Ok(device_attr(
            &self.caps,
            &self.ids,
            self.port_caps.pkey_tbl_len,
        ))
    }

    /// query_device's mlx5 response for a user buffer of `outlen` bytes.
    ///
    /// # Errors
    ///
    /// As upstream: `EOPNOTSUPP` for a driver request with a non-zero byte, `EINVAL`
    /// for a response buffer of 1 to 7 bytes (`abi::device::query_device_response`).
    fn query_device_uhw(&self, req: &[u8], outlen: usize, out: &mut [u8]) -> Result<usize> {
        let caps = QueryDeviceCaps::from_caps(&self.caps);
        match query_device_response(&caps, req, outlen) {
            Ok(Some(r)) => {
                let len = (r.response_length as usize).min(core::mem::size_of_val(&r));
                Ok(put(out, r.as_bytes().get(..len).unwrap_or(&[])))
            }
            Ok(None) => Ok(0),
            Err(e) => Err(uabi_err(&self.dev, "query_device", e)),
        }
    }

    /// alloc_ucontext ([`UserContext::alloc`]).
    ///
    /// # Errors
    ///
    /// As [`UserContext::alloc`]; `ENOMEM` when the context's box cannot be allocated.
    fn alloc_ucontext(
        &self,
        req: &[u8],
        outlen: usize,
        out: &mut [u8],
        cache_line_size: u32,
    ) -> Result<(KBox<dyn IbUcontext>, usize)> {
        let host = UctxHost {
            page_shift: page::PAGE_SHIFT as u32,
            cache_line_size,
            num_ports: u16::from(self.num_ports),
        };
        let (ctx, n) = UserContext::alloc(&self.dev, &self.hw, &self.caps, host, req, outlen, out)?;
        let ctx: KBox<dyn IbUcontext> = KBox::new(ctx, GFP_KERNEL)?;
        Ok((ctx, n))
    }

    /// ALLOC_PD.
    ///
    /// # Errors
    ///
    /// The command's errno ([`Hw::exec_cmd`]).
    fn alloc_pd(&self) -> Result<u32> {
        self.hw.run(AllocPd)
    }

    fn alloc_pd_response(&self, pdn: u32, outlen: usize, out: &mut [u8]) -> usize {
        put(out, udata::response(&alloc_pd_response(pdn), outlen))
    }

    /// DEALLOC_PD.
    ///
    /// # Errors
    ///
    /// The command's errno ([`Hw::exec_cmd`]; a dead device reports success).
    fn dealloc_pd(&self, pdn: u32) -> Result {
        self.hw.run(DeallocPd { pdn })
    }

    fn mr(&self) -> &dyn IbMrOps {
        &self.mr
    }

    fn qp_ops(&self) -> &dyn IbQpOps {
        self
    }

    fn srq_ops(&self) -> &dyn IbSrqOps {
        self
    }

    fn cq_ops(&self) -> &dyn IbCqOps {
        &self.cqs
    }

    /// The port's attributes: PortInfo through MAD_IFC, or the HCA vport context and
    /// the PTYS, PMTU and PVLC registers (`PortAccess`).
    ///
    /// # Errors
    ///
    /// `EINVAL` for a port the device does not have; a command's errno
    /// ([`Hw::exec_cmd`]); `EPROTO` when the device's answer is out of range (logged).
    fn query_port(&self, port: u32) -> Result<PortAttr> {
        let p = self.port(port)?;
        match self.access {
            PortAccess::Mad => {
                let d = self.mad_get(p, smp_attr::PORT_INFO, u32::from(p))?;
                from_port_info(&port_info_of(&d), &self.port_caps)
                    .map_err(|e| self.rejected(p, "PortInfo", e))
            }
            PortAccess::Hca => {
                let v = self.hw.run(QueryHcaVportContext {
                    port: self.vport_port(p),
                })?;
                let (width_oper, proto_oper) = self.hw.run(ReadPtys { local_port: p })?;
                let (max_mtu, oper_mtu) = self.hw.run(ReadPmtu { local_port: p })?;
                let vl_hw_cap = self.hw.run(ReadPvlc { local_port: p })?;
                let regs = PortRegs {
                    width_oper,
                    proto_oper,
                    max_mtu,
                    oper_mtu,
                    vl_hw_cap,
                };
                from_hca_vport(&v, &regs, &self.port_caps)
                    .map_err(|e| self.rejected(p, "HCA vport context / port registers", e))
            }
        }
    }

    /// P_Key `index` of `port`.
    ///
    /// # Errors
    ///
    /// `EINVAL` for a port the device does not have or an index past the P_Key
    /// table; a command's errno ([`Hw::exec_cmd`]).
    fn query_pkey(&self, port: u32, index: u16) -> Result<u16> {
        let p = self.port(port)?;
        if index >= self.port_caps.pkey_tbl_len {
            return Err(EINVAL);
        }
        match self.access {
            PortAccess::Mad => {
                let d = self.mad_get(p, smp_attr::PKEY_TABLE, u32::from(index / 32))?;
                Ok(pkey_of_block(&d, index))
            }
            PortAccess::Hca => self.hw.run(QueryHcaVportPkey {
                port: self.vport_port(p),
                index,
            }),
        }
    }

    /// GID `index` of `port` (subnet prefix and port GUID).
    ///
    /// # Errors
    ///
    /// `EINVAL` for a port the device does not have or an index past the GID table
    /// (256 GUIDs through MAD_IFC); a command's errno ([`Hw::exec_cmd`]).
    fn query_gid(&self, port: u32, index: u32) -> Result<[u8; 16]> {
        let p = self.port(port)?;
        match self.access {
            PortAccess::Mad => {
                // GUIDCap is 8 bits: at most 256 GUIDs, in 32 GUIDInfo blocks of 8.
                if index >= 256 {
                    return Err(EINVAL);
                }
                let pi = self.mad_get(p, smp_attr::PORT_INFO, u32::from(p))?;
                let gi = self.mad_get(p, smp_attr::GUID_INFO, index / 8)?;
                let mut g = [0u8; 16];
                g[..8].copy_from_slice(&gid_prefix_of(&pi).to_be_bytes());
                g[8..].copy_from_slice(&guid_of_block(&gi, index));
                Ok(g)
            }
            PortAccess::Hca => {
                if index >= self.port_caps.gid_tbl_len {
                    return Err(EINVAL);
                }
                self.hw.run(QueryHcaVportGid {
                    port: self.vport_port(p),
                    // Below the table length (at most 128): fits.
                    index: u16::try_from(index).map_err(|_| EINVAL)?,
                })
            }
        }
    }
}

/// QP verbs ([`crate::ib::qp`]).
impl IbQpOps for Provider {
    /// create_qp: a kernel consumer's QP (RC, UC, UD, GSI/SMI; queues in coherent
    /// memory) or a user QP (RC, UC, UD) over the request's pinned buffer.
    ///
    /// # Errors
    ///
    /// - `EOPNOTSUPP` for a QP type this provider does not create (XRC, raw packet,
    ///   driver QPs; special QPs from user space) and for any create flag;
    /// - `EINVAL` without a send and a receive CQ, a user context without user data
    ///   or the reverse, a special QP on a port the device lacks, queue sizes beyond
    ///   the device's (`qp::size`), a UAR page the context does not own, a buffer no
    ///   page size fits, a value wider than its QP context field;
    ///   `ENOMEM` for a send queue beyond `log_max_qp_sz` (as upstream);
    /// - for a user QP, the request's refusals by `abi::qp::parse_create_qp`
    ///   (`EINVAL`, `EOPNOTSUPP`, upstream's order) and pinning's errors
    ///   (`Umem::get`);
    /// - `ENOMEM` when memory cannot be allocated;
    /// - CREATE_QP's errno ([`Hw::exec_cmd`]), memory the device may still reach
    ///   kept in the graveyard;
    /// - `EEXIST` if the QPN is already in the event table (the QP is destroyed).
    fn create_qp(
        &self,
        dev: IbDev<'_>,
        uctx: Option<&dyn IbUcontext>,
        init: &mut QpInit,
        udata: Option<UserData<'_>>,
        shim: QpShim,
    ) -> Result<(KBox<dyn IbQp>, u32, usize)> {
        let (qp, qpn, n) = match (uctx, udata) {
            (Some(c), Some(u)) => {
                create_user_qp(&self.dev, &self.hw, &self.qp_env, dev, c, init, u)
            }
            (None, None) => create_kernel_qp(&self.dev, &self.hw, &self.qp_env, init),
            _ => Err(EINVAL),
        }?;
        // As upstream's `create_resource_common`: in the event table after CREATE_QP.
        let qp = QpWithEvents::wrap(&self.dev, &self.rscs, qpn, qp, shim)?;
        Ok((qp, qpn, n))
    }
}
