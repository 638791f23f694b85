//! The device: PCI config space, BAR0 (init segment, MSI-X PBA, UAR pages) and the
//! firmware thread.
//!
//! MMIO callbacks never execute commands: a doorbell or UAR write is recorded in
//! the inbox and the firmware thread is woken. [`Device::step`] is one firmware
//! iteration; tests call it directly for deterministic runs.

use crate::config::EmuConfig;
use crate::fw::{Env, Firmware};
use crate::ifc::eq::{UAR_EQ_DB_ARM, UAR_EQ_DB_UPDATE};
use crate::ifc::init_seg as is;
use crate::irq::IrqSink;
use crate::mem::GuestMemory;
use crate::pci_config::PciConfig;
use crate::regs::{RegWrite, Regs};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A UAR doorbell write waiting for the firmware.
#[derive(Clone, Copy, Debug)]
struct UarWrite {
    /// BAR0 offset of the write (decoded into UAR and offset by the firmware, whose
    /// caps say how UARs are laid out).
    bar_off: u64,
    val: u32,
    /// When the MMIO write arrived (EQ interrupt latency ends here).
    at: Instant,
}

/// A posted BAR0 write the firmware must act on.
#[derive(Clone, Copy, Debug)]
enum Posted {
    /// Command doorbell vector.
    Doorbell(u32),
    /// UAR doorbell (EQ update or arm).
    Uar(UarWrite),
    /// Driver write of `nic_interface`.
    Nic(u32),
}

/// Posted writes in arrival order: PCIe orders posted writes, so the firmware handles
/// them in the order the driver issued them (an EQ arm posted before a DESTROY_EQ
/// doorbell reaches the EQ before it is destroyed).
#[derive(Default)]
struct Inbox {
    posted: VecDeque<Posted>,
}

/// The emulated adapter.
pub struct Device {
    /// Configuration.
    pub cfg: EmuConfig,
    /// PCI configuration space.
    pub pci: Mutex<PciConfig>,
    /// Initialization segment.
    pub regs: Mutex<Regs>,
    inbox: Mutex<Inbox>,
    wake: Condvar,
    /// Firmware state.
    pub fw: Mutex<Firmware>,
    /// Guest memory.
    pub mem: Arc<dyn GuestMemory>,
    /// Interrupts.
    pub irq: Arc<dyn IrqSink>,
    stop: AtomicBool,
    /// DMA_MAP sections that came without an fd (unreachable guest memory).
    pub dma_maps_without_fd: std::sync::atomic::AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Device {
    /// Creates a device over `mem` and `irq`.
    pub fn new(cfg: EmuConfig, mem: Arc<dyn GuestMemory>, irq: Arc<dyn IrqSink>) -> Arc<Self> {
        Arc::new(Device {
            pci: Mutex::new(PciConfig::with_msix(cfg.msix_vectors)),
            regs: Mutex::new(Regs::new(&cfg)),
            inbox: Mutex::new(Inbox::default()),
            wake: Condvar::new(),
            fw: Mutex::new(Firmware::new(&cfg)),
            cfg,
            mem,
            irq,
            stop: AtomicBool::new(false),
            dma_maps_without_fd: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Locks the firmware.
    pub fn fw(&self) -> MutexGuard<'_, Firmware> {
        lock(&self.fw)
    }

    /// Locks the init segment.
    pub fn regs(&self) -> MutexGuard<'_, Regs> {
        lock(&self.regs)
    }

    /// Reads config space.
    pub fn config_read(&self, off: u64, buf: &mut [u8]) {
        lock(&self.pci).read(off, buf);
    }

    /// Writes config space.
    pub fn config_write(&self, off: u64, data: &[u8]) {
        lock(&self.pci).write(off, data);
    }

    /// Reads BAR0.
    pub fn bar0_read(&self, off: u64, buf: &mut [u8]) {
        let mut regs = self.regs();
        if regs.all_ones || off.saturating_add(buf.len() as u64) > crate::pci_config::BAR0_SIZE {
            buf.fill(0xff);
            return;
        }
        if (off as usize) < is::MAPPED_SIZE {
            regs.note_read(off as usize & !3);
        }
        for (i, b) in buf.iter_mut().enumerate() {
            let o = off as usize + i;
            // Beyond the init segment: MSI-X PBA (QEMU emulates the table itself)
            // and UAR pages, all reading as zero.
            *b = if o < is::MAPPED_SIZE {
                regs.read32(o & !3).to_be_bytes()[o & 3]
            } else {
                0
            };
        }
    }

    /// Writes BAR0 (posted; never blocks on command execution).
    pub fn bar0_write(&self, off: u64, data: &[u8]) {
        if off.saturating_add(data.len() as u64) > crate::pci_config::BAR0_SIZE {
            self.fw()
                .stats
                .violation(format!("BAR0 write beyond the BAR at {off:#x}"));
            return;
        }
        if self.regs().all_ones {
            // Surprise removal: the device is gone, writes go nowhere.
            return;
        }
        let off = off as usize;
        if off < is::MAPPED_SIZE {
            // Merge into aligned dwords.
            let mut regs = self.regs();
            let mut i = 0;
            while i < data.len() {
                let o = off + i;
                let base = o & !3;
                let mut dw = regs.read32(base).to_be_bytes();
                let mut j = o - base;
                while j < 4 && i < data.len() {
                    dw[j] = data[i];
                    j += 1;
                    i += 1;
                }
                let w = regs.write32(base, u32::from_be_bytes(dw));
                match w {
                    RegWrite::None => {}
                    RegWrite::Doorbell(v) => {
                        lock(&self.inbox).posted.push_back(Posted::Doorbell(v));
                        self.wake.notify_all();
                    }
                    RegWrite::NicInterface(v) => {
                        lock(&self.inbox).posted.push_back(Posted::Nic(v));
                        self.wake.notify_all();
                    }
                }
            }
            return;
        }
        if off as u64 >= crate::fw::uar::RESERVED_BYTES && data.len() >= 4 {
            for (k, chunk) in data.chunks_exact(4).enumerate() {
                let val = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                let at = Instant::now();
                lock(&self.inbox).posted.push_back(Posted::Uar(UarWrite {
                    bar_off: (off + 4 * k) as u64,
                    val,
                    at,
                }));
            }
            self.wake.notify_all();
        }
    }

    fn env(&self) -> (bool,) {
        (lock(&self.pci).msix_deliverable(),)
    }

    /// One firmware iteration: handles everything in the inbox and due delayed
    /// completions. Returns the next deadline of a delayed completion.
    pub fn step(&self) -> Option<Instant> {
        let (msix_ok,) = self.env();
        let inbox = std::mem::take(&mut *lock(&self.inbox));
        let queue = self.regs().cmdq_addr();
        let env = Env {
            mem: &*self.mem,
            irq: &*self.irq,
            msix_ok,
        };
        let mut fw = self.fw();
        for p in inbox.posted {
            match p {
                Posted::Nic(v) => {
                    if let Some(readback) = fw.nic_interface_write(v) {
                        self.regs().nic_interface = readback;
                    }
                }
                Posted::Doorbell(bits) => {
                    for slot in 0..crate::ifc::cmd_layout::MAX_SLOTS {
                        if bits & (1 << slot) != 0 {
                            fw.process_slot(&env, queue, slot);
                        }
                    }
                }
                Posted::Uar(w) => {
                    // Past the reserved bytes and inside the BAR (checked at the write).
                    let Some((page, off)) = fw.caps.uar_layout().decode(w.bar_off) else {
                        continue;
                    };
                    let arm = match off {
                        UAR_EQ_DB_ARM => true,
                        UAR_EQ_DB_UPDATE => false,
                        // CQ arm and send doorbells (verbs objects send path).
                        _ => {
                            fw.uar_write(&env, page, off, w.val);
                            continue;
                        }
                    };
                    fw.timeline.last_doorbell = Some(w.at);
                    // EQ doorbells: eqn in bits 31:24, consumer index in 23:0, written to
                    // the UAR page the EQ was created with (upstream `eq_update_ci`);
                    // anything else is a violation and ignored.
                    if !fw.uar_owned(page) {
                        fw.eq_doorbell_unallocated(page);
                        continue;
                    }
                    if !fw
                        .eqs
                        .doorbell_at(page, w.val, arm, w.at, env.mem, env.irq, env.msix_ok)
                    {
                        fw.stats
                            .violation(format!("bad EQ doorbell {:#x} on UAR {}", w.val, page));
                    }
                }
            }
        }
        // Consumer-index doorbells may have made room for queued page requests.
        if !fw.ledger.requests.queued.is_empty() {
            fw.pump_page_requests(&env);
        }
        let next = fw.run_deferred(&env);
        // The receive side's tick: flushes receives posted to QPs in ERR (no receive
        // doorbell exists; `dp/recv.rs`, emu/README.md "Receive queues").
        let next = match (next, fw.recv_tick(&env, Instant::now())) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // Strict eq_overrun_fatal: a lost event (here or from the control socket since
        // the last step) is a firmware fatal error, health syndrome 0x0c.
        if fw.eqs.lost_total != fw.overruns_seen {
            fw.overruns_seen = fw.eqs.lost_total;
            if fw.strict.eq_overrun_fatal {
                drop(fw);
                self.regs()
                    .set_fatal(is::health_synd::ASYNC_EQ_OVERRUN_ERR, 0, false, 2);
            }
        }
        next
    }

    /// Raises a page request through the firmware (control socket).
    pub fn page_request(&self, num_pages: i32, release_all: bool) -> Result<(), String> {
        self.page_requests(&[num_pages], release_all)
    }

    /// Raises page requests back to back, without waiting for answers (control
    /// socket); stops at the first one refused.
    pub fn page_requests(&self, num_pages: &[i32], release_all: bool) -> Result<(), String> {
        let msix_ok = lock(&self.pci).msix_deliverable();
        let env = Env {
            mem: &*self.mem,
            irq: &*self.irq,
            msix_ok,
        };
        let mut fw = self.fw();
        for &n in num_pages {
            fw.page_request(&env, 0, n, release_all)?;
        }
        Ok(())
    }

    /// Function-level reset (vfio reset).
    pub fn reset(&self) {
        *lock(&self.inbox) = Inbox::default();
        self.regs().reset();
        self.fw().reset();
    }

    /// Runs the firmware loop until [`Device::shutdown`].
    pub fn run_firmware(&self) {
        let mut next: Option<Instant> = None;
        while !self.stop.load(Ordering::Acquire) {
            {
                let mut inbox = lock(&self.inbox);
                while inbox.posted.is_empty() {
                    if self.stop.load(Ordering::Acquire) {
                        return;
                    }
                    let wait = match next {
                        Some(t) => t.saturating_duration_since(Instant::now()),
                        None => Duration::from_millis(50),
                    };
                    if next.is_some() && wait.is_zero() {
                        break;
                    }
                    let (g, _) = self
                        .wake
                        .wait_timeout(inbox, wait.min(Duration::from_millis(50)))
                        .unwrap_or_else(|e| e.into_inner());
                    inbox = g;
                    if next.is_some_and(|t| t <= Instant::now()) {
                        break;
                    }
                }
            }
            next = self.step();
        }
    }

    /// Starts the firmware thread.
    pub fn spawn_firmware(self: &Arc<Self>) -> std::thread::JoinHandle<()> {
        let dev = Arc::clone(self);
        std::thread::Builder::new()
            .name("mlx5-emu-fw".into())
            .spawn(move || dev.run_firmware())
            .unwrap_or_else(|e| panic!("cannot start the firmware thread: {e}"))
    }

    /// Stops the firmware thread.
    pub fn shutdown(&self) {
        self.stop.store(true, Ordering::Release);
        self.wake.notify_all();
    }

    /// Number of MSI-X vectors offered (config-space table size).
    pub fn msix_vectors(&self) -> u16 {
        lock(&self.pci).msix_table_size()
    }
}
