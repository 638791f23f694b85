// SPDX-License-Identifier: GPL-2.0

//! EQE decoding and validation: from 64 bytes the device wrote to one [`Event`], or
//! the reason the entry is not trusted ([`Malformed`]).
//!
//! Every field comes from the device and is checked before use: the type must be one
//! this EQ subscribed to, the sub-type one the PRM defines for that type, slot
//! bitmaps must name existing slots, CQNs fit 24 bits and the CQ table, page requests
//! name our function with a count within the device's per-request bound, port numbers
//! exist, a QP event names a resource type that takes it (upstream mlx5_core qp.c
//! `is_event_type_allowed`). Event names follow `enum mlx5_event`.
//!
//! Pure `core` code, compiled into the kernel module and into the host test crate.

use crate::ifc::eqe::{
    event_type as et, general_sub, rsc_type, Eqe, PAGE_REQ_EC_FUNCTION, PAGE_REQ_RELEASE_ALL,
};

/// Size of an EQE.
pub const EQE_BYTES: usize = 64;

/// Event types of the async EQ: upstream's `MLX5_ASYNC_EVENT_MASK` (eq.c), which
/// `gather_async_events_mask` starts from: path migration, communication established,
/// SQ drained, CQ error, WQ catastrophic error, path migration failed, port change, WQ
/// invalid request / access errors, SRQ catastrophic error, SRQ last WQE, SRQ limit.
/// Not INTERNAL_ERROR (0x08): upstream does not subscribe to it (a fatal error is found
/// by the health poll). The cap-dependent additions of `gather_async_events_mask`
/// (vport change, general/port-module/PPS/FPGA/DCT/temperature/tracer/monitor-counter/
/// vhca-state/object-change events) belong to features this driver does not have.
pub const ASYNC_MASK: u64 = 0x0000_0000_001F_02BE;
/// GENERAL_EVENT (0x22), which upstream's `gather_async_events_mask` adds to the async
/// EQ's mask when cap `general_notification_event` is set; this driver adds it when it
/// takes part in sync resets (the only general event it handles: PCI sync for firmware
/// update).
pub const GENERAL_EVENT_BIT: u64 = 1 << et::GENERAL_EVENT;
/// Command EQ: command completions only.
pub const CMD_MASK: u64 = 1 << et::CMD;
/// Pages EQ: page requests only.
pub const PAGES_MASK: u64 = 1 << et::PAGE_REQUEST;

/// Port change sub-types (one table, in `ifc`).
pub use crate::ifc::eqe::port_change_sub as port_sub;

/// What the decoder checks EQEs against.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Command slots of the queue (slot bitmaps must stay below).
    pub nslots: u8,
    /// Ports of the device (port numbers are 1-based).
    pub num_ports: u8,
    /// CQNs must be below this (`1 << log_max_cq`).
    pub cqn_limit: u32,
    /// Our function id (page requests must name it).
    pub func_id: u16,
    /// Our embedded-CPU bit (page requests' `ec_function` flag must match it).
    pub ec_function: bool,
}

/// A validated event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Command completion of the slots in the bitmap (non-empty, in range).
    Cmd {
        /// Completed slots.
        slots: u32,
    },
    /// Page request: positive = give, negative = take back.
    PageRequest {
        /// Function the request is for (ours).
        func_id: u16,
        /// Signed page count, never 0; any other value of the PRM's signed 32-bit
        /// `num_pages` (gives above 50,000 included; a take is capped per
        /// MANAGE_PAGES by the worker, not here).
        num_pages: i32,
    },
    /// The device released every page of the function (no command needed).
    PageReleaseAll {
        /// Function.
        func_id: u16,
    },
    /// Completion on CQ `cqn`.
    Comp {
        /// CQ number (24 bits, below the limit).
        cqn: u32,
    },
    /// CQ error (overrun, access violation) on CQ `cqn`.
    CqError {
        /// CQ number (24 bits, below the limit).
        cqn: u32,
        /// Syndrome byte as the device gave it.
        syndrome: u8,
    },
    /// Port change on `port` (1-based).
    PortChange {
        /// Port number.
        port: u8,
        /// Sub-type ([`port_sub`]).
        sub_type: u8,
    },
    /// An event of a QP (or RQ / SQ object): `type_` is one of the QP event types,
    /// allowed for `rsc_type` ([`qp_event_allowed`]).
    Qp {
        /// Event type.
        type_: u8,
        /// Resource type of the EQE ([`rsc_type`]).
        rsc_type: u8,
        /// Resource number (24 bits).
        rsn: u32,
    },
    /// An event of an SRQ (SRQ catastrophic error, SRQ limit).
    Srq {
        /// Event type.
        type_: u8,
        /// SRQ number (24 bits).
        srqn: u32,
    },
    /// A sync-reset event (GENERAL_EVENT, sub-type PCI_SYNC_FOR_FW_UPDATE): the state
    /// the firmware announces (`sync_rst_state`, low 4 bits of data byte 3).
    SyncReset(SyncRst),
    /// Any other subscribed async event, logged by name.
    Async {
        /// Event type.
        type_: u8,
        /// Sub-type.
        sub_type: u8,
    },
}

/// Why an EQE is not trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// Event type this EQ did not subscribe to.
    NotSubscribed(u8),
    /// Sub-type the PRM does not define for the type.
    BadSubType {
        /// Event type.
        type_: u8,
        /// Sub-type.
        sub_type: u8,
    },
    /// Command completion with an empty bitmap or bits beyond the queue's slots.
    BadSlots(u32),
    /// Completion CQN with reserved bits set or beyond the CQ limit.
    BadCqn(u32),
    /// Page request for another function (function id or embedded-CPU flag not
    /// ours), or with reserved `ec_function` bits set.
    BadFunction(u16),
    /// Page request for 0 pages (nothing to answer).
    BadPageCount(i32),
    /// Port number 0 or beyond the device's ports.
    BadPort(u8),
    /// Sync-reset event with a `sync_rst_state` the PRM does not define.
    BadSyncState(u8),
    /// QP event for a resource type that does not take it.
    NotAllowed {
        /// Event type.
        type_: u8,
        /// Resource type of the EQE.
        rsc_type: u8,
    },
}

/// The states of a sync-reset event (`enum sync_rst_state_type`, device.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncRst {
    /// RESET_REQUEST: the firmware asks the function to ack or nack through MFRL.
    Request,
    /// RESET_NOW: every function acked; tear down and reset the PCI link.
    Now,
    /// RESET_ABORT: the firmware gave up (a nack elsewhere, a timeout).
    Abort,
    /// RESET_UNLOAD: the flow with driver unload (only offered with cap
    /// `pci_sync_for_fw_update_with_driver_unload`, which this driver does not set).
    Unload,
}

impl SyncRst {
    /// The state of `sync_rst_state` (upstream masks it with `SYNC_RST_STATE_MASK`,
    /// 0xf); `None` for a value the PRM does not define.
    pub fn from_raw(v: u8) -> Option<Self> {
        match v & 0xf {
            general_sub::RST_REQUEST => Some(Self::Request),
            general_sub::RST_NOW => Some(Self::Now),
            general_sub::RST_ABORT => Some(Self::Abort),
            general_sub::RST_UNLOAD => Some(Self::Unload),
            _ => None,
        }
    }
}

/// Whether a QP event of type `t` may name a resource of type `rsc`: upstream
/// mlx5_core qp.c (`qp_allowed_event_types`, `rq_allowed_event_types`,
/// `sq_allowed_event_types`): a QP takes every QP event, an RQ the last-WQE and
/// catastrophic-error events, an SQ the catastrophic error. DCT events have types of
/// their own, which the async EQ does not subscribe to.
pub fn qp_event_allowed(rsc: u8, t: u8) -> bool {
    match rsc {
        rsc_type::QP => is_qp_event(t),
        rsc_type::RQ => matches!(t, et::SRQ_LAST_WQE | et::WQ_CATAS_ERROR),
        rsc_type::SQ => t == et::WQ_CATAS_ERROR,
        _ => false,
    }
}

/// Whether `t` is an event of a QP (or RQ / SQ), whose data is `qp_events`.
pub fn is_qp_event(t: u8) -> bool {
    matches!(
        t,
        et::PATH_MIG
            | et::COMM_EST
            | et::SQ_DRAINED
            | et::SRQ_LAST_WQE
            | et::WQ_CATAS_ERROR
            | et::PATH_MIG_FAILED
            | et::WQ_INVAL_REQ_ERROR
            | et::WQ_ACCESS_ERROR
    )
}

/// Whether `mask` (the four event-bitmask words of CREATE_EQ) subscribes type `t`.
pub fn subscribed(mask: &[u64; 4], t: u8) -> bool {
    mask[usize::from(t / 64)] & (1u64 << (t % 64)) != 0
}

/// Decodes and validates one EQE of an EQ created with event mask `mask`.
pub fn decode(raw: &[u8; EQE_BYTES], mask: &[u64; 4], lim: &Limits) -> Result<Event, Malformed> {
    let e = Eqe::from_array(raw);
    let t = e.type_;
    let sub = e.sub_type;
    if !subscribed(mask, t) {
        return Err(Malformed::NotSubscribed(t));
    }
    match t {
        et::CMD => {
            let slots = e.cmd().vector.get();
            let valid = if lim.nslots >= 32 {
                u32::MAX
            } else {
                (1u32 << lim.nslots) - 1
            };
            if slots == 0 || slots & !valid != 0 {
                return Err(Malformed::BadSlots(slots));
            }
            Ok(Event::Cmd { slots })
        }
        et::PAGE_REQUEST => {
            let req = e.page_req();
            let ec = req.ec_function.get();
            let func_id = req.func_id.get();
            if (ec & PAGE_REQ_EC_FUNCTION != 0) != lim.ec_function
                || ec & !(PAGE_REQ_EC_FUNCTION | PAGE_REQ_RELEASE_ALL) != 0
            {
                return Err(Malformed::BadFunction(func_id));
            }
            if func_id != lim.func_id {
                return Err(Malformed::BadFunction(func_id));
            }
            if ec & PAGE_REQ_RELEASE_ALL != 0 {
                return Ok(Event::PageReleaseAll { func_id });
            }
            let n = req.num_pages.get();
            // Every non-zero value of the signed 32-bit field is a request.
            if n == 0 {
                return Err(Malformed::BadPageCount(n));
            }
            Ok(Event::PageRequest {
                func_id,
                num_pages: n,
            })
        }
        et::COMP => {
            let raw = e.comp().cqn.get();
            if raw > 0x00ff_ffff || raw >= lim.cqn_limit {
                return Err(Malformed::BadCqn(raw));
            }
            Ok(Event::Comp { cqn: raw })
        }
        et::CQ_ERROR => {
            let d = e.cq_err();
            // The top byte is reserved (upstream masks it).
            let cqn = d.cqn.get() & 0x00ff_ffff;
            if cqn >= lim.cqn_limit {
                return Err(Malformed::BadCqn(cqn));
            }
            Ok(Event::CqError {
                cqn,
                syndrome: d.syndrome,
            })
        }
        et::PORT_CHANGE => {
            let known = matches!(
                sub,
                port_sub::DOWN
                    | port_sub::ACTIVE
                    | port_sub::INITIALIZED
                    | port_sub::LID
                    | port_sub::PKEY
                    | port_sub::GUID
                    | port_sub::CLIENT_REREG
            );
            if !known {
                return Err(Malformed::BadSubType {
                    type_: t,
                    sub_type: sub,
                });
            }
            let port = e.port().port_num();
            if port == 0 || port > lim.num_ports {
                return Err(Malformed::BadPort(port));
            }
            Ok(Event::PortChange {
                port,
                sub_type: sub,
            })
        }
        t if is_qp_event(t) => {
            let d = e.qp_srq();
            // The top byte is reserved (upstream masks it).
            let rsn = d.qp_srq_n.get() & 0x00ff_ffff;
            if !qp_event_allowed(d.type_, t) {
                return Err(Malformed::NotAllowed {
                    type_: t,
                    rsc_type: d.type_,
                });
            }
            Ok(Event::Qp {
                type_: t,
                rsc_type: d.type_,
                rsn,
            })
        }
        et::GENERAL_EVENT if sub == general_sub::PCI_SYNC_FOR_FW_UPDATE => {
            // In bounds: the data area is 28 bytes.
            let raw = e.data[general_sub::SYNC_RST_STATE_BYTE];
            SyncRst::from_raw(raw)
                .map(Event::SyncReset)
                .ok_or(Malformed::BadSyncState(raw & 0xf))
        }
        et::SRQ_CATAS_ERROR | et::SRQ_RQ_LIMIT => Ok(Event::Srq {
            type_: t,
            srqn: e.qp_srq().qp_srq_n.get() & 0x00ff_ffff,
        }),
        _ => Ok(Event::Async {
            type_: t,
            sub_type: sub,
        }),
    }
}

/// Name of an event type (`enum mlx5_event`), "UNKNOWN" otherwise.
pub fn event_name(t: u8) -> &'static str {
    match t {
        0x00 => "COMP",
        0x01 => "PATH_MIG",
        0x02 => "COMM_EST",
        0x03 => "SQ_DRAINED",
        0x04 => "CQ_ERROR",
        0x05 => "WQ_CATAS_ERROR",
        0x07 => "PATH_MIG_FAILED",
        0x08 => "INTERNAL_ERROR",
        0x09 => "PORT_CHANGE",
        0x0a => "CMD",
        0x0b => "PAGE_REQUEST",
        0x0c => "PAGE_FAULT",
        0x0d => "NIC_VPORT_CHANGE",
        0x0e => "ESW_FUNCTIONS_CHANGED",
        0x0f => "VHCA_STATE_CHANGE",
        0x10 => "WQ_INVAL_REQ_ERROR",
        0x11 => "WQ_ACCESS_ERROR",
        0x12 => "SRQ_CATAS_ERROR",
        0x13 => "SRQ_LAST_WQE",
        0x14 => "SRQ_RQ_LIMIT",
        0x15 => "GPIO_EVENT",
        0x16 => "PORT_MODULE_EVENT",
        0x17 => "TEMP_WARN_EVENT",
        0x18 => "XRQ_ERROR",
        0x19 => "REMOTE_CONFIG",
        0x1a => "DB_BF_CONGESTION",
        0x1b => "STALL_EVENT",
        0x1c => "DCT_DRAINED",
        0x1d => "DCT_KEY_VIOLATION",
        0x1f => "DROPPED_PACKET_LOGGED",
        0x20 => "FPGA_ERROR",
        0x21 => "FPGA_QP_ERROR",
        0x22 => "GENERAL_EVENT",
        0x24 => "MONITOR_COUNTER",
        0x25 => "PPS_EVENT",
        0x26 => "DEVICE_TRACER",
        0x27 => "OBJECT_CHANGE",
        _ => "UNKNOWN",
    }
}

/// Name of a port change sub-type.
pub fn port_sub_name(s: u8) -> &'static str {
    match s {
        port_sub::DOWN => "DOWN",
        port_sub::ACTIVE => "ACTIVE",
        port_sub::INITIALIZED => "INITIALIZED",
        port_sub::LID => "LID",
        port_sub::PKEY => "PKEY",
        port_sub::GUID => "GUID",
        port_sub::CLIENT_REREG => "CLIENT_REREG",
        _ => "UNKNOWN",
    }
}

/// Number of completion EQs: one per online CPU, capped by the completion vectors
/// (all but the control vector, or the control vector itself when it is the only
/// one) and by the EQs the device allows beyond the three control EQs; at least 1.
pub fn comp_eq_count(online_cpus: u32, vectors: u32, max_eqs: u32) -> u32 {
    let comp_vectors = if vectors > 1 { vectors - 1 } else { 1 };
    online_cpus
        .min(comp_vectors)
        .min(max_eqs.saturating_sub(3))
        .max(1)
}

/// MSI-X index of completion EQ `k`: vector `k + 1`, or 0 when only one exists.
pub fn comp_vector(k: u32, vectors: u32) -> u32 {
    if vectors > 1 {
        1 + k % (vectors - 1)
    } else {
        0
    }
}

/// Which online CPU (by index among the online CPUs) the affinity hint of vector
/// `vector` names: completion vector *i* → *i − 1*. The control vector (0), which also
/// carries the completion EQ when it is the only vector, gets no hint.
pub fn hint_cpu(vector: u32, vectors: u32) -> Option<u32> {
    (vectors > 1 && vector >= 1 && vector < vectors).then(|| vector - 1)
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_eq_event))]
mod tests {
    use super::*;

    const LIM: Limits = Limits {
        nslots: 32,
        num_ports: 1,
        cqn_limit: 1 << 24,
        func_id: 0,
        ec_function: false,
    };
    const ALL: [u64; 4] = [u64::MAX; 4];

    use crate::ifc::eqe::{EqeCmd, EqeComp, EqeCqErr, EqePageReq, EqePort, EqeQpSrq};
    use zerocopy::byteorder::big_endian::{I32, U16, U32};

    fn eqe(t: u8, sub: u8) -> [u8; EQE_BYTES] {
        let mut e = Eqe::zeroed();
        e.type_ = t;
        e.sub_type = sub;
        e.to_array()
    }

    fn edit(e: &mut [u8; EQE_BYTES], f: impl FnOnce(&mut Eqe)) {
        let mut x = Eqe::from_array(e);
        f(&mut x);
        *e = x.to_array();
    }

    fn set_vector(e: &mut [u8; EQE_BYTES], v: u32) {
        edit(e, |x| {
            x.set_cmd(EqeCmd {
                vector: U32::new(v),
                rsvd: [0; 24],
            })
        });
    }

    fn set_page(e: &mut [u8; EQE_BYTES], f: impl FnOnce(&mut EqePageReq)) {
        edit(e, |x| {
            let mut r = x.page_req();
            f(&mut r);
            x.set_page_req(r);
        });
    }

    fn set_cqn(e: &mut [u8; EQE_BYTES], cqn: u32) {
        edit(e, |x| {
            x.set_comp(EqeComp {
                rsvd: [0; 24],
                cqn: U32::new(cqn),
            })
        });
    }

    fn set_port(e: &mut [u8; EQE_BYTES], port: u8) {
        edit(e, |x| {
            x.set_port(EqePort {
                rsvd0: [0; 8],
                port,
                rsvd1: [0; 19],
            })
        });
    }

    #[test]
    fn cmd_slots_checked() {
        let mut e = eqe(et::CMD, 0);
        set_vector(&mut e, 0x8000_0001);
        assert_eq!(
            decode(&e, &[CMD_MASK, 0, 0, 0], &LIM),
            Ok(Event::Cmd { slots: 0x8000_0001 })
        );
        let small = Limits { nslots: 8, ..LIM };
        assert_eq!(
            decode(&e, &ALL, &small),
            Err(Malformed::BadSlots(0x8000_0001))
        );
        set_vector(&mut e, 0);
        assert_eq!(decode(&e, &ALL, &LIM), Err(Malformed::BadSlots(0)));
    }

    #[test]
    fn unsubscribed_type_rejected() {
        let e = eqe(et::CMD, 0);
        assert_eq!(
            decode(&e, &[PAGES_MASK, 0, 0, 0], &LIM),
            Err(Malformed::NotSubscribed(et::CMD))
        );
        let e = eqe(0x99, 0);
        assert_eq!(
            decode(&e, &[ASYNC_MASK, 0, 0, 0], &LIM),
            Err(Malformed::NotSubscribed(0x99))
        );
        assert!(subscribed(&[0, 0, 1 << (0x99 - 128), 0], 0x99));
    }

    #[test]
    fn page_requests() {
        let mut e = eqe(et::PAGE_REQUEST, 0);
        set_page(&mut e, |r| r.num_pages = I32::new(-7));
        let m = [PAGES_MASK, 0, 0, 0];
        assert_eq!(
            decode(&e, &m, &LIM),
            Ok(Event::PageRequest {
                func_id: 0,
                num_pages: -7
            })
        );
        set_page(&mut e, |r| r.num_pages = I32::new(0));
        assert_eq!(decode(&e, &m, &LIM), Err(Malformed::BadPageCount(0)));
        // Gives and takes above 50,000 pages are well formed (the field is a signed
        // 32-bit count); the old bound made them malformed and unanswered.
        for n in [50_001, 1 << 20, i32::MAX, -50_001, i32::MIN] {
            set_page(&mut e, |r| r.num_pages = I32::new(n));
            assert_eq!(
                decode(&e, &m, &LIM),
                Ok(Event::PageRequest {
                    func_id: 0,
                    num_pages: n
                })
            );
        }
        set_page(&mut e, |r| r.num_pages = I32::new(5));
        set_page(&mut e, |r| r.func_id = U16::new(3));
        assert_eq!(decode(&e, &m, &LIM), Err(Malformed::BadFunction(3)));
        set_page(&mut e, |r| r.func_id = U16::new(0));
        set_page(&mut e, |r| r.ec_function = U16::new(PAGE_REQ_EC_FUNCTION));
        assert_eq!(decode(&e, &m, &LIM), Err(Malformed::BadFunction(0)));
        // On an embedded-CPU function the flag is ours, and its absence is not.
        let ecpf = Limits {
            ec_function: true,
            ..LIM
        };
        assert_eq!(
            decode(&e, &m, &ecpf),
            Ok(Event::PageRequest {
                func_id: 0,
                num_pages: 5
            })
        );
        set_page(&mut e, |r| r.ec_function = U16::new(0));
        assert_eq!(decode(&e, &m, &ecpf), Err(Malformed::BadFunction(0)));
        set_page(&mut e, |r| r.ec_function = U16::new(0x0001));
        // reserved bits
        assert_eq!(decode(&e, &m, &LIM), Err(Malformed::BadFunction(0)));
        set_page(&mut e, |r| r.ec_function = U16::new(PAGE_REQ_RELEASE_ALL));
        assert_eq!(
            decode(&e, &m, &LIM),
            Ok(Event::PageReleaseAll { func_id: 0 })
        );
    }

    #[test]
    fn completion_cqn_bounds() {
        let mut e = eqe(et::COMP, 0);
        let m = [1, 0, 0, 0];
        set_cqn(&mut e, 5);
        assert_eq!(decode(&e, &m, &LIM), Ok(Event::Comp { cqn: 5 }));
        set_cqn(&mut e, 0x0100_0005);
        assert_eq!(decode(&e, &m, &LIM), Err(Malformed::BadCqn(0x0100_0005)));
        let small = Limits {
            cqn_limit: 4,
            ..LIM
        };
        set_cqn(&mut e, 4);
        assert_eq!(decode(&e, &m, &small), Err(Malformed::BadCqn(4)));
    }

    #[test]
    fn cq_error_decodes_cqn_and_syndrome() {
        let m = [ASYNC_MASK, 0, 0, 0];
        let mut e = eqe(et::CQ_ERROR, 0);
        let put = |e: &mut [u8; EQE_BYTES], cqn: u32, syndrome: u8| {
            edit(e, |x| {
                x.set_cq_err(EqeCqErr {
                    cqn: U32::new(cqn),
                    rsvd1: [0; 7],
                    syndrome,
                    rsvd2: [0; 16],
                })
            })
        };
        // The reserved top byte is ignored, as upstream masks it.
        put(&mut e, 0xab00_0007, 1);
        assert_eq!(
            decode(&e, &m, &LIM),
            Ok(Event::CqError {
                cqn: 7,
                syndrome: 1
            })
        );
        let small = Limits {
            cqn_limit: 7,
            ..LIM
        };
        assert_eq!(decode(&e, &m, &small), Err(Malformed::BadCqn(7)));
        // Not on an EQ that did not subscribe to it (a completion EQ).
        assert_eq!(
            decode(&e, &[1, 0, 0, 0], &LIM),
            Err(Malformed::NotSubscribed(et::CQ_ERROR))
        );
    }

    #[test]
    fn port_change_checked() {
        let m = [ASYNC_MASK, 0, 0, 0];
        let mut e = eqe(et::PORT_CHANGE, port_sub::ACTIVE);
        set_port(&mut e, 1 << 4);
        assert_eq!(
            decode(&e, &m, &LIM),
            Ok(Event::PortChange {
                port: 1,
                sub_type: 4
            })
        );
        set_port(&mut e, 2 << 4);
        assert_eq!(decode(&e, &m, &LIM), Err(Malformed::BadPort(2)));
        set_port(&mut e, 0);
        assert_eq!(decode(&e, &m, &LIM), Err(Malformed::BadPort(0)));
        let e = eqe(et::PORT_CHANGE, 2);
        assert_eq!(
            decode(&e, &m, &LIM),
            Err(Malformed::BadSubType {
                type_: 9,
                sub_type: 2
            })
        );
        let e = eqe(et::INTERNAL_ERROR, 0);
        assert_eq!(
            decode(&e, &m, &LIM),
            Err(Malformed::NotSubscribed(et::INTERNAL_ERROR))
        );
        assert_eq!(event_name(8), "INTERNAL_ERROR");
        assert_eq!(port_sub_name(4), "ACTIVE");
    }

    fn qp_srq(t: u8, rsc: u8, n: u32) -> [u8; EQE_BYTES] {
        let mut e = eqe(t, 0);
        edit(&mut e, |x| {
            x.set_qp_srq(EqeQpSrq {
                rsvd0: [0; 20],
                type_: rsc,
                rsvd1: [0; 3],
                qp_srq_n: U32::new(n),
            })
        });
        e
    }

    #[test]
    fn qp_events_decode_type_and_number() {
        let m = [ASYNC_MASK, 0, 0, 0];
        let qp_events = [
            et::PATH_MIG,
            et::COMM_EST,
            et::SQ_DRAINED,
            et::SRQ_LAST_WQE,
            et::WQ_CATAS_ERROR,
            et::PATH_MIG_FAILED,
            et::WQ_INVAL_REQ_ERROR,
            et::WQ_ACCESS_ERROR,
        ];
        for t in qp_events {
            // The reserved top byte of the number is ignored, as upstream masks it.
            assert_eq!(
                decode(&qp_srq(t, rsc_type::QP, 0xee00_0123), &m, &LIM),
                Ok(Event::Qp {
                    type_: t,
                    rsc_type: rsc_type::QP,
                    rsn: 0x123
                })
            );
        }
        // An RQ takes last-WQE and catastrophic errors only, an SQ the latter only.
        assert!(decode(&qp_srq(et::SRQ_LAST_WQE, rsc_type::RQ, 5), &m, &LIM).is_ok());
        assert!(decode(&qp_srq(et::WQ_CATAS_ERROR, rsc_type::SQ, 5), &m, &LIM).is_ok());
        for (t, rsc) in [
            (et::COMM_EST, rsc_type::RQ),
            (et::SRQ_LAST_WQE, rsc_type::SQ),
            (et::COMM_EST, rsc_type::DCT),
            (et::COMM_EST, rsc_type::SRQ),
            (et::WQ_CATAS_ERROR, 0x77),
        ] {
            assert_eq!(
                decode(&qp_srq(t, rsc, 5), &m, &LIM),
                Err(Malformed::NotAllowed {
                    type_: t,
                    rsc_type: rsc
                })
            );
        }
        // Not on an EQ that did not subscribe.
        assert_eq!(
            decode(&qp_srq(et::COMM_EST, 0, 5), &[1, 0, 0, 0], &LIM),
            Err(Malformed::NotSubscribed(et::COMM_EST))
        );
    }

    #[test]
    fn srq_events_decode_number() {
        let m = [ASYNC_MASK, 0, 0, 0];
        for t in [et::SRQ_RQ_LIMIT, et::SRQ_CATAS_ERROR] {
            // The type byte is not read for SRQ events (upstream's SRQ table is keyed
            // by the number alone).
            assert_eq!(
                decode(&qp_srq(t, 0x55, 0x0100_0042), &m, &LIM),
                Ok(Event::Srq {
                    type_: t,
                    srqn: 0x42
                })
            );
        }
    }

    #[test]
    fn async_mask_matches_upstream() {
        // MLX5_ASYNC_EVENT_MASK of upstream eq.c, bit by bit.
        let upstream = [
            0x01u8, 0x02, 0x03, 0x04, 0x05, 0x07, 0x09, 0x10, 0x11, 0x12, 0x13, 0x14,
        ]
        .iter()
        .fold(0u64, |m, t| m | 1 << t);
        assert_eq!(ASYNC_MASK, upstream);
        assert!(!subscribed(&[ASYNC_MASK, 0, 0, 0], et::INTERNAL_ERROR));
        assert!(!subscribed(&[ASYNC_MASK, 0, 0, 0], et::CMD));
        assert!(!subscribed(&[ASYNC_MASK, 0, 0, 0], et::PAGE_REQUEST));
    }

    #[test]
    fn sync_reset_events() {
        let m = [ASYNC_MASK | GENERAL_EVENT_BIT, 0, 0, 0];
        // Not subscribed without the general-event bit (upstream's mask without cap
        // `general_notification_event`).
        let e = eqe(et::GENERAL_EVENT, general_sub::PCI_SYNC_FOR_FW_UPDATE);
        assert_eq!(
            decode(&e, &[ASYNC_MASK, 0, 0, 0], &LIM),
            Err(Malformed::NotSubscribed(et::GENERAL_EVENT))
        );
        for (raw, want) in [
            (0x0u8, SyncRst::Request),
            (0x1, SyncRst::Now),
            (0x2, SyncRst::Abort),
            (0x3, SyncRst::Unload),
            // The high nibble is not the state (SYNC_RST_STATE_MASK).
            (0xf1, SyncRst::Now),
        ] {
            let mut e = eqe(et::GENERAL_EVENT, general_sub::PCI_SYNC_FOR_FW_UPDATE);
            edit(&mut e, |x| x.data[general_sub::SYNC_RST_STATE_BYTE] = raw);
            assert_eq!(decode(&e, &m, &LIM), Ok(Event::SyncReset(want)));
        }
        // Another byte of the data does not carry the state.
        let mut e = eqe(et::GENERAL_EVENT, general_sub::PCI_SYNC_FOR_FW_UPDATE);
        edit(&mut e, |x| x.data[0] = 0x1);
        assert_eq!(decode(&e, &m, &LIM), Ok(Event::SyncReset(SyncRst::Request)));
        for raw in [0x4u8, 0x7, 0xf] {
            let mut e = eqe(et::GENERAL_EVENT, general_sub::PCI_SYNC_FOR_FW_UPDATE);
            edit(&mut e, |x| x.data[general_sub::SYNC_RST_STATE_BYTE] = raw);
            assert_eq!(decode(&e, &m, &LIM), Err(Malformed::BadSyncState(raw)));
        }
        // Another general event (live patch) is only logged.
        let e = eqe(et::GENERAL_EVENT, general_sub::FW_LIVE_PATCH);
        assert_eq!(
            decode(&e, &m, &LIM),
            Ok(Event::Async {
                type_: et::GENERAL_EVENT,
                sub_type: general_sub::FW_LIVE_PATCH
            })
        );
    }

    #[test]
    fn vector_assignment() {
        assert_eq!(comp_eq_count(2, 3, 64), 2);
        assert_eq!(comp_eq_count(8, 3, 64), 2);
        assert_eq!(comp_eq_count(8, 1, 64), 1);
        assert_eq!(comp_eq_count(8, 9, 5), 2);
        assert_eq!(comp_eq_count(8, 9, 2), 1);
        assert_eq!(comp_vector(0, 3), 1);
        assert_eq!(comp_vector(1, 3), 2);
        assert_eq!(comp_vector(0, 1), 0);
        // Completion EQ k: vector k + 1, hinted to online CPU k.
        for k in 0..comp_eq_count(4, 5, 64) {
            assert_eq!(hint_cpu(comp_vector(k, 5), 5), Some(k));
        }
        assert_eq!(hint_cpu(0, 3), None);
        assert_eq!(hint_cpu(0, 1), None);
        assert_eq!(hint_cpu(3, 3), None);
    }
}
