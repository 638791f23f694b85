// SPDX-License-Identifier: GPL-2.0

//! The provider of one function ([`Provider`], the RDMA core's [`IbOps`]): the
//! device family's verbs (query_device from the caps the core read, and its driver
//! part, [`crate::ib::abi::device`]) and one ops object per verbs family, each the
//! family's own (`crate::ib::<family>`: [`PortVerbs`], [`UctxVerbs`], [`PdVerbs`],
//! [`AhVerbs`], [`CqVerbs`], [`QpVerbs`], [`SrqVerbs`], [`MrVerbs`]), which
//! [`IbOps`] hands to the shim. This is the top of the provider: no family imports
//! it.

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod attr;

use kernel::{
    device, page,
    prelude::*,
    sync::{aref::ARef, Arc, Mutex, UniqueArc},
};
use zerocopy::IntoBytes;

use crate::ib::{
    abi::{device::query_device_response, device::QueryDeviceCaps, udata::put},
    ah::AhVerbs,
    cq::CqVerbs,
    device::attr::{device_attr, DeviceIds},
    mr::{MrCache, MrVerbs},
    pd::PdVerbs,
    port::{attr::PortCaps, PortAccess, PortVerbs},
    qp::{kdp::KqpTable, KernelObjs, QpEnv, QpVerbs},
    srq::SrqVerbs,
    uctx::{uabi_err, UctxVerbs},
};
use crate::{
    cmd::commands::{AtomicCaps, GeneralCaps},
    eq::rsc::RscTable,
    ffi::rdma::{
        ib::{DeviceAttr, IbOps},
        ib_ah::IbAhOps,
        ib_cq::IbCqOps,
        ib_mr::IbMrOps,
        ib_mw::IbMwOps,
        ib_pd::IbPdOps,
        ib_port::IbPortOps,
        ib_qp::IbQpOps,
        ib_srq::IbSrqOps,
        ib_uctx::IbUctxOps,
        udata::UserData,
    },
    hw::Hw,
};

/// The provider of one function: what query_device answers, and every family's
/// verbs.
pub(crate) struct Provider {
    dev: ARef<device::Device>,
    caps: GeneralCaps,
    atomic: Option<AtomicCaps>,
    ids: DeviceIds,
    /// P_Key table length (`max_pkeys`).
    pkey_tbl_len: u16,
    port: PortVerbs,
    uctx: UctxVerbs,
    pd: PdVerbs,
    ah: AhVerbs,
    cqs: CqVerbs,
    qp: QpVerbs,
    srq: SrqVerbs,
    mr: MrVerbs,
}

impl Provider {
    /// A provider over `hw` with the device's current caps, written in place on the
    /// heap (it is over a kilobyte, and bring-up's stack holds the probe's frames).
    ///
    /// # Errors
    ///
    /// `ENOMEM` when the provider cannot be allocated.
    #[expect(
        clippy::too_many_arguments,
        reason = "what bring-up read, named at the one call"
    )]
    pub(crate) fn new(
        dev: &device::Device,
        hw: Arc<Hw>,
        caps: GeneralCaps,
        atomic: Option<AtomicCaps>,
        ids: DeviceIds,
        access: PortAccess,
        num_ports: u8,
        port_caps: PortCaps,
        cqs: CqVerbs,
        core_uar: (u32, usize),
        rscs: Arc<RscTable>,
        kqps: Arc<KqpTable>,
        clock_info: bool,
        mr_cache: Arc<Mutex<MrCache>>,
        kobjs: KernelObjs,
    ) -> Result<Arc<Self>> {
        let qp_env = QpEnv::new(
            &caps,
            atomic.as_ref(),
            page::PAGE_SHIFT as u32,
            num_ports,
            port_caps.pkey_tbl_len,
            port_caps.gid_tbl_len,
            Some(core_uar),
        );
        let room = UniqueArc::new_uninit(GFP_KERNEL)?;
        Ok(room
            .write(Self {
                dev: dev.into(),
                pkey_tbl_len: port_caps.pkey_tbl_len,
                port: PortVerbs::new(dev, hw.clone(), access, num_ports, port_caps),
                uctx: UctxVerbs::new(dev, hw.clone(), caps.clone(), num_ports, clock_info),
                pd: PdVerbs::new(hw.clone()),
                ah: AhVerbs::new(&caps),
                cqs,
                srq: SrqVerbs::new(dev, hw.clone(), caps.clone(), rscs.clone(), kobjs.clone()),
                qp: QpVerbs::new(dev, hw.clone(), qp_env, rscs, kqps, kobjs),
                mr: MrVerbs::new(dev, hw, &caps, mr_cache),
                caps,
                atomic,
                ids,
            })
            .into())
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
            self.atomic.as_ref(),
            &self.ids,
            self.pkey_tbl_len,
        ))
    }

    /// query_device's mlx5 response for a user buffer of `outlen` bytes.
    ///
    /// # Errors
    ///
    /// As upstream: `EOPNOTSUPP` for a driver request with a non-zero byte, `EINVAL`
    /// for a response buffer of 1 to 7 bytes (`abi::device::query_device_response`).
    fn query_device_uhw(&self, u: UserData<'_>) -> Result<usize> {
        let caps = QueryDeviceCaps::from_caps(&self.caps);
        match query_device_response(&caps, u.req, u.outlen) {
            Ok(Some(r)) => {
                let len = (r.response_length as usize).min(core::mem::size_of_val(&r));
                Ok(put(u.out, r.as_bytes().get(..len).unwrap_or(&[])))
            }
            Ok(None) => Ok(0),
            Err(e) => Err(uabi_err(&self.dev, "query_device", e)),
        }
    }

    fn port_ops(&self) -> &dyn IbPortOps {
        &self.port
    }

    fn uctx_ops(&self) -> &dyn IbUctxOps {
        &self.uctx
    }

    fn pd_ops(&self) -> &dyn IbPdOps {
        &self.pd
    }

    fn ah_ops(&self) -> &dyn IbAhOps {
        &self.ah
    }

    fn cq_ops(&self) -> &dyn IbCqOps {
        &self.cqs
    }

    fn qp_ops(&self) -> &dyn IbQpOps {
        &self.qp
    }

    fn srq_ops(&self) -> &dyn IbSrqOps {
        &self.srq
    }

    fn mr_ops(&self) -> &dyn IbMrOps {
        &self.mr
    }

    fn mw_ops(&self) -> &dyn IbMwOps {
        &self.mr
    }
}
