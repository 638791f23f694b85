//! Port-change events for host tests (port.rs, dp_wire.rs, each including this file
//! with `#[path]` beside `common`): an async EQ on an initialized function subscribed
//! to port changes as upstream's is (`MLX5_ASYNC_EVENT_MASK` has 1 << PORT_CHANGE), and
//! a reader of the events written into it.
#![allow(dead_code)]

use crate::common::{create_eq, Host};
use mlx5_emu::ifc::eqe::{event_type, Eqe};
use mlx5_emu::mem::GuestMemory;
use zerocopy::FromBytes;

/// The EQ's buffer and the next entry to read.
pub struct Async {
    pub buf: u64,
    pub next: u32,
}

/// An async EQ of 64 entries on a fresh UAR subscribed to port changes.
pub fn async_eq(h: &mut Host) -> Async {
    let uar = h.alloc_uar();
    let (eqn, buf) = create_eq(h, uar, 6, 1u64 << event_type::PORT_CHANGE, 0);
    assert_ne!(eqn, 0xff);
    Async { buf, next: 0 }
}

/// Port-change sub-types written since the last call (all for port 1).
pub fn drain(h: &Host, q: &mut Async) -> Vec<u8> {
    let mut subs = vec![];
    loop {
        let mut e = [0u8; 64];
        h.mem.read(q.buf + 64 * u64::from(q.next), &mut e).unwrap();
        let eqe = Eqe::read_from_bytes(&e).unwrap();
        // Software owns an entry when its owner bit equals the pass parity (first pass 0).
        if eqe.owner & 1 != 0 {
            return subs;
        }
        assert_eq!(eqe.type_, event_type::PORT_CHANGE);
        assert_eq!(eqe.port().port_num(), 1);
        subs.push(eqe.sub_type);
        q.next += 1;
    }
}
