//! The link to a peer device. See [`super`].

/// The wire's state and statistics (`stats` → `dp`).
#[derive(Clone, Debug, Default)]
pub struct WireState {}
