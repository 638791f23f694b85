//! Interrupt delivery: MSI-X vectors as eventfds (vfio-user) or recorded (tests).

use std::fs::File;
use std::io::Write;
use std::sync::Mutex;

/// Where the device sends MSI-X interrupts.
pub trait IrqSink: Send + Sync {
    /// Raises MSI-X vector `vector`; returns false if it could not be delivered.
    fn fire(&self, vector: u16) -> bool;
}

/// MSI-X vectors backed by eventfds from `set_irqs`.
pub struct EventFdIrqs {
    fds: Mutex<Vec<Option<File>>>,
}

impl EventFdIrqs {
    /// Creates a table of `n` unassigned vectors.
    pub fn new(n: usize) -> Self {
        EventFdIrqs {
            fds: Mutex::new((0..n).map(|_| None).collect()),
        }
    }

    /// Assigns (or with `None` de-assigns) the eventfd of one vector.
    pub fn set(&self, vector: usize, fd: Option<File>) {
        let mut fds = self.fds.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = fds.get_mut(vector) {
            *slot = fd;
        }
    }

    /// De-assigns every vector.
    pub fn clear(&self) {
        let mut fds = self.fds.lock().unwrap_or_else(|e| e.into_inner());
        fds.iter_mut().for_each(|f| *f = None);
    }
}

impl IrqSink for EventFdIrqs {
    fn fire(&self, vector: u16) -> bool {
        let mut fds = self.fds.lock().unwrap_or_else(|e| e.into_inner());
        match fds.get_mut(usize::from(vector)).and_then(|f| f.as_mut()) {
            Some(f) => f.write_all(&1u64.to_ne_bytes()).is_ok(),
            None => false,
        }
    }
}

/// Records fired vectors (for tests).
#[derive(Default)]
pub struct RecordingIrqs {
    /// Vectors in firing order.
    pub fired: Mutex<Vec<u16>>,
}

impl IrqSink for RecordingIrqs {
    fn fire(&self, vector: u16) -> bool {
        self.fired
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(vector);
        true
    }
}
