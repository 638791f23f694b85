//! Send doorbells and the requester side. See [`super`].

/// Per-QP requester state.
#[derive(Clone, Debug, Default)]
pub struct SqState {}

/// Function-wide send statistics (`stats` → `dp`).
#[derive(Clone, Debug, Default)]
pub struct SendPath {}
