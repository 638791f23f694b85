//! The firmware model: function state, command execution, pages, EQs.
//!
//! [`Firmware`] is driven by the device's firmware thread (or directly by tests):
//! [`Firmware::process_slot`] runs one rung command slot end to end.

pub mod caps;
pub mod cmdq;
pub mod eq;
mod eq_cmds;
mod exec;
mod hca;
pub mod inject;
pub mod latency;
mod page_cmds;
pub mod pages;
// IB port (i11-emu-port).
mod pma;
pub mod port;
mod port_regs;
mod sma;
mod vport;
// End IB port.
mod reg;
pub mod stats;
pub mod strict;
pub mod sync_reset;
pub mod syndrome;
pub mod timeline;
pub mod uar;
pub mod util;
// Verbs objects (issue 11, emulator objects slice).
pub mod cq;
pub mod dp;
pub mod mkey;
pub mod qp;
pub mod qp_state;
pub mod rsc;
pub mod rsc_events;
pub mod srq;

use crate::config::EmuConfig;
use crate::ifc::cmd_layout as cl;
use crate::ifc::eqe::{event_type, PAGE_REQ_RELEASE_ALL};
use crate::ifc::status::DeliveryStatus;
use crate::irq::IrqSink;
use crate::mem::GuestMemory;
use std::collections::BTreeSet;
use std::time::Instant;

/// What the firmware needs from the outside world while it runs.
pub struct Env<'a> {
    /// Guest memory.
    pub mem: &'a dyn GuestMemory,
    /// Interrupt sink.
    pub irq: &'a dyn IrqSink,
    /// MSI-X enabled and not function-masked.
    pub msix_ok: bool,
}

/// Per-function HCA state.
#[derive(Clone, Debug, Default)]
pub struct FuncState {
    /// ENABLE_HCA done.
    pub enabled: bool,
    /// INIT_HCA done (and no teardown since).
    pub initialized: bool,
    /// Current ISSI.
    pub issi: u16,
    /// TEARDOWN_HCA(prepare fast) succeeded.
    pub fast_prepared: bool,
    /// Fast teardown finished: the device does no more DMA.
    pub quiesced: bool,
    /// Driver version string from SET_DRIVER_VERSION.
    pub driver_version: String,
    /// HOST_ENDIANNESS register contents.
    pub host_endianness: [u8; 16],
    /// Teardowns by profile.
    pub teardowns: [u64; 3],
}

/// Firmware fault knobs (control socket; cleared by the control `reset`, kept across
/// function-level resets like a firmware setting).
#[derive(Clone, Debug, Default)]
pub struct FwKnobs {
    /// Fills the reserved tail of the GENERAL capability area in QUERY_HCA_CAP output
    /// (bytes past the 256-byte `cmd_hca_cap` in the 4 KiB `hca_cap_union` of
    /// `mlx5_ifc.h`) with this byte; 0 = zero (default). Reserved contents are not
    /// defined by the PRM; a driver must not echo them back (upstream's
    /// `handle_hca_cap` sends only `cmd_hca_cap`).
    pub cap_tail_fill: u8,
    /// TEARDOWN_HCA FORCE_CLOSE succeeds but answers `state` FORCE_STATE_FAIL (1) and
    /// leaves the HCA initialized (`mlx5_ifc.h` `teardown_hca_out` state; upstream's
    /// `mlx5_cmd_force_teardown_hca` then falls back to the normal teardown).
    pub force_state_fail: bool,
    /// TEARDOWN_HCA PREPARE_FAST_TEARDOWN answers `state` FAIL (1) and prepares
    /// nothing (upstream's `mlx5_cmd_fast_teardown_hca` then fails, and
    /// `mlx5_try_fast_unload` falls back to force close).
    pub prepare_fast_state_fail: bool,
}

/// What the firmware saw of the driver (observations for tests, never a rejection).
#[derive(Clone, Debug, Default)]
pub struct Observed {
    /// SET_HCA_CAP commands of the GENERAL type.
    pub set_general_caps: u64,
    /// Of those, commands with a non-zero byte in the capability area past
    /// `cmd_hca_cap` (the reserved tail of `hca_cap_union`).
    pub set_cap_nonzero_tail: u64,
    /// Non-zero bytes in that tail in the last SET_HCA_CAP.
    pub set_cap_tail_bytes_last: u64,
    /// `sw_owner_id` of every INIT_HCA, oldest first (last 16 kept).
    pub sw_owner_ids: std::collections::VecDeque<[u8; 16]>,
}

/// A completed command whose completion is delayed.
pub struct Deferred {
    /// When to complete.
    pub due: Instant,
    /// The fetched command.
    pub fetched: cmdq::Fetched,
    /// Its output.
    pub output: Vec<u8>,
    /// A completion field to write wrong (fault injection).
    pub corrupt: Option<inject::Corruption>,
    /// Post a completion EQE.
    pub eqe: bool,
}

/// The firmware.
pub struct Firmware {
    /// Configuration.
    pub cfg: EmuConfig,
    /// Function state.
    pub func: FuncState,
    /// Capabilities.
    pub caps: caps::Caps,
    /// Page ledger.
    pub ledger: pages::Ledger,
    /// EQs.
    pub eqs: eq::EqTable,
    /// Allocated UAR indices.
    pub uars: BTreeSet<u32>,
    /// Verbs objects (PD, CQ, QP, SRQ, mkey, ...).
    pub objs: rsc::Objects,
    /// UAR pages the last teardown dropped (a late EQ doorbell there is the stop
    /// racing an interrupt handler, see `Stats::eq_doorbells_after_stop`); forgotten
    /// at reset and when a page is allocated again.
    pub stopped_uars: BTreeSet<u32>,
    /// Fault injection.
    pub inject: inject::Injections,
    /// Statistics.
    pub stats: stats::Stats,
    /// Teardown timestamps (kept across resets).
    pub timeline: timeline::Timeline,
    /// Delayed completions.
    pub deferred: Vec<Deferred>,
    /// Slots currently executing or awaiting delayed completion (bitmask).
    pub busy_slots: u32,
    /// Command queue address `busy_slots` refers to: a driver that programs a new queue
    /// (reload after a command never completed) starts with every slot idle.
    pub busy_queue: u64,
    /// Port administratively up (PAOS).
    pub port_admin_up: bool,
    /// Physical link up (control socket).
    pub port_link_up: bool,
    /// Random extra completion latency bound (µs), 0 = complete at once. Makes
    /// independent commands complete out of order, as on real firmware.
    pub jitter_us: u64,
    /// Strict checks without a PRM source (off = permissive).
    pub strict: strict::Strict,
    /// Data path (work requests, memory keys, completions, the wire).
    pub dp: dp::DataPath,
    /// `eqs.lost_total` already turned into a fatal error (strict eq_overrun_fatal).
    pub overruns_seen: u64,
    /// Fault knobs.
    pub knobs: FwKnobs,
    /// Observations.
    pub observed: Observed,
    /// The InfiniBand port as the subnet manager configured it (kept across
    /// function-level resets, like the subnet; the control `reset` restores it).
    pub ib_port: port::IbPort,
    /// The internal timer CQEs are stamped with (the init segment's: `Device::new`).
    pub timer: crate::regs::InternalTimer,
    /// Sync reset (MFRL and its handshake, `sync_reset.rs`): the device's, not the
    /// function's, so a function-level reset keeps it.
    pub sync: sync_reset::SyncReset,
    rng: u64,
}

impl Firmware {
    /// Power-on state.
    pub fn new(cfg: &EmuConfig) -> Self {
        let mut fw = Firmware {
            cfg: cfg.clone(),
            func: FuncState::default(),
            caps: caps::Caps::new(cfg),
            ledger: pages::Ledger::new(cfg.boot_pages, cfg.init_pages, cfg.regular_pages),
            eqs: eq::EqTable::default(),
            uars: BTreeSet::new(),
            objs: rsc::Objects::default(),
            stopped_uars: BTreeSet::new(),
            inject: inject::Injections::default(),
            stats: stats::Stats::default(),
            timeline: timeline::Timeline::default(),
            deferred: Vec::new(),
            busy_slots: 0,
            busy_queue: 0,
            port_admin_up: true,
            port_link_up: true,
            jitter_us: cfg.jitter_us,
            strict: cfg.strict,
            dp: dp::DataPath::default(),
            overruns_seen: 0,
            knobs: FwKnobs::default(),
            observed: Observed::default(),
            ib_port: port::IbPort::new(0, 0, cfg.ib_virt),
            timer: crate::regs::InternalTimer::new(cfg.device_frequency_khz),
            sync: sync_reset::SyncReset::default(),
            rng: 0x9e37_79b9_7f4a_7c15,
        };
        fw.ib_port = fw.default_ib_port();
        fw
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64: cheap, deterministic per run.
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }

    /// Function-level reset: forget everything the driver set up (stats are kept).
    pub fn reset(&mut self) {
        self.func = FuncState::default();
        // Strict rules switched by the control socket last until the next reset.
        self.strict = self.cfg.strict;
        self.caps = caps::Caps::new(&self.cfg);
        self.caps.set_ib_virt(self.ib_port.ib_virt);
        self.ledger.clear();
        self.eqs = eq::EqTable::default();
        self.overruns_seen = 0;
        self.uars.clear();
        self.stopped_uars.clear();
        self.deferred.clear();
        self.busy_slots = 0;
        self.drop_objects("");
    }

    /// Firmware restart (a software reset, PRM / upstream `reset_fw_if_needed`: "The
    /// health buffer is shared between all functions, and will be cleared during a
    /// reset"): everything the driver set up is gone as at power-on, the pages it gave
    /// with it (upstream frees them itself, without MANAGE_PAGES, once it sees the
    /// error state). The UARs the driver had count as stopped (an EQ arm racing the
    /// reset is counted as after a teardown); strict rules and injections stay (they
    /// are the test's, not the function's).
    pub fn restart(&mut self) {
        let strict = self.strict;
        self.stop_uars();
        let stopped = std::mem::take(&mut self.stopped_uars);
        self.reset();
        self.strict = strict;
        self.stopped_uars = stopped;
        self.stats.fw_restarts += 1;
    }

    /// A driver instance set its command queue up (emu/README.md, "a queue address
    /// written"): every slot idle, the previous queue's delayed completions dropped.
    pub fn queue_set_up(&mut self) {
        self.busy_slots = 0;
        self.deferred.clear();
    }

    /// Runs command slot `slot` of the queue at `queue`.
    pub fn process_slot(&mut self, env: &Env<'_>, queue: u64, slot: usize) {
        self.stats.doorbells += 1;
        self.timeline.last_doorbell = Some(Instant::now());
        // Sources of the doorbell rules (emu/README.md, "Rules and their sources"):
        // after a fast teardown the device does no DMA (upstream
        // `mlx5_cmd_fast_teardown_hca` sends nothing afterwards); the queue address must
        // be written first (upstream `mlx5_cmd_enable`); a new address means a new
        // driver instance, all slots idle; a slot still executing belongs to hardware
        // (`ownership`, mlx5_ifc_cmd_queue_entry_bits) and is not re-read.
        if self.func.quiesced {
            self.stats
                .violation(format!("doorbell for slot {slot} after fast teardown"));
            return;
        }
        if queue == 0 {
            self.stats.violation(format!(
                "doorbell for slot {slot} before the queue address was set"
            ));
            return;
        }
        if queue != self.busy_queue {
            self.busy_slots = 0;
            self.busy_queue = queue;
        }
        if self.busy_slots & (1 << slot) != 0 {
            self.stats.violation(format!(
                "doorbell for slot {slot} while it is still executing"
            ));
            return;
        }
        // Command completions are reported by EQE (type 0x0a, slot bitmap in data dword
        // 0: mlx5_ifc / upstream `cmd_comp_notifier`) only once an EQ asks for them
        // before this command started (upstream polls the CREATE_EQ of the command EQ).
        let eqe = self.eqs.route(event_type::CMD).is_some();
        let sigs = self.caps.signatures();
        let f = match cmdq::fetch(env.mem, queue, slot, sigs) {
            Ok(f) => f,
            Err(cmdq::FetchError::NotOwned) => {
                self.stats
                    .violation(format!("doorbell for slot {slot} owned by software"));
                return;
            }
            Err(cmdq::FetchError::EntryDma(e)) => {
                self.stats.dma_error(format!("slot {slot} entry: {e}"));
                return;
            }
            Err(cmdq::FetchError::Delivery { status, dma, why }) => {
                if let Some(e) = dma {
                    self.stats.dma_error(format!("slot {slot}: {e}"));
                }
                self.stats
                    .violation(format!("slot {slot}: {} ({why})", status.name()));
                *self.stats.delivery_errors.entry(status as u8).or_default() += 1;
                let addr = queue + (slot as u64) * cl::ENTRY_SIZE as u64;
                if let Err(e) = cmdq::complete_status(env.mem, addr, status) {
                    self.stats.dma_error(format!("slot {slot} status: {e}"));
                }
                if eqe {
                    self.post_cmd_eqe(env, slot);
                }
                return;
            }
        };
        let opcode = u16::from_be_bytes([f.input[0], f.input[1]]);
        let mut corrupt = None;
        let mut delay = None;
        let output = match self.inject.take(opcode) {
            Some(inject::Action::Never) => {
                self.stats.never_completed += 1;
                self.busy_slots |= 1 << slot;
                return;
            }
            Some(inject::Action::Delivery(st)) => {
                *self.stats.delivery_errors.entry(st as u8).or_default() += 1;
                if let Err(e) = cmdq::complete_status(env.mem, f.entry_addr, st) {
                    self.stats.dma_error(format!("slot {slot} status: {e}"));
                }
                if eqe {
                    self.post_cmd_eqe(env, slot);
                }
                return;
            }
            Some(inject::Action::Status(st, synd)) => {
                let mut out = vec![0u8; f.outlen];
                out[0] = st;
                out[4..8].copy_from_slice(&synd.to_be_bytes());
                self.stats.command(opcode, st);
                out
            }
            other => {
                match other {
                    Some(inject::Action::Delay(ms)) => {
                        delay = Some(std::time::Duration::from_millis(ms))
                    }
                    Some(inject::Action::BadOutputSignature) => {
                        corrupt = Some(inject::Corruption {
                            field: inject::CorruptField::BlockSig,
                            block: None,
                            value: None,
                        })
                    }
                    Some(inject::Action::Corrupt(c)) => corrupt = Some(c),
                    _ => {}
                }
                self.execute(env, &f.input, f.outlen)
            }
        };
        // Completion order: our choice, configurable (`jitter`, `--jitter-us`): in order
        // by default, random latency below the bound when set.
        if delay.is_none() && self.jitter_us > 0 {
            delay = Some(std::time::Duration::from_micros(
                self.next_random() % self.jitter_us,
            ));
        }
        if let Some(d) = delay {
            self.busy_slots |= 1 << slot;
            self.deferred.push(Deferred {
                due: Instant::now() + d,
                fetched: f,
                output,
                corrupt,
                eqe,
            });
            return;
        }
        self.finish(env, &f, &output, corrupt, eqe);
    }

    fn finish(
        &mut self,
        env: &Env<'_>,
        f: &cmdq::Fetched,
        output: &[u8],
        corrupt: Option<inject::Corruption>,
        eqe: bool,
    ) {
        let sigs = self.caps.signatures();
        match cmdq::complete(
            env.mem,
            f,
            output,
            DeliveryStatus::OK,
            sigs,
            corrupt.as_ref(),
        ) {
            Ok(applied) => {
                if let Some(c) = corrupt {
                    let name = if applied {
                        c.field.name()
                    } else {
                        "not_applicable"
                    };
                    *self.stats.corruptions.entry(name).or_default() += 1;
                    let op = u16::from_be_bytes([f.input[0], f.input[1]]);
                    log::info!(
                        "{}({op:#x}) slot {}: completion field {} corrupted{}",
                        crate::ifc::opcodes::opcode_name(op),
                        f.slot,
                        c.field.name(),
                        if applied {
                            ""
                        } else {
                            " (not applicable: no output mailbox)"
                        }
                    );
                }
            }
            Err(e) => self
                .stats
                .dma_error(format!("slot {} completion: {e}", f.slot)),
        }
        self.busy_slots &= !(1 << f.slot);
        if eqe {
            self.post_cmd_eqe(env, f.slot);
        }
    }

    fn post_cmd_eqe(&mut self, env: &Env<'_>, slot: usize) {
        let mut data = [0u8; 28];
        data[0..4].copy_from_slice(&(1u32 << slot).to_be_bytes());
        if let eq::Posted::Dma(e) =
            self.eqs
                .post(event_type::CMD, 0, &data, env.mem, env.irq, env.msix_ok)
        {
            self.stats.dma_error(format!("command EQE: {e}"));
        }
    }

    /// Completes delayed commands that are due; returns the next deadline.
    pub fn run_deferred(&mut self, env: &Env<'_>) -> Option<Instant> {
        let now = Instant::now();
        let mut due = Vec::new();
        let mut i = 0;
        while i < self.deferred.len() {
            if self.deferred[i].due <= now {
                due.push(self.deferred.swap_remove(i));
            } else {
                i += 1;
            }
        }
        due.sort_by_key(|d| d.due);
        for d in due {
            self.finish(env, &d.fetched, &d.output, d.corrupt, d.eqe);
        }
        self.deferred.iter().map(|d| d.due).min()
    }

    /// Raises a page-request event (positive: give me pages; negative: take them
    /// back; `release_all`: firmware dropped every page of the function). Any number
    /// may be outstanding (upstream answers each on an ordered workqueue; the PRM sets
    /// no limit). While the pages EQ is full the request waits, in order, for room.
    pub fn page_request(
        &mut self,
        env: &Env<'_>,
        func: u16,
        num_pages: i32,
        release_all: bool,
    ) -> Result<(), String> {
        if self.func.quiesced || !self.func.enabled {
            return Err("function is not enabled".into());
        }
        if release_all
            && self
                .caps
                .cur(crate::ifc::caps::cmd_hca_cap::RELEASE_ALL_PAGES.raw())
                == 0
        {
            return Err(
                "release-all requests need cap release_all_pages enabled by the driver".into(),
            );
        }
        if !release_all && num_pages == 0 {
            return Err("num_pages must not be 0".into());
        }
        if self.eqs.route(event_type::PAGE_REQUEST).is_none() {
            return Err("no EQ subscribes to page requests".into());
        }
        self.ledger.requests.queued.push_back(pages::Queued {
            func,
            num_pages,
            release_all,
            reask: false,
        });
        self.pump_page_requests(env);
        Ok(())
    }

    /// Writes queued page requests into the pages EQ while it has room.
    pub fn pump_page_requests(&mut self, env: &Env<'_>) {
        while let Some(q) = self.ledger.requests.queued.front().copied() {
            let Some(eqn) = self.eqs.route(event_type::PAGE_REQUEST) else {
                return;
            };
            if self.eqs.eqs.get(&eqn).is_none_or(|e| e.full()) {
                return;
            }
            let mut data = [0u8; 28];
            let flags = if q.release_all {
                PAGE_REQ_RELEASE_ALL
            } else {
                0
            };
            data[0..2].copy_from_slice(&flags.to_be_bytes());
            data[2..4].copy_from_slice(&q.func.to_be_bytes());
            data[4..8].copy_from_slice(&q.num_pages.to_be_bytes());
            match self.eqs.post_to(
                eqn,
                event_type::PAGE_REQUEST,
                0,
                &data,
                env.mem,
                env.irq,
                env.msix_ok,
            ) {
                eq::Posted::Written(_) => {
                    self.ledger.requests.queued.pop_front();
                    if q.release_all {
                        self.ledger.requests.release_all_sent += 1;
                        self.ledger.release_all(q.func);
                        continue;
                    }
                    self.ledger.requests.sent(q.func, q.num_pages);
                    if q.reask {
                        continue;
                    }
                    if q.num_pages > 0 {
                        self.ledger.runtime_demand = self
                            .ledger
                            .runtime_demand
                            .saturating_add(q.num_pages as u32);
                    } else {
                        // Firmware no longer needs these pages: they become returnable.
                        let n = q.num_pages.unsigned_abs();
                        let from_runtime = n.min(self.ledger.runtime_demand);
                        self.ledger.runtime_demand -= from_runtime;
                        self.ledger.released_credit =
                            self.ledger.released_credit.saturating_add(n - from_runtime);
                    }
                }
                eq::Posted::Dma(e) => {
                    self.ledger.requests.queued.pop_front();
                    self.ledger.requests.never_sent += 1;
                    self.stats.dma_error(format!("page request EQE: {e}"));
                }
                // Full (checked above) or gone: keep it queued.
                _ => return,
            }
        }
    }

    /// Pages firmware must keep while the HCA is in its current state: what it needs
    /// (boot, init and runtime demand, less what negative requests released), less
    /// the pages of give requests not supplied yet (needed, but not held). Our model;
    /// the PRM leaves which pages firmware returns to the firmware.
    pub fn pinned_pages(&self) -> usize {
        if self.func.initialized {
            ((self.ledger.boot_demand as usize)
                + (self.ledger.init_demand as usize)
                + (self.ledger.runtime_demand as usize))
                .saturating_sub(self.ledger.released_credit as usize)
                .saturating_sub(self.ledger.requests.pending_give_pages(0) as usize)
        } else {
            0
        }
    }

    /// Whether UAR `idx` belongs to an allocated UAR page (with cap `uar_4k`, an
    /// ALLOC_UAR grants every UAR of a system page).
    pub fn uar_owned(&self, idx: u32) -> bool {
        let l = self.caps.uar_layout();
        self.uars
            .range(..=idx)
            .next_back()
            .is_some_and(|&b| l.in_alloc(b, idx))
    }

    /// Whether UAR page `idx` belonged to the function a teardown or a firmware
    /// restart stopped (see `eq_doorbell_unallocated`).
    pub fn uar_stopped(&self, idx: u32) -> bool {
        let l = self.caps.uar_layout();
        self.stopped_uars
            .range(..=idx)
            .next_back()
            .is_some_and(|&b| l.in_alloc(b, idx))
    }

    /// Records a teardown's UAR pages as stopped (see `eq_doorbell_unallocated`), on
    /// top of those an earlier stop recorded (a fast teardown, then the restart of a
    /// sync reset's activation).
    pub fn stop_uars(&mut self) {
        let uars = std::mem::take(&mut self.uars);
        self.stopped_uars.extend(uars);
    }

    /// An EQ doorbell on UAR page `page`, which is not allocated: after a stop it is
    /// counted (upstream's own interrupt handler can arm its EQ after the waiter of the
    /// teardown command has gone on to write nic_interface DISABLED: the completion
    /// event is delivered before the handler re-arms; a stopped function's UAR write
    /// has no effect, so the permissive default is to ignore it), a violation only
    /// with the strict rule `eq_doorbell_after_stop`; on any other page a violation.
    pub fn eq_doorbell_unallocated(&mut self, page: u32) {
        if self.uar_stopped(page) {
            self.stats.eq_doorbells_after_stop += 1;
            if !self.strict.eq_doorbell_after_stop {
                return;
            }
            self.stats.violation(format!(
                "EQ doorbell on UAR page {page} after the function stopped"
            ));
            return;
        }
        self.stats
            .violation(format!("EQ doorbell on unallocated UAR page {page}"));
    }

    /// Handles the driver's write of nic_interface; returns the readback value.
    ///
    /// Source: upstream fast teardown (`mlx5_cmd_fast_teardown_hca`): TEARDOWN_HCA
    /// prepare-fast, then nic_interface DISABLED, read back until it shows. Without a
    /// prepared fast teardown the write is ignored and counted (our choice: the PRM
    /// does not describe it; knobs for this path belong to the teardown work).
    pub fn nic_interface_write(&mut self, val: u32) -> Option<u32> {
        use crate::ifc::init_seg::NicInterface;
        if NicInterface::from_raw(val) == Some(NicInterface::Disabled) && self.func.fast_prepared {
            self.func.fast_prepared = false;
            self.func.initialized = false;
            self.func.quiesced = true;
            self.timeline.nic_disabled = Some(Instant::now());
            self.eqs.eqs.clear();
            self.eqs.waiting.clear();
            self.ledger.requests.drop_all();
            self.stop_uars();
            self.deferred.clear();
            // A fast teardown leaves the verbs objects to the firmware (upstream
            // destroys none first): dropped without a violation.
            self.drop_objects("");
            return Some(val);
        }
        self.stats.violation(format!(
            "nic_interface {val} written without a prepared fast teardown"
        ));
        None
    }
}
