//! The data path: work requests executed as the PRM describes.
//!
//! A send doorbell makes the device read the QP's send WQEs from host memory and
//! execute them in order; every local and remote access goes through a memory key;
//! the responder consumes receive WQEs (QP receive queue or SRQ); completions are
//! written as CQEs in the format each CQ was created with. Packets between QPs cross
//! the port: to a QP of this device (loopback) or over the wire to the peer device.
//!
//! Files (rules and sources in emu/README.md, "Data path"):
//! - [`xlate`]: memory keys: translation (PA, MTT, KLM, KSM) and access checks
//! - [`umr`]: UMR work requests (fast registration, local invalidate, memory-window
//!   bind, upstream's MR cache updates)
//! - [`wqe`]: send WQE decoding (control, remote address, atomic, datagram, data and
//!   inline segments)
//! - [`send`]: send doorbells and the requester side
//! - [`transport`]: RC / UC / UD semantics (PSNs, ACKs, RNR and transport retries)
//! - [`packet`]: what crosses the port
//! - [`recv`]: receive WQEs (receive queues, SRQs, XRC SRQs) and the responder side
//! - [`cqe`]: CQE writing, completion events, CQ overrun
//! - [`wire`]: the link to a peer device
//! - [`fault`]: data-path faults on demand (control socket `dp_fault`)
//! - [`mad`]: the MAD QPs (QP0 / QP1): the checks a MAD passes on its way to the
//!   host's QP0 / QP1, and the port's traffic counters the PMA reports

pub mod cqe;
pub mod fault;
pub mod mad;
pub mod packet;
pub mod recv;
pub mod send;
pub mod transport;
pub mod umr;
pub mod wire;
pub mod wqe;
pub mod xlate;

/// The data path's function-wide state, one part per file.
#[derive(Clone, Debug, Default)]
pub struct DataPath {
    /// Memory keys.
    pub xlate: xlate::XlatePath,
    /// Requester side.
    pub send: send::stats::SendPath,
    /// Responder side.
    pub recv: recv::RecvPath,
    /// Completions.
    pub cqe: cqe::CqePath,
    /// Link to the peer device.
    pub wire: wire::WireState,
    /// Faults on demand (control socket).
    pub faults: fault::DpFaults,
    /// MAD QPs and the port's counters.
    pub mad: mad::MadPath,
}
