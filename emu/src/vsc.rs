//! The vendor-specific capability's gateway (VSC) in PCI configuration space.
//!
//! Upstream reaches device-global resources through it (`lib/pci_vsc.c`): a gateway
//! semaphore that serialises the gateway's users, a space selector, and an
//! address / data pair that reads and writes one dword of the selected space. The
//! semaphore space (`MLX5_SEMAPHORE_SPACE_DOMAIN`, 0xA) holds the software-reset
//! semaphore (`MLX5_SEMAPHORE_SW_RESET`, address 0x20) that upstream's health recovery
//! takes before it asks the firmware for a software reset (`lock_sem_sw_reset`) and
//! that its cr-dump takes to keep a reset away.
//!
//! Register offsets from the capability start and their bits are those of
//! `lib/pci_vsc.c`; how each one behaves is what upstream's use of it requires
//! (emu/README.md, "VSC gateway"):
//! - 0x04 control: space bits 15:0 (written), status bits 31:29 (non-zero: the space
//!   exists), size-valid bit 28 (the space's size readable at 0x10; never set here).
//! - 0x08 counter: a new non-zero value at every read (upstream's "unique val").
//! - 0x0c semaphore: 0 = free; a non-zero write takes it only while free, a 0 write
//!   frees it; reads give the holder's value (upstream's lock reads back its own).
//! - 0x10 address: bits 29:0 address, bit 30 syndrome (the address is not in the
//!   space), bit 31 flag: written 1 = write `data` to the address (flag reads 0 when
//!   done), written 0 = read the address into `data` (flag reads 1 when done). Here
//!   every operation is done at once.
//! - 0x14 data.
//!
//! The semaphore space: every dword below [`SEM_SPACE_SIZE`] is a semaphore with the
//! gateway semaphore's rule (free = 0; a value written takes it while free, 0 frees it).

use std::collections::BTreeMap;

/// Capability length in bytes (header and the five registers).
pub const CAP_LEN: usize = 0x18;
/// Control: space select, status, size valid.
pub const CTRL: usize = 0x04;
/// Counter.
pub const COUNTER: usize = 0x08;
/// Gateway semaphore.
pub const SEMAPHORE: usize = 0x0c;
/// Address, syndrome and flag.
pub const ADDR: usize = 0x10;
/// Data.
pub const DATA: usize = 0x14;

/// Semaphore space (upstream's `MLX5_SEMAPHORE_SPACE_DOMAIN`).
pub const SPACE_SEMAPHORE: u16 = 0xa;
/// Address of the software-reset semaphore (upstream's `MLX5_SEMAPHORE_SW_RESET`).
pub const SEM_SW_RESET: u32 = 0x20;
/// Bytes of the semaphore space modelled (our choice: the PRM does not publish it;
/// upstream uses one address in it).
pub const SEM_SPACE_SIZE: u32 = 0x100;

const ADDR_MASK: u32 = (1 << 30) - 1;
const ADDR_SYND: u32 = 1 << 30;
const ADDR_FLAG: u32 = 1 << 31;
const CTRL_SPACE_MASK: u32 = 0xffff;
const CTRL_STATUS_SHIFT: u32 = 29;

/// What the gateway saw (control `stats` `vsc`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VscStats {
    /// Gateway semaphore taken (a non-zero write to a free semaphore).
    pub gw_locks: u64,
    /// Gateway semaphore freed.
    pub gw_unlocks: u64,
    /// Space selections, by space number.
    pub space_selects: BTreeMap<u16, u64>,
    /// Selections of a space the device does not have (status 0).
    pub unsupported_spaces: u64,
    /// Gateway reads and writes through the address register.
    pub reads: u64,
    /// See [`VscStats::reads`].
    pub writes: u64,
    /// Operations on an address outside the selected space (syndrome set).
    pub bad_addresses: u64,
    /// Operations while the gateway semaphore was free (upstream always locks first).
    pub unlocked_ops: u64,
    /// Software-reset semaphore taken / freed.
    pub sw_reset_sem_takes: u64,
    /// See [`VscStats::sw_reset_sem_takes`].
    pub sw_reset_sem_releases: u64,
}

/// The gateway's state.
#[derive(Clone, Debug, Default)]
pub struct Vsc {
    space: u16,
    counter: u32,
    semaphore: u32,
    addr: u32,
    data: u32,
    /// Semaphore space: address -> holder (absent = free).
    sems: BTreeMap<u32, u32>,
    /// Observations.
    pub stats: VscStats,
}

impl Vsc {
    /// Power-on state: every semaphore free.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the device has space `space`.
    fn space_supported(space: u16) -> bool {
        space == SPACE_SEMAPHORE
    }

    /// Holder of the software-reset semaphore (0 = free).
    pub fn sw_reset_holder(&self) -> u32 {
        self.sems.get(&SEM_SW_RESET).copied().unwrap_or(0)
    }

    /// Sets the software-reset semaphore's holder as another function would (0 frees it).
    pub fn set_sw_reset_holder(&mut self, v: u32) {
        if v == 0 {
            self.sems.remove(&SEM_SW_RESET);
        } else {
            self.sems.insert(SEM_SW_RESET, v);
        }
    }

    /// Holder of the gateway semaphore (0 = free).
    pub fn gw_holder(&self) -> u32 {
        self.semaphore
    }

    /// The register at `off` (from the capability start, dword aligned) as it reads
    /// without side effects (merging of partial writes).
    pub fn peek32(&self, off: usize) -> u32 {
        match off {
            CTRL => {
                let status = u32::from(Self::space_supported(self.space));
                (status << CTRL_STATUS_SHIFT) | u32::from(self.space)
            }
            COUNTER => self.counter,
            SEMAPHORE => self.semaphore,
            ADDR => self.addr,
            DATA => self.data,
            _ => 0,
        }
    }

    /// Reads the register at `off`; the counter moves on at every read.
    pub fn read32(&mut self, off: usize) -> u32 {
        if off == COUNTER {
            // Never 0: 0 is the semaphores' "free".
            self.counter = self.counter.wrapping_add(1).max(1);
        }
        self.peek32(off)
    }

    /// Writes the register at `off`.
    pub fn write32(&mut self, off: usize, val: u32) {
        match off {
            CTRL => {
                self.space = (val & CTRL_SPACE_MASK) as u16;
                *self.stats.space_selects.entry(self.space).or_default() += 1;
                if !Self::space_supported(self.space) {
                    self.stats.unsupported_spaces += 1;
                }
            }
            SEMAPHORE => {
                if val == 0 {
                    if self.semaphore != 0 {
                        self.stats.gw_unlocks += 1;
                    }
                    self.semaphore = 0;
                } else if self.semaphore == 0 {
                    self.semaphore = val;
                    self.stats.gw_locks += 1;
                }
            }
            ADDR => self.operate(val),
            DATA => self.data = val,
            _ => {}
        }
    }

    /// One gateway operation (address register written).
    fn operate(&mut self, val: u32) {
        let write = val & ADDR_FLAG != 0;
        let a = val & ADDR_MASK;
        if self.semaphore == 0 {
            self.stats.unlocked_ops += 1;
        }
        let in_space = self.space == SPACE_SEMAPHORE && a.is_multiple_of(4) && a < SEM_SPACE_SIZE;
        if !in_space {
            self.stats.bad_addresses += 1;
            // Done (flag flipped) with the syndrome set; nothing read or written.
            let flag = if write { 0 } else { ADDR_FLAG };
            self.addr = a | ADDR_SYND | flag;
            return;
        }
        if write {
            self.stats.writes += 1;
            let cur = self.sems.get(&a).copied().unwrap_or(0);
            if self.data == 0 {
                if cur != 0 && a == SEM_SW_RESET {
                    self.stats.sw_reset_sem_releases += 1;
                }
                self.sems.remove(&a);
            } else if cur == 0 {
                if a == SEM_SW_RESET {
                    self.stats.sw_reset_sem_takes += 1;
                }
                self.sems.insert(a, self.data);
            }
            self.addr = a;
        } else {
            self.stats.reads += 1;
            self.data = self.sems.get(&a).copied().unwrap_or(0);
            self.addr = a | ADDR_FLAG;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Upstream's `mlx5_vsc_gw_lock`: read the semaphore, write the counter, read back.
    fn gw_lock(v: &mut Vsc) -> bool {
        if v.read32(SEMAPHORE) != 0 {
            return false;
        }
        let c = v.read32(COUNTER);
        v.write32(SEMAPHORE, c);
        v.read32(SEMAPHORE) == c
    }

    #[test]
    fn gateway_semaphore_one_holder() {
        let mut v = Vsc::new();
        assert!(gw_lock(&mut v));
        let held = v.gw_holder();
        assert_ne!(held, 0);
        // A second user finds it taken; a write of another value does not steal it.
        assert!(!gw_lock(&mut v));
        v.write32(SEMAPHORE, 0x1234);
        assert_eq!(v.read32(SEMAPHORE), held);
        v.write32(SEMAPHORE, 0);
        assert_eq!(v.gw_holder(), 0);
        assert!(gw_lock(&mut v));
        assert_eq!((v.stats.gw_locks, v.stats.gw_unlocks), (2, 1));
    }

    #[test]
    fn counter_never_repeats_nor_zero() {
        let mut v = Vsc::new();
        let a = v.read32(COUNTER);
        let b = v.read32(COUNTER);
        assert!(a != 0 && b != 0 && a != b);
        v.counter = u32::MAX;
        assert_eq!(v.read32(COUNTER), 1);
    }

    #[test]
    fn space_status() {
        let mut v = Vsc::new();
        v.write32(CTRL, 0xdead_0000 | u32::from(SPACE_SEMAPHORE));
        let c = v.read32(CTRL);
        assert_eq!(c & 0xffff, u32::from(SPACE_SEMAPHORE));
        assert_ne!(c >> 29, 0, "semaphore space exists");
        assert_eq!(c & (1 << 28), 0, "its size is not advertised");
        v.write32(CTRL, 7);
        assert_eq!(v.read32(CTRL) >> 29, 0, "cr-space is not modelled");
        assert_eq!(v.stats.unsupported_spaces, 1);
    }
}
