//! The device: PCI config space, BAR0 (init segment, MSI-X PBA, UAR pages) and the
//! firmware thread.
//!
//! MMIO callbacks never execute commands: a doorbell or UAR write is recorded in
//! the inbox and the firmware thread is woken. Frames from a wired peer device
//! (`fw/dp/wire.rs`) and its comings and goings join the same inbox. [`Device::step`]
//! is one firmware iteration; tests call it directly for deterministic runs.

use crate::config::EmuConfig;
use crate::fw::dp::wire::{WireEndpoint, WireLink, WireSink, RX_INBOX_FRAMES};
use crate::fw::{Env, Firmware};
use crate::ifc::eq::{UAR_EQ_DB_ARM, UAR_EQ_DB_UPDATE};
use crate::ifc::init_seg::{self as is, NicInterface};
use crate::irq::IrqSink;
use crate::mem::GuestMemory;
use crate::pci_config::PciConfig;
use crate::regs::{RegWrite, Regs};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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

/// A posted BAR0 write the firmware must act on, or what the wire brought.
#[derive(Clone, Debug)]
enum Posted {
    /// Command doorbell vector.
    Doorbell(u32),
    /// UAR doorbell (EQ update or arm).
    Uar(UarWrite),
    /// Driver write of `nic_interface`.
    Nic(u32),
    /// The driver set its command queue up (its address written).
    QueueSetUp,
    /// A frame from the wired peer device.
    Frame(Vec<u8>),
    /// The wired peer came (true) or went (false).
    WireLink(bool),
}

/// Posted writes in arrival order: PCIe orders posted writes, so the firmware handles
/// them in the order the driver issued them (an EQ arm posted before a DESTROY_EQ
/// doorbell reaches the EQ before it is destroyed).
#[derive(Default)]
struct Inbox {
    posted: VecDeque<Posted>,
    /// How many of `posted` are frames (bounded by [`RX_INBOX_FRAMES`]).
    frames: usize,
}

/// What UAR writes cost the emulator (`stats` → `dp` → `doorbells`; emu/README.md
/// "Doorbells"): counted on the vfio-user server thread and the firmware thread.
#[derive(Default)]
pub struct DoorbellCost {
    /// BAR0 write messages that reached a UAR page.
    pub uar_messages: AtomicU64,
    /// Dwords they carried (each one UAR write for the firmware).
    pub uar_writes: AtomicU64,
    /// Nanoseconds the server thread spent in [`Device::bar0_write`] on them.
    pub mmio_ns: AtomicU64,
    /// Nanoseconds the firmware thread spent handling UAR writes.
    pub fw_ns: AtomicU64,
    /// Times a UAR write woke the firmware thread (inbox was empty).
    pub wakeups: AtomicU64,
}

impl DoorbellCost {
    /// The `stats` object.
    pub fn report(&self) -> serde_json::Value {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let (msgs, writes) = (g(&self.uar_messages), g(&self.uar_writes));
        serde_json::json!({
            "uar_messages": msgs,
            "uar_writes": writes,
            "mmio_ns": g(&self.mmio_ns),
            "fw_ns": g(&self.fw_ns),
            "wakeups": g(&self.wakeups),
            "mmio_ns_per_message": g(&self.mmio_ns).checked_div(msgs).unwrap_or(0),
            "fw_ns_per_write": g(&self.fw_ns).checked_div(writes).unwrap_or(0),
        })
    }
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
    /// Signalled when the firmware takes the inbox (room for frames again).
    room: Condvar,
    /// UAR write costs.
    pub doorbells: DoorbellCost,
    /// Firmware state.
    pub fw: Mutex<Firmware>,
    /// Guest memory.
    pub mem: Arc<dyn GuestMemory>,
    /// Interrupts.
    pub irq: Arc<dyn IrqSink>,
    stop: AtomicBool,
    /// DMA_MAP sections that came without an fd (unreachable guest memory).
    pub dma_maps_without_fd: std::sync::atomic::AtomicU64,
    /// PCI resets that reached the device ([`Device::reset`]: vfio-user DEVICE_RESET,
    /// which QEMU sends for a function-level or bus reset; control `reset` too).
    pub pci_resets: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Device {
    /// Creates a device over `mem` and `irq`.
    pub fn new(cfg: EmuConfig, mem: Arc<dyn GuestMemory>, irq: Arc<dyn IrqSink>) -> Arc<Self> {
        let regs = Regs::new(&cfg);
        let mut fw = Firmware::new(&cfg);
        // One timer: CQE timestamps count with the init segment's internal timer.
        fw.timer = regs.internal_timer();
        Arc::new(Device {
            pci: Mutex::new(PciConfig::with_msix(cfg.msix_vectors)),
            regs: Mutex::new(regs),
            inbox: Mutex::new(Inbox::default()),
            wake: Condvar::new(),
            room: Condvar::new(),
            doorbells: DoorbellCost::default(),
            fw: Mutex::new(fw),
            cfg,
            mem,
            irq,
            stop: AtomicBool::new(false),
            dma_maps_without_fd: std::sync::atomic::AtomicU64::new(0),
            pci_resets: AtomicU64::new(0),
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
                    RegWrite::QueueSetUp => {
                        lock(&self.inbox).posted.push_back(Posted::QueueSetUp);
                        self.wake.notify_all();
                    }
                }
            }
            return;
        }
        if off as u64 >= crate::fw::uar::RESERVED_BYTES && data.len() >= 4 {
            // One inbox lock and one clock read per message (a 64-bit write is one
            // message of two dwords), and a wake-up only when the inbox was empty: the
            // firmware thread sleeps only on an empty inbox and takes all of it.
            let at = Instant::now();
            let mut inbox = lock(&self.inbox);
            let was_empty = inbox.posted.is_empty();
            let mut n = 0;
            for (k, chunk) in data.chunks_exact(4).enumerate() {
                let val = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                inbox.posted.push_back(Posted::Uar(UarWrite {
                    bar_off: (off + 4 * k) as u64,
                    val,
                    at,
                }));
                n += 1;
            }
            drop(inbox);
            if was_empty {
                self.wake.notify_one();
                self.doorbells.wakeups.fetch_add(1, Ordering::Relaxed);
            }
            let d = &self.doorbells;
            d.uar_messages.fetch_add(1, Ordering::Relaxed);
            d.uar_writes.fetch_add(n, Ordering::Relaxed);
            d.mmio_ns
                .fetch_add(at.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
    }

    /// Queues a frame from the wired peer for the firmware, waiting while the inbox
    /// holds [`RX_INBOX_FRAMES`] frames; false once the device stops.
    pub fn post_frame(&self, frame: Vec<u8>) -> bool {
        let mut inbox = lock(&self.inbox);
        while inbox.frames >= RX_INBOX_FRAMES {
            if self.stop.load(Ordering::Acquire) {
                return false;
            }
            inbox = self
                .room
                .wait_timeout(inbox, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        inbox.frames += 1;
        inbox.posted.push_back(Posted::Frame(frame));
        drop(inbox);
        self.wake.notify_all();
        !self.stop.load(Ordering::Acquire)
    }

    /// Tells the firmware the wired peer came or went.
    pub fn post_wire_link(&self, up: bool) {
        lock(&self.inbox).posted.push_back(Posted::WireLink(up));
        self.wake.notify_all();
    }

    /// Gives the device a wire (start-up `--wire-listen` / `--wire-connect`): the port's
    /// link is down until the peer connects.
    pub fn start_wire(self: &Arc<Self>, endpoint: &WireEndpoint) -> std::io::Result<()> {
        let link = self.install_wire();
        link.start(endpoint, Arc::clone(self) as Arc<dyn WireSink>)
            .map(|_| ())
    }

    /// Gives the device a wire over an already connected stream (tests: a socket pair;
    /// no reconnection).
    pub fn attach_wire(
        self: &Arc<Self>,
        stream: std::os::unix::net::UnixStream,
    ) -> std::io::Result<()> {
        let link = self.install_wire();
        link.attach(stream, Arc::clone(self) as Arc<dyn WireSink>)
            .map(|_| ())
    }

    fn install_wire(&self) -> Arc<WireLink> {
        let link = WireLink::new();
        let mut fw = self.fw();
        fw.dp.wire.link = Some(Arc::clone(&link));
        fw.dp.wire.link_up = false;
        // No cable yet: the link comes up with the peer (before any EQ exists at
        // start-up, so no event).
        fw.port_link_up = false;
        link
    }

    /// Ends the wire's current connection (the peer sees the link go; a listener
    /// accepts again, a connector retries).
    pub fn drop_wire_connection(&self) {
        let link = self.fw().dp.wire.link.clone();
        if let Some(l) = link {
            l.drop_connection();
        }
    }

    /// What the firmware model reaches outside itself: guest memory, the interrupt
    /// sink, and whether MSI-X delivers now (read at the call).
    fn env(&self) -> Env<'_> {
        Env {
            mem: &*self.mem,
            irq: &*self.irq,
            msix_ok: lock(&self.pci).msix_deliverable(),
        }
    }

    /// One firmware iteration: handles everything in the inbox and due delayed
    /// completions. Returns the next deadline of a delayed completion.
    pub fn step(&self) -> Option<Instant> {
        let env = self.env();
        let inbox = std::mem::take(&mut *lock(&self.inbox));
        if inbox.frames > 0 {
            self.room.notify_all();
        }
        let queue = self.regs().cmdq_addr();
        let mut fw = self.fw();
        for p in inbox.posted {
            match p {
                Posted::Nic(v) if v == NicInterface::SwReset as u32 => {
                    self.sw_reset_request(&mut fw);
                }
                Posted::Nic(v) => {
                    if let Some(readback) = fw.nic_interface_write(v) {
                        self.regs().nic_interface = readback;
                    }
                }
                Posted::QueueSetUp => fw.queue_set_up(),
                Posted::Doorbell(bits) => {
                    for slot in 0..crate::ifc::cmd_layout::MAX_SLOTS {
                        if bits & (1 << slot) != 0 {
                            fw.process_slot(&env, queue, slot);
                        }
                    }
                }
                Posted::Frame(f) => fw.wire_deliver(&env, f),
                Posted::WireLink(up) => fw.wire_link(&env, up),
                Posted::Uar(w) => {
                    let t0 = Instant::now();
                    self.uar_write(&mut fw, &env, w);
                    self.doorbells
                        .fw_ns
                        .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
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
        // The transport timers: RNR waits and local ACK timeouts (`dp/transport/retry.rs`).
        let next = match (next, fw.dp_tick(&env, Instant::now())) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // Sync reset: the negotiation's timer, then the events commands raised
        // (after their completions: upstream's answer is a command it waits for).
        let next = match (next, fw.sync_reset_tick(Instant::now())) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        fw.sync_reset_flush(&env);
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

    /// One UAR write, in order with the other posted writes (firmware thread).
    fn uar_write(&self, fw: &mut Firmware, env: &Env<'_>, w: UarWrite) {
        // Past the reserved bytes and inside the BAR (checked at the write).
        let Some((page, off)) = fw.caps.uar_layout().decode(w.bar_off) else {
            return;
        };
        let arm = match off {
            UAR_EQ_DB_ARM => true,
            UAR_EQ_DB_UPDATE => false,
            // CQ arm and send doorbells (verbs objects send path).
            _ => {
                fw.uar_write(env, page, off, w.val);
                return;
            }
        };
        fw.timeline.last_doorbell = Some(w.at);
        // EQ doorbells: eqn in bits 31:24, consumer index in 23:0, written to
        // the UAR page the EQ was created with (upstream `eq_update_ci`);
        // anything else is a violation and ignored.
        if !fw.uar_owned(page) {
            fw.eq_doorbell_unallocated(page);
            return;
        }
        if !fw
            .eqs
            .doorbell_at(page, w.val, arm, w.at, env.mem, env.irq, env.msix_ok)
        {
            fw.stats
                .violation(format!("bad EQ doorbell {:#x} on UAR {}", w.val, page));
        }
    }

    /// Raises a page request through the firmware (control socket).
    pub fn page_request(&self, num_pages: i32, release_all: bool) -> Result<(), String> {
        self.page_requests(&[num_pages], release_all)
    }

    /// Raises page requests back to back, without waiting for answers (control
    /// socket); stops at the first one refused.
    pub fn page_requests(&self, num_pages: &[i32], release_all: bool) -> Result<(), String> {
        let env = self.env();
        let mut fw = self.fw();
        for &n in num_pages {
            fw.page_request(&env, 0, n, release_all)?;
        }
        Ok(())
    }

    /// The driver wrote nic_interface SW_RESET (upstream `reset_fw_if_needed`, after
    /// `lock_sem_sw_reset`): the firmware restarts when the init segment advertises fw
    /// reset support; otherwise the write is a violation and ignored.
    fn sw_reset_request(&self, fw: &mut Firmware) {
        fw.stats.sw_reset_requests += 1;
        if lock(&self.pci).vsc.sw_reset_holder() == 0 {
            fw.stats.sw_reset_without_semaphore += 1;
        }
        if !self.regs().fw_reset_supported() {
            fw.stats.sw_reset_unsupported += 1;
            fw.stats.violation(
                "nic_interface SW_RESET written while the init segment does not advertise fw reset support".into(),
            );
            return;
        }
        self.restart_firmware(fw);
    }

    /// The firmware restarts ([`Firmware::restart`], [`Regs::restart`]): after a
    /// software reset the driver asked for, or one another function started (control
    /// `fw_reset`). The VSC gateway's semaphores are the PCI side's and stay.
    pub fn restart_firmware(&self, fw: &mut Firmware) {
        fw.restart();
        self.regs().restart();
    }

    /// Function-level reset (vfio reset). Posted writes are dropped, and frames from
    /// the peer with them; the peer's comings and goings are kept (the cable is not
    /// part of the function). While a sync reset waits for it (after RESET_NOW), this
    /// is the PCI reset that activates the firmware: the device comes back at its
    /// power-on state as after any reset here (QEMU sends DEVICE_RESET for a bus reset
    /// of the root port above the device; a link toggle does not reach it:
    /// emu/README.md "Sync reset"). True when it activated a sync reset.
    pub fn reset(&self) -> bool {
        self.pci_resets.fetch_add(1, Ordering::Relaxed);
        {
            let mut inbox = lock(&self.inbox);
            inbox.posted.retain(|p| matches!(p, Posted::WireLink(_)));
            inbox.frames = 0;
        }
        self.room.notify_all();
        self.regs().reset();
        let mut fw = self.fw();
        let activated = fw.sync_reset_pci_reset();
        if activated {
            // The new firmware boots: a restart (the UARs the driver had count as
            // stopped: upstream mlx5_ib's CQ handlers re-arm on them after the error
            // state, as after a software reset).
            fw.restart();
        } else {
            fw.reset();
        }
        activated
    }

    /// Raises a sync reset as another function or host's tool would (control
    /// `sync_reset`): RESET_REQUEST to the function at once.
    pub fn sync_reset_request(&self) -> Result<(), crate::fw::sync_reset::Refused> {
        let env = self.env();
        let mut fw = self.fw();
        fw.sync_reset_start(crate::fw::sync_reset::Initiator::Other)?;
        fw.sync_reset_flush(&env);
        Ok(())
    }

    /// Aborts the sync reset in progress (control `sync_reset` `abort`): RESET_ABORT to
    /// the function if it acked. False when none was in progress.
    pub fn sync_reset_abort(&self) -> bool {
        let env = self.env();
        let mut fw = self.fw();
        let r = fw.sync_reset_abort();
        fw.sync_reset_flush(&env);
        r
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

    /// Stops the firmware thread and the wire.
    pub fn shutdown(&self) {
        self.stop.store(true, Ordering::Release);
        self.wake.notify_all();
        self.room.notify_all();
        let link = self.fw().dp.wire.link.clone();
        if let Some(l) = link {
            l.stop();
        }
    }

    /// Number of MSI-X vectors offered (config-space table size).
    pub fn msix_vectors(&self) -> u16 {
        lock(&self.pci).msix_table_size()
    }
}

impl WireSink for Device {
    fn frame(&self, frame: Vec<u8>) -> bool {
        self.post_frame(frame)
    }

    fn link(&self, up: bool) {
        self.post_wire_link(up);
    }
}
