//! What upstream mlx5_core's health recovery relies on: the VSC gateway in config
//! space (`lib/pci_vsc.c`), the software-reset semaphore (`lock_sem_sw_reset`), the
//! fw-reset-supported bit and nic_interface SW_RESET (`reset_fw_if_needed`), and the
//! firmware back at its power-on state afterwards (`mlx5_error_sw_reset` waits for
//! nic_interface DISABLED, `mlx5_recover_device` loads the function again). Each
//! sequence below is upstream's, step for step.

mod common;

use common::{give_pages, input, Host};
use mlx5_emu::ifc::init_seg as is;
use mlx5_emu::ifc::opcodes::Opcode;
use mlx5_emu::ifc::status::CmdStatus;
use mlx5_emu::report::stats;
use mlx5_emu::vsc;

const PCI_CAP_ID_VNDR: u8 = 0x09;

/// `pci_find_capability(pdev, PCI_CAP_ID_VNDR)`.
fn find_vsc(h: &Host) -> u64 {
    let mut p = [0u8; 1];
    h.dev.config_read(0x34, &mut p);
    let mut ptr = u64::from(p[0]);
    while ptr != 0 {
        let mut hdr = [0u8; 2];
        h.dev.config_read(ptr, &mut hdr);
        if hdr[0] == PCI_CAP_ID_VNDR {
            return ptr;
        }
        ptr = u64::from(hdr[1]);
    }
    panic!("no vendor-specific capability");
}

fn vsc_read(h: &Host, off: usize) -> u32 {
    let mut b = [0u8; 4];
    h.dev.config_read(find_vsc(h) + off as u64, &mut b);
    u32::from_le_bytes(b)
}

fn vsc_write(h: &Host, off: usize, v: u32) {
    h.dev
        .config_write(find_vsc(h) + off as u64, &v.to_le_bytes());
}

/// `mlx5_vsc_gw_lock` (without the sleeps): Ok, or Err after its retries.
fn gw_lock(h: &Host) -> Result<(), &'static str> {
    for _ in 0..=2048 {
        if vsc_read(h, vsc::SEMAPHORE) != 0 {
            continue;
        }
        let counter = vsc_read(h, vsc::COUNTER);
        vsc_write(h, vsc::SEMAPHORE, counter);
        if vsc_read(h, vsc::SEMAPHORE) == counter {
            return Ok(());
        }
    }
    Err("EBUSY")
}

fn gw_unlock(h: &Host) {
    vsc_write(h, vsc::SEMAPHORE, 0);
}

/// `mlx5_vsc_gw_set_space`: Err("EINVAL") when the status bits read 0.
fn set_space(h: &Host, space: u16) -> Result<(), &'static str> {
    let val = vsc_read(h, vsc::CTRL);
    vsc_write(h, vsc::CTRL, (val & !0xffff) | u32::from(space));
    if (vsc_read(h, vsc::CTRL) >> 29) & 7 == 0 {
        return Err("EINVAL");
    }
    Ok(())
}

/// `mlx5_vsc_wait_on_flag`.
fn wait_on_flag(h: &Host, want: u32) -> Result<(), &'static str> {
    for _ in 0..=2048 {
        if vsc_read(h, vsc::ADDR) >> 31 == want {
            return Ok(());
        }
    }
    Err("EBUSY")
}

/// `mlx5_vsc_gw_write` / `mlx5_vsc_gw_read`.
fn gw_write(h: &Host, addr: u32, data: u32) -> Result<(), &'static str> {
    vsc_write(h, vsc::DATA, data);
    vsc_write(h, vsc::ADDR, addr | 1 << 31);
    wait_on_flag(h, 0)
}

fn gw_read(h: &Host, addr: u32) -> Result<u32, &'static str> {
    vsc_write(h, vsc::ADDR, addr);
    wait_on_flag(h, 1)?;
    Ok(vsc_read(h, vsc::DATA))
}

/// `mlx5_vsc_sem_set_space(dev, MLX5_SEMAPHORE_SW_RESET, lock)`.
fn sem_sw_reset(h: &Host, lock: bool) -> Result<(), &'static str> {
    set_space(h, vsc::SPACE_SEMAPHORE)?;
    let id = if lock { vsc_read(h, vsc::COUNTER) } else { 0 };
    gw_write(h, vsc::SEM_SW_RESET, id)?;
    let data = gw_read(h, vsc::SEM_SW_RESET).map_err(|_| "EINVAL")?;
    if data != id {
        return Err("EBUSY");
    }
    Ok(())
}

/// `lock_sem_sw_reset`.
fn lock_sem_sw_reset(h: &Host, lock: bool) -> Result<(), &'static str> {
    gw_lock(h).map_err(|_| "EINVAL")?;
    let r = sem_sw_reset(h, lock);
    gw_unlock(h);
    r
}

fn nic_state(h: &Host) -> u32 {
    (h.read32(is::CMDQ_ADDR_L_SZ) >> 8) & 7
}

/// `mlx5_set_nic_state`.
fn set_nic_state(h: &Host, state: u32) {
    let cur = h.read32(is::CMDQ_ADDR_L_SZ);
    h.write32(is::CMDQ_ADDR_L_SZ, (cur & 0xffff_f000) | state << 8);
}

fn enable_hca(h: &mut Host) -> u8 {
    h.run(&input(16, Opcode::ENABLE_HCA as u16, 0, &[]), 16).0
}

fn stat(h: &Host, path: &[&str]) -> serde_json::Value {
    let mut v = stats(&h.dev);
    for k in path {
        v = v[*k].clone();
    }
    v
}

/// A host with its function initialized and a fatal syndrome with reset-required.
fn fatal_host() -> Host {
    let mut h = Host::new();
    h.init_hca();
    h.dev.regs().set_fatal(7, 0x1234, true, 2);
    h
}

#[test]
fn upstream_sw_reset_recovers_the_firmware() {
    let mut h = fatal_host();
    assert_ne!(stat(&h, &["pages", "held"]), 0);
    // The function is still enabled: a new instance's ENABLE_HCA is refused, which is
    // what upstream met before the reset was modelled.
    h.write32(is::CMDQ_ADDR_L_SZ, h.queue as u32);
    assert_eq!(enable_hca(&mut h), CmdStatus::BAD_SYS_STATE_ERR as u8);

    // mlx5_error_sw_reset: semaphore, fw reset supported, SW_RESET, wait for DISABLED.
    assert_eq!(lock_sem_sw_reset(&h, true), Ok(()));
    assert_ne!(h.dev.pci.lock().unwrap().vsc.sw_reset_holder(), 0);
    assert_eq!(
        h.read32(is::INITIALIZING) & is::FW_RESET_SUPPORTED_BIT,
        is::FW_RESET_SUPPORTED_BIT
    );
    assert_eq!(nic_state(&h), 0);
    set_nic_state(&h, 7);
    h.dev.step();
    assert_eq!(nic_state(&h), 1, "DISABLED once the firmware restarted");
    assert_eq!(lock_sem_sw_reset(&h, false), Ok(()));
    assert_eq!(h.dev.pci.lock().unwrap().vsc.sw_reset_holder(), 0);

    // The firmware at its power-on state: health clear and counting, nothing held.
    let hs = h.read32(is::HEALTH_COUNTER);
    assert_eq!(hs >> 24, 0, "health syndrome cleared");
    std::thread::sleep(std::time::Duration::from_millis(250));
    assert_ne!(h.read32(is::HEALTH_COUNTER), hs, "health counter running");
    assert_eq!(stat(&h, &["pages", "held"]), 0);
    assert_eq!(stat(&h, &["fw_reset", "restarts"]), 1);
    assert_eq!(stat(&h, &["fw_reset", "without_semaphore"]), 0);
    assert_eq!(stat(&h, &["vsc", "sw_reset_sem_takes"]), 1);
    assert_eq!(stat(&h, &["vsc", "sw_reset_sem_releases"]), 1);

    // mlx5_recover_device -> mlx5_load_one: the queue address again, then the start-up.
    h.write32(is::CMDQ_ADDR_H, (h.queue >> 32) as u32);
    h.write32(is::CMDQ_ADDR_L_SZ, h.queue as u32);
    assert_eq!(nic_state(&h), 0);
    assert_eq!(enable_hca(&mut h), 0);
    give_pages(&mut h, 48);
    h.ok(&input(32, Opcode::INIT_HCA as u16, 0, &[]), 16);
    assert_eq!(
        stat(&h, &["violations"]),
        0,
        "{}",
        stat(&h, &["recent_violations"])
    );
}

#[test]
fn sw_reset_semaphore_held_by_another_function() {
    let h = fatal_host();
    h.dev.pci.lock().unwrap().vsc.set_sw_reset_holder(0x77);
    assert_eq!(lock_sem_sw_reset(&h, true), Err("EBUSY"));
    assert_eq!(h.dev.pci.lock().unwrap().vsc.sw_reset_holder(), 0x77);
    // The gateway itself was freed again.
    assert_eq!(h.dev.pci.lock().unwrap().vsc.gw_holder(), 0);
}

#[test]
fn cr_space_is_not_a_space_here() {
    // mlx5_crdump_enable: set_space(MLX5_VSC_SPACE_SCAN_CRSPACE) fails, upstream
    // masks it ("space is not supported") and has no cr-dump.
    let h = Host::new();
    assert_eq!(gw_lock(&h), Ok(()));
    assert_eq!(set_space(&h, 7), Err("EINVAL"));
    gw_unlock(&h);
    // An address outside the semaphore space sets the syndrome and still completes.
    assert_eq!(set_space(&h, vsc::SPACE_SEMAPHORE), Ok(()));
    assert!(gw_read(&h, vsc::SEM_SPACE_SIZE).is_ok());
    assert_eq!(vsc_read(&h, vsc::ADDR) >> 30 & 1, 1);
    assert_eq!(stat(&h, &["vsc", "bad_addresses"]), 1);
}

#[test]
fn partial_config_accesses_reach_the_registers() {
    let h = Host::new();
    let base = find_vsc(&h);
    // The capability header: id, next 0, length.
    let mut hdr = [0u8; 4];
    h.dev.config_read(base, &mut hdr);
    assert_eq!(hdr[..3], [PCI_CAP_ID_VNDR, 0, vsc::CAP_LEN as u8]);
    // A 16-bit write of the space field, read back by bytes.
    h.dev
        .config_write(base + vsc::CTRL as u64, &vsc::SPACE_SEMAPHORE.to_le_bytes());
    let mut b = [0u8; 1];
    h.dev.config_read(base + vsc::CTRL as u64, &mut b);
    assert_eq!(b[0], vsc::SPACE_SEMAPHORE as u8);
    h.dev.config_read(base + vsc::CTRL as u64 + 3, &mut b);
    assert_ne!(b[0] >> 5, 0, "status bits");
    // One read spanning the counter and the semaphore moves the counter once.
    let mut two = [0u8; 8];
    h.dev.config_read(base + vsc::COUNTER as u64, &mut two);
    let c = u32::from_le_bytes([two[0], two[1], two[2], two[3]]);
    assert_eq!(vsc_read(&h, vsc::COUNTER), c + 1);
}

#[test]
fn no_fw_reset_support_refuses_the_request() {
    let h = fatal_host();
    h.dev.regs().knobs.fw_reset_unsupported = true;
    assert_eq!(h.read32(is::INITIALIZING) & is::FW_RESET_SUPPORTED_BIT, 0);
    set_nic_state(&h, 7);
    h.dev.step();
    assert_eq!(nic_state(&h), 0);
    assert_ne!(h.read32(is::HEALTH_COUNTER) >> 24, 0, "still fatal");
    assert_eq!(stat(&h, &["fw_reset", "unsupported"]), 1);
    assert_eq!(stat(&h, &["fw_reset", "without_semaphore"]), 1);
    assert_eq!(stat(&h, &["violations"]), 1);
    // Another function's reset (control fw_reset) brings it back.
    let r = mlx5_emu::control::handle(&h.dev, &serde_json::json!({"cmd": "fw_reset"}));
    assert_eq!(r["ok"], true);
    assert_eq!(nic_state(&h), 1);
    assert_eq!(h.read32(is::HEALTH_COUNTER) >> 24, 0);
    assert_eq!(stat(&h, &["pages", "held"]), 0);
    assert_eq!(stat(&h, &["fw_reset", "restarts"]), 1);
}

#[test]
fn a_restart_that_takes_time() {
    let h = fatal_host();
    let r = mlx5_emu::control::handle(
        &h.dev,
        &serde_json::json!({"cmd": "init_seg", "sw_reset_ms": 300}),
    );
    assert_eq!(r["ok"], true);
    assert_eq!(lock_sem_sw_reset(&h, true), Ok(()));
    set_nic_state(&h, 7);
    h.dev.step();
    assert_eq!(nic_state(&h), 7, "SW_RESET while the restart lasts");
    assert_eq!(h.read32(is::INITIALIZING) >> 31, 1);
    std::thread::sleep(std::time::Duration::from_millis(400));
    assert_eq!(nic_state(&h), 1);
    assert_eq!(h.read32(is::INITIALIZING) >> 31, 0);
}

#[test]
fn doorbells_racing_the_restart_reach_nothing() {
    // mlx5_ib's internal-error handling runs its kernel CQs' completion handlers; their
    // consumers re-arm on the UAR of a function the restart forgot.
    let mut h = fatal_host();
    let uar = h.alloc_uar();
    let arm = u64::from(uar) * 4096 + mlx5_emu::ifc::wqe::vals::UAR_CQ_DOORBELL as u64;
    let ring = |h: &Host| {
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&(1u32 << 28).to_be_bytes());
        b[4..].copy_from_slice(&1u32.to_be_bytes());
        h.dev.bar0_write(arm, &b);
        h.dev.step();
    };
    // Before the restart the page is the function's: an unknown CQ is a violation.
    ring(&h);
    assert_eq!(stat(&h, &["violations"]), 1);
    assert_eq!(lock_sem_sw_reset(&h, true), Ok(()));
    set_nic_state(&h, 7);
    h.dev.step();
    ring(&h);
    assert_eq!(
        stat(&h, &["violations"]),
        1,
        "{}",
        stat(&h, &["recent_violations"])
    );
    assert_eq!(stat(&h, &["uar_doorbells_after_stop"]), 1);
}
