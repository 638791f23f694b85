// SPDX-License-Identifier: GPL-2.0

//! Ports (kernel shell): the port verbs ([`PortVerbs`], the provider's
//! [`IbPortOps`]: query_port, query_pkey, query_gid), read both ways upstream does
//! (see [`PortAccess`]), over the pure parts here: [`attr`] (port attributes both
//! ways, MAD PortInfo or the HCA vport context with PTYS, PMTU and PVLC),
//! [`commands`] (MAD_IFC, HCA vport queries, port registers, node description,
//! vendor id) and [`events`] (port-change sub-type to IB events).
//!
//! Everything the device answers goes through the pure decoders, which reject values
//! outside their ranges; a rejected answer is logged and the query fails with
//! `EPROTO`. Port numbers and table indices from the core are checked before any
//! command is sent.

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod attr;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod commands;
#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod events;

use kernel::{
    device,
    prelude::*,
    sync::{aref::ARef, Arc},
};

use crate::ib::{
    port::attr::{check_port, from_hca_vport, from_port_info, BadPort, PortCaps, PortRegs},
    port::commands::{
        gid_prefix_of, guid_of_block, pkey_of_block, plan_mad, port_info_of, MadIfc, MadIfcGet,
        MadPlan, QueryHcaVportContext, QueryHcaVportGid, QueryHcaVportPkey, ReadPmtu, ReadPtys,
        ReadPvlc,
    },
};
use crate::{
    ffi::rdma::ib_port::{IbPortOps, PortAttr},
    hw::Hw,
    ifc::mad::{method, mgmt_class, smp_attr},
};

/// `IB_MAD_RESULT_*` (`ib_verbs.h`; the shim returns them as they are).
const MAD_RESULT_FAILURE: u32 = 0;
const MAD_RESULT_SUCCESS: u32 = 1 << 0;
const MAD_RESULT_REPLY: u32 = 1 << 1;
const MAD_RESULT_CONSUMED: u32 = 1 << 2;
/// `IB_MAD_IGNORE_MKEY` / `IB_MAD_IGNORE_BKEY`.
const MAD_IGNORE_MKEY: u32 = 1;
const MAD_IGNORE_BKEY: u32 = 2;
/// Byte offsets in a MAD (IBTA 13.4.2): management class, method, status, attribute id.
const MAD_CLASS: usize = 1;
const MAD_METHOD: usize = 3;
const MAD_STATUS: usize = 4;
const MAD_ATTR_ID: usize = 16;
/// The direction bit of a directed-route response's status (`IB_SMP_DIRECTION`).
const SMP_DIRECTION: u16 = 0x8000;

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

/// The port verbs of one function.
pub(crate) struct PortVerbs {
    dev: ARef<device::Device>,
    hw: Arc<Hw>,
    access: PortAccess,
    num_ports: u8,
    port_caps: PortCaps,
}

impl PortVerbs {
    /// The verbs of the `num_ports` ports of `dev`, read by `access`.
    pub(crate) fn new(
        dev: &device::Device,
        hw: Arc<Hw>,
        access: PortAccess,
        num_ports: u8,
        port_caps: PortCaps,
    ) -> Self {
        Self {
            dev: dev.into(),
            hw,
            access,
            num_ports,
            port_caps,
        }
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

impl IbPortOps for PortVerbs {
    /// process_mad (upstream `mlx5_ib_process_mad`): the plan ([`plan_mad`]), MAD_IFC
    /// to the firmware's SMA or PMA, the direction bit on a directed-route response.
    /// A port the device lacks or a failed MAD_IFC: `IB_MAD_RESULT_FAILURE`.
    fn process_mad(
        &self,
        port: u32,
        flags: u32,
        has_wc: bool,
        slid: u16,
        mad: &[u8; 256],
        out: &mut [u8; 256],
    ) -> u32 {
        let class = mad[MAD_CLASS];
        let meth = mad[MAD_METHOD];
        let attr = u16::from_be_bytes([mad[MAD_ATTR_ID], mad[MAD_ATTR_ID + 1]]);
        let plan = plan_mad(
            class,
            meth,
            attr,
            slid,
            has_wc,
            flags & MAD_IGNORE_MKEY != 0,
            flags & MAD_IGNORE_BKEY != 0,
        );
        let op_mod = match plan {
            MadPlan::Pass => return MAD_RESULT_SUCCESS,
            MadPlan::Consume => return MAD_RESULT_SUCCESS | MAD_RESULT_CONSUMED,
            MadPlan::Ifc(m) => m,
        };
        let Ok(p) = self.port(port) else {
            return MAD_RESULT_FAILURE;
        };
        match self.hw.run(MadIfc {
            port: p,
            op_mod,
            mad,
        }) {
            Ok(r) => *out = r,
            Err(_) => return MAD_RESULT_FAILURE,
        }
        if class == mgmt_class::SUBN_DIRECTED_ROUTE {
            let st = u16::from_be_bytes([out[MAD_STATUS], out[MAD_STATUS + 1]]) | SMP_DIRECTION;
            out[MAD_STATUS..MAD_STATUS + 2].copy_from_slice(&st.to_be_bytes());
        }
        if meth == method::TRAP_REPRESS {
            // No response to a trap repress.
            return MAD_RESULT_SUCCESS | MAD_RESULT_CONSUMED;
        }
        MAD_RESULT_SUCCESS | MAD_RESULT_REPLY
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
