// SPDX-License-Identifier: GPL-2.0

//! Access to the initialization segment at the start of BAR0.
//!
//! Every register is a big-endian 32-bit word. The kernel crate's MMIO accessors are
//! little-endian, so each access swaps bytes: `ioread32be(a) == swab32(readl(a))` on any
//! CPU. Offsets and field meanings come from [`crate::ifc::init_seg`]. Values read here
//! come from the device and are treated as untrusted.

use kernel::{
    io::Io,
    pci,
    prelude::*,
    time::{delay::fsleep, Delta, Instant, Monotonic},
};

use crate::ifc::init_seg as seg;

/// BAR 0 requested, mapped over the initialization segment only (upstream maps
/// `sizeof(struct mlx5_init_seg)`; the rest of the BAR is the UAR pages, which user
/// space maps write-combining: `ffi/core/bar.rs`).
pub(crate) type Bar0<'bound> = crate::ffi::RequestedBar<'bound, { seg::MAPPED_SIZE }>;

/// Firmware version as the init segment reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FwVersion {
    pub(crate) major: u16,
    pub(crate) minor: u16,
    pub(crate) subminor: u16,
}

impl kernel::fmt::Display for FwVersion {
    fn fmt(&self, f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
        write!(f, "{}.{}.{:04}", self.major, self.minor, self.subminor)
    }
}

/// Big-endian 32-bit register access to the initialization segment, however BAR0 is
/// held (borrowed at probe, or device-managed afterwards).
pub(crate) trait Regs {
    /// Reads the register at byte offset `off`.
    fn read(&self, off: usize) -> Result<u32>;
    /// Writes the register at byte offset `off`.
    fn write(&self, off: usize, val: u32) -> Result;
    /// Runs `f` with the initialization segment held once for all its accesses (the
    /// device-managed BAR's revocable read section entered once, not per register:
    /// the health poll's handful of reads). `ENODEV` when the BAR is gone.
    fn batch(&self, f: &mut dyn FnMut(&dyn Regs) -> Result) -> Result;
}

impl Regs for InitSeg<'_, '_> {
    fn read(&self, off: usize) -> Result<u32> {
        InitSeg::read(self, off)
    }
    fn write(&self, off: usize, val: u32) -> Result {
        InitSeg::write(self, off, val)
    }
    fn batch(&self, f: &mut dyn FnMut(&dyn Regs) -> Result) -> Result {
        f(self)
    }
}

/// Typed view of the initialization segment.
pub(crate) struct InitSeg<'a, 'bound> {
    bar: &'a Bar0<'bound>,
}

impl<'a, 'bound> InitSeg<'a, 'bound> {
    /// Wraps a mapped BAR0.
    pub(crate) fn new(bar: &'a Bar0<'bound>) -> Self {
        Self { bar }
    }

    /// Reads the big-endian register at byte offset `off`.
    pub(crate) fn read(&self, off: usize) -> Result<u32> {
        Ok(self.bar.try_read32(off)?.swap_bytes())
    }

    /// Writes the big-endian register at byte offset `off`.
    pub(crate) fn write(&self, off: usize, val: u32) -> Result {
        self.bar.try_write32(val.swap_bytes(), off)
    }

    /// Firmware version (major.minor.subminor).
    pub(crate) fn fw_version(&self) -> Result<FwVersion> {
        let rev = self.read(seg::FW_REV)?;
        let sub = self.read(seg::CMDIF_REV_FW_SUB)?;
        Ok(FwVersion {
            major: seg::reg::FW_REV_MAJOR.get(rev),
            minor: seg::reg::FW_REV_MINOR.get(rev),
            subminor: seg::reg::FW_REV_SUBMINOR.get(sub),
        })
    }

    /// Command-interface revision.
    pub(crate) fn cmdif_revision(&self) -> Result<u16> {
        Ok(seg::reg::CMD_INTERFACE_REV.get(self.read(seg::CMDIF_REV_FW_SUB)?))
    }
}

/// Waits until the firmware clears `initializing`, up to `timeout`; `what` names the
/// wait in the log (upstream's `wait_fw_init` states: "pre-initializing" before the
/// command queue is set up, "initializing" after).
///
/// When the first read finds the bit set, says so once and, when it clears, how long
/// it took; a progress line every 10 s of waiting; `ETIMEDOUT` with a clear message
/// when the budget runs out, `ENODEV` if the device reads all-ones (gone from the bus).
/// Polls every 2 ms (upstream's FW_PRE_INIT_WAIT). `stop` returning true ends the wait
/// with `ECANCELED` (a recovery whose function is being removed: upstream's
/// `MLX5_BREAK_FW_WAIT`).
pub(crate) fn wait_fw_ready(
    regs: &dyn Regs,
    dev: &pci::Device,
    timeout: Delta,
    what: &str,
    stop: &dyn Fn() -> bool,
) -> Result {
    let start = Instant::<Monotonic>::now();
    let mut next_report = Delta::from_secs(10);
    let mut waited_any = false;
    loop {
        let word = regs.read(seg::INITIALIZING)?;
        if word == u32::MAX {
            dev_err!(dev, "init segment reads all-ones: device not responding\n");
            return Err(ENODEV);
        }
        if !seg::reg::INITIALIZING.get(word) {
            if waited_any {
                dev_info!(
                    dev,
                    "firmware left the {} state after {} ms\n",
                    what,
                    start.elapsed().as_millis()
                );
            }
            return Ok(());
        }
        if !waited_any {
            waited_any = true;
            dev_info!(
                dev,
                "firmware {} (init segment 0x{:x} = 0x{:08x}); waiting up to {} ms\n",
                what,
                seg::INITIALIZING,
                word,
                timeout.as_millis()
            );
        }
        let waited = start.elapsed();
        if stop() {
            dev_err!(
                dev,
                "firmware still {} after {} ms; stop waiting: the device is being removed\n",
                what,
                waited.as_millis()
            );
            return Err(ECANCELED);
        }
        if waited > timeout {
            dev_err!(
                dev,
                "firmware still {} after {} ms (init segment 0x{:x} = 0x{:08x}); giving up\n",
                what,
                timeout.as_millis(),
                seg::INITIALIZING,
                word
            );
            return Err(ETIMEDOUT);
        }
        if waited > next_report {
            dev_info!(
                dev,
                "waiting for firmware ({}): {} of {} ms\n",
                what,
                waited.as_millis(),
                timeout.as_millis()
            );
            next_report += Delta::from_secs(10);
        }
        fsleep(Delta::from_millis(2));
    }
}

#[cfg(CONFIG_MLX5_RS_KUNIT_TEST)]
#[kunit_tests(mlx5_rs_init_seg)]
mod tests {
    use super::*;
    use kernel::str::CString;

    fn render(v: FwVersion) -> Result<CString> {
        CString::try_from_fmt(fmt!("{}", v))
    }

    #[test]
    fn fw_version_prints_like_upstream() -> Result {
        // Upstream prints "%d.%d.%04d": the subminor is zero-padded to 4 digits.
        let v = FwVersion {
            major: 16,
            minor: 35,
            subminor: 12,
        };
        assert_eq!(render(v)?.to_str()?, "16.35.0012");
        let v = FwVersion {
            major: 22,
            minor: 41,
            subminor: 1000,
        };
        assert_eq!(render(v)?.to_str()?, "22.41.1000");
        Ok(())
    }
}
