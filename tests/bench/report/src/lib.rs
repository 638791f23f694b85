//! The report of `make bench` (tests/bench/run.sh): the tables (`last.md`) and the plot
//! of teardown time against pages held (`teardown.svg`) from the BENCH lines the VMs
//! printed, and the host's own figures from the emulator's final stats (`upfast.rs`).
//!
//! What the tables show is `rows.rs`, one line per row.

pub mod report;
pub mod rows;
pub mod stats;
pub mod svg;
pub mod template;
pub mod upfast;
