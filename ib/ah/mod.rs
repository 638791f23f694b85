// SPDX-License-Identifier: GPL-2.0

//! Address handles. The verbs (create_ah, query_ah, destroy_ah) are served with the
//! SRQ family's ops ([`crate::ib::srq`]); the address vector they build is the pure
//! [`av`].

#[expect(unreachable_pub, reason = "pub API of the host crate (host/)")]
pub(crate) mod av;
