// SPDX-License-Identifier: GPL-2.0

//! Which IB events a port-change EQE raises, as upstream `handle_port_change`
//! (mlx5_ib main.c) maps the sub-types (`MLX5_PORT_CHANGE_SUBTYPE_*`): down, active
//! and initialized first raise a speed-change event, then PORT_ACTIVE (active) or
//! PORT_ERR (down, initialized); LID, P_Key, GUID and client-reregister changes raise
//! their event. The PRM has no sub-type for an SM change, so `IB_EVENT_SM_CHANGE` is
//! never raised (upstream mlx5_ib raises it neither).
//!
//! Pure `core` code, compiled into the module and into the host test crate.

use crate::{ffi::rdma::ib_abi::IbEvent, ifc::eqe::port_change_sub as port_sub};

/// The events (in dispatch order) of port-change sub-type `sub_type`; empty for a
/// sub-type the PRM does not define (the EQ layer has rejected those already).
pub fn port_change_events(sub_type: u8) -> &'static [IbEvent] {
    use IbEvent::*;
    match sub_type {
        port_sub::ACTIVE => &[DeviceSpeedChange, PortActive],
        port_sub::DOWN | port_sub::INITIALIZED => &[DeviceSpeedChange, PortErr],
        port_sub::LID => &[LidChange],
        port_sub::PKEY => &[PkeyChange],
        port_sub::GUID => &[GidChange],
        port_sub::CLIENT_REREG => &[ClientReregister],
        _ => &[],
    }
}

/// A name for logs.
pub fn event_name(e: IbEvent) -> &'static str {
    match e {
        IbEvent::DeviceFatal => "IB_EVENT_DEVICE_FATAL",
        IbEvent::PortActive => "IB_EVENT_PORT_ACTIVE",
        IbEvent::PortErr => "IB_EVENT_PORT_ERR",
        IbEvent::LidChange => "IB_EVENT_LID_CHANGE",
        IbEvent::PkeyChange => "IB_EVENT_PKEY_CHANGE",
        IbEvent::ClientReregister => "IB_EVENT_CLIENT_REREGISTER",
        IbEvent::GidChange => "IB_EVENT_GID_CHANGE",
        IbEvent::DeviceSpeedChange => "IB_EVENT_DEVICE_SPEED_CHANGE",
    }
}
