//! CQE writing, completion events and CQ overrun. See [`super`].

/// Per-CQ data-path state.
#[derive(Clone, Debug, Default)]
pub struct CqState {}

/// Function-wide CQE statistics (`stats` → `dp`).
#[derive(Clone, Debug, Default)]
pub struct CqePath {}
