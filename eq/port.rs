// SPDX-License-Identifier: GPL-2.0

//! The interface through which the async EQ hands port-change events (EQE 0x09) to a
//! subscriber (the InfiniBand provider), as the pages EQ hands page requests to the
//! [`PageRequestHandler`](super::pages::PageRequestHandler) and completion EQs hand
//! completions to [`CqHandler`](super::cq::CqHandler)s. The EQ layer names no
//! subscriber: it validates the event (port number within the device's ports, a
//! sub-type the PRM defines), logs it, and calls whoever subscribed.
//!
//! The handler runs in the async EQ's interrupt thread, which also delivers command
//! completions: it must not send a command or wait for one. It is called with the
//! subscription lock held, so once [`PortSubscription`] is dropped no call is running
//! and none follows.

use kernel::{
    prelude::*,
    sync::{new_mutex, Arc, Mutex},
};

/// Receives the port-change events of the async EQ (process context: the IRQ thread).
pub(crate) trait PortEventHandler: Send + Sync {
    /// A validated port change: 1-based `port`, PRM `sub_type`
    /// (`MLX5_PORT_CHANGE_SUBTYPE_*`). Must not wait for a command.
    fn port_change(&self, port: u8, sub_type: u8);
}

/// The subscriber slot of one function's async EQ.
#[pin_data]
pub(crate) struct PortEvents {
    /// Lock order: a leaf below the async EQ's `Eq::state` (the drain calls the handler
    /// under it); the handler may take only leaf locks of its own.
    #[pin]
    handler: Mutex<Option<Arc<dyn PortEventHandler>>>,
}

impl PortEvents {
    /// An empty slot.
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(pin_init!(Self { handler <- new_mutex!(None) }), GFP_KERNEL)
    }

    /// Subscribes `h`; `EBUSY` if somebody is subscribed.
    #[cfg_attr(
        not(CONFIG_MLX5_RS_INFINIBAND),
        expect(dead_code, reason = "the IB provider subscribes")
    )]
    pub(crate) fn subscribe(
        self: &Arc<Self>,
        h: Arc<dyn PortEventHandler>,
    ) -> Result<PortSubscription> {
        let mut g = self.handler.lock();
        if g.is_some() {
            return Err(EBUSY);
        }
        *g = Some(h);
        Ok(PortSubscription(self.clone()))
    }

    /// Hands a validated event to the subscriber, if any.
    pub(crate) fn deliver(&self, port: u8, sub_type: u8) {
        if let Some(h) = self.handler.lock().as_ref() {
            h.port_change(port, sub_type);
        }
    }
}

/// A subscription; unsubscribes on drop (waiting for a running call to return).
pub(crate) struct PortSubscription(Arc<PortEvents>);

impl Drop for PortSubscription {
    fn drop(&mut self) {
        // Dropped outside the lock: the handler's own drop may sleep.
        let h = self.0.handler.lock().take();
        drop(h);
    }
}
