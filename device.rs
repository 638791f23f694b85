// SPDX-License-Identifier: GPL-2.0

//! The PCI driver and the per-function device object.
//!
//! Bring-up is a sequence of stages, each an object that undoes itself on drop:
//!
//! | stage | acquired by | undone by |
//! |---|---|---|
//! | [`ffi::PciEnabled`] | enable memory + bus mastering | clear master, disable |
//! | [`Hw`] | map BAR0, wait for firmware, command queue | unmap, free the queue |
//! | [`EnabledHca`] | ENABLE_HCA | DISABLE_HCA |
//! | [`FwPages`] | boot and init pages (QUERY/MANAGE_PAGES) | reclaim, free what came back |
//! | [`InitializedHca`] | caps, INIT_HCA | TEARDOWN_HCA graceful → force |
//!
//! [`Mlx5Device::bring_up`] creates them as locals in that order: if a step fails, the
//! locals created so far are dropped in reverse order, which unwinds exactly what
//! succeeded. The device object declares them as fields from the *last* acquired to
//! the *first*, so unbind (field drop order) tears down in the same reverse order:
//! TEARDOWN_HCA → reclaim pages → DISABLE_HCA → bus mastering off, PCI disabled →
//! command queue and parked mailboxes freed, BAR unmapped.

use kernel::{
    device::{self, Core},
    dma::{self, Device as _},
    pci,
    prelude::*,
    sync::Arc,
    time::Delta,
};

use crate::eq::{EqCaps, Events};
use crate::{
    cmd::{
        commands::{self, gen_cap},
        timeout::Timeouts,
    },
    debugfs::DebugFs,
    ffi,
    hca::{EnabledHca, InitializedHca},
    hw::Hw,
    ifc::{init_seg as seg, opcodes::query_pages_op_mod},
    init_seg::{InitSeg, Regs},
    pagealloc::fw_pages::{FwPages, Supply},
    pci_ids::FunctionInfo,
    health::HealthStage,
    teardown::{self, plan::{Path, TeardownCaps}, FreeAfterStop, Lifecycle, ParkedPages, ReclaimStage},
};

/// How long to wait for the firmware to clear `initializing` before the command
/// interface is up (upstream's FW pre-init budget).
const FW_PRE_INIT_TIMEOUT: Delta = Delta::from_secs(120);
/// Default FW_INIT budget once the command queue is set (the device may override).
const FW_INIT_TIMEOUT_DEFAULT_MS: u64 = 2000;
/// log_max_qp we request (upstream profile 2), clamped to the device maximum.
const LOG_MAX_QP: u64 = 18;
/// Software owner id given to INIT_HCA; fixed per module build.
const SW_OWNER_ID: [u8; 16] = *b"mlx5-rs-driver\0\0";

/// The driver type registered with the PCI core.
pub(crate) struct Mlx5Driver;

/// One bound ConnectX function.
///
/// INVARIANT: field order is teardown order (see module doc).
pub(crate) struct Mlx5Device<'bound> {
    pdev: &'bound pci::Device,
    info: &'bound FunctionInfo,
    // Stopped first: no health check runs while the function is torn down.
    _health: HealthStage,
    _registered: teardown::Registered,
    // Shared with the health poll, the stages and the shutdown registry; the IB
    // provider will add its fatal-error consumer here.
    _life: Arc<Lifecycle>,
    _debugfs: DebugFs,
    // EQs destroyed and IRQs freed before TEARDOWN_HCA.
    _events: Events<'bound>,
    _hca: InitializedHca,
    // Parks the pages of a dead or fast-torn-down device until `_free_after_stop`.
    _reclaim: ReclaimStage,
    pages: Arc<FwPages>,
    _enabled_hca: EnabledHca,
    // Bus mastering goes off before the command queue and any parked mailboxes are
    // freed: after this point the device cannot DMA into them, even if a command
    // never completed.
    _pci: ffi::PciEnabled<'bound>,
    // Frees parked pages: bus mastering is off by now.
    _free_after_stop: FreeAfterStop,
    hw: Arc<Hw>,
}

impl pci::Driver for Mlx5Driver {
    type IdInfo = FunctionInfo;
    type Data<'bound> = Mlx5Device<'bound>;

    const ID_TABLE: pci::IdTable<Self::IdInfo> = crate::pci_ids::ID_TABLE;

    fn probe<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        info: Option<&'bound Self::IdInfo>,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        Mlx5Device::bring_up(pdev, info)
    }

    fn unbind<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&Self::Data<'bound>>) {
        dev_info!(pdev, "{}: unbinding; {} firmware pages held\n", this.info.name, this.pages.counts().held);
    }
}

impl<'bound> Mlx5Device<'bound> {
    fn bring_up(pdev: &'bound pci::Device<Core<'_>>, info: Option<&'bound FunctionInfo>) -> Result<Self> {
        // Every entry of the ID table carries info; a missing one is reported, not unwrapped.
        let info = info.ok_or(ENODEV)?;
        let dev: &device::Device<device::Bound> = pdev.as_ref();
        // Dropped after `pci_on` on every path: parked pages are freed only once bus
        // mastering is off.
        let parked = ParkedPages::new()?;
        let free_after_stop = FreeAfterStop::new(dev, parked.clone());
        let pci_on = ffi::PciEnabled::new(pdev)?;
        // SAFETY: no DMA mapping exists yet for this device, so changing the mask is sound.
        unsafe { pdev.dma_set_mask_and_coherent(dma::DmaMask::new::<64>())? };

        let bar = pdev.iomap_region_sized::<{ seg::MAPPED_SIZE }>(0, c"mlx5_rs/bar0")?;
        let is = InitSeg::new(&bar);
        let fw = is.fw_version()?;
        let cmdif = is.cmdif_revision()?;
        dev_info!(
            pdev,
            "{}{}: firmware {}, command interface revision {}\n",
            info.name,
            if info.is_vf { " (VF)" } else { "" },
            fw,
            cmdif
        );
        if cmdif != seg::CMD_IF_REV {
            dev_err!(
                pdev,
                "unsupported command interface revision {} (driver supports {}); not binding\n",
                cmdif,
                seg::CMD_IF_REV
            );
            return Err(EOPNOTSUPP);
        }
        crate::init_seg::wait_fw_ready(&is, pdev, FW_PRE_INIT_TIMEOUT)?;
        let mut timeouts = Timeouts::new();
        timeouts.apply_init_seg(is.read(seg::CMD_Q_INIT_TO)?, is.read(seg::CMD_EXEC_TO)?);
        let fw_init_ms = if timeouts.device_supported() {
            timeouts.get(crate::cmd::timeout::Tout::FwInit)
        } else {
            FW_INIT_TIMEOUT_DEFAULT_MS
        };

        let hw = Hw::new(pdev, bar, timeouts)?;
        let is = hw.as_ref();
        crate::init_seg::wait_fw_ready(is, pdev, Delta::from_millis(i64::try_from(fw_init_ms).unwrap_or(i64::MAX)))?;
        let embedded_cpu = is.read(seg::INITIALIZING)? & seg::EMBEDDED_CPU_BIT != 0;

        let life = Lifecycle::new(dev, hw.clone(), parked)?;
        let enabled_hca = EnabledHca::new(&life, embedded_cpu)?;
        Self::set_issi(pdev, &hw)?;

        let pages = FwPages::new(dev, hw.clone(), embedded_cpu)?;
        let reclaim = ReclaimStage::new(life.clone(), pages.clone());
        Self::supply(pdev, &hw, &pages, query_pages_op_mod::BOOT, "boot")?;

        let max = commands::query_general_caps(&hw, false)?;
        let mut cur = commands::query_general_caps(&hw, true)?;
        // Our choices (see Documentation/architecture.md): 128-entry pkey table,
        // log_max_qp 18 capped by the device, no command checksums, 4 KiB UAR pages,
        // release-all-pages when the device offers it.
        cur.set(gen_cap::PKEY_TABLE_SIZE, 0)?;
        cur.set(gen_cap::LOG_MAX_QP, LOG_MAX_QP.min(max.get(gen_cap::LOG_MAX_QP)))?;
        cur.set(gen_cap::CMDIF_CHECKSUM, 0)?;
        cur.set(gen_cap::LOG_UAR_PAGE_SZ, 0)?;
        if max.get(gen_cap::RELEASE_ALL_PAGES) != 0 {
            cur.set(gen_cap::RELEASE_ALL_PAGES, 1)?;
        }
        commands::set_general_caps(&hw, &cur)?;
        let caps = commands::query_general_caps(&hw, true)?;

        Self::supply(pdev, &hw, &pages, query_pages_op_mod::INIT, "init")?;
        let owner = if caps.get(gen_cap::SW_OWNER_ID) != 0 { Some(&SW_OWNER_ID) } else { None };
        let hca = InitializedHca::new(&life, owner)?;
        life.set_caps(TeardownCaps {
            fast: caps.get(gen_cap::FAST_TEARDOWN) != 0,
            force: caps.get(gen_cap::FORCE_TEARDOWN) != 0,
        });

        if caps.get(gen_cap::DRIVER_VERSION) != 0 {
            // Informational only: a failure is logged by the command layer and ignored.
            let _ = commands::set_driver_version(&hw, "0.1.0");
        }
        let board = commands::query_board_id(&hw)?;
        let board_len = board.iter().position(|b| *b == 0).unwrap_or(board.len());
        let board = core::str::from_utf8(&board[..board_len]).unwrap_or("?");
        dev_info!(
            pdev,
            "{} ready: firmware {}, board {}, {} port(s), port type {}, log_max_qp {}, log_max_cq {}, {} firmware pages\n",
            info.name,
            fw,
            board,
            caps.get(gen_cap::NUM_PORTS),
            match caps.get(gen_cap::PORT_TYPE) { 0 => "IB", 1 => "Ethernet", _ => "?" },
            caps.get(gen_cap::LOG_MAX_QP),
            caps.get(gen_cap::LOG_MAX_CQ),
            pages.counts().held
        );

        let max_eqs = match caps.get(gen_cap::MAX_NUM_EQS) {
            0 => 1u32 << caps.get(gen_cap::LOG_MAX_EQ).min(31),
            n => u32::try_from(n).unwrap_or(u32::MAX),
        };
        let eq_caps = EqCaps {
            num_ports: u8::try_from(caps.get(gen_cap::NUM_PORTS)).unwrap_or(u8::MAX),
            log_max_cq: u8::try_from(caps.get(gen_cap::LOG_MAX_CQ)).unwrap_or(24),
            max_eqs,
        };
        let events = Events::new(pdev, hw.clone(), pages.clone(), &eq_caps)?;
        let debugfs = DebugFs::new(dev.name(), hw.clone(), pages.clone(), events.info())?;
        life.add_consumer(crate::health::ib_placeholder_consumer())?;
        let registered = teardown::Registered::new(pdev, life.clone())?;
        let health = HealthStage::start(life.clone(), crate::health_poll_ms())?;
        Ok(Self {
            pdev,
            info,
            _health: health,
            _registered: registered,
            _life: life,
            _debugfs: debugfs,
            _events: events,
            _hca: hca,
            _reclaim: reclaim,
            pages,
            _enabled_hca: enabled_hca,
            _pci: pci_on,
            _free_after_stop: free_after_stop,
            hw,
        })
    }

    /// QUERY_ISSI / SET_ISSI: ISSI 1 when offered, else stay at 0; anything else is
    /// a device this driver cannot talk to.
    fn set_issi(pdev: &pci::Device, hw: &Hw) -> Result {
        match commands::query_issi(hw)? {
            Some(bits) if bits & 0b10 != 0 => commands::set_issi(hw, 1),
            None => Ok(()),
            Some(bits) if bits & 0b01 != 0 => Ok(()),
            Some(bits) => {
                dev_err!(pdev, "device supports none of ISSI 0 and 1 (supported_issi 0x{:08x}); not binding\n", bits);
                Err(EOPNOTSUPP)
            }
        }
    }

    /// QUERY_PAGES(`op_mod`) then MANAGE_PAGES give of what the device asks for.
    fn supply(pdev: &pci::Device, hw: &Hw, pages: &FwPages, op_mod: u16, what: &str) -> Result {
        let n = commands::query_pages(hw, op_mod, pages.function().1)?;
        if n < 0 {
            dev_err!(pdev, "device asks to return {} {} pages at bring-up; not supported\n", -i64::from(n), what);
            return Err(EPROTO);
        }
        if n > 0 {
            pages.give(u64::try_from(n).map_err(|_| EINVAL)?, Supply::Startup)?;
        }
        Ok(())
    }

    /// The function's hardware access.
    #[allow(dead_code)]
    pub(crate) fn hw(&self) -> &Arc<Hw> {
        &self.hw
    }
}

impl Drop for Mlx5Device<'_> {
    fn drop(&mut self) {
        dev_info!(self.pdev, "{}: tearing down\n", self.info.name);
        // The fields drop after this body. The health poll stops before anything is
        // torn down (dropping the stage again later is a no-op). With `fast_unload`,
        // `InitializedHca` tries fast teardown where TEARDOWN_HCA would go (after the
        // EQs are destroyed).
        self._health.stop();
    }
}

impl ffi::PciShutdown for Mlx5Driver {
    /// Reboot / kexec / poweroff: fast teardown (or force close), then bus mastering
    /// off. A normal unload is not attempted here when both fail: the machine is going
    /// down, and a later removal (if any) still runs the whole normal path.
    fn shutdown(pdev: &pci::Device) {
        let Some(life) = teardown::lookup(pdev) else {
            return;
        };
        dev_info!(pdev, "shutdown: quiescing the device\n");
        // Fast teardown moves the function out of `Running`: the health poll, which
        // checks that under the same lock, stops re-arming.
        let path = life.fast_teardown("shutdown");
        if matches!(path, Path::Fast | Path::Force) {
            ffi::clear_master(pdev);
        }
    }
}
