//! Receive WQEs (receive queues, SRQs, XRC SRQs) and the responder side. See
//! [`super`].

/// Per-QP receive queue state.
#[derive(Clone, Debug, Default)]
pub struct RqState {}

/// Per-SRQ receive state.
#[derive(Clone, Debug, Default)]
pub struct SrqState {}

/// Function-wide receive statistics (`stats` → `dp`).
#[derive(Clone, Debug, Default)]
pub struct RecvPath {}
