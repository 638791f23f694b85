//! Send doorbells and the requester side. See [`super`].
//!
//! A send doorbell (the first 8 bytes of the control segment written to a BlueFlame
//! register half of the QP's UAR page) makes the device read the QP's send WQEs from
//! host memory, from its consumer counter up to the producer counter in the doorbell
//! record (DW1), and execute them in order. The WQEs are always read from memory: a
//! BlueFlame copy of a whole WQE (libmlx5 56.1 `post_send_db` → `mlx5_bf_copy` for one
//! inline or `prefer_bf` WQE of up to 256 bytes) is a copy of the bytes it wrote to the
//! send queue first, after the doorbell record update, so memory holds the same WQE
//! (upstream mlx5_ib `mlx5r_ring_db` writes only the first 8 bytes).
//!
//! Every WQE becomes a [`state::Pending`] entry of its QP; entries complete in order (a
//! CQE for signalled ones and every error), as the PRM's completion ordering demands.
//! Local operations (NOP, UMR) and unacknowledged transports (UC, UD) are done when
//! executed; RC requests when the response arrives ([`super::transport`]).
//!
//! Files, one job each:
//! - `doorbell.rs`: the doorbell and the executor that walks the queue in order
//! - `fetch.rs`: where the send queue lies, reading and decoding a WQE, a failed fetch
//! - `execute.rs`: one WQE executed: gather, the request per opcode, its PSNs
//! - `header.rs`: the packet header a send carries
//! - `complete.rs`: in-order completion, the move to ERR, flushes
//! - [`state`]: per-QP requester state ([`state::SqState`], [`state::Pending`])
//! - [`stats`]: `stats` → `dp` → `send` and the emulator's own cost
//!
//! Rules and sources: emu/README.md, "Data path" → "Send queues".

mod complete;
mod doorbell;
mod execute;
mod fetch;
mod header;
pub mod state;
pub mod stats;
