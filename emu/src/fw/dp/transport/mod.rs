//! RC / UC / UD semantics: the port, the responder, acknowledgements, RNR and
//! transport retries. See [`super`].
//!
//! [`Firmware::port_deliver`] sends a packet: to this port's own LID (within its LMC
//! range) it is queued for this device (loopback, handled by [`Firmware::dp_pump`] in
//! the same firmware step), otherwise it goes to the wire as a frame. The responder
//! checks what the IBTA's receive rules check (QP, state, connection, P_Key, Q_Key,
//! PSN) and silently drops what fails them, as a channel adapter does, so the
//! requester's local ACK timer runs out; it executes requests through the memory keys
//! and answers RC requests (ACK, READ response, atomic acknowledge, NAK). The
//! requester completes RC WQEs on their responses, waits `min_rnr_timer` after an
//! RNR NAK (up to `rnr_retry` times, 7 = infinitely), retransmits after
//! 4.096 µs × 2^`ack_timeout` without a response (up to `retry_count` times), and
//! fails a WQE a NAK refuses. [`Firmware::dp_tick`] runs the timers from the firmware
//! loop.
//!
//! Files, one job each:
//! - `port.rs`: loopback or wire, frames from the wire (DLID check), the pump
//! - `responder.rs`: the receive checks, PSNs, duplicates, the answer
//! - `execute.rs`: a request executed at the responder (SEND, WRITE, READ, atomics)
//! - `deliver.rs`: a receive WQE taken, scattered and completed
//! - `requester.rs`: responses completing, retrying or failing RC WQEs
//! - `retry.rs`: the local ACK timer, RNR waits, retransmission
//! - [`ibta`]: the IBTA's arithmetic (packets, PSNs, timer codes, P_Keys)
//! - [`state`]: per-QP responder state and the transport counters
//!
//! Rules and sources: emu/README.md, "Data path" → "Transport".
//!
//! [`Firmware::port_deliver`]: crate::fw::Firmware::port_deliver
//! [`Firmware::dp_pump`]: crate::fw::Firmware::dp_pump
//! [`Firmware::dp_tick`]: crate::fw::Firmware::dp_tick

mod deliver;
mod execute;
pub mod ibta;
mod port;
mod requester;
mod responder;
mod retry;
pub mod state;
