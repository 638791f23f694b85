// SPDX-License-Identifier: GPL-2.0

//! Which send WQE a software flush completes next, as upstream's `sw_comp` (`cq.c`)
//! walks a kernel QP's send queue after a fatal error: the work requests from `tail`
//! to `head`, each one completion (signalled or not). Upstream follows its `w_list`
//! from `last_poll`; here each slot of the ring records the `head` count of the work
//! request whose first basic block it is (`wqe_head`), so request `k` is at the slot
//! that records `k`. A slot the request does not start (a later basic block of a
//! WQE, or one of a request completed long ago) records a count outside
//! `tail..head`, or, after the queue was reset, [`NO_WQE`].
//!
//! Pure `core` code, host-tested and run as a KUnit suite.

/// What a slot records when no work request starts there (a queue reset).
pub const NO_WQE: u32 = u32::MAX;

/// The slot where send work request `k` starts, if one records it (`wqe_head`: what
/// each slot records, in slot order).
pub fn send_slot(wqe_head: impl IntoIterator<Item = u32>, k: u32) -> Option<usize> {
    wqe_head.into_iter().position(|h| h == k)
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_ib_qp_flush))]
mod tests {
    use super::*;

    #[test]
    fn finds_each_outstanding_request() {
        // 8 slots: requests 5 (slots 6, 7), 6 (slots 0-2), 7 (slot 3) outstanding;
        // slots 4, 5 hold requests 3 and 4, completed.
        let heads = [6, 6, 6, 7, 3, 4, 5, 5];
        assert_eq!(send_slot(heads, 5), Some(6));
        assert_eq!(send_slot(heads, 6), Some(0));
        assert_eq!(send_slot(heads, 7), Some(3));
        assert_eq!(send_slot(heads, 8), None);
    }

    #[test]
    fn reset_slots_name_no_request() {
        let heads = [NO_WQE; 4];
        assert_eq!(send_slot(heads, 0), None);
        assert_eq!(send_slot(heads, NO_WQE - 1), None);
    }
}
