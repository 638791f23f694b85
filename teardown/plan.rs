// SPDX-License-Identifier: GPL-2.0

//! Teardown sequencing decisions (pure `core` code, host-tested).
//!
//! Upstream's `mlx5_try_fast_unload`, as a table over what the device offers and what
//! it answered:
//!
//! | cap fast | cap force | prepare (TEARDOWN_HCA profile 2) | nic_interface readback | path |
//! |---|---|---|---|---|
//! | 1 | – | ok, `state` 0 | DISABLED within 3 s | [`Path::Fast`] |
//! | 1 | 1 | failed, `state` 1, or no readback | – | [`Path::Force`] |
//! | 0 | 1 | – | – | [`Path::Force`] |
//! | any | any | force failed, answered `state` 1, or not offered | – | [`Path::Graceful`] |
//!
//! Force close counts only when the command succeeded *and* its output `state` is not
//! FORCE_STATE_FAIL (1): upstream's `mlx5_cmd_force_teardown_hca` (fw.c) reads
//! `teardown_hca_out.state` and returns -EIO on FORCE_STATE_FAIL ("teardown with force
//! mode failed, doing normal teardown"), so `mlx5_try_fast_unload` falls back to the
//! normal unload.
//!
//! A dead device takes none of them ([`Path::Dead`]): it answers no command.
//! [`Path::Fast`] is the only path on which pages are released without reclaim: the
//! device confirmed it stopped. After [`Path::Force`] the HCA is closed and the rest of
//! the normal unload (page reclaim, DISABLE_HCA) follows; [`Path::Graceful`] is the
//! normal unload.

use crate::ifc::init_seg::reg as seg;

/// The capabilities that matter (current general caps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TeardownCaps {
    /// `fast_teardown`.
    pub fast: bool,
    /// `force_teardown`.
    pub force: bool,
}

/// Result of TEARDOWN_HCA with profile PREPARE_FAST_TEARDOWN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prepare {
    /// Command succeeded with output `state` = 0 (success).
    Ok,
    /// Command succeeded with output `state` = 1 (fail).
    StateFail,
    /// Command failed (status, delivery, timeout).
    CmdFailed,
}

/// Result of TEARDOWN_HCA with profile FORCE_CLOSE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Force {
    /// Command succeeded with output `state` = 0: the HCA is closed.
    Ok,
    /// Command succeeded with output `state` = 1 (FORCE_STATE_FAIL): not closed.
    StateFail,
    /// Command failed (status, delivery, timeout).
    CmdFailed,
}

impl Force {
    /// Classifies a TEARDOWN_HCA force-close answer: `Some(state)` when the command
    /// succeeded, `None` when it failed.
    pub fn from_answer(state: Option<u8>) -> Self {
        match state {
            Some(0) => Force::Ok,
            Some(_) => Force::StateFail,
            None => Force::CmdFailed,
        }
    }
}

/// What reading back `nic_interface` gave after writing DISABLED.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readback {
    /// The device reports DISABLED.
    Disabled,
    /// Still something else when the budget ran out (or the register is unreadable).
    Timeout,
}

/// The teardown path taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Prepared, nic_interface disabled and confirmed: no reclaim, no DISABLE_HCA.
    Fast,
    /// TEARDOWN_HCA force close done; reclaim and DISABLE_HCA follow.
    Force,
    /// The normal unload: TEARDOWN_HCA graceful, reclaim, DISABLE_HCA.
    Graceful,
    /// The device is dead: no command at all.
    Dead,
}

/// The next thing the shell does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Issue TEARDOWN_HCA PREPARE_FAST_TEARDOWN.
    Prepare,
    /// Write nic_interface = DISABLED and poll the readback.
    DisableNic,
    /// Issue TEARDOWN_HCA FORCE_CLOSE.
    Force,
    /// Done: the path taken.
    Done(Path),
}

/// Budget for the device to report nic_interface DISABLED (upstream's TEARDOWN).
pub const NIC_DISABLE_BUDGET_MS: u64 = 3000;

/// The first step.
pub fn first(caps: TeardownCaps, dead: bool) -> Step {
    if dead {
        Step::Done(Path::Dead)
    } else if caps.fast {
        Step::Prepare
    } else if caps.force {
        Step::Force
    } else {
        Step::Done(Path::Graceful)
    }
}

/// The step after the prepare command answered `r`.
pub fn after_prepare(caps: TeardownCaps, r: Prepare) -> Step {
    match r {
        Prepare::Ok => Step::DisableNic,
        Prepare::StateFail | Prepare::CmdFailed => fallback(caps),
    }
}

/// The step after the nic_interface readback gave `r`.
pub fn after_readback(caps: TeardownCaps, r: Readback) -> Step {
    match r {
        Readback::Disabled => Step::Done(Path::Fast),
        Readback::Timeout => fallback(caps),
    }
}

/// The step after force close: done either way; only a closed HCA is [`Path::Force`].
pub fn after_force(r: Force) -> Step {
    Step::Done(if r == Force::Ok {
        Path::Force
    } else {
        Path::Graceful
    })
}

fn fallback(caps: TeardownCaps) -> Step {
    if caps.force {
        Step::Force
    } else {
        Step::Done(Path::Graceful)
    }
}

/// What the PCI shutdown callback does after [`Path`] was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownNext {
    /// The device stopped (fast) or closed its HCA (force): enter error state, free
    /// the IRQs and disable MSI-X, disable the device; no software cleanup.
    FreeIrqs,
    /// Neither was possible, or the device is dead: the normal unload, then disable
    /// the device.
    NormalUnload,
}

/// Upstream's `shutdown` (main.c): `mlx5_try_fast_unload` succeeds on fast or force
/// teardown and then frees the IRQs (`mlx5_core_eq_free_irqs`); it fails when neither
/// cap is offered, both commands fail, or the device is in internal error, and then
/// `mlx5_unload_one` runs. `mlx5_pci_disable_device` follows either way.
pub fn after_shutdown_teardown(path: Path) -> ShutdownNext {
    match path {
        Path::Fast | Path::Force => ShutdownNext::FreeIrqs,
        Path::Graceful | Path::Dead => ShutdownNext::NormalUnload,
    }
}

/// `cmdq_addr_l_sz` with nic_interface (bits 10:8) set to `state`, keeping the queue
/// address (bits 31:12) and clearing the rest, as upstream's `mlx5_set_nic_state`.
pub const fn with_nic_interface(reg: u32, state: u32) -> u32 {
    let nic = seg::NIC_INTERFACE;
    (reg & seg::CMDQ_PHY_ADDR_31_12.bits_mask()) | ((state << nic.shift()) & nic.bits_mask())
}

/// nic_interface (bits 10:8) of `cmdq_addr_l_sz`.
pub fn nic_interface(reg: u32) -> u32 {
    u32::from(seg::NIC_INTERFACE.get(reg))
}

#[cfg(any(test, CONFIG_MLX5_RS_KUNIT_TEST))]
#[cfg_attr(CONFIG_RUST, kernel::macros::kunit_tests(mlx5_rs_teardown_plan))]
mod tests {
    use super::*;

    /// Runs the table with the device answering `prepare`, `readback`, `force_ok`.
    fn run(
        caps: TeardownCaps,
        dead: bool,
        prepare: Prepare,
        readback: Readback,
        force_ok: bool,
    ) -> (Path, [bool; 3]) {
        run_force(
            caps,
            dead,
            prepare,
            readback,
            if force_ok {
                Force::Ok
            } else {
                Force::CmdFailed
            },
        )
    }

    fn run_force(
        caps: TeardownCaps,
        dead: bool,
        prepare: Prepare,
        readback: Readback,
        force: Force,
    ) -> (Path, [bool; 3]) {
        let mut issued = [false; 3]; // prepare, nic write, force
        let mut s = first(caps, dead);
        loop {
            s = match s {
                Step::Prepare => {
                    issued[0] = true;
                    after_prepare(caps, prepare)
                }
                Step::DisableNic => {
                    issued[1] = true;
                    after_readback(caps, readback)
                }
                Step::Force => {
                    issued[2] = true;
                    after_force(force)
                }
                Step::Done(p) => return (p, issued),
            }
        }
    }

    const BOTH: TeardownCaps = TeardownCaps {
        fast: true,
        force: true,
    };
    const FAST: TeardownCaps = TeardownCaps {
        fast: true,
        force: false,
    };
    const FORCE: TeardownCaps = TeardownCaps {
        fast: false,
        force: true,
    };
    const NONE: TeardownCaps = TeardownCaps {
        fast: false,
        force: false,
    };

    #[test]
    fn fast_when_prepared_and_confirmed() {
        assert_eq!(
            run(BOTH, false, Prepare::Ok, Readback::Disabled, true),
            (Path::Fast, [true, true, false])
        );
        assert_eq!(
            run(FAST, false, Prepare::Ok, Readback::Disabled, false),
            (Path::Fast, [true, true, false])
        );
    }

    #[test]
    fn prepare_failure_falls_back_to_force() {
        for p in [Prepare::StateFail, Prepare::CmdFailed] {
            assert_eq!(
                run(BOTH, false, p, Readback::Disabled, true),
                (Path::Force, [true, false, true])
            );
            assert_eq!(
                run(BOTH, false, p, Readback::Disabled, false),
                (Path::Graceful, [true, false, true])
            );
            assert_eq!(
                run(FAST, false, p, Readback::Disabled, true),
                (Path::Graceful, [true, false, false])
            );
        }
    }

    #[test]
    fn readback_timeout_falls_back() {
        assert_eq!(
            run(BOTH, false, Prepare::Ok, Readback::Timeout, true),
            (Path::Force, [true, true, true])
        );
        assert_eq!(
            run(FAST, false, Prepare::Ok, Readback::Timeout, true),
            (Path::Graceful, [true, true, false])
        );
    }

    #[test]
    fn without_fast_cap() {
        assert_eq!(
            run(FORCE, false, Prepare::Ok, Readback::Disabled, true),
            (Path::Force, [false, false, true])
        );
        assert_eq!(
            run(FORCE, false, Prepare::Ok, Readback::Disabled, false),
            (Path::Graceful, [false, false, true])
        );
        assert_eq!(
            run(NONE, false, Prepare::Ok, Readback::Disabled, true),
            (Path::Graceful, [false, false, false])
        );
    }

    #[test]
    fn force_state_fail_falls_back_to_normal_unload() {
        // Upstream mlx5_cmd_force_teardown_hca: FORCE_STATE_FAIL in the output is a
        // failure even though the command succeeded.
        assert_eq!(Force::from_answer(Some(0)), Force::Ok);
        assert_eq!(Force::from_answer(Some(1)), Force::StateFail);
        assert_eq!(Force::from_answer(None), Force::CmdFailed);
        assert_eq!(
            run_force(
                FORCE,
                false,
                Prepare::Ok,
                Readback::Disabled,
                Force::StateFail
            ),
            (Path::Graceful, [false, false, true])
        );
        for p in [Prepare::StateFail, Prepare::CmdFailed] {
            assert_eq!(
                run_force(BOTH, false, p, Readback::Disabled, Force::StateFail),
                (Path::Graceful, [true, false, true])
            );
        }
        assert_eq!(
            run_force(
                BOTH,
                false,
                Prepare::Ok,
                Readback::Timeout,
                Force::StateFail
            ),
            (Path::Graceful, [true, true, true])
        );
    }

    #[test]
    fn dead_device_gets_no_command() {
        for caps in [BOTH, FAST, FORCE, NONE] {
            assert_eq!(
                run(caps, true, Prepare::Ok, Readback::Disabled, true),
                (Path::Dead, [false, false, false])
            );
        }
    }

    #[test]
    fn shutdown_after_teardown() {
        assert_eq!(after_shutdown_teardown(Path::Fast), ShutdownNext::FreeIrqs);
        assert_eq!(after_shutdown_teardown(Path::Force), ShutdownNext::FreeIrqs);
        assert_eq!(
            after_shutdown_teardown(Path::Graceful),
            ShutdownNext::NormalUnload
        );
        assert_eq!(
            after_shutdown_teardown(Path::Dead),
            ShutdownNext::NormalUnload
        );
        // Force close answering FORCE_STATE_FAIL with no fast cap: the normal unload.
        let (p, _) = run_force(
            FORCE,
            false,
            Prepare::Ok,
            Readback::Disabled,
            Force::StateFail,
        );
        assert_eq!(after_shutdown_teardown(p), ShutdownNext::NormalUnload);
    }

    #[test]
    fn nic_interface_read_modify_write() {
        // Address bits kept, size/stride and reserved bits cleared, state in 10:8.
        assert_eq!(with_nic_interface(0x1234_5f7a, 1), 0x1234_5100);
        assert_eq!(with_nic_interface(0xffff_ffff, 0), 0xffff_f000);
        assert_eq!(with_nic_interface(0, 9), 0x100);
        assert_eq!(nic_interface(0x1234_5142), 1);
        assert_eq!(nic_interface(0xffff_ffff), 7);
    }
}
