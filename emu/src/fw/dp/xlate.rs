//! Memory keys: translation and access checks. See [`super`].

/// An mkey's translation and state as the data path sees them.
#[derive(Clone, Debug, Default)]
pub struct MkeyState {}

/// Function-wide translation statistics (`stats` → `dp`).
#[derive(Clone, Debug, Default)]
pub struct XlatePath {}
