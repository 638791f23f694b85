// SPDX-License-Identifier: GPL-2.0

//! Which IB events a port-change EQE raises, as upstream `handle_port_change`
//! (mlx5_ib main.c) maps the sub-types (`MLX5_PORT_CHANGE_SUBTYPE_*`): down, active
//! and initialized first raise a speed-change event, then PORT_ACTIVE (active) or
//! PORT_ERR (down, initialized); LID, P_Key, GUID and client-reregister changes raise
//! their event. The PRM has no sub-type for an SM change, so `IB_EVENT_SM_CHANGE` is
//! never raised (upstream mlx5_ib raises it neither).
//!
//! Which IB event a QP or SRQ event EQE raises on the object, as upstream mlx5_ib
//! maps them (qp.c `mlx5_ib_handle_qp_event`, srq.c `mlx5_ib_srq_event`).
//!
//! Pure `core` code, compiled into the module and into the host test crate.

use crate::{
    ffi::rdma::ib_abi::IbEvent,
    ifc::eqe::{event_type as et, port_change_sub as port_sub},
};

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

/// The IB event a QP event of EQE type `t` raises on the QP; `None` for a type that
/// is not a QP event (upstream warns and raises nothing).
pub fn qp_event(t: u8) -> Option<IbEvent> {
    use IbEvent::*;
    Some(match t {
        et::PATH_MIG => PathMig,
        et::COMM_EST => CommEst,
        et::SQ_DRAINED => SqDrained,
        et::SRQ_LAST_WQE => QpLastWqeReached,
        et::WQ_CATAS_ERROR => QpFatal,
        et::PATH_MIG_FAILED => PathMigErr,
        et::WQ_INVAL_REQ_ERROR => QpReqErr,
        et::WQ_ACCESS_ERROR => QpAccessErr,
        _ => return None,
    })
}

/// The IB event an SRQ event of EQE type `t` raises on the SRQ; `None` otherwise.
pub fn srq_event(t: u8) -> Option<IbEvent> {
    match t {
        et::SRQ_RQ_LIMIT => Some(IbEvent::SrqLimitReached),
        et::SRQ_CATAS_ERROR => Some(IbEvent::SrqErr),
        _ => None,
    }
}

/// A name for logs.
pub fn event_name(e: IbEvent) -> &'static str {
    match e {
        IbEvent::QpFatal => "IB_EVENT_QP_FATAL",
        IbEvent::QpReqErr => "IB_EVENT_QP_REQ_ERR",
        IbEvent::QpAccessErr => "IB_EVENT_QP_ACCESS_ERR",
        IbEvent::CommEst => "IB_EVENT_COMM_EST",
        IbEvent::SqDrained => "IB_EVENT_SQ_DRAINED",
        IbEvent::PathMig => "IB_EVENT_PATH_MIG",
        IbEvent::PathMigErr => "IB_EVENT_PATH_MIG_ERR",
        IbEvent::SrqErr => "IB_EVENT_SRQ_ERR",
        IbEvent::SrqLimitReached => "IB_EVENT_SRQ_LIMIT_REACHED",
        IbEvent::QpLastWqeReached => "IB_EVENT_QP_LAST_WQE_REACHED",
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
