// SPDX-License-Identifier: GPL-2.0

//! The interface through which the pages EQ hands runtime page requests (EQE 0x0B) to
//! whoever supplies firmware pages, as completion EQs hand completions to the
//! [`CqHandler`](super::cq::CqHandler)s registered in the CQ table.
//!
//! The EQ layer only decodes and validates the event (the decoder admits requests for
//! the function the handler names) and calls the handler from the interrupt thread of
//! the control vector. That thread also delivers command completions, so a handler must
//! not send a command or wait there: it records the request and answers it from its
//! own work item (the page allocator does so). When the EQ stage is
//! torn down, after the pages EQ was destroyed, [`PageRequestStop`] stops the handler.

use kernel::{fmt, sync::Arc};

/// Receives the page-request events of the pages EQ (process context: the IRQ thread).
pub(crate) trait PageRequestHandler: Send + Sync {
    /// `(function_id, embedded_cpu_function)` of the function whose requests it answers:
    /// the decoder drops requests naming another.
    fn function(&self) -> (u16, bool);

    /// A validated request from EQ `eqn`: positive = give, negative = take. Must not
    /// wait for a command.
    fn request(self: Arc<Self>, eqn: u8, num_pages: i32);

    /// A validated release-all request from EQ `eqn`: the device dropped every page of
    /// the function. Must not wait for a command or for a lock held across one.
    fn release_all(self: Arc<Self>, eqn: u8);

    /// No event arrives any more (the pages EQ is destroyed): ignore later calls and
    /// finish what was admitted before returning.
    fn stop(&self);

    /// Writes the handler's counters (debugfs `eqs`, one line).
    fn show(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

/// Stops the handler on drop (see [`PageRequestHandler::stop`]).
pub(crate) struct PageRequestStop(pub(crate) Arc<dyn PageRequestHandler>);

impl Drop for PageRequestStop {
    fn drop(&mut self) {
        self.0.stop();
    }
}
